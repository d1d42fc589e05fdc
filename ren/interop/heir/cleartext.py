"""The ops of a HEIR program that run on plain values: ``arith``, ``tensor``, ``scf``, ``affine``.

HEIR's client functions pack a tensor into slots with loops of ``tensor.extract`` and
``tensor.insert``, and its server functions index tensors of ciphertexts; these run here on
Python numbers and NumPy arrays (object arrays where the elements are ciphertexts). Each op is a
function ``(interpreter, op, values) -> results``; ``OPS`` maps the op's name to it. An op outside
them is refused by the interpreter with its name and location. The packing loops run fast and
exactly (``ren.interop.heir.vector``): in place, and loops of gathers and scatters on arrays.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ren.interop.heir.ir import Block, Dense, MlirError, Module, Op, Symbol, Typed, tensor_type
from ren.interop.heir.vector import Lanes, moves

__all__ = ["OPS", "Interpreter", "constant_of"]

#: ShapedType's marker of a dynamic offset, size or stride in a slice's static lists.
DYNAMIC = -(2**63)


def constant_of(attr: Any) -> Any:
    """An ``arith.constant``'s ``value`` as a number or a writable array."""
    if isinstance(attr, Typed):
        return attr.value
    if isinstance(attr, Dense):
        values = np.array(attr.values)
        ints = values.dtype == object and all(isinstance(v, int) for v in values.flat)
        if ints and all(-(2**63) <= v < 2**63 for v in values.flat):  # an integer tensor
            return values.astype(np.int64)
        return values
    if isinstance(attr, bool | int | float):
        return attr
    raise MlirError(f"a constant of a kind outside the subset: {str(attr)[:80]}")


def _shape(op: Op, i: int = 0) -> tuple[int, ...]:
    t = tensor_type(op.result_types[i])
    if t is None:
        raise MlirError(f"{op.name}: its result is not a ranked tensor: {op.result_types[i][:60]}")
    return t.shape


def _is_float(type_text: str) -> bool:
    return type_text.startswith(("f16", "bf16", "f32", "f64")) or bool(
        re.search(r"x(f16|bf16|f32|f64)>$", type_text)
    )


def _empty(op: Op) -> np.ndarray:
    t = tensor_type(op.result_types[0])
    assert t is not None
    if t.element.startswith(("!", "lwe.")) or "lwe_ciphertext" in t.element:
        return np.empty(t.shape, dtype=object)
    return np.zeros(t.shape, dtype=np.float64 if _is_float(t.element) else np.int64)


def _index(values: list[Any]) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


def _binary(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Op, list[Any]], list[Any]]:
    def run(_: Any, op: Op, v: list[Any]) -> list[Any]:
        return [fn(v[0], v[1])]

    return run


def _floordiv(a: Any, b: Any) -> Any:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.floor_divide(a, b)
    return a // b if b else _zero_division()


def _truncdiv(a: Any, b: Any) -> Any:
    """``arith.divsi``: the quotient rounded toward zero, as C does (exact on integers)."""
    if not isinstance(a, np.ndarray) and not isinstance(b, np.ndarray) and b == 0:
        _zero_division()
    q = _floordiv(a, b)
    return q + ((a - q * b != 0) & ((a < 0) != (b < 0)))  # the floor, one up where it rounded down


def _truncrem(a: Any, b: Any) -> Any:
    """``arith.remsi``: ``a - b * divsi(a, b)``, of the sign of ``a``."""
    return a - b * _truncdiv(a, b)


def _least(a: Any, b: Any) -> Any:
    return np.minimum(a, b) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else min(a, b)


def _most(a: Any, b: Any) -> Any:
    return np.maximum(a, b) if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) else max(a, b)


def _zero_division() -> int:
    raise MlirError("an integer division by zero")


#: arith.cmpi's and arith.cmpf's predicates, by their number.
_CMPI = {0: operator.eq, 1: operator.ne, 2: operator.lt, 3: operator.le, 4: operator.gt,
         5: operator.ge, 6: operator.lt, 7: operator.le, 8: operator.gt,
         9: operator.ge}  # fmt: skip
_CMPF = {1: operator.eq, 2: operator.gt, 3: operator.ge, 4: operator.lt, 5: operator.le,
         6: operator.ne, 8: operator.eq, 9: operator.gt, 10: operator.ge, 11: operator.lt,
         12: operator.le, 13: operator.ne}  # fmt: skip


def _compare(table: dict[int, Callable[[Any, Any], Any]]) -> Callable[..., list[Any]]:
    def run(_: Any, op: Op, v: list[Any]) -> list[Any]:
        attr = op.attr("predicate")
        p = int(attr.value if isinstance(attr, Typed) else attr)
        if p not in table:
            raise MlirError(f"{op.name}: predicate {p} is outside the subset")
        return [table[p](v[0], v[1])]

    return run


def _cast(_: Any, op: Op, v: list[Any]) -> list[Any]:
    x, to = v[0], op.result_types[0]
    if _is_float(to):
        return [np.asarray(x, dtype=np.float64) if isinstance(x, np.ndarray) else float(x)]
    if isinstance(x, np.ndarray):
        return [(np.trunc(x) if x.dtype.kind in "fc" else x).astype(np.int64)]
    return [int(x)]


def _select(_: Any, op: Op, v: list[Any]) -> list[Any]:
    cond, a, b = v
    if isinstance(cond, np.ndarray):
        return [np.where(cond, a, b)]
    return [a if cond else b]


def _extract(_: Any, op: Op, v: list[Any]) -> list[Any]:
    t, idx = v[0], _index(v[1:])
    if not isinstance(t, np.ndarray) or len(idx) != t.ndim:
        raise MlirError(f"tensor.extract: {len(idx)} indices for a tensor of rank {np.ndim(t)}")
    out = t[idx]
    return [out.item() if isinstance(out, np.generic) else out]


def _insert(interp: Any, op: Op, v: list[Any]) -> list[Any]:
    value, t, idx = v[0], v[1], _index(v[2:])
    out = t if 1 in interp.taken(op) else t.copy()  # in place where no one sees the old value
    out[idx] = value
    return [out]


def _slices(op: Op, dynamic: list[Any], rank: int) -> tuple[slice, ...]:
    """The slice of ``tensor.extract_slice`` / ``insert_slice``: static lists, dynamic fills."""
    lists = []
    rest = list(dynamic)
    for key in ("static_offsets", "static_sizes", "static_strides"):
        static = [int(x) for x in op.attr(key)]
        if len(static) != rank:
            raise MlirError(f"{op.name}: {key} of rank {len(static)} for rank {rank}")
        lists.append([int(rest.pop(0)) if s == DYNAMIC else s for s in static])
    offsets, sizes, strides = lists
    return tuple(slice(o, o + s * st, st) for o, s, st in zip(offsets, sizes, strides, strict=True))


def _extract_slice(_: Any, op: Op, v: list[Any]) -> list[Any]:
    src = v[0]
    part = np.array(src[_slices(op, v[1:], src.ndim)])
    return [part.reshape(_reduced(part.shape, _shape(op)))]


def _reduced(got: tuple[int, ...], want: tuple[int, ...]) -> tuple[int, ...]:
    """A slice's shape ``got`` as the result type's ``want`` (``-1``: a dynamic size).

    Unit sizes are dropped where the result's rank is smaller (a rank-reducing slice).
    """
    dims = list(got)
    while len(dims) > len(want) and 1 in dims:
        dims.remove(1)
    if len(dims) != len(want) or any(w not in (-1, d) for w, d in zip(want, dims, strict=True)):
        raise MlirError(f"a slice of shape {got} for a result of shape {want}")
    return tuple(dims)


def _insert_slice(interp: Any, op: Op, v: list[Any]) -> list[Any]:
    src, dest = v[0], v[1]
    out = dest if 1 in interp.taken(op) else dest.copy()
    where = _slices(op, v[2:], dest.ndim)
    out[where] = np.asarray(src, dtype=out.dtype).reshape(out[where].shape)
    return [out]


def _from_elements(_: Any, op: Op, v: list[Any]) -> list[Any]:
    out = _empty(op)
    if out.dtype == object:
        flat = np.empty(len(v), dtype=object)
        flat[:] = v
    else:
        flat = np.array(v, dtype=out.dtype)
    return [flat.reshape(out.shape)]


def _splat(_: Any, op: Op, v: list[Any]) -> list[Any]:
    out = _empty(op)
    out[...] = v[0]
    return [out]


_NONE: frozenset[int] = frozenset()


def _affine_bounds(op: Op) -> tuple[int, int, int]:
    """An ``affine.for``'s bounds and step ``(lb, ub, step)``, from constant maps."""
    if [int(x) for x in op.attr("operandSegmentSizes")][:2] != [0, 0]:
        raise MlirError("affine.for: bounds with operands are outside the subset")
    bounds = []
    for key in ("lowerBoundMap", "upperBoundMap"):
        text = getattr(op.attr(key), "text", str(op.attr(key))).strip()
        m = re.fullmatch(r"affine_map<\(\)\s*->\s*\((-?\d+)\)>", text)
        if not m:
            raise MlirError(f"affine.for: a bound {text[:60]} that is not a constant is outside "
                            "the subset")  # fmt: skip
        bounds.append(int(m.group(1)))
    step = op.attr("step")
    return bounds[0], bounds[1], int(step.value if isinstance(step, Typed) else step)


def _for(interp: Any, op: Op, v: list[Any]) -> list[Any]:
    """``scf.for`` and ``affine.for`` (constant bounds): the body with the carried values.

    The fast interpreter owns what it carries (a copy of each array it does not take over), runs
    a nest of gathers and scatters once on arrays (``vector.Lanes``), and copies a yielded array
    the body does not hand over (a value from outside, one yielded twice) after each iteration.
    """
    if op.name == "scf.for":
        lb, ub, step, carried, first = int(v[0]), int(v[1]), int(v[2]), list(v[3:]), 3
    else:
        (lb, ub, step), carried, first = _affine_bounds(op), list(v), 0
    if step <= 0:
        raise MlirError(f"{op.name}: a step of {step}")
    (block,) = op.regions[0]
    if interp.lanes is not None:  # own what is carried; a nest of gathers and scatters at once
        taken = interp.taken(op)
        carried = [c.copy() if isinstance(c, np.ndarray) and first + k not in taken else c
                   for k, c in enumerate(carried)]  # fmt: skip
        done = interp.lanes.run(op, (lb, ub, step), carried, interp._frames[-1])
        if done is not None:
            return done
    for i in range(lb, ub, step):
        carried = _owned(interp, block, interp.run_block(block, [i, *carried]))
    return carried


def _owned(interp: Any, block: Block, values: list[Any]) -> list[Any]:
    """What ``block`` yields, each array it does not hand over copied (when writing in place)."""
    if interp.lanes is None or not block.ops:
        return values
    kept = interp.taken(block.ops[-1])
    return [x.copy() if isinstance(x, np.ndarray) and k not in kept else x
            for k, x in enumerate(values)]  # fmt: skip


def _if(interp: Any, op: Op, v: list[Any]) -> list[Any]:
    """``scf.if``: the first region's yield when the condition holds, else the second's."""
    region = op.regions[0] if v[0] else op.regions[1]
    if not region:
        return []
    return _owned(interp, region[0], interp.run_block(region[0], []))


#: The plain ops, by name.
OPS: dict[str, Callable[[Any, Op, list[Any]], list[Any]]] = {
    "arith.constant": lambda _, op, v: [constant_of(op.attr("value"))],
    "arith.addi": _binary(operator.add),
    "arith.subi": _binary(operator.sub),
    "arith.muli": _binary(operator.mul),
    "arith.divsi": _binary(_truncdiv),
    "arith.remsi": _binary(_truncrem),
    "arith.floordivsi": _binary(_floordiv),
    "arith.andi": _binary(operator.and_),
    "arith.ori": _binary(operator.or_),
    "arith.xori": _binary(operator.xor),
    "arith.minsi": _binary(_least),
    "arith.maxsi": _binary(_most),
    "arith.addf": _binary(operator.add),
    "arith.subf": _binary(operator.sub),
    "arith.mulf": _binary(operator.mul),
    "arith.divf": _binary(operator.truediv),
    "arith.negf": lambda _, op, v: [-v[0]],
    "arith.cmpi": _compare(_CMPI),
    "arith.cmpf": _compare(_CMPF),
    "arith.select": _select,
    "arith.index_cast": _cast,
    "arith.extsi": _cast,
    "arith.extui": _cast,
    "arith.trunci": _cast,
    "arith.sitofp": _cast,
    "arith.fptosi": _cast,
    "arith.extf": _cast,
    "arith.truncf": _cast,
    "tensor.extract": _extract,
    "tensor.insert": _insert,
    "tensor.extract_slice": _extract_slice,
    "tensor.insert_slice": _insert_slice,
    "tensor.from_elements": _from_elements,
    "tensor.empty": lambda _, op, v: [_empty(op)],
    "tensor.splat": _splat,
    "scf.for": _for,
    "affine.for": _for,
    "scf.if": _if,
}


_TERMINATORS = {"scf.yield", "affine.yield", "func.return", "secret.yield"}

#: One op's meaning: ``(interpreter, op, operand values) -> result values``.
OpFn = Callable[[Any, Op, list[Any]], list[Any]]


class Interpreter:
    """A module's functions run op by op: the plain ops here, a scheme's from ``scheme_ops``.

    Values are kept by name, one dictionary a function call (a loop's or an ``if``'s body sees
    the values around it, as in MLIR); ``func.call`` calls another function of the module.

    Args:
        module: the parsed module.
        scheme_ops: the ops of a scheme (``lwe``, ``ckks``, ...), by name, as ``OPS``.
        fast: write a tensor in place where its old value is dead (``vector.moves``) and run
            loops of gathers and scatters once on arrays (``vector.Lanes``); ``False``: every op
            one at a time and every insert a copy (the oracle the fast path is tested against).
    """

    def __init__(self, module: Module, scheme_ops: dict[str, OpFn] | None = None, *,
                 fast: bool = True) -> None:  # fmt: skip
        self.module = module
        self.functions = module.functions()
        self.ops = {**OPS, **(scheme_ops or {})}
        self._frames: list[dict[str, Any]] = []
        self._taken: dict[int, frozenset[int]] = {}
        self._planned: set[int] = set()
        arith = {n: f for n, f in self.ops.items() if n.startswith("arith.") and OPS.get(n) is f}
        self.lanes = Lanes(arith, _affine_bounds) if fast else None

    def taken(self, op: Op) -> frozenset[int]:
        """The operand positions ``op`` may take over (write into): none unless ``fast``."""
        return self._taken.get(id(op), _NONE)

    def call(self, name: str, args: list[Any]) -> list[Any]:
        """The function ``name`` of the module on ``args``: what it returns."""
        if name not in self.functions:
            raise MlirError(f"func.call of @{name}, which the module does not define")
        function = self.functions[name]
        (block,) = function.regions[0]
        if self.lanes is not None and id(block) not in self._planned:  # liveness, once a block
            self._taken.update(moves(function))
            self._planned.add(id(block))
        return self.run_block(block, args, {})

    def run_block(
        self, block: Block, args: list[Any], env: dict[str, Any] | None = None
    ) -> list[Any]:
        """``block``'s ops on ``args``: what its terminator yields (``[]`` without one).

        ``env``: the values by name (a function's own; ``None``: the enclosing block's, for a
        loop's or an ``if``'s body, which sees the values around it).
        """
        env = self._frames[-1] if env is None else env
        self._frames.append(env)
        try:
            for (name, _), value in zip(block.args, args, strict=True):
                env[name] = value
            for op in block.ops:
                values = [env[x] for x in op.operands]
                if op.name in _TERMINATORS:
                    return values
                results = self.run_op(op, values)
                for name, value in zip(op.results, results, strict=True):
                    env[name] = value
            return []
        finally:
            self._frames.pop()

    def run_op(self, op: Op, values: list[Any]) -> list[Any]:
        """One op on its operands' values: its results."""
        if op.name == "func.call":
            callee = op.attr("callee")
            return self.call(callee.name if isinstance(callee, Symbol) else str(callee), values)
        fn = self.ops.get(op.name)
        if fn is None:
            where = f" at {op.loc}" if op.loc else f" (line {op.line})"
            known = ", ".join(sorted({*self.ops, "func.call"}))
            raise MlirError(f"{op.name}{where} is outside the subset Ren runs: {known}")
        return fn(self, op, values)
