"""Kernels built together and shared: ``ren.codegen.batch`` and the ring table.

Oracles: the words of every kernel are the NumPy reference's (``ren.ring.arith``, itself checked
against Python big integers), and the number of builds is counted from the compile cache's files
and the compiler processes started. A family compiled once serves every level and chain of one
``n``; a long build says so on stderr and a cached one does not; a corrupt or partial entry of a
batch is built again, never loaded.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from ren import Poly, RingSpec
from ren.backends import cpu
from ren.codegen import batch, compiler
from ren.ring import ntt_primes

pytestmark = pytest.mark.cc

N = 64
CHAIN = ntt_primes(N, 50, 4)


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """An empty compile cache, nothing rendered or bound in this process, compiler runs counted."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("REN_CACHE_DIR", str(directory))
    monkeypatch.setenv("REN_SCHEDULE_CACHE", "0")  # every realization compiles what it runs
    monkeypatch.setenv("REN_COMPILE_JOBS", "1")  # one compiler process: runs are counted
    for name in ("REN_VALIDATE", "REN_THREADS", "REN_DEBUG", "REN_PROGRESS", "REN_CCACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(compiler, "_memory", {})
    cpu.forget_kernels()
    yield directory
    cpu.forget_kernels()


@pytest.fixture
def runs(monkeypatch) -> list[list[str]]:
    """The compiler command lines started from now on (one batch or one kernel each)."""
    started: list[list[str]] = []
    real_run, real_popen = subprocess.run, subprocess.Popen

    def builds(cmd) -> bool:  # kernels built, not a probe of the flags nor a jit graph runner
        return "-O3" in cmd and any(str(c).endswith(".c") and "probe" not in str(c) for c in cmd)

    def run(cmd, *args, **kwargs):
        if builds(cmd):
            started.append(list(cmd))
        return real_run(cmd, *args, **kwargs)

    def popen(cmd, *args, **kwargs):
        if builds(cmd):
            started.append(list(cmd))
        return real_popen(cmd, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", run)
    monkeypatch.setattr(subprocess, "Popen", popen)
    return started


def entries(directory: Path, prefix: str = "") -> list[Path]:
    return sorted(p for p in directory.glob(f"{prefix}*.so"))


def program(ring: RingSpec, seed: int) -> tuple[Poly, np.ndarray]:
    """``(a * b + a).ntt()`` on the cpu device, and its words on the python device (NumPy)."""
    rng = np.random.default_rng(seed)
    words = [np.stack([rng.integers(0, q, N, dtype=np.uint64) for q in ring.moduli]) for _ in "ab"]
    out = {}
    for device in ("cpu", "python"):
        a, b = (Poly.from_words(w.astype(ring.np_dtype), ring, device=device) for w in words)
        out[device] = (a * b + a).ntt()
    want = out["python"].words()
    assert want.dtype == ring.np_dtype and (want < np.array(ring.moduli)[:, None]).all()
    return out["cpu"], want


def test_one_build_serves_every_level_and_chain_of_one_n(cache, runs):
    top = RingSpec(N, CHAIN)
    lower = top.with_moduli(CHAIN[:2])  # a lower level of the same chain
    other = RingSpec(N, ntt_primes(N, 40, 3))  # another chain, another limb count
    for i, ring in enumerate((top, lower, other)):
        value, want = program(ring, i)
        np.testing.assert_array_equal(value.words(), want)
    # the NTT and the elementwise body: one source each, built once for all three rings
    assert len(entries(cache, "ren_ntt_n64_u64-")) == 1
    assert len(entries(cache, "ren_ew_n64_u64_")) == 1
    assert len(runs) == 1  # the first realization built both, in one compiler run
    assert entries(cache, "ren_ntt_")[0].samefile(entries(cache, "ren_ew_")[0])


def test_a_batch_is_one_library_and_its_kernels_still_separate_entries(cache, runs):
    value, want = program(RingSpec(N, CHAIN), 1)
    np.testing.assert_array_equal(value.words(), want)
    libs = entries(cache, "ren_ntt_") + entries(cache, "ren_ew_")
    assert len(libs) == 2 and len(runs) == 1  # the NTT and the elementwise kernel
    assert libs[0].samefile(libs[1])  # hard links to one library
    assert all(lib.with_suffix(".sum").is_file() for lib in libs)


def test_a_long_build_says_so_and_a_cached_one_does_not(cache, runs, monkeypatch, capfd):
    monkeypatch.setattr(batch, "SLOW_SECONDS", 0.0)  # every batch counts as long
    value, want = program(RingSpec(N, CHAIN), 2)
    np.testing.assert_array_equal(value.words(), want)
    err = capfd.readouterr().err
    assert "ren: compiling 2 kernels for the cpu device" in err and str(cache) in err
    assert "2 kernels compiled in" in err
    compiler._memory.clear()
    cpu.forget_kernels()  # a new process: the disk cache has both
    value, want = program(RingSpec(N, CHAIN), 3)
    np.testing.assert_array_equal(value.words(), want)
    assert "compiling" not in capfd.readouterr().err and len(runs) == 1
    monkeypatch.setenv("REN_PROGRESS", "0")
    value, _ = program(RingSpec(N, ntt_primes(N, 40, 2)), 4)
    value.realize()
    assert capfd.readouterr().err == ""


def test_ren_debug_prints_each_build_with_its_time(cache, runs, monkeypatch, capfd):
    monkeypatch.setenv("REN_DEBUG", "1")
    program(RingSpec(N, CHAIN), 5)[0].realize()
    err = capfd.readouterr().err
    assert "ren: built 2 kernels in" in err and "ren_ntt_n64_u64" in err


@pytest.mark.parametrize("damage", ["truncated", "flipped", "no sum"])
def test_a_damaged_entry_of_a_batch_is_built_again_not_loaded(cache, runs, damage):
    value, want = program(RingSpec(N, CHAIN), 6)
    np.testing.assert_array_equal(value.words(), want)
    (ntt,) = entries(cache, "ren_ntt_")
    data = ntt.read_bytes()
    # a damaged file put in the entry's place (never written in place: this process has the
    # batch's library mapped, as a process using the cache would)
    ntt.unlink()
    if damage == "truncated":
        ntt.write_bytes(data[: len(data) // 2])
    elif damage == "flipped":
        ntt.write_bytes(data[:-100] + bytes(b ^ 0xFF for b in data[-100:]))
    else:
        ntt.write_bytes(data)
        ntt.with_suffix(".sum").unlink()
    compiler._memory.clear()
    cpu.forget_kernels()  # a new process
    value, want = program(RingSpec(N, CHAIN), 7)
    np.testing.assert_array_equal(value.words(), want)
    assert len(runs) >= 2  # built again
    assert compiler.cached(*_ntt_source(), name=ntt.name.split("-")[0])
    assert ntt.read_bytes() != data[: len(data) // 2] and ntt.with_suffix(".sum").is_file()


def _ntt_source() -> tuple[str, tuple[str, ...]]:
    kernel = cpu.TEMPLATES.ntt(RingSpec(N, CHAIN))[0]
    return kernel.source, cpu.flags()


def test_a_source_the_compiler_rejects_is_built_alone_and_named(cache, runs):
    good = cpu.TEMPLATES.ntt(RingSpec(N, CHAIN))[0]
    bad = ("ren_broken", "/* nothing */\nint ren_broken(void) { return }\n")
    with pytest.raises(compiler.CompileError, match="ren_broken"):
        batch.build_all([(good.name, good.source), bad], cpu.flags(), jobs=1)
    assert len(runs) >= 3  # the batch, then each alone
    assert compiler.cached(good.source, cpu.flags(), name=good.name)  # the good one is kept


def test_free_cores_build_at_once_and_each_kernel_once(cache, runs, monkeypatch):
    monkeypatch.setenv("REN_COMPILE_JOBS", "2")
    value, want = program(RingSpec(N, CHAIN), 8)
    np.testing.assert_array_equal(value.words(), want)
    assert len(runs) == 2  # the NTT and the elementwise kernel, each in a process of its own
    assert sorted(sum(c.endswith(".c") for c in cmd) for cmd in runs) == [1, 1]


def test_estimate_and_balance():
    unit = "head\n" + batch.UNIT_MARK + "void f(void) {}\n"
    assert batch.estimate([unit] * 10, 2) < batch.estimate(["int x;"] * 10, 2)
    groups = batch._balanced([(f"k{i}", f"int k{i};") for i in range(5)], 2)
    assert sorted(len(g) for g in groups) == [2, 3]
