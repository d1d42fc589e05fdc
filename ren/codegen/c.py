"""``CRenderer``: elementwise kernels as C for the system compiler (``cc -O3 -march=native``).

The kernel is one function looping over limbs (``#pragma omp parallel for`` when OpenMP is on)
and over the ``n`` words of each limb (a loop the compiler can vectorize). Modular helpers keep
every value in ``[0, q)``; the ``u64`` Montgomery product takes its high words from
32 x 32 -> 64-bit products, so the loops vectorize.
"""

from __future__ import annotations

from ren.codegen.renderer import Renderer
from ren.codegen.templates import MUL_HI_U64, omp_for
from ren.ring import RingSpec

__all__ = ["CRenderer"]

_PRELUDE = """\
/* Ren elementwise kernel: words are Montgomery forms x*R mod q in [0, q). */
#include <stdint.h>
typedef {word} word_t;
typedef {wide} wide_t; /* holds a product of two words */
#define WORD_BITS {bits}

/* a + b mod q for a, b in [0, q): a + b < 2q fits a word (q < 2^(WORD_BITS-2)) */
static inline word_t add_mod(word_t a, word_t b, word_t q) {{
  word_t s = a + b;
  return s >= q ? s - q : s;
}}
/* a - b mod q for a, b in [0, q) */
static inline word_t sub_mod(word_t a, word_t b, word_t q) {{ return a >= b ? a - b : a + q - b; }}
/* -a mod q for a in [0, q) (0 stays 0) */
static inline word_t neg_mod(word_t a, word_t q) {{ return a ? q - a : 0; }}
/* Montgomery product a*b*R^-1 mod q in [0, q) for a, b in [0, q); qinv = q^-1 mod R.
   m = lo(ab) * qinv makes lo(m q) = lo(ab), so (ab - m q) / R = hi(ab) - hi(m q) in (-q, q). */
{mont_mul}"""

#: u32: the product in a uint64_t, which compilers vectorize.
_MONT_MUL_WIDE = """\
static inline word_t mont_mul(word_t a, word_t b, word_t q, word_t qinv) {
  wide_t t = (wide_t)a * b;
  word_t m = (word_t)t * qinv;
  word_t t_hi = (word_t)(t >> WORD_BITS), mq_hi = (word_t)(((wide_t)m * q) >> WORD_BITS);
  return t_hi >= mq_hi ? t_hi - mq_hi : t_hi - mq_hi + q;
}
"""

#: u64: high words from 32 x 32 -> 64-bit products (``templates.MUL_HI_U64``), so the loop over
#: the words vectorizes; an ``unsigned __int128`` product keeps it scalar (about twice as slow).
_MONT_MUL_HI = """\
static inline word_t mont_mul(word_t a, word_t b, word_t q, word_t qinv) {
  word_t m = a * b * qinv;
  word_t t_hi = mul_hi_u64(a, b), mq_hi = mul_hi_u64(m, q);
  return t_hi >= mq_hi ? t_hi - mq_hi : t_hi - mq_hi + q;
}
"""


class CRenderer(Renderer):
    """C for the ``cpu`` device."""

    name = "c"

    def prelude(self, ring: RingSpec) -> str:
        """The word typedefs and modular helpers, with a double-width word for products."""
        wide = "uint64_t" if ring.dtype == "u32" else "unsigned __int128"
        mont_mul = _MONT_MUL_WIDE if ring.dtype == "u32" else MUL_HI_U64 + _MONT_MUL_HI
        return _PRELUDE.format(
            word=self.word(ring), wide=wide, bits=ring.word_bits, mont_mul=mont_mul
        )

    def kernel_signature(self, name: str, params: list[str]) -> str:
        """``void name(params)``: a plain C function."""
        return f"void {name}({', '.join(params)})"

    def loop(self, ring: RingSpec, body: list[str]) -> list[str]:
        """Two nested loops, over limbs ``i`` and slots ``k``, the outer one spread by OpenMP."""
        inner = ["    " + line for line in body]
        return [
            omp_for(ring),
            f"for (int i = 0; i < {ring.L}; i++) {{",
            f"  for (int k = 0; k < {ring.n}; k++) {{",
            *inner,
            "  }",
            "}",
        ]
