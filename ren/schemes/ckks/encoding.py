"""The canonical embedding, and turning values into slots and constants."""

from __future__ import annotations

import functools
import math
import numbers
from typing import Any

import numpy as np

from ren.poly import Poly
from ren.ring import RingSpec
from ren.schemes.rlwe import bytes as _fmt
from ren.schemes.rlwe.params import bits

# ---------------------------------------------------------------------------------------------
# the canonical embedding


#: The slot generators: Ren orders slots by powers of 5 (slot ``j`` is ``m(zeta^(5^j))``, as
#: HEAAN, OpenFHE and Lattigo do); Microsoft SEAL by powers of 3. The default is Ren's own.
SLOT_GENERATORS = {5: "Ren, OpenFHE, Lattigo", 3: "Microsoft SEAL"}


def _check_generator(generator: object) -> int:
    if isinstance(generator, bool) or not isinstance(generator, int | np.integer):
        raise TypeError(f"generator must be an int, 5 or 3, got {_fmt.describe(generator)}")
    if int(generator) not in SLOT_GENERATORS:
        orders = "; ".join(f"{g}: {who}" for g, who in SLOT_GENERATORS.items())
        raise ValueError(f"generator={generator} orders no library's slots ({orders})")
    return int(generator)


@functools.cache
def _embedding(n: int, generator: int = 5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For slot ``j``: the index of its root, the index of the conjugate root, and the twist.

    The root the slot is evaluated at has index ``t_j`` with ``2 t_j + 1 = g^j mod 2n`` (``g`` the
    generator, 5 unless another library's order is asked for); the twist is ``zeta^i``,
    ``zeta = e^(i pi/n)``.
    """
    e = np.array([pow(generator, j, 2 * n) for j in range(n // 2)], dtype=np.int64)
    t = (e - 1) // 2
    tc = (2 * n - e - 1) // 2
    zeta = np.exp(1j * np.pi * np.arange(n) / n)
    return t, tc, zeta


def embed_inverse(slots: np.ndarray, n: int, generator: int = 5) -> np.ndarray:
    """The real polynomial (``n`` float coefficients) whose canonical embedding is ``slots``.

    With ``v[t] = m(zeta^(2t+1))`` for all ``n`` odd powers, ``v = n * ifft(m * zeta^i)``; the
    slots fill ``v`` at ``5^j`` and their conjugates at ``-5^j``, then ``m = fft(v) / n / zeta^i``.
    ``generator=3`` orders the slots by powers of 3 instead, as Microsoft SEAL does.

    Raises:
        TypeError, ValueError: a generator other than 5 or 3.
    """
    t, tc, zeta = _embedding(n, _check_generator(generator))
    v = np.empty(n, dtype=np.complex128)
    v[t] = slots
    v[tc] = np.conj(slots)
    coeffs: np.ndarray = (np.fft.fft(v) / n / zeta).real
    return coeffs


def embed(coeffs: np.ndarray, n: int, generator: int = 5) -> np.ndarray:
    """The ``n/2`` slots of the real polynomial ``coeffs``: ``m(zeta^(5^j))`` by one FFT.

    ``generator=3``: the slots ``m(zeta^(3^j))``, in Microsoft SEAL's order.

    Raises:
        TypeError, ValueError: a generator other than 5 or 3.
    """
    t, _, zeta = _embedding(n, _check_generator(generator))
    slots: np.ndarray = (n * np.fft.ifft(np.asarray(coeffs, dtype=np.float64) * zeta))[t]
    return slots


# ---------------------------------------------------------------------------------------------
# helpers of the evaluator


def level0(what: str) -> str:
    """The message refusing to ``what`` at level 0 (no modulus left to rescale by)."""
    return (
        f"cannot {what} at level 0: rescaling would drop below the last modulus q_0; use fewer "
        "multiplications or more moduli (q_bits)"
    )


def same_scale(a: float, b: float) -> bool:
    """Whether two scales agree to 40 bits (rescales round them apart in the last digits)."""
    return abs(a - b) <= 2.0**-40 * max(abs(a), abs(b))


def check_scale(scale: object) -> float:
    """``scale`` as a float in ``[1, 2^1000)``, or a ``TypeError``/``ValueError`` naming it."""
    if not isinstance(scale, numbers.Real) or isinstance(scale, bool):
        raise TypeError(f"scale must be a number, got {scale!r}")
    value = float(scale)
    if not 1.0 <= value < 2.0**1000:
        raise ValueError(f"scale={value} must be at least 1")
    return value


def is_number(x: object) -> bool:
    """Whether ``x`` is one number (a bool is not)."""
    return isinstance(x, numbers.Number) and not isinstance(x, bool | np.bool_)


def is_values(x: object) -> bool:
    """Whether ``x`` holds slot values (a list, a tuple or an array)."""
    return isinstance(x, list | tuple | np.ndarray)


def finite(value: Any, what: str) -> complex:
    """``value`` as a complex number with finite parts, or a ``ValueError`` saying why not."""
    try:
        c = complex(value)
    except OverflowError:
        raise ValueError(
            f"cannot {what}: it is too large for the modulus at this scale (beyond a float)"
        ) from None
    if not (math.isfinite(c.real) and math.isfinite(c.imag)):
        raise ValueError(
            f"cannot {what}: {value!r} is not a finite number (a NaN or an infinity has no "
            "encoding)"
        )
    return c


def slot_values(values: Any, slots: int) -> tuple[np.ndarray, bool]:
    """``values`` as ``slots`` complex numbers (zero-padded), and whether they are all real."""
    if is_number(values):
        arr = np.full(slots, complex(values))
        real = complex(values).imag == 0
    else:
        try:
            raw = np.asarray(values)
        except (TypeError, ValueError):
            raise TypeError(f"values must be numbers, got {type(values).__name__}") from None
        if raw.dtype.kind not in "biufc" or raw.dtype.kind == "b":
            raise TypeError(f"values must be real or complex numbers, got dtype {raw.dtype}")
        if raw.ndim != 1:
            raise ValueError(f"values must be one-dimensional, got shape {raw.shape}")
        if raw.shape[0] > slots:
            raise ValueError(f"{raw.shape[0]} values do not fit the {slots} slots (n/2)")
        arr = np.zeros(slots, dtype=np.complex128)
        arr[: raw.shape[0]] = raw
        real = raw.dtype.kind != "c" or not np.any(raw.imag)
    if not np.all(np.isfinite(arr)):
        raise ValueError("values hold NaN or infinity")
    return arr, bool(real)


def constant_poly(
    c: complex, scale: float, ring: RingSpec, device: str, what: str, level: int
) -> Poly:
    """The encoding of ``c`` in every slot at ``scale`` (for the operation ``what``).

    That is ``round(Re c * scale)`` as a constant, plus ``round(Im c * scale) X^(n/2)``
    (``X^(n/2)`` is ``i`` in every slot). Each must be below ``Q/2``, compared exactly.

    Raises:
        ValueError: naming the operation and the number when it is too large for the modulus at
            this scale.
    """
    re_f, im_f = c.real * scale, c.imag * scale
    Q = ring.Q
    if not (math.isfinite(re_f) and math.isfinite(im_f)) or 2 * max(abs(re_f), abs(im_f)) >= Q:
        size = math.log2(max(abs(c.real), abs(c.imag))) + math.log2(scale)
        raise ValueError(
            f"cannot {what}: it is too large for the modulus at this scale: times the scale "
            f"{bits(scale)} it is about 2^{size:.1f}, and a constant must stay below Q/2 at "
            f"level {level} (Q={bits(Q)})"
        )
    re, im = round(re_f), round(im_f)
    if im == 0:
        return Poly.const(re, ring, device)
    coeffs = [0] * ring.n
    coeffs[0], coeffs[ring.n // 2] = re, im
    return Poly(coeffs, ring, device)


def precision_bits(got: object, expected: object, *, relative: bool = False) -> float:
    """``-log2`` of the largest slot error ``|got - expected|``; ``inf`` for an exact match.

    This is the usual "bits of precision" of approximate homomorphic encryption, and it is
    **absolute**: an error of ``2^-20`` is 20 bits whether the values are near 1 or near 1000.
    With ``relative=True`` the error is measured against the largest expected value,
    ``-log2(max |got - expected| / max |expected|)``: ``log2(max |expected|)`` bits more than the
    absolute figure (the report of ``python -m ren.viz`` shows both for values past 1). Whatever
    Ren shows as a precision says which it is and against what (``docs/viz.md``).

    Args:
        got: numbers (an array, a sequence or one number).
        expected: numbers of the same shape, or one number compared with each.
        relative: measure against ``max |expected|`` (which must not be 0) instead of 1.

    Raises:
        TypeError: for values that are not numbers (decrypt a ciphertext first), or a
            ``relative`` that is not a bool.
        ValueError: for arrays of different shapes (naming both), no numbers at all, or
            ``relative=True`` with every expected value 0.
    """
    if not isinstance(relative, bool):
        raise TypeError(f"relative must be True or False, got {_fmt.describe(relative)}")
    arrays = []
    for name, value in (("got", got), ("expected", expected)):
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError):
            arr = np.asarray(None)
        if arr.dtype.kind not in "biufc":
            raise TypeError(f"{name} must hold numbers, got {_fmt.describe(value)}")
        arrays.append(arr)
    g, e = arrays
    if g.shape != e.shape and g.ndim and e.ndim:
        raise ValueError(
            f"got has shape {g.shape} and expected {e.shape}: compare arrays of one shape (or "
            "with one number)"
        )
    if g.size == 0 or e.size == 0:
        raise ValueError("precision_bits needs at least one number to compare")
    err = float(np.max(np.abs(g - e)))
    if relative:
        size = float(np.max(np.abs(e)))
        if not size > 0:
            raise ValueError(
                "precision_bits(relative=True) measures against max |expected|, and every "
                "expected value is 0: use the absolute figure"
            )
        err /= size
    return math.inf if err == 0 else -math.log2(err)
