"""The report as plain text (``text_report``), and the arenas a trace planned."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ren.engine.memory import DevicePlan
from ren.engine.schedule import ScheduledKernel
from ren.ir.node import toposort
from ren.ir.region import region_name
from ren.viz.memory import plan_text
from ren.viz.report.blocks import (
    DASH,
    focus_set,
    kernel_count,
    kernels_and_names,
    label_map,
    millis,
    outputs,
    plural,
    rules_text,
)
from ren.viz.report.boxes import PRECISION_LABEL, region_table
from ren.viz.report.page import pass_totals
from ren.viz.report.regions import realization_tree
from ren.viz.report.sections import cache_line
from ren.viz.trace import RealizationRecord, Trace


def text_report(
    trace: Trace,
    title: str,
    summary: str = "",
    *,
    labels: dict[int, str] | None = None,
    focus: Iterable[int] | None = None,
    times: bool = True,
    error: str = "",
) -> str:
    """The report as plain text.

    It holds the summary, each realization's passes (times, rules fired), kernels, regions (with
    their precision, labelled as in the HTML report), memory plan (drawn with characters for the
    focused ones) and exec units, the jit calls and the time per pass. Graphs and kernel sources
    are in the HTML report only. The arguments are those of ``build_report``.
    """
    labels = label_map(trace, labels)
    focused = focus_set(trace, focus)

    def ms(s: float | None) -> str:
        return millis(s, times).replace(DASH, "-")

    out = [title, "=" * len(title), ""]
    if summary:
        out += [summary.rstrip(), ""]
    if error:
        out += ["The program raised an error; what was recorded up to it:", error.rstrip(), ""]
    kernels = sum(len(r.kernels) for r in trace.realizations)
    out.append(
        f"{plural(len(trace.realizations), 'realization')}, "
        f"{plural(kernels, 'scheduled kernel')}, {plural(len(trace.jit), 'ren.jit call')}"
    )
    for rec in trace.realizations:
        label = labels.get(rec.index, "")
        out += ["", *_text_realization(rec, label, rec.index in focused, ms, times)]
    out += ["", "--- ren.jit calls ---"]
    if not trace.jit:
        out.append("none")
    for j, c in enumerate(trace.jit):
        ran = ", ".join(str(i) for i in c.realizations) or "-"
        out.append(
            f"  {j}: {c.kind:<7} {c.function}  {c.units} units ({c.pruned} pruned), "
            f"runner {c.runner}, inputs {', '.join(c.inputs)}, {ms(c.seconds)}, realizations {ran}"
        )
        if c.kind == "capture" and c.memory is not None:
            for d in c.memory.devices:
                out.append("     memory plan of the captured plan:")
                out += ["       " + line for line in plan_text(d).rstrip("\n").split("\n")]
    out += ["", "--- time per pass ---"]
    totals = pass_totals(trace)
    for name, t in totals.items():
        out.append(
            f"  {name:<20} {int(t['runs']):4d} runs {ms(t['seconds']):>12}  "
            f"rules fired {int(t['rules']):5d}  nodes created {int(t['created']):5d}"
        )
    if totals:
        out.append(f"  {'total':<20} {'':>9} {ms(sum(t['seconds'] for t in totals.values())):>12}")
    if not trace.realizations:
        out.append("  no pass ran")
    return "\n".join(out) + "\n"


def _text_realization(
    rec: RealizationRecord,
    label: str,
    focused: bool,
    ms: Callable[[float | None], str],
    times: bool,
) -> list[str]:
    """One realization for ``text_report``: in full when focused, else a few summary lines."""
    head = f"realization {rec.index}" + (f": {label}" if label else "")
    out = [
        f"--- {head} ---" + ("  [focus]" if focused else ""),
        f"{outputs(rec)}, {kernel_count(rec)}, "
        f"lazy graph of {plural(len(toposort(rec.input)), 'node')}, {ms(rec.seconds)}",
    ]
    if times:  # like times, what the cache did depends on what ran before in the process
        out.append(cache_line(rec))
    if not focused:
        rules = sum(len(p.rules) for p in rec.passes)
        created = sum(len(p.created) for p in rec.passes)
        out.append(
            f"passes: {len(rec.passes)}, {ms(sum(p.seconds for p in rec.passes))}, "
            f"{plural(rules, 'rule')} fired, {plural(created, 'node')} created"
        )
        out += [f"memory plan: {d.summary()}" for d in rec.plan.devices]
        out.append(
            f"exec units: {len(rec.units)}, {ms(sum(u.seconds or 0.0 for u in rec.units))} "
            "(each pass, kernel and unit: in the HTML report, or for the focused realizations)"
        )
        return out
    out.append("passes:")
    previous = rec.input
    for p in rec.passes:
        change = "no change" if p.graph is previous else f"{len(p.created)} created"
        out.append(
            f"  {p.step:2d} {p.name:<20} {ms(p.seconds):>10}  {change:<12} "
            f"rules: {rules_text(p.rule_counts())}"
        )
        previous = p.graph
    kernels, names = kernels_and_names(rec)
    if kernels:
        scheduled = "" if rec.kernels else "; scheduled only, nothing ran"
        out.append(f"kernels (buffers: slot 0 is written{scheduled}):")
        for k, kernel in enumerate(kernels):
            bufs = ", ".join(names.get(id(b), "?") for b in kernel.bufs)
            where = region_name(getattr(kernel, "region", ()))
            where = f"  [{where}]" if where else ""  # its ren.region, when it has one
            out.append(f"  {k:3d} {kernel.info.name:<28} {kernel.info.kind:<12} {bufs}{where}")
    out += _text_regions(rec, kernels, times)
    for d in rec.plan.devices:
        out.append("memory plan:")
        out += ["  " + line for line in plan_text(d).rstrip("\n").split("\n")]
    if rec.units:
        out.append("exec units:")
        for u in rec.units:
            out.append(f"  {u.index:3d} {u.name:<28} {ms(u.seconds):>10}  {', '.join(u.buffers)}")
    return out


def _text_regions(rec: RealizationRecord, kernels: list[ScheduledKernel], times: bool) -> list[str]:
    """The region table of ``rec`` (as the HTML report's), its precision column labelled."""
    tree = realization_tree(rec, kernels)  # no graph: the table lists no nodes
    if tree is None:
        return []
    rows = region_table(tree, times)
    out = [
        f"regions (instances, kernels, level and scale, precision: {PRECISION_LABEL}, lowest of "
        "the instances; relative to max |v| where the values pass 1):"
    ]
    wide = max(len(path) for path, _ in rows)
    for path, cells in rows:
        n, k, level, bits, warning = (cells[i][0] for i in (0, 1, 5, 6, 7))
        line = f"  {path:<{wide}} {n:>4} {k:>5}  {level:<36} {bits}"
        out.append(line.rstrip() + (f"  out of range: {warning}" if warning != "-" else ""))
    return out


def device_plans(trace: Trace) -> list[tuple[int, DevicePlan]]:
    """``(realization index, device plan)`` for every arena the trace planned, in order."""
    return [(rec.index, d) for rec in trace.realizations for d in rec.plan.devices]
