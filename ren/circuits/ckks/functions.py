"""Worked functions on CKKS ciphertexts, each at the input's scale with a stated depth.

Each takes a ciphertext whose (real) slots lie in the function's interval and returns one at
exactly its scale; ``<name>_depth(...)`` gives the levels it takes with the same settings.

**Ranges.** A fit is accurate on its interval only: outside it the polynomial grows away from the
function (``inverse`` of 100 with the fit on ``[1, 16]`` is off by ``1e125``), and nothing in the
ciphertext's metadata tells. So each function checks what it can up front (its settings, and
``inverse``'s ``interval``: finite, on one side of 0) and notes its interval beside its input
(``ren.schemes.ckks.ranges.expect``): the report's observing pass and the debugger's ``slots``
view, which decrypt the input anyway, check it and say which slots are outside (a
``ckks.RangeWarning``). ``docs/circuits/bootstrapping.md`` (Ranges) lists every interval.

* ``evaluate_function(ct, f, interval, degree)``: any ``f``, fitted by ``chebyshev`` and evaluated
  by ``evaluate_polynomial`` (``function_depth`` gives its levels);
* ``sigmoid`` on ``[-8, 8]`` and ``exp`` on ``[-1, 1]``: their Chebyshev fits;
* ``sqrt`` on ``[0.01, 1]``: the fit of ``sqrt`` itself, on ``[0.01, 1.01]``, a width of 1, so
  the map to ``[-1, 1]`` is ``y = 2x - 1.02``, a product by an int that takes no level. At 7 levels
  that gives 41 bits where Newton's iteration for ``1 / sqrt(x)`` (``y <- y (3 - x y^2) / 2``,
  three levels a step, and one more for ``x y``) from a fit at the same total depth gives about 16;
* ``inverse``, ``1/x`` on ``[1, 16]``: a fit, then Newton's iteration ``y <- y (2 - x y)``, two
  levels a step, which squares the relative error ``1 - x y`` and removes the fit's noise too;
* ``sign`` on ``[-1, 1]``: the composite polynomial of Cheon, Kim, Kim and Lee (*Efficient
  homomorphic comparison methods with optimal complexity*, Asiacrypt 2020): ``g_3`` applied
  ``g_steps`` times (each multiplies a small slot by about 4.48 and keeps ``[-1, 1]`` inside
  itself), then ``f_3`` ``f_steps`` times (each raises the distance to the sign to the fourth
  power: its first three derivatives vanish at ``+-1``). Each is of degree 7, three levels. The
  result is the sign to the bits reported only outside a gap ``|x| < eps`` around 0 that the
  ``g`` steps set.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ren.circuits import in_region
from ren.circuits.ckks.chebyshev import chebyshev, check_interval
from ren.circuits.ckks.composite import evaluate_composite
from ren.circuits.ckks.polynomial import evaluate_polynomial, plan
from ren.circuits.ckks.rotations import context_of
from ren.poly import is_int
from ren.schemes import ckks
from ren.schemes.ckks.noise import carried, exact, within
from ren.schemes.ckks.ranges import SlotRange, expect

__all__ = [
    "F3",
    "G3",
    "evaluate_function",
    "exp",
    "exp_depth",
    "function_depth",
    "inverse",
    "inverse_bits",
    "inverse_depth",
    "sigmoid",
    "sigmoid_depth",
    "sign",
    "sign_depth",
    "sqrt",
    "sqrt_depth",
    "with_scale",
]

#: ``g_3(x)`` of Cheon, Kim, Kim and Lee (2020), monomial coefficients: slope 4.48 at 0.
G3 = np.array([0, 4589, 0, -16577, 0, 25614, 0, -12860]) / 1024
#: ``f_3(x) = (35x - 35x^3 + 21x^5 - 5x^7) / 16``: ``f_3(+-1) = +-1`` with three zero derivatives.
F3 = np.array([0, 35, 0, -35, 0, 21, 0, -5]) / 16

SIGMOID = (-8.0, 8.0)
EXP = (-1.0, 1.0)
SQRT = (0.01, 1.01)  # [0.01, 1] widened to a width of 1: the map takes no level
INVERSE = (1.0, 16.0)


def _sigmoid(v: np.ndarray) -> np.ndarray:
    out: np.ndarray = 1 / (1 + np.exp(-v))
    return out


def _inverse(v: np.ndarray) -> np.ndarray:
    return 1 / v


def _count(name: str, value: object, least: int) -> int:
    if not is_int(value):
        raise TypeError(f"{name} must be an int, got {value!r} ({type(value).__name__})")
    if value < least:
        raise ValueError(f"{name} must be at least {least}, got {value}")
    return int(value)


def function_depth(f: Callable[[np.ndarray], Any], interval: Any, degree: int) -> int:
    """The levels ``evaluate_function(ct, f, interval, degree)`` takes (its fit's ``plan``)."""
    return plan(chebyshev(f, interval, degree), interval=interval).depth


def evaluate_function(
    ct: ckks.Ciphertext, f: Callable[[np.ndarray], Any], interval: object, degree: int
) -> ckks.Ciphertext:
    """``f`` on every slot of ``ct`` (in ``interval``): its Chebyshev fit of ``degree``, evaluated.

    Depth: ``function_depth(f, interval, degree)``, at most ``polynomial.depth(degree, interval)``.
    The slots must lie in ``interval`` (outside it the fit is not ``f``): noted beside ``ct`` for
    the tools that decrypt it (see the module docstring).
    """
    return _fit(ct, f, interval, degree, "evaluate_function")


def _fit(
    ct: ckks.Ciphertext, f: Callable[[np.ndarray], Any], interval: Any, degree: int, what: str
) -> ckks.Ciphertext:
    """``f``'s fit on ``ct``, its interval noted as the range ``what`` needs of ``ct``."""
    coeffs = chebyshev(f, interval, degree)  # checks the interval and the degree first
    out = evaluate_polynomial(ct, coeffs, interval=interval)
    a, b = check_interval(interval)
    expect(ct, SlotRange(what, a, b))
    return out


@in_region("sigmoid")
def sigmoid(ct: ckks.Ciphertext, degree: int = 63) -> ckks.Ciphertext:
    """``1 / (1 + e^-x)`` for slots in ``[-8, 8]``; depth ``sigmoid_depth(degree)`` (7 at 63)."""
    return _fit(ct, _sigmoid, SIGMOID, degree, "sigmoid")


def sigmoid_depth(degree: int = 63) -> int:
    """The levels ``sigmoid(ct, degree)`` takes: the series' and one for the map from [-8, 8]."""
    return function_depth(_sigmoid, SIGMOID, degree)


@in_region("exp")
def exp(ct: ckks.Ciphertext, degree: int = 15) -> ckks.Ciphertext:
    """``e^x`` for slots in ``[-1, 1]``; depth ``exp_depth(degree)`` (4 at 15)."""
    return _fit(ct, np.exp, EXP, degree, "exp")


def exp_depth(degree: int = 15) -> int:
    """The levels ``exp(ct, degree)`` takes (no map: the interval is ``[-1, 1]``)."""
    return function_depth(np.exp, EXP, degree)


@in_region("sqrt")
def sqrt(ct: ckks.Ciphertext, degree: int = 127) -> ckks.Ciphertext:
    """``sqrt(x)`` for slots in ``[0.01, 1]``; depth ``sqrt_depth(degree)`` (7 at 127).

    The fit is on ``[0.01, 1.01]``, whose map to ``[-1, 1]`` (``2x - 1.02``) takes no level.
    """
    return _fit(ct, np.sqrt, SQRT, degree, "sqrt")


def sqrt_depth(degree: int = 127) -> int:
    """The levels ``sqrt(ct, degree)`` takes: ``ceil(log2(degree + 1))``."""
    return function_depth(np.sqrt, SQRT, degree)


@in_region("inverse")
def inverse(
    ct: ckks.Ciphertext, degree: int = 31, newton: int = 1, interval: object = INVERSE
) -> ckks.Ciphertext:
    """``1 / x`` for slots in ``interval`` (``[1, 16]``): a fit of ``degree``, then Newton steps.

    Each step ``y <- y (2 - x y)`` squares the relative error ``1 - x y`` for two levels: ``x y``
    (rescaled), then ``y`` brought one level down at the scale that makes ``y (2 - x y)``, rescaled,
    land on ``ct``'s scale exactly. Depth: ``inverse_depth(degree, newton, interval)`` (8 at 31, 1
    and ``[1, 16]``). Outside ``interval`` the fit grows away from ``1 / x`` and the result is
    wrong by any amount: the interval is noted beside ``ct`` for the tools that decrypt it.

    Args:
        ct: slots in ``interval``.
        degree: the fit's degree.
        newton: the Newton steps after it.
        interval: ``(a, b)``, finite, ``a < b``, not containing 0 (``1 / x`` has a pole there).
            The wider (``b / a``), the less precise: ``inverse_bits(degree, newton, interval)``
            (22.6 bits from the fit on ``[1, 16]`` at degree 31, 45.2 after one step, before
            the noise).

    Raises:
        TypeError: ``newton`` or ``degree`` not an int, ``interval`` not a pair of numbers.
        ValueError: ``newton < 0``, an ``interval`` out of range (naming why), or too few levels
            (naming both counts).
    """
    steps = _count("newton", newton, 0)
    a, b = _inverse_interval(interval)
    need = inverse_depth(degree, steps, (a, b))
    if ct.level < need:
        raise ValueError(
            f"inverse with degree={degree} and newton={steps} needs {need} levels and the "
            f"ciphertext has {ct.level}"
        )
    y = _fit(ct, _inverse, (a, b), degree, "inverse")
    for k in range(steps):
        y = _newton(ct, y, 2.0 ** -inverse_bits(degree, k, (a, b)), min(abs(a), abs(b)))
    return y


def inverse_depth(degree: int = 31, newton: int = 1, interval: object = INVERSE) -> int:
    """The levels ``inverse(ct, degree, newton, interval)`` takes: the fit's, and two a step.

    Raises:
        TypeError: ``degree`` or ``newton`` not an int, ``interval`` not a pair of numbers.
        ValueError: ``degree < 1``, ``newton < 0``, or an interval holding 0.
    """
    steps = _count("newton", newton, 0)
    a, b = _inverse_interval(interval)
    return function_depth(_inverse, (a, b), degree) + 2 * steps


def _inverse_interval(interval: object) -> tuple[float, float]:
    """``interval`` checked for ``1 / x``: two finite numbers ``a < b`` on one side of 0."""
    a, b = check_interval(interval)
    if a <= 0 <= b:
        raise ValueError(
            f"interval {interval!r} holds 0, where 1/x has a pole: inverse needs an interval on "
            "one side of 0 (scale the values into it, e.g. [1, 16])"
        )
    return a, b


def inverse_bits(degree: int = 31, newton: int = 1, interval: object = INVERSE) -> float:
    """The relative precision of ``inverse``'s polynomial, in bits (before the noise).

    The fit at the ``d + 1`` Chebyshev nodes is ``(1 - w(x) / w(0)) / x`` (``w`` the nodes'
    polynomial, ``T_(d+1)`` of the mapped ``x``), so its relative error ``|1 - x p(x)|`` is at
    most ``1 / |T_(d+1)((b + a) / (b - a))|``, below 1 on any interval on one side of 0: Newton's
    steps always converge, each squaring it. Returns ``2^newton`` times its bits.

    Raises:
        TypeError, ValueError: as ``inverse_depth``.
    """
    steps = _count("newton", newton, 0)
    d = _count("degree", degree, 1)
    a, b = _inverse_interval(interval)
    z = (d + 1) * math.acosh(abs(b + a) / (b - a))  # T_(d+1)(y0) = cosh(z), y0 > 1
    return float(2**steps * (z / math.log(2) - 1 + math.log2(1 + math.exp(-2 * z))))


def _newton(x: ckks.Ciphertext, y: ckks.Ciphertext, r: float, low: float) -> ckks.Ciphertext:
    """``y (2 - x y)`` at ``y``'s scale, two levels below ``y``.

    For the noise model (nothing it says changes what is built): ``y``'s relative error
    ``|1 - x y|`` is at most ``r`` (below 1), and ``|x| >= low``. So ``|x y|`` and ``|2 - x y|``
    are at most ``1 + r`` and the result at most ``1 / low``; the step's slope in ``y`` is
    ``2 (1 - x y)``, at most ``2 r`` (Newton's step corrects its input's error), and in ``x``
    ``-y^2``, at most ``1 / low^2``: the products' own noise is followed apart (``exact``) and
    the inputs' errors are carried by these slopes.
    """
    q = context_of(y).params.q_moduli
    ex, ey = exact(x), exact(y)
    t = within(2.0 - within(ex * ey, 1 + r), 1 + r)  # level l - 1
    y_down = with_scale(ey, y.scale * q[t.level] / t.scale)  # so that y t / q_(l-1) has y's scale
    out = _recorded(within(ckks.multiply(y_down, t), 1 / low), y.scale)
    return carried(carried(out, y, 2 * r), x, 1 / low**2)


@in_region("sign")
def sign(ct: ckks.Ciphertext, g_steps: int = 3, f_steps: int = 2) -> ckks.Ciphertext:
    """``sign(x)`` for slots in ``[-1, 1]``: ``f_3^f_steps(g_3^g_steps(x))``.

    With the defaults, 15 levels and about 23 bits for every slot with ``|x| >= 0.01``; with
    ``f_steps=3``, 18 levels and 51 as a polynomial (34 at ``n=64``, its noise). Near 0 each ``g_3``
    multiplies a slot by about 4.5: ``g_steps`` sets the gap, ``f_steps`` the bits.
    Depth: ``sign_depth(g_steps, f_steps)``, three levels a step.

    Raises:
        TypeError: a step count not an int.
        ValueError: a negative step count, no step at all, or too few levels.
    """
    g, f = _count("g_steps", g_steps, 0), _count("f_steps", f_steps, 0)
    need = sign_depth(g, f)
    if ct.level < need:
        raise ValueError(
            f"sign with g_steps={g} and f_steps={f} needs {need} levels and the ciphertext has "
            f"{ct.level}"
        )
    # one composite, predicted as such: an error carried by the composite's slope from where it
    # was made, far below the product of the stages' own (ren.circuits.ckks.composite)
    x = evaluate_composite(ct, [G3] * g + [F3] * f, (sign_gap(g), 1.0))
    expect(ct, SlotRange("sign", -1.0, 1.0))  # g_3 and f_3 keep [-1, 1] only
    return x


#: What ``g_steps`` steps of ``g_3`` must carry a slot's ``|x|`` to: there the ``f_3`` steps
#: take over (each raises the distance to 1 to the fourth power).
SIGN_REACH = 0.75


def sign_gap(g_steps: int = 3) -> float:
    """The least ``|x|`` that ``g_steps`` steps of ``g_3`` carry to ``SIGN_REACH`` (0.0095 at 3).

    ``sign`` is made for slots at least this far from 0, and its predicted precision
    (``ckks.predicted_precision``) assumes they are: nearer 0 each step multiplies both the slot
    and its error by about 4.5.

    Raises:
        TypeError, ValueError: ``g_steps`` not an int, or negative.
    """
    g = _count("g_steps", g_steps, 0)
    lo, hi = 0.0, SIGN_REACH
    for _ in range(60):  # g_3 is increasing on [0, 1]: bisect
        mid = (lo + hi) / 2
        y = mid
        for _ in range(g):
            y = float(np.polynomial.polynomial.polyval(y, G3))
        lo, hi = (mid, hi) if y < SIGN_REACH else (lo, mid)
    return hi


def sign_depth(g_steps: int = 3, f_steps: int = 2) -> int:
    """The levels ``sign(ct, g_steps, f_steps)`` takes: three a step.

    Raises:
        TypeError: a step count not an int.
        ValueError: a negative step count, or no step at all.
    """
    g, f = _count("g_steps", g_steps, 0), _count("f_steps", f_steps, 0)
    if g + f == 0:
        raise ValueError("sign needs at least one step: g_steps + f_steps must be at least 1")
    return plan(G3, "monomial").depth * g + plan(F3, "monomial").depth * f


def _recorded(ct: ckks.Ciphertext, scale: float) -> ckks.Ciphertext:
    """``ct`` recorded at ``scale``, which it holds up to float rounding."""
    return ct if ct.scale == scale else dataclasses.replace(ct, scale=float(scale))


def with_scale(ct: ckks.Ciphertext, scale: float) -> ckks.Ciphertext:
    """``ct`` one level down at exactly ``scale``: times the int ``round(scale q_l / ct.scale)``.

    The product is exact and rescaled by ``q_l``, which leaves the scale ``scale``, up to the
    int's rounding (a relative ``2^-40`` when ``scale`` is about ``ct.scale``).

    Raises:
        ValueError: at level 0, or a ``scale`` so small that the int would be below ``2^20``.
    """
    if ct.level == 0:
        raise ValueError("with_scale needs a level to rescale by: the ciphertext is at level 0")
    q = context_of(ct).params.q_moduli[ct.level]
    k = round(scale * q / ct.scale)
    if k < 2**20:
        raise ValueError(
            f"with_scale to {scale:.6g} from {ct.scale:.6g} needs the factor {k}, too small to "
            "keep the precision (at least 2^20)"
        )
    return _recorded((ct * k).rescale(), scale)
