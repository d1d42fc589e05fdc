"""Hybrid key switching: ModUp once per ciphertext part, then automorphisms, products, ModDown.

A key switch builds in the region ``key_switch``, its three steps in ``mod_up``, ``products`` and
``mod_down`` (``ren.region``): the report and the debugger show each.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from ren.ir.region import region
from ren.poly import Poly
from ren.ring import RingSpec
from ren.schemes.rlwe.keys import KeySwitchKey


class KeySwitching:
    """Key switching for an RLWE context.

    A mixin: the context sets ``params``, with digits, the ciphertext and special moduli and a
    key ring at each level.
    """

    params: Any

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

    def key_switch(
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
