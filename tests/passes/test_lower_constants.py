"""Pass 9, ``lower_constants``: golden text, values, the *Establishes* clause, and the layouts."""

from __future__ import annotations

import pytest

from ren.ir.facts import domain_of
from ren.ir.op import Op
from ren.poly import Poly
from ren.ring import Domain
from tests.passes.helpers import (
    RING,
    apply,
    check_realizes,
    check_value_unchanged,
    coeff_input,
    graph_after,
    ntt_input,
    ops,
    prepare,
)

A = [1, 2, 3, 4, 5, 6, 7, 8]
B = [8, 7, 6, 5, 4, 3, 2, 1]
SEEDS = range(6)


def test_golden():
    a, b = coeff_input(A), ntt_input(B)
    seven = Poly.const(7, RING)
    sink, ctx = prepare(a * 5 + seven, b + seven, seven.contiguous(), upto="lower_constants")
    assert str(sink) == GOLDEN_BEFORE
    after = apply("lower_constants", sink, ctx)
    assert str(after) == GOLDEN_AFTER


GOLDEN_BEFORE = """\
SINK void
  AS_RING u32 n=8 q=(17, 97) coeff
    AFTER u32
      [0] BUFFER u32 b0 python 16 words
      STORE void
        ^0 BUFFER
        ADD u32
          MUL u32
            AS_RING u32 n=8 q=(17, 97) coeff
              BUFFER u32 b1 python 16 words
            AS_RING u32 n=8 q=(17, 97) coeff
              CONST u32 5 python
          [1] AS_RING u32 n=8 q=(17, 97) coeff
            CONST u32 7 python
  AS_RING u32 n=8 q=(17, 97) ntt
    AFTER u32
      [2] BUFFER u32 b2 python 16 words
      STORE void
        ^2 BUFFER
        ADD u32
          AS_RING u32 n=8 q=(17, 97) ntt
            BUFFER u32 b3 python 16 words
          ^1 AS_RING
  AS_RING u32 n=8 q=(17, 97) coeff
    AFTER u32
      [3] BUFFER u32 b4 python 16 words
      STORE void
        ^3 BUFFER
        ^1 AS_RING"""

# the factor 5 is a scalar: every word (all); 7 added in coefficient form and 7 stored in
# coefficient form touch coefficient 0 only (first); 7 added in NTT form is in every slot (all)
GOLDEN_AFTER = """\
SINK void
  AS_RING u32 n=8 q=(17, 97) coeff
    AFTER u32
      [0] BUFFER u32 b0 python 16 words
      STORE void
        ^0 BUFFER
        ADD u32
          MUL u32
            AS_RING u32 n=8 q=(17, 97) coeff
              BUFFER u32 b1 python 16 words
            IMM u32 5 all n=8 q=(17, 97)
          [1] IMM u32 7 first n=8 q=(17, 97)
  AS_RING u32 n=8 q=(17, 97) ntt
    AFTER u32
      [2] BUFFER u32 b2 python 16 words
      STORE void
        ^2 BUFFER
        ADD u32
          AS_RING u32 n=8 q=(17, 97) ntt
            BUFFER u32 b3 python 16 words
          IMM u32 7 all n=8 q=(17, 97)
  AS_RING u32 n=8 q=(17, 97) coeff
    AFTER u32
      [3] BUFFER u32 b4 python 16 words
      STORE void
        ^3 BUFFER
        ^1 IMM"""


def _imms(*polys: Poly) -> list[tuple[int, str]]:
    sink, ctx = prepare(*polys, upto="lower_constants")
    out = apply("lower_constants", sink, ctx)
    return [(n.arg.value, n.arg.layout) for n in out.toposort() if n.op is Op.IMM]


def test_layouts():
    a, b = coeff_input(A), ntt_input(B)
    assert _imms(a + 5) == [(5, "first")]  # added in coefficient form
    assert _imms(5 - a) == [(5, "first")]
    assert _imms(b + 5) == [(5, "all")]  # added in NTT form
    assert _imms(a * 5) == [(5, "all")]  # a factor, in either form
    assert _imms(b * 5) == [(5, "all")]
    assert _imms(a * b - 5) == [(5, "all")]  # subtracted from an NTT-form product
    assert _imms(Poly.const(5, RING).contiguous()) == [(5, "first")]  # stored, coefficients
    assert _imms(Poly.const(5, RING).ntt().contiguous()) == [(5, "all")]  # stored, NTT form
    assert _imms(Poly.const(5, RING).ntt()) == [(5, "all")]  # an output constant, NTT form
    assert sorted(_imms(a * 5 + 5)) == [(5, "all"), (5, "first")]  # one constant, two roles


@pytest.mark.parametrize("seed", SEEDS)
def test_value_unchanged(seed):
    check_value_unchanged("lower_constants", seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_realizes(seed):
    check_realizes("lower_constants", seed)


@pytest.mark.parametrize("seed", range(20))
def test_establishes(seed):
    _, after, _ = graph_after("lower_constants", seed)
    assert Op.CONST not in ops(after)
    for n in after.toposort():
        if n.op in (Op.ADD, Op.SUB) and domain_of(n) is Domain.COEFF:
            assert all(s.arg.layout == "first" for s in n.src if s.op is Op.IMM)
        if n.op is Op.AS_RING and n.arg.domain is Domain.COEFF and n.src[0].op is Op.AFTER:
            value = n.src[0].src[1].src[1]
            assert value.op is not Op.IMM or value.arg.layout == "first"
