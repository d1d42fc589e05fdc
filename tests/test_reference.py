"""The reference evaluator (``ren.reference``) against independent computations from definitions.

Inputs are built without the kernels: each leaf is an ``AS_RING(BUFFER)`` whose Montgomery words
this file computes with Python ints (coefficient form: ``(c mod q) * R mod q``; NTT form: slot
``k`` = ``a(psi**(2*brv(k)+1))``, then Montgomery-encoded). The expected values come from a
schoolbook negacyclic product, ``a(X^g)`` by sending ``a_i X^i`` to ``a_i X^(i*g)`` with
``X^n = -1``, centered representatives, and rounding with ``fractions.Fraction`` (the shared
oracles of ``tests/oracles.py``).
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ren.device import Buffer
from ren.ir.node import BufferArg, Node, RingArg, ViewArg
from ren.ir.op import DType, Op
from ren.poly import Poly
from ren.reference import crt, evaluate, evaluate_graph, expected_limbs, read_words
from ren.ring import Domain, RingSpec, ntt_primes, primitive_root_2n
from tests.oracles import (
    automorphism,
    centered,
    negacyclic,
    ntt_slots,
    rounded_div,
    smallest_root_brute,
)
from tests.strategies import coeff_lists

RING_SMALL = RingSpec(8, (17, 97))
RING_30 = RingSpec(16, ntt_primes(16, 30, 3))
RING_60 = RingSpec(8, ntt_primes(8, 60, 2))
RINGS = [
    pytest.param(RING_SMALL, id="N=8/q=17,97"),
    pytest.param(RING_30, id="N=16/limbs=3/30bit"),
    pytest.param(RING_60, id="N=8/limbs=2/60bit-u64"),
]
RING_LIST = [RING_SMALL, RING_30, RING_60]

# --------------------------------------------------------------------------------------------
# oracles with Python ints (the shared ones live in tests/oracles.py)


def smallest_root(q: int, n: int) -> int:
    """The smallest primitive ``2n``-th root mod ``q``: brute force for small ``q``; for large ``q``
    the library's root, checked here to be one and the least of all ``psi**odd``."""
    if q < 10**5:
        return smallest_root_brute(q, n)
    psi = primitive_root_2n(q, n)
    assert pow(psi, n, q) == q - 1
    assert psi == min(pow(psi, j, q) for j in range(1, 2 * n, 2))
    return psi


def words_for(coeffs: list[int], ring: RingSpec, domain: Domain) -> np.ndarray:
    """The ``(L, n)`` Montgomery words a correct buffer holds for ``coeffs`` in ``domain``."""
    R = 2**ring.word_bits
    rows = []
    for q in ring.moduli:
        plain = [c % q for c in coeffs]
        if domain is Domain.NTT:
            plain = ntt_slots(plain, q, smallest_root(q, ring.n))
        rows.append([x * R % q for x in plain])
    return np.array(rows, dtype=ring.np_dtype)


def leaf(coeffs: list[int], ring: RingSpec, domain: Domain = Domain.COEFF) -> Poly:
    """A ``Poly`` over a buffer of words computed here (no kernel involved)."""
    dtype = DType.of_ring(ring.dtype)
    buf = Buffer("python", ring.dtype, ring.size, words_for(coeffs, ring, domain))
    node = Node(Op.BUFFER, dtype, (), BufferArg(buf))
    return Poly._wrap(Node(Op.AS_RING, dtype, (node,), RingArg(ring, domain)))


def value(p: Poly) -> list[int]:
    v = evaluate(p.node)
    assert isinstance(v, list) and all(type(c) is int for c in v)
    return v


def rand_coeffs(rnd: random.Random, ring: RingSpec) -> list[int]:
    """Random ints of every size and sign, with edges near 0 and +-Q/2."""
    Q, h = ring.Q, ring.Q // 2
    pool = [0, 1, -1, h, h + 1, -h, -h - 1, Q - 1, Q, 3 * Q + 2, -(Q**2) - 7]
    out = []
    for _ in range(ring.n):
        r = rnd.random()
        if r < 0.2:
            out.append(rnd.choice(pool))
        elif r < 0.4:
            out.append(rnd.randrange(-50, 51))
        else:
            out.append(rnd.randrange(-2 * Q, 2 * Q))
    return out


def coeffs_strategy(ring: RingSpec):
    return coeff_lists(ring)


# --------------------------------------------------------------------------------------------
# leaves and the word readers


@pytest.mark.parametrize("ring", RINGS)
@pytest.mark.parametrize("domain", [Domain.COEFF, Domain.NTT], ids=["coeff", "ntt"])
def test_leaf_reads_back(ring, domain):
    rnd = random.Random(1)
    a = rand_coeffs(rnd, ring)
    assert value(leaf(a, ring, domain)) == [c % ring.Q for c in a]


@pytest.mark.parametrize("ring", RINGS)
def test_read_words_ntt_form(ring):
    rnd = random.Random(2)
    for _ in range(3):
        a = [rnd.randrange(ring.Q) for _ in range(ring.n)]
        words = words_for(a, ring, Domain.NTT)
        assert read_words(words, ring, Domain.NTT) == a
        assert read_words(words.reshape(-1), ring, Domain.NTT) == a  # flat, limb-major
        assert read_words(words_for(a, ring, Domain.COEFF), ring, Domain.COEFF) == a


def test_read_words_is_montgomery():
    # one word per slot by hand: x*R mod q with R = 2**32 reads back as x
    ring = RingSpec(2, (5, 13))  # 5 = 1 mod 4, 13 = 1 mod 4
    R = 2**32
    words = np.array([[3 * R % 5, 4 * R % 5], [3 * R % 13, 12 * R % 13]], dtype=np.uint32)
    # CRT by hand: x = 3 mod 5, x = 3 mod 13 -> 3; y = 4 mod 5, y = 12 mod 13 -> 64
    assert read_words(words, ring, Domain.COEFF) == [3, 64]


@pytest.mark.parametrize("ring", RINGS)
@pytest.mark.parametrize("domain", [Domain.COEFF, Domain.NTT], ids=["coeff", "ntt"])
def test_expected_limbs_round_trip(ring, domain):
    rnd = random.Random(3)
    a = rand_coeffs(rnd, ring)
    limbs = expected_limbs(a, ring, domain)
    assert limbs.shape == (ring.L, ring.n) and limbs.dtype == ring.np_dtype
    for i, q in enumerate(ring.moduli):
        row = [c % q for c in a]
        want = ntt_slots(row, q, smallest_root(q, ring.n)) if domain is Domain.NTT else row
        assert [int(x) for x in limbs[i]] == want
    R = 2**ring.word_bits
    words = np.array(
        [[int(x) * R % q for x in limbs[i]] for i, q in enumerate(ring.moduli)],
        dtype=ring.np_dtype,
    )
    assert read_words(words, ring, domain) == [c % ring.Q for c in a]


def test_crt():
    rnd = random.Random(4)
    for moduli in [(17,), (17, 97), RING_30.moduli, RING_60.moduli]:
        Q = math.prod(moduli)
        xs = [rnd.randrange(-3 * Q, 3 * Q) for _ in range(12)] + [0, Q - 1, Q // 2]
        residues = [[x % q for x in xs] for q in moduli]
        assert crt(residues, moduli) == [x % Q for x in xs]


def test_poly_constructor_leaf():
    # the front end's own encoder (ring_kernels) agrees with the definition
    rnd = random.Random(5)
    for ring in RING_LIST:
        a = rand_coeffs(rnd, ring)
        assert value(Poly(a, ring)) == [c % ring.Q for c in a]


def test_buffer_view_leaf():
    # a view of the second limb of a two-limb buffer, read as a ring over that one modulus
    a = [5, -3, 100, 7, 0, 16, -17, 1000]
    words = words_for(a, RING_SMALL, Domain.COEFF)
    dtype = DType.U32
    buf = Node(Op.BUFFER, dtype, (), BufferArg(Buffer("python", "u32", 16, words)))
    view = Node(Op.BUFFER_VIEW, dtype, (buf,), ViewArg(8, 8))
    node = Node(Op.AS_RING, dtype, (view,), RingArg(RingSpec(8, (97,)), Domain.COEFF))
    assert evaluate(node) == [c % 97 for c in a]


def test_unallocated_buffer_has_no_value():
    ring = RING_SMALL
    buf = Node(Op.BUFFER, DType.U32, (), BufferArg(Buffer("python", "u32", ring.size)))
    node = Node(Op.AS_RING, DType.U32, (buf,), RingArg(ring, Domain.COEFF))
    with pytest.raises(ValueError, match="no data"):
        evaluate(node)


@pytest.mark.parametrize("op", ["BUFFER", "CONST"])
def test_storage_is_not_a_value(op: str):
    # a buffer or a constant is read through the AS_RING above it; alone it has no value
    words = words_for([1, 2, 3, 4, 5, 6, 7, 8], RING_SMALL, Domain.COEFF)
    leaf = Poly.const(3, RING_SMALL) if op == "CONST" else Poly.from_words(words, RING_SMALL)
    storage = leaf.node.src[0]
    assert storage.op.name == op
    with pytest.raises(ValueError, match=f"a {op} node is storage, not a value"):
        evaluate(storage)
    assert evaluate(leaf.node) == ([3] + [0] * 7 if op == "CONST" else [1, 2, 3, 4, 5, 6, 7, 8])


# --------------------------------------------------------------------------------------------
# arithmetic


@pytest.mark.parametrize("ring", RINGS)
def test_add_sub_neg_mul(ring):
    rnd = random.Random(6)
    Q = ring.Q
    for _ in range(3):
        a, b = rand_coeffs(rnd, ring), rand_coeffs(rnd, ring)
        pa, pb = leaf(a, ring), leaf(b, ring, Domain.NTT)
        assert value(pa + pb) == [(x + y) % Q for x, y in zip(a, b, strict=True)]
        assert value(pa - pb) == [(x - y) % Q for x, y in zip(a, b, strict=True)]
        assert value(pb - pa) == [(y - x) % Q for x, y in zip(a, b, strict=True)]
        assert value(-pa) == [-x % Q for x in a]
        assert value(pa * pb) == negacyclic(a, b, Q)
        assert value(pa * pa) == negacyclic(a, a, Q)
        assert value(pa * pb - pb * pa) == [0] * ring.n


@given(data=st.data(), ring=st.sampled_from(RING_LIST))
@settings(max_examples=15)
def test_arithmetic_property(data, ring):
    a = data.draw(coeffs_strategy(ring), label="a")
    b = data.draw(coeffs_strategy(ring), label="b")
    c = data.draw(coeffs_strategy(ring), label="c")
    Q = ring.Q
    pa, pb, pc = leaf(a, ring), leaf(b, ring), leaf(c, ring, Domain.NTT)
    # (a + b) * c - a == a*c + b*c - a
    ab = [(x + y) % Q for x, y in zip(a, b, strict=True)]
    want = [(x - y) % Q for x, y in zip(negacyclic(ab, [v % Q for v in c], Q), a, strict=True)]
    assert value((pa + pb) * pc - pa) == want
    assert value(-(pa * pb)) == [-x % Q for x in negacyclic(a, b, Q)]


def test_multiply_by_x_is_negacyclic():
    # X * X^(n-1) = X^n = -1 in Z_Q[X]/(X^n+1)
    ring = RING_SMALL
    x = leaf([0, 1, 0, 0, 0, 0, 0, 0], ring)
    top = leaf([0, 0, 0, 0, 0, 0, 0, 1], ring)
    assert value(x * top) == [ring.Q - 1] + [0] * 7


@pytest.mark.parametrize("ring", RINGS)
@pytest.mark.parametrize("domain", [Domain.COEFF, Domain.NTT], ids=["coeff", "ntt"])
def test_constants(ring, domain):
    rnd = random.Random(7)
    Q = ring.Q
    a = rand_coeffs(rnd, ring)
    pa = leaf(a, ring, domain)
    plus5 = [(a[0] + 5) % Q] + [c % Q for c in a[1:]]
    assert value(pa + 5) == plus5  # coefficient 0 only, whatever the domain
    assert value(5 + pa) == plus5
    assert value(pa - 5) == [(a[0] - 5) % Q] + [c % Q for c in a[1:]]
    assert value(5 - pa) == [(5 - a[0]) % Q] + [-c % Q for c in a[1:]]
    assert value(pa * 3) == [3 * c % Q for c in a]  # every coefficient
    assert value(3 * pa) == [3 * c % Q for c in a]
    assert value(pa * -1) == [-c % Q for c in a]
    big = 7 * Q + 11
    assert value(pa * big) == [11 * c % Q for c in a]
    assert value(pa + (-Q - 2)) == [(a[0] - 2) % Q] + [c % Q for c in a[1:]]


@pytest.mark.parametrize("ring", RINGS)
def test_const_alone(ring):
    Q = ring.Q
    for c in (0, 1, -1, 12345, Q // 2, Q // 2 + 1, -5 * Q - 3, 2**200):
        want = [c % Q] + [0] * (ring.n - 1)
        k = Poly.const(c, ring)
        assert value(k) == want
        assert value(k.ntt()) == want  # the constant c in every slot is still the value c
        assert value(k * k) == negacyclic(want, want, Q)


# --------------------------------------------------------------------------------------------
# representation, device and copies


@pytest.mark.parametrize("ring", RINGS)
def test_domain_changes_keep_the_value(ring):
    rnd = random.Random(8)
    a = rand_coeffs(rnd, ring)
    want = [c % ring.Q for c in a]
    pa = leaf(a, ring)
    assert value(pa.ntt()) == want
    assert value(pa.ntt().intt()) == want
    pn = leaf(a, ring, Domain.NTT)
    assert value(pn.intt()) == want
    assert value(pn.intt().ntt()) == want
    assert pa.intt() is pa and pn.ntt() is pn


@pytest.mark.parametrize("ring", RINGS)
def test_device_copy_and_contiguous_are_identity(ring):
    rnd = random.Random(9)
    a = rand_coeffs(rnd, ring)
    want = [c % ring.Q for c in a]
    pa = leaf(a, ring)
    for p in (pa.to("cpu"), pa.to("cuda").to("python"), pa.contiguous(), pa.ntt().contiguous()):
        assert p.node is not pa.node
        assert value(p) == want
    assert pa.to("python") is pa


# --------------------------------------------------------------------------------------------
# basis change


def _fresh(n: int, bits: int, avoid: tuple[int, ...], count: int) -> tuple[int, ...]:
    return tuple(p for p in ntt_primes(n, bits, count + len(avoid)) if p not in avoid)[:count]


def _to_ring_targets(ring: RingSpec) -> list[RingSpec]:
    m = ring.moduli
    fresh = _fresh(ring.n, 30, m, 2)
    targets = [
        RingSpec(ring.n, m[1:]),  # contiguous run (a view)
        RingSpec(ring.n, m[:1]),
        RingSpec(ring.n, (m[-1], m[0])),  # a reordered subset
        RingSpec(ring.n, fresh),  # all new moduli
        RingSpec(ring.n, (*m, fresh[0])),  # extension: a new modulus appended
        RingSpec(ring.n, (fresh[1], *m[::-1])),
    ]
    if len(m) >= 3:
        targets.append(RingSpec(ring.n, (m[0], m[2])))  # a subset with a gap
        targets.append(RingSpec(ring.n, m[1:2]))  # a run in the middle
    if ring.dtype == "u32":
        targets.append(RingSpec(ring.n, m, "u64"))  # the same moduli in u64 words
    return targets


@pytest.mark.parametrize("ring", RINGS)
@pytest.mark.parametrize("domain", [Domain.COEFF, Domain.NTT], ids=["coeff", "ntt"])
def test_to_ring(ring, domain):
    rnd = random.Random(10)
    Q, h = ring.Q, ring.Q // 2
    a = rand_coeffs(rnd, ring)
    a[:6] = [h, h + 1, -h, -h - 1, h - 1, -1]  # the edges of (-Q/2, Q/2]
    pa = leaf(a, ring, domain)
    for target in _to_ring_targets(ring):
        got = value(pa.to_ring(target))
        assert got == [centered(c, Q) % target.Q for c in a], target
    # edges spelled out: Q is odd, so (Q-1)/2 stays positive and (Q+1)/2 becomes -(Q-1)/2
    assert centered(h, Q) == h and centered(h + 1, Q) == -h
    assert pa.to_ring(ring) is pa


def test_to_ring_to_a_u64_ring_and_back():
    ring = RING_SMALL
    big = RingSpec(8, ntt_primes(8, 60, 1))
    a = [0, 1, -1, 824, -824, 825, 1648, -5000]
    got = value(leaf(a, ring).to_ring(big))
    assert got == [centered(c, ring.Q) % big.Q for c in a]
    assert got[3] == 824 and got[4] == big.Q - 824 and got[5] == big.Q - 824
    back = value(leaf(a, big).to_ring(ring))
    assert back == [c % ring.Q for c in a]  # small values: centered is the value itself


# --------------------------------------------------------------------------------------------
# rescale


def rescale_inputs(ring: RingSpec, P: int, rnd: random.Random) -> list[list[int]]:
    """Coefficient lists (``n`` each) covering the rounding edges for the divisor ``P``."""
    Q, h = ring.Q, ring.Q // 2
    half = P // 2  # P is odd, so no exact ties: m*P + half rounds down, m*P + half + 1 up
    special = [0, -1, P, -P, P - 1, -(P - 1), h, -h, h - half, -h + half, h - P, -h + P]
    for m in (0, 1, 3, -4, (h // P) - 1):
        special += [m * P + half, m * P + half + 1, m * P - half, m * P - half - 1]
    special += [rnd.randrange(-Q, Q) for _ in range(-len(special) % ring.n)]
    rnd.shuffle(special)
    return [special[i : i + ring.n] for i in range(0, len(special), ring.n)]


def _rescale_cases(ring: RingSpec) -> list[tuple[int, ...] | None]:
    m = ring.moduli
    cases: list[tuple[int, ...] | None] = [None, (m[0],), (m[-1],)]
    if len(m) >= 3:
        cases += [(m[0], m[2]), (m[1],), (m[2], m[1])]
    return cases


@pytest.mark.parametrize("ring", RINGS)
@pytest.mark.parametrize("domain", [Domain.COEFF, Domain.NTT], ids=["coeff", "ntt"])
def test_rescale(ring, domain):
    rnd = random.Random(11)
    for drop in _rescale_cases(ring):
        divisors = drop or (ring.moduli[-1],)  # default: the last modulus
        P = math.prod(divisors)
        keep = tuple(q for q in ring.moduli if q not in divisors)  # original order
        Q_keep = math.prod(keep)
        for a in rescale_inputs(ring, P, rnd):
            out = leaf(a, ring, domain).rescale(drop)
            assert out.ring.moduli == keep
            want = [rounded_div(centered(c, ring.Q), P) % Q_keep for c in a]
            assert value(out) == want, (drop, a)


def test_rescale_worked_values():
    # ring (17, 97), divide by 97: half of 97 is 48.5
    ring = RING_SMALL
    a = [48, 49, -48, -49, 97, -97, 824, -824]
    got = value(leaf(a, ring).rescale())
    expected = [rounded_div(x, 97) % 17 for x in a]  # the inputs are already centered
    assert got == expected
    assert [centered(v, 17) for v in got] == [0, 1, 0, -1, 1, -1, 8, -8]
    # an int modulus works like a 1-tuple
    assert value(leaf(a, ring).rescale(17)) == [rounded_div(x, 17) % 97 for x in a]


def test_rescale_chain():
    # two rescales in a row: each rounds the centered value of the previous result
    ring = RING_30
    rnd = random.Random(12)
    a = rand_coeffs(rnd, ring)
    m = ring.moduli
    once = value(leaf(a, ring).rescale())
    mid = [rounded_div(centered(c, ring.Q), m[-1]) for c in a]
    assert once == [x % math.prod(m[:-1]) for x in mid]
    twice = value(leaf(a, ring).rescale().rescale())
    assert twice == [rounded_div(centered(x, math.prod(m[:-1])), m[-2]) % m[0] for x in mid]


# --------------------------------------------------------------------------------------------
# automorphisms


@pytest.mark.parametrize("ring", RINGS)
@pytest.mark.parametrize("domain", [Domain.COEFF, Domain.NTT], ids=["coeff", "ntt"])
def test_rotate(ring, domain):
    rnd = random.Random(13)
    n, Q = ring.n, ring.Q
    a = rand_coeffs(rnd, ring)
    pa = leaf(a, ring, domain)
    for k in (1, 2, 3, -1, -2, n // 2 + 1, 5 * n):
        g = pow(5, k, 2 * n)
        got = pa.rotate(k)
        if g == 1:
            assert got is pa
        assert value(got) == automorphism([c % Q for c in a], g, Q), k
    assert pa.rotate(0) is pa
    assert pa.rotate(n // 2) is pa  # 5 has order n/2 modulo 2n


@pytest.mark.parametrize("ring", RINGS)
def test_automorphism_every_galois_element(ring):
    rnd = random.Random(14)
    n, Q = ring.n, ring.Q
    a = [c % Q for c in rand_coeffs(rnd, ring)]
    pa, pn = leaf(a, ring), leaf(a, ring, Domain.NTT)
    for g in range(1, 2 * n, 2):
        want = automorphism(a, g, Q)
        assert value(pa.automorphism(g)) == want, g
        assert value(pn.automorphism(g + 2 * n)) == want, g  # g is taken mod 2n
    with pytest.raises(ValueError, match="even"):
        pa.automorphism(2)


@pytest.mark.parametrize("ring", RINGS)
def test_conjugate(ring):
    rnd = random.Random(15)
    n, Q = ring.n, ring.Q
    a = [c % Q for c in rand_coeffs(rnd, ring)]
    pa = leaf(a, ring)
    want = automorphism(a, 2 * n - 1, Q)
    # X -> X^-1 = -X^(n-1): coefficient i goes to n - i, negated
    assert want == [a[0]] + [-a[n - i] % Q for i in range(1, n)]
    assert value(pa.conjugate()) == want
    assert value(pa.conjugate().conjugate()) == a


def test_automorphism_is_a_ring_homomorphism():
    ring = RING_30
    rnd = random.Random(16)
    Q = ring.Q
    a, b = rand_coeffs(rnd, ring), rand_coeffs(rnd, ring)
    pa, pb = leaf(a, ring), leaf(b, ring)
    lhs = value((pa * pb).rotate(3))
    rhs = value(pa.rotate(3) * pb.rotate(3))
    g = pow(5, 3, 2 * ring.n)
    assert lhs == rhs == automorphism(negacyclic(a, b, Q), g, Q)


# --------------------------------------------------------------------------------------------
# graphs


def test_sink_returns_a_tuple():
    ring = RING_SMALL
    a = [1, 2, 3, 4, 5, 6, 7, 8]
    b = [8, 7, 6, 5, 4, 3, 2, 1]
    pa, pb = leaf(a, ring), leaf(b, ring)
    outs = (pa + pb, pa * pb, pa.rescale())
    sink = Node(Op.SINK, DType.VOID, tuple(p.node for p in outs))
    got = evaluate(sink)
    assert isinstance(got, tuple) and len(got) == 3
    assert got[0] == [9] * 8
    assert got[1] == negacyclic(a, b, ring.Q)
    assert got[2] == [rounded_div(x, 97) % 17 for x in a]
    values = evaluate_graph(sink)
    assert values[sink] == got
    assert values[pa.node] == a and values[pb.node] == b
    assert all(n in values for n in sink.toposort())


def test_deep_chain_of_additions():
    ring = RING_SMALL
    a = [3, -1, 4, 1, -5, 9, 2, -6]
    b = [1, 0, 0, 2, 0, 0, 0, 1]
    pa, pb = leaf(a, ring), leaf(b, ring)
    acc = pa
    for i in range(3000):
        acc = acc + pb if i % 2 == 0 else acc + 1
    want = [(x + 1500 * y) % ring.Q for x, y in zip(a, b, strict=True)]
    want[0] = (want[0] + 1500) % ring.Q
    assert value(acc) == want


def test_deep_chain_mixed_ops():
    ring = RING_SMALL
    Q = ring.Q
    a = [1, 0, 0, 0, 0, 0, 0, 0]
    x = leaf([0, 1, 0, 0, 0, 0, 0, 0], ring)
    acc = leaf(a, ring)
    for _ in range(2000):  # multiply by X 2000 times: X^2000 = X^(2000 mod 16) with sign
        acc = acc * x
    # X^16 = 1 and X^8 = -1 in Z[X]/(X^8+1): X^2000 = X^(2000 mod 16) = X^0
    assert 2000 % 16 == 0
    assert value(acc) == [1] + [0] * 7
    acc = -(acc.ntt().intt()) + 0
    assert value(acc) == [Q - 1] + [0] * 7


def test_bad_input_names_what_is_accepted():
    p = Poly([1, 2, 3, 4, 5, 6, 7, 8], RingSpec(8, (17, 97)))
    with pytest.raises(TypeError, match=r"graph Node \(a Poly's \.node\), got Poly"):
        evaluate(p)
    with pytest.raises(ValueError, match="are 16 words, got 15"):
        read_words(np.zeros(15, dtype=np.uint32), p.ring, Domain.COEFF)
    assert read_words(p.words(), p.ring, Domain.COEFF) == [1, 2, 3, 4, 5, 6, 7, 8]
