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
