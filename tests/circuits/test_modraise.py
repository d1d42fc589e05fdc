"""ModRaise (``ren.circuits.ckks.modraise``): a level-0 ciphertext read in the full chain.

Oracle: Python integers. With the secret key, the raised ciphertext's ``c_0 + c_1 s`` (centered
modulo the whole chain) minus the level-0 one's (centered modulo ``q_0``) is a multiple of ``q_0``,
``q_0 I``, with ``|I| <= (1 + h) / 2`` for a secret of ``h`` nonzero coefficients.
"""

from __future__ import annotations

import numpy as np
import pytest

from ren.circuits.ckks.modraise import mod_raise
from ren.schemes import ckks
from tests.oracles import negacyclic

PARAMS = ckks.Params(n=64, q_bits=(60, 40, 40), p_bits=(60,), scale_bits=40, insecure=True)


def centered(x: int, q: int) -> int:
    x %= q
    return x - q if x > q // 2 else x


def phase(ct: ckks.Ciphertext, s: list[int], Q: int) -> list[int]:
    c0, c1 = (p.tolist() for p in ct.parts)
    prod = negacyclic(c1, s, Q)
    return [centered(a + b, Q) for a, b in zip(c0, prod, strict=True)]


def test_the_raised_phase_is_the_old_one_plus_small_multiples_of_q0():
    xs = np.linspace(-1, 1, PARAMS.slots)
    with ckks.Context(PARAMS, seed=4) as ctx:
        low = ckks.encrypt(xs).at_level(0).realize()
        assert ckks.precision_bits(ckks.decrypt(low), xs) > 20  # the phase at level 0 is m + e
        up = mod_raise(low)
        assert up.level == PARAMS.max_level and up.scale == low.scale
        s = ctx._secret.tolist(centered=True)  # the test's oracle reads the key directly
    q0 = PARAMS.q_moduli[0]
    Q = PARAMS.ring(PARAMS.max_level).Q
    old, new = phase(low, s, q0), phase(up, s, Q)
    h = sum(1 for c in s if c)
    for a, b in zip(old, new, strict=True):
        assert (b - a) % q0 == 0
        assert abs((b - a) // q0) <= (1 + h) / 2
    assert any(b != a for a, b in zip(old, new, strict=True))  # I is not all zero here


def test_only_level_0_and_two_parts():
    with ckks.Context(PARAMS, seed=4):
        ct = ckks.encrypt(np.zeros(PARAMS.slots))
        with pytest.raises(ValueError, match="level 0, got level 2"):
            mod_raise(ct)
        with pytest.raises(TypeError):
            mod_raise("not a ciphertext")
