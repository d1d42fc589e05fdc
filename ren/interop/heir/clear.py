"""A HEIR program's scheme ops on plain slot vectors: the reference an encrypted run departs from.

``program.cleartext(*args)`` and the divergence tool run the same module with these engines in
place of Ren's: a ciphertext is its vector of slots (``Slots``), and each op does to it what the
scheme promises to do to the encrypted slots, with no noise, no scale and no modulus:

* CKKS: sums and products of real vectors; ``rotate(k)`` moves every slot ``k`` to the left
  (``np.roll(v, -k)``); rescale, relinearize and level changes leave the values as they are;
* BGV and BFV: the same on integers mod ``t`` (centred), in two rows of ``n/2`` slots: a rotation
  moves each row, ``rotate_rows`` swaps them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ren.interop.heir.schemes import Decrypted, Plain, tiled

__all__ = ["ClearCkks", "ClearInt", "Slots"]


@dataclasses.dataclass(frozen=True)
class Slots:
    """A ciphertext in cleartext: the values its slots hold."""

    values: np.ndarray


class ClearCkks:
    """HEIR's CKKS ops on real slot vectors of ``slots`` entries."""

    t: int | None = None

    def __init__(self, slots: int) -> None:
        self.slots = slots

    def _vector(self, pt: Any) -> np.ndarray:
        return tiled(pt.values, self.slots).astype(np.float64)

    def encrypt(self, pt: Plain) -> Slots:
        """``lwe.rlwe_encrypt``: ``pt``'s values, tiled over the slots, encrypted at its level."""
        return Slots(self._vector(pt))

    def decrypt(self, ct: Slots) -> Decrypted:
        """``lwe.rlwe_decrypt``: every slot of ``ct``."""
        return Decrypted(ct.values)

    def _wrap(self, v: np.ndarray) -> Slots:
        return Slots(v)

    def add(self, a: Slots, b: Slots) -> Slots:
        """``a + b`` (``*.add``)."""
        return self._wrap(a.values + b.values)

    def sub(self, a: Slots, b: Slots) -> Slots:
        """``a - b`` (``*.sub``)."""
        return self._wrap(a.values - b.values)

    def negate(self, a: Slots) -> Slots:
        """``-a`` (``*.negate``)."""
        return self._wrap(-a.values)

    def mul(self, a: Slots, b: Slots) -> Slots:
        """``a * b``, left in three parts (``*.mul``: HEIR relinearizes with its own op)."""
        return self._wrap(a.values * b.values)

    def relinearize(self, a: Slots) -> Slots:
        """``a`` in two parts (``*.relinearize``)."""
        return a

    rescale = relinearize

    def level_reduce(self, a: Slots, drop: int) -> Slots:
        """``*.level_reduce``: ``a`` with its last ``drop`` moduli dropped."""
        return a

    def switch(self, a: Slots, to: str) -> Slots:
        """``bgv.modulus_switch``: ``a`` at the level ``to`` (the target ring's text) names."""
        return a

    def rotate(self, a: Slots, steps: int) -> Slots:
        """``ckks.rotate`` / ``bgv.rotate_cols``: the slots moved ``steps`` to the left."""
        return Slots(np.roll(a.values, -int(steps)))

    def swap_rows(self, a: Slots) -> Slots:
        """``bgv.rotate_rows``: the two rows of slots swapped."""
        return a

    def add_plain(self, ct: Slots, pt: Plain) -> Slots:
        """``ct + pt`` (``*.add_plain``, ``lwe.radd_plain``)."""
        return self._wrap(ct.values + self._vector(pt))

    def sub_plain(self, ct: Slots, pt: Plain, reverse: bool) -> Slots:
        """``ct - pt``, or ``pt - ct`` when ``reverse`` (``*.sub_plain``)."""
        v = self._vector(pt) - ct.values if reverse else ct.values - self._vector(pt)
        return self._wrap(v)

    def mul_plain(self, ct: Slots, pt: Plain) -> Slots:
        """``ct * pt`` (``*.mul_plain``), not rescaled."""
        return self._wrap(ct.values * self._vector(pt))


class ClearInt(ClearCkks):
    """HEIR's BGV and BFV ops on integer slots mod ``t``: two rows of ``n/2``, values centred."""

    def __init__(self, n: int, t: int) -> None:
        super().__init__(n)
        self.t = t
        self.width = n // 2

    def _vector(self, pt: Any) -> np.ndarray:
        row = tiled(np.asarray(pt.values, dtype=object), self.width)
        return np.concatenate([row, row]).astype(object)

    def encrypt(self, pt: Plain) -> Slots:
        """``lwe.rlwe_encrypt``: ``pt``'s values, tiled over the slots, encrypted at its level."""
        return self._wrap(self._vector(pt))

    def _wrap(self, v: np.ndarray) -> Slots:
        t = self.t
        assert t is not None
        reduced = np.array([int(x) % t for x in v], dtype=object)
        return Slots(np.where(reduced > t // 2, reduced - t, reduced))

    def rotate(self, a: Slots, steps: int) -> Slots:
        """``ckks.rotate`` / ``bgv.rotate_cols``: the slots moved ``steps`` to the left."""
        rows = a.values.reshape(2, self.width)
        return Slots(np.roll(rows, -int(steps), axis=1).ravel())

    def swap_rows(self, a: Slots) -> Slots:
        """``bgv.rotate_rows``: the two rows of slots swapped."""
        return Slots(a.values.reshape(2, self.width)[::-1].ravel())
