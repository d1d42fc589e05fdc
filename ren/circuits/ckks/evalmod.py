"""EvalMod: ``t mod 1`` for slots near integers, by a scaled sine, the heart of bootstrapping.

After ModRaise a slot holds ``t = m / q_0 + I`` with ``I`` a small integer (``|I| <= K``) and
``m / q_0`` small: the message is ``t`` reduced modulo 1. No polynomial computes ``mod``, but
``sin(2 pi t) / (2 pi)`` equals ``t mod 1`` up to ``(2 pi)^2 (t mod 1)^3 / 6`` near the integers
(Cheon, Han, Kim, Kim and Song, *Bootstrapping for approximate homomorphic encryption*, 2018).

``eval_mod`` computes it as Han and Ki (2020) and Bossuat et al. (2021) do: with ``r`` double-angle
steps, the series is of ``cos(2 pi (t - 1/4) / 2^r)`` on ``[-K - 1, K + 1]`` (a slowly turning
cosine: a low degree suffices), then ``r`` times ``c <- 2 c^2 - 1`` doubles the angle back to
``cos(2 pi (t - 1/4)) = sin(2 pi t)``, and a product by ``1 / (2 pi)`` at the input's scale ends.
Depth: the series' (``polynomial.plan(...).depth``, at most
``polynomial.depth(degree, (-K - 1, K + 1))``: its last coefficients can fall below the tolerance)
``+ r + 1``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from ren.circuits import in_region
from ren.circuits.ckks.chebyshev import chebyshev
from ren.circuits.ckks.polynomial import evaluate_polynomial, plan
from ren.circuits.ckks.rotations import context_of
from ren.poly import is_int
from ren.schemes import ckks
from ren.schemes.ckks.noise import within
from ren.schemes.ckks.ranges import SlotRange, check_series, expect
from ren.schemes.ckks.tails import one_draw

__all__ = [
    "angle_bounds",
    "approximated",
    "approximation",
    "coefficients",
    "double_angles",
    "eval_mod",
    "eval_mod_depth",
]


def _check(K: int, degree: int, double_angle: int) -> None:
    for name, value, least in (
        ("K", K, 1),
        ("degree", degree, 1),
        ("double_angle", double_angle, 0),
    ):
        if not is_int(value):
            raise TypeError(f"{name} must be an int, got {value!r} ({type(value).__name__})")
        if value < least:
            raise ValueError(f"{name} must be at least {least}, got {value}")


def _cosine(K: int, degree: int, r: int) -> tuple[np.ndarray, tuple[float, float]]:
    """The Chebyshev series of ``cos(2 pi (t - 1/4) / 2^r)`` on ``[-K - 1, K + 1]``, and it."""
    interval = (-float(K + 1), float(K + 1))
    return chebyshev(lambda x: np.cos(2 * np.pi * (x - 0.25) / 2**r), interval, degree), interval


def double_angles(
    c: ckks.Ciphertext, r: int, bounds: tuple[float, ...] | None = None
) -> ckks.Ciphertext:
    """``r`` double-angle steps ``c <- 2 c^2 - 1``: ``cos(2^r a)`` from ``cos(a)``, ``r`` levels.

    ``bounds``: the largest ``|c|`` before each step, where the angles are known to keep it
    below 1 (``angle_bounds``), for the noise model: a step multiplies the error by ``4 |c|``.
    """
    for k in range(r):
        if bounds is not None:
            c = within(c, bounds[k])
        c = within(c * c * 2 - 1.0, 1.0)  # cos(2a) = 2 cos(a)^2 - 1: a cosine, within 1
    return c


def angle_bounds(K: int, r: int, near: float) -> tuple[float, ...]:
    """The largest ``|cos(2^k a)|`` before double angle ``k``, ``a = 2 pi (t - 1/4) / 2^r``.

    For ``t`` within ``near`` of an integer in ``[-K, K]`` (a bootstrap's slots): the angles stay
    off the cosine's peaks (at ``k = r - 1``, ``|cos(pi (t - 1/4))|`` is about ``0.71``), so the
    steps multiply an error by less than the ``4`` a bound of 1 would give.
    """
    t = (np.arange(-K, K + 1)[:, None] + np.linspace(-near, near, 65)).ravel()
    a = 2 * np.pi * (t - 0.25)
    return tuple(float(np.max(np.abs(np.cos(a * 2.0 ** (k - r))))) for k in range(r))


def coefficients(ct: ckks.Ciphertext) -> tuple[float, float]:
    """``(largest |c_i|, sum c_i^2)`` of ``ct``'s message coefficients, bounded from its estimate.

    ``|c_i| <= (2/n) sum_j |z_j|`` (each coefficient sums every slot once) and ``<= max |z_j|``,
    and Parseval's ``sum c_i^2 = (2/n) sum_j |z_j|^2`` (the estimate's ``power``, at most
    ``max |z_j| sum_j |z_j|``); the encoder's ``peak`` where it is known.
    ``(inf, inf)`` for a ciphertext without an estimate.
    """
    if ct.noise is None:
        return math.inf, math.inf
    n, scale = ct.ring.n, ct.scale
    bound, mass, power = (getattr(ct.noise, k) / scale for k in ("bound", "mass", "power"))
    peak = min(ct.noise.peak / scale, bound, 2 * mass / n)
    return peak, min(2 * power / scale / n, 2 * bound * mass / n, bound * bound, n * peak * peak)


def approximation(cosine: np.ndarray, K: int, r: int, deviation: float) -> float:
    """The series' error at the integers ``I``, through the double angles (on the sine).

    ``(p(y_I) - cos(a_I))`` times the steps' slope ``2^r sin(2^r a) / sin(a)`` (the arcsine's is 1
    there): its root mean square over ``I`` normal of standard ``deviation`` (ModRaise's,
    ``sqrt((h + 1) / 12)``), within ``[-K, K]``. In float64: its own error, some ``2^-50``, is
    far below the noise where the series' is.
    """
    ints = np.arange(-K, K + 1)
    a = 2 * np.pi * (ints - 0.25) / 2**r
    slope = 2**r / np.abs(np.sin(a))  # |sin(2^r a)| = 1 at the integers
    err = (np.polynomial.chebyshev.chebval(ints / (K + 1), cosine) - np.cos(a)) * slope
    weights = np.exp(-(ints**2) / (2 * max(deviation, 0.1) ** 2))
    return float(np.sqrt(np.sum(weights * err**2) / np.sum(weights)))


def residual(x: float, arcsine: bool) -> float:
    """The sine identity's own error at ``x``: ``|sin(2 pi x) - 2 pi x|`` (as ``x^3``).

    With the arcsine's correction ``|s + s^3 / 6 - 2 pi x|``, ``s = sin(2 pi x)`` (as ``x^5``).
    """
    s = math.sin(2 * math.pi * x)
    return abs((s + s**3 / 6 if arcsine else s) - 2 * math.pi * x)


def approximated(
    out: ckks.Ciphertext, given: ckks.Ciphertext, made: Any, h: float
) -> ckks.Ciphertext:
    """A bootstrap's result ``out`` of ``given`` with EvalMod's approximation error noted.

    For the noise model (nothing is built). Each coefficient ``c_i`` is read as ``x = c_i
    Delta / q_0`` near an integer, and errs on the sine by the series' error there
    (``approximation``, random over the coefficients' integers: ``n`` of them add in every
    slot) and by the identity's ``residual(x)``, at most ``residual(x_max) (c_i / c_max)^2`` (it
    grows faster than ``c^2``): over the slots at most that times ``sum c_i^2 / c_max^2``, on
    every slot. On the message each is ``q_0 / (2 pi Delta)`` times that on the sine. The result
    holds ``given``'s message again: its bound, mass and peak are ``given``'s.
    """
    if out.noise is None or given.noise is None:
        return out
    config, params = made.config, context_of(out).params
    peak, energy = coefficients(given)
    q0, delta = float(params.q_moduli[0]), given.scale
    factor = q0 / (2 * math.pi * delta) * out.scale  # the sine's error in the result's words
    series = approximation(made.cosine, config.K, config.double_angle, math.sqrt((h + 1) / 12))
    ratio = out.scale / given.scale  # the input's message again: its sizes, at the result's scale
    sizes = {k: getattr(given.noise, k) * ratio for k in ("bound", "mass", "peak")}
    sizes["power"] = given.noise.power * ratio**2
    est = dataclasses.replace(out.noise, **sizes).plus(
        (params.n * (series * factor) ** 2,), params.slots
    )
    if 0 < peak < math.inf:
        worst = residual(peak * delta / q0, config.arcsine) * factor * energy / peak**2
        est = est.plus((one_draw(worst, out.real),), 1)  # one value on every slot
    return dataclasses.replace(out, noise=est)


def eval_mod_depth(K: int = 4, degree: int = 31, double_angle: int = 2) -> int:
    """The levels ``eval_mod`` uses with these settings: the series', then ``double_angle + 1``.

    Raises:
        TypeError: a setting not an int.
        ValueError: ``K < 1``, ``degree < 1`` or ``double_angle < 0``.
    """
    _check(K, degree, double_angle)
    cosine, interval = _cosine(int(K), int(degree), int(double_angle))
    return plan(cosine, interval=interval).depth + int(double_angle) + 1


@in_region("eval_mod")
def eval_mod(
    ct: ckks.Ciphertext, K: int = 4, degree: int = 31, double_angle: int = 2
) -> ckks.Ciphertext:
    """``sin(2 pi t) / (2 pi)`` on every (real) slot ``t`` of ``ct``, at ``ct``'s scale.

    For ``t`` within a small distance of an integer in ``[-K, K]`` that is ``t mod 1`` (centered),
    to within ``(2 pi)^2 |t mod 1|^3 / 6`` and the series' error.

    Args:
        ct: slots in ``[-K - 1, K + 1]`` (outside it the series is not accurate: noted beside
            ``ct`` for the tools that decrypt it, ``ren.schemes.ckks.ranges``).
        K: the bound on the integer part.
        degree: the degree of the cosine's Chebyshev series: large enough for ``K`` and
            ``double_angle`` (``ranges.min_degree``).
        double_angle: ``r``, the double-angle steps, at most 11 (past that the rounding alone
            passes the sine's own error: ``ranges.check_series``).

    Raises:
        TypeError: a setting not an int.
        ValueError: a setting out of range (a degree too small for ``K`` and ``double_angle``
            naming the least that is not, as ``BootstrapConfig``), or too few levels (naming how
            many it needs).
    """
    _check(K, degree, double_angle)
    check_series(K, degree, double_angle, arcsine=False)  # the plain sine
    need = eval_mod_depth(K, degree, double_angle)
    if ct.level < need:
        raise ValueError(
            f"eval_mod with K={K}, degree={degree}, double_angle={double_angle} needs {need} "
            f"levels and the ciphertext has {ct.level}"
        )
    ctx = context_of(ct)
    r = int(double_angle)
    cosine, interval = _cosine(int(K), int(degree), r)
    c = double_angles(evaluate_polynomial(ct, cosine, interval=interval), r)
    q = ctx.params.q_moduli[c.level]
    factor = ctx.encode(1 / (2 * math.pi), c.level, ct.scale * q / c.scale)  # ends at ct's scale
    expect(ct, SlotRange("eval_mod", *interval))
    return ckks.multiply(c, factor, rescale=True)
