"""ModRaise: a level-0 ciphertext read in the full chain, the first step of bootstrapping.

At level 0 a ciphertext ``(c_0, c_1)`` holds ``c_0 + c_1 s = m + e (mod q_0)``. Taking the centered
representatives of ``c_0`` and ``c_1`` modulo ``q_0`` and reading them modulo the whole chain
``Q = q_0 ... q_(L-1)`` gives a ciphertext at the top level that decrypts to ``m + e + q_0 I`` for
an integer polynomial ``I`` with ``|I| <= (1 + ||s||_1) / 2`` (the products with a ternary secret
of ``h`` nonzero coefficients add at most ``h / 2`` times ``q_0``): every level is back, and the
message now carries multiples of ``q_0`` that the later stages remove (``eval_mod``). It is one
inverse NTT of each part, a basis extension from one modulus (exact: the centered lift) and an NTT.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ren.circuits import in_region
from ren.circuits.ckks.rotations import context_of
from ren.schemes import ckks
from ren.schemes.ckks.noise import exact, renewed
from ren.schemes.ckks.ranges import EVAL_SCALE_BITS
from ren.schemes.ckks.shadow import decryption
from ren.schemes.rlwe.noise import secret_weight

__all__ = ["mod_raise", "raise_modulus"]


@in_region("mod_raise")
def mod_raise(ct: ckks.Ciphertext, *, under_secret: bool = True) -> ckks.Ciphertext:
    """``ct`` (at level 0) read in the full chain: at the top level, with the same scale.

    Its decryption is ``m + e + q_0 I`` with ``I`` small (see the module docstring), so
    ``ckks.decrypt`` of it is not the message: the bootstrap's later stages make it so. While
    recording, the result's shadow is that exact decryption (``ren.schemes.ckks.shadow``),
    unless ``under_secret`` is false: ``ct`` is under another key (an encapsulated bootstrap's
    sparse secret), which the context's secret key would not decrypt, and gets no shadow.

    Raises:
        TypeError: for anything but a ciphertext.
        ValueError: a ciphertext above level 0 (``at_level(0)`` first) or of three parts.
    """
    ctx = context_of(ct)
    if ct.level != 0:
        raise ValueError(
            f"mod_raise takes a ciphertext at level 0, got level {ct.level}: bring it down with "
            "ct.at_level(0) first"
        )
    if ct.size != 2:
        raise ValueError("mod_raise needs a two-part ciphertext: relinearize first")
    top = ctx.params.max_level
    ring = ctx.params.ring(top)
    parts = tuple(p.intt().to_ring(ring).ntt() for p in ct.parts)  # the centered lift, exact
    raised = dataclasses.replace(ct, parts=parts, level=top, shadow=None)
    # exact: its decryption is t + q_0 I itself (the input's error is part of t, and the
    # bootstrap carries it to its output); its slots sum n coefficients t + q_0 I of random
    # signs, I of variance (h + 1) / 12 for a secret of weight h: a slot's deviation is
    # q_0 sqrt(n (h + 2) / 12), the largest of the slots about 5 of it
    h = secret_weight(ctx.params)
    most = 5 * float(ctx.params.q_moduli[0]) * math.sqrt(ctx.params.n * (h + 2) / 12)
    raised = renewed(exact(raised), most / ct.scale)
    if under_secret:  # t + q_0 I: only its decryption tells I
        raised = dataclasses.replace(raised, shadow=decryption(ctx, raised))
    return raised


@in_region("mod_raise")
def raise_modulus(ct: ckks.Ciphertext, made: Any, lift: int = 0) -> ckks.Ciphertext:
    """Stage 1, ModRaise of ``ct`` (at level 0): at the top level, decrypting to ``t + q_0 I``.

    Inside a switch to the sparse secret and back when the plan (``made``, a bootstrap's ``Plan``)
    says so; ``ct``'s scale. With
    ``lift``, the words are then multiplied by ``2^lift`` (exact, no level) and read at the scale
    ``EVAL_SCALE 2^lift``: as ``t / EVAL_SCALE``, what the bootstrap's next stage takes.
    """
    ctx = context_of(ct)
    h = made.config.sparse_secret
    if h is None:
        raised = mod_raise(ct)
    else:
        down, up = ctx.encapsulation_keys(h)
        c0, c1 = ct.parts
        d0, d1 = ctx.key_switcher.switch(c1, down, 0)
        # under the sparse secret: no shadow (the secret key would not decrypt it)
        raised = mod_raise(dataclasses.replace(ct, parts=(c0 + d0, d1)), under_secret=False)
        c0, c1 = raised.parts
        d0, d1 = ctx.key_switcher.switch(c1, up, raised.level)
        raised = dataclasses.replace(raised, parts=(c0 + d0, d1))
        # under the secret again: its shadow is its exact decryption, t + q_0 I
        raised = dataclasses.replace(raised, shadow=decryption(ctx, raised))
    if not lift:
        return raised
    x = ckks.multiply(raised, 2**lift)  # exact: the words times 2^lift
    return dataclasses.replace(x, scale=2.0 ** (EVAL_SCALE_BITS + lift))
