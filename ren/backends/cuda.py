"""The cuda backend: kernels rendered as CUDA C, built and launched with PyCUDA.

Elementwise kernels are rendered by ``CUDARenderer`` (one thread per word); whole-polynomial
kernels (NTT, INTT, rescale, basis extension) come from ``ren.codegen.cuda_templates`` as a
``CUDAProgram``: one source and a list of launches (the NTT is one launch per butterfly stage).

Memory: a ``cuda`` buffer's words live in device memory. Its host ``array`` is a mirror that is
brought up to date whenever Python code reads it (``Buffer.array``), so ``tolist``, ``COPY`` to
another device, ``REN_VALIDATE`` and the poison mode see the device's words; after such an access
the device copy is uploaded again before the next kernel uses it (the host may have written).
Kernels that run one after another on the device move no data between host and device. Arena views
share their arena's device allocation.

PyCUDA (the ``cuda`` extra: ``pip install -e '.[cuda]'``) is imported on first use, not when Ren is
imported. Without it, or without a driver and a GPU, the first kernel raises a ``RenError`` saying
so. ``REN_CUDA_EMULATE=1`` runs the same CUDA C on the host instead (``ren.codegen.cuda_host``:
built as C++, every thread in turn), which checks the kernels' arithmetic on a machine with no GPU.
``REN_CUDA_DEVICE`` picks the GPU (default 0).
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeAlias

import numpy as np

from ren import settings
from ren.backends.base import Templates, dispatch, kernel_source
from ren.backends.cuda_runtime import (
    Allocation,
    EmulatedRuntime,
    KernelFunction,
    PyCUDARuntime,
    Runtime,
    runtime,
)
from ren.codegen.cuda import BLOCK, CUDARenderer
from ren.codegen.linearize import linearize
from ren.codegen.renderer import render_named
from ren.device import Buffer
from ren.errors import RenError
from ren.ir.kernels import KernelInfo, TemplateParams
from ren.ir.node import Node
from ren.ring import RingSpec, automorphism_ntt_table

if TYPE_CHECKING:
    from ren.codegen.cuda_host import KernelArg
    from ren.codegen.cuda_templates import CUDAProgram

__all__ = ["EmulatedRuntime", "PyCUDARuntime", "Runtime", "compile", "runtime"]

RENDERER = CUDARenderer()


# ---------------------------------------------------------------------------------------------
# device copies of buffers


@dataclass(eq=False)
class DeviceCopy:
    """The device words of a root buffer (``Buffer.mirror``), and which side is newer."""

    runtime: Runtime  # the runtime that made the allocation
    alloc: Allocation
    ptr: int
    host_fresh: bool = True  # the host array holds the latest words
    device_fresh: bool = False  # the device allocation holds the latest words

    def host_access(self, root: Buffer) -> None:
        if not self.host_fresh and root.host_array is not None:
            self.runtime.dtoh(root.host_array, self.alloc)
            self.host_fresh = True
        self.device_fresh = False  # the caller may write through the host array

    def release(self, root: Buffer) -> None:
        self.runtime.free(self.alloc)


_MIRROR_LOCK = threading.Lock()


def device_pointer(buf: Buffer) -> int:
    """The device address of ``buf``'s first word, uploading the host words if they are newer."""
    root = buf.root.ensure_allocated()
    copy = _device_copy(root)
    if copy is None:
        with _MIRROR_LOCK:  # two threads reading one stored value (a key) make one copy
            copy = _device_copy(root)
            if copy is None:
                rt = runtime()
                alloc = rt.alloc(root.nbytes)
                copy = DeviceCopy(rt, alloc, rt.pointer(alloc))
                root.mirror = copy
    if not copy.device_fresh:
        host = root.host_array  # not .array: that would sync from the device copy
        assert host is not None  # allocated above
        copy.runtime.htod(copy.alloc, host)
        copy.device_fresh = copy.host_fresh = True
    return copy.ptr + buf.offset


def _device_copy(root: Buffer) -> DeviceCopy | None:
    """The device copy of the root buffer ``root``, if it has one."""
    copy = root.mirror
    if copy is None or isinstance(copy, DeviceCopy):
        return copy
    raise RenError(f"{root!r} is mirrored by {type(copy).__name__}, not by the cuda device")


def _written(buf: Buffer) -> None:
    """A kernel wrote ``buf`` on the device: the host mirror of its root is stale."""
    copy = _device_copy(buf.root)
    if copy is not None:  # device_pointer made it before the launch
        copy.host_fresh = False


# ---------------------------------------------------------------------------------------------
# kernels


#: A launch argument: a buffer slot (``("buf", slot)``), a table (``("table", index)``), or a
#: NumPy scalar passed by value.
LaunchArg: TypeAlias = tuple[Literal["buf", "table"], int] | np.integer


@dataclass(frozen=True)
class _Launch:
    entry: str
    grid: int
    block: int
    args: tuple[LaunchArg, ...]


@dataclass(eq=False)
class CUDAKernel:
    """A built module and its launches; call it with the kernel's buffers.

    ``offsets`` are word offsets into each buffer slot (a window of limbs); ``tables`` are host
    arrays uploaded once, on first call.
    """

    name: str
    source: str
    launches: tuple[_Launch, ...]
    tables: tuple[np.ndarray, ...] = ()
    offsets: tuple[int, ...] = ()
    _ready: _Ready | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _prepare(self, rt: Runtime) -> _Ready:
        """Build the module and upload the tables for ``rt``: the kernel, ready on it."""
        debug = settings.DEBUG.get()
        if debug >= 4:
            print(f"// {self.name} (CUDA C, {rt.description})\n{self.source}", file=sys.stderr)
        module = rt.module(self.source)
        functions = {launch.entry: module.get_function(launch.entry) for launch in self.launches}
        tables = []
        for table in self.tables:
            host = np.ascontiguousarray(table)
            alloc = rt.alloc(host.nbytes)
            rt.htod(alloc, host)
            tables.append((alloc, rt.pointer(alloc)))
        return _Ready(rt, functions, tuple(tables))

    def _ready_on(self, rt: Runtime) -> _Ready:
        """The kernel ready on ``rt``: built on its first call there (under the kernel's lock).

        The caller holds the result for the whole call, so a thread that prepares the kernel for
        another runtime meanwhile (tests change it) cannot free the tables a launch is reading.
        """
        ready = self._ready
        if ready is None or ready.runtime is not rt:
            with self._lock:
                ready = self._ready
                if ready is None or ready.runtime is not rt:
                    ready = self._ready = self._prepare(rt)
        return ready

    def __call__(self, bufs: tuple[Buffer, ...]) -> None:
        rt = runtime()
        ready = self._ready_on(rt)
        rt.enter()
        ptrs = [device_pointer(b) for b in bufs]
        for i, off in enumerate(self.offsets):
            ptrs[i] += off * bufs[i].itemsize
        for launch in self.launches:
            args: list[KernelArg] = []
            for a in launch.args:
                if not isinstance(a, tuple):
                    args.append(a)
                elif a[0] == "buf":
                    args.append(np.uintp(ptrs[a[1]]))
                else:  # ("table", index)
                    args.append(np.uintp(ready.tables[a[1]][1]))
            ready.functions[launch.entry](*args, block=(launch.block, 1, 1), grid=(launch.grid, 1))
        _written(bufs[0])


@dataclass(frozen=True)
class _Ready:
    """A kernel built for one runtime: its entry points and its tables' device copies."""

    runtime: Runtime
    functions: dict[str, KernelFunction]
    tables: tuple[tuple[Allocation, int], ...]


@functools.lru_cache(maxsize=4096)
def _elementwise(ast: Node) -> CUDAKernel:
    prog = linearize(ast)
    ring = prog.ring
    name, source = render_named(RENDERER, prog)
    tables = tuple(np.ascontiguousarray(automorphism_ntt_table(t.n, t.g)) for t in prog.tables)
    total = ring.L * ring.n
    args: list[LaunchArg] = [("buf", s) for s in range(prog.slots)]
    args += [("table", j) for j in range(len(tables))]
    launch = _Launch(name, -(-total // BLOCK), BLOCK, tuple(args))
    return CUDAKernel(name, source, (launch,), tables)


def _from_program(prog: CUDAProgram, offsets: tuple[int, ...]) -> CUDAKernel:
    names = list(prog.tables)
    launches = []
    for launch in prog.launches:
        args: list[LaunchArg] = []
        for a in launch.args:
            if a == "out":
                args.append(("buf", 0))
            elif a == "in":
                args.append(("buf", 1))
            elif isinstance(a, str):
                args.append(("table", names.index(a)))
            else:
                args.append(a)
        launches.append(_Launch(launch.entry, launch.grid, launch.block, tuple(args)))
    tables = tuple(prog.tables[k] for k in names)
    return CUDAKernel(prog.name, prog.source, tuple(launches), tables, offsets)


class CUDATemplates(Templates["CUDAProgram"]):
    """The cuda backend's template set: Ren's CUDA templates (``ren.codegen.cuda_templates``).

    The templates module is imported on first use (``import ren`` stays quick).
    """

    device = "cuda"

    def ntt(self, ring: RingSpec) -> CUDAProgram:
        """The CUDA NTT."""
        from ren.codegen.cuda_templates import ntt_program

        return ntt_program(ring)

    def intt(self, ring: RingSpec) -> CUDAProgram:
        """The CUDA inverse NTT."""
        from ren.codegen.cuda_templates import intt_program

        return intt_program(ring)

    def rescale(self, ring: RingSpec, drop: tuple[int, ...]) -> CUDAProgram:
        """The CUDA rescale."""
        from ren.codegen.cuda_templates import rescale_program

        return rescale_program(ring, drop)

    def base_convert(self, ring: RingSpec, target: RingSpec) -> CUDAProgram:
        """The CUDA basis extension."""
        from ren.codegen.cuda_templates import base_convert_program

        return base_convert_program(ring, target)

    def text(self, kernel: CUDAProgram) -> str:
        """The CUDA C source."""
        return kernel.source


TEMPLATES = CUDATemplates()


@functools.lru_cache(maxsize=4096)
def _polynomial(info: KernelInfo) -> CUDAKernel:
    prm = info.need_params()
    return _from_program(TEMPLATES.template(info), (0, prm.limb_offset * prm.source.n))


def source(ast: Node, info: KernelInfo) -> str:
    """The CUDA C the cuda device runs for one kernel body.

    The source is rendered, not compiled, so no GPU or PyCUDA is needed.
    """
    note = "/* a copy between buffers: through the host mirrors, no kernel */\n"
    return kernel_source(ast, info, RENDERER, TEMPLATES, note)


@functools.lru_cache(maxsize=4096)
def _copy(read: TemplateParams) -> Callable[[tuple[Buffer, ...]], None]:
    """A copy between buffers: the input's window of limbs (or all of it) to the output."""
    start = read.limb_offset * read.source.n
    stop = (read.limb_offset + read.source.L) * read.source.n

    def copy(bufs: tuple[Buffer, ...]) -> None:
        # through the host mirrors: Buffer.array syncs each side with its device copy
        np.copyto(bufs[0].need_array(), bufs[1].need_array()[start:stop])

    return copy


def compile(ast: Node, info: KernelInfo) -> Callable[[tuple[Buffer, ...]], None]:
    """The runner of one kernel body on the cuda device (the runtime starts here, lazily)."""
    runtime()  # a missing PyCUDA or driver is reported before anything is built
    return dispatch(ast, info, elementwise=_elementwise, copy=_copy, template=_polynomial)
