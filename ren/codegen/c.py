"""``CRenderer``: elementwise kernels as C for the system compiler (``cc -O3 -march=native``).

The kernel is one function looping over limbs (``#pragma omp parallel for`` when OpenMP is on)
and over the ``n`` words of each limb (a loop the compiler can vectorize). The limb count, the
moduli and their Montgomery constants come from the last argument, ``ring``
(``ren.codegen.templates.ring_table``), so one build serves a kernel body at every level and in
every chain of one ``n``. Modular helpers keep
every value in ``[0, q)``; the ``u64`` Montgomery product takes its high words from
32 x 32 -> 64-bit products, so the loops vectorize.
"""

from __future__ import annotations

from ren.codegen.batch import UNIT_MARK
from ren.codegen.helpers import HELPER_NAMES, c_helpers, omp_for_limbs
from ren.codegen.renderer import Renderer
from ren.ring import RingSpec

__all__ = ["CRenderer"]

_PRELUDE = """\
/* Ren elementwise kernel: words are Montgomery forms x*R mod q in [0, q). */
#include <stdint.h>
typedef {word} word_t;
"""


class CRenderer(Renderer):
    """C for the ``cpu`` device."""

    name = "c"
    ring_argument = True

    def prelude(self, ring: RingSpec) -> str:
        """The word typedef and the modular helpers the C templates use (one text for both)."""
        helpers = c_helpers(ring.dtype) + HELPER_NAMES.replace("{w}", ring.dtype)
        return _PRELUDE.format(word=self.word(ring)) + helpers + UNIT_MARK

    def kernel_signature(self, name: str, params: list[str]) -> str:
        """``void name(params)``: a plain C function."""
        return f"void {name}({', '.join(params)})"

    def loop(self, ring: RingSpec, body: list[str]) -> list[str]:
        """Two nested loops, over limbs ``i`` and slots ``k``, the outer one spread by OpenMP."""
        inner = ["    " + line for line in body]
        return [
            omp_for_limbs(ring.n),
            "for (int i = 0; i < L; i++) {",
            f"  for (int k = 0; k < {ring.n}; k++) {{",
            *inner,
            "  }",
            "}",
        ]
