"""The ``Poly`` front end: every operation builds nodes (nothing runs), with the documented meaning.

Oracle: the reference evaluator's value of the built graph against Python-integer math (written
here and in ``tests/oracles.py``), and the graph shape the contract promises.
"""

import numpy as np
import pytest

from ren.errors import RenError
from ren.ir import GaloisArg, Op, RescaleArg
from ren.poly import Poly
from ren.reference import evaluate
from ren.ring import Domain, RingSpec, ntt_primes
from tests.oracles import automorphism, centered, negacyclic

RING = RingSpec(8, (17, 97, 113))
Q = RING.Q
A = [3, -1, 4, 1, -5, 9, 2, -6]
B = [2, 7, -1, 8, 2, -8, 1, 8]


def val(p: Poly) -> list[int]:
    return evaluate(p.node)


def mod(xs):
    return [x % Q for x in xs]


def test_construction_reduces_any_int():
    Qbig = RING.Q
    coeffs = [0, -1, Qbig, Qbig + 5, -(Qbig * 7) - 2, 2**200, np.int64(-3), np.uint64(2**63)]
    p = Poly(coeffs, RING)
    assert val(p) == mod([int(c) for c in coeffs])
    assert p.domain is Domain.COEFF and p.device == "python" and p.ring == RING
    assert p.node.op is Op.AS_RING and p.node.src[0].op is Op.BUFFER
    assert val(Poly(np.array(A, dtype=np.int32), RING)) == mod(A)
    assert val(Poly(np.array(A, dtype=object), RING)) == mod(A)


def test_bad_construction():
    with pytest.raises(ValueError, match="8"):
        Poly([1, 2, 3], RING)
    with pytest.raises(TypeError):
        Poly([1.5] * 8, RING)
    with pytest.raises(TypeError, match="RingSpec"):
        Poly(A, (8, (17,)))
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        Poly(A, RING, device="tpu")


@pytest.mark.parametrize(
    "coeffs",
    [
        b"12345678",
        "12345678",
        bytearray(8),
        memoryview(b"12345678"),
        set(range(8)),
        dict.fromkeys(A),
    ],
    ids=["bytes", "str", "bytearray", "memoryview", "set", "dict"],
)
def test_text_bytes_and_unordered_collections_are_not_coefficients(coeffs):
    # each iterates (as characters, small ints or in hash order) but holds no coefficients
    with pytest.raises(TypeError, match=r"coefficients must be a sequence of 8 ints.*got"):
        Poly(coeffs, RING)


@pytest.mark.parametrize(
    ("coeffs", "error", "match"),
    [
        ([1, 2, 3], ValueError, r"expected 8 coefficients .*shape \(3,\)"),
        (list(range(9)), ValueError, r"expected 8 coefficients .*shape \(9,\)"),
        (np.zeros((2, 4), dtype=np.int64), ValueError, r"expected 8 coefficients .*\(2, 4\)"),
        ([1.0] * 8, TypeError, "element of type float"),
        ([True] * 8, TypeError, "element of type bool"),
        ([np.bool_(True)] * 8, TypeError, "element of type bool"),
        ([None] * 8, TypeError, "element of type NoneType"),
        ([[1]] * 8, TypeError, "element of type list"),
        (np.ones(8), TypeError, "dtype float64"),
        (np.ones(8, dtype=bool), TypeError, "dtype bool"),
        (5, TypeError, "sequence of 8 ints, got int"),
        (None, TypeError, "sequence of 8 ints, got NoneType"),
    ],
    ids=[
        "short",
        "long",
        "2d",
        "floats",
        "bools",
        "np-bools",
        "None",
        "nested",
        "float-array",
        "bool-array",
        "int",
        "None-coeffs",
    ],
)
def test_bad_coefficients(coeffs, error, match):
    with pytest.raises(error, match=match):
        Poly(coeffs, RING)


def test_operators_build_nodes_with_the_ring_meaning():
    a, b = Poly(A, RING), Poly(B, RING)
    assert (a + b).node.op is Op.ADD and (a - b).node.op is Op.SUB and (-a).node.op is Op.NEG
    assert val(a + b) == mod([x + y for x, y in zip(A, B, strict=True)])
    assert val(a - b) == mod([x - y for x, y in zip(A, B, strict=True)])
    assert val(-a) == mod([-x for x in A])
    assert val(a * b) == negacyclic(A, B, Q)
    assert (a * b).domain is Domain.NTT


def test_int_operands_are_constant_polynomials():
    a = Poly(A, RING)
    assert val(a + 5) == mod([A[0] + 5, *A[1:]])  # the constant 5 touches coefficient 0
    assert val(5 + a) == val(a + 5)
    assert val(2 - a) == mod([2 - A[0]] + [-x for x in A[1:]])
    assert val(a * 3) == mod([3 * x for x in A]) == val(3 * a)
    assert (a * 3).domain is Domain.COEFF  # a constant factor forces no NTT
    assert val(a * -(Q + 1)) == mod([-x for x in A])
    assert (a + np.int64(2)).node.src[1].src[0].op is Op.CONST


def test_constants_are_allocation_free_and_canonical():
    c = Poly.const(-1, RING)
    assert c.node.op is Op.AS_RING and c.node.src[0].op is Op.CONST
    assert Poly.const(Q - 1, RING).node is c.node  # the same ring element, the same node
    assert c.node.src[0].arg.value == centered(Q - 1, Q) == -1
    assert val(c) == [Q - 1] + [0] * 7
    with pytest.raises(TypeError, match="int"):
        Poly.const(1.5, RING)


def test_unsupported_operands():
    a = Poly(A, RING)
    with pytest.raises(TypeError):
        a + 1.5
    with pytest.raises(TypeError):
        a * "x"


def test_mixing_rings_or_devices_names_both():
    a = Poly(A, RING)
    other = RingSpec(8, (17, 97))
    with pytest.raises(ValueError, match=r"ring mismatch.*113.*\(17, 97\)"):
        a + Poly(A, other)
    with pytest.raises(ValueError, match="device mismatch: python and cpu"):
        a * Poly(A, RING, device="cpu")
    with pytest.raises(ValueError, match="device mismatch"):
        a - a.to("cpu")


def test_domain_changes_keep_the_value():
    a = Poly(A, RING)
    assert a.ntt().domain is Domain.NTT and a.ntt().node.op is Op.NTT
    n1 = a.ntt()
    assert n1.ntt() is n1 and a.ntt().node is n1.node  # already NTT form: no new node
    assert a.intt() is a
    assert a.ntt().intt().node.op is Op.INTT
    assert val(a.ntt()) == val(a) == val(a.ntt().intt())


def test_to_ring():
    a = Poly(A, RING)
    sub = RingSpec(8, (97, 113))
    assert val(a.to_ring(sub)) == [centered(x, Q) % sub.Q for x in mod(A)]
    assert a.to_ring(RING) is a
    ext = RingSpec(8, (17, 193, ntt_primes(8, 40, 1)[0]))
    assert a.to_ring(ext).ring == ext and a.to_ring(ext).domain is Domain.COEFF
    assert val(a.to_ring(ext)) == [x % ext.Q for x in A]  # small values keep their sign
    with pytest.raises(ValueError, match="degree"):
        a.to_ring(RingSpec(16, (97,)))


def test_rescale():
    big = [Q // 2, -(Q // 2), 113 * 7 + 56, 113 * 7 + 57, -113 * 3 - 57, 0, 1, -1]
    a = Poly(big, RING)
    out = a.rescale()
    assert out.ring == RingSpec(8, (17, 97)) and out.node.arg == RescaleArg((113,))
    expect = [((2 * centered(x, Q) + 113) // (2 * 113)) % (17 * 97) for x in big]
    assert val(out) == expect
    assert a.rescale(113).node is out.node
    two = a.rescale((17, 113))
    assert two.ring == RingSpec(8, (97,))
    assert val(two) == [((2 * centered(x, Q) + 17 * 113) // (2 * 17 * 113)) % 97 for x in big]


def test_bad_rescale():
    a = Poly(A, RING)
    with pytest.raises(ValueError, match="193: it is not a modulus"):
        a.rescale(193)
    with pytest.raises(ValueError, match="no modulus"):
        a.rescale((17, 97, 113))
    with pytest.raises(ValueError, match="no modulus"):
        a.rescale().rescale().rescale()  # rescale of the last modulus
    with pytest.raises(ValueError, match="repeat"):
        a.rescale((17, 17))
    with pytest.raises(ValueError, match="at least one"):
        a.rescale(())


@pytest.mark.parametrize(
    "moduli",
    [113.0, np.float64(113), "113", b"q", True, {113}],
    ids=["float", "np-float", "str", "bytes", "bool", "set"],
)
def test_rescale_moduli_of_the_wrong_type(moduli):
    # "113" would be the moduli (1, 1, 3), True the modulus 1, 113.0 silently 113
    with pytest.raises(TypeError, match="rescale moduli must be None, an int or a sequence"):
        Poly(A, RING).rescale(moduli)


@pytest.mark.parametrize("moduli", [(113.9,), (113.0,), (True,), [17, "113"]], ids=repr)
def test_rescale_moduli_elements_must_be_ints(moduli):
    # int(113.9) would truncate to the modulus 113 and rescale by it without a word
    with pytest.raises(TypeError, match="rescale moduli must be ints; got"):
        Poly(A, RING).rescale(moduli)


def test_rescale_moduli_as_numpy_ints():
    a = Poly(A, RING)
    assert a.rescale(np.int64(113)).node is a.rescale(113).node
    assert a.rescale(np.array([17, 113])).node is a.rescale([17, 113]).node


def test_rotations_and_automorphisms():
    n = RING.n
    a = Poly(A, RING)
    r = a.rotate(1)
    assert r.node.op is Op.ROTATE and r.node.arg == GaloisArg(5, 1)
    assert val(r) == automorphism(A, 5, Q)
    assert val(a.rotate(2)) == automorphism(A, 25 % 16, Q)
    assert val(a.rotate(-1)) == automorphism(A, pow(5, -1, 16), Q)
    assert a.rotate(0) is a and a.rotate(n // 2) is a
    assert val(a.automorphism(3)) == automorphism(A, 3, Q)
    assert val(a.conjugate()) == automorphism(A, 2 * n - 1, Q)
    assert a.automorphism(17) is a  # 17 = 1 mod 16
    with pytest.raises(ValueError, match="even"):
        a.automorphism(4)
    with pytest.raises(TypeError):
        a.rotate(1.0)
    with pytest.raises(TypeError, match="rotation steps must be an int, got bool"):
        a.rotate(True)
    with pytest.raises(TypeError, match="Galois element must be an int, got float"):
        a.automorphism(3.0)


def test_copy_and_contiguous():
    a = Poly(A, RING)
    c = a.to("cpu")
    assert c.node.op is Op.COPY and c.device == "cpu" and val(c) == val(a)
    assert a.to("python") is a
    with pytest.raises(TypeError, match="to\\(\\) needs a device name"):
        a.to(None)
    with pytest.raises(TypeError, match="device must be a string"):
        a.to(5)
    assert a.contiguous().node.op is Op.CONTIGUOUS and val(a.contiguous()) == val(a)


def test_default_device_from_environment(monkeypatch):
    monkeypatch.setenv("REN_DEVICE", "cpu")
    assert Poly(A, RING).device == "cpu"
    monkeypatch.setenv("REN_DEVICE", "gpu")
    with pytest.raises(ValueError, match="REN_DEVICE"):
        Poly(A, RING)


@pytest.mark.parametrize("dtype", ["u32", "u64"])
def test_random_constructors(dtype):
    bits = 30 if dtype == "u32" else 60
    ring = RingSpec(64, ntt_primes(64, bits, 3), dtype)
    Qr = ring.Q
    u = val(Poly.uniform(ring, rng=1))
    assert all(0 <= x < Qr for x in u) and len(set(u)) > 60
    assert val(Poly.uniform(ring, rng=7)) == val(Poly.uniform(ring, rng=7))
    assert val(Poly.uniform(ring, rng=np.random.default_rng(3))) != u
    iv = [centered(x, Qr) for x in val(Poly.uniform_on_interval(ring, -3, 10, rng=2))]
    assert all(-3 <= x <= 10 for x in iv) and min(iv) == -3 and max(iv) == 10
    t = [centered(x, Qr) for x in val(Poly.ternary(ring, rng=4))]
    assert set(t) == {-1, 0, 1}
    s = [centered(x, Qr) for x in val(Poly.sparse_ternary(ring, 10, rng=5))]
    assert sum(x != 0 for x in s) == 10 and set(s) <= {-1, 0, 1}
    g = [centered(x, Qr) for x in val(Poly.gaussian(ring, sigma=3.2, rng=6))]
    assert max(abs(x) for x in g) <= 6 * 3.2 and len(set(g)) > 3
    assert val(Poly.ternary(ring)) != val(Poly.ternary(ring))  # OS randomness, 3^64 outcomes
    with pytest.raises(ValueError, match="hamming_weight"):
        Poly.sparse_ternary(ring, 65)
    with pytest.raises(ValueError, match="sigma"):
        Poly.gaussian(ring, sigma=-1)
    with pytest.raises(ValueError, match="low"):
        Poly.uniform_on_interval(ring, 5, 4)
    with pytest.raises(TypeError, match="rng"):
        Poly.uniform(ring, rng="seed")


@pytest.mark.parametrize("weight", [2.0, True, "2"], ids=repr)
def test_sparse_ternary_weight_must_be_an_int(weight):
    with pytest.raises(TypeError, match="hamming_weight must be an int"):
        Poly.sparse_ternary(RING, weight, rng=1)


def test_gaussian_sigma_bounds():
    with pytest.raises(ValueError, match=r"sigma=1e\+30 is too large.*2\*\*53"):
        Poly.gaussian(RING, 1e30, rng=1)
    # below 2**53 but not below Q/2: a sample could wrap around modulo Q
    with pytest.raises(ValueError, match=r"sigma=.* too large for RingSpec.*Q/2 = 93168\.5"):
        Poly.gaussian(RING, Q / 12, rng=1)
    g = [centered(x, Q) for x in val(Poly.gaussian(RING, Q / 12 - 1, rng=1))]
    assert max(abs(x) for x in g) <= Q / 2 - 6 and len(set(g)) == 8
    for sigma in ("3.2", True, None):
        with pytest.raises(TypeError, match="sigma must be a real number"):
            Poly.gaussian(RING, sigma, rng=1)


def test_nothing_runs_while_building():
    a = Poly(A, RING)
    words = a.node.src[0].arg.buffer.array.copy()
    expr = ((a * a + 1).rotate(1).rescale() * 7).to("cpu")
    assert expr.node.op is Op.COPY
    assert np.array_equal(a.node.src[0].arg.buffer.array, words)
    assert not expr.realized and a.realized  # building computed nothing


@pytest.mark.parametrize("dtype", ["u32", "u64"])
def test_words_are_montgomery_words_and_from_words_inverts_them(dtype: str):
    ring = RingSpec(8, (17, 97, 113), dtype=dtype)
    R = 2 ** (32 if dtype == "u32" else 64)
    coeffs = [5, -3, 100, 0, 1648, 7, -1, 42]
    for p in (Poly(coeffs, ring), Poly(coeffs, ring).ntt()):
        words = p.words()
        limbs = p.limbs()
        assert words.shape == (3, 8) and words.dtype == ring.np_dtype
        for i, q in enumerate(ring.moduli):  # the definition, with Python integers
            assert [int(w) for w in words[i]] == [int(x) * R % q for x in limbs[i]]
        back = Poly.from_words(words, ring, p.domain)
        assert back.domain is p.domain and back.tolist() == p.tolist()
        words[0, 0] ^= 1  # a copy: changing it changes nothing stored
        assert p.words()[0, 0] != words[0, 0]
    assert Poly.from_words(Poly(coeffs, ring).words(), ring).tolist() == [
        c % ring.Q for c in coeffs
    ]


def test_from_words_refuses_bad_words():
    good = Poly(list(range(8)), RING).words()
    with pytest.raises(ValueError, match=r"limb 1 .* word outside \[0, q=97\)"):
        Poly.from_words(good + np.array([[0], [97], [0]], dtype=good.dtype), RING)
    with pytest.raises(ValueError, match=r"shape \(3, 8\)"):
        Poly.from_words(good[:2], RING)
    with pytest.raises(TypeError, match="integer array"):
        Poly.from_words(good.astype(float), RING)
    with pytest.raises(TypeError, match="Domain"):
        Poly.from_words(good, RING, "ntt")
    with pytest.raises(ValueError, match="limb 0"):
        Poly.from_words(np.full((3, 8), -1), RING)


def test_tolist_centered_must_be_a_bool():
    a = Poly(A, RING)
    assert a.tolist(centered=True) == A and a.tolist(centered=np.bool_(False)) == mod(A)
    for bad in ("yes", None, 1):
        with pytest.raises(TypeError, match="centered must be a bool"):
            a.tolist(centered=bad)


def test_constant_value_must_be_an_int():
    for bad in (True, 1.0, "3"):
        with pytest.raises(TypeError, match="a constant value must be an int"):
            Poly.const(bad, RING)


@pytest.mark.parametrize("read", ["tolist", "limbs", "words", "tobytes"])
def test_reading_a_value_whose_buffer_was_freed_is_an_error(read: str):
    a = (Poly(A, RING) * 3).realize()
    assert a.tolist() == mod([3 * c for c in A])
    a.node.src[0].arg.buffer.deallocate()
    with pytest.raises(RenError, match="holds no data: it was freed"):
        getattr(a, read)()


def test_stored_values_leave_the_registry_and_graphs_over_a_realized_value_are_repointed():
    from ren.repoint import LIVE

    ring = RingSpec(16, [97])
    a = Poly(list(range(16)), ring)
    b = a * a
    c = b + a  # uses b: after b is realized, c reads b's buffer
    b.realize()
    live = LIVE.live()
    assert all(p is not a and p is not b for p in live)  # stored: nothing to repoint
    assert any(p is c for p in live)
    assert b.node.src[0] in c.node.toposort()  # c reads b's buffer now
    A = list(range(16))
    assert val(c) == [(s + x) % 97 for s, x in zip(negacyclic(A, A, 97), A, strict=True)]
