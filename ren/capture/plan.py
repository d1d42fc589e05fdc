"""A plan ``ren.jit`` captured: its units and buffers, how each thread replays it, what it checks.

A ``CapturedPlan`` holds one capture's exec units (input slots empty), the arena and outputs they
write and the stored values they read. ``replay`` binds a call's inputs, runs the units (or the
backend's graph runner) and returns the outputs. The buffers belong to the capturing thread;
another thread replays a copy with its own (``for_this_thread``): each gets its own answer.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol, cast

import numpy as np

from ren import settings
from ren.capture.arguments import rebuild, storage_of, walk
from ren.capture.constants import write_constants
from ren.capture.reads import external_reads
from ren.device import Buffer
from ren.engine import debug_level
from ren.engine.memory import MemoryPlan, captured_temporaries, plan_memory, rebind
from ren.engine.realize import ExecUnit, backend, validate_unit
from ren.errors import JitError
from ren.ir.node import BufferArg, Node
from ren.ir.op import Op
from ren.poly import Poly

__all__ = ["CapturedPlan", "PlanRunner", "Replayer", "rebound", "replan", "run_pruned"]


class Replayer(Protocol):
    """What replays a plan (a ``JitFunction``, a ``LoadedPlan``): messages name it."""

    @property
    def name(self) -> str:
        """The function as messages name it."""


class PlanRunner(Protocol):
    """A backend's graph runner (``graph_runner(units, bindings)``): one call replays a plan."""

    def run(self, inputs: list[Buffer | None]) -> None:
        """One replay with ``inputs`` (by input position; ``None`` for a constant) bound."""


@dataclasses.dataclass(eq=False)
class CapturedPlan:
    """What one capture produced, and what a replay needs.

    ``units`` run at each replay (their input slots hold ``None`` until bound); ``inputs`` says, per
    input position, whether it is a buffer (``False``: a constant, part of the key);
    ``bindings`` lists ``(unit, slot, input)`` places to swap;
    ``written`` holds the ids of every root buffer the plan writes (an input that is one of them
    is copied first); ``passthrough`` lists ``(source, output buffer)`` for outputs no kernel
    computes, the source being ``(input position, (offset, size))`` (a window of an input) or a
    ``Poly`` stored before the call; ``result`` is the output structure every call returns.
    ``const_rows`` lists ``(unit, row, input)`` for each constants row a replay writes with the
    value of a ``Poly.const`` input, and ``fixed_consts`` the constant inputs whose value the
    plan was captured for and cannot change (``ren.capture.constants``).
    ``external`` lists ``(buffer, array, what)`` for every stored value the plan reads that it
    neither writes nor is given (a key, a value the function closes over): a replay checks each
    still holds the array it held at capture, and names ``what`` if not. ``memory`` is the plan's
    arena layout (``ren.engine.memory.MemoryPlan``), which the report draws.

    The plan's buffers belong to the thread that captured it. Another thread replays a copy
    (:meth:`for_this_thread`) with buffers of its own.
    """

    key: tuple[object, ...]  # a PlanKey, or ("loaded", fingerprint) for a loaded plan
    units: list[ExecUnit]
    inputs: list[bool]
    paths: list[str]
    bindings: list[tuple[int, int, int]]
    written: set[int]
    passthrough: list[tuple[tuple[int, tuple[int, int]] | Poly, Buffer]]
    result: Any  # Any: the function's result structure (the JitFunction's return type)
    pruned: int = 0
    memory: MemoryPlan = dataclasses.field(default_factory=MemoryPlan)
    runner: PlanRunner | None = None
    building: bool = False  # a kernel still building (ren.backends.cpu_tiers): no runner yet
    capture_s: float = 0.0
    staging: dict[int, Buffer] = dataclasses.field(default_factory=dict)
    replays: int = 0
    external: list[tuple[Buffer, np.ndarray | None, str]] = dataclasses.field(default_factory=list)
    const_rows: list[tuple[int, int, int]] = dataclasses.field(default_factory=list)
    fixed_consts: dict[int, int] = dataclasses.field(default_factory=dict)
    owned: list[tuple[Buffer, np.ndarray | None]] = dataclasses.field(default_factory=list)
    _local: threading.local = dataclasses.field(default_factory=threading.local, repr=False)
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False)

    def for_this_thread(self) -> CapturedPlan:
        """The plan to replay in the current thread: this one, or this thread's own copy.

        The copy has the same units and kernels, reading the same stored values, but writes a
        new arena, new output buffers and new staging buffers, and returns its own result
        structure; it is made at the thread's first replay and dies with the thread.
        """
        mine = getattr(self._local, "plan", None)
        if mine is None:
            mine = self._local.plan = _copy_for_thread(self)
        return mine

    def refresh_owned(self) -> None:
        """Give back storage to any buffer of the plan's own that was freed since its last call.

        The plan writes its outputs (and arena) in full at every replay, so an output the caller
        freed (``Buffer.deallocate``) is allocated again, and the graph runner, which holds the
        addresses, is made again.
        """
        for buf, array in self.owned:
            if buf._array is not array:
                break
        else:
            return  # nothing was freed: the common case, one identity test per buffer
        stale = {id(buf) for buf, array in self.owned if buf._array is not array}
        for u in self.units:
            for b in u.bufs:
                if b is not None and (id(b.root) in stale) and b.base is not None:
                    b.array = None  # a view of a root allocated again: take the new window
        for buf, _ in self.owned:
            buf.ensure_allocated()
        for u in self.units:
            for b in u.bufs:
                if b is not None:
                    b.ensure_allocated()
        self.owned = _owned(self)
        if self.runner is not None:
            self.runner = _graph_runner(self)

    def check_external(self, fn: Replayer) -> None:
        """Raise ``JitError`` naming a stored value the plan reads that was freed since capture."""
        for buf, array, what in self.external:
            if buf._array is not array:
                name = fn.name
                raise JitError(
                    f"jitted function {name}: the plan reads {what}, whose buffer was freed "
                    "(Buffer.deallocate) since the capture; keep the values a jitted function "
                    f"reads alive, or call {name}.cache_clear() to capture again"
                )

    def seal(self, names: dict[int, str]) -> None:
        """Finish a new plan: what it reads and owns, its graph runner; its thread replays it.

        ``names``: buffer id -> how to name a stored value the plan reads, should it be freed
        (``ren.capture.reads.stored_names`` of the function, or a loaded plan's stored inputs).
        """
        self.external = external_reads(self, names)
        self.owned = _owned(self)
        self._local.plan = self
        self.runner = _graph_runner(self)

    def replay(self, fn: Replayer, polys: list[tuple[str, Poly]]) -> Any:
        """Run the plan on the buffers of ``polys``, in this thread's copy; returns its result.

        An input the plan writes (an output fed back, ``x = step(x, y)``) is read through a copy.

        Raises:
            JitError: a stored value the plan reads was freed since the capture (named).
        """
        self.check_external(fn)
        plan = self.for_this_thread()
        plan.refresh_owned()
        new: list[Buffer | None] = []
        for i, (_, p) in enumerate(polys):
            if not plan.inputs[i]:
                new.append(None)
                continue
            buf = storage_of(p)[0]  # allocated: __call__ checked
            if id(buf) in plan.written:  # an output fed back: read a copy, not the live buffer
                stage = plan.staging.get(i)
                if stage is None:
                    stage = plan.staging[i] = Buffer(buf.device, buf.dtype, buf.size)
                    stage.ensure_allocated()
                np.copyto(stage.need_array(), buf.need_array())
                buf = stage
            new.append(buf)
        if plan.const_rows:
            write_constants(plan.units, plan.const_rows, polys)
        if plan.runner is None and plan.building:  # kernels built in the background since?
            plan.building = _building(plan)
            if not plan.building:
                plan.runner = _graph_runner(plan)
        try:
            validate = settings.VALIDATE.get()
            if plan.runner is not None and not validate:
                plan.runner.run(new)
            else:
                _run_units(plan, new, validate)
            for src, dst in plan.passthrough:
                if isinstance(src, Poly):
                    words = src._words().reshape(-1)
                else:
                    (k, (offset, size)) = src
                    words = _bound(new, k).need_array()[offset : offset + size]
                np.copyto(dst.need_array(), words)
        finally:
            new.clear()  # bound inputs are not kept
        with self._lock:
            self.replays += 1
        return plan.result

    @functools.cached_property
    def slots_by_unit(self) -> dict[int, list[tuple[int, int]]]:
        """``bindings`` grouped by unit: unit index -> ``[(slot, input position), ...]``."""
        by_unit: dict[int, list[tuple[int, int]]] = {}
        for i, j, k in self.bindings:
            by_unit.setdefault(i, []).append((j, k))
        return by_unit

    @property
    def runner_kind(self) -> str:
        """``"graph"`` when a backend graph runner replays the plan, else ``"units"``."""
        return "graph" if self.runner is not None else "units"

    def __repr__(self) -> str:
        return (
            f"<CapturedPlan {len(self.units)} units ({self.pruned} pruned), "
            f"{sum(self.inputs)} inputs, runner={self.runner_kind}>"
        )


def replan(units: list[ExecUnit], keep: set[int]) -> tuple[list[ExecUnit], MemoryPlan]:
    """Place every temporary the units write (not in ``keep``) in one arena per device.

    Each temporary is placed by its lifetime over the whole list, by the planner realizations use
    (``ren.engine.memory.plan_memory``).

    Returns:
        The units bound to the new views, and the memory plan (kept on the ``CapturedPlan``).
    """
    out, memory = plan_memory(units, temporaries=captured_temporaries(units, keep), bind=rebound)
    for u in out:
        for b in u.bufs:
            b.ensure_allocated()
    return out, memory


def _copy_for_thread(plan: CapturedPlan) -> CapturedPlan:
    """``plan`` with new buffers for everything it writes: a replay of its own for a thread.

    Every root buffer a unit writes (the arena, the outputs) and every passthrough output gets a
    new buffer of the same size; arena views are made again at the same offsets. Inputs, stored
    values and pruned results are shared (the plan only reads them).
    """
    roots: dict[int, Buffer] = {}
    for u in plan.units:
        root = u.bufs[0].root
        roots.setdefault(id(root), root)
    for _, dst in plan.passthrough:
        roots.setdefault(id(dst), dst)
    for ui in {ui for ui, _, _ in plan.const_rows}:  # rows each replay writes: the thread's own
        const = plan.units[ui].bufs[-1]
        roots.setdefault(id(const), const)
    swap: dict[int, Buffer] = {
        k: Buffer(r.device, r.dtype, r.size).ensure_allocated() for k, r in roots.items()
    }

    def moved(buf: Buffer) -> Buffer:
        new = swap.get(id(buf))
        if new is None and buf.base is not None and id(buf.base) in swap:
            new = swap[id(buf)] = Buffer(
                buf.device, buf.dtype, buf.size, base=swap[id(buf.base)], offset=buf.offset
            ).ensure_allocated()
        return buf if new is None else new

    units = [
        rebound(u, {id(b): moved(b) for b in u.bufs if b is not None and moved(b) is not b})
        for u in plan.units
    ]
    passthrough = [(src, moved(dst)) for src, dst in plan.passthrough]
    outs: list[tuple[str, Poly]] = []
    walk(plan.result, "result", outs, None)
    polys: dict[int, Poly] = {}
    for _, p in outs:
        if id(p) not in polys:
            polys[id(p)] = Poly._wrap(_with_storage(p.node, moved))
    copy_ = dataclasses.replace(
        plan,
        units=units,
        passthrough=passthrough,
        result=rebuild(plan.result, polys),
        written={id(u.bufs[0].root) for u in units} | {id(dst) for _, dst in passthrough},
        staging={},
        runner=None,
        replays=0,
        _local=threading.local(),
        _lock=threading.Lock(),
    )
    copy_.owned = _owned(copy_)
    copy_.runner = _graph_runner(copy_)
    return copy_


def _owned(plan: CapturedPlan) -> list[tuple[Buffer, Any]]:
    """The root buffers the plan writes (outputs, arena, passthrough outputs), with their arrays."""
    roots = {id(u.bufs[0].root): u.bufs[0].root for u in plan.units}
    roots.update({id(dst): dst for _, dst in plan.passthrough})
    return [(r, r._array) for r in roots.values()]


def _with_storage(node: Node, moved: Callable[[Buffer], Buffer]) -> Node:
    """A stored value's node (``AS_RING`` over a buffer or a view of one) on moved buffers."""
    store = node.src[0]
    if store.op is Op.BUFFER:
        new = Node(Op.BUFFER, store.dtype, (), BufferArg(moved(store.arg.buffer)))
    else:  # BUFFER_VIEW of a BUFFER
        base = store.src[0]
        buf = Node(Op.BUFFER, base.dtype, (), BufferArg(moved(base.arg.buffer)))
        new = store.replace(src=(buf,))
    return node.replace(src=(new,))


def run_pruned(
    units: list[ExecUnit], pruned: list[ExecUnit], out_bufs: set[int]
) -> tuple[list[ExecUnit], set[int]]:
    """Run the pruned units once more, into buffers of their own; the units and what to keep.

    Their results must outlive every replay, so the arena temporaries they write get buffers of
    their own (``units`` rebound to those). The kept buffers are the outputs and those.
    """
    own: dict[int, Buffer] = {}
    for u in pruned:
        out = u.bufs[0]
        if out.base is not None:
            own[id(out)] = Buffer(out.device, out.dtype, out.size)
    for u in (rebound(u, own) for u in pruned):
        for b in u.bufs:
            b.ensure_allocated()
        u()
    return [rebound(u, own) for u in units], out_bufs | {id(b) for b in own.values()}


def rebound(u: ExecUnit, swap: Mapping[int, Buffer | None]) -> ExecUnit:
    """``u`` with the buffers whose ``id`` is in ``swap`` replaced (``None``: an input slot).

    The unit's buffers are its kernel's and then, for a kernel with constants, the constants
    argument (swapped too when it is in ``swap``: a thread's own copy of rows a replay writes).
    """
    kernel = rebind(u.kernel, swap)
    extra = tuple(cast(Buffer, swap.get(id(b), b)) for b in u.bufs[len(u.kernel.bufs) :])
    if kernel is u.kernel and extra == u.bufs[len(kernel.bufs) :]:  # buffers: by identity
        return u
    return ExecUnit(u.name, u.device, (*kernel.bufs, *extra), u.fn, kernel)


def _run_units(plan: CapturedPlan, new: list[Buffer | None], validate: bool) -> None:
    """Replay the plan unit by unit, with the new input buffers in their slots."""
    by_unit = plan.slots_by_unit
    debug = debug_level()
    for i, unit in enumerate(plan.units):
        bufs = unit.bufs
        if i in by_unit:
            items = list(bufs)
            for j, k in by_unit[i]:
                items[j] = _bound(new, k)
            bufs = tuple(items)
        start = time.perf_counter()
        unit.fn(bufs)
        if validate and unit.device != "python":
            validate_unit(ExecUnit(unit.name, unit.device, bufs, unit.fn, unit.kernel))
        if debug >= 2:
            ms = (time.perf_counter() - start) * 1e3
            print(f"  replay {unit.name:<33} {ms:8.3f} ms", file=sys.stderr)


def _bound(new: list[Buffer | None], k: int) -> Buffer:
    """The buffer bound to input ``k`` (a binding is always a buffer input, never a constant)."""
    buf = new[k]
    if buf is None:
        raise JitError(f"input {k} of a replay is a constant, and the plan reads it as a buffer")
    return buf


def _building(plan: CapturedPlan) -> bool:
    """Whether a kernel of the plan still runs while its library builds (``Tiered``)."""
    return any(getattr(u.fn, "building", False) for u in plan.units)


def _graph_runner(plan: CapturedPlan) -> PlanRunner | None:
    """The backend's graph runner for the plan, when every unit is on one device that has one.

    While a kernel of the plan is still being built there is none yet; ``plan.building`` then
    says to try again at a later replay.
    """
    plan.building = _building(plan)
    if not settings.JIT_GRAPH.get() or not plan.units or plan.building:
        return None
    devices = {u.device for u in plan.units}
    if len(devices) != 1:
        return None
    make = getattr(backend(devices.pop()), "graph_runner", None)
    return make(plan.units, plan.bindings) if make is not None else None
