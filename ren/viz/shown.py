"""What a ``Trace`` shows in a notebook: its regions, a pass's graphs before and after, its memory.

A ``Trace`` (``ren.viz.record()``) is the last line of a cell, or one of its methods is:

* ``trace`` (``trace_html``): the totals (realizations, kernels, jit calls), the region boxes of
  the realization with the most kernels, the report's own nested boxes
  (``ren.viz.report.boxes.tree_html``), the others one line each, and a link to the whole report
  where ``record(page=...)`` wrote one;
* ``trace.before_after(pass_)`` (``before_after``): one pass, the rules it fired and the graph
  before and after it, side by side, the nodes it created with the report's thick red border (a
  graph past ``GRAPH_NODE_LIMIT`` nodes collapsed to its regions, as the report draws it);
* ``trace.memory()`` (``memory``): a realization's memory plan, its numbers and its compact
  picture (``plan_svg(..., compact=True)``).

Each is plain HTML in one ``<div class="ren-shown">``, styled by one ``<style>`` block whose rules
are the report's own (``ren.viz.report.blocks.CSS``), each scoped under that class so that they
style nothing else of the notebook; graphs and pictures are inline SVG without a namespace URL.
Nothing is fetched, nothing runs, and each display is at most ``ren.display.LIMIT`` bytes.

``ren.viz.trace`` cannot import this module (the report reads traces): the ``Trace`` methods
call what this module lends them in ``ren.viz.trace.LENT``, which it fills as it is imported
(``ren.viz`` imports it).
"""

from __future__ import annotations

import dataclasses
import operator
import re
import urllib.parse
from pathlib import Path

from ren import display
from ren.display import Display, esc
from ren.ir.dot import to_dot
from ren.ir.node import Node, toposort
from ren.viz.memory import plan_svg, plan_text
from ren.viz.report.blocks import (
    CSS,
    GRAPH_NODE_LIMIT,
    Graphs,
    created_text,
    focus_set,
    inline_svg,
    kernel_count,
    kernels_and_names,
    outputs,
    plural,
    rules_text,
)
from ren.viz.report.boxes import collapsed_html, tree_html
from ren.viz.report.page import build_report
from ren.viz.report.regions import Box, realization_tree
from ren.viz.trace import LENT, PassRecord, RealizationRecord, Trace

__all__ = ["SCOPE", "before_after", "memory", "scoped_css", "trace_html", "write_page"]

#: The class of every display's outer ``<div>``; the display's style rules apply inside it only.
SCOPE = "ren-shown"
#: Realizations and jit calls the trace's display lists one line each; past it, how many more.
LINES = 24

#: Two graphs side by side, or one above the other where the output is narrow.
_ROW = "display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start"
_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
#: Rules of the report's page that style the page itself, not its parts.
_PAGE_ONLY = ("body", "h1", "h2")


def scoped_css(css: str = CSS, scope: str = SCOPE) -> str:
    """The rules of ``css`` with each selector put under ``.scope``, whitespace squeezed.

    Rules of the page itself (``body``, ``h1``, ``h2``) are left out: a display is a part.
    """
    out = []
    for selectors, body in _RULE.findall(css):
        names = [s.strip() for s in selectors.split(",")]
        kept = [f".{scope} {s}" for s in names if s.split()[0] not in _PAGE_ONLY]
        if kept:
            out.append(f"{','.join(kept)}{{{' '.join(body.split())}}}")
    return "\n".join(out)


def _shown(title: str, *parts: str) -> str:
    """A display: ``display.box`` around the scoped style and ``parts``, at most ``LIMIT`` bytes."""
    return display.box(
        title, f'<div class="{SCOPE}"><style>{scoped_css()}</style>{"".join(parts)}</div>'
    )


def _svg(svg: str, prefix: str) -> str:
    return f'<div style="max-width:100%;overflow-x:auto">{inline_svg(svg, prefix)}</div>'


# --------------------------------------------------------------------------------------------
# choosing what to show


def pick_realization(trace: Trace, realization: int | None) -> RealizationRecord:
    """The realization ``realization`` names: an index, or ``None`` for the most kernels.

    Raises:
        ValueError: for a trace with no realization, or an index out of range.
        TypeError: for an index that is not an ``int``.
    """
    count = len(trace.realizations)
    if count == 0:
        raise ValueError(
            "the trace recorded no realization: record a block that realizes a value "
            "(with ren.viz.record() as trace: ... .realize())"
        )
    if realization is None:
        (best,) = focus_set(trace, None)
        return trace.realizations[best]
    if isinstance(realization, bool) or not hasattr(realization, "__index__"):
        raise TypeError(f"realization={realization!r} must be an int index or None")
    realization = operator.index(realization)
    if not 0 <= realization < count:
        raise ValueError(
            f"realization={realization} is not an index of the trace's "
            f"{plural(count, 'realization')}: give 0 to {count - 1}, or None for the one with "
            "the most kernels"
        )
    return trace.realizations[realization]


def pick_pass(rec: RealizationRecord, pass_: str | int) -> tuple[PassRecord, Node]:
    """``(the pass, the graph before it)``: ``pass_`` a pass name or a step number (from 1).

    The graph before step 1 is the realization's input, the lazy graph.

    Raises:
        ValueError: for a name or step the realization has no pass of, or no pass at all.
        TypeError: for a ``pass_`` neither a ``str`` nor an ``int``.
    """
    names = [p.name for p in rec.passes]
    if not names:
        raise ValueError(f"realization {rec.index} ran no pass, so there is no pass to show")
    if isinstance(pass_, bool) or not isinstance(pass_, str | int):
        raise TypeError(f"pass_={pass_!r} must be a pass name (str) or a step number (int)")
    if isinstance(pass_, str):
        k = names.index(pass_) if pass_ in names else -1
    else:
        k = next((j for j, p in enumerate(rec.passes) if p.step == pass_), -1)
    if k < 0:
        raise ValueError(
            f"pass_={pass_!r} is no pass of realization {rec.index}: give a pass name "
            f"({', '.join(names)}) or a step number from 1 to {len(names)}"
        )
    return rec.passes[k], (rec.passes[k - 1].graph if k else rec.input)


# --------------------------------------------------------------------------------------------
# the trace


def trace_html(trace: Trace) -> str:
    """The trace's display (``Trace._repr_html_``); see the module docstring."""
    kernels = sum(len(kernels_and_names(r)[0]) for r in trace.realizations)
    totals = ", ".join(
        [
            plural(len(trace.realizations), "realization"),
            plural(kernels, "scheduled kernel"),
            plural(len(trace.jit), "ren.jit call"),
        ]
    )
    parts = [f"<p>{esc(totals)}.</p>"]
    best = pick_realization(trace, None) if trace.realizations else None
    others = [r for r in trace.realizations if r is not best]
    if others:
        lines = [f"realization {r.index}: {outputs(r)}, {kernel_count(r)}" for r in others]
        parts.append(_lines("The other realizations", lines))
    if trace.jit:
        calls = [f"{c.kind} of {c.function}: {plural(c.units, 'unit')}" for c in trace.jit]
        parts.append(_lines("The ren.jit calls", calls))
    if trace.page is not None:
        href = esc(urllib.parse.quote(trace.page.as_posix()))
        parts.append(f'<p>The whole report: <a href="{href}">{esc(trace.page.as_posix())}</a></p>')
    else:
        parts.append(
            '<p class="muted"><code>with ren.viz.record("name.html") as trace:</code> writes the '
            "whole report (every pass, graph, kernel source and exec unit) beside the notebook."
            "</p>"
        )
    if best is not None:
        room = display.LIMIT - len(_shown("ren.viz trace", *parts).encode()) - 1_000
        parts.insert(1, _regions(best, room))
    return _shown("ren.viz trace", *parts)


def _regions(rec: RealizationRecord, budget: int) -> str:
    """The realization's region boxes, as the report draws them, in at most ``budget`` bytes.

    Boxes list their kernels by number and name; where that takes more than ``budget``, by number
    only, and then the deepest boxes are left out (their kernels listed in the box above) until
    it fits, with a note saying so. A realization with no region is one line.
    """
    kernels = kernels_and_names(rec)[0]
    head = f"<p><b>Realization {rec.index}</b>: {esc(outputs(rec))}, {esc(kernel_count(rec))}"
    tree = realization_tree(rec, kernels)
    if tree is None:
        return head + " (no kernel is in a region: <code>ren.region</code> names them).</p>"
    names = [k.info.name for k in kernels]
    intro = head + "; its kernels by region (click a box to open it):</p>"
    drawn = tree_html(
        tree, f"t{rec.index}", True, lambda k: f"{k}\u00a0<code>{esc(names[k])}</code>"
    )
    if len(drawn.encode()) <= budget:
        return intro + drawn
    depth = max(_depths(tree).values())
    for cut in range(depth, 0, -1):
        drawn = tree_html(_cut(tree, cut), f"t{rec.index}", True, str)
        if len(drawn.encode()) <= budget or cut == 1:
            break
    what = "kernel names" + ("" if cut == depth else f" and the regions below depth {cut}")
    note = f'<p class="muted">({what} left out to keep this display small; the report has them)</p>'
    return intro + drawn + note


def _depths(root: Box) -> dict[int, int]:
    """Each box's depth below ``root`` (``root`` is 0), by ``id``."""
    depths = {id(root): 0}
    for box in root.walk():
        for child in box.children:
            depths[id(child)] = depths[id(box)] + 1
    return depths


def _cut(root: Box, depth: int) -> Box:
    """A copy of the tree ``root`` down to ``depth``: a box there lists its kernels, not boxes."""
    top = dataclasses.replace(root, children=[])
    stack = [(root, top, 0)]
    while stack:
        old, new, d = stack.pop()
        if d < depth:
            for child in old.children:
                copy = dataclasses.replace(child, children=[])
                new.children.append(copy)
                stack.append((child, copy, d + 1))
    return top


def _lines(title: str, lines: list[str]) -> str:
    """A closed list of ``lines`` (the first ``LINES``, then how many more)."""
    shown = [f"<li>{esc(line)}</li>" for line in lines[:LINES]]
    if len(lines) > LINES:
        shown.append(f"<li>... and {len(lines) - LINES} more</li>")
    summary = f"<summary>{esc(title)} ({len(lines)})</summary>"
    return f"<details>{summary}<ul>{''.join(shown)}</ul></details>"


def write_page(trace: Trace, path: Path) -> Path:
    """Write the whole report of ``trace`` (``build_report``) to the file ``path``; returns it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(build_report(trace, f"Ren trace: {path.name}"), encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------
# a pass, before and after


def before_after(trace: Trace, pass_: str | int, realization: int | None = None) -> Display:
    """A pass's graphs before and after (``Trace.before_after``); see the module docstring.

    Args:
        trace: the trace.
        pass_: a pass name (``"fuse"``, as ``trace.passes`` lists them) or a step number, from 1.
        realization: an index into ``trace.realizations`` (default: the most kernels).

    Raises:
        ValueError: for an empty trace, a realization index out of range or an unknown pass.
    """
    rec = pick_realization(trace, realization)
    p, before = pick_pass(rec, pass_)
    counts = (len(toposort(before)), len(toposort(p.graph)))
    same = p.graph is before
    change = "no change" if same else f"{len(p.created)} created, {len(p.rebuilt)} rebuilt"
    head = f"pass {p.step} of {len(rec.passes)}: {p.name} (realization {rec.index})"
    lines = [
        head,
        f"rules fired: {rules_text(p.rule_counts())}",
        f"nodes: {counts[0]} before, {counts[1]} after ({change})",
    ]
    if p.created:
        lines.append(f"created: {created_text(p.created)}")
    drawer = Graphs("dot", GRAPH_NODE_LIMIT, True)
    shown = [("before", before, frozenset[Node]()), ("after", p.graph, p.created)]
    sizes = list(counts)
    if same:
        shown, sizes = [("the graph (the same before and after)", before, frozenset())], sizes[:1]
    dots = [to_dot(g, created=c) for _, g, c in shown]
    for text, nodes in zip(dots, sizes, strict=True):
        if nodes <= GRAPH_NODE_LIMIT:
            drawer.want(text)
    drawer.draw()  # both at once
    cells = []
    for (label, graph, created), text, nodes in zip(shown, dots, sizes, strict=True):
        if nodes <= GRAPH_NODE_LIMIT:
            picture = drawer.html(text, nodes, f"ba{rec.index}-{p.step}-{label[:5]}")
        else:  # as the report draws it
            picture = collapsed_html(graph, GRAPH_NODE_LIMIT, created)
        mark = ", created: thick red border" if created else ""
        cells.append(
            '<div style="flex:1 1 22em;min-width:0">'
            f"<b>{esc(label)}</b> ({plural(nodes, 'node')}{mark}){picture}</div>"
        )
    body = "".join(f"<p>{esc(line)}</p>" for line in lines[1:])
    row = f'<div style="{_ROW}">{"".join(cells)}</div>'
    return Display(_shown(head, body, row), "\n".join(lines))


# --------------------------------------------------------------------------------------------
# a memory plan


def memory(trace: Trace, realization: int | None = None) -> Display:
    """A realization's memory plan (``Trace.memory``): its numbers and its compact picture.

    Text: ``plan_text`` of each device's arena.

    Raises:
        ValueError: for an empty trace or a realization index out of range.
    """
    rec = pick_realization(trace, realization)
    title = f"memory plan of realization {rec.index}"
    devices = rec.plan.devices
    if not devices:
        why = (
            "nothing was planned: every buffer of it is an input, an output or kept for another "
            "reason (docs/memory.md)"
        )
        return Display(_shown(title, f"<p>{esc(why)}</p>"), f"{title}: {why}\n")
    parts = [display.arena_table(devices)]
    names = [k.info.name for k in rec.kernels]
    room = display.LIMIT - 20_000  # the table, the style and the frame
    for d in devices:
        picture = plan_svg(d, names, f"{title}: {d.device}", compact=True)
        svg = _svg(picture, f"m{rec.index}-{d.device}")
        if len(svg.encode()) <= min(room, display.LIMIT // 2):
            parts.append(svg)
            room -= len(svg.encode())
        else:
            parts.append(
                f"<p>(the picture of {esc(d.device)} takes {len(svg.encode())} bytes, more than "
                "this display has room for: ren.viz.plan_svg draws it to a file)</p>"
            )
    text = "".join(f"{title}: {d.device}\n{plan_text(d)}" for d in devices)
    return Display(_shown(title, *parts), text)


LENT.update(html=trace_html, before_after=before_after, memory=memory, page=write_page)
