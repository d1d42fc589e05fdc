"""A user's program as a type checker sees it: ``tests/test_typing.py`` checks it with ``mypy
--strict`` against Ren as an installed package (through its ``py.typed``), and runs it.

``assert_type(value, T)`` states the type a checker must infer for ``value`` (at run time it
returns ``value``). The block under ``TYPE_CHECKING`` never runs: each of its lines is a mistake a
checker must report, and ``--strict`` (``warn_unused_ignores``) fails if the ignore is not needed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, assert_type

import numpy as np

import ren
from ren import Poly, RingSpec, settings
from ren.capture.function import JitFunction
from ren.schemes import ckks

# --- rings and polynomials --------------------------------------------------------------------
ring = RingSpec(16, ren.ntt_primes(16, 30, 2))
assert_type(ring.moduli, tuple[int, ...])
assert_type(ring.with_moduli(ring.moduli[:1]), RingSpec)
a = Poly(list(range(16)), ring)
b = Poly.const(3, ring)
assert_type(a + b, Poly)
assert_type(a * 2 - 1, Poly)
assert_type(3 * a + np.int64(2), Poly)
assert_type(-(a * b).ntt(), Poly)
assert_type(a.rescale().to_ring(RingSpec(16, ring.moduli[:1])), Poly)
assert_type(a.rotate(1).conjugate(), Poly)
assert_type(a.tolist(centered=True), list[int])
assert_type(a.limbs(), np.ndarray)
assert_type(ren.realize(a, b), tuple[Poly, ...])
assert_type(ren.__version__, str)


# --- ren.jit keeps the function's parameters and result ---------------------------------------
@ren.jit
def step(x: Poly, y: Poly) -> Poly:
    return x * y + x


@ren.jit(prune=True, max_plans=4)
def both(x: Poly) -> tuple[Poly, Poly]:
    return x + x, x * 2


plain: Callable[[Poly, Poly], Poly] = step  # a jitted function is a function of the same type
assert isinstance(step, JitFunction)
assert_type(step(a, b), Poly)
assert_type(step(a, b), Poly)  # a replay: the same outputs
assert_type(both(a), tuple[Poly, Poly])
assert_type(step.cache_info().hits, int)
assert step(a, b).tolist() == (a * b + a).tolist()

# --- settings -------------------------------------------------------------------------------
assert_type(settings.DEBUG.get(), int)
assert_type(settings.THREADS.get(), int | None)
with settings.override(REN_VALIDATE=True):
    assert_type(settings.VALIDATE.get(), bool)

# --- CKKS ---------------------------------------------------------------------------------------
params = ckks.Params(n=16, q_bits=(40, 30), p_bits=(40,), scale_bits=30, insecure=True)
values = np.array([1.0, -0.5, 0.25, 2.0, 0.0, 1.5, -1.0, 0.75])  # n/2 = 8 slots
with ckks.Context(params, seed=1) as ctx:
    ct = ckks.encrypt(values)
    assert_type(ct, ckks.Ciphertext)
    assert_type(ckks.multiply(ct, ct), ckks.Ciphertext)
    assert_type(ct * ct + 1.0, ckks.Ciphertext)
    assert_type(ct.rotate(1), ckks.Ciphertext)
    assert_type(ckks.decrypt(ct), np.ndarray)
    assert_type(ctx.decrypt(ctx.encrypt(values)), np.ndarray)
    assert_type(ckks.encode(values), ckks.Plaintext)
    assert_type(ctx.evaluation_keys(), ckks.EvaluationKeys)
    assert_type(ctx.key_fingerprint, str | None)
    bits = ckks.precision_bits(ckks.decrypt(ct * ct), values * values)
    assert_type(bits, float)
    assert bits > 10

if TYPE_CHECKING:  # mistakes a checker must catch (never run)
    step(a)  # type: ignore[call-arg]
    step(a, 2)  # type: ignore[arg-type]
    a + 1.5  # type: ignore[operator]
    RingSpec(16, ring.moduli, dtype=64)  # type: ignore[arg-type]
    ckks.Params(n="16", q_bits=(40,))  # type: ignore[arg-type]
    print(ren.no_such_name)  # type: ignore[attr-defined]
