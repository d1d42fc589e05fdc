"""``python -m ren.codegen warm``: the cache filled ahead of time, so a later run builds nothing.

Oracle: the compile cache's entries (counted before and after) and the words of the loaded plan,
which equal the jitted function's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ren
from ren import Poly, RingSpec
from ren.ring import ntt_primes

pytestmark = pytest.mark.cc

ROOT = Path(__file__).resolve().parents[2]


def warm(cache: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, REN_CACHE_DIR=str(cache))
    cmd = [sys.executable, "-m", "ren.codegen", "warm", *args]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def step(a: Poly, b: Poly) -> Poly:
    return (a * b + a).rotate(3) * b


CHECK = """
import sys
import numpy as np
import ren
from ren import Poly, RingSpec
from ren.codegen import batch, compiler

builds = []  # compiler runs: a batch's, or one kernel's
for module, name in ((batch, "_start"), (compiler, "_build")):
    real = getattr(module, name)
    setattr(module, name, lambda *a, real=real, **k: builds.append(a) or real(*a, **k))
plan, inputs, want, moduli = sys.argv[1:5]
ring = RingSpec(64, tuple(int(q) for q in moduli.split(",")))
words = np.load(inputs)
a, b = (Poly.from_words(words[k], ring, domain=ren.Domain.NTT, device="cpu") for k in "ab")
out = ren.load(plan)(a, b).words()
assert (out == np.load(want)).all(), "the loaded plan's words differ"
print("builds", len(builds), [str(b[3] if len(b) > 3 else b[1])[:40] for b in builds])
"""


def test_a_warmed_plan_loads_without_building(tmp_path):
    ring = RingSpec(64, ntt_primes(64, 50, 3))
    a, b = (Poly.uniform(ring, rng=s, device="cpu").ntt().realize() for s in (1, 2))
    f = ren.jit(step)
    want = f(a, b).words()
    plan = f.save(tmp_path / "step.renplan")
    cache = tmp_path / "cache"
    done = warm(cache, "--plan", str(plan))
    assert done.returncode == 0, done.stderr
    built = sorted(p.name for p in cache.glob("*.so"))
    assert any(n.startswith("ren_ew_") for n in built) and "kernels compiled" in done.stdout
    # a new process with the warmed cache: ren.load builds nothing, and the words are the same
    np.savez(tmp_path / "in.npz", a=a.words(), b=b.words())
    np.save(tmp_path / "want.npy", want)
    script = tmp_path / "check.py"
    script.write_text(CHECK)
    moduli = ",".join(map(str, ring.moduli))
    args = [str(plan), str(tmp_path / "in.npz"), str(tmp_path / "want.npy"), moduli]
    env = dict(os.environ, REN_CACHE_DIR=str(cache))
    proc = subprocess.run(
        [sys.executable, str(script), *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "builds 0" in proc.stdout, proc.stdout
    assert sorted(p.name for p in cache.glob("*.so")) == built  # nothing new in the cache


def test_bad_arguments_say_what_is_wrong(tmp_path):
    bad = tmp_path / "bad.renplan"
    bad.write_text("not a plan")
    done = warm(tmp_path / "cache", "--plan", str(bad))
    assert done.returncode == 1 and "is not a Ren plan file" in done.stderr
    done = warm(tmp_path / "cache", "--plan", str(tmp_path / "missing.renplan"))
    assert done.returncode == 1 and "No such file" in done.stderr
    done = warm(tmp_path / "cache", "--preset", "boot-n99")
    assert done.returncode == 2 and "boot-n12" in done.stderr  # the presets it knows
    done = warm(tmp_path / "cache")
    assert done.returncode == 2 and "--preset" in done.stderr
