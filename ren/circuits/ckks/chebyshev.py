"""Chebyshev series in plain NumPy: fits, the map of an interval, and division by ``T_m``.

Everything here works on coefficient vectors, never on ciphertexts, so ``polynomial.py`` decides
its whole evaluation from it before building a single node.

* ``chebyshev(f, interval, degree)``: the coefficients ``c_0 .. c_d`` of the polynomial that
  interpolates ``f`` at the ``d + 1`` Chebyshev nodes of ``interval``,
  ``p(x) = sum_j c_j T_j(y)`` with ``y = (2x - a - b) / (b - a)`` (Trefethen, *Approximation
  Theory and Approximation Practice*, 2013, chapters 3 and 4: a near-best approximation);
* ``affine(interval)``: the map ``y = alpha x + beta`` from ``[a, b]`` to ``[-1, 1]``;
* ``monomial_to_chebyshev(coeffs, interval)``: ``sum_j m_j x^j`` as a series in ``T_j(y)``;
* ``divide(c, m)``: ``p = q T_m + r`` from ``T_m T_i = (T_(m+i) + T_(m-i)) / 2``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.polynomial import chebyshev as npcheb
from numpy.polynomial import polynomial as nppoly

from ren.poly import is_int

__all__ = ["affine", "chebyshev", "check_interval", "divide", "monomial_to_chebyshev", "peak"]


def check_interval(interval: Any, name: str = "interval") -> tuple[float, float]:
    """``interval`` as two floats ``a < b``.

    Raises:
        TypeError: not a pair of real numbers.
        ValueError: not two entries, an entry that is not finite, or ``a >= b``.
    """
    if isinstance(interval, str | bytes) or not hasattr(interval, "__len__"):
        raise TypeError(f"{name} must be a pair of numbers (a, b), got {interval!r}")
    if len(interval) != 2:
        raise ValueError(f"{name} must be two numbers (a, b), got {interval!r}")
    a, b = interval
    for v in (a, b):
        if not isinstance(v, numbers.Real) or isinstance(v, bool | np.bool_):
            raise TypeError(f"{name} must be a pair of real numbers (a, b), got {interval!r}")
    if not (math.isfinite(a) and math.isfinite(b)) or not a < b:
        raise ValueError(f"{name} must be two finite numbers a < b, got {interval!r}")
    return float(a), float(b)


def affine(interval: tuple[float, float]) -> tuple[float, float]:
    """``(alpha, beta)`` with ``alpha a + beta = -1`` and ``alpha b + beta = 1``."""
    a, b = check_interval(interval)
    return 2.0 / (b - a), -(a + b) / (b - a)


def chebyshev(f: Callable[[np.ndarray], Any], interval: object, degree: int) -> np.ndarray:
    """The ``degree + 1`` Chebyshev coefficients of ``f`` interpolated on ``interval``.

    ``f`` is called once, on the NumPy array of the nodes
    ``x_k = ((b - a) cos(pi (k + 1/2) / (d + 1)) + a + b) / 2``, ``k = 0 .. d``, and
    ``c_j = (2 - [j = 0]) / (d + 1) sum_k f(x_k) T_j(y_k)``: the polynomial of degree ``d`` equal to
    ``f`` at every node (NumPy's ``Chebyshev.interpolate`` computes the same). Its error on the
    interval is within a factor ``2 + (2 / pi) log(d + 1)`` of the best polynomial's.

    Returns:
        A float array (a complex one when ``f`` gives complex values).

    Raises:
        TypeError: ``f`` not callable or giving values that are not numbers, ``degree`` not an
            int, ``interval`` not a pair of numbers.
        ValueError: ``degree < 1``, ``a >= b`` (or not finite), or ``f`` giving NaN, infinity, or
            not one number per node.
    """
    if not callable(f):
        raise TypeError(f"f must be callable (a function of a NumPy array), got {type(f).__name__}")
    if not is_int(degree):
        raise TypeError(f"degree must be an int, got {degree!r} ({type(degree).__name__})")
    if degree < 1:
        raise ValueError(f"degree must be at least 1, got {degree}")
    a, b = check_interval(interval)
    count = int(degree) + 1
    y = np.cos(np.pi * (np.arange(count) + 0.5) / count)
    x = ((b - a) * y + a + b) / 2
    with np.errstate(all="ignore"):  # a bad value is refused just below, naming the node
        values = f(x)
    try:
        values = np.broadcast_to(np.asarray(values), x.shape)
    except ValueError:
        raise ValueError(
            f"f must give one number per node: called on {count} nodes it gave shape "
            f"{np.shape(values)}"
        ) from None
    if values.dtype.kind not in "iufcb":
        raise TypeError(f"f must give numbers, got values of dtype {values.dtype}")
    bad = ~np.isfinite(values)
    if bad.any():
        raise ValueError(
            f"f gave a value that is not finite at {int(bad.sum())} of the {count} Chebyshev nodes "
            f"of [{a}, {b}] (the first at x={x[np.argmax(bad)]!r}): fit f on an interval where it "
            "is finite"
        )
    T = np.cos(np.outer(np.arange(count), np.arccos(y)))  # T_j(y_k) = cos(j arccos y_k)
    coeffs: np.ndarray = (2.0 / count) * (
        T @ values.astype(complex if values.dtype.kind == "c" else float)
    )
    coeffs[0] /= 2
    return coeffs


def monomial_to_chebyshev(coeffs: np.ndarray, interval: tuple[float, float]) -> np.ndarray:
    """``sum_j m_j x^j`` as Chebyshev coefficients in ``y``, ``x = ((b - a) y + a + b) / 2``."""
    a, b = interval
    if (a, b) != (-1.0, 1.0):  # Horner's rule in polynomials of y
        x_of_y = nppoly.Polynomial([(a + b) / 2, (b - a) / 2])
        in_y = nppoly.Polynomial([0.0])
        for m in coeffs[::-1]:
            in_y = in_y * x_of_y + m
        coeffs = np.asarray(in_y.coef)
    return np.asarray(npcheb.poly2cheb(coeffs))


def divide(c: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """``(q, r)`` with ``sum_j c_j T_j = (sum_i q_i T_i) T_m + sum_j r_j T_j`` and ``deg r < m``.

    For ``m <= d < 2m`` (``d = len(c) - 1``): ``q_0 = c_m``, ``q_i = 2 c_(m+i)``, and
    ``r_j = c_j - c_(2m-j)`` for ``2m - d <= j < m`` (else ``c_j``), since
    ``T_m T_i = (T_(m+i) + T_(m-i)) / 2``.

    Raises:
        ValueError: ``m`` outside ``(d/2, d]``.
    """
    d = len(c) - 1
    if not (m <= d < 2 * m):
        raise ValueError(f"divide needs m <= d < 2m, got m={m} for degree {d}")
    q = np.concatenate([c[m : m + 1], 2 * c[m + 1 :]])
    r = c[:m].copy()
    j = np.arange(2 * m - d, m)
    r[j] -= c[2 * m - j]
    return q, r


def peak(c: np.ndarray) -> float:
    """The largest ``|sum_j c_j T_j(y)|`` on ``[-1, 1]``, on a fine grid (slightly raised)."""
    y = np.cos(np.linspace(0.0, np.pi, 4097))  # the Chebyshev points: where the extremes lie
    return float(np.max(np.abs(np.polynomial.chebyshev.chebval(y, c)))) * (1 + 2**-20)
