"""Basis change from one modulus as C: the fast path of ``templates.base_convert_source``.

A value of one limb (a key-switching digit, the special modulus in ModDown) is extended to other
moduli by its centered lift: ``y`` in ``[0, q)`` is ``y - q`` when past ``q/2``. The generic
kernel computes the same words through the 128-bit sums of a fast base conversion with ``L``
terms; with ``L = 1`` every sum has one term and ``Q/q = 1``, so the words are

  v   = floor(y / q + 1/2)          in double, 0 or 1: the same float64 operations as the generic
                                    kernel and ren.ring.arith.base_convert, so the same v
  out = (y mod p) - v (q mod p)     mod p, then one Montgomery product by R^2 mod p

one Montgomery product per word where the generic kernel takes three and two 128-bit products.
"""

from __future__ import annotations

import functools
import hashlib

from ren.codegen.ckernel import CKernel, word_arg
from ren.codegen.helpers import c_array, c_helpers, fill, header, limbs, omp_for, tag
from ren.ring import RingSpec

__all__ = ["applies", "lift_source"]

LIFT_DOC = """\
Basis change of one limb (q = {q}) to target moduli ({targets}): the centered value a_c mod each
target modulus, the words of the fast base conversion (ren.ring.arith.base_convert) with L = 1:
y = a R^-1 mod q plain, v = floor(y / q + 1/2) in double (0 or 1), out = (y mod p) - v (q mod p)
mod p in Montgomery form (y mod p by conditional subtractions of 2^k p where q < 32p, else a
division). A target modulus equal to q gets a copy of the limb.

  out  ({L_out}, {n}) target words; must not overlap `in`.
  in   (1, {n}) source words in [0, q), coefficient form."""

LIFT = """
enum { N_FRESH = {n_fresh}, N_SHARED = {n_shared}, B = {block} };
{consts}

void {name}(uint64_t *restrict out, const uint64_t *restrict in)
{
    const uint64_t q = {q}ULL, q_inv = {q_inv}ULL;
    const double q_float = {q_float};
    for (int s = 0; s < N_SHARED; ++s)
        for (size_t k = 0; k < {n}; ++k)
            out[(size_t)SHARED_DST[s] * {n} + k] = in[k];
    {omp}
    for (size_t k0 = 0; k0 < {n}; k0 += B) {
        uint64_t y[B], v[B];
        for (int b = 0; b < B; ++b) {
            y[b] = mont_mul_u64(in[k0 + b], 1, q, q_inv);                  /* plain, in [0, q) */
            v[b] = (uint64_t)((double)y[b] / q_float + 0.5);              /* as the reference */
        }
        for (int f = 0; f < N_FRESH; ++f) {
            const uint64_t p = P[f], p_inv = P_INV[f], q_mod_p = Q_MOD_P[f], r2 = R2[f];
            uint64_t *restrict dst = out + (size_t)FRESH_ROWS[f] * {n} + k0;
            uint64_t r[B];
            if (STEPS[f] < 0) {                             /* q >= 32p: y mod p by division */
                for (int b = 0; b < B; ++b)
                    r[b] = y[b] % p;
            } else {               /* q < 2^(s+1) p: subtract 2^k p where it fits, k = s .. 0 */
                for (int b = 0; b < B; ++b)
                    r[b] = y[b];
                for (int k = STEPS[f]; k >= 0; --k)
                    for (int b = 0; b < B; ++b)
                        r[b] = r[b] >= (p << k) ? r[b] - (p << k) : r[b];
            }
            for (int b = 0; b < B; ++b)
                dst[b] = mont_mul_u64(sub_mod_u64(r[b], q_mod_p & (0 - v[b]), p), r2, p, p_inv);
        }
    }
}
"""


def _steps(q: int, p: int) -> int:
    """How the kernel reduces ``y < q`` mod ``p``: ``s`` conditional subtractions, or -1 (a ``%``).

    ``s`` is the largest with ``2**s p <= q - 1`` (0 when ``q <= 2p``): subtracting ``2**k p``
    where it fits, ``k = s .. 0``, leaves ``y mod p``. Past ``s = 4`` (``q >= 32p``) a division.
    """
    s = max(0, ((q - 1) // p).bit_length() - 1)
    return s if s <= 4 else -1


def applies(ring: RingSpec, target: RingSpec) -> bool:
    """Whether :func:`lift_source` serves this basis change: one ``u64`` limb to ``u64`` words."""
    return ring.L == 1 and ring.dtype == target.dtype == "u64" and ring.n == target.n


@functools.cache
def lift_source(ring: RingSpec, target: RingSpec) -> CKernel:
    """The basis change of one limb as C, word for word the generic kernel's.

    Raises:
        ValueError: when :func:`applies` does not hold.
    """
    if not applies(ring, target):
        raise ValueError(f"lift_source converts one u64 limb to u64 words, not {ring} to {target}")
    (q,) = ring.moduli
    R = 1 << 64
    fresh = [k for k, p in enumerate(target.moduli) if p != q]
    shared = [k for k, p in enumerate(target.moduli) if p == q]
    ps = [target.moduli[k] for k in fresh]
    consts = [
        ("SHARED_DST", "int", shared),
        ("FRESH_ROWS", "int", fresh),
        ("P", "uint64_t", ps),
        ("P_INV", "uint64_t", [pow(p, -1, R) for p in ps]),
        ("Q_MOD_P", "uint64_t", [q % p for p in ps]),
        ("STEPS", "int", [_steps(q, p) for p in ps]),
        ("R2", "uint64_t", [R * R % p for p in ps]),
    ]
    digest = hashlib.sha256(repr(target).encode()).hexdigest()[:8]
    name = f"ren_lift_to{target.L}_{digest}_{tag(ring)}"
    doc = fill(LIFT_DOC, q=q, targets=limbs(target), L_out=target.L, n=ring.n)
    body = fill(
        LIFT,
        n_fresh=len(fresh),
        n_shared=len(shared),
        consts="\n".join(c_array(*c) for c in consts),
        name=name,
        q=q,
        q_inv=pow(q, -1, R),
        q_float=float(q).hex(),
        n=ring.n,
        omp=omp_for(target, over_limbs=False),
        block=min(ring.n, 64),
    )
    source = header(f"{name}: basis change of one limb", ring, doc) + c_helpers("u64") + body
    out = word_arg("out", target, "out")
    return CKernel(source, name, (out, word_arg("in", ring, "in")))
