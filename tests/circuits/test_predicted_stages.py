"""What the noise model knows of a bootstrap's stages, each against an oracle of its own.

* ``evalmod.angle_bounds``: the double angles' largest ``|cos|`` on a bootstrap's slots, against
  their closed forms, and their product against the chain's own slope (the derivative of
  ``cos(2^r a)`` in ``cos(a)``, ``2^r sin(2^r a) / sin(a)``) at the slots it is taken on.
* ``noise.normal``: a product of normally spread values by a plaintext, predicted against the
  decryption's measure (the exact values in NumPy), within half a bit, where the values' bound
  alone predicts more than half a bit too low.
* ``Noise.normal``'s arithmetic against its formulas.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

from ren.circuits.ckks.evalmod import angle_bounds
from ren.schemes import ckks
from ren.schemes.ckks import noise


@pytest.mark.parametrize("near", [0.0, 2.0**-8, 0.01])
def test_angle_bounds_are_the_closed_forms(near):
    # k = r - 1: |cos(pi (t - 1/4))|, at most cos(pi / 4 - pi near) for t within near of an
    # integer; k = r - 2: |cos(pi (t - 1/4) / 2)|, at most cos(pi / 8 - pi near / 2) (t near 0)
    for r in (2, 3, 4):
        got = angle_bounds(12, r, near)
        assert len(got) == r
        assert got[-1] == pytest.approx(math.cos(math.pi / 4 - math.pi * near), rel=1e-12)
        assert got[-2] == pytest.approx(math.cos(math.pi / 8 - math.pi * near / 2), rel=1e-12)
        assert all(0 < b < 1 for b in got)


@pytest.mark.parametrize(("K", "r", "near"), [(12, 2, 2.0**-8), (16, 2, 2.0**-8), (16, 3, 0.01)])
def test_angle_bounds_give_the_chains_slope(K, r, near):
    # the chain's slope at t: d cos(2^r a) / d cos(a) = 2^r sin(2^r a) / sin(a)
    t = (np.arange(-K, K + 1)[:, None] + np.linspace(-near, near, 201)).ravel()
    a = 2 * np.pi * (t - 0.25) / 2**r
    slope = np.max(np.abs(2**r * np.sin(2**r * a) / np.sin(a)))
    bounds = angle_bounds(K, r, near)
    model = math.prod(4 * b for b in bounds)
    assert model >= slope * (1 - 1e-9)  # never below the slope
    assert model <= slope * 1.02  # and no more than it: 4^r (a bound of 1) was 1.5 times it
    assert 4**r > 1.4 * slope


def test_a_product_of_normal_values_is_predicted_from_their_spread():
    # normal values of root mean square 2^10 times a plaintext encoded at 2^20: the plaintext's
    # rounding, times each slot, is the error
    params = ckks.Params(n=8192, q_bits=(55, 50, 50), p_bits=(60,), scale_bits=50)
    rng = np.random.default_rng(3)
    slots, rms = params.slots, 2.0**10
    x = (rng.normal(size=slots) + 1j * rng.normal(size=slots)) * rms / math.sqrt(2)
    p = np.exp(2j * np.pi * rng.uniform(size=slots))
    with ckks.Context(params, seed=2, device="cpu") as ctx:
        ct = ctx.encrypt(x)
        pt = ctx.encode(p, ct.level, 2.0**20)
        out = ckks.multiply(noise.normal(ct, rms), pt)
        measured = ckks.precision_bits(ctx.decrypt(out), x * p)
        predicted = ckks.predicted_precision(out)
        bound_only = ckks.predicted_precision(ckks.multiply(ct, pt))
    assert abs(predicted - measured) <= 0.5, (predicted, measured)
    assert measured - bound_only > 0.5, (bound_only, measured)  # the largest slot on every slot


def _noise(bound: float, rms: float | None, source: int = 0) -> noise.Noise:
    part = noise.Part((1.0, 0.0, 0.0), 8.0, source=10**9 + source)
    return noise.Noise((part,), bound, origin=(10**9 + source, 0, math.inf), normal=rms)


def test_normal_arithmetic():
    a, b = _noise(5.0, 1.0, 1), _noise(10.0, 2.0, 2)
    assert noise.add(a, b).normal == pytest.approx(math.sqrt(1 + 4))  # independent: quadrature
    assert noise.add(a, a.times(2)).normal == pytest.approx(3.0)  # one value's copies: they add
    assert noise.add(a, _noise(3.0, None)).normal is None  # not normal: unknown
    assert noise.add(a, _noise(0.0, None)).normal == 1.0  # adding nothing keeps it
    assert a.times(-3).normal == 3.0
    plain = _noise(0.5, None)
    assert noise.multiply(a, plain).normal == 0.5  # times a bounded value
    assert noise.multiply(a, b).normal is None  # a product of two normals is not normal
    assert noise.bounded(b, 1.5).normal == 1.5  # never past the bound
    # the error a normal value multiplies moves one power of |s_j|^2 up, times its mean square
    (moved,) = [p for p in noise.multiply(plain, b).parts if p.var[1]]
    assert moved.var == pytest.approx((0.0, 4.0, 0.0))


def test_normal_is_noted_over_the_scale_and_kept_out_of_bytes():
    params = ckks.Params(n=1024, q_bits=(40, 30), p_bits=(40,), scale_bits=30, insecure=True)
    with ckks.Context(params, seed=1, device="cpu") as ctx:
        ct = noise.normal(ctx.encrypt(np.zeros(params.slots)), 3.0)
        assert ct.noise.normal == 3.0 * ct.scale
        assert ckks.Ciphertext.from_bytes(ct.to_bytes(), ctx).noise is None  # never in bytes
        bare = dataclasses.replace(ct, noise=None)
        assert noise.normal(bare, 3.0) is bare


def test_residual_is_the_sine_identitys_taylor_term():
    from ren.circuits.ckks.evalmod import residual

    for x in (2.0**-10, 2.0**-8, 2.0**-6):
        w = 2 * math.pi * x
        assert residual(x, False) == pytest.approx(w**3 / 6, rel=0.01)  # sin w = w - w^3/6 + ...
        # arcsin(s) = s + s^3/6 + 3 s^5/40 + ...: the correction leaves the next term
        assert residual(x, True) == pytest.approx(3 * w**5 / 40, rel=0.02)


def test_coefficient_bounds_hold_on_the_encoded_coefficients():
    from ren.circuits.ckks.evalmod import coefficients

    params = ckks.Params(n=1024, q_bits=(50, 40, 40), p_bits=(50,), scale_bits=40, insecure=True)
    rng = np.random.default_rng(4)
    messages = {
        "uniform": rng.uniform(-1, 1, params.slots),
        "constant": np.ones(params.slots),
        "spike": np.eye(1, params.slots, 7)[0],
    }
    with ckks.Context(params, seed=1, device="cpu") as ctx:
        for name, z in messages.items():
            c = ckks.embed_inverse(z, params.n)  # the oracle: the message's coefficients
            ct = ctx.encrypt(z)
            peak, energy = coefficients(ct)
            assert peak == pytest.approx(np.max(np.abs(c)), rel=1e-9), name  # the encoder's
            assert energy >= np.sum(c**2) * (1 - 1e-9), name  # Parseval's bound holds
            # through sums, numbers and rotations the bound stays a bound
            moved = (ct + ct.rotate(3)) * 0.5
            c2 = ckks.embed_inverse(0.5 * (z + np.roll(z, -3)), params.n)
            peak2, energy2 = coefficients(moved)
            assert peak2 >= np.max(np.abs(c2)) * (1 - 1e-9), name
            assert energy2 >= np.sum(c2**2) * (1 - 1e-9), name
            # a product: from the values' sum and bound alone
            sq = ct * ct
            c3 = ckks.embed_inverse(z * z, params.n)
            peak3, energy3 = coefficients(sq)
            assert peak3 >= np.max(np.abs(c3)) * (1 - 1e-9), name
            assert energy3 >= np.sum(c3**2) * (1 - 1e-9), name
            # a square's sum of sizes is its factor's sum of squares: exact, not a bound's bound
            assert sq.noise.mass / sq.scale == pytest.approx(np.sum(np.abs(z) ** 2), rel=1e-6)
            c4 = ckks.embed_inverse(z**4, params.n)
            assert coefficients(sq * sq)[1] >= np.sum(c4**2) * (1 - 1e-9)


@pytest.fixture(scope="module")
def toy() -> ckks.Context:
    ctx = ckks.Context(ckks.Params.preset("boot-toy"), seed=1, device="cpu")
    ctx.bootstrap_keys(progress=False)
    return ctx


@pytest.mark.parametrize("message", ["constant 1", "constant 0.5", "alternating", "uniform"])
def test_a_bootstrap_is_predicted_on_every_kind_of_message(toy, message):
    # EvalMod's sine identity errs as the fifth power of a coefficient: a constant message (one
    # coefficient of 1) keeps 25 bits at boot-toy where random slots keep 32; the prediction
    # follows both, against the decryption and the values (the oracle)
    slots = toy.params.slots
    z = {
        "constant 1": np.ones(slots),
        "constant 0.5": np.full(slots, 0.5),
        "alternating": np.where(np.arange(slots) % 2, 1.0, -1.0),
        "uniform": np.random.default_rng(0).uniform(-1, 1, slots),
    }[message]
    with toy:
        out = ckks.bootstrap(ckks.encrypt(z, level=0))
        measured = ckks.precision_bits(ckks.decrypt(out).real, z)
        predicted = ckks.predicted_precision(out)
    assert abs(predicted - measured) <= 1.0, (message, predicted, measured)
    if message == "constant 1":
        assert measured < 27  # the identity's error dominates: the case that matters


def _cos_eighths(m: int) -> Decimal:
    """``cos(m pi / 8)`` to 40 digits, from ``cos(pi / 8) = sqrt(2 + sqrt 2) / 2`` and symmetry."""
    getcontext().prec = 40
    two = Decimal(2)
    c8, s8, r2 = (two + two.sqrt()).sqrt() / 2, (two - two.sqrt()).sqrt() / 2, two.sqrt() / 2
    quarter = [Decimal(1), c8, r2, s8, Decimal(0)]  # cos(k pi / 8), k = 0 .. 4
    m %= 16
    if m > 8:
        m = 16 - m
    return quarter[m] if m <= 4 else -quarter[8 - m]


def test_the_series_error_against_exact_arithmetic():
    # the oracle: the Chebyshev series in fractions (exact for its float coefficients, by
    # Clenshaw) less the cosine at the integers, cos((4 I - 1) pi / 8) for r = 2, to 40 digits
    from ren.circuits.ckks.evalmod import approximation

    boot = importlib.import_module("ren.circuits.ckks.bootstrap")  # the module, not the function
    made = boot.plan(ckks.Params.preset("boot-toy"))
    K, r, dev = made.config.K, made.config.double_angle, 2.0
    assert r == 2
    coeffs = [Fraction(float(c)) for c in made.cosine]
    rows = []
    for I in range(-K, K + 1):
        y = Fraction(I, K + 1)
        b1, b2 = Fraction(0), Fraction(0)
        for c in reversed(coeffs[1:]):
            b1, b2 = 2 * y * b1 - b2 + c, b1
        series = y * b1 - b2 + coeffs[0]
        err = Decimal(series.numerator) / Decimal(series.denominator) - _cos_eighths(4 * I - 1)
        a = 2 * math.pi * (I - 0.25) / 2**r
        rows.append((math.exp(-(I**2) / (2 * dev**2)), float(err) * 2**r / abs(math.sin(a))))
    want = math.sqrt(sum(w * e * e for w, e in rows) / sum(w for w, _ in rows))
    got = approximation(made.cosine, K, r, dev)
    assert got == pytest.approx(want, rel=0.02)
    assert 2.0**-45 < got < 2.0**-35  # boot-toy's degree 47: a real error, not float64's
