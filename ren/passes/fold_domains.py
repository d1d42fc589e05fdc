"""``fold_domains``: remove domain round trips.

*Requires*: ``inject_domains`` ran (it may have wrapped an ``INTT(x)`` in ``NTT``).

*Establishes*: no ``NTT(INTT(x))``, ``INTT(NTT(x))``, and no conversion of a value that already
is in the target domain. Values and domains of the remaining nodes are unchanged.
"""

from __future__ import annotations

from ren.ir.facts import domain_of
from ren.ir.node import Node
from ren.ir.op import Op
from ren.ir.rewrite import Pat, Rules, graph_rewrite
from ren.passes import ScheduleContext
from ren.ring import Domain

__all__ = ["rules", "run"]
ESTABLISHES: frozenset[str] = frozenset()  # what the verifier checks from here on

X = Pat.var("x")

rules = Rules(
    [
        (Pat(Op.NTT, src=(Pat(Op.INTT, src=(X,)),)), lambda x: x, "ntt_intt"),  # ntt(intt(x)) -> x
        (Pat(Op.INTT, src=(Pat(Op.NTT, src=(X,)),)), lambda x: x, "intt_ntt"),  # intt(ntt(x)) -> x
        (
            Pat(Op.NTT, src=(X,), where=lambda n: domain_of(n.src[0]) is Domain.NTT),
            lambda x: x,
            "ntt_of_ntt",
        ),  # ntt(x in NTT form) -> x
        (
            Pat(Op.INTT, src=(X,), where=lambda n: domain_of(n.src[0]) is Domain.COEFF),
            lambda x: x,
            "intt_of_coeff",
        ),  # intt(x in coefficient form) -> x
    ]
)


def run(sink: Node, ctx: ScheduleContext | None = None) -> Node:
    """Rewrite the graph below ``sink`` with ``rules`` until none matches; return the new sink.

    Each rule that fires is recorded in ``ctx``, under ``"fold_domains"``, if one is given.
    """
    record = ctx.rewrites("fold_domains") if ctx is not None else None
    return graph_rewrite(sink, rules, record=record)
