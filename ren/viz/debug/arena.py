"""The stepper's ``arena`` screen: the memory plan at the unit cursor, whole or summarized.

``ArenaViews.arena`` draws each device's arena (``ren.viz.memory``'s picture, with a ``^`` under
the next kernel) and lists the buffers in use; a plan too long for one screen (a bootstrap's) is
summarized: size, peak, a smaller picture with the bytes in use now, the largest buffers in use.
"""

from __future__ import annotations

import re

from ren.engine.memory import ALIGN, DevicePlan, PlannedBuffer
from ren.viz.debug.screens import StepperBase
from ren.viz.memory.layout import bytes_text
from ren.viz.memory.text import row_bytes


class ArenaViews(StepperBase):
    """The stepper's ``arena`` (``arena all`` at the prompt: ``arena(full=True)``)."""

    def arena(self, width: int = 72, full: bool = False) -> str:
        """The memory plan at the unit cursor: the arena picture, and what each region holds.

        The regions are those with data that a later kernel still reads, those the next kernel
        allocates, and the free ones. A screen that would be longer than ``ARENA_LINES`` lines (a
        bootstrap plans over a thousand buffers) is a summary instead: each arena's size, peak
        and number of buffers, a smaller picture (one line per band of offsets, with the bytes in
        use now in each), the ``ARENA_LARGEST`` largest buffers in use now, and a line for the
        buffers with their own storage. ``full=True`` (``arena all`` at the prompt) shows
        everything.
        """
        lines = self._arena_lines(width)
        if full or len(lines) <= ARENA_LINES:
            return "\n".join(lines)
        return "\n".join(self._arena_summary(width, len(lines)))

    def _arena_head(self) -> str:
        total = len(self._kernels)
        if self.done:
            return f"memory after the last kernel ({total} of {total} ran): every region is free"
        step = self.ran
        return (
            f"memory before kernel {step} ({self._kernels[step].info.name}); {step} of {total} ran"
        )

    def _in_use(self, d: DevicePlan) -> tuple[list[PlannedBuffer], list[PlannedBuffer]]:
        """The buffers holding data a later kernel reads, and those the next kernel allocates."""
        if self.done:
            return [], []
        step = self.ran
        live = [p for p in d.buffers if p.first < step <= p.last]
        fresh = [p for p in d.buffers if p.first == step]
        return live, fresh

    def _arena_lines(self, width: int) -> list[str]:
        """Everything: each arena's picture with its key, every buffer in use, the own storage."""
        plan = self.realization.memory_plan
        lines = [self._arena_head()]
        if not plan.devices:
            lines.append(
                "no arena: every buffer of this realization has its own storage (nothing to "
                "share, or REN_NO_PLAN=1)"
            )
        for d in plan.devices:
            lines.extend(self._device_arena(d, self.ran, width))
        own = [info for info in self._order if info.buffer.base is None]
        if own:
            lines.append("own storage (outside the arena):")
            for info in own:
                if info.writer is None:
                    state = "input"
                elif info.writer < self.ran:
                    state = f"written by kernel {info.writer}"
                else:
                    state = f"kernel {info.writer} writes it (not yet)"
                lines.append(f"  {info.name:<24} {info.buffer.nbytes:>8} B  {state}")
        return lines

    def _device_arena(self, d: DevicePlan, step: int, width: int) -> list[str]:
        lines: list[str] = []
        symbols: dict[tuple[int, int], str] = {}
        try:
            from ren.viz.memory import buffer_order, plan_text, symbol
        except ImportError:  # the picture is optional; the lists below say the same
            lines.append(d.summary())
        else:
            order = buffer_order(d)
            key = [
                f"{symbol(i)}=arena[{p.offset}:{p.offset + p.nbytes}] k{p.first}-{p.last}"
                for i, p in enumerate(order)
            ]
            text = plan_text(d, width=width)
            lines.extend(_mark_column(text, step, _columns(d), key, width))
            symbols = {(p.offset, p.first): symbol(i) for i, p in enumerate(order)}
        live, fresh = self._in_use(d)
        for title, group in (
            ("holding data a later kernel reads", live),
            (f"allocated for kernel {step}", fresh),
        ):
            if not group:
                continue
            lines.append(f"{title}:")
            for p in sorted(group, key=lambda p: p.offset):
                sym = symbols.get((p.offset, p.first))
                tag = f" ('{sym}' above)" if sym else ""
                lines.append(
                    f"  {_arena_name(p):<24} {p.nbytes:>8} B  kernels {p.first}-{p.last}{tag}"
                )
        used = sum(p.nbytes for p in live + fresh)
        lines.append(f"{used} of {d.arena_bytes} arena bytes in use on {d.device}")
        return lines

    def _arena_summary(self, width: int, full_lines: int) -> list[str]:
        """The screen of a large plan: a summary per arena, and one line for the own storage."""
        devices = self.realization.memory_plan.devices
        share = max(1, len(devices))  # several arenas share the screen
        lines = [self._arena_head()]
        for d in devices:
            lines.extend(
                self._device_summary(d, width, max(4, 8 // share), max(3, ARENA_LARGEST // share))
            )
        own = [info for info in self._order if info.buffer.base is None]
        if own:
            inputs = sum(info.writer is None for info in own)
            written = sum(info.writer is not None and info.writer < self.ran for info in own)
            later = len(own) - inputs - written
            size = sum(info.buffer.nbytes for info in own)
            lines.append(
                f"own storage (outside the arena): {len(own)} buffers, {size} B: {inputs} inputs, "
                f"{written} written, {later} not written yet"
            )
        lines.append(
            f"(a summary: 'arena all' shows all {full_lines} lines, with the picture's key and "
            "every buffer)"
        )
        return lines

    def _device_summary(self, d: DevicePlan, width: int, height: int, largest: int) -> list[str]:
        """One arena in a few lines: size, peak, buffers, a picture, the largest buffers in use."""
        columns = _columns(d)
        peak_at = _peak_kernel(d, columns)
        lines = [
            d.summary(),
            f"arena {d.arena_bytes} B; peak {d.lower_bound_bytes} B live at once"
            + (f" (at kernel {peak_at})" if peak_at is not None else "")
            + f"; {len(d.buffers)} buffers over {columns} kernels",
        ]
        live, fresh = self._in_use(d)
        now = sorted(live + fresh, key=lambda p: (-p.nbytes, p.offset))
        try:
            from ren.viz.memory import plan_text
        except ImportError:  # the picture is optional
            pass
        else:
            picture = _mark_column(
                plan_text(d, width=width, height=height), self.ran, columns, None, width
            )
            lines.extend(_with_use_now(picture[3:], now, row_bytes(d, height)))
        used = sum(p.nbytes for p in now)
        if self.done:
            lines.append(f"0 of {d.arena_bytes} arena bytes in use on {d.device}")
            return lines
        lines.append(
            f"{used} of {d.arena_bytes} arena bytes in use on {d.device}: {len(live)} hold "
            f"data, {len(fresh)} allocated for kernel {self.ran}"
        )
        if now:
            lines.append(f"the largest in use ({min(largest, len(now))} of {len(now)}):")
            for p in now[:largest]:
                role = "allocated now" if p.first == self.ran else "holds data"
                lines.append(
                    f"  {_arena_name(p):<24} {p.nbytes:>8} B  kernels {p.first}-{p.last}  {role}"
                )
        return lines


#: The most lines ``arena`` shows whole; a longer screen is a summary (``arena all``: all of it).
ARENA_LINES = 40

#: How many buffers in use the summary lists, the largest first.
ARENA_LARGEST = 8


def _arena_name(p: PlannedBuffer) -> str:
    return f"arena[{p.offset}:{p.offset + p.nbytes}]"


def _columns(d: DevicePlan) -> int:
    """The kernels an arena's picture spans: through the last one its plan uses."""
    used = [p.last + 1 for p in d.buffers] + [e.step + 1 for e in d.events]
    return max([1, *used])


def _peak_kernel(d: DevicePlan, columns: int) -> int | None:
    """The first kernel before which the planner counted ``lower_bound_bytes`` live.

    The planner counts whole ``ALIGN`` granules; ``None`` if the count here does not reach it.
    """
    delta = [0] * (columns + 1)
    for p in d.buffers:
        size = -(-max(p.nbytes, 1) // ALIGN) * ALIGN
        delta[p.first] += size
        delta[p.last + 1] -= size
    live = 0
    for step in range(columns):
        live += delta[step]
        if live >= d.lower_bound_bytes:
            return step
    return None


def _with_use_now(picture: list[str], now: list[PlannedBuffer], band: int) -> list[str]:
    """The picture's rows with the bytes of each row's band that ``now`` holds, at the right."""
    out = []
    row = 0
    for line in picture:
        if re.fullmatch(r"\s*\S+(?: \S+)? [|][^|<]*[|<]", line):  # a row of offsets
            lo, hi = row * band, (row + 1) * band
            used = sum(max(0, min(hi, p.offset + p.nbytes) - max(lo, p.offset)) for p in now)
            line += f" {bytes_text(used)} in use" if used else ""
            row += 1
        elif line.startswith("one row:"):
            line += "; right: the bytes in use now"
        out.append(line)
    return out


def _mark_column(
    text: str, step: int, columns: int, key: list[str] | None, width: int
) -> list[str]:
    """``plan_text``'s lines with a ``^`` under kernel ``step``'s column, and its key replaced.

    ``columns`` is the number of kernels the picture spans; when it draws several kernels per
    column, the ``^`` is under the column holding kernel ``step`` and says which kernels that
    column holds. The picture's key (``b0``, ``b1``, ... by drawing order, which would read as the
    trace's buffer names) is replaced by ``key``: the symbols' arena regions (``None``: no key).
    """
    lines = text.rstrip("\n").splitlines()
    legend = next((i for i, line in enumerate(lines) if line.startswith("'<':")), None)
    if legend is not None and key is None:
        del lines[legend + 1 :]
    elif legend is not None and key:
        packed = [""]
        for entry in key:
            if packed[-1] and len(packed[-1]) + 3 + len(entry) > width:
                packed.append("")
            packed[-1] = f"{packed[-1]}   {entry}" if packed[-1] else entry
        lines[legend + 1 :] = packed
    for i, line in enumerate(lines):
        m = re.fullmatch(r"(\s*offset \+)(-+)\+", line)
        if m is None:
            continue
        cols = len(m.group(2))
        if step < columns:
            starts = [c * columns // cols for c in range(cols + 1)]  # as plan_text cuts them
            col = max(c for c in range(cols) if starts[c] <= step)
            bottom = next(
                (j for j in range(len(lines) - 1, i, -1) if lines[j].strip().startswith("+-")),
                None,
            )
            if bottom is not None:
                pad = " " * (len(m.group(1)) + col)
                held = (
                    ""
                    if cols == columns
                    else f" (this column: kernels {starts[col]}-{starts[col + 1] - 1})"
                )
                lines.insert(bottom + 1, f"{pad}^ kernel {step} runs next{held}")
        break
    return lines
