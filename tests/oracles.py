"""Python-integer oracles shared by Ren's tests, written from the definitions.

Nothing here imports ``ren``: every function takes its moduli, degree and roots explicitly and
computes with Python ints, so the tests compare the library against arithmetic it had no part
in. Polynomials are coefficient lists ``[a_0, ..., a_{n-1}]`` of ``Z[X]/(X^n + 1)`` (or of
``Z_q[X]/(X^n + 1)`` where a modulus is given), ``n`` a power of two.
"""

from __future__ import annotations

import math
from fractions import Fraction


def centered(x: int, Q: int) -> int:
    """The representative of ``x mod Q`` in ``(-Q/2, Q/2]``."""
    r = x % Q
    return r - Q if 2 * r > Q else r


def rounded_div(x: int, P: int) -> int:
    """``floor(x/P + 1/2)`` (round to nearest, ties up), with exact rationals."""
    return math.floor(Fraction(x, P) + Fraction(1, 2))


def crt(residues: list[int], moduli: tuple[int, ...]) -> int:
    """The ``x`` in ``[0, Q)``, ``Q = prod q_i``, with ``x = r_i (mod q_i)`` for every ``i``:
    ``x = sum r_i * (Q/q_i) * ((Q/q_i)**-1 mod q_i) mod Q`` (the moduli pairwise coprime)."""
    Q = math.prod(moduli)
    total = 0
    for r, q in zip(residues, moduli, strict=True):
        Qi = Q // q
        total += r * Qi * pow(Qi, -1, q)
    return total % Q


def negacyclic(a: list[int], b: list[int], q: int | None = None) -> list[int]:
    """The schoolbook product ``a * b`` in ``Z[X]/(X^n + 1)``, reduced mod ``q`` when given:
    ``c_k = sum_{i+j=k} a_i*b_j - sum_{i+j=k+n} a_i*b_j`` (since ``X^n = -1``)."""
    n = len(a)
    out = [0] * n
    for i in range(n):
        for j in range(n):
            if i + j < n:
                out[i + j] += a[i] * b[j]
            else:
                out[i + j - n] -= a[i] * b[j]
    return out if q is None else [c % q for c in out]


def automorphism(a: list[int], g: int, q: int | None = None) -> list[int]:
    """``a(X**g)`` in ``Z[X]/(X^n + 1)``, reduced mod ``q`` when given: the term ``a_i X^i``
    becomes ``a_i X^e`` with ``e = i*g mod 2n``, and ``X^e = -X^(e-n)`` when ``e >= n``."""
    n = len(a)
    out = [0] * n
    for i, c in enumerate(a):
        e = i * g % (2 * n)
        if e < n:
            out[e] += c
        else:
            out[e - n] -= c
    return out if q is None else [c % q for c in out]


def brv(k: int, bits: int) -> int:
    """``k`` with its low ``bits`` bits in reverse order, moved one bit at a time."""
    out = 0
    for _ in range(bits):
        out, k = (out << 1) | (k & 1), k >> 1
    return out


def smallest_root_brute(q: int, n: int) -> int:
    """The smallest ``psi`` with ``psi**n = -1 (mod q)``, by trying ``2, 3, ...``; for ``n`` a
    power of two that is the smallest primitive ``2n``-th root of unity mod ``q``."""
    return next(x for x in range(2, q) if pow(x, n, q) == q - 1)


def evaluate_at(a: list[int], x: int, q: int) -> int:
    """``a(x) = sum a_i * x**i mod q``, by Horner's rule."""
    acc = 0
    for c in reversed(a):
        acc = (acc * x + c) % q
    return acc


def slot_point(k: int, n: int, q: int, psi: int) -> int:
    """The evaluation point of NTT slot ``k``: ``psi**(2*brv(k) + 1) mod q``, ``brv`` over
    ``log2(n)`` bits, ``psi`` a primitive ``2n``-th root of unity mod ``q``."""
    return pow(psi, 2 * brv(k, n.bit_length() - 1) + 1, q)


def ntt_slots(a: list[int], q: int, psi: int) -> list[int]:
    """NTT form by direct evaluation: slot ``k`` is ``a(psi**(2*brv(k) + 1)) mod q``."""
    n = len(a)
    return [evaluate_at(a, slot_point(k, n, q, psi), q) for k in range(n)]
