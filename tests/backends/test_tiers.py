"""The cpu device's first calls (``ren.backends.cpu_tiers``) and the elementwise machine.

Oracles: the python device's words and the reference evaluator (``ren.reference``) for every
program; whether a build ran is read from the compile cache and from the kernels themselves.
A background build is held back by an event, so "the first call does not wait for the compiler"
is observed, not timed.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from ren import Poly, RingSpec, jit, ntt_primes, realize
from ren.backends import cpu, cpu_tiers
from ren.codegen import batch, compiler, vm
from ren.codegen.linearize import linearize
from ren.engine.realize import prepare
from ren.ir.kernels import Family
from ren.reference import evaluate
from tests.backends.test_programs import programs

pytestmark = pytest.mark.cc

RINGS = [
    pytest.param(RingSpec(8, (17, 97, 113)), id="N=8/u32"),
    pytest.param(RingSpec(64, ntt_primes(64, 30, 3)), id="N=64/u32"),
    pytest.param(RingSpec(128, ntt_primes(128, 60, 3)), id="N=128/u64"),
]


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """An empty compile cache, tiering on, nothing bound in this process; builds drained after."""
    monkeypatch.setenv("REN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("REN_SCHEDULE_CACHE", "0")
    monkeypatch.setenv("REN_TIERED", "1")
    for name in ("REN_VALIDATE", "REN_DEBUG", "REN_CCACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(compiler, "_memory", {})
    cpu.forget_kernels()
    yield tmp_path / "cache"
    cpu_tiers.wait()
    cpu.forget_kernels()


@pytest.fixture
def held(monkeypatch):
    """Background builds wait for ``held.set()`` (the machine too, unless built beforehand)."""
    gate = threading.Event()
    real = batch.build_all

    def build_all(*args, **kwargs):
        assert kwargs.get("background"), "a build in the caller's thread while tiering is on"
        assert gate.wait(120)
        return real(*args, **kwargs)

    monkeypatch.setattr(batch, "build_all", build_all)
    yield gate
    gate.set()
    cpu_tiers.wait()


def _coeffs(ring: RingSpec, seed: int) -> list[int]:
    return [int(x) for x in np.random.default_rng(seed).integers(-1000, 1000, ring.n)]


def _run_both(ring: RingSpec) -> tuple[list[Poly], list[Poly]]:
    ca, cb = _coeffs(ring, 1), _coeffs(ring, 2)
    on_cpu, on_py = programs(ring, "cpu", ca, cb), programs(ring, "python", ca, cb)
    realize(*on_cpu)
    realize(*on_py)
    return on_cpu, on_py


def _units(polys: list[Poly]):
    return prepare([p.node for p in polys]).units


@pytest.mark.parametrize("ring", RINGS)
def test_first_calls_run_before_any_build_and_give_the_python_words(fresh, held, ring):
    """Nothing is built yet: templates run on NumPy, elementwise kernels too (no machine)."""
    on_cpu, on_py = _run_both(ring)
    assert not held.is_set()
    for c, p in zip(on_cpu, on_py, strict=True):
        assert (c.limbs() == p.limbs()).all()
        assert c.tolist() == evaluate(p.node)
    assert not list(fresh.glob("*.so")) if fresh.exists() else True


@pytest.mark.parametrize("ring", RINGS)
def test_the_elementwise_machine_gives_the_python_words(fresh, held, ring):
    """Every elementwise kernel of the programs on the machine (built first), words compared."""
    flags = cpu.flags()
    compiler.compile_cached(vm.vm_source(ring.dtype), flags, name=vm.vm_name(ring.dtype))
    on_cpu, on_py = _run_both(ring)
    for c, p in zip(on_cpu, on_py, strict=True):
        assert (c.limbs() == p.limbs()).all()
    units = _units(programs(ring, "cpu", _coeffs(ring, 1), _coeffs(ring, 2)))
    ew = [u for u in units if u.kernel.info.family is Family.ELEMENTWISE]
    assert ew and all(isinstance(u.fn, cpu_tiers.Tiered) for u in ew)
    assert all(isinstance(u.fn._fallback(), cpu_tiers.VMKernel) for u in ew)
    assert not held.is_set()


def test_each_kernel_moves_to_its_library_once_built(fresh, held):
    """After the build the same kernel objects run the compiled code; the cache holds them."""
    ring = RingSpec(64, ntt_primes(64, 60, 3))
    _, on_py = _run_both(ring)
    units = _units(programs(ring, "cpu", _coeffs(ring, 1), _coeffs(ring, 2)))  # same kernels
    tiered = [u.fn for u in units if isinstance(u.fn, cpu_tiers.Tiered)]
    assert tiered and all(t.building for t in tiered)
    held.set()
    cpu_tiers.wait()
    assert not any(t.building for t in tiered)
    assert all(isinstance(t.resolved(), cpu.CompiledKernel) for t in tiered)
    again = programs(ring, "cpu", _coeffs(ring, 1), _coeffs(ring, 2))
    realize(*again)
    for c, p in zip(again, on_py, strict=True):
        assert (c.limbs() == p.limbs()).all()
    built = {p.name.split("-")[0] for p in fresh.glob("*.so")}
    assert {t.name for t in tiered} <= built
    assert vm.vm_name("u64") in built  # the machine and the families of the shape came along
    assert "ren_intt_n64_u64" in built and "ren_lift_n64_u64" in built


def test_a_failed_background_build_is_built_again_by_the_kernel_that_needs_it(fresh, monkeypatch):
    """The background build raises; the next call builds in the caller's thread."""
    failed = []

    def build_all(*args, **kwargs):
        failed.append(len(args[0]))
        raise compiler.CompileError("the compiler was not there (a test)")

    monkeypatch.setattr(batch, "build_all", build_all)
    ring = RingSpec(64, ntt_primes(64, 60, 2))
    a, b = Poly(_coeffs(ring, 1), ring, "cpu"), Poly(_coeffs(ring, 2), ring, "cpu")
    first = (a * b + 1).realize()
    cpu_tiers.wait()
    assert failed
    monkeypatch.undo()
    second = (a * b + 1).realize()  # same kernel objects? no schedule cache: fresh units
    py = Poly(_coeffs(ring, 1), ring) * Poly(_coeffs(ring, 2), ring) + 1
    assert first.tolist() == second.tolist() == py.tolist()


def test_a_plan_captured_while_building_gets_its_graph_runner_later(fresh, held):
    ring = RingSpec(64, ntt_primes(64, 60, 3))

    @jit
    def step(a: Poly, b: Poly) -> Poly:
        return (a * b + a).rescale().intt().contiguous()

    xs = [Poly(_coeffs(ring, s), ring, "cpu") for s in (1, 2)]
    first = step(*xs)
    step(*xs)  # a replay while the kernels build: unit by unit
    (plan,) = step.plans.values()
    assert plan.building and plan.runner_kind == "units"
    held.set()
    cpu_tiers.wait()
    out = step(*xs)
    want = step.__wrapped__(*(Poly(_coeffs(ring, s), ring) for s in (1, 2)))
    assert first.tolist() == out.tolist() == want.tolist()
    assert not plan.building and plan.runner_kind == "graph"


def test_validation_and_the_setting_turn_tiering_off(monkeypatch):
    monkeypatch.setenv("REN_TIERED", "1")
    monkeypatch.delenv("REN_VALIDATE", raising=False)
    assert cpu_tiers.enabled()
    monkeypatch.setenv("REN_VALIDATE", "1")
    assert not cpu_tiers.enabled()
    monkeypatch.delenv("REN_VALIDATE")
    monkeypatch.setenv("REN_TIERED", "0")
    assert not cpu_tiers.enabled()


def test_the_machine_reuses_registers():
    """A long body needs few rows: a value's register is free after its last reader."""
    ring = RingSpec(64, ntt_primes(64, 60, 2))
    a, b = Poly(_coeffs(ring, 1), ring, "cpu"), Poly(_coeffs(ring, 2), ring, "cpu")
    x = a
    for k in range(20):
        x = x * b + a - k
    units = prepare([x.node]).units
    kernels = [u.kernel for u in units if u.kernel.info.family is Family.ELEMENTWISE]
    prog = max((linearize(k.ast) for k in kernels), key=lambda p: len(p.instrs))
    code = vm.encode(prog)
    assert len(prog.instrs) > 40
    assert code.regs <= 6
    assert code.count == len(prog.instrs)


def test_a_forked_child_builds_what_its_parent_was_still_building(fresh, held):
    """The child has no background thread: its kernels build in its own thread at the next call."""
    import os

    ring = RingSpec(64, ntt_primes(64, 60, 2))
    ca, cb = _coeffs(ring, 1), _coeffs(ring, 2)
    want = (Poly(ca, ring) * Poly(cb, ring) + 7).tolist()
    first = (Poly(ca, ring, "cpu") * Poly(cb, ring, "cpu") + 7).realize()  # submitted, held
    units = _units([Poly(ca, ring, "cpu") * Poly(cb, ring, "cpu") + 7])
    tiered = [u.fn for u in units if isinstance(u.fn, cpu_tiers.Tiered)]
    assert tiered and all(t.building for t in tiered)
    pid = os.fork()
    if pid == 0:  # the child: the held build never finishes here
        code = 1
        try:
            built = all(isinstance(t.resolved(), cpu.CompiledKernel) for t in tiered)
            again = (Poly(ca, ring, "cpu") * Poly(cb, ring, "cpu") + 7).realize()
            code = 0 if built and again.tolist() == want else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert first.tolist() == want
    assert not held.is_set()  # the parent's build is still held: the child did not wait for it


def test_what_is_submitted_while_a_build_runs_is_built_together_after_it():
    import time

    gate, calls = threading.Event(), []

    def build(items):
        calls.append([name for name, _ in items])
        assert gate.wait(60)
        return len(items)

    assert cpu_tiers.submit([("a", "/* test a */")], build) == 1
    for _ in range(500):  # until the background thread runs the first build
        if calls:
            break
        time.sleep(0.01)
    assert cpu_tiers.submit([("b", "/* test b */")], build) == 1
    assert cpu_tiers.submit([("c", "/* test c */"), ("b", "/* test b */")], build) == 1
    futures = [cpu_tiers.pending(f"/* test {k} */") for k in "bc"]
    assert all(f is not None and not f.done() for f in futures)
    gate.set()
    cpu_tiers.wait()
    assert calls == [["a"], ["b", "c"]]  # one build for what came while "a" was built
    assert [f.result() for f in futures] == [2, 2]
    assert cpu_tiers.pending("/* test b */") is None


def test_many_threads_call_kernels_while_they_build_and_after(fresh, held):
    """Eight threads realize the same programs before, during and after the build finishes."""
    ring = RingSpec(64, ntt_primes(64, 60, 3))
    ca, cb = _coeffs(ring, 1), _coeffs(ring, 2)
    want = [p.limbs() for p in realize(*programs(ring, "python", ca, cb))]
    errors: list[str] = []
    start = threading.Barrier(8)

    def worker(k: int) -> None:
        start.wait()
        for i in range(6):
            if k == 0 and i == 2:
                held.set()  # the build goes on while the others call
            got = realize(*programs(ring, "cpu", ca, cb))
            if not all((g.limbs() == w).all() for g, w in zip(got, want, strict=True)):
                errors.append(f"thread {k}, call {i}")

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors
    cpu_tiers.wait()
    units = _units(programs(ring, "cpu", ca, cb))
    assert not any(getattr(u.fn, "building", False) for u in units)
