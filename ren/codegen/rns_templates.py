"""The C templates of the RNS basis operations: rescale and fast basis extension.

Each takes its moduli, sizes and constants from tables (``rescale_tables``,
``base_convert_tables``), so one source serves every ring of one ``n`` and word size; the
constants are those every backend's template uses (``rescale_constants``,
``base_convert_constants``: the CUDA templates bake them into theirs). The conventions and
arithmetic are those of ``ren.codegen.templates`` (its module docstring), which re-exports every
name here.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ren.codegen.ckernel import (
    WORDS_ARG,
    WORDS_C,
    CKernel,
    basis_change_args,
    block_of,
    frozen,
    frozen_words,
    word_arg,
    word_range,
)
from ren.codegen.helpers import (
    WORD,
    CConstant,
    CValues,
    c_helpers,
    family_header,
    family_tag,
    fill,
    omp_for_words,
)
from ren.ring import RingSpec
from ren.ring.arith import check_drop

__all__ = [
    "BASE_CONVERT",
    "BASE_CONVERT_DOC",
    "BASE_CONVERT_WIDE_DOC",
    "RESCALE",
    "RESCALE_DOC",
    "base_convert_constants",
    "base_convert_source",
    "base_convert_tables",
    "rescale_constants",
    "rescale_source",
    "rescale_tables",
]


#: The ``words`` argument, as the kernels' comments describe it.
WORDS_DOC = "  words  (2,) the coefficients to compute, [words[0], words[1]) ([0, n) for all).\n"

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
{launch}{words}Constants ({constants}, Montgomery form like the words): HALF[i] = h R mod q_i,
P_INV[d][i] = p_d^-1 R mod q_i (0 at p_d itself), R2[i] = R^2 mod q_i, Q_INV[i] = q_i^-1 mod R.
Every intermediate is a Montgomery product or a modular add/sub of values in [0, q_i), so it
lies in [0, q_i). Dropped rows keep being updated after they are read (their results are never
used); that keeps the loop free of branches."""

RESCALE = """
typedef {word} word;

enum { B = {block} };   /* coefficients per block: every inner loop runs over one block */

void {name}(word *restrict out, const word *restrict in, const word *restrict c,
    const int64_t *restrict words)
{
    {words}
    /* the constants table (ren.codegen.templates.rescale_tables): its sizes, then each array */
    const int L = (int)c[0], D = (int)c[1], L_out = (int)c[2];
    const word *restrict MODULI = c + 3, *restrict Q_INV = MODULI + L, *restrict R2 = Q_INV + L;
    const word *restrict HALF = R2 + L, *restrict P_INV = HALF + L;     /* P_INV[d L + i] */
    const word *restrict DROP_ROWS = P_INV + (size_t)D * L, *restrict KEEP_ROWS = DROP_ROWS + D;
    {omp}
    for (size_t k0 = K_LO; k0 < K_HI; k0 += B) {
        word x[L][B], r[B];
        for (int i = 0; i < L; ++i)                                    /* a + h, [0, q_i) */
            for (int b = 0; b < B; ++b)
                x[i][b] = add_mod_{w}(in[(size_t)i * {n} + k0 + b], HALF[i], MODULI[i]);
        for (int d = 0; d < D; ++d) {
            const int j = (int)DROP_ROWS[d];
            for (int b = 0; b < B; ++b)              /* x mod p, decoded: r in [0, p) */
                r[b] = mont_mul_{w}(x[j][b], 1, MODULI[j], Q_INV[j]);
            for (int i = 0; i < L; ++i) {
                const word q = MODULI[i], q_inv = Q_INV[i], r2 = R2[i];
                const word p_inv = P_INV[(size_t)d * L + i];
                for (int b = 0; b < B; ++b) {
                    /* r < p < R, so r * R2[i] < q_i R: one product gives r R mod q_i */
                    word r_i = mont_mul_{w}(r[b], r2, q, q_inv);
                    word diff = sub_mod_{w}(x[i][b], r_i, q);            /* x - r, [0, q_i) */
                    x[i][b] = mont_mul_{w}(diff, p_inv, q, q_inv);        /* (x - r) / p */
                }
            }
        }
        for (int o = 0; o < L_out; ++o)
            for (int b = 0; b < B; ++b)
                out[(size_t)o * {n} + k0 + b] = x[KEEP_ROWS[o]][b];
    }
}
"""


def rescale_constants(ring: RingSpec, drop: tuple[int, ...]) -> list[tuple[str, str, CValues]]:
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


def base_convert_constants(ring: RingSpec, target: RingSpec) -> list[CConstant]:
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


def _wide_constants(ring: RingSpec, target: RingSpec) -> tuple[int, list[CConstant]]:
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
    """The rescale of ``ring``'s shape: the same source for every ring of its ``n`` and word."""
    keep = [i for i, q in enumerate(ring.moduli) if q not in drop]
    name = f"ren_rescale_{family_tag(ring)}"
    doc = fill(
        RESCALE_DOC,
        launch="",
        constants="from the table `c`, ren.codegen.templates.rescale_tables(ring, drop): L, D, "
        "L - D, the moduli, then Q_INV, R2, HALF, P_INV, the dropped rows and the kept rows",
        p_list="the moduli the table's dropped rows name",
        D="D",
        L="L",
        L_out="L - D",
        n=ring.n,
        words=WORDS_DOC,
    )
    body = fill(
        RESCALE,
        words=WORDS_C,
        omp=omp_for_words(ring.n),
        word=WORD[ring.dtype],
        w=ring.dtype,
        n=ring.n,
        name=name,
        block=block_of(ring),
    )
    source = family_header(f"{name}: rescale", ring, doc)
    out = word_arg("out", ring, "out", (len(keep), ring.n))
    table = word_arg("c", ring, "table", (len(_rescale_words(ring, drop)),))
    args = (out, word_arg("in", ring, "in"), table, WORDS_ARG)
    return CKernel(source + c_helpers(ring.dtype) + body, name, args)


def _rescale_words(ring: RingSpec, drop: tuple[int, ...]) -> list[int]:
    """The words of ``rescale_tables``: the sizes, then the arrays of ``rescale_constants``."""
    # Any: whether an array is 1-D or rows (P_INV) is told by its name
    named: dict[str, Any] = {name: values for name, _, values in rescale_constants(ring, drop)}
    keep = named["KEEP_ROWS"]
    words = [ring.L, len(drop), len(keep), *ring.moduli, *named["Q_INV"], *named["R2"]]
    words += [*named["HALF"], *(w for row in named["P_INV"] for w in row)]
    return [*words, *named["DROP_ROWS"], *keep]


@functools.cache
def rescale_tables(ring: RingSpec, drop: int | tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """``(c, words)`` for :func:`rescale_source`: one rescale's constants, every coefficient.

    ``words`` is the whole range of coefficients (``ren.codegen.ckernel.word_range``); ``c``:
    ``L``, ``D`` (moduli dropped), ``L - D``, then the moduli, ``Q_INV``, ``R2``, ``HALF``,
    ``P_INV`` (``D`` rows of ``L``), the dropped rows and the kept rows (``rescale_constants``).
    Read-only and cached.
    """
    return frozen_words(ring, _rescale_words(ring, check_drop(ring, drop))), word_range(ring.n)


def rescale_source(ring: RingSpec, drop: int | tuple[int, ...]) -> CKernel:
    """Rescale by the moduli ``drop`` as C: ``void ren_rescale_<n>_<w>(out, in, c)``.

    ``drop`` is a modulus or a tuple of distinct moduli of ``ring`` (divided in that order, as
    :func:`ren.ring.arith.rescale` does); ``out`` is ``(L - len(drop), n)`` over the
    kept moduli in ring order. The moduli and constants are the table ``c``
    (:func:`rescale_tables`), so the source is the same for every ring of one ``n`` and word
    size. Matches ``ren.ring.arith.rescale`` word for word. Cached per ``(ring, drop)``.

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
{launch}{words}Constants ({constants}): Q_HAT_INV[i] = (Q/q_i)^-1 mod q_i (plain, so one
Montgomery product decodes and multiplies at once), Q_FLOAT[i] = (double)q_i as exact hex literals,
C[i][f] = (Q/q_i mod p_f) R_t^2 mod p_f and Q_MOD_P[f] = (Q mod p_f) R_t^2 mod p_f (one
Montgomery product with a plain value gives its Montgomery form). The float path has only
divisions and additions, so no contraction into FMAs can change it{fma}."""

#: The fresh moduli's sums with a Montgomery product and a modular addition per term (any word
#: sizes; the loops over a block vectorize).
FRESH_MONT = """        for (int f = 0; f < N_FRESH; ++f) {
            const dst_word p = (dst_word)P[f], p_inv = (dst_word)P_INV[f];
            const dst_word q_mod_p = (dst_word)Q_MOD_P[f];
            dst_word acc[B];
            for (int b = 0; b < B; ++b)                           /* v <= L < p */
                acc[b] = sub_mod_{t}(0, mont_mul_{t}((dst_word)v[b], q_mod_p, p, p_inv), p);
            for (int i = 0; i < L; ++i) {
                const dst_word c = (dst_word)C[(size_t)i * N_FRESH + f];
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
        for (int f = 0; f < N_FRESH; ++f) {
            const uint64_t p = P[f], p_inv = P_INV[f];
            for (int b = 0; b < B; ++b) {
                /* sum_i y_i (Q/q_i mod p) + v (-Q mod p), exact: every term is below 2^124 */
                unsigned __int128 acc = (unsigned __int128)v[b] * NEG_Q_MOD_P[f];
                const uint64_t *restrict cp = C_PLAIN + f;           /* cp[i N_FRESH] */
                if (FOLD >= L) {        /* no fold: two independent sums, added at the end */
                    unsigned __int128 odd = 0;
                    int i = 0;
                    for (; i + 1 < L; i += 2) {
                        acc += (unsigned __int128)y[i][b] * cp[(size_t)i * N_FRESH];
                        odd += (unsigned __int128)y[i + 1][b] * cp[(size_t)(i + 1) * N_FRESH];
                    }
                    if (i < L)
                        acc += (unsigned __int128)y[i][b] * cp[(size_t)i * N_FRESH];
                    acc += odd;         /* the whole sum: below 2^128, as FOLD >= L says */
                }
                for (int i0 = 0; FOLD < L && i0 < L; i0 += FOLD) {  /* FOLD terms, a fold */
                    const int end = i0 + FOLD < L ? i0 + FOLD : L;
                    for (int i = i0; i < end; ++i)
                        acc += (unsigned __int128)y[i][b] * cp[(size_t)i * N_FRESH];
                    if (end % FOLD == 0)                      /* hi 2^64 = hi (R mod p) */
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
    RECODE = {recode},     /* 1 when the source and target R differ ({s} -> {t}) */
    NARROW = {narrow},     /* 1 when a source word may not fit a target word */
    B = {block},          /* coefficients per block: every inner loop runs over one block */
};

void {name}(dst_word *restrict out, const src_word *restrict in, const uint64_t *restrict c,
    const double *restrict Q_FLOAT, const int64_t *restrict words)
{
    {words}
    /* the constants table (ren.codegen.templates.base_convert_tables): sizes, then arrays */
    const int L = (int)c[0], N_SHARED = (int)c[1], N_FRESH = (int)c[2], FOLD = (int)c[3];
    const uint64_t *restrict MODULI = c + 4, *restrict Q_INV = MODULI + L;
    const uint64_t *restrict Q_HAT_INV = Q_INV + L, *restrict SHARED_DST = Q_HAT_INV + L;
    const uint64_t *restrict SHARED_SRC = SHARED_DST + N_SHARED;
    const uint64_t *restrict SHARED_R2 = SHARED_SRC + N_SHARED;
    const uint64_t *restrict SHARED_Q_INV = SHARED_R2 + N_SHARED;
    const uint64_t *restrict FRESH_ROWS = SHARED_Q_INV + N_SHARED;
    const uint64_t *restrict P = FRESH_ROWS + N_FRESH;
    const uint64_t *restrict P_INV = P + N_FRESH, *restrict SUMS = P_INV + N_FRESH;
{sum_tables}
    (void)FOLD;

    /* target moduli that are source moduli: copy the limb, re-encoded if R differs */
    for (int s = 0; s < N_SHARED; ++s) {
        const src_word *restrict src = in + (size_t)SHARED_SRC[s] * {n};
        dst_word *restrict dst = out + (size_t)SHARED_DST[s] * {n};
        const int row = (int)SHARED_SRC[s];
        for (size_t k = K_LO; k < K_HI; ++k) {
            if (RECODE) {
                /* decode with the source R, encode with the target R (plain < q < R_t) */
                src_word plain = mont_mul_{s}(src[k], 1, (src_word)MODULI[row],
                                              (src_word)Q_INV[row]);
                dst[k] = mont_mul_{t}((dst_word)plain, (dst_word)SHARED_R2[s],
                                     (dst_word)MODULI[row], (dst_word)SHARED_Q_INV[s]);
            } else {
                dst[k] = (dst_word)src[k];
            }
        }
    }

    /* fresh target moduli: fast base conversion, a block of coefficients at a time */
    if (N_FRESH == 0)
        return;
    {omp}
    for (size_t k0 = K_LO; k0 < K_HI; k0 += B) {
        uint64_t y[L][B], v[B];
        double sum[B];
        for (int b = 0; b < B; ++b)
            sum[b] = 0.0;
        for (int i = 0; i < L; ++i) {
            const src_word q = (src_word)MODULI[i], q_inv = (src_word)Q_INV[i];
            const src_word q_hat_inv = (src_word)Q_HAT_INV[i];
            for (int b = 0; b < B; ++b) {
                y[i][b] = mont_mul_{s}(in[(size_t)i * {n} + k0 + b], q_hat_inv, q, q_inv);
                sum[b] += (double)y[i][b] / Q_FLOAT[i];                /* in order, like NumPy */
            }
        }
        for (int b = 0; b < B; ++b)
            v[b] = (uint64_t)(sum[b] + 0.5);                           /* floor: sum >= 0 */
{fresh}    }
}
"""

#: Where each form's sums find their constants after ``SUMS`` in the table.
SUM_TABLES = {
    "mont": "    const uint64_t *restrict C = SUMS, *restrict Q_MOD_P = C + (size_t)L * N_FRESH;\n",
    "wide": "    const uint64_t *restrict C_PLAIN = SUMS;\n"
    "    const uint64_t *restrict NEG_Q_MOD_P = C_PLAIN + (size_t)L * N_FRESH;\n"
    "    const uint64_t *restrict R_MOD_P = NEG_Q_MOD_P + N_FRESH;\n"
    "    const uint64_t *restrict R3 = R_MOD_P + N_FRESH;\n",
}


@functools.cache
def base_convert_source(ring: RingSpec, target: RingSpec) -> CKernel:
    """Fast base conversion from ``ring`` to ``target`` as C.

    The kernel is ``void ren_base_convert_<...>(dst_word *out, const src_word *in, const
    uint64_t *c, const double *q_float)``; its moduli, sizes and constants are the tables of
    :func:`base_convert_tables`, so the source depends on ``n`` and the two word sizes only.

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
    wide = target.dtype == "u64"
    name = f"ren_base_convert_to_{target.dtype}_{family_tag(ring)}"
    doc = fill(
        BASE_CONVERT_DOC,
        rounding="",
        launch="",
        constants="from the tables c and Q_FLOAT, ren.codegen.templates.base_convert_tables",
        fma="; -ffast-math would",
        targets="the table's",
        t_dtype=target.dtype,
        L="L",
        L_out="L'",
        n=ring.n,
        words=WORDS_DOC,
    )
    if wide:
        doc += fill(BASE_CONVERT_WIDE_DOC, fold="FOLD (from the table)")
    sums = FRESH_WIDE if wide else FRESH_MONT
    body = fill(
        BASE_CONVERT,
        omp=omp_for_words(ring.n),
        s_word=WORD[ring.dtype],
        t_word=WORD[target.dtype],
        s=ring.dtype,
        t=target.dtype,
        n=ring.n,
        name=name,
        recode=int(ring.dtype != target.dtype),
        narrow=int(ring.word_bits > target.word_bits),
        block=block_of(ring),
        sum_tables=SUM_TABLES["wide" if wide else "mont"],
        fresh=fill(sums, n=ring.n, **({} if wide else {"t": target.dtype})),
        words=WORDS_C,
    )
    helpers = "".join(c_helpers(d) for d in sorted({ring.dtype, target.dtype}))
    source = family_header(f"{name}: fast base conversion", ring, doc) + helpers + body
    args = basis_change_args(ring, target, *base_convert_tables(ring, target))
    return CKernel(source, name, args)


@functools.cache
def base_convert_tables(
    ring: RingSpec, target: RingSpec
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(c, q_float, words)`` for :func:`base_convert_source`: the constants, every coefficient.

    ``c`` (``uint64``): ``L``, the shared and fresh target moduli's counts, ``FOLD`` (``u64``
    targets, else 0), then the source moduli, ``Q_INV``, ``Q_HAT_INV``, the shared rows (target,
    source), ``SHARED_R2``, ``SHARED_Q_INV``, the fresh rows, ``P``, ``P_INV``, then the sums'
    constants (``C`` and ``Q_MOD_P``, or for ``u64`` targets ``C_PLAIN``, ``NEG_Q_MOD_P``,
    ``R_MOD_P`` and ``R3``), each as ``base_convert_constants`` gives it; ``q_float`` the source
    moduli as doubles; ``words`` the whole range of coefficients. Read-only and cached.
    """
    named: dict[str, Any] = {c[0]: c[2] for c in base_convert_constants(ring, target)}  # by name
    fold = 0
    if target.dtype == "u64":
        fold, extra = _wide_constants(ring, target)
        named.update({c[0]: c[2] for c in extra})
        sums = ["C_PLAIN", "NEG_Q_MOD_P", "R_MOD_P", "R3"]
    else:
        sums = ["C", "Q_MOD_P"]
    words = [ring.L, len(named["SHARED_DST"]), len(named["FRESH_ROWS"]), fold, *ring.moduli]
    order = ["Q_INV", "Q_HAT_INV", "SHARED_DST", "SHARED_SRC", "SHARED_R2", "SHARED_Q_INV"]
    for key in [*order, "FRESH_ROWS", "P", "P_INV", *sums]:
        values = named[key]
        words += (
            [w for row in values for w in row] if values and isinstance(values[0], list) else values
        )
    q_float = frozen(np.array(named["Q_FLOAT"]))
    return frozen(np.array(words, dtype=np.uint64)), q_float, word_range(ring.n)
