"""BFV: exact arithmetic on integers mod ``t``, the message scaled by ``Q/t`` above the noise.

A ciphertext ``(c_0, c_1)`` at the top level decrypts as ``c_0 + c_1 s = round(Q m / t) + e``
(mod ``Q``): the message sits in the high bits, the noise ``e`` in the low ones, and decryption
is ``round(t (c_0 + c_1 s) / Q) mod t``. Two ciphertexts multiply by their tensor product
``(a_0 b_0, a_0 b_1 + a_1 b_0, a_1 b_1)``, taken over ``Q`` and extra moduli ``B`` so that it is
exact, then scaled by ``t/Q`` and rounded (``Poly.rescale`` by the moduli of ``Q``), brought back
to ``Q`` (``Poly.to_ring``) and relinearized: the HPS way of doing the product in RNS.

Usage::

    from ren.schemes import bfv
    params = bfv.Params(n=8192, q_bits=(43, 43, 44, 44), p_bits=(44,), t=65537)
    with bfv.Context(params) as ctx:
        ct = bfv.encrypt([1, 2, 3])
        out = bfv.decrypt(ct * ct + 1)       # [2, 5, 10, 1, 1, ...]
        ctx.noise_budget(ct)                 # bits left

What is shared with BGV (keys, batching, additions, rotations, the noise budget) is in
``ren.schemes.integer``.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import ClassVar

import numpy as np

from ren.ir.region import region
from ren.poly import Poly
from ren.ring import RingSpec
from ren.schemes.integer import noise
from ren.schemes.integer.api import functions
from ren.schemes.integer.context import IntContext, NoiseBudgetExhausted
from ren.schemes.integer.keys import EvaluationKeys
from ren.schemes.integer.params import IntParams, register_scheme
from ren.schemes.integer.types import Ciphertext, Plaintext
from ren.schemes.integer.watch import CiphertextView

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
    "noise_budget",
    "predicted_noise_budget",
]


@dataclasses.dataclass(frozen=True, repr=False)
class Params(IntParams):
    """BFV parameters: see ``ren.schemes.integer.params.IntParams`` for the arguments."""

    scheme: ClassVar[str] = "bfv"


class Context(IntContext):
    """A BFV context: see ``ren.schemes.integer.context.IntContext``."""

    scheme = "bfv"
    params_type = Params

    def _plain_term(self, pt: Plaintext, ring: RingSpec, correction: int) -> Poly:
        """``round(Q m / t)`` for each coefficient: ``floor(Q/t) m + round((Q mod t) m / t)``."""
        Q, t = ring.Q, self.params.t
        m = pt.coeffs.astype(object) if t >= 2**31 else pt.coeffs
        r = (((Q % t) * m + t // 2) // t).astype(np.int64)
        # both are below t, so below every modulus: the same words in every limb
        m_poly, r_poly = (
            Poly.from_limbs(np.tile(v.astype(np.uint64), (ring.L, 1)), ring, device=self.device)
            for v in (pt.coeffs, r)
        )
        return m_poly * (Q // t) + r_poly

    def _fresh(self, z0: Poly, z1: Poly, pt: Plaintext, level: int) -> tuple[Poly, Poly]:
        return z0 + self._plain_term(pt, z0.ring, 1), z1

    def _tensor(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """``round(t (a x b) / Q)``, exactly: the tensor over ``Q`` and ``B``, scaled by ``t/Q``.

        Each part is extended from ``Q`` to the extra moduli ``B`` (``to_ring``, exact), so the
        tensor ``x`` is known modulo ``Q B``: its NTT-form limbs over ``Q`` and over ``B``. Then
        ``round(t x / Q) = (t x - [t x]_Q) / Q``, with ``[t x]_Q`` the centered remainder: it is
        taken over ``Q``, extended to ``B``, subtracted there and divided by ``Q``, and the
        quotient (smaller than ``B/2``) is extended back to ``Q``, as ModDown does with ``P``.
        """
        prm = self.params
        ring, extra = a.parts[0].ring, prm.tensor_extra_ring
        with region("tensor"):
            a_q, a_b = self._both(a)
            b_q, b_b = (a_q, a_b) if b is a else self._both(b)
            d_q = (a_q[0] * b_q[0], a_q[0] * b_q[1] + a_q[1] * b_q[0], a_q[1] * b_q[1])
            d_b = (a_b[0] * b_b[0], a_b[0] * b_b[1] + a_b[1] * b_b[0], a_b[1] * b_b[1])
        with region("scale"):
            q_inv = prm.q_inverse_mod_extra
            parts = []
            for x_q, x_b in zip(d_q, d_b, strict=True):
                r = (x_q * prm.t).intt().to_ring(extra)
                y = (x_b.intt() * prm.t - r) * q_inv
                parts.append(y.to_ring(ring).ntt())
        est = noise.tensored(prm, a.noise, b.noise, a.level)
        return a._evolve(parts=tuple(parts), noise=est)

    def _both(self, ct: Ciphertext) -> tuple[tuple[Poly, ...], tuple[Poly, ...]]:
        """The parts over ``Q`` (as they are) and extended to ``B``, both in NTT form."""
        extra = self.params.tensor_extra_ring
        return ct.parts, tuple(p.intt().to_ring(extra).ntt() for p in ct.parts)

    def _message(self, x: list[int], ct: Ciphertext) -> list[int]:
        Q, t = self.params.ring(ct.level).Q, self.params.t
        return [(2 * t * v + Q) // (2 * Q) % t for v in x]

    def _noise(self, x: list[int], Q: int) -> list[int]:
        t, half = self.params.t, Q // 2
        noise = [t * v % Q for v in x]
        return [w - Q if w > half else w for w in noise]


current, encode, encrypt, decrypt, noise_budget, predicted_noise_budget = functions(Context)

register_scheme(sys.modules[__name__])  # ren.schemes.integer finds the scheme by its name
