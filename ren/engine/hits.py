"""A schedule-cache hit run as one backend call, as a ``ren.jit`` replay is.

A hit's exec units are the kernels of an earlier realization over fresh buffers. A backend with a
graph runner (``cpu``: one C function calling every kernel) makes one for the first hit of an
entry; the entry keeps it without its buffers, and every later hit rebinds it to its own buffers
(``GraphRunner.rebound``) and runs all its units in one call, instead of one Python call each.

It runs only when nothing needs the units one at a time: no ``ren.jit`` capture recording them,
no observer (the report, the debugger), no ``REN_POISON``, ``REN_VALIDATE`` or ``REN_DEBUG>=2``,
and every unit on one device. Otherwise the units run one by one, as always.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ren import settings
from ren.engine import debug_level
from ren.engine.observe import active

__all__ = ["MIN_UNITS", "run_as_graph"]

#: Fewer units than this run one by one: rebinding the runner costs about what it saves (an
#: eager CKKS add at set a, two units, is faster unit by unit; a multiply, 26, a tenth faster).
MIN_UNITS = 4


def run_as_graph(
    units: list[Any], entry: Any, owner: Callable[[str], Any], recording: bool
) -> bool:
    """Run ``units`` (a hit of ``entry``) in one graph call; ``False`` if they must run one by one.

    ``owner(device)`` is the device's backend; ``recording``: a capture records the units.
    """
    if recording or active() or settings.POISON.get() or settings.VALIDATE.get():
        return False
    if debug_level() >= 2 or len(units) < MIN_UNITS or len({u.device for u in units}) != 1:
        return False
    held = entry.graph
    if not held:
        make = getattr(owner(units[0].device), "graph_runner", None)
        runner = make(units, []) if make is not None else None
        if runner is None or getattr(runner, "slots", None) is None:
            return False
        template = copy.copy(runner)  # the entry keeps the runner, not this realization's buffers
        template.roots, template.B = [], None
        held.append(template)
    else:
        runner = held[0].rebound(units)
        if runner is None:
            return False
    runner.run([])
    return True
