"""``CUDARenderer``: elementwise kernels as CUDA C, one thread per word.

What differs from ``CRenderer``: the kernel is ``extern "C" __global__`` with launch bounds, each
thread computes the word ``gidx = blockIdx.x * blockDim.x + threadIdx.x`` (limb ``i = gidx / n``,
slot ``k = gidx % n``), tables live in ``__constant__`` memory, pointers are ``__restrict__``, and
there is no native 64x64->128-bit multiply: the ``u64`` Montgomery product is decomposed into the
``__umul64hi`` intrinsic (high word) and an ordinary 64-bit product (low word).
"""

from __future__ import annotations

from ren.codegen import helpers
from ren.codegen.renderer import Renderer
from ren.ring import RingSpec

__all__ = ["BLOCK", "MUL_HI", "CUDARenderer", "device_helpers"]

#: Threads per block (and the launch bound the kernels declare).
BLOCK = 256

_PRELUDE = """\
/* Ren elementwise kernel (CUDA): words are Montgomery forms x*R mod q in [0, q). */
#include <stdint.h>
typedef {word} word_t;
"""

#: CUDA's high-word multiply intrinsics: no 128-bit type on the device.
MUL_HI = {"u32": "__umulhi", "u64": "__umul64hi"}


def device_helpers(dtype: str) -> str:
    """The modular helpers as ``__device__`` functions, high words from CUDA's intrinsics.

    The one text the CUDA renderer and the CUDA templates include (``ren.codegen.helpers.HELPERS``).
    """
    inline = "__device__ __forceinline__"
    return helpers.helpers(dtype, inline, helpers.MONT_MUL_HI, MUL_HI[dtype], "")


class CUDARenderer(Renderer):
    """CUDA C for the ``cuda`` device."""

    name = "cuda"
    restrict = "__restrict__"
    const_table = "__constant__"

    def prelude(self, ring: RingSpec) -> str:
        """The word typedefs and modular helpers, built on CUDA's high-word multiply intrinsic."""
        names = helpers.HELPER_NAMES.replace("{w}", ring.dtype)
        return _PRELUDE.format(word=self.word(ring)) + device_helpers(ring.dtype) + names

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
