"""Checking a polynomial a user hands to a standard's arithmetic: ``n`` integers modulo ``q``.

``ren.interop.mlkem`` and ``ren.interop.mldsa`` take their inputs as Python lists, tuples or 1-D
NumPy integer arrays of coefficients; ``coefficients`` checks one and gives it back as Python
ints, with an error that names the argument, the index and what the standard accepts.
"""

from __future__ import annotations

import numpy as np

__all__ = ["coefficients"]


def coefficients(
    value: object, name: str, n: int, q: int, standard: str, reduce: bool = False
) -> list[int]:
    """``value`` as ``n`` Python ints in ``[0, q)`` (or any ints reduced modulo ``q``: ``reduce``).

    Args:
        value: a list or tuple of ints (Python or NumPy, not bool), or a 1-D NumPy integer array.
        name: the argument's name, for the messages.
        n: how many coefficients the standard's polynomials have.
        q: the modulus.
        standard: what the polynomial belongs to (``"ML-KEM"``), for the messages.
        reduce: reduce every int modulo ``q`` instead of refusing one outside ``[0, q)``.

    Raises:
        TypeError: anything but integers in a list, tuple or 1-D integer array.
        ValueError: another number of coefficients, or one outside ``[0, q)`` (naming it).
    """
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "iu":
            raise TypeError(f"{name} is a NumPy array of {value.dtype}: coefficients are integers")
        if value.ndim != 1:
            raise ValueError(f"{name} has shape {value.shape}: one polynomial is shape ({n},)")
        items = [int(x) for x in value]
    elif isinstance(value, list | tuple):
        for i, x in enumerate(value):
            if isinstance(x, bool | np.bool_) or not isinstance(x, int | np.integer):
                raise TypeError(
                    f"{name}[{i}] is {type(x).__name__} {x!r}: coefficients are ints "
                    "(Python or NumPy, not bool)"
                )
        items = [int(x) for x in value]
    else:
        raise TypeError(
            f"{name} must be a list, tuple or 1-D NumPy integer array of {n} ints, got "
            f"{type(value).__name__}"
        )
    if len(items) != n:
        raise ValueError(f"{name} has {len(items)} coefficients: {standard} polynomials have {n}")
    if reduce:
        return [x % q for x in items]
    for i, x in enumerate(items):
        if not 0 <= x < q:
            raise ValueError(
                f"{name}[{i}] = {x} is outside [0, {q}): {standard} takes residues modulo q; "
                f"reduce first (x % {q})"
            )
    return items
