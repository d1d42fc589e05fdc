"""The debugger on a CKKS bootstrap: region stepping, and watched values computed apart.

Oracles, each independent of the debugger:

* Regions: the realization's own kernels, grouped by ``ScheduledKernel.region`` here.
* Precision: the slots shown against ``ckks.decrypt`` of the same stage realized on its own after
  the walk, and against a NumPy shadow (``2 pi`` times the message's coefficients, from
  ``ckks.embed_inverse``, in the bit-reversed order of ``ren.circuits.ckks.dft``).
* The schedule: the kernels (names, regions, rendered sources) of a plain ``ckks.bootstrap``
  realized without the debugger, and the bytes of its result.
* The prompt: the ``Stepper``'s own screens for the same commands.
* The example: its result against NumPy (its summary), and its stages' precision lines.
"""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import ren
from ren.poly import Poly
from ren.ring import RingSpec, ntt_primes
from ren.schemes import ckks
from ren.viz.debug import Stepper, debug
from ren.viz.examples import run_example
from ren.viz.report import text_report
from ren.viz.trace import kernel_source, record
from tests.viz.boot_input import boot_toy_input

dbg = sys.modules["ren.viz.debug.watching"]
STAGES = ["mod_raise", "coeff_to_slot", "eval_mod", "slot_to_coeff"]


@pytest.fixture(autouse=True)
def plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plan and run as ``realize`` does by default, whatever the shell has set; no stale watches."""
    for var in ("REN_NO_PLAN", "REN_POISON", "REN_DEBUG", "REN_DEVICE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(dbg, "_WATCHED", [])


def bit_reversed(m: int) -> list[int]:
    bits = m.bit_length() - 1
    return [int(f"{j:0{bits}b}"[::-1], 2) for j in range(m)]


@pytest.fixture(scope="module")
def boot() -> SimpleNamespace:
    """One boot-toy input; its bootstrap realized plainly, and again walked by ``next_region``."""
    params, ctx, z, ct = boot_toy_input()
    out_input = ct
    with record() as trace:
        plain = ckks.bootstrap(ct).realize()
    half = params.slots
    m = ckks.embed_inverse(z, params.n)
    shadow = (2 * np.pi * (m[:half] + 1j * m[half:]))[bit_reversed(half)]
    stages: dict[str, ckks.Ciphertext] = {}
    out = ckks.bootstrap(ct, stages=stages)
    stepper = Stepper(out)
    for name in STAGES:
        expected = {"eval_mod": shadow, "slot_to_coeff": z}.get(name)
        stepper.watch(stages[name], ctx, expected, label=name)
    kernels = list(stepper.realization.kernels)
    first = stepper.regions()
    waiting = stepper.slots()
    walk = []
    while not stepper.done:
        walk.append(stepper.next_region())
    return SimpleNamespace(
        ctx=ctx,
        z=z,
        shadow=shadow,
        plain=plain,
        plain_kernels=trace.realizations[-1].kernels,
        stages=stages,
        out=out,
        stepper=stepper,
        kernels=kernels,
        first=first,
        waiting=waiting,
        walk=walk,
        out_input=out_input,
    )


def runs(kernels: list, depth: int = 2) -> list[tuple[str, int, int]]:
    """``(region, first, last)`` of each run of consecutive kernels of one region."""
    out: list[tuple[str, int, int]] = []
    for i, k in enumerate(kernels):
        name = "/".join(k.region[:depth]) or "(no region)"
        if out and out[-1][0] == name:
            out[-1] = (name, out[-1][1], i)
        else:
            out.append((name, i, i))
    return out


def test_regions_lists_the_stages_in_order(boot):
    rows = re.findall(r"^(?:->|  ) (\S+)\s+(\d+)\s+(\w+)\s+(.*)$", boot.first, re.M)
    names = [r[0] for r in rows]
    assert [n for n in names if n.split("/")[-1] in STAGES] == [f"bootstrap/{s}" for s in STAGES]
    expected: dict[str, list[str]] = {}
    for name, first, last in runs(boot.kernels):
        expected.setdefault(name, []).append(str(first) if first == last else f"{first}-{last}")
    assert names == list(expected)
    for name, units, ran, spans in rows:
        assert spans.split(", ") == expected[name]
        assert int(units) == sum(k.region[:2] == tuple(name.split("/")) for k in boot.kernels)
        assert ran == "no"
    assert boot.first.splitlines()[2].startswith("-> bootstrap/mod_raise")
    finished = boot.stepper.regions()
    assert not re.search(r"^->", finished, re.M)
    assert all(r[2] == "all" for r in re.findall(r"^   (\S+)\s+(\d+)\s+(\w+)", finished, re.M))


def test_next_region_walks_the_runs_of_regions_one_by_one(boot):
    ran = [re.match(r"ran (\S+): kernels? (\d+)(?:-(\d+))?, (\d+) units?", s) for s in boot.walk]
    assert all(ran)
    walked = [(m[1], int(m[2]), int(m[3] or m[2])) for m in ran]
    assert walked == runs(boot.kernels)
    assert sum(int(m[4]) for m in ran) == len(boot.kernels)
    firsts = list(dict.fromkeys(name for name, _, _ in walked if name != "bootstrap"))
    assert firsts == [f"bootstrap/{s}" for s in STAGES]
    assert "done" in boot.walk[-1].splitlines()[1]


def test_finish_runs_a_stage_to_its_last_kernel(boot):
    """``finish`` (``finish_region``): each stop leaves no kernel of the stage it finished."""
    with boot.ctx:
        stepper = Stepper(ckks.bootstrap(boot.out_input))
    kernels = list(stepper.realization.kernels)
    finished = []
    while not stepper.done:
        path = tuple(kernels[stepper.ran].region[:2])
        screen = stepper.finish_region()
        assert screen.startswith(f"ran {'/'.join(path)}:")
        assert all(tuple(k.region[:2]) != path for k in kernels[stepper.ran :])  # none left
        finished.append("/".join(path))
    assert [f for f in finished if f.split("/")[-1] in STAGES] == [
        f"bootstrap/{s}" for s in dict.fromkeys(STAGES)
    ]  # a stage is finished once: its kernels interleave with others', but all run
    stepper.finish()


def test_each_stage_is_shown_once_the_kernels_working_toward_it_ran(boot):
    # before the walk: each fused-away stage says after which kernel it is computed apart
    due = {}
    for name in STAGES[:3]:
        block = boot.waiting.split(f"{name}: ")[1].split("\n", 2)[1]
        m = re.search(
            r"fused away in this realization: computed apart once kernel (\d+) ran", block
        )
        assert m, block
        due[name] = int(m[1])
    assert due["mod_raise"] < due["coeff_to_slot"] < due["eval_mod"] < len(boot.kernels) - 1
    assert "slot_to_coeff: " in boot.waiting and "not written yet: kernel" in boot.waiting
    # each appears in the screen of the stop that ran that kernel, computed apart
    for name in STAGES:
        (screen,) = [s for s in boot.walk if re.search(rf"^{name}: level", s, re.M)]
        m = re.match(r"ran \S+: kernels? (\d+)(?:-(\d+))?", screen)
        assert int(m[1]) <= due.get(name, len(boot.kernels) - 1) <= int(m[2] or m[1])
        head = re.search(rf"^{name}: .*$", screen, re.M)[0]
        assert head.endswith("(computed apart: fused away in this realization)") == (
            name != "slot_to_coeff"
        )


def test_eval_mod_precision_against_numpy_and_against_its_own_realization(boot):
    (screen,) = [s for s in boot.walk if re.search(r"^eval_mod: level", s, re.M)]
    block = screen.split("eval_mod: ")[1]
    bits = float(re.search(r"precision: ([\d.]+) bits", block)[1])
    shown = np.array([complex(s) for s in re.search(r"slots\[:4\]\s+(.*)", block)[1].split()])
    alone = ckks.decrypt(boot.stages["eval_mod"].realize())  # the stage realized on its own
    assert bits == pytest.approx(ckks.precision_bits(alone, boot.shadow), abs=0.01)
    assert bits > 25
    np.testing.assert_allclose(shown, alone[:4], rtol=0, atol=1e-9)


def test_the_schedule_and_the_result_are_the_plain_ones(boot):
    stepped = boot.stepper.realization.kernels
    assert stepped == boot.kernels  # the walk and the values computed apart changed no kernel
    assert [k.info.name for k in stepped] == [k.info.name for k in boot.plain_kernels]
    assert [k.region for k in stepped] == [k.region for k in boot.plain_kernels]
    assert [kernel_source(k) for k in stepped] == [kernel_source(k) for k in boot.plain_kernels]
    assert boot.out.to_bytes() == boot.plain.to_bytes()
    assert all(p.realized for p in boot.out.parts)
    assert ckks.precision_bits(ckks.decrypt(boot.out), boot.z) > 25


def test_values_computed_apart_repoint_nothing():
    params = ckks.Params(n=64, q_bits=(60, 40, 40), p_bits=(60,), insecure=True)
    xs = np.linspace(-1, 1, params.slots)
    with ckks.Context(params, seed=4) as ctx:
        x, y = ckks.encrypt(xs), ckks.encrypt(np.cos(xs))
        inner = x * y
        st = Stepper(inner * inner).watch(inner, ctx, xs * np.cos(xs))
        last = len(st.realization.kernels) - 1
        # no region anywhere: shown once the realization ended
        assert f"computed apart once kernel {last} ran" in st.slots()
        st.run(last)
        assert f"computed apart once kernel {last} ran" in st.slots()
        st.finish()
        screen = st.slots()
        assert "computed apart: fused away in this realization" in screen
        assert float(re.search(r"precision: ([\d.]+) bits", screen)[1]) > 20
        assert not any(p.realized for p in inner.parts)  # nothing was repointed to it
        got = ckks.decrypt(inner)
        np.testing.assert_array_equal(st.decrypt(inner), got)


def regions_program() -> Poly:
    """``rotate((a * a + b).rescale(), 1)``, in regions ``square``, ``shift/rescale``, ``shift``."""
    ring = RingSpec(16, ntt_primes(16, 30, 2))
    a, b = Poly.uniform(ring, rng=1), Poly.uniform(ring, rng=2)
    with ren.region("square"):
        y = a * a
    with ren.region("shift"):
        with ren.region("rescale"):
            z = (y + b).rescale()
        return z.rotate(1)


def test_the_prompt_commands():
    w = regions_program()
    commands = ["regions", "regions 1", "nr", "", "next region 1", "next", "nr x", "regions 0"]
    out = io.StringIO()
    st = debug(w, stdin=io.StringIO("\n".join(commands) + "\n"), stdout=out)
    shown = [s.strip("\n") for s in out.getvalue().split("(ren) ")[1:]]
    mirror = Stepper(regions_program())  # the same program over new buffers: the same screens
    assert shown[0] == mirror.regions()
    assert shown[1] == mirror.regions(1)
    spans = runs(mirror.realization.kernels)
    assert [name for name, _, _ in spans] == ["square", "shift/rescale", "shift"]
    (_, _, a), (_, _, b), (_, _, c) = spans
    assert a == 0 and shown[2].startswith("ran square: kernel 0, 1 unit in ")
    assert shown[3].startswith(f"ran shift/rescale: kernels {a + 1}-{b}, ")  # Enter: 'nr' again
    assert shown[4].startswith(f"ran shift: kernels {b + 1}-{c}, ")  # depth 1
    assert f"{c + 1} of {c + 1} units ran: done" in shown[4]
    assert shown[5] == "error: usage: next region [DEPTH] (nr [DEPTH]); 'step' goes on one step"
    assert shown[6] == "error: the region depth must be a number, got 'x'"
    assert shown[7] == "error: the region depth must be a number from 1 on, got 0"
    assert st.done and w.realized
    mirror.finish()
    assert w.tolist() == regions_program().realize().tolist()


def test_the_bootstrap_example_runs_and_is_ok():
    trace, outcome = run_example("bootstrap")
    assert outcome.ok, outcome.summary
    lines = {
        m[1]: m[2]
        for m in re.finditer(r"^  (\w+)\s+(exact|[\d.]+ bits) after", outcome.summary, re.M)
    }
    assert list(lines) == STAGES
    bits = {k: np.inf if v == "exact" else float(v.split()[0]) for k, v in lines.items()}
    assert bits["mod_raise"] > 40 and bits["coeff_to_slot"] > 40
    assert bits["eval_mod"] > 25 and bits["slot_to_coeff"] > 25
    assert "needs 25: ok" in outcome.summary
    page = (Path(__file__).resolve().parents[2] / "docs" / "viz.md").read_text(encoding="utf-8")
    shown = page.split("$ python -m ren.viz --example bootstrap\n", 1)[1].split("```", 1)[0]
    assert [line for line in shown.splitlines() if line != "..."] == [
        line for line in outcome.summary.splitlines() if line in shown
    ]  # the page shows what the example prints
    stepped = trace.realizations[outcome.focus[0]]
    assert len(stepped.kernels) > 1000  # the bootstrap, as one realization
    assert "bootstrap, stepped region by region" in text_report(
        trace, "t", outcome.summary, labels=outcome.labels, focus=outcome.focus
    )
