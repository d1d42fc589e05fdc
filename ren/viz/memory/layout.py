"""Where the memory picture puts things: its sizes, the buffers' order and symbols, the scale."""

from __future__ import annotations

import colorsys
import math
from dataclasses import dataclass

from ren.engine.memory import DevicePlan, PlannedBuffer

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

SYMBOLS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


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
    return SYMBOLS[i % len(SYMBOLS)]


def colour(i: int) -> str:
    """A light fill for buffer ``i``: hues a golden angle apart, so neighbours differ."""
    hue = (i * 0.381966) % 1.0
    lightness = (0.72, 0.62, 0.80)[i % 3]
    r, g, b = colorsys.hls_to_rgb(hue, lightness, 0.55)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def bytes_text(n: float) -> str:
    """``n`` bytes in the largest unit that keeps it at least 1: ``"512 B"``, ``"1.5 KiB"``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            text = f"{n:.2f}".rstrip("0").rstrip(".")
            return f"{text} {unit}"
        n /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def num(v: float) -> str:
    """A coordinate with at most two decimals and no trailing zeros (stable across runs)."""
    text = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def num1(v: float) -> str:
    """A coordinate with at most one decimal and no trailing zeros (the compact picture's)."""
    text = f"{v:.1f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _ratio(plan: DevicePlan) -> float:
    return plan.arena_bytes / plan.lower_bound_bytes if plan.lower_bound_bytes else 1.0


def column_count(plan: DevicePlan, kernels: list[str] | None) -> int:
    """Kernels to draw: the schedule's (when named), and at least every kernel the plan uses."""
    used = [p.last + 1 for p in plan.buffers] + [e.step + 1 for e in plan.events]
    return max([len(kernels or ()), 1, *used])


def facts(plan: DevicePlan) -> str:
    """The exact numbers: arena, lower bound and unshared total, in bytes."""
    return (
        f"arena {plan.arena_bytes} B, lower bound {plan.lower_bound_bytes} B, "
        f"unshared {plan.unshared_bytes} B"
    )


def counts(plan: DevicePlan, columns: int) -> str:
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


def header(plan: DevicePlan, columns: int, title: str) -> list[str]:
    """The lines above the plot: the title, the summary, the exact bytes, the counts."""
    heading = title or f"memory plan: {plan.device}"
    return [heading, plan.summary(), facts(plan), counts(plan, columns)]


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
    columns = column_count(plan, kernels)
    plot_width = min(max(columns * COLUMN_WIDTH, MIN_PLOT_WIDTH), MAX_PLOT_WIDTH)
    column_width = plot_width / columns
    extent = max(plan.arena_bytes, plan.lower_bound_bytes, 1)
    smallest = min((p.nbytes for p in plan.buffers if p.nbytes > 0), default=extent)
    plot_height = min(max(PLOT_HEIGHT, extent * LABEL_HEIGHT / smallest), MAX_PLOT_HEIGHT)
    names = bool(kernels) and column_width >= NAME_COLUMN_WIDTH
    longest = min(max((len(k) for k in kernels or ()), default=0), NAME_CHARS)
    bottom = BOTTOM + (longest * 6.0 + 8.0 if names else 0.0)
    heading, *lines = header(plan, columns, title)
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


def buffer_boxes(
    order: list[PlannedBuffer], scale: Scale
) -> list[tuple[float, float, float, float]]:
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
