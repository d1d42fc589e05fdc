"""A schedule-cache hit: its kernels bound to fresh buffers, and run as one backend call.

``bind`` makes a hit's arena and outputs (on the host without zeroing them: the kept kernels
write every word before any is read), binds the new inputs and constants, and says which rows of
each kernel's constants hold which constant of the graph (``sources``).

A hit's exec units are the kernels of an earlier realization over fresh buffers. A backend with a
graph runner (``cpu``: one C function calling every kernel) makes one for the second hit of an
entry (a program run twice is a program that runs again; building a bootstrap's runner takes
about a second, so the first hit, often a user's second try, runs unit by unit instead); the
entry keeps it without its buffers, and every later hit rebinds it to its own buffers
(``GraphRunner.rebound``) and runs all its units in one call, instead of one Python call each.

It runs only when nothing needs the units one at a time: no ``ren.jit`` capture recording them,
no observer (the report, the debugger), no ``REN_POISON``, ``REN_VALIDATE`` or ``REN_DEBUG>=2``,
and every unit on one device. Otherwise the units run one by one, as always.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, TypeAlias

import numpy as np

from ren import settings
from ren.device import BUFFER_DTYPES, HOST_DEVICES, Buffer
from ren.engine import debug_level
from ren.engine.observe import active
from ren.engine.schedule import ScheduledKernel
from ren.ir.node import Node
from ren.ir.op import DType, Op
from ren.ir.region import RegionPath

if TYPE_CHECKING:
    from ren.engine.realize import ExecUnit
    from ren.engine.schedule_cache import Entry, Kernel, Key

__all__ = ["MIN_UNITS", "Code", "bind", "run_as_graph", "sources"]

#: Fewer units than this run one by one: rebinding the runner costs about what it saves (an
#: eager CKKS add at set a, two units, is faster unit by unit; a multiply, 26, a tenth faster).
MIN_UNITS = 4

#: An output's realized node as an entry keeps it (``ren.engine.schedule_cache``): its buffers as
#: refs (``("in", i)``, ``("view", v)``, ``("new", j)``), which a hit binds to its own buffers.
Code: TypeAlias = (
    tuple[Literal["buffer"], DType, tuple[str, int]] | tuple[Op, DType, object, tuple["Code", ...]]
)


def run_as_graph(
    units: list[ExecUnit], entry: Entry, owner: Callable[[str], object], recording: bool
) -> bool:
    """Run ``units`` (a hit of ``entry``) in one graph call; ``False`` if they must run one by one.

    ``owner(device)`` is the device's backend; ``recording``: a capture records the units.
    """
    if recording or active() or settings.POISON.get() or settings.VALIDATE.get():
        return False
    if debug_level() >= 2 or len(units) < MIN_UNITS or len({u.device for u in units}) != 1:
        return False
    held = entry.graph
    if not held:  # the first hit: noted, run unit by unit
        held.append(None)
        return False
    if held[0] is None:
        make = getattr(owner(units[0].device), "graph_runner", None)
        runner = make(units, []) if make is not None else None
        if runner is None or getattr(runner, "slots", None) is None:
            return False
        template = copy.copy(runner)  # the entry keeps the runner, not this realization's buffers
        template.roots, template.B = [], None
        held[0] = template
    else:
        runner = held[0].rebound(units)
        if runner is None:
            return False
    runner.run([])
    return True


def bind(
    entry: Entry, key: Key
) -> tuple[list[ScheduledKernel], Callable[[tuple[str, int]], Buffer]]:
    """The entry's kernels over fresh arenas and outputs, the key's inputs and constants.

    Returns the kernels in execution order and a function from a buffer ref to its buffer (for
    the nodes the outputs become).
    """
    arenas = [_fresh(device, "u8", nbytes, no_opt=True) for device, nbytes in entry.arenas]
    views = [
        Buffer(arenas[a].device, dtype, size, base=arenas[a], offset=offset)
        for a, dtype, size, offset in entry.views
    ]
    news = [_fresh(device, dtype, size) for device, dtype, size in entry.news]
    pools = {"in": key.inputs, "view": views, "new": news}

    def buf(ref: tuple[str, int]) -> Buffer:
        return pools[ref[0]][ref[1]]

    kernels = [
        ScheduledKernel(
            k.ast,
            tuple([pools[kind][i] for kind, i in k.bufs]),
            k.info,
            tuple([key.consts[v] if kind == "const" else v for kind, v in k.consts]),
            sources(k, key) if k.consts else (),
            # the region as this graph's instances: a hit reports its own program's regions
            RegionPath(tuple([key.instances[r] for r in k.region])) if k.region else (),
        )
        for k in entry.kernels
    ]
    return kernels, buf


def _fresh(device: str, dtype: str, size: int, no_opt: bool = False) -> Buffer:
    """A buffer the kept kernels write in full before any reads it: on the host, not zeroed."""
    if device not in HOST_DEVICES:
        return Buffer(device, dtype, size, no_opt=no_opt)
    return Buffer(device, dtype, size, np.empty(size, BUFFER_DTYPES[dtype]), no_opt=no_opt)


def sources(kernel: Kernel, key: Key) -> tuple[Node | None, ...]:
    """The ``CONST`` node of ``key``'s graph each row of ``kernel`` holds, where abstracted."""
    return tuple(key.const_nodes[v] if kind == "const" else None for kind, v in kernel.consts)
