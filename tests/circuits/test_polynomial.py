"""Polynomial evaluation (``ren.circuits.ckks.polynomial``), its fits and the worked functions.

Oracles: NumPy's own ``Chebyshev.interpolate`` for the fits and ``chebmul``/``chebadd`` for the
division; ``chebval``/``polyval`` of the plaintext for evaluated series and each function itself
(``np.exp``, ``1 / x``, ``np.sign``, ...) for the worked ones, with a precision in bits; the depth
against ``ceil(log2(degree + 1))``, below which no evaluation of that degree goes, and against
OpenFHE's published table. Rings of degree 64 (32 slots), insecure, where the noise of an
evaluation is about ``2^-33``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.polynomial import chebyshev as npcheb

import ren
from ren.circuits.ckks import functions
from ren.circuits.ckks.chebyshev import chebyshev, divide
from ren.circuits.ckks.polynomial import depth, evaluate_polynomial, plan
from ren.engine.realize import prepare
from ren.schemes import ckks

PARAMS = ckks.Params(n=64, q_bits=(60,) + (40,) * 8, p_bits=(60,), scale_bits=40, insecure=True)
DEEP = ckks.Params(n=64, q_bits=(60,) + (40,) * 15, p_bits=(60,), scale_bits=40, insecure=True)
SLOTS = PARAMS.slots


def least_depth(degree: int) -> int:
    return math.ceil(math.log2(degree + 1))


@pytest.fixture(scope="module")
def ctx():
    with ckks.Context(PARAMS, seed=5) as c:
        yield c


# --- fits and division (plain NumPy) -----------------------------------------------------------


@pytest.mark.parametrize(
    "f, interval, degree",
    [(np.exp, (-1, 1), 9), (np.sin, (0, 3), 12), (np.sqrt, (0.5, 2), 6), (np.cos, (-8, -2), 1)],
)
def test_the_fit_is_numpys_interpolation(f, interval, degree):
    want = npcheb.Chebyshev.interpolate(f, degree, domain=list(interval))
    got = chebyshev(f, interval, degree)
    assert got.dtype == float and got.shape == (degree + 1,)
    assert np.allclose(got, want.coef, atol=1e-14)


def test_a_complex_fit():
    got = chebyshev(lambda x: np.exp(1j * x), (-1, 1), 10)
    x = np.linspace(-1, 1, 101)
    assert got.dtype == complex and np.max(np.abs(npcheb.chebval(x, got) - np.exp(1j * x))) < 1e-9


@pytest.mark.parametrize(
    "args, error, match",
    [
        ((3, (-1, 1), 4), TypeError, "f must be callable"),
        ((np.exp, (-1, 1), 2.0), TypeError, "degree must be an int"),
        ((np.exp, (-1, 1), True), TypeError, "degree must be an int"),
        ((np.exp, (-1, 1), 0), ValueError, "degree must be at least 1"),
        ((np.exp, (1, -1), 4), ValueError, "interval must be two finite numbers a < b"),
        ((np.exp, (0, math.inf), 4), ValueError, "interval must be two finite numbers a < b"),
        ((np.exp, 3, 4), TypeError, "interval must be a pair"),
        ((np.exp, ("a", 1), 4), TypeError, "interval must be a pair of real numbers"),
        ((np.exp, (0, 1, 2), 4), ValueError, "interval must be two numbers"),
        ((np.log, (-1, 1), 4), ValueError, r"f gave a value that is not finite at 2 of the 5"),
        ((lambda x: x[:2], (-1, 1), 4), ValueError, "f must give one number per node"),
        ((lambda x: x.astype(str), (-1, 1), 4), TypeError, "f must give numbers"),
    ],
)
def test_bad_fits_name_the_argument(args, error, match):
    with pytest.raises(error, match=match):
        chebyshev(*args)


@settings(max_examples=40)
@given(st.integers(2, 80), st.integers(0, 2**32 - 1))
def test_division_by_t_m_is_exact(d, seed):
    c = np.random.default_rng(seed).uniform(-1, 1, d + 1)
    m = 1 << (d.bit_length() - 1)  # the largest power of two <= d, as the evaluator divides
    q, r = divide(c, m)
    t_m = np.zeros(m + 1)
    t_m[m] = 1
    back = npcheb.chebadd(npcheb.chebmul(q, t_m), r)
    assert len(r) == m and np.allclose(np.pad(back, (0, d + 1 - len(back))), c, atol=1e-13)


# --- plans: depth and products ------------------------------------------------------------------


@pytest.mark.parametrize("degree", [1, 2, 3, 7, 8, 15, 31])
def test_depth_is_the_least_possible(degree):
    assert depth(degree) == least_depth(degree)
    assert depth(degree, (0, 5)) == least_depth(degree) + (degree > 1)  # the map: one level
    assert depth(degree, (0, 1)) == least_depth(degree)  # 2 / (b - a) = 2, an int: no level


def test_every_dense_plan_reaches_the_least_depth_with_about_2_sqrt_d_products():
    rng = np.random.default_rng(0)
    for degree in [*range(1, 70), 119, 127, 128, 255]:
        p = plan(rng.uniform(-1, 1, degree + 1))
        assert p.degree == degree and p.depth == least_depth(degree) == depth(degree)
        assert p.products <= 2 * math.sqrt(degree) + math.log2(degree), degree
        assert p.products >= len(p.powers) and all(i >= 2 for i in p.powers)


def test_small_coefficients_are_left_out():
    odd = chebyshev(lambda x: np.tanh(2 * x), (-1, 1), 31)  # an odd function: no even terms
    p = plan(odd)
    assert np.all(p.coeffs[::2] == 0) and p.degree == 31
    assert all(i % 2 == 1 or i & (i - 1) == 0 for i in p.powers)  # odd powers and powers of two
    assert plan([1.0, 0.5, 1e-16]).degree == 1 and plan([0.0, 0.0]).degree == 0


# --- evaluation on ciphertexts ---------------------------------------------------------------


@pytest.mark.parametrize("degree", [1, 2, 3, 7, 8, 15, 31])
def test_series_against_numpy_at_the_least_depth_and_the_input_scale(ctx, degree):
    coeffs = np.random.default_rng(degree).uniform(-1, 1, degree + 1) / (degree + 1)
    x = np.linspace(-1, 1, SLOTS)
    ct = ckks.encrypt(x)
    out = evaluate_polynomial(ct, coeffs)
    assert ckks.precision_bits(ckks.decrypt(out).real, npcheb.chebval(x, coeffs)) > 28
    assert out.scale == ct.scale and out.real
    assert ct.level - out.level == least_depth(degree)


@pytest.mark.parametrize(
    "interval, degree, levels",
    [((2, 6), 5, 4), ((-8, 8), 9, 5), ((2, 6), 1, 1), ((0, 1), 6, 3), ((0, 2), 4, 3)],
    ids=["map", "map-symmetric", "degree-1-folded", "int-map", "unit-map"],
)
def test_an_interval_costs_one_level_unless_folded(ctx, interval, degree, levels):
    coeffs = np.random.default_rng(degree).uniform(-1, 1, degree + 1) / (degree + 1)
    a, b = interval
    x = np.linspace(a, b, SLOTS)
    ct = ckks.encrypt(x)
    out = evaluate_polynomial(ct, coeffs, interval=interval)
    want = npcheb.chebval((2 * x - a - b) / (b - a), coeffs)
    assert ckks.precision_bits(ckks.decrypt(out).real, want) > 28
    assert ct.level - out.level == levels == depth(degree, interval)
    assert out.scale == ct.scale


def test_monomial_and_chebyshev_bases_agree(ctx):
    x = np.linspace(2, 6, SLOTS)
    m = np.array([0.25, -0.5, 0.125, 0.01, -0.002])
    cheb = npcheb.poly2cheb(np.polynomial.Polynomial(m)(np.polynomial.Polynomial([4, 2])).coef)
    ct = ckks.encrypt(x)
    by_monomials = evaluate_polynomial(ct, m, basis="monomial", interval=(2, 6))
    by_chebyshev = evaluate_polynomial(ct, cheb, interval=(2, 6))  # y = (x - 4) / 2: x = 2y + 4
    got = ckks.decrypt(by_monomials).real
    assert ckks.precision_bits(got, np.polynomial.polynomial.polyval(x, m)) > 28
    assert ckks.precision_bits(got, ckks.decrypt(by_chebyshev).real) > 28
    assert by_monomials.level == by_chebyshev.level


def test_complex_coefficients(ctx):
    x = np.linspace(-1, 1, SLOTS)
    m = np.array([0.25, -0.5j, 0.125, 0.01 + 0.3j])
    out = evaluate_polynomial(ckks.encrypt(x), m, basis="monomial")
    got = ckks.decrypt(out)
    assert not out.real
    assert ckks.precision_bits(got, np.polynomial.polynomial.polyval(x, m)) > 28


def test_a_constant_and_a_sparse_series(ctx):
    x = np.linspace(-1, 1, SLOTS)
    ct = ckks.encrypt(x)
    const = evaluate_polynomial(ct, [0.75, 1e-17])
    assert const.level == ct.level and const.scale == ct.scale
    assert ckks.precision_bits(ckks.decrypt(const).real, np.full(SLOTS, 0.75)) > 28
    odd = [0.0, 0.5, 0.0, 0.25, 0.0, 0.0, 0.0, -0.125]
    out = evaluate_polynomial(ct, odd)
    assert ckks.precision_bits(ckks.decrypt(out).real, npcheb.chebval(x, odd)) > 28
    assert ct.level - out.level == plan(odd).depth == 3


def test_jit_captures_the_whole_evaluation(ctx):
    c = chebyshev(np.exp, (0, 4), 13)
    f = ren.jit(lambda ct: evaluate_polynomial(ct, c, interval=(0, 4)))
    x = np.linspace(0, 4, SLOTS)
    f(ckks.encrypt(4 - x))  # the capture, on other values
    got = ckks.decrypt(f(ckks.encrypt(x))).real  # a replay
    assert f.cache_info().hits == 1
    eager = ckks.decrypt(evaluate_polynomial(ckks.encrypt(x), c, interval=(0, 4))).real
    assert ckks.precision_bits(got, eager) > 28
    assert ckks.precision_bits(got, np.exp(x)) > 20  # the fit's own error: about 2^-22


def test_its_kernels_are_in_its_region(ctx):
    out = evaluate_polynomial(ckks.encrypt(np.linspace(-1, 1, SLOTS)), [0.5, 0.25, 0.125, 0.1])
    prepared = prepare(tuple(p.node for p in out.parts))
    regions = {k.region[:1] for k in prepared.kernels}
    prepared.run()
    assert ("evaluate_polynomial",) in regions
    assert regions <= {("evaluate_polynomial",), ("encrypt",), ()}  # the input's own: encrypt


def test_errors_name_the_argument(ctx):
    low = ckks.encrypt(np.zeros(SLOTS), level=3)
    with pytest.raises(ValueError, match=r"degree 15 on \(-1.0, 1.0\) needs 4 levels .* has 3"):
        evaluate_polynomial(low, np.arange(1.0, 17.0))
    with pytest.raises(ValueError, match=r"needs 5 levels and the ciphertext has 3"):
        evaluate_polynomial(low, np.arange(1.0, 17.0), interval=(0, 3))
    ct = ckks.encrypt(np.zeros(SLOTS))
    for kwargs, error, match in [
        ({"coeffs": [1, 2], "basis": "power"}, ValueError, "basis must be"),
        ({"coeffs": [1, 2], "basis": 3}, TypeError, "basis must be"),
        ({"coeffs": [[1, 2]]}, ValueError, "coeffs must be a non-empty 1-D"),
        ({"coeffs": []}, ValueError, "coeffs must be a non-empty 1-D"),
        ({"coeffs": ["a", "b"]}, TypeError, "coeffs must hold real or complex numbers"),
        ({"coeffs": [1, math.nan]}, ValueError, "coeffs holds NaN or infinity"),
        ({"coeffs": [1, 2], "interval": (1,)}, ValueError, "interval must be two numbers"),
        ({"coeffs": [1, 2], "interval": (2, 1)}, ValueError, "interval must be two finite"),
    ]:
        with pytest.raises(error, match=match):
            evaluate_polynomial(ct, **kwargs)
    with pytest.raises(TypeError, match=r"ckks\.Ciphertext"):
        evaluate_polynomial(np.zeros(4), [1, 2])
    with pytest.raises(ValueError, match="two-part"):
        evaluate_polynomial(ckks.multiply(ct, ct, relinearize=False, rescale=False), [1, 2])
    with pytest.raises(TypeError, match="degree must be an int"):
        depth(2.5)
    with pytest.raises(ValueError, match="degree must be at least 0"):
        depth(-1)


# --- worked functions -----------------------------------------------------------------------------

CASES = [  # (function, its depth, its reference, interval, bits at n=64)
    (functions.sigmoid, functions.sigmoid_depth, lambda v: 1 / (1 + np.exp(-v)), (-8, 8), 30),
    (functions.exp, functions.exp_depth, np.exp, (-1, 1), 30),
    (functions.sqrt, functions.sqrt_depth, np.sqrt, (0.01, 1), 30),
    (functions.inverse, functions.inverse_depth, lambda v: 1 / v, (1, 16), 30),
]


@pytest.mark.parametrize(
    "fn, levels, ref, interval, bits", CASES, ids=[c[0].__name__ for c in CASES]
)
def test_worked_functions_against_numpy(fn, levels, ref, interval, bits):
    x = np.linspace(*interval, SLOTS)
    with ckks.Context(DEEP, seed=2):
        ct = ckks.encrypt(x)
        out = fn(ct)
        assert out.scale == ct.scale and ct.level - out.level == levels()
        assert ckks.precision_bits(ckks.decrypt(out).real, ref(x)) > bits


def kept_degree(f, interval, degree):
    """The degree of NumPy's fit once its coefficients at most ``1e-14`` of the largest go."""
    c = npcheb.Chebyshev.interpolate(f, degree, domain=list(interval)).coef
    return int(np.flatnonzero(np.abs(c) > 1e-14 * np.max(np.abs(c)))[-1])


def test_the_stated_depths():
    # the series' least depth; one level for a map by a factor that is not an int (2/16, 2/15)
    assert functions.sigmoid_depth() == least_depth(63) + 1 == 7
    assert kept_degree(np.exp, (-1, 1), 15) == 13  # exp's last two terms are below 1e-14
    assert functions.exp_depth() == least_depth(13) == 4
    assert functions.sqrt_depth() == least_depth(127) == 7  # on [0.01, 1.01]: 2x - 1.02, free
    assert functions.inverse_depth() == least_depth(31) + 1 + 2 == 8  # one Newton step: two
    assert functions.inverse_depth(15, 2) == least_depth(15) + 1 + 2 * 2 == 9
    assert functions.sign_depth() == (3 + 2) * least_depth(7) == 15  # five of degree 7


def test_newton_steps_square_the_error_of_1_over_x():
    x = np.linspace(1, 16, SLOTS)
    fit = npcheb.Chebyshev.interpolate(lambda v: 1 / v, 15, domain=[1, 16])
    fit_bits = ckks.precision_bits(fit(x) * x, 1.0)  # the fit's relative error, in plain NumPy
    with ckks.Context(DEEP, seed=4):
        ct = ckks.encrypt(x)
        bits = []
        for newton in (0, 1):
            out = functions.inverse(ct, degree=15, newton=newton)
            assert out.scale == ct.scale
            assert ct.level - out.level == least_depth(15) + 1 + 2 * newton
            bits.append(ckks.precision_bits(ckks.decrypt(out).real * x, 1.0))  # relative error
    # e = 1 - x y becomes e^2: the bits double (about 10.8, then 21.6), far above the noise
    assert abs(bits[0] - fit_bits) < 0.1 and abs(bits[1] - 2 * fit_bits) < 0.5


def test_with_scale_lands_on_the_scale_asked(ctx):
    x = np.linspace(-1, 1, SLOTS)
    ct = ckks.encrypt(x)
    out = functions.with_scale(ct, ct.scale * 1.5)
    assert out.scale == ct.scale * 1.5 and out.level == ct.level - 1
    assert ckks.precision_bits(ckks.decrypt(out).real, x) > 28
    with pytest.raises(ValueError, match=r"needs the factor \d+, too small"):
        functions.with_scale(ct, ct.scale * 2.0**-25)  # q_l 2^-25: about 2^15


def test_sign_outside_a_gap_around_zero():
    x = np.concatenate([np.linspace(-1, -0.01, SLOTS // 2), np.linspace(0.01, 1, SLOTS // 2)])
    with ckks.Context(DEEP, seed=3):
        ct = ckks.encrypt(x)
        out = functions.sign(ct)
        assert ct.level - out.level == 15 and out.scale == ct.scale
        assert ckks.precision_bits(ckks.decrypt(out).real, np.sign(x)) > 22
        for kwargs, error, match in [
            ({"g_steps": -1}, ValueError, "g_steps must be at least 0"),
            ({"f_steps": 1.0}, TypeError, "f_steps must be an int"),
            ({"g_steps": 0, "f_steps": 0}, ValueError, "at least one step"),
            ({"g_steps": 5}, ValueError, "needs 21 levels and the ciphertext has 15"),
        ]:
            with pytest.raises(error, match=match):
                functions.sign(ct, **kwargs)
        with pytest.raises(ValueError, match="newton must be at least 0"):
            functions.inverse(ct, newton=-1)
        with pytest.raises(ValueError, match="level 0"):
            functions.with_scale(ckks.encrypt(x, level=0), ct.scale)


# --- the ckks package, and OpenFHE's depths -------------------------------------------------------


def test_the_ckks_package_names_them():
    from ren.circuits import ckks as circuits

    assert ckks.chebyshev is circuits.chebyshev is chebyshev
    assert ckks.evaluate_polynomial is circuits.evaluate_polynomial is evaluate_polynomial
    assert ckks.evaluate_function is functions.evaluate_function and ckks.functions is functions
    assert circuits.polynomial.plan is plan
    assert {"chebyshev", "evaluate_polynomial", "evaluate_function", "functions"} <= set(dir(ckks))


def test_the_depth_is_at_most_openfhes_published_table():
    # OpenFHE's FUNCTION_EVALUATION.md: EvalChebyshevFunction's depth by degree, on any interval
    table = [(3, 5, 4), (6, 13, 5), (14, 27, 6), (28, 59, 7), (60, 119, 8), (120, 247, 9)]
    for low, high, theirs in table:
        for degree in range(low, high + 1):
            ours = depth(degree, (-8, 8))  # the least depth, and one for the map by 1/8
            assert ours == least_depth(degree) + 1 and ours in (theirs, theirs - 1), degree
    assert depth(6, (-8, 8)) == 4 and depth(60, (-8, 8)) == 7  # one less: 5 and 8 in the table
