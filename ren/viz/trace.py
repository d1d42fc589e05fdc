"""``Trace``: a record of everything Ren did while a block of code ran.

``with ren.viz.record() as trace:`` watches every realization and every ``ren.jit`` call in the
block (through ``ren.engine.observe``) and keeps, for each realization:

* the graph handed to the scheduler (the lazy graph);
* the graph after each pass, the nodes the pass created, the rules it fired and its time;
* the scheduled kernels, the memory plan and the exec units in order, with each unit's time;

and for each jit call whether it captured or replayed, the plan's size and its runner. The report
(``ren.viz.report``), ``python -m ren.viz --text`` and the step-through debugger read a ``Trace``;
recording changes nothing in what runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ren.device import Buffer
from ren.engine.memory import MemoryPlan
from ren.engine.observe import observing
from ren.engine.realize import ExecUnit, Realization, backend
from ren.engine.schedule import ScheduledKernel
from ren.errors import RenError
from ren.ir.node import KernelInfo, Node, toposort
from ren.ir.op import DType, Op
from ren.ir.region import instances_of, keeping
from ren.ir.rewrite import Rewrite
from ren.passes import ScheduleContext

if TYPE_CHECKING:
    from ren.capture.function import JitFunction
    from ren.capture.plan import CapturedPlan
    from ren.display import Display

__all__ = [
    "LENT",
    "JitRecord",
    "PassRecord",
    "RealizationRecord",
    "Trace",
    "UnitRecord",
    "buffer_names",
    "kernel_source",
    "record",
]

#: What ``ren.viz.shown`` lends a ``Trace``: ``"html"``, ``"before_after"`` and ``"memory"`` (its
#: displays) and ``"page"`` (``record(page=...)``'s report). They draw with the report, which
#: reads traces, so this module cannot import them; importing it loads ``ren.viz``, which fills it.
LENT: dict[str, Callable[..., Any]] = {}


@dataclasses.dataclass
class PassRecord:
    """One scheduler pass of one realization.

    Attributes:
        step: the pass number (from 1; 0 is the input).
        name: the pass module's name.
        graph: the graph after the pass (its ``SINK``).
        created: the nodes the pass added: in ``graph``, not in the pass's input, and not a
            node of the input rebuilt over new sources (see ``rebuilt``).
        rules: the rewrites that fired, in order.
        seconds: how long the pass took.
        rebuilt: nodes of ``graph`` not in the input that stand for an input node the pass
            replaced (same op, dtype, argument and number of sources; a source replaced): the
            users of a rewritten node, made again because nodes are immutable (``split_new``).
    """

    step: int
    name: str
    graph: Node
    created: frozenset[Node]
    rules: list[Rewrite]
    seconds: float
    rebuilt: frozenset[Node] = frozenset()

    def rule_counts(self) -> list[tuple[str, int]]:
        """``(rule name, times fired)``, most fired first (ties by name)."""
        counts = Counter(r.rule for r in self.rules)
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


@dataclasses.dataclass
class UnitRecord:
    """One exec unit as it ran.

    Attributes:
        index: its position in the realization.
        name: the kernel's name (``ntt_n64_L3_u64``).
        device: where it ran.
        kind: the kernel family (``elementwise``, ``ntt``, ``copy``, ...).
        buffers: the names of its buffers, slot order (slot 0 is written), as ``buffer_names``.
        seconds: how long it took (``None`` until it ran).
    """

    index: int
    name: str
    device: str
    kind: str
    buffers: tuple[str, ...]
    seconds: float | None = None


@dataclasses.dataclass
class RealizationRecord:
    """Everything about one realization.

    Attributes:
        index: its position in the trace (from 0).
        input: the ``SINK`` handed to the scheduler: the lazy graph.
        passes: one record per pass, in order.
        kernels: the scheduled kernels in execution order.
        plan: the memory plan.
        units: one record per exec unit, in order.
        names: buffer name per buffer ``id`` (``buffer_names``).
        cache: what the schedule cache did (``ScheduleContext.cache``): a realization the trace
            watches runs every pass, so a hit is ``"hit, scheduled again"``.
    """

    index: int
    input: Node
    passes: list[PassRecord] = dataclasses.field(default_factory=list)
    kernels: list[ScheduledKernel] = dataclasses.field(default_factory=list)
    plan: MemoryPlan = dataclasses.field(default_factory=MemoryPlan)
    units: list[UnitRecord] = dataclasses.field(default_factory=list)
    names: dict[int, str] = dataclasses.field(default_factory=dict)
    cache: str = "off"

    @property
    def seconds(self) -> float:
        """The time of the passes plus the units that ran."""
        return sum(p.seconds for p in self.passes) + sum(u.seconds or 0.0 for u in self.units)


@dataclasses.dataclass
class JitRecord:
    """One call of a jitted function.

    Attributes:
        function: the function's qualified name.
        kind: ``"capture"`` or ``"replay"``.
        units: the exec units the plan replays.
        pruned: units dropped at capture (``prune=True``).
        inputs: the input paths.
        runner: ``"graph"`` (one compiled call per replay) or ``"units"``.
        seconds: the call's time.
        realizations: the realizations the call ran (a capture's; none for a replay).
        memory: the captured plan's memory plan (its arena), when the plan keeps one.
    """

    function: str
    kind: str
    units: int
    pruned: int
    inputs: tuple[str, ...]
    runner: str
    seconds: float
    realizations: tuple[int, ...] = ()
    memory: MemoryPlan | None = None


def buffer_names(kernels: list[ScheduledKernel]) -> dict[int, str]:
    """A stable name per buffer of a schedule, by first appearance: ``b0``, ``b1``, ...

    An arena view is named ``arena[offset:offset+bytes]`` of its device's arena.
    """
    names: dict[int, str] = {}
    for k in kernels:
        for buf in k.bufs:
            if id(buf) in names:
                continue
            names[id(buf)] = _name(buf, len(names))
    return names


def split_new(after: Node, before: Node) -> tuple[frozenset[Node], frozenset[Node]]:
    """``(created, rebuilt)``: the nodes below ``after`` and not below ``before``, split.

    A node is *rebuilt* when it stands for a node of ``before`` that is gone: one with its op,
    dtype, argument and number of sources, whose sources are the node's own but where a source
    of the old node is gone too (replaced). These are the users of a rewritten node, made again
    because nodes are immutable; the others the pass *created*.
    """
    old, new = toposort(before), toposort(after)
    seen, kept = set(old), set(new)
    # gone nodes by (op, dtype, arg, arity), then by which of their sources are kept, then by
    # those kept sources (by identity): a lookup per kept-sources pattern, not per gone twin
    gone: dict[tuple[Op, DType, object, int], dict[tuple[bool, ...], set[tuple[int, ...]]]] = {}
    for n in old:
        if n not in kept:
            mask = tuple(s in kept for s in n.src)
            ids = tuple(id(s) for s, k in zip(n.src, mask, strict=True) if k)
            gone.setdefault((n.op, n.dtype, n.arg, len(n.src)), {}).setdefault(mask, set()).add(ids)
    created: set[Node] = set()
    rebuilt: set[Node] = set()
    for n in new:
        if n in seen:
            continue
        masks = gone.get((n.op, n.dtype, n.arg, len(n.src)), {})
        same = any(
            tuple(id(s) for s, k in zip(n.src, mask, strict=True) if k) in kept_ids
            for mask, kept_ids in masks.items()
        )
        (rebuilt if same and n.src else created).add(n)
    return frozenset(created), frozenset(rebuilt)


def _name(buf: Buffer, i: int) -> str:
    if buf.base is not None:
        return f"arena[{buf.offset}:{buf.offset + buf.nbytes}]"
    return f"b{i}"


def kernel_source(kernel: ScheduledKernel, device: str | None = None) -> str:
    """What the backend of ``device`` (default: the kernel's own) runs for ``kernel``.

    That is C for ``cpu``, CUDA C for ``cuda``, the IR body the NumPy interpreter walks for
    ``python``. Rendered only: nothing is compiled, and no GPU is needed.

    Raises:
        RenError: for a device whose backend (one given to ``register_device``) has no
            ``source(ast, info)``.
    """
    name = device or kernel.info.device
    render: Callable[[Node, KernelInfo], str] | None = getattr(backend(name), "source", None)
    if render is None:
        raise RenError(
            f"the backend of device {name!r} has no source(ast, info), so what it runs for a "
            "kernel cannot be shown"
        )
    return render(kernel.ast, kernel.info)


class Trace:
    """The record of a block of code: realizations and jit calls, in the order they happened.

    Attributes:
        realizations: one ``RealizationRecord`` per realization.
        jit: one ``JitRecord`` per call of a jitted function.
        order: ``("realization", i)`` and ``("jit", j)`` in the order they happened.
        page: the report's file, where ``record(page=...)`` wrote one (else ``None``).
    """

    def __init__(self) -> None:
        self.realizations: list[RealizationRecord] = []
        self.jit: list[JitRecord] = []
        self.order: list[tuple[str, int]] = []
        self.page: Path | None = None
        self._current: RealizationRecord | None = None
        self._units: dict[int, UnitRecord] = {}
        self._jit_start = 0

    def __repr__(self) -> str:
        return f"<Trace {len(self.realizations)} realizations, {len(self.jit)} jit calls>"

    # --- displays (ren.viz.shown) ---------------------------------------------------------------
    def _repr_html_(self) -> str:
        """The notebook's display: totals, the largest realization's regions, the report's link."""
        return str(LENT["html"](self))

    def before_after(self, pass_: str | int, realization: int | None = None) -> Display:
        """A pass (a name of ``passes``, or a step from 1): its rules, its graphs before and after.

        ``realization`` is an index (default: the most kernels); a bad one is a ``ValueError``.
        """
        return LENT["before_after"](self, pass_, realization)

    def memory(self, realization: int | None = None) -> Display:
        """A realization's memory plan (default: the most kernels): numbers, picture and text."""
        return LENT["memory"](self, realization)

    # --- observer methods (ren.engine.observe) -----------------------------------------------
    def on_input(self, sink: Node) -> None:
        """A realization starts."""
        self._start(sink)

    def _start(self, sink: Node) -> RealizationRecord:
        record = self._current = RealizationRecord(len(self.realizations), sink)
        self.realizations.append(record)
        self.order.append(("realization", record.index))
        return record

    def on_pass(
        self, step: int, name: str, sink: Node, previous: Node, ctx: ScheduleContext
    ) -> None:
        """A pass ran."""
        current = self._current
        if current is None:  # a schedule() called directly, outside a realization
            current = self._start(previous)
        created, rebuilt = split_new(sink, previous)
        rules = list(ctx.record.get(name, ()))
        seconds = ctx.timings.get(name, 0.0)
        current.passes.append(PassRecord(step, name, sink, created, rules, seconds, rebuilt))

    def on_prepared(self, realization: Realization) -> None:
        """The kernels, plan and units are known; nothing ran yet."""
        rec = self._current
        if rec is None:
            return
        rec.kernels = list(realization.kernels)
        rec.cache = realization.ctx.cache
        rec.plan = realization.memory_plan or MemoryPlan()
        rec.names = buffer_names(rec.kernels)
        self._units = {}
        for i, unit in enumerate(realization.units):
            record = UnitRecord(
                i,
                unit.name,
                unit.device,
                unit.kernel.info.kind,
                tuple(rec.names.get(id(b), "?") for b in unit.bufs),
            )
            rec.units.append(record)
            self._units[id(unit)] = record
        self._current = None

    def on_unit(self, unit: ExecUnit, seconds: float) -> None:
        """A unit ran."""
        record = self._units.get(id(unit))
        if record is not None:
            record.seconds = seconds

    def on_jit_start(self, fn: JitFunction[..., object]) -> None:
        """A jitted function starts a capture: the realizations from here on are its own."""
        del fn
        self._jit_start = len(self.realizations)

    def on_jit_capture(
        self, fn: JitFunction[..., object], plan: CapturedPlan, seconds: float
    ) -> None:
        """A jitted function captured a plan."""
        self._jit(fn, plan, seconds, "capture")

    def on_jit_replay(
        self, fn: JitFunction[..., object], plan: CapturedPlan, seconds: float
    ) -> None:
        """A jitted function replayed a plan.

        The replay wrote this call's words into the plan's buffers, where the values its
        capture's regions kept live: those are noted ``replayed``, and the observing pass
        measures them no more (``ren.viz.precision``).
        """
        for unit in plan.units:
            kernel = getattr(unit, "kernel", None)  # an exec unit (a stand-in may have none)
            for instance in instances_of(getattr(kernel, "region", ())):
                if "output" in instance.notes:
                    instance.notes["replayed"] = True
        self._jit(fn, plan, seconds, "replay")

    def _jit(
        self, fn: JitFunction[..., object], plan: CapturedPlan, seconds: float, kind: str
    ) -> None:
        start = self._jit_start
        ran = tuple(range(start, len(self.realizations))) if kind == "capture" else ()
        runner = "graph" if plan.runner is not None else "units"
        self.jit.append(
            JitRecord(
                fn.name,
                kind,
                len(plan.units),
                plan.pruned,
                tuple(plan.paths),
                runner,
                seconds,
                ran,
                getattr(plan, "memory", None),
            )
        )
        self.order.append(("jit", len(self.jit) - 1))

    # --- reading -------------------------------------------------------------------------------
    @property
    def passes(self) -> list[str]:
        """The pass names, in order (those of the first realization)."""
        return [p.name for p in self.realizations[0].passes] if self.realizations else []


@contextlib.contextmanager
def record(page: str | os.PathLike[str] | None = None) -> Iterator[Trace]:
    """Record every realization and jit call in the block into a new ``Trace``; yields it.

    Regions entered in the block keep their outputs (``ren.ir.region.keeping``), and CKKS
    ciphertexts made where the secret key is held carry plaintext shadows, so that
    ``ren.viz.precision.measure_precision(trace)`` can note each region's precision afterwards.
    Given ``page``, a file, the whole report (``ren.viz.build_report``) is written there when the
    block ends without an error, and ``trace.page`` is its path (as given).
    """
    trace = Trace()
    with observing(trace), keeping():
        yield trace
    if page is not None:
        trace.page = LENT["page"](trace, Path(page))
