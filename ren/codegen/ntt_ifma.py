"""The NTT's butterflies with AVX-512 IFMA: the fast path of the C forward and inverse NTTs.

Intel's IFMA instructions (``vpmadd52luq``, ``vpmadd52huq``: the low and the high 52 bits of a
52 x 52-bit product, added to a 64-bit lane) give a Shoup product in three instructions per eight
words, where plain AVX-512 builds the high word of a 64 x 64-bit product from four 32-bit products
(``ren.codegen.helpers.MUL_HI_U64``). With ``beta = 2**52`` in place of ``R = 2**64``:

  w52  = floor(w * 2**52 / q) = w_shoup >> 12     (the same tables: floor of a floor)
  quot = hi52(y * w52)                            floor(y w / q) or one less, for y < 2**52
  v    = lo52(y * w) + lo52(quot * (2**52 - q))   mod 2**52: y w - quot q, in [0, 2q)

(D. Harvey, "Faster arithmetic for number-theoretic transforms", J. Symb. Comp. 2014, Lemma 2,
with ``beta = 2**52``). Harvey's lazy butterflies keep words below ``4q``, so a limb takes this
path when ``4q < 2**52``, that is ``q < 2**50``: the 43- and 44-bit moduli of SEAL's default
chains, CKKS's 40-bit scaling moduli. Other limbs of the same ring take the template's loops.

Every stage is the template's (the same twiddles, the same butterflies, values in ``[0, 4q)``
forward and ``[0, 2q)`` inverse); a Shoup product may differ from the 64-bit one by ``q``
between stages, and both are corrected to the one word in ``[0, q)`` at the end, so the outputs
are the template's words, word for word (``tests/codegen/test_ntt_ifma.py`` checks both paths
against :func:`ren.ring.arith.ntt`). Stages of ``t >= 8`` butterflies per block load 8 words of
each half; stages of ``t = 1, 2, 4`` take 16 words (``8 / t`` whole blocks) and gather their two
halves with two permutes. On the AVX-512 machine this was written on, one limb of ``n = 8192``
went from 61 to 16 microseconds forward and from 58 to 16 inverse.

The C text is compiled where the compiler targets IFMA (``-march=native`` on a CPU that has it,
so ``__AVX512IFMA__`` is defined); elsewhere, and for ``u32`` rings, the entry points are stubs
that return 0 and the template's loops run.
"""

from __future__ import annotations

from ren.ring import RingSpec

__all__ = ["FAST_LIMIT_BITS", "fast_source"]

#: A limb takes the fast path when its modulus is below ``2**FAST_LIMIT_BITS`` (``4q < 2**52``).
FAST_LIMIT_BITS = 50

#: The entry points where IFMA is absent: the template's loops run.
STUBS = """\
static inline int ntt_limb_fast(word *a, const word *src, size_t n, const word *w,
                                const word *ws, word q)
{
    (void)a, (void)src, (void)n, (void)w, (void)ws, (void)q;
    return 0;
}

static inline int intt_limb_fast(word *a, const word *src, size_t n, const word *w,
                                 const word *ws, word q)
{
    (void)a, (void)src, (void)n, (void)w, (void)ws, (void)q;
    return 0;
}
"""

FAST = (
    """\
/* ---- AVX-512 IFMA butterflies (ren.codegen.ntt_ifma): limbs with q < 2^50 ---- */
#if defined(__AVX512F__) && defined(__AVX512IFMA__)
#include <immintrin.h>
"""
    + """
/* The constants of one modulus q < 2^50, in every lane. */
typedef struct {
    __m512i q, two_q, neg_q, low52;
} fast_mod;

static inline fast_mod fast_mod_of(uint64_t q)
{
    fast_mod md = {_mm512_set1_epi64((long long)q), _mm512_set1_epi64((long long)(2 * q)),
                   _mm512_set1_epi64((long long)((1ULL << 52) - q)),
                   _mm512_set1_epi64((long long)((1ULL << 52) - 1))};
    return md;
}

/* x mod c for x in [0, 2c): x - c wraps past 2^63 when x < c, so the smaller is the answer. */
static inline __m512i fast_reduce(__m512i x, __m512i c)
{
    return _mm512_min_epu64(x, _mm512_sub_epi64(x, c));
}

/*
 * Shoup product y w mod q in [0, 2q) with beta = 2^52, for y < 2^52 and w52 = floor(w 2^52 / q)
 * (= w_shoup >> 12): quot = hi52(y w52) is floor(y w / q) or one less (Harvey 2014, Lemma 2), so
 * y w - quot q, taken mod 2^52 as lo52(y w) + lo52(quot (2^52 - q)), is the value in [0, 2q).
 */
static inline __m512i fast_shoup(__m512i y, __m512i w, __m512i w52, fast_mod md)
{
    const __m512i zero = _mm512_setzero_si512();
    __m512i quot = _mm512_madd52hi_epu64(zero, y, w52);
    __m512i r = _mm512_madd52lo_epu64(_mm512_madd52lo_epu64(zero, y, w), quot, md.neg_q);
    return _mm512_and_si512(r, md.low52);
}

/* Forward butterfly, the template's ntt_stage: x, y in [0, 4q) -> (u + v, u - v + 2q). */
static inline void fast_forward(__m512i *x, __m512i *y, __m512i w, __m512i w52, fast_mod md,
                                int last)
{
    __m512i u = fast_reduce(*x, md.two_q), v = fast_shoup(*y, w, w52, md);
    __m512i s = _mm512_add_epi64(u, v), d = _mm512_sub_epi64(_mm512_add_epi64(u, md.two_q), v);
    if (last) {
        s = fast_reduce(fast_reduce(s, md.two_q), md.q);
        d = fast_reduce(fast_reduce(d, md.two_q), md.q);
    }
    *x = s;
    *y = d;
}

/* Inverse butterfly, the template's intt_stage: x, y in [0, 2q) -> (x + y, (x - y + 2q) w). */
static inline void fast_inverse(__m512i *x, __m512i *y, __m512i w, __m512i w52, fast_mod md)
{
    __m512i s = _mm512_add_epi64(*x, *y), d = _mm512_sub_epi64(_mm512_add_epi64(*x, md.two_q), *y);
    *x = fast_reduce(s, md.two_q);
    *y = fast_shoup(d, w, w52, md);
}

/* A stage of m blocks of t >= 8 butterflies, 8 at a time: reads src, writes dst (or in place). */
static inline void fast_stage_wide(uint64_t *dst, const uint64_t *src, size_t m, size_t t,
                                   const uint64_t *w, const uint64_t *ws, fast_mod md, int inverse,
                                   int last)
{
    for (size_t i = 0; i < m; ++i) {
        const __m512i wi = _mm512_set1_epi64((long long)w[m + i]);
        const __m512i wi52 = _mm512_set1_epi64((long long)(ws[m + i] >> 12));
        const uint64_t *sx = src + 2 * i * t, *sy = sx + t;
        uint64_t *dx = dst + 2 * i * t, *dy = dx + t;
        for (size_t j = 0; j < t; j += 8) {
            __m512i x = _mm512_loadu_si512(sx + j), y = _mm512_loadu_si512(sy + j);
            if (inverse)
                fast_inverse(&x, &y, wi, wi52, md);
            else
                fast_forward(&x, &y, wi, wi52, md, last);
            _mm512_storeu_si512(dx + j, x);
            _mm512_storeu_si512(dy + j, y);
        }
    }
}

/*
 * A stage of t = 1, 2 or 4 butterflies per block: each 16 words hold 8 / t whole blocks, whose
 * x and y halves two permutes gather into one vector each (and two put back).
 */
static inline void fast_stage_narrow(uint64_t *dst, const uint64_t *src, size_t n, size_t m,
                                     size_t t, const uint64_t *w, const uint64_t *ws, fast_mod md,
                                     int inverse, int last)
{
    long long ix[8], iy[8], iw[8], back[16];
    for (size_t l = 0; l < 8; ++l) {
        ix[l] = (long long)((l / t) * 2 * t + l % t);
        iy[l] = ix[l] + (long long)t;
        iw[l] = (long long)(l / t);
    }
    for (size_t p = 0; p < 16; ++p) {
        size_t b = p / (2 * t), r = p % (2 * t);
        back[p] = (long long)(r < t ? b * t + r : 8 + b * t + r - t);
    }
    const __m512i IX = _mm512_loadu_si512(ix), IY = _mm512_loadu_si512(iy);
    const __m512i IW = _mm512_loadu_si512(iw);
    const __m512i B0 = _mm512_loadu_si512(back), B1 = _mm512_loadu_si512(back + 8);
    const __mmask8 blocks = (__mmask8)((1u << (8 / t)) - 1);
    for (size_t c = 0; c < n; c += 16) {
        const size_t i0 = m + c / (2 * t);
        __m512i a0 = _mm512_loadu_si512(src + c), a1 = _mm512_loadu_si512(src + c + 8);
        __m512i x = _mm512_permutex2var_epi64(a0, IX, a1);
        __m512i y = _mm512_permutex2var_epi64(a0, IY, a1);
        __m512i wv = _mm512_permutexvar_epi64(IW, _mm512_maskz_loadu_epi64(blocks, w + i0));
        __m512i w52 = _mm512_permutexvar_epi64(IW, _mm512_maskz_loadu_epi64(blocks, ws + i0));
        w52 = _mm512_srli_epi64(w52, 12);
        if (inverse)
            fast_inverse(&x, &y, wv, w52, md);
        else
            fast_forward(&x, &y, wv, w52, md, last);
        _mm512_storeu_si512(dst + c, _mm512_permutex2var_epi64(x, B0, y));
        _mm512_storeu_si512(dst + c + 8, _mm512_permutex2var_epi64(x, B1, y));
    }
}

/* The forward NTT of one limb, as the template's stages; 0 where it does not apply. */
static inline int ntt_limb_fast(uint64_t *a, const uint64_t *src, size_t n, const uint64_t *w,
                                const uint64_t *ws, uint64_t q)
{
    if (n < 16 || q >= (1ULL << 50))
        return 0;
    const fast_mod md = fast_mod_of(q);
    for (size_t m = 1, t = n / 2; m < n; m *= 2, t /= 2) {
        const uint64_t *from = m == 1 ? src : a;
        if (t >= 8)
            fast_stage_wide(a, from, m, t, w, ws, md, 0, 0);
        else
            fast_stage_narrow(a, from, n, m, t, w, ws, md, 0, t == 1);
    }
    return 1;
}

/* The inverse NTT of one limb, times n^-1, as the template's; 0 where it does not apply. */
static inline int intt_limb_fast(uint64_t *a, const uint64_t *src, size_t n, const uint64_t *w,
                                 const uint64_t *ws, uint64_t q)
{
    if (n < 16 || q >= (1ULL << 50))
        return 0;
    const fast_mod md = fast_mod_of(q);
    for (size_t m = n / 2, t = 1; m > 1; m /= 2, t *= 2) {
        const uint64_t *from = m == n / 2 ? src : a;
        if (t >= 8)
            fast_stage_wide(a, from, m, t, w, ws, md, 1, 0);
        else
            fast_stage_narrow(a, from, n, m, t, w, ws, md, 1, 0);
    }
    /* the last stage (m = 1, t = n/2): both outputs times n^-1, corrected to [0, q) */
    const __m512i n_inv = _mm512_set1_epi64((long long)w[0]);
    const __m512i n_inv52 = _mm512_set1_epi64((long long)(ws[0] >> 12));
    const __m512i w1 = _mm512_set1_epi64((long long)w[1]);
    const __m512i w1_52 = _mm512_set1_epi64((long long)(ws[1] >> 12));
    for (size_t j = 0; j < n / 2; j += 8) {
        __m512i x = _mm512_loadu_si512(a + j), y = _mm512_loadu_si512(a + n / 2 + j);
        __m512i s = fast_shoup(_mm512_add_epi64(x, y), n_inv, n_inv52, md);
        __m512i d = fast_shoup(_mm512_sub_epi64(_mm512_add_epi64(x, md.two_q), y), w1, w1_52, md);
        _mm512_storeu_si512(a + j, fast_reduce(s, md.q));
        _mm512_storeu_si512(a + n / 2 + j, fast_reduce(d, md.q));
    }
    return 1;
}
"""
    + """#else
"""
    + STUBS
    + "#endif\n"
)


def fast_source(ring: RingSpec) -> str:
    """The C text of ``ntt_limb_fast`` and ``intt_limb_fast`` for the NTT templates of ``ring``.

    Each takes one limb (``a`` the output, ``src`` the input, the limb's twiddle rows and ``q``)
    and returns 1 when it computed the whole transform, 0 when the template's loops must (no
    IFMA, ``n < 16`` or ``q >= 2**50``). For ``u32`` rings only the stubs.
    """
    return FAST if ring.dtype == "u64" else STUBS
