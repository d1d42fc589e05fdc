"""Basis change from one modulus as C: the fast path of ``templates.base_convert_source``.

A value of one limb (a key-switching digit, the special modulus in ModDown) is extended to other
moduli by its centered lift: ``y`` in ``[0, q)`` is ``y - q`` when past ``q/2``. The generic
kernel computes the same words through the 128-bit sums of a fast base conversion with ``L``
terms; with ``L = 1`` every sum has one term and ``Q/q = 1``, so the words are

  v   = floor(y / q + 1/2)          in double, 0 or 1: the generic kernel's and
                                    ren.ring.arith.base_convert's float64 operations
  out = (y - v q) R mod p           in Montgomery form

Both steps are cheaper here than they look. Each float64 operation of ``v`` rounds
monotonically, so ``v`` is 1 exactly from a threshold ``T`` on, which the table holds
(``ren.ring.tables.lift_threshold``, found by bisection with those same operations):
``v = y >= T``, no division. And ``y < 2^64``, ``R^2 mod p < p`` make ``y (R^2 mod p) < p R``, in
range for one Montgomery product: ``y R mod p`` is that product, with no ``y mod p`` before it (a
64-bit division where ``q`` is much larger than ``p``). The ``- v q`` goes in before it as
``+ v (-q mod p)``, which keeps the sum below ``q + p < 2^64`` and the loop free of branches. So a
word is one Montgomery product, an add and an and; the generic kernel takes three products and
two 128-bit ones.
"""

from __future__ import annotations

import functools

import numpy as np

from ren.codegen.ckernel import (
    WORDS_C,
    CKernel,
    basis_change_args,
    block_of,
    frozen,
    word_range,
)
from ren.codegen.helpers import c_helpers, family_header, family_tag, fill, omp_for_words
from ren.ring import RingSpec
from ren.ring.tables import lift_threshold

__all__ = ["applies", "lift_source", "lift_tables"]

LIFT_DOC = """\
Basis change of one limb (q, from the table) to the table's target moduli: the centered value
a_c mod each target modulus, the words of the fast base conversion (ren.ring.arith.base_convert)
with L = 1: y = a R^-1 mod q plain, v = floor(y / q + 1/2) in double (0 or 1: the table's T is the
least y where it is 1), out = (y - v q) R mod p = mont(y + v (-q mod p), R^2 mod p). A
target modulus equal to q gets a copy of the limb.

  out      (L', {n}) target words; must not overlap `in`.
  in       (1, {n}) source words in [0, q), coefficient form.
  c        the table (ren.codegen.lift.lift_tables): F (fresh targets), S (shared), q, q^-1 mod
           2^64, T, the S rows equal to q, the F fresh rows, then P, P_INV, MINUS_Q (-q mod p)
           and R2 (R^2 mod p), F words each.
  q_float  (1,) q as a double (the basis-change family's argument; T stands for it here).
  words    (2,) the coefficients to compute, [words[0], words[1]) ([0, {n}) for all of them)."""

LIFT = """
enum { B = {block} };

void {name}(uint64_t *restrict out, const uint64_t *restrict in, const uint64_t *restrict c,
            const double *restrict q_float_, const int64_t *restrict words)
{
    {words}
    const int64_t n_fresh = (int64_t)c[0], n_shared = (int64_t)c[1];
    const uint64_t q = c[2], q_inv = c[3], T = c[4];
    const uint64_t *restrict SHARED_DST = c + 5, *restrict FRESH_ROWS = SHARED_DST + n_shared;
    const uint64_t *restrict P = FRESH_ROWS + n_fresh, *restrict P_INV = P + n_fresh;
    const uint64_t *restrict MINUS_Q = P_INV + n_fresh, *restrict R2 = MINUS_Q + n_fresh;
    const int64_t L = n_fresh;                          /* the rows the loop below computes */
    (void)L;                                            /* (read by OpenMP's if clause only) */
    (void)q_float_;
    for (int64_t s = 0; s < n_shared; ++s)
        for (size_t k = K_LO; k < K_HI; ++k)
            out[(size_t)SHARED_DST[s] * {n} + k] = in[k];
    {omp}
    for (size_t k0 = K_LO; k0 < K_HI; k0 += B) {
        uint64_t y[B], v[B];
        for (int b = 0; b < B; ++b) {
            y[b] = mont_mul_u64(in[k0 + b], 1, q, q_inv);                  /* plain, in [0, q) */
            v[b] = 0 - (uint64_t)(y[b] >= T);             /* all ones where y / q rounds to 1 */
        }
        for (int64_t f = 0; f < n_fresh; ++f) {
            const uint64_t p = P[f], p_inv = P_INV[f], minus_q = MINUS_Q[f], r2 = R2[f];
            uint64_t *restrict dst = out + (size_t)FRESH_ROWS[f] * {n} + k0;
            for (int b = 0; b < B; ++b)                    /* y + v (-q mod p) < q + p < 2^64 */
                dst[b] = mont_mul_u64(y[b] + (minus_q & v[b]), r2, p, p_inv);
        }
    }
}
"""


def applies(ring: RingSpec, target: RingSpec) -> bool:
    """Whether :func:`lift_source` serves this basis change: one ``u64`` limb to ``u64`` words."""
    return ring.L == 1 and ring.dtype == target.dtype == "u64" and ring.n == target.n


def _check(ring: RingSpec, target: RingSpec) -> None:
    if not applies(ring, target):
        raise ValueError(f"lift_source converts one u64 limb to u64 words, not {ring} to {target}")


@functools.cache
def lift_source(ring: RingSpec, target: RingSpec) -> CKernel:
    """The basis change of one limb as C, word for word the generic kernel's.

    ``void ren_lift_n<n>_u64(out, in, c, q_float)``: the moduli and constants are the tables of
    :func:`lift_tables`, so the source depends on ``n`` only (one build serves every limb of
    every chain of that ``n``).

    Raises:
        ValueError: when :func:`applies` does not hold.
    """
    _check(ring, target)
    name = f"ren_lift_{family_tag(ring)}"
    doc = fill(LIFT_DOC, n=ring.n)
    body = fill(
        LIFT,
        name=name,
        n=ring.n,
        omp=omp_for_words(ring.n),
        block=block_of(ring),
        words=WORDS_C,
    )
    source = family_header(f"{name}: basis change of one limb", ring, doc, "ren.codegen.lift")
    args = basis_change_args(ring, target, *lift_tables(ring, target))
    return CKernel(source + c_helpers("u64") + body, name, args)


@functools.cache
def lift_tables(ring: RingSpec, target: RingSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(c, q_float, words)`` for :func:`lift_source`: constants, ``q`` and every coefficient.

    ``c`` holds the sizes and constants as words, ``words`` the whole range of coefficients
    (``ren.codegen.ckernel.word_range``).

    Read-only and cached.

    Raises:
        ValueError: when :func:`applies` does not hold.
    """
    _check(ring, target)
    (q,) = ring.moduli
    R = 1 << 64
    fresh = [k for k, p in enumerate(target.moduli) if p != q]
    shared = [k for k, p in enumerate(target.moduli) if p == q]
    ps = [target.moduli[k] for k in fresh]
    words = [len(fresh), len(shared), q, pow(q, -1, R), lift_threshold(q), *shared, *fresh, *ps]
    words += [pow(p, -1, R) for p in ps]
    words += [-q % p for p in ps]
    words += [R * R % p for p in ps]
    q_float = frozen(np.array([float(q)], dtype=np.float64))
    return frozen(np.array(words, dtype=np.uint64)), q_float, word_range(ring.n)
