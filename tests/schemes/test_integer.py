"""BFV and BGV: every result against NumPy's (or Python's) integer arithmetic mod ``t``.

Oracles: NumPy on int64/object arrays mod ``t`` for slot arithmetic, ``np.roll`` on the 2 x n/2
matrix for rotations, a schoolbook negacyclic product in Python integers for polynomial
plaintexts, and the noise recomputed from the parts and the secret key with Python integers (a
schoolbook product, no NTT) for the noise budget.
"""

from __future__ import annotations

import pickle
import threading

import numpy as np
import pytest

import ren
from ren.schemes import bfv, bgv
from ren.schemes.integer import batching
from tests.schemes.integer_cases import N, T, rows, small, values


def test_encrypt_decrypt_round_trip(scheme):
    with scheme.Context(small(scheme), seed=1) as ctx:
        v = values(0)
        assert np.array_equal(scheme.decrypt(scheme.encrypt(v)), v)
        assert np.array_equal(scheme.decrypt(scheme.encrypt(7)), np.full(N, 7))
        assert np.array_equal(ctx.decrypt(ctx.encrypt([1, -1])), np.r_[1, T - 1, np.zeros(N - 2)])
        assert np.array_equal(ctx.decode(ctx.encode(v)), v)


def test_arithmetic_equals_numpy_mod_t(scheme):
    with scheme.Context(small(scheme), seed=2) as ctx:
        a, b = values(1), values(2)
        x, y = scheme.encrypt(a), scheme.encrypt(b)
        cases = {
            "add": (x + y, a + b),
            "sub": (x - y, a - b),
            "neg": (-x, -a),
            "add int": (x + 300, a + 300),
            "int minus": (5 - x, 5 - a),
            "add values": (x + list(b), a + b),
            "times int": (x * -3, a * -3),
            "times big int": (x * (2**70 + 1), a * ((2**70 + 1) % T)),
            "times values": (x * b, a * b),
            "product": (x * y, a * b),
            "square plus": (x * x + y, a * a + b),
            "cube": (x * x * x, a * a * a),
        }
        for name, (ct, want) in cases.items():
            assert np.array_equal(ctx.decrypt(ct), np.mod(want, T)), name


def test_a_product_left_in_three_parts_is_relinearized_later(scheme):
    with scheme.Context(small(scheme), seed=2) as ctx:
        a, b = values(1), values(2)
        x, y = scheme.encrypt(a), scheme.encrypt(b)
        three = ctx.multiply(x, y, relinearize=False)
        assert three.size == 3 and np.array_equal(ctx.decrypt(three), np.mod(a * b, T))
        summed = ctx.add(three, ctx.multiply(y, y, relinearize=False))  # lazily, as HEIR does
        two = ctx.relinearize(summed)
        assert two.size == 2 and np.array_equal(ctx.decrypt(two), np.mod(a * b + b * b, T))
        words = [p.words() for p in ctx.relinearize(three).parts]
        assert all(np.array_equal(w, p.words()) for w, p in zip(words, (x * y).parts, strict=True))


def test_rotations_move_rows_as_seal_does(scheme):
    with scheme.Context(small(scheme), seed=3) as ctx:
        v = values(3)
        ct = ctx.encrypt(v)
        for k in (1, 2, -3, N // 2 + 1, 0):
            want = np.roll(rows(v), -k, axis=1).reshape(-1)
            assert np.array_equal(ctx.decrypt(ct.rotate_rows(k)), want), k
        assert np.array_equal(ctx.decrypt(ct.rotate_columns()), rows(v)[::-1].reshape(-1))
        with pytest.raises(TypeError, match="rotation steps must be an int"):
            ct.rotate_rows(1.0)


def test_slots_are_the_values_at_powers_of_3():
    """Row 0, column j holds m(psi^(3^j)) mod t, row 1 m(psi^(-3^j)) (Python integers).

    ``psi`` is the smallest primitive 2n-th root of unity mod t (found by search), as Ren's NTT.
    """
    params, v = small(bfv), values(4)
    coeffs = batching.encode(v, params)
    psi = next(g for g in range(2, T) if pow(g, N, T) == T - 1)
    for j in range(N // 2):
        e = pow(3, j, 2 * N)
        for row, exponent in ((0, e), (1, 2 * N - e)):
            root = pow(psi, exponent, T)
            got = sum(int(c) * pow(root, i, T) for i, c in enumerate(coeffs)) % T
            assert got == v[row * N // 2 + j], (row, j)


def negacyclic(a: list[int], b: list[int], mod: int) -> list[int]:
    n = len(a)
    out = [0] * n
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            if i + j < n:
                out[i + j] += x * y
            else:
                out[i + j - n] -= x * y
    return [v % mod for v in out]


def test_polynomial_plaintexts_without_batching(scheme):
    """``t = 256`` allows no batching: messages are polynomials, products negacyclic mod t."""
    params = small(scheme, t=256)
    assert not params.batching
    with scheme.Context(params, seed=5) as ctx:
        a = list(np.random.default_rng(5).integers(0, 256, N))
        b = list(np.random.default_rng(6).integers(0, 256, N))
        x = ctx.encrypt(ctx.encode_coefficients(a))
        y = ctx.encrypt(ctx.encode_coefficients(b))
        got = ctx.decrypt(x * y)
        assert got.tolist() == negacyclic([int(v) for v in a], [int(v) for v in b], 256)
        with pytest.raises(ValueError, match="does not allow batching"):
            ctx.encrypt([1, 2, 3])


def noise_by_hand(ctx, ct) -> int:
    """The budget from the parts and the secret with Python integers (schoolbook products)."""
    ring = ct.parts[0].ring
    Q, t = ring.Q, ctx.params.t
    s = ctx._secret.to_ring(ring).tolist()
    c = [p.tolist() for p in ct.parts]
    x = c[0]
    sk = s
    for part in c[1:]:
        x = [(u + v) % Q for u, v in zip(x, negacyclic(part, sk, Q), strict=True)]
        sk = negacyclic(sk, s, Q)
    if ctx.scheme == "bfv":
        x = [t * v % Q for v in x]
    worst = max(abs(v - Q if v > Q // 2 else v) for v in x)
    return max(0, Q.bit_length() - worst.bit_length() - 1)


def test_noise_budget_is_the_noise_measured_by_hand(scheme):
    with scheme.Context(small(scheme, n=16), seed=7) as ctx:
        x = ctx.encrypt(list(range(16)))
        fresh = ctx.noise_budget(x)
        assert fresh == noise_by_hand(ctx, x) > 0
        prod = x * x
        assert ctx.noise_budget(prod) == noise_by_hand(ctx, prod) < fresh
        assert scheme.noise_budget(prod) == ctx.noise_budget(prod)


def test_an_exhausted_budget_is_refused(scheme):
    params = small(scheme, q_bits=(30,), p_bits=(40,))
    with scheme.Context(params, seed=8) as ctx:
        x = ctx.encrypt(values(8))
        y = x
        while ctx.noise_budget(y) > 0:
            y = y * x
        with pytest.raises(scheme.NoiseBudgetExhausted, match="noise budget exhausted"):
            ctx.decrypt(y)


def test_bgv_mod_switch_keeps_the_values_and_shrinks_the_noise():
    with bgv.Context(small(bgv), seed=9) as ctx:
        a, b = values(9), values(10)
        prod = bgv.encrypt(a) * bgv.encrypt(b)
        down = bgv.mod_switch(prod)
        assert (down.level, down.correction) == (1, pow(ctx.params.q_moduli[2], -1, T))
        assert np.array_equal(bgv.decrypt(down), a * b % T)
        Q2, Q1 = ctx.params.ring(2).Q, ctx.params.ring(1).Q
        noise_before = Q2.bit_length() - ctx.noise_budget(prod)
        noise_after = Q1.bit_length() - ctx.noise_budget(down)
        # divided by a 50-bit modulus, down to the floor the rounding leaves (t times about |s|)
        assert noise_after <= noise_before - 10
        mixed = down + bgv.encrypt(b)  # another level and correction: matched first
        assert mixed.level == 1 and np.array_equal(bgv.decrypt(mixed), (a * b + b) % T)
        assert np.array_equal(bgv.decrypt(down * down), (a * b) ** 2 % T)
        bottom = ctx.mod_switch_to(prod, 0)
        assert bottom.level == 0 and np.array_equal(bgv.decrypt(bottom), a * b % T)
        with pytest.raises(ValueError, match="level 0"):
            ctx.mod_switch(bottom)
        with pytest.raises(ValueError, match="up to level"):
            ctx.mod_switch_to(bottom, 1)


def test_python_and_cpu_give_the_same_words(scheme):
    params = small(scheme)
    words = []
    for device in ("python", "cpu"):
        with scheme.Context(params, seed=11, device=device) as ctx:
            x = ctx.encrypt(values(11))
            out = (x * x).rotate_rows(1)
            words.append([p.limbs() for p in out.parts])
    for p, c in zip(*words, strict=True):
        assert np.array_equal(p, c)


def test_jit_replays_the_same_words(scheme):
    with scheme.Context(small(scheme), seed=12) as ctx:
        x, y = ctx.encrypt(values(12)), ctx.encrypt(values(13))
        f = ren.jit(lambda a, b: (a * b).rotate_rows(1) + a)
        eager = (x * y).rotate_rows(1) + x
        for _ in range(2):
            got = f(x, y)
            for p, q in zip(got.parts, eager.parts, strict=True):
                assert np.array_equal(p.limbs(), q.limbs())
        want = np.roll(rows(values(12) * values(13)), -1, axis=1).reshape(-1) + values(12)
        assert np.array_equal(ctx.decrypt(got), want % T)


def test_threads_each_use_their_own_current_context(scheme):
    params = small(scheme)
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            with scheme.Context(params, seed=100 + i) as ctx:
                v = values(i)
                ct = scheme.encrypt(v)
                assert scheme.current() is ctx
                assert np.array_equal(scheme.decrypt(ct * ct + i), (v * v + i) % T)
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    with pytest.raises(RuntimeError, match=r"no .* context is active"):
        scheme.current()


def test_parameters_are_checked(scheme):
    with pytest.raises(TypeError, match="t must be an int"):
        scheme.Params(n=N, q_bits=(50,), t=257.0, insecure=True)
    with pytest.raises(ValueError, match="t=1 must be at least 2"):
        scheme.Params(n=N, q_bits=(50,), t=1, insecure=True)
    with pytest.raises(ValueError, match="below every ciphertext modulus"):
        scheme.Params(n=N, q_bits=(20,), p_bits=(30,), t=2**20 + 1, insecure=True)
    with pytest.raises(ValueError, match="exceeds 218"):
        scheme.Params(n=8192, q_bits=(60, 60, 60), p_bits=(60,))
    p = scheme.Params(n=8192, q_bits=(43, 43, 44, 44), p_bits=(44,), t=65537)
    assert p.batching and p.log2_qp <= 218 and pickle.loads(pickle.dumps(p)) == p
    assert type(p).scheme == scheme.__name__.rsplit(".", 1)[-1]


def test_bad_input_is_named(scheme):
    with scheme.Context(small(scheme), seed=13) as ctx:
        with pytest.raises(TypeError, match="values"):
            ctx.encrypt([1.5, 2])
        with pytest.raises(TypeError, match="integers"):
            ctx.encrypt(np.ones(3))
        with pytest.raises(ValueError, match="do not fit the 64 slots"):
            ctx.encrypt(np.arange(N + 1))
        with pytest.raises(TypeError, match=f"expected a {ctx.scheme}.Ciphertext"):
            ctx.decrypt("ct")
        with pytest.raises(TypeError, match="holding a secret key"):
            pickle.dumps(ctx)
        other = scheme.Context(small(scheme, t=65537 % 97 + 97), seed=1)
        with pytest.raises(ValueError, match="not this context's"):
            other.decrypt(ctx.encrypt(1))


def test_fewer_digits_key_switch_the_same_values(scheme):
    """``dnum=1`` and ``dnum=2`` (digits of several moduli, as CKKS's hybrid key switching)."""
    for dnum, p_bits in ((2, (55, 55)), (1, (60, 60, 60))):
        params = small(scheme, dnum=dnum, p_bits=p_bits)
        assert len(params.digits) == dnum
        with scheme.Context(params, seed=14) as ctx:
            a, b = values(14), values(15)
            x, y = ctx.encrypt(a), ctx.encrypt(b)
            want = np.roll(rows(a * b), -3, axis=1).reshape(-1) % T
            assert np.array_equal(ctx.decrypt((x * y).rotate_rows(3)), want), dnum
            assert np.array_equal(ctx.decrypt(x.rotate_columns()), rows(a)[::-1].reshape(-1))
