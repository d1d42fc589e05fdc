"""``CUDARenderer``: elementwise kernels as CUDA C, one thread per word.

What differs from ``CRenderer``: the kernel is ``extern "C" __global__`` with launch bounds, each
thread computes the word ``gidx = blockIdx.x * blockDim.x + threadIdx.x`` (limb ``i = gidx / n``,
slot ``k = gidx % n``), tables live in ``__constant__`` memory, pointers are ``__restrict__``, and
there is no native 64x64->128-bit multiply: the ``u64`` Montgomery product is decomposed into the
``__umul64hi`` intrinsic (high word) and an ordinary 64-bit product (low word).
"""

from __future__ import annotations

from ren.codegen.renderer import Renderer
from ren.ring import RingSpec

__all__ = ["BLOCK", "CUDARenderer"]

#: Threads per block (and the launch bound the kernels declare).
BLOCK = 256

_PRELUDE = """\
/* Ren elementwise kernel (CUDA): words are Montgomery forms x*R mod q in [0, q). */
#include <stdint.h>
typedef {word} word_t;

/* a + b mod q for a, b in [0, q): a + b < 2q fits a word */
__device__ __forceinline__ word_t add_mod(word_t a, word_t b, word_t q) {{
  word_t s = a + b;
  return s >= q ? s - q : s;
}}
__device__ __forceinline__ word_t sub_mod(word_t a, word_t b, word_t q) {{
  return a >= b ? a - b : a + q - b;
}}
__device__ __forceinline__ word_t neg_mod(word_t a, word_t q) {{ return a ? q - a : 0; }}
/* Montgomery product a*b*R^-1 mod q in [0, q); qinv = q^-1 mod R. No 128-bit type: the high
   words come from {mulhi}, the low word of a*b is the wrapping product. */
__device__ __forceinline__ word_t mont_mul(word_t a, word_t b, word_t q, word_t qinv) {{
  word_t t_lo = a * b, t_hi = {mulhi}(a, b);
  word_t m = t_lo * qinv;
  word_t mq_hi = {mulhi}(m, q);
  return t_hi >= mq_hi ? t_hi - mq_hi : t_hi - mq_hi + q;
}}
"""


class CUDARenderer(Renderer):
    """CUDA C for the ``cuda`` device."""

    name = "cuda"
    restrict = "__restrict__"
    const_table = "__constant__"

    def prelude(self, ring: RingSpec) -> str:
        """The word typedefs and modular helpers, built on CUDA's high-word multiply intrinsic."""
        mulhi = "__umulhi" if ring.dtype == "u32" else "__umul64hi"
        return _PRELUDE.format(word=self.word(ring), mulhi=mulhi)

    def kernel_signature(self, name: str, params: list[str]) -> str:
        """An ``extern "C" __global__`` kernel with its launch bounds (``BLOCK`` threads)."""
        return f'extern "C" __global__ void __launch_bounds__({BLOCK}) {name}({", ".join(params)})'

    def loop(self, ring: RingSpec, body: list[str]) -> list[str]:
        """One thread per word: limb ``i`` and slot ``k`` from the global thread index."""
        shift = ring.n.bit_length() - 1
        return [
            "const long long gidx = (long long)blockIdx.x * blockDim.x + threadIdx.x;",
            f"if (gidx >= {ring.L * ring.n}) return;",
            f"const int i = (int)(gidx >> {shift}), k = (int)(gidx & {ring.n - 1});",
            *body,
        ]
