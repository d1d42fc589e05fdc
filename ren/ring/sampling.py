"""Random coefficients for polynomials and keys.

Every sampler takes ``rng``: a seed (``int``), a ``numpy.random.Generator``, or ``None``. With a
seed or a generator the draw is reproducible (NumPy's PCG64, *not* a cryptographic generator: for
tests and teaching). With ``None`` the bits come from the operating system (``os.urandom``), which
is what keys and encryption randomness should use.

Distributions:

* ``uniform_below(rng, bound, size)``: uniform in ``[0, bound)``, by rejection (no modulo bias).
* ``integers(rng, low, high, size)``: uniform in ``[low, high]`` (inclusive), any size of ints.
* ``ternary``: uniform in ``{-1, 0, 1}``; ``sparse_ternary``: exactly ``hamming_weight`` nonzero
  entries, each ``+-1`` with probability 1/2, at uniformly chosen positions.
* ``gaussian``: the continuous normal of standard deviation ``sigma`` rounded to the nearest
  integer, redrawn beyond ``6 * sigma`` (the clipped Gaussian HE libraries use for errors).

Counts, bounds and weights are ints (Python or NumPy, never a bool: ``True`` is not a count) and
``sigma`` a real number; anything else is a ``TypeError`` naming the argument, and a value out of
range a ``ValueError`` saying the range.
"""

from __future__ import annotations

import math
import numbers
import os
import secrets
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

    from ren.ring.spec import U64Array

__all__ = [
    "MAX_SIX_SIGMA",
    "as_rng",
    "check_sigma",
    "gaussian",
    "integers",
    "sparse_ternary",
    "ternary",
    "uniform_below",
]


class OsRandom:
    """Bits from ``os.urandom``; the generator used when no ``rng`` is given."""

    def words(self, count: int) -> U64Array:
        """``count`` uniform 64-bit words."""
        return np.frombuffer(os.urandom(8 * count), dtype=np.uint64).copy()

    def randbelow(self, bound: int) -> int:
        return secrets.randbelow(bound)

    def __repr__(self) -> str:
        return "OsRandom()"


RngLike = int | np.random.Generator | OsRandom | None

#: The largest ``6 * sigma`` ``gaussian`` accepts: every integer up to ``2**53`` is a float, so the
#: rounded samples are exact integers (and fit the int64 they are returned in).
MAX_SIX_SIGMA = 2.0**53


def _check_int(value: object, name: str, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an int when it is a Python or NumPy int (not a bool) in ``[low, high]``.

    Raises:
        TypeError: for a bool, a float (even ``2.0``), a string or anything else.
        ValueError: for an int outside ``[low, high]``, naming ``name`` and the range.
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        lo = "" if low is None else f"{low} <= "
        hi = "" if high is None else f" <= {high}"
        raise ValueError(f"{name}={value} is out of range: it must be {lo}{name}{hi}")
    return value


def check_sigma(sigma: object) -> float:
    """``sigma`` as a float when it is a real number with ``0 < 6 * sigma < 2**53``.

    Raises:
        TypeError: for a bool, a string, a complex number or anything not a real number.
        ValueError: for zero, a negative, NaN, an infinity, or ``6 * sigma >= 2**53``.
    """
    if isinstance(sigma, bool | np.bool_) or not isinstance(sigma, numbers.Real):
        raise TypeError(f"sigma must be a real number, got {type(sigma).__name__} {sigma!r}")
    try:
        value = float(sigma)
    except OverflowError:  # an int beyond a float
        raise ValueError(f"sigma={sigma} must be a finite number") from None
    if not math.isfinite(value):
        raise ValueError(f"sigma={value} must be a finite number")
    if not value > 0:
        raise ValueError(f"sigma={value} must be a positive number")
    if 6 * value >= MAX_SIX_SIGMA:
        raise ValueError(
            f"sigma={value} is too large: samples reach 6 * sigma = {6 * value:.3g}, which must "
            "stay below 2**53 (beyond it a float does not hold every integer)"
        )
    return value


def as_rng(rng: RngLike) -> np.random.Generator | OsRandom:
    """The generator for ``rng``: a seeded PCG64 for an int, the generator itself, or the OS."""
    if rng is None:
        return OsRandom()
    if isinstance(rng, np.random.Generator | OsRandom):
        return rng
    if isinstance(rng, int | np.integer) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"rng seed {rng} is negative; seeds are non-negative ints")
        return np.random.default_rng(int(rng))
    raise TypeError(f"rng must be None, an int seed or a numpy.random.Generator, got {rng!r}")


def uniform_below(rng: RngLike, bound: int, size: int) -> U64Array:
    """``size`` uniform integers in ``[0, bound)`` as ``uint64``; ``1 <= bound <= 2**63``.

    Raises:
        TypeError: if ``bound`` or ``size`` is not an int.
        ValueError: if ``bound`` is outside ``[1, 2**63]`` or ``size`` is negative.
    """
    bound = _check_int(bound, "bound")
    if not 1 <= bound <= 1 << 63:
        raise ValueError(f"bound {bound} is outside [1, 2**63]")
    size = _check_int(size, "size", 0)
    gen = as_rng(rng)
    if isinstance(gen, np.random.Generator):
        return gen.integers(0, bound, size=size, dtype=np.uint64)
    mask = np.uint64((1 << max(bound - 1, 1).bit_length()) - 1)
    out = np.empty(0, dtype=np.uint64)
    while out.size < size:  # rejection: each draw is kept with probability > 1/2
        w = gen.words(2 * (size - out.size) + 8) & mask
        out = np.concatenate([out, w[w < np.uint64(bound)]])
    return out[:size]


def integers(rng: RngLike, low: int, high: int, size: int) -> list[int] | npt.NDArray[np.int64]:
    """``size`` uniform integers in ``[low, high]`` (inclusive).

    Returns:
        An int64 array when they fit, else a list of Python ints.

    Raises:
        TypeError: if ``low``, ``high`` or ``size`` is not an int.
        ValueError: if ``low > high`` or ``size`` is negative.
    """
    low, high = _check_int(low, "low"), _check_int(high, "high")
    size = _check_int(size, "size", 0)
    if low > high:
        raise ValueError(f"empty interval: low={low} > high={high}")
    span = high - low + 1
    if span <= 1 << 63 and low >= -(1 << 63) and high < 1 << 63:
        draw = uniform_below(rng, span, size)
        return draw.astype(np.int64) + low  # draw < span <= 2**63 and low + draw <= high < 2**63
    gen = as_rng(rng)
    if isinstance(gen, np.random.Generator):
        nbytes = (span.bit_length() + 7) // 8
        out: list[int] = []
        while len(out) < size:
            x = int.from_bytes(gen.bytes(nbytes), "little") & ((1 << span.bit_length()) - 1)
            if x < span:
                out.append(low + x)
        return out
    return [low + gen.randbelow(span) for _ in range(size)]


def ternary(rng: RngLike, size: int) -> npt.NDArray[np.int64]:
    """``size`` values uniform in ``{-1, 0, 1}`` (int64)."""
    size = _check_int(size, "size", 0)
    return uniform_below(rng, 3, size).astype(np.int64) - 1


def sparse_ternary(rng: RngLike, size: int, hamming_weight: int) -> npt.NDArray[np.int64]:
    """``size`` values with exactly ``hamming_weight`` entries ``+-1`` (int64), the rest 0.

    Raises:
        TypeError: if ``size`` or ``hamming_weight`` is not an int (``2.0`` and ``True`` are not).
        ValueError: if ``hamming_weight`` is outside ``[0, size]``.
    """
    size = _check_int(size, "size", 0)
    hamming_weight = _check_int(hamming_weight, "hamming_weight")
    if not 0 <= hamming_weight <= size:
        raise ValueError(f"hamming_weight={hamming_weight} is outside [0, n={size}]")
    gen = as_rng(rng)
    out = np.zeros(size, dtype=np.int64)
    if isinstance(gen, np.random.Generator):
        pos = gen.choice(size, hamming_weight, replace=False)
    else:  # partial Fisher-Yates with OS randomness
        perm = list(range(size))
        for i in range(hamming_weight):
            j = i + gen.randbelow(size - i)
            perm[i], perm[j] = perm[j], perm[i]
        pos = np.array(perm[:hamming_weight], dtype=np.int64)
    signs = uniform_below(gen, 2, hamming_weight).astype(np.int64) * 2 - 1
    out[pos] = signs
    return out


def _standard_normal(gen: np.random.Generator | OsRandom, size: int) -> npt.NDArray[np.float64]:
    if isinstance(gen, np.random.Generator):
        return gen.standard_normal(size)
    # Box-Muller on 53-bit uniforms in (0, 1]
    u = (gen.words(2 * size) >> np.uint64(11)).astype(np.float64) + 1.0
    u /= float(1 << 53)
    u1, u2 = u[:size], u[size:]
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def gaussian(rng: RngLike, size: int, sigma: float = 3.2) -> npt.NDArray[np.int64]:
    """``size`` rounded normal samples of deviation ``sigma`` (int64), all within ``6 * sigma``.

    Raises:
        TypeError: if ``sigma`` is not a real number (a bool or a string is not) or ``size`` not
            an int.
        ValueError: unless ``0 < 6 * sigma < 2**53`` (``MAX_SIX_SIGMA``) and ``sigma`` is finite.
    """
    sigma = check_sigma(sigma)
    size = _check_int(size, "size", 0)
    gen = as_rng(rng)
    out = np.rint(_standard_normal(gen, size) * sigma)
    bound = 6 * sigma
    bad = np.abs(out) > bound
    while bad.any():
        out[bad] = np.rint(_standard_normal(gen, int(bad.sum())) * sigma)
        bad = np.abs(out) > bound
    return out.astype(np.int64)
