"""Pass 1, ``simplify``: golden text, values, the *Establishes* clause, and each rule."""

from __future__ import annotations

import math

import pytest

from ren.ir.facts import facts, is_const
from ren.ir.node import CopyArg, Node, ToRingArg
from ren.ir.op import DType, Op
from ren.passes import ScheduleContext, simplify
from ren.poly import Poly
from ren.ring import Domain, RingSpec
from tests import oracles
from tests.passes.helpers import (
    RING,
    RING3,
    apply,
    check_realizes,
    check_value_unchanged,
    coeff_input,
    graph_after,
    ntt_input,
    prepare,
    random_program,
    rules_fired,
    sink_of,
    value,
)

A = [1, 2, 3, 4, 5, 6, 7, 8]
B = [8, 7, 6, 5, 4, 3, 2, 1]
SEEDS = range(6)


def test_golden():
    a, b = coeff_input(A), ntt_input(B)
    out = ((a + 0) * 1) + -(-b) - Poly.const(2, RING) * 3  # noqa: B002
    sink, ctx = prepare(out, upto="simplify")
    assert str(sink) == GOLDEN_BEFORE
    after = apply("simplify", sink, ctx)
    assert str(after) == GOLDEN_AFTER
    assert rules_fired(ctx, "simplify") == ["add_zero", "mul_one", "double_neg", "fold_constants"]


GOLDEN_BEFORE = """\
SINK void
  SUB u32
    ADD u32
      MUL u32
        ADD u32
          AS_RING u32 n=8 q=(17, 97) coeff
            BUFFER u32 b0 python 16 words
          AS_RING u32 n=8 q=(17, 97) coeff
            CONST u32 0 python
        AS_RING u32 n=8 q=(17, 97) coeff
          CONST u32 1 python
      NEG u32
        NEG u32
          AS_RING u32 n=8 q=(17, 97) ntt
            BUFFER u32 b1 python 16 words
    MUL u32
      AS_RING u32 n=8 q=(17, 97) coeff
        CONST u32 2 python
      AS_RING u32 n=8 q=(17, 97) coeff
        CONST u32 3 python"""

GOLDEN_AFTER = """\
SINK void
  SUB u32
    ADD u32
      AS_RING u32 n=8 q=(17, 97) coeff
        BUFFER u32 b0 python 16 words
      AS_RING u32 n=8 q=(17, 97) ntt
        BUFFER u32 b1 python 16 words
    AS_RING u32 n=8 q=(17, 97) coeff
      CONST u32 6 python"""


@pytest.mark.parametrize("seed", SEEDS)
def test_value_unchanged(seed):
    check_value_unchanged("simplify", seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_realizes(seed):
    check_realizes("simplify", seed)


def _zero(node: Node) -> bool:
    return simplify.const_value(node) is not None and simplify.const_value(node) % ring_q(node) == 0


def _one(node: Node) -> bool:
    v = simplify.const_value(node)
    return v is not None and v % ring_q(node) == 1


def ring_q(node: Node) -> int:
    return facts(node).ring.Q


COMPUTING = (Op.ADD, Op.SUB, Op.MUL, Op.NEG, Op.NTT, Op.INTT, Op.TO_RING, Op.RESCALE, Op.ROTATE)


def violations(sink: Node) -> list[str]:
    """What breaks ``simplify``'s *Establishes* clause in ``sink``."""
    bad = []
    for n in sink.toposort():
        s = n.src
        if n.op in (*COMPUTING, Op.COPY) and all(is_const(x) for x in s):
            bad.append(f"{n.op.name} of constants")
        if n.op is Op.ADD and any(_zero(x) for x in s):
            bad.append("x + 0")
        if n.op is Op.SUB and (_zero(s[1]) or s[0] is s[1]):
            bad.append("x - 0 or x - x")
        if n.op is Op.MUL and any(_zero(x) or _one(x) for x in s):
            bad.append("x * 0 or x * 1")
        if n.op in (Op.NEG, Op.COPY, Op.CONTIGUOUS) and s[0].op is n.op:
            bad.append(f"{n.op.name} of {n.op.name}")
        if n.op is Op.TO_RING and n.arg.ring == facts(s[0]).ring:
            bad.append("TO_RING to the same ring")
        if n.op is Op.TO_RING and s[0].op is Op.TO_RING and _is_view(n) and _is_view(s[0]):
            bad.append("view of a view")
    return bad


def _is_view(n: Node) -> bool:
    return facts(n.src[0]).ring.contiguous_offset(n.arg.ring) is not None


@pytest.mark.parametrize("seed", range(40))
def test_establishes(seed):
    before, after, _ = graph_after("simplify", seed)
    assert violations(after) == []
    for old, new in zip(before.src, after.src, strict=True):  # ring, domain and device kept
        assert facts(new) == facts(old)


def test_random_programs_give_simplify_work():
    # the check above is not vacuous: the random programs hold identities to remove
    having = [seed for seed in range(40) if violations(sink_of(*random_program(seed)))]
    assert len(having) >= 10


# --------------------------------------------------------------------------------------------
# each rule: (program, what the output must become, the rule that fires)


def _c(value: int, ring: RingSpec = RING, domain: Domain = Domain.COEFF) -> Node:
    """The node of the constant ``value`` (centered) in ``ring`` and ``domain``."""
    node = Poly.const(value, ring).node
    return node if domain is Domain.COEFF else node.replace(arg=type(node.arg)(ring, domain))


def _rules():
    a, b, x = coeff_input(A), ntt_input(B), coeff_input(B)
    a3 = coeff_input(A, RING3)
    s = a + x  # some work that is not a stored value
    return [
        ("x + 0", a + 0, a.node, "add_zero"),
        ("0 + x", 0 + a, a.node, "zero_add"),
        ("x - 0", a - 0, a.node, "sub_zero"),
        ("0 - x", 0 - a, Node(Op.NEG, DType.U32, (a.node,)), "zero_sub"),
        ("x * 1", b * 1, b.node, "mul_one"),
        ("1 * x", 1 * b, b.node, "one_mul"),
        ("x * Q+1", a * (RING.Q + 1), a.node, "mul_one"),
        ("x * 0 (coeff)", a * 0, _c(0), "mul_zero"),
        ("x * 0 (ntt)", b * 0, _c(0, domain=Domain.NTT), "mul_zero"),
        ("x - x", b - b, _c(0, domain=Domain.NTT), "sub_self"),
        ("-(-x)", -(-a), a.node, "double_neg"),  # noqa: B002
        ("c1 + c2", Poly.const(5, RING) + 7, _c(12), "fold_constants"),
        ("c1 - c2", Poly.const(5, RING) - 7, _c(-2), "fold_constants"),
        ("c1 * c2", Poly.const(40, RING) * 50, _c(2000 - RING.Q), "fold_constants"),
        ("-c", -Poly.const(5, RING), _c(-5), "fold_constants"),
        ("ntt(c)", Poly.const(5, RING).ntt(), _c(5, domain=Domain.NTT), "fold_constants"),
        ("rotate(c)", Poly.const(5, RING).rotate(1), _c(5), "fold_constants"),
        # rescale: floor(c / 97 + 1/2), in the ring that is left
        (
            "rescale(1000)",
            Poly.const(1000, RING).rescale(),
            _c(10, RingSpec(8, (17,))),
            "fold_constants",
        ),
        (
            "rescale(-1000)",
            Poly.const(-1000, RING).rescale(),
            _c(-10, RingSpec(8, (17,))),
            "fold_constants",
        ),
        (
            "rescale(145)",
            Poly.const(145, RING).rescale(),
            _c(1, RingSpec(8, (17,))),
            "fold_constants",
        ),
        # to_ring keeps the centered value: a view, and a basis extension
        (
            "to_ring(c) view",
            Poly.const(-5, RING3).to_ring(RingSpec(8, (97, 113))),
            _c(-5, RingSpec(8, (97, 113))),
            "fold_constants",
        ),
        (
            "to_ring(c) extension",
            Poly.const(-5, RING).to_ring(RingSpec(8, (113,))),
            _c(-5, RingSpec(8, (113,))),
            "fold_constants",
        ),
        (
            "copy(copy(x))",
            a.to("cpu").to("cuda"),
            Node(Op.COPY, DType.U32, (a.node,), CopyArg("cuda")),
            "copy_copy",
        ),
        ("copy(copy(x)) back", a.to("cpu").to("python"), a.node, "copy_copy"),
        (
            "copy to own device",
            Node(Op.COPY, DType.U32, (a.node,), CopyArg("python")),
            a.node,
            "copy_same_device",
        ),
        (
            "contiguous(contiguous(x))",
            s.contiguous().contiguous(),
            s.contiguous().node,
            "contiguous_twice",
        ),
        ("contiguous(buffer)", a.contiguous(), a.node, "contiguous_buffer"),
        (
            "to_ring same ring",
            Node(Op.TO_RING, DType.U32, (a.node,), ToRingArg(RING)),
            a.node,
            "to_same_ring",
        ),
        (
            "view of a view",
            a3.to_ring(RingSpec(8, (17, 97))).to_ring(RingSpec(8, (97,))),
            a3.to_ring(RingSpec(8, (97,))).node,
            "view_of_view",
        ),
    ]


RULES = _rules()


# The programs are kept as nodes: a Poly made at collection time would be repointed to a buffer
# when another test realizes the same (interned) graph.
@pytest.mark.parametrize(
    ("program", "want", "rule"),
    [(p.node if isinstance(p, Poly) else p, *rest) for _, p, *rest in RULES],
    ids=[r[0] for r in RULES],
)
def test_rule(program, want, rule):
    sink = sink_of(program)
    ctx = ScheduleContext(outputs=sink.src)
    out = simplify.run(sink, ctx)
    assert out.src[0] is want, f"got\n{out.src[0]}\nwant\n{want}"
    assert rule in rules_fired(ctx, "simplify")
    assert value(out) == value(sink)
    assert violations(out) == []


@pytest.mark.parametrize("c", [0, 56, 57, -56, -57, 1000, -1000, RING3.Q // 2, RING3.Q // 2 + 1])
@pytest.mark.parametrize("drop", [(113,), (97, 113), (17,)])
def test_rescale_of_a_constant(c, drop):
    # round(c_c / P), ties up, of the centered c, kept as a centered constant of the ring left
    P = math.prod(drop)
    left = RING3.with_moduli(tuple(q for q in RING3.moduli if q not in drop))
    got = simplify.run(sink_of(Poly.const(c, RING3).rescale(drop))).src[0]
    assert facts(got).ring == left
    want = oracles.rounded_div(oracles.centered(c, RING3.Q), P)
    assert simplify.const_value(got) == oracles.centered(want, left.Q)


def test_simplify_leaves_work_alone():
    a, b = coeff_input(A), ntt_input(B)
    sink = sink_of(a * b + a.rotate(1) - 3 * b, a.rescale(), a.contiguous() * 1 + 1)
    ctx = ScheduleContext(outputs=sink.src)
    out = simplify.run(sink, ctx)
    assert out.src[:2] == sink.src[:2]
    assert rules_fired(ctx, "simplify") == ["contiguous_buffer", "mul_one"]


def test_output_keeps_its_domain_when_its_work_folds_away():
    # x + (a - a) * a: the product of two non-constants is reported in NTT form, so the sum is
    # too; folding (a - a) * a to 0 must not turn the output into coefficient form.
    a, x = coeff_input(A), coeff_input(B)
    q = x + (a - a) * a
    assert q.domain is Domain.NTT
    sink = sink_of(q)
    out = simplify.run(sink)
    assert facts(out.src[0]) == facts(sink.src[0])
    assert value(out) == value(sink)
