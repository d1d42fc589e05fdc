"""The ``Stepper``: one realization, prepared and recorded but not run, to step through."""

from __future__ import annotations

from collections import Counter
from typing import cast

from ren.device import canonical_device
from ren.engine.observe import observing
from ren.engine.realize import ExecUnit, Realization
from ren.engine.schedule import PASSES
from ren.ir.node import Node, RingArg
from ren.ir.region import region_name
from ren.ir.rewrite import Rewrite
from ren.poly import Poly, prepare_realize
from ren.viz.debug.arena import ArenaViews
from ren.viz.debug.buffers import BufferViews
from ren.viz.debug.regions import RegionViews
from ren.viz.debug.screens import (
    BufferInfo,
    Watchable,
    count_text,
    cut_lines,
    describe_node,
    ms_text,
    short_node,
)
from ren.viz.debug.watching import Watch
from ren.viz.trace import RealizationRecord, kernel_source, record

#: Lines of a graph shown by ``step`` / ``show_pass`` before it is cut (``graph N`` shows all).
GRAPH_LINES = 40

#: Why each pass sits where it does, by pass name (from ``ren.engine.schedule.PASSES``).
_WHY = {module.__name__.rsplit(".", 1)[-1]: why for module, why in PASSES}


class Stepper(BufferViews, ArenaViews, RegionViews):
    """One realization, prepared and recorded but not run, to be stepped through.

    ``Stepper(*values)`` records (``ren.viz.record``) and prepares the realization of ``values``
    with ``ren.poly.prepare_realize``: scheduling, memory planning and compilation happen exactly
    as in ``realize``, and no unit runs. Two cursors move forward: the *pass cursor* (0 is the
    input graph, ``1 .. 12`` the passes) and the *unit cursor* (how many exec units ran). Every
    method returns a screen (a string); ``finish()`` runs the rest and repoints every ``Poly``
    exactly as ``realize`` does.

    Args:
        values: ``Poly`` values (realized together, as ``ren.realize`` does) or
            ``ckks.Ciphertext`` values (their parts; each is watched for the ``slots`` view with
            its own context).

    Raises:
        TypeError: for a value that is neither.
        ValueError: when every value is realized already (nothing to step through).
    """

    def __init__(self, *values: object) -> None:
        polys, cts = _split_values(values)
        with record() as trace:
            realization = prepare_realize(*polys)
        if realization is None:
            raise ValueError("nothing to realize: every value given is realized already")
        self._setup(realization, trace.realizations[-1])
        for ct in cts:  # watched with its own context, unless ``watch`` registered it
            if not any(w.ciphertext() is ct for w in self._all_watches()):
                self.watch(ct)

    @classmethod
    def attach(cls, realization: Realization, rec: RealizationRecord, title: str = "") -> Stepper:
        """A stepper over a realization prepared elsewhere (an observer's ``on_run``).

        ``rec`` is the record a ``Trace`` kept of its passes; ``title`` heads the banner.
        """
        self = object.__new__(cls)
        self._setup(realization, rec, title)
        return self

    def _setup(self, realization: Realization, rec: RealizationRecord, title: str = "") -> None:
        self.realization = realization
        self.record = rec
        self.title = title
        self.cursor = 0
        self._watches: list[Watch] = []
        self._ring_of_input: dict[int, RingArg] | None = None
        self._unit_index = {id(u): realization.ran + j for j, u in enumerate(realization.units)}
        self._infos: dict[int, BufferInfo] = {}
        self._order: list[BufferInfo] = []
        self._graph, self._apart, self._made_at = None, {}, {}
        for i, k in enumerate(realization.kernels):
            for slot, buf in enumerate(k.bufs):
                info = self._infos.get(id(buf))
                if info is None:
                    info = BufferInfo(buf, rec.names.get(id(buf), f"#{buf.id}"), i, i)
                    self._infos[id(buf)] = info
                    self._order.append(info)
                info.last = i
                if slot == 0 and info.writer is None:
                    info.writer, info.ring, info.domain = i, k.info.ring, k.info.domain

    def __repr__(self) -> str:
        state = "done" if self.done else f"{self.ran} of {len(self._kernels)} units ran"
        return f"<Stepper pass {self.cursor}/{len(self.record.passes)}, {state}>"

    def banner(self) -> str:
        """What is realized: the outputs' rings, domains and devices, the kernels, the arena."""
        outs = Counter(describe_node(n) for n in self.realization.sink.src)
        kinds = Counter(k.info.kind for k in self._kernels)
        lines = [self.title] if self.title else []
        parts = [f"{n} x {d}" if n > 1 else d for d, n in outs.items()]
        count = sum(outs.values())
        lines.append(f"realizing {count} value{'s' if count != 1 else ''}: {', '.join(parts)}")
        arenas = ", ".join(
            f"arena {d.arena_bytes} B on {d.device}" for d in self.realization.memory_plan.devices
        )
        lines.append(
            f"{len(self.record.passes)} passes, {len(self._kernels)} kernels "
            f"({count_text(kinds)})" + (f", {arenas}" if arenas else "")
        )
        watched = [w for w in self._all_watches() if self._relevant(w)]
        if watched:
            lines.append(f"watched ciphertexts: {', '.join(w.label for w in watched)} ('slots')")
        return "\n".join(lines)

    # --- passes ----------------------------------------------------------------------------------
    def _graph_of(self, i: int) -> Node:
        passes = self.record.passes
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i <= len(passes):
            raise ValueError(
                f"no pass {i!r}: this realization has passes 0 (the input) to {len(passes)}"
            )
        return self.record.input if i == 0 else passes[i - 1].graph

    def passes(self) -> str:
        """Every pass: rewrites fired, nodes created, time; ``->`` marks the pass cursor."""
        lines = [f"   {'#':>2}  {'pass':<20} {'rewrites':>8} {'created':>8} {'time':>11}"]
        mark = "->" if self.cursor == 0 else "  "
        nodes = len(self.record.input.toposort())
        lines.append(f"{mark} {0:2d}  {'input':<20} {'':>8} {'':>8} {'':>11}  ({nodes} nodes)")
        for p in self.record.passes:
            mark = "->" if self.cursor == p.step else "  "
            lines.append(
                f"{mark} {p.step:2d}  {p.name:<20} {len(p.rules):8d} {len(p.created):8d} "
                f"{ms_text(p.seconds)}"
            )
        total = sum(p.seconds for p in self.record.passes)
        lines.append(f"    {len(self.record.passes)} passes in {total * 1e3:.3f} ms")
        return "\n".join(lines)

    def next_pass(self) -> str:
        """Move the pass cursor to the next pass and show it (what changed)."""
        if self.cursor >= len(self.record.passes):
            return (
                f"no pass after pass {self.cursor}: the schedule is final ('kernels' lists the "
                "kernels, 'run' runs them)"
            )
        self.cursor += 1
        return self.show_pass(self.cursor)

    def step(self) -> str:
        """The next pass while passes remain (``next_pass``), then the next exec unit (``run``)."""
        if self.cursor < len(self.record.passes):
            return self.next_pass()
        if not self.done:
            return self.run(1)
        return "the realization is done: nothing left to step"

    def show_pass(self, i: int, max_lines: int | None = GRAPH_LINES) -> str:
        """Pass ``i`` (0: the input graph): rules fired, nodes created, and the graph after it.

        The rules come with counts and an example each, the nodes are counted by op, and the
        graph is cut to ``max_lines`` lines.
        """
        graph = self._graph_of(i)
        more = f"'graph {i}' shows all"
        if i == 0:
            nodes = len(graph.toposort())
            return "\n".join(
                [
                    f"pass 0: the input graph, as handed to the scheduler ({nodes} nodes)",
                    cut_lines(self._graph_text(graph), max_lines, more),
                ]
            )
        p = self.record.passes[i - 1]
        counts = p.rule_counts()
        lines = [
            f"pass {p.step}/{len(self.record.passes)} {p.name}: {len(p.rules)} rewrites by "
            f"{len(counts)} rules, {len(p.created)} nodes created, {p.seconds * 1e3:.3f} ms",
        ]
        if p.name in _WHY:
            lines.append(f"  (here because: {_WHY[p.name]})")
        if counts:
            lines.append("rules fired:")
            width = max(len(name) for name, _ in counts)
            first: dict[str, Rewrite] = {}
            for r in p.rules:
                first.setdefault(r.rule, r)
            for name, n in counts:
                example = first[name]
                lines.append(
                    f"  {name:<{width}}  x{n:<4} e.g. {short_node(example.before)} -> "
                    f"{short_node(example.after)}"
                )
        elif graph is self._graph_of(i - 1):
            lines.append("rules fired: none; the graph is unchanged")
        else:
            lines.append("rules fired: none recorded (the pass rebuilt the graph directly)")
        created = Counter(n.op.name for n in p.created)
        if created:
            lines.append(f"nodes created: {count_text(created)}")
        text = self._graph_text(graph)
        lines.append(f"graph after the pass ({len(text.splitlines())} lines):")
        lines.append(cut_lines(text, max_lines, more))
        return "\n".join(lines)

    def graph(self, i: int | None = None) -> str:
        """The whole graph after pass ``i`` (default: the pass cursor; 0: the input).

        Buffers have the names ``buffer`` takes (``b1``, ``arena[0:128]``), not ``str(node)``'s.
        """
        return self._graph_text(self._graph_of(self.cursor if i is None else i))

    # --- kernels ---------------------------------------------------------------------------------
    def kernels(self) -> str:
        """The kernels in execution order: kind, device, buffers, and whether each ran.

        Slot 0 is the buffer written; ``->`` marks the next unit to run.
        """
        kernels = self._kernels
        width = max([len(k.info.name) for k in kernels] + [6])
        lines = [
            f"{len(kernels)} kernels, {self.ran} ran"
            + ("" if self.done else f", next: {self.ran}"),
            f"   {'#':>3}  ran  {'kernel':<{width}}  {'kind':<12}  {'device':<6}  writes <- reads",
        ]
        for i, k in enumerate(kernels):
            mark = "->" if i == self.ran and not self.done else "  "
            names = [self._infos[id(b)].name for b in k.bufs]
            bufs = names[0] + (" <- " + ", ".join(names[1:]) if len(names) > 1 else "")
            ran = "yes" if i < self.ran else "no "
            where = region_name(getattr(k, "region", ()))
            lines.append(
                f"{mark} {i:3d}  {ran}  {k.info.name:<{width}}  {k.info.kind:<12}  "
                f"{k.info.device:<6}  {bufs}" + (f"  [{where}]" if where else "")
            )
        return "\n".join(lines)

    def source(self, i: int, device: str | None = None) -> str:
        """What ``device``'s backend (default: the kernel's own) runs for kernel ``i``.

        That is C, CUDA C, or the IR body the python backend interprets
        (``ren.viz.kernel_source``; rendered only).
        """
        kernel = self._kernel(i)
        return kernel_source(kernel, None if device is None else canonical_device(device))

    # --- running ---------------------------------------------------------------------------------
    def on_unit(self, unit: ExecUnit, seconds: float) -> None:
        """Observer method: keep the time of each unit this stepper runs."""
        i = self._unit_index.get(id(unit))
        if i is not None and i < len(self.record.units):
            self.record.units[i].seconds = seconds

    def run(self, count: int | None = 1) -> str:
        """Run the next ``count`` exec units (``None``: all that are left); show what ran.

        The units run through ``Realization.run``; after the last one the polys are repointed.
        """
        if count is not None and (not isinstance(count, int) or count < 1):
            raise ValueError(f"the number of units to run must be at least 1, got {count!r}")
        if self.done:
            return "every unit ran already: the realization is done"
        start = self.ran
        with observing(self):
            self.realization.run(count)
        lines = []
        for i in range(start, self.ran):
            k = self._kernels[i]
            unit = self.record.units[i] if i < len(self.record.units) else None
            seconds = unit.seconds if unit is not None else None
            lines.append(
                f"ran {i:3d}  {k.info.name:<28} {k.info.kind:<12} {k.info.device:<6} "
                f"{ms_text(seconds)}  wrote {self._infos[id(k.bufs[0])].name}"
            )
        total = len(self._kernels)
        if self.done:
            lines.append(
                f"{self.ran} of {total} units ran: done; the outputs are stored and every Poly "
                "that used them reads them"
            )
        else:
            nxt = self._kernels[self.ran].info.name
            lines.append(f"{self.ran} of {total} units ran; next: {self.ran} {nxt}")
        return "\n".join(lines)

    def finish(self) -> str:
        """Run the rest, so every value is realized and repointed exactly as ``realize`` does."""
        if self.done:
            return "the realization is done"
        return self.run(None)


def _split_values(values: tuple[object, ...]) -> tuple[list[Poly], list[Watchable]]:
    polys: list[Poly] = []
    cts: list[Watchable] = []
    for v in values:
        if isinstance(v, Poly):
            polys.append(v)
            continue
        if hasattr(v, "__ren_watch__") and hasattr(v, "parts"):
            ct = cast(Watchable, v)  # checked just above
            cts.append(ct)
            polys.extend(ct.parts)
        else:
            raise TypeError(f"the debugger steps through Poly values or ciphertexts, got {v!r}")
    return polys, cts
