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

from ren.viz.memory.layout import (
    COLUMN_WIDTH as COLUMN_WIDTH,
)
from ren.viz.memory.layout import (
    MAX_PLOT_HEIGHT as MAX_PLOT_HEIGHT,
)
from ren.viz.memory.layout import (
    MAX_PLOT_WIDTH as MAX_PLOT_WIDTH,
)
from ren.viz.memory.layout import (
    MIN_PLOT_WIDTH as MIN_PLOT_WIDTH,
)
from ren.viz.memory.layout import (
    MIN_RECT_HEIGHT as MIN_RECT_HEIGHT,
)
from ren.viz.memory.layout import (
    NAME_CHARS as NAME_CHARS,
)
from ren.viz.memory.layout import (
    NAME_COLUMN_WIDTH as NAME_COLUMN_WIDTH,
)
from ren.viz.memory.layout import (
    PLOT_HEIGHT as PLOT_HEIGHT,
)
from ren.viz.memory.layout import (
    Scale,
    buffer_order,
    plan_scale,
    symbol,
)
from ren.viz.memory.svg import plan_svg, plans_svg
from ren.viz.memory.text import plan_text

__all__ = [
    "Scale",
    "buffer_order",
    "plan_scale",
    "plan_svg",
    "plan_text",
    "plans_svg",
    "symbol",
]
