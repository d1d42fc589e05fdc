"""CKKS against plaintext NumPy (slots), Python big integers (key switching, embedding) and
itself across devices (the same bits for a fixed seed).

Small insecure rings keep the suite fast; the full parameter sets run in ``benchmarks/ckks.py``.
Precision thresholds come from the noise estimate in ``docs/ckks.md``: at ``n = 64`` and scale
``2^40`` a fresh ciphertext's slot error is about ``sqrt(n) * 4 * sqrt(n/18) / 2^40`` (~2^-30.5 at
the largest of 32 slots), so one operation is checked at 28 bits and a chain loses about a bit per
step. A wrong result (a bad key, a slot order off by one) has an error near 1 (0 bits).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import ren
from ren import Poly
from ren.ring import Domain, RingSpec
from ren.schemes import ckks
from tests.devices import COMPILED

N = 64
SMALL = ckks.Params(n=N, q_bits=(60, 40, 40), p_bits=(60,), scale_bits=40, insecure=True)
DEEP = ckks.Params(n=N, q_bits=(60, 40, 40, 40, 40), p_bits=(60,), scale_bits=40, insecure=True)


def unit_disk(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` complex numbers uniform in the unit disk."""
    return np.sqrt(rng.uniform(0, 1, count)) * np.exp(2j * np.pi * rng.uniform(0, 1, count))


@pytest.fixture
def ctx():
    with ckks.Context(SMALL, seed=7) as c:
        yield c


@pytest.fixture
def xy():
    rng = np.random.default_rng(11)
    return unit_disk(rng, N // 2), unit_disk(rng, N // 2)


def bits(got, expected) -> float:
    return ckks.precision_bits(got, expected)


# ---------------------------------------------------------------------------------------------
# parameters


def test_params_moduli():
    p = ckks.Params(n=N, q_bits=(50, 30, 30), p_bits=(50, 40), scale_bits=30, insecure=True)
    assert [q.bit_length() for q in p.q_moduli] == [50, 30, 30]
    assert [q.bit_length() for q in p.p_moduli] == [50, 40]
    moduli = p.p_moduli + p.q_moduli
    assert len(set(moduli)) == len(moduli)
    assert all((q - 1) % (2 * N) == 0 for q in moduli)
    assert p.p_moduli[0] > p.q_moduli[0]  # the special modulus takes the largest prime
    assert p.key_ring.moduli == moduli
    assert p.ring(1).moduli == p.q_moduli[:2]
    assert p.key_ring_at(0).moduli == p.p_moduli + p.q_moduli[:1]
    assert p.key_ring.contiguous_offset(p.ring(2)) == 2
    assert p.key_ring.contiguous_offset(p.key_ring_at(1)) == 0
    assert p.slots == N // 2 and p.max_level == 2 and p.scale == 2.0**30
    assert math.isclose(p.log2_qp, math.log2(math.prod(moduli)))


def test_params_digits():
    p = ckks.Params(n=N, q_bits=(40,) * 5, p_bits=(60, 60), dnum=2, scale_bits=30, insecure=True)
    assert p.digits == ((0, 1, 2), (3, 4))
    assert SMALL.digits == ((0,), (1,), (2,))
    assert SMALL.dnum == 3


def _chunks(total: int) -> tuple[int, ...]:
    """``total`` bits as near-equal moduli sizes of at most 60 bits, the largest first."""
    k = -(-total // 60) + 1
    return tuple(sorted((total // k + (i < total % k) for i in range(k)), reverse=True))


@pytest.mark.parametrize(("n", "bound"), sorted(ckks.SECURITY_BOUNDS.items()))
def test_security_bound(n, bound):
    # the HE-standard figures (128-bit security, ternary secret), and OpenFHE's for 65536
    table = {1024: 27, 2048: 54, 4096: 109, 8192: 218, 16384: 438, 32768: 881, 65536: 1747}
    assert bound == table[n]
    seen = set()
    for total in (bound - 2, bound, bound + 2):
        sizes = _chunks(total)
        kw = {"n": n, "q_bits": sizes[1:], "p_bits": sizes[:1], "scale_bits": 10}
        try:
            p = ckks.Params(**kw, insecure=True)
        except ValueError:  # too few primes of these sizes for this n (n=1024)
            continue
        assert math.isclose(p.log2_qp, math.log2(p.key_ring.Q))
        if p.log2_qp > bound:
            seen.add("over")
            with pytest.raises(
                ValueError, match=rf"log2\(QP\)=.* exceeds {bound}, the HE-standard"
            ):
                ckks.Params(**kw)
        else:
            seen.add("under")
            assert ckks.Params(**kw).key_ring == p.key_ring
    assert "over" in seen and ("under" in seen or n == 1024)


def test_security_issue_sets():
    a = ckks.Params(n=8192, q_bits=(60, 40, 40), p_bits=(60,), scale_bits=40)
    b = ckks.Params(n=16384, q_bits=(60,) + (40,) * 6, p_bits=(60,), scale_bits=40)
    assert a.log2_qp < 218 and b.log2_qp < 438
    with pytest.raises(ValueError, match="no entry in the HE-standard table"):
        ckks.Params(n=64, q_bits=(30,), p_bits=(30,), scale_bits=20)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"n": 48}, ValueError, "power of two"),
        ({"n": 2}, ValueError, "power of two >= 4"),
        ({"q_bits": ()}, ValueError, "q_bits is empty"),
        ({"q_bits": 60}, TypeError, "sequence of bit sizes"),
        ({"q_bits": (60, 40.0)}, TypeError, "bit sizes must be ints"),
        ({"q_bits": (70,)}, ValueError, "10 to 62 bits"),
        ({"p_bits": ()}, ValueError, "p_bits is empty"),
        ({"scale_bits": 60}, ValueError, "below q_bits\\[0\\]=60"),
        ({"scale_bits": 40.5}, TypeError, "scale_bits must be an int"),
        ({"dnum": 4}, ValueError, "dnum=4 must be an int from 1 to len\\(q_bits\\)=3"),
        ({"dnum": 0}, ValueError, "dnum=0"),
        ({"dnum": 1}, ValueError, "special moduli \\(P of 60 bits\\) are too small for dnum=1"),
        ({"insecure": 1}, TypeError, "insecure must be True or False"),
        ({"hamming_weight": 0}, ValueError, "hamming_weight=0"),
        ({"sigma": -1.0}, ValueError, "sigma=-1.0"),
    ],
)
def test_params_bad(kwargs, error, match):
    args = {"n": N, "q_bits": (60, 40, 40), "p_bits": (60,), "scale_bits": 40, "insecure": True}
    with pytest.raises(error, match=match):
        ckks.Params(**{**args, **kwargs})


def test_params_dnum_with_more_special_moduli():
    # two 60-bit special moduli cover a digit of 60 + 40 bits
    p = ckks.Params(n=N, q_bits=(60, 40, 40), p_bits=(60, 60), dnum=2, insecure=True)
    assert p.digits == ((0, 1), (2,))


# ---------------------------------------------------------------------------------------------
# the canonical embedding


def test_embedding_against_direct_evaluation():
    rng = np.random.default_rng(0)
    n = 16
    m = rng.integers(-50, 50, n).astype(float)
    zeta = np.exp(1j * np.pi / n)
    direct = [
        sum(m[i] * zeta ** ((pow(5, j, 2 * n) * i) % (2 * n)) for i in range(n))
        for j in range(n // 2)
    ]
    assert np.allclose(ckks.embed(m, n), direct)
    assert np.allclose(ckks.embed_inverse(np.array(direct), n), m)


def test_rotation_slot_order_in_the_clear():
    """``m(X^(5^r))`` holds slot ``j + r`` in slot ``j``; ``m(X^(2n-1))`` the conjugates."""
    n = 32
    rng = np.random.default_rng(1)
    z = unit_disk(rng, n // 2)
    m = ckks.embed_inverse(z, n)

    def substitute(m, g):
        out = np.zeros(n)
        for i, c in enumerate(m):
            k = i * g % (2 * n)
            out[k % n] += -c if k >= n else c
        return out

    for r in (1, 3, n // 2 - 1):
        assert np.allclose(ckks.embed(substitute(m, pow(5, r, 2 * n)), n), np.roll(z, -r))
    assert np.allclose(ckks.embed(substitute(m, 2 * n - 1), n), np.conj(z))


def test_encode_decode(ctx, xy):
    x, _ = xy
    pt = ckks.encode(x)
    assert pt.level == SMALL.max_level and pt.scale == SMALL.scale
    assert pt.poly.domain is Domain.NTT and pt.poly.ring == SMALL.ring(2)
    assert bits(ckks.decode(pt), x) > 33  # only the rounding to integers
    assert bits(pt.decode(), x) > 33
    # the plaintext's coefficients are round(scale * embed_inverse(x)), checked with big ints
    coeffs = pt.poly.tolist(centered=True)
    assert coeffs == [int(c) for c in np.rint(ckks.embed_inverse(x, N) * SMALL.scale)]


def test_encode_forms(ctx):
    real = ckks.decode(ckks.encode([1.0, -2.5, 3.25]))
    assert real.dtype == np.complex128 and np.all(real.imag == 0)
    assert bits(real[:3], [1.0, -2.5, 3.25]) > 33 and bits(real[3:], 0) > 33
    filled = ckks.decode(ckks.encode(0.5j))
    assert bits(filled, np.full(N // 2, 0.5j)) > 33
    low = ckks.encode([1, 2], level=0, scale=2.0**30)
    assert low.level == 0 and low.poly.ring == SMALL.ring(0) and low.scale == 2.0**30
    assert bits(ckks.decode(low)[:2], [1, 2]) > 23


@pytest.mark.parametrize(
    ("values", "kwargs", "error", "match"),
    [
        (np.zeros(N // 2 + 1), {}, ValueError, "33 values do not fit the 32 slots"),
        ([1.0, float("nan")], {}, ValueError, "NaN or infinity"),
        (["a"], {}, TypeError, "real or complex numbers"),
        (np.zeros((2, 2)), {}, ValueError, "one-dimensional"),
        ([2.0**25], {"level": 0}, ValueError, "too large for scale 2\\^40.000000 at level 0"),
        ([1.0], {"level": 3}, ValueError, "level=3 is outside \\[0, 2\\]"),
        ([1.0], {"scale": 0.5}, ValueError, "scale=0.5 must be at least 1"),
        ([1.0], {"scale": "big"}, TypeError, "scale must be a number"),
    ],
)
def test_encode_bad(ctx, values, kwargs, error, match):
    with pytest.raises(error, match=match):
        ckks.encode(values, **kwargs)


# ---------------------------------------------------------------------------------------------
# accuracy against plaintext NumPy


def test_fresh_and_linear(ctx, xy):
    x, y = xy
    cx, cy = ckks.encrypt(x), ckks.encrypt(y)
    assert cx.size == 2 and cx.level == 2 and cx.scale == SMALL.scale
    assert all(p.domain is Domain.NTT and p.ring == SMALL.ring(2) for p in cx.parts)
    assert bits(ckks.decrypt(cx), x) > 28
    assert bits(ckks.decrypt(cx + cy), x + y) > 28
    assert bits(ckks.decrypt(cx - cy), x - y) > 28
    assert bits(ckks.decrypt(-cx), -x) > 28
    assert bits(ckks.decrypt(cx + ckks.encode(y)), x + y) > 28
    assert bits(ckks.decrypt(cx - ckks.encode(y)), x - y) > 28
    assert bits(ckks.decrypt(cx + y), x + y) > 28  # an array is encoded at the ciphertext's scale
    assert bits(ckks.decrypt(cx + (1.5 - 2j)), x + 1.5 - 2j) > 28
    assert bits(ckks.decrypt(2.5 - cx), 2.5 - x) > 28
    assert bits(ckks.decrypt(cx * 3), 3 * x) > 26  # an int: exact, no level used
    assert (cx * 3).level == cx.level


def test_multiply(ctx, xy):
    x, y = xy
    cx, cy = ckks.encrypt(x), ckks.encrypt(y)
    prod = cx * cy
    q2 = SMALL.q_moduli[2]
    assert prod.size == 2 and prod.level == 1 and prod.scale == SMALL.scale**2 / q2
    assert bits(ckks.decrypt(prod), x * y) > 28
    raw = ckks.multiply(cx, cy, relinearize=False, rescale=False)
    assert raw.size == 3 and raw.level == 2 and raw.scale == SMALL.scale**2
    assert bits(ckks.decrypt(raw), x * y) > 28  # decrypts with s^2
    relin = raw.relinearize()
    assert relin.size == 2 and bits(ckks.decrypt(relin), x * y) > 28
    assert bits(ckks.decrypt(relin.rescale()), x * y) > 28
    with pytest.raises(ValueError, match="relinearize first"):
        raw * cy
    with pytest.raises(ValueError, match="relinearize first"):
        raw.rotate(1)


def test_multiply_plain_and_scalar(ctx, xy):
    x, y = xy
    cx = ckks.encrypt(x)
    out = cx * ckks.encode(y)
    assert out.level == 1 and bits(ckks.decrypt(out), x * y) > 28
    half = cx * 0.5  # encoded at scale q_2 and rescaled: the scale is kept exactly
    assert half.level == 1 and half.scale == cx.scale
    assert bits(ckks.decrypt(half), 0.5 * x) > 28
    c = 0.25 - 0.75j  # the imaginary part rides on X^(n/2), which is i in every slot
    assert bits(ckks.decrypt(cx * c), c * x) > 28
    assert bits(ckks.decrypt(cx * y), x * y) > 28
    assert bits(ckks.decrypt(0.5 * cx), 0.5 * x) > 28
    keep = ckks.multiply(cx, 0.5, rescale=False)
    assert keep.level == 2 and keep.scale == cx.scale * SMALL.scale
    assert bits(ckks.decrypt(keep), 0.5 * x) > 28


@pytest.mark.parametrize("steps", [1, 2, 5, -1, N // 2 - 1, N // 2 + 3])
def test_rotate(ctx, xy, steps):
    x, _ = xy
    out = ckks.encrypt(x).rotate(steps)
    assert bits(ckks.decrypt(out), np.roll(x, -steps)) > 27


def test_rotate_zero_and_conjugate(ctx, xy):
    x, _ = xy
    cx = ckks.encrypt(x)
    assert cx.rotate(0) is cx and cx.rotate(N // 2) is cx
    assert bits(ckks.decrypt(cx.conjugate()), np.conj(x)) > 27
    # a real message conjugates to itself
    r = ckks.encrypt(x.real)
    assert bits(ckks.decrypt(r.conjugate()), x.real) > 27
    assert np.all(ckks.decrypt(r.conjugate()).imag == 0)


def test_rotation_keys_are_cached(ctx):
    key = ctx.rotation_key(3)
    assert ctx.rotation_key(3) is key and ctx.rotation_key(3 + N // 2) is key
    assert ctx.galois_key(2 * N - 1) is ctx.galois_key(-1)


def test_real_flag(ctx, xy):
    x, y = xy
    cr = ckks.encrypt(x.real)
    assert cr.real and not ckks.encrypt(x).real
    assert np.all((ckks.decrypt(cr * cr + 1.0)).imag == 0)
    assert not (cr + 1j).real and not (cr * ckks.encrypt(y)).real
    assert bits(ckks.decrypt(cr + 1j), x.real + 1j) > 28


def test_depth_chain_to_the_last_modulus(xy):
    x, y = xy
    with ckks.Context(DEEP, seed=3):
        ct, ref = ckks.encrypt(x), x.copy()
        got = []
        for _ in range(DEEP.max_level):
            ct, ref = ct * ckks.encrypt(y), ref * y
            got.append(bits(ckks.decrypt(ct), ref))
        assert ct.level == 0
        # each product adds about one rescale's rounding: a bit per step at most
        assert all(b > 28 - i for i, b in enumerate(got)), got
        with pytest.raises(ValueError, match="cannot multiply and rescale at level 0: rescaling"):
            ct * ct
        with pytest.raises(ValueError, match="cannot multiply by a number at level 0"):
            ct * 0.5
        with pytest.raises(ValueError, match="cannot rescale at level 0"):
            ct.rescale()
        with pytest.raises(ValueError, match="outgrows the modulus"):
            ckks.multiply(ct, ct, rescale=False)  # scale 2^80 > q_0 = 2^60
        assert bits(ckks.decrypt(ct * 2), 2 * ref) > 20  # an int still works at level 0


def test_levels_and_scales(ctx, xy):
    x, y = xy
    cx, cy = ckks.encrypt(x), ckks.encrypt(y)
    sq = cx * cx  # level 1, scale 2^80 / q_2
    # cx is one level above with another scale: it is adjusted by a scalar multiply and a rescale
    poly = sq + cx
    assert poly.level == 1 and poly.scale == sq.scale
    assert bits(ckks.decrypt(poly), x * x + x) > 27
    assert bits(ckks.decrypt(cx + sq), x + x * x) > 27
    assert bits(ckks.decrypt(cx - sq), x - x * x) > 27
    # equal scales at different levels: a limb view
    low = cx.at_level(0)
    assert low.level == 0 and low.parts[0].ring == SMALL.ring(0) and low.scale == cx.scale
    both = low + cy
    assert both.level == 0 and bits(ckks.decrypt(both), x + y) > 28
    with pytest.raises(ValueError, match="levels only go down"):
        low.at_level(1)
    # same level, different scales: nothing to adjust with
    other = ckks.encrypt(y, level=1)
    exact = r"cannot add ciphertexts at scales 2\^40\.0+ \(1099511627776\.0\) and 2\^"
    with pytest.raises(ValueError, match=exact):
        other + sq
    with pytest.raises(ValueError, match="cannot add a ciphertext at scale"):
        sq + ckks.encode(y, level=1)
    matched = ckks.encrypt(y, level=1, scale=sq.scale)
    assert bits(ckks.decrypt(sq + matched), x * x + y) > 27
    # the plaintext operand is brought down to the ciphertext's level
    assert bits(ckks.decrypt(sq + ckks.encode(y, scale=sq.scale)), x * x + y) > 27


def test_adjust_down_to_level_zero(xy):
    x, y = xy
    with ckks.Context(SMALL, seed=4):
        a = (ckks.encrypt(x) * ckks.encrypt(y)).at_level(0)  # level 0, scale 2^80 / q_2
        b = ckks.encrypt(y, level=1)  # level 1, scale 2^40: adjusted with a rescale to level 0
        out = a + b
        assert out.level == 0 and out.scale == a.scale
        assert bits(ckks.decrypt(out), x * y + y) > 26


def test_sparse_secret():
    p = dataclasses.replace(SMALL, hamming_weight=5)
    with ckks.Context(p, seed=2) as c:
        s = c._secret.intt().tolist(centered=True)
        assert sum(1 for v in s if v) == 5 and set(s) <= {-1, 0, 1}
        x = unit_disk(np.random.default_rng(0), N // 2)
        assert bits(ckks.decrypt(ckks.encrypt(x).rotate(1)), np.roll(x, -1)) > 28


def test_uniform_secret_is_ternary(ctx):
    s = ctx._secret.intt().tolist(centered=True)
    assert set(s) <= {-1, 0, 1} and len(set(s)) == 3


# ---------------------------------------------------------------------------------------------
# key switching against big integers


@pytest.mark.parametrize(
    "params",
    [
        DEEP,
        ckks.Params(n=N, q_bits=(40,) * 5, p_bits=(60, 60), dnum=2, scale_bits=30, insecure=True),
        ckks.Params(n=N, q_bits=(30,) * 4, p_bits=(62, 62), dnum=1, scale_bits=20, insecure=True),
    ],
    ids=["dnum=5", "dnum=2", "dnum=1"],
)
def test_key_switch_is_c_times_new_secret(params):
    """``d_0 + d_1 s - c s'`` is small (the key-switching noise), at every level, as big ints."""
    with ckks.Context(params, seed=5) as c:
        g = 5
        key = c.galois_key(g)
        s = c._secret
        s_new = s.automorphism(g)
        for level in range(params.max_level, -1, -1):
            ring = params.ring(level)
            u = Poly.uniform(ring, 9)
            d0, d1 = c.key_switcher.switch(u, key, level)
            assert d0.ring == ring and d1.ring == ring
            err = (d0 + d1 * s.to_ring(ring) - u * s_new.to_ring(ring)).tolist(centered=True)
            # digits below P: the error is about sqrt(n) * 6 sigma * digits + rounding * |s|
            assert max(abs(e) for e in err) < 2**16, (level, max(abs(e) for e in err))


@pytest.mark.parametrize(
    "params",
    [
        DEEP,
        ckks.Params(n=N, q_bits=(40,) * 5, p_bits=(60, 60), dnum=2, scale_bits=30, insecure=True),
    ],
    ids=["one special modulus", "two"],
)
def test_mod_down_is_the_rescale_by_p(params):
    """ModDown in NTT form gives the words of ``rescale(p_moduli)``, and ``round(x / P)``."""
    ctx = ckks.Context(params, seed=2)
    P = math.prod(params.p_moduli)
    for level in (params.max_level, 0):
        Kl, ring = params.key_ring_at(level), params.ring(level)
        x = Poly.uniform(Kl, 40 + level).ntt()
        got = ctx.key_switcher.mod_down(x, level)
        assert got.ring == ring and got.domain is Domain.NTT
        np.testing.assert_array_equal(got.intt().words(), x.intt().rescale(params.p_moduli).words())
        # big-integer oracle: the centered x over P Q_l, divided by P, rounded to nearest
        QP = Kl.Q
        want = [
            (2 * (c % QP if c % QP <= QP // 2 else c % QP - QP) + P) // (2 * P)
            for c in x.intt().tolist()
        ]
        assert got.intt().tolist() == [w % ring.Q for w in want]


def test_mod_down_refuses_a_value_of_another_ring():
    ctx = ckks.Context(DEEP, seed=2)
    with pytest.raises(ValueError, match=r"mod_down at level 1 needs a value over RingSpec"):
        ctx.key_switcher.mod_down(Poly.uniform(DEEP.ring(1), 1), 1)
    with pytest.raises(ValueError, match="level=9 is outside"):
        ctx.key_switcher.mod_down(Poly.uniform(DEEP.key_ring, 1), 9)


# ---------------------------------------------------------------------------------------------
# devices, jit


def program(ctx: ckks.Context, x, y) -> ckks.Ciphertext:
    cx, cy = ctx.encrypt(x), ctx.encrypt(y)
    return ((cx * cy).rotate(1) + cx).conjugate() * 0.5


@pytest.mark.parametrize("device", COMPILED, indirect=True)
def test_same_bits_on_every_device(device, xy):
    x, y = xy
    with ckks.Context(SMALL, seed=21, device="python") as ref:
        want = program(ref, x, y)
        want_bytes = want.to_bytes()
    with ckks.Context(SMALL, seed=21, device=device) as other:
        got = program(other, x, y)
        assert got.parts[0].device == device
        assert got.to_bytes() == want_bytes
        assert bits(ckks.decrypt(got), 0.5 * np.conj(np.roll(x * y, -1) + x)) > 26


@pytest.mark.parametrize("device", ["python", "cpu"])
def test_jit_ciphertexts(device, xy):
    x, y = xy
    ren.clear_jit()
    with ckks.Context(SMALL, seed=8, device=device) as c:

        @ren.jit
        def step(a: ckks.Ciphertext, b: ckks.Ciphertext) -> ckks.Ciphertext:
            return (a * b).rotate(2) + a  # the rotation key is made during the first call

        rng = np.random.default_rng(3)
        for _ in range(3):
            x, y = unit_disk(rng, N // 2), unit_disk(rng, N // 2)
            a, b = ckks.encrypt(x).realize(), ckks.encrypt(y).realize()
            got = step(a, b)
            want = (a * b).rotate(2) + a
            assert isinstance(got, ckks.Ciphertext) and got.level == 1 and got.scale == want.scale
            for gp, wp in zip(got.parts, want.parts, strict=True):
                assert gp.tobytes() == wp.ntt().tobytes()
            assert bits(ckks.decrypt(got), np.roll(x * y, -2) + x) > 27
        assert step.cache_info().misses == 1 and step.cache_info().hits == 2
        assert 5**2 % (2 * N) in c._galois


def test_encrypt_refused_inside_jit(ctx, xy):
    x, _ = xy

    @ren.jit
    def bad(a):
        return a + ckks.encrypt(x)

    with pytest.raises(
        RuntimeError,
        match=r"encrypt was called inside the jitted function .*bad: a replay would reuse",
    ):
        bad(ckks.encrypt(x).realize())


# ---------------------------------------------------------------------------------------------
# contexts and errors


def test_no_context():
    with pytest.raises(RuntimeError, match="no CKKS context is active"):
        ckks.encode([1.0])
    c = ckks.Context(SMALL, seed=1)
    ct = c.encrypt([1.0])  # keys are made on first need without a with block
    assert bits(c.decrypt(ct)[0], 1.0) > 28
    assert bits(ckks.decrypt(ct)[0], 1.0) > 28  # the ciphertext knows its context


def test_contexts_nest(xy):
    x, _ = xy
    with ckks.Context(SMALL, seed=1) as outer:
        with ckks.Context(SMALL, seed=2) as inner:
            assert ckks.current() is inner
            ci = ckks.encrypt(x)
        assert ckks.current() is outer
        co = ckks.encrypt(x)
        both = rf"fingerprint {ci.key_fingerprint}, .* fingerprint {outer.key_fingerprint}"
        with pytest.raises(ValueError, match=both):
            co + ci
        assert bits(ckks.decrypt(ci), x) > 28  # decrypted in its own context


def test_bad_operands(ctx, xy):
    x, _ = xy
    cx = ckks.encrypt(x)
    with pytest.raises(TypeError):
        cx + "a"
    with pytest.raises(TypeError, match="cannot multiply a ciphertext by a str"):
        ckks.multiply(cx, "a")
    with pytest.raises(TypeError, match="rotation steps must be an int"):
        cx.rotate(1.5)
    with pytest.raises(TypeError, match="decrypt takes a Ciphertext"):
        ckks.decrypt(x)
    with pytest.raises(TypeError, match=r"params must be a ckks\.Params"):
        ckks.Context({"n": 8})
    with pytest.raises(ValueError, match="level and scale are the plaintext's own"):
        ckks.encrypt(ckks.encode(x), level=1)


# ---------------------------------------------------------------------------------------------
# bytes


def test_params_bytes():
    blob = SMALL.to_bytes()
    assert ckks.Params.from_bytes(blob, insecure=True) == SMALL  # the reader opts in
    assert blob.startswith(b"RENCKKS\0")


def test_values_bytes(ctx, xy):
    x, y = xy
    ct = ckks.encrypt(x) * ckks.encrypt(y)
    back = ckks.Ciphertext.from_bytes(ct.to_bytes())
    assert back.level == ct.level and back.scale == ct.scale and back.real == ct.real
    assert all(a.tobytes() == b.tobytes() for a, b in zip(back.parts, ct.parts, strict=True))
    three = ckks.multiply(ckks.encrypt(x), ckks.encrypt(y), relinearize=False)
    back3 = ckks.Ciphertext.from_bytes(three.to_bytes(), ctx)
    assert back3.size == 3 and bits(ckks.decrypt(back3), x * y) > 28
    pt = ckks.encode(y, level=1)
    pback = ckks.Plaintext.from_bytes(pt.to_bytes())
    assert pback.level == 1 and pback.poly.tolist() == pt.poly.tolist()


def test_evaluation_keys_and_secret_key(xy):
    x, y = xy
    with ckks.Context(SMALL, seed=30) as client:
        client.rotation_key(1)
        blob = client.evaluation_keys().to_bytes()
        keys = ckks.EvaluationKeys.from_bytes(blob, insecure=True)  # a tiny ring: opted in
        secret = client.export_secret_key()
        a, b = ckks.encrypt(x).to_bytes(), ckks.encrypt(y).to_bytes()
    with ckks.Context(SMALL, keys=keys, device="cpu") as server:
        assert not server.has_secret_key
        ca, cb = ckks.Ciphertext.from_bytes(a), ckks.Ciphertext.from_bytes(b)
        out = ((ca * cb).rotate(1) + 0.5).to_bytes()
        with pytest.raises(ValueError, match="holds no secret key, so it cannot decrypt"):
            ckks.decrypt(ca)
        with pytest.raises(ValueError, match="no key for the Galois element"):
            ca.rotate(2)
        ckks.encrypt(y)  # the public key encrypts
    res = ckks.Ciphertext.from_bytes(out, client)
    assert bits(ckks.decrypt(res), np.roll(x * y, -1) + 0.5) > 27
    # a context made from the exported secret key decrypts too
    with ckks.Context(SMALL, secret_key=secret, seed=1) as again:
        assert bits(ckks.decrypt(ckks.Ciphertext.from_bytes(out)), np.roll(x * y, -1) + 0.5) > 27
        assert again.has_secret_key


def test_bad_blobs(ctx, xy):
    x, _ = xy
    blob = ckks.encrypt(x).to_bytes()
    with pytest.raises(ValueError, match="truncated or altered"):
        ckks.Ciphertext.from_bytes(blob[:-1])
    with pytest.raises(ValueError, match="truncated or altered"):
        ckks.Ciphertext.from_bytes(blob[:100] + bytes([blob[100] ^ 1]) + blob[101:])
    with pytest.raises(ValueError, match="does not start with Ren's CKKS header"):
        ckks.Ciphertext.from_bytes(b"hello")
    with pytest.raises(
        ValueError, match="expected a Ren CKKS plaintext blob, got one holding a 'ciphertext'"
    ):
        ckks.Plaintext.from_bytes(blob)
    future = bytearray(blob)
    future[8] = 3
    with pytest.raises(ValueError, match="format version 3; this Ren reads version 2"):
        ckks.Ciphertext.from_bytes(bytes(future))
    with pytest.raises(TypeError, match="expected bytes"):
        ckks.Ciphertext.from_bytes("text")
    other = ckks.Params(n=N, q_bits=(60, 40), p_bits=(60,), scale_bits=40, insecure=True)
    with ckks.Context(other, seed=1), pytest.raises(ValueError, match="was written for"):
        ckks.Ciphertext.from_bytes(blob)
    with pytest.raises(ValueError, match="does not start with"):
        ckks.Params.from_bytes(b"")


def test_altered_payload_with_a_fixed_checksum_is_still_checked(ctx, xy):
    """A blob rewritten with a valid checksum but a residue >= q is refused by the reader."""
    import hashlib

    x, _ = xy
    blob = bytearray(ckks.encrypt(x).to_bytes()[:-32])
    blob[-8:] = (2**64 - 1).to_bytes(8, "little")  # the last word of the last limb
    forged = bytes(blob) + hashlib.sha256(bytes(blob)).digest()
    with pytest.raises(ValueError, match="has a residue outside"):
        ckks.Ciphertext.from_bytes(forged)


def test_from_limbs_round_trip():
    ring = RingSpec(16, (97, 193))
    p = Poly.uniform(ring, 1).ntt().realize()
    back = Poly.from_limbs(p.limbs(), ring, Domain.NTT)
    assert back.tolist() == p.tolist() and back.domain is Domain.NTT
    with pytest.raises(ValueError, match="must have shape"):
        Poly.from_limbs(np.zeros((1, 16), dtype=np.int64), ring)
    limbs = np.full((2, 16), 150)
    limbs[0] = 5
    with pytest.raises(ValueError, match=r"limb 1 .* has a residue outside \[0, q=193\)"):
        Poly.from_limbs(limbs + np.array([[0], [50]]), ring)
    with pytest.raises(TypeError, match="integer array"):
        Poly.from_limbs(np.zeros((2, 16)), ring)


def test_sparse_secret_needs_insecure():
    with pytest.raises(ValueError, match="hamming_weight=64: the HE-standard table covers uniform"):
        ckks.Params(n=8192, q_bits=(60, 40, 40), p_bits=(60,), hamming_weight=64)


def test_scale_mismatch_message_tells_the_scales_apart(ctx):
    sq = ckks.encrypt([1.0]) * ckks.encrypt([1.0])  # scale 2^80 / q_2, within 2^-20 of 2^40
    with pytest.raises(ValueError) as info:
        ckks.encrypt([1.0], level=1) + sq
    assert repr(SMALL.scale) in str(info.value) and repr(sq.scale) in str(info.value)


def test_a_context_from_the_same_secret_key_takes_the_ciphertexts(ctx, xy):
    x, _ = xy
    ct = ckks.encrypt(x)
    again = ckks.Context(SMALL, secret_key=ctx.export_secret_key(), seed=99)
    assert bits(again.decrypt(ct), x) > 28
    assert bits(again.decrypt(again.rotate(ct, 1)), np.roll(x, -1)) > 27
