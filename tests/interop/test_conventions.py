"""Ren's own conventions, one test per row of the conventions table (docs/guides/conventions.md).

Each row is checked against an oracle that does not use the code under test: Python integers
(evaluating a polynomial at a root, dividing and rounding), a brute-force search (the smallest
root), and the other libraries' own words where they are committed (``tests/vectors``).
The rows of SEAL and OpenFHE are also checked word for word in ``test_seal.py`` and
``test_openfhe.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ren import Poly, RingSpec
from ren.ring import Domain, bit_reverse, generator_root_2n, ntt_primes, primitive_root_2n
from ren.schemes import ckks

VECTORS = Path(__file__).resolve().parents[1] / "vectors"
N = 16
Q = ntt_primes(N, 30, 2)
RING = RingSpec(N, Q)


def evaluate(coeffs: list[int], x: int, q: int) -> int:
    return sum(c * pow(x, i, q) for i, c in enumerate(coeffs)) % q


def test_ntt_root_is_the_smallest_primitive_2n_th_root():
    for q in Q:
        # one primitive 2n-th root by trial (a power of x of order exactly 2n), then all of them
        root = next(r for x in range(2, 100) if pow(r := pow(x, (q - 1) // (2 * N), q), N, q) > 1)
        assert pow(root, N, q) == q - 1
        roots = {pow(root, k, q) for k in range(1, 2 * N, 2)}
        assert len(roots) == N and primitive_root_2n(q, N) == min(roots)
        assert pow(generator_root_2n(q, N), N, q) == q - 1  # Lattigo's: primitive, not smallest


def test_ntt_slot_i_is_the_value_at_psi_to_2_brv_i_plus_1():
    coeffs = [[int(x) for x in np.random.default_rng(i).integers(0, q, N)] for i, q in enumerate(Q)]
    got = Poly.from_limbs(np.array(coeffs, dtype=np.uint64), RING).ntt().limbs()
    bits = N.bit_length() - 1
    for limb, q in enumerate(Q):
        psi = primitive_root_2n(q, N)
        want = [
            evaluate(coeffs[limb], pow(psi, 2 * bit_reverse(i, bits) + 1, q), q) for i in range(N)
        ]
        assert [int(x) for x in got[limb]] == want


def test_seal_uses_the_same_ntt():
    data = np.load(VECTORS / "seal_n16_30bit.npz")
    ring = RingSpec(16, tuple(int(q) for q in data["moduli"]))
    for part in range(2):
        ours = Poly.from_limbs(data["a_coef"][part], ring).ntt().limbs()
        assert np.array_equal(ours, data["a_ntt"][part])


def test_slots_are_ordered_by_powers_of_5():
    coeffs = np.random.default_rng(0).uniform(-1, 1, N)
    slots = ckks.embed(coeffs, N)
    for j in range(N // 2):
        root = np.exp(1j * np.pi * pow(5, j, 2 * N) / N)
        assert np.isclose(slots[j], np.polyval(coeffs[::-1], root))


def test_special_moduli_come_first_in_the_key_ring():
    params = ckks.Params(n=64, q_bits=(50, 40, 40), p_bits=(55, 56), insecure=True)
    for level in range(params.max_level + 1):
        ring = params.key_ring_at(level)
        assert ring.moduli == params.p_moduli + params.q_moduli[: level + 1]


def test_a_digit_is_extended_centred():
    """ModUp takes a digit's residue ``c`` in ``[0, q)`` to ``c - q`` when ``c > q/2``."""
    params = ckks.Params(n=16, q_bits=(40, 30), p_bits=(45,), scale_bits=30, insecure=True)
    with ckks.Context(params, seed=1) as ctx:
        q0, q1 = params.q_moduli
        words = np.array([[q0 - 1, 5] + [0] * 14, [q1 - 1, 7] + [0] * 14], dtype=np.uint64)
        c = Poly.from_limbs(words, params.ring(1)).ntt()
        ups = ctx.key_switcher.mod_up(c, 1)
        ring = params.key_ring_at(1)
        first = ups[0].intt().limbs()  # the digit of q_0: -1 and 5, extended
        for limb, q in enumerate(ring.moduli):
            assert int(first[limb][0]) == q - 1 and int(first[limb][1]) == 5


def test_rescale_rounds_to_nearest():
    q_last = Q[1]
    ring = RING
    values = [q_last // 2, q_last // 2 + 1, 3 * q_last + 7, -(q_last // 2) - 1]
    limbs = np.array([[v % q for v in values] + [0] * (N - 4) for q in Q], dtype=np.uint64)
    out = Poly.from_limbs(limbs, ring).rescale(q_last).limbs()[0]
    for k, v in enumerate(values):
        want = (2 * v + q_last) // (2 * q_last)  # round(v / q_last), ties up
        assert int(out[k]) == want % Q[0]


def test_words_are_montgomery_limbs_are_plain():
    p = Poly.from_limbs(np.arange(2 * N, dtype=np.uint64).reshape(2, N) % 97, RING)
    words, limbs = p.words(), p.limbs()
    R = 2**32 if RING.dtype == "u32" else 2**64
    for limb, q in enumerate(Q):
        assert [int(w) for w in words[limb]] == [int(x) * R % q for x in limbs[limb]]
    assert np.array_equal(limbs, np.arange(2 * N).reshape(2, N) % 97)
    assert Domain.COEFF is p.domain


def test_encoding_rounds_the_scaled_inverse_embedding():
    """Coefficients ``round(scale * c)`` where ``c`` solves the embedding at every root.

    Oracle: NumPy's linear solve of the full Vandermonde system (slot ``j`` is the value at
    ``zeta^(5^j)``, its conjugate at ``zeta^(-5^j)``), rounded and reduced with Python integers.
    """
    params = ckks.Params(n=N, q_bits=(50, 40), p_bits=(50,), scale_bits=30, insecure=True)
    z = np.random.default_rng(7).uniform(-1, 1, N // 2) + 1j * np.linspace(-0.5, 0.5, N // 2)
    zeta = np.exp(1j * np.pi / N)
    exponents = [pow(5, j, 2 * N) for j in range(N // 2)]
    exponents += [-e % (2 * N) for e in exponents]
    vandermonde = np.array([[zeta ** (e * k) for k in range(N)] for e in exponents])
    coeffs = np.linalg.solve(vandermonde, np.concatenate([z, z.conj()])).real
    want = [round(float(c) * 2.0**30) for c in coeffs]
    with ckks.Context(params, seed=3) as ctx:
        plain = ctx.encode(z)
    limbs = plain.poly.intt().limbs()
    for limb, q in enumerate(plain.poly.ring.moduli):
        assert [int(w) for w in limbs[limb]] == [c % q for c in want]
