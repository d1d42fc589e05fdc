"""HEIR's packing loops, fast and exact: tensors written in place, loops run once on arrays.

* ``moves(function)``: the operands each op may take over. A ``tensor.insert`` writes into its
  destination in place when the destination is *owned* by its block (made there, or carried by
  its loop, which copies what it is given once) and *dead* after the insert (no later use, through
  ``scf.if`` branches); otherwise it copies, as MLIR's value semantics ask.
* ``Lanes.run``: a ``scf.for`` / ``affine.for`` whose body only gathers from loop-invariant
  tensors and scatters into the tensors it carries, with ``arith``, ``scf.if`` and such loops
  between, runs once: its induction variable is an array ``lb + k * step`` (an axis a level,
  masked where an inner loop's bounds follow an outer one), an ``scf.if`` a mask. Each insert is
  a scatter keyed by its time ``(k0, q0, k1, q1, ...)`` (each level's iteration, then the place
  of the op that holds it), so the last write of the sequential loop wins where indices repeat.
  Anything else (a read of a carried tensor, a call, a division by zero or an index out of range
  where a lane runs) returns ``None``: the interpreter runs the loop op by op, errors included.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ren.interop.heir.ir import Block, Op

__all__ = ["FRESH", "LOOPS", "MAX_LANES", "Lanes", "moves"]

LOOPS = frozenset({"scf.for", "affine.for"})
#: Ops whose results are new arrays that nothing else refers to.
FRESH = LOOPS | {"arith.constant", "tensor.empty", "tensor.splat", "tensor.from_elements",
                 "tensor.extract_slice", "tensor.insert", "tensor.insert_slice"}  # fmt: skip
#: Ops that keep no reference to their operands but the ones they take over.
_KEEP_NONE = frozenset({"tensor.extract", "tensor.extract_slice", "tensor.insert",
                        "tensor.insert_slice", "scf.if", "scf.for"})  # fmt: skip
_YIELDS = frozenset({"scf.yield", "affine.yield", "func.return"})
#: The most lanes (iterations of a whole nest, padded where bounds vary) run at once.
MAX_LANES = 2**24


def _taken(op: Op) -> range | tuple[int, ...]:
    """The operand positions ``op`` may take over: an insert's destination, a loop's inits."""
    if op.name in ("tensor.insert", "tensor.insert_slice"):
        return (1,)
    first = 3 if op.name == "scf.for" else 0  # after scf.for's bounds
    return range(first, len(op.operands)) if op.name in LOOPS or op.name in _YIELDS else ()


def _dead(name: str, where: tuple[Any, ...] | None) -> bool:
    """No use of ``name`` after ``where``: ``(last use by block, index, the if's where)``."""
    while where is not None:
        last, index, where = where
        if last.get(name, -1) > index:
            return False
    return True


def moves(function: Op) -> dict[int, frozenset[int]]:
    """The operands each op of ``function`` may take over, by ``id(op)``: positions in ``operands``.

    An operand is taken over (written into, or handed on uncopied) when its value is owned by
    the op's scope (the loop body or function body around it): made there by an op of ``FRESH``,
    carried by that loop, or an ``scf.if``'s result whose branches each hand over what they
    yield; and when no op keeps it (a call, a scheme op, ``arith.select``), the op uses it once,
    and nothing uses it afterwards (in its block, or, inside an ``scf.if``, after the ``if``).
    """
    escaped = {n for op in function.walk() for k, n in enumerate(op.operands)
               if op.name not in _KEEP_NONE and k not in _taken(op)}  # fmt: skip
    owned: dict[str, int] = {}  # an owned value -> the id of its scope's block
    out: dict[int, frozenset[int]] = {}

    def visit(block: Block, scope: int, outer: tuple[Any, ...] | None) -> None:
        last = {n: i for i, op in enumerate(block.ops) for o in op.walk() for n in o.operands}
        for i, op in enumerate(block.ops):
            here, names = (last, i, outer), op.operands
            taken = [k for k in _taken(op) if owned.get(names[k]) == scope
                     and names.count(names[k]) == 1 and _dead(names[k], here)]  # fmt: skip
            if taken:
                out[id(op)] = frozenset(taken)
            for inner in (b for region in op.regions for b in region):
                if op.name == "scf.if":
                    visit(inner, scope, here)  # runs at most once: the block's scope
                    continue
                if op.name in LOOPS:
                    owned.update({n: id(inner) for n, _ in inner.args[1:] if n not in escaped})
                visit(inner, id(inner), None)
            for j, r in enumerate(op.results):
                handed = op.name == "scf.if" and all(
                    region and j in out.get(id(region[0].ops[-1]), ()) for region in op.regions
                )
                if r not in escaped and (op.name in FRESH or handed):
                    owned[r] = scope

    for body in function.regions[0]:
        visit(body, id(body), None)
    return out


class _Fallback(Exception):
    """The loop leaves the gather/scatter subset as it runs: run it op by op instead."""


@dataclasses.dataclass(frozen=True, eq=False)
class _Write:
    """One insert's scatter: flat ``targets`` and the ``values`` of the lanes that ran it.

    ``time``: rows ``(k0, q0, k1, q1, ...)``, each level's iteration and the op's place.
    """

    serial: int
    targets: np.ndarray
    values: np.ndarray
    time: np.ndarray


@dataclasses.dataclass(frozen=True, eq=False)
class _State:
    """A carried tensor inside the nest: the outermost loop's ``slot``, and the writes so far."""

    slot: int
    writes: tuple[_Write, ...]


@dataclasses.dataclass(frozen=True)
class _At:
    """The lanes that run an op: ``mask`` over ``ks``, the iterations of the loops around it.

    ``places``: the places of those loops (the outermost's aside) in the nest's walk.
    """

    mask: np.ndarray
    ks: tuple[np.ndarray, ...]
    places: tuple[int, ...]


def _shaped(type_text: str) -> bool:
    """A tensor, vector or memref type, or any other that is not a plain number (``!ct``)."""
    return not re.fullmatch(r"(index|i\d+|si\d+|ui\d+|f\d+|bf16)", type_text.strip())


def _lanes(x: Any) -> np.ndarray:
    """A number, or an array of one a lane; anything else (a key, a ciphertext) leaves."""
    if not isinstance(x, np.ndarray | np.generic | bool | int | float | complex):
        raise _Fallback
    a = np.asarray(x)
    if a.dtype.kind not in "bifc" and not (a.dtype.kind == "u" and a.dtype.itemsize < 8):
        raise _Fallback  # objects, and uint64, which int64 does not hold
    return a.astype(np.int64) if a.dtype.kind == "u" else a


def _numbers(src: np.ndarray) -> np.ndarray:
    """``src``'s elements as the interpreter reads them: floats in double, integers in int64."""
    kinds = {type(x) for x in src.flat} if src.dtype == object else set()
    if src.dtype.kind == "f" or (kinds and kinds <= {float}):
        return src.astype(np.float64)
    if src.dtype.kind == "i" or (kinds and kinds <= {int}):
        return src.astype(np.int64)
    return src.astype(np.complex128) if src.dtype.kind == "c" else _lanes(src)


def _fits(dest: np.dtype, values: np.ndarray) -> bool:
    """Whether NumPy's scatter of ``values`` into ``dest`` stores what element-wise stores do."""
    kind = values.dtype.kind
    if dest.kind in "iu" and kind in "iuf":
        info = np.iinfo(dest)
        return bool(np.all(np.isfinite(values) & (values >= info.min) & (values < info.max + 1.0)))
    return kind != "c" or dest.kind in "cbO"


def _extends(after: Any, before: _State, since: int) -> bool:
    """``after`` is ``before`` plus writes made after serial ``since``."""
    n = len(before.writes)
    return (
        isinstance(after, _State) and after.slot == before.slot and len(after.writes) >= n
        and all(a is b for a, b in zip(after.writes, before.writes, strict=False))
        and all(w.serial > since for w in after.writes[n:])
    )  # fmt: skip


def _merge(a: Any, b: Any, cond: np.ndarray, start: int, middle: int, type_text: str) -> Any:
    """An ``scf.if``'s result: ``a`` (written after ``start``) where ``cond``, else ``b``."""
    if a is b:
        return a
    if isinstance(a, _State) and isinstance(b, _State) and a.slot == b.slot:
        pairs = enumerate(zip(a.writes, b.writes, strict=False))
        n = next((i for i, (x, y) in pairs if x is not y), min(len(a.writes), len(b.writes)))
        base, later = _State(a.slot, a.writes[:n]), any(w.serial > middle for w in a.writes[n:])
        if _extends(a, base, start) and _extends(b, base, middle) and not later:
            return _State(a.slot, a.writes + b.writes[n:])  # each branch wrote its own lanes
    if _shaped(type_text) or isinstance(a, _State) or isinstance(b, _State):
        raise _Fallback
    return np.where(cond, _lanes(a), _lanes(b))


def _winners(writes: tuple[_Write, ...]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each write's ``(targets, values)`` that the sequential loop leaves: the last per target."""
    if not writes:
        return []
    targets = np.concatenate([w.targets for w in writes])
    keys = np.concatenate([w.time for w in writes], axis=1)
    order = np.lexsort((*keys[::-1], targets))  # by target, then time
    ordered = targets[order]
    last = order[np.append(ordered[1:] != ordered[:-1], True)] if len(order) else order
    out, at = [], 0
    for w in writes:
        mine = last[(last >= at) & (last < at + len(w.targets))] - at
        out.append((w.targets[mine], w.values[mine]))
        at += len(w.targets)
    return out


#: The ops a nest may hold besides the plain ``arith`` ops.
_NEST = LOOPS | {"tensor.extract", "tensor.insert", "scf.if", "scf.yield", "affine.yield"}
_DIVISIONS = frozenset({"arith.divsi", "arith.remsi", "arith.floordivsi", "arith.divf"})
#: Ops that add booleans as integers in Python (NumPy's ``+`` of booleans is a logical or).
_NUMERIC = _DIVISIONS | {f"arith.{n}" for n in ("addi", "subi", "muli", "minsi", "maxsi", "addf",
                                                "subf", "mulf", "negf")}  # fmt: skip


class Lanes:
    """The loop nests of one interpreter that run once on arrays, each checked once.

    Args:
        arith: the ``arith`` ops that work element-wise on arrays, by name: ``op -> results``.
        affine_bounds: an ``affine.for``'s ``(lb, ub, step)``.
    """

    def __init__(self, arith: Mapping[str, Callable[[Any, Op, list[Any]], list[Any]]],
                 affine_bounds: Callable[[Op], tuple[int, int, int]]) -> None:  # fmt: skip
        self.arith, self.affine_bounds = dict(arith), affine_bounds
        self._nests: dict[int, tuple[dict[int, int], int] | None] = {}

    def nest(self, loop: Op) -> tuple[dict[int, int], int] | None:
        """``loop``'s nest, if in the subset: each op's place in its walk by ``id``, its depth."""
        if id(loop) in self._nests:
            return self._nests[id(loop)]
        ops = list(loop.walk())
        inside = {r for o in ops for r in o.results}
        inside |= {n for o in ops for region in o.regions for b in region for n, _ in b.args}
        depth, stack, self._nests[id(loop)] = 0, [(loop, 1)], None
        while stack:
            o, d = stack.pop()
            shaped = any(map(_shaped, o.result_types))
            if o.name not in _NEST and (o.name not in self.arith or shaped):
                return None
            if o.name == "tensor.extract" and o.operands[0] in inside:
                return None  # a read of a tensor the nest makes
            if o.name in LOOPS and not all(_shaped(t) for _, t in o.regions[0][0].args[1:]):
                return None  # a carried number: a dependence between iterations
            depth = max(depth, d) if o.name in LOOPS else depth
            stack += [(x, d + (o.name in LOOPS)) for r in o.regions for b in r for x in b.ops]
        self._nests[id(loop)] = ({id(o): n for n, o in enumerate(ops)}, depth)
        return self._nests[id(loop)]

    def run(self, loop: Op, bounds: tuple[int, int, int], carried: list[Any],
            env: Mapping[str, Any]) -> list[Any] | None:  # fmt: skip
        """``loop`` on ``carried`` (arrays it owns, written in place): its results, or ``None``.

        ``None``: the nest is outside the subset, or left it as it ran; ``carried`` is untouched.
        """
        nest = self.nest(loop)
        if nest is None or not all(isinstance(c, np.ndarray) and c.ndim for c in carried):
            return None
        run = _Run(self, nest, env, [c.shape for c in carried])
        try:
            with np.errstate(all="ignore"):
                out = run.loop(loop, bounds, [_State(k, ()) for k in range(len(carried))],
                               _At(np.array(True), (), ()))  # fmt: skip
                plans = [(c, _winners(s.writes)) for c, s in zip(carried, out, strict=True)]
                if not all(_fits(c.dtype, v) for c, plan in plans for _, v in plan):
                    return None
        except (_Fallback, ArithmeticError, LookupError, TypeError, ValueError):
            return None
        for c, plan in plans:
            for targets, values in plan:
                c.flat[targets] = values
        return carried


class _Run:
    """One run of a nest: its values by name (arrays of lanes), over the enclosing frame."""

    def __init__(self, lanes: Lanes, nest: tuple[dict[int, int], int], env: Mapping[str, Any],
                 shapes: list[tuple[int, ...]]) -> None:  # fmt: skip
        self.arith, self.affine_bounds = lanes.arith, lanes.affine_bounds
        (self.places, self.depth), self.env, self.shapes = nest, env, shapes
        self.local: dict[str, Any] = {}
        self.serial = 0
        self.sources: dict[int, np.ndarray] = {}

    def block(self, block: Block, at: _At) -> list[Any]:
        """``block``'s ops on the lanes ``at``: what it yields."""
        for op in block.ops:
            v = [self.local[n] if n in self.local else self.env[n] for n in op.operands]
            if op.name in ("scf.yield", "affine.yield"):
                return v
            if op.name in self.arith:
                v = [_lanes(x) for x in v]
                if op.name in _DIVISIONS and np.any((v[1] == 0) & at.mask):
                    raise _Fallback
                if op.name == "arith.fptosi" and np.any(~(abs(v[0]) < 2.0**63) & at.mask):
                    raise _Fallback  # Python's int() of a NaN, an infinity, past int64
                if op.name in _NUMERIC:
                    v = [x.astype(np.int64) if x.dtype == bool else x for x in v]
                results = self.arith[op.name](None, op, v)
            elif op.name == "tensor.extract":
                results = [self.gather(v[0], v[1:], at)]
            elif op.name == "tensor.insert":
                results = [self.scatter(op, v, at)]
            elif op.name == "scf.if":
                results = self.branch(op, v[0], at)
            else:
                bounds = v[:3] if op.name == "scf.for" else self.affine_bounds(op)
                inner = _At(at.mask, at.ks, (*at.places, self.places[id(op)]))
                results = self.loop(op, bounds, v[3:] if op.name == "scf.for" else v, inner)
            self.local.update(zip(op.results, results, strict=True))
        return []

    def index(self, i: Any, n: int, at: _At) -> np.ndarray:
        """An index operand, checked in ``[-n, n)`` where it runs, wrapped to ``[0, n)``."""
        a = _lanes(i)
        if a.dtype.kind not in "biu":
            raise _Fallback
        a = a.astype(np.int64)
        bad = (a < -n) | (a >= n)
        if np.any(bad & at.mask):
            raise _Fallback
        return np.where(bad, 0, np.where(a < 0, a + n, a))

    def gather(self, src: Any, idx: list[Any], at: _At) -> np.ndarray:
        """``tensor.extract`` from a tensor of the frame: a gather (every lane, checked)."""
        if not isinstance(src, np.ndarray) or len(idx) != src.ndim or not src.size:
            raise _Fallback
        if id(src) not in self.sources:
            self.sources[id(src)] = _numbers(src)
        where = tuple(self.index(i, n, at) for i, n in zip(idx, src.shape, strict=True))
        return self.sources[id(src)][where]

    def scatter(self, op: Op, v: list[Any], at: _At) -> _State:
        """``tensor.insert`` into a carried tensor: one more write, of the lanes that run."""
        dest = v[1]
        if not isinstance(dest, _State) or len(v) - 2 != len(self.shapes[dest.slot]):
            raise _Fallback  # into a tensor not carried, or a count of indices not its rank
        shape, full = self.shapes[dest.slot], np.broadcast_shapes(*(k.shape for k in at.ks))
        on = np.broadcast_to(at.mask, full)

        def lanes(x: Any) -> np.ndarray:
            return np.broadcast_to(x, full)[on]

        idx = [lanes(self.index(i, n, at)) for i, n in zip(v[2:], shape, strict=True)]
        time = np.zeros((2 * self.depth, int(on.sum())), dtype=np.int64)
        time[0 : 2 * len(at.ks) : 2] = [lanes(k) for k in at.ks]
        time[1 : 2 * len(at.ks) : 2] = np.array((*at.places, self.places[id(op)]))[:, None]
        self.serial += 1
        write = _Write(self.serial, np.ravel_multi_index(idx, shape), lanes(_lanes(v[0])), time)
        return _State(dest.slot, (*dest.writes, write))

    def branch(self, op: Op, cond: Any, at: _At) -> list[Any]:
        """``scf.if``: one branch where the condition is one number, else each on its lanes."""
        if np.ndim(cond) == 0:
            region = op.regions[0] if bool(cond) else op.regions[1]
            return self.block(region[0], at) if region else []
        c, start = np.asarray(cond, dtype=bool), self.serial
        yes = self.block(op.regions[0][0], _At(at.mask & c, at.ks, at.places))
        middle = self.serial
        other = op.regions[1]
        no = self.block(other[0], _At(at.mask & ~c, at.ks, at.places)) if other else []
        return [_merge(a, b, c, start, middle, t)
                for a, b, t in zip(yes, no, op.result_types, strict=True)]  # fmt: skip

    def loop(self, op: Op, bounds: Any, inits: list[Any], at: _At) -> list[Any]:
        """A loop of the nest, its iterations on a new axis: its carried tensors' states after."""
        lb, ub, step = (_lanes(b) for b in bounds)
        kinds = {b.dtype.kind for b in (lb, ub, step)}
        if not all(isinstance(s, _State) for s in inits) or not kinds <= {"i"}:
            raise _Fallback
        if np.any((step <= 0) & at.mask):  # the interpreter's MlirError
            raise _Fallback
        count = np.where(ub > lb, (ub - lb + step - 1) // np.maximum(step, 1), 0)
        n = int(np.max(np.where(at.mask, count, 0), initial=0))
        if math.prod(k.size for k in at.ks) * n > MAX_LANES:
            raise _Fallback
        k = np.arange(n).reshape([n if i == len(at.ks) else 1 for i in range(self.depth)])
        (body,) = op.regions[0]
        self.local[body.args[0][0]] = lb + k * step
        self.local.update(zip((name for name, _ in body.args[1:]), inits, strict=True))
        start = self.serial
        out = self.block(body, _At((k < count) & at.mask, (*at.ks, k), at.places))
        if not all(_extends(a, s, start) for a, s in zip(out, inits, strict=True)):
            raise _Fallback
        return out
