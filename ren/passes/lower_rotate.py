"""``lower_rotate``: high-level ring ops to the ops kernels implement.

``ROTATE(x, g)`` (a slot rotation or a conjugation) becomes ``AUTOMORPHISM(x, g)`` computed in NTT
form, where it is a pure permutation of slots: ``AUTOMORPHISM(NTT(x), g)`` when ``x`` is in
coefficient form. The NTT is put in here, not left to domain injection, so that the domain of
every node stays the one the front end reported.

*Requires*: ``simplify`` ran (a rotation of a constant is already the constant).

*Establishes*: no ``ROTATE``; every ``AUTOMORPHISM`` reads an NTT-form value.
"""

from __future__ import annotations

from ren.ir.facts import domain_of
from ren.ir.node import Node
from ren.ir.op import Op
from ren.ir.rewrite import Pat, Rules, graph_rewrite
from ren.passes import ScheduleContext, make
from ren.ring import Domain

__all__ = ["rules", "run"]
ESTABLISHES: frozenset[str] = frozenset()  # what the verifier checks from here on


def lower_rotate(node: Node, x: Node) -> Node:
    """A rotation becomes an automorphism of the NTT form of its source.

    ``rotate(x, g) -> automorphism(ntt(x), g)``
    """
    src = x if domain_of(x) is Domain.NTT else make(Op.NTT, x)
    return make(Op.AUTOMORPHISM, src, arg=node.arg)


rules = Rules([(Pat(Op.ROTATE, src=(Pat.var("x"),), name="node"), lower_rotate)])


def run(sink: Node, ctx: ScheduleContext | None = None) -> Node:
    """Rewrite the graph below ``sink`` with ``rules`` until none matches; return the new sink.

    Each rule that fires is recorded in ``ctx``, under ``"lower_rotate"``, if one is given.
    """
    record = ctx.rewrites("lower_rotate") if ctx is not None else None
    return graph_rewrite(sink, rules, record=record)
