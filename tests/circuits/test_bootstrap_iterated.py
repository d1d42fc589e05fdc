"""Iterated bootstrapping (``ckks.bootstrap(ct, iterations=2)``): the error bootstrapped away.

Oracles: the plaintext values in NumPy (every precision is ``ckks.precision_bits`` against them);
the last iteration's input, ``(x - y) 2^p``, from the decryptions of the input and of one
bootstrap; each kernel's own region path and the report's precision against the same NumPy values.
The mechanism runs on a toy chain (``n = 16``, scale ``2^53``: the layout of boot-n12-precise),
recorded once for the report; the figure at ``n = 4096`` runs once, on the ``cpu`` device.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from ren.circuits.ckks import iterate
from ren.schemes import ckks
from ren.viz.precision import measure_precision
from ren.viz.report.regions import region_tree
from ren.viz.trace import record

#: The precise presets' layout at n = 16: q_0 61 bits, two user levels at 2^53, one transform each
#: way (8 slots), EvalMod of degree 23 with three double angles (K = 6 covers the dense secret).
TOY = ckks.Params(
    n=16,
    q_bits=(61, 53, 53, 61) + (60,) * 11,
    p_bits=(61,) * 8,
    dnum=2,
    scale_bits=53,
    insecure=True,
)
CONFIG = ckks.BootstrapConfig(level_budget=(1, 1), K=6, degree=23, double_angle=3, arcsine=True)


@pytest.fixture(scope="module")
def toy():
    """One input, its single and its two-iteration bootstrap (with the last stages), decrypted;
    the two iterations recorded (``ren.viz.record``) for the report."""
    x = np.tile(np.random.default_rng(7).uniform(-1, 1, 2), TOY.slots // 2)
    ctx = ckks.Context(TOY, seed=7)
    with ctx:
        ctx.bootstrap_keys(CONFIG, progress=False)
        stages: dict[str, ckks.Ciphertext] = {}
        with record() as trace:  # the input too: its plaintext shadow is what the report reads
            ct = ckks.encrypt(x, level=0)
            two = ckks.bootstrap(ct, CONFIG, iterations=2, stages=stages).realize()
        one = ckks.bootstrap(ct, CONFIG).realize()
        got = {k: ckks.decrypt(v) for k, v in (("ct", ct), ("one", one), ("two", two))}
        got["stage"] = ckks.decrypt(stages["slot_to_coeff"])
    return SimpleNamespace(ctx=ctx, x=x, ct=ct, one=one, two=two, got=got, trace=trace)


def test_two_iterations_gain_the_precision_bits_over_one(toy):
    x, got = toy.x, toy.got
    assert iterate.default_precision(TOY) == 23 == math.floor(25.13 - 2)
    bits_one, bits_two = (ckks.precision_bits(got[k].real, x) for k in ("one", "two"))
    assert 26 < bits_one < 36  # one bootstrap: its error fixed next to q_0
    assert bits_two > bits_one + 12 and bits_two > 42  # twice the bits, nearly
    left = CONFIG.levels_left(TOY)
    assert (toy.one.level, toy.two.level) == (left, left - 1) == (2, 1)
    assert toy.two.scale == toy.ct.scale and toy.two.real


def test_the_last_iteration_bootstraps_the_first_ones_error_times_2_to_the_p(toy):
    """``stages`` holds the last bootstrap's: its result is ``(x - y) 2^p``, from NumPy."""
    got = toy.got
    error = (got["ct"] - got["one"]) * 2.0 ** iterate.default_precision(TOY)
    assert 2.0**-14 < np.max(np.abs(error)) < 2.0**-3  # 2^p times the first error: in range
    assert ckks.precision_bits(got["stage"].real, error.real) > 25


def test_the_method_and_an_explicit_precision(toy):
    with toy.ctx:
        again = toy.ct.bootstrap(CONFIG, iterations=2)
        assert np.array_equal(ckks.decrypt(again), toy.got["two"])  # the same graph, the same words
        coarse = ckks.decrypt(ckks.bootstrap(toy.ct, CONFIG, iterations=2, precision=4))
    bits = [ckks.precision_bits(v.real, toy.x) for v in (toy.got["one"], coarse, toy.got["two"])]
    assert bits[0] + 2 < bits[1] < bits[2] - 8  # 2^4: four bits or so; 2^23: the whole gain


def test_arguments_are_checked_before_anything_is_built(toy):
    ct = toy.ct
    with toy.ctx:
        for kwargs, error, match in [
            ({"iterations": 2.0}, TypeError, "iterations must be an int, got float"),
            ({"iterations": True}, TypeError, "iterations must be an int, got bool"),
            ({"iterations": 0}, ValueError, "iterations must be at least 1, got 0"),
            ({"iterations": 2, "precision": "9"}, TypeError, "precision must be None or an int"),
            ({"iterations": 2, "precision": 0}, ValueError, "precision must be from 1 to 30"),
            ({"iterations": 2, "precision": 31}, ValueError, "precision must be from 1 to 30"),
            ({"precision": 10}, ValueError, r"precision=10 .* pass it with iterations >= 2"),
            ({"iterations": 4, "precision": 30}, ValueError, r"2\^90, which is not below q_0"),
        ]:
            with pytest.raises(error, match=match):
                ckks.bootstrap(ct, CONFIG, **kwargs)
        coarse = ckks.encrypt([0.5], level=0, scale=2.0**40)  # 40 bits: less than 23 + 23
        with pytest.raises(ValueError, match=r"input scale of at least 2\^46, got 2\^40\.0"):
            ckks.bootstrap(coarse, CONFIG, iterations=2)
    # a chain with no level under the bootstrap's output: no room for the product by 2^-p
    flat = ckks.Params(n=16, q_bits=(61, 61) + (60,) * 11, p_bits=(61,) * 8, dnum=2, insecure=True)
    assert CONFIG.levels_left(flat) == 0
    with ckks.Context(flat, seed=1), pytest.raises(ValueError, match=r"needs a level .* leaves 0"):
        ckks.bootstrap(ckks.encrypt([0.5], level=0, scale=2.0**53), CONFIG, iterations=2)


def test_each_iteration_is_a_region_measured_against_the_input(toy):
    """The kernels' region paths (what the report's boxes and the debugger's ``regions`` group
    by) name both iterations and their stages; the report measures each iteration's output
    against the input's values, as ``ckks.precision_bits`` does against NumPy's."""
    rec = max(toy.trace.realizations, key=lambda r: len(r.kernels))
    paths = [tuple(k.region[:3]) for k in rec.kernels]
    stages = ("mod_raise", "coeff_to_slot", "eval_mod", "slot_to_coeff")
    for i in (1, 2):
        for stage in stages:
            assert ("bootstrap", f"iteration {i}", stage) in paths
    iterations = [p[1] for p in paths if len(p) > 1 and p[1].startswith("iteration")]
    assert list(dict.fromkeys(iterations)) == ["iteration 1", "iteration 2"]  # in that order
    measure_precision(toy.trace, progress=False)
    root = region_tree(rec.kernels, [u.seconds for u in rec.units])
    (boot,) = [b for b in root.children if b.name == "bootstrap"]
    boxes = [b for b in boot.children if b.name.startswith("iteration")]
    assert [b.name for b in boxes] == ["iteration 1", "iteration 2"]
    inner = [c.name for c in boxes[1].children if c.name in stages]
    assert list(dict.fromkeys(inner)) == list(stages)
    for box, key in zip(boxes, ("one", "two"), strict=True):
        bits = ckks.precision_bits(toy.got[key].real, toy.x)
        assert box.notes["bits"] == pytest.approx(bits, abs=0.5), box.name


@pytest.mark.cc
@pytest.mark.slow
def test_boot_n12_precise_keeps_40_bits_with_two_iterations():
    """The preset made for it, on the ``cpu`` device: 2048 real slots uniform in [-1, 1]."""
    params = ckks.Params.preset("boot-n12-precise")
    assert (params.n, params.scale_bits, params.q_bits[0], params.insecure) == (4096, 53, 61, True)
    x = np.random.default_rng(7).uniform(-1, 1, params.slots)
    with ckks.Context(params, seed=1, device="cpu") as ctx:
        ctx.bootstrap_keys(progress=False)
        out = ckks.bootstrap(ckks.encrypt(x, level=0), iterations=2)
        assert ckks.precision_bits(ckks.decrypt(out).real, x) >= 40
    assert out.level == ckks.BootstrapConfig.for_params(params).levels_left(params) - 1 == 2
