"""The memory picture drawn with characters, for a terminal: ``plan_text``."""

from __future__ import annotations

import math

from ren.engine.memory import ALIGN, DevicePlan
from ren.viz.memory.layout import (
    SYMBOLS,
    buffer_order,
    bytes_text,
    column_count,
    counts,
    facts,
    symbol,
)

# --------------------------------------------------------------------------------------------
# text


def row_bytes(plan: DevicePlan, height: int = 16) -> int:
    """The bytes of arena one row of ``plan_text(plan, height=height)`` stands for.

    A power of two, at least ``ALIGN``, so that the arena takes at most about ``height`` rows;
    row ``r`` is the offsets ``[r * row_bytes, (r + 1) * row_bytes)``.
    """
    extent = max(plan.arena_bytes, plan.lower_bound_bytes, 1)
    return max(ALIGN, 1 << max(0, math.ceil(math.log2(extent / max(height, 1)))))


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
    columns = column_count(plan, None)
    extent = max(plan.arena_bytes, plan.lower_bound_bytes, 1)
    band = row_bytes(plan, height)
    rows = -(-extent // band)
    labels = [bytes_text(r * band) for r in range(rows)]
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
    lines = [plan.summary(), facts(plan), counts(plan, columns)]
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
    lines.append(f"one row: {bytes_text(band)}, one column: {per}, '.': free")
    lines.append(
        f"'<': the row of the lower bound ({bytes_text(plan.lower_bound_bytes)}); "
        f"the arena is {bytes_text(plan.arena_bytes)}"
    )
    if order and len(order) <= len(SYMBOLS):
        entries = [
            f"{symbol(i)}=b{i} {bytes_text(p.nbytes)} k{p.first}"
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
        n = len(SYMBOLS)
        lines.append(f"{len(order)} buffers: b{{i}} is drawn with the symbol of b{{i mod {n}}}")
    return "\n".join(lines) + "\n"
