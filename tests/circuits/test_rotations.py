"""Hoisted rotations, slot sums and inner products (``ren.circuits.ckks.rotations``).

The oracles: ``np.roll`` of the plaintext for a rotation (slot ``j + k`` to slot ``j``), the
NumPy sum and dot product for ``sum_slots`` and ``inner_product``, with a precision in bits. The
oracle for the kernel counts is the key-switching algorithm: ModUp is one inverse NTT of ``c_1``
and, per digit, a basis extension and an NTT; each rotation then runs ModDown on its two sums
(an inverse NTT of the special limbs, a basis extension and an NTT each). Hoisted rotations share
the ModUp.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import ren
from ren.circuits.ckks.rotations import (
    add_all,
    inner_product,
    rotate_many,
    sum_slots,
    sum_slots_rotations,
)
from ren.engine.observe import observing
from ren.schemes import ckks
from tests.devices import COMPILED

PARAMS = ckks.Params(n=64, q_bits=(60, 40, 40), p_bits=(60,), scale_bits=40, insecure=True)
SLOTS = PARAMS.slots  # 32
MIN_BITS = 20
CPU = [p for p in COMPILED if p.id == "cpu"]


class Kernels:
    """Counts the kernels each realization in an ``observing`` block runs, by kind."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()

    def on_unit(self, unit, seconds) -> None:
        self.kinds[unit.kernel.info.kind] += 1


def digits_at(level: int) -> int:
    return sum(1 for d in PARAMS.digits if any(i <= level for i in d))


def realize_counting(*cts: ckks.Ciphertext) -> Counter[str]:
    kernels = Kernels()
    with observing(kernels):
        ren.realize(*[p for ct in cts for p in ct.parts])
    return kernels.kinds


@pytest.fixture(scope="module")
def ctx():
    return ckks.Context(PARAMS, seed=11)


@pytest.fixture(scope="module")
def xs():
    rng = np.random.default_rng(5)
    return rng.uniform(-1, 1, SLOTS) + 1j * rng.uniform(-1, 1, SLOTS)


def bits(ct: ckks.Ciphertext, want: np.ndarray) -> float:
    return ckks.precision_bits(ckks.decrypt(ct), want)


# --- rotate_many ---------------------------------------------------------------------------------


def test_rotate_many_gives_every_rotation_in_order(ctx, xs):
    steps = [5, 1, -3, 0, 5, SLOTS + 2, 31]
    with ctx:
        ct = ckks.encrypt(xs)
        out = rotate_many(ct, steps)
        assert len(out) == len(steps)
        assert out[3] is ct and out[0] is out[4]  # 0 is ct itself; a repeated step, one value
        for k, r in zip(steps, out, strict=True):
            assert r.level == ct.level and r.scale == ct.scale
            assert bits(r, np.roll(xs, -k)) > MIN_BITS, k


@pytest.mark.parametrize("level", [2, 1], ids=["level=2", "level=1"])
@pytest.mark.parametrize("count", [1, 4], ids=["rotations=1", "rotations=4"])
def test_hoisted_rotations_run_one_modup(ctx, xs, level, count):
    steps = [1, 2, 7, 30][:count]
    d = digits_at(level)
    with ctx:
        ct = ckks.encrypt(xs, level=level).realize()
        kinds = realize_counting(*rotate_many(ct, steps))
        assert kinds["intt"] == 1 + 2 * count  # one ModUp; two ModDowns per rotation
        assert kinds["base_convert"] == d + 2 * count
        assert kinds["ntt"] == d + 2 * count
        separate = Counter()
        for k in steps:
            separate += realize_counting(ct.rotate(k))
        assert separate["intt"] == 3 * count  # a ModUp for each
        assert separate["base_convert"] == separate["ntt"] == (d + 2) * count


def test_realize_true_computes_them_together(ctx, xs):
    with ctx:
        ct = ckks.encrypt(xs).realize()
        kernels = Kernels()
        with observing(kernels):
            out = rotate_many(ct, [3, 4, 3], realize=True)
        assert all(p.realized for r in out for p in r.parts)
        assert kernels.kinds["intt"] == 1 + 2 * 2
        assert realize_counting(*out) == Counter()  # nothing left to compute
        assert bits(out[1], np.roll(xs, -4)) > MIN_BITS


def test_rotate_many_under_jit_is_the_eager_result(ctx, xs):
    steps = (2, 9)
    f = ren.jit(lambda c: rotate_many(c, steps))
    with ctx:
        f(ckks.encrypt(-xs))  # the capture, on other values
        ct = ckks.encrypt(xs)
        got = [ckks.decrypt(r) for r in f(ct)]
        want = [ckks.decrypt(r) for r in rotate_many(ct, steps)]
    for g, w, k in zip(got, want, steps, strict=True):
        np.testing.assert_array_equal(g, w)
        assert ckks.precision_bits(g, np.roll(xs, -k)) > MIN_BITS


def test_rotate_many_refuses_bad_input(ctx, xs):
    with ctx:
        ct = ckks.encrypt(xs)
        with pytest.raises(TypeError, match="iterable of ints"):
            rotate_many(ct, 3)
        with pytest.raises(TypeError, match="rotation steps must be ints"):
            rotate_many(ct, [1, 2.0])
        with pytest.raises(TypeError, match=r"ckks\.Ciphertext"):
            rotate_many(xs, [1])
        three = ckks.multiply(ct, ct, relinearize=False, rescale=False)
        with pytest.raises(ValueError, match="two-part ciphertext"):
            rotate_many(three, [1])


def test_an_evaluation_only_context_names_every_missing_key(xs):
    client = ckks.Context(PARAMS, seed=12)
    client.rotation_key(1)
    client.rotation_key(4)
    blob = client.encrypt(xs).to_bytes()
    with ckks.Context(PARAMS, keys=client.evaluation_keys()) as server:
        ct = ckks.Ciphertext.from_bytes(blob, server)
        with pytest.raises(ValueError) as e:
            rotate_many(ct, [1, 2, 4, 6, -1])
        message = str(e.value)
        g = [pow(5, k, 2 * PARAMS.n) for k in (2, 6, 31)]
        assert f"steps 2, 6, 31 (Galois elements {g[0]}, {g[1]}, {g[2]})" in message
        assert "ctx.rotation_key(k)" in message
        out = rotate_many(ct, [4, 1, 0])  # the keys it has are enough
        with pytest.raises(ValueError, match=r"sum_slots needs .*: steps 2, 8, 16 \("):
            sum_slots(ct)
    assert ckks.precision_bits(client.decrypt(out[0]), np.roll(xs, -4)) > MIN_BITS


def test_add_all_sums_in_groups(ctx, xs):
    # 40 terms, fan_in 16: groups of 16, 16 and 8, each summed into a buffer of its own, then
    # their sum: one elementwise kernel per part for each of the four sums
    with ctx:
        terms = [ckks.encrypt(xs * (t + 1) / 40).realize() for t in range(40)]
        total = add_all(terms, fan_in=16)
        kinds = realize_counting(total)
        assert kinds == Counter({"elementwise": 2 * 4})
        assert bits(total, xs * sum(range(1, 41)) / 40) > MIN_BITS
        assert add_all(terms[:1]) is terms[0]
        with pytest.raises(ValueError, match="fan_in"):
            add_all(terms, fan_in=1)


# --- sum_slots and inner_product -----------------------------------------------------------------


@pytest.mark.parametrize("radix", [2, 4, 32], ids=["radix=2", "radix=4", "radix=32"])
def test_sum_slots_puts_the_sum_in_every_slot(ctx, xs, radix):
    with ctx:
        ct = ckks.encrypt(xs).realize()
        total = sum_slots(ct, radix=radix)
        assert total.level == ct.level and total.scale == ct.scale
        kinds = realize_counting(total)
        assert bits(total, np.full(SLOTS, np.sum(xs))) > MIN_BITS
    # stage by stage: one ModUp per stage, hoisted; two ModDowns per rotation
    stages = {2: [1] * 5, 4: [3, 3, 1], 32: [31]}[radix]
    d = digits_at(ct.level)
    assert kinds["intt"] == sum(1 + 2 * r for r in stages)
    assert kinds["base_convert"] == kinds["ntt"] == sum(d + 2 * r for r in stages)
    assert len(sum_slots_rotations(PARAMS, radix)) == sum(stages)


def test_sum_slots_rotations():
    assert sum_slots_rotations(PARAMS) == [1, 2, 4, 8, 16]
    assert sum_slots_rotations(PARAMS, radix=4) == [1, 2, 3, 4, 8, 12, 16]
    with pytest.raises(ValueError, match="power of two"):
        sum_slots_rotations(PARAMS, radix=3)
    with pytest.raises(TypeError, match=r"ckks\.Params"):
        sum_slots_rotations(64)


@pytest.mark.parametrize("kind", ["real", "complex", "short"])
def test_inner_product(ctx, xs, kind):
    rng = np.random.default_rng(8)
    vec = {
        "real": rng.uniform(-1, 1, SLOTS),
        "complex": rng.uniform(-1, 1, SLOTS) + 1j * rng.uniform(-1, 1, SLOTS),
        "short": rng.uniform(-1, 1, 7),
    }[kind]
    with ctx:
        ct = ckks.encrypt(xs)
        out = inner_product(ct, vec)
        assert out.level == ct.level - 1 and out.scale == ct.scale
        want = np.dot(vec, xs[: len(vec)])  # no conjugation
        assert bits(out, np.full(SLOTS, want)) > MIN_BITS


def test_inner_product_refuses_bad_input(ctx, xs):
    with ctx:
        ct = ckks.encrypt(xs)
        low = ckks.encrypt(xs, level=0)
        with pytest.raises(ValueError, match=r"needs 1 level .* has 0"):
            inner_product(low, [1.0])
        with pytest.raises(ValueError, match="33 entries; the ciphertext has 32 slots"):
            inner_product(ct, np.ones(SLOTS + 1))
        with pytest.raises(ValueError, match="NaN or infinity"):
            inner_product(ct, [1.0, np.nan])
        with pytest.raises(ValueError, match="1-D"):
            inner_product(ct, np.ones((2, 2)))
        with pytest.raises(TypeError, match="real or complex numbers"):
            inner_product(ct, ["a"])


@pytest.mark.parametrize("device", CPU, indirect=True)
def test_hoisting_and_sums_on_the_compiled_device(device, xs):
    with ckks.Context(PARAMS, seed=13, device=device):
        ct = ckks.encrypt(xs).realize()
        out = rotate_many(ct, [1, 3, 6])
        kinds = realize_counting(*out)
        assert kinds["intt"] == 1 + 2 * 3
        for k, r in zip((1, 3, 6), out, strict=True):
            assert bits(r, np.roll(xs, -k)) > MIN_BITS
        assert bits(sum_slots(ct), np.full(SLOTS, np.sum(xs))) > MIN_BITS


def test_each_circuit_names_its_kernels():
    from ren.engine.realize import prepare

    with ckks.Context(PARAMS_REGIONS, seed=11) as ctx:
        ct = ckks.encrypt(np.linspace(-1, 1, PARAMS_REGIONS.slots)).realize()
        ctx.rotation_key(1)
        out = rotate_many(ct, [1, 2])
        total = sum_slots(ct)
        prepared = prepare(tuple(p.node for r in [*out, total] for p in r.parts))
        regions = {k.region for k in prepared.kernels}
        prepared.run()
    outer = {r[:2] if r[:1] == ("sum_slots",) else r[:1] for r in regions}
    assert ("rotate_many",) in outer and ("sum_slots",) in outer
    # sum_slots rotates through rotate_many: a nested region; nothing else was built
    assert outer <= {("rotate_many",), ("sum_slots",), ("sum_slots", "rotate_many")}
    # inside, each rotation's key switch and its three steps (ren.schemes.rlwe.keyswitch)
    steps = ("rotate", "key_switch")
    assert {("rotate_many", *steps, s) for s in ("mod_up", "products", "mod_down")} <= regions


PARAMS_REGIONS = ckks.Params(n=64, q_bits=(60, 40, 40), p_bits=(60,), scale_bits=40, insecure=True)


def test_the_ckks_package_names_the_circuits():
    from ren.circuits import ckks as circuits

    for name in ("rotate_many", "sum_slots", "sum_slots_rotations", "inner_product"):
        assert getattr(ckks, name) is getattr(circuits, name)
    assert ckks.LinearTransform is circuits.LinearTransform
    assert "rotate_many" in dir(ckks)
    with pytest.raises(AttributeError, match="no attribute 'rotate_everything'"):
        ckks.rotate_everything  # noqa: B018
