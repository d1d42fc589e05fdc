"""Pass 6, ``lower_bufferize``: golden text, values, and the *Establishes* clause."""

from __future__ import annotations

import pytest

from ren.ir.facts import facts
from ren.ir.op import Op
from tests.passes.helpers import (
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
)

A = [1, 2, 3, 4, 5, 6, 7, 8]
B = [8, 7, 6, 5, 4, 3, 2, 1]
SEEDS = range(6)


def test_golden():
    a, b = coeff_input(A), ntt_input(B)
    sink, ctx = prepare((a + 1).ntt() * b, upto="lower_bufferize")
    assert str(sink) == GOLDEN_BEFORE
    after = apply("lower_bufferize", sink, ctx)
    assert str(after) == GOLDEN_AFTER
    assert rules_fired(ctx, "lower_bufferize") == ["lower_bufferize"] * 3


GOLDEN_BEFORE = """\
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

# each BUFFERIZE(x): a new buffer B of L * n = 16 words, STORE(B, x), AFTER(B, store), and the
# ring and domain of x on top; the new buffers are numbered before the inputs' as they print first
GOLDEN_AFTER = """\
SINK void
  AS_RING u32 n=8 q=(17, 97) ntt
    AFTER u32
      [0] BUFFER u32 b0 python 16 words
      STORE void
        ^0 BUFFER
        MUL u32
          AS_RING u32 n=8 q=(17, 97) ntt
            AFTER u32
              [1] BUFFER u32 b1 python 16 words
              STORE void
                ^1 BUFFER
                NTT u32
                  AS_RING u32 n=8 q=(17, 97) coeff
                    AFTER u32
                      [2] BUFFER u32 b2 python 16 words
                      STORE void
                        ^2 BUFFER
                        ADD u32
                          AS_RING u32 n=8 q=(17, 97) coeff
                            BUFFER u32 b3 python 16 words
                          AS_RING u32 n=8 q=(17, 97) coeff
                            CONST u32 1 python
          AS_RING u32 n=8 q=(17, 97) ntt
            BUFFER u32 b4 python 16 words"""


def test_new_buffers_fit_the_value_and_are_not_allocated():
    a3 = coeff_input(A, RING3)
    sink, ctx = prepare(a3.rescale() + 1, upto="lower_bufferize")
    out = apply("lower_bufferize", sink, ctx)
    for n in out.toposort():
        if n.op is Op.AFTER:
            buf, store = n.src
            ring = facts(store.src[1]).ring
            assert buf.arg.buffer.size == ring.size and buf.arg.buffer.dtype == ring.dtype
            assert buf.arg.buffer.device == "python" and not buf.arg.buffer.allocated


@pytest.mark.parametrize("seed", SEEDS)
def test_value_unchanged(seed):
    check_value_unchanged("lower_bufferize", seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_realizes(seed):
    check_realizes("lower_bufferize", seed)


@pytest.mark.parametrize("seed", range(20))
def test_establishes(seed):
    before, after, _ = graph_after("lower_bufferize", seed)
    assert Op.BUFFERIZE not in ops(after)
    users: dict = {}
    for n in after.toposort():
        for s in n.src:
            users.setdefault(s, []).append(n)
    stores = [n for n in after.toposort() if n.op is Op.STORE]
    assert len(stores) == ops(before).count(Op.BUFFERIZE)
    for store in stores:  # AS_RING(AFTER(B, STORE(B, x))), the ring and domain of x
        (after_node,) = users[store]
        assert after_node.op is Op.AFTER and after_node.src == (store.src[0], store)
        assert all(u.op is Op.AS_RING for u in users[after_node])
        for u in users[after_node]:
            f = facts(store.src[1])
            assert (u.arg.ring, u.arg.domain) == (f.ring, f.domain)
