"""A ``Poly`` as a value: comparison, hashing, NumPy operands, pickling, copies, moving views.

Oracle: Python-integer arithmetic of the same program (``tests/oracles.py``): ring identities for
``==``, the coefficients (or NTT slots, by direct evaluation) for what pickling and copying keep.
"""

from __future__ import annotations

import copy
import itertools
import pickle
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np
import pytest

import ren
from ren.device import register_device, unregister_device
from ren.errors import RenError
from ren.poly import PICKLE_VERSION, Poly
from ren.ring import Domain, RingSpec, ntt_primes
from tests.devices import COMPILED, use_device
from tests.oracles import centered, negacyclic, ntt_slots, smallest_root_brute

RING = RingSpec(8, (17, 97, 113))
Q = RING.Q
A = [3, -1, 4, 1, -5, 9, 2, -6]
B = [2, 7, -1, 8, 2, -8, 1, 8]
C = [1, 0, 0, 5, -2, 0, 7, 1]


def mod(xs: list[int], Qm: int = Q) -> list[int]:
    return [x % Qm for x in xs]


# --------------------------------------------------------------------------------------------
# comparison and hashing


def test_equality_compares_ring_elements():
    a, b, c = Poly(A, RING), Poly(B, RING), Poly(C, RING)
    assert a == Poly(A, RING)  # two buffers, one value
    assert a == Poly([x + 5 * Q for x in A], RING)  # the same residues modulo Q
    assert (a == b) is False and (a != b) is True
    assert (a + b) * c == a * c + b * c  # distributivity: different graphs, one value
    assert a * b == b * a
    assert a * b == Poly(negacyclic(A, B, Q), RING)  # the schoolbook product
    assert a + Q == a and a + 1 != a  # Q is the constant 0
    assert Poly.const(7, RING) == Poly([7] + [0] * 7, RING)


def test_equality_ignores_domain_device_and_word_type():
    a = Poly(A, RING)
    assert a == a.ntt() and a.ntt() == a
    assert a.ntt() == Poly(A, RING).ntt()
    assert a.rotate(1) == a.rotate(1).intt()  # NTT form against coefficient form
    wide = RingSpec(8, RING.moduli, "u64")  # other Montgomery words, the same ring element
    assert Poly(A, wide) == a and Poly(B, wide) != a


@pytest.mark.cc
def test_equality_across_devices():
    a = Poly(A, RING)
    assert a == a.to("cpu") and (a + 1).to("cpu") != a
    assert Poly(A, RING, "cpu").ntt() == a


def test_equality_needs_the_same_ring():
    a = Poly(A, RING)
    assert a != Poly(A, RingSpec(8, (17, 97)))
    assert a != Poly(A, RingSpec(8, (97, 17, 113)))  # the order of the limbs is the ring's
    assert a != a.to_ring(RingSpec(8, (97, 113)))


@pytest.mark.parametrize(
    ("a", "other"),
    [
        (Poly.const(3, RING), 3),  # not the constant polynomial: a Poly equals only a Poly
        (Poly.const(3, RING), 3.0),
        (Poly(A, RING), A),
        (Poly(A, RING), np.array(A)),
        (Poly(A, RING), "a"),
        (Poly(A, RING), None),
    ],
    ids=["int", "float", "list", "array", "str", "None"],
)
def test_a_poly_never_equals_a_non_poly(a, other):
    assert (a == other) is False and (other == a) is False
    assert (a != other) is True and (other != a) is True


def test_equality_realizes_both_and_keeps_values():
    a, b = Poly(A, RING), Poly(B, RING)
    left, right = (a + b) * 2, a * 2 + b * 2
    assert not left.realized and not right.realized
    assert left == right
    assert left.realized and right.realized
    assert left.tolist() == mod([2 * (x + y) for x, y in zip(A, B, strict=True)])


def test_polys_are_unhashable():
    a = Poly(A, RING)
    with pytest.raises(TypeError, match="unhashable type: 'Poly'"):
        hash(a)
    with pytest.raises(TypeError, match="unhashable"):
        _ = {a}
    with pytest.raises(TypeError, match="unhashable"):
        _ = {a: 1}
    assert Poly(A, RING) in [Poly(B, RING), Poly(A, RING)]  # `in` compares values


def test_random_values_compare_as_their_coefficients():
    rng = np.random.default_rng(5)
    for _ in range(30):
        x = [int(v) for v in rng.integers(-3, 4, 8)]
        y = [int(v) for v in rng.integers(-3, 4, 8)] if rng.random() < 0.5 else list(x)
        y[0] += int(rng.integers(0, 2)) * Q  # sometimes a different integer, the same residue
        assert (Poly(x, RING) == Poly(y, RING).ntt()) is (mod(x) == mod(y))


# --------------------------------------------------------------------------------------------
# NumPy arrays are not operands; NumPy integers are ints


UNSUPPORTED = {
    "a + array": lambda a, arr: a + arr,
    "array + a": lambda a, arr: arr + a,
    "a - array": lambda a, arr: a - arr,
    "array - a": lambda a, arr: arr - a,
    "a * array": lambda a, arr: a * arr,
    "array * a": lambda a, arr: arr * a,
}


@pytest.mark.parametrize("expr", list(UNSUPPORTED), ids=list(UNSUPPORTED))
@pytest.mark.parametrize("arr", [np.arange(8), np.ones(8), np.array(3)], ids=["int", "float", "0d"])
def test_numpy_arrays_are_refused_not_broadcast(expr, arr):
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for [-+*]: .*ndarray"):
        UNSUPPORTED[expr](Poly(A, RING), arr)


def test_numpy_scalars():
    a = Poly(A, RING)
    assert (np.int64(3) * a).tolist() == mod([3 * x for x in A]) == (a * np.uint8(3)).tolist()
    assert (np.int32(2) + a).tolist() == mod([A[0] + 2, *A[1:]])
    assert (np.int64(5) - a).tolist() == mod([5 - A[0]] + [-x for x in A[1:]])
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \*: .*float64"):
        np.float64(2) * a
    with pytest.raises(TypeError, match="does not support ufuncs"):
        np.add(a, a)


# --------------------------------------------------------------------------------------------
# pickling and copies


def _programs(ring: RingSpec, device: str) -> dict[str, tuple[Poly, list[int], Domain]]:
    """Polys of each kind on ``device``, with their coefficients from Python integers."""
    Qr = ring.Q
    a, b = Poly(A, ring, device), Poly(B, ring, device)
    sub = RingSpec(ring.n, ring.moduli[1:], ring.dtype)
    return {
        "stored": (Poly(A, ring, device), mod(A, Qr), Domain.COEFF),
        "lazy": (
            a * b + 3,
            mod([c + 3 * (i == 0) for i, c in enumerate(negacyclic(A, B))], Qr),
            Domain.NTT,
        ),
        "realized": (
            (a - b).realize(),
            mod([x - y for x, y in zip(A, B, strict=True)], Qr),
            Domain.COEFF,
        ),
        "constant": (Poly.const(-2, ring, device), mod([-2] + [0] * 7, Qr), Domain.COEFF),
        "ntt": (Poly(A, ring, device).ntt().realize(), mod(A, Qr), Domain.NTT),
        "view": (Poly(A, ring, device).to_ring(sub).realize(), mod(A, sub.Q), Domain.COEFF),
        "lazy view": ((b.ntt() + 1).to_ring(sub), mod([B[0] + 1, *B[1:]], sub.Q), Domain.NTT),
    }


PICKLE_DEVICES = [pytest.param("python", id="python"), *COMPILED]


@pytest.mark.parametrize("dtype", ["u32", "u64"])
@pytest.mark.parametrize("device", PICKLE_DEVICES, indirect=True)
def test_pickle_roundtrip_keeps_the_value(device, dtype):
    ring = RingSpec(8, (17, 97, 113), dtype)
    for name, (p, coeffs, domain) in _programs(ring, device).items():
        ring_before, node_before = p.ring, p.node
        back = pickle.loads(pickle.dumps(p))
        assert isinstance(back, Poly), name
        if name == "constant":  # pickled as the constant: the same interned node, no buffer
            assert back.node is node_before and not back.realized
        assert back.tolist() == coeffs == p.tolist(), name
        assert (back.ring, back.domain, back.device) == (ring_before, domain, device), name
        assert back.ring.dtype == dtype, name
        if name != "constant":
            assert back.realized and back.node is not p.node, name  # a buffer of its own
            assert np.array_equal(back.words(), p.words()), name


def test_pickle_of_the_reproducer_computes():
    a = Poly(list(range(8)), RING)
    lazy = (a * a).rotate(1) + 5
    back = pickle.loads(pickle.dumps(lazy))
    assert back.tolist() == lazy.tolist()
    assert (back - 5).tolist() == (lazy - 5).tolist()  # the unpickled value takes part in work
    assert back == lazy


def test_pickle_keeps_ntt_slots():
    coeffs = [5, -3, 100, 0, 1648, 7, -1, 42]
    p = pickle.loads(pickle.dumps(Poly(coeffs, RING).ntt()))
    for q, row in zip(RING.moduli, p.limbs(), strict=True):
        assert [int(x) for x in row] == ntt_slots(coeffs, q, smallest_root_brute(q, 8))


def _square_plus_one(p: Poly) -> Poly:
    return (p * p + 1).realize()


def test_an_unpickled_poly_computes_in_another_process():
    ring = RingSpec(16, ntt_primes(16, 30, 2))
    xs = [(-1) ** i * i * 1000 for i in range(16)]
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        out = pool.submit(_square_plus_one, Poly(xs, ring) + 0).result()
    expect = negacyclic(xs, xs)
    expect[0] += 1
    assert out.tolist() == mod(expect, ring.Q) and out.device == "python"


def test_unpickling_on_a_device_this_process_lacks(monkeypatch):
    with use_device("cuda"):
        blob = pickle.dumps(Poly(A, RING, "cuda"))

    def no_gpu():
        raise RenError("the cuda device needs PyCUDA and a GPU")

    from ren.backends import cuda

    monkeypatch.setattr(cuda, "runtime", no_gpu)
    with pytest.raises(ValueError, match=r"device 'cuda'.*PyCUDA.*p\.to\('python'\)"):
        pickle.loads(blob)


def test_unpickling_on_an_unregistered_device():
    from ren.backends import python

    register_device("elsewhere", python)
    try:
        blob = pickle.dumps(Poly(A, RING, "elsewhere"))
    finally:
        unregister_device("elsewhere")
    with pytest.raises(ValueError, match=r"device 'elsewhere'.*unknown device.*p\.to\('python'\)"):
        pickle.loads(blob)


def test_unpickling_refuses_malformed_state():
    p = Poly(A, RING)
    fn, (version, *state) = p.__reduce__()
    assert fn(version, *state) == p
    with pytest.raises(ValueError, match="format version 2"):
        fn(PICKLE_VERSION + 1, *state)
    n, moduli, dtype, domain, device, (kind, data) = state
    with pytest.raises(ValueError, match="got 95 bytes"):
        fn(version, n, moduli, dtype, domain, device, (kind, data[:-1]))
    bad = bytearray(data)
    bad[0:4] = (17).to_bytes(4, "little")  # limb 0 is modulo 17: the word 17 is out of range
    with pytest.raises(ValueError, match=r"limb 0 .* word outside \[0, q=17\)"):
        fn(version, n, moduli, dtype, domain, device, (kind, bytes(bad)))
    with pytest.raises(ValueError, match="kind 'floats'"):
        fn(version, n, moduli, dtype, domain, device, ("floats", data))
    with pytest.raises(ValueError, match="'ntt2'"):
        fn(version, n, moduli, dtype, "ntt2", device, (kind, data))
    with pytest.raises(ValueError, match="ring or domain is not valid: modulus 15 is not prime"):
        fn(version, n, (15, 97, 113), dtype, domain, device, (kind, data))
    with pytest.raises(ValueError, match="ring or domain is not valid: moduli must be a sequence"):
        fn(version, n, "17", dtype, domain, device, (kind, data))
    with pytest.raises(ValueError, match="constant Poly holds an int, got float"):
        fn(version, n, moduli, dtype, domain, device, ("const", 3.0))
    with pytest.raises(ValueError, match="6 fields after its version, got 5"):
        fn(version, *state[:-1])


def test_nodes_are_not_pickled_and_copy_to_themselves():
    a = Poly(A, RING) + 1
    with pytest.raises(TypeError, match=r"Node \(ADD\) cannot be pickled.*pickle the Poly"):
        pickle.dumps(a.node)
    assert copy.copy(a.node) is a.node and copy.deepcopy(a.node) is a.node
    assert copy.deepcopy([a.node, a.node]) == [a.node, a.node]


def test_copies_share_the_node():
    a = Poly(A, RING) * 3
    dups = [copy.copy(a), copy.deepcopy(a)]
    for dup in dups:
        assert isinstance(dup, Poly) and dup is not a and dup.node is a.node
    pair = copy.deepcopy([a, a])
    assert pair[0] is pair[1] and pair[0].node is a.node  # deepcopy's memo: one copy
    assert not a.realized  # copying computes nothing
    for dup in dups:
        assert dup.tolist() == mod([3 * x for x in A])
    assert a.realized and dups[0].node is a.node  # realizing one repoints the others


# --------------------------------------------------------------------------------------------
# a limb view moved to another device


def _view_cases():
    rings = (RingSpec(8, (17, 97, 113)), RingSpec(8, (17, 97, 113, 193)))
    for base in rings:
        L = base.L
        for offset, count in itertools.product(range(L), range(1, L + 1)):
            if offset + count <= L and count < L:
                yield base, offset, count


VIEWS = list(_view_cases())
PAIRS = [
    pytest.param(src, dst, id=f"{src}->{dst}", marks=pytest.mark.cc)
    for src, dst in itertools.permutations(["python", "cpu", "cuda"], 2)
]


@pytest.mark.parametrize(("src", "dst"), PAIRS)
@pytest.mark.parametrize("domain", [Domain.COEFF, Domain.NTT], ids=["coeff", "ntt"])
def test_a_limb_view_copied_to_another_device(src, dst, domain):
    xs = [3**i * 1000 - 50_000 for i in range(8)]
    with use_device("cuda"):  # the cuda device: the GPU, or the host emulator without one
        for base, offset, count in VIEWS:
            view = RingSpec(8, base.moduli[offset : offset + count])
            p = Poly(xs, base, src)
            if domain is Domain.NTT:
                p = p.ntt()
            p = p.realize()
            moved = p.to_ring(view).to(dst)
            case = f"{base.moduli}[{offset}:{offset + count}]"
            assert moved.device == dst and moved.domain is domain, case
            # oracle: the residues of the centered coefficients modulo the view's moduli
            xc = [centered(x, base.Q) for x in xs]
            assert moved.tolist() == mod(xc, view.Q), case
            limbs = moved.limbs()
            for q, row in zip(view.moduli, limbs, strict=True):
                want = [x % q for x in xc]
                if domain is Domain.NTT:
                    want = ntt_slots(want, q, smallest_root_brute(q, 8))
                assert [int(v) for v in row] == want, (case, q)
            fused = (p.to_ring(view) + 1).to(dst)  # a view read by fused work, then moved
            assert fused.tolist() == mod([xc[0] + 1, *xc[1:]], view.Q), case


@pytest.mark.cc
def test_the_issue_reproducer():
    p = Poly(list(range(8)), RingSpec(8, (17, 97, 113))).to_ring(RingSpec(8, (97,)))
    with use_device("cuda"):
        for dst in ("cpu", "cuda"):
            assert p.to(dst).tolist() == list(range(8))


@pytest.mark.cc
def test_a_limb_view_copied_in_a_jit_replay():
    # the replay of a captured plan on cpu is one C function: its memcpy starts at the window
    base, view = RingSpec(8, (17, 97, 113, 193)), RingSpec(8, (113, 193))

    @ren.jit
    def move(p: Poly) -> Poly:
        return p.to_ring(view).to("cpu")

    for seed in range(4):
        xs = [seed * 1000 + 37 * i - 90 for i in range(8)]
        out = move(Poly(xs, base, "python"))
        assert out.device == "cpu" and out.tolist() == mod(xs, view.Q), seed
    assert move.cache_info().hits == 3  # three of the four calls were replays
