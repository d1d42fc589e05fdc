"""Constant inputs of a jitted function: which kernel rows a replay gives their new value.

A ``Poly.const`` input is a ``CONST`` node, no buffer. Kernels read constants from their
constants argument, one row per value, and the schedule cache says which rows hold the value of
which ``CONST`` node where the schedule does not depend on that value (``ScheduledKernel.
const_sources``). So a plan can take a new value for such an input without a new capture: the
rows are written again before the replay. An input is *rebound* that way when every row holding
its value is one of those, and its value is not one ``simplify`` rewrites by (``0``, ``1``,
``-1``: those are part of the key); any other constant input is *fixed*: its value is part of
the plan's key, and another value captures another plan.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ren.device import Buffer
from ren.engine.realize import ExecUnit
from ren.ir.kernels import const_words
from ren.ir.node import Node
from ren.ir.op import Op
from ren.poly import Poly
from ren.ring import RingSpec

__all__ = ["const_class", "const_node", "own_constants", "rebindable", "write_constants"]


def const_node(p: Poly) -> Node | None:
    """The ``CONST`` node of a ``Poly.const`` input (``AS_RING(CONST)``), else ``None``."""
    node = p.node
    if node.op is Op.AS_RING and node.src[0].op is Op.CONST:
        return node.src[0]
    return None


def const_class(value: int, ring: RingSpec) -> Any:
    """``"any"`` for a value a plan may rebind, else the value (0, 1 and -1 mod Q: in the key)."""
    Q = ring.Q
    return value if value % Q in (0, 1, Q - 1) else "any"


def rebindable(
    units: list[ExecUnit], polys: list[tuple[str, Poly]]
) -> tuple[list[tuple[int, int, int]], dict[int, int]]:
    """The rows a replay writes, ``(unit, row, input)``, and the fixed inputs' values.

    An input is rebound when at least one row holds its ``CONST`` node's value as that node's
    (``const_sources``) and no other row holds the same value; else it is fixed.
    """
    nodes = {}
    for i, (_, p) in enumerate(polys):
        c = const_node(p)
        if c is not None and const_class(c.arg.value, p.ring) == "any":
            nodes[c] = i
    rows: list[tuple[int, int, int]] = []
    loose: set[int] = set()  # values some row holds without saying it is the input's
    for ui, u in enumerate(units):
        k = u.kernel
        for j, value in enumerate(k.consts):
            source = k.const_sources[j] if j < len(k.const_sources) else None
            if source is not None and source in nodes:
                rows.append((ui, j, nodes[source]))
            else:
                loose.add(value)
    bound = {i for _, _, i in rows}
    fixed = {}
    for i, (_, p) in enumerate(polys):
        c = const_node(p)
        if c is None:
            continue
        if i not in bound or c.arg.value in loose:
            fixed[i] = c.arg.value
    return [r for r in rows if r[2] not in fixed], fixed


def own_constants(units: list[ExecUnit], rows: list[tuple[int, int, int]]) -> list[ExecUnit]:
    """``units`` with a constants buffer of their own where a replay writes rows (not shared)."""
    written = {ui for ui, _, _ in rows}
    out = []
    for ui, u in enumerate(units):
        if ui in written:
            old = u.bufs[-1]
            mine = Buffer(old.device, old.dtype, old.size, np.array(old.need_array(), copy=True))
            u = ExecUnit(u.name, u.device, (*u.bufs[:-1], mine), u.fn, u.kernel)
        out.append(u)
    return out


def write_constants(
    units: list[ExecUnit], rows: list[tuple[int, int, int]], polys: list[tuple[str, Poly]]
) -> None:
    """Write the inputs' values into the rows a replay rebinds (each unit's constants buffer)."""
    by_unit: dict[int, list[tuple[int, int]]] = {}
    for ui, j, i in rows:
        by_unit.setdefault(ui, []).append((j, i))
    for ui, changes in by_unit.items():
        u = units[ui]
        consts = list(u.kernel.consts)
        for j, i in changes:
            node = const_node(polys[i][1])
            assert node is not None  # the key says input i is a constant
            consts[j] = node.arg.value
        np.copyto(u.bufs[-1].need_array(), const_words(u.kernel.info.ring, tuple(consts)))
