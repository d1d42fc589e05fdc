"""The devices the backend tests run on, beside the python device (their oracle).

``COMPILED`` parametrizes a test over every compiled device this machine can run: ``cpu`` (needs a C
compiler) and ``cuda``, which runs on the GPU when PyCUDA sees one and otherwise on the host
emulator (``REN_CUDA_EMULATE=1``, ``ren.codegen.cuda_host``: the same CUDA C, built as C++, every
thread in turn), so the CUDA kernels are checked on every machine with a C compiler. Use it with
the ``device`` fixture of ``tests/conftest.py``::

    @pytest.mark.parametrize("device", COMPILED, indirect=True)
    def test_something(device): ...
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator

import pytest


@functools.cache
def gpu_missing() -> str | None:
    """Why the ``gpu`` tests cannot run, or ``None`` when PyCUDA sees a CUDA device."""
    try:
        import pycuda.driver as cuda
    except Exception as e:  # ImportError, or a broken CUDA install failing inside the import
        return f"needs PyCUDA and an NVIDIA GPU: pip install -e .[cuda] ({type(e).__name__}: {e})"
    try:
        cuda.init()
        count = cuda.Device.count()
    except Exception as e:
        return f"needs an NVIDIA GPU with a working driver ({type(e).__name__}: {e})"
    return None if count else "needs an NVIDIA GPU: PyCUDA found no CUDA device"


def _cuda_param():
    if gpu_missing() is None:
        return pytest.param("cuda", marks=pytest.mark.gpu, id="cuda")
    return pytest.param("cuda", marks=pytest.mark.cc, id="cuda-emulated")


COMPILED = [pytest.param("cpu", marks=pytest.mark.cc, id="cpu"), _cuda_param()]


@contextlib.contextmanager
def use_device(name: str) -> Iterator[str]:
    """Run the block with ``name`` usable: for ``cuda`` without a GPU, the host emulator."""
    if name != "cuda":
        yield name
        return
    from ren.backends import cuda

    with pytest.MonkeyPatch.context() as m:
        if gpu_missing() is None:
            m.delenv("REN_CUDA_EMULATE", raising=False)
        else:
            m.setenv("REN_CUDA_EMULATE", "1")
        cuda.runtime.cache_clear()
        try:
            yield name
        finally:
            cuda.runtime.cache_clear()
