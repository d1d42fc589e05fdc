"""Regions: ``ren.region`` names, carried from the nodes a block builds to the kernels of them.

The oracle for the paths is the program's own block structure (what was built where); for the
values, the same program built with no region (regions never change what is computed).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

import ren
from ren import Poly, RingSpec, ntt_primes
from ren.engine import schedule_cache
from ren.engine.observe import observing
from ren.engine.realize import prepare
from ren.ir.region import current_region, region_name, region_of

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
