"""Linear transforms by baby-step giant-step (``ren.circuits.ckks.linear``).

The oracle for the values is NumPy's ``M @ v`` on the plaintext, with a precision in bits; a
smaller ``d x d`` matrix is compared on the first ``d`` slots, the others with 0. The oracle for
the rotations is an enumeration of the BSGS formula written here (``k = j n1 + i``: baby step
``i``, giant step ``j n1``) and the Galois keys the evaluator asks for; the oracle for the kernel
counts is the algorithm: one ModUp shared by the baby steps, a full key switch per giant step,
one rescale of both parts.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import ren
from ren.circuits.ckks.linear import LinearTransform, choose_n1
from ren.engine.observe import observing
from ren.schemes import ckks
from tests.devices import COMPILED

PARAMS = ckks.Params(n=64, q_bits=(60, 40, 40), p_bits=(60,), scale_bits=40, insecure=True)
SLOTS = PARAMS.slots  # 32
MIN_BITS = 20
CPU = [p for p in COMPILED if p.id == "cpu"]
RNG = np.random.default_rng(21)
DENSE = RNG.uniform(-1, 1, (SLOTS, SLOTS))
COMPLEX = RNG.uniform(-1, 1, (SLOTS, SLOTS)) + 1j * RNG.uniform(-1, 1, (SLOTS, SLOTS))


class Kernels:
    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()

    def on_unit(self, unit, seconds) -> None:
        self.kinds[unit.kernel.info.kind] += 1


@pytest.fixture(scope="module")
def ctx():
    return ckks.Context(PARAMS, seed=31)


@pytest.fixture(scope="module")
def xs():
    rng = np.random.default_rng(22)
    return rng.uniform(-1, 1, SLOTS) + 1j * rng.uniform(-1, 1, SLOTS)


def banded(offsets: tuple[int, ...]) -> np.ndarray:
    """A matrix whose only nonzero generalized diagonals are ``offsets``."""
    m = np.zeros((SLOTS, SLOTS))
    for k in offsets:
        for i in range(SLOTS):
            m[i, (i + k) % SLOTS] = RNG.uniform(0.5, 1)
    return m


def padded(m: np.ndarray, v: np.ndarray) -> np.ndarray:
    d = m.shape[0]
    return np.concatenate([m @ v[:d], np.zeros(SLOTS - d)])


def bsgs_steps(diagonals: list[int], n1: int) -> set[int]:
    """The rotations of ``M v = sum_j rot_{j n1}(sum_i rot_{-j n1}(diag_{j n1 + i}) rot_i(v))``."""
    return ({k % n1 for k in diagonals} | {k - k % n1 for k in diagonals}) - {0}


def apply(ctx: ckks.Context, lt: LinearTransform, ct: ckks.Ciphertext) -> ckks.Ciphertext:
    with ctx:
        return lt(ct)


@pytest.mark.parametrize(
    ("name", "matrix"),
    [
        pytest.param("dense", DENSE, id="dense"),
        pytest.param("complex", COMPLEX, id="complex"),
        pytest.param("sparse", banded((0, 1, 30)), id="sparse"),
        pytest.param("5x5", DENSE[:5, :5], id="5x5"),
    ],
)
def test_the_transform_is_m_times_v(ctx, xs, name, matrix):
    with ctx:
        ct = ckks.encrypt(xs)
        lt = LinearTransform(matrix)
        out = lt(ct)
        assert out.level == ct.level - 1 and out.scale == ct.scale
        assert ckks.precision_bits(ckks.decrypt(out), padded(matrix, xs)) > MIN_BITS
    if name == "sparse":
        assert sorted(lt.diagonals) == [0, 1, 30]
    if name == "5x5":  # diagonals 0..4 and 28..31 (the ones that wrap around) meet the matrix
        assert sorted(lt.diagonals) == [*range(5), *range(28, 32)]


def test_a_diagonals_dict_is_the_matrix_it_describes(ctx, xs):
    rng = np.random.default_rng(23)
    diagonals = {0: rng.uniform(-1, 1, SLOTS), -3: rng.uniform(-1, 1, SLOTS) * 1j, 5: [0.5] * 10}
    m = np.zeros((SLOTS, SLOTS), dtype=complex)  # diag_k[i] = M[i][(i + k) % slots]
    for k, diag in diagonals.items():
        for i, value in enumerate(diag):
            m[i, (i + k) % SLOTS] = value
    with ctx:
        lt = LinearTransform(diagonals=diagonals)
        assert sorted(lt.diagonals) == [0, 5, 29]
        out = lt(ckks.encrypt(xs))
    assert ckks.precision_bits(ckks.decrypt(out), m @ xs) > MIN_BITS


def test_every_bsgs_ratio_gives_the_same_result(ctx, xs):
    with ctx:
        ct = ckks.encrypt(xs)
        n1s, outs = set(), []
        for ratio in (0.25, 1, 2, 4, 16):
            lt = LinearTransform(DENSE, bsgs_ratio=ratio)
            n1s.add(lt.n1)
            outs.append(ckks.decrypt(lt(ct)))
    assert len(n1s) >= 3  # the ratios chose different splits
    for got in outs:
        assert ckks.precision_bits(got, DENSE @ xs) > MIN_BITS


def test_n1_follows_lattigos_rule():
    dense = list(range(SLOTS))
    # n1 = 4: 3 baby steps, 7 giant ones (3/7 <= 2); n1 = 8: 7 and 3 (7/3 > 2)
    assert choose_n1(dense, SLOTS, 2) == 4
    assert choose_n1(dense, SLOTS, 7 / 3) == 8  # equal: allowed
    assert choose_n1(dense, SLOTS, 4) == 8
    # 4096 slots: n1 = 64 gives 63 + 63 rotations; 128 gives 127 + 31 (ratio 4.1, and more of them)
    assert choose_n1(list(range(4096)), 4096, 2) == 64
    assert choose_n1(list(range(4096)), 4096, 16) == 64
    assert choose_n1([0], SLOTS, 2) == 1
    assert choose_n1([], SLOTS, 2) == 1
    assert choose_n1([0, 1, 2], SLOTS, 2) == 2  # n1 = 4 leaves no giant step: infinite ratio
    band = [0, 1, 2, 3, 28, 29, 30, 31]  # offsets -4 .. 3
    assert choose_n1(band, SLOTS, 2) == 2  # 1 baby step, giant steps 2, 28, 30
    assert choose_n1(band, SLOTS, 8) == 4  # 3 and 1; n1 = 8 would rotate 7 + 1 times


@pytest.mark.parametrize("ratio", [1, 2, 8])
def test_rotations_are_the_keys_it_uses(ctx, xs, ratio, monkeypatch):
    matrix = banded((0, 1, 2, 9, 17, 30))
    lt = LinearTransform(matrix, bsgs_ratio=ratio, slots=SLOTS)
    assert lt.rotations() == sorted(bsgs_steps(list(lt.diagonals), lt.n1))
    asked = []
    galois_key = ctx.galois_key
    monkeypatch.setattr(ctx, "galois_key", lambda g: asked.append(g) or galois_key(g))
    with ctx:
        ckks.decrypt(lt(ckks.encrypt(xs)))
    used = {k for k in range(1, SLOTS) if pow(5, k, 2 * PARAMS.n) in asked}
    assert sorted(used) == lt.rotations()
    assert len(asked) == len(set(asked))  # each key asked for once: baby steps are one ModUp


def test_kernel_counts_follow_the_algorithm(ctx, xs):
    lt = LinearTransform(DENSE, slots=SLOTS)
    babies = len(set(lt.baby_steps) - {0})
    giants = len(set(lt.giant_steps) - {0})
    with ctx:
        ct = ckks.encrypt(xs).realize()
        lt.encode(ct.level, ctx)  # the plaintexts are computed here, not counted below
        out = lt(ct)
        kernels = Kernels()
        with observing(kernels):
            ren.realize(*out.parts)
    d = sum(1 for digit in PARAMS.digits if any(i <= ct.level for i in digit))
    kinds = kernels.kinds
    # ModUp once for the baby steps and once per giant step; ModDown twice per rotation;
    # the rescale, in NTT form: per part the dropped limb's inverse NTT, its extension, an NTT
    assert kinds["intt"] == 1 + 2 * babies + 3 * giants + 2
    assert kinds["base_convert"] == d + 2 * babies + (d + 2) * giants + 2
    assert kinds["ntt"] == d + 2 * babies + (d + 2) * giants + 2
    assert kinds.get("rescale", 0) == 0


def test_jit_gives_the_eager_result(ctx, xs):
    lt = LinearTransform(COMPLEX, slots=SLOTS)
    f = ren.jit(lambda c: lt(c))
    with ctx:
        f(ckks.encrypt(xs * 0.5))  # the capture, on other values
        ct = ckks.encrypt(xs)
        got = ckks.decrypt(f(ct))
        want = ckks.decrypt(lt(ct))
    np.testing.assert_array_equal(got, want)
    assert ckks.precision_bits(got, COMPLEX @ xs) > MIN_BITS


def test_level_and_encoding_once_per_level(ctx, xs, monkeypatch):
    lt = LinearTransform(DENSE, level=1, slots=SLOTS)
    assert "level=1" in repr(lt) and "32 nonzero diagonals" in repr(lt)
    encoded = []
    encode = ctx.encode
    monkeypatch.setattr(ctx, "encode", lambda *a, **k: encoded.append(a[1]) or encode(*a, **k))
    with ctx:
        ct = ckks.encrypt(xs)  # level 2: brought to 1, then one level used
        first, second = lt(ct), lt(ct)
        assert first.level == second.level == 0 and first.scale == ct.scale
        assert encoded.count(1) == len(lt.diagonals)  # once, at level 1, for both calls
        assert ckks.precision_bits(ckks.decrypt(first), DENSE @ xs) > MIN_BITS
        with pytest.raises(ValueError, match="runs at level 2 and the ciphertext is at level 1"):
            LinearTransform(DENSE, level=2)(ckks.encrypt(xs, level=1))


def test_the_zero_matrix(ctx, xs):
    with ctx:
        lt = LinearTransform(np.zeros((4, 4)))
        assert lt.rotations() == [] and not lt.diagonals
        out = lt(ckks.encrypt(xs))
    assert out.level == PARAMS.max_level - 1
    assert ckks.precision_bits(ckks.decrypt(out), np.zeros(SLOTS)) > MIN_BITS


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"matrix": np.ones((3, 4))}, ValueError, r"square .* shape \(3, 4\)"),
        ({"matrix": np.ones((33, 33))}, ValueError, "33 x 33 matrix does not fit 32 slots"),
        ({"matrix": [[1, np.inf], [0, 1]]}, ValueError, "NaN or infinity"),
        ({"matrix": [["a"]]}, TypeError, "real or complex"),
        ({"diagonals": {"1": [1.0]}}, TypeError, "keys must be ints"),
        ({"diagonals": {32: [1.0]}}, ValueError, "key 32 is outside"),
        ({"diagonals": {-1: [1.0], 31: [2.0]}}, ValueError, "are the same"),
        ({"diagonals": {0: np.ones(33)}}, ValueError, "1 to 32 numbers"),
        ({"diagonals": {0: []}}, ValueError, "1 to 32 numbers"),
        ({"diagonals": {0: [np.nan]}}, ValueError, "NaN or infinity"),
        ({"diagonals": [1.0]}, TypeError, "must be a dict"),
        ({}, ValueError, "one of them"),
        ({"matrix": DENSE, "diagonals": {0: [1.0]}}, ValueError, "one of them"),
        ({"matrix": DENSE, "bsgs_ratio": 0}, ValueError, "positive number"),
        ({"matrix": DENSE, "level": 0}, ValueError, "at least 1"),
    ],
)
def test_bad_matrices_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        LinearTransform(**kwargs, slots=SLOTS)


def test_bad_calls_are_refused(ctx, xs):
    with pytest.raises(ValueError, match="pass slots="):
        LinearTransform(DENSE)  # no context active
    lt = LinearTransform(DENSE, slots=SLOTS)
    with ctx:
        ct = ckks.encrypt(xs)
        with pytest.raises(ValueError, match=r"needs 1 level .* has 0"):
            lt(ckks.encrypt(xs, level=0))
        with pytest.raises(ValueError, match="two-part"):
            lt(ckks.multiply(ct, ct, relinearize=False, rescale=False))
        with pytest.raises(TypeError, match=r"ckks\.Ciphertext"):
            lt(xs)
        with pytest.raises(ValueError, match=r"is for 16 slots; .* have 32"):
            LinearTransform(DENSE[:8, :8], slots=16)(ct)


def test_an_evaluation_only_context_names_every_missing_key(xs):
    lt = LinearTransform(DENSE, slots=SLOTS)
    client = ckks.Context(PARAMS, seed=32)
    for k in lt.rotations()[1:]:
        client.rotation_key(k)
    blob = client.encrypt(xs).to_bytes()
    with ckks.Context(PARAMS, keys=client.evaluation_keys()) as server:
        ct = ckks.Ciphertext.from_bytes(blob, server)
        first = lt.rotations()[0]
        with pytest.raises(ValueError, match=rf"linear transform needs .*: steps {first} \("):
            lt(ct)
    client.rotation_key(first)
    with ckks.Context(PARAMS, keys=client.evaluation_keys()) as server:
        out = lt(ckks.Ciphertext.from_bytes(blob, server))  # exactly lt.rotations() suffice
    assert ckks.precision_bits(client.decrypt(out), DENSE @ xs) > MIN_BITS


@pytest.mark.parametrize("device", CPU, indirect=True)
def test_a_transform_on_the_compiled_device(device, xs):
    with ckks.Context(PARAMS, seed=33, device=device):
        lt = LinearTransform(COMPLEX)
        out = ren.jit(lambda c: lt(c))(ckks.encrypt(xs))
        assert ckks.precision_bits(ckks.decrypt(out), COMPLEX @ xs) > MIN_BITS
