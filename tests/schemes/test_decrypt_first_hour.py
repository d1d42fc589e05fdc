"""What decryption leaves behind and what it returns (issue 36, "the first hour").

* A ciphertext decrypted while lazy keeps its parts realized: a later operation on it schedules
  only its own kernels, exactly as many as the same operation on a stored copy of the value
  (counted with an observer), and its result is the copy's, word for word; the slots are checked
  against plaintext NumPy with a precision in bits.
* ``real=True`` returns the real parts as float64; no decrypted slot has a ``-0.0`` part.
* BFV/BGV ``signed=True`` returns the centred values ``[-((t - 1) // 2), t // 2]`` as int64,
  against Python integers mod ``t``.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from ren.circuits.ckks import sum_slots, sum_slots_rotations
from ren.engine.observe import observing
from ren.schemes import ckks
from tests.schemes.integer_cases import N, T, small, values

CKKS_N = 64
#: n=64, three levels below the top: a cube and more on one small ring
PARAMS = ckks.Params(n=CKKS_N, q_bits=(60, 40, 40, 40), p_bits=(60,), scale_bits=40, insecure=True)


class KernelCount:
    """An observer: the number of scheduled kernels of each realization in its block."""

    def __init__(self) -> None:
        self.kernels: list[int] = []

    def on_prepared(self, realization) -> None:
        self.kernels.append(len(realization.kernels))


def counted(fn):
    """``fn()``'s result and the kernels of each realization it ran."""
    with observing(KernelCount()) as seen:
        out = fn()
    return out, seen.kernels


@pytest.fixture
def ctx():
    with ckks.Context(PARAMS, seed=5) as c:
        for k in sum_slots_rotations(PARAMS):  # made now: no key generation is counted later
            c.rotation_key(k)
        yield c


@pytest.fixture
def v():
    return np.random.default_rng(3).uniform(-1, 1, CKKS_N // 2)


def lazy_cubic(x: ckks.Ciphertext) -> ckks.Ciphertext:
    """``0.5 x^3 - x + 0.25``, built and not computed (three levels: to level 0)."""
    return 0.5 * (x * x) * x - x + 0.25


# ---------------------------------------------------------------------------------------------
# CKKS: what decrypt keeps realized


def test_decrypt_keeps_the_parts_realized_n64(ctx, v):
    x = ckks.encrypt(v).realize()
    p = lazy_cubic(x)
    assert not any(part.realized for part in p.parts)
    got, runs = counted(lambda: ckks.decrypt(p))
    assert len(runs) == 1  # the parts and their decryption: one realization
    assert all(part.realized for part in p.parts)
    want = 0.5 * v**3 - v + 0.25
    assert ckks.precision_bits(got, want) > 25
    again, runs = counted(lambda: ckks.decrypt(p))
    assert np.array_equal(again, got)  # the kept parts decrypt to the same slots
    assert runs and runs[0] < 10  # the decryption alone, not the cubic again


def test_a_later_operation_schedules_only_its_own_kernels_n64(ctx, v):
    p = lazy_cubic(ckks.encrypt(v).realize())
    ckks.decrypt(p)
    stored = copy.deepcopy(p)  # the same value in buffers of its own: the reference
    total, runs = counted(lambda: sum_slots(p).realize())
    ref, ref_runs = counted(lambda: sum_slots(stored).realize())
    assert runs == ref_runs  # the sum's kernels, and none of the cubic's
    for a, b in zip(total.parts, ref.parts, strict=True):
        assert np.array_equal(a.words(), b.words())
    want = np.full(CKKS_N // 2, np.sum(0.5 * v**3 - v + 0.25))
    assert ckks.precision_bits(ckks.decrypt(total), want) > 20


def test_every_way_to_decrypt_keeps_the_parts_n64(ctx, v):
    x = ckks.encrypt(v).realize()
    for decrypt in (ckks.decrypt, ctx.decrypt, ckks.Ciphertext.decrypt):
        p = lazy_cubic(x) + 1.5  # the same graph built again: lazy again
        assert not any(part.realized for part in p.parts)
        decrypt(p)
        assert all(part.realized for part in p.parts), decrypt


def test_the_debugger_view_leaves_the_parts_as_they_stand_n64(ctx, v):
    """The watch view decrypts parts as a stepped realization's buffers stand: it keeps none."""
    p = lazy_cubic(ckks.encrypt(v).realize())
    got = p.__ren_watch__(ctx).decrypt(p.parts)
    assert not any(part.realized for part in p.parts)
    assert np.array_equal(got, ckks.decrypt(p))


# ---------------------------------------------------------------------------------------------
# CKKS: real=True and no negative zeros


def test_real_returns_the_real_parts_as_float64_n64(ctx, v):
    w = v + 1j * v[::-1]
    for ct in (ckks.encrypt(v), ckks.encrypt(w), ckks.encrypt(v) * ckks.encrypt(w)):
        whole = ckks.decrypt(ct)
        for got in (ckks.decrypt(ct, real=True), ctx.decrypt(ct, real=True), ct.decrypt(real=True)):
            assert got.dtype == np.float64 and got.shape == (CKKS_N // 2,)
            assert got.flags.c_contiguous
            assert np.array_equal(got, whole.real)
    assert ckks.precision_bits(ckks.decrypt(ckks.encrypt(v), real=True), v) > 25
    assert ckks.decrypt(ckks.encrypt(v)).dtype == np.complex128  # the default is unchanged


@pytest.mark.parametrize("bad", [1, 0, None, "yes", np.bool_(True)])
def test_real_must_be_a_bool(ctx, v, bad):
    ct = ckks.encrypt(v)
    for decrypt in (ckks.decrypt, ctx.decrypt, ckks.Ciphertext.decrypt):
        with pytest.raises(TypeError, match="real must be True or False"):
            decrypt(ct, real=bad)


def no_negative_zero(a: np.ndarray) -> bool:
    parts = (a.real, a.imag) if np.iscomplexobj(a) else (a,)
    return not any(np.any((x == 0) & np.signbit(x)) for x in parts)


def test_no_slot_has_a_negative_zero_part_n64(ctx, v):
    real = ckks.decrypt(ckks.encrypt(v) * ckks.encrypt(v))
    assert np.all(real.imag == 0) and no_negative_zero(real)  # printed as +0j, never -0j
    x = ckks.encrypt(v + 1j)
    zero = ckks.decrypt(x - x)
    assert np.all(zero == 0) and no_negative_zero(zero)
    assert no_negative_zero(ckks.decrypt(x - x, real=True))
    assert no_negative_zero(ckks.decode(ckks.encode(np.zeros(CKKS_N // 2))))
    assert f"{0.0 + zero[0].imag:+.9f}" == "+0.000000000"


# ---------------------------------------------------------------------------------------------
# BFV and BGV: signed=True


def centred(values: np.ndarray, t: int) -> list[int]:
    """Python integers ``v mod t`` in ``[-((t - 1) // 2), t // 2]``: ``v - t`` past ``t // 2``."""
    out = []
    for v in values.tolist():
        r = int(v) % t
        out.append(r - t if r > t // 2 else r)
    return out


def test_signed_slots_are_centred_python_integers(scheme):
    with scheme.Context(small(scheme), seed=4) as ctx:
        a, b = values(5), values(6)
        x, y = scheme.encrypt(a), scheme.encrypt(b)
        for ct, want in ((x, a), (-x, -a), (x * y - 3, a * b - 3), (x - y, a - b)):
            unsigned = ctx.decrypt(ct)
            got = scheme.decrypt(ct, signed=True)
            assert got.dtype == np.int64 and got.tolist() == centred(want, T)
            assert np.array_equal(np.mod(got, T), unsigned)  # the same residues
            assert np.array_equal(ctx.decrypt(ct, signed=True), got)
        edges = scheme.decrypt(x, signed=True)[:4].tolist()
        assert edges == [0, 1, -1, T // 2]  # t // 2 = 128 stays positive for t = 257
        assert int(got.min()) >= -((T - 1) // 2) and int(got.max()) <= T // 2


def test_signed_coefficients_with_an_even_t(scheme):
    """``t = 256`` (no batching): ``128 = t / 2`` stays positive, ``129`` is ``-127``."""
    t = 256
    with scheme.Context(small(scheme, t=t), seed=5) as ctx:
        m = np.arange(N) * 37 % t
        m[:4] = (0, 127, 128, 129)
        ct = ctx.encrypt(ctx.encode_coefficients(m))
        got = scheme.decrypt(ct, signed=True)
        assert got.dtype == np.int64 and got.tolist() == centred(m, t)
        assert got[:4].tolist() == [0, 127, 128, -127]
        assert np.array_equal(scheme.decrypt(ct, coefficients=True, signed=True), got)


def test_signed_coefficients_of_a_batched_ciphertext(scheme):
    with scheme.Context(small(scheme), seed=6) as ctx:
        ct = ctx.encrypt(values(7))
        coeffs = ctx.decrypt(ct, coefficients=True)
        got = ctx.decrypt(ct, coefficients=True, signed=True)
        assert got.tolist() == centred(coeffs, T)


@pytest.mark.parametrize("name", ["signed", "coefficients"])
@pytest.mark.parametrize("bad", [1, None, "yes"])
def test_flags_must_be_bools(scheme, name, bad):
    with scheme.Context(small(scheme), seed=7) as ctx:
        ct = ctx.encrypt(values(8))
        for decrypt in (scheme.decrypt, ctx.decrypt):
            with pytest.raises(TypeError, match=f"{name} must be True or False"):
                decrypt(ct, **{name: bad})


def test_integer_decrypt_keeps_the_parts_realized(scheme):
    with scheme.Context(small(scheme), seed=8):
        x = scheme.encrypt(values(9))
        p = x * x + 1
        assert not any(part.realized for part in p.parts)
        scheme.decrypt(p, signed=True)
        assert all(part.realized for part in p.parts)
