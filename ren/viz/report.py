"""The report of a ``Trace``: one self-contained HTML file, or the same as text for a terminal.

``build_report(trace, title)`` returns the HTML of everything Ren did in a recorded block
(``ren.viz.record()``), in the order it happened:

* a summary: the caller's text (an example's result against its oracle), the totals and a timeline
  of every realization and ``ren.jit`` call;
* for each realization: the lazy graph handed to the scheduler; each pass with its time, the rules
  it fired (with counts), the nodes it created and the graph after it (new nodes with a thick red
  border); the scheduled kernels with their source for each backend (the IR the ``python`` device
  interprets, the C of ``cpu``, the CUDA C of ``cuda``: rendered, not compiled); the memory plan
  (the picture of ``ren.viz.memory`` and its numbers); the exec units in the order they ran, with
  their buffers and times;
* the ``ren.jit`` calls: captures and replays, their units, runner and times;
* the time of each pass, summed over the realizations.

The file needs no network and no JavaScript: graphs and memory plans are inline SVG, and the parts
that can be long are ``<details>`` elements, closed until clicked. Graphs are drawn by Graphviz's
``dot`` (``dot -Tsvg`` of ``ren.ir.dot.to_dot``); without it, or for a graph of more than
``GRAPH_NODE_LIMIT`` nodes, the report shows the DOT text instead and says why. A trace with many
realizations (the key generation and encryptions of a CKKS program) gives each a heading with its
outputs' rings and kernel count, opens the ones in ``focus`` (by default the one with the most
kernels) and draws the graph after every pass only for those (``graphs="all"`` draws them all).

The output is stable: the same program gives the same bytes except for times, and
``times=False`` writes a dash for every time, so two reports can be compared byte for byte.
Buffers are named as in the trace (``b0``, ``arena[0:512]``); no ``id()`` or address is printed.
``text_report`` writes the same content for a terminal (without graphs and sources).
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ren.engine.dump import dot_error, draw_svg
from ren.engine.memory import DevicePlan, MemoryPlan
from ren.engine.schedule import PASSES, ScheduledKernel, kernels_of
from ren.ir.dot import to_dot
from ren.ir.facts import facts
from ren.ir.node import Node, toposort
from ren.viz.memory import buffer_order, plan_text, plans_svg
from ren.viz.trace import RealizationRecord, Trace, buffer_names, kernel_source

__all__ = [
    "BACKENDS",
    "GRAPH_NODE_LIMIT",
    "INSTALL_NOTE",
    "build_report",
    "device_plans",
    "inline_svg",
    "text_report",
    "write_report",
]

#: A graph with more nodes than this is shown as DOT text, not drawn: the picture is too large to
#: read in a page, and ``dot`` can take seconds on it (the 350 nodes after ``indexify`` of the jit
#: example's capture take it about 8 s, all in placing nodes and routing edges).
GRAPH_NODE_LIMIT = 300

#: What the report says when Graphviz's ``dot`` is not on ``PATH``.
INSTALL_NOTE = (
    "graphviz is not installed: apt-get install graphviz (or brew install graphviz), then run again"
)

#: The devices whose source is shown for every kernel, with what that source is.
BACKENDS: tuple[tuple[str, str], ...] = (
    ("python", "the IR body the NumPy backend interprets"),
    ("cpu", "C"),
    ("cuda", "CUDA C"),
)

_DASH = "\u2013"
_LAST_PASS = PASSES[-1][0].__name__.rsplit(".", 1)[
    -1
]  # kernelize: its graph holds the kernels  # what a time reads as with times=False

_CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px;
       padding: 0 1em; color: #1a1a1a; background: #ffffff; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { border-bottom: 2px solid #ccc; padding-bottom: 0.2em; margin-top: 1.6em; }
h3 { display: inline; font-size: 1.1em; }
h4 { margin: 1.2em 0 0.4em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #d0d0d0; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: #f6f8fa; border: 1px solid #e0e0e0; padding: 0.6em; overflow: auto;
      font-size: 0.85em; max-height: 40em; }
pre.summary { max-height: none; white-space: pre-wrap; }
details { margin: 0.3em 0; }
details > summary { cursor: pointer; }
details.realization { border: 1px solid #bbb; border-radius: 4px; padding: 0.4em 0.8em;
                      margin: 0.8em 0; }
details.realization[open] { background: #fcfcff; }
details.pass, details.kernel { border-left: 3px solid #ccd; padding-left: 0.6em; }
.graph { overflow: auto; max-height: 85vh; border: 1px solid #e0e0e0; background: #ffffff;
         margin: 0.4em 0; }
.memory { overflow: auto; margin: 0.4em 0; }
.note { background: #fff8e1; border: 1px solid #f0d48a; padding: 0.4em 0.7em; }
.muted { color: #666666; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
code { font-size: 0.9em; }
"""


# ---------------------------------------------------------------------------------------------
# small helpers


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _ms(seconds: float | None, times: bool) -> str:
    if not times:
        return _DASH
    if seconds is None:
        return "not run"
    return f"{seconds * 1e3:.3f} ms"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _ring(node: Node) -> str:
    try:
        ring = facts(node).ring
    except Exception:  # a graph a pass left broken: the heading still reads
        ring = None
    return "?" if ring is None else f"n={ring.n} L={len(ring.moduli)}"


def _outputs(rec: RealizationRecord) -> str:
    """``2 x n=64 L=3``: the rings of the realization's outputs, counted."""
    counts = Counter(_ring(s) for s in rec.input.src)
    parts = [ring if n == 1 else f"{n} \u00d7 {ring}" for ring, n in counts.items()]
    noun = "output" if len(rec.input.src) == 1 else "outputs"
    return f"{noun} {', '.join(parts) or 'none'}"


def _table(head: list[str], rows: Iterable[list[str]], num: Iterable[int] = ()) -> str:
    """A table; cells are HTML already; columns in ``num`` are right-aligned."""
    num = set(num)
    out = ["<table>", "<tr>"]
    out += [f"<th{' class=num' if i in num else ''}>{h}</th>" for i, h in enumerate(head)]
    out.append("</tr>")
    for row in rows:
        cells = [f"<td{' class=num' if i in num else ''}>{c}</td>" for i, c in enumerate(row)]
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _rules(counts: list[tuple[str, int]]) -> str:
    return ", ".join(f"{rule} \u00d7{n}" for rule, n in counts) or "none"


def _created(nodes: frozenset[Node]) -> str:
    counts = Counter(n.op.name for n in nodes)
    return ", ".join(
        f"{n} {op}" for op, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )


def _kernels(rec: RealizationRecord) -> tuple[list[ScheduledKernel], dict[int, str]]:
    """The realization's kernels and buffer names.

    For one that was scheduled but never prepared (``schedule()`` called directly), the kernels
    are read off the graph after the last pass.
    """
    if rec.kernels or not rec.passes or rec.passes[-1].name != _LAST_PASS:
        return rec.kernels, rec.names
    kernels = kernels_of(rec.passes[-1].graph)
    return kernels, buffer_names(kernels)


def _kernel_count(rec: RealizationRecord) -> str:
    kernels = _kernels(rec)[0]
    return _plural(len(kernels), "kernel") + ("" if rec.kernels else " (scheduled only, not run)")


def _focus(trace: Trace, focus: Iterable[int] | None) -> set[int]:
    if focus is not None:
        return set(focus)
    if not trace.realizations:
        return set()
    best = max(trace.realizations, key=lambda r: (len(r.kernels), len(r.passes), -r.index))
    return {best.index}


def _labels(trace: Trace, labels: dict[int, str] | None) -> dict[int, str]:
    out = dict(labels or {})
    for j, call in enumerate(trace.jit):
        for i in call.realizations:
            out.setdefault(i, f"jit capture of {call.function} (call {j})")
    return out


# ---------------------------------------------------------------------------------------------
# graphs


class _Graphs:
    """DOT text to inline SVG, with ``dot -Tsvg`` run on every graph at once.

    A few run in parallel, and each distinct text is drawn once; a failure keeps the DOT text and
    says why.
    """

    def __init__(self, dot: str | None, max_nodes: int, enabled: bool) -> None:
        self.program = shutil.which(dot) if (dot and enabled) else None
        self.missing = enabled and self.program is None
        self.enabled = enabled
        self.max_nodes = max_nodes
        self.wanted: dict[str, None] = {}
        self.svgs: dict[str, str | None] = {}
        self.errors: dict[str, str] = {}

    def want(self, text: str, nodes: int) -> None:
        if self.program is not None and nodes <= self.max_nodes:
            self.wanted[text] = None

    def draw(self) -> None:
        todo = [t for t in self.wanted if t not in self.svgs]
        with ThreadPoolExecutor(max_workers=4) as pool:
            for text, svg in zip(todo, pool.map(self._run, todo), strict=True):
                self.svgs[text] = svg

    def _run(self, text: str) -> str | None:
        if self.program is None:  # want() asks for nothing then
            return None
        try:
            return draw_svg(text, self.program)
        except (OSError, subprocess.SubprocessError) as e:
            self.errors[text] = dot_error(e)
            return None

    def html(self, text: str, nodes: int, prefix: str) -> str:
        """The graph as inline SVG, or its DOT text with the reason it is not drawn."""
        svg = self.svgs.get(text)
        if svg is not None:
            return f'<div class="graph">\n{inline_svg(_slim(svg), prefix)}</div>'
        if not self.enabled:
            why = "graphs are not drawn in this report (svg=False): the DOT text"
        elif self.missing:
            why = f"not drawn ({INSTALL_NOTE}): the DOT text"
        elif nodes > self.max_nodes:
            why = (
                f"{nodes} nodes, more than {self.max_nodes}: too large to draw here; the DOT "
                "text (save it and run <code>dot -Tsvg file.dot -o file.svg</code>)"
            )
        else:
            why = f"dot could not draw it ({_e(self.errors.get(text, 'unknown error'))}): the DOT"
        return f"<details><summary>{why}</summary><pre>{_e(text)}</pre></details>"


_PROLOG = re.compile(r"\A.*?(?=<svg[\s>])", re.S)
_COMMENT = re.compile(r"<!--.*?-->\n?", re.S)
_XMLNS = re.compile(r'\s+xmlns(:\w+)?="[^"]*"')
_ID = re.compile(r'(\s)id="')
_TEXT_ATTRS = ("font-family", "text-anchor")  # the same on every label of a dot picture


_DOT_TITLE = re.compile(r"<title>[^<]*</title>\n?")
_DOT_G_ID = re.compile(r'<g id="[^"]*" class="(graph|node|edge)"')


_DOT_SIZE = re.compile(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"')


def _slim(svg: str) -> str:
    """A dot picture without what it does not need in a page, sized one pixel per point.

    What goes is the ``<title>`` of the graph, of each node and edge (``n3``, ``n3->n7``: DOT
    names, not worth a tooltip) and their ids. One pixel per point is three quarters of dot's
    size (10-point labels read as 10 pixels), so more of a large graph fits in the window.
    """
    svg = _DOT_G_ID.sub(r'<g class="\1"', _DOT_TITLE.sub("", svg))
    return _DOT_SIZE.sub(r'<svg width="\1" height="\2"', svg, count=1)


def inline_svg(svg: str, prefix: str) -> str:
    """An SVG document made fit to sit inside HTML.

    It has no XML prolog, doctype or comments, no namespace declarations (the HTML parser knows
    ``<svg>``; this keeps every URL out of the file), and every ``id`` prefixed with ``prefix`` so
    the pictures of one page do not clash.
    A text attribute that every ``<text>`` repeats with one value is said once, on the ``<svg>``
    (it is inherited): a fifth of a dot picture's bytes.
    """
    svg = _PROLOG.sub("", svg, count=1)
    svg = _COMMENT.sub("", svg)
    svg = _XMLNS.sub("", svg)
    svg = _ID.sub(lambda m: f'{m.group(1)}id="{prefix}-', svg)
    texts = svg.count("<text ")
    for attr in _TEXT_ATTRS:
        values = set(re.findall(rf'<text\b[^>]*?\s{attr}="([^"]*)"', svg))
        if texts and len(values) == 1 and svg.count(f' {attr}="') == texts:
            (value,) = values
            svg = svg.replace(f' {attr}="{value}"', "")
            svg = svg.replace("<svg", f'<svg {attr}="{value}"', 1)
    return svg if svg.endswith("\n") else svg + "\n"


# ---------------------------------------------------------------------------------------------
# the HTML


class _Builder:
    def __init__(
        self,
        trace: Trace,
        title: str,
        summary: str,
        svg: bool,
        labels: dict[int, str] | None,
        focus: Iterable[int] | None,
        graphs: str,
        times: bool,
        dot: str | None,
        max_nodes: int,
        error: str,
    ) -> None:
        if graphs not in ("focus", "all", "none"):
            raise ValueError(f"graphs={graphs!r} must be 'focus', 'all' or 'none'")
        self.trace, self.title, self.summary, self.error = trace, title, summary, error
        self.labels = _labels(trace, labels)
        self.focus = _focus(trace, focus)
        self.graphs, self.times = graphs, times
        self.drawer = _Graphs(dot, max_nodes, svg)
        # (body, device) -> (anchor, "realization i, kernel k") where its source is first shown
        self.sources: dict[tuple[Node, str], tuple[str, str]] = {}

    # --- which graphs ------------------------------------------------------------------------
    def pass_graphs(self, rec: RealizationRecord) -> bool:
        return self.graphs == "all" or (self.graphs == "focus" and rec.index in self.focus)

    def lazy_graph(self, rec: RealizationRecord) -> bool:
        return self.graphs != "none"

    def _graph_jobs(self) -> list[tuple[str, int]]:
        jobs = []
        for rec in self.trace.realizations:
            if self.lazy_graph(rec):
                jobs.append((to_dot(rec.input), len(toposort(rec.input))))
            if self.pass_graphs(rec):
                previous = rec.input
                for p in rec.passes:
                    if p.graph is not previous:
                        text = to_dot(p.graph, created=p.created)
                        jobs.append((text, len(toposort(p.graph))))
                    previous = p.graph
        return jobs

    # --- the page ----------------------------------------------------------------------------
    def build(self) -> str:
        for text, nodes in self._graph_jobs():
            self.drawer.want(text, nodes)
        self.drawer.draw()
        body = [
            f"<h1>{_e(self.title)}</h1>",
            self.summary_section(),
            self.realizations_section(),
            self.jit_section(),
            self.timing_section(),
            '<footer class="muted"><p>Written by <code>python -m ren.viz</code>. The file is '
            "self-contained: graphs and memory plans are inline SVG, nothing is fetched.</p>"
            "</footer>",
        ]
        return "\n".join(
            [
                "<!DOCTYPE html>",
                '<html lang="en">',
                "<head>",
                '<meta charset="utf-8">',
                '<meta name="viewport" content="width=device-width, initial-scale=1">',
                f"<title>{_e(self.title)}</title>",
                f"<style>{_CSS}</style>",
                "</head>",
                "<body>",
                *body,
                "</body>",
                "</html>",
                "",
            ]
        )

    def summary_section(self) -> str:
        trace = self.trace
        kernels = sum(len(r.kernels) for r in trace.realizations)
        units = sum(len(r.units) for r in trace.realizations)
        pass_s = sum(p.seconds for r in trace.realizations for p in r.passes)
        unit_s = sum(u.seconds or 0.0 for r in trace.realizations for u in r.units)
        out = ['<section id="summary">', "<h2>Summary</h2>"]
        if self.summary:
            out.append(f'<pre class="summary">{_e(self.summary.rstrip())}</pre>')
        if self.error:
            out.append(
                '<p class="note">The program raised an error; this report shows what was '
                "recorded up to it.</p>"
            )
            out.append(f'<pre class="summary">{_e(self.error.rstrip())}</pre>')
        out.append(
            "<p>"
            + ", ".join(
                [
                    _plural(len(trace.realizations), "realization"),
                    _plural(kernels, "scheduled kernel"),
                    _plural(units, "exec unit"),
                    _plural(len(trace.jit), "ren.jit call"),
                ]
            )
            + f"; scheduler passes {_ms(pass_s, self.times)}, exec units "
            f"{_ms(unit_s, self.times)}.</p>"
        )
        if self.drawer.missing:
            out.append(f'<p class="note">{_e(INSTALL_NOTE)}. The graphs below are DOT text.</p>')
        out.append(
            '<p class="muted">Open realizations are the marked ones (or the largest); click a '
            "heading to open another. Graphs flow upward: buffers and constants at the bottom, "
            "the SINK at the top; boxes are coloured by op group (orange front end, green "
            "storage, blue scheduling, purple kernel), and the nodes a pass created have a thick "
            "red border.</p>"
        )
        out.append("<h4>Timeline</h4>")
        rows = []
        for kind, i in trace.order:
            if kind == "realization":
                rec = trace.realizations[i]
                rows.append(
                    [
                        f'<a href="#r{i}">realization {i}</a>',
                        _e(self.labels.get(i, "")),
                        _e(_outputs(rec)),
                        str(len(_kernels(rec)[0])),
                        _ms(rec.seconds, self.times),
                    ]
                )
            else:
                call = trace.jit[i]
                rows.append(
                    [
                        f'<a href="#jit{i}">jit call {i}</a>',
                        _e(f"{call.kind} of {call.function}"),
                        _e(f"runner {call.runner}"),
                        str(call.units),
                        _ms(call.seconds, self.times),
                    ]
                )
        if rows:
            head = ["event", "what", "outputs", "kernels / units", "time"]
            out.append(_table(head, rows, num=(3, 4)))
        else:
            out.append("<p>Nothing was realized.</p>")
        out.append("</section>")
        return "\n".join(out)

    def realizations_section(self) -> str:
        out = ['<section id="realizations">', "<h2>Realizations</h2>"]
        if not self.trace.realizations:
            out.append("<p>No realization was recorded.</p>")
        for rec in self.trace.realizations:
            out.append(self.realization(rec))
        out.append("</section>")
        return "\n".join(out)

    def realization(self, rec: RealizationRecord) -> str:
        i = rec.index
        label = self.labels.get(i, "")
        heading = f"Realization {i}" + (f": {label}" if label else "")
        facts_ = f"{_outputs(rec)}, {_kernel_count(rec)}"
        is_open = " open" if i in self.focus else ""
        out = [
            f'<details class="realization" id="r{i}"{is_open}>',
            f"<summary><h3>{_e(heading)}</h3> <span class=muted>\u2014 {_e(facts_)}, "
            f"{_ms(rec.seconds, self.times)}</span></summary>",
            "<h4>The lazy graph</h4>",
        ]
        if self.lazy_graph(rec):
            nodes = len(toposort(rec.input))
            out.append(f"<p>{_plural(nodes, 'node')}, as handed to the scheduler.</p>")
            out.append(self.drawer.html(to_dot(rec.input), nodes, f"r{i}-in"))
        else:
            out.append("<p class=muted>Not drawn (graphs='none').</p>")
        out.append(self.passes(rec))
        out.append(self.kernels(rec))
        out.append(self.memory(rec))
        out.append(self.units(rec))
        out.append("</details>")
        return "\n".join(out)

    def passes(self, rec: RealizationRecord) -> str:
        i = rec.index
        out = ["<h4>Passes</h4>"]
        if not rec.passes:
            out.append("<p>No pass ran.</p>")
            return "\n".join(out)
        rows, previous = [], rec.input
        for p in rec.passes:
            same = p.graph is previous
            rows.append(
                [
                    f'<span id="r{i}-row{p.step:02d}">{p.step}</span>',
                    f'<a href="#r{i}-pass{p.step:02d}">{_e(p.name)}</a>'
                    if self.pass_graphs(rec)
                    else _e(p.name),
                    _ms(p.seconds, self.times),
                    str(len(toposort(p.graph))),
                    "no change" if same else str(len(p.created)),
                    _e(_rules(p.rule_counts())),
                ]
            )
            previous = p.graph
        head = ["step", "pass", "time", "nodes after", "created", "rules fired"]
        out.append(_table(head, rows, num=(0, 2, 3, 4)))
        if not self.pass_graphs(rec):
            out.append(
                '<p class="muted">The graph after each pass is drawn for the open realizations '
                "only (<code>--all-graphs</code> draws every one).</p>"
            )
            return "\n".join(out)
        out.append("<p>The graph after each pass (nodes the pass created: thick red border):</p>")
        previous = rec.input
        for p in rec.passes:
            same = p.graph is previous
            nodes = len(toposort(p.graph))
            what = "no change" if same else f"{_plural(len(p.created), 'node')} created"
            out.append(
                f'<details class="pass" id="r{i}-pass{p.step:02d}"><summary>'
                f"{p.step:02d} <b>{_e(p.name)}</b> \u2014 {what}, {_ms(p.seconds, self.times)}"
                "</summary>"
            )
            out.append(f"<p>Rules fired: {_e(_rules(p.rule_counts()))}.</p>")
            if same:
                out.append("<p>The graph is the same as before this pass.</p>")
            else:
                if p.created:
                    out.append(f"<p>Created: {_e(_created(p.created))}.</p>")
                text = to_dot(p.graph, created=p.created)
                out.append(f"<p>{_plural(nodes, 'node')} after the pass.</p>")
                out.append(self.drawer.html(text, nodes, f"r{i}-p{p.step:02d}"))
            out.append("</details>")
            previous = p.graph
        return "\n".join(out)

    def kernels(self, rec: RealizationRecord) -> str:
        i = rec.index
        out = ["<h4>Scheduled kernels</h4>"]
        kernels, names = _kernels(rec)
        if not kernels:
            out.append(
                "<p>None recorded: the realization stopped before its kernels were made.</p>"
            )
            return "\n".join(out)
        if not rec.kernels:
            out.append(
                '<p class="note">Read off the graph after the last pass: this realization was '
                "scheduled only (the scheduler was called directly, or what followed it "
                "failed), so nothing was planned or run.</p>"
            )
        rows = []
        for k, kernel in enumerate(kernels):
            bufs = [names.get(id(b), "?") for b in kernel.bufs]
            rows.append(
                [
                    f'<a href="#r{i}-k{k}">{k}</a>',
                    f"<code>{_e(kernel.info.name)}</code>",
                    _e(kernel.info.kind),
                    _e(kernel.info.device),
                    _e(f"n={kernel.info.ring.n}\u00a0L={kernel.info.ring.L}"),
                    _e(kernel.info.domain.value),
                    _e(", ".join(bufs)),
                ]
            )
        head = ["#", "kernel", "kind", "device", "ring", "writes", "buffers (slot 0 written)"]
        out.append(_table(head, rows, num=(0,)))
        out.append(
            "<p>The source of each kernel for every backend (rendered, not compiled; a body "
            "already shown links to where it is):</p>"
        )
        for k, kernel in enumerate(kernels):
            out.append(
                f'<details class="kernel" id="r{i}-k{k}"><summary>kernel {k}: '
                f"<code>{_e(kernel.info.name)}</code></summary>"
            )
            for device, what in BACKENDS:
                anchor = f"r{i}-k{k}-{device}"
                first = self.sources.get((kernel.ast, device))
                if first is not None:
                    out.append(
                        f'<p id="{anchor}">{device} ({_e(what)}): the same source as '
                        f'<a href="#{first[0]}">{_e(first[1])}</a>.</p>'
                    )
                    continue
                self.sources[(kernel.ast, device)] = (anchor, f"realization {i}, kernel {k}")
                try:
                    text = kernel_source(kernel, device)
                except Exception as e:  # one backend failing to render keeps the others
                    text = f"/* could not render for {device}: {type(e).__name__}: {e} */\n"
                out.append(
                    f'<details id="{anchor}"><summary>{device} ({_e(what)})</summary>'
                    f"<pre>{_e(text)}</pre></details>"
                )
            out.append("</details>")
        return "\n".join(out)

    def memory(self, rec: RealizationRecord) -> str:
        i = rec.index
        out = ["<h4>Memory plan</h4>"]
        if not rec.plan.devices:
            out.append(
                "<p>Nothing was planned: every buffer of this realization is an input, an output "
                "or kept for another reason (see <code>docs/memory.md</code>).</p>"
            )
            return "\n".join(out)
        names = [k.info.name for k in rec.kernels]
        out += _plan_html(rec.plan, names, f"r{i}")
        return "\n".join(out)

    def units(self, rec: RealizationRecord) -> str:
        out = ["<h4>Exec units, in the order they ran</h4>"]
        if not rec.units:
            out.append("<p>No exec unit was made.</p>")
            return "\n".join(out)
        rows = [
            [
                str(u.index),
                f"<code>{_e(u.name)}</code>",
                _e(u.kind),
                _e(u.device),
                _e(", ".join(u.buffers)),
                _ms(u.seconds, self.times),
            ]
            for u in rec.units
        ]
        total = sum(u.seconds or 0.0 for u in rec.units)
        rows.append(["", "<b>total</b>", "", "", "", _ms(total, self.times)])
        out.append(_table(["#", "kernel", "kind", "device", "buffers", "time"], rows, (0, 5)))
        return "\n".join(out)

    def jit_section(self) -> str:
        out = ['<section id="jit">', "<h2>ren.jit calls</h2>"]
        if not self.trace.jit:
            out.append("<p>No ren.jit call was recorded.</p>")
            out.append("</section>")
            return "\n".join(out)
        captures = sum(c.kind == "capture" for c in self.trace.jit)
        replays = sum(c.kind == "replay" for c in self.trace.jit)
        out.append(f"<p>{_plural(captures, 'capture')}, {_plural(replays, 'replay')}.</p>")
        rows = []
        for j, c in enumerate(self.trace.jit):
            ran = ", ".join(f'<a href="#r{i}">realization {i}</a>' for i in c.realizations)
            rows.append(
                [
                    f'<span id="jit{j}">{j}</span>',
                    f"<code>{_e(c.function)}</code>",
                    _e(c.kind),
                    str(c.units),
                    str(c.pruned),
                    _e(", ".join(c.inputs)),
                    _e(c.runner),
                    _ms(c.seconds, self.times),
                    ran or "none: the captured units ran again",
                ]
            )
        head = ["call", "function", "kind", "units", "pruned", "inputs", "runner", "time", "ran"]
        out.append(_table(head, rows, num=(0, 3, 4, 7)))
        out.append(
            '<p class="muted">A capture calls the function once, realizing what it builds, and '
            "keeps every exec unit it ran (replanned into one arena); a replay swaps the new "
            "input buffers in and runs those units again (runner <code>units</code>), or one "
            "compiled call for the whole plan (runner <code>graph</code>): no graph is built "
            "or scheduled.</p>"
        )
        for j, c in enumerate(self.trace.jit):
            if c.kind != "capture" or c.memory is None or not c.memory.devices:
                continue
            out.append(
                f'<h3 id="jit{j}-memory">Memory plan of jit call {j} '
                f"(<code>{_e(c.function)}</code>): the captured plan's arena</h3>"
            )
            out += _plan_html(c.memory, None, f"jit{j}")
        out.append("</section>")
        return "\n".join(out)

    def timing_section(self) -> str:
        out = ['<section id="timing">', "<h2>Time per pass</h2>"]
        rows = []
        for name, t in _pass_totals(self.trace).items():
            rows.append(
                [
                    _e(name),
                    str(t["runs"]),
                    _ms(t["seconds"], self.times),
                    _ms(t["seconds"] / t["runs"], self.times),
                    _ms(t["max"], self.times),
                    str(t["rules"]),
                    str(t["created"]),
                ]
            )
        if rows:
            total = sum(t["seconds"] for t in _pass_totals(self.trace).values())
            rows.append(["<b>total</b>", "", _ms(total, self.times), "", "", "", ""])
            head = ["pass", "runs", "total", "mean", "max", "rules fired", "nodes created"]
            out.append(_table(head, rows, num=(1, 2, 3, 4, 5, 6)))
        else:
            out.append("<p>No pass ran.</p>")
        kinds = _unit_totals(self.trace)
        if kinds:
            out.append("<h4>Exec units by kind</h4>")
            rows = [
                [_e(kind), str(t["units"]), _ms(t["seconds"], self.times)]
                for kind, t in kinds.items()
            ]
            out.append(_table(["kind", "units", "total"], rows, num=(1, 2)))
        out.append("</section>")
        return "\n".join(out)


def _plan_html(plan: MemoryPlan, names: list[str] | None, prefix: str) -> list[str]:
    """Each device's arena of ``plan``: its numbers, its picture and its buffers (a table)."""
    out = []
    svgs = dict(plans_svg(plan, names))
    for d in plan.devices:
        ratio = d.arena_bytes / d.lower_bound_bytes if d.lower_bound_bytes else 1.0
        out.append(
            f"<p><b>{_e(d.device)}</b>: {_plural(len(d.buffers), 'planned buffer')}; unshared "
            f"{d.unshared_bytes} B, arena {d.arena_bytes} B, lower bound "
            f"{d.lower_bound_bytes} B (arena / lower bound {ratio:.2f}x).</p>"
        )
        out.append(f'<div class="memory">\n{inline_svg(svgs[d.device], f"{prefix}-m-{d.device}")}')
        out.append("</div>")
        rows = [
            [
                f"b{j}",
                _e(f"arena[{p.offset}:{p.offset + p.nbytes}]"),
                str(p.nbytes),
                _e(f"{p.size} \u00d7 {p.dtype}"),
                f"{p.first}" if p.first == p.last else f"{p.first}\u2013{p.last}",
            ]
            for j, p in enumerate(buffer_order(d))
        ]
        out.append(
            "<details><summary>The planned buffers (names as in the picture; the exec units "
            "name them by their place in the arena)</summary>"
        )
        out.append(_table(["picture", "arena bytes", "bytes", "words", "kernels"], rows, (2,)))
        out.append("</details>")
    return out


def _pass_totals(trace: Trace) -> dict[str, dict[str, float]]:
    totals: dict[str, dict[str, float]] = {}
    for rec in trace.realizations:
        for p in rec.passes:
            t = totals.setdefault(
                p.name, {"runs": 0, "seconds": 0.0, "max": 0.0, "rules": 0, "created": 0}
            )
            t["runs"] += 1
            t["seconds"] += p.seconds
            t["max"] = max(t["max"], p.seconds)
            t["rules"] += len(p.rules)
            t["created"] += len(p.created)
    return totals


def _unit_totals(trace: Trace) -> dict[str, dict[str, float]]:
    totals: dict[str, dict[str, float]] = {}
    for rec in trace.realizations:
        for u in rec.units:
            t = totals.setdefault(u.kind, {"units": 0, "seconds": 0.0})
            t["units"] += 1
            t["seconds"] += u.seconds or 0.0
    return dict(sorted(totals.items()))


# ---------------------------------------------------------------------------------------------
# the public functions


def build_report(
    trace: Trace,
    title: str,
    summary: str = "",
    svg: bool = True,
    *,
    labels: dict[int, str] | None = None,
    focus: Iterable[int] | None = None,
    graphs: str = "focus",
    times: bool = True,
    dot: str | None = "dot",
    max_nodes: int = GRAPH_NODE_LIMIT,
    error: str = "",
) -> str:
    """The HTML report of ``trace`` (see the module docstring).

    Args:
        trace: what ``ren.viz.record()`` recorded.
        title: the page's title and heading.
        summary: text shown first, as written (an example's result against its oracle).
        svg: draw graphs with Graphviz; ``False`` shows every graph as DOT text.
        labels: a name per realization index (``{5: "multiply"}``), shown in its heading.
        focus: the realizations to open and draw after every pass (default: the one with the
            most kernels).
        graphs: ``"focus"`` draws the lazy graph of every realization and the graph after each
            pass of the focused ones; ``"all"`` after each pass of every one; ``"none"`` no graph.
        times: ``False`` writes a dash for every time, so two reports compare byte for byte.
        dot: the Graphviz program to draw with (looked up on ``PATH``); ``None`` acts as if it
            were not installed: every graph is DOT text and the report says how to install it.
        max_nodes: graphs with more nodes are shown as DOT text.
        error: a traceback to show in the summary (the program raised).

    Returns:
        The page, one string.
    """
    builder = _Builder(
        trace, title, summary, svg, labels, focus, graphs, times, dot, max_nodes, error
    )
    return builder.build()


def write_report(
    trace: Trace,
    out_dir: str | Path,
    title: str,
    summary: str = "",
    **options: Any,
) -> Path:
    """Write ``build_report(trace, title, summary, **options)`` to ``out_dir/report.html``.

    The directory is created when needed.

    Returns:
        The file's path.
    """
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "report.html"
    path.write_text(build_report(trace, title, summary, **options), encoding="utf-8")
    return path


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

    It holds the summary, each realization's passes (times, rules fired), kernels, memory plan
    (drawn with characters for the focused ones) and exec units, the jit calls and the time per
    pass. Graphs and kernel sources are in the HTML report only. The arguments are those of
    ``build_report``.
    """
    labels = _labels(trace, labels)
    focused = _focus(trace, focus)

    def ms(s: float | None) -> str:
        return _ms(s, times).replace(_DASH, "-")

    out = [title, "=" * len(title), ""]
    if summary:
        out += [summary.rstrip(), ""]
    if error:
        out += ["The program raised an error; what was recorded up to it:", error.rstrip(), ""]
    kernels = sum(len(r.kernels) for r in trace.realizations)
    out.append(
        f"{_plural(len(trace.realizations), 'realization')}, "
        f"{_plural(kernels, 'scheduled kernel')}, {_plural(len(trace.jit), 'ren.jit call')}"
    )
    for rec in trace.realizations:
        out += ["", *_text_realization(rec, labels.get(rec.index, ""), rec.index in focused, ms)]
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
    totals = _pass_totals(trace)
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
    rec: RealizationRecord, label: str, focused: bool, ms: Callable[[float | None], str]
) -> list[str]:
    """One realization for ``text_report``: in full when focused, else a few summary lines."""
    head = f"realization {rec.index}" + (f": {label}" if label else "")
    out = [
        f"--- {head} ---" + ("  [focus]" if focused else ""),
        f"{_outputs(rec)}, {_kernel_count(rec)}, "
        f"lazy graph of {_plural(len(toposort(rec.input)), 'node')}, {ms(rec.seconds)}",
    ]
    if not focused:
        rules = sum(len(p.rules) for p in rec.passes)
        created = sum(len(p.created) for p in rec.passes)
        out.append(
            f"passes: {len(rec.passes)}, {ms(sum(p.seconds for p in rec.passes))}, "
            f"{_plural(rules, 'rule')} fired, {_plural(created, 'node')} created"
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
            f"rules: {_rules(p.rule_counts())}"
        )
        previous = p.graph
    kernels, names = _kernels(rec)
    if kernels:
        scheduled = "" if rec.kernels else "; scheduled only, nothing ran"
        out.append(f"kernels (buffers: slot 0 is written{scheduled}):")
        for k, kernel in enumerate(kernels):
            bufs = ", ".join(names.get(id(b), "?") for b in kernel.bufs)
            out.append(f"  {k:3d} {kernel.info.name:<28} {kernel.info.kind:<12} {bufs}")
    for d in rec.plan.devices:
        out.append("memory plan:")
        out += ["  " + line for line in plan_text(d).rstrip("\n").split("\n")]
    if rec.units:
        out.append("exec units:")
        for u in rec.units:
            out.append(f"  {u.index:3d} {u.name:<28} {ms(u.seconds):>10}  {', '.join(u.buffers)}")
    return out


def device_plans(trace: Trace) -> list[tuple[int, DevicePlan]]:
    """``(realization index, device plan)`` for every arena the trace planned, in order."""
    return [(rec.index, d) for rec in trace.realizations for d in rec.plan.devices]
