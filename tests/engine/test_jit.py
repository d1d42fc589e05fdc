"""``ren.jit``: capture once, replay many times.

Oracle: the same function realized eagerly (no jit) on the same device, and on the python
device; for random programs, the reference evaluator through the python device. One test per line
of the JIT guide's dos, don'ts and failure modes (``docs/jit.md``).
"""

from __future__ import annotations

import gc
import weakref
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, note, settings

import ren
import ren.capture.function as jit_module
import ren.capture.plan as plan_module
from ren import JitError, Poly, RingSpec, ntt_primes
from ren.engine.observe import observing
from ren.reference import evaluate
from ren.ring import Domain
from tests.backends.test_cpu import build, programs
from tests.devices import COMPILED
from tests.threads import in_threads

ALL = [pytest.param("python", id="python"), *COMPILED]
RING = RingSpec(8, (17, 97))
RING64 = RingSpec(64, ntt_primes(64, 60, 3))


def polys(ring: RingSpec, device: str, *seeds: int) -> list[Poly]:
    return [Poly.uniform(ring, rng=s, device=device).realize() for s in seeds]


def same(a: Poly, b: Poly) -> None:
    assert a.ring == b.ring and a.domain == b.domain
    np.testing.assert_array_equal(a.limbs(), b.limbs())


@pytest.fixture(autouse=True)
def no_plans():
    ren.clear_jit()
    yield
    ren.clear_jit()
    assert jit_module.capturing() is None


# --------------------------------------------------------------------------------------------
# the guide's minimal example, and replay on every device


@pytest.mark.parametrize("device", ALL, indirect=True)
def test_the_minimal_example_captures_once_and_replays(device):
    @ren.jit
    def step(x: Poly, y: Poly) -> Poly:
        return (x + y) * (x - 1)

    x1 = Poly([1, 2, 3, 4, 5, 6, 7, 8], RING, device=device)
    y1 = Poly([8, 7, 6, 5, 4, 3, 2, 1], RING, device=device)
    out1 = step(x1, y1)
    assert out1.tolist() == ((x1 + y1) * (x1 - 1)).tolist()
    assert step.cache_info() == (0, 1, 8, 1)
    x2 = Poly([2] * 8, RING, device=device)
    y2 = Poly([1] * 8, RING, device=device)
    out2 = step(x2, y2)
    assert step.cache_info() == ren.capture.function.CacheInfo(
        hits=1, misses=1, maxsize=8, currsize=1
    )
    assert out2 is out1  # the captured output structure is reused
    assert out2.tolist() == ((x2 + y2) * (x2 - 1)).tolist()
    want = (Poly([2] * 8, RING) + Poly([1] * 8, RING)) * (Poly([2] * 8, RING) - 1)
    assert out2.tolist() == want.tolist()  # and equals the python device


@pytest.mark.parametrize("device", ALL, indirect=True)
def test_a_program_with_every_kernel_family_replays_three_times(device):
    ring = RING64
    tail = RingSpec(ring.n, ring.moduli[1:])
    ext = RingSpec(ring.n, ntt_primes(ring.n, 40, 2))

    @ren.jit
    def f(a, b):
        c = (a * b + 3).rescale()
        return [
            c,
            (a.rotate(3) - b.conjugate()).ntt(),
            (a * 2 + 1).to_ring(ext),
            a.to_ring(tail) * 5,
        ]

    outs = None
    for seed in range(0, 8, 2):
        a, b = polys(ring, device, seed, seed + 1)
        got = f(a, b)
        outs = outs or got
        assert got is outs
        pa, pb = (Poly(p.tolist(), ring) for p in (a, b))
        want = [
            (pa * pb + 3).rescale(),
            (pa.rotate(3) - pb.conjugate()).ntt(),
            (pa * 2 + 1).to_ring(ext),
            pa.to_ring(tail) * 5,
        ]
        for g, w in zip(got, want, strict=True):
            same(g, w)
    assert f.cache_info().hits == 3 and f.cache_info().misses == 1


@pytest.mark.parametrize("device", ALL, indirect=True)
@settings(max_examples=12)
@given(prog=programs(Domain.COEFF))
def test_random_programs_jitted_and_replayed_equal_eager_realization(device, prog):
    ring, coeffs, steps, outs = prog
    note(f"ring={ring!r} steps={steps} outs={outs}")
    outs = list(dict.fromkeys(outs))

    @ren.jit
    def f(*leaves):
        pool = build(ring, list(leaves), steps, device)
        return [pool[i] for i in outs]

    rng = np.random.default_rng(len(steps))
    for _ in range(4):  # one capture, three replays with fresh inputs
        fresh = [[int(v) for v in rng.integers(-1000, 1000, ring.n)] for _ in coeffs]
        leaves = [Poly(c, ring, device=device).realize() for c in fresh]
        got = f(*leaves)
        want = [build(ring, [Poly(c, ring) for c in fresh], steps, "python")[i] for i in outs]
        for g, w in zip(got, want, strict=True):
            same(g, w)
    assert f.cache_info()[:2] == (3, 1)


# --------------------------------------------------------------------------------------------
# what is in the key


def test_inputs_are_found_in_lists_tuples_dicts_and_dataclasses():
    @dataclass
    class Pair:
        c0: Poly
        c1: Poly
        scale: float

    @ren.jit
    def f(pair: Pair, extra: dict, more: list):
        return Pair(pair.c0 + extra["k"], pair.c1 * more[0][1], pair.scale * 2)

    for seed in (1, 5):
        a, b, c, d = polys(RING, "python", seed, seed + 1, seed + 2, seed + 3)
        out = f(Pair(a, b, 1.5), {"k": c}, [(0, d)])
        assert isinstance(out, Pair) and out.scale == 3.0
        same(out.c0, a + c)
        same(out.c1, b * d)
    assert f.cache_info()[:2] == (1, 1)
    f(Pair(a, b, 2.5), {"k": c}, [(0, d)])  # another scale: another plan
    assert f.cache_info()[:2] == (1, 2)


def test_changing_ring_domain_device_or_int_arguments_captures_again():
    @ren.jit
    def f(x, r):
        return x.rotate(r) + 1 if x.domain is Domain.NTT else x * 2

    (a,) = polys(RING64, "python", 1)
    f(a, 1)
    f(a.ntt().realize(), 1)  # another domain
    f(a.ntt().realize(), 2)  # another rotation amount
    f(polys(RING, "python", 2)[0], 1)  # another ring
    f(a.to("cpu").realize(), 1)  # another device
    assert f.cache_info()[:2] == (0, 5)
    out = f(a.ntt().realize(), 2)
    assert f.cache_info()[:2] == (1, 5)
    same(out, a.ntt().rotate(2) + 1)


@pytest.mark.parametrize("device", ALL, indirect=True)
def test_a_changed_constant_input_replays_with_its_new_value(device):
    @ren.jit
    def affine(x: Poly, c: Poly, d: Poly) -> Poly:
        return (x * c + d).ntt() * c

    (x,) = polys(RING, device, 3)
    for c, d in ((7, 8), (9, 10), (-12345, 2**40), (3, 3)):
        cc, dd = Poly.const(c, x.ring, device), Poly.const(d, x.ring, device)
        assert affine(x, cc, dd).tolist() == list(evaluate(((x * c + d).ntt() * c).node))
    assert affine.cache_info()[:2] == (3, 1)  # one capture; (3, 3) writes 3 into both rows
    assert affine.last.const_rows and not affine.last.fixed_consts


def test_zero_one_and_minus_one_constants_capture_their_own_plans():
    @ren.jit
    def add_const(x: Poly, c: Poly) -> Poly:
        return x * c + c

    (x,) = polys(RING, "python", 3)
    for c in (7, 1, 0, -1, 8, 1):
        assert add_const(x, Poly.const(c, x.ring)).tolist() == list(evaluate((x * c + c).node))
    assert add_const.cache_info()[:2] == (2, 4)  # 8 replays 7's plan, the second 1 its own


def test_a_constant_the_scheduler_folds_keeps_its_value_in_the_key():
    @ren.jit
    def folded(x: Poly, c: Poly) -> Poly:
        return x * (c * c)  # c * c is folded into one constant: its value is c's, squared

    (x,) = polys(RING, "python", 3)
    for c in (5, 6, 5):
        assert folded(x, Poly.const(c, x.ring)).tolist() == list(evaluate((x * (c * c)).node))
    assert folded.cache_info()[:2] == (1, 2)
    assert folded.last.fixed_consts == {1: 5} and not folded.last.const_rows


def test_a_constant_one_realization_folds_is_fixed_in_all():
    @ren.jit
    def two(x: Poly, c: Poly) -> Poly:
        y = (x * c).realize()  # here c is a row the plan could rebind
        six = Poly.const(2, x.ring) * Poly.const(3, x.ring)  # folded: no row of this one is
        return y * c + six

    (x,) = polys(RING, "python", 3)
    for c in (5, 6):
        got = two(x, Poly.const(c, x.ring)).tolist()
        assert got == list(evaluate((x * c * c + 6).node))
    assert two.cache_info()[:2] == (0, 2) and two.last.fixed_consts == {1: 6}


def test_threads_replay_other_constants_at_once():
    @ren.jit
    def scale(x: Poly, c: Poly) -> Poly:
        return x * c + 1

    (x,) = polys(RING, "python", 3)
    scale(x, Poly.const(2, x.ring))

    def work(i: int) -> bool:
        out = scale(x, Poly.const(1000 + i, x.ring))
        return out.tolist() == list(evaluate((x * (1000 + i) + 1).node))

    assert all(in_threads(work, 12))


def test_max_plans_keeps_the_most_recently_used():
    @ren.jit(max_plans=2)
    def f(x, k):
        return x * k

    (x,) = polys(RING, "python", 4)
    for k in (2, 3, 2, 4):  # 3 is the least recently used when 4 comes
        same(f(x, k), x * k)
    assert f.cache_info() == (1, 3, 2, 2)
    f(x, 2)
    assert f.cache_info()[:2] == (2, 3)
    f(x, 3)  # dropped: captured again
    assert f.cache_info()[:2] == (2, 4)


def test_clear_jit_drops_every_plan():
    @ren.jit
    def f(x):
        return x + 1

    (x,) = polys(RING, "python", 5)
    f(x)
    f(x)
    ren.clear_jit()
    assert f.cache_info() == (0, 0, 8, 0)
    f(x)
    assert f.cache_info() == (0, 1, 8, 1)


# --------------------------------------------------------------------------------------------
# capture: pruning, pass-through outputs, feedback


@pytest.mark.parametrize("device", ALL, indirect=True)
def test_prune_runs_input_independent_work_once(device):
    def body(x):
        key = (Poly.uniform(RING64, rng=99, device=device) * 5 + 3).ntt()  # no input
        return (x.ntt() * key).intt()

    plain, pruned = ren.jit(body), ren.jit(prune=True)(body)
    for seed in (1, 2, 3):
        (x,) = polys(RING64, device, seed)
        want = body(x).realize()
        same(plain(x), want)
        same(pruned(x), want)
    assert pruned.last.pruned > 0 and plain.last.pruned == 0
    assert len(pruned.last.units) < len(plain.last.units)


@pytest.mark.parametrize("device", ALL, indirect=True)
def test_an_input_returned_as_it_is_is_a_copy_that_follows_the_input(device):
    @ren.jit
    def f(x, y):
        return {"x": x, "sum": x + y}

    for seed in (1, 3, 5):
        x, y = polys(RING, device, seed, seed + 1)
        out = f(x, y)
        assert out["x"] is not x
        same(out["x"], x)
        same(out["sum"], x + y)


@pytest.mark.parametrize("device", ALL, indirect=True)
def test_feeding_an_output_back_as_an_input_stays_correct(device):
    @ren.jit
    def step(x, y):  # gathers and an NTT: a kernel reading its own output would go wrong
        return (x.rotate(1) * y + x.conjugate()).ntt().intt()

    x, y = polys(RING64, device, 1, 2)
    px, py = (Poly(p.tolist(), RING64) for p in (x, y))
    for _ in range(4):
        x = step(x, y)
        px = (px.rotate(1) * py + px.conjugate()).realize()
        assert x.tolist() == px.tolist()
    assert step.last.staging  # the fed-back input was read from a private copy


def test_replay_keeps_no_input_buffer():
    @ren.jit
    def f(x):
        return x * 3 + 1

    first = polys(RING, "cpu", 1)[0]
    f(first)
    second = polys(RING, "cpu", 2)[0]
    f(second)
    refs = [weakref.ref(p.node.src[0].arg.buffer) for p in (first, second)]
    del first, second
    gc.collect()
    assert all(r() is None for r in refs)
    assert (
        f.last.runner is None or not f.last.runner.B[list(f.last.runner.input_slots.values())].any()
    )


# --------------------------------------------------------------------------------------------
# runners and REN_VALIDATE


@pytest.mark.cc
def test_the_cpu_graph_runner_and_the_unit_replay_agree(monkeypatch):
    def body(a, b):
        return ((a * b).rescale() + a.to_ring(RingSpec(64, RING64.moduli[:2]))).ntt()

    graph, units = ren.jit(body), ren.jit(body)
    a, b = polys(RING64, "cpu", 1, 2)
    graph(a, b)
    monkeypatch.setenv("REN_JIT_GRAPH", "0")  # read at capture
    units(a, b)
    assert units.last.runner_kind == "units"
    assert graph.last.runner_kind == "graph"
    assert "memcpy" in graph.last.runner.source or "ren_" in graph.last.runner.source
    for seed in (3, 5):
        a, b = polys(RING64, "cpu", seed, seed + 1)
        same(graph(a, b), body(a, b).realize())
        same(units(a, b), body(a, b).realize())


@pytest.mark.parametrize("device", COMPILED, indirect=True)
def test_ren_validate_checks_every_replayed_unit(device, monkeypatch):
    calls = []
    real = plan_module.validate_unit
    monkeypatch.setattr(plan_module, "validate_unit", lambda u: (calls.append(u.name), real(u)))

    @ren.jit
    def f(a, b):
        return (a * b + 1).rescale()

    a, b = polys(RING64, device, 1, 2)
    f(a, b)
    monkeypatch.setenv("REN_VALIDATE", "1")
    c, d = polys(RING64, device, 3, 4)
    same(f(c, d), (c * d + 1).rescale().realize())
    assert len(calls) == len(f.last.units)


# --------------------------------------------------------------------------------------------
# failure modes


def test_no_poly_input_is_an_error_naming_the_function():
    @ren.jit
    def f(n):
        return Poly.const(n, RING)

    with pytest.raises(JitError, match=r"function .*f got no Poly in its arguments"):
        f(3)


def test_no_poly_output_is_an_error_and_leaves_nothing_behind():
    @ren.jit
    def f(x):
        return x.ring.n

    (x,) = polys(RING, "python", 1)
    with pytest.raises(JitError, match=r"returned no Poly \(got int\)"):
        f(x)
    assert f.cache_info() == (0, 1, 8, 0)
    assert jit_module.capturing() is None and ren.engine.realize.capture_recorder() is None


def test_nested_capture_is_an_error_naming_both_functions():
    @ren.jit
    def inner(x):
        return x + 1

    @ren.jit
    def outer(x):
        return inner(x) * 2

    (x,) = polys(RING, "python", 1)
    with pytest.raises(JitError, match=r"inner was called while .*outer is being captured"):
        outer(x)
    inner(x)  # still usable afterwards
    assert outer.cache_info().currsize == 0


def test_a_freed_input_is_an_error_naming_the_argument():
    @ren.jit
    def f(x, y):
        return x + y

    a, b = polys(RING, "python", 1, 2)
    f(a, b)
    c, d = polys(RING, "python", 3, 4)
    d.node.src[0].arg.buffer.deallocate()
    with pytest.raises(JitError, match="input y holds no data"):
        f(c, d)


def test_bad_options_are_clear_errors():
    with pytest.raises(ValueError, match="max_plans must be an int >= 1, got 0"):
        ren.jit(max_plans=0)(lambda x: x)
    with pytest.raises(TypeError, match="prune must be True or False"):
        ren.jit(prune="yes")(lambda x: x)
    with pytest.raises(TypeError, match=r"ren\.jit wraps a function"):
        ren.jit(3)


# --------------------------------------------------------------------------------------------
# inputs that share buffers, views, unhashable arguments


def test_one_poly_passed_twice_is_not_confused_with_two_polys():
    @ren.jit
    def step(x, y):
        return x * y + x

    x, y = polys(RING, "python", 1, 2)
    same(step(x, x), x * x + x)
    same(step(x, y), x * y + x)  # another alias pattern: another plan
    assert step.cache_info()[:2] == (0, 2)
    z, w = polys(RING, "python", 3, 4)
    same(step(z, w), z * w + z)
    same(step(w, w), w * w + w)
    assert step.cache_info()[:2] == (2, 2)


@pytest.mark.parametrize("device", ALL, indirect=True)
def test_returning_a_limb_view_of_an_input_follows_the_input(device):
    tail = RingSpec(RING64.n, RING64.moduli[:2])

    @ren.jit
    def f(x):
        return x.to_ring(tail), x.to_ring(tail) * 3

    for seed in (1, 2, 3):
        (x,) = polys(RING64, device, seed)
        view, triple = f(x)
        want = Poly(x.tolist(), RING64).to_ring(tail)
        same(view, want)
        same(triple, want * 3)


def test_unhashable_arguments_are_an_error_naming_them():
    @ren.jit
    def g(x, w):
        return x * int(w[0])

    (x,) = polys(RING, "python", 1)
    with pytest.raises(JitError, match=r"argument w\[0\]|argument w is a ndarray"):
        g(x, np.array([3]))
    assert g(x, (3,)).tolist() == (x * 3).tolist()


def test_a_freed_input_on_the_first_call_is_the_same_error():
    @ren.jit
    def f(x):
        return x + 1

    (x,) = polys(RING, "python", 1)
    x.node.src[0].arg.buffer.deallocate()
    with pytest.raises(JitError, match="input x holds no data"):
        f(x)
    assert f.cache_info() == (0, 0, 8, 0)


def test_a_plan_prints():
    @ren.jit
    def f(x):
        return x * 3

    (x,) = polys(RING, "python", 1)
    f(x)
    assert "input" in repr(f.last.units) and "CapturedPlan" in repr(f.last)


# --------------------------------------------------------------------------------------------
# the captured plan's memory plan


def test_a_captured_plan_keeps_the_memory_plan_its_replays_use():
    captured = []

    class Watch:
        def on_jit_capture(self, fn, plan, seconds):
            captured.append(plan)

    @ren.jit
    def chain(x: Poly, y: Poly) -> Poly:
        t = (x * y).ntt() + 1  # temporaries across more than one realization
        u = (t * t).intt().realize()
        return (u + x) * y

    x, y = polys(RING64, "python", 1, 2)
    with observing(Watch()):
        out = chain(x, y)
    (plan,) = captured
    assert plan.memory.devices, "a plan with temporaries has an arena"
    (d,) = plan.memory.devices
    # the oracle: the arena the units write into, and the views the plan placed in it
    arenas = {id(b.base): b.base for u in plan.units for b in u.bufs if b is not None and b.base}
    assert [a.nbytes for a in arenas.values()] == [d.arena_bytes]
    offsets = {(b.offset, b.nbytes) for u in plan.units for b in u.bufs if b is not None and b.base}
    assert offsets == {(p.offset, p.nbytes) for p in d.buffers}
    assert d.lower_bound_bytes <= d.arena_bytes <= d.unshared_bytes
    t = (x * y).ntt() + 1
    same(out, ((t * t).intt() + x) * y)  # the eager value
    x2, y2 = polys(RING64, "python", 3, 4)
    t2 = (x2 * y2).ntt() + 1
    same(chain(x2, y2), ((t2 * t2).intt() + x2) * y2)  # a replay through that arena
