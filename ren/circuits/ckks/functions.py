"""Worked functions on CKKS ciphertexts: a Chebyshev fit evaluated by ``evaluate_polynomial``.

Each takes a ciphertext whose (real) slots lie in the function's interval and returns one with the
same scale; the depth of each is in its docstring (``polyeval.depth`` for the fitted part).

* ``evaluate_function(ct, f, interval, degree)``: any smooth ``f``, fitted and evaluated;
* ``sigmoid`` on ``[-8, 8]``, ``exp`` on ``[-1, 1]``, ``sqrt`` on ``[0.01, 1]`` (fitted directly:
  the square root's steep start near 0 is what limits its precision);
* ``inverse``, ``1/x`` on ``[1, 16]``: a fit, then Newton's iteration ``y <- y (2 - x y)``, which
  doubles the correct bits each time for two levels;
* ``sign`` on ``[-1, 1]``: the composite polynomial ``f(x) = (3x - x^3) / 2`` applied ``iterations``
  times (each pushes values away from 0 towards -1 or 1; two levels each), exact to the bits
  reported only outside a gap around 0 that shrinks as ``iterations`` grows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ren.circuits import in_region
from ren.circuits.ckks.polyeval import chebyshev, evaluate_polynomial
from ren.circuits.ckks.rotations import context_of
from ren.poly import is_int
from ren.schemes import ckks

__all__ = ["evaluate_function", "exp", "inverse", "sigmoid", "sign", "sqrt", "with_scale"]


def evaluate_function(
    ct: ckks.Ciphertext, f: Callable[[np.ndarray], Any], interval: tuple[float, float], degree: int
) -> ckks.Ciphertext:
    """``f`` on every slot of ``ct`` (in ``interval``): its Chebyshev fit of ``degree``, evaluated.

    Depth: ``polyeval.depth(degree, interval)``.
    """
    return evaluate_polynomial(ct, chebyshev(f, interval, degree), interval=interval)


@in_region("sigmoid")
def sigmoid(ct: ckks.Ciphertext, degree: int = 63) -> ckks.Ciphertext:
    """``1 / (1 + e^-x)`` for slots in ``[-8, 8]`` (depth ``depth(degree, (-8, 8))``: 8)."""
    return evaluate_function(ct, lambda x: 1 / (1 + np.exp(-x)), (-8.0, 8.0), degree)


@in_region("exp")
def exp(ct: ckks.Ciphertext, degree: int = 15) -> ckks.Ciphertext:
    """``e^x`` for slots in ``[-1, 1]`` (degree 15 takes 4 levels: its last terms are left out).

    At most ``depth(degree)`` levels: the fit's coefficients below the tolerance are dropped.
    """
    return evaluate_polynomial(ct, chebyshev(np.exp, (-1.0, 1.0), degree))


@in_region("sqrt")
def sqrt(ct: ckks.Ciphertext, degree: int = 63) -> ckks.Ciphertext:
    """``sqrt(x)`` for slots in ``[0.01, 1]`` (depth ``depth(degree, (0.01, 1))``: 8)."""
    return evaluate_function(ct, np.sqrt, (0.01, 1.0), degree)


@in_region("inverse")
def inverse(ct: ckks.Ciphertext, degree: int = 15, newton: int = 2) -> ckks.Ciphertext:
    """``1 / x`` for slots in ``[1, 16]``: a fit of ``degree``, then ``newton`` Newton steps.

    Depth: ``polyeval.depth(degree, (1, 16))`` (6 at the default 15), plus 2 a Newton step, plus
    1 to give the result the scale of ``ct`` exactly.

    Raises:
        ValueError: ``newton`` not an int of at least 0.
    """
    if not is_int(newton) or newton < 0:
        raise ValueError(f"newton must be an int of at least 0, got {newton!r}")
    y = evaluate_function(ct, lambda x: 1 / x, (1.0, 16.0), degree)
    for _ in range(int(newton)):
        y = y * (2.0 - ct * y)  # the error e = 1 - x y becomes e^2
    return with_scale(y, ct.scale) if newton else y


@in_region("sign")
def sign(ct: ckks.Ciphertext, iterations: int = 8) -> ckks.Ciphertext:
    """``sign(x)`` for slots in ``[-1, 1]``: ``f(x) = (3x - x^3) / 2``, ``iterations`` times.

    Depth 2 an iteration, plus 1 to give the result the scale of ``ct`` exactly. Near 0 each
    iteration multiplies a slot by about 1.5; near the sign, the error squares: with the default
    8 iterations, slots with ``|x| >= 0.1`` are within about ``2^-9`` of their sign.

    Raises:
        ValueError: ``iterations`` not an int of at least 1.
    """
    if not is_int(iterations) or iterations < 1:
        raise ValueError(f"iterations must be an int of at least 1, got {iterations!r}")
    x = ct
    for _ in range(int(iterations)):
        x = (3.0 - x * x) * (x * 0.5)
    return with_scale(x, ct.scale)


def with_scale(ct: ckks.Ciphertext, scale: float) -> ckks.Ciphertext:
    """``ct`` times 1, a level lower, at exactly ``scale`` (1 encoded at ``scale q_l / ct.scale``).

    Raises:
        ValueError: at level 0.
    """
    if ct.level == 0:
        raise ValueError("with_scale needs a level to rescale by: the ciphertext is at level 0")
    ctx = context_of(ct)
    q = ctx.params.q_moduli[ct.level]
    one = ctx.encode(1.0, ct.level, scale * q / ct.scale)
    return ckks.multiply(ct, one, rescale=True)
