"""``ren.interop.mlkem``: FIPS 203's ring arithmetic through Ren, checked word for word.

Oracles, none of them Ren: kyber-py (an independent pure-Python ML-KEM: its NTT, inverse NTT,
base-case products and key generation), Python big-integer schoolbook products modulo
``X^256 + 1``, the definition of each NTT entry (a polynomial reduced modulo ``X^2 - gamma``),
the pq-crystals reference's Montgomery reduction and twiddle table, and NIST's ACVP keyGen
vectors (``tests/vectors/acvp``).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ren import Poly
from ren.interop import mlkem
from ren.interop.mlkem import GAMMAS, MONT_R, ZETAS, N, Q
from tests.interop import ring256

try:
    from kyber_py.ml_kem import ML_KEM_512, ML_KEM_768, ML_KEM_1024
    from kyber_py.polynomials.polynomials import PolynomialRing
except ImportError:  # a test-only dependency (the dev extra)
    PolynomialRing = None

needs_kyber_py = pytest.mark.skipif(
    PolynomialRing is None, reason="needs kyber-py: pip install -e '.[dev]'"
)
ACVP = json.loads(
    (Path(__file__).resolve().parents[1] / "vectors/acvp/ML-KEM-keyGen-FIPS203.json").read_text()
)
CASES = [(g["parameterSet"], t) for g in ACVP["testGroups"] for t in g["tests"]]

polys = ring256.polys(Q)
EDGES = ring256.edges(Q, 13)


def schoolbook(f: list[int], g: list[int]) -> list[int]:
    return ring256.schoolbook(f, g, Q)


def ring() -> PolynomialRing:
    return PolynomialRing()


def kyber_ntt(f: list[int]) -> list[int]:
    return ring()(list(f)).to_ntt().coeffs


# --- the tables and the ring ------------------------------------------------------------------
@needs_kyber_py
def test_zetas_are_kyber_py_s_and_gammas_pair_up_with_them():
    zetas = ring().ntt_zetas
    assert list(ZETAS) == zetas
    for i in range(64):  # kyber-py multiplies pairs 2i and 2i + 1 by zetas[64 + i] and its negative
        assert (GAMMAS[2 * i], GAMMAS[2 * i + 1]) == (zetas[64 + i], -zetas[64 + i] % Q)


def test_gammas_are_the_128_roots_of_x128_plus_1_and_rens_ntt_of_y():
    assert len(set(GAMMAS)) == 128 and all(pow(g, 128, Q) == Q - 1 for g in GAMMAS)
    y = Poly([0, 1] + [0] * 126, mlkem.RING).ntt().limbs()[0]
    assert [int(x) for x in y] == list(GAMMAS)  # Ren's psi is 17, its slot k is at GAMMAS[k]


def test_pq_crystals_twiddles_are_the_montgomery_form_of_zetas():
    # the first 16 entries of `zetas` in the reference implementation's ref/ntt.c (centered)
    ref = [-1044, -758, -359, -1517, 1493, 1422, 287, 202, -171, 622, 1577, 182, 962, -1202]
    ref += [-1474, 1468]
    assert mlkem.from_montgomery(ref + [0] * (N - 16))[:16] == list(ZETAS[:16])
    assert mlkem.to_montgomery(list(ZETAS) * 2)[:16] == [x % Q for x in ref]


# --- NTT, inverse NTT and products -----------------------------------------------------------
@given(polys)
def test_ntt_entry_pairs_are_f_modulo_x2_minus_gamma(f):
    f_hat = mlkem.ntt(f)
    for i in (0, 1, 63, 127):  # f mod (X^2 - g) = sum f_j g^(j // 2) X^(j % 2)
        g = GAMMAS[i]
        even = sum(c * pow(g, j, Q) for j, c in enumerate(f[0::2])) % Q
        odd = sum(c * pow(g, j, Q) for j, c in enumerate(f[1::2])) % Q
        assert (f_hat[2 * i], f_hat[2 * i + 1]) == (even, odd)


@needs_kyber_py
@given(polys)
def test_ntt_and_inverse_match_kyber_py(f):
    assert mlkem.ntt(f) == kyber_ntt(f)
    assert mlkem.intt(f) == ring()(list(f), is_ntt=True).from_ntt().coeffs


@needs_kyber_py
@pytest.mark.parametrize("name", EDGES)
def test_edge_values_match_kyber_py(name):
    f = EDGES[name]
    assert mlkem.ntt(f) == kyber_ntt(f)
    assert mlkem.intt(f) == ring()(list(f), is_ntt=True).from_ntt().coeffs
    assert mlkem.intt(mlkem.ntt(f)) == f


@needs_kyber_py
@given(polys, polys)
def test_multiply_ntts_matches_kyber_py(f_hat, g_hat):
    want = (ring()(list(f_hat), is_ntt=True) * ring()(list(g_hat), is_ntt=True)).coeffs
    assert mlkem.multiply_ntts(f_hat, g_hat) == want


@pytest.mark.parametrize("seed", range(3))
def test_ntt_product_is_the_schoolbook_product(seed):
    rng = random.Random(seed)
    f = [rng.choice((0, Q - 1, rng.randrange(Q))) for _ in range(N)]
    g = [rng.randrange(Q) for _ in range(N)]
    h_hat = mlkem.multiply_ntts(mlkem.ntt(f), mlkem.ntt(g))
    assert mlkem.intt(h_hat) == schoolbook(f, g)


@needs_kyber_py
def test_base_case_multiply_matches_kyber_py():
    rng = random.Random(7)
    for gamma in (GAMMAS[0], GAMMAS[1], GAMMAS[127]):
        a0, a1, b0, b1 = (rng.randrange(Q) for _ in range(4))
        want = ring().element_ntt._ntt_base_multiplication(a0, a1, b0, b1, gamma)
        assert mlkem.base_case_multiply(a0, a1, b0, b1, gamma) == want
    assert mlkem.base_case_multiply(Q - 1, Q - 1, Q - 1, Q - 1, Q - 1) == (0, 2)


# --- plain and Montgomery ----------------------------------------------------------------------
def montgomery_reduce(a: int) -> int:
    """The reference's montgomery_reduce: ``a 2^-16`` in ``(-q, q)``, with 16-bit wrap-around."""
    t = (a * -3327) & 0xFFFF  # QINV = q^-1 mod 2^16, as int16
    t = t - 0x10000 if t >= 0x8000 else t
    return (a - t * Q) >> 16


@given(st.lists(st.integers(-Q * 2**15, Q * 2**15 - 1), min_size=N, max_size=N))
def test_from_montgomery_is_the_reference_reduction(words):
    got = mlkem.from_montgomery(words)
    assert got == [montgomery_reduce(w) % Q for w in words]
    assert mlkem.to_montgomery(got) == [w % Q for w in words]


def test_montgomery_words_round_trip_and_take_numpy_int16():
    f = np.arange(N, dtype=np.int64) * 13 % Q
    words = np.array([w - Q if w > Q // 2 else w for w in mlkem.to_montgomery(f)], np.int16)
    assert mlkem.from_montgomery(words) == [int(x) for x in f]
    assert mlkem.to_montgomery([1] * N)[0] == MONT_R % Q == 2285


# --- key generation: NIST ACVP and kyber-py -----------------------------------------------------
@pytest.mark.parametrize("parameter_set,case", CASES, ids=[f"tcId={c['tcId']}" for _, c in CASES])
def test_keygen_matches_acvp(parameter_set, case):
    ek, dk = mlkem.keygen_internal(
        bytes.fromhex(case["d"]), bytes.fromhex(case["z"]), parameter_set
    )
    assert ek.hex().upper() == case["ek"]
    assert dk.hex().upper() == case["dk"]


@needs_kyber_py
@pytest.mark.parametrize("parameter_set,case", CASES, ids=[f"tcId={c['tcId']}" for _, c in CASES])
def test_acvp_keys_hold_small_secrets_under_rens_inverse_ntt(parameter_set, case):
    """Pure ring arithmetic on NIST's data: s = NTT^-1(s_hat), e = NTT^-1(t_hat - A_hat o s_hat)."""
    k, eta1 = mlkem.PARAMETER_SETS[parameter_set]
    ek, dk = bytes.fromhex(case["ek"]), bytes.fromhex(case["dk"])
    s_hat = [mlkem.byte_decode12(dk[384 * i : 384 * (i + 1)]) for i in range(k)]
    t_hat = [mlkem.byte_decode12(ek[384 * i : 384 * (i + 1)]) for i in range(k)]
    kem = {2: ML_KEM_512, 3: ML_KEM_768, 4: ML_KEM_1024}[k]
    a_hat = kem._generate_matrix_from_seed(ek[-32:])  # kyber-py's SampleNTT, the peer's A_hat
    for i in range(k):
        s = mlkem.intt(s_hat[i])
        e_hat = t_hat[i]
        for j in range(k):
            prod = mlkem.multiply_ntts(a_hat[i, j].coeffs, s_hat[j])
            e_hat = [(x - y) % Q for x, y in zip(e_hat, prod, strict=True)]
        for small in (s, mlkem.intt(e_hat)):
            assert all(min(c, Q - c) <= eta1 for c in small)


@needs_kyber_py
@pytest.mark.parametrize("seed", range(3))
def test_keygen_matches_kyber_py(seed):
    rng = random.Random(seed)
    d, z = rng.randbytes(32), rng.randbytes(32)
    for name, kem in (("ML-KEM-512", ML_KEM_512), ("ML-KEM-1024", ML_KEM_1024)):
        assert mlkem.keygen_internal(d, z, name) == kem._keygen_internal(d, z)


# --- errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call,error,words",
    [
        (lambda: mlkem.ntt([0] * 255), ValueError, "f has 255 coefficients"),
        (lambda: mlkem.ntt([Q] + [0] * 255), ValueError, "f[0] = 3329 is outside [0, 3329)"),
        (lambda: mlkem.ntt([-1] + [0] * 255), ValueError, "reduce first (x % 3329)"),
        (lambda: mlkem.intt("0" * 256), TypeError, "f_hat must be a list, tuple or 1-D"),
        (lambda: mlkem.ntt([0.0] * 256), TypeError, "f[0] is float 0.0"),
        (lambda: mlkem.ntt([True] * 256), TypeError, "not bool"),
        (lambda: mlkem.ntt(np.zeros(256)), TypeError, "NumPy array of float64"),
        (lambda: mlkem.ntt(np.zeros((2, 128), int)), ValueError, "shape (2, 128)"),
        (lambda: mlkem.multiply_ntts([0] * 256, [0] * 3), ValueError, "g_hat has 3"),
        (lambda: mlkem.from_montgomery(None), TypeError, "words must be a list"),
        (lambda: mlkem.base_case_multiply(1, 2, 3, 4.0, 5), TypeError, "b1 must be an int"),
        (lambda: mlkem.byte_decode12(b"\0" * 10), ValueError, "must be 384 bytes"),
        (lambda: mlkem.keygen_internal("00" * 32, bytes(32)), TypeError, "bytes.fromhex"),
        (lambda: mlkem.keygen_internal(bytes(31), bytes(32)), ValueError, "d must be 32 bytes"),
        (lambda: mlkem.keygen_internal(bytes(32), bytes(32), "Kyber768"), ValueError, "ML-KEM-768"),
        (lambda: mlkem.keygen_internal(bytes(32), bytes(32), 768), TypeError, "must be a str"),
    ],
)
def test_errors_name_the_argument_and_what_is_accepted(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert words in str(info.value)
