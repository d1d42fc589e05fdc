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
import hashlib
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ren.codegen import ntt_ifma
from ren.codegen.helpers import (
    WORD,
    c_array,
    c_helpers,
    fill,
    header,
    limbs,
    omp_for,
    tag,
)
from ren.ring import RingSpec
from ren.ring.arith import check_drop
from ren.ring.tables import modulus_powers

__all__ = [
    "CArg",
    "CKernel",
    "base_convert_source",
    "intt_source",
    "intt_tables",
    "ntt_source",
    "ntt_tables",
    "rescale_source",
]


@dataclass(frozen=True)
class CArg:
    """One argument of a generated entry point: a pointer to a C-contiguous NumPy array.

    ``ctype`` is the C parameter type, ``dtype`` and ``shape`` the NumPy array to pass, ``role``
    one of ``"out"`` (written), ``"in"`` (read) or ``"table"`` (read; from a ``*_tables``
    function).
    """

    name: str
    ctype: str
    dtype: str
    shape: tuple[int, ...]
    role: str

    def __repr__(self) -> str:
        return f"{self.ctype} {self.name}: {self.dtype}{list(self.shape)} {self.role}"


class CKernel(NamedTuple):
    """A generated kernel: the C ``source``, its entry point ``name`` and its ``args`` in order."""

    source: str
    name: str
    args: tuple[CArg, ...]


#: Coefficients per block in the rescale and base-conversion kernels: small enough that a block
#: of every limb stays in L1, large enough that the inner loops over it vectorize well.
BLOCK = 64


def _block(ring: RingSpec) -> int:
    return min(ring.n, BLOCK)


def _word_arg(name: str, ring: RingSpec, role: str, shape=None) -> CArg:
    const = "" if role == "out" else "const "
    return CArg(
        name,
        f"{const}{WORD[ring.dtype]} *",
        np.dtype(ring.np_dtype).name,
        shape or (ring.L, ring.n),
        role,
    )


# --------------------------------------------------------------------------------------------
# NTT


NTT_DOC = """\
Forward negacyclic NTT of each of the L = {L} limbs (n = {n}): Cooley-Tukey with the psi powers
merged into the twiddles, bit-reversed output. Slot k of limb i is a(psi_i^(2 brv(k) + 1)) mod
q_i, psi_i the smallest primitive 2n-th root of unity mod q_i (the order SEAL uses). Words are
Montgomery form in [0, q) on entry and exit; the twiddles are plain (the NTT is linear).

  out  (L, n) words, NTT form. Must not overlap `in`: the first stage reads `in` and writes
       `out`, the others work in place on `out`.
  in   (L, n) words, coefficient form, in [0, q).
  tw, tw_shoup  (L, n) words: tw[i][k] = psi_i^brv(k) mod q_i (k = 0 unused) and
       floor(tw * R / q_i); ren.codegen.templates.ntt_tables(ring).

Stage m = 1, 2, ..., n/2 (t = n / 2m) runs butterflies on the pairs (x[j], y[j]) = (a[2it + j],
a[2it + t + j]), block i < m, with w = tw[m + i]. Bounds (Harvey 2014): every word stays in
[0, 4q) between stages; the last stage (t = 1) corrects its outputs to [0, q). 4q < R because
q < R / 4. Every loop is plain integer code over contiguous words, which compilers vectorize."""

NTT = """
typedef {word} word;

static const word MODULI[{L}] = { {moduli} };

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
    const word *restrict tw, const word *restrict tw_shoup)
{
    {omp}
    for (int limb = 0; limb < {L}; ++limb) {
        const word q = MODULI[limb], two_q = 2 * q;
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
Inverse negacyclic NTT of each of the L = {L} limbs (n = {n}): Gentleman-Sande with the psi^-1
powers merged into the twiddles, times n^-1; undoes the forward NTT exactly. Words are Montgomery
form in [0, q) on entry and exit; the twiddles are plain (the transform is linear).

  out  (L, n) words, coefficient form. Must not overlap `in`: the first stage reads `in` and
       writes `out`, the others work in place on `out`.
  in   (L, n) words, NTT form (slot order of the forward NTT), in [0, q).
  tw, tw_shoup  (L, n) words and floor(tw * R / q_i); ren.codegen.templates.intt_tables(ring):
       tw[i][k] = psi_i^-brv(k) mod q_i for k >= 2, tw[i][1] = psi_i^-brv(1) * n^-1 (the last
       stage's twiddle with n^-1 merged in), tw[i][0] = n^-1 mod q_i.

Stage m = n/2, ..., 2, 1 (t = n / 2m) runs butterflies (x, y) -> (x + y, (x - y) w) on the pairs
(a[2it + j], a[2it + t + j]) with w = tw[m + i]. Bounds (Harvey 2014): every word stays in
[0, 2q) between stages; the last stage (m = 1) multiplies both outputs by n^-1 and corrects them
to [0, q)."""

INTT = """
typedef {word} word;

static const word MODULI[{L}] = { {moduli} };

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
    const word *restrict tw, const word *restrict tw_shoup)
{
    {omp}
    for (int limb = 0; limb < {L}; ++limb) {
        const word q = MODULI[limb], two_q = 2 * q;
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
        _word_arg("out", ring, "out"),
        _word_arg("in", ring, "in"),
        _word_arg("tw", ring, "table"),
        _word_arg("tw_shoup", ring, "table"),
    )


def _ntt_family(ring: RingSpec, kind: str, template: str, doc: str, direction: str) -> CKernel:
    """Fill the forward or inverse NTT template for ``ring`` (both take the same arguments)."""
    name = f"ren_{kind}_{tag(ring)}"
    body = fill(
        template,
        omp=omp_for(ring),
        word=WORD[ring.dtype],
        w=ring.dtype,
        L=ring.L,
        n=ring.n,
        name=name,
        moduli=limbs(ring),
        fast=ntt_ifma.fast_source(ring),
    )
    head = header(f"{name}: {direction} negacyclic NTT", ring, fill(doc, L=ring.L, n=ring.n))
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


def _shoup(w: list[int], q: int, bits: int) -> list[int]:
    """``floor(w * 2**bits / q)`` for each ``w < q``: below ``2**bits``."""
    return [(x << bits) // q for x in w]


@functools.lru_cache(maxsize=1024)
def _twiddle_row(q: int, n: int, bits: int, inverse: bool) -> tuple[list[int], list[int]]:
    """One limb's ``(tw, tw_shoup)`` row of :func:`ntt_tables` or :func:`intt_tables`.

    Made once per modulus: the rings of a CKKS chain share their moduli.
    """
    row = modulus_powers(q, n, bits, inverse, False).tolist()  # psi**(+-brv(k)), plain
    if inverse:
        n_inv = pow(n, -1, q)
        row[0], row[1] = n_inv, row[1] * n_inv % q
    return row, _shoup(row, q, bits)


def _frozen_words(ring: RingSpec, rows: list[list[int]]) -> np.ndarray:
    arr = np.array(rows, dtype=ring.np_dtype)
    arr.flags.writeable = False
    return arr


@functools.cache
def ntt_tables(ring: RingSpec) -> tuple[np.ndarray, np.ndarray]:
    """``(tw, tw_shoup)`` for :func:`ntt_source`: ``(L, n)`` arrays of ``ring.np_dtype``.

    ``tw[i, k] = psi_i**brv(k) mod q_i`` (plain; ``k = 0`` is not read) and ``tw_shoup[i, k] =
    floor(tw[i, k] * R / q_i)``. Read-only and cached.
    """
    rows = [_twiddle_row(q, ring.n, ring.word_bits, False) for q in ring.moduli]
    return _frozen_words(ring, [r[0] for r in rows]), _frozen_words(ring, [r[1] for r in rows])


@functools.cache
def intt_tables(ring: RingSpec) -> tuple[np.ndarray, np.ndarray]:
    """``(tw, tw_shoup)`` for :func:`intt_source`: ``(L, n)`` arrays of ``ring.np_dtype``.

    ``tw[i, k] = psi_i**-brv(k) mod q_i`` for ``k >= 2``; ``tw[i, 1] = psi_i**-brv(1) * n**-1``
    (the last stage's only twiddle, with the final ``n**-1`` merged in) and ``tw[i, 0] = n**-1 mod
    q_i``, which the last stage applies to its sums. ``tw_shoup = floor(tw * R / q_i)``. Read-only
    and cached.
    """
    rows = [_twiddle_row(q, ring.n, ring.word_bits, True) for q in ring.moduli]
    return _frozen_words(ring, [r[0] for r in rows]), _frozen_words(ring, [r[1] for r in rows])


# --------------------------------------------------------------------------------------------
# rescale


RESCALE_DOC = """\
Rescale: divide by P, the product of the dropped moduli, rounding half up, and drop those limbs:
out = floor((a_c + h) / P) mod q_i over the kept moduli, h = (P - 1) / 2, a_c the centered value.
For each coefficient: add h to every limb, then for each dropped p in turn divide exactly,
x_i <- (x_i - (x mod p)) p^-1 mod q_i, as ren.ring.arith.rescale does. Dropped, in this order:
  {p_list}

  out  (L - {D}, n) = ({L_out}, {n}) words, the kept limbs in ring order; must not overlap `in`.
  in   (L, n) = ({L}, {n}) words in [0, q), coefficient form.
{launch}Constants ({constants}, Montgomery form like the words): HALF[i] = h R mod q_i,
P_INV[d][i] = p_d^-1 R mod q_i (0 at p_d itself), R2[i] = R^2 mod q_i, Q_INV[i] = q_i^-1 mod R.
Every intermediate is a Montgomery product or a modular add/sub of values in [0, q_i), so it
lies in [0, q_i). Dropped rows keep being updated after they are read (their results are never
used); that keeps the loop free of branches."""

RESCALE = """
typedef {word} word;

static const word MODULI[{L}] = { {moduli} };
{consts}

enum { B = {block} };   /* coefficients per block: every inner loop runs over one block */

void {name}(word *restrict out, const word *restrict in)
{
    {omp}
    for (size_t k0 = 0; k0 < {n}; k0 += B) {
        word x[{L}][B], r[B];
        for (int i = 0; i < {L}; ++i)                                  /* a + h, [0, q_i) */
            for (int b = 0; b < B; ++b)
                x[i][b] = add_mod_{w}(in[(size_t)i * {n} + k0 + b], HALF[i], MODULI[i]);
        for (int d = 0; d < {D}; ++d) {
            const int j = DROP_ROWS[d];
            for (int b = 0; b < B; ++b)              /* x mod p, decoded: r in [0, p) */
                r[b] = mont_mul_{w}(x[j][b], 1, MODULI[j], Q_INV[j]);
            for (int i = 0; i < {L}; ++i) {
                const word q = MODULI[i], q_inv = Q_INV[i], r2 = R2[i], p_inv = P_INV[d][i];
                for (int b = 0; b < B; ++b) {
                    /* r < p < R, so r * R2[i] < q_i R: one product gives r R mod q_i */
                    word r_i = mont_mul_{w}(r[b], r2, q, q_inv);
                    word diff = sub_mod_{w}(x[i][b], r_i, q);            /* x - r, [0, q_i) */
                    x[i][b] = mont_mul_{w}(diff, p_inv, q, q_inv);        /* (x - r) / p */
                }
            }
        }
        for (int o = 0; o < {L_out}; ++o)
            for (int b = 0; b < B; ++b)
                out[(size_t)o * {n} + k0 + b] = x[KEEP_ROWS[o]][b];
    }
}
"""


def rescale_constants(ring: RingSpec, drop: tuple[int, ...]) -> list[tuple[str, str, list]]:
    """The constant arrays of a rescale kernel, ``(name, C type, values)``.

    Every backend's template uses them (see ``RESCALE_DOC``).
    """
    R = 1 << ring.word_bits
    h = (math.prod(drop) - 1) // 2
    keep = [i for i, q in enumerate(ring.moduli) if q not in drop]
    return [
        ("Q_INV", "word", [pow(q, -1, R) for q in ring.moduli]),
        ("R2", "word", [R * R % q for q in ring.moduli]),
        ("HALF", "word", [h % q * R % q for q in ring.moduli]),
        (
            "P_INV",
            "word",
            [[pow(p, -1, q) * R % q if q != p else 0 for q in ring.moduli] for p in drop],
        ),
        ("DROP_ROWS", "int", [ring.moduli.index(p) for p in drop]),
        ("KEEP_ROWS", "int", keep),
    ]


def base_convert_constants(ring: RingSpec, target: RingSpec) -> list[tuple]:
    """The constant arrays of a basis change, ``(name, C type, values[, per line])``.

    Every backend's template uses them (see ``BASE_CONVERT_DOC``).
    """
    Q, R, Rt = ring.Q, 1 << ring.word_bits, 1 << target.word_bits
    shared = [(k, ring.moduli.index(p)) for k, p in enumerate(target.moduli) if p in ring.moduli]
    fresh = [k for k, p in enumerate(target.moduli) if p not in ring.moduli]
    ps = [target.moduli[k] for k in fresh]
    return [
        ("Q_INV", "src_word", [pow(q, -1, R) for q in ring.moduli]),
        ("Q_HAT_INV", "src_word", [pow(Q // q, -1, q) for q in ring.moduli]),
        ("Q_FLOAT", "double", [float(q) for q in ring.moduli], 3),
        ("SHARED_DST", "int", [k for k, _ in shared]),
        ("SHARED_SRC", "int", [i for _, i in shared]),
        ("SHARED_R2", "dst_word", [Rt * Rt % target.moduli[k] for k, _ in shared]),
        ("SHARED_Q_INV", "dst_word", [pow(target.moduli[k], -1, Rt) for k, _ in shared]),
        ("FRESH_ROWS", "int", fresh),
        ("P", "dst_word", ps),
        ("P_INV", "dst_word", [pow(p, -1, Rt) for p in ps]),
        ("C", "dst_word", [[Q // q % p * Rt * Rt % p for p in ps] for q in ring.moduli]),
        ("Q_MOD_P", "dst_word", [Q % p * Rt * Rt % p for p in ps]),
    ]


def _wide_constants(ring: RingSpec, target: RingSpec) -> tuple[int, list[tuple]]:
    """``FOLD`` and the constant arrays of the 128-bit sums (``BASE_CONVERT_WIDE_DOC``).

    ``FOLD`` is the most terms that can be added to a folded accumulator (below ``2^64 + (2^64 - 1)
    (p - 1)``) or to the first term ``v (-Q mod p)`` (``v <= L``) and stay below ``2^128``.
    """
    Q, R = ring.Q, 1 << 64
    ps = [p for p in target.moduli if p not in ring.moduli]
    top = max(ps, default=2)
    term = max(q - 1 for q in ring.moduli) * (top - 1)
    start = max(ring.L * (top - 1), (R - 1) + (R - 1) * (top - 1))
    fold = (R * R - 1 - start) // term
    if fold < 1:  # unreachable for words below 2^62; kept as the proof's guard
        raise ValueError(f"cannot sum {ring!r} into {target!r} in 128 bits")
    fold = min(fold, ring.L)
    return fold, [
        ("C_PLAIN", "dst_word", [[Q // q % p for p in ps] for q in ring.moduli]),
        ("NEG_Q_MOD_P", "dst_word", [-Q % p for p in ps]),
        ("R_MOD_P", "dst_word", [R % p for p in ps]),
        ("R3", "dst_word", [R**3 % p for p in ps]),
    ]


@functools.cache
def _rescale_cached(ring: RingSpec, drop: tuple[int, ...]) -> CKernel:
    word = WORD[ring.dtype]
    keep = [i for i, q in enumerate(ring.moduli) if q not in drop]
    consts = "\n".join(c_array(*c) for c in rescale_constants(ring, drop))
    name = f"ren_rescale_d{len(drop)}_{hashlib.sha256(repr(drop).encode()).hexdigest()[:8]}"
    name += f"_{tag(ring)}"
    doc = fill(
        RESCALE_DOC,
        launch="",
        constants="emitted below",
        p_list=", ".join(map(str, drop)),
        D=len(drop),
        L=ring.L,
        L_out=len(keep),
        n=ring.n,
    )
    body = fill(
        RESCALE,
        omp=omp_for(ring, over_limbs=False),
        word=word,
        w=ring.dtype,
        L=ring.L,
        n=ring.n,
        name=name,
        D=len(drop),
        L_out=len(keep),
        moduli=limbs(ring),
        consts=consts,
        block=_block(ring),
    )
    source = header(f"{name}: rescale by {len(drop)} moduli", ring, doc)
    out = _word_arg("out", ring, "out", (len(keep), ring.n))
    return CKernel(source + c_helpers(ring.dtype) + body, name, (out, _word_arg("in", ring, "in")))


def rescale_source(ring: RingSpec, drop) -> CKernel:
    """Rescale by the moduli ``drop`` as C: ``void ren_rescale_<...>(word *out, const word *in)``.

    ``drop`` is a modulus or a tuple of distinct moduli of ``ring`` (divided in that order, as
    :func:`ren.ring.arith.rescale` does); ``out`` is ``(L - len(drop), n)`` over the
    kept moduli in ring order. Every constant is emitted into the source (no tables). Matches
    ``ren.ring.arith.rescale`` word for word. Cached per ``(ring, drop)``.

    Raises:
        ValueError: if a modulus of ``drop`` is not in ``ring``, repeats, or none would remain.
    """
    return _rescale_cached(ring, check_drop(ring, drop))


# --------------------------------------------------------------------------------------------
# base conversion


BASE_CONVERT_DOC = """\
Basis change to target moduli ({targets}), dtype {t_dtype}: the centered value a_c mod each
target modulus. A target modulus that is a source modulus gets a copy of that limb (re-encoded
when the dtypes differ). Every other target modulus p gets the fast base conversion with the
floating-point correction (Halevi-Polyakov-Shoup 2019), exactly as ren.ring.arith.base_convert:

  y_i = a_i (Q/q_i)^-1 mod q_i                          plain, in [0, q_i)
  v   = floor(sum_i y_i / q_i + 1/2)                    in double, v in [0, L]
  out = sum_i (y_i mod p) (Q/q_i mod p) - v (Q mod p)   mod p, Montgomery form, in [0, p)

(y_i mod p) is not computed when y_i fits a target word: the Montgomery product of y_i < R_t by
a constant below p is below p R_t, all it needs, and gives the same residue with no division.

The sum for v is taken in the order i = 0, 1, ..., L-1, as NumPy sums an (L, n) array over
axis 0, so v, and every word, is the same as the reference's.{rounding}

  out  (L', n) = ({L_out}, {n}) target words; must not overlap `in`.
  in   (L, n) = ({L}, {n}) source words in [0, q), coefficient form.
{launch}Constants ({constants}): Q_HAT_INV[i] = (Q/q_i)^-1 mod q_i (plain, so one Montgomery product
decodes and multiplies at once), Q_FLOAT[i] = (double)q_i as exact hex literals,
C[i][f] = (Q/q_i mod p_f) R_t^2 mod p_f and Q_MOD_P[f] = (Q mod p_f) R_t^2 mod p_f (one
Montgomery product with a plain value gives its Montgomery form). The float path has only
divisions and additions, so no contraction into FMAs can change it{fma}."""

#: The fresh moduli's sums with a Montgomery product and a modular addition per term (any word
#: sizes; the loops over a block vectorize).
FRESH_MONT = """        for (int f = 0; f < N_FRESH; ++f) {
            const dst_word p = P[f], p_inv = P_INV[f], q_mod_p = Q_MOD_P[f];
            dst_word acc[B];
            for (int b = 0; b < B; ++b)                           /* v <= L < p */
                acc[b] = sub_mod_{t}(0, mont_mul_{t}((dst_word)v[b], q_mod_p, p, p_inv), p);
            for (int i = 0; i < {L}; ++i) {
                const dst_word c = C[i][f];
                for (int b = 0; b < B; ++b) {
                    /* y_i itself when it fits a target word: y_i C < R_t p, all REDC needs */
                    const dst_word y_i = NARROW ? (dst_word)(y[i][b] % p) : (dst_word)y[i][b];
                    acc[b] = add_mod_{t}(acc[b], mont_mul_{t}(y_i, c, p, p_inv), p);
                }
            }
            for (int b = 0; b < B; ++b)
                out[(size_t)FRESH_ROWS[f] * {n} + k0 + b] = acc[b];
        }
"""

#: The fresh moduli's sums for ``u64`` targets, as BASE_CONVERT_WIDE_DOC describes.
FRESH_WIDE = """\
        enum { FOLD = {fold} };     /* terms added between folds (L = {L}: none when FOLD = L) */
        for (int f = 0; f < N_FRESH; ++f) {
            const uint64_t p = P[f], p_inv = P_INV[f];
            for (int b = 0; b < B; ++b) {
                /* sum_i y_i (Q/q_i mod p) + v (-Q mod p), exact: every term is below 2^124 */
                unsigned __int128 acc = (unsigned __int128)v[b] * NEG_Q_MOD_P[f];
                for (int i = 0; i < {L}; ++i) {
                    acc += (unsigned __int128)y[i][b] * C_PLAIN[i][f];
                    if (FOLD < {L} && (i + 1) % FOLD == 0)      /* hi 2^64 = hi (R mod p) */
                        acc = (uint64_t)acc + (unsigned __int128)(uint64_t)(acc >> 64) * R_MOD_P[f];
                }
                /* REDC of all 128 bits: r = acc R^-1 mod p, in [0, 2^64) */
                const uint64_t lo = (uint64_t)acc, hi = (uint64_t)(acc >> 64);
                const uint64_t mp_hi = (uint64_t)(((unsigned __int128)(lo * p_inv) * p) >> 64);
                const uint64_t r = hi >= mp_hi ? hi - mp_hi : hi - mp_hi + p;
                out[(size_t)FRESH_ROWS[f] * {n} + k0 + b] = mont_mul_u64(r, R3[f], p, p_inv);
            }
        }
"""

BASE_CONVERT_WIDE_DOC = """\

The sums for the fresh moduli p (u64 words) are taken whole, as OpenFHE and SEAL take them: every
term y_i (Q/q_i mod p) and v (-Q mod p) is a plain 64 x 64 -> 128-bit product (y_i < q_i and
the constants < p are below 2^62), added into one 128-bit accumulator with no reduction, so a term
costs one multiply and an add with carry. Every FOLD = {fold} terms (when that is fewer than L)
the accumulator is folded, hi 2^64 + lo -> lo + hi (2^64 mod p), to stay below 2^128; the bound
is checked exactly where the kernel is generated. The 128-bit sum T is reduced once, by a
Montgomery step on both words (r = T R^-1 mod p, r in [0, 2^64)), and one Montgomery product by
R^3 mod p gives T R mod p, the Montgomery form, in [0, p). Constants, in place of C and Q_MOD_P:
C_PLAIN[i][f] = Q/q_i mod p_f, NEG_Q_MOD_P[f] = -Q mod p_f, R_MOD_P[f] = 2^64 mod p_f and
R3[f] = 2^192 mod p_f."""

BASE_CONVERT = """
typedef {s_word} src_word;
typedef {t_word} dst_word;

enum {
    N_SHARED = {n_shared},   /* target moduli that are source moduli */
    N_FRESH = {n_fresh},    /* target moduli that are not */
    RECODE = {recode},     /* 1 when the source and target R differ ({s} -> {t}) */
    NARROW = {narrow},     /* 1 when a source word may not fit a target word */
    B = {block},          /* coefficients per block: every inner loop runs over one block */
};

static const src_word MODULI[{L}] = { {moduli} };
{consts}

void {name}(dst_word *restrict out, const src_word *restrict in)
{
    /* target moduli that are source moduli: copy the limb, re-encoded if R differs */
    for (int s = 0; s < N_SHARED; ++s) {
        const src_word *restrict src = in + (size_t)SHARED_SRC[s] * {n};
        dst_word *restrict dst = out + (size_t)SHARED_DST[s] * {n};
        const int row = SHARED_SRC[s];
        for (size_t k = 0; k < {n}; ++k) {
            if (RECODE) {
                /* decode with the source R, encode with the target R (plain < q < R_t) */
                src_word plain = mont_mul_{s}(src[k], 1, MODULI[row], Q_INV[row]);
                dst[k] = mont_mul_{t}((dst_word)plain, SHARED_R2[s], (dst_word)MODULI[row],
                                     SHARED_Q_INV[s]);
            } else {
                dst[k] = (dst_word)src[k];
            }
        }
    }

    /* fresh target moduli: fast base conversion, a block of coefficients at a time */
    if (N_FRESH == 0)
        return;
    {omp}
    for (size_t k0 = 0; k0 < {n}; k0 += B) {
        uint64_t y[{L}][B], v[B];
        double sum[B];
        for (int b = 0; b < B; ++b)
            sum[b] = 0.0;
        for (int i = 0; i < {L}; ++i)
            for (int b = 0; b < B; ++b) {
                y[i][b] = mont_mul_{s}(in[(size_t)i * {n} + k0 + b], Q_HAT_INV[i], MODULI[i],
                                       Q_INV[i]);
                sum[b] += (double)y[i][b] / Q_FLOAT[i];                /* in order, like NumPy */
            }
        for (int b = 0; b < B; ++b)
            v[b] = (uint64_t)(sum[b] + 0.5);                           /* floor: sum >= 0 */
{fresh}    }
}
"""


@functools.cache
def base_convert_source(ring: RingSpec, target: RingSpec) -> CKernel:
    """Fast base conversion from ``ring`` to ``target`` as C.

    The kernel is ``void ren_base_convert_<...>(dst_word *out, const src_word *in)``, with every
    constant emitted into the source (no tables).

    Matches :func:`ren.ring.arith.base_convert` word for word, including where the
    floating-point correction ``v`` is off by one (within rounding error of ``+-Q/2``): ``v`` is
    computed with the same float64 operations in the same order.

    Raises:
        ValueError: if ``target.n != ring.n``.
    """
    if not isinstance(target, RingSpec):
        raise TypeError(f"target must be a RingSpec, got {type(target).__name__}")
    if target.n != ring.n:
        raise ValueError(f"cannot convert {ring!r} to {target!r}: the degrees n differ")
    shared = [(k, ring.moduli.index(p)) for k, p in enumerate(target.moduli) if p in ring.moduli]
    fresh = [k for k, p in enumerate(target.moduli) if p not in ring.moduli]
    wide = target.dtype == "u64"
    constants = base_convert_constants(ring, target)
    if wide:
        fold, extra = _wide_constants(ring, target)
        constants = [c for c in constants if c[0] not in ("C", "Q_MOD_P")] + extra
    consts = "\n".join(c_array(*c) for c in constants)
    digest = hashlib.sha256(repr(target).encode()).hexdigest()[:8]
    name = f"ren_base_convert_to{target.L}_{digest}_{tag(ring)}"
    doc = fill(
        BASE_CONVERT_DOC,
        rounding="",
        launch="",
        constants="emitted below",
        fma="; -ffast-math would",
        targets=limbs(target),
        t_dtype=target.dtype,
        L=ring.L,
        L_out=target.L,
        n=ring.n,
    )
    if wide:
        doc += fill(BASE_CONVERT_WIDE_DOC, fold=fold)
    sums = FRESH_WIDE if wide else FRESH_MONT
    body = fill(
        BASE_CONVERT,
        omp=omp_for(ring, over_limbs=False),
        s_word=WORD[ring.dtype],
        t_word=WORD[target.dtype],
        s=ring.dtype,
        t=target.dtype,
        L=ring.L,
        n=ring.n,
        name=name,
        moduli=limbs(ring),
        consts=consts,
        n_shared=len(shared),
        n_fresh=len(fresh),
        recode=int(ring.dtype != target.dtype),
        narrow=int(ring.word_bits > target.word_bits),
        block=_block(ring),
        fresh=fill(sums, L=ring.L, n=ring.n, **({"fold": fold} if wide else {"t": target.dtype})),
    )
    helpers = "".join(c_helpers(d) for d in sorted({ring.dtype, target.dtype}))
    source = header(f"{name}: fast base conversion", ring, doc) + helpers + body
    out = _word_arg("out", target, "out")
    return CKernel(source, name, (out, _word_arg("in", ring, "in")))
