"""Pass 10, ``views``: golden text, values, the *Establishes* clause, and the rules."""

from __future__ import annotations

import pytest

from ren.ir.facts import facts
from ren.ir.op import Op
from ren.poly import Poly
from ren.ring import RingSpec
from tests.passes.helpers import (
    RING3,
    apply,
    check_realizes,
    check_value_unchanged,
    coeff_input,
    graph_after,
    ntt_input,
    prepare,
    rules_fired,
)

A = [1, 2, 3, 4, 5, 6, 7, 8]
B = [8, 7, 6, 5, 4, 3, 2, 1]
SEEDS = range(6)
TOP2 = RingSpec(8, (97, 113))


def test_golden():
    a3 = coeff_input(A, RING3)
    sink, ctx = prepare((a3 * 2).to_ring(TOP2) + a3.to_ring(TOP2), upto="views")
    assert str(sink) == GOLDEN_BEFORE
    after = apply("views", sink, ctx)
    assert str(after) == GOLDEN_AFTER
    assert sorted(rules_fired(ctx, "views")) == ["push_view", "push_view", "view_stored"]


GOLDEN_BEFORE = """\
SINK void
  AS_RING u32 n=8 q=(97, 113) coeff
    AFTER u32
      [0] BUFFER u32 b0 python 16 words
      STORE void
        ^0 BUFFER
        ADD u32
          TO_RING u32 -> n=8 q=(97, 113)
            MUL u32
              [1] AS_RING u32 n=8 q=(17, 97, 113) coeff
                BUFFER u32 b1 python 24 words
              IMM u32 2 all n=8 q=(17, 97, 113)
          TO_RING u32 -> n=8 q=(97, 113)
            ^1 AS_RING"""

# moduli (97, 113) are limbs 1 and 2 of a3: a window 8 words in, 16 words long; the view of the
# product is pushed to its sources, and the constant takes the new ring
GOLDEN_AFTER = """\
SINK void
  AS_RING u32 n=8 q=(97, 113) coeff
    AFTER u32
      [0] BUFFER u32 b0 python 16 words
      STORE void
        ^0 BUFFER
        ADD u32
          MUL u32
            [1] AS_RING u32 n=8 q=(97, 113) coeff
              BUFFER_VIEW u32 @8 16 words
                BUFFER u32 b1 python 24 words
            IMM u32 2 all n=8 q=(97, 113)
          ^1 AS_RING"""


def _stored_value(sink):
    """The value stored for the first output: AS_RING(AFTER(B, STORE(B, value)))."""
    return sink.src[0].src[0].src[1].src[1]


def test_view_of_a_view_adds_the_offsets():
    a3 = coeff_input(A, RING3)
    p = (a3.to_ring(RingSpec(8, (17, 97))) + 1).to_ring(RingSpec(8, (97,)))
    sink, ctx = prepare(p, upto="views")
    out = apply("views", sink, ctx)
    add = _stored_value(out)
    view, imm = add.src
    assert view.arg.ring == RingSpec(8, (97,)) and imm.arg.ring == RingSpec(8, (97,))
    assert view.src[0].op is Op.BUFFER_VIEW
    assert (view.src[0].arg.offset, view.src[0].arg.size) == (8, 8)
    assert view.src[0].src[0] is a3.node.src[0]  # a window of a3's own buffer, not of a view
    assert imm.arg.layout == "first"


def test_pushed_through_neg_sub_and_automorphism():
    b3, d3 = ntt_input(A, RING3), ntt_input(B, RING3)
    p = (-(b3 - d3.rotate(1))).to_ring(TOP2)
    sink, ctx = prepare(p, upto="views")
    out = apply("views", sink, ctx)
    assert not any(n.op is Op.TO_RING for n in out.toposort())
    gathered = [n for n in out.toposort() if n.op is Op.AUTOMORPHISM]
    assert [g.src[0].src[0].op for g in gathered] == [Op.BUFFER_VIEW]


def test_basis_extension_is_not_a_view():
    a = coeff_input(A, RingSpec(8, (17, 97)))
    sink, ctx = prepare(a.to_ring(RingSpec(8, (97, 17))), upto="views")
    assert apply("views", sink, ctx) is sink
    assert rules_fired(ctx, "views") == []


def test_output_view_of_a_stored_input_is_no_work():
    a3 = coeff_input(A, RING3)
    sink, ctx = prepare(a3.to_ring(TOP2), Poly.const(3, RING3) + a3, upto="views")
    out = apply("views", sink, ctx)
    view = out.src[0]
    assert view.op is Op.AS_RING and view.src[0].op is Op.BUFFER_VIEW
    assert view.src[0].src[0] is a3.node.src[0]


@pytest.mark.parametrize("seed", SEEDS)
def test_value_unchanged(seed):
    check_value_unchanged("views", seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_realizes(seed):
    check_realizes("views", seed)


@pytest.mark.parametrize("seed", range(20))
def test_establishes(seed):
    _, after, _ = graph_after("views", seed)
    for n in after.toposort():
        if n.op is Op.TO_RING:  # what is left is basis extension
            assert facts(n.src[0]).ring.contiguous_offset(n.arg.ring) is None
        if n.op is Op.BUFFER_VIEW:
            base = n.src[0]
            assert base.op in (Op.BUFFER, Op.AFTER)
