"""Polynomial evaluation (``ren.circuits.ckks.polyeval``) and the worked functions.

Oracles: NumPy's own Chebyshev interpolation for the fits, ``chebval``/``polyval`` of the plaintext
for evaluated series, and each function itself (``np.exp``, ``1 / x``, ...) for the worked ones,
with a precision in bits; the depth against ``ceil(log2(degree + 1)) + 1``, the algorithm's.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ren
from ren.circuits.ckks import functions
from ren.circuits.ckks.polyeval import chebyshev, depth, evaluate_polynomial
from ren.engine.realize import prepare
from ren.schemes import ckks

PARAMS = ckks.Params(n=64, q_bits=(60,) + (40,) * 9, p_bits=(60,), scale_bits=40, insecure=True)
DEEP = ckks.Params(n=64, q_bits=(60,) + (40,) * 17, p_bits=(60,), scale_bits=40, insecure=True)
SLOTS = PARAMS.slots


@pytest.fixture(scope="module")
def ctx():
    with ckks.Context(PARAMS, seed=5) as c:
        yield c


def test_the_fit_is_numpys_interpolation():
    for f, interval, degree in ((np.exp, (-1, 1), 9), (np.sin, (0, 3), 12), (np.sqrt, (0.5, 2), 6)):
        want = np.polynomial.chebyshev.Chebyshev.interpolate(f, degree, domain=list(interval))
        assert np.allclose(chebyshev(f, interval, degree), want.coef, atol=1e-13)


@pytest.mark.parametrize(
    "args, error, match",
    [
        ((3, (-1, 1), 4), TypeError, "callable"),
        ((np.exp, (-1, 1), 2.0), TypeError, "degree must be an int"),
        ((np.exp, (-1, 1), 0), ValueError, "at least 1"),
        ((np.exp, (1, -1), 4), ValueError, "a < b"),
        ((np.exp, (0, math.inf), 4), ValueError, "a < b"),
        ((np.log, (-1, 1), 4), ValueError, "finite real"),
    ],
)
def test_bad_fits(args, error, match):
    with pytest.raises(error, match=match):
        chebyshev(*args)


@pytest.mark.parametrize("degree", [1, 2, 3, 7, 8, 15, 31])
def test_series_against_numpy_with_the_promised_depth_and_the_input_scale(ctx, degree):
    rng = np.random.default_rng(degree)
    coeffs = rng.uniform(-1, 1, degree + 1) / (degree + 1)
    x = np.linspace(-1, 1, SLOTS)
    ct = ckks.encrypt(x)
    out = evaluate_polynomial(ct, coeffs)
    got = ckks.decrypt(out).real
    assert ckks.precision_bits(got, np.polynomial.chebyshev.chebval(x, coeffs)) > 28
    assert out.scale == ct.scale
    assert ct.level - out.level == depth(degree)
    least = math.ceil(math.log2(degree + 1))  # no evaluation of degree d takes fewer
    assert least <= depth(degree) <= least + 1  # one more for the products by coefficients
    assert depth(degree, (0, 5)) == depth(degree) + 1


def test_an_interval_and_the_monomial_basis(ctx):
    x = np.linspace(2, 6, SLOTS)
    m = [0.25, -0.5, 0.125, 0.01]  # 0.25 - 0.5 x + 0.125 x^2 + 0.01 x^3
    out = evaluate_polynomial(ckks.encrypt(x), m, basis="monomial", interval=(2, 6))
    want = np.polynomial.polynomial.polyval(x, m)
    assert ckks.precision_bits(ckks.decrypt(out).real, want) > 25
    c = chebyshev(np.cos, (2, 6), 9)
    out = evaluate_polynomial(ckks.encrypt(x), c, interval=(2, 6))
    assert ckks.precision_bits(ckks.decrypt(out).real, np.cos(x)) > 18


def test_jit_captures_the_whole_evaluation(ctx):
    c = chebyshev(np.exp, (-1, 1), 7)
    f = ren.jit(lambda ct: evaluate_polynomial(ct, c))
    x = np.linspace(-1, 1, SLOTS)
    f(ckks.encrypt(-x))  # the capture, on other values
    got = ckks.decrypt(f(ckks.encrypt(x))).real
    eager = ckks.decrypt(evaluate_polynomial(ckks.encrypt(x), c)).real
    assert ckks.precision_bits(got, np.polynomial.chebyshev.chebval(x, c)) > 28
    assert ckks.precision_bits(got, eager) > 28


def test_its_kernels_are_in_its_region(ctx):
    out = evaluate_polynomial(ckks.encrypt(np.linspace(-1, 1, SLOTS)), [0.5, 0.25, 0.125, 0.1])
    prepared = prepare(tuple(p.node for p in out.parts))
    regions = {k.region[:1] for k in prepared.kernels}
    prepared.run()
    assert ("evaluate_polynomial",) in regions and regions <= {("evaluate_polynomial",), ()}


def test_too_few_levels_and_bad_arguments(ctx):
    low = ckks.encrypt(np.zeros(SLOTS), level=2)
    with pytest.raises(ValueError, match=r"degree 15 needs 5 levels here and the ciphertext has 2"):
        evaluate_polynomial(low, np.ones(16))
    ct = ckks.encrypt(np.zeros(SLOTS))
    with pytest.raises(ValueError, match="basis must be"):
        evaluate_polynomial(ct, [1, 2], basis="power")
    with pytest.raises(TypeError, match="coeffs must be"):
        evaluate_polynomial(ct, [[1, 2]])
    with pytest.raises(ValueError, match="finite"):
        evaluate_polynomial(ct, [1, math.nan])
    with pytest.raises(ValueError, match="interval"):
        evaluate_polynomial(ct, [1, 2], interval=(1,))
    with pytest.raises(TypeError, match=r"ckks\.Ciphertext"):
        evaluate_polynomial(np.zeros(4), [1, 2])


def test_a_constant_and_dropped_terms(ctx):
    x = np.linspace(-1, 1, SLOTS)
    out = evaluate_polynomial(ckks.encrypt(x), [0.75])
    assert ckks.precision_bits(ckks.decrypt(out).real, np.full(SLOTS, 0.75)) > 28
    odd = [0.0, 0.5, 0.0, 0.25]  # no even terms: T_2 is never made
    out = evaluate_polynomial(ckks.encrypt(x), odd)
    want = np.polynomial.chebyshev.chebval(x, odd)
    assert ckks.precision_bits(ckks.decrypt(out).real, want) > 28


CASES = [  # (function, its reference, interval, bits at this ring)
    (functions.sigmoid, lambda v: 1 / (1 + np.exp(-v)), (-8, 8), 28),
    (functions.exp, np.exp, (-1, 1), 28),
    (functions.sqrt, np.sqrt, (0.01, 1), 22),
    (functions.inverse, lambda v: 1 / v, (1, 16), 28),
]


@pytest.mark.parametrize("fn, ref, interval, bits", CASES, ids=[c[0].__name__ for c in CASES])
def test_worked_functions_against_numpy(fn, ref, interval, bits):
    x = np.linspace(*interval, SLOTS)
    with ckks.Context(DEEP, seed=2):
        ct = ckks.encrypt(x)
        out = fn(ct)
        assert out.scale == ct.scale
        assert ckks.precision_bits(ckks.decrypt(out).real, ref(x)) > bits


def test_sign_outside_a_gap_around_zero():
    x = np.concatenate([np.linspace(-1, -0.1, SLOTS // 2), np.linspace(0.1, 1, SLOTS // 2)])
    with ckks.Context(DEEP, seed=3):
        ct = ckks.encrypt(x)
        out = functions.sign(ct, 8)
        assert ct.level - out.level == 2 * 8 + 1 and out.scale == ct.scale
        assert ckks.precision_bits(ckks.decrypt(out).real, np.sign(x)) > 8
        with pytest.raises(ValueError, match="iterations"):
            functions.sign(ct, 0)
        with pytest.raises(ValueError, match="newton"):
            functions.inverse(ct, newton=-1)


def test_the_ckks_package_names_them():
    assert ckks.chebyshev is chebyshev and ckks.evaluate_polynomial is evaluate_polynomial


def test_the_depth_is_at_most_openfhes_published_table():
    # OpenFHE's FUNCTION_EVALUATION.md: EvalChebyshevFunction's depth by degree, on any interval
    table = [(3, 5, 4), (6, 13, 5), (14, 27, 6), (28, 59, 7), (60, 119, 8), (120, 247, 9)]
    for low, high, theirs in table:
        for degree in range(low, high + 1):
            assert depth(degree, (-8, 8)) in (theirs, theirs - 1)
    assert depth(59, (-8, 8)) == 7 and depth(60, (-8, 8)) == 7  # one less at the range's start
