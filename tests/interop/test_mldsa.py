"""``ren.interop.mldsa``: FIPS 204's ring arithmetic through Ren, checked word for word.

Oracles, none of them Ren: dilithium-py (an independent pure-Python ML-DSA: its NTT, inverse
NTT, products, Power2Round, packing and key generation), Python big-integer schoolbook products
modulo ``X^256 + 1`` and evaluations at the roots ``zeta^(2 BitRev8(i) + 1)``, the pq-crystals
reference's Montgomery reduction and twiddle table, and NIST's ACVP keyGen vectors
(``tests/vectors/acvp``).
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
from ren.interop import mldsa
from ren.interop.mldsa import MONT_R, ZETA, ZETAS, N, Q
from ren.ring import bit_reverse
from tests.interop import ring256

try:
    from dilithium_py.ml_dsa import ML_DSA_44, ML_DSA_65, ML_DSA_87
    from dilithium_py.polynomials.polynomials import PolynomialRing
except ImportError:  # a test-only dependency (the dev extra)
    PolynomialRing = None

needs_dilithium_py = pytest.mark.skipif(
    PolynomialRing is None, reason="needs dilithium-py: pip install -e '.[dev]'"
)
ACVP = json.loads(
    (Path(__file__).resolve().parents[1] / "vectors/acvp/ML-DSA-keyGen-FIPS204.json").read_text()
)
CASES = [(g["parameterSet"], t) for g in ACVP["testGroups"] for t in g["tests"]]

polys = ring256.polys(Q)
EDGES = ring256.edges(Q, 32771)


def schoolbook(f: list[int], g: list[int]) -> list[int]:
    return ring256.schoolbook(f, g, Q)


def ring() -> PolynomialRing:
    return PolynomialRing()


def peer(parameter_set: str):
    return {"ML-DSA-44": ML_DSA_44, "ML-DSA-65": ML_DSA_65, "ML-DSA-87": ML_DSA_87}[parameter_set]


# --- the tables and the ring ------------------------------------------------------------------
def test_1753_is_the_smallest_primitive_512th_root_so_rens_root():
    roots = [x for x in range(2, ZETA + 1) if pow(x, 256, Q) == Q - 1]
    assert roots == [ZETA]
    assert mldsa.RING.tables().mods[0].psi == ZETA


@needs_dilithium_py
def test_zetas_are_dilithium_py_s():
    assert list(ZETAS) == ring().ntt_zetas


def test_pq_crystals_twiddles_are_the_montgomery_form_of_zetas():
    # entries 1 to 15 of `zetas` in the reference implementation's ref/ntt.c (entry 0 is unused)
    ref = [25847, -2608894, -518909, 237124, -777960, -876248, 466468, 1826347, 2353451]
    ref += [-359251, -2091905, 3119733, -2884855, 3111497, 2680103]
    assert mldsa.from_montgomery(ref + [0] * (N - 15))[:15] == list(ZETAS[1:16])


# --- NTT, inverse NTT and products -----------------------------------------------------------
@given(polys)
def test_ntt_entry_i_is_w_at_zeta_to_2_brv_i_plus_1(w):
    w_hat = mldsa.ntt(w)
    for i in (0, 1, 100, 255):
        x = pow(ZETA, 2 * bit_reverse(i, 8) + 1, Q)
        assert w_hat[i] == sum(c * pow(x, j, Q) for j, c in enumerate(w)) % Q


@needs_dilithium_py
@given(polys)
def test_ntt_and_inverse_match_dilithium_py(w):
    assert mldsa.ntt(w) == ring()(list(w)).to_ntt().coeffs
    assert mldsa.intt(w) == ring()(list(w), is_ntt=True).from_ntt().coeffs


@needs_dilithium_py
@pytest.mark.parametrize("name", EDGES)
def test_edge_values_match_dilithium_py(name):
    w = EDGES[name]
    assert mldsa.ntt(w) == ring()(list(w)).to_ntt().coeffs
    assert mldsa.intt(w) == ring()(list(w), is_ntt=True).from_ntt().coeffs
    assert mldsa.intt(mldsa.ntt(w)) == w


@needs_dilithium_py
@given(polys, polys)
def test_multiply_ntts_matches_dilithium_py(a_hat, b_hat):
    want = (ring()(list(a_hat), is_ntt=True) * ring()(list(b_hat), is_ntt=True)).coeffs
    assert mldsa.multiply_ntts(a_hat, b_hat) == want


@pytest.mark.parametrize("seed", range(3))
def test_ntt_product_is_the_schoolbook_product(seed):
    rng = random.Random(seed)
    f = [rng.choice((0, Q - 1, rng.randrange(Q))) for _ in range(N)]
    g = [rng.randrange(Q) for _ in range(N)]
    assert mldsa.intt(mldsa.multiply_ntts(mldsa.ntt(f), mldsa.ntt(g))) == schoolbook(f, g)


@needs_dilithium_py
def test_power2round_matches_dilithium_py():
    rng = random.Random(3)
    w = [0, 1, 4095, 4096, 4097, 8191, 8192, Q - 1, Q - 4096, Q - 4097]
    w += [rng.randrange(Q) for _ in range(N - len(w))]
    r1, r0 = ring()(list(w)).power_2_round(mldsa.D)
    assert [mldsa.power2round(c) for c in w] == list(zip(r1.coeffs, r0.coeffs, strict=True))


# --- plain and Montgomery ----------------------------------------------------------------------
def montgomery_reduce(a: int) -> int:
    """The reference's montgomery_reduce: ``a 2^-32`` in ``(-q, q)``, with 32-bit wrap-around."""
    t = (a * 58728449) & 0xFFFFFFFF  # QINV = q^-1 mod 2^32, as int32
    t = t - 2**32 if t >= 2**31 else t
    return (a - t * Q) >> 32


@given(st.lists(st.integers(-Q * 2**31, Q * 2**31), min_size=N, max_size=N))
def test_from_montgomery_is_the_reference_reduction(words):
    got = mldsa.from_montgomery(words)
    assert got == [montgomery_reduce(w) % Q for w in words]
    assert mldsa.to_montgomery(got) == [w % Q for w in words]


@given(polys)
def test_montgomery_words_are_rens_stored_words(w):
    stored = Poly.from_limbs(np.array([w], dtype=np.uint32), mldsa.RING).words()[0]
    assert mldsa.to_montgomery(w) == [int(x) for x in stored]
    assert mldsa.to_montgomery([1] * N)[0] == MONT_R % Q == 4193792


# --- key generation: NIST ACVP and dilithium-py -------------------------------------------------
@pytest.mark.parametrize("parameter_set,case", CASES, ids=[f"tcId={c['tcId']}" for _, c in CASES])
def test_keygen_matches_acvp(parameter_set, case):
    pk, sk = mldsa.keygen_internal(bytes.fromhex(case["seed"]), parameter_set)
    assert pk.hex().upper() == case["pk"]
    assert sk.hex().upper() == case["sk"]


@needs_dilithium_py
@pytest.mark.parametrize("parameter_set,case", CASES, ids=[f"tcId={c['tcId']}" for _, c in CASES])
def test_acvp_keys_satisfy_t_equals_a_s1_plus_s2_in_ren(parameter_set, case):
    """Pure ring arithmetic on NIST's data: t1 2^13 + t0 = NTT^-1(A_hat o NTT(s1)) + s2."""
    dsa = peer(parameter_set)
    rho, t1 = dsa._unpack_pk(bytes.fromhex(case["pk"]))  # dilithium-py's unpacking
    _, _, _, s1, s2, t0 = dsa._unpack_sk(bytes.fromhex(case["sk"]))
    a_hat = dsa._expand_matrix_from_seed(rho)  # dilithium-py's RejNTTPoly
    s1_hat = [mldsa.ntt([c % Q for c in p.coeffs]) for p in s1._data[0]]
    for r, (p1, p0, e) in enumerate(zip(t1._data[0], t0._data[0], s2._data[0], strict=True)):
        acc = [0] * N
        for s, s_hat in enumerate(s1_hat):
            prod = mldsa.multiply_ntts(a_hat[r, s].coeffs, s_hat)
            acc = [(x + y) % Q for x, y in zip(acc, prod, strict=True)]
        t = [(x + c) % Q for x, c in zip(mldsa.intt(acc), e.coeffs, strict=True)]
        assert t == [(h * 2**13 + lo) % Q for h, lo in zip(p1.coeffs, p0.coeffs, strict=True)]


@needs_dilithium_py
@pytest.mark.parametrize("seed", range(2))
def test_keygen_matches_dilithium_py(seed):
    xi = random.Random(seed).randbytes(32)
    for name in mldsa.PARAMETER_SETS:
        assert mldsa.keygen_internal(xi, name) == peer(name)._keygen_internal(xi)


# --- errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "call,error,words",
    [
        (lambda: mldsa.ntt([0] * 257), ValueError, "w has 257 coefficients"),
        (lambda: mldsa.ntt([Q] + [0] * 255), ValueError, "w[0] = 8380417 is outside"),
        (lambda: mldsa.intt(b"\0" * 256), TypeError, "w_hat must be a list, tuple or 1-D"),
        (lambda: mldsa.ntt([None] * 256), TypeError, "w[0] is NoneType None"),
        (lambda: mldsa.multiply_ntts([0] * 256, np.zeros(256, bool)), TypeError, "of bool"),
        (lambda: mldsa.to_montgomery([0] * 2), ValueError, "ML-DSA polynomials have 256"),
        (lambda: mldsa.power2round(1.5), TypeError, "r must be an int"),
        (lambda: mldsa.keygen_internal("00" * 32), TypeError, "bytes.fromhex"),
        (lambda: mldsa.keygen_internal(bytes(33)), ValueError, "xi must be 32 bytes, got 33"),
        (lambda: mldsa.keygen_internal(bytes(32), "Dilithium3"), ValueError, "ML-DSA-65"),
        (lambda: mldsa.keygen_internal(bytes(32), None), TypeError, "must be a str"),
    ],
)
def test_errors_name_the_argument_and_what_is_accepted(call, error, words):
    with pytest.raises(error) as info:
        call()
    assert words in str(info.value)
