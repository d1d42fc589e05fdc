"""Pass 7, ``becomes_map``: what each requested output becomes; the graph is unchanged."""

from __future__ import annotations

import pytest

from ren.ir.facts import facts
from ren.ir.op import Op
from ren.passes import becomes_map
from ren.poly import Poly
from ren.ring import RingSpec
from tests.passes.helpers import (
    RING,
    RING3,
    apply,
    check_realizes,
    check_value_unchanged,
    coeff_input,
    ntt_input,
    prepare,
    random_program,
)

A = [1, 2, 3, 4, 5, 6, 7, 8]
B = [8, 7, 6, 5, 4, 3, 2, 1]
SEEDS = range(6)


def test_golden():
    a3, b = coeff_input(A, RING3), ntt_input(B)
    view = a3.to_ring(RingSpec(8, (97, 113)))
    sink, ctx = prepare(b * 3, view, b, upto="becomes_map")
    after = apply("becomes_map", sink, ctx)
    assert after is sink  # the graph is unchanged
    entries = [ctx.becomes_map[p.node] for p in (b * 3, view, b)]
    assert [str(e) for e in entries] == GOLDEN_ENTRIES
    # the computed outputs' buffers are the ones their stores write
    for out, entry in zip(after.src, entries, strict=True):
        if out.src[0].op is Op.AFTER:
            assert entry.src[0] is out.src[0].src[0]


GOLDEN_ENTRIES = [
    # b * 3: the buffer its kernel fills, in its ring and domain
    """\
AS_RING u32 n=8 q=(17, 97) ntt
  BUFFER u32 b0 python 16 words""",
    # a view of a stored input: a window of the input's buffer, limbs 1 and 2 (offset 8 words)
    """\
AS_RING u32 n=8 q=(97, 113) coeff
  BUFFER_VIEW u32 @8 16 words
    BUFFER u32 b0 python 24 words""",
    # a stored input: itself
    """\
AS_RING u32 n=8 q=(17, 97) ntt
  BUFFER u32 b0 python 16 words""",
]


def test_stored_input_maps_to_itself():
    b = ntt_input(B)
    sink, ctx = prepare(b, upto="becomes_map")
    apply("becomes_map", sink, ctx)
    assert ctx.becomes_map == {b.node: b.node}


def test_without_a_context_nothing_happens():
    sink, _ = prepare(ntt_input(B) * 3, upto="becomes_map")
    assert becomes_map.run(sink) is sink


def test_realize_repoints_polys_through_the_map():
    a, b = coeff_input(A), ntt_input(B)
    p, k = a * b + 1, Poly.const(5, RING) + 0
    p.realize(k)
    assert p.node.op is Op.AS_RING and p.node.src[0].op is Op.BUFFER
    assert k.node.op is Op.AS_RING and k.node.src[0].op is Op.BUFFER  # a constant gets a buffer


@pytest.mark.parametrize("seed", SEEDS)
def test_value_unchanged(seed):
    check_value_unchanged("becomes_map", seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_realizes(seed):
    check_realizes("becomes_map", seed)


@pytest.mark.parametrize("seed", range(20))
def test_establishes(seed):
    polys = random_program(seed)
    before, ctx = prepare(*polys, upto="becomes_map")
    after = apply("becomes_map", before, ctx)
    assert after is before
    assert set(ctx.becomes_map) == {p.node for p in polys}
    for p in polys:
        new = ctx.becomes_map[p.node]
        assert new.op is Op.AS_RING
        assert new.src[0].op is Op.BUFFER or (
            new.src[0].op is Op.BUFFER_VIEW and new.src[0].src[0].op is Op.BUFFER
        )
        f = facts(p.node)
        assert (new.arg.ring, new.arg.domain) == (f.ring, f.domain)


def test_prepare_uses_the_original_outputs():
    # the map is keyed by the nodes the user asked for, not by their simplified forms
    a = coeff_input(A)
    p = (a + 0) * 1 + 1
    sink, ctx = prepare(p, upto="becomes_map")
    apply("becomes_map", sink, ctx)
    assert list(ctx.becomes_map) == [p.node]
