"""``simplify``: algebra, ring rules, constants and copies.

Removes work whose result is known without computing: identities (``x + 0``, ``x * 1``), constant
folding (a constant polynomial stays a ``CONST``, whatever op is applied to it), double negation,
redundant copies, contiguous requests on values already in a buffer, and basis changes to the same
ring or views of views.

*Requires*: a front-end graph.

*Establishes*: no op has only constant sources (except ``CONTIGUOUS``, which asks for a buffer),
no ``x + 0``, ``x - 0``, ``x * 1``, ``x * 0``, ``x - x``, ``-(-x)``, ``COPY(COPY(x))``,
``CONTIGUOUS(CONTIGUOUS(x))``, ``TO_RING`` to the same ring, or ``TO_RING`` of a view onto a view.
The value of every output is unchanged, and so is its ring and domain (an output whose work
folded into another domain is converted back).
"""

from __future__ import annotations

from ren.ir.facts import facts, is_const
from ren.ir.node import ConstArg, Node, RingArg, ToRingArg
from ren.ir.op import DType, Op
from ren.ir.rewrite import Pat, Rules, graph_rewrite
from ren.passes import ScheduleContext, make
from ren.ring import Domain

__all__ = ["rules", "run"]
ESTABLISHES: frozenset[str] = frozenset()  # what the verifier checks from here on


def const_value(node: Node) -> int | None:
    """The integer of a ring constant ``AS_RING(CONST c)``, else ``None``."""
    const = node.op is Op.AS_RING and node.src[0].op is Op.CONST
    value: int | None = node.src[0].arg.value if const else None  # a CONST's arg: a ConstArg
    return value


def const_like(value: int, like: Node, domain: Domain | None = None) -> Node:
    """The constant ``value`` with ``like``'s ring, device and domain (or ``domain``)."""
    f = facts(like)
    ring = f.need_ring()
    Q = ring.Q
    v = value % Q
    v = v - Q if v > Q // 2 else v
    dtype = DType.of_ring(ring.dtype)
    const = Node(Op.CONST, dtype, (), ConstArg(v, f.need_device()))
    return Node(Op.AS_RING, dtype, (const,), RingArg(ring, domain or f.need_domain()))


def _is(value: int) -> Pat:
    return Pat(Op.AS_RING, src=(Pat(Op.CONST),), where=lambda n: _residue(n) == value)


def _residue(node: Node) -> int | None:
    """The value of a ring constant in ``[0, Q)``, else ``None``."""
    v = const_value(node)
    return None if v is None else v % node.arg.ring.Q


CONST = Pat(Op.AS_RING, src=(Pat(Op.CONST),))
X, Y = Pat.var("x"), Pat.var("y")


def fold(node: Node) -> Node | None:
    """An op whose sources are all constants is a constant (``CONTIGUOUS`` excepted)."""
    if not node.src or node.op is Op.CONTIGUOUS or not all(is_const(s) for s in node.src):
        return None
    vals = [v for s in node.src if (v := const_value(s)) is not None]
    if len(vals) != len(node.src):
        return None
    op = node.op
    if op is Op.ADD:
        return const_like(vals[0] + vals[1], node)
    if op is Op.SUB:
        return const_like(vals[0] - vals[1], node)
    if op is Op.MUL:
        return const_like(vals[0] * vals[1], node)
    if op is Op.NEG:
        return const_like(-vals[0], node)
    if op in (Op.NTT, Op.INTT, Op.ROTATE, Op.AUTOMORPHISM, Op.COPY, Op.TO_RING):
        return const_like(vals[0], node)  # c(X^g) = c; the centered c carried to the new ring
    if op is Op.RESCALE:
        P = 1
        for p in node.arg.moduli:
            P *= p
        return const_like((2 * vals[0] + P) // (2 * P), node)  # floor(c / P + 1/2)
    return None


def _view_of_view(x: Node, node: Node) -> Node | None:
    """``TO_RING(TO_RING(x, r1), r2)`` with both views: one view of ``x``."""
    inner, ring = node.src[0], node.arg.ring
    r1 = inner.arg.ring
    src_ring = facts(inner.src[0]).need_ring()
    if src_ring.contiguous_offset(r1) is None or r1.contiguous_offset(ring) is None:
        return None
    return x if ring == src_ring else Node(Op.TO_RING, node.dtype, (x,), ToRingArg(ring))


rules = Rules(
    [
        (Pat(name="node"), fold, "fold_constants"),  # op(c1, c2, ...) -> c
        (Pat(Op.ADD, src=(X, _is(0))), lambda x: x, "add_zero"),  # x + 0 -> x
        (Pat(Op.ADD, src=(_is(0), X)), lambda x: x, "zero_add"),  # 0 + x -> x
        (Pat(Op.SUB, src=(X, _is(0))), lambda x: x, "sub_zero"),  # x - 0 -> x
        (Pat(Op.SUB, src=(_is(0), X)), lambda x: make(Op.NEG, x), "zero_sub"),  # 0 - x -> -x
        (Pat(Op.MUL, src=(X, _is(1))), lambda x: x, "mul_one"),  # x * 1 -> x
        (Pat(Op.MUL, src=(_is(1), X)), lambda x: x, "one_mul"),  # 1 * x -> x
        (
            Pat(Op.MUL, src=(X, Y), name="node", where=lambda n: any(_zero(s) for s in n.src)),
            lambda node, x, y: const_like(0, node),
            "mul_zero",
        ),  # x * 0 -> 0
        (Pat(Op.SUB, src=(X, X), name="node"), lambda node, x: const_like(0, node), "sub_self"),
        (Pat(Op.NEG, src=(Pat(Op.NEG, src=(X,)),)), lambda x: x, "double_neg"),  # -(-x) -> x
        (
            Pat(Op.COPY, src=(Pat(Op.COPY, src=(X,)),), name="node"),
            lambda node, x: (
                x if facts(x).device == node.arg.device else make(Op.COPY, x, arg=node.arg)
            ),
            "copy_copy",
        ),  # copy(copy(x, d1), d2) -> copy(x, d2)
        (
            Pat(
                Op.COPY,
                src=(X,),
                name="node",
                where=lambda n: facts(n.src[0]).device == n.arg.device,
            ),
            lambda node, x: x,
            "copy_same_device",
        ),  # copy(x, its own device) -> x
        (Pat(Op.CONTIGUOUS, src=(Pat(Op.CONTIGUOUS, name="x"),)), lambda x: x, "contiguous_twice"),
        (
            Pat(Op.CONTIGUOUS, src=(Pat(Op.AS_RING, src=(Pat(Op.BUFFER),), name="x"),)),
            lambda x: x,
            "contiguous_buffer",
        ),  # contiguous(buffer) -> buffer
        (
            Pat(Op.TO_RING, src=(X,), where=lambda n: n.arg.ring == facts(n.src[0]).ring),
            lambda x: x,
            "to_same_ring",
        ),  # x in its own ring -> x
        (
            Pat(Op.TO_RING, src=(Pat(Op.TO_RING, src=(X,)),), name="node"),
            _view_of_view,
            "view_of_view",
        ),  # view(view(x)) -> view(x)
    ]
)


def _zero(node: Node) -> bool:
    return _residue(node) == 0


def keep_output_domains(before: Node, after: Node) -> Node:
    """Outputs keep the domain the front end reported.

    Folding can change where a value is computed (``x + 0 * a`` was a sum in NTT form, ``x`` may
    be in coefficient form); inside the graph that is only representation, but an output's domain
    is what its buffer will hold, so an output whose domain moved is converted back.
    """
    if before.op is not Op.SINK:
        return after
    src = []
    for old, new in zip(before.src, after.src, strict=True):
        want, got = facts(old).domain, facts(new).domain
        if want is not None and got is not want:
            if (value := const_value(new)) is not None:
                new = const_like(value, new, domain=want)
            else:
                new = make(Op.NTT if want is Domain.NTT else Op.INTT, new)
        src.append(new)
    return after.replace(src=tuple(src))


def run(sink: Node, ctx: ScheduleContext | None = None) -> Node:
    """Apply the rules to a fixed point; outputs keep their domains."""
    record = ctx.rewrites("simplify") if ctx is not None else None
    return keep_output_domains(sink, graph_rewrite(sink, rules, record=record))
