"""BGV: exact arithmetic on integers mod ``t``, the message in the low bits, under ``t`` e.

A ciphertext ``(c_0, c_1)`` at level ``l`` decrypts as ``c_0 + c_1 s = f m + t e`` (mod
``Q_l``), so decryption is ``[c_0 + c_1 s]_Q mod t`` times ``f^-1``. Products are the plain tensor
product (no scaling); the noise ``t e`` then grows with the product of the noises, and
:func:`mod_switch` divides a ciphertext by its last modulus ``q_l`` to shrink it again. That
division multiplies the message by ``q_l^-1 mod t``: the ciphertext's ``correction`` ``f``
keeps that factor (the plaintext-modulus correction), and decryption and additions undo it.

Encryption and key switching use the keys every RLWE scheme shares (``b = -a s + e``): an
encryption of zero is multiplied by ``t``, and a key switch is taken of ``t^-1 c`` and multiplied
by ``t``, so each leaves noise that is a multiple of ``t``.

Usage::

    from ren.schemes import bgv
    params = bgv.Params(n=8192, q_bits=(43, 43, 44, 44), p_bits=(44,), t=65537)
    with bgv.Context(params) as ctx:
        ct = bgv.encrypt([1, 2, 3])
        sq = bgv.mod_switch(ct * ct)          # one level down, the noise divided by q_3
        out = bgv.decrypt(sq + 1)             # [2, 5, 10, 1, 1, ...]
"""

from __future__ import annotations

import dataclasses
import sys
from typing import ClassVar

import numpy as np

from ren.ir.region import in_region, region
from ren.poly import Poly, is_int
from ren.ring import RingSpec
from ren.schemes.integer import noise
from ren.schemes.integer.api import functions
from ren.schemes.integer.context import IntContext, NoiseBudgetExhausted
from ren.schemes.integer.keys import EvaluationKeys
from ren.schemes.integer.params import IntParams, register_scheme
from ren.schemes.integer.types import Ciphertext, Plaintext
from ren.schemes.integer.watch import CiphertextView
from ren.schemes.rlwe import bytes as _fmt
from ren.schemes.rlwe.keys import KeySwitchKey

__all__ = [
    "Ciphertext",
    "CiphertextView",
    "Context",
    "EvaluationKeys",
    "NoiseBudgetExhausted",
    "Params",
    "Plaintext",
    "current",
    "decrypt",
    "encode",
    "encrypt",
    "mod_switch",
    "noise_budget",
    "predicted_noise_budget",
]


@dataclasses.dataclass(frozen=True, repr=False)
class Params(IntParams):
    """BGV parameters: see ``ren.schemes.integer.params.IntParams`` for the arguments."""

    scheme: ClassVar[str] = "bgv"


class Context(IntContext):
    """A BGV context: see ``ren.schemes.integer.context.IntContext``; adds :meth:`mod_switch`."""

    scheme = "bgv"
    params_type = Params

    def _plain_term(self, pt: Plaintext, ring: RingSpec, correction: int) -> Poly:
        t = self.params.t
        scaled = pt.coeffs.astype(object) * correction % t
        return self._plain_poly(Plaintext(scaled.astype(np.int64), self.params), ring)

    def _fresh(self, z0: Poly, z1: Poly, pt: Plaintext, level: int) -> tuple[Poly, Poly]:
        t = self.params.t
        return z0 * t + self._plain_term(pt, z0.ring, 1), z1 * t

    def _tensor(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        a0, a1 = a.parts
        b0, b1 = b.parts
        with region("tensor"):
            parts = (a0 * b0, a0 * b1 + a1 * b0, a1 * b1)
        est = noise.tensored(self.params, a.noise, b.noise, a.level)
        f = a.correction * b.correction % self.params.t
        return a._evolve(parts=parts, correction=f, noise=est)

    def _message(self, x: list[int], ct: Ciphertext) -> list[int]:
        t = self.params.t
        f_inv = pow(ct.correction, -1, t)
        return [v % t * f_inv % t for v in x]

    def _noise(self, x: list[int], Q: int) -> list[int]:
        return x

    def _switch(
        self, c: Poly, key: KeySwitchKey, level: int, galois: int | None = None
    ) -> tuple[Poly, Poly]:
        t, Q = self.params.t, self.params.ring(level).Q
        k0, k1 = self.key_switcher.switch(c * pow(t, -1, Q), key, level, galois)
        return k0 * t, k1 * t

    def _match(self, a: Ciphertext, b: Ciphertext) -> tuple[Ciphertext, Ciphertext]:
        level = min(a.level, b.level)
        a, b = self.mod_switch_to(a, level), self.mod_switch_to(b, level)
        if a.correction != b.correction:  # b times f_a / f_b: the same factor as a's
            t = self.params.t
            k = a.correction * pow(b.correction, -1, t) % t
            k = k - t if k > t // 2 else k
            est = noise.scaled(b.noise, k)
            b = b._evolve(parts=tuple(p * k for p in b.parts), correction=a.correction, noise=est)
        return a, b

    @in_region("mod_switch")
    def mod_switch(self, ct: Ciphertext) -> Ciphertext:
        """``ct`` one level down: divided by its last modulus ``q_l``, its noise with it.

        Each part ``c`` becomes ``(c + t r) / q_l`` with ``r = -c t^-1 (mod q_l)``, centred: the
        division is exact, and ``t r`` keeps the message mod ``t`` but for the factor
        ``q_l^-1 mod t``, which the ciphertext's ``correction`` takes.

        Raises:
            ValueError: at level 0 (no modulus left to drop).
        """
        ct = self._own(ct)
        if ct.level == 0:
            raise ValueError("mod_switch at level 0: there is no modulus left to drop")
        t, ring = self.params.t, ct.parts[0].ring
        q = ring.moduli[-1]
        last = ring.with_moduli((q,))
        minus_t_inv = -pow(t, -1, q) % q
        parts = []
        for c in ct.parts:
            c = c.intt()
            r = (c.to_ring(last) * minus_t_inv).to_ring(ring)
            parts.append((c + r * t).rescale(q).ntt())
        f = ct.correction * pow(q, -1, t) % t
        est = noise.mod_switched(self.params, ct.noise, ct.level)
        return ct._evolve(parts=tuple(parts), level=ct.level - 1, correction=f, noise=est)

    def mod_switch_to(self, ct: Ciphertext, level: int) -> Ciphertext:
        """``ct`` switched down to ``level`` (as is when it is there already).

        Raises:
            ValueError: a level above the ciphertext's, or outside ``[0, L-1]``.
        """
        ct = self._own(ct)
        if not is_int(level) or isinstance(level, bool):
            raise TypeError(f"level must be an int, got {_fmt.describe(level)}")
        self.params._check_level(level)
        if level > ct.level:
            raise ValueError(f"cannot switch a level-{ct.level} ciphertext up to level {level}")
        while ct.level > level:
            ct = self.mod_switch(ct)
        return ct


current, encode, encrypt, decrypt, noise_budget, predicted_noise_budget = functions(Context)


def mod_switch(ct: Ciphertext) -> Ciphertext:
    """``ct`` one level down (``Context.mod_switch``)."""
    ctx = ct.context if isinstance(ct, Ciphertext) and ct.context else current()
    if not isinstance(ctx, Context):
        raise TypeError(f"mod_switch takes a bgv.Ciphertext, got {_fmt.describe(ct)}")
    return ctx.mod_switch(ct)


register_scheme(sys.modules[__name__])  # ren.schemes.integer finds the scheme by its name
