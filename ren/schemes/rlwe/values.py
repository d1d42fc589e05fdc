"""What every RLWE scheme's ciphertext shares: its parts, their copies, its key fingerprint.

A scheme's ``Ciphertext`` (``ckks.Ciphertext``, ``bfv.Ciphertext``, ``bgv.Ciphertext``) is a frozen
dataclass of its own fields on :class:`RlweCiphertext`, which holds the plumbing they share:
their copies and their product by their context, and the check of their key fingerprint.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Self

from ren.poly import Poly
from ren.schemes.rlwe import bytes as _fmt

__all__ = ["RlweCiphertext", "check_key_fingerprint", "copy_poly"]


def copy_poly(p: Poly) -> Poly:
    """A new stored poly with the value of ``p`` (its own buffer; computed first if lazy)."""
    return Poly.from_words(p.words(), p.ring, p.domain, p.device)


def check_key_fingerprint(value: Any) -> None:
    """Check a ciphertext's ``key_fingerprint``; take its context's when it has none.

    The fingerprint is ``None`` or 16 hexadecimal digits; a ciphertext made in a context takes
    the context's, and one that names another is refused. ``value`` is a frozen dataclass with
    ``key_fingerprint`` and ``context`` fields.

    Raises:
        ValueError: a fingerprint that is not 16 hexadecimal digits, or not its context's.
    """
    fp = value.key_fingerprint
    if fp is not None and (not isinstance(fp, str) or not _fmt.FINGERPRINT.fullmatch(fp)):
        raise ValueError(f"key_fingerprint must be 16 hexadecimal digits, got {fp!r}")
    if value.context is not None:
        mine = value.context.key_fingerprint
        if fp is None:
            object.__setattr__(value, "key_fingerprint", mine)
        elif mine is not None and fp != mine:
            raise ValueError(
                f"the ciphertext's key fingerprint {fp} is not its context's {mine}: it was "
                "made under other keys"
            )


class RlweCiphertext:
    """The part of a scheme's ciphertext every RLWE scheme shares (a base of its dataclass).

    The scheme's class holds the fields (``parts``, ``context``, ``key_fingerprint``, ...), says
    which context computes on it (``_ctx``) and documents its public methods. ``copy.copy`` keeps
    the same ``context``; ``copy.deepcopy`` too, and copies the parts' values.
    """

    parts: tuple[Poly, ...]

    __array_ufunc__ = None  # NumPy defers to the operators instead of broadcasting over them

    def _ctx(self) -> Any:
        """The context that computes on it (its own, or the current one of its scheme)."""
        raise NotImplementedError

    def __copy__(self) -> Self:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    def __deepcopy__(self, memo: dict) -> Self:
        new = dataclasses.replace(self, parts=tuple(copy_poly(p) for p in self.parts))  # type: ignore[type-var]
        memo[id(self)] = new
        return new

    def __mul__(self, other: Any) -> Self:
        out: Self = self._ctx().multiply(self, other)
        return out

    def __rmul__(self, other: Any) -> Self:
        out: Self = self._ctx().multiply(self, other)
        return out
