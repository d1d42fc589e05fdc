"""The largest of a slot error over many slots: the tail the noise model reads its figure from.

A slot's error is complex normal with a variance that depends on the slot through the secret,
``v(x) = v_0 + v_1 x + v_2 x^2`` with ``x`` about exponential of mean 1 (``ren.schemes.ckks.noise``
says why). The median of the largest ``|z_j|`` over ``M`` slots is the ``t`` with
``M P(|z| > t) = ln 2``, ``P`` integrated over ``x`` numerically (``erfc`` for the real parts).
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ren.schemes.ckks.noise import Noise

__all__ = ["FLOAT_FLOOR", "max_error", "median_max", "one_draw", "precision_bits"]

#: The relative rounding error of the decryption's float64 decoding (and of the exact values one
#: compares with, computed in float64 too): a slot of size ``|v|`` is read to about
#: ``|v| * 2^-52`` at best, whatever the noise.
FLOAT_FLOOR = 2.0**-52


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


def one_draw(median: float, real: bool) -> float:
    """The variance whose single draw has ``median`` as the median of ``|z|`` (``|Re z|``).

    ``median_max(v, 1, real)`` inverted: ``exp(-t^2 / v) = 1/2`` for ``|z|``, ``erfc(t / sqrt
    v) = 1/2`` (``t = 0.476936 sqrt v``) for ``|Re z|``. A bound that holds on every slot (one
    value, not a draw per slot) enters the estimate so.
    """
    return (median / 0.476936) ** 2 if real else median**2 / math.log(2)


def max_error(a: Noise, slots: int, real: bool, modulus: int | None = None) -> float:
    """The median of the largest slot error over ``slots`` slots, in words.

    The components that vary over every slot are taken together (their variances added, the
    tail of their sum); each that takes fewer values (``spread``) gives the largest of that
    many draws, and these add in quadrature, with the float64 decoding's own rounding
    (``FLOAT_FLOOR`` of the values' bound). With the ``modulus`` of the value's level: at most
    what a decryption of words uniform modulo it gives (slot variance ``2 slots modulus^2 /
    12``): an error past the modulus leaves no message, and the decryption is then that noise.
    """
    var = a.var
    if not all(math.isfinite(v) for v in var):
        return math.inf
    floor = FLOAT_FLOOR * a.bound if math.isfinite(a.bound) else 0.0
    if not any(var):
        return floor
    full = [p for p in a.parts if p.spread >= slots]
    shares = []
    if full:
        joint = tuple(sum(p.var[k] for p in full) for k in range(len(a.var)))
        shares.append(median_max(_key(joint), slots, real))
    for p in a.parts:
        if p.spread < slots and any(p.var):
            shares.append(median_max(_key(p.var), max(1, round(p.spread)), real))
    err = math.sqrt(floor * floor + sum(x * x for x in shares))
    if modulus is not None and modulus.bit_length() < 500:  # past it no float error reaches
        q = float(modulus)
        err = min(err, median_max((2 * slots * q * q / 12,), slots, real))
    return err


def _key(var: tuple[float, ...]) -> tuple[float, ...]:
    """``var`` to 6 digits: the key the tail's cache keeps."""
    return tuple(float(f"{v:.6g}") for v in var)


def precision_bits(
    a: Noise, scale: float, slots: int, real: bool, modulus: int | None = None
) -> float:
    """``-log2`` of the largest slot error over the scale: the absolute bits of precision."""
    err = max_error(a, slots, real, modulus) / scale
    return math.inf if err == 0 else -math.log2(err)
