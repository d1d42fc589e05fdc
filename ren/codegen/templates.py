"""Readable C templates for Ren's whole-polynomial kernels, one source per ring.

Each ``*_source`` function is a pure, cached function of its arguments and returns a
:class:`CKernel`: the C source (one translation unit), the name of its entry point and the
description of its arguments. The entry point is an ordinary ``void`` C function; a caller passes
``out`` and ``in`` (``(L, n)`` limb-major word arrays) and then, in order, the arrays the matching
``*_tables`` function returns::

    kernel = ntt_source(ring)                        # CKernel(source, name, args)
    fn = getattr(ctypes.CDLL(compile(kernel.source)), kernel.name)
    fn(out_ptr, in_ptr, *(t.ctypes.data for t in ntt_tables(ring)))

Conventions are those of :mod:`ren.ring.arith` (``docs/rings.md``), and every kernel
returns exactly its words: a polynomial is ``L`` limbs of ``n`` words, limb ``i`` modulo ``q_i``;
stored words are Montgomery form ``x * R mod q`` in ``[0, q)`` with ``R = 2**32`` (``u32``: words
``uint32_t``, moduli below ``2**30``) or ``2**64`` (``u64``: ``uint64_t``, moduli below ``2**62``).

Arithmetic:

* **Shoup multiplication** (V. Shoup, NTL; D. Harvey, "Faster arithmetic for number-theoretic
  transforms", J. Symb. Comp. 2014, Lemma 2) by a fixed ``w < q`` with ``w' = floor(w * 2**W /
  q)`` (``W`` the word bits): ``w*y - hi(w'*y) * q`` computed modulo ``2**W`` is ``w*y mod q`` or
  that plus ``q``, so in ``[0, 2q)``, for *any* word ``y``. The NTT is linear, so multiplying
  Montgomery words by plain twiddles gives the Montgomery form of the NTT.
* **Harvey's lazy butterflies**: values travel in ``[0, 4q)`` (forward) or ``[0, 2q)`` (inverse)
  and the last stage corrects them to ``[0, q)``. ``4q < 2**W`` because ``q < 2**(W-2)``.
* **Montgomery products** (``a * b * R^-1 mod q`` in ``[0, q)`` for ``a * b < q * R``) for rescale
  and base conversion, where the constants are Montgomery-encoded as in ``ren.ring.arith``.

The NTT loops are written for the compiler's vectorizer (``-O3``): with AVX-512 the high word of a
``u64`` product comes from four 32 x 32 -> 64-bit products, without it from one ``unsigned
__int128`` multiply, faster there (``ren.codegen.helpers.MUL_HI_U64``). Stages of ``t = 1, 2, 4``
butterflies per block get a literal ``t`` so that they vectorize across blocks; the first stage
reads ``in`` and the last corrects. With AVX-512 IFMA a limb with ``q < 2**50`` takes the
butterflies of :mod:`ren.codegen.ntt_ifma` instead: the same words, about 3.5 times faster.
Base conversion to ``u64`` words sums in 128 bits and reduces once (``BASE_CONVERT_WIDE_DOC``).

The ABI: every pointer is to C-contiguous words of the ring's ``word`` (``uint32_t`` for ``u32``,
``uint64_t`` for ``u64``), the twiddle tables too (``w' < 2**32`` for ``u32``); ``out`` never
overlaps ``in``.

Constants that are small (moduli, per-modulus factors) are emitted into the source as ``static
const`` arrays; per-slot tables (the twiddles) are arguments. Automorphisms have no template: they
lower to gathered loads inside elementwise kernels. Loops over limbs (or over coefficients, where
one step needs every limb) carry ``#pragma omp parallel for`` when there are at least
``OMP_MIN_WORDS`` words (and, over limbs, two limbs or more), which is ignored when compiling
without ``-fopenmp``. Compile with ``cc -O3 -march=native -shared -fPIC [-fopenmp]`` (gcc or clang:
rescale and base conversion use ``unsigned __int128`` for 64 x 64 -> 128-bit products); never with
``-ffast-math`` (base conversion's floating-point sum must be evaluated in order, as NumPy does).
"""

from __future__ import annotations

import functools

import numpy as np

from ren.codegen import ntt_ifma
from ren.codegen.ckernel import BLOCK, CArg, CKernel, block_of, frozen, ring_table, word_arg
from ren.codegen.helpers import (
    WORD,
    c_helpers,
    family_header,
    family_tag,
    fill,
    omp_for_limbs,
)
from ren.codegen.rns_templates import (
    BASE_CONVERT,
    BASE_CONVERT_DOC,
    BASE_CONVERT_WIDE_DOC,
    RESCALE,
    RESCALE_DOC,
    base_convert_constants,
    base_convert_source,
    base_convert_tables,
    rescale_constants,
    rescale_source,
    rescale_tables,
)
from ren.ring import RingSpec
from ren.ring.tables import shoup_powers

__all__ = [
    "BASE_CONVERT",
    "BASE_CONVERT_DOC",
    "BASE_CONVERT_WIDE_DOC",
    "BLOCK",
    "RESCALE",
    "RESCALE_DOC",
    "CArg",
    "CKernel",
    "base_convert_constants",
    "base_convert_source",
    "base_convert_tables",
    "block_of",
    "intt_source",
    "intt_tables",
    "ntt_source",
    "ntt_tables",
    "rescale_constants",
    "rescale_source",
    "rescale_tables",
    "ring_table",
]


# --------------------------------------------------------------------------------------------
# NTT


NTT_DOC = """\
Forward negacyclic NTT of each of the L limbs (n = {n}): Cooley-Tukey with the psi powers
merged into the twiddles, bit-reversed output. Slot k of limb i is a(psi_i^(2 brv(k) + 1)) mod
q_i, psi_i the smallest primitive 2n-th root of unity mod q_i (the order SEAL uses). Words are
Montgomery form in [0, q) on entry and exit; the twiddles are plain (the NTT is linear).

  out  (L, n) words, NTT form. Must not overlap `in`: the first stage reads `in` and writes
       `out`, the others work in place on `out`.
  in   (L, n) words, coefficient form, in [0, q).
  tw, tw_shoup  (L, n) words: tw[i][k] = psi_i^brv(k) mod q_i (k = 0 unused) and
       floor(tw * R / q_i); ren.codegen.templates.ntt_tables(ring).
  ring  L, then the moduli q_0 .. q_{L-1} (then q_i^-1 mod R, not read here), as words;
       ren.codegen.templates.ring_table(ring). One compiled kernel serves every L and every
       chain of moduli of this n and word size.

Stage m = 1, 2, ..., n/2 (t = n / 2m) runs butterflies on the pairs (x[j], y[j]) = (a[2it + j],
a[2it + t + j]), block i < m, with w = tw[m + i]. Bounds (Harvey 2014): every word stays in
[0, 4q) between stages; the last stage (t = 1) corrects its outputs to [0, q). 4q < R because
q < R / 4. Every loop is plain integer code over contiguous words, which compilers vectorize."""

NTT = """
typedef {word} word;

/* [0, 4q) -> [0, q) */
static inline word correct(word x, word q)
{
    x = x >= 2 * q ? x - 2 * q : x;                                /* [0, 2q) */
    return x >= q ? x - q : x;
}

/*
 * One forward stage: m blocks of t butterflies (U, V) -> (U + V w, U - V w), w = tw[m + i].
 * x[j], y[j] in [0, 4q) on entry and exit (Harvey 2014).
 */
static inline void ntt_stage(word *restrict a, size_t m, size_t t, const word *restrict w,
                             const word *restrict ws, word q, int last)
{
    const word two_q = 2 * q;
    for (size_t i = 0; i < m; ++i) {
        const word wi = w[m + i], wi_shoup = ws[m + i];
        word *restrict x = a + 2 * i * t;
        word *restrict y = x + t;
        for (size_t j = 0; j < t; ++j) {
            word u = x[j] >= two_q ? x[j] - two_q : x[j];          /* u in [0, 2q) */
            word v = mul_shoup_{w}(y[j], wi, wi_shoup, q);         /* v = y w, [0, 2q) */
            word s = u + v, d = u - v + two_q;                     /* [0, 4q), (0, 4q) */
            x[j] = last ? correct(s, q) : s;
            y[j] = last ? correct(d, q) : d;
        }
    }
}

{fast}
void {name}(word *restrict out, const word *restrict in,
    const word *restrict tw, const word *restrict tw_shoup, const word *restrict ring)
{
    const int L = (int)ring[0];                              /* the limbs; q_i = ring[1 + i] */
    {omp}
    for (int limb = 0; limb < L; ++limb) {
        const word q = ring[1 + limb], two_q = 2 * q;
        const word *restrict w = tw + (size_t)limb * {n};
        const word *restrict ws = tw_shoup + (size_t)limb * {n};
        const word *restrict src = in + (size_t)limb * {n};
        word *restrict a = out + (size_t)limb * {n};
        if (ntt_limb_fast(a, src, {n}, w, ws, q))          /* AVX-512 IFMA and q < 2^50 */
            continue;

        /* stage m = 1 (t = n/2) reads `in` and writes `out`, so no separate copy is needed */
        for (size_t j = 0; j < {n} / 2; ++j) {
            /* src[j], src[j + n/2] in [0, q) */
            word v = mul_shoup_{w}(src[j + {n} / 2], w[1], ws[1], q);  /* [0, 2q) */
            a[j] = src[j] + v;                                         /* [0, 3q) */
            a[j + {n} / 2] = src[j] - v + two_q;                       /* (0, 3q) */
        }

        /* stages m = 2, 4, ..., n/2; t = 1, 2, 4 are spelled out so that the compiler sees a
           constant t and vectorizes across blocks where the rows are too short */
        for (size_t m = 2, t = {n} / 4; m < {n}; m *= 2, t /= 2) {
            if (t == 1)
                ntt_stage(a, m, 1, w, ws, q, 1);        /* the last stage corrects to [0, q) */
            else if (t == 2)
                ntt_stage(a, m, 2, w, ws, q, 0);
            else if (t == 4)
                ntt_stage(a, m, 4, w, ws, q, 0);
            else
                ntt_stage(a, m, t, w, ws, q, 0);
        }

        if ({n} == 2) {                            /* the first stage was the last one */
            a[0] = correct(a[0], q);
            a[1] = correct(a[1], q);
        }
    }
}
"""

INTT_DOC = """\
Inverse negacyclic NTT of each of the L limbs (n = {n}): Gentleman-Sande with the psi^-1
powers merged into the twiddles, times n^-1; undoes the forward NTT exactly. Words are Montgomery
form in [0, q) on entry and exit; the twiddles are plain (the transform is linear).

  out  (L, n) words, coefficient form. Must not overlap `in`: the first stage reads `in` and
       writes `out`, the others work in place on `out`.
  in   (L, n) words, NTT form (slot order of the forward NTT), in [0, q).
  tw, tw_shoup  (L, n) words and floor(tw * R / q_i); ren.codegen.templates.intt_tables(ring):
       tw[i][k] = psi_i^-brv(k) mod q_i for k >= 2, tw[i][1] = psi_i^-brv(1) * n^-1 (the last
       stage's twiddle with n^-1 merged in), tw[i][0] = n^-1 mod q_i.
  ring  L, then the moduli (ren.codegen.templates.ring_table(ring)), as for the forward NTT.

Stage m = n/2, ..., 2, 1 (t = n / 2m) runs butterflies (x, y) -> (x + y, (x - y) w) on the pairs
(a[2it + j], a[2it + t + j]) with w = tw[m + i]. Bounds (Harvey 2014): every word stays in
[0, 2q) between stages; the last stage (m = 1) multiplies both outputs by n^-1 and corrects them
to [0, q)."""

INTT = """
typedef {word} word;

/*
 * One inverse stage: m blocks of t butterflies (U, V) -> (U + V, (U - V) w), w = tw[m + i].
 * x[j], y[j] in [0, 2q) on entry and exit (Harvey 2014).
 */
static inline void intt_stage(word *restrict a, size_t m, size_t t, const word *restrict w,
                              const word *restrict ws, word q)
{
    const word two_q = 2 * q;
    for (size_t i = 0; i < m; ++i) {
        const word wi = w[m + i], wi_shoup = ws[m + i];
        word *restrict x = a + 2 * i * t;
        word *restrict y = x + t;
        for (size_t j = 0; j < t; ++j) {
            word s = x[j] + y[j];                                  /* [0, 4q) */
            word d = x[j] - y[j] + two_q;                          /* (0, 4q) */
            x[j] = s >= two_q ? s - two_q : s;                     /* [0, 2q) */
            y[j] = mul_shoup_{w}(d, wi, wi_shoup, q);              /* [0, 2q) */
        }
    }
}

{fast}
void {name}(word *restrict out, const word *restrict in,
    const word *restrict tw, const word *restrict tw_shoup, const word *restrict ring)
{
    const int L = (int)ring[0];                              /* the limbs; q_i = ring[1 + i] */
    {omp}
    for (int limb = 0; limb < L; ++limb) {
        const word q = ring[1 + limb], two_q = 2 * q;
        const word *restrict w = tw + (size_t)limb * {n};
        const word *restrict ws = tw_shoup + (size_t)limb * {n};
        const word *restrict src = in + (size_t)limb * {n};
        word *restrict a = out + (size_t)limb * {n};
        if (intt_limb_fast(a, src, {n}, w, ws, q))         /* AVX-512 IFMA and q < 2^50 */
            continue;
        if ({n} == 2) {
            /* the only stage is the last one below, which works in place on `out` */
            memcpy(a, src, 2 * sizeof(word));
        } else {
            /* stage m = n/2 (t = 1) reads `in` and writes `out`: no separate copy is needed */
            for (size_t i = 0; i < {n} / 2; ++i) {
                /* src[2i], src[2i + 1] in [0, q) */
                const word wi = w[{n} / 2 + i], wi_shoup = ws[{n} / 2 + i];
                word x = src[2 * i], y = src[2 * i + 1];
                a[2 * i] = x + y;                                          /* [0, 2q) */
                a[2 * i + 1] = mul_shoup_{w}(x - y + q, wi, wi_shoup, q);  /* [0, 2q) */
            }
        }

        /* stages m = n/4, ..., 2; t = 2, 4 are spelled out so that the compiler sees a
           constant t and vectorizes across blocks where the rows are too short */
        for (size_t m = {n} / 4, t = 2; m > 1; m /= 2, t *= 2) {
            if (t == 2)
                intt_stage(a, m, 2, w, ws, q);
            else if (t == 4)
                intt_stage(a, m, 4, w, ws, q);
            else
                intt_stage(a, m, t, w, ws, q);
        }

        /* last stage (m = 1, t = n/2), times n^-1, corrected to [0, q) */
        const word n_inv = w[0], n_inv_shoup = ws[0];
        const word w1 = w[1], w1_shoup = ws[1];                        /* psi^-brv(1) n^-1 */
        word *restrict x = a;
        word *restrict y = a + {n} / 2;
        for (size_t j = 0; j < {n} / 2; ++j) {
            /* x[j], y[j] in [0, 2q) */
            word s = mul_shoup_{w}(x[j] + y[j], n_inv, n_inv_shoup, q);         /* [0, 2q) */
            word d = mul_shoup_{w}(x[j] - y[j] + two_q, w1, w1_shoup, q);       /* [0, 2q) */
            x[j] = s >= q ? s - q : s;                                         /* [0, q) */
            y[j] = d >= q ? d - q : d;                                         /* [0, q) */
        }
    }
}
"""


def _ntt_args(ring: RingSpec) -> tuple[CArg, ...]:
    return (
        word_arg("out", ring, "out"),
        word_arg("in", ring, "in"),
        word_arg("tw", ring, "table"),
        word_arg("tw_shoup", ring, "table"),
        word_arg("ring", ring, "table", (2 * ring.L + 1,)),
    )


def _ntt_family(ring: RingSpec, kind: str, template: str, doc: str, direction: str) -> CKernel:
    """Fill the forward or inverse NTT template for ``ring`` (both take the same arguments).

    The source depends on ``n`` and the word size only: the limbs and moduli are read from the
    ``ring`` table, so one build serves every level and chain of that shape.
    """
    name = f"ren_{kind}_{family_tag(ring)}"
    body = fill(
        template,
        omp=omp_for_limbs(ring.n),
        word=WORD[ring.dtype],
        w=ring.dtype,
        n=ring.n,
        name=name,
        fast=ntt_ifma.fast_source(ring),
    )
    head = family_header(f"{name}: {direction} negacyclic NTT", ring, fill(doc, n=ring.n))
    return CKernel(head + c_helpers(ring.dtype) + body, name, _ntt_args(ring))


@functools.cache
def ntt_source(ring: RingSpec) -> CKernel:
    """The forward NTT of every limb as C; see ``NTT_DOC`` (the source's own comment).

    Entry point ``void ren_ntt_<tag>(word *out, const word *in, const word *tw,
    const word *tw_shoup)``; ``word`` is ``uint32_t`` or ``uint64_t`` by ``ring.dtype``, the tables
    come from :func:`ntt_tables`. Matches :func:`ren.ring.arith.ntt` word for word.
    """
    return _ntt_family(ring, "ntt", NTT, NTT_DOC, "forward")


@functools.cache
def intt_source(ring: RingSpec) -> CKernel:
    """The inverse NTT (times ``n^-1``) of every limb as C; see ``INTT_DOC``.

    Entry point ``void ren_intt_<tag>(word *out, const word *in, const word *tw,
    const word *tw_shoup)``, tables from :func:`intt_tables`. Matches
    :func:`ren.ring.arith.intt` word for word.
    """
    return _ntt_family(ring, "intt", INTT, INTT_DOC, "inverse")


@functools.lru_cache(maxsize=1024)
def _twiddle_row(q: int, n: int, bits: int, inverse: bool) -> tuple[np.ndarray, np.ndarray]:
    """One limb's ``(tw, tw_shoup)`` row of :func:`ntt_tables` or :func:`intt_tables`, read-only.

    Made once per modulus from :func:`ren.ring.tables.shoup_powers` (the rings of a CKKS chain
    share their moduli, so a new ring of a known chain only stacks rows). The inverse row carries
    ``n^-1`` in its first two words.
    """
    row, shoup = shoup_powers(q, n, bits, inverse)
    if inverse:
        row, shoup = row.copy(), shoup.copy()
        n_inv = pow(n, -1, q)
        row[0], row[1] = n_inv, int(row[1]) * n_inv % q
        shoup[0], shoup[1] = (int(row[0]) << bits) // q, (int(row[1]) << bits) // q
    return frozen(row), frozen(shoup)


def _twiddle_tables(ring: RingSpec, inverse: bool) -> tuple[np.ndarray, np.ndarray]:
    rows = [_twiddle_row(q, ring.n, ring.word_bits, inverse) for q in ring.moduli]
    stacked = (np.stack([r[k] for r in rows]).astype(ring.np_dtype, copy=False) for k in (0, 1))
    return tuple(frozen(t) for t in stacked)  # type: ignore[return-value]


@functools.cache
def ntt_tables(ring: RingSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(tw, tw_shoup, ring)`` for :func:`ntt_source`: ``(L, n)`` arrays and :func:`ring_table`.

    ``tw[i, k] = psi_i**brv(k) mod q_i`` (plain; ``k = 0`` is not read) and ``tw_shoup[i, k] =
    floor(tw[i, k] * R / q_i)``. Read-only and cached.
    """
    return (*_twiddle_tables(ring, False), ring_table(ring))


@functools.cache
def intt_tables(ring: RingSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(tw, tw_shoup, ring)`` for :func:`intt_source`: ``(L, n)`` arrays and :func:`ring_table`.

    ``tw[i, k] = psi_i**-brv(k) mod q_i`` for ``k >= 2``; ``tw[i, 1] = psi_i**-brv(1) * n**-1``
    (the last stage's only twiddle, with the final ``n**-1`` merged in) and ``tw[i, 0] = n**-1 mod
    q_i``, which the last stage applies to its sums. ``tw_shoup = floor(tw * R / q_i)``. Read-only
    and cached.
    """
    return (*_twiddle_tables(ring, True), ring_table(ring))
