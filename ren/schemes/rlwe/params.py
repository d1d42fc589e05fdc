"""What every RLWE scheme's parameters are checked against: the HE standard's bounds."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ren.poly import is_int
from ren.ring import sampling
from ren.schemes.rlwe import bytes as _fmt

#: The largest ``log2(QP)`` for 128-bit security with a uniform ternary secret, from the
#: Homomorphic Encryption Standard (Albrecht et al., 2018, table of classical attacks); its table
#: stops at 32768, and 65536 takes the bound the same estimates give there (1747, as OpenFHE's
#: ``HEStd_128_classic`` table).
SECURITY_BOUNDS: dict[int, int] = {
    1024: 27,
    2048: 54,
    4096: 109,
    8192: 218,
    16384: 438,
    32768: 881,
    65536: 1747,
}

#: The smallest error deviation the table holds for: ``8 / sqrt(2 pi) = 3.19...``, the HE
#: standard's. A smaller error gives the secret key away (with none, ``s = -b/a`` slot by slot).
MIN_SIGMA: float = 8 / math.sqrt(2 * math.pi)


def _bits(x: float) -> str:
    """A modulus or coefficient size as ``2^k`` (exact for an int of any size)."""
    if isinstance(x, float) and not math.isfinite(x):
        return "more than 2^1024"
    return f"2^{math.log2(x):.6f}" if x > 0 else str(x)


def _need_int(name: str, value: Any) -> int:
    """``value`` as an int; a bool, a float or anything else is a ``TypeError`` naming ``name``."""
    if not is_int(value):
        raise TypeError(f"{name} must be an int, got {_fmt.describe(value)}")
    return int(value)


def _bits_tuple(name: str, value: Any) -> tuple[int, ...]:
    if is_int(value):
        raise TypeError(f"{name} must be a sequence of bit sizes, got the int {value}")
    if isinstance(value, str | bytes | dict) or not isinstance(value, Sequence | np.ndarray):
        raise TypeError(f"{name} must be a sequence of ints, got {_fmt.describe(value)}")
    items = tuple(value)
    if not items:
        raise ValueError(f"{name} is empty: it needs at least one bit size")
    for b in items:
        if not is_int(b):
            raise TypeError(f"{name} holds {b!r}; bit sizes must be ints")
        if not 10 <= b <= 62:
            raise ValueError(f"{name} holds {b}: moduli must have 10 to 62 bits")
    return tuple(int(b) for b in items)


def _check_sigma(sigma: Any) -> float:
    """``sigma`` as a finite float in ``(0, 10^6)`` (the samplers' check, then CKKS's bound)."""
    value = sampling.check_sigma(sigma)
    if not value < 1e6:
        raise ValueError(f"sigma={value!r} must be a positive number below 10^6")
    return value
