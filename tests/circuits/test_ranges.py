"""The ranges bootstrapping and the worked functions keep (``ren.schemes.ckks.ranges``).

Oracles: NumPy's own Chebyshev fit of EvalMod's cosine on a dense grid (the error bound must hold
for it), plaintext NumPy on the slots (an input outside its range comes back wrong against it,
which is why it must be reported, and one inside comes back to the documented precision), and
the bounds' formulas worked by hand. Bootstrapping runs on ``boot-toy`` (one context, its keys
made once for the module).
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from numpy.polynomial import chebyshev as npcheb

from ren.circuits.ckks import functions
from ren.circuits.ckks.evalmod import eval_mod
from ren.schemes import ckks
from ren.schemes.ckks import ranges
from ren.schemes.ckks.bootconfig import PRESETS, BootstrapConfig
from ren.viz.debug import Stepper
from ren.viz.precision import measure_precision
from ren.viz.report.regions import region_tree
from ren.viz.trace import record

TOY = ckks.Params.preset("boot-toy")
CONFIG = BootstrapConfig.for_params(TOY)
#: The precision a toy bootstrap keeps (about 32 bits measured; tests/circuits/test_bootstrap.py).
FLOOR = 25
DEEP = ckks.Params(n=64, q_bits=(60,) + (40,) * 15, p_bits=(60,), scale_bits=40, insecure=True)


@pytest.fixture(scope="module")
def toy():
    """A boot-toy context with its bootstrap keys, made once."""
    ctx = ckks.Context(TOY, seed=21)
    ctx.bootstrap_keys(progress=False)
    return ctx


# ---------------------------------------------------------------------------------------------
# the bounds, derived


def test_the_bounds_by_hand():
    # arcsin(sin u) ~ s + s^3 / 6 errs by 3 u^5 / 40, u = 2 pi x: 2^-33 in x at x = 2^-8
    assert ranges.X_ARCSINE == 2.0**-8
    assert math.log2(3 * (2 * math.pi) ** 5 * 2.0**-40 / 40 / (2 * math.pi)) == pytest.approx(
        -33.13, abs=0.01
    )
    assert math.log2(ranges.RELATIVE) == pytest.approx(-25.13, abs=0.01)
    # the plain sine keeps the same relative error, (2 pi x)^2 / 6, up to 2^-13.9
    assert (2 * math.pi * ranges.X_SINE) ** 2 / 6 == pytest.approx(ranges.RELATIVE)
    # K covers 6 standard deviations of a sum of h + 1 uniforms on [-1/2, 1/2]
    for h in (1, 8, 32, 2 * 64 / 3, 2 * 65536 / 3):
        k = ranges.k_needed(h)
        assert k - 1 < 6 * math.sqrt((h + 1) / 12) <= k
    assert ranges.k_needed(32) == 10 and ranges.k_needed(2 * 64 / 3) == 12 == CONFIG.K
    # slots of size 1 reach x_bound at the design scale: the presets' scale (q_0 just below 2^48)
    for name, (kwargs, config) in PRESETS.items():
        params = ckks.Params(**kwargs)
        design = config.design_scale(params)
        assert design == params.q_moduli[0] * 2.0**-8 == pytest.approx(params.scale, rel=1e-8)
        assert config.input_bound(params, params.scale / 4) == pytest.approx(4, rel=1e-8), name


@pytest.mark.parametrize("K, degree, r", [(12, 39, 2), (16, 47, 2), (12, 23, 3), (4, 15, 2)])
def test_the_series_error_bounds_numpys_fit(K, degree, r):
    """The bound holds for NumPy's interpolant of the same cosine, taken through r double angles,
    and is close (within 2^5): degrees whose error is far above double precision's."""
    y = np.linspace(-1, 1, 40001)

    def cosine(v: np.ndarray) -> np.ndarray:
        return np.cos(2 * np.pi * ((K + 1) * v - 0.25) / 2**r)

    c = npcheb.Chebyshev.interpolate(cosine, degree)(y)
    exact = cosine(y)
    for _ in range(r):  # the double angles, on the fit and on the exact cosine
        c, exact = 2 * c * c - 1, 2 * exact * exact - 1
    error, bound = float(np.max(np.abs(c - exact))), ranges.series_error(K, degree, r)
    assert 2.0**-45 < error <= bound < 2**5 * error
    least = ranges.min_degree(K, r, arcsine=True)
    assert ranges.series_error(K, least, r) <= ranges.eval_mod_tolerance(True)
    assert ranges.series_error(K, least - 1, r) > ranges.eval_mod_tolerance(True)


# ---------------------------------------------------------------------------------------------
# configurations refused up front, naming the field


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"degree": 3}, ValueError, r"degree=3 is too small for K=12 .* use degree >= 32"),
        ({"degree": 20, "arcsine": True, "double_angle": 2}, ValueError, r"degree=20 is too small"),
        ({"K": 1}, ValueError, r"K must be at least 3, got 1 \(K must cover I for a secret"),
        ({"K": 2, "sparse_secret": 1}, ValueError, r"K must be at least 3, got 2"),
        ({"degree": 10**6}, ValueError, r"degree must be at most 1023"),
        ({"K": 2**30}, ValueError, r"K must be at most 2\^23"),
        (
            {"K": 3, "sparse_secret": 32},
            ValueError,
            r"K=3 is too small for sparse_secret=32.*K >= 10",
        ),
        ({"sparse_secret": 2**60}, ValueError, r"sparse_secret must be None or from 1 to"),
        ({"double_angle": 15, "arcsine": True}, ValueError, r"double_angle must be at most 14"),
        ({"double_angle": 12}, ValueError, r"double_angle must be at most 11 with arcsine=False"),
        ({"bsgs_ratio": math.inf}, ValueError, r"bsgs_ratio must be a finite number above 0"),
        ({"bsgs_ratio": "2"}, TypeError, r"bsgs_ratio must be a number"),
        ({"arcsine": 1}, TypeError, r"arcsine must be True or False"),
    ],
)
def test_configurations_out_of_range_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        BootstrapConfig(**kwargs)


def test_K_too_small_for_the_secret_is_refused_against_the_chain():
    with pytest.raises(ValueError, match=r"K=4 is too small for a uniform ternary secret of n=64"):
        BootstrapConfig(level_budget=(2, 2), K=4, degree=47, double_angle=2, arcsine=True).check(
            TOY
        )
    with pytest.raises(ValueError, match=r"K=11 is too small .* use K >= 12"):
        BootstrapConfig(level_budget=(2, 2), K=11, degree=47, double_angle=2, arcsine=True).check(
            TOY
        )
    # encapsulation bounds I by the sparse secret's weight instead
    sparse = BootstrapConfig((2, 2), K=6, degree=47, double_angle=2, arcsine=True, sparse_secret=8)
    assert sparse.check(TOY) is sparse


def test_eval_mod_refuses_a_degree_too_small_for_K():
    with ckks.Context(DEEP, seed=1):
        ct = ckks.encrypt(np.zeros(DEEP.slots))
        with pytest.raises(ValueError, match=r"degree=7 is too small for K=4 .* use degree >= \d+"):
            eval_mod(ct, 4, 7, 2)


# ---------------------------------------------------------------------------------------------
# what metadata tells: the input's scale


@pytest.mark.parametrize(
    "bits, match",
    [(20, r"scale 2\^20.0 is 2\^20.0 below the design scale 2\^40.0"), (46, r"\|v\| <= 0.0156")],
)
def test_a_scale_far_from_the_design_scale_warns(toy, bits, match):
    ct = toy.encrypt(np.zeros(TOY.slots), level=0, scale=2.0**bits)
    with pytest.warns(ckks.RangeWarning, match=match):
        ckks.bootstrap(ct)  # lazy: the warning comes from the metadata, nothing is computed
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # at the design scale: not a word
        ckks.bootstrap(toy.encrypt(np.zeros(TOY.slots), level=0))


# ---------------------------------------------------------------------------------------------
# values: checked where a tool decrypts them


def _recorded_bootstrap(ctx: ckks.Context, z: np.ndarray):
    with ctx, record() as trace:
        out = ckks.bootstrap(ckks.encrypt(z, level=0)).realize()
    return trace, ctx.decrypt(out)


def _notes(trace) -> dict[tuple[str, ...], dict]:
    rec = max(trace.realizations, key=lambda r: len(r.kernels))
    root = region_tree(rec.kernels, [u.seconds for u in rec.units], rec.input)
    notes: dict[tuple[str, ...], dict] = {}
    for b in root.walk():  # a path's instances together (a loose box holds no notes)
        notes.setdefault(b.path, {}).update(b.notes)
    return notes


def test_values_out_of_range_are_reported_in_a_recording(toy):
    z = np.random.default_rng(3).uniform(-100, 100, TOY.slots)
    trace, got = _recorded_bootstrap(toy, z)
    assert ckks.precision_bits(got.real, z) < 10  # wrong against NumPy, not only imprecise
    with pytest.warns(ckks.RangeWarning, match=r"bootstrap: the message's largest coefficient"):
        measure_precision(trace, progress=False)
    notes = _notes(trace)
    warning = notes[("bootstrap", "mod_raise")]["warning"]
    vmax = float(re.search(r"slots up to \|v\| = ([\d.]+)", warning)[1])
    assert vmax == pytest.approx(np.max(np.abs(z)), rel=1e-3)  # the slots it names are z's
    # its stages against their shadows (which share EvalMod's error) still look precise; the
    # result is measured against the input's values, and shows it wrong, as NumPy does
    assert notes[("bootstrap", "coeff_to_slot")]["bits"] > 25
    assert notes[("bootstrap",)]["bits"] < 10


def test_values_in_range_bootstrap_to_the_documented_precision(toy):
    z = np.random.default_rng(4).uniform(-1, 1, TOY.slots)
    with toy:
        ct = ckks.encrypt(z, level=0).realize()  # made before the recording: no shadow of its own
        with record() as trace:
            out = ckks.bootstrap(ct).realize()
        got = toy.decrypt(out)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ckks.RangeWarning)
        measure_precision(trace, progress=False)
    notes = _notes(trace)
    assert not any("warning" in n for n in notes.values())
    assert ckks.precision_bits(got.real, z) > FLOOR
    # ModRaise's output is shadowed by its exact decryption: the stages after it are measured
    assert notes[("bootstrap", "slot_to_coeff")]["bits"] > FLOOR


def test_the_debugger_shows_a_bootstrap_input_out_of_range(toy):
    z = np.random.default_rng(5).uniform(-20, 20, TOY.slots)
    with toy:
        ct = ckks.encrypt(z, level=0).realize()
        stages: dict = {}
        out = ckks.bootstrap(ct, stages=stages)
    st = Stepper(out)
    st.watch(stages["mod_raise"], toy, label="mod_raise")
    st.watch(out, toy, z, label="result")
    st.finish()
    screen = st.slots()
    assert "out of range: bootstrap: the message's largest coefficient" in screen
    assert re.search(r"precision: [\d.]+ bits \(absolute, vs expected; over 32 slots\)", screen)


# ---------------------------------------------------------------------------------------------
# the worked functions


@pytest.mark.parametrize(
    "interval, newton, error, match",
    [
        ((-1, 16), 1, ValueError, r"interval \(-1, 16\) holds 0, where 1/x has a pole"),
        ((0.0, 16), 1, ValueError, r"interval \(0.0, 16\) holds 0"),
        ((16, 1), 1, ValueError, r"interval must be two finite numbers a < b"),
        ("ab", 1, TypeError, r"interval must be a pair"),
        ((1, math.inf), 0, ValueError, r"interval must be two finite numbers"),
    ],
)
def test_inverse_checks_its_interval_up_front(interval, newton, error, match):
    with ckks.Context(DEEP, seed=2):
        ct = ckks.encrypt(np.ones(DEEP.slots))
        with pytest.raises(error, match=match):
            functions.inverse(ct, newton=newton, interval=interval)


def test_inverse_on_an_interval_of_ones_own():
    x = np.linspace(-4, -0.5, DEEP.slots)  # one side of 0: fine
    # the fit's relative error is 1 / T_32((b + a) / (b - a)), below 1: Newton converges
    fit = npcheb.Chebyshev.interpolate(lambda v: 1 / v, 31, domain=[-4, -0.5])
    grid = np.linspace(-4, -0.5, 100001)
    bits = functions.inverse_bits(31, 0, (-4, -0.5))
    assert -np.log2(np.max(np.abs(1 - grid * fit(grid)))) == pytest.approx(bits, abs=0.01)
    assert functions.inverse_bits(31, 1, (-4, -0.5)) == 2 * bits
    with ckks.Context(DEEP, seed=2):
        out = functions.inverse(ckks.encrypt(x), degree=31, newton=1, interval=(-4, -0.5))
        assert ckks.precision_bits(ckks.decrypt(out).real * x, 1.0) > 30  # relative, as stated


def test_function_inputs_out_of_their_interval_are_reported_in_a_recording():
    x = np.linspace(0.5, 100, DEEP.slots)  # [1, 16] is inverse's interval
    with ckks.Context(DEEP, seed=3) as ctx:
        with record() as trace:
            got = ctx.decrypt(functions.inverse(ckks.encrypt(x)).realize())
        assert np.max(np.abs(got.real - 1 / x)) > 1  # far off: a polynomial outside its fit
        inside = np.linspace(1, 16, DEEP.slots)
        with record() as fine:
            ok = ctx.decrypt(functions.inverse(ckks.encrypt(inside)).realize())
    with pytest.warns(ckks.RangeWarning, match=r"inverse: \d+ of 32 slots outside \[1, 16\]"):
        measure_precision(trace, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ckks.RangeWarning)
        measure_precision(fine, progress=False)
    assert ckks.precision_bits(ok.real, 1 / inside) > 25
