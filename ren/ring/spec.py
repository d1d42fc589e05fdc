"""``RingSpec`` (a ring in RNS form, and how its words are stored) and ``Domain``."""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass
from typing import ClassVar, TypeAlias

import numpy as np
import numpy.typing as npt

from ren.ring.primes import DTYPE_LIMIT_BITS, DTYPE_WORD_BITS, check_power_of_two, is_prime
from ren.ring.tables import RingTables, ring_tables

__all__ = [
    "DTYPE_LIMIT_BITS",
    "DTYPE_WORD_BITS",
    "NUMPY_DTYPES",
    "Domain",
    "IndexArray",
    "RingSpec",
    "U64Array",
    "WordArray",
]

NUMPY_DTYPES: dict[str, type[np.unsignedinteger]] = {"u32": np.uint32, "u64": np.uint64}

#: Words in a ring's storage dtype (``uint32`` or ``uint64``, ``RingSpec.np_dtype``).
WordArray: TypeAlias = npt.NDArray[np.unsignedinteger]
#: ``uint64`` words: the ring tables, and the NumPy kernels' working arrays whatever the dtype.
U64Array: TypeAlias = npt.NDArray[np.uint64]
#: ``int64`` slot or coefficient indices: bit reversal and automorphism permutations.
IndexArray: TypeAlias = npt.NDArray[np.int64]


class Domain(enum.Enum):
    """The representation of a ring element: coefficients or NTT (evaluation) slots."""

    # members are singletons compared by identity: hash them so too, in C (the default hashes the
    # name in Python, and every interned node's key hashes its op and dtype)
    __hash__ = object.__hash__

    COEFF = "coeff"
    NTT = "ntt"

    def __repr__(self) -> str:
        return f"Domain.{self.name}"


@dataclass(frozen=True, init=False)
class RingSpec:
    """The ring ``Z_Q[X]/(X^n+1)`` in RNS form over ``moduli``, stored as ``dtype`` words.

    Args:
        n: degree, a power of two >= 2.
        moduli: distinct primes, each ``1 (mod 2n)``; ``Q`` is their product.
        dtype: ``"u32"`` (every modulus < 2**30) or ``"u64"`` (every modulus < 2**62). By default
            the smallest that fits.

    Raises:
        TypeError: for an ``n`` or a modulus that is not an int (a bool or ``17.0`` is not), moduli
            that are not a sequence (a str, a set), or a ``dtype`` that is not a string.
        ValueError: naming the offending value and the rule it breaks.
    """

    #: ``ren.jit`` takes it as one part of a plan's key (a hashable value, holding no Poly).
    __ren_jit_leaf__: ClassVar[bool] = True

    n: int
    moduli: tuple[int, ...]
    dtype: str

    def __init__(self, n: int, moduli: Iterable[int], dtype: str | None = None) -> None:
        check_power_of_two(n)
        n = int(n)
        object.__setattr__(self, "n", n)
        if isinstance(moduli, int | np.integer):
            raise TypeError(f"moduli must be a sequence of ints, got the int {moduli}")
        # text is iterable but holds no ints; a set or a dict has no limb order
        if isinstance(moduli, str | bytes | bytearray | Set | Mapping) or not isinstance(
            moduli, Iterable
        ):
            raise TypeError(
                "moduli must be a sequence of ints in limb order (a tuple or list), got "
                f"{type(moduli).__name__} {moduli!r}"
            )
        raw = tuple(moduli)
        for q in raw:  # int(17.9) would silently give 17
            if isinstance(q, bool | np.bool_) or not isinstance(q, int | np.integer):
                raise TypeError(f"modulus {q!r} is a {type(q).__name__}; moduli must be ints")
        moduli = tuple(int(q) for q in raw)
        if not moduli:
            raise ValueError("moduli is empty: a ring needs at least one modulus")
        seen: set[int] = set()
        for q in moduli:
            if q in seen:
                raise ValueError(f"modulus {q} is repeated: RNS moduli must be distinct")
            seen.add(q)
            if not is_prime(q):
                raise ValueError(f"modulus {q} is not prime")
            if (q - 1) % (2 * n):
                raise ValueError(
                    f"modulus {q} is not 1 mod 2n={2 * n}: the negacyclic NTT of size "
                    f"n={n} needs q = 1 (mod 2n)"
                )
        object.__setattr__(self, "moduli", moduli)
        biggest = max(moduli)
        if dtype is None:
            dtype = "u32" if biggest < 1 << DTYPE_LIMIT_BITS["u32"] else "u64"
        else:
            if not isinstance(dtype, str):
                raise TypeError(f"dtype must be 'u32', 'u64' or None, got {dtype!r}")
            if dtype not in DTYPE_LIMIT_BITS:
                raise ValueError(f"dtype {dtype!r} is not one of 'u32', 'u64'")
        limit = DTYPE_LIMIT_BITS[dtype]
        if biggest >= 1 << limit:
            raise ValueError(
                f"modulus {biggest} is too large for dtype {dtype}: needs < 2**{limit}"
            )
        object.__setattr__(self, "dtype", dtype)

    def __hash__(self) -> int:
        # computed once: every interned node over this ring hashes it (a key holds it)
        h = self.__dict__.get("_hash")
        if h is None:
            h = self.__dict__["_hash"] = hash((self.n, self.moduli, self.dtype))
        return h

    def __getstate__(self) -> dict[str, object]:
        # the hash is this process's (strings and enums hash differently in another)
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    # derived facts -------------------------------------------------------------------------
    @functools.cached_property
    def Q(self) -> int:
        """The product of the moduli (computed once per ring)."""
        return math.prod(self.moduli)

    @property
    def L(self) -> int:
        """The number of moduli (limbs)."""
        return len(self.moduli)

    @property
    def size(self) -> int:
        """Words in a realized polynomial: ``L * n``."""
        return len(self.moduli) * self.n

    @property
    def np_dtype(self) -> type[np.unsignedinteger]:
        """The NumPy storage dtype (``np.uint32`` or ``np.uint64``)."""
        return NUMPY_DTYPES[self.dtype]

    @property
    def word_bits(self) -> int:
        """Bits of a stored word; the Montgomery radix is ``R = 2**word_bits``."""
        return DTYPE_WORD_BITS[self.dtype]

    def with_moduli(self, moduli: tuple[int, ...]) -> RingSpec:
        """The ring of the same degree over ``moduli``, keeping this ring's dtype when they fit.

        Made once per ring and moduli (key switching asks for the same sub-rings at every call).
        """
        return _with_moduli(self, tuple(moduli))

    def contiguous_offset(self, other: RingSpec) -> int | None:
        """Where ``other``'s moduli start in this ring's, if they are a contiguous run of them.

        Returns:
            The index of the run's first modulus when ``other`` has the same ``n`` and dtype and
            its moduli are a contiguous run of this ring's; else ``None``.
        """
        if other.n != self.n or other.dtype != self.dtype:
            return None
        m, k = self.moduli, len(other.moduli)
        for start in range(len(m) - k + 1):
            if m[start : start + k] == other.moduli:
                return start
        return None

    def tables(self) -> RingTables:
        """The cached NTT, Montgomery and automorphism tables of this ring."""
        return ring_tables(self)

    def __repr__(self) -> str:
        return f"RingSpec(n={self.n}, moduli={self.moduli}, dtype={self.dtype!r})"

    def short(self) -> str:
        """A short label: ``n=8 L=2 u32``."""
        return f"n={self.n} L={len(self.moduli)} {self.dtype}"


@functools.lru_cache(maxsize=4096)
def _with_moduli(ring: RingSpec, moduli: tuple[int, ...]) -> RingSpec:
    limit = 1 << DTYPE_LIMIT_BITS[ring.dtype]
    dtype = ring.dtype if all(q < limit for q in moduli) else None
    return RingSpec(ring.n, moduli, dtype)
