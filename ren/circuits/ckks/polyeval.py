"""Polynomial evaluation on CKKS ciphertexts: Chebyshev fits and a baby-step giant-step evaluator.

``chebyshev(f, interval, degree)`` fits ``f`` on ``interval`` by interpolation at the Chebyshev
nodes; ``evaluate_polynomial(ct, coeffs, basis, interval)`` evaluates a polynomial given in the
Chebyshev basis of ``interval`` (or in monomials of ``x``) on every slot of ``ct``.

**The algorithm** (Paterson and Stockmeyer's baby-step giant-step, in the Chebyshev basis, as
Lattigo and OpenFHE evaluate series). ``x`` is first mapped to ``y = (2x - a - b) / (b - a)`` (one
scalar product, one level; none for ``(-1, 1)``). Baby steps ``T_1 .. T_{k-1}`` of ``y`` and giant
steps ``T_k, T_2k, T_4k, ...`` are computed with ``T_2m = 2 T_m^2 - 1`` and
``T_(m+n) = 2 T_m T_n - T_(m-n)``; ``T_i`` costs ``ceil(log2 i)`` levels. The polynomial is split
by its largest giant step ``G = T_m``: ``p = q G + r`` (Chebyshev division:
``q_0 = c_m``, ``q_i = 2 c_(m+i)``, ``r_j = c_j - c_(2m-j)``, from ``T_m T_i = (T_(m+i) +
T_(m-i)) / 2``), recursively, down to polynomials of degree below ``k``, which are sums of
``c_i T_i``. With ``k`` about ``sqrt(degree)`` that is about ``2 sqrt(degree) + log2(degree)``
ciphertext products. The depth is ``ceil(log2(degree + 1))`` levels, the least any evaluation
takes, for most degrees (59 and 119 included), and one more for degrees just below a power of two
(7, 15, 29 to 31, 61 to 63, ...: the products by the coefficients then need a level of their
own); one more for the map of an interval other than ``(-1, 1)``. ``depth(degree, interval)``
gives it exactly.

**Scales** (as Lattigo's scale-invariant evaluation). Each call of the recursion is asked for a
value at a *target* level and scale, and meets it exactly: a baby-step sum multiplies ``T_i``
(scale ``s_i``, brought to level ``l + 1``) by the integer ``round(c_i S q_(l+1) / s_i)``, so every
term holds ``c_i T_i`` at scale ``S q_(l+1)``; the terms add exactly, and one rescale by
``q_(l+1)`` brings the sum to scale ``S`` at level ``l`` (a product by an integer is elementwise:
the whole sum is one fused kernel, and one rescale where a product by a plaintext would take one
per term). A giant
step asks for ``q`` at level ``l + 1`` and scale ``S q_(l+1) / s_G``, so that ``q G`` rescaled has
scale ``S``. The top call asks for the input's scale, at the highest level every step allows: the
result has exactly the scale of the ciphertext it came from. Everything decided depends only on
levels, scales and coefficients, never on encrypted values, so the evaluation is one lazy graph and
``ren.jit`` captures it.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.polynomial import chebyshev as npcheb
from numpy.polynomial import polynomial as nppoly

from ren.circuits import in_region
from ren.circuits.ckks.rotations import context_of
from ren.poly import is_int
from ren.schemes import ckks

__all__ = ["chebyshev", "depth", "evaluate_polynomial"]

#: Coefficients smaller than this times the largest are left out (an odd function's even terms).
TOLERANCE = 1e-14


def chebyshev(
    f: Callable[[np.ndarray], Any], interval: tuple[float, float], degree: int
) -> np.ndarray:
    """The ``degree + 1`` Chebyshev coefficients interpolating ``f`` at the Chebyshev nodes.

    ``p(x) = sum_j c_j T_j(y)``, ``y = (2x - a - b) / (b - a)``, equals ``f`` at the ``degree + 1``
    points ``x_k`` mapped from ``cos(pi (k + 1/2) / (degree + 1))``: the near-best polynomial
    approximation of a smooth ``f`` on ``interval``.

    Raises:
        TypeError: ``f`` not callable, ``degree`` not an int.
        ValueError: ``degree < 1``, an interval that is not two finite numbers ``a < b``, or ``f``
            giving a value that is not a finite real number at a node.
    """
    if not callable(f):
        raise TypeError(f"f must be callable, got {type(f).__name__}")
    if not is_int(degree):
        raise TypeError(f"degree must be an int, got {degree!r}")
    if degree < 1:
        raise ValueError(f"degree must be at least 1, got {degree}")
    a, b = _interval(interval)
    count = int(degree) + 1
    nodes = np.cos(np.pi * (np.arange(count) + 0.5) / count)
    x = (nodes * (b - a) + (a + b)) / 2
    with np.errstate(all="ignore"):  # a bad value is refused just below
        values = np.asarray([f(v) for v in x], dtype=complex)
    if not np.all(np.isfinite(values)) or np.any(values.imag != 0):
        raise ValueError(f"f must give finite real numbers on [{a}, {b}]")
    T = np.cos(np.outer(np.arange(count), np.arccos(nodes)))  # T_j(node_k)
    coeffs = 2.0 / count * (T @ values.real)
    coeffs[0] /= 2
    return coeffs


def _interval(interval: Any) -> tuple[float, float]:
    try:
        a, b = interval
    except (TypeError, ValueError):
        raise ValueError(f"interval must be two numbers (a, b), got {interval!r}") from None
    ok = all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in (a, b))
    if not ok or not (math.isfinite(a) and math.isfinite(b)) or not a < b:
        raise ValueError(f"interval must be two finite numbers a < b, got {interval!r}")
    return float(a), float(b)


def _coefficients(coeffs: Any, basis: str, a: float, b: float) -> np.ndarray:
    """The Chebyshev coefficients in ``y`` of the polynomial given in ``basis``."""
    if basis not in ("chebyshev", "monomial"):
        raise ValueError(f"basis must be 'chebyshev' or 'monomial', got {basis!r}")
    arr = np.asarray(coeffs)
    if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iuf":
        raise TypeError(f"coeffs must be a non-empty 1-D sequence of real numbers, got {coeffs!r}")
    arr = arr.astype(float)
    if not np.all(np.isfinite(arr)):
        raise ValueError("coeffs must be finite")
    if basis == "monomial":  # p(x) with x = ((b - a) y + a + b) / 2, re-expanded in y
        x_of_y, in_y = nppoly.Polynomial([(a + b) / 2, (b - a) / 2]), nppoly.Polynomial([0.0])
        for coef in arr[::-1]:  # Horner's rule, in polynomials of y
            in_y = in_y * x_of_y + coef
        arr = npcheb.poly2cheb(np.asarray(in_y.coef, dtype=float))
    big = float(np.max(np.abs(arr))) if arr.size else 0.0
    arr[np.abs(arr) <= TOLERANCE * big] = 0.0
    nonzero = np.nonzero(arr)[0]
    return arr[: nonzero[-1] + 1] if nonzero.size else arr[:1]


def _baby(degree: int) -> int:
    """The number of baby steps ``k``: a power of two about ``sqrt(degree + 1)``."""
    return 1 << max(1, math.ceil(math.log2(degree + 1) / 2))


def _level(i: int, top: int) -> int:
    """The level of ``T_i`` made from ``T_1`` at level ``top``."""
    return top - math.ceil(math.log2(i)) if i > 1 else top


def _target(c: np.ndarray, k: int, top: int) -> int:
    """The highest level at which the series ``c`` can be delivered (see the module docstring)."""
    if len(c) <= k:
        used = [i for i in range(1, len(c)) if c[i] != 0] or [1]
        return min(_level(i, top) for i in used) - 1
    m = _giant(len(c) - 1, k)
    q, r = _divide(c, m)
    return min(_target(q, k, top) - 1, _level(m, top) - 1, _target(r, k, top))


def _giant(degree: int, k: int) -> int:
    m = k
    while 2 * m <= degree:
        m *= 2
    return m


def _divide(c: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """``(q, r)`` with ``sum c_j T_j = (sum q_i T_i) T_m + sum r_j T_j``, ``deg r < m``."""
    d = len(c) - 1
    q = np.concatenate([[c[m]], 2 * c[m + 1 :]])
    r = c[:m].copy()
    for j in range(max(0, 2 * m - d), m):
        r[j] -= c[2 * m - j]
    return q, r


def depth(degree: int, interval: tuple[float, float] = (-1.0, 1.0)) -> int:
    """The levels ``evaluate_polynomial`` uses for a dense polynomial of ``degree`` on ``interval``.

    ``ceil(log2(degree + 1))``, or one more for degrees just below a power of two (7, 15, 29 to
    31, ...); and one more when the interval is not ``(-1, 1)``. A sparse series (an odd
    function's) may take fewer.
    """
    if not is_int(degree) or degree < 1:
        raise ValueError(f"degree must be an int of at least 1, got {degree!r}")
    a, b = _interval(interval)
    top = 1000
    used = top - _target(np.ones(int(degree) + 1), _baby(int(degree)), top)
    return used + (0 if (a, b) == (-1.0, 1.0) else 1)


@in_region("evaluate_polynomial")
def evaluate_polynomial(
    ct: ckks.Ciphertext,
    coeffs: Any,
    basis: str = "chebyshev",
    interval: tuple[float, float] = (-1.0, 1.0),
) -> ckks.Ciphertext:
    """``p(x)`` on every slot of ``ct``: a ciphertext with ``ct``'s scale, ``depth`` levels lower.

    Args:
        ct: the ciphertext (real slots in ``interval``: a Chebyshev series is accurate there only).
        coeffs: ``c_0, c_1, ...``: of ``T_j(y)`` (``basis="chebyshev"``, ``y`` the slot mapped from
            ``interval`` to ``[-1, 1]``), or of ``x^j`` (``basis="monomial"``).
        basis: ``"chebyshev"`` or ``"monomial"``.
        interval: ``(a, b)``, where the slots lie.

    Raises:
        TypeError: for a ``ct`` that is not a ciphertext, or coefficients that are not real.
        ValueError: a bad basis, interval or coefficients, a three-part ciphertext, or one with
            too few levels (naming how many the polynomial needs and how many ``ct`` has).
    """
    ctx = context_of(ct)
    a, b = _interval(interval)
    c = _coefficients(coeffs, basis, a, b)
    if ct.size != 2:
        raise ValueError("evaluate_polynomial needs a two-part ciphertext: relinearize first")
    mapped = (a, b) != (-1.0, 1.0)
    degree = len(c) - 1
    k = _baby(max(degree, 1))
    top = ct.level - (1 if mapped else 0)
    need = (ct.level - _target(c, k, top)) if degree else 0
    if degree and _target(c, k, top) < 0:
        raise ValueError(
            f"a polynomial of degree {degree} needs {need} levels here and the ciphertext has "
            f"{ct.level} (it is at level {ct.level}): evaluate it at a higher level"
        )
    if degree == 0:  # a constant: the ciphertext times 0, plus the constant
        zero = ckks.multiply(ct, 0.0) if ct.level else ct * 0
        return zero + float(c[0])
    y = ct
    if mapped:  # y = alpha x + beta; the product keeps the scale exactly (encoded at q_level)
        y = ckks.multiply(ct, 2.0 / (b - a)) + (-(a + b) / (b - a))
    powers = _powers(y, k, degree)
    return _evaluate(ctx, c, k, powers, _target(c, k, top), ct.scale)


def _powers(y: ckks.Ciphertext, k: int, degree: int) -> dict[int, ckks.Ciphertext]:
    """``T_1 .. T_(k-1)`` and the giant steps ``T_k, T_2k, ... <= degree``."""
    T = {1: y}

    def make(i: int) -> ckks.Ciphertext:
        if i not in T:
            half = 1 << (math.ceil(math.log2(i)) - 1)  # T_i = 2 T_half T_(i-half) - T_(2 half - i)
            rest = i - half
            prod = make(half) * make(rest)
            if half == rest:
                T[i] = prod * 2 - 1.0
            else:
                T[i] = prod * 2 - make(half - rest)
        return T[i]

    for i in range(2, min(k, degree + 1)):
        make(i)
    m = k
    while m <= degree:
        make(m)
        m *= 2
    return T


def _evaluate(
    ctx: ckks.Context,
    c: np.ndarray,
    k: int,
    T: dict[int, ckks.Ciphertext],
    level: int,
    scale: float,
) -> ckks.Ciphertext:
    """The series ``c`` at exactly ``level`` and ``scale`` (see the module docstring)."""
    if len(c) <= k:
        target = scale * ctx.params.q_moduli[level + 1]
        used = [i for i in range(1, len(c)) if c[i] != 0] or [1]
        out = None
        for i in used:
            t = T[i].at_level(level + 1)
            # c_i T_i at scale S q_(l+1): T_i times the integer round(c_i S q_(l+1) / s_i), exact
            # (an int product keeps the recorded scale, so the true one is written down)
            ci = float(c[i]) if i < len(c) else 0.0  # a constant series: T_1 times 0
            term = dataclasses.replace(t * round(ci * target / t.scale), scale=target)
            out = term if out is None else out + term
        assert out is not None  # used is never empty
        out = dataclasses.replace(out.rescale(), scale=scale)  # one rescale for the whole sum
        return out + float(c[0]) if c[0] else out
    m = _giant(len(c) - 1, k)
    quotient, rest = _divide(c, m)
    G = T[m].at_level(level + 1)
    q = ctx.params.q_moduli[level + 1]
    high = _evaluate(ctx, quotient, k, T, level + 1, scale * q / G.scale)
    return high * G + _evaluate(ctx, rest, k, T, level, scale)
