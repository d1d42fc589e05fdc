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
import math

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
