"""Key switching, a part a context holds: the key it makes and the switch it builds.

:class:`KeySwitchMethod` is what a technique provides (the key from ``s'`` to ``s``, the switch
of one ciphertext part at a level, with or without an automorphism, and the part of it that
depends only on that ciphertext part, which a hoisted rotation shares); a context holds one as
``key_switcher``, chosen by its parameters' ``key_switching`` (:func:`key_switcher`).
:class:`Hybrid` (the default): ModUp once per ciphertext part, then automorphisms, products and
ModDown. :class:`BV`: one digit per ciphertext modulus, products, no special modulus.

A key switch builds in the region ``key_switch`` (noting the technique and its digits), its steps
in ``mod_up``, ``products`` and ``mod_down`` for hybrid, ``digits`` and ``products`` for BV
(``ren.region``): the report and the debugger show each.
"""

from __future__ import annotations

import abc
import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from ren.ir.region import note, region
from ren.poly import Poly, is_int
from ren.ring import RingSpec, ntt_primes
from ren.schemes.rlwe.keys import KeySwitchKey

__all__ = [
    "BV",
    "TECHNIQUES",
    "Hybrid",
    "KeySwitchMethod",
    "bv_digit_primes",
    "check_bv",
    "key_switcher",
    "products",
]

#: Draws a random polynomial over a ring (uniform in NTT form, or the error distribution).
Draw = Callable[[RingSpec], Poly]


class KeySwitchMethod(abc.ABC):
    """A key-switching technique for one parameter set.

    ``params`` is the scheme's parameters: its ciphertext moduli, its digits, the key ring at
    each level. A technique's methods only build graphs; the context realizes keys and results.
    """

    #: The technique's name (the parameters' choice, shown in reports).
    name: ClassVar[str]
    #: The special moduli's bit sizes when ``p_bits`` is left out (``()``: it uses none).
    default_p_bits: ClassVar[tuple[int, ...]] = (60,)

    def __init__(self, params: Any) -> None:
        self.params = params

    def __repr__(self) -> str:
        return f"<{self.name} key switching, n={self.params.n}>"

    @abc.abstractmethod
    def make_key(
        self, secret: Poly, s_new: Poly, galois: int | None, uniform: Draw, error: Draw
    ) -> KeySwitchKey:
        """The key switching ``s_new`` to ``secret`` (both in NTT form over the key ring).

        ``uniform(ring)`` draws the key's random masks, ``error(ring)`` its errors; ``galois``
        is recorded in the key (``None`` for a relinearization or encapsulation key).
        """

    @abc.abstractmethod
    def decompose(self, c: Poly, level: int) -> list[Poly]:
        """The part of a switch of ``c`` at ``level`` that depends on ``c`` alone (its digits).

        Its nodes depend only on ``c`` and ``level``, so the switches of one ``c`` (its rotations,
        its conjugate) build it once: that is what hoisting shares.
        """

    @abc.abstractmethod
    def switch(
        self, c: Poly, key: KeySwitchKey, level: int, galois: int | None = None
    ) -> tuple[Poly, Poly]:
        """``(d_0, d_1)`` with ``d_0 + d_1 s = c' s' + e`` at ``level``, in NTT form.

        ``c'`` is ``c``, or its automorphism ``X -> X^galois``; ``key`` switches ``s'`` to ``s``.
        """


def key_switcher(params: Any) -> KeySwitchMethod:
    """The key-switching technique ``params.key_switching`` names (``"hybrid"`` or ``"bv"``)."""
    return TECHNIQUES[params.key_switching](params)


class Hybrid(KeySwitchMethod):
    """Hybrid key switching: digits of the ciphertext moduli, special moduli ``P`` to divide by.

    The key for digit ``j`` is ``(b_j, a_j) = (-a_j s + e_j + P T_j s', a_j)`` over the key ring
    (:class:`ren.schemes.rlwe.keys.KeySwitchKey`). A switch extends each digit of ``c`` to the
    key ring (ModUp), takes it through the automorphism, multiplies by the key and divides the
    sums by ``P`` (ModDown).
    """

    name = "hybrid"

    def make_key(
        self, secret: Poly, s_new: Poly, galois: int | None, uniform: Draw, error: Draw
    ) -> KeySwitchKey:
        """The key switching ``s_new`` to ``secret``: one pair per digit (see the class)."""
        prm, K = self.params, self.params.key_ring
        Q = math.prod(prm.q_moduli)
        P = math.prod(prm.p_moduli)
        pairs = []
        for digit in prm.digits:
            D = math.prod(prm.q_moduli[i] for i in digit)
            T = (Q // D) * pow(Q // D, -1, D)  # 1 mod the digit's moduli, 0 mod the others
            a = uniform(K)
            e = error(K)
            b = -(a * secret) + e + s_new * (P * T % K.Q)
            pairs.append((b.ntt(), a))
        return KeySwitchKey(galois, tuple(pairs))

    def decompose(self, c: Poly, level: int) -> list[Poly]:
        """:meth:`mod_up`: the digits of ``c`` over the key ring at ``level``."""
        return self.mod_up(c, level)

    def mod_up(self, c: Poly, level: int) -> list[Poly]:
        """The digits of ``c`` extended to the key ring at ``level`` (ModUp), in NTT form.

        Digit ``j`` is ``c``'s residues modulo the ciphertext moduli of ``params.digits[j]`` (up
        to ``level``), extended to the special moduli and the rest of the level. The nodes depend
        only on ``c`` and ``level``: key switches of one ``c`` (its rotations, its conjugate) build
        the same ModUp and, realized together, compute it once.
        """
        prm = self.params
        Kl = prm.key_ring_at(level)
        c = c.intt()
        ups = []
        for digit in prm.digits:
            mods = tuple(prm.q_moduli[i] for i in digit if i <= level)
            if not mods:
                break
            ups.append(c.to_ring(Kl.with_moduli(mods)).to_ring(Kl).ntt())
        return ups

    def switch(
        self, c: Poly, key: KeySwitchKey, level: int, galois: int | None = None
    ) -> tuple[Poly, Poly]:
        """``(d_0, d_1)`` with ``d_0 + d_1 s = c' s' + e`` at ``level``, for the key from ``s'``.

        ``c'`` is ``c``, or its automorphism ``X -> X^galois``. Each digit of ``c`` is extended to
        the special moduli and the rest of the level (ModUp, :meth:`mod_up`), taken through the
        automorphism (a permutation of NTT slots, which commutes with the extension), multiplied
        by the key's pair, summed, and divided by ``P`` (ModDown, :meth:`mod_down`). The result
        is in NTT form.
        """
        with region("key_switch"):
            with region("mod_up"):
                ups = self.mod_up(c, level)
            note(key_switching=self.name, digits=len(ups))
            acc0, acc1 = products(ups, key, self.params.key_ring_at(level), galois)
            with region("mod_down"):
                return self.mod_down(acc0, level), self.mod_down(acc1, level)

    def mod_down(self, x: Poly, level: int) -> Poly:
        """``round(x / P)`` at ``level``, in NTT form, for ``x`` over the key ring at ``level``.

        The special moduli's limbs alone go back to coefficients: ``r = x mod P`` (centered) is
        extended to ``Q_level`` and brought back to NTT form, and ``(x - r) P^-1`` is taken slot by
        slot over the ciphertext moduli. ``x - r`` is the multiple of ``P`` nearest to ``x``
        (``P`` is odd: there are no ties), so the words are those of ``x.rescale(p_moduli)``,
        but where the extension's float correction misjudges a value within about ``2^-50 P`` of
        a tie (the result is then one more or one less). It costs one inverse NTT of
        ``len(p_moduli)`` limbs where the rescale needs one of every limb, and an NTT.

        Raises:
            ValueError: if ``x`` is not over the key ring at ``level``.
        """
        prm = self.params
        Kl = prm.key_ring_at(level)
        if x.ring != Kl:
            raise ValueError(f"mod_down at level {level} needs a value over {Kl}, got {x.ring}")
        ring = prm.ring(level)
        x = x.ntt()
        special = Kl.with_moduli(prm.p_moduli)
        r = x.to_ring(special).intt().to_ring(ring).ntt()
        return (x.to_ring(ring) - r) * Poly.const(_inverse_of_p(prm.p_moduli, ring), ring, x.device)


class BV(KeySwitchMethod):
    """BV key switching: one digit per ciphertext modulus, no special modulus.

    The key for modulus ``q_i`` is ``(b_i, a_i) = (-a_i s + e_i + T_i s', a_i)`` over the ring of
    the top level, ``T_i = (Q/q_i) [(Q/q_i)^-1]_{q_i}`` (``1`` modulo ``q_i``, ``0`` modulo the
    others: its own modulus only holds ``s'``). A switch at ``level`` takes ``c``'s residues
    ``[c]_{q_i}`` for ``i <= level``, each extended to the level's ring as a small polynomial
    (the digits), and sums their products with the key: ``sum_i [c]_{q_i} T_i = c`` modulo
    ``Q_level``, so ``d_0 + d_1 s = c s' + sum_i [c]_{q_i} e_i``. Nothing divides that noise
    (Brakerski and Vaikuntanathan's switch, in RNS digits as OpenFHE's ``BV``): it is about
    ``q_i sqrt(n (level + 1)) sigma``, where hybrid's is ``P`` times smaller. It fits where a
    rescale follows (a CKKS product's relinearization, BFV and BGV, whose noise budget takes
    it), and costs CKKS's rotations the bits of ``q_i / scale`` and more (the key-switching
    guide has the figures).
    """

    name = "bv"
    default_p_bits = ()

    def make_key(
        self, secret: Poly, s_new: Poly, galois: int | None, uniform: Draw, error: Draw
    ) -> KeySwitchKey:
        """The key switching ``s_new`` to ``secret``: one pair per ciphertext modulus."""
        prm, K = self.params, self.params.key_ring
        Q = math.prod(prm.q_moduli)
        pairs = []
        for q, primes in zip(prm.q_moduli, prm.bv_digits, strict=True):
            T = (Q // q) * pow(Q // q, -1, q)  # 1 mod q, 0 mod the others
            for k in range(max(1, len(primes))):
                weight = math.prod(primes[:k])  # a digit weighs the primes before it
                a = uniform(K)
                e = error(K)
                b = -(a * secret) + e + s_new * (T * weight % Q)
                pairs.append((b.ntt(), a))
        return KeySwitchKey(galois, tuple(pairs))

    def decompose(self, c: Poly, level: int) -> list[Poly]:
        """The digits of ``c`` at ``level``, each extended to the level's ring, in NTT form.

        Without ``digit_bits``, ``[c]_{q_i}`` for each ``i <= level``, extended as ``to_ring``
        extends any value (from that modulus alone: the centered residue, below ``q_i / 2``).
        With it, a residue ``r`` of a larger modulus is extended to its digit primes
        ``p_0 .. p_k`` (``Params.bv_digits``) and written in mixed radix: ``d_0 = [r]_{p_0}``
        (centered), ``r_1 = round(r / p_0)`` (a rescale: ``r = d_0 + p_0 r_1`` exactly), and so
        on; the last digit is what remains. Each digit is below ``2^digit_bits / 2``.
        """
        ring = self.params.ring(level)
        c = c.intt()
        digits = []
        for q, primes in zip(ring.moduli, self.params.bv_digits, strict=False):
            r = c.to_ring(ring.with_moduli((q,)))
            if primes:
                r = r.to_ring(RingSpec(ring.n, primes))
                for p in primes[:-1]:
                    digits.append(r.to_ring(r.ring.with_moduli((p,))).to_ring(ring).ntt())
                    r = r.rescale((p,))
            digits.append(r.to_ring(ring).ntt())
        return digits

    def switch(
        self, c: Poly, key: KeySwitchKey, level: int, galois: int | None = None
    ) -> tuple[Poly, Poly]:
        """``(d_0, d_1)`` with ``d_0 + d_1 s = c' s' + e`` at ``level``, for the key from ``s'``.

        ``c'`` is ``c``, or its automorphism ``X -> X^galois`` (taken digit by digit: a digit of
        ``c'`` is the automorphism of ``c``'s, a permutation of NTT slots). In NTT form.
        """
        with region("key_switch"):
            with region("digits"):
                digits = self.decompose(c, level)
            note(key_switching=self.name, digits=len(digits))
            return products(digits, key, self.params.ring(level), galois)


#: The techniques by the name ``Params.key_switching`` gives.
TECHNIQUES: dict[str, type[KeySwitchMethod]] = {"hybrid": Hybrid, "bv": BV}


def products(
    digits: list[Poly], key: KeySwitchKey, ring: RingSpec, galois: int | None
) -> tuple[Poly, Poly]:
    """``sum_j (d_j' b_j, d_j' a_j)`` over ``ring``, in the region ``products``.

    ``d_j'`` is digit ``j``, or its automorphism ``X -> X^galois``; ``(b_j, a_j)`` is the key's
    pair ``j`` cut to ``ring`` (a view: ``ring``'s moduli are a prefix of the key's).
    """
    acc0: Poly | None = None
    acc1: Poly | None = None
    with region("products"):
        for j, d in enumerate(digits):
            if galois is not None:
                d = d.automorphism(galois)
            b, a = (k.to_ring(ring) for k in key.parts[j])
            t0, t1 = d * b, d * a
            acc0 = t0 if acc0 is None else acc0 + t0
            acc1 = t1 if acc1 is None else acc1 + t1
    assert acc0 is not None and acc1 is not None  # the first digit holds q_0, always
    return acc0, acc1


@functools.lru_cache(maxsize=256)
def _inverse_of_p(p_moduli: tuple[int, ...], ring: RingSpec) -> int:
    """``P^-1 mod Q`` of ``ring``, ``P`` the product of the special moduli (once per level)."""
    return pow(math.prod(p_moduli), -1, ring.Q)


# --- BV's parameters (``Params`` calls these: the technique checks what it needs) ----------------


def check_bv(params: Any, L: int) -> None:
    """BV key switching: no special moduli, one digit per ciphertext modulus, ``digit_bits``.

    Sets ``p_bits`` to ``()`` and ``digit_bits`` to its int on ``params`` (a frozen dataclass in
    its ``__post_init__``).

    Raises:
        ValueError: special moduli, a ``dnum`` other than ``L``, or a ``digit_bits`` out of range.
        TypeError: a ``digit_bits`` that is not an int.
    """
    p_bits = () if params.p_bits is None else params.p_bits
    if is_int(p_bits) or not isinstance(p_bits, Sequence | np.ndarray) or len(p_bits):
        raise ValueError(
            f"p_bits={p_bits!r}: BV key switching (key_switching='bv') uses no special "
            "moduli; leave p_bits out (or pass p_bits=()), or use key_switching='hybrid'"
        )
    if params.dnum is not None and params.dnum != L:
        raise ValueError(
            f"dnum={params.dnum!r}: BV key switching has one digit per ciphertext modulus "
            f"(dnum = len(q_bits) = {L}); leave dnum out, or use key_switching='hybrid'"
        )
    object.__setattr__(params, "p_bits", ())
    if params.digit_bits is not None:
        least = (2 * params.n).bit_length() + 1  # primes 1 mod 2n below 2^digit_bits exist
        if not is_int(params.digit_bits):
            raise TypeError(f"digit_bits must be None or an int, got {params.digit_bits!r}")
        size = int(params.digit_bits)
        if not least <= size <= 61:
            raise ValueError(
                f"digit_bits={size} must be None or an int from {least} to 61 at n={params.n}: "
                f"a digit is a residue modulo a prime 1 mod 2n={2 * params.n} below 2^digit_bits"
            )
        object.__setattr__(params, "digit_bits", size)


def bv_digit_primes(params: Any) -> tuple[tuple[int, ...], ...]:
    """BV's digit primes: for each ciphertext modulus, the primes its residue is written over.

    Empty for a modulus whose residue is one digit (every one without ``digit_bits``). With
    ``digit_bits``, a residue of more bits is written in mixed radix over the fewest of the
    largest primes ``1 (mod 2n)`` below ``2^digit_bits`` (none a ciphertext modulus) whose
    product exceeds the modulus: digit ``j`` is the centered residue modulo the ``j``-th prime
    of what the digits before it left, and weighs the product of the primes before it.

    Raises:
        ValueError: when there are too few such primes (``digit_bits`` too small for ``n``).
    """
    size: int | None = params.digit_bits
    if size is None:
        return tuple(() for _ in range(params.L))
    most = max(-(-q.bit_length() // (size - 1)) for q in params.q_moduli) + 1
    try:
        found = ntt_primes(params.n, size, most + params.L)
    except ValueError:
        raise ValueError(
            f"digit_bits={size} is too small at n={params.n}: there are too few primes "
            f"1 mod 2n={2 * params.n} below 2^{size} to write a {max(params.q_bits)}-bit "
            "residue in; raise digit_bits"
        ) from None
    pool = [p for p in found if p not in params.q_moduli]
    out: list[tuple[int, ...]] = []
    for q in params.q_moduli:
        if q.bit_length() <= size:
            out.append(())
            continue
        count, product = 0, 1
        while product <= q:
            product *= pool[count]
            count += 1
        out.append(tuple(pool[:count]))
    return tuple(out)
