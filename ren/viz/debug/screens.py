"""What the debugger's screens share: a buffer's facts, the stepper's state, text helpers.

The watch protocol (``Watchable``, ``WatchView``, ``Slots``) is declared with Ren's other hooks in
``ren.hooks``; these names stay for the debugger's modules.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np

from ren.device import Buffer
from ren.engine.realize import Realization
from ren.engine.schedule import ScheduledKernel
from ren.hooks import Slots as Slots  # the watch protocol, declared once in ren.hooks
from ren.hooks import Watchable as Watchable
from ren.hooks import WatchView as WatchView
from ren.ir.facts import facts
from ren.ir.node import Node, RingArg, format_graph
from ren.ring import Domain, RingSpec
from ren.viz.trace import RealizationRecord

if TYPE_CHECKING:
    from ren.viz.debug.watching import Watch


@dataclasses.dataclass
class BufferInfo:
    """One buffer of the realization: its trace name, the kernels using it, its writer."""

    buffer: Buffer
    name: str
    first: int
    last: int
    writer: int | None = None
    ring: RingSpec | None = None
    domain: Domain | None = None


def ms_text(seconds: float | None) -> str:
    """``seconds`` as milliseconds in a column of fixed width (a dash when not timed)."""
    return "       -   " if seconds is None else f"{seconds * 1e3:8.3f} ms"


def count_text(counts: Counter[str]) -> str:
    """``name n, ...``, the most frequent first."""
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{name} {n}" for name, n in items)


def cut_lines(text: str, max_lines: int | None, more: str) -> str:
    """``text`` cut to ``max_lines`` lines, the last saying how many more and ``more`` (how)."""
    lines = text.splitlines()
    if max_lines is None or len(lines) <= max_lines:
        return text
    return "\n".join([*lines[:max_lines], f"... {len(lines) - max_lines} more lines ({more})"])


def describe_node(node: Node) -> str:
    """``ring domain device`` of ``node``, or its op for a node without a ring."""
    f = facts(node)
    if f.ring is None:
        return node.op.name
    domain = f.domain.value if f.domain is not None else "?"
    return f"{f.ring.short()} {domain} {f.device}"


def int_arg(text: str, what: str) -> int:
    """A command's argument ``text`` as an int, or a ``ValueError`` naming ``what``."""
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{what} must be a number, got {text!r}") from None


def short_node(node: Node, width: int = 48) -> str:
    """``OP arg (SOURCE OPS)``: one node and what it reads, on one line."""
    arg = "" if node.arg is None else f" {node.arg!r}"
    text = f"{node.op.name}{arg}"
    if len(text) > width:
        text = text[: width - 3] + "..."
    return f"{text}({', '.join(s.op.name for s in node.src)})"


def complex_row(values: np.ndarray) -> str:
    """Slot values as they read: integers as integers (BFV, BGV), complex numbers otherwise."""
    a = np.asarray(values)
    if a.dtype.kind in "iu":
        return "  ".join(str(int(v)) for v in a)
    return "  ".join(f"{z.real:+z.9f}{z.imag:+z.9f}j" for z in a.astype(complex))


class StepperBase:
    """What every part of a ``Stepper`` reads: the realization, its record and the buffers."""

    realization: Realization
    record: RealizationRecord
    title: str
    cursor: int
    _watches: list[Watch]
    _ring_of_input: dict[int, RingArg] | None
    _unit_index: dict[int, int]
    _infos: dict[int, BufferInfo]
    _order: list[BufferInfo]
    _graph: frozenset[Node] | None  # the nodes of the graph handed to the scheduler, once asked
    _apart: dict[Node, Node]  # a watched part's node -> its value computed apart (stored)
    _made_at: dict[tuple[Node, ...], int]  # watched nodes -> the last kernel working toward them

    def _graph_text(self, graph: Node) -> str:
        """``graph`` as text, each buffer named as ``buffer`` takes it (``buffer NAME``).

        A buffer the memory plan placed in an arena is named by its arena range; one the schedule
        does not use (a pass's intermediate, dropped later) by ``#id``.
        """
        planned = {
            p.buffer_id: f"arena[{p.offset}:{p.offset + p.nbytes}]"
            for plan in self.realization.memory_plan.devices
            for p in plan.buffers
        }

        def name_of(buf: Buffer) -> str:
            info = self._infos.get(id(buf))
            return info.name if info is not None else planned.get(buf.id, f"#{buf.id}")

        return format_graph(graph, name_of)

    @property
    def _kernels(self) -> list[ScheduledKernel]:
        """The scheduled kernels, in execution order."""
        return self.realization.kernels

    @property
    def ran(self) -> int:
        """How many exec units ran."""
        return self.realization.ran

    @property
    def done(self) -> bool:
        """Whether every unit ran and the polys were repointed."""
        return self.realization.done

    def _kernel(self, i: int) -> ScheduledKernel:
        kernels = self._kernels
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(kernels):
            raise ValueError(
                f"no kernel {i!r}: this realization has {len(kernels)} kernels "
                f"(0 to {len(kernels) - 1})"
            )
        return kernels[i]


#: The region-name helpers, which moved to ``ren.viz.debug.regions``: still importable from here,
#: read on first use (PEP 562), since ``regions`` builds on this module.
_IN_REGIONS = frozenset({"region_arg", "region_matches", "region_names_text"})


def __getattr__(name: str) -> Any:  # Any: the type of the helper named, which differs by name
    """``region_arg``, ``region_matches`` and ``region_names_text``, from ``regions``."""
    if name in _IN_REGIONS:
        from ren.viz.debug import regions

        return getattr(regions, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
