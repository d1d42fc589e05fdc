"""The cuda backend: its runtime, device memory mirrors, and clear errors.

Values are checked against the python device. Without a GPU these run on the host emulator
(``REN_CUDA_EMULATE=1``), which builds the very CUDA C a GPU would run; with one (PyCUDA and a
driver), the ``device`` fixture picks the GPU. The families of kernels are covered by
``test_cpu.py`` and ``test_programs.py`` (parametrized over ``tests.devices.COMPILED``).
"""

from __future__ import annotations

import importlib.util
import threading
import time

import numpy as np
import pytest

import ren.codegen.cuda
import ren.codegen.helpers
from ren import Poly, RingSpec, ntt_primes, realize
from ren.backends import cuda
from ren.codegen.cuda import CUDARenderer
from ren.errors import RenError
from tests.devices import COMPILED
from tests.threads import in_threads

CUDA = [p for p in COMPILED if p.values[0] == "cuda"]
RING = RingSpec(64, ntt_primes(64, 60, 2))


@pytest.fixture
def fresh_kernels(monkeypatch):
    """Kernels rendered from now on: an empty kernel cache and a new renderer (reset after)."""
    cuda._elementwise.cache_clear()
    monkeypatch.setattr(cuda, "RENDERER", CUDARenderer())
    yield
    cuda._elementwise.cache_clear()


@pytest.mark.skipif(importlib.util.find_spec("pycuda") is not None, reason="PyCUDA is installed")
def test_without_pycuda_the_error_says_how_to_install_and_how_to_emulate(monkeypatch):
    monkeypatch.delenv("REN_CUDA_EMULATE", raising=False)
    cuda.runtime.cache_clear()
    p = Poly([1, 2, 3, 4], RingSpec(4, (17, 97)), device="cuda")
    with pytest.raises(RenError) as info:
        (p + 1).realize()
    msg = str(info.value)
    assert "needs PyCUDA" in msg and "pip install -e '.[cuda]'" in msg
    assert "REN_CUDA_EMULATE=1" in msg
    assert not p.node.src[0].arg.buffer.mirror  # nothing was left half made on the device


@pytest.mark.parametrize("device", CUDA, indirect=True)
def test_host_reads_see_device_writes_and_host_writes_reach_the_device(device):
    a = Poly.uniform(RING, rng=1, device=device)
    x = (a * 3 + 1).realize()
    buf = x.node.src[0].arg.buffer
    assert buf.mirror is not None and not buf.mirror.host_fresh  # the words are on the device
    want = (Poly(a.tolist(), RING) * 3 + 1).limbs()
    np.testing.assert_array_equal(x.limbs(), want)  # reading brought them over
    assert buf.mirror.host_fresh and not buf.mirror.device_fresh
    buf.array[:] = 0  # a host write: the next kernel must see zeros
    np.testing.assert_array_equal((x + 5).limbs(), (Poly([0] * RING.n, RING) + 5).limbs())
    buf.deallocate()
    assert buf.mirror is None and not buf.allocated


@pytest.mark.parametrize("device", CUDA, indirect=True)
def test_poisoned_arena_regions_are_not_read(device, monkeypatch):
    monkeypatch.setenv("REN_POISON", "1")
    a, b = (Poly.uniform(RING, rng=s, device=device) for s in (2, 3))
    pa, pb = (Poly(p.tolist(), RING) for p in (a, b))
    outs = [((a * b + a) * 3).rescale(), (a - b).ntt()]
    want = [((pa * pb + pa) * 3).rescale(), (pa - pb).ntt()]
    realize(*outs)
    for got, w in zip(outs, want, strict=True):
        np.testing.assert_array_equal(got.limbs(), w.limbs())


_CORRECTION = "return t_hi >= mq_hi ? t_hi - mq_hi : t_hi - mq_hi + q;"


@pytest.mark.parametrize("device", CUDA, indirect=True)
def test_ren_validate_catches_a_sabotaged_cuda_renderer(device, monkeypatch, fresh_kernels):
    mont_mul = ren.codegen.helpers.MONT_MUL_HI  # the Montgomery product the renderer includes
    assert _CORRECTION in mont_mul
    sabotaged = mont_mul.replace(_CORRECTION, "return t_hi - mq_hi + q;")
    monkeypatch.setattr(ren.codegen.helpers, "MONT_MUL_HI", sabotaged)
    monkeypatch.setenv("REN_VALIDATE", "1")
    a = Poly.uniform(RING, rng=4).ntt().realize()
    x = a.to(device) * a.to(device)
    with pytest.raises(RenError) as info:
        x.realize()
    msg = str(info.value)
    assert msg.startswith("REN_VALIDATE: kernel") and "on cuda differs from the python" in msg
    assert "__global__" in msg and "t_hi - mq_hi + q;" in msg  # the CUDA source is shown


@pytest.mark.parametrize("device", CUDA, indirect=True)
def test_the_runtime_is_named(device):
    Poly([1, 2], RingSpec(2, (17,)), device=device).realize()  # starts the runtime
    rt = cuda.runtime()
    assert rt.name in ("pycuda", "emulated") and rt.description


@pytest.mark.skipif(importlib.util.find_spec("pycuda") is not None, reason="PyCUDA is installed")
def test_moving_a_value_to_an_absent_cuda_device_leaves_the_value_as_it_was(monkeypatch):
    monkeypatch.delenv("REN_CUDA_EMULATE", raising=False)
    cuda.runtime.cache_clear()
    ring = RingSpec(4, (17, 97))
    p = (Poly([1, 2, 3, 4], ring) * 3).realize()
    before = p.tolist()
    moved = p.to("cuda")
    with pytest.raises(RenError, match="needs PyCUDA"):
        moved.realize()
    assert p.realized and p.tolist() == before == [3, 6, 9, 12]
    assert not moved.realized


@pytest.mark.parametrize("device", CUDA, indirect=True)
def test_ren_debug_4_prints_the_cuda_source(device, monkeypatch, capfd, fresh_kernels):
    monkeypatch.setenv("REN_DEBUG", "4")
    (Poly.uniform(RING, rng=7, device=device) * 11).realize()
    err = capfd.readouterr().err
    assert 'extern "C" __global__' in err and "CUDA C" in err


# --------------------------------------------------------------------------------------------
# threads: one runtime per process, and a kernel's tables live while a launch reads them


def test_threads_starting_the_runtime_together_get_one_runtime(monkeypatch):
    """Eight threads ask for the runtime at once, its making slowed: they all get the same."""
    from ren.backends import cuda_runtime

    monkeypatch.setenv("REN_CUDA_EMULATE", "1")
    monkeypatch.setattr(cuda_runtime.EmulatedRuntime, "__init__", lambda self: time.sleep(0.01))
    cuda.runtime.cache_clear()
    try:
        made = in_threads(lambda i: cuda.runtime(), 8)
    finally:
        cuda.runtime.cache_clear()
    assert len({id(rt) for rt in made}) == 1


def test_a_kernel_made_ready_on_another_runtime_meanwhile_keeps_the_tables_it_launches_with(
    monkeypatch,
):
    """Each thread sees a runtime of its own, so every call readies the kernels again for it
    (tests change the runtime; so did two threads starting it at once): the launch running in
    one thread still reads the tables it was readied with. Oracle: the python device."""
    from ren.backends import cuda_runtime

    monkeypatch.setenv("REN_CUDA_EMULATE", "1")
    mine = threading.local()

    def per_thread() -> cuda_runtime.EmulatedRuntime:
        if not hasattr(mine, "rt"):
            mine.rt = cuda_runtime.EmulatedRuntime()
        return mine.rt

    monkeypatch.setattr(cuda, "runtime", per_thread)
    ring = RingSpec(64, ntt_primes(64, 30, 3))
    rng = np.random.default_rng(5)
    xs = [rng.integers(0, 1000, 64).tolist() for _ in range(8)]

    def program(x: list[int], device: str) -> list[int]:
        a = Poly(x, ring, device)
        return ((a * a + a).rotate(3) * a).tolist()

    got = in_threads(lambda i: [program(xs[i], "cuda") for _ in range(12)], 8)
    for i, runs in enumerate(got):
        want = program(xs[i], "python")
        assert all(r == want for r in runs), f"thread {i}"
