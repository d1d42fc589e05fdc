"""BFV and BGV values: a plaintext (integers mod ``t``) and a ciphertext (polys in NTT form)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from ren.poly import Poly, is_int, realize
from ren.schemes.integer.params import IntParams
from ren.schemes.rlwe import bytes as _fmt

if TYPE_CHECKING:
    from ren.schemes.integer.context import IntContext

__all__ = ["Ciphertext", "Plaintext"]


@dataclasses.dataclass(frozen=True, eq=False)
class Plaintext:
    """A message: the ``n`` coefficients of a polynomial mod ``t`` (int64 in ``[0, t)``).

    Batched values (``ctx.encode``) are the slots of this polynomial; ``ctx.decode`` reads them
    back. It holds no key and no ``Poly``: the schemes place it in a ciphertext's ring when it
    is added or multiplied.

    Attributes:
        coeffs: the coefficients, a read-only int64 array of ``n``.
        params: the parameters it was encoded for.
    """

    coeffs: np.ndarray
    params: IntParams

    def __post_init__(self) -> None:
        if not isinstance(self.params, IntParams):
            raise TypeError(
                f"params must be bfv.Params or bgv.Params, got {_fmt.describe(self.params)}"
            )
        c = np.asarray(self.coeffs)
        if c.shape != (self.params.n,) or c.dtype.kind not in "iu":
            raise ValueError(
                f"a plaintext holds n={self.params.n} integer coefficients, got "
                f"{c.dtype} of shape {c.shape}"
            )
        if c.size and (int(c.min()) < 0 or int(c.max()) >= self.params.t):
            raise ValueError(f"a plaintext's coefficients are in [0, t={self.params.t})")
        c = c.astype(np.int64)
        c.setflags(write=False)
        object.__setattr__(self, "coeffs", c)

    def centered(self) -> np.ndarray:
        """The coefficients in ``(-t/2, t/2]``: the smallest, for products."""
        t = self.params.t
        return np.where(self.coeffs > t // 2, self.coeffs - t, self.coeffs)


@dataclasses.dataclass(frozen=True, eq=False)
class Ciphertext:
    """An encryption of integers mod ``t``: polys ``c_0, c_1`` (and ``c_2``) in NTT form.

    BFV: ``c_0 + c_1 s = round(Q m / t) + e``. BGV: ``c_0 + c_1 s = f m + t e`` with ``f`` the
    :attr:`correction` that modulus switching multiplies in (1 when fresh).

    Operators: ``+``, ``-`` and unary ``-`` with ciphertexts, ints and sequences of ints (taken
    as slot values); ``*`` with those too (two ciphertexts: multiply and relinearize).
    ``rotate_rows(k)``, ``rotate_columns()``. ``==`` is identity: decrypt to compare values.

    Attributes:
        parts: the polys, two, or three before relinearization.
        level: ``0 .. L-1`` (BFV's stay at ``L - 1``).
        correction: BGV's factor ``f`` mod ``t`` (always 1 for BFV).
        context: the context whose keys it is under.
        params: the parameters.
        key_fingerprint: the fingerprint of the public key it was made under.
    """

    parts: tuple[Poly, ...]
    level: int
    correction: int = 1
    context: IntContext | None = dataclasses.field(default=None, repr=False)
    params: IntParams | None = dataclasses.field(default=None, repr=False, kw_only=True)
    key_fingerprint: str | None = dataclasses.field(default=None, repr=False, kw_only=True)

    __array_ufunc__ = None  # NumPy defers to the operators instead of broadcasting over them

    def __post_init__(self) -> None:
        parts = tuple(self.parts) if isinstance(self.parts, list | tuple) else None
        if parts is None or len(parts) not in (2, 3):
            raise ValueError("a ciphertext has 2 or 3 Poly parts")
        for p in parts:
            if not isinstance(p, Poly):
                raise TypeError(f"a ciphertext's parts are Polys, got {_fmt.describe(p)}")
        if len({p.ring for p in parts}) != 1:
            raise ValueError("a ciphertext's parts must share one ring")
        if not is_int(self.level) or not is_int(self.correction):
            raise TypeError("a ciphertext's level and correction are ints")
        object.__setattr__(self, "parts", parts)
        if self.context is not None:
            if self.params is None:
                object.__setattr__(self, "params", self.context.params)
            if self.key_fingerprint is None:
                object.__setattr__(self, "key_fingerprint", self.context.key_fingerprint)
        if self.params is not None and parts[0].ring != self.params.ring(self.level):
            raise ValueError(
                f"level {self.level}'s ring is {self.params.ring(self.level)}, "
                f"the parts' {parts[0].ring}"
            )

    @property
    def size(self) -> int:
        """The number of parts."""
        return len(self.parts)

    def _evolve(self, **fields: Any) -> Ciphertext:
        return dataclasses.replace(self, **fields)

    def _ctx(self) -> IntContext:
        if self.context is None:
            raise ValueError("this ciphertext has no context: compute on it with ctx's methods")
        return self.context

    def realize(self) -> Ciphertext:
        """Compute the parts now (they are lazy until then); returns ``self``."""
        realize(*self.parts)
        return self

    def __repr__(self) -> str:
        name = type(self.context).__module__.rsplit(".", 1)[-1] if self.context else "integer"
        return f"<{name}.Ciphertext n={self.parts[0].ring.n} level={self.level} parts={self.size}>"

    def __ren_region_notes__(self, side: str) -> dict[str, Any]:
        """What a region notes of it as input (``side="in"``) or output: its level."""
        return {f"level_{side}": self.level}

    # --- operators ----------------------------------------------------------------------------
    def __add__(self, other: Any) -> Ciphertext:
        return self._ctx().add(self, other)

    def __radd__(self, other: Any) -> Ciphertext:
        return self._ctx().add(self, other)

    def __sub__(self, other: Any) -> Ciphertext:
        return self._ctx().sub(self, other)

    def __rsub__(self, other: Any) -> Ciphertext:
        return self._ctx().negate(self._ctx().sub(self, other))

    def __neg__(self) -> Ciphertext:
        return self._ctx().negate(self)

    def __mul__(self, other: Any) -> Ciphertext:
        return self._ctx().multiply(self, other)

    def __rmul__(self, other: Any) -> Ciphertext:
        return self._ctx().multiply(self, other)

    def rotate_rows(self, steps: int) -> Ciphertext:
        """Both rows of slots moved left by ``steps`` (SEAL's ``rotate_rows``)."""
        return self._ctx().rotate_rows(self, steps)

    def rotate_columns(self) -> Ciphertext:
        """The two rows swapped (SEAL's ``rotate_columns``)."""
        return self._ctx().rotate_columns(self)

    def relinearize(self) -> Ciphertext:
        """Two parts from three (``c_2`` key switched from ``s^2`` to ``s``)."""
        return self._ctx().relinearize(self)
