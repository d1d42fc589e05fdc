"""``inject_domains``: put ``NTT``/``INTT`` where an op needs a domain.

Rules (``c`` is a constant, ``x``, ``y`` are not):

* ``MUL(x, y)``: both in NTT form (a negacyclic product is a pointwise one there).
* ``ADD``/``SUB`` of operands in different domains: the coefficient-form one goes to NTT (mixed
  inputs are pushed toward NTT).
* ``AUTOMORPHISM(x)``: ``x`` in NTT form (a permutation of slots).
* ``RESCALE(x)`` and a basis-extending ``TO_RING(x)``: ``x`` in coefficient form.
* ``MUL(x, c)``, ``ADD(x, c)``, ``SUB``: never change a domain: a constant is lowered later in
  whatever domain its user computes in.

The domain of every original node is unchanged (the front end already reported where each op
computes); only its sources are converted.

*Requires*: ``lower_rotate`` ran.

*Establishes*: every op's non-constant sources are in the domain the op computes in.
"""

from __future__ import annotations

from ren.ir.facts import domain_of, is_const, is_view
from ren.ir.node import Node
from ren.ir.op import Op
from ren.ir.rewrite import Pat, Rules, graph_rewrite
from ren.passes import ScheduleContext, make
from ren.ring import Domain

__all__ = ["rules", "run"]
ESTABLISHES: frozenset[str] = frozenset({"domains"})  # what the verifier checks from here on


def _to(x: Node, domain: Domain) -> Node:
    if domain_of(x) is domain or is_const(x):
        return x
    return make(Op.NTT if domain is Domain.NTT else Op.INTT, x)


def sources_to_ntt(node: Node) -> Node | None:
    """Convert the sources of an op that computes in NTT form to NTT form.

    ``mul(x, y) -> mul(ntt(x), ntt(y))``; ``add(coeff x, ntt y) -> add(ntt(x), y)``
    """
    if domain_of(node) is not Domain.NTT:
        return None
    src = tuple(_to(s, Domain.NTT) for s in node.src)
    return None if src == node.src else node.replace(src=src)


def source_to_coeff(node: Node) -> Node | None:
    """Convert the source of a rescale or a basis extension to coefficient form.

    ``rescale(ntt x) -> rescale(intt(x))``; ``to_ring(ntt x) -> to_ring(intt(x))``
    """
    if is_view(node):
        return None  # a view works in any domain
    src = (_to(node.src[0], Domain.COEFF),)
    return None if src == node.src else node.replace(src=src)


rules = Rules(
    [
        (Pat((Op.MUL, Op.ADD, Op.SUB, Op.AUTOMORPHISM), name="node"), sources_to_ntt),
        (Pat((Op.RESCALE, Op.TO_RING), name="node"), source_to_coeff),
    ]
)


def run(sink: Node, ctx: ScheduleContext | None = None) -> Node:
    """Rewrite the graph below ``sink`` with ``rules`` until none matches; return the new sink.

    Each rule that fires is recorded in ``ctx``, under ``"inject_domains"``, if one is given.
    """
    record = ctx.rewrites("inject_domains") if ctx is not None else None
    return graph_rewrite(sink, rules, record=record)
