"""Pass 12, ``kernelize``: golden text, kernels that compute the reference value, the
*Establishes* clause, and kernel counts (what fuses and what does not)."""

from __future__ import annotations

import random

import pytest

import ren
from ren import reference
from ren.engine.schedule import kernels_of, schedule
from ren.ir.kernels import Family, TemplateParams
from ren.ir.op import Op
from ren.poly import Poly
from ren.ring import RingSpec
from tests.passes.helpers import (
    RING,
    RING3,
    apply,
    coeff_input,
    coeffs,
    graph_after,
    ntt_input,
    prepare,
    random_program,
    realized,
    sink_of,
)
from tests.passes.test_indexify import GOLDEN_AFTER as GOLDEN_BEFORE  # the same program

A = [1, 2, 3, 4, 5, 6, 7, 8]
B = [8, 7, 6, 5, 4, 3, 2, 1]
SEEDS = range(6)


def test_golden():
    b, d = ntt_input(A), ntt_input(B)
    sink, ctx = prepare(b.rotate(1) + d, upto="kernelize")
    assert str(sink) == GOLDEN_BEFORE
    after = apply("kernelize", sink, ctx)
    assert str(after) == GOLDEN_AFTER
    (kernel,) = kernels_of(after)
    assert str(kernel.ast) == GOLDEN_BODY
    out_buffer = after.src[0].src[0].src[0].src[0].arg.buffer  # LOAD(INDEX(AFTER(B, ...)))
    assert kernel.bufs == (out_buffer, b.node.src[0].arg.buffer, d.node.src[0].arg.buffer)


# the store is now a KERNEL over its buffers, slot 0 written, slots 1 and 2 read; its body (below)
# is the KERNEL's arg, with the buffers replaced by slots
GOLDEN_AFTER = """\
SINK void
  LOAD u32 n=8 q=(17, 97) ntt
    INDEX index n=8 q=(17, 97) ntt
      AFTER u32
        [0] BUFFER u32 b0 python 16 words
        KERNEL void elementwise_n8_L2_u32 [elementwise] python n=8 L=2
          ^0 BUFFER
          BUFFER u32 b1 python 16 words
          BUFFER u32 b2 python 16 words
      GIDX index"""

GOLDEN_BODY = """\
STORE void
  SLOT u32 #0
  ADD u32
    LOAD u32 n=8 q=(17, 97) ntt gather g=5
      INDEX index n=8 q=(17, 97) ntt gather g=5
        SLOT u32 #1
        [0] GIDX index
    LOAD u32 n=8 q=(17, 97) ntt
      INDEX index n=8 q=(17, 97) ntt
        SLOT u32 #2
        ^0 GIDX"""


def test_same_work_on_other_buffers_is_the_same_body():
    rnd = random.Random(0)
    a, b, c, d = (ntt_input(coeffs(rnd)) for _ in range(4))
    k1, k2 = kernels_of(apply("kernelize", *prepare(a * b + 1, c * d + 1, upto="kernelize")))
    assert k1.ast is k2.ast
    assert k1.bufs != k2.bufs


def test_kernel_families():
    a3 = coeff_input(A, RING3)
    b = ntt_input(B)
    progs = {
        "ntt": a3.ntt(),
        "intt": b.intt(),
        "rescale": a3.rescale(),
        "base_convert": a3.to_ring(RingSpec(8, (113, 17))),
        "elementwise": b * 2,
    }
    for kind, p in progs.items():
        (k,) = kernels_of(apply("kernelize", *prepare(p, upto="kernelize")))
        assert k.info.kind == kind
        assert (k.info.ring, k.info.domain) == (p.ring, p.domain)


def test_kernel_families_carry_their_parameters():
    # the oracle: what each program asks for (the ring read, the moduli dropped, the target ring)
    a3 = coeff_input(A, RING3)
    wider = RingSpec(8, (113, 17))
    progs = {
        Family.NTT: (a3.ntt(), (), None),
        Family.RESCALE: (a3.rescale(), (RING3.moduli[-1],), None),
        Family.BASE_CONVERT: (a3.to_ring(wider), (), wider),
        Family.ELEMENTWISE: (ntt_input(B) * 2, None, None),
    }
    for family, (p, drop, target) in progs.items():
        (k,) = kernels_of(apply("kernelize", *prepare(p, upto="kernelize")))
        assert k.info.family is family and k.info.kind == family.value
        assert family.templated == (family is not Family.ELEMENTWISE)
        if family is Family.ELEMENTWISE:
            assert k.info.params is None
            with pytest.raises(ValueError, match="no template parameters"):
                k.info.need_params()
            continue
        assert k.info.params == TemplateParams(RING3, 0, drop, target)


@pytest.mark.parametrize("seed", SEEDS)
def test_kernels_compute_the_reference_value(seed):
    # the kernels kernels_of reads off the kernelized graph, run in its order
    polys = random_program(seed)
    want = reference.evaluate(sink_of(*polys))
    sink, ctx = prepare(*polys, upto="kernelize")
    assert tuple(realized(apply("kernelize", sink, ctx), ctx, "kernelize")) == want


@pytest.mark.parametrize("seed", SEEDS)
def test_realize_computes_the_reference_value(seed):
    # the whole path: ren.realize schedules, runs, and repoints the polys through becomes_map
    polys = random_program(seed)
    want = reference.evaluate(sink_of(*polys))
    ren.realize(*polys)
    assert tuple(p.tolist() for p in polys) == want


@pytest.mark.parametrize("seed", range(20))
def test_establishes(seed):
    _, after, _ = graph_after("kernelize", seed)
    kernels = [n for n in after.toposort() if n.op is Op.KERNEL]
    assert Op.STORE not in {n.op for n in after.toposort()}  # stores live in kernel bodies only
    assert len(kernels_of(after)) == len(kernels)
    order = {k: i for i, k in enumerate(kernels)}
    for k in kernels:
        assert k.arg.ast.op is Op.STORE and k.arg.ast.src[0].arg.index == 0
        for param in k.src[1:]:  # a buffer another kernel fills runs before this one
            if param.op is Op.AFTER:
                assert order[param.src[1]] < order[k]


# --------------------------------------------------------------------------------------------
# kernel counts: what fuses into one kernel


def _kernels(*polys: Poly) -> list[str]:
    return [k.info.kind for k in schedule(sink_of(*polys))[0]]


def test_fused_chain_in_ntt_form_is_one_kernel():
    rnd = random.Random(1)
    a, b, c, d = (ntt_input(coeffs(rnd)) for _ in range(4))
    e = ((a + b) * (c - 1)).rotate(3) + d
    assert _kernels(e) == ["elementwise"]
    assert e.tolist() == reference.evaluate(e.node)


def test_same_chain_in_coefficient_form():
    # a + b and c - 1 are computed, then NTT'd for the product (two kernels each); d is NTT'd
    # for the sum; the product, the rotation and the sum fuse into the last kernel
    rnd = random.Random(1)
    a, b, c, d = (coeff_input(coeffs(rnd)) for _ in range(4))
    e = ((a + b) * (c - 1)).rotate(3) + d
    assert sorted(_kernels(e)) == ["elementwise"] * 3 + ["ntt"] * 3
    assert e.tolist() == reference.evaluate(e.node)


def test_view_of_a_realized_buffer_is_no_kernel():
    a3 = coeff_input(A, RING3)
    v = a3.to_ring(RingSpec(8, (97, 113)))
    assert _kernels(v) == []
    assert v.tolist() == reference.evaluate(v.node)


def test_counts():
    a, c = coeff_input(A), coeff_input(B)
    b = ntt_input(B)
    assert sorted(_kernels(a * c)) == ["elementwise", "ntt", "ntt"]
    assert _kernels(b.rescale()) == ["intt", "rescale"]
    assert _kernels(a * 3 + 1) == ["elementwise"]  # a scalar and a constant fuse in place
    assert _kernels(b) == []  # already stored
    assert _kernels(Poly.const(5, RING)) == ["elementwise"]  # a constant output gets a buffer
    s = b * 3 + 1
    assert _kernels(s * s + s, s) == ["elementwise", "elementwise"]  # shared work runs once
