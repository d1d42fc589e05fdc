"""``lower_automorphism``: automorphisms become gathered loads.

In NTT form ``sigma_g`` is a permutation of slots within each limb, and every elementwise op
acts slot by slot, so the permutation commutes with them and is pushed down to the values read:

* ``AUTOMORPHISM(op(x, y), g)`` -> ``op(AUTOMORPHISM(x, g), AUTOMORPHISM(y, g))`` for ``ADD``,
  ``SUB``, ``NEG``, ``MUL`` (pointwise in NTT form) and limb views (``TO_RING`` onto a run);
* ``AUTOMORPHISM(AUTOMORPHISM(x, g1), g2)`` -> ``AUTOMORPHISM(x, g1 * g2 mod 2n)``, and
  ``AUTOMORPHISM(x, 1)`` -> ``x`` (``sigma_g2(sigma_g1(a)) = a(X^(g1 g2))``);
* ``AUTOMORPHISM(c, g)`` -> ``c`` for a constant.

What is left is ``AUTOMORPHISM`` directly over stored values: ``indexify`` turns each into a load
that gathers ``in[perm_g[k]]``.

*Requires*: ``inject_domains`` ran (every automorphism reads NTT form); ``bufferize`` ran (shared
work is stored, so pushing down duplicates nothing).

*Establishes*: every ``AUTOMORPHISM`` reads a stored value. Values are unchanged.
"""

from __future__ import annotations

from ren.ir.facts import is_const, is_view, need_ring
from ren.ir.node import GaloisArg, Node
from ren.ir.op import Op
from ren.ir.rewrite import Pat, Rules, graph_rewrite
from ren.passes import ScheduleContext, make

__all__ = ["rules", "run"]
ESTABLISHES: frozenset[str] = frozenset()  # what the verifier checks from here on


def push_down(node: Node, x: Node) -> Node:
    """Push an automorphism through an elementwise op or a limb view to its sources.

    ``auto(op(a, b), g) -> op(auto(a, g), auto(b, g))``
    """
    if x.op is Op.TO_RING:  # a limb view: same slots, fewer limbs; galois is per ring degree
        return x.replace(src=(make(Op.AUTOMORPHISM, x.src[0], arg=node.arg),))
    return x.replace(src=tuple(make(Op.AUTOMORPHISM, s, arg=node.arg) for s in x.src))


def compose(node: Node, x: Node) -> Node:
    """Compose two automorphisms into one; the identity (``g = 1``) disappears.

    ``auto(auto(x, g1), g2) -> auto(x, g1 g2 mod 2n)``
    """
    inner = node.src[0]
    g = inner.arg.galois * node.arg.galois % (2 * need_ring(x).n)
    return x if g == 1 else make(Op.AUTOMORPHISM, x, arg=GaloisArg(g))


rules = Rules(
    [
        (Pat(Op.AUTOMORPHISM, src=(Pat.var("c", where=is_const),)), lambda c: c, "auto_const"),
        (
            Pat(Op.AUTOMORPHISM, src=(Pat(Op.AUTOMORPHISM, src=(Pat.var("x"),)),), name="node"),
            compose,
        ),
        (
            Pat(
                Op.AUTOMORPHISM,
                src=(Pat((Op.ADD, Op.SUB, Op.NEG, Op.MUL, Op.TO_RING), name="x"),),
                name="node",
                where=lambda n: n.src[0].op is not Op.TO_RING or is_view(n.src[0]),
            ),
            push_down,
        ),
    ]
)


def run(sink: Node, ctx: ScheduleContext | None = None) -> Node:
    """Rewrite the graph below ``sink`` with ``rules`` until none matches; return the new sink.

    Each rule that fires is recorded in ``ctx``, under ``"lower_automorphism"``, if one is given.
    """
    record = ctx.rewrites("lower_automorphism") if ctx is not None else None
    return graph_rewrite(sink, rules, record=record)
