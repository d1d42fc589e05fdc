"""Each scheme op's line in the source, recovered from HEIR's secret-arithmetic program.

HEIR 2026.11.1 gives its scheme ops (``ckks.mul``, ``bgv.rotate_cols``, ...) the location of the
whole function: its conversion from the ``secret`` dialect takes the location of the region it
converts. One stage earlier (``--mlir-to-secret-arithmetic``) every op still carries the line of
the source op it came from. The lowering keeps their order, op for op: each arithmetic op there
(``arith.mulf``, ``arith.addi``, ``tensor_ext.rotate``, ...) becomes one scheme op of its kind,
and the management ops HEIR adds after it (relinearize, rescale, modulus switches, level
reductions) belong to the op before them. ``source_locations`` pairs the two sequences and gives
each scheme op its source location, or nothing at all when they do not pair up one to one (a
pipeline that added or folded an op): a wrong line is worse than none.
"""

from __future__ import annotations

from collections.abc import Iterator

from ren.interop.heir.ir import Module, Op, tensor_type

__all__ = ["source_locations"]

#: The kind of each scheme op that stands for a source op (the rest manage the ciphertext).
_SCHEME = {
    "mul": "mul", "mul_plain": "mul", "add": "add", "add_plain": "add", "radd_plain": "add",
    "sub": "sub", "sub_plain": "sub", "negate": "negate", "rotate": "rotate",
    "rotate_cols": "rotate",
}  # fmt: skip

#: The kind of each secret-arithmetic op on packed tensors.
_SOURCE = {
    "arith.mulf": "mul", "arith.muli": "mul", "arith.addf": "add", "arith.addi": "add",
    "arith.subf": "sub", "arith.subi": "sub", "arith.negf": "negate",
    "tensor_ext.rotate": "rotate",
}  # fmt: skip

_MANAGING = {"relinearize", "rescale", "modulus_switch", "level_reduce"}


def _calls_in_order(module: Module, name: str, seen: set[str]) -> Iterator[Op]:
    """The ops of function ``name`` in order, a called function's where it is called."""
    functions = module.functions()
    if name in seen or name not in functions:
        return
    seen.add(name)
    for op in functions[name].walk():
        if op.name == "func.call":
            callee = op.attr("callee")
            yield from _calls_in_order(module, getattr(callee, "name", str(callee)), seen)
        else:
            yield op


def source_locations(lowered: Module, entry: str, secret: Module) -> dict[int, str]:
    """``{line of a scheme op in lowered: its source location}``; ``{}`` when they do not pair.

    Args:
        lowered: the scheme-level module (``--mlir-to-ckks`` and the like).
        entry: its entry function's name (the same in ``secret``).
        secret: the same source lowered to ``--mlir-to-secret-arithmetic``.
    """
    scheme: list[tuple[Op, str | None]] = []
    for op in _calls_in_order(lowered, entry, set()):
        dialect, _, name = op.name.partition(".")
        if dialect in ("ckks", "bgv", "lwe") and (name in _SCHEME or name in _MANAGING):
            scheme.append((op, _SCHEME.get(name)))
    source = [
        (op, _SOURCE[op.name])
        for op in _calls_in_order(secret, entry, set())
        if op.name in _SOURCE and op.result_types and _packed(op.result_types[0])
    ]
    out: dict[int, str] = {}
    at, last = 0, ""  # the location of the last op that stood for a source op
    for op, kind in scheme:
        if kind is None:  # managing: the op before it's
            if last:
                out[op.line] = last
            continue
        loc = source[at][0].loc if at < len(source) and source[at][1] == kind else None
        if not loc:
            return {}
        out[op.line] = loc
        last = loc
        at += 1
    return out if at == len(source) else {}


def _packed(type_text: str) -> bool:
    t = tensor_type(type_text)
    return t is not None and len(t.shape) >= 1 and "index" not in t.element
