"""The report's region boxes: a region tree (``ren.viz.report.regions``) as HTML.

``tree_html`` draws the tree as nested boxes, collapsed: one box per region, children laid out in
rows by data flow (a box's row is one below the lowest row it reads from), each box a
``<details>`` element that expands in place; rows wrap, so the picture stays as wide as the page.
No script is needed to read or open it. ``region_table`` sums the boxes per region path into the
rows of one table. ``collapsed_html`` draws a graph too large to draw node by node as its regions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Literal, NotRequired, TypedDict

from ren.ir.node import Node, toposort
from ren.ir.region import region_name, region_of
from ren.viz.report.blocks import escape_html, millis, plural
from ren.viz.report.regions import Box, RegionNotes

__all__ = [
    "PRECISION_LABEL",
    "PRECISION_MEANING",
    "bits_text",
    "ckks_line",
    "collapsed_html",
    "fmt_bytes",
    "range_text",
    "region_table",
    "tree_html",
]


def fmt_bytes(n: float) -> str:
    """``512 B``, ``48.0 KiB``, ``3.2 MiB``, ``1.50 GiB``."""
    if n < 1024:
        return f"{n} B"
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            digits = 2 if unit == "GiB" else 1
            return f"{n / size:.{digits}f} {unit}"
    raise AssertionError("unreachable")


def _scale(value: float) -> str:
    return f"2^{math.log2(value):.1f}" if value > 0 else str(value)


def ckks_line(notes: RegionNotes) -> str:
    """``level 5 → 4 · scale 2^40.0 → 2^40.0`` from a region's notes (``""`` without them)."""
    levels = [str(v) for v in (notes.get("level_in"), notes.get("level_out")) if v is not None]
    scales = [_scale(v) for v in (notes.get("scale_in"), notes.get("scale_out")) if v is not None]
    parts = []
    for key, shown in (("level", levels), ("scale", scales)):
        if shown:  # in -> out, or the one there is (an encryption has no input ciphertext)
            parts.append(f"{key} " + " \u2192 ".join(shown))
    return " \u00b7 ".join(parts)


#: What a region's ``bits`` are measured against (the observing pass, ``ren.viz.precision``).
PRECISION_LABEL = "absolute, vs plaintext shadow"
#: What the figure is, where a heading or summary explains the label.
PRECISION_MEANING = "-log2 of the largest slot error, as ckks.precision_bits"
#: What a region's predicted figure (``bits_predicted``, ``noise_budget_predicted``) is.
PREDICTED_LABEL = "predicted by the noise model, nothing run"


def bits_text(notes: Mapping[str, object], label: bool = True) -> str:
    """The precision (or noise budget) the observing pass measured, in words (``""``: none).

    ``bits`` is absolute (``-log2`` of the largest slot error against the plaintext shadow, as
    ``ckks.precision_bits``), so labelled; where the values pass 1 the relative figure follows
    (``bits_relative``, against ``max |v|``, the ``magnitude`` note). ``label=False`` leaves the
    label out (a table says it once, in its heading).
    """
    bits, budget = notes.get("bits"), notes.get("noise_budget")
    if budget is not None:
        return f"noise budget {budget} bits" + _predicted(notes, "noise_budget_predicted", label)
    if bits is None:
        return ""
    text = "exact" if bits == math.inf else f"{bits:.1f} bits"
    if label:
        text += f" ({PRECISION_LABEL})"
    relative = notes.get("bits_relative")
    if relative is not None:
        size = notes.get("magnitude")
        against = f"max |v| = {size:.3g}" if label and size is not None else "max |v|"
        text += f"; {relative:.1f} relative to {against}"
    return text + _predicted(notes, "bits_predicted", label)


def _predicted(notes: Mapping[str, object], key: str, label: bool) -> str:
    """``"; predicted 24.8"`` (labelled: ``PREDICTED_LABEL``), or ``""`` without a prediction."""
    value = notes.get(key)
    if not isinstance(value, int | float):
        return ""
    text = "exact" if value == math.inf else f"{value:.1f}"
    return f"; predicted {text}" + (f" ({PREDICTED_LABEL})" if label else "")


def range_text(notes: Mapping[str, object]) -> str:
    """The ranges the region's output breaks (the observing pass's ``warning``), or ``""``."""
    warning = notes.get("warning")
    return f"out of range: {warning}" if warning else ""


class TreeHtml:
    """The nested boxes of one realization's region tree.

    ``graph_html(nodes, prefix)`` draws a box's full graph (the report's drawer); ``kernel_link``
    names a kernel and links to its source.
    """

    def __init__(
        self,
        prefix: str,
        times: bool,
        graph_html: Callable[[Box, str], str] | None,
        kernel_link: Callable[[int], str],
    ) -> None:
        self.prefix, self.times = prefix, times
        self.graph_html, self.kernel_link = graph_html, kernel_link

    def html(self, root: Box) -> str:
        opened = _default_open(root)
        out = ['<div class="regions">']
        out += self.rows(root, opened)
        out.append("</div>")
        return "\n".join(out)

    def rows(self, box: Box, opened: set[int]) -> list[str]:
        out = []
        rows: dict[int, list[Box]] = {}
        for child in box.children:
            rows.setdefault(child.row, []).append(child)
        for r, (_, row) in enumerate(sorted(rows.items())):
            if r:
                out.append('<div class="flow">\u2193</div>')
            out.append('<div class="row">')
            out += [self.box(child, box, opened) for child in row]
            out.append("</div>")
        return out

    def box(self, box: Box, parent: Box, opened: set[int]) -> str:
        lines = [
            f"<b>{escape_html(box.name)}</b>"
            if not box.loose
            else f"<i>{escape_html(box.name)}</i>"
        ]
        facts = [plural(len(box.kernels), "kernel"), millis(box.seconds, self.times)]
        facts.append(fmt_bytes(box.bytes) + " written")
        if box.key_bytes:
            facts.append(fmt_bytes(box.key_bytes) + " of keys")
        lines.append(" \u00b7 ".join(facts))
        if ckks := ckks_line(box.notes):
            lines.append(ckks)
        if technique := box.notes.get("key_switching"):  # ren.schemes.rlwe.keyswitch notes it
            digits = plural(box.notes.get("digits", 0), "digit")
            lines.append(escape_html(f"{technique} key switching \u00b7 {digits}"))
        if bits := bits_text(box.notes):
            lines.append(f'<span class="bits">{escape_html(bits)}</span>')
        if warning := range_text(box.notes):
            lines.append(f'<span class="range">{escape_html(warning)}</span>')
        elif inside := [d.name for d in box.walk() if d is not box and d.notes.get("warning")]:
            where = ", ".join(dict.fromkeys(inside))
            lines.append(f'<span class="range">out of range inside: {escape_html(where)}</span>')
        if box.sources:
            names = [parent.children[a].name for a in box.sources]
            shown = ", ".join(names[:3]) + (f" (+{len(names) - 3})" if len(names) > 3 else "")
            lines.append(f'<span class="muted">\u2190 {escape_html(shown)}</span>')
        summary = "<br>".join(lines)
        anchor = f"{self.prefix}-g{box.rank}"
        is_open = " open" if box.rank in opened else ""
        kind = " leaf" if not box.children else ""
        out = [f'<details class="box{kind}" id="{anchor}"{is_open}><summary>{summary}</summary>']
        if box.children:
            out.append('<div class="inner">')
            out += self.rows(box, opened)
            out.append("</div>")
        else:
            items = ", ".join(self.kernel_link(k) for k in box.kernels)
            out.append(f'<p class="kernels">{items}</p>')
        if self.graph_html is not None and box.nodes and not box.loose:
            out.append(self.graph_html(box, anchor))
        out.append("</details>")
        return "\n".join(out)


def _default_open(root: Box) -> set[int]:
    """The boxes open at first: down from the root while one region holds most of the kernels.

    Most is three quarters: a bootstrap with the encryption and decryption fused in its
    realization opens, showing its stages.
    """
    opened: set[int] = set()
    box = root
    while True:
        big = [c for c in box.children if c.children and 4 * len(c.kernels) >= 3 * len(box.kernels)]
        if not big:
            return opened
        box = big[0]
        opened.add(box.rank)


def tree_html(
    root: Box,
    prefix: str,
    times: bool,
    kernel_link: Callable[[int], str],
    graph_html: Callable[[Box, str], str] | None = None,
) -> str:
    """The region tree as nested boxes (see the module docstring)."""
    return TreeHtml(prefix, times, graph_html, kernel_link).html(root)


class _TableRow(TypedDict):
    """One row of ``region_table`` as it is summed: the lowest figures are kept where noted."""

    n: int
    kernels: int
    seconds: float | None
    bytes: int
    keys: int
    notes: RegionNotes  # the first instance's
    bits: NotRequired[float]
    noise_budget: NotRequired[float]
    bits_relative: NotRequired[float]
    bits_predicted: NotRequired[float]
    noise_budget_predicted: NotRequired[float]
    warnings: NotRequired[list[str]]


#: The figures ``region_table`` keeps the lowest of, over a path's instances.
_LOWEST: tuple[
    Literal["bits", "noise_budget", "bits_relative", "bits_predicted", "noise_budget_predicted"],
    ...,
] = ("bits", "noise_budget", "bits_relative", "bits_predicted", "noise_budget_predicted")


def region_table(root: Box, times: bool) -> list[tuple[str, list[tuple[str, float]]]]:
    """One row per region path: ``(path, [(cell text, sort value), ...])``, by first appearance.

    The cells: instances, kernels, time, bytes written, key bytes read, level and scale (of the
    first instance), precision (the lowest of its instances', absolute against the plaintext
    shadow: ``PRECISION_LABEL``; with the lowest relative figure where the values pass 1), and
    the ranges its outputs break.
    """
    rows: dict[tuple[str, ...], _TableRow] = {}
    for box in root.walk():
        if box is root or box.loose:
            continue
        row = rows.setdefault(
            box.path,
            {"n": 0, "kernels": 0, "seconds": None, "bytes": 0, "keys": 0, "notes": box.notes},
        )
        row["n"] += 1
        row["kernels"] += len(box.kernels)
        if box.seconds is not None:
            row["seconds"] = (row["seconds"] or 0.0) + box.seconds
        row["bytes"] += box.bytes
        row["keys"] += box.key_bytes
        for key in _LOWEST:
            value = box.notes.get(key)
            if value is not None:
                row[key] = min(row.get(key, math.inf), value)
        if warning := box.notes.get("warning"):
            row.setdefault("warnings", []).append(warning)
    out = []
    for path, row in rows.items():
        seconds = row["seconds"]
        bits, budget = row.get("bits"), row.get("noise_budget")
        shown: dict[str, object] = {key: row.get(key) for key in _LOWEST}
        warnings = row.get("warnings", [])
        cells = [
            (str(row["n"]), row["n"]),
            (str(row["kernels"]), row["kernels"]),
            (millis(seconds, times), (seconds or 0.0) if times else 0.0),
            (fmt_bytes(row["bytes"]), row["bytes"]),
            (fmt_bytes(row["keys"]) if row["keys"] else "-", row["keys"]),
            (ckks_line(row["notes"]) or "-", 0.0),
            (bits_text(shown, label=False) or "-", _rank(bits, budget)),
            ("; ".join(dict.fromkeys(warnings)) or "-", float(len(warnings))),
        ]
        out.append((region_name(path), cells))
    return out


def _rank(bits: float | None, budget: float | None) -> float:
    """The sort key of the precision column: the bits or the budget, -1 for neither."""
    value = budget if budget is not None else bits
    return -1.0 if value is None else min(float(value), 1e9)


def collapsed_html(graph: Node, limit: int, created: Iterable[Node] = frozenset()) -> str:
    """A graph too large to draw, collapsed to its regions: one box per region with its nodes.

    The regions are those one level below the deepest region every node shares; nodes in none
    are counted together. Says so, and how to see more.
    """
    order = toposort(graph)
    made = frozenset(created)
    paths = [tuple(region_of(n)) for n in order]
    common = _common_prefix([p for p in paths if p])
    depth = len(common) + 1
    groups: dict[tuple[str, ...], list[int]] = {}
    for path, node in zip(paths, order, strict=True):
        key = path[:depth] if path[: len(common)] == common and len(path) >= depth else ()
        counts = groups.setdefault(key, [0, 0])
        counts[0] += 1
        counts[1] += node in made
    head = (
        f"<p>{plural(len(order), 'node')}, more than {limit}: too large to draw here, so it is "
        "drawn collapsed to its regions (<code>ren.region</code>), with each region's node count"
        + (" and the nodes the pass created" if made else "")
        + ".</p>"
    )
    if list(groups) == [()]:
        return (
            f"<p>{plural(len(order), 'node')}, more than {limit}, in no region: too large to "
            "draw here. Build the program's parts inside <code>with ren.region(name):</code> "
            "blocks and the report draws it collapsed to them; "
            "<code>ren.ir.dot.to_dot</code> gives the DOT text to draw it yourself.</p>"
        )
    boxes = []
    for key, (nodes, new) in groups.items():
        name = region_name(key) if key else "(in no region)"
        extra = f", {new} created" if made else ""
        boxes.append(
            f'<div class="box flat"><b>{escape_html(name)}</b><br>{nodes} nodes{extra}</div>'
        )
    return head + '\n<div class="regions"><div class="row">' + "\n".join(boxes) + "</div></div>"


def _common_prefix(paths: list[tuple[str, ...]]) -> tuple[str, ...]:
    if not paths:
        return ()
    first = paths[0]
    n = len(first)
    for p in paths[1:]:
        n = min(n, len(p))
        while n and p[:n] != first[:n]:
            n -= 1
    # keep one level for the boxes: a prefix as deep as a whole path would leave nothing
    return first[: max(0, min(n, min(len(p) for p in paths) - 1))]
