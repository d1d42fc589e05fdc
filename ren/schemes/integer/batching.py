"""Batching: ``n`` integers mod ``t`` in the slots of one plaintext, laid out as SEAL lays them.

When ``t`` is a prime ``1 (mod 2n)``, ``Z_t[X]/(X^n + 1)`` is ``n`` copies of ``Z_t``: a
polynomial is known by its values at the ``n`` primitive ``2n``-th roots of unity mod ``t``, which
is its NTT mod ``t``. Encoding puts the values in those slots and takes the inverse NTT.

The slots form a matrix of 2 rows of ``n/2``. Value ``(r, j)`` (index ``r n/2 + j``) sits at the
root ``psi^e`` with ``e = 3^j mod 2n`` in row 0 and ``e = -3^j mod 2n`` in row 1. The automorphism
``X -> X^3`` then moves every row left by one (``rotate_rows(1)``), and ``X -> X^(2n-1)`` swaps the
rows (``rotate_columns()``). This is SEAL's ``BatchEncoder`` order, so SEAL's rotations and Ren's
agree. In Ren's NTT order slot ``k`` holds the value at ``psi^(2 brv(k) + 1)``, so the value at
``psi^e`` is slot ``brv((e - 1) / 2)``.
"""

from __future__ import annotations

import functools

import numpy as np

from ren.ring import arith, bit_reverse
from ren.schemes.integer.params import IntParams
from ren.schemes.rlwe import bytes as _fmt

__all__ = ["decode", "encode", "message", "slot_of_value"]


@functools.lru_cache(maxsize=32)
def slot_of_value(n: int) -> np.ndarray:
    """For each value index (row-major, 2 x n/2), its slot in Ren's NTT order."""
    two_n, half = 2 * n, n // 2
    bits = n.bit_length() - 1
    out = np.empty(n, dtype=np.int64)
    e = 1
    for j in range(half):
        out[j] = bit_reverse((e - 1) // 2, bits)
        out[half + j] = bit_reverse((two_n - e - 1) // 2, bits)
        e = e * 3 % two_n
    out.setflags(write=False)
    return out


def message(values: object, params: IntParams, what: str = "values") -> np.ndarray:
    """``values`` as ``n`` int64 residues in ``[0, t)``: ints of any sign are taken mod ``t``.

    A scalar fills every slot; a shorter sequence leaves the rest 0.

    Raises:
        TypeError: values that are not integers (floats, bools, strings).
        ValueError: more than ``n`` values, or an array of more than one dimension.
    """
    t, n = params.t, params.n
    if isinstance(values, bool | np.bool_):
        raise TypeError(f"{what} must be integers, got a bool")
    if isinstance(values, int | np.integer):
        return np.full(n, int(values) % t, dtype=np.int64)
    if isinstance(values, str | bytes | dict) or not hasattr(values, "__len__"):
        raise TypeError(f"{what} must be an int or a sequence of ints, got {_fmt.describe(values)}")
    try:
        a = np.asarray(values)
    except (TypeError, ValueError, OverflowError) as e:
        raise TypeError(f"{what} must be a sequence of ints: {e}") from None
    if a.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {a.shape}")
    if a.size > n:
        raise ValueError(f"{a.size} {what} do not fit the {n} slots of n={n}")
    if a.size == 0:  # an empty list reads as float64: nothing to check
        reduced = np.zeros(0, dtype=np.int64)
    elif a.dtype.kind == "O":  # Python ints past 64 bits, or a mixture
        for i, v in enumerate(a):
            if isinstance(v, bool) or not isinstance(v, int | np.integer):
                raise TypeError(f"{what}[{i}] is {_fmt.describe(v)}: integers mod t={t}")
        reduced = np.array([int(v) % t for v in a], dtype=np.int64)
    elif a.dtype.kind in "iu":
        reduced = np.mod(a, t).astype(np.int64)
    else:
        raise TypeError(f"{what} must be integers mod t={t}, got an array of {a.dtype}")
    out = np.zeros(n, dtype=np.int64)
    out[: a.size] = reduced
    return out


def encode(values: np.ndarray, params: IntParams) -> np.ndarray:
    """The coefficients (int64 in ``[0, t)``) whose slots hold ``values`` (``n`` residues)."""
    ring = params.plain_ring
    slots = np.zeros((1, params.n), dtype=ring.np_dtype)
    slots[0, slot_of_value(params.n)] = values
    coeffs: np.ndarray = arith.intt(ring, slots)[0].astype(np.int64)
    return coeffs


def decode(coeffs: np.ndarray, params: IntParams) -> np.ndarray:
    """The ``n`` slot values (int64 in ``[0, t)``) of the coefficients ``coeffs``."""
    ring = params.plain_ring
    slots = arith.ntt(ring, np.asarray(coeffs, dtype=ring.np_dtype).reshape(1, -1))
    values: np.ndarray = slots[0, slot_of_value(params.n)].astype(np.int64)
    return values
