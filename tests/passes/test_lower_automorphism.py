"""Pass 8, ``lower_automorphism``: golden text, values, the *Establishes* clause, and the rules."""

from __future__ import annotations

import pytest

from ren.ir.op import Op
from ren.passes import is_stored
from ren.ring import RingSpec
from tests.passes.helpers import (
    RING3,
    apply,
    check_realizes,
    check_value_unchanged,
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
    b, d = ntt_input(A), ntt_input(B)
    sink, ctx = prepare(((b + d) * 3).rotate(1) + b.rotate(1).rotate(1), upto="lower_automorphism")
    assert str(sink) == GOLDEN_BEFORE
    after = apply("lower_automorphism", sink, ctx)
    assert str(after) == GOLDEN_AFTER
    assert sorted(rules_fired(ctx, "lower_automorphism")) == [
        "auto_const",
        "compose",
        "push_down",
        "push_down",
    ]


GOLDEN_BEFORE = """\
SINK void
  AS_RING u32 n=8 q=(17, 97) ntt
    AFTER u32
      [0] BUFFER u32 b0 python 16 words
      STORE void
        ^0 BUFFER
        ADD u32
          AUTOMORPHISM u32 g=5 (rot 1)
            MUL u32
              ADD u32
                [1] AS_RING u32 n=8 q=(17, 97) ntt
                  BUFFER u32 b1 python 16 words
                AS_RING u32 n=8 q=(17, 97) ntt
                  BUFFER u32 b2 python 16 words
              AS_RING u32 n=8 q=(17, 97) coeff
                CONST u32 3 python
          AUTOMORPHISM u32 g=5 (rot 1)
            AUTOMORPHISM u32 g=5 (rot 1)
              ^1 AS_RING"""

# sigma_5 pushed through the product and the sum to the stored inputs (a constant is its own
# image); sigma_5(sigma_5(b)) = sigma_25 = sigma_9 (mod 2n = 16)
GOLDEN_AFTER = """\
SINK void
  AS_RING u32 n=8 q=(17, 97) ntt
    AFTER u32
      [0] BUFFER u32 b0 python 16 words
      STORE void
        ^0 BUFFER
        ADD u32
          MUL u32
            ADD u32
              AUTOMORPHISM u32 g=5 (rot 1)
                [1] AS_RING u32 n=8 q=(17, 97) ntt
                  BUFFER u32 b1 python 16 words
              AUTOMORPHISM u32 g=5 (rot 1)
                AS_RING u32 n=8 q=(17, 97) ntt
                  BUFFER u32 b2 python 16 words
            AS_RING u32 n=8 q=(17, 97) coeff
              CONST u32 3 python
          AUTOMORPHISM u32 g=9
            ^1 AS_RING"""


def test_composition_to_the_identity_disappears():
    b = ntt_input(A)
    sink, ctx = prepare(b.rotate(1).rotate(3) + 1, upto="lower_automorphism")  # 5 * 125 = 1
    out = apply("lower_automorphism", sink, ctx)
    assert Op.AUTOMORPHISM not in ops(out)
    assert "compose" in rules_fired(ctx, "lower_automorphism")


def test_pushed_through_a_limb_view():
    b3, d3 = ntt_input(A, RING3), ntt_input(B, RING3)
    p = (b3 - d3).to_ring(RingSpec(8, (17, 97))).conjugate()
    sink, ctx = prepare(p, upto="lower_automorphism")
    out = apply("lower_automorphism", sink, ctx)
    value = out.src[0].src[0].src[1].src[1]  # AS_RING(AFTER(B, STORE(B, value)))
    assert value.op is Op.TO_RING and value.src[0].op is Op.SUB
    assert [s.op for s in value.src[0].src] == [Op.AUTOMORPHISM, Op.AUTOMORPHISM]
    assert all(s.arg.galois == 15 for s in value.src[0].src)


def test_stored_value_is_left_alone():
    b = ntt_input(A)
    sink, ctx = prepare(b.rotate(2), upto="lower_automorphism")
    assert apply("lower_automorphism", sink, ctx) is sink


@pytest.mark.parametrize("seed", SEEDS)
def test_value_unchanged(seed):
    check_value_unchanged("lower_automorphism", seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_realizes(seed):
    check_realizes("lower_automorphism", seed)


@pytest.mark.parametrize("seed", range(20))
def test_establishes(seed):
    _, after, _ = graph_after("lower_automorphism", seed)
    for n in after.toposort():
        if n.op is Op.AUTOMORPHISM:
            assert is_stored(n.src[0]), f"{n!r} reads a {n.src[0].op.name}"
            assert n.arg.galois != 1
