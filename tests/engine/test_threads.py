"""Ren from many threads: every thread gets its own answer.

Oracle: Python big integers (``tests/oracles.py``: schoolbook negacyclic products and
automorphisms), computed for each thread's own inputs. Threads switch as often as CPython allows
(``sys.setswitchinterval(1e-6)``), so shared state that is not per thread or locked shows up as
wrong words, bare ``KeyError``s, false "nested capture" errors or crashes.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable

import pytest

import ren
import ren.capture.function as jit_module
from ren import JitError, Poly, RingSpec, ntt_primes
from ren.engine.realize import capture_recorder
from ren.ir.node import Node
from ren.ir.op import DType, Op
from ren.repoint import stored
from tests.devices import COMPILED
from tests.oracles import automorphism, negacyclic
from tests.threads import in_threads

ALL = [pytest.param("python", id="python"), *COMPILED]
THREADS = 8


@pytest.fixture(autouse=True)
def no_plans():
    ren.clear_jit()
    yield
    ren.clear_jit()


def run_threads(target: Callable[[int], None], count: int = THREADS) -> None:
    in_threads(target, count)


def program_oracle(x: list[int], y: list[int], ring: RingSpec, g: int) -> list[int]:
    """``sigma_g(x * y + x) * 3 - y`` in ``Z_Q[X]/(X^n + 1)``, coefficients in ``[0, Q)``."""
    Q = ring.Q
    xy = negacyclic(x, y, Q)
    rotated = automorphism([(u + v) % Q for u, v in zip(xy, x, strict=True)], g, Q)
    return [(3 * u - v) % Q for u, v in zip(rotated, y, strict=True)]


# --------------------------------------------------------------------------------------------
# graphs and realizations


def test_the_same_node_made_in_many_threads_is_one_object():
    made: list[list[Node]] = [[] for _ in range(THREADS)]
    leaf = Node(Op.CONST, DType.U32, (), None)

    def build(i: int) -> None:
        for k in range(300):
            made[i].append(Node(Op.NEG, DType.U32, (Node(Op.CONST, DType.U32, (), k),)))

    run_threads(build)
    for k in range(300):
        assert len({id(m[k]) for m in made}) == 1, f"node {k} was made twice"
    assert leaf is Node(Op.CONST, DType.U32, (), None)


@pytest.mark.parametrize("device", ALL, indirect=True)
def test_independent_programs_realize_in_many_threads(device):
    """Each thread builds and realizes its own programs on its own rings; all words are right."""
    got: list[list[tuple]] = [[] for _ in range(THREADS)]

    def work(i: int) -> None:
        rng = random.Random(i)
        for _ in range(6):
            n = rng.choice([8, 16, 32])
            ring = RingSpec(n, tuple(ntt_primes(n, 30, rng.choice([1, 2, 3]))))
            x = [rng.randrange(-1000, 1000) for _ in range(n)]
            y = [rng.randrange(1000) for _ in range(n)]
            a, b = Poly(x, ring, device), Poly(y, ring, device)
            out = ((a * b + a).rotate(1) * 3 - b).tolist()
            got[i].append((x, y, ring, out))

    run_threads(work)
    for results in got:
        assert len(results) == 6
        for x, y, ring, out in results:
            assert out == program_oracle(x, y, ring, 5)


@pytest.mark.parametrize("device", ALL, indirect=True)
def test_threads_realizing_one_shared_lazy_value_agree(device):
    """Eight threads realize the same lazy graph at once: each gets the right value."""
    ring = RingSpec(16, tuple(ntt_primes(16, 30, 2)))
    x = list(range(1, 17))
    y = list(range(16, 0, -1))
    a, b = Poly(x, ring, device), Poly(y, ring, device)
    shared = (a * b + a).rotate(1) * 3 - b
    results: list[list[int]] = [[] for _ in range(THREADS)]

    def work(i: int) -> None:
        results[i] = shared.tolist()

    run_threads(work)
    want = program_oracle(x, y, ring, 5)
    for i, got in enumerate(results):  # per thread, so a failure shows whose words differ
        assert got == want, f"thread {i} of {THREADS}"


# --------------------------------------------------------------------------------------------
# one jitted function from many threads


@pytest.mark.parametrize("device", ALL, indirect=True)
def test_one_jitted_function_from_many_threads(device):
    ring = RingSpec(16, tuple(ntt_primes(16, 30, 2)))

    @ren.jit
    def step(a: Poly, b: Poly) -> Poly:
        return (a * b + a).rotate(1) * 3 - b

    answers: list[list[tuple]] = [[] for _ in range(THREADS)]
    objects: list[list[Poly]] = [[] for _ in range(THREADS)]  # held: an id of a dead one recurs

    def work(i: int) -> None:
        rng = random.Random(100 + i)
        for _ in range(12):
            x = [rng.randrange(1 << 20) for _ in range(16)]
            y = [rng.randrange(1 << 20) for _ in range(16)]
            out = step(Poly(x, ring, device), Poly(y, ring, device))
            objects[i].append(out)
            answers[i].append((x, y, out.tolist()))

    run_threads(work)
    for i in range(THREADS):
        for x, y, out in answers[i]:
            assert out == program_oracle(x, y, ring, 5), f"thread {i} got another's words"
        assert all(o is objects[i][0] for o in objects[i]), "a thread gets the same output object"
    assert len({id(o[0]) for o in objects}) == THREADS, "each thread has its own outputs"
    assert step.cache_info().currsize == 1
    assert step.cache_info().hits + step.cache_info().misses == THREADS * 12


@pytest.mark.parametrize("device", ALL, indirect=True)
def test_a_fed_back_loop_in_many_threads(device):
    """``x = step(x, y)`` in every thread at once: the staging copies are per thread too."""
    ring = RingSpec(8, (17, 97))

    @ren.jit
    def step(x: Poly, y: Poly) -> Poly:
        return x * y + 1

    finals: list[list[int]] = [[] for _ in range(THREADS)]

    def work(i: int) -> None:
        x = Poly([i] * 8, ring, device)
        y = Poly([(i + k) % 5 for k in range(8)], ring, device)
        for _ in range(6):
            x = step(x, y)
        finals[i] = x.tolist()

    run_threads(work)
    for i in range(THREADS):
        Q = ring.Q
        x = [i] * 8
        y = [(i + k) % 5 for k in range(8)]
        for _ in range(6):
            prod = negacyclic(x, y, Q)
            x = [(prod[0] + 1) % Q, *prod[1:]]
        assert finals[i] == x


def test_a_capture_records_only_its_own_thread():
    """While one thread captures, another realizes and calls jitted functions of its own.

    The other thread gets no false "nested capture", its kernels are not recorded into the plan,
    and the plan, replayed on new inputs, is right.
    """
    ring = RingSpec(8, (17, 97))
    inside = threading.Event()
    done = threading.Event()

    @ren.jit
    def slow(x: Poly) -> Poly:
        y = (x * x).realize()
        inside.set()
        assert done.wait(60)
        return y + x

    @ren.jit
    def other(a: Poly) -> Poly:
        return a * 3

    @ren.jit
    def alone(x: Poly) -> Poly:
        y = (x * x).realize()
        return y + x

    errors: list[BaseException] = []

    def busy() -> None:
        try:
            assert inside.wait(60)
            assert jit_module.capturing() is None and capture_recorder() is None
            for k in range(5):
                a = Poly([k] * 8, ring)
                assert other(a).tolist() == [(3 * k) % ring.Q] * 8
                plus, minus = [k + 1] + [k] * 7, [k - 1] + [k] * 7  # + 1 adds to coefficient 0
                assert ((a + 1) * (a - 1)).tolist() == negacyclic(plus, minus, ring.Q)
        except BaseException as e:
            errors.append(e)
        finally:
            done.set()

    t = threading.Thread(target=busy)
    t.start()
    x = Poly(list(range(8)), ring)
    slow(x)
    t.join()
    assert not errors, errors
    alone(x)
    assert len(slow.last.units) == len(alone.last.units)
    x2 = list(range(3, 11))
    want = [(u + v) % ring.Q for u, v in zip(negacyclic(x2, x2, ring.Q), x2, strict=True)]
    assert slow(Poly(x2, ring)).tolist() == want


def test_another_threads_realization_does_not_repoint_a_capture_in_progress():
    """A value the capture made lazily keeps its graph when another thread computes the same.

    If the other thread's realization repointed it, the plan would read that thread's buffer as
    a stored value, and replays on new inputs would return the capture's answer.
    """
    ring = RingSpec(8, (17, 97))
    x = Poly(list(range(8)), ring).realize()
    made = threading.Event()
    computed = threading.Event()

    @ren.jit
    def square_plus_one(x: Poly) -> Poly:
        y = x * x
        made.set()
        assert computed.wait(60)
        return y + 1

    def other() -> None:
        assert made.wait(60)
        (x * x).realize()  # the same interned graph as the capture's y
        computed.set()

    t = threading.Thread(target=other)
    t.start()
    square_plus_one(x)
    t.join()
    x2 = [5, 1, 0, 2, 9, 3, 3, 1]
    sq = negacyclic(x2, x2, ring.Q)
    assert square_plus_one(Poly(x2, ring)).tolist() == [(sq[0] + 1) % ring.Q, *sq[1:]]


# --------------------------------------------------------------------------------------------
# a replay never reads freed memory


@pytest.mark.parametrize("device", ALL, indirect=True)
def test_a_replay_reading_a_freed_closed_over_value_names_it(device):
    ring = RingSpec(8, (17, 97))
    key = (Poly(list(range(8)), ring, device) * 5).realize()

    @ren.jit
    def mix(x: Poly) -> Poly:
        return x * key + 1

    mix(Poly([1] * 8, ring, device))
    mix(Poly([2] * 8, ring, device))  # a replay reads the key
    stored(key.node)[0].deallocate()
    with pytest.raises(JitError, match=r"mix.*the value key the function closes over.*freed"):
        mix(Poly([3] * 8, ring, device))
    mix.cache_clear()
    with pytest.raises(Exception, match=r"holds no data|freed"):
        mix(Poly([3] * 8, ring, device))  # capturing again reads the freed value: refused too


GLOBAL_TABLE: Poly | None = None


def test_a_replay_reading_a_freed_global_names_it():
    global GLOBAL_TABLE
    ring = RingSpec(8, (17, 97))
    GLOBAL_TABLE = Poly(list(range(8)), ring).ntt().realize()

    @ren.jit
    def use(x: Poly) -> Poly:
        return x * GLOBAL_TABLE

    use(Poly([1] * 8, ring))
    stored(GLOBAL_TABLE.node)[0].deallocate()
    with pytest.raises(JitError, match=r"the global GLOBAL_TABLE.*freed"):
        use(Poly([2] * 8, ring))
    GLOBAL_TABLE = None


def test_a_replay_reading_a_freed_unnamed_value_names_its_buffer():
    ring = RingSpec(8, (17, 97))
    table = {"k": Poly(list(range(8)), ring).realize()}
    holder = [table]

    def make():
        t = holder[0]["k"]  # reached through a call, not a closure or a global of jitted code
        return t

    @ren.jit
    def use(x: Poly) -> Poly:
        return x + make()

    use(Poly([1] * 8, ring))
    buf = stored(table["k"].node)[0]
    buf.deallocate()
    with pytest.raises(JitError, match=rf"buffer #{buf.id} .*freed"):
        use(Poly([2] * 8, ring))
