"""Pass 5, ``bufferize``: golden text, values, the *Establishes* clause, and each rule: where it
fires, and where it must not."""

from __future__ import annotations

import pytest

from ren.ir.op import Op
from ren.passes import bufferize, is_stored
from ren.poly import Poly
from ren.ring import RingSpec
from tests.passes.helpers import (
    RING,
    RING3,
    apply,
    check_realizes,
    check_value_unchanged,
    coeff_input,
    graph_after,
    ntt_input,
    ops,
    prepare,
    rules_fired,
    value,
)

A = [1, 2, 3, 4, 5, 6, 7, 8]
B = [8, 7, 6, 5, 4, 3, 2, 1]
C = [3, 1, 4, 1, 5, 9, 2, 6]
SEEDS = range(6)


def test_golden():
    a, b = coeff_input(A), ntt_input(B)
    sink, ctx = prepare((a + 1).ntt() * b, upto="bufferize")
    assert str(sink) == GOLDEN_BEFORE
    after = apply("bufferize", sink, ctx)
    assert str(after) == GOLDEN_AFTER
    assert rules_fired(ctx, "bufferize") == ["poly_input", "poly_kernel", "output"]


# a + 1 is read by an NTT kernel (poly_input), the NTT writes a buffer (poly_kernel), the product
# is the output; the stored inputs and the constant are not materialized again.
GOLDEN_BEFORE = """\
SINK void
  MUL u32
    NTT u32
      ADD u32
        AS_RING u32 n=8 q=(17, 97) coeff
          BUFFER u32 b0 python 16 words
        AS_RING u32 n=8 q=(17, 97) coeff
          CONST u32 1 python
    AS_RING u32 n=8 q=(17, 97) ntt
      BUFFER u32 b1 python 16 words"""

GOLDEN_AFTER = """\
SINK void
  BUFFERIZE u32
    MUL u32
      BUFFERIZE u32
        NTT u32
          BUFFERIZE u32
            ADD u32
              AS_RING u32 n=8 q=(17, 97) coeff
                BUFFER u32 b0 python 16 words
              AS_RING u32 n=8 q=(17, 97) coeff
                CONST u32 1 python
      AS_RING u32 n=8 q=(17, 97) ntt
        BUFFER u32 b1 python 16 words"""


def _fired(*polys: Poly) -> list[tuple[str, Op]]:
    """(rule, op of the node it materialized) for each BUFFERIZE the pass added."""
    sink, ctx = prepare(*polys, upto="bufferize")
    apply("bufferize", sink, ctx)
    return [(r.rule, r.before.op) for r in ctx.record["bufferize"]]


def test_output_rule():
    a, c = coeff_input(A), coeff_input(C)
    assert _fired(a + c) == [("output", Op.ADD)]
    assert _fired(a * 3 - c) == [("output", Op.SUB)]  # one fused kernel, one buffer


def test_output_rule_not_for_stored_values_or_their_views():
    a3 = coeff_input(A, RING3)
    b = ntt_input(B)
    assert _fired(b) == []  # already in a buffer
    assert _fired(a3.to_ring(RingSpec(8, (97, 113)))) == []  # a window of a buffer
    assert _fired(a3.to_ring(RingSpec(8, (17, 97))).to_ring(RingSpec(8, (97,)))) == []


def test_poly_kernel_rule():
    a, b = coeff_input(A), ntt_input(B)
    assert _fired(a.ntt() * b) == [("poly_kernel", Op.NTT), ("output", Op.MUL)]
    assert _fired(b.rescale() + 1) == [
        ("poly_kernel", Op.INTT),
        ("poly_kernel", Op.RESCALE),
        ("output", Op.ADD),
    ]
    ext = a.to_ring(RingSpec(8, (113,)))
    assert _fired(ext * 2) == [("poly_kernel", Op.TO_RING), ("output", Op.MUL)]


def test_poly_input_rule():
    a, c = coeff_input(A), coeff_input(C)
    assert _fired((a + c).ntt()) == [("poly_input", Op.ADD), ("poly_kernel", Op.NTT)]
    assert _fired((a * 2).rescale()) == [("poly_input", Op.MUL), ("poly_kernel", Op.RESCALE)]
    # a stored value (or a constant) read by a polynomial kernel is read where it is
    assert _fired(a.ntt()) == [("poly_kernel", Op.NTT)]


def test_shared_rule():
    a, c = coeff_input(A), coeff_input(C)
    s = a * 3 + c  # coefficient-form work read twice
    assert _fired(s * 2 + s * 5) == [("shared", Op.ADD), ("output", Op.ADD)]
    assert _fired(s * 2, s * 5) == [("shared", Op.ADD), ("output", Op.MUL), ("output", Op.MUL)]


def test_shared_rule_not_for_stored_values_constants_or_one_user():
    b, d = ntt_input(A), ntt_input(C)
    assert _fired(b * b + b * 3 + (d + 3)) == [("output", Op.ADD)]  # b and 3 are read often
    s = b + d
    assert _fired(s * s) == [("output", Op.MUL)]  # one user, reading it twice


def test_shared_constant_of_two_rings_is_not_materialized():
    # ``a + 5`` and ``a.to_ring(17) + 5`` share the CONST node 5 under two AS_RINGs; a bare CONST
    # has no ring, and a constant needs no buffer.
    a = coeff_input(A)
    assert _fired(a + 5, a.to_ring(RingSpec(8, (17,))) + 5) == [
        ("output", Op.ADD),
        ("output", Op.ADD),
    ]


def test_contiguous_rule():
    a = coeff_input(A)
    assert _fired((a + 1).contiguous() * 2) == [("contiguous", Op.CONTIGUOUS), ("output", Op.MUL)]
    # contiguous on work that gets a buffer anyway adds nothing
    assert _fired(a.ntt().contiguous() + 1) == [
        ("poly_kernel", Op.NTT),
        ("contiguous", Op.CONTIGUOUS),
        ("output", Op.ADD),
    ]
    sink, ctx = prepare(a.ntt().contiguous() + 1, upto="bufferize")
    assert ops(apply("bufferize", sink, ctx)).count(Op.BUFFERIZE) == 2


def test_contiguous_of_a_constant_gets_a_buffer():
    assert _fired(Poly.const(7, RING).contiguous()) == [("contiguous", Op.CONTIGUOUS)]


def test_automorphisms_and_views_stay_fused():
    b3, d3 = ntt_input(A, RING3), ntt_input(C, RING3)
    p = (b3.rotate(1) + d3).to_ring(RingSpec(8, (97, 113))).conjugate() * 3
    assert _fired(p) == [("output", Op.MUL)]


@pytest.mark.parametrize("seed", SEEDS)
def test_value_unchanged(seed):
    check_value_unchanged("bufferize", seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_realizes(seed):
    check_realizes("bufferize", seed)


def _stored(n) -> bool:
    return n.op is Op.BUFFERIZE or bufferize.stored_or_view(n)


@pytest.mark.parametrize("seed", range(20))
def test_establishes(seed):
    _, after, _ = graph_after("bufferize", seed)
    assert Op.CONTIGUOUS not in ops(after)
    assert all(_stored(o) for o in after.src)
    nodes = after.toposort()
    wrapped = {n.src[0] for n in nodes if n.op is Op.BUFFERIZE}
    for n in nodes:
        if n.op is Op.BUFFERIZE:
            assert n.src[0].op is not Op.BUFFERIZE and not is_stored(n.src[0])
        if bufferize.is_poly_kernel(n):  # it writes a buffer, and reads stored values
            assert n in wrapped, f"{n!r} computed by a polynomial kernel is not materialized"
            assert all(_stored(s) for s in n.src)


def test_wide_splits_a_sum_too_wide_for_one_kernel():
    # 150 products of distinct stored inputs summed: fused whole, one kernel would read 300
    # buffers; the rule gives a fused source a buffer whenever the reads pass MAX_READS
    import random

    from ren.engine.schedule import schedule
    from tests.passes.helpers import sink_of

    rnd = random.Random(3)
    xs = [coeff_input([rnd.randrange(17) for _ in range(8)]) for _ in range(300)]
    total = xs[0] * xs[1]
    for i in range(2, 300, 2):
        total = total + xs[i] * xs[i + 1]
    sink, ctx = prepare(total, upto="bufferize")
    after = apply("bufferize", sink, ctx)
    assert "wide" in rules_fired(ctx, "bufferize")
    assert value(after) == value(sink)  # the values are unchanged
    kernels, _ = schedule(sink_of(total))
    widest = max(len(k.bufs) - 1 for k in kernels)  # slot 0 is the buffer written
    assert bufferize.MAX_READS // 2 < widest <= bufferize.MAX_READS
    want = value(sink_of(total))  # the reference evaluator, Python integers
    total.realize()  # the whole pipeline, split kernels and all
    assert value(sink_of(total)) == want
