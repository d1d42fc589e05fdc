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

from ren.circuits import in_region
from ren.circuits.ckks.rotations import context_of
from ren.schemes import ckks
from ren.schemes.ckks.shadow import decryption

__all__ = ["mod_raise"]


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
    # no predicted error past here: the noise model does not follow a bootstrap's stages yet,
    # so what comes of them says it has no estimate rather than give a wrong one
    raised = dataclasses.replace(ct, parts=parts, level=top, shadow=None, noise=None)
    if under_secret:  # t + q_0 I: only its decryption tells I
        raised = dataclasses.replace(raised, shadow=decryption(ctx, raised))
    return raised
