"""RLWE encryption of zero and decryption: the pairs every RLWE scheme builds on.

The public key is ``(b, a) = (-a s + e, a)`` over the key ring (``keygen`` makes it). An
encryption of zero at a level is ``round((b v + e_0, a v + e_1) / P)`` for a ternary ``v``, made
over the key ring at that level, so its noise is mostly the rounding of the division by the
special moduli ``P``. A scheme adds its encoded message to the first part. The parameters are any
that give ``key_ring_at(level)``, ``p_moduli`` and ``sigma``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ren.poly import Poly
from ren.ring.sampling import OsRandom

if TYPE_CHECKING:
    import numpy as np

    from ren.schemes.rlwe.params import Chain

__all__ = ["decrypt_parts", "encrypt_zero"]


def encrypt_zero(
    params: Chain,
    public: tuple[Poly, Poly],
    level: int,
    rng: np.random.Generator | OsRandom,
    device: str,
) -> tuple[Poly, Poly]:
    """An encryption of zero at ``level``, lazily, over the level's ring (coefficient form)."""
    Kl = params.key_ring_at(level)
    v = Poly.ternary(Kl, rng, device).ntt()
    e0 = Poly.gaussian(Kl, params.sigma, rng, device)
    e1 = Poly.gaussian(Kl, params.sigma, rng, device)
    b, a = (k.to_ring(Kl) for k in public)
    c0, c1 = b * v + e0, a * v + e1
    if not params.p_moduli:  # BV key switching: the key ring is the level's ring
        return c0, c1
    return c0.rescale(params.p_moduli), c1.rescale(params.p_moduli)


def decrypt_parts(parts: tuple[Poly, ...], secret: Poly) -> Poly:
    """``c_0 + c_1 s (+ c_2 s^2)``, lazily, for ``secret`` over the parts' ring."""
    m = parts[0] + parts[1] * secret
    if len(parts) == 3:
        m = m + parts[2] * (secret * secret)
    return m
