"""The cpu backend: kernels rendered as C, built by the system compiler, called through ctypes.

Buffers are NumPy arrays, as on the python device, so moving data between the two is only the
``COPY`` the graph asks for. Elementwise kernels are rendered from their body by ``CRenderer``;
whole-polynomial kernels (NTT, INTT, rescale, basis extension) come from the C templates in
``ren.codegen.templates``. Flags: ``cc -O3 -march=native -shared -fPIC``, plus ``-fopenmp`` (the
loop over limbs in parallel) when the compiler supports it. Each call runs on as many threads as
``ren.backends.cpu_threads`` chooses: the cores other processes leave free (one on a busy
machine), or ``REN_THREADS=N``; ``REN_THREADS=1`` builds without OpenMP at all.
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Callable, Sequence

import numpy as np

from ren import settings
from ren.backends import cpu_graph, cpu_tasks, cpu_threads, cpu_tiers
from ren.backends import python as interpreter
from ren.backends.base import BoundRunner, Templates, dispatch, kernel_source
from ren.backends.cpu_graph import GraphRunner
from ren.codegen import batch, compiler, lift, templates, vm
from ren.codegen.c import CRenderer
from ren.codegen.compiler import load_cached
from ren.codegen.linearize import Program, linearize
from ren.codegen.renderer import render_named
from ren.codegen.toolchain import find_compiler, native_defines, supports_flag
from ren.device import Buffer
from ren.ir.kernels import Family, KernelInfo, TemplateParams
from ren.ir.node import Node
from ren.ring import RingSpec, automorphism_ntt_table
from ren.ring.primes import ntt_primes

__all__ = [
    "CompiledKernel",
    "CopyKernel",
    "compile",
    "flags",
    "forget_kernels",
    "graph_runner",
    "prepare",
    "reuse_delay",
]

RENDERER = CRenderer()


@functools.cache
def flags() -> tuple[str, ...]:
    """The compiler flags of the cpu device (read once per process).

    ``-fopenmp`` unless ``REN_THREADS=1`` or the compiler lacks it; the team size of each call
    is then chosen by ``ren.backends.cpu_threads`` (``REN_THREADS=N``, or the free cores). On a
    processor with AVX-512, ``-mprefer-vector-width=512``: gcc otherwise keeps to 256-bit vectors
    there, and the kernels' 64-bit modular products run about a tenth faster with 512.
    """
    base: tuple[str, ...] = ("-O3", "-march=native", "-shared", "-fPIC")
    cc, _ = find_compiler()
    wide = "-mprefer-vector-width=512"
    if native_defines(cc, "__AVX512F__") and supports_flag(cc, wide):
        base = (*base, wide)
    if settings.THREADS.get() == 1 or not supports_flag(cc, "-fopenmp"):
        return base
    return (*base, "-fopenmp")


def _threaded() -> bool:
    """Whether the kernels are built with OpenMP (then each call sets its team size)."""
    return "-fopenmp" in flags()


class CompiledKernel:
    """A built kernel bound to its entry point; call it with the kernel's buffers.

    ``offsets`` are byte offsets into each buffer (a whole-polynomial kernel reading a window of
    limbs); ``tables`` are read-only arrays passed after the buffers. ``split``, when set, says
    how a call can run a range of limbs alone (``ren.backends.cpu_tasks``): per argument
    (buffers, then tables) the bytes to move its pointer by per limb, ``cpu_tasks.RING`` for the
    ring table, which is replaced by the range's own.
    """

    def __init__(
        self,
        name: str,
        source: str,
        tables: tuple[np.ndarray, ...] = (),
        offsets: tuple[int, ...] = (),
        split: tuple[int, ...] | None = None,
    ) -> None:
        self.name, self.source, self.tables, self.offsets = name, source, tables, offsets
        self.split = split
        lib = load_cached(source, flags(), name=name)
        self.fn = getattr(lib, name)
        self.fn.restype = None
        self._tables = [t.ctypes.data for t in tables]  # the tables live as long as the kernel
        self._lib = lib  # keep the library loaded while the kernel lives

    def __call__(self, bufs: tuple[Buffer, ...]) -> None:
        """Call the kernel on ``bufs`` (each shifted by its byte offset) and the kernel's tables."""
        if _threaded():
            cpu_threads.apply()
        addresses = [b.need_array().ctypes.data for b in bufs]
        for i, off in enumerate(self.offsets):
            addresses[i] += off
        addresses += self._tables
        if self.fn.argtypes is None:  # every argument a pointer: ctypes converts the ints
            self.fn.argtypes = [ctypes.c_void_p] * len(addresses)
        self.fn(*addresses)


@functools.lru_cache(maxsize=4096)
def _elementwise_parts(ast: Node) -> tuple[str, str, tuple[np.ndarray, ...]]:
    """``(name, source, tables)`` of an elementwise body: rendered, not built.

    The tables are the gather tables of its automorphisms, then the ring table (the limb count
    and moduli the source reads at run time).
    """
    prog = _program(ast)
    name, source = render_named(RENDERER, prog)
    tables = tuple(np.ascontiguousarray(automorphism_ntt_table(t.n, t.g)) for t in prog.tables)
    return name, source, (*tables, templates.ring_table(prog.ring))


@functools.lru_cache(maxsize=4096)
def _elementwise(ast: Node) -> CompiledKernel | cpu_tiers.Tiered:
    name, source, tables = _elementwise_parts(ast)
    split = cpu_tasks.elementwise_split(_program(ast), len(tables))

    def built() -> CompiledKernel:
        return CompiledKernel(name, source, tables, split=split)

    future = cpu_tiers.pending(source)
    if future is None:
        return built()

    def fallback() -> Callable[[tuple[Buffer, ...]], None]:
        return _vm_kernel(ast) or interpreter.compile(ast, None)

    return cpu_tiers.Tiered(name, future, built, fallback)


def _vm_kernel(ast: Node) -> cpu_tiers.VMKernel | None:
    """``ast`` on the elementwise machine, once the machine's library is built; else ``None``."""
    if cpu_tiers.machine(_program(ast).ring.dtype, flags()) is None:
        return None
    return _vm_bound(ast)


@functools.lru_cache(maxsize=4096)
def _vm_bound(ast: Node) -> cpu_tiers.VMKernel:
    prog = _program(ast)
    fn = cpu_tiers.machine(prog.ring.dtype, flags())
    assert fn is not None  # _vm_kernel found the machine built
    tables = _elementwise_parts(ast)[2]
    return cpu_tiers.VMKernel(vm.encode(prog), prog.ring.n, tables, fn, _threaded())


def forget_kernels() -> None:
    """Forget the kernels this process rendered and bound (the compile cache stays)."""
    _elementwise_parts.cache_clear()
    _elementwise.cache_clear()
    _vm_bound.cache_clear()
    _program.cache_clear()
    _polynomial.cache_clear()
    cpu_tiers.forget()


class CopyKernel:
    """A copy between buffers: ``size`` words of the input from word ``offset`` on, to the output.

    The input is a stored value or a window of limbs of one (the body's ``LOAD`` at
    ``limb_offset``), so ``offset`` is ``limb_offset * n`` and ``size`` the output's ``L * n``.
    """

    def __init__(self, offset: int, size: int) -> None:
        self.offset, self.size = offset, size

    def __call__(self, bufs: tuple[Buffer, ...]) -> None:
        """Copy the window of ``bufs[1]`` into ``bufs[0]``."""
        np.copyto(bufs[0].need_array(), bufs[1].need_array()[self.offset : self.offset + self.size])


@functools.lru_cache(maxsize=4096)
def _copy(read: TemplateParams) -> CopyKernel:
    return CopyKernel(read.limb_offset * read.source.n, read.source.size)


#: A C template and the tables it takes.
CTemplate = tuple[templates.CKernel, tuple[np.ndarray, ...]]


class CTemplates(Templates[CTemplate]):
    """The cpu backend's template set: Ren's C templates (``ren.codegen.templates``)."""

    device = "cpu"

    def ntt(self, ring: RingSpec) -> CTemplate:
        """The C NTT and its twiddles."""
        return templates.ntt_source(ring), templates.ntt_tables(ring)

    def intt(self, ring: RingSpec) -> CTemplate:
        """The C inverse NTT and its twiddles."""
        return templates.intt_source(ring), templates.intt_tables(ring)

    def rescale(self, ring: RingSpec, drop: tuple[int, ...]) -> CTemplate:
        """The C rescale and its constants table."""
        return templates.rescale_source(ring, drop), templates.rescale_tables(ring, drop)

    def base_convert(self, ring: RingSpec, target: RingSpec) -> CTemplate:
        """The C basis extension and its tables; one limb: the lift (constants in its source)."""
        if lift.applies(ring, target):
            return lift.lift_source(ring, target), lift.lift_tables(ring, target)
        kernel = templates.base_convert_source(ring, target)
        return kernel, templates.base_convert_tables(ring, target)

    def text(self, kernel: CTemplate) -> str:
        """The C source."""
        return kernel[0].source


TEMPLATES = CTemplates()


@functools.lru_cache(maxsize=4096)
def _polynomial(info: KernelInfo) -> CompiledKernel:
    """NTT, INTT, rescale, basis extension: the C template of the family, for the input's ring.

    The input is a stored value or a window of limbs of one (``limb_offset``): the kernel gets a
    pointer to the window's first word.
    """
    kernel, tables = TEMPLATES.template(info)
    prm = info.need_params()
    offsets = (0, prm.limb_offset * prm.source.n * np.dtype(prm.source.np_dtype).itemsize)
    split = cpu_tasks.template_split(info.family, prm.source, len(tables))
    return CompiledKernel(kernel.name, kernel.source, tuple(tables), offsets, split)


def _template(ast: Node, info: KernelInfo) -> CompiledKernel | cpu_tiers.Tiered:
    """A template kernel: built, or interpreted by the python backend while it builds."""
    kernel = TEMPLATES.template(info)[0]
    future = cpu_tiers.pending(kernel.source)
    if future is None:
        return _polynomial(info)
    return cpu_tiers.Tiered(
        kernel.name, future, lambda: _polynomial(info), lambda: interpreter.compile(ast, info)
    )


def source(ast: Node, info: KernelInfo) -> str:
    """The C source the cpu device runs for one kernel body: rendered, not compiled."""
    note = "/* a copy between buffers: memcpy, no kernel */\n"
    return kernel_source(ast, info, RENDERER, TEMPLATES, note)


def prepare(kernels: list[tuple[Node, KernelInfo]]) -> int:
    """Build, together, every kernel of ``kernels`` the compile cache lacks; how many were built.

    Called before the kernels of a realization or a loaded plan are compiled one by one
    (``compile`` then finds each built): one compiler run per free core instead of one per
    kernel (``ren.codegen.batch``).
    """
    sources: dict[str, str] = {}
    for ast, info in kernels:
        if info.family is Family.ELEMENTWISE:
            name, text, _ = _elementwise_parts(ast)
        elif info.family is Family.COPY:
            continue
        else:
            kernel = TEMPLATES.template(info)[0]
            name, text = kernel.name, kernel.source
        sources.setdefault(text, name)
    pairs = [(name, text) for text, name in sources.items()]
    if not cpu_tiers.enabled():
        return batch.build_all(pairs, flags(), jobs=_cores())
    todo = [(name, text) for name, text in pairs if not compiler.cached(text, flags(), name=name)]
    if not todo:
        return 0
    shapes = {(r.n, r.dtype) for ast, info in kernels for r in _rings(ast, info)}
    missing = set(todo)  # the families and the machine come with the first batch of a shape
    stock = dict.fromkeys(pair for shape in sorted(shapes) for pair in _stock(*shape))
    todo += [p for p in stock if p not in missing and not compiler.cached(p[1], flags(), name=p[0])]

    def build(items: list[tuple[str, str]]) -> int:
        return batch.build_all(items, flags(), jobs=_cores(), background=True)

    return cpu_tiers.submit(todo, build)


def _rings(ast: Node, info: KernelInfo) -> tuple[RingSpec, ...]:
    """The rings a kernel reads (the families of their shapes are built with it)."""
    if info.family is Family.ELEMENTWISE:
        return (_program(ast).ring,)
    if info.family is Family.COPY:
        return ()
    return (info.need_params().source,)


@functools.cache
def _stock(n: int, dtype: str) -> tuple[tuple[str, str], ...]:
    """``(name, source)`` of every family kernel of one shape, and of the elementwise machine.

    Their sources depend on ``n`` and the word size only, so a background build makes all of
    them at the first kernel of a shape: the NTT, INTT, rescale and basis changes a program
    reaches later are built by then. Built on an example ring of the shape (three primes).
    """
    ring = RingSpec(n, ntt_primes(n, 50 if dtype == "u64" else 28, 3), dtype=dtype)
    one = RingSpec(n, ring.moduli[:1], dtype=dtype)
    kernels = [  # the sources alone: the example ring's twiddle tables are never needed
        templates.ntt_source(ring),
        templates.intt_source(ring),
        templates.rescale_source(ring, ring.moduli[-1:]),
        templates.base_convert_source(RingSpec(n, ring.moduli[:2], dtype=dtype), ring),
    ]
    if lift.applies(one, ring):
        kernels.append(lift.lift_source(one, ring))
    else:
        kernels.append(templates.base_convert_source(one, ring))
    pairs = [(k.name, k.source) for k in kernels]
    return (*dict.fromkeys(pairs), (vm.vm_name(dtype), vm.vm_source(dtype)))


@functools.lru_cache(maxsize=4096)
def _program(ast: Node) -> Program:
    """The linearized body of an elementwise kernel (``ren.codegen.linearize``)."""
    return linearize(ast)


def _cores() -> int:
    """The cores this process may run on (compiler processes at once)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def compile(ast: Node, info: KernelInfo) -> Callable[[tuple[Buffer, ...]], None]:
    """The runner of one kernel body on the cpu device."""
    return dispatch(
        ast, info, elementwise=_elementwise, copy=_copy, template=lambda i: _template(ast, i)
    )


def reuse_delay() -> int:
    """Kernels a freed arena block waits before it is reused (``ren.engine.memory``).

    With OpenMP a plan runs as tasks, so ``cpu_tasks.REUSE_DELAY``; on one thread, none.
    """
    return cpu_tasks.REUSE_DELAY if _threaded() else 0


def graph_runner(
    units: Sequence[BoundRunner], bindings: list[tuple[int, int, int]]
) -> GraphRunner | None:
    """The graph runner of a captured plan (``ren.backends.cpu_graph``), or ``None``."""
    return cpu_graph.graph_runner(units, bindings, _threaded())
