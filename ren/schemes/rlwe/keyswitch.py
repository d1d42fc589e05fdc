"""Key switching, a part a context holds: the key it makes and the switch it builds.

:class:`KeySwitchMethod` is what a technique provides (the key from ``s'`` to ``s``, the switch
of one ciphertext part at a level, with or without an automorphism, and the part of it that
depends only on that ciphertext part, which a hoisted rotation shares); a context holds one as
``key_switcher``, chosen from its parameters by :func:`key_switcher`. :class:`Hybrid` is
today's technique: ModUp once per ciphertext part, then automorphisms, products and ModDown.

A key switch builds in the region ``key_switch``, its three steps in ``mod_up``, ``products`` and
``mod_down`` (``ren.region``): the report and the debugger show each.
"""

from __future__ import annotations

import abc
import functools
import math
from collections.abc import Callable
from typing import Any, ClassVar

from ren.ir.region import region
from ren.poly import Poly
from ren.ring import RingSpec
from ren.schemes.rlwe.keys import KeySwitchKey

__all__ = ["Hybrid", "KeySwitchMethod", "key_switcher"]

#: Draws a random polynomial over a ring (uniform in NTT form, or the error distribution).
Draw = Callable[[RingSpec], Poly]


class KeySwitchMethod(abc.ABC):
    """A key-switching technique for one parameter set.

    ``params`` is the scheme's parameters: its ciphertext moduli, its digits, the key ring at
    each level. A technique's methods only build graphs; the context realizes keys and results.
    """

    #: The technique's name (the parameters' choice, shown in reports).
    name: ClassVar[str]

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
    """The key-switching technique of ``params`` (hybrid: the only one its parameters name)."""
    return Hybrid(params)


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
        Kl = self.params.key_ring_at(level)
        acc0: Poly | None = None
        acc1: Poly | None = None
        with region("key_switch"):
            with region("mod_up"):
                ups = self.mod_up(c, level)
            with region("products"):
                for j, up in enumerate(ups):
                    if galois is not None:
                        up = up.automorphism(galois)
                    b, a = (k.to_ring(Kl) for k in key.parts[j])
                    t0, t1 = up * b, up * a
                    acc0 = t0 if acc0 is None else acc0 + t0
                    acc1 = t1 if acc1 is None else acc1 + t1
            assert acc0 is not None and acc1 is not None  # the first digit holds q_0, always
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


@functools.lru_cache(maxsize=256)
def _inverse_of_p(p_moduli: tuple[int, ...], ring: RingSpec) -> int:
    """``P^-1 mod Q`` of ``ring``, ``P`` the product of the special moduli (once per level)."""
    return pow(math.prod(p_moduli), -1, ring.Q)
