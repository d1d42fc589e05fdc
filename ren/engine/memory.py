"""Memory planning: where each buffer of a schedule lives.

``plan_memory(schedule)`` is called between scheduling and making exec units. In this version
every buffer keeps its own storage (allocated on first use, freed when nothing refers to it), so
the schedule comes back unchanged and there is no plan to report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ren.engine.schedule import ScheduledKernel

__all__ = ["plan_memory"]


def plan_memory(schedule: list[ScheduledKernel]) -> tuple[list[ScheduledKernel], None]:
    """Every intermediate gets a buffer of its own: the schedule, unchanged, and no plan."""
    return schedule, None
