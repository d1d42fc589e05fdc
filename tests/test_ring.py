"""``ren.ring`` against number theory done independently with Python integers.

Oracles: a sieve of Eratosthenes and trial division for small primes, Fermat tests with several
bases for large ones (never ``ren.ring.is_prime``); primitive roots by brute force; Montgomery
constants from their defining congruences; automorphisms by sending ``a_i X^i`` to ``a_i X^(i*g)``
with ``X^n = -1``, and NTT slots by direct evaluation at the odd powers of ``psi`` (the last two
and bit reversal from ``tests/oracles.py``).
"""

from __future__ import annotations

import dataclasses
import math
import random
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ren.ring import (
    Domain,
    RingSpec,
    automorphism_coeff_table,
    automorphism_ntt_table,
    bit_reverse,
    galois_for_rotation,
    ntt_primes,
    primitive_root_2n,
)
from ren.ring.tables import lift_exact, lift_threshold
from tests.oracles import automorphism, brv, ntt_slots, slot_point, smallest_root_brute

# --------------------------------------------------------------------------------------------
# independent oracles


def sieve(limit: int) -> bytearray:
    """``flags[x] == 1`` exactly when ``x < limit`` is prime (Eratosthenes)."""
    flags = bytearray([1]) * limit
    flags[0:2] = b"\x00\x00"
    for p in range(2, int(limit**0.5) + 1):
        if flags[p]:
            flags[p * p :: p] = bytes(len(range(p * p, limit, p)))
    return flags


def is_prime_trial(x: int) -> bool:
    """Trial division (for ``x`` up to a few million)."""
    if x < 2:
        return False
    d = 2
    while d * d <= x:
        if x % d == 0:
            return False
        d += 1
    return True


FERMAT_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23)


def probably_prime(x: int) -> bool:
    """Fermat test to several bases (plus small-factor trial division)."""
    if x < 2:
        return False
    for p in FERMAT_BASES:
        if x % p == 0:
            return x == p
    return all(pow(a, x - 1, x) == 1 for a in FERMAT_BASES)


def next_ntt_prime_above(x: int, n: int) -> int:
    """The smallest (Fermat-)prime ``q > x`` with ``q = 1 (mod 2n)``."""
    q = x - x % (2 * n) + 1
    while q <= x or not probably_prime(q):
        q += 2 * n
    return q


def names(value: object, rule: str) -> str:
    """A ``match`` pattern: the message contains ``value`` (as a token) and matches ``rule``."""
    return rf"^(?=.*(?<![\w]){re.escape(str(value))}(?![\w]))(?=.*{rule})"


RING_17_97 = RingSpec(8, (17, 97))
RING_30 = RingSpec(16, ntt_primes(16, 30, 3))
RING_60 = RingSpec(8, ntt_primes(8, 60, 2))
RINGS = [
    pytest.param(RING_17_97, id="N=8/q=17,97"),
    pytest.param(RING_30, id="N=16/limbs=3/30bit"),
    pytest.param(RING_60, id="N=8/limbs=2/60bit"),
    pytest.param(RingSpec(32, ntt_primes(32, 20, 2), "u64"), id="N=32/limbs=2/u64-small"),
]

# --------------------------------------------------------------------------------------------
# RingSpec: value semantics


def test_ringspec_is_frozen():
    ring = RingSpec(8, (17, 97))
    with pytest.raises(dataclasses.FrozenInstanceError):
        ring.n = 16  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ring.moduli = (17,)  # type: ignore[misc]


def test_ringspec_equal_specs_hash_equal():
    a = RingSpec(8, (17, 97))
    b = RingSpec(8, [17, 97])
    c = RingSpec(np.int64(8), (np.int64(17), np.uint32(97)), "u32")
    assert a == b == c
    assert hash(a) == hash(b) == hash(c)
    assert {a: "x"}[c] == "x"
    assert isinstance(b.moduli, tuple) and all(type(q) is int for q in c.moduli)
    assert type(c.n) is int
    assert a != RingSpec(8, (97, 17))  # the order of the limbs matters
    assert a != RingSpec(8, (17, 97), "u64")
    assert a != RingSpec(16, (97,)) and a != RingSpec(8, (17,))


def test_ringspec_derived_sizes():
    moduli = ntt_primes(16, 30, 3)
    ring = RingSpec(16, moduli)
    product = 1
    for q in moduli:
        product *= q
    assert product == ring.Q
    assert RingSpec(8, (17, 97)).Q == 1649
    assert ring.L == 3 and ring.size == 48
    assert ring.word_bits == 32 and ring.np_dtype is np.uint32
    assert RING_60.word_bits == 64 and RING_60.np_dtype is np.uint64


def test_default_dtype_is_smallest_that_fits():
    below = ntt_primes(8, 30, 2)  # the largest primes below 2**30
    above = next_ntt_prime_above(2**30, 8)  # the smallest one above
    assert all(q < 2**30 for q in below) and 2**30 < above < 2**31
    assert RingSpec(8, below).dtype == "u32"
    assert RingSpec(8, (17, 97)).dtype == "u32"
    assert RingSpec(8, (above,)).dtype == "u64"
    assert RingSpec(8, (17, above)).dtype == "u64"  # one big modulus decides
    assert RingSpec(8, ntt_primes(8, 62, 1)).dtype == "u64"


def test_explicit_dtype_is_honoured():
    assert RingSpec(8, (17, 97), "u64").dtype == "u64"
    assert RingSpec(8, (17, 97), "u32").dtype == "u32"
    assert RingSpec(8, (17, 97), dtype="u64").word_bits == 64


# --------------------------------------------------------------------------------------------
# RingSpec: errors name the value and the rule


@pytest.mark.parametrize("n", [6, 1, 0, -8, 12, 1000], ids=lambda n: f"n={n}")
def test_n_not_power_of_two(n):
    with pytest.raises(ValueError, match=names(n, "power of two")):
        RingSpec(n, (17,))


def test_n_not_int():
    with pytest.raises(TypeError, match="float"):
        RingSpec(8.0, (17,))
    with pytest.raises(TypeError):
        RingSpec(True, (17,))


@pytest.mark.parametrize(
    ("moduli", "bad", "rule"),
    [
        ((17, 33), 33, "not prime"),  # 33 = 1 mod 16 but 3 * 11
        ((17, 97 * 113), 97 * 113, "not prime"),
        ((1,), 1, "not prime"),
        ((17, 19), 19, r"1 mod 2n=16"),  # prime, but 18 is not a multiple of 16
        ((17, 41), 41, r"1 mod 2n=16"),  # 41 = 1 mod 8 only
        ((17, 97, 17), 17, "repeated"),
        ((97, 97), 97, "repeated"),
    ],
    ids=["composite33", "composite97x113", "one", "19", "41", "repeat17", "repeat97"],
)
def test_bad_modulus(moduli, bad, rule):
    with pytest.raises(ValueError, match=names(bad, rule)):
        RingSpec(8, moduli)


def test_modulus_too_large_for_dtype():
    q40 = ntt_primes(8, 41, 1)[0]
    assert 2**40 < q40 < 2**41
    with pytest.raises(ValueError, match=names(q40, r"u32.*2\*\*30")):
        RingSpec(8, (17, q40), "u32")
    just_above = next_ntt_prime_above(2**30, 8)
    with pytest.raises(ValueError, match=names(just_above, "u32")):
        RingSpec(8, (just_above,), "u32")
    huge = next_ntt_prime_above(2**62, 8)  # the smallest NTT prime at or above 2**62
    for dtype in (None, "u64", "u32"):
        with pytest.raises(ValueError, match=names(huge, r"too large")):
            RingSpec(8, (huge,), dtype)


def test_empty_moduli():
    with pytest.raises(ValueError, match="empty"):
        RingSpec(8, ())
    with pytest.raises(ValueError, match="empty"):
        RingSpec(8, [])


@pytest.mark.parametrize("dtype", ["u16", "u128", "uint32", "U32"])
def test_unknown_dtype(dtype):
    with pytest.raises(ValueError, match=names(repr(dtype), "u32")):
        RingSpec(8, (17, 97), dtype)


def test_moduli_as_an_int_is_a_type_error():
    with pytest.raises(TypeError, match="17"):
        RingSpec(8, 17)
    with pytest.raises(TypeError):
        RingSpec(8, np.int64(17))


@pytest.mark.parametrize("bad", [17.0, 17.9, "17", True, None], ids=repr)
def test_non_int_modulus_is_a_type_error(bad):
    # int(17.9) == 17: a float must not be truncated into a different ring
    with pytest.raises(TypeError, match="moduli must be ints"):
        RingSpec(8, (97, bad))
    if isinstance(bad, str):
        with pytest.raises(TypeError):
            RingSpec(8, bad)


@pytest.mark.parametrize(
    "moduli",
    ["17", b"\x11", None, {17, 97}, {17: 0}, 17.0],
    ids=["str", "bytes", "None", "set", "dict", "float"],
)
def test_moduli_not_a_sequence_is_a_type_error(moduli):
    # a set has no limb order; text and bytes iterate as characters or small ints
    with pytest.raises(TypeError, match=r"moduli must be a sequence of ints"):
        RingSpec(8, moduli)


def test_moduli_from_any_ordered_iterable():
    assert RingSpec(8, iter([17, 97])) == RingSpec(8, np.array([17, 97])) == RingSpec(8, (17, 97))


@pytest.mark.parametrize("dtype", [32, ["u32"], b"u32", np.uint32], ids=repr)
def test_dtype_not_a_string_is_a_type_error(dtype):
    with pytest.raises(TypeError, match=r"dtype must be 'u32', 'u64' or None"):
        RingSpec(8, (17, 97), dtype)


# --------------------------------------------------------------------------------------------
# ntt_primes


def check_ntt_primes(n: int, bits: int, count: int, primes: tuple[int, ...], prime) -> None:
    assert len(primes) == count
    assert list(primes) == sorted(primes, reverse=True) and len(set(primes)) == count
    for q in primes:
        assert q < 2**bits
        assert q % (2 * n) == 1
        assert prime(q), q
    # the count largest: no candidate is skipped above the first or between two results
    for hi, lo in zip((2**bits, *primes), primes, strict=False):
        for cand in range(lo + 2 * n, hi, 2 * n):
            assert not prime(cand), f"{cand} is a prime = 1 mod {2 * n} that was skipped"


SMALL_SIEVE = sieve(2**20)


@pytest.mark.parametrize(
    ("n", "bits", "count"),
    SMALL_CASES := [
        (2, 12, 10),
        (8, 12, 5),
        (16, 14, 8),
        (64, 16, 6),
        (8, 20, 12),
        (1024, 20, 4),
        (4, 5, 1),
    ],
    ids=[f"N={n}/bits={b}/count={c}" for n, b, c in SMALL_CASES],
)
def test_ntt_primes_small_against_sieve(n, bits, count):
    primes = ntt_primes(n, bits, count)
    check_ntt_primes(n, bits, count, primes, lambda x: bool(SMALL_SIEVE[x]))
    # and they are exactly the top of the sieve's list
    expected = [q for q in reversed(range(1, 2**bits, 2 * n)) if SMALL_SIEVE[q]]
    assert list(primes) == expected[:count]


@given(
    log_n=st.integers(1, 8),
    bits=st.integers(12, 20),
    count=st.integers(1, 4),
)
@settings(max_examples=20)
def test_ntt_primes_small_property(log_n, bits, count):
    n = 1 << log_n
    expected = [q for q in reversed(range(1, 2**bits, 2 * n)) if SMALL_SIEVE[q]]
    if len(expected) < count:
        with pytest.raises(ValueError):
            ntt_primes(n, bits, count)
    else:
        assert list(ntt_primes(n, bits, count)) == expected[:count]


@pytest.mark.parametrize(
    ("n", "bits", "count"),
    LARGE_CASES := [
        (8, 30, 4),
        (16, 30, 3),
        (4096, 30, 3),
        (8, 40, 3),
        (8, 60, 3),
        (2048, 62, 3),
        (32768, 55, 2),
    ],
    ids=[f"N={n}/bits={b}/count={c}" for n, b, c in LARGE_CASES],
)
def test_ntt_primes_large_fermat(n, bits, count):
    primes = ntt_primes(n, bits, count)
    check_ntt_primes(n, bits, count, primes, probably_prime)


def test_ntt_primes_not_enough():
    # below 2**12 the only candidate = 1 mod 2048 is 2049 = 3 * 683
    with pytest.raises(ValueError, match=r"2\*\*12.*5"):
        ntt_primes(1024, 12, 5)
    assert ntt_primes(8, 5, 1) == (17,)  # the only candidate below 2**5 = 1 mod 16
    with pytest.raises(ValueError, match="2n=32"):
        ntt_primes(16, 5, 1)  # no candidate at all: 33 > 2**5
    n_candidates_20 = sum(1 for q in range(1, 2**20, 2 * 8) if SMALL_SIEVE[q])
    with pytest.raises(ValueError, match=str(n_candidates_20 + 1)):
        ntt_primes(8, 20, n_candidates_20 + 1)
    assert len(ntt_primes(8, 20, n_candidates_20)) == n_candidates_20


@pytest.mark.parametrize("bits", [0, 1, 63, 64, -5])
def test_ntt_primes_bad_bits(bits):
    with pytest.raises(ValueError, match=names(f"bits={bits}", "62")):
        ntt_primes(8, bits, 1)


@pytest.mark.parametrize("count", [0, -1])
def test_ntt_primes_bad_count(count):
    with pytest.raises(ValueError, match=names(f"count={count}", "at least 1")):
        ntt_primes(8, 30, count)


def test_ntt_primes_bad_types():
    with pytest.raises(TypeError, match="count"):
        ntt_primes(8, 30, 2.5)
    with pytest.raises(TypeError, match="bits"):
        ntt_primes(8, 30.0, 2)
    with pytest.raises(TypeError, match="bits"):
        ntt_primes(8, True, 1)
    with pytest.raises(ValueError, match="n=6"):
        ntt_primes(6, 30, 1)


# --------------------------------------------------------------------------------------------
# primitive_root_2n


@pytest.mark.parametrize(("q", "n"), [(17, 8), (97, 8)])
def test_primitive_root_known_small(q, n):
    expected = smallest_root_brute(q, n)
    assert primitive_root_2n(q, n) == expected
    # (the values docs/rings.md quotes; computed above by brute force)
    assert expected == {17: 3, 97: 8}[q]


SMALL_NTT_PRIMES = [
    (q, n)
    for n in (2, 4, 8, 16, 32)
    for q in range(3, 6000)
    if q % (2 * n) == 1 and is_prime_trial(q)
]


@given(st.sampled_from(SMALL_NTT_PRIMES))
@settings(max_examples=30)
def test_primitive_root_smallest_brute_force(qn):
    q, n = qn
    psi = primitive_root_2n(q, n)
    assert pow(psi, n, q) == q - 1
    assert pow(psi, 2 * n, q) == 1
    assert psi == smallest_root_brute(q, n)


@pytest.mark.parametrize(
    ("n", "bits"),
    ROOT_CASES := [(8, 30), (16, 30), (4096, 30), (8, 60), (1024, 62)],
    ids=[f"N={n}/bits={b}" for n, b in ROOT_CASES],
)
def test_primitive_root_large(n, bits):
    for q in ntt_primes(n, bits, 2):
        psi = primitive_root_2n(q, n)
        assert 1 < psi < q
        assert pow(psi, n, q) == q - 1 and pow(psi, 2 * n, q) == 1
        # every primitive 2n-th root is psi**j for odd j; psi is the smallest of them
        roots = {pow(psi, j, q) for j in range(1, 2 * n, 2)}
        assert len(roots) == n
        assert psi == min(roots)


def test_primitive_root_errors():
    with pytest.raises(ValueError, match=names(19, "1 mod 2n=16")):
        primitive_root_2n(19, 8)
    with pytest.raises(ValueError, match=names(33, "not prime")):
        primitive_root_2n(33, 8)


# --------------------------------------------------------------------------------------------
# tables


@pytest.mark.parametrize("ring", RINGS)
def test_montgomery_constants(ring):
    tab = ring.tables()
    R = 2**ring.word_bits
    assert tab.ring == ring and len(tab.mods) == ring.L
    for i, q in enumerate(ring.moduli):
        q_inv, r2, one = int(tab.q_inv[i, 0]), int(tab.r2[i, 0]), int(tab.one[i, 0])
        assert int(tab.q[i, 0]) == q
        assert q * q_inv % R == 1 and 0 <= q_inv < R
        assert r2 == R * R % q
        assert one == R % q
        n_inv_mont = int(tab.n_inv_mont[i, 0])
        assert n_inv_mont < q and n_inv_mont * ring.n % q == R % q  # n**-1 * R
        m = tab.mods[i]
        assert (m.q, m.n, m.word_bits) == (q, ring.n, ring.word_bits)
        assert m.psi * m.psi_inv % q == 1 and m.n_inv * ring.n % q == 1
        assert m.to_mont(-1) == (q - 1) * R % q and m.to_mont(q + 5) == 5 * R % q
    for arr in (tab.q, tab.q_inv, tab.r2, tab.one, tab.n_inv_mont):
        assert arr.shape == (ring.L, 1)


@pytest.mark.parametrize("ring", RINGS)
def test_twiddle_tables(ring):
    tab = ring.tables()
    R = 2**ring.word_bits
    bits = ring.n.bit_length() - 1
    assert tab.psi_rev.shape == tab.psi_inv_rev.shape == (ring.L, ring.n)
    assert list(tab.brv) == [brv(k, bits) for k in range(ring.n)]
    for i, q in enumerate(ring.moduli):
        psi = tab.mods[i].psi
        assert pow(psi, ring.n, q) == q - 1
        psi_inv = pow(psi, -1, q)
        for k in range(ring.n):
            assert int(tab.psi_rev[i, k]) == pow(psi, brv(k, bits), q) * R % q
            assert int(tab.psi_inv_rev[i, k]) == pow(psi_inv, brv(k, bits), q) * R % q


def test_tables_are_cached_and_read_only():
    ring = RingSpec(16, ntt_primes(16, 30, 3))
    assert ring.tables() is ring.tables()
    assert RingSpec(16, ntt_primes(16, 30, 3)).tables() is ring.tables()  # keyed by value
    for arr in (ring.tables().psi_rev, ring.tables().q, ring.tables().brv):
        with pytest.raises(ValueError):
            arr[0] = 1


# --------------------------------------------------------------------------------------------
# automorphisms


def apply_coeff_table(a: list[int], n: int, g: int, q: int) -> list[int]:
    dest, negate = automorphism_coeff_table(n, g)
    out = [None] * n
    for i, c in enumerate(a):
        out[int(dest[i])] = (-c if negate[i] else c) % q
    assert None not in out  # a permutation
    return out


@pytest.mark.parametrize("n", [2, 4, 8, 16, 32])
def test_automorphism_coeff_table_is_substitution(n):
    rnd = random.Random(n)
    q = ntt_primes(n, 30, 1)[0]
    galois = list(range(1, 2 * n, 2)) if n <= 8 else rnd.sample(range(1, 2 * n, 2), 6)
    for g in galois:
        a = [rnd.randrange(q) for _ in range(n)]
        assert apply_coeff_table(a, n, g, q) == automorphism(a, g, q), g
        # g is taken mod 2n (and numpy ints are fine)
        assert apply_coeff_table(a, n, g + 2 * n, q) == apply_coeff_table(a, n, g, q)
        assert apply_coeff_table(a, n, np.int64(g), q) == apply_coeff_table(a, n, g, q)


@pytest.mark.parametrize("n", [2, 4, 8, 16, 32])
def test_automorphism_ntt_table_permutes_slots(n):
    rnd = random.Random(100 + n)
    for q in (ntt_primes(n, 14, 1)[0], ntt_primes(n, 60, 1)[0]):
        # psi by brute force where that is cheap; else the (separately tested) library root
        psi = smallest_root_brute(q, n) if q < 2**14 else primitive_root_2n(q, n)
        galois = list(range(1, 2 * n, 2)) if n <= 8 else rnd.sample(range(1, 2 * n, 2), 5)
        for g in galois:
            perm = automorphism_ntt_table(n, g)
            assert sorted(int(p) for p in perm) == list(range(n))
            a = [rnd.randrange(q) for _ in range(n)]
            before = ntt_slots(a, q, psi)
            after = ntt_slots(automorphism(a, g, q), q, psi)
            assert after == [before[int(perm[k])] for k in range(n)], (q, g)


@pytest.mark.parametrize("g", [0, 2, 4, 16, 30, -2])
def test_even_galois_rejected(g):
    with pytest.raises(ValueError, match="even"):
        automorphism_coeff_table(16, g)
    with pytest.raises(ValueError, match="even"):
        automorphism_ntt_table(16, g)


def test_non_int_galois_rejected():
    for bad in (3.0, "3", True):
        with pytest.raises(TypeError):
            automorphism_coeff_table(8, bad)
        with pytest.raises(TypeError):
            automorphism_ntt_table(8, bad)


@pytest.mark.parametrize("n", [2, 4, 8, 16, 1024])
def test_galois_for_rotation(n):
    for r in range(-2 * n, 2 * n + 1) if n <= 16 else (-n, -3, -1, 0, 1, 5, n // 2 - 1, 7 * n):
        g = galois_for_rotation(n, r)
        assert g == pow(5, r, 2 * n), r
        assert g % 2 == 1 and 0 < g < 2 * n
        assert g * galois_for_rotation(n, -r) % (2 * n) == 1  # 5**r * 5**-r = 1
    assert galois_for_rotation(n, 0) == 1
    if n >= 4:
        assert galois_for_rotation(n, 1) == 5
        assert galois_for_rotation(n, n // 2) == 1  # 5 has order n/2 mod 2n


def test_conjugation_maps_x_to_x_inverse():
    n, q = 16, ntt_primes(16, 30, 1)[0]
    g = 2 * n - 1
    rnd = random.Random(7)
    a = [rnd.randrange(q) for _ in range(n)]
    conj = apply_coeff_table(a, n, g, q)
    assert conj == automorphism(a, g, q)
    # X^(2n-1) = X^-1 = -X^(n-1): coefficient 0 stays, coefficient i goes to n-i, negated
    assert conj == [a[0]] + [(-a[n - i]) % q for i in range(1, n)]
    # in NTT form: slot of root w goes to the slot of w**-1
    psi = primitive_root_2n(q, n)
    perm = automorphism_ntt_table(n, g)
    for k in range(n):
        w = slot_point(k, n, q, psi)
        w_src = slot_point(int(perm[k]), n, q, psi)
        assert w_src == pow(w, -1, q)
    # and it is an involution
    assert apply_coeff_table(conj, n, g, q) == a


# --------------------------------------------------------------------------------------------
# bit_reverse, contiguous_offset, with_moduli


@pytest.mark.parametrize("bits", [0, 1, 2, 3, 5, 10])
def test_bit_reverse(bits):
    values = [bit_reverse(k, bits) for k in range(2**bits)]
    assert values == [brv(k, bits) for k in range(2**bits)]
    assert sorted(values) == list(range(2**bits))
    assert all(bit_reverse(v, bits) == k for k, v in enumerate(values))


def test_bit_reverse_examples_and_range():
    assert bit_reverse(1, 3) == 4 and bit_reverse(6, 3) == 3 and bit_reverse(1, 10) == 512
    for k, bits in [(4, 2), (-1, 3), (1, 0), (8, 3)]:
        with pytest.raises(ValueError, match=names(f"k={k}", "outside")):
            bit_reverse(k, bits)


def test_contiguous_offset():
    m = ntt_primes(8, 30, 4)
    ring = RingSpec(8, m)
    assert ring.contiguous_offset(ring) == 0
    assert ring.contiguous_offset(RingSpec(8, m[:1])) == 0
    assert ring.contiguous_offset(RingSpec(8, m[1:3])) == 1
    assert ring.contiguous_offset(RingSpec(8, m[2:])) == 2
    assert ring.contiguous_offset(RingSpec(8, m[3:])) == 3
    assert ring.contiguous_offset(RingSpec(8, (m[0], m[2]))) is None  # a subset, not a run
    assert ring.contiguous_offset(RingSpec(8, (m[2], m[1]))) is None  # reversed
    assert ring.contiguous_offset(RingSpec(8, (*m, 17))) is None  # longer
    assert ring.contiguous_offset(RingSpec(8, (17,))) is None  # not a modulus of the ring
    assert ring.contiguous_offset(RingSpec(8, m[1:3], "u64")) is None  # another dtype
    assert RingSpec(4, m).contiguous_offset(RingSpec(8, m[1:2])) is None  # another n
    assert RingSpec(4, m).contiguous_offset(RingSpec(4, m[1:2])) == 1


def test_with_moduli():
    m = ntt_primes(8, 30, 3)
    big = ntt_primes(8, 60, 1)[0]
    ring = RingSpec(8, m)
    sub = ring.with_moduli(m[1:])
    assert sub == RingSpec(8, m[1:]) and sub.dtype == "u32"
    assert ring.with_moduli([m[2], m[0]]).moduli == (m[2], m[0])
    # a u64 ring keeps u64 for small moduli; a u32 ring grows to u64 for a big one
    assert RingSpec(8, m, "u64").with_moduli(m[:1]).dtype == "u64"
    grown = ring.with_moduli((*m, big))
    assert grown.dtype == "u64" and grown.moduli == (*m, big)
    assert ring.with_moduli(m) == ring
    with pytest.raises(ValueError, match=names(33, "not prime")):
        ring.with_moduli((17, 33))


def test_domain_and_repr():
    assert repr(Domain.NTT) == "Domain.NTT" and Domain.COEFF.value == "coeff"
    ring = RingSpec(8, (17, 97))
    assert eval(repr(ring)) == ring  # our own repr, round trip
    assert ring.short() == "n=8 L=2 u32"


def test_a_ring_pickles_without_its_cached_hash():
    # the hash is cached per process (it hashes the dtype, a string); a pickle must not carry it
    import pickle

    from ren.ir.node import RingArg
    from ren.ring import Domain

    ring = RingSpec(16, [97, 193])
    arg = RingArg(ring, Domain.NTT)
    assert hash(arg) == hash(RingArg(RingSpec(16, [97, 193]), Domain.NTT))
    for value in (ring, arg):
        back = pickle.loads(pickle.dumps(value))
        assert "_hash" in value.__dict__ and "_hash" not in back.__dict__
        assert back == value and hash(back) == hash(value)


@pytest.mark.parametrize("q", [3, 5, 97, 2**31 - 1, ntt_primes(256, 44, 1)[0], 2**61 - 1])
def test_the_lift_threshold_is_where_the_float_rounding_turns_to_one(q):
    """``lift_threshold``: a one-limb basis change's ``v`` is 0 just below it and 1 at it.

    The oracle is the float64 expression itself, evaluated with Python floats (IEEE doubles, as
    NumPy's and C's), on both sides; where doubles hold ``q`` exactly it is ``y > q/2``.
    """
    t = lift_threshold(q)

    def v(y: int) -> int:
        return math.floor(float(y) / float(q) + 0.5)

    assert v(t) == 1 and v(t - 1) == 0
    assert (
        q // 2 - 2**10 <= t <= q // 2 + 1
    )  # within float rounding of q/2 (exactly q/2 + 1 when small)
    if q < 2**52:
        assert t == q // 2 + 1  # exact in double: y / q + 1/2 >= 1 iff y > q/2


def test_a_one_limb_lift_is_exact_below_52_bits_and_not_at_60():
    """``lift_exact``: the float correction is the comparison with ``q/2`` for the moduli CKKS
    scales by, not for a 60-bit one (where ``(q - 1) / 2`` rounds to one half)."""
    for bits in (30, 40, 50, 52):
        assert lift_exact(ntt_primes(1024, bits, 1)[0])
    q = ntt_primes(1024, 60, 1)[0]
    assert not lift_exact(q)
    assert math.floor(float((q - 1) // 2) / float(q) + 0.5) == 1  # the reason, in Python floats
