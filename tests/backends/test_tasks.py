"""A captured plan as tasks on several threads (``ren.backends.cpu_tasks``).

Oracles: for the dependencies, every pair of conflicting accesses written out by brute force
(a read after a write, a write after a read or a write, on overlapping bytes), which must be
ordered by the waits; for the replays, the python device (NumPy) running the same function, word
for word, with the cpu team forced to several threads and the tasks cut fine enough that small
rings get one task per limb and several per coefficient range.
"""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest

import ren
from ren.backends import cpu_runner, cpu_tasks, cpu_threads
from ren.schemes import ckks

pytestmark = pytest.mark.cc


def conflicts(a: cpu_tasks.Access, b: cpu_tasks.Access) -> bool:
    """Whether two accesses touch a common byte of one slot and one of them writes."""
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2] and (a[3] or b[3])


def reachable(deps: list[list[int]]) -> list[set[int]]:
    """For each kernel, every kernel it waits for, directly or through others."""
    seen: list[set[int]] = []
    for k, direct in enumerate(deps):
        everything = set(direct)
        for d in direct:
            assert d < k  # a wait is always for an earlier kernel
            everything |= seen[d]
        seen.append(everything)
    return seen


@pytest.mark.parametrize("seed", range(40))
def test_every_conflict_is_ordered_and_every_wait_is_a_conflict(seed):
    rng = random.Random(seed)
    kernels = []
    for _ in range(rng.randint(1, 40)):
        accesses = []
        for j in range(rng.randint(1, 4)):
            start = rng.randrange(0, 96, 8)
            accesses.append((rng.randint(0, 2), start, start + rng.randrange(8, 48, 8), j == 0))
        kernels.append(accesses)
    deps = cpu_tasks.dependencies(kernels)
    closure = reachable(deps)
    for k, mine in enumerate(kernels):
        for j in range(k):
            clash = any(conflicts(a, b) for a in mine for b in kernels[j])
            if clash:
                assert j in closure[k], (j, k)
            if j in deps[k]:
                assert clash, (j, k)  # no wait without a reason


def test_a_read_waits_only_for_the_last_writer():
    kernels = [[(0, 0, 64, True)], [(0, 0, 64, True)], [(1, 0, 8, True), (0, 0, 64, False)]]
    assert cpu_tasks.dependencies(kernels) == [[], [0], [1]]


def test_a_write_waits_for_the_readers_since_the_last_write():
    kernels = [
        [(0, 0, 64, True)],
        [(1, 0, 64, True), (0, 0, 32, False)],
        [(2, 0, 64, True), (0, 32, 64, False)],
        [(0, 0, 64, True)],
    ]
    assert cpu_tasks.dependencies(kernels)[3] == [0, 1, 2]


def test_limb_and_word_ranges_cover_the_work_once(monkeypatch):
    assert cpu_tasks.limb_ranges(5, 8192) == [(k, k + 1) for k in range(5)]
    assert cpu_tasks.limb_ranges(5, 1024) == [(0, 4), (4, 5)]  # 4096 words a task at least
    assert cpu_tasks.limb_ranges(1, 8192) == [(0, 1)]
    assert cpu_tasks.limb_ranges(6, 8192, threads=1) == [(0, 6)]
    assert cpu_tasks.word_ranges(16384) == [(k, k + 4096) for k in range(0, 16384, 4096)]
    assert cpu_tasks.word_ranges(65536) == [(k, k + 8192) for k in range(0, 65536, 8192)]
    assert cpu_tasks.word_ranges(4096) == [(0, 4096)]
    monkeypatch.setattr(cpu_tasks, "MIN_TASK_WORDS", 1)
    assert cpu_tasks.word_ranges(128) == [(0, 64), (64, 128)]  # never below a block


# --------------------------------------------------------------------------------------------
# replays on a team of several threads, against the python device


@pytest.fixture
def team(monkeypatch):
    """Four OpenMP threads whatever the machine's load, and tasks of a limb or 64 coefficients."""
    monkeypatch.setenv("REN_THREADS", "4")
    monkeypatch.setattr(cpu_threads, "free_cores", lambda now=None: 4)
    monkeypatch.setattr(cpu_threads, "_until", 0.0)
    monkeypatch.setattr(cpu_tasks, "MIN_TASK_WORDS", 64)
    from ren.backends import cpu

    if "-fopenmp" not in cpu.flags():
        pytest.skip("the compiler builds no OpenMP here: the cpu device runs one thread")


PARAMS = ckks.Params(n=1024, q_bits=(50, 40, 40), p_bits=(50, 50), scale_bits=40, insecure=True)


def program(a, b):
    """Two multiplies and a rotation: NTTs, basis changes, key products, rescales."""
    return ckks.multiply(a, b).rotate(3) + ckks.multiply(b, b)


def values(device: str, seed: int):
    rng = np.random.default_rng(seed)
    with ckks.Context(PARAMS, seed=7, device=device):
        x = ckks.encrypt(rng.uniform(-1, 1, PARAMS.slots))
        y = ckks.encrypt(rng.uniform(-1, 1, PARAMS.slots))
        return x.realize(), y.realize()


def reference(seed: int) -> bytes:
    with ckks.Context(PARAMS, seed=7, device="python"):
        x, y = values("python", seed)
        return program(x, y).realize().to_bytes()


def captured():
    """``program`` under ``ren.jit``, captured on the cpu device (in the caller's context): the
    function, its inputs and its plan's runner."""
    fn = ren.jit(program)
    x, y = values("cpu", 1)
    fn(x, y)
    return fn, x, y, fn.last.runner


def test_a_plan_as_tasks_gives_the_python_devices_words(team):
    with ckks.Context(PARAMS, seed=7, device="cpu"):
        fn, x, y, runner = captured()
        assert runner is not None and runner.threaded and runner.arrays is not None
        tasks = len(runner.tasks.names)
        assert tasks == len(runner.arrays["tasks"]) and f"run as {tasks} tasks" in runner.source
        assert tasks > 2 * len(fn.last.units)  # limbs and coefficient ranges, not whole kernels
        for seed in (2, 3):
            x, y = values("cpu", seed)
            assert fn(x, y).realize().to_bytes() == reference(seed)


def test_eager_realizations_run_as_tasks_too(team):
    """A schedule-cache hit replays its realization's graph runner over fresh buffers."""
    with ckks.Context(PARAMS, seed=7, device="cpu"):
        for seed in (4, 5, 4):
            x, y = values("cpu", seed)
            assert program(x, y).realize().to_bytes() == reference(seed)


def test_many_python_threads_replay_one_plan_each_on_its_own_team(team):
    with ckks.Context(PARAMS, seed=7, device="cpu") as ctx:
        fn = ren.jit(program)
        fn(*values("cpu", 1))
        want = {seed: reference(seed) for seed in range(6)}
        inputs = {seed: values("cpu", seed) for seed in range(6)}
        got: dict[int, bytes] = {}

        def work(seed: int) -> None:
            with ctx:
                for _ in range(3):
                    got[seed] = fn(*inputs[seed]).realize().to_bytes()

        threads = [threading.Thread(target=work, args=(s,)) for s in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert got == want


def test_a_traced_replay_starts_each_task_after_the_kernels_it_waits_for(team):
    """The trace's times against the dependencies: no task began before its inputs were done."""
    with ckks.Context(PARAMS, seed=7, device="cpu"):
        fn, x, y, runner = captured()
        graph = runner.tasks
        runner.trace = np.zeros((len(graph.names), 4))
        assert fn(x, y).realize().to_bytes() == reference(1)
    t = runner.trace
    assert (t[:, 1] > 0).all() and (t[:, 1] <= t[:, 2]).all() and (t[:, 2] <= t[:, 3]).all()
    ends: dict[int, float] = {}
    for task, k in enumerate(graph.kernel_of):
        ends[k] = max(ends.get(k, 0.0), t[task, 3])
    for task, k in enumerate(graph.kernel_of):
        for d in graph.deps[k]:
            assert t[task, 2] >= ends[d], (task, graph.names[task], d)
    prof = cpu_runner.profile(graph, t)
    assert sum(v["tasks"] for v in prof["threads"].values()) == len(graph.names)
    figures = [v for row in prof["threads"].values() for k, v in row.items() if k != "tasks"]
    assert all(type(v) is float for v in figures)  # plain floats, as a reader prints them
    assert set(prof["threads"]) <= {0, 1, 2, 3}
    assert prof["work_ms"] == pytest.approx(float((t[:, 3] - t[:, 2]).sum()) / 1e3)
    assert 0 < prof["span_ms"] <= prof["work_ms"] and prof["parallelism"] >= 1
    assert prof["wall_ms"] >= prof["span_ms"] - 1e-9  # no replay beats its longest chain


def test_a_trace_must_be_a_writable_float64_array(team):
    with ckks.Context(PARAMS, seed=7, device="cpu"):
        fn, x, y, runner = captured()
        runner.trace = np.zeros((len(runner.tasks.names), 4), dtype=np.float32)
        with pytest.raises(ValueError, match="float64"):
            fn(x, y)
        runner.trace = np.zeros((1, 4))
        with pytest.raises(ValueError, match=r"needs \(\d+, 4\) floats"):
            fn(x, y)


def test_brents_bound():
    assert cpu_runner.predicted_speedup(100.0, 0.0, 16) == pytest.approx(16.0)
    assert cpu_runner.predicted_speedup(100.0, 100.0, 16) == pytest.approx(100 / 106.25)
    assert cpu_runner.predicted_speedup(100.0, 10.0, 2) == pytest.approx(100 / 60)
