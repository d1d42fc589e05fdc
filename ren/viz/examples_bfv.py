"""The integer-scheme example of ``python -m ren.viz``: one BFV multiply and its noise budget."""

from __future__ import annotations

from typing import TypedDict

import numpy as np

from ren.engine.observe import observing
from ren.viz.phases import Outcome, Phases

__all__ = ["BFV_PARAMS", "bfv_mul"]


class BfvParams(TypedDict):
    """The arguments of ``bfv.Params`` that ``BFV_PARAMS`` gives."""

    n: int
    q_bits: tuple[int, ...]
    p_bits: tuple[int, ...]
    t: int


#: SEAL's default chain at ``n = 8192`` (218 bits, 128-bit secure) with ``t = 65537``.
BFV_PARAMS: BfvParams = dict(n=8192, q_bits=(43, 43, 44, 44), p_bits=(44,), t=65537)


def bfv_mul() -> Outcome:
    """``Enc(x) * Enc(y) + 1`` in BFV, relinearized, checked against NumPy's integers mod ``t``."""
    from ren.schemes import bfv

    phases = Phases()
    with observing(phases):
        params = bfv.Params(**BFV_PARAMS)
        ctx = bfv.Context(params, seed=1, device="python")
        keys = ("secret key s (NTT form)", "public key (b, a)", "relinearization key (s^2 to s)")
        with phases("key generation", names=keys):
            ctx.keygen()
        x, y = np.random.default_rng(0).integers(0, params.t, (2, params.n))
        with phases("encrypt x"):
            a = ctx.encrypt(x).realize()
        with phases("encrypt y"):
            b = ctx.encrypt(y).realize()
        with phases("multiply: x * y + 1, relinearized", focus=True):
            c = (a * b + 1).realize()
        with phases("decrypt"):
            got = ctx.decrypt(c)
            budgets = ctx.noise_budget(a), ctx.noise_budget(c)
    want = (x * y + 1) % params.t
    ok = bool(np.array_equal(got, want))
    summary = "\n".join(
        [
            "program: ct = Enc(x) * Enc(y) + 1 in BFV: both extended to the extra moduli B, the "
            "tensor product over Q and B, scaled by t/Q, relinearized, as one lazy graph",
            f"x, y: {params.n} random integers mod t = {params.t} (NumPy seed 0)",
            f"ring: n={params.n}, q = {' + '.join(map(str, params.q_bits))} bits, p = "
            f"{params.p_bits[0]} bits (SEAL's default chain, 218 bits, 128-bit secure)",
            f"x * y + 1: decrypted vs NumPy mod t: {'equal' if ok else 'DIFFERENT'} in all "
            f"{params.n} slots; noise budget {budgets[0]} bits fresh, {budgets[1]} after",
        ]
    )
    return phases.outcome(summary, ok)
