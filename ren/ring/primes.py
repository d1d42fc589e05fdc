"""Number theory for NTT-friendly moduli: primality, primes ``1 mod 2n``, primitive roots."""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = [
    "DTYPE_LIMIT_BITS",
    "DTYPE_WORD_BITS",
    "generator_root_2n",
    "is_prime",
    "ntt_primes",
    "primitive_root_2n",
]

#: The largest modulus (exclusive) each storage dtype accepts, and its Montgomery radix bits.
DTYPE_LIMIT_BITS = {"u32": 30, "u64": 62}
DTYPE_WORD_BITS = {"u32": 32, "u64": 64}


_MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)


def is_prime(x: int) -> bool:
    """Deterministic Miller-Rabin primality test, exact for every ``x < 3.3 * 10**24``.

    Answers are remembered (every ring checks its moduli, and eager code makes rings often).
    """
    return _is_prime(int(x))


@functools.lru_cache(maxsize=4096)
def _is_prime(x: int) -> bool:
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


def check_power_of_two(n: int, name: str = "n") -> None:
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
    check_power_of_two(n)
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
def generator_root_2n(q: int, n: int) -> int:
    """``g^((q - 1) / 2n) mod q`` for the smallest generator ``g`` of the integers modulo ``q``.

    A primitive ``2n``-th root, not the smallest in general: the one Lattigo's NTT uses (Ren's and
    SEAL's is ``primitive_root_2n``; the two NTTs give the same values in another order).

    Raises:
        ValueError: if ``q`` is not prime or not ``1 mod 2n``.
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
    return pow(g, order // (2 * n), q)


@functools.cache
def primitive_root_2n(q: int, n: int) -> int:
    """The smallest primitive ``2n``-th root of unity modulo the prime ``q`` (``q = 1 mod 2n``).

    The primitive ``2n``-th roots are ``w**j`` for odd ``j`` where ``w`` is any one of them; all
    ``n`` are listed and the smallest integer is returned, as Microsoft SEAL does.
    """
    w = generator_root_2n(q, n)  # a primitive 2n-th root
    w2 = w * w % q
    best, cur = w, w
    for _ in range(n - 1):
        cur = cur * w2 % q
        best = min(best, cur)
    return best
