"""The memory picture as SVG: ``plan_svg`` for one arena, ``plans_svg`` for every one of a plan.

``plan_svg(..., compact=True)`` draws the same picture in a tenth of the bytes, for a notebook's
display (``ren.display.LENT["memory_plan"]``, ``Trace.memory``); ``python -m ren.viz memory`` and
the report draw the full one, with a tooltip on every buffer and kernel.
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape, quoteattr

from ren.engine.memory import DevicePlan, MemoryPlan, PlannedBuffer
from ren.viz.memory.layout import (
    MIN_RECT_HEIGHT,
    NAME_CHARS,
    Scale,
    buffer_boxes,
    buffer_order,
    bytes_text,
    colour,
    header,
    num,
    num1,
    plan_scale,
)

# --------------------------------------------------------------------------------------------
# SVG


def _text(x: float, y: float, body: str, **attrs: str) -> str:
    extra = "".join(f" {k.replace('_', '-')}={quoteattr(v)}" for k, v in attrs.items())
    return f'<text x="{num(x)}" y="{num(y)}"{extra}>{escape(body)}</text>'


def _kernel_name(kernels: list[str] | None, k: int) -> str:
    return f"kernel {k}" + (f" ({kernels[k]})" if kernels and k < len(kernels) else "")


def _tooltip(name: str, p: PlannedBuffer, kernels: list[str] | None) -> str:
    life = f"kernel {p.first}" if p.first == p.last else f"kernels {p.first}-{p.last}"
    lines = [
        f"{name}: {p.nbytes} B ({bytes_text(p.nbytes)}), {p.size} x {p.dtype}",
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


#: Colours of the compact picture: buffer ``b{i}`` is drawn in ``colour(i % PALETTE)``, and the
#: buffers of one colour are one ``<path>``.
PALETTE = 12
#: Buffers of the compact picture with a tooltip: the largest drawn (by area), each a ``<rect>``.
TOOLTIPS = 32
#: Buffers of the compact picture labelled where the label fits: the largest drawn.
LABELS = 160


def plan_svg(
    plan: DevicePlan, kernels: list[str] | None = None, title: str = "", *, compact: bool = False
) -> str:
    """Draw one device's arena as a self-contained SVG (see the module docstring).

    The compact picture (``compact=True``, for a notebook's display) has the same scale, axes,
    arena outline, lower bound and buffer rectangles, in fewer bytes: the buffers of one colour
    (``PALETTE`` colours) are the rectangles of one ``<path>``, written with one decimal; only
    the ``TOOLTIPS`` largest have a tooltip and the ``LABELS`` largest a label (where it fits);
    the columns have no tooltip, and are shaded only where at least 4 pixels wide. It takes about
    30 bytes a buffer and 10 KB more: the 1267 buffers of a ``boot-toy`` bootstrap take 50 KB,
    where the full picture, a tooltip on every buffer and column, takes 530 KB.

    Args:
        plan: one device's arena, such as ``ctx.memory_plan.devices[0]``.
        kernels: the names of the schedule's kernels, in order (``k.info.name``); shown under the
            columns when they are wide enough, and in the tooltips. Without it, columns are
            numbered only.
        title: the first line written on the picture (default: ``memory plan: <device>``).
        compact: draw the compact picture.

    Returns:
        The SVG document, ending with a newline. The same plan gives the same bytes.
    """
    scale = plan_scale(plan, kernels, title)
    order = buffer_order(plan)
    heading, summary, facts, counts = header(plan, scale.columns, title)
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
    out += _shaded_columns(scale) if compact else _columns(scale, kernels)
    out += _axes(scale, kernels, 48.0 if compact else 24.0)
    boxes = buffer_boxes(order, scale)
    out += _buffer_paths(order, boxes, kernels) if compact else _buffers(order, boxes, kernels)
    out += _arena(plan, scale)
    if not order:
        mid = scale.left + scale.plot_width / 2
        out.append(_text(mid, scale.top + 20, "no planned buffers", text_anchor="middle"))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _columns(scale: Scale, kernels: list[str] | None) -> list[str]:
    """The columns: alternate shades, a tooltip naming the kernel."""
    out = ['<g class="kernels">']
    for k in range(scale.columns):
        fill = "#f2f2f2" if k % 2 == 0 else "#ffffff"
        out.append(
            f'<rect class="kernel" x="{num(scale.x(k))}" y="{num(scale.top)}" '
            f'width="{num(scale.column_width)}" height="{num(scale.plot_height)}" '
            f'fill="{fill}"><title>{escape(_kernel_name(kernels, k))}</title></rect>'
        )
    out.append("</g>")
    return out


def _shaded_columns(scale: Scale) -> list[str]:
    """The compact picture's columns: the even ones shaded, one path (none past 4 px a column)."""
    if scale.column_width < 4:
        return []
    w, top, h = num1(scale.column_width), num1(scale.top), num1(scale.plot_height)
    d = "".join(f"M{num1(scale.x(k))} {top}h{w}v{h}h-{w}z" for k in range(0, scale.columns, 2))
    return [f'<path class="kernels" fill="#f2f2f2" d="{d}"/>']


def _axes(scale: Scale, kernels: list[str] | None, tick_pixels: float) -> list[str]:
    """The y axis (offsets in bytes), the x axis (kernel numbers) and the kernel names."""
    left, top = scale.left, scale.top
    out = ['<g class="y-axis" text-anchor="end">']
    for b in _y_ticks(scale.extent_bytes):
        y = scale.y(b)
        out.append(
            f'<line x1="{num(left - 4)}" y1="{num(y)}" x2="{num(left)}" y2="{num(y)}" '
            'stroke="#666666"/>'
        )
        out.append(_text(left - 6, y + 3.5, bytes_text(b)))
    out.append("</g>")
    mid = top + scale.plot_height / 2
    out.append(
        _text(14, mid, "arena offset", text_anchor="middle", transform=f"rotate(-90 14 {num(mid)})")
    )
    axis_y = top + scale.plot_height + MIN_RECT_HEIGHT
    out.append('<g class="x-axis" text-anchor="middle">')
    for k in range(0, scale.columns, _every(scale.column_width, tick_pixels)):
        out.append(_text(scale.x(k + 0.5), axis_y + 12, str(k)))
    out.append(_text(left + scale.plot_width / 2, axis_y + 26, "kernel"))
    out.append("</g>")
    if scale.names and kernels:
        out.append('<g class="kernel-names" font-size="9">')
        for k, name in enumerate(kernels):
            x, y = scale.x(k + 0.5) - 3, axis_y + 34
            short = name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "~"
            out.append(_text(x, y, short, transform=f"rotate(90 {num(x)} {num(y)})"))
        out.append("</g>")
    return out


def _label(name: str, p: PlannedBuffer, x: float, y: float, w: float, h: float) -> str | None:
    """A buffer's label where it fits: its name, and its size where that fits too."""
    if w < 16 or h < 11:
        return None
    text = name
    if w >= 7 * len(f"{name} {bytes_text(p.nbytes)}"):
        text = f"{name} {bytes_text(p.nbytes)}"
    return _text(x + w / 2, y + min(h / 2, 14) + 3.5, text)


Box = tuple[float, float, float, float]


def _buffers(order: list[PlannedBuffer], boxes: list[Box], kernels: list[str] | None) -> list[str]:
    """Every buffer as a rectangle with its tooltip, and the labels that fit."""
    out = ['<g class="buffers" stroke="#333333" stroke-width="0.5">']
    labels = []
    for i, (p, (x, y, w, h)) in enumerate(zip(order, boxes, strict=True)):
        name = f"b{i}"
        out.append(
            f'<rect class="buffer" id="{name}" x="{num(x)}" y="{num(y)}" width="{num(w)}" '
            f'height="{num(h)}" fill="{colour(i)}">'
            f"<title>{escape(_tooltip(name, p, kernels))}</title></rect>"
        )
        if (label := _label(name, p, x, y, w, h)) is not None:
            labels.append(label)
    out.append("</g>")
    return [*out, '<g class="labels" text-anchor="middle" fill="#111111">', *labels, "</g>"]


def _buffer_paths(
    order: list[PlannedBuffer], boxes: list[Box], kernels: list[str] | None
) -> list[str]:
    """The compact picture's buffers: a path per colour, the largest as rectangles with tooltips.

    The ``LABELS`` largest are labelled where the label fits, as in the full picture.
    """
    largest = sorted(range(len(order)), key=lambda i: (-boxes[i][2] * boxes[i][3], i))
    tipped = set(largest[:TOOLTIPS])
    paths: dict[int, list[str]] = {}
    for i, (x, y, w, h) in enumerate(boxes):
        if i not in tipped:
            w1 = num1(w)
            paths.setdefault(i % PALETTE, []).append(f"M{num1(x)} {num1(y)}h{w1}v{num1(h)}h-{w1}z")
    out = ['<g class="buffers" stroke="#333333" stroke-width="0.3">']
    out += [f'<path fill="{colour(c)}" d="{"".join(d)}"/>' for c, d in sorted(paths.items())]
    for i in sorted(tipped):
        (x, y, w, h), name = boxes[i], f"b{i}"
        out.append(
            f'<rect class="buffer" x="{num1(x)}" y="{num1(y)}" width="{num1(w)}" '
            f'height="{num1(h)}" fill="{colour(i % PALETTE)}">'
            f"<title>{escape(_tooltip(name, order[i], kernels))}</title></rect>"
        )
    out.append("</g>")
    labels = [_label(f"b{i}", order[i], *boxes[i]) for i in sorted(largest[:LABELS])]
    out += ['<g class="labels" text-anchor="middle" fill="#111111">', *filter(None, labels)]
    return [*out, "</g>"]


def _arena(plan: DevicePlan, scale: Scale) -> list[str]:
    """The arena's outline and the lower bound (a dashed line), each labelled on the right."""
    left, top, plot_w = scale.left, scale.top, scale.plot_width
    arena_y, bound_y = scale.y(plan.arena_bytes), scale.y(plan.lower_bound_bytes)
    right = left + plot_w
    out = [
        f'<rect class="arena" x="{num(left)}" y="{num(top)}" width="{num(plot_w)}" '
        f'height="{num(arena_y - top)}" fill="none" stroke="#000000" stroke-width="1.5"/>',
        f'<line class="lower-bound" x1="{num(left)}" y1="{num(bound_y)}" x2="{num(right)}" '
        f'y2="{num(bound_y)}" stroke="#cc0000" stroke-width="1.5" stroke-dasharray="6 4"/>',
    ]
    arena_label_y = arena_y + 3.5
    bound_label_y = bound_y + 3.5
    if abs(arena_label_y - bound_label_y) < 12:  # equal or close: one above the other
        arena_label_y, bound_label_y = min(arena_y, bound_y) - 4, max(arena_y, bound_y) + 11
    out.append(_text(right + 6, arena_label_y, f"arena {bytes_text(plan.arena_bytes)}"))
    bound = f"lower bound {bytes_text(plan.lower_bound_bytes)}"
    out.append(_text(right + 6, bound_label_y, bound, fill="#cc0000"))
    return out


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
