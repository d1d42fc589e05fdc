"""``inject_domains``: put ``NTT``/``INTT`` where an op needs a domain.

Rules (``c`` is a constant, ``x``, ``y`` are not):

* ``MUL(x, y)``: both in NTT form (a negacyclic product is a pointwise one there).
* ``ADD``/``SUB`` of operands in different domains: the coefficient-form one goes to NTT (mixed
  inputs are pushed toward NTT).
* ``AUTOMORPHISM(x)``: ``x`` in NTT form (a permutation of slots).
* ``RESCALE(x)`` and a basis-extending ``TO_RING(x)``: ``x`` in coefficient form.
* ``NTT(RESCALE(x))``, ``x`` in NTT form, dividing by one modulus ``q`` whose dropping leaves a
  contiguous run: stays in NTT form. Only ``q``'s limb goes to coefficients: its centered residue
  ``r`` is extended to the kept moduli and brought back to NTT form, and the result is
  ``(x - r) q^-1`` slot by slot. ``x - r`` is the multiple of ``q`` nearest to ``x`` (``q`` is odd:
  no ties), so the words are the rescale's, for one inverse NTT of a limb where the rescale needs
  one of every limb (a CKKS rescale's shape). Only where the extension from ``q`` is exact for
  every value (``ren.ring.tables.lift_exact``: ``q`` below about ``2^52``; a 60-bit ``q`` keeps the
  rescale, whose words no float decides).
* ``MUL(x, c)``, ``ADD(x, c)``, ``SUB``: never change a domain: a constant is lowered later in
  whatever domain its user computes in.

The domain of every original node is unchanged (the front end already reported where each op
computes); only its sources are converted.

*Requires*: ``lower_rotate`` ran.

*Establishes*: every op's non-constant sources are in the domain the op computes in.
"""

from __future__ import annotations

from ren.ir.facts import domain_of, is_const, is_view, need_ring
from ren.ir.node import Node, ToRingArg
from ren.ir.op import Op
from ren.ir.rewrite import Pat, Rules, graph_rewrite
from ren.passes import ScheduleContext, make
from ren.passes.simplify import const_like
from ren.ring import Domain
from ren.ring.tables import lift_exact

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


RESCALE_OF_INTT = Pat(Op.RESCALE, src=(Pat(Op.INTT, src=(Pat.var("x"),)),), name="rescale")


def rescale_in_ntt(rescale: Node, x: Node) -> Node | None:
    """A rescale by one modulus between NTT forms, computed in NTT form (see the module).

    ``ntt(rescale(intt(x))) -> (view(x) - ntt(to_ring(intt(x mod q)))) * q^-1``
    """
    moduli = rescale.arg.moduli
    if len(moduli) != 1 or x.op is Op.NTT:  # intt(ntt(y)) folds: the coefficient rescale is cheaper
        return None
    (q,) = moduli
    ring, out = need_ring(x), need_ring(rescale)
    one = ring.with_moduli((q,))
    if not lift_exact(q) or None in (ring.contiguous_offset(out), ring.contiguous_offset(one)):
        return None
    dropped = make(Op.INTT, Node(Op.TO_RING, x.dtype, (x,), ToRingArg(one)))
    r = make(Op.NTT, Node(Op.TO_RING, rescale.dtype, (dropped,), ToRingArg(out)))
    kept = Node(Op.TO_RING, rescale.dtype, (x,), ToRingArg(out))
    inverse = const_like(pow(q, -1, out.Q), rescale, Domain.COEFF)
    return make(Op.MUL, make(Op.SUB, kept, r), inverse)


rules = Rules(
    [
        (Pat(Op.NTT, src=(RESCALE_OF_INTT,)), rescale_in_ntt),
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
