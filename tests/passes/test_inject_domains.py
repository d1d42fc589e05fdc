"""Pass 3, ``inject_domains``: golden text, values, the *Establishes* clause, and each rule."""

from __future__ import annotations

import random

import pytest

from ren.ir.facts import domain_of, facts, is_const
from ren.ir.node import Node
from ren.ir.op import DType, Op
from ren.ir.spec import verify
from ren.poly import Poly
from ren.ring import Domain, RingSpec, ntt_primes
from tests.passes.helpers import (
    RING,
    RING3,
    apply,
    check_realizes,
    check_value_unchanged,
    coeff_input,
    coeffs,
    front_value,
    graph_after,
    ntt_input,
    prepare,
    realized,
    rules_fired,
    value,
)

A = [1, 2, 3, 4, 5, 6, 7, 8]
B = [8, 7, 6, 5, 4, 3, 2, 1]
C = [3, 1, 4, 1, 5, 9, 2, 6]
SEEDS = range(6)


def test_golden():
    a, b, c = coeff_input(A), ntt_input(B), coeff_input(C)
    sink, ctx = prepare(a * c, (a * 3 + b).rescale(), upto="inject_domains")
    assert str(sink) == GOLDEN_BEFORE
    after = apply("inject_domains", sink, ctx)
    assert str(after) == GOLDEN_AFTER
    assert rules_fired(ctx, "inject_domains") == [
        "sources_to_ntt",
        "sources_to_ntt",
        "source_to_coeff",
    ]


# a * c: both to NTT. a * 3 + b: the scalar product stays in coefficient form, the mixed sum
# pushes it to NTT, and the rescale reads coefficient form again.
GOLDEN_BEFORE = """\
SINK void
  MUL u32
    [0] AS_RING u32 n=8 q=(17, 97) coeff
      BUFFER u32 b0 python 16 words
    AS_RING u32 n=8 q=(17, 97) coeff
      BUFFER u32 b1 python 16 words
  RESCALE u32 / 97
    ADD u32
      MUL u32
        ^0 AS_RING
        AS_RING u32 n=8 q=(17, 97) coeff
          CONST u32 3 python
      AS_RING u32 n=8 q=(17, 97) ntt
        BUFFER u32 b2 python 16 words"""

GOLDEN_AFTER = """\
SINK void
  MUL u32
    NTT u32
      [0] AS_RING u32 n=8 q=(17, 97) coeff
        BUFFER u32 b0 python 16 words
    NTT u32
      AS_RING u32 n=8 q=(17, 97) coeff
        BUFFER u32 b1 python 16 words
  RESCALE u32 / 97
    INTT u32
      ADD u32
        NTT u32
          MUL u32
            ^0 AS_RING
            AS_RING u32 n=8 q=(17, 97) coeff
              CONST u32 3 python
        AS_RING u32 n=8 q=(17, 97) ntt
          BUFFER u32 b2 python 16 words"""


def _inject(*polys: Poly) -> tuple[Node, ...]:
    sink, ctx = prepare(*polys, upto="inject_domains")
    return apply("inject_domains", sink, ctx).src


def _ntt(x: Poly) -> Node:
    return Node(Op.NTT, DType.U32, (x.node,))


def _intt(x: Poly) -> Node:
    return Node(Op.INTT, DType.U32, (x.node,))


def test_mul_of_coefficient_polys_gets_ntts():
    a, c = coeff_input(A), coeff_input(C)
    (out,) = _inject(a * c)
    assert out.src == (_ntt(a), _ntt(c))


def test_mul_by_constant_keeps_its_domain():
    a, b = coeff_input(A), ntt_input(B)
    for p in (a * 3, 3 * a, b * 3, a + 3, 3 - a):
        (out,) = _inject(p)
        assert out is p.node  # no NTT, no INTT: the constant is lowered in the user's domain


def test_rescale_of_ntt_gets_intt():
    b = ntt_input(B)
    (out,) = _inject(b.rescale())
    assert out.op is Op.RESCALE and out.src == (_intt(b),)


def test_mixed_add_is_pushed_to_ntt():
    a, b = coeff_input(A), ntt_input(B)
    (add, sub) = _inject(a + b, b - a)
    assert add.src == (_ntt(a), b.node)
    assert sub.src == (b.node, _ntt(a))


def test_basis_extension_reads_coefficients_a_view_any_domain():
    b = ntt_input(B)
    ext, view = _inject(b.to_ring(RingSpec(8, (113,))), b.to_ring(RingSpec(8, (97,))))
    assert ext.src == (_intt(b),)
    assert view.src == (b.node,)


def test_coefficient_work_is_left_alone():
    a, c = coeff_input(A), coeff_input(C)
    p = (a + c) * 5 - Poly.const(2, RING)
    (out,) = _inject(p, a.rescale())[:1]
    assert out is p.node


@pytest.mark.parametrize("seed", SEEDS)
def test_value_unchanged(seed):
    check_value_unchanged("inject_domains", seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_realizes(seed):
    check_realizes("inject_domains", seed)


@pytest.mark.parametrize("seed", range(30))
def test_establishes(seed):
    before, after, _ = graph_after("inject_domains", seed)
    verify(after, domains=True)  # the verifier's domain rules, and explicitly:
    for n in after.toposort():
        if n.op in (Op.ADD, Op.SUB, Op.MUL, Op.AUTOMORPHISM):
            want = domain_of(n)
            assert all(domain_of(s) is want for s in n.src if not is_const(s))
        if n.op is Op.RESCALE:
            assert domain_of(n.src[0]) is Domain.COEFF
        if n.op is Op.TO_RING and facts(n.src[0]).ring.contiguous_offset(n.arg.ring) is None:
            assert domain_of(n.src[0]) is Domain.COEFF
    for old, new in zip(before.src, after.src, strict=True):
        assert facts(new) == facts(old)


# --------------------------------------------------------------------------------------------
# a rescale between NTT forms: only the dropped limb goes to coefficients

WIDE = RingSpec(8, tuple(ntt_primes(8, 50, 3)))  # u64 words, 50-bit moduli


def _rounded(coeffs: list[int], ring: RingSpec, q: int) -> list[int]:
    """``round(a_c / q)`` (ties up) modulo the kept moduli, in Python integers: the oracle."""
    Q, kept = ring.Q, ring.Q // q
    out = []
    for a in coeffs:
        a %= Q
        centered = a - Q if a > Q // 2 else a
        out.append(((2 * centered + q) // (2 * q)) % kept)  # floor(a_c / q + 1/2)
    return out


def _values(rnd: random.Random, ring: RingSpec, q: int) -> list[int]:
    """Random coefficients whose residues modulo ``q`` include the centered lift's edges."""
    edges = (0, 1, q - 1, q // 2, q // 2 + 1, q // 2 - 1)  # residue r modulo q, any value above
    out = [rnd.randrange(ring.Q // q) * q + r for r in edges]
    return out + [rnd.randrange(ring.Q) for _ in range(ring.n - len(out))]


@pytest.mark.parametrize("ring", [RING3, RingSpec(8, (17, 97)), WIDE], ids=["u32", "two", "u64"])
@pytest.mark.parametrize("drop", ["last", "first"])
@pytest.mark.parametrize("seed", range(4))
def test_a_rescale_between_ntt_forms_stays_in_ntt_form_with_the_rescales_words(ring, drop, seed):
    """``ntt(rescale(x))`` for an NTT-form ``x``: one limb to coefficients, and the same value.

    Oracles: Python integers' ``round(a_c / q)``, the reference evaluator before and after, and
    the realized words on the python device.
    """
    rnd = random.Random(seed)
    q = ring.moduli[-1] if drop == "last" else ring.moduli[0]
    coeffs = _values(rnd, ring, q)
    b = ntt_input(coeffs, ring)
    p = b.rescale(q).ntt()
    want = (_rounded(coeffs, ring, q),)
    assert front_value([p]) == want
    before, ctx = prepare(p, upto="inject_domains")
    after = apply("inject_domains", before, ctx)
    assert rules_fired(ctx, "inject_domains") == ["source_to_coeff", "rescale_in_ntt"]
    seen = after.toposort()
    assert Op.RESCALE not in {n.op for n in seen}
    (intt,) = [n for n in seen if n.op is Op.INTT]  # the dropped limb alone
    assert facts(intt).ring == RingSpec(8, (q,))
    assert value(after) == want
    assert tuple(realized(after, ctx, "inject_domains")) == want


def test_a_rescale_in_ntt_form_keeps_other_users_of_the_rescale_right():
    """A rescale read in coefficient form too is computed both ways, each with its value."""
    rnd = random.Random(7)
    b = ntt_input(coeffs(rnd, RING3), RING3)
    r = b.rescale()
    want = front_value([r.ntt(), r])
    before, ctx = prepare(r.ntt(), r, upto="inject_domains")
    after = apply("inject_domains", before, ctx)
    assert "rescale_in_ntt" in rules_fired(ctx, "inject_domains")
    assert value(after) == want
    assert tuple(realized(after, ctx, "inject_domains")) == want


@pytest.mark.parametrize(
    "make",
    [
        lambda b, c: b.rescale((97, 113)).ntt(),  # two moduli: the extension is not exact
        lambda b, c: b.rescale(97).ntt(),  # keeps (17, 113): not a view of b
        lambda b, c: b.rescale(),  # read in coefficient form
        lambda b, c: c.ntt().rescale().ntt(),  # intt(ntt(c)) folds: c's rescale is cheaper
        lambda b, c: None,  # a 60-bit modulus: its one-limb extension is not exact
    ],
    ids=["two-moduli", "middle", "coefficient-result", "folds", "60-bit"],
)
def test_other_rescales_keep_the_coefficient_rescale(make):
    rnd = random.Random(3)
    b, c = ntt_input(coeffs(rnd, RING3), RING3), coeff_input(coeffs(rnd, RING3), RING3)
    p = make(b, c)
    if p is None:
        wide = RingSpec(8, tuple(ntt_primes(8, 60, 3)))
        p = ntt_input(coeffs(rnd, wide), wide).rescale().ntt()
    want = front_value([p])
    before, ctx = prepare(p, upto="inject_domains")
    after = apply("inject_domains", before, ctx)
    assert "rescale_in_ntt" not in rules_fired(ctx, "inject_domains")
    assert Op.RESCALE in {n.op for n in after.toposort()}
    assert value(after) == want
