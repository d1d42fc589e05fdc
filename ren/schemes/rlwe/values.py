"""What every RLWE scheme's ciphertext shares: its parts, their copies, its key fingerprint.

A scheme's ``Ciphertext`` (``ckks.Ciphertext``, ``bfv.Ciphertext``, ``bgv.Ciphertext``) is a frozen
dataclass of its own fields on :class:`RlweCiphertext`, which holds the plumbing they share:
their copies and their product by their context, and the check of their key fingerprint.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, ClassVar, Protocol, Self, TypeVar

from ren.poly import Poly
from ren.schemes.rlwe import bytes as _fmt

if TYPE_CHECKING:
    from ren.schemes.rlwe.params import Chain

__all__ = ["RlweCiphertext", "check_key_fingerprint", "copy_poly"]

CT = TypeVar("CT", bound="RlweCiphertext")


class _Keyed(Protocol):
    """What a ciphertext asks of the context it was made in: the fingerprint of its keys."""

    @property
    def key_fingerprint(self) -> str | None: ...


class _Multiplies(Protocol[CT]):
    """What a ciphertext's ``*`` asks of its context: ``multiply(ct, other)``."""

    def multiply(self, a: CT, b: object, /) -> CT: ...


def copy_poly(p: Poly) -> Poly:
    """A new stored poly with the value of ``p`` (its own buffer; computed first if lazy)."""
    return Poly.from_words(p.words(), p.ring, p.domain, p.device)


def check_key_fingerprint(value: RlweCiphertext) -> None:
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

    if TYPE_CHECKING:  # the scheme's dataclass declares these fields, and these three methods
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[object]]]
        level: int
        context: _Keyed | None
        params: Chain | None
        key_fingerprint: str | None

        @property
        def size(self) -> int: ...  # noqa: D102
        def _evolve(self, **changes: object) -> Self: ...
        def _ctx(self) -> _Multiplies[Self]: ...  # its context, or its scheme's current one

    __array_ufunc__ = None  # NumPy defers to the operators instead of broadcasting over them

    def __copy__(self) -> Self:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    def __deepcopy__(self, memo: dict[int, object]) -> Self:
        new = dataclasses.replace(self, parts=tuple(copy_poly(p) for p in self.parts))
        memo[id(self)] = new
        return new

    def _repr_html_(self) -> str:
        """The notebook's display (``rlwe.display``): level, ring, the scheme's rows; no slot."""
        from ren.schemes.rlwe.display import ciphertext_html

        return ciphertext_html(self)

    def _display_rows(self) -> list[tuple[str, object]]:
        """What the scheme adds to the display: none here (a scheme's class overrides it)."""
        return []

    def __mul__(self, other: object) -> Self:
        return self._ctx().multiply(self, other)

    def __rmul__(self, other: object) -> Self:
        return self._ctx().multiply(self, other)
