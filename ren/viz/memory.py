"""The memory plan as a picture: every planned buffer placed in its arena, over the kernels.

The memory planner (``ren/engine/memory.py``, ``docs/memory.md``) puts the temporaries of a
schedule into one arena per device; its result is plain data, a ``MemoryPlan`` with one
``DevicePlan`` per device. This module draws a ``DevicePlan``:

* **across** (x): the kernels of the schedule in the order they run, one column each;
* **down** (y): the offset in the arena, in bytes, from 0 at the top;
* each planned buffer is a rectangle from column ``first`` to column ``last`` (inclusive) and from
  ``offset`` to ``offset + nbytes``. Two buffers whose lifetimes overlap never share bytes, so
  their rectangles never overlap; a buffer drawn in the rows of an earlier one reuses its bytes;
* the arena (``arena_bytes``) is outlined, and a dashed line marks the lower bound (the most bytes
  live at once): the space between the two is what the allocator lost to fragmentation.

``plan_svg`` writes a self-contained SVG (no script, no external font or link; hovering over a
buffer or a column shows a tooltip). ``plans_svg`` does it for every device of a ``MemoryPlan``,
and ``plan_text`` draws the same picture with one character per cell for a terminal::

    from ren.engine.realize import realize_nodes
    from ren.viz.memory import plan_svg, plan_text

    ctx = realize_nodes((out.node,))
    arena = ctx.memory_plan.devices[0]
    print(plan_text(arena))
    Path("plan.svg").write_text(plan_svg(arena))

Buffers are named ``b0, b1, ...`` in the order of ``buffer_order`` (by first kernel, then offset),
never by their ``buffer_id``: ids come from a global counter and differ from run to run, while the
picture of the same program is the same bytes every time.
"""

from __future__ import annotations

import colorsys
import math
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from ren.engine.memory import ALIGN, DevicePlan, MemoryPlan, PlannedBuffer

__all__ = [
    "Scale",
    "buffer_order",
    "plan_scale",
    "plan_svg",
    "plan_text",
    "plans_svg",
    "symbol",
]

#: Pixels per kernel column, before the total width is clamped.
COLUMN_WIDTH = 24.0
#: The plot (the columns, without the margins) is at least and at most this many pixels wide.
MIN_PLOT_WIDTH, MAX_PLOT_WIDTH = 240.0, 1200.0
#: The arena is drawn this many pixels tall, or taller (up to the maximum) so that the smallest
#: buffer is at least ``LABEL_HEIGHT`` pixels.
PLOT_HEIGHT, MAX_PLOT_HEIGHT, LABEL_HEIGHT = 360.0, 960.0, 12.0
#: No buffer is drawn less tall than this (where the space below it is free).
MIN_RECT_HEIGHT = 3.0
#: The margins around the plot, in pixels: axis labels on the left, the arena and lower bound
#: labels on the right, the title and summary above, kernel numbers (and names) below.
LEFT, RIGHT, TOP, BOTTOM = 72.0, 150.0, 86.0, 34.0
#: Pixels per character assumed for the text above the plot (10 px and 14 px sans-serif), so the
#: picture is made wide enough for it.
CHAR_WIDTH, TITLE_CHAR_WIDTH = 6.0, 9.0
#: Kernel names are written (rotated) under their columns when columns are at least this wide.
NAME_COLUMN_WIDTH = 10.0
#: Characters of a kernel name written under its column (the tooltip has the whole name).
NAME_CHARS = 28

_SYMBOLS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


# --------------------------------------------------------------------------------------------
# names, colours, sizes


def buffer_order(plan: DevicePlan) -> list[PlannedBuffer]:
    """The plan's buffers in drawing order: by first kernel, then offset, last kernel, size.

    Buffer ``i`` of this list is drawn as ``b{i}`` with ``symbol(i)`` and colour ``i``. The order
    depends only on where and when the buffers live, never on ``buffer_id``, so the same program
    planned twice is drawn the same.
    """
    return sorted(plan.buffers, key=lambda p: (p.first, p.offset, p.last, p.nbytes))


def symbol(i: int) -> str:
    """The character of buffer ``i`` in ``plan_text``: ``0-9``, ``a-z``, ``A-Z``, then again."""
    return _SYMBOLS[i % len(_SYMBOLS)]


def _colour(i: int) -> str:
    """A light fill for buffer ``i``: hues a golden angle apart, so neighbours differ."""
    hue = (i * 0.381966) % 1.0
    lightness = (0.72, 0.62, 0.80)[i % 3]
    r, g, b = colorsys.hls_to_rgb(hue, lightness, 0.55)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def _bytes(n: float) -> str:
    """``n`` bytes in the largest unit that keeps it at least 1: ``"512 B"``, ``"1.5 KiB"``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            text = f"{n:.2f}".rstrip("0").rstrip(".")
            return f"{text} {unit}"
        n /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def _num(v: float) -> str:
    """A coordinate with at most two decimals and no trailing zeros (stable across runs)."""
    text = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _ratio(plan: DevicePlan) -> float:
    return plan.arena_bytes / plan.lower_bound_bytes if plan.lower_bound_bytes else 1.0


def _columns(plan: DevicePlan, kernels: list[str] | None) -> int:
    """Kernels to draw: the schedule's (when named), and at least every kernel the plan uses."""
    used = [p.last + 1 for p in plan.buffers] + [e.step + 1 for e in plan.events]
    return max([len(kernels or ()), 1, *used])


def _facts(plan: DevicePlan) -> str:
    """The exact numbers: arena, lower bound and unshared total, in bytes."""
    return (
        f"arena {plan.arena_bytes} B, lower bound {plan.lower_bound_bytes} B, "
        f"unshared {plan.unshared_bytes} B"
    )


def _counts(plan: DevicePlan, columns: int) -> str:
    """How many buffers over how many kernels, and the ratio arena / lower bound."""
    n = len(plan.buffers)
    return (
        f"{n} buffer{'s' * (n != 1)} over {columns} kernel{'s' * (columns != 1)}, "
        f"arena / lower bound {_ratio(plan):.2f}x"
    )


# --------------------------------------------------------------------------------------------
# the scale


@dataclass(frozen=True)
class Scale:
    """Where things go in a ``plan_svg`` picture.

    Kernel ``k`` spans ``x(k)`` to ``x(k + 1)``; arena offset ``b`` is at height ``y(b)``. A buffer
    is drawn from ``x(first)`` to ``x(last + 1)`` and from ``y(offset)`` to
    ``y(offset + nbytes)``, made at least ``MIN_RECT_HEIGHT`` tall where the space below it is
    free (not used by a buffer alive at the same time).

    Attributes:
        columns: the number of kernel columns.
        column_width: pixels per column.
        extent_bytes: the bytes the y axis covers: the arena (or the lower bound, if larger).
        pixels_per_byte: vertical pixels per byte.
        left: x of column 0.
        top: y of offset 0.
        plot_width: ``columns * column_width``.
        plot_height: ``extent_bytes * pixels_per_byte``.
        width: the SVG's width in pixels.
        height: the SVG's height in pixels.
        names: whether kernel names are written under the columns.
    """

    columns: int
    column_width: float
    extent_bytes: int
    pixels_per_byte: float
    left: float
    top: float
    plot_width: float
    plot_height: float
    width: int
    height: int
    names: bool

    def x(self, column: float) -> float:
        """The x of the left edge of kernel ``column``."""
        return self.left + column * self.column_width

    def y(self, offset: float) -> float:
        """The y of arena byte ``offset``."""
        return self.top + offset * self.pixels_per_byte


def _header(plan: DevicePlan, columns: int, title: str) -> list[str]:
    """The lines above the plot: the title, the summary, the exact bytes, the counts."""
    heading = title or f"memory plan: {plan.device}"
    return [heading, plan.summary(), _facts(plan), _counts(plan, columns)]


def plan_scale(plan: DevicePlan, kernels: list[str] | None = None, title: str = "") -> Scale:
    """The scale ``plan_svg(plan, kernels)`` draws with.

    Columns are ``COLUMN_WIDTH`` pixels, unless the plot would then be narrower than
    ``MIN_PLOT_WIDTH`` or wider than ``MAX_PLOT_WIDTH``: then the columns share that width.
    The arena is ``PLOT_HEIGHT`` pixels tall, or taller, up to ``MAX_PLOT_HEIGHT``, so that the
    smallest buffer is ``LABEL_HEIGHT`` pixels; heights are proportional to bytes. The picture
    is widened, when needed, to hold the text above the plot.

    Args:
        plan: one device's arena.
        kernels: the schedule's kernel names, one per column (optional).
        title: the title ``plan_svg`` is given (it may widen the picture).

    Returns:
        The scale, with the picture's size.
    """
    columns = _columns(plan, kernels)
    plot_width = min(max(columns * COLUMN_WIDTH, MIN_PLOT_WIDTH), MAX_PLOT_WIDTH)
    column_width = plot_width / columns
    extent = max(plan.arena_bytes, plan.lower_bound_bytes, 1)
    smallest = min((p.nbytes for p in plan.buffers if p.nbytes > 0), default=extent)
    plot_height = min(max(PLOT_HEIGHT, extent * LABEL_HEIGHT / smallest), MAX_PLOT_HEIGHT)
    names = bool(kernels) and column_width >= NAME_COLUMN_WIDTH
    longest = min(max((len(k) for k in kernels or ()), default=0), NAME_CHARS)
    bottom = BOTTOM + (longest * 6.0 + 8.0 if names else 0.0)
    heading, *lines = _header(plan, columns, title)
    text_width = max(len(heading) * TITLE_CHAR_WIDTH, *(len(t) * CHAR_WIDTH for t in lines))
    return Scale(
        columns=columns,
        column_width=column_width,
        extent_bytes=extent,
        pixels_per_byte=plot_height / extent,
        left=LEFT,
        top=TOP,
        plot_width=plot_width,
        plot_height=plot_height,
        width=math.ceil(max(LEFT + plot_width + RIGHT, 16 + text_width)),
        height=math.ceil(TOP + plot_height + MIN_RECT_HEIGHT + bottom),
        names=names,
    )


def _boxes(order: list[PlannedBuffer], scale: Scale) -> list[tuple[float, float, float, float]]:
    """Each buffer's rectangle ``(x, y, width, height)``: the plan's bytes.

    A rectangle is made at least ``MIN_RECT_HEIGHT`` tall only into space no buffer alive at the
    same time uses.
    """
    boxes = []
    for p in order:
        y, h = scale.y(p.offset), p.nbytes * scale.pixels_per_byte
        below = [
            scale.y(q.offset)
            for q in order
            if q is not p and q.first <= p.last and p.first <= q.last and q.offset >= p.offset
        ]
        room = min(below, default=math.inf) - y
        h = max(h, min(MIN_RECT_HEIGHT, room))
        width = (p.last - p.first + 1) * scale.column_width
        boxes.append((scale.x(p.first), y, width, h))
    return boxes


# --------------------------------------------------------------------------------------------
# SVG


def _text(x: float, y: float, body: str, **attrs: str) -> str:
    extra = "".join(f" {k.replace('_', '-')}={quoteattr(v)}" for k, v in attrs.items())
    return f'<text x="{_num(x)}" y="{_num(y)}"{extra}>{escape(body)}</text>'


def _kernel_name(kernels: list[str] | None, k: int) -> str:
    return f"kernel {k}" + (f" ({kernels[k]})" if kernels and k < len(kernels) else "")


def _tooltip(name: str, p: PlannedBuffer, kernels: list[str] | None) -> str:
    life = f"kernel {p.first}" if p.first == p.last else f"kernels {p.first}-{p.last}"
    lines = [
        f"{name}: {p.nbytes} B ({_bytes(p.nbytes)}), {p.size} x {p.dtype}",
        f"offset {p.offset} to {p.offset + p.nbytes}",
        f"alive {life}",
    ]
    if kernels:
        lines.append(f"first: {_kernel_name(kernels, p.first)}")
        lines.append(f"last: {_kernel_name(kernels, p.last)}")
    return "\n".join(lines)


def _every(column_width: float, pixels: float) -> int:
    """The smallest step of 1, 2, 5, 10, 20, 50, ... columns at least ``pixels`` wide."""
    step = 1
    while step * column_width < pixels:
        step = step * 5 // 2 if str(step)[0] == "2" else step * 2
    return step


def _y_ticks(extent: int) -> list[int]:
    """Offsets to label on the y axis: multiples of a power of two, at most 8 steps."""
    step = 1 << max(0, math.ceil(math.log2(extent / 8))) if extent > 8 else 1
    return list(range(0, extent + 1, step))


def plan_svg(plan: DevicePlan, kernels: list[str] | None = None, title: str = "") -> str:
    """Draw one device's arena as a self-contained SVG (see the module docstring).

    Args:
        plan: one device's arena, such as ``ctx.memory_plan.devices[0]``.
        kernels: the names of the schedule's kernels, in order (``k.info.name``); shown under the
            columns when they are wide enough, and in the tooltips. Without it, columns are
            numbered only.
        title: the first line written on the picture (default: ``memory plan: <device>``).

    Returns:
        The SVG document, ending with a newline. The same plan gives the same bytes.
    """
    scale = plan_scale(plan, kernels, title)
    order = buffer_order(plan)
    left, top, plot_w = scale.left, scale.top, scale.plot_width
    arena_y, bound_y = scale.y(plan.arena_bytes), scale.y(plan.lower_bound_bytes)
    heading, summary, facts, counts = _header(plan, scale.columns, title)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{scale.width}" height="{scale.height}" '
        f'viewBox="0 0 {scale.width} {scale.height}" font-family="sans-serif" font-size="10">',
        f"<title>{escape(heading)}</title>",
        f'<rect width="{scale.width}" height="{scale.height}" fill="#ffffff"/>',
        _text(8, 18, heading, font_size="14", font_weight="bold"),
        _text(8, 36, summary, class_="summary"),
        _text(8, 52, facts, class_="facts"),
        _text(8, 66, counts, class_="counts"),
    ]
    # the columns: alternate shades, a tooltip naming the kernel
    out.append('<g class="kernels">')
    for k in range(scale.columns):
        fill = "#f2f2f2" if k % 2 == 0 else "#ffffff"
        out.append(
            f'<rect class="kernel" x="{_num(scale.x(k))}" y="{_num(top)}" '
            f'width="{_num(scale.column_width)}" height="{_num(scale.plot_height)}" '
            f'fill="{fill}"><title>{escape(_kernel_name(kernels, k))}</title></rect>'
        )
    out.append("</g>")
    # the y axis: offsets in bytes
    out.append('<g class="y-axis" text-anchor="end">')
    for b in _y_ticks(scale.extent_bytes):
        y = scale.y(b)
        out.append(
            f'<line x1="{_num(left - 4)}" y1="{_num(y)}" x2="{_num(left)}" y2="{_num(y)}" '
            'stroke="#666666"/>'
        )
        out.append(_text(left - 6, y + 3.5, _bytes(b)))
    out.append("</g>")
    mid = top + scale.plot_height / 2
    out.append(
        _text(
            14, mid, "arena offset", text_anchor="middle", transform=f"rotate(-90 14 {_num(mid)})"
        )
    )
    # the x axis: kernel numbers (and names)
    axis_y = top + scale.plot_height + MIN_RECT_HEIGHT
    out.append('<g class="x-axis" text-anchor="middle">')
    for k in range(0, scale.columns, _every(scale.column_width, 24.0)):
        out.append(_text(scale.x(k + 0.5), axis_y + 12, str(k)))
    out.append(_text(left + plot_w / 2, axis_y + 26, "kernel"))
    out.append("</g>")
    if scale.names and kernels:
        out.append('<g class="kernel-names" font-size="9">')
        for k, name in enumerate(kernels):
            x, y = scale.x(k + 0.5) - 3, axis_y + 34
            short = name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "~"
            out.append(_text(x, y, short, transform=f"rotate(90 {_num(x)} {_num(y)})"))
        out.append("</g>")
    # the buffers
    out.append('<g class="buffers" stroke="#333333" stroke-width="0.5">')
    labels = []
    for i, (p, (x, y, w, h)) in enumerate(zip(order, _boxes(order, scale), strict=True)):
        name = f"b{i}"
        out.append(
            f'<rect class="buffer" id="{name}" x="{_num(x)}" y="{_num(y)}" width="{_num(w)}" '
            f'height="{_num(h)}" fill="{_colour(i)}">'
            f"<title>{escape(_tooltip(name, p, kernels))}</title></rect>"
        )
        if w >= 16 and h >= 11:
            text = name
            if w >= 7 * len(f"{name} {_bytes(p.nbytes)}") and h >= 11:
                text = f"{name} {_bytes(p.nbytes)}"
            labels.append(_text(x + w / 2, y + min(h / 2, 14) + 3.5, text))
    out.append("</g>")
    out.append('<g class="labels" text-anchor="middle" fill="#111111">')
    out.extend(labels)
    out.append("</g>")
    # the arena's outline and the lower bound
    right = left + plot_w
    out.append(
        f'<rect class="arena" x="{_num(left)}" y="{_num(top)}" width="{_num(plot_w)}" '
        f'height="{_num(arena_y - top)}" fill="none" stroke="#000000" stroke-width="1.5"/>'
    )
    out.append(
        f'<line class="lower-bound" x1="{_num(left)}" y1="{_num(bound_y)}" x2="{_num(right)}" '
        f'y2="{_num(bound_y)}" stroke="#cc0000" stroke-width="1.5" stroke-dasharray="6 4"/>'
    )
    arena_label_y = arena_y + 3.5
    bound_label_y = bound_y + 3.5
    if abs(arena_label_y - bound_label_y) < 12:  # equal or close: one above the other
        arena_label_y, bound_label_y = min(arena_y, bound_y) - 4, max(arena_y, bound_y) + 11
    out.append(_text(right + 6, arena_label_y, f"arena {_bytes(plan.arena_bytes)}"))
    out.append(
        _text(
            right + 6,
            bound_label_y,
            f"lower bound {_bytes(plan.lower_bound_bytes)}",
            fill="#cc0000",
        )
    )
    if not order:
        out.append(_text(left + plot_w / 2, top + 20, "no planned buffers", text_anchor="middle"))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def plans_svg(plan: MemoryPlan, kernels: list[str] | None = None) -> list[tuple[str, str]]:
    """Draw every device's arena of a plan.

    Args:
        plan: a realization's plan, such as ``ctx.memory_plan``.
        kernels: the schedule's kernel names, in order (one schedule numbers the kernels of
            every device).

    Returns:
        ``(device, svg)`` for each device, in the plan's order; ``[]`` when nothing was planned.
    """
    return [(d.device, plan_svg(d, kernels)) for d in plan.devices]


# --------------------------------------------------------------------------------------------
# text


def plan_text(plan: DevicePlan, width: int = 72, height: int = 16) -> str:
    """Draw one device's arena with characters, for a terminal.

    One row per band of offsets (a power of two of bytes, so at most about ``height`` rows), one
    column per kernel (several kernels per column when they do not fit in ``width``). A cell shows
    ``symbol(i)`` of the buffer ``b{i}`` that covers most of it, ``.`` where no buffer is.
    The right border is ``<`` on the row where the lower bound falls. Above: the same summary as
    the SVG; below: a key from symbols to buffers (when there are at most 62).

    Args:
        plan: one device's arena.
        width: the most characters per line of the picture.
        height: about how many rows of bytes to draw.

    Returns:
        The lines, joined with newlines, ending with a newline.
    """
    order = buffer_order(plan)
    columns = _columns(plan, None)
    extent = max(plan.arena_bytes, plan.lower_bound_bytes, 1)
    band = max(ALIGN, 1 << max(0, math.ceil(math.log2(extent / max(height, 1)))))
    rows = -(-extent // band)
    labels = [_bytes(r * band) for r in range(rows)]
    label_w = max(len(s) for s in [*labels, "offset"])
    cols = max(1, min(columns, width - label_w - 3))
    starts = [c * columns // cols for c in range(cols + 1)]  # column c: kernels [starts[c], ...)
    best: dict[tuple[int, int], tuple[int, int]] = {}  # cell -> (-coverage, buffer)
    for i, p in enumerate(order):
        end = p.offset + p.nbytes
        for r in range(p.offset // band, min(rows, -(-end // band))):
            cover_b = min(end, (r + 1) * band) - max(p.offset, r * band)
            for c in range(cols):
                lo, hi = starts[c], starts[c + 1]
                cover_k = min(hi, p.last + 1) - max(lo, p.first)
                if cover_b > 0 and cover_k > 0:
                    key = (-cover_b * cover_k, i)
                    best[(r, c)] = min(best.get((r, c), key), key)
    bound_row = (plan.lower_bound_bytes - 1) // band if plan.lower_bound_bytes else -1
    lines = [plan.summary(), _facts(plan), _counts(plan, columns)]
    ruler = [" "] * cols
    free_at = 0
    for c in range(0, cols):
        mark = str(starts[c])
        if c % 5 == 0 and c >= free_at and c + len(mark) <= cols:
            ruler[c : c + len(mark)] = mark
            free_at = c + len(mark) + 1
    lines.append(f"{'kernel':>{label_w}}  {''.join(ruler).rstrip()}")
    lines.append(f"{'offset':>{label_w}} +{'-' * cols}+")
    for r in range(rows):
        cells = "".join(symbol(best[(r, c)][1]) if (r, c) in best else "." for c in range(cols))
        lines.append(f"{labels[r]:>{label_w}} |{cells}{'<' if r == bound_row else '|'}")
    lines.append(f"{'':>{label_w}} +{'-' * cols}+")
    per = "one kernel" if cols == columns else f"{columns / cols:.2f} kernels"
    lines.append(f"one row: {_bytes(band)}, one column: {per}, '.': free")
    lines.append(
        f"'<': the row of the lower bound ({_bytes(plan.lower_bound_bytes)}); "
        f"the arena is {_bytes(plan.arena_bytes)}"
    )
    if order and len(order) <= len(_SYMBOLS):
        entries = [
            f"{symbol(i)}=b{i} {_bytes(p.nbytes)} k{p.first}"
            + (f"-{p.last}" if p.last != p.first else "")
            for i, p in enumerate(order)
        ]
        line = ""
        for entry in entries:
            if line and len(line) + 3 + len(entry) > width:
                lines.append(line)
                line = ""
            line = f"{line}   {entry}" if line else entry
        lines.append(line)
    elif order:
        n = len(_SYMBOLS)
        lines.append(f"{len(order)} buffers: b{{i}} is drawn with the symbol of b{{i mod {n}}}")
    return "\n".join(lines) + "\n"
