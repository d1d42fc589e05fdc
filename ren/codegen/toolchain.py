"""The system C compiler the cpu device builds with: found once, its flags probed once.

``find_compiler`` takes ``$CC``, else the first of ``cc``, ``gcc``, ``clang`` on ``PATH``, with its
version line (part of every cache key); ``supports_flag`` builds a tiny library to see whether a
flag (``-fopenmp``) works; ``native_target`` is what ``-march=native`` means on this machine.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path

from ren import settings
from ren.errors import RenError

__all__ = ["CompileError", "find_compiler", "native_defines", "native_target", "supports_flag"]


class CompileError(RenError):
    """The C compiler is missing or rejected a rendered source."""


def find_compiler(name: str | None = None) -> tuple[str, str]:
    """The C compiler to use (``$CC``, else ``cc``, ``gcc``, ``clang``): ``(path, version line)``.

    Raises:
        CompileError: when none is installed, saying what to install.
    """
    return _find_compiler(name, settings.CC.get())


@functools.cache
def _find_compiler(name: str | None, cc: str | None) -> tuple[str, str]:
    names = [name] if name else [cc or "", "cc", "gcc", "clang"]
    for candidate in names:
        path = shutil.which(candidate) if candidate else None
        if path:
            out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False)
            version = (
                (out.stdout or out.stderr).splitlines()[0] if (out.stdout or out.stderr) else ""
            )
            return path, version
    raise CompileError(
        "no C compiler found (looked for $CC, cc, gcc, clang): the cpu device needs one; "
        "install gcc (Debian: apt-get install gcc) or set CC"
    )


@functools.cache
def supports_flag(compiler: str, flag: str) -> bool:
    """Whether ``compiler`` builds and links a tiny shared library with ``flag``."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "probe.c"
        src.write_text("int ren_probe(void) { return 0; }\n")
        cmd = [compiler, "-shared", "-fPIC", flag, "-o", str(Path(tmp) / "probe.so"), str(src)]
        return subprocess.run(cmd, capture_output=True, check=False).returncode == 0


@functools.cache
def native_defines(compiler: str, macro: str) -> bool:
    """Whether ``compiler -march=native`` predefines ``macro`` (``__AVX512F__``, say)."""
    cmd = [compiler, "-march=native", "-dM", "-E", "-x", "c", os.devnull]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
    except OSError:
        return False
    return f"#define {macro} " in out


@functools.cache
def native_target(compiler: str) -> str:
    """What ``-march=native`` means on this machine for ``compiler``: its resolved target options.

    They go into the cache key, so a cache shared between machines never loads a library built
    for another CPU.
    """
    cmd = [compiler, "-march=native", "-Q", "--help=target"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
    return hashlib.sha256(out.encode()).hexdigest() if out else platform.processor()
