"""Predicted precision (``ckks.predicted_precision``) against the precision a decryption measures.

The oracle: the secret key's decryption, compared with the exact values (NumPy arithmetic of the
values encrypted) by ``ckks.precision_bits``. The prediction must be within 2 bits of it on
random programs of additions, products (of ciphertexts, plaintexts and numbers), rotations,
conjugations and rescales, at secure parameter sets of both key-switching techniques.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from ren.schemes import ckks

#: The goal: within 2 bits of the measured precision.
TOLERANCE = 2.0

SETS = {
    "hybrid-n8192": dict(n=8192, q_bits=(50, 40, 40), p_bits=(60,)),
    "hybrid-n16384-dnum2": dict(n=16384, q_bits=(60, 40, 40, 40, 40), p_bits=(60, 60, 60), dnum=2),
    "bv-digits-n8192": dict(n=8192, q_bits=(60, 40, 40, 40), key_switching="bv", digit_bits=24),
}


@pytest.fixture(scope="module", params=sorted(SETS))
def ctx(request: pytest.FixtureRequest) -> ckks.Context:
    context = ckks.Context(ckks.Params(**SETS[request.param]), seed=5, device="cpu")
    context.keygen()
    return context


def _values(rng: np.random.Generator, slots: int, real: bool) -> np.ndarray:
    if real:
        return rng.uniform(-1, 1, slots)
    return rng.uniform(-1, 1, slots) * np.exp(2j * np.pi * rng.uniform(0, 1, slots))


def _program(ctx: ckks.Context, seed: int) -> list[tuple[str, ckks.Ciphertext, np.ndarray]]:
    """A random program: its steps' ciphertexts and exact values, in order."""
    rng = np.random.default_rng(seed)
    pick = random.Random(seed)
    slots = ctx.params.slots
    real = pick.random() < 0.5
    pool = []
    for _ in range(2):
        v = _values(rng, slots, real)
        pool.append((ctx.encrypt(v), v))
    steps = []
    for _ in range(7):
        (a, va), (b, vb) = pick.choice(pool), pick.choice(pool)
        op = pick.choice(["add", "sub", "mul", "mul", "plain", "const", "rotate", "conj", "lazy"])
        if op in ("mul", "plain", "const", "lazy") and min(a.level, b.level) == 0:
            op = "add"
        if op == "add":
            out, v = a + b, va + vb
        elif op == "sub":
            out, v = a - b, va - vb
        elif op == "mul":
            out, v = a * b, va * vb
        elif op == "plain":
            w = _values(rng, slots, real)
            out, v = ckks.multiply(a, ctx.encode(w, a.level, ctx.params.q_moduli[a.level])), va * w
        elif op == "const":
            c = pick.uniform(-2, 2)
            out, v = a * c, va * c
        elif op == "rotate":
            k = pick.randrange(1, slots)
            out, v = a.rotate(k), np.roll(va, -k)
        elif op == "conj":
            out, v = a.conjugate(), np.conj(va)
        else:  # a product relinearized and rescaled by hand
            out = ckks.multiply(a, b, relinearize=False, rescale=False).relinearize().rescale()
            v = va * vb
        pool.append((out, v))
        steps.append((op, out, v))
    return steps


@pytest.mark.parametrize("seed", range(6))
def test_prediction_is_within_two_bits_on_random_programs(ctx: ckks.Context, seed: int) -> None:
    for op, ct, exact in _program(ctx, seed)[-3:]:
        got = ctx.decrypt(ct)
        if ct.real:
            got, exact = got.real, exact.real
        measured = ckks.precision_bits(got, exact)
        predicted = ckks.predicted_precision(ct)
        if measured == math.inf:  # x - x and what follows from it: exactly zero
            assert predicted == math.inf, (op, predicted)
        else:
            assert abs(predicted - measured) <= TOLERANCE, (op, predicted, measured)


def test_prediction_needs_no_secret_key(ctx: ckks.Context) -> None:
    server = ckks.Context(ctx.params, keys=ctx.evaluation_keys(), device="cpu")
    x = ctx.encrypt(np.full(ctx.params.slots, 0.5))
    y = ckks.Ciphertext.from_bytes(x.to_bytes(), server)
    with pytest.raises(ValueError, match="carries no predicted error"):
        ckks.predicted_precision(y)
    assert math.isfinite(ckks.predicted_precision(x * x))
    with pytest.raises(TypeError, match="takes a Ciphertext"):
        ckks.predicted_precision(np.zeros(4))  # type: ignore[arg-type]


def test_a_jitted_function_returns_no_estimate(ctx: ckks.Context) -> None:
    """A replay returns the captured result whatever its inputs: an estimate would be stale."""
    import ren

    @ren.jit
    def square(x: ckks.Ciphertext) -> ckks.Ciphertext:
        return x * x

    for scale in (1.0, 0.01):
        out = square(ctx.encrypt(np.full(ctx.params.slots, scale)))
        with pytest.raises(ValueError, match=r"ren\.jit function"):
            ckks.predicted_precision(out)
    x = ctx.encrypt(np.full(ctx.params.slots, 0.5))
    assert math.isfinite(ckks.predicted_precision(x * x))  # outside: as always
