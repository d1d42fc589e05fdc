"""``lower_constants``: ring constants become explicit words, ``IMM``.

A constant polynomial ``c`` has different words in the two domains: in coefficient form it is
``c`` at coefficient 0 and zeros elsewhere; in NTT form it is ``c`` in every slot. As a *factor*
it is a scalar, ``c`` in every word, in either domain. So:

* ``AS_RING(CONST c)`` -> ``IMM(c, layout="all")``;
* an ``IMM`` added to or subtracted from coefficient-form work, or stored as a coefficient-form
  value, -> ``IMM(c, layout="first")``.

``IMM``'s value is the constant polynomial ``c`` whatever its layout (so ``MUL(x, IMM(c))`` is
``c * x``), so values are unchanged.

*Requires*: domains are final (``fold_domains``); automorphisms are pushed to the loads
(``lower_automorphism``).

*Establishes*: no ``CONST``; every ``IMM`` in coefficient-form addition or storage is ``first``.
"""

from __future__ import annotations

from dataclasses import replace

from ren.ir.facts import domain_of
from ren.ir.node import ImmArg, Node
from ren.ir.op import Op
from ren.ir.rewrite import Pat, Rules, graph_rewrite
from ren.passes import ScheduleContext
from ren.ring import Domain

__all__ = ["rules", "run"]
ESTABLISHES: frozenset[str] = frozenset()  # what the verifier checks from here on

ALL = Pat(Op.IMM, name="imm", where=lambda n: n.arg.layout == "all")
STORED_ALL = Pat(Op.AFTER, src=(Pat(Op.BUFFER), Pat(Op.STORE, src=(Pat(), ALL))))


def lower_const(node: Node, c: Node) -> Node:
    """A ring constant becomes an ``IMM`` with ``c`` in every word.

    ``as_ring(const c) -> imm(c, all)``
    """
    return Node(Op.IMM, node.dtype, (), ImmArg(c.arg.value, node.arg.ring, c.arg.device))


def _first(imm: Node) -> Node:
    return imm.replace(arg=replace(imm.arg, layout="first"))


def coeff_addend(node: Node) -> Node | None:
    """A constant added in coefficient form goes to coefficient 0 only.

    ``add(x, imm(c, all))`` in coefficient form ``-> add(x, imm(c, first))``
    """
    if domain_of(node) is not Domain.COEFF:
        return None
    src = tuple(_first(s) if ALL.match(s, {}) else s for s in node.src)
    return None if src == node.src else node.replace(src=src)


def coeff_store(node: Node, imm: Node) -> Node:
    """A constant stored as a coefficient-form value goes to coefficient 0 only.

    ``as_ring(after(B, store(B, imm(c, all))), coeff) -> ... imm(c, first)``
    """
    after = node.src[0]
    store = after.src[1]
    new_store = store.replace(src=(store.src[0], _first(imm)))
    return node.replace(src=(after.replace(src=(after.src[0], new_store)),))


rules = Rules(
    [
        (Pat(Op.AS_RING, src=(Pat(Op.CONST, name="c"),), name="node"), lower_const),
        (Pat((Op.ADD, Op.SUB), name="node"), coeff_addend),
        (
            Pat(
                Op.AS_RING,
                src=(STORED_ALL,),
                name="node",
                where=lambda n: n.arg.domain is Domain.COEFF,
            ),
            coeff_store,
        ),
    ]
)


def run(sink: Node, ctx: ScheduleContext | None = None) -> Node:
    """Rewrite the graph below ``sink`` with ``rules`` until none matches; return the new sink.

    Each rule that fires is recorded in ``ctx``, under ``"lower_constants"``, if one is given.
    """
    record = ctx.rewrites("lower_constants") if ctx is not None else None
    return graph_rewrite(sink, rules, record=record)
