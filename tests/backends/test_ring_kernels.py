"""The NumPy ring kernels against Python big-integer arithmetic.

Oracles: ``pow`` and ``%`` for Montgomery arithmetic, a schoolbook negacyclic product for the NTT,
direct evaluation at ``psi**(2*brv(k)+1)`` for the NTT slot order, ``a(X**g)`` for automorphisms,
``floor(a_c/P + 1/2)`` for rescale, ``a_c mod p`` for basis change, and the CRT for ``crt``.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ren.ring import Domain, RingSpec, ntt_primes, primitive_root_2n
from ren.ring import arith as rk
from tests.oracles import automorphism, centered, crt, evaluate_at, negacyclic, slot_point
from tests.strategies import coeff_lists, rings

# --------------------------------------------------------------------------------------------
# Python oracles (the big-integer ones live in tests/oracles.py)


def check_words(ring: RingSpec, words: np.ndarray) -> None:
    """Stored words have the storage dtype, shape ``(L, n)``, and lie in ``[0, q_i)``."""
    assert words.dtype == ring.np_dtype and words.shape == (ring.L, ring.n)
    for row, q in zip(words.tolist(), ring.moduli, strict=True):
        assert max(row) < q


def limbs(ring: RingSpec, words: np.ndarray) -> list[list[int]]:
    """The plain residues of Montgomery words, as Python ints (after checking the words)."""
    check_words(ring, words)
    return rk.decode_limbs(ring, words).tolist()


def reduce(ring: RingSpec, coeffs: list[int]) -> list[list[int]]:
    return [[c % q for c in coeffs] for q in ring.moduli]


def random_residues(ring: RingSpec, seed: int) -> np.ndarray:
    """``(L, n)`` plain residues in ``[0, q_i)`` as uint64, with 0 and ``q_i - 1`` at slots 0, 1."""
    rng = np.random.default_rng(seed)
    out = np.stack([rng.integers(0, q, size=ring.n, dtype=np.int64) for q in ring.moduli])
    out[:, 0] = 0
    out[:, 1] = np.array(ring.moduli) - 1
    return out.astype(np.uint64)


def ring_id(ring: RingSpec) -> str:
    return f"N={ring.n}/limbs={ring.L}/{ring.dtype}"


def fixed_ring(n: int, limbs_: int, dtype: str) -> RingSpec:
    bits = 30 if dtype == "u32" else 60
    return RingSpec(n, ntt_primes(n, bits, limbs_), dtype)


FIXED = [fixed_ring(n, L, dt) for n, L, dt in [(2, 1, "u32"), (16, 2, "u64"), (256, 3, "u32")]]

# --------------------------------------------------------------------------------------------
# 128-bit products and Montgomery arithmetic

U64 = st.integers(0, 2**64 - 1) | st.sampled_from([0, 1, 2**32 - 1, 2**32, 2**63, 2**64 - 1])


@given(st.lists(st.tuples(U64, U64), min_size=1, max_size=64))
def test_mul_hi_lo_is_the_128_bit_product(pairs):
    a = np.array([x for x, _ in pairs], dtype=np.uint64)
    b = np.array([y for _, y in pairs], dtype=np.uint64)
    hi, lo = rk.mul_hi_lo(a, b)
    for (x, y), h, l in zip(pairs, hi.tolist(), lo.tolist(), strict=True):
        assert (h << 64) | l == x * y


@given(rings(max_n=512), st.integers(0, 2**32), st.integers(-(2**200), 2**200))
def test_montgomery_arithmetic_matches_python(ring, seed, c):
    R = 1 << ring.word_bits
    xs, ys = random_residues(ring, seed), random_residues(ring, seed + 1)
    xs_py, ys_py = xs.tolist(), ys.tolist()
    a = rk.to_mont(ring, xs.astype(ring.np_dtype))
    b = rk.to_mont(ring, ys.astype(ring.np_dtype))
    for out in (a, b):
        assert out.dtype == ring.np_dtype and out.shape == (ring.L, ring.n)
    for i, q in enumerate(ring.moduli):
        assert a[i].tolist() == [x * R % q for x in xs_py[i]]
    assert limbs(ring, a) == xs_py
    assert rk.from_mont(ring, b).tolist() == ys_py
    # the raw Montgomery product of plain words is x * y * R^-1
    raw = rk.mont_mul(ring, xs.astype(ring.np_dtype), ys.astype(ring.np_dtype)).tolist()
    for i, q in enumerate(ring.moduli):
        r_inv = pow(R, -1, q)
        assert raw[i] == [x * y * r_inv % q for x, y in zip(xs_py[i], ys_py[i], strict=True)]

    def check(words, f):
        expect = [
            [f(x, y, q) for x, y in zip(xr, yr, strict=True)]
            for xr, yr, q in zip(xs_py, ys_py, ring.moduli, strict=True)
        ]
        assert words.dtype == ring.np_dtype
        assert limbs(ring, words) == expect

    check(rk.mont_mul(ring, a, b), lambda x, y, q: x * y % q)
    check(rk.add(ring, a, b), lambda x, y, q: (x + y) % q)
    check(rk.sub(ring, a, b), lambda x, y, q: (x - y) % q)
    check(rk.neg(ring, a), lambda x, y, q: -x % q)
    check(rk.mul_scalar(ring, a, c), lambda x, y, q: x * c % q)


@pytest.mark.parametrize("ring", FIXED, ids=ring_id)
def test_kernels_leave_inputs_alone(ring):
    a = rk.encode_coeffs(ring, list(range(-3, ring.n - 3)))
    b = rk.encode_coeffs(ring, [7 * i * i - 5 for i in range(ring.n)])
    a0, b0 = a.copy(), b.copy()
    outs = [
        rk.mont_mul(ring, a, b),
        rk.add(ring, a, b),
        rk.sub(ring, a, b),
        rk.neg(ring, a),
        rk.mul_scalar(ring, a, -3),
        rk.to_mont(ring, a),
        rk.from_mont(ring, a),
        rk.ntt(ring, a),
        rk.intt(ring, a),
        rk.automorphism(ring, a, 3, Domain.COEFF),
        rk.automorphism(ring, a, 3, Domain.NTT),
    ]
    if ring.L > 1:
        outs.append(rk.rescale(ring, a, (ring.moduli[-1],)))
    outs.append(rk.base_convert(ring, a, ring.with_moduli(ring.moduli[:1])))
    assert (a == a0).all() and (b == b0).all()
    for out in outs:
        assert out is not a and out is not b and out.dtype == ring.np_dtype
        assert out.shape[1] == ring.n and int(out.max()) < max(ring.moduli)
        assert not np.shares_memory(out, a) and not np.shares_memory(out, b)


@pytest.mark.parametrize("ring", FIXED, ids=ring_id)
def test_bad_shapes_and_scalars_raise(ring):
    a = rk.encode_coeffs(ring, [1] * ring.n)
    with pytest.raises(ValueError, match=r"RingSpec\(n="):
        rk.mont_mul(ring, a, a[:, :-1])
    with pytest.raises(ValueError, match=r"RingSpec\(n="):
        rk.ntt(ring, a[None])
    with pytest.raises(TypeError, match="float"):
        rk.mul_scalar(ring, a, 1.5)
    with pytest.raises(TypeError, match="domain"):
        rk.automorphism(ring, a, 3, "ntt")


# --------------------------------------------------------------------------------------------
# encoding, decoding, CRT


@given(st.data())
def test_encode_and_crt_match_python(data):
    ring = data.draw(rings(max_n=1024))
    coeffs = data.draw(coeff_lists(ring))
    words = rk.encode_coeffs(ring, coeffs)
    assert words.dtype == ring.np_dtype and words.shape == (ring.L, ring.n)
    assert limbs(ring, words) == reduce(ring, coeffs)
    assert rk.crt(ring, words) == [c % ring.Q for c in coeffs]
    assert rk.crt(ring, words, centered=True) == [centered(c, ring.Q) for c in coeffs]
    # every accepted container gives the same words
    assert (rk.encode_coeffs(ring, tuple(coeffs)) == words).all()
    assert (rk.encode_coeffs(ring, np.array(coeffs, dtype=object)) == words).all()
    assert (
        rk.encode_coeffs(ring, [np.int64(c % 1000 - 500) for c in coeffs])
        == (rk.encode_coeffs(ring, [c % 1000 - 500 for c in coeffs]))
    ).all()


@given(rings(max_n=1024), st.integers(0, 2**32))
def test_crt_of_random_residues(ring, seed):
    res = random_residues(ring, seed)
    words = rk.to_mont(ring, res.astype(ring.np_dtype))
    got = rk.crt(ring, words)
    cols = res.T.tolist()
    assert got == [crt(col, ring.moduli) for col in cols]
    assert all(type(x) is int for x in got)
    Q = ring.Q
    assert rk.crt(ring, words, centered=True) == [centered(x, Q) for x in got]


INT64_EDGES = [0, 1, -1, 2**62, -(2**62), 2**63 - 1, -(2**63)]


@pytest.mark.parametrize("ring", FIXED, ids=ring_id)
def test_encode_numpy_integer_arrays(ring):
    n = ring.n
    signed = np.array([INT64_EDGES[i % len(INT64_EDGES)] for i in range(n)], dtype=np.int64)
    unsigned = np.array([(2**64 - 1 - i) if i % 2 else i for i in range(n)], dtype=np.uint64)
    huge = np.array([2**200 * (-1) ** i + i for i in range(n)], dtype=object)
    for arr in (signed, unsigned, signed.astype(np.int8), unsigned.astype(np.uint32), huge):
        assert limbs(ring, rk.encode_coeffs(ring, arr)) == reduce(ring, arr.tolist())


@pytest.mark.parametrize("ring", FIXED, ids=ring_id)
@pytest.mark.parametrize(
    ("bad", "word"),
    [
        (lambda n: np.zeros(n, dtype=np.float64), "float64"),
        (lambda n: np.zeros(n, dtype=np.complex128), "complex128"),
        (lambda n: np.zeros(n, dtype=bool), "bool"),
        (lambda n: [0] * (n - 1) + [1.0], "float"),
        (lambda n: [0] * (n - 1) + [True], "bool"),
        (lambda n: [0] * (n - 1) + [np.float32(2)], "float32"),
    ],
    ids=["float-array", "complex-array", "bool-array", "float-in-list", "bool-in-list", "np-float"],
)
def test_encode_rejects_non_integers(ring, bad, word):
    with pytest.raises(TypeError, match=word):
        rk.encode_coeffs(ring, bad(ring.n))


@pytest.mark.parametrize("ring", FIXED, ids=ring_id)
def test_encode_rejects_wrong_length(ring):
    for coeffs in (
        [1] * (ring.n + 1),
        np.ones(ring.n - 1, dtype=np.int64),
        np.ones((1, ring.n), dtype=np.int64),
    ):
        with pytest.raises(ValueError, match=rf"{ring.n} coefficients for RingSpec\(n={ring.n}"):
            rk.encode_coeffs(ring, coeffs)
    with pytest.raises(TypeError, match="sequence"):
        rk.encode_coeffs(ring, 5)


# --------------------------------------------------------------------------------------------
# NTT


@given(st.data())
def test_ntt_slots_are_evaluations(data):
    ring = data.draw(rings(max_n=64))
    coeffs = data.draw(coeff_lists(ring))
    slots = limbs(ring, rk.ntt(ring, rk.encode_coeffs(ring, coeffs)))
    for i, q in enumerate(ring.moduli):
        a = [c % q for c in coeffs]
        psi = primitive_root_2n(q, ring.n)
        for k in range(ring.n):
            assert slots[i][k] == evaluate_at(a, slot_point(k, ring.n, q, psi), q)


@settings(max_examples=15)
@given(st.data())
def test_ntt_slots_spot_checks_large_n(data):
    ring = data.draw(rings(min_n=128, max_n=4096))
    coeffs = data.draw(coeff_lists(ring))
    slots = limbs(ring, rk.ntt(ring, rk.encode_coeffs(ring, coeffs)))
    rnd = random.Random(data.draw(st.integers(0, 2**32)))
    for i, q in enumerate(ring.moduli):
        a = [c % q for c in coeffs]
        psi = primitive_root_2n(q, ring.n)
        for k in [0, ring.n - 1, *rnd.sample(range(ring.n), 6)]:
            assert slots[i][k] == evaluate_at(a, slot_point(k, ring.n, q, psi), q)


@given(st.data())
def test_ntt_products_are_negacyclic(data):
    ring = data.draw(rings(max_n=64, max_limbs=4))
    a = data.draw(coeff_lists(ring))
    b = data.draw(coeff_lists(ring))
    wa, wb = rk.encode_coeffs(ring, a), rk.encode_coeffs(ring, b)
    prod = rk.intt(ring, rk.mont_mul(ring, rk.ntt(ring, wa), rk.ntt(ring, wb)))
    assert limbs(ring, prod) == [
        negacyclic(x, y, q)
        for x, y, q in zip(reduce(ring, a), reduce(ring, b), ring.moduli, strict=True)
    ]


ROUND_TRIP = [
    fixed_ring(1 << k, L, dt)
    for k in range(1, 13)
    for L, dt in [(1 + k % 3, "u32"), (1 + (k + 1) % 4, "u64")]
]


@pytest.mark.parametrize("ring", ROUND_TRIP, ids=ring_id)
def test_intt_inverts_ntt(ring):
    words = rk.encode_coeffs(ring, [(-1) ** i * i**5 for i in range(ring.n)])
    slots = rk.ntt(ring, words)
    assert (rk.intt(ring, slots) == words).all()
    assert (rk.ntt(ring, rk.intt(ring, slots)) == slots).all()
    assert int(slots.max()) < max(ring.moduli)


@given(st.data())
def test_intt_inverts_ntt_random(data):
    ring = data.draw(rings())
    words = rk.encode_coeffs(ring, data.draw(coeff_lists(ring)))
    assert (rk.intt(ring, rk.ntt(ring, words)) == words).all()


# --------------------------------------------------------------------------------------------
# automorphisms

galois = st.integers(-(2**20), 2**20).map(lambda g: 2 * g + 1)


@given(st.data(), galois)
def test_automorphism_is_x_to_the_g(data, g):
    ring = data.draw(rings(max_n=1024))
    coeffs = data.draw(coeff_lists(ring))
    words = rk.encode_coeffs(ring, coeffs)
    out = rk.automorphism(ring, words, g, Domain.COEFF)
    assert out.dtype == ring.np_dtype
    assert limbs(ring, out) == reduce(ring, automorphism(coeffs, g % (2 * ring.n)))
    # in NTT form it is the slot permutation
    got = rk.automorphism(ring, rk.ntt(ring, words), g, Domain.NTT)
    assert (got == rk.ntt(ring, out)).all()


# --------------------------------------------------------------------------------------------
# rescale


def near_ties(P: int, Q: int, rnd: random.Random) -> list[int]:
    """Centered values next to the rounding boundaries of ``/P`` (``P`` is odd: no exact ties)."""
    h = (P - 1) // 2
    out = []
    for _ in range(4):
        k = rnd.randrange(-(Q // P) // 2, (Q // P) // 2)
        out += [k * P + h, k * P + h + 1, k * P - h, k * P - h - 1, k * P]
    return [v for v in out if -(Q // 2) <= v <= Q // 2]


@given(st.data())
def test_rescale_rounds_half_up(data):
    ring = data.draw(rings(max_n=512, min_limbs=2))
    count = data.draw(st.integers(1, min(2, ring.L - 1)))
    drop = tuple(data.draw(st.permutations(ring.moduli))[:count])
    coeffs = data.draw(coeff_lists(ring))
    P, Q = 1, ring.Q
    for p in drop:
        P *= p
    extra = near_ties(P, Q, random.Random(data.draw(st.integers(0, 2**32))))[: ring.n]
    coeffs[: len(extra)] = extra
    out_ring = ring.with_moduli(tuple(q for q in ring.moduli if q not in drop))
    out = rk.rescale(ring, rk.encode_coeffs(ring, coeffs), drop)
    assert out.dtype == out_ring.np_dtype and out.shape == (out_ring.L, ring.n)
    expect = [(2 * centered(c, Q) + P) // (2 * P) for c in coeffs]  # floor(a_c/P + 1/2)
    assert limbs(out_ring, out) == reduce(out_ring, expect)


@pytest.mark.parametrize("ring", [r for r in FIXED if r.L > 1], ids=ring_id)
def test_rescale_rejects_bad_moduli(ring):
    a = rk.encode_coeffs(ring, [0] * ring.n)
    with pytest.raises(ValueError, match="not a modulus"):
        rk.rescale(ring, a, (7,))
    with pytest.raises(ValueError, match="no modulus"):
        rk.rescale(ring, a, ring.moduli)
    with pytest.raises(ValueError, match="repeat"):
        rk.rescale(ring, a, (ring.moduli[0], ring.moduli[0]))


# --------------------------------------------------------------------------------------------
# basis change


@st.composite
def targets(draw: st.DrawFn, ring: RingSpec) -> RingSpec:
    """A ring of the same n sharing some of ``ring``'s moduli, with fresh ones, in either dtype."""
    dtype = draw(st.sampled_from(["u32", "u64"]))
    limit = 1 << (30 if dtype == "u32" else 62)
    shared = [q for q in draw(st.permutations(ring.moduli)) if q < limit]
    shared = shared[: draw(st.integers(0, len(shared)))]
    log_n = ring.n.bit_length() - 1
    bits = draw(st.integers(log_n + 9, 30 if dtype == "u32" else 62))
    fresh = [p for p in ntt_primes(ring.n, bits, 3 + ring.L) if p not in ring.moduli]
    fresh = fresh[: draw(st.integers(0 if shared else 1, 3))]
    moduli = draw(st.permutations(shared + fresh))
    return RingSpec(ring.n, tuple(moduli), dtype)


@given(st.data())
def test_base_convert_keeps_the_centered_value(data):
    ring = data.draw(rings(max_n=512))
    target = data.draw(targets(ring))
    coeffs = data.draw(coeff_lists(ring, away_from_half=True))
    out = rk.base_convert(ring, rk.encode_coeffs(ring, coeffs), target)
    assert out.dtype == target.np_dtype and out.shape == (target.L, ring.n)
    assert limbs(target, out) == reduce(target, [centered(c, ring.Q) for c in coeffs])


def test_base_convert_rejects_another_degree():
    ring, other = fixed_ring(8, 2, "u32"), fixed_ring(16, 2, "u32")
    with pytest.raises(ValueError, match="n differ"):
        rk.base_convert(ring, rk.encode_coeffs(ring, [0] * 8), other)


@given(st.lists(st.tuples(U64, U64), max_size=40))
def test_mul_hi_is_the_high_word(pairs):
    a = np.array([x for x, _ in pairs], dtype=np.uint64)
    b = np.array([y for _, y in pairs], dtype=np.uint64)
    assert rk.mul_hi(a, b).tolist() == [(x * y) >> 64 for x, y in pairs]


@pytest.mark.parametrize("bits", [30, 60, 62])
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_shoup_product_is_the_modular_product(bits: int, data):
    """``v * w mod q`` by Shoup's precomputed quotient, against Python integers."""
    word = 32 if bits <= 30 else 64
    q = ntt_primes(16, bits, 1)[0]
    edges = st.sampled_from([0, 1, 2, q - 2, q - 1])
    residues = st.one_of(edges, st.integers(0, q - 1))
    w = data.draw(residues)
    vs = data.draw(st.lists(residues, min_size=1, max_size=32))
    v = np.array(vs, dtype=np.uint64)
    w_shoup = np.uint64((w << word) // q)
    got = rk._shoup_mul(v, np.uint64(w), w_shoup, np.uint64(q), word)
    assert got.tolist() == [x * w % q for x in vs]


@pytest.mark.parametrize("bits", [30, 60])
def test_ntt_twiddles_in_shoup_form_are_the_plain_twiddles(bits: int):
    ring = RingSpec(16, ntt_primes(16, bits, 2))
    R = 1 << ring.word_bits
    psi, psi_shoup, ipsi, ipsi_shoup = rk._shoup_twiddles(ring)
    tab = ring.tables()
    for i, q in enumerate(ring.moduli):
        for mont, plain, shoup in (
            (tab.psi_rev, psi, psi_shoup),
            (tab.psi_inv_rev, ipsi, ipsi_shoup),
        ):
            assert plain[i].tolist() == [int(x) * pow(R, -1, q) % q for x in mont[i].tolist()]
            assert shoup[i].tolist() == [(int(w) << ring.word_bits) // q for w in plain[i].tolist()]
