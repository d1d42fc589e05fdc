"""The ranges CKKS circuits keep to their precision, and the checks that see a value outside.

**Bootstrapping.** EvalMod computes ``x mod 1`` for ``x = t / q_0 + I`` by an identity that
holds near the integers only: ``arcsin(sin(2 pi x)) ~ s + s^3 / 6`` errs by
``3 (2 pi)^4 x^5 / 40`` (in ``x``), ``sin(2 pi x) / (2 pi)`` by ``(2 pi)^2 x^3 / 6``. The presets
take ``|x| <= 2^-8`` with the arcsine (``X_ARCSINE``: an error of ``2^-33``, ``2^-25.1`` of ``x``,
``RELATIVE``); the plain sine keeps the same relative error up to ``|x| <= 2^-13.9`` (``X_SINE``).
A message of slots ``v`` at scale ``Delta`` has coefficients at most ``max |v|`` (each is an
average of ``n`` values of size ``|v_j|``), so ``|x| <= max |v| Delta / q_0``: the slots a
bootstrap keeps to its precision are ``|v| <= x_bound q_0 / Delta``
(``BootstrapConfig.input_bound``), 1 at the *design scale* ``q_0 x_bound`` (``2^40`` in the
presets). ``K`` bounds the integer part ``I``, a sum of about ``h + 1`` numbers uniform in
``[-1/2, 1/2]`` for a secret of ``h`` nonzero coefficients (``K_SIGMAS`` standard deviations:
``k_needed``); the series of degree ``degree`` must follow the cosine over ``[-K - 1, K + 1]``
as closely as the identity itself at the edge of the range (``series_error``,
``eval_mod_tolerance``). ``BootstrapConfig`` checks its settings against these, and
``eval_mod`` its own (``check_series``).

**Values.** Whether a value is in range is known only by decrypting it, so it is checked where
Ren decrypts anyway: a circuit *expects* a range of a ciphertext (``expect(ct, SlotRange(...))``,
a note beside the value, nothing computed), and the report's observing pass (against the value's
plaintext shadow, ``ren.schemes.ckks.shadow.observe``) and the debugger's ``slots`` view (against
its decryption, ``CiphertextView.notes``) check it, with a ``RangeWarning``. What metadata alone
tells (a bootstrap's input scale) ``ckks.bootstrap`` checks at once.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import threading
import weakref
from typing import Any, Protocol

import numpy as np

__all__ = [
    "DEGREE_MAX",
    "EVAL_SCALE_BITS",
    "H_MAX",
    "K_MAX",
    "K_SIGMAS",
    "RELATIVE",
    "X_ARCSINE",
    "X_SINE",
    "Expectation",
    "RangeWarning",
    "SlotRange",
    "check_series",
    "eval_mod_tolerance",
    "expect",
    "expectations",
    "k_needed",
    "log2_text",
    "min_degree",
    "omega_half",
    "out_of_range",
    "series_error",
    "x_bound",
]

#: ``log2`` of the scale of the slots through EvalMod (its moduli are 60 bits): the rounding there,
#: ``2^-60`` of the sine, is the floor of EvalMod's error.
EVAL_SCALE_BITS = 60
#: The largest ``|t / q_0|`` (a message coefficient over ``q_0``) with the arcsine correction:
#: there ``s + s^3 / 6`` gives ``x`` to ``3 (2 pi)^4 x^5 / 40 = 2^-33``. The presets'
#: ``q_0 / scale = 2^8``.
X_ARCSINE = 2.0**-8
#: The identity's error there relative to ``x``: ``3 (2 pi)^4 X_ARCSINE^4 / 40 = 2^-25.1``.
RELATIVE = 3 * (2 * math.pi) ** 4 * X_ARCSINE**4 / 40
#: Without the arcsine, ``sin(2 pi x) / (2 pi)`` errs by ``(2 pi)^2 x^2 / 6`` of ``x``: ``RELATIVE``
#: up to ``|x| = sqrt(6 RELATIVE) / (2 pi) = 2^-13.9``.
X_SINE = math.sqrt(6 * RELATIVE) / (2 * math.pi)
#: The standard deviations of ``I`` that ``K`` covers: ``|I| > K`` about once in ``10^9``
#: coefficients (a normal variable passes 6 standard deviations with probability ``2e-9``).
K_SIGMAS = 6
#: The largest EvalMod degree: ``ceil(log2(1024)) = 10`` levels for the series alone, and its fit
#: and plan grow as ``degree^2``; the cosine of any ``K`` that fits a chain needs far fewer terms.
DEGREE_MAX = 1023
#: The largest ``K``: the series' coefficients fall only past ``pi (K + 1) / 2^r``, so with at most
#: 14 double angles (the most the rounding allows) no degree up to ``DEGREE_MAX`` follows the cosine
#: past ``2^14 (DEGREE_MAX + 2) / pi``, about ``2^22.4``.
K_MAX = 2**23
#: The largest ``sparse_secret``: ``k_needed`` of a larger weight is past ``K_MAX``.
H_MAX = K_MAX**2 // 3 - 1


class RangeWarning(RuntimeWarning):
    """A value outside the range a circuit keeps to its stated precision (see ``docs/circuits``).

    Raised as a warning (``warnings.warn``), never an error: ``ckks.bootstrap`` when the input's
    scale is more than a factor 2 from its configuration's design scale (known from metadata);
    the report's observing pass (``ren.viz``) and the debugger's ``slots`` view when a decrypted or
    shadowed value lies outside the range of the bootstrap or function it feeds.
    """


def x_bound(arcsine: bool) -> float:
    """The largest ``|t / q_0|`` EvalMod keeps to ``RELATIVE``: ``X_ARCSINE`` or ``X_SINE``."""
    return X_ARCSINE if arcsine else X_SINE


def eval_mod_tolerance(arcsine: bool) -> float:
    """The largest error EvalMod's series may add, on the sine (``2 pi x`` for small ``x``).

    The identity's own error at the edge of the range, ``2 pi RELATIVE x_bound``: ``2^-30.5``
    with the arcsine, ``2^-36.4`` without. A series no worse than that never dominates there.
    """
    return 2 * math.pi * RELATIVE * x_bound(arcsine)


def k_needed(h: float) -> int:
    """The least ``K`` for a secret of ``h`` nonzero coefficients: ``ceil(6 sqrt((h + 1) / 12))``.

    ``I`` is a sum of about ``h + 1`` numbers uniform in ``[-1/2, 1/2]`` (``c_0 / q_0`` and the
    ``h`` terms of ``c_1 s / q_0``): mean 0, variance ``(h + 1) / 12``; 6 standard deviations are
    ``sqrt(3 (h + 1))``, so the least ``K`` with ``K^2 >= 3 (h + 1)``, in integers.
    """
    return math.isqrt(math.ceil(3 * (h + 1)) - 1) + 1


def omega_half(K: int, double_angle: int) -> float:
    """``pi (K + 1) / 2^r``, half the frequency of EvalMod's cosine on ``[-1, 1]`` (or ``inf``)."""
    try:
        return float(math.pi * (K + 1) / 2**double_angle)
    except OverflowError:
        return math.inf


def _bessel(omega: float, top: int) -> np.ndarray:
    """``|J_k(omega)|`` for ``k = 0 .. top``, by Miller's backward recurrence.

    ``J_(k-1) = (2k / omega) J_k - J_(k+1)`` from far above ``top``, normalized by
    ``J_0 + 2 sum J_(2k) = 1``: stable in this direction, so even the tiny tail values keep about
    13 digits.
    """
    start = top + 40
    vals = [0.0] * (start + 2)
    vals[start] = 1e-300
    for k in range(start, 0, -1):
        v = 2 * k / omega * vals[k] - vals[k + 1]
        vals[k - 1] = v
        if abs(v) > 1e250:  # rescale what was made so far: only ratios matter until the end
            for i in range(k - 1, start + 1):
                vals[i] *= 1e-250
    j = np.array(vals[: top + 1])
    ratios: np.ndarray = np.abs(j / (j[0] + 2 * np.sum(j[2::2])))
    return ratios


@functools.lru_cache(maxsize=64)
def _tails(K: int, double_angle: int) -> np.ndarray | None:
    """``4 sum_(j > d) |J_j(omega)|`` for ``d = 0 .. DEGREE_MAX`` (``None``: no degree will do)."""
    half = omega_half(K, double_angle)
    if half >= DEGREE_MAX + 2:
        return None
    top = max(int(4 * half) + 100, DEGREE_MAX + 2)  # past 2 omega the terms are below 2^-90
    suffix = np.cumsum(_bessel(2 * half, top)[::-1])[::-1]  # suffix[d] = sum_(k >= d)
    return 4 * suffix[1 : DEGREE_MAX + 2]


def series_error(K: int, degree: int, double_angle: int) -> float:
    """A bound on EvalMod's error on the sine: the series' and the rounding, through the steps.

    The series interpolates ``cos(omega y - pi / 2^(r + 1))`` on ``[-1, 1]``, ``omega =
    2 pi (K + 1) / 2^r``, whose Chebyshev coefficients are ``2 J_j(omega)`` times the cosine or
    sine of the phase (Jacobi-Anger): the interpolant of degree ``d`` errs by at most twice the
    tail of the series, ``4 sum_(j > d) |J_j(omega)|`` (Trefethen, *Approximation Theory and
    Approximation Practice*, 2013, theorem 4.2). With the rounding at the scale ``2^60``, each
    double angle ``c <- 2 c^2 - 1`` multiplies the error by up to 4 (its slope). ``inf`` when
    no degree up to ``DEGREE_MAX`` can follow the cosine (``omega / 2 >= DEGREE_MAX + 2``); a
    degree past ``DEGREE_MAX`` gets ``DEGREE_MAX``'s bound.
    """
    tails = _tails(int(K), int(double_angle))
    if tails is None or degree < 0:
        return math.inf
    tail = float(tails[min(degree, DEGREE_MAX)])  # the tails only fall: a bound past it too
    return (tail + 2.0**-EVAL_SCALE_BITS) * 4.0**double_angle


def min_degree(K: int, double_angle: int, arcsine: bool) -> int | None:
    """The least degree whose ``series_error`` is within ``eval_mod_tolerance`` (``None``: none)."""
    tolerance = eval_mod_tolerance(arcsine)
    for d in range(2, DEGREE_MAX + 1):
        if series_error(K, d, double_angle) <= tolerance:
            return d
    return None


def check_series(K: int, degree: int, double_angle: int, arcsine: bool) -> None:
    """Refuse EvalMod settings whose error passes ``eval_mod_tolerance(arcsine)``, saying why.

    First ``double_angle``: each step multiplies the error by up to 4, so past
    ``(EVAL_SCALE_BITS + log2(tolerance)) / 2`` steps the rounding alone passes the tolerance
    (14 with the arcsine, 11 without). Then the series (``series_error``), naming the least
    degree that will do (``min_degree``). ``BootstrapConfig`` and ``eval_mod`` check with it.

    Raises:
        ValueError: naming the setting, its value and the bound it breaks.
    """
    K, degree, r = int(K), int(degree), int(double_angle)
    tolerance = eval_mod_tolerance(arcsine)
    most = int((EVAL_SCALE_BITS + math.log2(tolerance)) // 2)
    if r > most:
        raise ValueError(
            f"double_angle must be at most {most} with arcsine={arcsine}, got {r}: each "
            "step multiplies EvalMod's error by up to 4, and past that the rounding at the "
            f"scale 2^{EVAL_SCALE_BITS} alone, times 4^{r}, passes {log2_text(tolerance)}, the "
            "sine identity's own error at the edge of the message range"
        )
    error = series_error(K, degree, r)
    if error > tolerance:
        least = min_degree(K, r, arcsine)
        fix = (
            f"use degree >= {least}"
            if least is not None
            else f"no degree up to {DEGREE_MAX} does: lower K or raise double_angle"
        )
        raise ValueError(
            f"degree={degree} is too small for K={K} and double_angle={r}: EvalMod's "
            f"cosine series then errs by up to {log2_text(error)} on the sine (its Chebyshev "
            f"coefficients fall only past omega / 2 = pi (K + 1) / 2^r = "
            f"{omega_half(K, r):.1f}), more than {log2_text(tolerance)}, the sine "
            f"identity's own error at the edge of the message range (arcsine={arcsine}); " + fix
        )


def log2_text(x: float) -> str:
    """``2^-30.5`` (or ``infinity``), for messages."""
    return "infinity" if x == math.inf else f"2^{math.log2(x):.1f}"


# ---------------------------------------------------------------------------------------------
# expected ranges of values, checked where a tool decrypts


class Expectation(Protocol):
    """A range a ciphertext's slots must be in: ``check(slots, n)`` says what is outside, if any.

    ``slots`` are the value's ``n/2`` complex slots (decrypted, or its shadow over its scale);
    ``advice`` says why the range matters and what to do, for the warning.
    """

    @property
    def what(self) -> str:
        """What needs the range (``"bootstrap"``, ``"inverse"``, ...)."""

    @property
    def advice(self) -> str:
        """Why the range matters, and what to do."""

    def check(self, slots: np.ndarray, n: int) -> str | None:
        """``None`` when ``slots`` are in range, else what is outside, in a line."""


@dataclasses.dataclass(frozen=True)
class SlotRange:
    """Real slots in ``[low, high]``: the interval a function's fit holds on.

    A slot counts as outside past ``2^-16`` of the width (a decrypted slot carries noise), or with
    an imaginary part of that size (the functions take real slots).
    """

    what: str
    low: float
    high: float

    @property
    def advice(self) -> str:
        """Why the interval matters, and what to do."""
        return (
            f"{self.what} is a polynomial that follows its function on [{self.low:g}, "
            f"{self.high:g}] only; outside it the polynomial grows away from the function "
            "(errors of any size): scale the input into the interval first "
            "(docs/circuits/bootstrapping.md, Ranges)"
        )

    def check(self, slots: np.ndarray, n: int) -> str | None:
        """``None``, or how many slots lie outside and how far."""
        v = np.asarray(slots)
        tol = (self.high - self.low) * 2.0**-16
        out = (v.real < self.low - tol) | (v.real > self.high + tol) | (np.abs(v.imag) > tol)
        if not out.any():
            return None
        bad = v[out]
        return (
            f"{self.what}: {int(out.sum())} of {v.size} slots outside [{self.low:g}, "
            f"{self.high:g}] (from {float(bad.real.min()):.4g} to {float(bad.real.max()):.4g}"
            + (
                f", imaginary parts up to {float(np.abs(bad.imag).max()):.3g}"
                if np.abs(bad.imag).max() > tol
                else ""
            )
            + ")"
        )


_EXPECTED: weakref.WeakKeyDictionary[Any, tuple[Expectation, ...]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def expect(ct: object, expectation: Expectation) -> None:
    """Note that ``ct``'s slots must satisfy ``expectation`` (kept while ``ct`` lives).

    Only a note beside the value: nothing is computed until a tool decrypts ``ct``. A range
    already noted of ``ct`` (the same function applied to it twice) is noted once.
    """
    with _LOCK:
        noted = _EXPECTED.get(ct, ())
        if expectation not in noted:
            _EXPECTED[ct] = (*noted, expectation)


def expectations(ct: object) -> tuple[Expectation, ...]:
    """The expectations noted of ``ct`` (``expect``), in order."""
    with _LOCK:
        return _EXPECTED.get(ct, ())


def out_of_range(ct: object, slots: np.ndarray, n: int) -> list[tuple[str, str]]:
    """``(what is outside, advice)`` for each expectation of ``ct`` its ``slots`` break."""
    found = []
    for e in expectations(ct):
        problem = e.check(slots, n)
        if problem is not None:
            found.append((problem, e.advice))
    return found
