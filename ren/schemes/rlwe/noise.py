"""The variances of the noise RLWE's steps add, on average, for every scheme's analysis.

Each figure is the variance of one coefficient of the noise polynomial a step adds, in the words
of the ring (absolute, not over a scale), for a secret of ``H`` nonzero coefficients on average
(``secret_weight``) and an error of deviation ``sigma``. The coefficients of a product ``a b`` of
independent polynomials of coefficient variances ``A`` and ``B`` have variance ``n A B`` (each is
a sum of ``n`` products), and of ``a s`` for the secret ``s``, ``H A``. A rounding, ``round(x /
m)``, leaves a coefficient uniform in ``[-1/2, 1/2]``: variance ``1/12``.

* **Encryption of zero** (``ren.schemes.rlwe.encrypt.encrypt_zero``): ``v b + e_0 + (v a + e_1)
  s`` leaves ``v e + e_0 + e_1 s``, ``sigma^2 (2n/3 + 1 + H)`` (``v`` uniform ternary); with
  special moduli it is made over the key ring and divided by ``P``, which leaves the rounding of
  both parts, ``(1 + H) / 12``.
* **Rescale** of a two-part value by a modulus: the rounding of both parts, ``(1 + H) / 12``;
  the noise already there is divided by the modulus.
* **Key switch** at a level: each digit ``d_j`` (coefficients uniform modulo its modulus ``D_j``,
  variance ``D_j^2 / 12``) times its key's error: ``sum_j n D_j^2 sigma^2 / 12``, divided by
  ``P`` with hybrid key switching, which adds its rounding ``(1 + H) / 12``; BV's digits are the
  ciphertext moduli at the level (or the digit primes of ``digit_bits``) and nothing divides.

These are the average-case figures of the CKKS and BGV noise analyses (Cheon, Han, Kim, Kim and
Song, 2018; Kim, Polyakov and Zucca, 2021, for the RNS rounding terms); the guide on precision
writes them out.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "Terms",
    "digit_sizes",
    "fresh_terms",
    "fresh_variance",
    "key_switch_terms",
    "key_switch_variance",
    "rounding_terms",
    "rounding_variance",
    "secret_weight",
    "total",
]

#: A step's noise as ``(V_0, V_1)``, coefficient variances: ``V_0`` of its terms whose slots are
#: normal, ``V_1`` of its products with a polynomial the keys fix (``u s`` for the secret ``s``,
#: ``d e`` for a key's error ``e``), whose slots ``u(zeta) s(zeta)`` are a normal variable times a
#: slot of that polynomial: heavier-tailed. The coefficients' variance is ``V_0 + V_1``.
Terms = tuple[float, float]


def secret_weight(params: Any) -> float:
    """``H``, the expected number of nonzero secret coefficients: ``h``, or ``2n/3`` if uniform."""
    h = params.hamming_weight
    return float(h) if h is not None else 2 * params.n / 3


def total(params: Any, terms: Terms) -> float:
    """The coefficient variance of a step's noise: ``V_0 + V_1``."""
    return terms[0] + terms[1]


def rounding_terms(params: Any) -> Terms:
    """Rounding both parts of a two-part value (``c_0 + c_1 s``): ``(1/12, H/12)``."""
    return (1 / 12, secret_weight(params) / 12)


def rounding_variance(params: Any) -> float:
    """``(1 + H) / 12``: rounding both parts of a two-part value (``c_0 + c_1 s``)."""
    return total(params, rounding_terms(params))


def fresh_terms(params: Any) -> Terms:
    """The noise of an encryption of zero (public key), any level, as ``(V_0, V_1)``."""
    if params.p_moduli:  # made over the key ring, then divided by P: the rounding remains
        return rounding_terms(params)
    sigma2 = params.sigma**2  # e_0, then v e and e_1 s
    return (sigma2, sigma2 * (2 * params.n / 3 + secret_weight(params)))


def fresh_variance(params: Any) -> float:
    """The coefficient variance of the noise of an encryption of zero (public key), any level."""
    return total(params, fresh_terms(params))


def digit_sizes(params: Any, level: int) -> tuple[int, ...]:
    """The modulus each key-switching digit at ``level`` is uniform modulo.

    Hybrid: the product of each digit's ciphertext moduli up to ``level``. BV: each ciphertext
    modulus up to ``level``, or with ``digit_bits`` its digit primes and what the last digit
    keeps (the modulus over the other primes).
    """
    q = params.q_moduli[: level + 1]
    if params.key_switching == "bv":
        sizes: list[int] = []
        for qi, primes in zip(q, params.bv_digits, strict=False):
            if not primes:
                sizes.append(qi)
                continue
            sizes.extend(primes[:-1])
            sizes.append(-(-qi // math.prod(primes[:-1])))
        return tuple(sizes)
    out = []
    for digit in params.digits:
        mods = [params.q_moduli[i] for i in digit if i <= level]
        if mods:
            out.append(math.prod(mods))
    return tuple(out)


def _ratio(d: int, p: int) -> float:
    """``d / p`` as a float, ``inf`` past the floats (a digit of more than 2^500 over ``p``)."""
    if d.bit_length() - p.bit_length() > 500:
        return math.inf
    return d / p


def key_switch_terms(params: Any, level: int) -> Terms:
    """The noise one key switch adds at ``level`` (module docstring), as ``(V_0, V_1)``."""
    n, sigma2 = params.n, params.sigma**2
    P = math.prod(params.p_moduli)  # 1 without special moduli
    each = [n * _ratio(d, P) ** 2 * sigma2 / 12 for d in digit_sizes(params, level)]
    products = sum(each)
    # d_j e_j is heavy-tailed, but each key pair's error is its own: a sum of about
    # D = (sum v)^2 / sum v^2 comparable digits has 1/D of the one-digit tail (the rest is normal)
    square = sum(v * v for v in each)
    heavy = square / products if products and math.isfinite(square) else products
    v0, v1 = rounding_terms(params) if params.p_moduli else (0.0, 0.0)
    return (v0 + products - heavy, v1 + heavy)


def key_switch_variance(params: Any, level: int) -> float:
    """The coefficient variance of the noise one key switch adds at ``level`` (module docstring)."""
    return total(params, key_switch_terms(params, level))
