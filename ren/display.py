"""Rich displays: the HTML a Ren object shows itself as in a notebook.

Jupyter (and any front end that reads ``_repr_html_``) shows a ``Poly``, a ciphertext or a
parameter set as a small box: a title line, a table of what it is, and for a lazy value the graph
it will compute. This module holds the pieces every display is made of, and the ``Poly``'s own:

* each display is plain HTML with inline styles and, at most, an inline SVG: no script, no link,
  no font or style fetched, so it shows the same offline and in an exported page;
* each is at most ``LIMIT`` bytes: tables show the first words, a graph past ``GRAPH_NODES`` nodes
  is counted by op instead of drawn, and a display that would still be larger is cut with a note;
* a display never computes: a lazy ``Poly`` shows its graph, not its value, and a ciphertext its
  level and scale, never its slots (those take a decryption, which the user asks for).

Graphs are drawn by Graphviz's ``dot`` when it is installed (the same drawing as ``REN_DUMP``);
without it a display lists the graph's ops and says why there is no picture.
"""

from __future__ import annotations

import collections
import html
import shutil
import subprocess
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ren.ir.dot import to_dot
from ren.ir.node import Node, toposort

if TYPE_CHECKING:
    from ren.capture.plan import CapturedPlan
    from ren.poly import Poly

__all__ = [
    "GRAPH_NODES",
    "LENT",
    "LIMIT",
    "Display",
    "arena_table",
    "box",
    "esc",
    "fields",
    "graph",
    "jit_html",
    "loaded_html",
    "plan_html",
    "poly_html",
    "table",
]

#: The most bytes one display takes; past it the display is cut and says so.
LIMIT = 200_000
#: The most nodes a lazy value's graph is drawn with; past it, a count of its ops.
GRAPH_NODES = 60
#: Words and limbs a ``Poly`` display shows (the first of each).
WORDS, LIMBS = 8, 6

#: Pictures lent by the floors above, by kind: ``"memory_plan"``, ``(DevicePlan, kernel names,
#: title) -> SVG``, which ``ren`` registers from ``ren.viz`` (imported on first use). A display
#: whose picture is not lent says so and shows its table.
LENT: dict[str, Callable[..., str]] = {}

_BOX = (
    "border:1px solid #b0bec5;border-radius:4px;padding:6px 10px;margin:4px 0;"
    "font-family:sans-serif;font-size:13px;max-width:100%;overflow-x:auto"
)
_CELL = "border:1px solid #cfd8dc;padding:2px 6px;text-align:right;font-family:monospace"
_HEAD = "border:1px solid #cfd8dc;padding:2px 6px;background:#eceff1;text-align:left"


class Display:
    """A display on its own: its HTML for a notebook, its text for a terminal and a script.

    What ``ren.viz`` returns for a notebook to show (a pass's graphs before and after, a memory
    plan, a debugger's step): the last line of a cell shows ``html``; ``print`` and ``repr`` give
    ``text``, so the same line in a script prints something readable.
    """

    __slots__ = ("html", "text")

    def __init__(self, html: str, text: str) -> None:
        self.html = html
        self.text = text

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


def esc(value: object) -> str:
    """``str(value)`` escaped for HTML text and attributes."""
    return html.escape(str(value), quote=True)


def _numeric(value: object) -> bool:
    """Whether a cell reads as a number (an int or float, or text of one): aligned right."""
    if isinstance(value, (int, float)):
        return True
    try:
        float(str(value).replace(",", ""))
    except ValueError:
        return False
    return True


def table(header: Sequence[object], rows: Sequence[Sequence[object]], caption: str = "") -> str:
    """An HTML table: ``header`` cells, then ``rows``, every cell escaped.

    A cell that reads as a number is aligned right, any other left.
    """
    head = "".join(f'<th style="{_HEAD}">{esc(h)}</th>' for h in header)
    left = f"{_CELL};text-align:left"
    body = "".join(
        "<tr>"
        + "".join(f'<td style="{_CELL if _numeric(c) else left}">{esc(c)}</td>' for c in row)
        + "</tr>"
        for row in rows
    )
    cap = f'<caption style="text-align:left;color:#546e7a">{esc(caption)}</caption>'
    return (
        f'<table style="border-collapse:collapse;margin:4px 0">{cap if caption else ""}'
        f"<tr>{head}</tr>{body}</table>"
    )


def fields(pairs: Sequence[tuple[str, object]]) -> str:
    """A two-column table of names and values, the names as row headers."""
    rows = "".join(
        f'<tr><th style="{_HEAD}">{esc(k)}</th><td style="{_CELL};text-align:left">{esc(v)}</td>'
        "</tr>"
        for k, v in pairs
    )
    return f'<table style="border-collapse:collapse;margin:4px 0">{rows}</table>'


def box(title: str, *parts: str) -> str:
    """A display: ``title`` in bold over ``parts`` (HTML), cut to ``LIMIT`` bytes with a note."""
    text = f'<div style="{_BOX}"><b>{esc(title)}</b>{"".join(parts)}</div>'
    if len(text.encode()) <= LIMIT:
        return text
    note = (
        f'<div style="{_BOX}"><b>{esc(title)}</b><p>(this display is larger than {LIMIT} bytes '
        "and is not shown whole; print the object, or look with ren.viz)</p></div>"
    )
    return note


def graph(root: Node, limit: int = GRAPH_NODES) -> str:
    """The graph below ``root`` as an inline SVG (Graphviz's drawing).

    Past ``limit`` nodes, or without Graphviz, a table of how many nodes of each op it holds
    and why it is not drawn.
    """
    nodes = toposort(root)
    why = ""
    if len(nodes) > limit:
        why = f"{len(nodes)} nodes, more than the {limit} a display draws"
    elif shutil.which("dot") is None:
        why = "Graphviz's dot is not installed (apt-get install graphviz)"
    else:
        try:
            done = subprocess.run(
                ["dot", "-Tsvg"], input=to_dot(root), capture_output=True, text=True, timeout=10
            )
        except (OSError, subprocess.SubprocessError) as e:
            why = f"dot failed: {e}"
        else:
            if done.returncode == 0 and "<svg" in done.stdout:
                return _svg_only(done.stdout)
            why = f"dot failed: {done.stderr.strip()[:200]}"
    counts = collections.Counter(n.op.name for n in nodes)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return table(("op", "nodes"), rows, caption=f"the graph, not drawn: {why}")


def _svg_only(svg: str) -> str:
    """The ``<svg>`` element of Graphviz's output: no XML declaration, no doctype, no comments."""
    start = svg.index("<svg")
    body = svg[start:]
    while "<!--" in body:
        a = body.index("<!--")
        b = body.index("-->", a) + 3
        body = body[:a] + body[b:]
    return f'<div style="max-width:100%;overflow-x:auto">{body}</div>'


def poly_html(p: Poly) -> str:
    """A ``Poly``'s display (``Poly._repr_html_``): what it is, and its words or its graph.

    A stored value shows the first ``WORDS`` residues of its first ``LIMBS`` limbs (plain, as
    ``limbs()`` gives them; memory holds them in Montgomery form). A lazy value shows the graph
    it will compute; nothing is computed.
    """
    ring = p.ring
    bits = " + ".join(str(q.bit_length()) for q in ring.moduli)
    state = "stored" if p.realized else f"lazy ({p.node.op.name}: computed when needed)"
    info = fields(
        [
            ("ring", f"n = {ring.n}, {ring.L} moduli ({bits} bits), {ring.dtype} words"),
            ("domain", p.domain.value),
            ("device", p.device),
            ("value", state),
        ]
    )
    if not p.realized:
        return box("Poly", info, graph(p.node))
    residues = p.limbs()
    shown = min(WORDS, ring.n)
    header = ["modulus", *(f"[{k}]" for k in range(shown))] + (["..."] if ring.n > shown else [])
    rows: list[list[object]] = [
        [q, *(int(x) for x in residues[i, :shown])] + (["..."] if ring.n > shown else [])
        for i, q in enumerate(ring.moduli[:LIMBS])
    ]
    if ring.L > LIMBS:
        rows.append([f"... {ring.L - LIMBS} more limbs", *[""] * (len(header) - 1)])
    where = "slots in NTT order" if p.domain.value == "ntt" else "coefficients"
    words = table(header, rows, caption=f"residues mod each q_i ({where}), the first {shown}")
    return box("Poly", info, words)


def arena_table(devices: Sequence[Any]) -> str:
    """The arena of each device plan (``DevicePlan``): bytes, lower bound, unshared, buffers."""
    rows = [
        (d.device, d.arena_bytes, d.lower_bound_bytes, d.unshared_bytes, len(d.buffers))
        for d in devices
    ]
    head = ("device", "arena bytes", "lower bound", "unshared", "buffers")
    return table(head, rows, caption="the arena: temporaries packed by the planner")


def plan_html(
    plan: CapturedPlan, rows: Sequence[tuple[str, object]], title: str, memory: Any = None
) -> str:
    """A captured plan's display: ``rows``, its kernels by family, its arena and its picture.

    The picture is the memory plan's (``LENT["memory_plan"]``: ``ren.viz.plan_svg`` in its
    compact form, every buffer drawn with a tooltip on the largest only) for the first device;
    one past half of ``LIMIT`` is left out with a note.
    ``memory`` is the plan's ``MemoryPlan`` when not ``plan.memory`` (a loaded plan's, read from
    its file).
    """
    devices = (plan.memory if memory is None else memory).devices
    kinds = collections.Counter(u.kernel.info.kind for u in plan.units)
    info = [
        *rows,
        ("exec units", f"{len(plan.units)}: " + ", ".join(f"{k} {n}" for k, n in kinds.items())),
        ("inputs", f"{sum(plan.inputs)} buffers, {len(plan.inputs) - sum(plan.inputs)} constants"),
        ("runner", plan.runner_kind),
    ]
    parts = [fields(info)]
    if devices:
        parts.append(arena_table(devices))
        draw = LENT.get("memory_plan")
        if draw is None:
            parts.append("<p>(the memory picture: import ren)</p>")
        else:
            names = [u.kernel.info.name for u in plan.units]
            svg = draw(devices[0], names, f"memory plan: {title}")
            if len(svg.encode()) <= LIMIT // 2:
                parts.append(f'<div style="max-width:100%;overflow-x:auto">{svg}</div>')
            else:
                parts.append(
                    f"<p>(the memory picture takes {len(svg.encode())} bytes, more than a display "
                    "shows: python -m ren.viz memory draws it to a file)</p>"
                )
    return box(title, *parts)


def jit_html(fn: Any) -> str:
    """A ``ren.jit`` function's display: its captures and replays, and its latest plan."""
    hits, misses, most, held = fn.cache_info()
    rows = [("calls", f"{misses} captured, {hits} replayed; {held} plans held (at most {most})")]
    if fn.last is None:
        return box(f"ren.jit {fn.name}", fields([*rows, ("latest plan", "none: not called yet")]))
    return plan_html(fn.last, rows, f"ren.jit {fn.name}")


def loaded_html(loaded: Any) -> str:
    """A loaded plan's display (``ren.load``): its fingerprint and manifest, then the plan."""
    data, manifest = loaded.data, loaded.data["manifest"]
    rows = [
        ("saved by", f"Ren {data['ren']} (format {data['version']})"),
        ("fingerprint", data["fingerprint"]),
        ("manifest", f"{len(manifest['inputs'])} inputs, {len(manifest['outputs'])} outputs, "
         f"stored: {', '.join(manifest['stored']) or 'none'}"),
    ]  # fmt: skip
    return plan_html(loaded.plan, rows, loaded.name, loaded.memory)
