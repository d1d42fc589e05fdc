"""Pass 4, ``fold_domains``: golden text, values, and the *Establishes* clause."""

from __future__ import annotations

import pytest

from ren.ir.facts import domain_of, facts
from ren.ir.node import Node
from ren.ir.op import DType, Op
from ren.ring import Domain
from tests.passes.helpers import (
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


def test_golden():
    a, b = coeff_input(A), ntt_input(B)
    ntt_of_ntt = Node(Op.NTT, DType.U32, (b.node,))  # the front end never builds it; a pass may
    sink, ctx = prepare(b.intt() * a, ntt_of_ntt, upto="fold_domains")
    assert str(sink) == GOLDEN_BEFORE
    after = apply("fold_domains", sink, ctx)
    assert str(after) == GOLDEN_AFTER
    assert rules_fired(ctx, "fold_domains") == ["ntt_intt", "ntt_of_ntt"]


# inject_domains wrapped b.intt() in an NTT for the product: the round trip goes
GOLDEN_BEFORE = """\
SINK void
  MUL u32
    NTT u32
      INTT u32
        [0] AS_RING u32 n=8 q=(17, 97) ntt
          BUFFER u32 b0 python 16 words
    NTT u32
      AS_RING u32 n=8 q=(17, 97) coeff
        BUFFER u32 b1 python 16 words
  NTT u32
    ^0 AS_RING"""

GOLDEN_AFTER = """\
SINK void
  MUL u32
    [0] AS_RING u32 n=8 q=(17, 97) ntt
      BUFFER u32 b0 python 16 words
    NTT u32
      AS_RING u32 n=8 q=(17, 97) coeff
        BUFFER u32 b1 python 16 words
  ^0 AS_RING"""


def test_each_rule():
    a, b = coeff_input(A), ntt_input(B)
    cases = [
        (Node(Op.INTT, DType.U32, (a.ntt().node,)), a.node, "intt_ntt"),
        (Node(Op.INTT, DType.U32, (a.node,)), a.node, "intt_of_coeff"),
        (Node(Op.NTT, DType.U32, (b.intt().node,)), b.node, "ntt_intt"),
        (Node(Op.NTT, DType.U32, (b.node,)), b.node, "ntt_of_ntt"),
    ]
    for node, want, rule in cases:
        sink, ctx = prepare(node, upto="fold_domains")
        out = apply("fold_domains", sink, ctx)
        assert out.src[0] is want
        assert rules_fired(ctx, "fold_domains") == [rule]


def test_rescale_after_product_keeps_its_intt():
    # (a * b).rescale(): the product is NTT, the rescale reads INTT of it; nothing to fold
    a, b = coeff_input(A), ntt_input(B)
    sink, ctx = prepare((a * b).rescale(), upto="fold_domains")
    assert apply("fold_domains", sink, ctx) is sink
    assert rules_fired(ctx, "fold_domains") == []


@pytest.mark.parametrize("seed", SEEDS)
def test_value_unchanged(seed):
    check_value_unchanged("fold_domains", seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_realizes(seed):
    check_realizes("fold_domains", seed)


@pytest.mark.parametrize("seed", range(30))
def test_establishes(seed):
    before, after, _ = graph_after("fold_domains", seed)
    for n in after.toposort():
        if n.op is Op.NTT:
            assert n.src[0].op is not Op.INTT and domain_of(n.src[0]) is Domain.COEFF
        if n.op is Op.INTT:
            assert n.src[0].op is not Op.NTT and domain_of(n.src[0]) is Domain.NTT
    for old, new in zip(before.src, after.src, strict=True):
        assert facts(new) == facts(old)
