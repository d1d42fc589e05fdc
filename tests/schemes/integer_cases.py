"""What the BFV and BGV tests share: a small ring, both schemes, and slot values with edges.

``small(scheme)`` is ``n = 64``, ``t = 257`` (a prime ``= 1 mod 2n``: batching), three 50-bit
ciphertext moduli and two 55-bit special ones, below the HE standard (``insecure=True``).
"""

from __future__ import annotations

import numpy as np

from ren.schemes import bfv, bgv

N, T = 64, 257
SCHEMES = {"bfv": bfv, "bgv": bgv}


def small(scheme, **kw):
    """The test ring's ``scheme.Params``; ``kw`` overrides a field."""
    args = {"n": N, "q_bits": (50, 50, 50), "p_bits": (55, 55), "t": T, "insecure": True} | kw
    return scheme.Params(**args)


def values(seed: int) -> np.ndarray:
    """Random residues with 0, 1, t-1 and t/2 among them."""
    v = np.random.default_rng(seed).integers(0, T, N)
    v[:4] = (0, 1, T - 1, T // 2)
    return v


def rows(v: np.ndarray) -> np.ndarray:
    """The slots as SEAL's 2 x n/2 matrix."""
    return np.asarray(v).reshape(2, N // 2)
