"""Key switching is a part a context holds: hybrid by default, and another technique plugs in.

Oracles: NumPy's integer arithmetic mod ``t`` for BFV and BGV products and rotations switched by
BV (``key_switching="bv"``, with and without a digit size, and a subclass plugged in by hand),
the big-integer identity ``d_0 + d_1 s = c s' + e`` with ``e`` below the bound BV's noise has,
and plaintext NumPy for CKKS's precision.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from ren.poly import Poly
from ren.schemes import bfv, bgv, ckks
from ren.schemes.rlwe.keyswitch import BV, Hybrid, KeySwitchMethod, key_switcher
from tests.schemes.integer_cases import N, T, rows, small, values


class CountingBV(BV):
    """BV that records the level of every decomposition: a technique a user plugs in."""

    name = "counting-bv"

    def __init__(self, params) -> None:
        super().__init__(params)
        self.decomposed: list[int] = []

    def decompose(self, c: Poly, level: int) -> list[Poly]:
        self.decomposed.append(level)
        return super().decompose(c, level)


def check_products_and_rotations(ctx, seed: int) -> None:
    """Products (of two and three) and both rotations decrypt to NumPy's integers mod ``t``."""
    a, b = values(seed), values(seed + 1)
    x, y = ctx.encrypt(a), ctx.encrypt(b)
    assert np.array_equal(ctx.decrypt(x * y), (a * b) % T)
    want = np.roll(rows(a * b % T), -3, axis=1).reshape(-1)
    assert np.array_equal(ctx.decrypt((x * y).rotate_rows(3)), want)
    assert np.array_equal(ctx.decrypt(x.rotate_columns()), rows(a)[::-1].reshape(-1))
    assert np.array_equal(ctx.decrypt(x * y * x), (a * b % T) * a % T)


def test_every_context_holds_hybrid_key_switching_as_a_member():
    params = {
        ckks: ckks.Params(n=16, q_bits=(40, 30), p_bits=(45,), scale_bits=30, insecure=True),
        bfv: small(bfv),
        bgv: small(bgv),
    }
    for scheme, prm in params.items():
        ctx = scheme.Context(prm, seed=1)
        assert isinstance(ctx.key_switcher, Hybrid) and ctx.key_switcher.name == "hybrid"
        assert ctx.key_switcher.params is prm
        assert not any(issubclass(base, KeySwitchMethod) for base in type(ctx).__mro__)
        assert type(key_switcher(prm)) is Hybrid


def test_another_technique_switches_relinearizations_and_rotations(scheme):
    """Installed before the keys are made, the technique makes every key and every switch."""
    ctx = scheme.Context(small(scheme), seed=21)
    ctx.key_switcher = CountingBV(ctx.params)
    with ctx:
        relin = ctx._require_public()[1]
        assert len(relin.parts) == ctx.params.L  # one pair per modulus
        assert relin.parts[0][0].ring == ctx.params.key_ring  # BV's keys over these parameters
        check_products_and_rotations(ctx, 21)
    assert ctx.key_switcher.decomposed  # the products and rotations went through it


def test_the_switch_is_c_times_the_new_secret_as_big_integers():
    params = small(bfv)
    ctx = bfv.Context(params, seed=23)
    ctx.key_switcher = BV(params)
    with ctx:
        g = 3
        key = ctx.galois_key(g)
        s = ctx._secret
        for level in range(params.max_level, 0, -1):  # at level 0 the noise is about q_0 itself
            ring = params.ring(level)
            u = Poly.uniform(ring, 5)
            d0, d1 = ctx.key_switcher.switch(u, key, level)
            err = (d0 + d1 * s.to_ring(ring) - u * s.automorphism(g).to_ring(ring)).tolist(
                centered=True
            )
            bound = math.isqrt(N) * 8 * 4 * sum(ring.moduli)  # sqrt(n) 6 sigma q_i / 2 per digit
            assert bound < ring.Q // (2 * T)  # a bound that means something: BFV removes Q/2t
            assert max(abs(e) for e in err) < bound, level


# --- BV chosen by the parameters ----------------------------------------------------------------

BV_KINDS = [{}, {"digit_bits": 20}]  # RNS digits; digits modulo primes below 2^20


def bv(scheme, **kw):
    return small(scheme, key_switching="bv", p_bits=(), **kw)


@pytest.mark.parametrize("kw", BV_KINDS, ids=["rns-digits", "digit_bits=20"])
def test_bv_parameters_give_bv_keys_and_exact_integer_schemes(scheme, kw):
    params = bv(scheme, **kw)
    assert params.p_moduli == () and params.key_ring == params.ring(params.max_level)
    ctx = scheme.Context(params, seed=31)
    assert type(ctx.key_switcher) is BV
    with ctx:
        relin = ctx._require_public()[1]
        want = params.L if not kw else sum(max(1, len(d)) for d in params.bv_digits)
        assert len(relin.parts) == params.key_parts == want
        if kw:  # a 50-bit residue is three digits modulo primes below 2^20
            assert all(len(d) == 3 and max(d) < 2**20 for d in params.bv_digits)
        check_products_and_rotations(ctx, 31)


@pytest.mark.parametrize("kw", BV_KINDS, ids=["rns-digits", "digit_bits=20"])
def test_bv_switch_noise_is_the_digits_times_the_key_error(kw):
    """``d_0 + d_1 s - c s'`` is below ``sqrt(n) 6 sigma`` times the digits' sizes, summed."""
    params = bv(bfv, **kw)
    ctx = bfv.Context(params, seed=33)
    with ctx:
        g = 5
        key = ctx.galois_key(g)
        s = ctx._secret
        for level in range(params.max_level, -1, -1):
            ring = params.ring(level)
            u = Poly.uniform(ring, 7)
            d0, d1 = ctx.key_switcher.switch(u, key, level, galois=g)
            sl = s.to_ring(ring)
            err = (d0 + d1 * sl - u.automorphism(g) * sl.automorphism(g)).tolist(centered=True)
            digits = params.bv_digits[: level + 1]
            sizes = [len(d) * max(d) if d else q for q, d in zip(ring.moduli, digits, strict=True)]
            bound = math.isqrt(N) * 8 * 4 * sum(sizes) // 2  # sqrt(n) 10 sigma, digits below D/2
            assert max(abs(e) for e in err) < bound, level
            if kw:  # the digits make it smaller than one digit of a whole modulus
                assert max(abs(e) for e in err) < min(ring.moduli), level


def ck(**kw):
    """Tiny CKKS parameters (test data only), ``kw`` added."""
    return ckks.Params(n=16, q_bits=(40, 30), scale_bits=30, insecure=True, **kw)


def test_bv_parameters_are_checked_and_round_trip():
    with pytest.raises(ValueError, match="uses no special moduli"):
        ck(p_bits=(45,), key_switching="bv")
    with pytest.raises(ValueError, match="one digit per ciphertext modulus"):
        ck(dnum=1, key_switching="bv")
    with pytest.raises(ValueError, match="hybrid key switching needs at least one special"):
        ck(p_bits=())
    with pytest.raises(ValueError, match="BV's digit size"):
        ck(digit_bits=20)
    with pytest.raises(ValueError, match="key_switching must be one of 'hybrid', 'bv'"):
        ck(key_switching="BV")
    with pytest.raises(ValueError, match="digit_bits=3 must be None or an int from 7 to 61"):
        ck(key_switching="bv", digit_bits=3)
    with pytest.raises(TypeError, match="digit_bits must be None or an int"):
        ck(key_switching="bv", digit_bits=20.0)
    too_small = ckks.Params(n=8192, q_bits=(60, 40), key_switching="bv", digit_bits=16)
    with pytest.raises(ValueError, match="digit_bits=16 is too small at n=8192"):
        _ = too_small.bv_digits
    for scheme, prm in [
        (ckks, ck(key_switching="bv")),
        (ckks, ck(key_switching="bv", digit_bits=12)),
        (bfv, bv(bfv, digit_bits=20)),
        (bgv, bv(bgv)),
    ]:
        assert prm.p_bits == () and prm.dnum == prm.L
        assert scheme.Params.from_bytes(prm.to_bytes(), insecure=True) == prm
        assert pickle.loads(pickle.dumps(prm)) == prm
        assert b"key_switching" in prm.to_bytes()
    # BV without special moduli leaves the whole security bound to Q
    assert ckks.Params(n=8192, q_bits=(60, 50, 50, 50), key_switching="bv").log2_qp > 209


def test_hybrid_bytes_and_pickles_name_no_technique():
    """The default writes what it wrote before the field existed (the same bytes)."""
    for prm in (ck(), small(bfv), small(bgv)):
        assert b"key_switching" not in prm.to_bytes() and b"digit_bits" not in prm.to_bytes()
        assert len(prm.__reduce__()[1]) == 8  # the arguments pickles held before


def _bits(got: np.ndarray, want: np.ndarray) -> float:
    return float(-np.log2(np.max(np.abs(got - want))))


def test_ckks_bv_multiply_keeps_its_encryption_precision_at_set_a():
    """Set a (n=8192, q (60, 40, 40), 2^40): the product's relinearization by BV with 40-bit
    digits costs under a bit against BV's own encryption; hybrid's encryption divides its
    noise by P, BV's cannot (docs/key-switching.md has the figures, rotations included)."""
    rng = np.random.default_rng(41)
    x, y = (rng.uniform(-1, 1, 4096) + 1j * rng.uniform(-1, 1, 4096) for _ in range(2))
    got = {}
    for kw in ({}, {"key_switching": "bv", "digit_bits": 40}):
        with ckks.Context(ckks.Params(n=8192, q_bits=(60, 40, 40), **kw), seed=41):
            a, b = ckks.encrypt(x), ckks.encrypt(y)
            got[kw.get("key_switching", "hybrid")] = (
                _bits(ckks.decrypt(a), x),
                _bits(ckks.decrypt(a * b), x * y),
            )
    fresh, product = got["bv"]
    assert product > fresh - 1.5  # the key switch itself: under a bit (x y doubles the error)
    assert got["hybrid"][1] > 24 and product > 21


def test_bv_evaluation_keys_go_through_bytes_and_evaluate_elsewhere(scheme):
    """A context of evaluation keys read back from bytes (more pairs than moduli) evaluates."""
    params = bv(scheme, digit_bits=20)
    a, b = values(51), values(52)
    with scheme.Context(params, seed=51) as ctx:
        ctx.galois_key(3)
        blob = ctx.evaluation_keys().to_bytes()
        x, y = ctx.encrypt(a), ctx.encrypt(b)
        keys = type(ctx.evaluation_keys()).from_bytes(blob, insecure=True)
        server = scheme.Context(params, keys=keys)
        with server:
            z = (x * y).rotate_rows(3)
        want = np.roll(rows(a * b % T), -3, axis=1).reshape(-1)
        assert len(keys.relin.parts) == params.key_parts > params.L
        assert np.array_equal(ctx.decrypt(z), want)
