"""Predicted precision: an average-case estimate of each CKKS ciphertext's error, without running.

Every ciphertext the evaluator makes carries a :class:`Noise` beside its lazy graph: a few floats
each operation computes from its operands' (no kernel runs, no key is read). It describes the
error ``z_j`` of slot ``j`` of the decryption, in words (times the scale: absolute, so reading a
value at another scale changes nothing), as a complex normal variable whose variance depends on
the slot through the secret: ``E |z_j|^2 = sum_k var[k] |s_j|^(2k)``, where ``s_j`` is the slot
``j`` of the secret over its root mean square (``|s_j|^2`` is about exponential with mean 1,
``s(zeta_j)`` being a sum of ``H`` signed roots of unity). A term ``u s`` (a rounding of the
second part, times the secret) has slots ``u_j s_j``, so the slots where the secret is large
carry most of the largest errors: the maximum over ``n/2`` slots is heavier-tailed than a normal
variable's, and :func:`max_error` takes that into account. ``bound`` bounds the message's slots
(in words), for the error a product adds: ``m_1 z_2 + m_2 z_1 + z_1 z_2``.

The steps (``ren.schemes.rlwe.noise`` gives the coefficient variances; a coefficient variance
``V`` makes a slot variance ``n V``):

* encode: the rounding of the coefficients, ``n / 12``; encrypt: the encryption's noise;
* add: variances add (a value added to itself: doubled, four times the variance);
* multiply: ``B_1^2 var_2 + B_2^2 var_1 + var_1 var_2`` (a value by itself: ``4 B^2 var + ...``);
  a plaintext: its rounding as ``var_2``; a number: the factor squared;
* rescale by ``q``: the variance over ``q^2``, the bound over ``q``, plus the rounding;
* key switch (relinearize, rotate, conjugate): the technique's noise at the level.

Circuits that know better than the bounds' arithmetic (a polynomial's values stay in its range;
a linear transform's are not the sum of their diagonals' bounds) say so with :func:`bounded`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np

from ren.schemes.rlwe import noise as rlwe_noise

__all__ = [
    "Noise",
    "add",
    "bounded",
    "fresh",
    "key_switch",
    "magnitude",
    "max_error",
    "multiply",
    "plain",
    "precision_bits",
    "rescale",
    "times",
]

#: The powers of ``|s_j|^2`` kept (``var[0] .. var[DEGREE]``): higher ones come from products of
#: two errors, far below the terms kept.
DEGREE = 2


def _pad(var: tuple[float, ...]) -> tuple[float, ...]:
    return tuple(var[: DEGREE + 1]) + (0.0,) * (DEGREE + 1 - len(var))


@dataclasses.dataclass(frozen=True)
class Noise:
    """A ciphertext's predicted error: slot variances by power of the secret, and a bound.

    Attributes:
        var: ``var[k]``: the slot variance (words squared) of the error's term in
            ``|s_j|^(2k)`` (module docstring).
        bound: a bound on the message's slots, in words (``max |v| * scale``).
    """

    var: tuple[float, ...]
    bound: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "var", _pad(self.var))

    def times(self, factor: float) -> Noise:
        """The error and the bound of ``factor`` times the value (``|factor|``)."""
        f = abs(factor)
        return Noise(tuple(v * f * f for v in self.var), self.bound * f)

    def plus(self, var: tuple[float, ...]) -> Noise:
        """This noise with the independent slot variances ``var`` added."""
        return Noise(tuple(a + b for a, b in zip(self.var, _pad(var), strict=True)), self.bound)


def slot_terms(params: Any, terms: rlwe_noise.Terms) -> tuple[float, float]:
    """Coefficient variances ``(V_0, V_1)`` as slot variances ``(n V_0, n V_1)``.

    ``V_1`` (products with a polynomial the keys fix: the secret, a key's error) goes with
    ``|s_j|^2``: its slots are as heavy-tailed as the secret's terms, and where both appear they
    are taken as large on the same slots (a bound on the tail, not an average).
    """
    return (params.n * terms[0], params.n * terms[1])


def magnitude(pt: Any) -> float:
    """A plaintext's largest ``|value|`` (``Plaintext.magnitude``), or 1 when it is not known."""
    m = getattr(pt, "magnitude", None)
    return 1.0 if m is None else float(m)


def plain(params: Any, magnitude: float, scale: float) -> Noise:
    """An encoded plaintext: the rounding of its coefficients, and its values' bound."""
    return Noise((params.n / 12,), magnitude * scale)


def fresh(params: Any, magnitude: float, scale: float) -> Noise:
    """An encryption of values of at most ``magnitude``: encoding and encryption noise."""
    return plain(params, magnitude, scale).plus(slot_terms(params, rlwe_noise.fresh_terms(params)))


def add(a: Noise, b: Noise, same: bool = False, sub: bool = False) -> Noise:
    """The sum (``sub``: difference) of two values: ``same`` when ``b`` is ``a`` itself."""
    if same:
        return a.times(0 if sub else 2)  # a - a is exactly zero
    return Noise(tuple(x + y for x, y in zip(a.var, b.var, strict=True)), a.bound + b.bound)


def multiply(a: Noise, b: Noise, same: bool = False) -> Noise:
    """The product of two values (a ciphertext or plaintext ``b``), before any rescale."""
    cross = [0.0] * (DEGREE + 1)
    for i, x in enumerate(a.var):
        for j, y in enumerate(b.var):
            if i + j <= DEGREE:
                cross[i + j] += x * y
    if same:
        lead = tuple(4 * a.bound * a.bound * v for v in a.var)
    else:
        lead = tuple(
            a.bound * a.bound * y + b.bound * b.bound * x for x, y in zip(a.var, b.var, strict=True)
        )
    return Noise(tuple(p + c for p, c in zip(lead, cross, strict=True)), a.bound * b.bound)


def times(a: Noise, factor: float, rounded: bool) -> Noise:
    """``a`` times a number's ``factor`` in words.

    ``rounded``: the factor was rounded to an int, so the message is off by ``|delta| <= 1/2``
    of itself on every slot (``bound^2 / 12`` more).
    """
    out = a.times(factor)
    return out.plus((a.bound * a.bound / 12,)) if rounded else out


def zero(a: Noise) -> bool:
    """Whether ``a`` is of an exact zero (``x - x``): key switches and rescales keep it zero."""
    return a.bound == 0 and not any(a.var)


def rescale(params: Any, a: Noise, q: float) -> Noise:
    """``a`` divided by ``q`` (rounded): a smaller error, plus the rounding of both parts."""
    if zero(a):
        return a
    return a.times(1 / q).plus(slot_terms(params, rlwe_noise.rounding_terms(params)))


def key_switch(params: Any, a: Noise, level: int) -> Noise:
    """``a`` after a key switch at ``level`` (relinearization, rotation, conjugation)."""
    if zero(a):
        return a
    return a.plus(slot_terms(params, rlwe_noise.key_switch_terms(params, level)))


def bounded(a: Noise, bound: float) -> Noise:
    """``a`` with its message known to be at most ``bound`` words (a circuit knows better)."""
    return dataclasses.replace(a, bound=min(a.bound, bound))


# ---------------------------------------------------------------------------------------------
# the largest error over the slots

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
def _median_max(var: tuple[float, ...], slots: int, real: bool) -> float:
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


def max_error(a: Noise, slots: int, real: bool, modulus: int | None = None) -> float:
    """The median of the largest slot error over ``slots`` slots, in words.

    With the ``modulus`` of the value's level: at most what a decryption of words uniform
    modulo it gives (slot variance ``2 slots modulus^2 / 12``): an error past the modulus
    leaves no message, and the decryption is then that noise.
    """
    if not any(a.var):
        return 0.0
    if not all(math.isfinite(v) for v in a.var):
        return math.inf
    err = _median_max(tuple(float(f"{v:.6g}") for v in a.var), slots, real)
    if modulus is not None and modulus.bit_length() < 500:  # past it no float error reaches
        q = float(modulus)
        err = min(err, _median_max((2 * slots * q * q / 12,), slots, real))
    return err


def precision_bits(
    a: Noise, scale: float, slots: int, real: bool, modulus: int | None = None
) -> float:
    """``-log2`` of the largest slot error over the scale: the absolute bits of precision."""
    err = max_error(a, slots, real, modulus) / scale
    return math.inf if err == 0 else -math.log2(err)
