"""EvalMod (``ren.circuits.ckks.evalmod``): ``t mod 1`` near the integers, by a scaled sine.

Oracles: NumPy's ``sin(2 pi t) / (2 pi)``, the function the circuit approximates, with a precision
in bits; and ``t mod 1`` itself, within the sine's own error ``(2 pi)^2 |t mod 1|^3 / 6``.
"""

from __future__ import annotations

import numpy as np
import pytest

from ren.circuits.ckks.evalmod import eval_mod, eval_mod_depth
from ren.circuits.ckks.polyeval import depth
from ren.schemes import ckks

PARAMS = ckks.Params(n=64, q_bits=(60,) + (40,) * 11, p_bits=(60,), scale_bits=40, insecure=True)


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
    levels = depth(degree, (-K - 1, K + 1)) + double_angle + 1
    assert ct.level - out.level == eval_mod_depth(K, degree, double_angle) == levels


def test_bad_settings_and_too_few_levels():
    with ckks.Context(PARAMS, seed=1):
        ct = ckks.encrypt(np.zeros(PARAMS.slots), level=5)
        with pytest.raises(ValueError, match=r"needs 10 levels and the ciphertext has 5"):
            eval_mod(ct, 4, 31, 2)
        for kwargs, name in (
            ({"K": 0}, "K"),
            ({"degree": 1.5}, "degree"),
            ({"double_angle": -1}, "double_angle"),
        ):
            with pytest.raises(ValueError, match=name):
                eval_mod(ct, **kwargs)
