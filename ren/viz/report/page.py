"""The HTML report's page (``build_report``, ``write_report``).

Its sections: the summary, the realizations, the jit calls and the time per pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TypedDict, Unpack

from ren.ir.dot import to_dot
from ren.ir.node import Node, toposort
from ren.viz.report.blocks import (
    CSS,
    GRAPH_NODE_LIMIT,
    INSTALL_NOTE,
    SCRIPT,
    Graphs,
    escape_html,
    focus_set,
    html_table,
    kernels_and_names,
    label_map,
    millis,
    outputs,
    plural,
)
from ren.viz.report.plan import plan_html
from ren.viz.report.regions import Box
from ren.viz.report.sections import RealizationSections
from ren.viz.trace import Trace


class _Builder(RealizationSections):
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
        self.labels = label_map(trace, labels)
        self.focus = focus_set(trace, focus)
        self.graphs, self.times = graphs, times
        self.drawer = Graphs(dot, max_nodes, svg)
        self.max_nodes = max_nodes
        self._trees: dict[int, Box | None] = {}
        self._region_dots: dict[int, dict[int, str]] = {}
        # (body, device) -> (anchor, "realization i, kernel k") where its source is first shown
        self.sources: dict[tuple[Node, str], tuple[str, str]] = {}

    def _graph_jobs(self) -> list[str]:
        """The DOT text of every graph the page draws (those within the size limit)."""
        jobs = []
        small = self.max_nodes
        for rec in self.trace.realizations:
            if self.lazy_graph(rec) and len(toposort(rec.input)) <= small:
                jobs.append(to_dot(rec.input))
            if self.pass_graphs(rec):
                previous = rec.input
                for p in rec.passes:
                    if p.graph is not previous and len(toposort(p.graph)) <= small:
                        jobs.append(to_dot(p.graph, created=p.created))
                    previous = p.graph
            jobs += self.region_dots(rec).values()
        return jobs

    # --- the page ----------------------------------------------------------------------------
    def build(self) -> str:
        for text in self._graph_jobs():
            self.drawer.want(text)
        self.drawer.draw()
        body = [
            f"<h1>{escape_html(self.title)}</h1>",
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
                f"<title>{escape_html(self.title)}</title>",
                f"<style>{CSS}</style>",
                "</head>",
                "<body>",
                *body,
                f"<script>{SCRIPT}</script>",
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
            out.append(f'<pre class="summary">{escape_html(self.summary.rstrip())}</pre>')
        if self.error:
            out.append(
                '<p class="note">The program raised an error; this report shows what was '
                "recorded up to it.</p>"
            )
            out.append(f'<pre class="summary">{escape_html(self.error.rstrip())}</pre>')
        out.append(
            "<p>"
            + ", ".join(
                [
                    plural(len(trace.realizations), "realization"),
                    plural(kernels, "scheduled kernel"),
                    plural(units, "exec unit"),
                    plural(len(trace.jit), "ren.jit call"),
                ]
            )
            + f"; scheduler passes {millis(pass_s, self.times)}, exec units "
            f"{millis(unit_s, self.times)}.</p>"
        )
        if self.drawer.missing:
            out.append(
                f'<p class="note">{escape_html(INSTALL_NOTE)}: the graphs below are not drawn.</p>'
            )
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
                        escape_html(self.labels.get(i, "")),
                        escape_html(outputs(rec)),
                        str(len(kernels_and_names(rec)[0])),
                        millis(rec.seconds, self.times),
                    ]
                )
            else:
                call = trace.jit[i]
                rows.append(
                    [
                        f'<a href="#jit{i}">jit call {i}</a>',
                        escape_html(f"{call.kind} of {call.function}"),
                        escape_html(f"runner {call.runner}"),
                        str(call.units),
                        millis(call.seconds, self.times),
                    ]
                )
        if rows:
            head = ["event", "what", "outputs", "kernels / units", "time"]
            out.append(html_table(head, rows, num=(3, 4)))
        else:
            out.append("<p>Nothing was realized.</p>")
        out.append("</section>")
        return "\n".join(out)

    def jit_section(self) -> str:
        out = ['<section id="jit">', "<h2>ren.jit calls</h2>"]
        if not self.trace.jit:
            out.append("<p>No ren.jit call was recorded.</p>")
            out.append("</section>")
            return "\n".join(out)
        captures = sum(c.kind == "capture" for c in self.trace.jit)
        replays = sum(c.kind == "replay" for c in self.trace.jit)
        out.append(f"<p>{plural(captures, 'capture')}, {plural(replays, 'replay')}.</p>")
        rows = []
        for j, c in enumerate(self.trace.jit):
            ran = ", ".join(f'<a href="#r{i}">realization {i}</a>' for i in c.realizations)
            rows.append(
                [
                    f'<span id="jit{j}">{j}</span>',
                    f"<code>{escape_html(c.function)}</code>",
                    escape_html(c.kind),
                    str(c.units),
                    str(c.pruned),
                    escape_html(", ".join(c.inputs)),
                    escape_html(c.runner),
                    millis(c.seconds, self.times),
                    ran or "none: the captured units ran again",
                ]
            )
        head = ["call", "function", "kind", "units", "pruned", "inputs", "runner", "time", "ran"]
        out.append(html_table(head, rows, num=(0, 3, 4, 7)))
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
                f"(<code>{escape_html(c.function)}</code>): the captured plan's arena</h3>"
            )
            out += plan_html(c.memory, None, f"jit{j}")
        out.append("</section>")
        return "\n".join(out)

    def timing_section(self) -> str:
        out = ['<section id="timing">', "<h2>Time per pass</h2>"]
        rows = []
        for name, t in pass_totals(self.trace).items():
            rows.append(
                [
                    escape_html(name),
                    str(t["runs"]),
                    millis(t["seconds"], self.times),
                    millis(t["seconds"] / t["runs"], self.times),
                    millis(t["max"], self.times),
                    str(t["rules"]),
                    str(t["created"]),
                ]
            )
        if rows:
            total = sum(t["seconds"] for t in pass_totals(self.trace).values())
            rows.append(["<b>total</b>", "", millis(total, self.times), "", "", "", ""])
            head = ["pass", "runs", "total", "mean", "max", "rules fired", "nodes created"]
            out.append(html_table(head, rows, num=(1, 2, 3, 4, 5, 6)))
        else:
            out.append("<p>No pass ran.</p>")
        kinds = _unit_totals(self.trace)
        if kinds:
            out.append("<h4>Exec units by kind</h4>")
            rows = [
                [escape_html(kind), str(t["units"]), millis(t["seconds"], self.times)]
                for kind, t in kinds.items()
            ]
            out.append(html_table(["kind", "units", "total"], rows, num=(1, 2)))
        out.append("</section>")
        return "\n".join(out)


def pass_totals(trace: Trace) -> dict[str, dict[str, float]]:
    """Per pass: runs, seconds, the longest run, rules fired and nodes created, over the trace."""
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
        svg: draw graphs with Graphviz; ``False`` draws none (each says so).
        labels: a name per realization index (``{5: "multiply"}``), shown in its heading.
        focus: the realizations to open and draw after every pass (default: the one with the
            most kernels).
        graphs: ``"focus"`` draws the lazy graph of every realization and the graph after each
            pass of the focused ones; ``"all"`` after each pass of every one; ``"none"`` no graph.
        times: ``False`` writes a dash for every time, so two reports compare byte for byte.
        dot: the Graphviz program to draw with (looked up on ``PATH``); ``None`` acts as if it
            were not installed: no graph is drawn and the report says how to install it.
        max_nodes: graphs with more nodes are drawn collapsed to their regions.
        error: a traceback to show in the summary (the program raised).

    Returns:
        The page, one string.
    """
    builder = _Builder(
        trace, title, summary, svg, labels, focus, graphs, times, dot, max_nodes, error
    )
    return builder.build()


class ReportOptions(TypedDict, total=False):
    """``build_report``'s options after ``summary``, as ``write_report`` passes them on."""

    svg: bool
    labels: dict[int, str] | None
    focus: Iterable[int] | None
    graphs: str
    times: bool
    dot: str | None
    max_nodes: int
    error: str


def write_report(
    trace: Trace,
    out_dir: str | Path,
    title: str,
    summary: str = "",
    **options: Unpack[ReportOptions],
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
