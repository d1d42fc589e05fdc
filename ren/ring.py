"""Rings, domains, NTT-friendly primes, Montgomery constants and the per-ring tables.

A ring is ``Z_Q[X]/(X^n + 1)`` held in RNS form: ``Q = q_0 * q_1 * ... * q_{L-1}``, each ``q_i`` a
distinct prime with ``q_i = 1 (mod 2n)`` so that a negacyclic NTT of length ``n`` exists modulo it.

Conventions fixed here (see ``docs/rings.md``):

* Stored words are in Montgomery form ``x * R mod q`` with ``R = 2**32`` (``u32``) or ``2**64``
  (``u64``), and lie in ``[0, q)``.
* ``psi`` is the *smallest* primitive ``2n``-th root of unity modulo ``q``. In NTT form slot ``k``
  holds ``a(psi**(2*brv(k) + 1)) mod q`` where ``brv`` reverses ``log2(n)`` bits (the order of a
  Cooley-Tukey negacyclic NTT with merged twiddles, and the order Microsoft SEAL uses).
* The automorphism ``sigma_g`` maps ``a(X)`` to ``a(X**g)`` for odd ``g``.
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

__all__ = [
    "Domain",
    "ModulusTables",
    "RingSpec",
    "RingTables",
    "automorphism_coeff_table",
    "automorphism_ntt_table",
    "bit_reverse",
    "galois_for_rotation",
    "is_prime",
    "ntt_primes",
    "primitive_root_2n",
]

#: The largest modulus (exclusive) each storage dtype accepts, and its Montgomery radix bits.
DTYPE_LIMIT_BITS = {"u32": 30, "u64": 62}
DTYPE_WORD_BITS = {"u32": 32, "u64": 64}
NUMPY_DTYPES: dict[str, type[np.unsignedinteger]] = {"u32": np.uint32, "u64": np.uint64}


class Domain(enum.Enum):
    """The representation of a ring element: coefficients or NTT (evaluation) slots."""

    # members are singletons compared by identity: hash them so too, in C (the default hashes the
    # name in Python, and every interned node's key hashes its op and dtype)
    __hash__ = object.__hash__

    COEFF = "coeff"
    NTT = "ntt"

    def __repr__(self) -> str:
        return f"Domain.{self.name}"


# --------------------------------------------------------------------------------------------
# number theory


_MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)


def is_prime(x: int) -> bool:
    """Deterministic Miller-Rabin primality test, exact for every ``x < 3.3 * 10**24``."""
    if x < 2:
        return False
    for p in _MR_BASES:
        if x % p == 0:
            return x == p
    d, s = x - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in _MR_BASES:
        y = pow(a, d, x)
        if y in (1, x - 1):
            continue
        for _ in range(s - 1):
            y = y * y % x
            if y == x - 1:
                break
        else:
            return False
    return True


def _check_power_of_two(n: int, name: str = "n") -> None:
    if isinstance(n, bool) or not isinstance(n, int | np.integer):
        raise TypeError(f"{name} must be an int, got {type(n).__name__}")
    if n < 2 or n & (n - 1):
        raise ValueError(f"{name}={n} is not a power of two >= 2")


# typed: a cache hit must not skip the type checks (ntt_primes(8, 30.0, 2) equals (8, 30, 2))
@functools.lru_cache(maxsize=None, typed=True)
def ntt_primes(n: int, bits: int, count: int) -> tuple[int, ...]:
    """The ``count`` largest primes below ``2**bits`` that are ``1 (mod 2n)``, in descending order.

    Args:
        n: ring degree, a power of two >= 2.
        bits: every prime is ``< 2**bits``; ``2 <= bits <= 62`` (the largest ``u64`` modulus).
        count: how many primes, >= 1.

    Raises:
        ValueError: on a bad argument, or when fewer than ``count`` such primes exist.
    """
    _check_power_of_two(n)
    for name, value in (("bits", bits), ("count", count)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if not 2 <= bits <= DTYPE_LIMIT_BITS["u64"]:
        raise ValueError(f"bits={bits} is outside [2, 62] (u64 moduli must be below 2**62)")
    if count < 1:
        raise ValueError(f"count={count} must be at least 1")
    step = 2 * n
    primes: list[int] = []
    k = ((1 << bits) - 2) // step  # largest k with k*2n + 1 < 2**bits
    while k > 0 and len(primes) < count:
        q = k * step + 1
        if is_prime(q):
            primes.append(q)
        k -= 1
    if len(primes) < count:
        raise ValueError(
            f"only {len(primes)} primes below 2**{bits} are 1 mod 2n={step}; {count} were asked for"
        )
    return tuple(primes)


def _prime_factors(x: int) -> list[int]:
    """Distinct prime factors of ``x`` by trial division then Pollard rho (x < 2**62 here)."""
    factors: set[int] = set()
    stack = [x]
    while stack:
        m = stack.pop()
        if m == 1:
            continue
        if is_prime(m):
            factors.add(m)
            continue
        for p in range(2, 1000):
            if m % p == 0:
                factors.add(p)
                while m % p == 0:
                    m //= p
                stack.append(m)
                break
        else:
            d = _pollard_rho(m)
            stack.extend((d, m // d))
    return sorted(factors)


def _pollard_rho(m: int) -> int:
    for c in range(1, 100):
        x = y = 2
        d = 1
        while d == 1:
            x = (x * x + c) % m
            y = (y * y + c) % m
            y = (y * y + c) % m
            d = math.gcd(abs(x - y), m)
        if d != m:
            return d
    raise ArithmeticError(f"could not factor {m}")  # pragma: no cover - never seen for m < 2**62


@functools.cache
def primitive_root_2n(q: int, n: int) -> int:
    """The smallest primitive ``2n``-th root of unity modulo the prime ``q`` (``q = 1 mod 2n``).

    The primitive ``2n``-th roots are ``w**j`` for odd ``j`` where ``w`` is any one of them; all
    ``n`` are listed and the smallest integer is returned, as Microsoft SEAL does.
    """
    if not is_prime(q):
        raise ValueError(f"modulus {q} is not prime: primitive roots are taken modulo a prime")
    if (q - 1) % (2 * n):
        raise ValueError(f"modulus {q} is not 1 mod 2n={2 * n}: no primitive 2n-th root exists")
    order = q - 1
    factors = _prime_factors(order)
    g = 2
    while any(pow(g, order // f, q) == 1 for f in factors):
        g += 1
    w = pow(g, order // (2 * n), q)  # a primitive 2n-th root
    w2 = w * w % q
    best, cur = w, w
    for _ in range(n - 1):
        cur = cur * w2 % q
        best = min(best, cur)
    return best


def bit_reverse(k: int, bits: int) -> int:
    """Reverse the low ``bits`` bits of ``k``, for ``0 <= k < 2**bits``."""
    if not 0 <= k < 1 << bits:
        raise ValueError(f"bit_reverse: k={k} is outside [0, 2**{bits})")
    return int(format(k, f"0{bits}b")[::-1], 2) if bits else 0


@functools.cache
def _brv_table(n: int) -> np.ndarray:
    bits = n.bit_length() - 1
    idx = np.arange(n, dtype=np.int64)
    out = np.zeros(n, dtype=np.int64)
    for b in range(bits):
        out |= ((idx >> b) & 1) << (bits - 1 - b)
    out.flags.writeable = False
    return out


def galois_for_rotation(n: int, steps: int) -> int:
    """The Galois element ``5**steps mod 2n`` that rotates CKKS slots left by ``steps``."""
    _check_power_of_two(n)
    return pow(5, steps % (n // 2) if n > 2 else 0, 2 * n)


def _check_galois(n: int, g: int) -> int:
    if isinstance(g, bool) or not isinstance(g, int | np.integer):
        raise TypeError(f"Galois element must be an int, got {type(g).__name__}")
    g = int(g) % (2 * n)
    if g % 2 == 0:
        raise ValueError(f"Galois element {g} is even; automorphisms X -> X^g need odd g (mod 2n)")
    return g


# typed: g=True or g=3.0 must raise, not hit the cached g=1 or g=3
@functools.lru_cache(maxsize=None, typed=True)
def automorphism_coeff_table(n: int, g: int) -> tuple[np.ndarray, np.ndarray]:
    """Coefficient-form automorphism: ``out[dest[i]] = sign[i] * in[i]``.

    Coefficient ``i`` moves to ``i*g mod 2n``, negated when that is ``>= n``. Returns ``(dest,
    negate)``: destination index in ``[0, n)`` and a boolean mask of negated inputs.
    """
    g = _check_galois(n, g)
    i = np.arange(n, dtype=np.int64)
    j = (i * g) % (2 * n)
    negate = j >= n
    dest = np.where(negate, j - n, j)
    dest.flags.writeable = False
    negate.flags.writeable = False
    return dest, negate


# typed: g=True or g=3.0 must raise, not hit the cached g=1 or g=3
@functools.lru_cache(maxsize=None, typed=True)
def automorphism_ntt_table(n: int, g: int) -> np.ndarray:
    """NTT-form automorphism as a gather: ``out[k] = in[perm[k]]``.

    ``perm[k] = brv(((g * (2*brv(k) + 1)) mod 2n - 1) / 2)``: slot ``k`` evaluates at
    ``psi**(2*brv(k)+1)``, and ``a(X**g)`` there is ``a`` at ``psi**(g*(2*brv(k)+1))``.
    """
    g = _check_galois(n, g)
    brv = _brv_table(n)
    k = np.arange(n, dtype=np.int64)
    e = (g * (2 * brv[k] + 1)) % (2 * n)
    perm = brv[(e - 1) // 2]
    perm.flags.writeable = False
    return perm


# --------------------------------------------------------------------------------------------
# ring spec


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
        _check_power_of_two(n)
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

    # derived facts -------------------------------------------------------------------------
    @property
    def Q(self) -> int:
        """The product of the moduli."""
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
        """The ring of the same degree over ``moduli``, keeping this ring's dtype when they fit."""
        limit = 1 << DTYPE_LIMIT_BITS[self.dtype]
        dtype = self.dtype if all(q < limit for q in moduli) else None
        return RingSpec(self.n, tuple(moduli), dtype)

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
        return _ring_tables(self)

    def __repr__(self) -> str:
        return f"RingSpec(n={self.n}, moduli={self.moduli}, dtype={self.dtype!r})"

    def short(self) -> str:
        """A short label: ``n=8 L=2 u32``."""
        return f"n={self.n} L={len(self.moduli)} {self.dtype}"


# --------------------------------------------------------------------------------------------
# per-modulus constants and per-ring tables


@dataclass(frozen=True)
class ModulusTables:
    """Montgomery constants and NTT roots of one modulus ``q`` for ring degree ``n``.

    ``R = 2**word_bits``. ``q_inv`` is ``q**-1 mod R`` (so ``q * q_inv = 1 mod R``); ``r_mod_q`` is
    ``R mod q`` (one in Montgomery form); ``r2_mod_q`` is ``R**2 mod q`` (Montgomery-encodes by one
    multiply). ``psi`` is the smallest primitive ``2n``-th root, ``n_inv`` is ``n**-1 mod q``.
    """

    q: int
    n: int
    word_bits: int
    q_inv: int
    r_mod_q: int
    r2_mod_q: int
    psi: int
    psi_inv: int
    n_inv: int

    @classmethod
    def make(cls, q: int, n: int, word_bits: int) -> ModulusTables:
        """Compute the tables of the prime ``q`` (``q = 1 mod 2n``) for words of ``word_bits``.

        Raises:
            ValueError: if ``q`` is not prime or not ``1 mod 2n``.
        """
        R = 1 << word_bits
        psi = primitive_root_2n(q, n)
        return cls(
            q=q,
            n=n,
            word_bits=word_bits,
            q_inv=pow(q, -1, R),
            r_mod_q=R % q,
            r2_mod_q=R * R % q,
            psi=psi,
            psi_inv=pow(psi, -1, q),
            n_inv=pow(n, -1, q),
        )

    def to_mont(self, x: int) -> int:
        """``x * R mod q`` for a Python int ``x`` of any sign."""
        return (x % self.q) * (1 << self.word_bits) % self.q


@dataclass(frozen=True, eq=False)
class RingTables:
    """NumPy tables for one ring, shaped for limb-vectorized kernels (limb axis first).

    Twiddles are in Montgomery form: ``psi_rev[i, k] = psi_i**brv(k) * R mod q_i`` (forward,
    Cooley-Tukey) and ``psi_inv_rev[i, k] = psi_i**-brv(k) * R mod q_i`` (inverse, Gentleman-Sande).
    """

    ring: RingSpec
    mods: tuple[ModulusTables, ...]
    q: np.ndarray  # (L, 1) uint64
    q_inv: np.ndarray  # (L, 1) uint64, q**-1 mod R
    r2: np.ndarray  # (L, 1) uint64, R**2 mod q
    one: np.ndarray  # (L, 1) uint64, R mod q
    n_inv_mont: np.ndarray  # (L, 1) uint64, n**-1 * R mod q
    psi_rev: np.ndarray  # (L, n) uint64
    psi_inv_rev: np.ndarray  # (L, n) uint64
    brv: np.ndarray  # (n,) int64


def _column(values: list[int]) -> np.ndarray:
    arr = np.array(values, dtype=np.uint64).reshape(-1, 1)
    arr.flags.writeable = False
    return arr


@functools.cache
def _ring_tables(ring: RingSpec) -> RingTables:
    n, wb = ring.n, ring.word_bits
    mods = tuple(ModulusTables.make(q, n, wb) for q in ring.moduli)
    brv = _brv_table(n)
    R = 1 << wb
    psi_rev = np.empty((len(mods), n), dtype=np.uint64)
    psi_inv_rev = np.empty((len(mods), n), dtype=np.uint64)
    for i, m in enumerate(mods):
        pw, ipw = [0] * n, [0] * n
        p = ip = R % m.q  # psi**0 * R
        for e in range(n):
            pw[e], ipw[e] = p, ip
            p = p * m.psi % m.q
            ip = ip * m.psi_inv % m.q
        psi_rev[i] = np.array(pw, dtype=np.uint64)[brv]
        psi_inv_rev[i] = np.array(ipw, dtype=np.uint64)[brv]
    psi_rev.flags.writeable = False
    psi_inv_rev.flags.writeable = False
    return RingTables(
        ring=ring,
        mods=mods,
        q=_column([m.q for m in mods]),
        q_inv=_column([m.q_inv for m in mods]),
        r2=_column([m.r2_mod_q for m in mods]),
        one=_column([m.r_mod_q for m in mods]),
        n_inv_mont=_column([m.n_inv * R % m.q for m in mods]),
        psi_rev=psi_rev,
        psi_inv_rev=psi_inv_rev,
        brv=brv,
    )
