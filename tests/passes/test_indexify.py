"""Pass 11, ``indexify``: golden text, values, and the *Establishes* clause."""

from __future__ import annotations

import pytest

from ren.ir.op import Op
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
)

A = [1, 2, 3, 4, 5, 6, 7, 8]
B = [8, 7, 6, 5, 4, 3, 2, 1]
SEEDS = range(6)


def test_golden():
    b, d = ntt_input(A), ntt_input(B)
    sink, ctx = prepare(b.rotate(1) + d, upto="indexify")
    assert str(sink) == GOLDEN_BEFORE
    after = apply("indexify", sink, ctx)
    assert str(after) == GOLDEN_AFTER


GOLDEN_BEFORE = """\
SINK void
  AS_RING u32 n=8 q=(17, 97) ntt
    AFTER u32
      [0] BUFFER u32 b0 python 16 words
      STORE void
        ^0 BUFFER
        ADD u32
          AUTOMORPHISM u32 g=5 (rot 1)
            AS_RING u32 n=8 q=(17, 97) ntt
              BUFFER u32 b1 python 16 words
          AS_RING u32 n=8 q=(17, 97) ntt
            BUFFER u32 b2 python 16 words"""

# every AS_RING over storage is a load at GIDX; the automorphism becomes a gathered load
GOLDEN_AFTER = """\
SINK void
  LOAD u32 n=8 q=(17, 97) ntt
    INDEX index n=8 q=(17, 97) ntt
      AFTER u32
        [0] BUFFER u32 b0 python 16 words
        STORE void
          ^0 BUFFER
          ADD u32
            LOAD u32 n=8 q=(17, 97) ntt gather g=5
              INDEX index n=8 q=(17, 97) ntt gather g=5
                BUFFER u32 b1 python 16 words
                [1] GIDX index
            LOAD u32 n=8 q=(17, 97) ntt
              INDEX index n=8 q=(17, 97) ntt
                BUFFER u32 b2 python 16 words
                ^1 GIDX
      ^1 GIDX"""


def test_a_window_is_a_load_with_a_limb_offset():
    a3 = coeff_input(A, RING3)
    sink, ctx = prepare(a3.to_ring(RingSpec(8, (97, 113))) * 3, upto="indexify")
    out = apply("indexify", sink, ctx)
    (load,) = [n for n in out.src[0].src[0].src[0].src[1].toposort() if n.op is Op.LOAD]
    assert load.arg.limb_offset == 1 and load.arg.ring == RingSpec(8, (97, 113))
    assert load.src[0].src[0] is a3.node.src[0]  # reads a3's buffer itself


def test_polynomial_kernels_read_through_loads():
    b = ntt_input(A)
    sink, ctx = prepare(b.intt(), upto="indexify")
    out = apply("indexify", sink, ctx)
    intt = out.src[0].src[0].src[0].src[1].src[1]
    assert intt.op is Op.INTT and intt.src[0].op is Op.LOAD


@pytest.mark.parametrize("seed", SEEDS)
def test_value_unchanged(seed):
    check_value_unchanged("indexify", seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_realizes(seed):
    check_realizes("indexify", seed)


def _body(value):
    """The nodes of one kernel's value: the walk stops at the buffers its loads index."""
    seen, stack = [], [value]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.append(n)
        stack.extend(n.src[1:] if n.op is Op.INDEX else n.src)
    return seen


@pytest.mark.parametrize("seed", range(20))
def test_establishes(seed):
    _, after, _ = graph_after("indexify", seed)
    for store in (n for n in after.toposort() if n.op is Op.STORE):
        for n in _body(store.src[1]):
            assert n.op not in (Op.AS_RING, Op.AUTOMORPHISM, Op.BUFFER_VIEW), n.op.name
            if n.op is Op.INDEX:
                assert n.src[0].op in (Op.BUFFER, Op.AFTER) and n.src[1].op is Op.GIDX
