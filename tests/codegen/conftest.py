"""The codegen tests' fixture: ``build`` compiles a generated C kernel with the system compiler."""

from __future__ import annotations

import ctypes
import hashlib
import subprocess

import pytest

from ren.codegen import templates as tp


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """``build(kernel, openmp=False)``: compile ``kernel.source`` once, return the C function."""
    root = tmp_path_factory.mktemp("templates")
    cache: dict[tuple[str, bool], ctypes._CFuncPtr] = {}

    def compile_kernel(kernel: tp.CKernel, openmp: bool = False, extra: tuple[str, ...] = ()):
        key = (kernel.source, openmp, extra)
        if key not in cache:
            d = root / hashlib.sha256(repr(key).encode()).hexdigest()[:16]
            d.mkdir()
            (d / "src.c").write_text(kernel.source, encoding="utf-8")
            flags = [*(["-fopenmp"] if openmp else []), *extra]
            cmd = ["cc", "-O3", "-march=native", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror"]
            cmd += ["-Wno-unknown-pragmas", *flags, "-o", str(d / "lib.so"), str(d / "src.c")]
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if done.returncode and openmp and "openmp" in done.stderr.lower():
                pytest.skip(f"cc cannot build with -fopenmp: {done.stderr.strip()}")
            assert done.returncode == 0, f"{' '.join(cmd)}\n{done.stderr}"
            cache[key] = getattr(ctypes.CDLL(str(d / "lib.so")), kernel.name)
        return cache[key]

    return compile_kernel
