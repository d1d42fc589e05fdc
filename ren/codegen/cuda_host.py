"""Run Ren's CUDA C on the host, one thread after another: a checker for machines without a GPU.

``HostModule`` builds a CUDA C translation unit as C++ with the system compiler, after a small
header that gives the CUDA names their host meaning (``__global__`` and ``__device__`` vanish,
``__umul64hi`` is a 128-bit product, ``blockIdx``/``threadIdx``/``blockDim``/``gridDim`` are
globals of each host thread, so launches from several threads at once do not mix), and adds for
every ``extern "C" __global__`` entry a wrapper that runs the whole grid: every block, every
thread, in order (or in reverse order with ``reverse=True``). Its API is the part
of PyCUDA's that Ren uses::

    mod = HostModule(source)                        # like pycuda.compiler.SourceModule(source,
    fn = mod.get_function("ren_ntt_stage")          #                      no_extern_c=True)
    fn(out_ptr, in_ptr, np.int32(4), block=(256, 1, 1), grid=(8, 1))

Pointer arguments are host addresses (``int`` or ``np.uintp``) or NumPy arrays; scalars are NumPy
scalars of the parameter's type. This checks *what* a kernel computes (its arithmetic, indexing,
bounds, launch geometry), not how it behaves in parallel: kernels that need ``__syncthreads``,
shared memory, atomics or warp intrinsics are rejected at build time, so a kernel that passes here
has threads that are independent of each other. Set ``REN_CUDA_EMULATE=1`` to run the ``cuda``
device this way.
"""

from __future__ import annotations

import ctypes
import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeAlias

import numpy as np
import numpy.typing as npt

from ren.codegen.compiler import CompileError, load_cached

if TYPE_CHECKING:
    from _ctypes import CFuncPtr

__all__ = ["SHIM", "HostFunction", "HostModule", "KernelArg", "entry_points"]

#: A kernel argument: an address (an ``int``, ``np.uintp``) or a NumPy array whose address is
#: passed, or a NumPy scalar passed by value.
KernelArg: TypeAlias = int | np.integer | npt.NDArray[np.generic]

#: The ctypes of a kernel parameter: a pointer, or one of ``_SCALARS``.
CType: TypeAlias = "type[ctypes.c_void_p] | type[ctypes._SimpleCData[int]]"

#: What the CUDA names mean on the host. The unsupported ones are left undefined on purpose: a
#: kernel using them fails to build with the name in the compiler's message.
SHIM = """\
/* ren.codegen.cuda_host: CUDA C built for the host, every thread run serially */
#include <stdint.h>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __constant__ static
#define __shared__ ren_emu_shared_memory_is_not_supported
#define __syncthreads ren_emu_syncthreads_is_not_supported
struct ren_emu_dim3 { unsigned x, y, z; };
/* per host thread: two threads of the program may launch kernels at once */
static thread_local ren_emu_dim3 threadIdx, blockIdx, blockDim, gridDim;
static inline uint32_t __umulhi(uint32_t a, uint32_t b)
{
    return (uint32_t)(((uint64_t)a * b) >> 32);
}
static inline uint64_t __umul64hi(uint64_t a, uint64_t b)
{
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
}
#line 1 "kernel.cu"
"""

_ENTRY = re.compile(
    r'extern\s+"C"\s+__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s+)?'
    r"([A-Za-z_]\w*)\s*\(([^)]*)\)"
)

#: ctypes for the scalar parameter types Ren's kernels use.
_SCALARS: dict[str, type[ctypes._SimpleCData[int]]] = {
    "int": ctypes.c_int32,
    "int32_t": ctypes.c_int32,
    "unsigned": ctypes.c_uint32,
    "unsigned int": ctypes.c_uint32,
    "uint32_t": ctypes.c_uint32,
    "long long": ctypes.c_int64,
    "int64_t": ctypes.c_int64,
    "unsigned long long": ctypes.c_uint64,
    "uint64_t": ctypes.c_uint64,
    "size_t": ctypes.c_size_t,
}


def entry_points(source: str) -> dict[str, list[tuple[str, str]]]:
    """The ``extern "C" __global__`` functions of ``source``: name -> ``[(type, name), ...]``."""
    entries = {}
    for m in _ENTRY.finditer(source):
        params = []
        for raw in filter(None, (p.strip() for p in m.group(2).split(","))):
            pname = re.findall(r"[A-Za-z_]\w*", raw)[-1]
            ptype = raw[: raw.rfind(pname)].strip()
            params.append((ptype, pname))
        entries[m.group(1)] = params
    return entries


def _ctype(ptype: str, entry: str) -> CType:
    if "*" in ptype:
        return ctypes.c_void_p
    base = " ".join(w for w in ptype.split() if w not in ("const", "__restrict__"))
    if base not in _SCALARS:
        raise CompileError(f"cuda_host: entry {entry} has a parameter of type {ptype!r}")
    return _SCALARS[base]


def _wrapper(name: str, params: list[tuple[str, str]], reverse: bool) -> str:
    # the wrapper's own names start with ren_emu_ so that no kernel parameter can shadow them
    decl = "".join(f", {t} {p}" for t, p in params)
    call = ", ".join(p for _, p in params)
    if reverse:
        b, t = "ren_emu_grid - 1 - ren_emu_b", "ren_emu_block - 1 - ren_emu_t"
    else:
        b, t = "ren_emu_b", "ren_emu_t"
    return (
        f'extern "C" void ren_emu_{name}(unsigned ren_emu_grid, unsigned ren_emu_block{decl})\n'
        "{\n"
        "    gridDim.x = ren_emu_grid; gridDim.y = gridDim.z = 1;\n"
        "    blockDim.x = ren_emu_block; blockDim.y = blockDim.z = 1;\n"
        "    for (unsigned ren_emu_b = 0; ren_emu_b < ren_emu_grid; ++ren_emu_b)\n"
        "        for (unsigned ren_emu_t = 0; ren_emu_t < ren_emu_block; ++ren_emu_t) {\n"
        f"            blockIdx.x = {b}; threadIdx.x = {t};\n"
        f"            {name}({call});\n"
        "        }\n"
        "}\n"
    )


class HostFunction:
    """One entry point; call it like a PyCUDA ``Function``."""

    def __init__(self, fn: CFuncPtr, name: str, params: list[tuple[str, str]]) -> None:
        self.name, self.params = name, params
        self._types = [_ctype(t, name) for t, _ in params]
        fn.restype = None
        fn.argtypes = [ctypes.c_uint32, ctypes.c_uint32, *self._types]
        self._fn = fn

    def __call__(self, *args: KernelArg, block: Sequence[int], grid: Sequence[int]) -> None:
        """Run the grid ``grid`` of blocks of ``block`` threads (1-D: ``y = z = 1``)."""
        if len(args) != len(self.params):
            raise TypeError(f"{self.name} takes {len(self.params)} arguments, got {len(args)}")
        if any(d != 1 for d in (*block[1:], *grid[1:])):
            raise ValueError(f"{self.name}: only 1-D grids and blocks are emulated")
        values = []
        for arg, ctype in zip(args, self._types, strict=True):
            if isinstance(arg, np.ndarray):
                arg = arg.ctypes.data
            values.append(ctype(int(arg)))
        self._fn(int(grid[0]), int(block[0]), *values)


class HostModule:
    """A CUDA C source built for the host; ``get_function`` like PyCUDA's ``SourceModule``.

    Raises:
        CompileError: when the source does not build (the message has the compiler's output and
            the kept source path), or uses what the emulator cannot run serially.
    """

    def __init__(self, source: str, reverse: bool = False) -> None:
        self.source = source
        self.entries = entry_points(source)
        if not self.entries:
            raise CompileError('cuda_host: the source has no extern "C" __global__ entry point')
        full = (
            SHIM + source + "\n" + "".join(_wrapper(n, p, reverse) for n, p in self.entries.items())
        )
        digest = hashlib.sha256(full.encode()).hexdigest()[:10]
        flags = ("-x", "c++", "-O2", "-shared", "-fPIC", "-w")
        self._lib = load_cached(full, flags, name=f"ren_cuda_host_{digest}")
        self._functions: dict[str, HostFunction] = {}

    def get_function(self, name: str) -> HostFunction:
        """The entry point ``name``."""
        if name not in self.entries:
            raise KeyError(f"no __global__ entry {name!r}; the source has {sorted(self.entries)}")
        if name not in self._functions:
            fn = getattr(self._lib, f"ren_emu_{name}")
            self._functions[name] = HostFunction(fn, name, self.entries[name])
        return self._functions[name]
