"""The schedule cache: a hit runs no pass and gives the words a fresh schedule gives.

Oracles: Python big integers (``ren.reference.evaluate``) for every value, and the same program
realized with the cache off (``REN_SCHEDULE_CACHE=0``) for the words on each device; the context's
``cache`` field and the pass counter for what the cache did.
"""

from __future__ import annotations

import random
from unittest import mock

import pytest

import ren
from ren import settings
from ren.codegen import compiler
from ren.engine import schedule as schedule_mod
from ren.engine import schedule_cache
from ren.ir import DType, Node, Op
from ren.poly import Poly, prepare_realize
from ren.reference import evaluate
from ren.ring import RingSpec, ntt_primes
from ren.testing.programs import random_program
from tests.threads import in_threads

RING = RingSpec(16, ntt_primes(16, 30, 3))
OTHER = RingSpec(16, ntt_primes(16, 28, 3))  # the same shape, other moduli


@pytest.fixture(autouse=True)
def fresh_cache():
    schedule_cache.clear()
    yield
    schedule_cache.clear()


def poly(seed: int, ring: RingSpec = RING, device: str = "python") -> Poly:
    rnd = random.Random(seed)
    return Poly([rnd.randrange(ring.Q) for _ in range(ring.n)], ring, device=device).realize()


def realized(*polys: Poly) -> tuple[str, list[list[int]]]:
    """Realize ``polys`` together: what the cache did, and each value, checked against Python."""
    want = [evaluate(p.node) for p in polys]
    real = prepare_realize(*polys)
    real.run()
    got = [p.tolist() for p in polys]
    assert got == [list(w) for w in want]  # the big-integer oracle
    return real.ctx.cache, got


def test_the_same_graph_over_new_buffers_hits_and_runs_no_pass():
    prog = lambda a, b: ((a + b) * (a - 3)).rotate(1) + b.ntt()  # noqa: E731
    assert realized(prog(poly(1), poly(2)))[0] == "miss"
    with mock.patch.object(schedule_mod, "PASSES", ()):  # a hit must not schedule at all
        assert realized(prog(poly(3), poly(4)))[0] == "hit"
    assert schedule_cache.stats().hits == 1 and schedule_cache.stats().misses == 1


def test_other_constants_bind_into_the_kept_kernels():
    x, y = poly(1), poly(2)
    results = [realized(x * c + y * (c + 7) - 11) for c in (5, 6, 12345, -9, 2**40)]
    assert [cache for cache, _ in results] == ["miss", "hit", "hit", "hit", "hit"]


@pytest.mark.parametrize("special", [0, 1, -1])
def test_zero_one_and_minus_one_are_part_of_the_key(special):
    # simplify rewrites x * 0, x * 1 and x * -1 (or x + 0): a kept schedule made for another
    # value must not be used for them, nor theirs for another value
    # (x * 1 + y + 1 keeps the 1 it adds and drops the one it multiplies by)
    x, y = poly(1), poly(2)
    assert realized(x * 5 + y + 5)[0] == "miss"
    assert realized(x * special + y + special)[0] == "miss"
    assert realized(x * special + y + special)[0] == "hit"
    assert realized(x * 6 + y + 6)[0] == "hit"


def test_folded_constants_are_part_of_the_key():
    # (2 + 3) folds to 5, the same value as the other constant: the kept kernels hold 5 once, so
    # a binding that took it for the last constant would compute x * 7 + y * 7
    x, y = poly(1), poly(2)
    two, three = Poly.const(2, RING), Poly.const(3, RING)
    assert realized(x * (two + three) + y * 5)[0] == "miss"
    _, (got,) = realized(x * (two + three) + y * 7)
    assert got == [(5 * a + 7 * b) % RING.Q for a, b in zip(x.tolist(), y.tolist(), strict=True)]


def test_equal_constants_of_one_graph_stay_correct():
    x, y = poly(1), poly(2)
    realized(x * 5 + y * 6)
    realized(x * 5 + y * 5)  # one constant node: another structure
    realized(x * 8 + y * 9)


@pytest.mark.parametrize(
    "change",
    ["ring", "domain", pytest.param("device", marks=pytest.mark.cc), "view", "galois"],
)
def test_programs_that_differ_in_ring_domain_device_window_or_rotation_miss(change):
    base = lambda a: (a * a + 1).rotate(1)  # noqa: E731
    assert realized(base(poly(1)))[0] == "miss"
    other = {
        "ring": lambda: base(poly(2, OTHER)),
        "domain": lambda: base(poly(2).ntt().realize()),
        "device": lambda: base(poly(2, device="cpu")),
        "view": lambda: base(poly(2).to_ring(RING.with_moduli(RING.moduli[:2]))),
        "galois": lambda: (poly(2) * poly(2) + 1).rotate(2),
    }[change]
    assert realized(other())[0] == "miss"


@pytest.mark.parametrize(
    "device",
    [
        "python",
        pytest.param("cpu", marks=pytest.mark.cc),
        pytest.param("cuda", marks=pytest.mark.cc, id="cuda-emulated"),
    ],
)
def test_random_programs_give_the_same_words_with_the_cache_on_and_off(device, monkeypatch):
    if device == "cuda":
        monkeypatch.setenv("REN_CUDA_EMULATE", "1")  # the CUDA C, run on the host emulator
    for seed in range(12):
        with settings.override(SCHEDULE_CACHE=0):
            outs, text = random_program(RING, device, seed, max_ops=12)
            off = [p.tolist() for p in ren.realize(*[p for _, p in outs])]
        for _ in range(2):  # a miss, then a hit over fresh inputs of the same program
            outs, _ = random_program(RING, device, seed, max_ops=12)
            on = [p.tolist() for p in ren.realize(*[p for _, p in outs])]
            assert on == off, text
    assert schedule_cache.stats().hits > 0


def test_the_bound_drops_the_least_recently_used_and_zero_turns_it_off():
    x = poly(1)
    with settings.override(SCHEDULE_CACHE=2):
        for k in range(1, 5):  # four structures: x * c, then more ops
            y = x
            for _ in range(k):
                y = y * 3 + 1
            realized(y)
        assert schedule_cache.stats().currsize == 2
    with settings.override(SCHEDULE_CACHE=0):
        assert realized(x * 3 + 1)[0] == "off"
        assert realized(x * 3 + 1)[0] == "off"


@pytest.mark.cc
def test_one_hundred_scalars_compile_one_library(tmp_path):
    from ren.backends import cpu

    builds: list[str] = []
    real_build = compiler._build

    def counting(source, *args, **kwargs):
        builds.append(source)
        return real_build(source, *args, **kwargs)

    x = poly(1, device="cpu")
    with (
        settings.override(CACHE_DIR=tmp_path, SCHEDULE_CACHE=0),
        mock.patch.object(compiler, "_build", counting),
    ):
        cpu.forget_kernels()
        compiler._memory.clear()
        outs = [(x * c).tolist() for c in range(2, 102)]
    assert len(builds) == 1  # before constants were arguments: one library per value
    for c, out in zip(range(2, 102), outs, strict=True):
        assert out == [a * c % RING.Q for a in x.tolist()]


def test_threads_realizing_with_other_constants_each_get_their_own_words():
    x, y = poly(1), poly(2)
    realized(x * 2 + y)

    def work(i: int) -> bool:
        c = 1000 + i
        out = (x * c + y).tolist()
        return out == [(a * c + b) % RING.Q for a, b in zip(x.tolist(), y.tolist(), strict=True)]

    assert all(in_threads(work, 16))
    assert schedule_cache.stats().hits >= 16


def test_a_tool_watching_sees_every_pass_of_a_hit():
    from ren.viz import trace

    x = poly(1)
    realized(x * 3 + 1)
    with trace.record() as t:
        (poly(2) * 4 + 1).realize()
    (rec,) = t.realizations
    assert len(rec.passes) == 12  # scheduled again for the tool
    assert rec.cache == "hit, scheduled again"


def test_the_key_abstracts_buffers_and_generic_constants_only():
    x, y = poly(1), poly(2)
    k1 = schedule_cache.graph_key(Node(Op.SINK, DType.VOID, ((x * 5 + y).node,)))
    k2 = schedule_cache.graph_key(Node(Op.SINK, DType.VOID, ((y * 6 + x).node,)))
    k3 = schedule_cache.graph_key(Node(Op.SINK, DType.VOID, ((y * 1 + x).node,)))
    assert k1.structure == k2.structure and k1.consts == (5,) and k2.consts == (6,)
    assert k1.inputs == (x.node.src[0].arg.buffer, y.node.src[0].arg.buffer)
    assert k3.structure != k1.structure  # 1 is a class of its own


@pytest.mark.cc
def test_a_hit_on_cpu_runs_as_one_graph_call_and_gives_the_same_words():
    from ren.engine import hits, realize

    ran: list[bool] = []
    real = hits.run_as_graph

    def spy(*args):
        ran.append(real(*args))
        return ran[-1]

    def prog(a: Poly, b: Poly) -> Poly:
        return ((a * b).rescale() * 3 + a.to_ring(a.ring.with_moduli(a.ring.moduli[:2]))).ntt()

    with mock.patch.object(realize, "run_as_graph", spy):
        caches: list[str] = []
        for seed in range(4):
            a, b = poly(seed, device="cpu"), poly(10 + seed, device="cpu")
            caches.append(realized(prog(a, b))[0])  # the big-integer oracle checks every word
    assert caches == ["miss", "hit", "hit", "hit"]
    assert ran == [False, True, True]  # every hit but the first ran as one call
    (entry,) = [e for es in schedule_cache._CACHE.values() for e in es]
    assert len(entry.kernels) >= hits.MIN_UNITS and entry.graph
