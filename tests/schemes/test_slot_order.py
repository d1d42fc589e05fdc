"""Slot orders: Ren's (powers of 5) and Microsoft SEAL's (powers of 3), by ``generator=``.

Oracles: the canonical embedding evaluated term by term (NumPy, one root at a time), the
automorphism ``X -> X^(g^k)`` applied to the polynomial's coefficients by hand. SEAL's own
encoder and decoder are compared in ``tests/interop/test_seal.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from ren.ring import galois_for_rotation
from ren.schemes import ckks

N = 32


def direct(coeffs: np.ndarray, n: int, generator: int) -> np.ndarray:
    """``m(zeta^(g^j))`` for each slot ``j``, one power at a time."""
    out = []
    for j in range(n // 2):
        root = np.exp(1j * np.pi * pow(generator, j, 2 * n) / n)
        out.append(sum(c * root**i for i, c in enumerate(coeffs)))
    return np.array(out)


def automorphism(coeffs: np.ndarray, g: int) -> np.ndarray:
    """``m(X^g)`` mod ``X^n + 1``, coefficient by coefficient."""
    n = len(coeffs)
    out = np.zeros(n)
    for i, c in enumerate(coeffs):
        k = i * g % (2 * n)
        out[k % n] += c if k < n else -c
    return out


@pytest.mark.parametrize("generator", [5, 3])
def test_embed_is_the_embedding_at_powers_of_the_generator(generator):
    coeffs = np.random.default_rng(generator).uniform(-1, 1, N)
    assert np.allclose(ckks.embed(coeffs, N, generator=generator), direct(coeffs, N, generator))
    slots = ckks.embed(coeffs, N, generator=generator)
    assert np.allclose(ckks.embed_inverse(slots, N, generator=generator), coeffs)


@pytest.mark.parametrize("generator", [5, 3])
def test_rotation_element_rotates_slots_in_that_order(generator):
    coeffs = np.random.default_rng(1).uniform(-1, 1, N)
    slots = ckks.embed(coeffs, N, generator=generator)
    for k in (1, 3, N // 2 - 1):
        g = galois_for_rotation(N, k, generator=generator)
        moved = ckks.embed(automorphism(coeffs, g), N, generator=generator)
        assert np.allclose(moved, np.roll(slots, -k))


def test_the_two_orders_are_a_permutation_with_conjugates():
    """SEAL's slot ``j`` is Ren's slot ``i`` where ``3^j = 5^i``, or its conjugate where
    ``3^j = -5^i`` (mod 2n): a plain permutation is not enough."""
    coeffs = np.random.default_rng(2).uniform(-1, 1, N)
    ren, seal = ckks.embed(coeffs, N), ckks.embed(coeffs, N, generator=3)
    powers5 = {pow(5, i, 2 * N): i for i in range(N // 2)}
    conjugated = 0
    for j in range(N // 2):
        e = pow(3, j, 2 * N)
        if e in powers5:
            assert np.isclose(seal[j], ren[powers5[e]])
        else:
            assert np.isclose(seal[j], np.conj(ren[powers5[2 * N - e]]))
            conjugated += 1
    assert conjugated == N // 4  # half the slots


@pytest.mark.parametrize("bad", [7, 1, -5])
def test_other_generators_are_refused(bad):
    with pytest.raises(ValueError, match="SEAL"):
        ckks.embed(np.zeros(N), N, generator=bad)
    with pytest.raises(ValueError, match="SEAL"):
        galois_for_rotation(N, 1, generator=bad)
    with pytest.raises(TypeError, match="generator"):
        ckks.embed_inverse(np.zeros(N // 2), N, generator=3.0)
