"""The memory picture as SVG: ``plan_svg`` for one arena, ``plans_svg`` for every one of a plan."""

from __future__ import annotations

import math
from xml.sax.saxutils import escape, quoteattr

from ren.engine.memory import DevicePlan, MemoryPlan, PlannedBuffer
from ren.viz.memory.layout import (
    MIN_RECT_HEIGHT,
    NAME_CHARS,
    buffer_boxes,
    buffer_order,
    bytes_text,
    colour,
    header,
    num,
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
    # the columns: alternate shades, a tooltip naming the kernel
    out.append('<g class="kernels">')
    for k in range(scale.columns):
        fill = "#f2f2f2" if k % 2 == 0 else "#ffffff"
        out.append(
            f'<rect class="kernel" x="{num(scale.x(k))}" y="{num(top)}" '
            f'width="{num(scale.column_width)}" height="{num(scale.plot_height)}" '
            f'fill="{fill}"><title>{escape(_kernel_name(kernels, k))}</title></rect>'
        )
    out.append("</g>")
    # the y axis: offsets in bytes
    out.append('<g class="y-axis" text-anchor="end">')
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
            out.append(_text(x, y, short, transform=f"rotate(90 {num(x)} {num(y)})"))
        out.append("</g>")
    # the buffers
    out.append('<g class="buffers" stroke="#333333" stroke-width="0.5">')
    labels = []
    for i, (p, (x, y, w, h)) in enumerate(zip(order, buffer_boxes(order, scale), strict=True)):
        name = f"b{i}"
        out.append(
            f'<rect class="buffer" id="{name}" x="{num(x)}" y="{num(y)}" width="{num(w)}" '
            f'height="{num(h)}" fill="{colour(i)}">'
            f"<title>{escape(_tooltip(name, p, kernels))}</title></rect>"
        )
        if w >= 16 and h >= 11:
            text = name
            if w >= 7 * len(f"{name} {bytes_text(p.nbytes)}") and h >= 11:
                text = f"{name} {bytes_text(p.nbytes)}"
            labels.append(_text(x + w / 2, y + min(h / 2, 14) + 3.5, text))
    out.append("</g>")
    out.append('<g class="labels" text-anchor="middle" fill="#111111">')
    out.extend(labels)
    out.append("</g>")
    # the arena's outline and the lower bound
    right = left + plot_w
    out.append(
        f'<rect class="arena" x="{num(left)}" y="{num(top)}" width="{num(plot_w)}" '
        f'height="{num(arena_y - top)}" fill="none" stroke="#000000" stroke-width="1.5"/>'
    )
    out.append(
        f'<line class="lower-bound" x1="{num(left)}" y1="{num(bound_y)}" x2="{num(right)}" '
        f'y2="{num(bound_y)}" stroke="#cc0000" stroke-width="1.5" stroke-dasharray="6 4"/>'
    )
    arena_label_y = arena_y + 3.5
    bound_label_y = bound_y + 3.5
    if abs(arena_label_y - bound_label_y) < 12:  # equal or close: one above the other
        arena_label_y, bound_label_y = min(arena_y, bound_y) - 4, max(arena_y, bound_y) + 11
    out.append(_text(right + 6, arena_label_y, f"arena {bytes_text(plan.arena_bytes)}"))
    out.append(
        _text(
            right + 6,
            bound_label_y,
            f"lower bound {bytes_text(plan.lower_bound_bytes)}",
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
