"""Predicted precision through the circuits: sums, inner products, linear transforms, functions.

The oracle: the decryption against NumPy (``np.roll``, ``np.sum``, ``D @ v``, the functions
themselves), measured with ``ckks.precision_bits``; the prediction must be within 2 bits. A sum of
every slot has one error in every slot (the noise model follows how rotated copies pair the slots
up), and a polynomial's values stay within its largest value on the interval (the circuit says so:
``ren.schemes.ckks.noise.within``).
"""

from __future__ import annotations

import numpy as np
import pytest

from ren.circuits.ckks import functions
from ren.schemes import ckks

PARAMS = ckks.Params(n=4096, q_bits=(60,) + (40,) * 8, p_bits=(60, 60), dnum=5, insecure=True)
M = PARAMS.slots


@pytest.fixture(scope="module")
def ctx() -> ckks.Context:
    context = ckks.Context(PARAMS, seed=21, device="cpu")
    context.keygen()
    return context


@pytest.fixture(scope="module")
def xs() -> np.ndarray:
    return np.random.default_rng(22).uniform(0.02, 1.0, M)


def _check(ctx: ckks.Context, ct: ckks.Ciphertext, exact: np.ndarray) -> None:
    got = ctx.decrypt(ct)
    if ct.real:
        got, exact = got.real, np.real(exact)
    measured = ckks.precision_bits(got, exact)
    predicted = ckks.predicted_precision(ct)
    assert abs(predicted - measured) <= 2, (predicted, measured)


def test_sums_and_inner_products(ctx, xs) -> None:
    x = ctx.encrypt(xs)
    ys = np.cos(7 * xs)
    _check(ctx, ckks.sum_slots(x), np.full(M, xs.sum()))
    _check(ctx, ckks.inner_product(x, ys), np.full(M, (xs * ys).sum()))
    _check(ctx, ckks.rotate_many(x, [1, 5, 9])[2], np.roll(xs, -9))


def test_a_linear_transform(ctx, xs) -> None:
    rng = np.random.default_rng(23)
    diagonals = {k: rng.uniform(-1, 1, M) for k in range(-4, 4)}
    lt = ckks.LinearTransform(diagonals=diagonals, slots=M)
    want = sum(d * np.roll(xs, -k) for k, d in diagonals.items())
    _check(ctx, lt(ctx.encrypt(xs)), want)


@pytest.mark.parametrize(
    ("name", "f"),
    [
        ("sigmoid", lambda v: 1 / (1 + np.exp(-v))),
        ("exp", np.exp),
        ("sqrt", np.sqrt),
    ],
)
def test_worked_functions(ctx, xs, name, f) -> None:
    _check(ctx, getattr(functions, name)(ctx.encrypt(xs)), f(xs))


def test_a_polynomial_in_the_monomial_basis(ctx, xs) -> None:
    coeffs = [0.5, -1.0, 0.25, 0.75, -0.5]
    out = ckks.evaluate_polynomial(ctx.encrypt(xs), coeffs, basis="monomial")
    _check(ctx, out, np.polynomial.polynomial.polyval(xs, coeffs))


def test_inverse_with_a_newton_step(ctx) -> None:
    """Newton's step corrects its input's error: carried damped, not at the products' bounds
    (which took ``|x y|`` at 16 on ``[1, 16]``, 7 bits below the measure in the docs' example)."""
    xs = np.random.default_rng(26).uniform(1.0, 16.0, M)
    _check(ctx, functions.inverse(ctx.encrypt(xs), degree=31, newton=1), 1 / xs)


def test_the_slope_a_caller_knows(ctx, xs) -> None:
    """``slope=``: the input's error carried by it; checked like every argument."""
    coeffs = [0.0, 1.5, 0.0, -0.5]  # 1.5 x - 0.5 x^3: slope 1.5 at 0, 0 at 1
    ct = ctx.encrypt(xs)
    whole = ckks.evaluate_polynomial(ct, coeffs, basis="monomial")
    flat = ckks.evaluate_polynomial(ct, coeffs, basis="monomial", slope=0.1)
    assert ckks.predicted_precision(flat) > ckks.predicted_precision(whole)
    for bad, error in [
        ("1", TypeError),
        (True, TypeError),
        (-1.0, ValueError),
        (np.inf, ValueError),
    ]:
        with pytest.raises(error, match="slope must be"):
            ckks.evaluate_polynomial(ct, coeffs, basis="monomial", slope=bad)


def test_a_value_inside_a_circuit_has_no_prediction_of_its_own(ctx, xs) -> None:
    """``noise.exact`` (a circuit following its own noise) leaves out the input's error: no
    figure until ``noise.carried`` adds it back (the report then shows the measure only)."""
    from ren.schemes.ckks.noise import carried, exact

    ct = ctx.encrypt(xs)
    inside = exact(ct) * 2.0
    with pytest.raises(ValueError, match="inside a circuit"):
        ckks.predicted_precision(inside)
    out = carried(inside, ct, 2.0)
    _check(ctx, out, 2 * xs)


def test_sign_gap() -> None:
    """The least ``|x|`` that the ``g_3`` steps carry to ``SIGN_REACH``: from NumPy's polyval."""
    for steps in (1, 3, 5):
        gap = functions.sign_gap(steps)
        y = gap
        for _ in range(steps):
            y = np.polynomial.polynomial.polyval(y, functions.G3)
        assert y == pytest.approx(functions.SIGN_REACH, abs=1e-9)
    assert 0.009 < functions.sign_gap(3) < 0.01 < functions.sign_gap(2)  # the docs' 0.01 at 3
    with pytest.raises(ValueError):
        functions.sign_gap(-1)


def test_a_bootstrap_predicts_its_precision() -> None:
    """``boot-toy``: the stages' own noise, the input's error carried through, each iteration's."""
    params = ckks.Params.preset("boot-toy")
    ctx = ckks.Context(params, seed=24, device="cpu")
    ctx.keygen()
    ctx.bootstrap_keys()
    values = np.random.default_rng(25).uniform(-1, 1, params.slots)
    ct = ctx.encrypt(values, level=0)
    out = ckks.bootstrap(ct)
    got = ctx.decrypt(out, real=True)
    assert abs(ckks.predicted_precision(out) - ckks.precision_bits(got, values)) <= 2
    assert ckks.predicted_precision(out) < ckks.predicted_precision(ct)  # it adds noise
