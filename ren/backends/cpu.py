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

import copy
import ctypes
import functools
import hashlib
import os
from collections.abc import Callable

import numpy as np

from ren import settings
from ren.backends import cpu_threads
from ren.backends.base import Templates, dispatch, kernel_source
from ren.codegen import batch, lift, templates
from ren.codegen.c import CRenderer
from ren.codegen.compiler import load_cached
from ren.codegen.helpers import c_int, c_name
from ren.codegen.linearize import linearize
from ren.codegen.renderer import render_named
from ren.codegen.toolchain import find_compiler, native_defines, supports_flag
from ren.device import Buffer
from ren.ir.kernels import Family, KernelInfo, TemplateParams
from ren.ir.node import Node
from ren.ring import RingSpec, automorphism_ntt_table

__all__ = ["CompiledKernel", "CopyKernel", "compile", "flags", "forget_kernels", "prepare"]

RENDERER = CRenderer()

#: How a graph runner is built (``GraphRunner``).
RUNNER_FLAGS = ("-O1", "-shared", "-fPIC")


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
    limbs); ``tables`` are read-only arrays passed after the buffers.
    """

    def __init__(
        self,
        name: str,
        source: str,
        tables: tuple[np.ndarray, ...] = (),
        offsets: tuple[int, ...] = (),
    ) -> None:
        self.name, self.source, self.tables, self.offsets = name, source, tables, offsets
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
    prog = linearize(ast)
    name, source = render_named(RENDERER, prog)
    tables = tuple(np.ascontiguousarray(automorphism_ntt_table(t.n, t.g)) for t in prog.tables)
    return name, source, (*tables, templates.ring_table(prog.ring))


@functools.lru_cache(maxsize=4096)
def _elementwise(ast: Node) -> CompiledKernel:
    return CompiledKernel(*_elementwise_parts(ast))


def forget_kernels() -> None:
    """Forget the kernels this process rendered and bound (the compile cache stays)."""
    _elementwise_parts.cache_clear()
    _elementwise.cache_clear()
    _polynomial.cache_clear()


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
            return lift.lift_source(ring, target), ()
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
    return CompiledKernel(kernel.name, kernel.source, tuple(tables), offsets)


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
    return batch.build_all(pairs, flags(), jobs=_cores())


def _cores() -> int:
    """The cores this process may run on (compiler processes at once)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def compile(ast: Node, info: KernelInfo) -> Callable[[tuple[Buffer, ...]], None]:
    """The runner of one kernel body on the cpu device."""
    return dispatch(ast, info, elementwise=_elementwise, copy=_copy, template=_polynomial)


# ---------------------------------------------------------------------------------------------
# the graph runner of ren.jit: a whole captured plan as one C function


class GraphRunner:
    """A captured plan as one C function; each replay is one ctypes call.

    Every kernel is called in order through a table of function pointers, with the byte offsets
    of arena views and limb windows baked into the source.

    The function takes ``F`` (the kernels' entry points) and ``B`` (the address of every root
    buffer and table the plan touches). Inputs are slots of ``B`` set just before the call and
    cleared after it. The source depends only on the plan's shape (indices, offsets, sizes), so
    the same plan in another process hits the compile cache.
    """

    def __init__(
        self, source: str, name: str, fns: list, roots: list, input_slots: dict, keep: list
    ) -> None:
        self.source, self.name = source, name
        self._keep = keep  # the compiled kernels (and their libraries) the pointers point into
        # -O1: the runner is a list of calls; -O2 took twice as long to build a bootstrap's
        # (2.0 s against 1.1 s for 3,000 calls), for no faster replay
        lib = load_cached(source, RUNNER_FLAGS, name=name)
        self.fn = getattr(lib, name)
        self.fn.restype = None
        self.fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self._lib = lib
        self.F = np.array(
            [ctypes.cast(f, ctypes.c_void_p).value for f in fns] or [0], dtype=np.uint64
        )
        self.roots = roots  # keeps every buffer and table alive while the runner is
        self.B = np.array([0 if r is None else _address(r) for r in roots] or [0], dtype=np.uint64)
        self.input_slots = input_slots  # input position -> slot of B
        self.slots: list[tuple[int, int]] | None = None  # each argument's (slot, offset)

    def rebound(self, units: list) -> GraphRunner | None:
        """This runner over the buffers of ``units``, the same kernels over other buffers.

        For a schedule-cache hit, whose units are those of the realization the runner was made
        for, over fresh buffers: ``None`` unless the kernels are the same and their buffers are
        shared the same way (each root in the same slot of ``B``, each view at the same offset).
        """
        if len(units) != len(self._keep) or any(
            u.fn is not f for u, f in zip(units, self._keep, strict=True)
        ):
            return None
        roots, slots = _roots(units)
        if slots != self.slots:
            return None
        new = copy.copy(self)
        new.roots = roots
        new.B = np.array([_address(r) for r in roots] or [0], dtype=np.uint64)
        return new

    def run(self, inputs: list[Buffer | None]) -> None:
        """One replay with ``inputs`` (by input position) bound."""
        if _threaded():
            cpu_threads.apply()
        B = self.B
        for k, slot in self.input_slots.items():
            B[slot] = inputs[k].array.ctypes.data
        try:
            self.fn(self.F.ctypes.data, B.ctypes.data)
        finally:
            for slot in self.input_slots.values():
                B[slot] = 0


def _roots(units: list) -> tuple[list, list[tuple[int, int]]]:
    """Every root buffer and table ``units`` touch, in order, and each argument's slot and offset.

    The offset is the argument's byte offset in its root, which the runner's source bakes in.
    """
    roots: list = []
    index: dict[int, int] = {}
    slots: list[tuple[int, int]] = []
    for unit in units:
        args = [(b.root, b.offset) for b in unit.bufs]
        args += [(t, 0) for t in getattr(unit.fn, "tables", ())]
        for obj, offset in args:
            key = id(obj)
            if key not in index:
                index[key] = len(roots)
                roots.append(obj)
            slots.append((index[key], offset))
    return roots, slots


def _address(obj: Buffer | np.ndarray) -> int:
    array = obj if isinstance(obj, np.ndarray) else obj.ensure_allocated().need_array()
    return array.ctypes.data


def graph_runner(units: list, bindings: list[tuple[int, int, int]]) -> GraphRunner | None:
    """The graph runner for a captured plan on the cpu device, or ``None`` if it cannot have one.

    There is none when a unit is neither a compiled kernel nor a copy between host buffers.
    """
    roots: list = []
    index: dict[int, int] = {}
    input_slots: dict[int, int] = {}
    bound = {(i, j): k for i, j, k in bindings}

    def slot_of(obj, key: int) -> int:
        if key not in index:
            index[key] = len(roots)
            roots.append(obj)
        return index[key]

    fns: list[Callable[..., None]] = []
    lines: list[str] = []
    for i, unit in enumerate(units):
        args = []
        for j, buf in enumerate(unit.bufs):
            if (i, j) in bound:
                k = bound[(i, j)]
                slot = slot_of(None, -1 - k)
                input_slots[k] = slot
                args.append((slot, 0))
            else:
                args.append((slot_of(buf.root, id(buf.root)), buf.offset))
        fn = unit.fn
        if isinstance(fn, CompiledKernel):
            for j, off in enumerate(fn.offsets):
                if off:
                    slot, byte = args[j]
                    args[j] = (slot, byte + off)
            args += [(slot_of(t, id(t)), 0) for t in fn.tables]
            params = ", ".join(["void *"] * len(args))
            call = ", ".join(f"B[{c_int(s)}] + {c_int(o)}" for s, o in args)
            note = c_name(fn.name)
            lines.append(f"    ((void (*)({params}))F[{len(fns)}])({call});  /* {note} */")
            fns.append(fn.fn)
        elif isinstance(fn, CopyKernel):
            (ds, do), (ss, so) = args
            nbytes = unit.bufs[0].nbytes
            so += fn.offset * (nbytes // fn.size)  # the window's first word, in bytes
            where = f"B[{c_int(ds)}] + {c_int(do)}, B[{c_int(ss)}] + {c_int(so)}"
            lines.append(f"    memcpy({where}, {c_int(nbytes)});  /* copy */")
        else:
            return None
    body = "\n".join(lines)
    digest = hashlib.sha256(body.encode()).hexdigest()[:12]
    name = f"ren_graph_{digest}"
    source = (
        "/* A plan captured by ren.jit: every kernel in order. F: entry points; B: root buffers\n"
        "   and tables (inputs are bound just before the call). Offsets are in bytes. */\n"
        "#include <string.h>\n\n"
        f"void {name}(void *const *F, char *const *B)\n{{\n{body}\n}}\n"
    )
    runner = GraphRunner(source, name, fns, roots, input_slots, [u.fn for u in units])
    if not bindings:  # a realization's units: the shape a schedule-cache hit can rebind
        runner.slots = _roots(units)[1]
    return runner
