"""The largest of a slot error over many slots: the tail the noise model reads its figure from.

A slot's error is complex normal with a variance that depends on the slot through the secret,
``v(x) = v_0 + v_1 x + v_2 x^2`` with ``x`` about exponential of mean 1 (``ren.schemes.ckks.noise``
says why). The median of the largest ``|z_j|`` over ``M`` slots is the ``t`` with
``M P(|z| > t) = ln 2``, ``P`` integrated over ``x`` numerically (``erfc`` for the real parts).
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["median_max"]


#: The grid of ``|s_j|^2`` (exponential with mean 1) the tail is integrated over.
_E = np.linspace(0.0, 60.0, 3001)
_W = np.exp(-_E) * (_E[1] - _E[0])
_W[0] /= 2


def _erfc(x: np.ndarray) -> np.ndarray:
    """``erfc(x)`` for ``x >= 0``, to a relative error below ``1.2e-7``.

    Numerical Recipes' Chebyshev fit (``erfcc``): the tails matter here, and NumPy has none.
    """
    t = 1.0 / (1.0 + 0.5 * x)
    c = (0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806,
         0.09678418, 0.37409196, 1.00002368, -1.26551223)  # fmt: skip
    acc = np.zeros_like(x)
    for k in c:
        acc = k + t * acc
    out: np.ndarray = t * np.exp(-x * x + acc)
    return out


@functools.lru_cache(maxsize=4096)
def median_max(var: tuple[float, ...], slots: int, real: bool) -> float:
    """The median of ``max_j |z_j|`` (``|Re z_j|`` if ``real``) over ``slots`` slots, in words."""
    v = np.polynomial.polynomial.polyval(_E, np.array(var))
    v = np.maximum(v, 1e-300)
    target = -math.expm1(math.log(0.5) / slots)  # P(one slot passes t) that makes the median

    def tail(t: float) -> float:
        with np.errstate(over="ignore", under="ignore"):
            if real:  # Re z_j is normal with variance v / 2
                return float(np.sum(_W * _erfc(t / np.sqrt(v))))
            return float(np.sum(_W * np.exp(-(t * t) / v)))

    lo, hi = 0.0, math.sqrt(float(v.max())) * 10
    for _ in range(48):  # to 2^-48 of the first bracket: far below a hundredth of a bit
        mid = (lo + hi) / 2
        if tail(mid) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2
