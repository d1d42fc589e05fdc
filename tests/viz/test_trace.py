"""``ren.viz.record``: the trace holds what the realization did, and recording changes nothing."""

from __future__ import annotations

import numpy as np
import pytest

import ren
import ren.viz
from ren import Poly
from ren.engine import observe
from ren.engine.realize import backend
from ren.engine.schedule import PASSES
from ren.ring import RingSpec, ntt_primes
from ren.viz.trace import record
from tests.devices import COMPILED

RING = RingSpec(16, ntt_primes(16, 30, 2))


def program(device: str = "python") -> Poly:
    a = Poly(list(range(16)), RING, device)
    b = Poly([3 * i - 7 for i in range(16)], RING, device)
    return ((a * b).rescale() + 1).rotate(1)


def test_trace_matches_the_realization():
    expected = program().tolist()
    with ren.viz.record() as trace:
        out = program()
        seen = {}
        with observe.observing(type("Spy", (), {"on_prepared": lambda s, r: seen.update(r=r)})()):
            assert out.tolist() == expected  # recording changes nothing
    (rec,) = trace.realizations
    assert [p.name for p in rec.passes] == [m.__name__.rsplit(".", 1)[-1] for m, _ in PASSES]
    ctx = seen["r"].ctx
    for p in rec.passes:
        assert p.rules == ctx.record.get(p.name, [])
        assert p.seconds == ctx.timings[p.name]
    assert rec.passes[-1].graph.op.name == "SINK" and rec.input.src == (out_node(rec),)
    assert [k.info.name for k in rec.kernels] == [u.name for u in rec.units]
    assert all(u.seconds is not None and u.seconds >= 0 for u in rec.units)
    assert rec.plan is ctx.memory_plan
    # created and rebuilt split the nodes in the pass's output and not in its input
    before = rec.input
    for p in rec.passes:
        old, new = set(before.toposort()), set(p.graph.toposort())
        assert p.created | p.rebuilt == new - old and not p.created & p.rebuilt
        for n in p.rebuilt:  # an input node gone, made again over its replaced sources
            assert any(
                (m.op, m.dtype, m.arg, len(m.src)) == (n.op, n.dtype, n.arg, len(n.src))
                and all(a is b or b not in new for a, b in zip(n.src, m.src, strict=True))
                for m in old - new
            )
        before = p.graph


def test_only_what_a_rule_adds_is_created():
    """x * (a + 0), simplified: the rule replaces the sum by ``a``, so the product over ``a`` is
    a rebuilt node (the same op and dtype, a changed source) and nothing is created."""
    ring = RingSpec(8, ntt_primes(8, 30, 1))
    with record() as trace:
        a = Poly.from_limbs(np.arange(8)[None], ring)
        x = Poly.from_limbs(np.ones((1, 8), dtype=np.int64), ring)
        (x * (a + 0)).realize()
    first = trace.realizations[-1].passes[0]
    assert first.name == "simplify" and first.rules  # a rule fired
    assert first.created == frozenset() and len(first.rebuilt) >= 1
    (product,) = [n for n in first.rebuilt if n.op.name == "MUL"]
    assert product.src[1] in set(trace.realizations[-1].input.toposort())  # now a itself


def out_node(rec):
    return rec.input.src[0]


def test_rule_counts_and_names_are_stable():
    def names():
        with ren.viz.record() as trace:
            program().realize()
        rec = trace.realizations[0]
        return [u.buffers for u in rec.units], [p.rule_counts() for p in rec.passes]

    assert names() == names()


def test_jit_calls_are_recorded():
    f = ren.jit(lambda x, y: (x * y).rotate(2) + x)
    a, b = program(), program() + 1
    ren.realize(a, b)
    with ren.viz.record() as trace:
        f(a, b)
        f(b, a)
    capture, replay = trace.jit
    assert (capture.kind, replay.kind) == ("capture", "replay")
    assert capture.units == replay.units == len(f.last.units) and capture.inputs == ("x", "y")
    assert (
        capture.realizations == tuple(range(len(trace.realizations))) and replay.realizations == ()
    )
    assert trace.order[-2:] == [("jit", 0), ("jit", 1)]


@pytest.mark.parametrize("device", COMPILED, indirect=True)
def test_kernel_source_renders_without_running(device):
    with ren.viz.record() as trace:
        program(device).realize()
    for k in trace.realizations[0].kernels:
        for dev in ("python", "cpu", "cuda"):
            text = ren.viz.kernel_source(k, dev)
            assert text == backend(dev).source(k.ast, k.info) and text.strip()
        if k.info.kind == "elementwise":
            assert "void" in ren.viz.kernel_source(k, "cpu")
            assert "__global__" in ren.viz.kernel_source(k, "cuda")
