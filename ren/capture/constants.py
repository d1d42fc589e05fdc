"""Constant inputs of a jitted function: which kernel rows a replay gives their new value.

A ``Poly.const`` input is a ``CONST`` node, no buffer. Kernels read constants from their
constants argument, one row per value, and the schedule cache says which rows hold the value of
which ``CONST`` node where the schedule does not depend on that value (``ScheduledKernel.
const_sources``). So a plan can take a new value for such an input without a new capture: the
rows are written again before the replay. An input is *rebound* that way when every row holding
its value is one of those, and its value is not one ``simplify`` rewrites by (``0``, ``1``,
``-1``: those are part of the key); any other constant input is *fixed*: its value is part of
the plan's key, and another value captures another plan.

A constant argument is an input, never a constant of the function's body: ``Poly.const(3)`` and
the literal ``3`` in ``x * 3`` are one interned node, so a capture calls the function with each
constant argument made a node of its own (``as_inputs``: ``ConstArg.input`` numbers it). The rows
``const_sources`` gives that node are the argument's; a row holding the body's ``3`` is not, and
keeps its value at every replay.
"""

from __future__ import annotations

import itertools
from typing import Any, Literal

import numpy as np

from ren.capture.arguments import rebuild
from ren.device import Buffer
from ren.engine.realize import ExecUnit
from ren.ir.kernels import const_words
from ren.ir.node import ConstArg, Node
from ren.ir.op import Op
from ren.poly import Poly
from ren.ring import RingSpec

__all__ = [
    "as_inputs",
    "const_class",
    "const_node",
    "own_constants",
    "rebindable",
    "write_constants",
]

#: Numbers the constant arguments of every capture (``ConstArg.input``): each a node of its own.
_SERIALS = itertools.count()


def const_node(p: Poly | Node) -> Node | None:
    """The ``CONST`` node of a ``Poly.const`` input (``AS_RING(CONST)``), else ``None``."""
    node = p if isinstance(p, Node) else p.node
    if node.op is Op.AS_RING and node.src[0].op is Op.CONST:
        return node.src[0]
    return None


def const_class(value: int, ring: RingSpec) -> int | Literal["any"]:
    """``"any"`` for a value a plan may rebind, else the value (0, 1 and -1 mod Q: in the key)."""
    Q = ring.Q
    return value if value % Q in (0, 1, Q - 1) else "any"


def as_inputs(
    args: tuple[Any, ...], kwargs: dict[str, Any], polys: list[tuple[str, Poly]]
) -> tuple[tuple[Any, ...], dict[str, Any], list[tuple[str, Poly]]]:  # Any: the call's own
    """The call's arguments with each rebindable constant input made a node of its own.

    Each ``Poly.const`` input whose value a plan may rebind (``const_class`` ``"any"``) becomes
    ``AS_RING(CONST value, input=k)`` with a fresh ``k``: equal in value to the body's constants,
    never the same node, so ``rebindable`` tells its rows from theirs by node, not by value.
    Containers holding one are copied (only those); everything else is passed as it is.

    Returns:
        The arguments, keyword arguments and ``polys`` (``(path, Poly)``) the capture uses.
    """
    swap: dict[int, Poly] = {}
    for _, p in polys:
        c = const_node(p)
        if c is None or id(p) in swap or const_class(c.arg.value, p.ring) != "any":
            continue
        arg = ConstArg(c.arg.value, c.arg.device, next(_SERIALS))
        swap[id(p)] = Poly._wrap(p.node.replace(src=(Node(Op.CONST, c.dtype, (), arg),)))
    if not swap:
        return args, kwargs, polys
    mine = [(path, swap.get(id(p), p)) for path, p in polys]
    new_args = rebuild(args, swap, arguments=True)
    return new_args, rebuild(kwargs, swap, arguments=True), mine


def rebindable(
    units: list[ExecUnit], inputs: list[Node]
) -> tuple[list[tuple[int, int, int]], dict[int, int]]:
    """The rows a replay writes, ``(unit, row, input)``, and the fixed inputs' values.

    ``inputs`` are the input nodes as the function was called with them (a constant the function
    returns is repointed at its output buffer by the realization: its node at the call counts).
    An input is rebound when at least one row holds its ``CONST`` node's value as that node's
    (``const_sources``) and no other row holds the same value; else it is fixed.
    """
    nodes = {}
    for i, node in enumerate(inputs):
        c = const_node(node)
        if c is not None and const_class(c.arg.value, node.arg.ring) == "any":
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
    for i, node in enumerate(inputs):
        c = const_node(node)
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
