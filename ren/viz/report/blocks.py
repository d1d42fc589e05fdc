"""The report's building blocks: constants, style, HTML helpers, the graph drawer, inline SVG."""

from __future__ import annotations

import functools
import html
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from ren.engine.dump import dot_error, draw_svg
from ren.engine.schedule import PASSES, ScheduledKernel, kernels_of
from ren.ir.facts import facts
from ren.ir.node import Node
from ren.viz.trace import RealizationRecord, Trace, buffer_names

#: A graph with more nodes than this is drawn collapsed to its regions, not node by node: the
#: picture would be too large to read in a page, and ``dot`` can take seconds on it (the 350 nodes
#: after ``indexify`` of the jit example's capture take it about 8 s, all in placing nodes and
#: routing edges).
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


@functools.cache
def _helper_blocks() -> tuple[tuple[str, str], ...]:
    """``(dtype, text)`` of every modular helper block a C or CUDA source may include."""
    from ren.codegen.cuda import device_helpers
    from ren.codegen.helpers import c_helpers

    return tuple((d, text) for d in ("u32", "u64") for text in (c_helpers(d), device_helpers(d)))


def fold_helpers(source: str) -> tuple[str, list[tuple[str, str]]]:
    """``source`` with its modular helpers cut out, so a reader sees the kernel first.

    Returns the source with each helper block (``ren.codegen.helpers.c_helpers``, CUDA's
    ``device_helpers``, with the ``#define`` names after them) replaced by one comment line, and
    ``(that line, the block)`` for each, in order: replacing the lines by the blocks gives
    ``source`` back.
    """
    from ren.codegen.helpers import HELPER_NAMES

    folded: list[tuple[str, str]] = []
    for dtype, text in _helper_blocks():
        names = HELPER_NAMES.replace("{w}", dtype)
        block = text + names if text + names in source else text
        if block in source:
            lines = block.count("\n")
            line = f"/* the {dtype} modular helpers ({lines} lines): below the kernel */\n"
            source = source.replace(block, line, 1)
            folded.append((line, block))
    return source, folded


DASH = "\u2013"
_LAST_PASS = PASSES[-1][0].__name__.rsplit(".", 1)[
    -1
]  # kernelize: its graph holds the kernels  # what a time reads as with times=False

CSS = """
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
.regions { margin: 0.5em 0; max-width: 100%; }
.regions .row { display: flex; flex-wrap: wrap; gap: 0.5em; align-items: flex-start;
                justify-content: center; }
.regions .flow { text-align: center; color: #8a8a8a; line-height: 1.2; }
.regions .box { border: 1px solid #8a9bb5; border-radius: 6px; background: #f1f5fb;
                padding: 0.3em 0.6em; min-width: 12em; max-width: 100%; box-sizing: border-box;
                font-size: 0.85em; }
.regions details.box[open] { flex-basis: 100%; background: #fbfcfe; }
.regions details.box > summary { cursor: pointer; }
.regions .inner { border-top: 1px dashed #c5cce0; margin-top: 0.3em; padding-top: 0.3em; }
.regions .bits { color: #1b5e20; font-weight: 600; }
.regions .range { color: #b71c1c; font-weight: 600; }
.regions p.kernels { margin: 0.3em 0; font-size: 0.95em; }
table.sortable th { cursor: pointer; }
table.sortable th::after { content: " \u2195"; color: #999999; }
"""

#: Sorts a ``table.sortable`` by the column whose heading is clicked (again: the other way).
#: A cell's ``data-v`` is its sort key; the page reads the same without it.
SCRIPT = """
document.querySelectorAll("table.sortable th").forEach(function (th) {
  th.addEventListener("click", function () {
    var table = th.closest("table");
    var col = Array.prototype.indexOf.call(th.parentNode.children, th);
    var rows = Array.prototype.slice.call(table.querySelectorAll("tr"), 1);
    var up = th.dataset.order !== "up";
    th.dataset.order = up ? "up" : "down";
    function key(row) {
      var cell = row.children[col];
      return cell.dataset.v !== undefined ? parseFloat(cell.dataset.v) : cell.textContent;
    }
    rows.sort(function (a, b) {
      var x = key(a), y = key(b);
      return (x < y ? -1 : x > y ? 1 : 0) * (up ? 1 : -1);
    });
    rows.forEach(function (row) { row.parentNode.appendChild(row); });
  });
});
"""


# ---------------------------------------------------------------------------------------------
# small helpers


def escape_html(text: object) -> str:
    """``text`` escaped for HTML, quotes included."""
    return html.escape(str(text), quote=True)


def millis(seconds: float | None, times: bool) -> str:
    """A time in milliseconds, a dash when times are hidden, ``not run`` for none."""
    if not times:
        return DASH
    if seconds is None:
        return "not run"
    return f"{seconds * 1e3:.3f} ms"


def plural(n: int, word: str) -> str:
    """``n word`` or ``n words``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def _ring(node: Node) -> str:
    try:
        ring = facts(node).ring
    except Exception:  # a graph a pass left broken: the heading still reads
        ring = None
    return "?" if ring is None else f"n={ring.n} L={len(ring.moduli)}"


def outputs(rec: RealizationRecord) -> str:
    """``2 x n=64 L=3``: the rings of the realization's outputs, counted."""
    counts = Counter(_ring(s) for s in rec.input.src)
    parts = [ring if n == 1 else f"{n} \u00d7 {ring}" for ring, n in counts.items()]
    noun = "output" if len(rec.input.src) == 1 else "outputs"
    return f"{noun} {', '.join(parts) or 'none'}"


def html_table(head: list[str], rows: Iterable[list[str]], num: Iterable[int] = ()) -> str:
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


def sortable(
    head: list[str], rows: Iterable[list[tuple[str, float | None]]], num: Iterable[int]
) -> str:
    """A table sorted by clicking a heading; each cell is ``(HTML, numeric sort key or None)``."""
    num = set(num)
    out = ['<table class="sortable">', "<tr>"]
    out += [f"<th{' class=num' if i in num else ''}>{h}</th>" for i, h in enumerate(head)]
    out.append("</tr>")
    for row in rows:
        cells = [
            f"<td{' class=num' if i in num else ''}"
            + ("" if key is None else f' data-v="{key:.9g}"')
            + f">{c}</td>"
            for i, (c, key) in enumerate(row)
        ]
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def rules_text(counts: list[tuple[str, int]]) -> str:
    """Rules with how many times each fired, or ``none``."""
    return ", ".join(f"{rule} \u00d7{n}" for rule, n in counts) or "none"


def created_text(nodes: frozenset[Node]) -> str:
    """How many nodes of each op ``nodes`` holds, most first."""
    counts = Counter(n.op.name for n in nodes)
    return ", ".join(
        f"{n} {op}" for op, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )


def kernels_and_names(rec: RealizationRecord) -> tuple[list[ScheduledKernel], dict[int, str]]:
    """The realization's kernels and buffer names.

    For one that was scheduled but never prepared (``schedule()`` called directly), the kernels
    are read off the graph after the last pass.
    """
    if rec.kernels or not rec.passes or rec.passes[-1].name != _LAST_PASS:
        return rec.kernels, rec.names
    kernels = kernels_of(rec.passes[-1].graph)
    return kernels, buffer_names(kernels)


def kernel_count(rec: RealizationRecord) -> str:
    """How many kernels the realization scheduled, and whether they ran."""
    kernels = kernels_and_names(rec)[0]
    return plural(len(kernels), "kernel") + ("" if rec.kernels else " (scheduled only, not run)")


def focus_set(trace: Trace, focus: Iterable[int] | None) -> set[int]:
    """The realizations shown open: ``focus``, or the biggest one."""
    if focus is not None:
        return set(focus)
    if not trace.realizations:
        return set()
    best = max(trace.realizations, key=lambda r: (len(r.kernels), len(r.passes), -r.index))
    return {best.index}


def label_map(trace: Trace, labels: dict[int, str] | None) -> dict[int, str]:
    """Each realization's label: ``labels``, and the jit captures named by their function."""
    out = dict(labels or {})
    for j, call in enumerate(trace.jit):
        for i in call.realizations:
            out.setdefault(i, f"jit capture of {call.function} (call {j})")
    return out


# ---------------------------------------------------------------------------------------------
# graphs


class Graphs:
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

    def want(self, text: str) -> None:
        """Ask for the picture of the graph ``text`` (drawn by :meth:`draw`)."""
        if self.program is not None:
            self.wanted[text] = None

    def draw(self) -> None:
        """Draw every picture asked for and not drawn yet, a few at once."""
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
        """The graph as inline SVG, or why it is not drawn (never its DOT text)."""
        svg = self.svgs.get(text)
        if svg is not None:
            return f'<div class="graph">\n{inline_svg(_slim(svg), prefix)}</div>'
        if not self.enabled:
            why = "Not drawn: graphs are not drawn in this report (svg=False)."
        elif self.missing:
            why = f"Not drawn: {INSTALL_NOTE}."
        else:
            error = escape_html(self.errors.get(text, "unknown error"))
            why = f"Not drawn: dot could not draw it ({error})."
        return f'<p class="note">{why}</p>'


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
