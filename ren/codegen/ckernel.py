"""What the C templates share: the description of a kernel's arguments and of a kernel.

``CKernel(source, name, args)`` is a generated kernel; each ``CArg`` is one pointer argument
(its C type, the NumPy array to pass and its role); ``ring_table`` is the last argument of the
kernels that read their limb count and moduli when they run. ``word_arg`` describes a ``(L, n)``
word array of a ring, ``block_of`` the block of coefficients the rescale and basis-extension loops
take.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ren.codegen.helpers import WORD
from ren.ring import RingSpec
from ren.ring.spec import WordArray

__all__ = [
    "BLOCK",
    "WORDS_ARG",
    "WORDS_C",
    "CArg",
    "CKernel",
    "basis_change_args",
    "block_of",
    "frozen",
    "frozen_words",
    "ring_table",
    "word_arg",
    "word_range",
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


def block_of(ring: RingSpec) -> int:
    """Coefficients per block for ``ring``: ``BLOCK``, or ``n`` when smaller."""
    return min(ring.n, BLOCK)


def word_arg(name: str, ring: RingSpec, role: str, shape: tuple[int, ...] | None = None) -> CArg:
    """A pointer to ``ring``'s words, ``(L, n)`` unless ``shape`` says; ``const`` unless written."""
    const = "" if role == "out" else "const "
    return CArg(
        name,
        f"{const}{WORD[ring.dtype]} *",
        np.dtype(ring.np_dtype).name,
        shape or (ring.L, ring.n),
        role,
    )


def basis_change_args(
    ring: RingSpec, target: RingSpec, c: np.ndarray, q_float: np.ndarray, *_: np.ndarray
) -> tuple[CArg, ...]:
    """``out, in, c, q_float, words``: a basis change from ``ring`` to ``target`` (three tables)."""
    return (
        word_arg("out", target, "out"),
        word_arg("in", ring, "in"),
        CArg("c", "const uint64_t *", "uint64", c.shape, "table"),
        CArg("q_float", "const double *", "float64", q_float.shape, "table"),
        WORDS_ARG,
    )


#: The last argument of the kernels that loop over blocks of coefficients (rescale, basis
#: change): the first and the end coefficient to compute, ``[0, n)`` for the whole polynomial.
#: A threaded graph runner gives each of its tasks a range (``ren.backends.cpu_tasks``).
WORDS_ARG = CArg("words", "const int64_t *", "int64", (2,), "table")

#: How a kernel reads its ``words`` argument (the range its block loop runs over).
WORDS_C = "const size_t K_LO = (size_t)words[0], K_HI = (size_t)words[1];"


@functools.cache
def word_range(n: int, lo: int = 0, hi: int | None = None) -> np.ndarray:
    """The ``words`` table ``[lo, hi)`` (default: all ``n`` coefficients); read-only, cached."""
    return frozen(np.array([lo, n if hi is None else hi], dtype=np.int64))


def frozen(arr: np.ndarray) -> np.ndarray:
    """``arr``, made read-only (the tables kernels read are cached and shared)."""
    arr.flags.writeable = False
    return arr


def frozen_words(ring: RingSpec, rows: Sequence[int] | Sequence[Sequence[int]]) -> WordArray:
    """``rows`` as a read-only array of ``ring``'s words."""
    return frozen(np.array(rows, dtype=ring.np_dtype))


@functools.cache
def ring_table(ring: RingSpec) -> np.ndarray:
    """The ``ring`` argument of the kernels that serve every ring of one ``n`` and word size.

    ``2L + 1`` words of ``ring.np_dtype``: ``L``, the moduli ``q_0 .. q_{L-1}``, then ``q_i^-1 mod
    R`` (the Montgomery constants). Read-only and cached.
    """
    R = 1 << ring.word_bits
    return frozen_words(ring, [ring.L, *ring.moduli, *(pow(q, -1, R) for q in ring.moduli)])
