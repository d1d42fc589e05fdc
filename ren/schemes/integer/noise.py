"""The noise a BFV or BGV ciphertext is predicted to carry, propagated with no kernel run.

Every ciphertext an operation makes carries ``noise``, a :class:`NoiseEstimate` of ``v``, the
noise its budget measures (``IntContext.noise_budget``): BFV's ``v = [t (c_0 + c_1 s)]_Q``, BGV's
``v = [c_0 + c_1 s]_Q``, at its level. ``v`` is a weighed sum of independent *sources* (an
encryption, a rounding, a key switch, a product each make one), so ``(x + 1) - x`` keeps none of
``x``'s noise and ``x + x`` has four times its variance. A source is a polynomial in the secret,
``sum_k a_k s^k`` with each ``a_k`` random and independent of ``s``; the estimate keeps the
variance ``T_k`` of the coefficients of each term ``a_k s^k``. The terms matter for products: a
coefficient of ``s^k`` has variance ``k! H^k / n`` for a secret of weight ``H``, not ``H^k / n``
(the pairs ``s_i s_j`` and ``s_j s_i`` are one), so two terms multiply as

    ``T_{i+j} += n T_i T_j binom(i + j, i)``

(the "independence heuristic" has ``binom = 1``, and so predicts a BFV product tree of depth
``d`` ``log2((d+1)!) / 2`` bits too much budget). With ``n`` the ring degree, ``R = [1, H] / 12``
the rounding of a two-part value (``r_0 + r_1 s``), ``R_3 = [1, H, 2 H^2] / 12`` of a three-part
one and ``K_l`` a key switch at level ``l`` (``ren.schemes.rlwe.noise``: its rounding ``R``, the
rest of degree 0), each operation makes its result's estimate from its operands':

* encrypt: BFV ``t^2 (F + [1/12])``; BGV ``t^2 F + [|m|^2 / n]`` (``F`` an encryption of zero,
  ``R`` with special moduli, else ``sigma^2 [2n/3 + 1, H]``; ``m`` the centred message);
* ``a + b``, ``a - b``: the sources of both, weighed ``1`` and ``+-1``; plus a plaintext: BFV
  ``+ [t^2 / 12]`` (the rounding of ``Q m / t``), BGV ``+ [|[f m]_t|^2 / n]``;
* times an int ``k`` (centred mod ``t``): the weights times ``k``; times a plaintext ``p``
  (centred): ``|p|^2 T``;
* the tensor: BFV ``v' = v_a w_b + v_b w_a + v_a v_b / Q + t r``, with ``w = (t (c_0 + c_1 s) -
  v) / Q`` of terms ``W = t^2 R`` and ``r`` the rounding ``R_3`` (Kim, Polyakov and Zucca 2021,
  section 4); BGV ``v' = v_a v_b``. Operands that share sources (correlation ``rho``) multiply
  coherently: ``1 + rho^2`` times the variance, twice for a square;
* relinearization: ``+ t^2 K_l`` (BGV's switch is taken of ``t^-1 c`` and multiplied by ``t``;
  BFV's noise is ``t`` times the switch's); a rotation ``X -> X^g`` too, and its sources become
  polynomials in ``s(X^g)``, which a product meets as independent of ``s``. Every automorphism
  fixes the constant coefficient, so a source's images add there coherently (a sum of
  rotations); a BGV product of a source and its image under ``X -> X^-1`` (``x *
  x.rotate_columns()``) holds ``sum_i u_i^2 = n T`` there: a *peak*. The largest coefficient
  adds both;
* BGV's ``mod_switch`` by ``q_l``: the weights over ``q_l``, ``+ t^2 R`` (Costache, Laine and
  Player 2020).

Sources are independent, and each ``a_k``'s coefficients independent and centred: the average
case of the papers above. The budget turns ``V = sum T`` into a largest coefficient: each is a
sum of many terms, near Gaussian, and the largest of ``n`` is about ``sqrt(V) sqrt(2 ln n)``
(:func:`budget`). Variances are kept as ``log2``, so no figure overflows a float at any ``Q``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ren.schemes.integer import estimate as est
from ren.schemes.integer.estimate import NoiseEstimate, independent
from ren.schemes.rlwe import noise as rlwe_noise

if TYPE_CHECKING:
    from ren.schemes.integer.params import IntParams
    from ren.schemes.integer.types import Ciphertext, Plaintext

__all__ = [
    "NoiseEstimate",
    "budget",
    "encrypted",
    "independent",
    "key_switched",
    "mod_switched",
    "plain_added",
    "plain_multiplied",
    "predicted_budget",
    "rotated",
    "scaled",
    "summed",
    "tensored",
]

Estimate = NoiseEstimate | None


def _of(pt: Plaintext) -> int:
    """A plaintext's coefficients, as a source's key takes them."""
    return hash(pt.coeffs.tobytes())


def _mean_square(values: np.ndarray) -> float:
    """``|x|^2 / n`` of integer values (as floats: any size)."""
    x = np.asarray(values, dtype=np.float64)
    return float(np.mean(x * x))


def _rounding(params: IntParams) -> list[float]:
    """``R = [1, H] / 12``: rounding both parts of ``c_0 + c_1 s`` (``(1 + H) / 12`` in all)."""
    return [_log(1 / 12), _log(rlwe_noise.secret_weight(params) / 12)]


def _log(x: float) -> float:
    return est.log2_or_zero(x)


def _t2(params: IntParams) -> float:
    return 2 * math.log2(params.t)


def _key_switch(params: IntParams, level: int, key: int) -> NoiseEstimate:
    """``t^2 K_l``: the rounding ``R`` of hybrid's ModDown, and the digits' products (degree 0)."""
    total = rlwe_noise.key_switch_variance(params, level)
    if not params.p_moduli:
        return est.new([_log(total) + _t2(params)], key)
    products = _log(total - rlwe_noise.rounding_variance(params))
    return est.new(est.shift(est.add(_rounding(params), [products]), _t2(params)), key)


def encrypted(params: IntParams, pt: Plaintext) -> NoiseEstimate:
    """A fresh encryption of ``pt`` (module docstring)."""
    if params.p_moduli:
        fresh = _rounding(params)  # e v / P and the rest are far below the rounding
    else:
        s2 = params.sigma**2
        fresh = [
            _log(s2 * (2 * params.n / 3 + 1)),
            _log(s2 * rlwe_noise.secret_weight(params)),
        ]
    rest = (
        _log(1 / 12) + _t2(params) if params.scheme == "bfv" else _log(_mean_square(pt.centered()))
    )
    return est.new(est.add(est.shift(fresh, _t2(params)), [rest]))


def summed(a: Estimate, b: Estimate, *, sub: bool = False) -> Estimate:
    """``a + b`` or ``a - b``: the sources of both, weighed (module docstring)."""
    if a is None or b is None:
        return None
    return est.combined(((a, 1.0), (b, -1.0 if sub else 1.0)))


def plain_added(params: IntParams, a: Estimate, pt: Plaintext, correction: int) -> Estimate:
    """``a`` plus a plaintext: BFV ``+ [t^2 / 12]``, BGV ``+ [|[f m]_t|^2 / n]``."""
    if a is None:
        return None
    t = params.t
    if params.scheme == "bfv":
        added = float(t) ** 2 / 12
    else:
        small = t < 2**31  # then f m < 2^62: int64 holds it
        fm = pt.coeffs * correction % t if small else pt.coeffs.astype(object) * correction % t
        added = _mean_square(np.where(fm > t // 2, fm - t, fm).astype(np.float64))
    term = est.new([_log(added)], est.key("plain", _of(pt), correction), plain=True)
    return est.combined(((a, 1.0), (term, 1.0)))


def scaled(a: Estimate, k: int) -> Estimate:
    """``a`` times the int ``k`` (centred mod ``t``): every weight times ``k``."""
    return None if a is None else est.combined(((a, float(k)),))


def plain_multiplied(a: Estimate, pt: Plaintext) -> Estimate:
    """``a`` times a plaintext ``p`` (centred coefficients): a new source, ``|p|^2 T``."""
    if a is None:
        return None
    norm2 = _mean_square(pt.centered()) * pt.coeffs.size
    if not norm2 or _zero(a):
        return est.combined(((a, 0.0),))
    groups = est.groups(a, pt.coeffs.size).items()
    terms = est.add(*(x if g == 1 else [est.log_sum(*x)] for g, x in groups))
    return est.new(est.shift(terms, math.log2(norm2)), est.key("times", a, _of(pt)))


def tensored(params: IntParams, a: Estimate, b: Estimate, level: int) -> Estimate:
    """The three-part product of ``a`` and ``b`` at ``level``: a new source (module docstring).

    An operand whose noise is already as large as ``Q`` (uniform modulo ``Q``: no budget) gives
    a product of noise uniform modulo ``Q``.
    """
    if a is None or b is None:
        return None
    if _zero(a) or _zero(b):
        return a if _zero(a) else b
    n, log_q = params.n, math.log2(params.ring(level).Q)
    key = est.key("tensor", *sorted((est.identity(a), est.identity(b))), level)
    spent = 2 * log_q - math.log2(12)  # v is uniform modulo Q: its budget is spent
    if max(a.log2_variance, b.log2_variance) >= spent:
        return est.new([spent], key)
    rho, peak = est.correlation(a, b, n)
    coherent = math.log2(1 + rho * rho)
    if params.scheme == "bgv":
        return est.new(est.shift(est.times(a, est.groups(b, n), n), coherent), key, peak)
    w = {1: est.shift(_rounding(params), _t2(params))}
    h = rlwe_noise.secret_weight(params)
    r3 = est.shift([_log(1 / 12), _log(h / 12), _log(2 * h * h / 12)], _t2(params))
    cross = est.shift(est.add(est.times(a, w, n), est.times(b, w, n)), coherent)
    quadratic = est.shift(est.times(a, est.groups(b, n), n), coherent - 2 * log_q)
    return est.new(est.add(cross, quadratic, r3), key)


def _zero(a: Estimate) -> bool:
    """Whether ``a`` is exactly no noise: its sources cancelled (``x - x``, ``0 * x``).

    Such a ciphertext is exactly 0, parts and all: what it is multiplied by, switched or
    rotated, it stays 0.
    """
    return a is not None and not a.sources


def key_switched(params: IntParams, a: Estimate, level: int) -> Estimate:
    """``a`` after a key switch at ``level`` (a relinearization): ``+ t^2 K_l``, a new source."""
    if a is None or _zero(a):
        return a
    return est.combined(((a, 1.0), (_key_switch(params, level, est.key("relin", a, level)), 1.0)))


def rotated(params: IntParams, a: Estimate, level: int, galois: int) -> Estimate:
    """``a`` through ``X -> X^galois`` and its key switch: ``+ t^2 K_l`` (module docstring)."""
    if a is None or _zero(a):
        return a
    two_n = 2 * params.n
    moved = NoiseEstimate(tuple(s._replace(galois=s.galois * galois % two_n) for s in a.sources))
    c1 = est.masked(a)  # the switch reads c_1 alone: (x + 1).rotate_rows(k) - x.rotate_rows(k)
    if not c1.sources:  # c_1 = 0: nothing to switch
        return moved
    switch = _key_switch(params, level, est.key("rotate", c1, level, galois))
    return est.combined(((moved, 1.0), (switch, 1.0)))


def mod_switched(params: IntParams, a: Estimate, level: int) -> Estimate:
    """BGV's ``mod_switch`` from ``level`` to ``level - 1``: weights over ``q_l``, ``+ t^2 R``."""
    if a is None or _zero(a):
        return a
    r0, r1 = est.shift(_rounding(params), _t2(params))  # c_0's rounding, and c_1's times s
    c1 = est.masked(a)
    parts = [(a, 1 / params.q_moduli[level]), (est.new([r0], est.key("switch", a, level)), 1.0)]
    if c1.sources:  # c_1's rounding is c_1's alone: the same for x and x + 1
        parts.append((est.new([est.ZERO, r1], est.key("switch c_1", c1, level)), 1.0))
    return est.combined(parts)


def budget(params: IntParams, a: NoiseEstimate, level: int, *, clamp: bool = True) -> float:
    """The predicted budget in bits, from 0 to ``bits(Q_l) - 1``: ``bits(Q_l) - log2 |v| - 3/2``.

    ``clamp=False`` leaves it below 0 (how short a chain is; ``choose`` sizes chains by it).

    ``|v|``, the largest coefficient, is ``sqrt(V 2 ln n + peak^2 + C)``: ``sqrt(2 ln n)``
    standard deviations, and the constant coefficient's peak and variance ``C`` (the images of a
    source under automorphisms add there coherently: a sum of rotations). The measured budget
    counts bit sizes, ``bits(Q_l) - bits(|v|) - 1`` with ``bits(x) = floor(log2 x) + 1``; for a
    ``log2 |v|`` whose fraction is anything, ``bits(|v|)`` is ``log2 |v| + 1/2`` on average.
    """
    top = params.ring(level).Q.bit_length()
    spread = a.log2_variance + math.log2(2 * math.log(params.n))
    bits = top - est.log_sum(spread, 2 * a.log2_peak, a.log2_constant) / 2 - 1.5
    return min(float(top - 1), max(0.0, bits)) if clamp else bits


def predicted_budget(ct: Ciphertext) -> float:
    """The bits of noise budget ``ct`` is predicted to have, from its estimate alone.

    Comparable to ``noise_budget(ct)`` (SEAL's invariant noise budget, ``log2 Q - log2 |v| - 1``
    in bit sizes), without the secret key and without running anything. The estimate is the
    average case of the module docstring's model: its sources independent, each term's
    coefficients independent and centred, and a ciphertext's parts uniform modulo ``Q`` (any
    made from encryptions by these operations, but for ``x - x`` and ``0 * x``, exactly 0, and
    differences that leave only plaintexts, such as ``(x + 1) - x``: an encryption with ``c_1 =
    0``, whose products and switches the estimate overstates). The largest of the ``n``
    coefficients of ``v`` is taken as ``sqrt(2 ln n)`` standard deviations (near Gaussian: each
    is a sum of many terms). A measured budget is an integer and lies within a few bits of it.

    Raises:
        ValueError: for a ciphertext with no estimate: read from bytes, unpickled, returned by
            a ``ren.jit`` function or built by hand (only the operations that make a ciphertext
            carry its estimate; a replay runs none of them).
    """
    if ct.noise is None or ct.params is None:
        raise ValueError(
            "this ciphertext carries no noise estimate: it was read from bytes, unpickled, "
            "returned by a ren.jit function (whose replays run none of the operations that "
            "predict noise) or built by hand; predict outside the jitted function, or measure "
            "it with noise_budget (which needs the secret key)"
        )
    return budget(ct.params, ct.noise, ct.level)
