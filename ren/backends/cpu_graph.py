"""The graph runner of ``ren.jit`` on the cpu device: a whole captured plan as one C function.

``graph_runner(units, bindings, threaded)`` writes a C function that calls every kernel of a plan
in order through a table of entry points (``ren.backends.cpu`` re-exports it as the backend's
``graph_runner``); ``GraphRunner`` builds and calls it.
"""

from __future__ import annotations

import copy
import ctypes
import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from ren.backends import cpu_threads, cpu_tiers
from ren.backends.base import BoundRunner, Runner
from ren.codegen.compiler import load_cached
from ren.codegen.helpers import c_int, c_name
from ren.device import Buffer

if TYPE_CHECKING:
    from _ctypes import CFuncPtr

__all__ = ["RUNNER_FLAGS", "GraphRunner", "graph_runner"]

#: How a graph runner is built (``GraphRunner``).
RUNNER_FLAGS = ("-O1", "-shared", "-fPIC")

#: What a slot of ``B`` points to: a root buffer, or a kernel's table.
Root: TypeAlias = Buffer | np.ndarray


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
        self,
        source: str,
        name: str,
        fns: list[CFuncPtr],
        roots: list[Root | None],
        input_slots: dict[int, int],
        keep: list[Runner],
        threaded: bool = False,
    ) -> None:
        self.source, self.name, self.threaded = source, name, threaded
        self._keep = keep  # the compiled kernels (and their libraries) the pointers point into
        # -O1: the runner is a list of calls; -O2 took twice as long to build a bootstrap's
        # (2.0 s against 1.1 s for 3,000 calls), for no faster replay
        lib = load_cached(source, RUNNER_FLAGS, name=name)
        self.fn: CFuncPtr = getattr(lib, name)
        self.fn.restype = None
        self.fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self._lib = lib
        self.F = np.array(
            [ctypes.cast(f, ctypes.c_void_p).value for f in fns] or [0], dtype=np.uint64
        )
        self.roots: Sequence[Root | None] = (
            roots  # keeps every buffer and table alive while the runner is
        )
        self.B = np.array([0 if r is None else _address(r) for r in roots] or [0], dtype=np.uint64)
        self.input_slots = input_slots  # input position -> slot of B
        self.slots: list[tuple[int, int]] | None = None  # each argument's (slot, offset)

    def rebound(self, units: Sequence[BoundRunner]) -> GraphRunner | None:
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
        if self.threaded:
            cpu_threads.apply()
        B = self.B
        for k, slot in self.input_slots.items():
            buf = inputs[k]
            assert buf is not None  # a bound input is a buffer (None: a constant, never bound)
            B[slot] = buf.need_array().ctypes.data
        try:
            self.fn(self.F.ctypes.data, B.ctypes.data)
        finally:
            for slot in self.input_slots.values():
                B[slot] = 0


def _roots(units: Sequence[BoundRunner]) -> tuple[list[Root], list[tuple[int, int]]]:
    """Every root buffer and table ``units`` touch, in order, and each argument's slot and offset.

    The offset is the argument's byte offset in its root, which the runner's source bakes in.
    """
    roots: list[Root] = []
    index: dict[int, int] = {}
    slots: list[tuple[int, int]] = []
    for unit in units:
        args: list[tuple[Root, int]] = [(b.root, b.offset) for b in unit.bufs]
        args += [(t, 0) for t in getattr(unit.fn, "tables", ())]
        for obj, offset in args:
            key = id(obj)
            if key not in index:
                index[key] = len(roots)
                roots.append(obj)
            slots.append((index[key], offset))
    return roots, slots


def _address(obj: Root) -> int:
    array = obj if isinstance(obj, np.ndarray) else obj.ensure_allocated().need_array()
    return array.ctypes.data


def graph_runner(
    units: Sequence[BoundRunner], bindings: list[tuple[int, int, int]], threaded: bool = False
) -> GraphRunner | None:
    """The graph runner for a captured plan on the cpu device, or ``None`` if it cannot have one.

    There is none when a unit is neither a compiled kernel nor a copy between host buffers (nor
    yet while one is still building in the background). ``threaded``: the kernels were built
    with OpenMP, so each call sets its team size.
    """
    from ren.backends.cpu import CompiledKernel, CopyKernel  # (cpu imports this module)

    roots: list[Root | None] = []
    index: dict[int, int] = {}
    input_slots: dict[int, int] = {}
    bound = {(i, j): k for i, j, k in bindings}

    def slot_of(obj: Root | None, key: int) -> int:
        if key not in index:
            index[key] = len(roots)
            roots.append(obj)
        return index[key]

    fns: list[CFuncPtr] = []
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
        fn: Runner | None = unit.fn
        if isinstance(fn, cpu_tiers.Tiered):  # built in the background: only once it is
            fn = fn.resolved()
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
    runner = GraphRunner(source, name, fns, roots, input_slots, [u.fn for u in units], threaded)
    if not bindings:  # a realization's units: the shape a schedule-cache hit can rebind
        runner.slots = _roots(units)[1]
    return runner
