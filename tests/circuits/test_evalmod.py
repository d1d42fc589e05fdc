"""EvalMod (``ren.circuits.ckks.evalmod``): ``t mod 1`` near the integers, by a scaled sine.

Oracles: NumPy's ``sin(2 pi t) / (2 pi)``, the function the circuit approximates, with a precision
in bits; ``t mod 1`` itself, within the sine's own error ``(2 pi)^2 |t mod 1|^3 / 6``; and the depth
counted by hand: ``ceil(log2(d + 1))`` for the series of degree ``d`` (after NumPy's fit drops
its coefficients below ``1e-14`` of the largest), one for the map from ``[-K - 1, K + 1]``
(``2 / (2K + 2)`` is not an integer), one a double-angle step, and one for ``1 / (2 pi)``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.polynomial import chebyshev as npcheb

from ren.circuits.ckks.evalmod import eval_mod, eval_mod_depth
from ren.schemes import ckks

PARAMS = ckks.Params(n=64, q_bits=(60,) + (40,) * 11, p_bits=(60,), scale_bits=40, insecure=True)


def levels_by_hand(K: int, degree: int, double_angle: int) -> int:
    fit = npcheb.Chebyshev.interpolate(
        lambda x: np.cos(2 * np.pi * (x - 0.25) / 2**double_angle), degree, domain=[-K - 1, K + 1]
    ).coef
    kept = np.flatnonzero(np.abs(fit) > 1e-14 * np.max(np.abs(fit)))[-1]  # the degree evaluated
    return math.ceil(math.log2(kept + 1)) + 1 + double_angle + 1


def test_the_default_depth():
    # degree 31 keeps degree 29 (cos(2 pi (t - 1/4) / 4) on [-5, 5]: its last terms are below
    # 1e-14), 5 levels; one for the map, two double angles and the product by 1 / (2 pi)
    assert eval_mod_depth() == 5 + 1 + 2 + 1 == levels_by_hand(4, 31, 2) == 9
    # degree 63 keeps degree 29 too: 5 levels, not the 6 of a dense series of degree 63
    assert eval_mod_depth(4, 63, 2) == levels_by_hand(4, 63, 2) == 9


@pytest.mark.parametrize("degree, double_angle", [(31, 2), (23, 3)])
def test_the_sine_and_the_reduction_mod_1(degree, double_angle):
    rng = np.random.default_rng(degree)
    K = 4
    eps = rng.uniform(-(2.0**-8), 2.0**-8, PARAMS.slots)
    t = rng.integers(-K, K + 1, PARAMS.slots) + eps
    with ckks.Context(PARAMS, seed=1):
        ct = ckks.encrypt(t)
        out = eval_mod(ct, K, degree, double_angle)
        got = ckks.decrypt(out).real
    assert ckks.precision_bits(got, np.sin(2 * np.pi * t) / (2 * np.pi)) > 27
    sine_error = (2 * np.pi) ** 2 * np.abs(eps) ** 3 / 6
    assert np.all(np.abs(got - eps) <= sine_error + 2.0**-26)
    assert out.scale == ct.scale
    levels = levels_by_hand(K, degree, double_angle)
    assert ct.level - out.level == eval_mod_depth(K, degree, double_angle) == levels


def test_bad_settings_and_too_few_levels():
    with ckks.Context(PARAMS, seed=1):
        ct = ckks.encrypt(np.zeros(PARAMS.slots), level=5)
        with pytest.raises(ValueError, match=r"needs 9 levels and the ciphertext has 5"):
            eval_mod(ct, 4, 31, 2)
        for kwargs, error, match in (
            ({"K": 0}, ValueError, "K must be at least 1"),
            ({"degree": 1.5}, TypeError, "degree must be an int"),
            ({"double_angle": -1}, ValueError, "double_angle must be at least 0"),
            ({"K": True}, TypeError, "K must be an int"),
        ):
            with pytest.raises(error, match=match):
                eval_mod(ct, **kwargs)
            with pytest.raises(error, match=match):
                eval_mod_depth(**kwargs)
