"""Per-ring tables: bit reversal, automorphism permutations, Montgomery constants and twiddles."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ren.ring.primes import check_power_of_two, primitive_root_2n

if TYPE_CHECKING:
    import numpy.typing as npt

    from ren.ring.spec import IndexArray, RingSpec, U64Array

__all__ = [
    "ModulusTables",
    "RingTables",
    "automorphism_coeff_table",
    "automorphism_ntt_table",
    "bit_reverse",
    "galois_for_rotation",
    "lift_exact",
    "lift_threshold",
    "modulus_powers",
    "modulus_tables",
    "ring_tables",
]


def bit_reverse(k: int, bits: int) -> int:
    """Reverse the low ``bits`` bits of ``k``, for ``0 <= k < 2**bits``."""
    if not 0 <= k < 1 << bits:
        raise ValueError(f"bit_reverse: k={k} is outside [0, 2**{bits})")
    return int(format(k, f"0{bits}b")[::-1], 2) if bits else 0


@functools.cache
def _brv_table(n: int) -> IndexArray:
    bits = n.bit_length() - 1
    idx = np.arange(n, dtype=np.int64)
    out = np.zeros(n, dtype=np.int64)
    for b in range(bits):
        out |= ((idx >> b) & 1) << (bits - 1 - b)
    out.flags.writeable = False
    return out


def galois_for_rotation(n: int, steps: int, generator: int = 5) -> int:
    """The Galois element ``5**steps mod 2n`` that rotates CKKS slots left by ``steps``.

    ``generator=3`` gives ``3**steps mod 2n``: the rotation of slots in Microsoft SEAL's order
    (powers of 3, ``ckks.embed(..., generator=3)``).

    Raises:
        ValueError: a generator other than 5 or 3.
    """
    check_power_of_two(n)
    if generator not in (5, 3) or isinstance(generator, bool):
        raise ValueError(f"generator={generator!r}: 5 (Ren's slot order) or 3 (SEAL's)")
    return pow(generator, steps % (n // 2) if n > 2 else 0, 2 * n)


def _check_galois(n: int, g: int) -> int:
    if isinstance(g, bool) or not isinstance(g, int | np.integer):
        raise TypeError(f"Galois element must be an int, got {type(g).__name__}")
    g = int(g) % (2 * n)
    if g % 2 == 0:
        raise ValueError(f"Galois element {g} is even; automorphisms X -> X^g need odd g (mod 2n)")
    return g


# typed: g=True or g=3.0 must raise, not hit the cached g=1 or g=3
@functools.lru_cache(maxsize=None, typed=True)
def automorphism_coeff_table(n: int, g: int) -> tuple[IndexArray, npt.NDArray[np.bool_]]:
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
def automorphism_ntt_table(n: int, g: int) -> IndexArray:
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
    q: U64Array  # (L, 1) uint64
    q_inv: U64Array  # (L, 1) uint64, q**-1 mod R
    r2: U64Array  # (L, 1) uint64, R**2 mod q
    one: U64Array  # (L, 1) uint64, R mod q
    n_inv_mont: U64Array  # (L, 1) uint64, n**-1 * R mod q
    psi_rev: U64Array  # (L, n) uint64
    psi_inv_rev: U64Array  # (L, n) uint64
    brv: IndexArray  # (n,) int64


def _column(values: list[int]) -> U64Array:
    arr = np.array(values, dtype=np.uint64).reshape(-1, 1)
    arr.flags.writeable = False
    return arr


@functools.lru_cache(maxsize=1024)
def modulus_tables(q: int, n: int, word_bits: int) -> ModulusTables:
    """``ModulusTables.make(q, n, word_bits)``, made once per modulus (rings share moduli)."""
    return ModulusTables.make(q, n, word_bits)


@functools.lru_cache(maxsize=1024)
def modulus_powers(q: int, n: int, word_bits: int, inverse: bool, mont: bool) -> U64Array:
    """``psi**(+-brv(k))`` for ``k < n`` modulo ``q``, times ``R`` when ``mont``; read-only.

    One row of a ring's twiddle tables, made once per modulus: the rings of a CKKS chain (and
    of its key-switching extensions) share their moduli, so each row is computed once.
    """
    m = modulus_tables(q, n, word_bits)
    base = m.psi_inv if inverse else m.psi
    pw = [0] * n
    p = (1 << word_bits) % q if mont else 1
    for e in range(n):
        pw[e], p = p, p * base % q
    row = np.array(pw, dtype=np.uint64)[_brv_table(n)]
    row.flags.writeable = False
    return row


@functools.lru_cache(maxsize=1024)
def shoup_powers(q: int, n: int, word_bits: int, inverse: bool) -> tuple[U64Array, U64Array]:
    """``(w, w_shoup)``: a plain row of :func:`modulus_powers`, ``floor(w * 2**word_bits / q)``.

    Both ``(n,)`` ``uint64``, read-only, made once per modulus: the NumPy NTT and the compiled
    NTT families multiply by twiddles with Shoup's method, and stack these rows into their tables.
    """
    row = modulus_powers(q, n, word_bits, inverse, False)
    shoup = np.array([(w << word_bits) // q for w in row.tolist()], dtype=np.uint64)
    shoup.flags.writeable = False
    return row, shoup


@functools.cache
def ring_tables(ring: RingSpec) -> RingTables:
    """The NumPy tables of ``ring``, made once per ring (``RingSpec.tables`` returns them)."""
    n, wb = ring.n, ring.word_bits
    mods = tuple(modulus_tables(q, n, wb) for q in ring.moduli)
    brv = _brv_table(n)
    R = 1 << wb
    psi_rev = np.array([modulus_powers(q, n, wb, False, True) for q in ring.moduli])
    psi_inv_rev = np.array([modulus_powers(q, n, wb, True, True) for q in ring.moduli])
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


# --------------------------------------------------------------------------------------------
# the basis change of one limb


@functools.cache
def lift_threshold(q: int) -> int:
    """The least ``y`` in ``[0, q)`` with ``floor(double(y) / double(q) + 0.5) = 1`` in float64.

    That is the correction ``v`` of a basis change from the one modulus ``q``
    (``ren.ring.arith.base_convert`` with ``L = 1``): each float64 operation rounds monotonically
    in ``y``, so ``v`` is 0 below this and 1 from it on, and a kernel can compare where the
    reference divides. Found by bisection with NumPy's float64 operations, which are the C
    kernels' and the reference's.
    """
    qf = np.float64(q)

    def rounds_up(y: int) -> bool:
        return bool(np.floor(np.float64(np.uint64(y)) / qf + 0.5) >= 1.0)

    lo, hi = 0, q - 1  # rounds_up(q - 1) holds: (q - 1) / q + 1/2 > 1 for every q > 2
    while lo < hi:
        mid = (lo + hi) // 2
        if rounds_up(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def lift_exact(q: int) -> bool:
    """Whether the basis change from the one modulus ``q`` is exact for every value.

    It is when the float correction turns to 1 exactly past ``q/2`` (``lift_threshold``): true
    for moduli below about ``2^52``, where the doubles hold ``y`` and ``q``; at 60 bits a value
    within about ``2^-53 q`` of ``q/2`` lifts to the other side (the docs of ``base_convert``).
    """
    return lift_threshold(q) == q // 2 + 1
