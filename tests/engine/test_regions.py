"""Regions: ``ren.region`` names, carried from the nodes a block builds to the kernels of them.

The oracle for the paths is the program's own block structure (what was built where); for the
values, the same program built with no region (regions never change what is computed).
"""

from __future__ import annotations

import contextlib
import pickle
import threading

import numpy as np
import pytest

import ren
from ren import Poly, RingSpec, ntt_primes
from ren.engine import schedule_cache
from ren.engine.observe import observing
from ren.engine.realize import prepare
from ren.ir.node import Node
from ren.ir.op import DType, Op
from ren.ir.region import current_region, in_region, note, region_name, region_of

RING = RingSpec(16, ntt_primes(16, 30, 2))


class Kernels:
    def __init__(self) -> None:
        self.regions: list[tuple[str, ...]] = []

    def on_unit(self, unit, seconds) -> None:
        self.regions.append(unit.kernel.region)


def program(named: bool):
    a = Poly.uniform(RING, rng=1).realize()
    b = Poly.uniform(RING, rng=2).realize()
    if not named:
        return ((a * b + a).ntt().intt() + 3), None
    with ren.region("outer") as outer:
        c = a * b
        with ren.region("inner") as inner:
            d = (c + a).ntt()
    return d.intt() + 3, (outer, inner)


def test_paths_nest_and_unwind():
    assert current_region() == ()
    with ren.region("a") as a:
        assert a == ("a",) == current_region()
        with ren.region("b") as b:
            assert b == ("a", "b") == current_region()
            assert region_name(b) == "a/b"
        assert current_region() == ("a",)
    assert current_region() == ()
    with pytest.raises(RuntimeError), ren.region("x"):
        raise RuntimeError("the block failed")
    assert current_region() == ()


@pytest.mark.parametrize("bad, error", [(3, TypeError), ("", ValueError), ("a/b", ValueError)])
def test_bad_names(bad, error):
    with pytest.raises(error, match="region name"), ren.region(bad):
        pass
    assert current_region() == ()


def test_nodes_take_the_region_they_are_first_made_in():
    a = Poly.uniform(RING, rng=3).realize()
    with ren.region("r"):
        x = a * a
        y = a + 5
    assert region_of(x.node) == ("r",) and region_of(y.node) == ("r",)
    with ren.region("s"):
        again = a * a  # the same interned node: it keeps its first region
    assert again.node is x.node and region_of(again.node) == ("r",)
    z = x + 1
    assert region_of(z.node) == ()  # built outside: a user of a region's value is not in it


@pytest.mark.parametrize("cache", ["256", "0"])
def test_kernels_know_the_region_of_what_they_compute(monkeypatch, cache):
    monkeypatch.setenv("REN_SCHEDULE_CACHE", cache)
    plain, _ = program(named=False)
    want = plain.tolist()
    for _ in range(2):  # the second time a cache hit (cache on): the same regions
        out, (outer, inner) = program(named=True)
        seen = Kernels()
        with observing(seen):
            out.realize()
        assert out.tolist() == want
        assert set(seen.regions) == {outer, inner, ()}
        assert seen.regions.count(inner) == 1  # (c + a) fused into one kernel, in NTT form


def test_a_cached_schedule_never_reports_another_programs_regions():
    schedule_cache.clear()
    regions, caches = [], []
    for name in ("first", "second", "second"):
        a = Poly.uniform(RING, rng=5).realize()
        with ren.region(name):
            out = a * a + 1
        prepared = prepare((out.node,))  # no observer: a hit binds the cached kernels
        prepared.run()
        regions.append({k.region for k in prepared.kernels})
        caches.append(prepared.ctx.cache)
    assert regions == [{("first",)}, {("second",)}, {("second",)}]
    assert caches == ["miss", "miss", "hit"]


def test_each_thread_has_its_own_path():
    seen: dict[int, tuple[str, ...]] = {}
    barrier = threading.Barrier(4)

    def work(i: int) -> None:
        with ren.region(f"t{i}"):
            barrier.wait()
            a = Poly(np.arange(16) + i, RING)
            seen[i] = region_of((a * a).node)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {i: (f"t{i}",) for i in range(4)}


# --------------------------------------------------------------------------------------------
# instances: each entry into a block is one, and the schedule cache tells them apart


def test_each_entry_into_a_region_is_an_instance():
    with ren.region("m") as first, ren.region("inner") as inner:
        pass
    with ren.region("m") as second:
        pass
    assert first == second == ("m",) and hash(first) == hash(("m",))  # paths compare as names
    assert first.instances[0] is not second.instances[0]  # but are two entries
    assert inner.instances[0] is first.instances[0]  # a nested block shares its parent's entry
    note_path = first.instances[0]
    note_path.notes["output"] = object()
    back = pickle.loads(pickle.dumps(first))
    assert back == ("m",) and back.instances[0].serial == note_path.serial
    assert back.instances[0].notes == {}  # notes (values of a program) are never pickled


def test_region_notes_and_in_region():
    class Value:
        def __init__(self, level):
            self.level = level

        def __ren_region_notes__(self, side):
            return {f"level_{side}": self.level}

    steps = []

    @in_region("op")
    def op(x):
        with ren.region("step") as step:
            note(seen=True)
        steps.append(step)
        return Value(x.level - 1)

    assert op(Value(5)).level == 4
    (step,) = steps
    outer = step.instances[0]
    assert outer.name == "op" and outer.notes == {"level_in": 5, "level_out": 4}
    assert step.instances[1].notes == {"seen": True}
    note(ignored=True)  # outside every region: nothing to note on, nothing raised


def product_graph(blocks: int):
    """``a * b`` and ``c * d``, built in one ``m`` block (1) or one block each (2)."""
    a, b, c, d = (Poly.uniform(RING, rng=i).realize() for i in range(4))
    if blocks == 1:
        with ren.region("m"):
            return a * b, c * d
    with ren.region("m"):
        x = a * b
    with ren.region("m"):
        return x, c * d


def key_of(outs) -> tuple:
    return schedule_cache.graph_key(Node(Op.SINK, DType.VOID, tuple(o.node for o in outs)))


def test_the_cache_key_tells_instances_apart():
    one, two = key_of(product_graph(1)), key_of(product_graph(2))
    assert one.structure != two.structure  # same names, other instances
    assert key_of(product_graph(1)).structure == one.structure  # built again: the same key
    assert len(one.instances) == 1 and len(two.instances) == 2


def test_a_hit_reports_its_own_programs_instances():
    schedule_cache.clear()
    seen = []
    for _ in range(3):
        outs = product_graph(2)
        prepared = prepare(tuple(o.node for o in outs))
        prepared.run()
        mine = {i.serial for o in outs for i in region_of(o.node).instances}
        got = {i.serial for k in prepared.kernels for i in k.region.instances}
        assert got == mine  # the instances this build made, also on a hit
        assert len(got) == 2  # two blocks: two boxes in the report
        seen.append(prepared.ctx.cache)
    assert seen == ["miss", "hit", "hit"]


def test_a_constants_region_is_not_in_the_key():
    """A constant is interned: made first inside a region, it keeps that region. Were it in the
    key, the same program built again (reusing the constant) would miss the cache."""
    a = Poly.uniform(RING, rng=9).realize()
    with ren.region("first"):
        k1 = key_of([a * Poly.const(12345, RING)])
    with ren.region("first"):
        k2 = key_of([a * Poly.const(12345, RING)])
    assert k1.structure == k2.structure


def test_instances_and_keeping_are_per_thread():
    """Eight threads enter one region name at once: eight instances; only the thread inside
    ``keeping()`` keeps outputs (``ren.viz.record()`` turns it on for its own thread)."""
    from ren.ir.region import is_keeping, keeping

    got: dict[int, tuple[int, bool]] = {}
    barrier = threading.Barrier(8)

    def work(i: int) -> None:
        kept = keeping() if i == 0 else contextlib.nullcontext()
        with kept, ren.region("shared") as path:
            barrier.wait()
            got[i] = (path.instances[0].serial, is_keeping())

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({serial for serial, _ in got.values()}) == 8
    assert {i for i, (_, keep) in got.items() if keep} == {0}
    assert not is_keeping()
