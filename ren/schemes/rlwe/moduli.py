"""A chain's moduli: found for their bit sizes, or given (another library's, another compiler's).

By default the moduli of a size ``b`` are the largest primes below ``2^b`` that are ``1 (mod 2n)``,
the special moduli taking the largest, so equal bit sizes give equal moduli. Parameters may give
them instead (``q_moduli=``, ``p_moduli=``: HEIR's chain, SEAL's primes in SEAL's order): each is
checked here, kept in its order, and the sizes follow from it. Moduli the sizes alone would give
make the same parameters; other ones are *explicit*, and ``Chain`` shows, pickles and writes them.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ren.errors import describe
from ren.poly import is_int
from ren.ring import ntt_primes
from ren.ring.primes import is_prime

__all__ = ["bit_sizes", "check_moduli", "found_moduli", "given_q_moduli", "set_moduli"]


def bit_sizes(name: str, value: object) -> tuple[int, ...]:
    """Bit sizes ``name`` (``q_bits``, ``p_bits``): a nonempty sequence of ints from 10 to 62."""
    if is_int(value):
        raise TypeError(f"{name} must be a sequence of bit sizes, got the int {value}")
    if isinstance(value, str | bytes | dict) or not isinstance(value, Sequence | np.ndarray):
        raise TypeError(f"{name} must be a sequence of ints, got {describe(value)}")
    items = tuple(value)
    if not items:
        raise ValueError(f"{name} is empty: it needs at least one bit size")
    for b in items:
        if not is_int(b):
            raise TypeError(f"{name} holds {b!r}; bit sizes must be ints")
        if not 10 <= b <= 62:
            raise ValueError(f"{name} holds {b}: moduli must have 10 to 62 bits")
    return tuple(int(b) for b in items)


def given_q_moduli(chain: Any) -> tuple[int, ...] | None:
    """``chain``'s ``q_moduli`` checked if given, its ``q_bits`` set (from them, if left out).

    Raises:
        TypeError: neither ``q_bits`` nor ``q_moduli``; see ``bit_sizes``, ``check_moduli``.
        ValueError: no modulus; see ``bit_sizes`` and ``check_moduli``.
    """
    given = chain.q_moduli
    if chain.q_bits is None and given is None:
        raise TypeError("pass q_bits (the moduli's bit sizes) or q_moduli (the moduli)")
    if chain.q_bits is not None:
        object.__setattr__(chain, "q_bits", bit_sizes("q_bits", chain.q_bits))
    if given is None:
        return None
    given = check_moduli("q_moduli", given, chain.n, chain.q_bits)
    if not given:
        raise ValueError("q_moduli is empty: it needs at least one modulus")
    object.__setattr__(chain, "q_bits", tuple(q.bit_length() for q in given))
    return given


def check_moduli(name: str, value: object, n: int, bits: object) -> tuple[int, ...]:
    """Given moduli: ints of 10 to 62 bits, prime, ``1 (mod 2n)``, of the sizes ``bits``.

    ``bits``: ``None`` (any sizes), or bit sizes (checked as ``bit_sizes``).

    Raises:
        TypeError: for anything but a sequence of ints, naming ``name``.
        ValueError: a modulus of another size, not prime or not ``1 (mod 2n)``, or sizes other
            than ``bits``, naming ``name`` and the modulus.
    """
    if is_int(value) or isinstance(value, str | bytes | dict):
        raise TypeError(f"{name} must be a sequence of primes, got {describe(value)}")
    if not isinstance(value, Sequence | np.ndarray):
        raise TypeError(f"{name} must be a sequence of primes, got {describe(value)}")
    items = tuple(value)
    for q in items:
        if not is_int(q):
            raise TypeError(f"{name} holds {describe(q)}; moduli must be ints")
        q = int(q)
        if not 10 <= q.bit_length() <= 62:
            raise ValueError(f"{name} holds {q} of {q.bit_length()} bits: moduli have 10 to 62")
        if q % (2 * n) != 1 or not is_prime(q):
            raise ValueError(
                f"{name} holds {q}, which is not a prime 1 mod 2n={2 * n}: the NTT of a ring of "
                f"degree n={n} needs such moduli"
            )
    out = tuple(int(q) for q in items)
    bits = None if bits is None else bit_sizes(name.replace("moduli", "bits"), bits)
    if bits is not None and tuple(q.bit_length() for q in out) != bits:
        sizes = tuple(q.bit_length() for q in out)
        raise ValueError(
            f"{name} has moduli of {sizes} bits and the bit sizes given are {bits}: leave the "
            "bit sizes out (they follow from the moduli) or make them agree"
        )
    return out


def set_moduli(
    chain: Any,
    given_q: tuple[int, ...] | None,
    given_p: tuple[int, ...] | None,
    avoid: tuple[int, ...],
) -> None:
    """Set ``chain``'s ``q_moduli`` and ``p_moduli``: the given ones, the others found.

    ``chain`` is a frozen dataclass in its ``__post_init__``, its ``n``, ``q_bits`` and
    ``p_bits`` checked. Found moduli are the largest NTT-friendly primes of each bit size (the
    special moduli taking the largest), none of them given or in ``avoid``; it also notes
    ``_explicit``: whether the moduli differ from the ones the sizes alone give.

    Raises:
        ValueError: special moduli for BV key switching, moduli that are not all distinct, or
            one in ``avoid`` (BFV's ``t``).
    """
    if chain.key_switching == "bv":
        if given_p:
            raise ValueError(
                "p_moduli: BV key switching (key_switching='bv') uses no special moduli; leave "
                "p_moduli out, or use key_switching='hybrid'"
            )
        given_p = ()
    set_ = functools.partial(object.__setattr__, chain)
    taken = tuple(avoid) + tuple(given_q or ()) + tuple(given_p or ())
    p_found = () if given_p is not None else chain.p_bits
    q_found = () if given_q is not None else chain.q_bits
    found = iter(found_moduli(chain.n, p_found, q_found, taken))
    set_("p_moduli", given_p if given_p is not None else tuple(next(found) for _ in p_found))
    set_("q_moduli", given_q if given_q is not None else tuple(next(found) for _ in q_found))
    every = chain.p_moduli + chain.q_moduli
    if len(set(every)) != len(every):
        twice = sorted({q for q in every if every.count(q) > 1})
        raise ValueError(f"the moduli must be distinct: {twice} appear more than once")
    for q in every:
        if q in avoid:
            raise ValueError(f"the modulus {q} is not allowed here (it is the plaintext's)")
    if given_q or given_p:
        try:
            default: tuple[int, ...] | None = found_moduli(
                chain.n, chain.p_bits, chain.q_bits, avoid
            )
        except ValueError:  # the sizes alone give none: too few primes of a size
            default = None
        set_("_explicit", every != default)


def found_moduli(
    n: int, p_bits: tuple[int, ...], q_bits: tuple[int, ...], avoid: tuple[int, ...] = ()
) -> tuple[int, ...]:
    """The special then ciphertext moduli that the bit sizes alone give, none in ``avoid``.

    Raises:
        ValueError: when there are too few primes ``1 (mod 2n)`` of a size.
    """
    need: dict[int, int] = {}
    for b in p_bits + q_bits:
        need[b] = need.get(b, 0) + 1
    pool = {
        b: [q for q in ntt_primes(n, b, c + len(avoid)) if q not in avoid][:c]
        for b, c in need.items()
    }
    return tuple(pool[b].pop(0) for b in p_bits + q_bits)
