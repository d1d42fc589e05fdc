"""What a captured plan reads that it neither writes nor is given: keys, closed-over values.

A replay checks that each still holds the array it held at capture (a freed one is a
``JitError`` naming it), and a saved plan names each as a stored input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ren.capture.arguments import storage_of, walk
from ren.device import Buffer
from ren.poly import Poly
from ren.repoint import stored

if TYPE_CHECKING:
    from ren.capture.plan import CapturedPlan

__all__ = ["external_reads", "stored_names"]


def stored_names(fn: Callable[..., object]) -> dict[int, str]:
    """Buffer id -> how the function reaches that stored value (a closure cell, a global).

    For error messages only: a plan that reads a freed value names it this way when it can.
    """
    names: dict[int, str] = {}
    code = getattr(fn, "__code__", None)
    if code is None:
        return names
    found: list[tuple[str, object]] = []
    for var, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or (), strict=False):
        try:
            found.append((f"the value {var} the function closes over", cell.cell_contents))
        except ValueError:  # an empty cell
            continue
    glob = getattr(fn, "__globals__", {})
    found += [(f"the global {g}", glob[g]) for g in code.co_names if g in glob]
    for what, value in found:
        polys: list[tuple[str, Poly]] = []
        walk(value, "", polys, None)
        for path, p in polys:
            where = stored(p.node)
            if where is not None:
                names.setdefault(id(where[0]), f"{what}{' at ' + path if path else ''}")
    return names


def external_reads(
    plan: CapturedPlan, names: dict[int, str]
) -> list[tuple[Buffer, np.ndarray | None, str]]:
    """Every root buffer the plan reads but neither writes nor binds, with its array and name."""
    out: dict[int, tuple[Buffer, np.ndarray | None, str]] = {}
    bound = {(i, j) for i, j, _ in plan.bindings}
    reads = [
        b.root
        for i, u in enumerate(plan.units)
        for j, b in enumerate(u.bufs)
        if j > 0 and b is not None and (i, j) not in bound
    ]
    reads += [storage_of(src)[0].root for src, _ in plan.passthrough if isinstance(src, Poly)]
    for root in reads:
        if id(root) in plan.written or id(root) in out:
            continue
        what = names.get(
            id(root),
            f"buffer #{root.id} ({root.size} {root.dtype} words on {root.device}, a value stored "
            "before the capture: a key, a constant table or a value the function closes over)",
        )
        out[id(root)] = (root, root._array, what)
    return list(out.values())
