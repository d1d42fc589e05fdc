"""Pass 2, ``lower_rotate``: golden text, values, and the *Establishes* clause."""

from __future__ import annotations

import pytest

from ren.ir.facts import domain_of
from ren.ir.op import Op
from ren.ring import Domain
from tests.passes.helpers import (
    apply,
    check_realizes,
    check_value_unchanged,
    coeff_input,
    graph_after,
    ntt_input,
    ops,
    prepare,
    rules_fired,
)

A = [1, 2, 3, 4, 5, 6, 7, 8]
B = [8, 7, 6, 5, 4, 3, 2, 1]
SEEDS = range(6)


def test_golden():
    a, b = coeff_input(A), ntt_input(B)
    sink, ctx = prepare(a.rotate(1) + b.rotate(2), upto="lower_rotate")
    assert str(sink) == GOLDEN_BEFORE
    after = apply("lower_rotate", sink, ctx)
    assert str(after) == GOLDEN_AFTER
    assert rules_fired(ctx, "lower_rotate") == ["lower_rotate", "lower_rotate"]


# rotate(1) is g = 5, rotate(2) is g = 5**2 mod 16 = 9; a coefficient-form source gets an NTT
GOLDEN_BEFORE = """\
SINK void
  ADD u32
    ROTATE u32 g=5 (rot 1)
      AS_RING u32 n=8 q=(17, 97) coeff
        BUFFER u32 b0 python 16 words
    ROTATE u32 g=9 (rot 2)
      AS_RING u32 n=8 q=(17, 97) ntt
        BUFFER u32 b1 python 16 words"""

GOLDEN_AFTER = """\
SINK void
  ADD u32
    AUTOMORPHISM u32 g=5 (rot 1)
      NTT u32
        AS_RING u32 n=8 q=(17, 97) coeff
          BUFFER u32 b0 python 16 words
    AUTOMORPHISM u32 g=9 (rot 2)
      AS_RING u32 n=8 q=(17, 97) ntt
        BUFFER u32 b1 python 16 words"""


def test_conjugate_and_automorphism():
    a = coeff_input(A)
    sink, ctx = prepare(a.conjugate(), a.automorphism(3), upto="lower_rotate")
    out = apply("lower_rotate", sink, ctx)
    assert [n.op for n in out.src] == [Op.AUTOMORPHISM, Op.AUTOMORPHISM]
    assert [n.arg.galois for n in out.src] == [15, 3]
    assert out.src[0].src[0] is out.src[1].src[0]  # one NTT(a), shared
    assert out.src[0].src[0].op is Op.NTT


@pytest.mark.parametrize("seed", SEEDS)
def test_value_unchanged(seed):
    check_value_unchanged("lower_rotate", seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_realizes(seed):
    check_realizes("lower_rotate", seed)


@pytest.mark.parametrize("seed", range(30))
def test_establishes(seed):
    before, after, _ = graph_after("lower_rotate", seed)
    assert Op.ROTATE not in ops(after)
    for n in after.toposort():
        if n.op is Op.AUTOMORPHISM:
            assert domain_of(n.src[0]) is Domain.NTT
    for old, new in zip(before.src, after.src, strict=True):  # the front end's domains are kept
        assert domain_of(new) is domain_of(old)
