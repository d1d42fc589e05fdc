"""How ``ren.viz``'s debugger shows a BFV or BGV ciphertext (``Ciphertext.__ren_watch__``).

The debugger knows no scheme: it asks the view for a one-line ``summary`` (the level, and the
noise budget when the context holds the secret key), for the slot values with the parts as the
realization's buffers stand (``decrypt``), and for how many bits of them are right
(``precision_bits``). For integers mod ``t`` a slot is right or wrong: the precision is all
``log2(t)`` bits when every slot equals its expected value mod ``t``, and 0 when one differs.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np

from ren.engine.observe import OBSERVERS
from ren.engine.realize import realize_nodes, uncaptured
from ren.errors import RenError
from ren.poly import Poly
from ren.schemes.integer.params import scheme_module
from ren.schemes.rlwe.encrypt import decrypt_parts

if TYPE_CHECKING:
    from ren.schemes.integer.context import IntContext
    from ren.schemes.integer.types import Ciphertext

__all__ = ["CiphertextView"]


@dataclasses.dataclass(frozen=True)
class CiphertextView:
    """A BFV or BGV ciphertext as the debugger shows it (``Ciphertext.__ren_watch__``).

    Attributes:
        ciphertext: the watched ciphertext.
        context: the context holding the secret key (``None``: the ciphertext's own, else the
            current context of its scheme).
    """

    ciphertext: Ciphertext
    context: IntContext | None = None

    def _context(self) -> IntContext | None:
        """The context to decrypt with, or ``None`` when there is none."""
        if self.context is not None:
            return self.context
        ct = self.ciphertext
        if ct.context is not None:
            return ct.context
        if ct.params is None:
            return None
        stack = scheme_module(ct.params.scheme).Context._active.get()
        return stack[-1] if stack else None

    @property
    def summary(self) -> str:
        """``level L, noise budget N bits`` (with the secret key), else ``level L``.

        The budget is that of the ciphertext's value, measured in a realization of its own that
        no observer sees, no ``ren.jit`` capture records and that repoints no ``Poly`` (so the
        debugger's stepped realization stays the one ``realize`` would run).
        """
        ct = self.ciphertext
        context = self._context()
        if context is None or not context.has_secret_key:
            return f"level {ct.level}"
        try:
            budget = _budget_apart(context, ct)
        except (ValueError, RenError):  # other keys, a freed buffer: decrypt says why
            return f"level {ct.level}"
        return f"level {ct.level}, noise budget {budget} bits"

    def decrypt(self, parts: tuple[Poly, ...]) -> np.ndarray:
        """The slot values (int64 in ``[0, t)``) of the ciphertext with ``parts`` for its own.

        Raises:
            ValueError: when there is no context, or it holds no secret key; a noise budget of
                0 bits (``NoiseBudgetExhausted``).
        """
        ct = self.ciphertext
        context = self._context()
        if context is None:
            raise ValueError("this ciphertext has no context to decrypt it: watch it with one")
        if not context.has_secret_key:
            raise ValueError(
                f"this {context.scheme.upper()} context holds no secret key, so it cannot decrypt"
            )
        return context.decrypt(dataclasses.replace(ct, parts=tuple(parts)))

    #: What ``precision_bits`` measures, for the debugger's label.
    precision_label = "exact mod t: log2(t) or 0"

    def precision_bits(self, got: object, expected: object) -> float:
        """``log2(t)`` when every slot of ``got`` equals ``expected``'s mod ``t``, else 0.

        ``expected`` may be complex (as the debugger keeps it): its real parts, rounded, are the
        integers.

        Raises:
            ValueError: for values of different shapes, or expected values that are not
                integers.
        """
        params = self.ciphertext.params
        if params is None:
            context = self._context()
            if context is None:
                raise ValueError("this ciphertext has no parameters: its t is unknown")
            params = context.params
        t = params.t
        a, b = _integers(got, "got"), _integers(expected, "expected")
        if a.shape != b.shape:
            raise ValueError(f"got has shape {a.shape} and expected {b.shape}")
        same = bool(np.all(np.mod(a, t) == np.mod(b, t)))
        return math.log2(t) if same else 0.0


def _integers(values: object, what: str) -> np.ndarray:
    """``values`` as int64 (complex or float ones must be integers, with no imaginary part)."""
    a = np.asarray(values)
    if a.dtype.kind in "iu":
        return a.astype(np.int64)
    if a.dtype.kind not in "fc" or np.any(np.imag(a) != 0):
        raise ValueError(f"{what} must hold integers mod t, got {a.dtype}")
    real = np.real(a)
    if not np.all(np.isfinite(real)) or np.any(real != np.rint(real)):
        raise ValueError(f"{what} must hold integers mod t")
    ints: np.ndarray = np.rint(real).astype(np.int64)
    return ints


def _budget_apart(context: IntContext, ct: Ciphertext) -> int:
    """The noise budget of ``ct``, computed apart (no observer, no capture, nothing repointed)."""
    ct = context._own(ct)
    s = context._require_secret("measure a noise budget")
    token = OBSERVERS.set(())
    try:
        with uncaptured():
            x = decrypt_parts(ct.parts, s.to_ring(ct.parts[0].ring)).intt()
            done = realize_nodes((x.node,))  # no finish: no Poly is repointed
            values = Poly._wrap(done.becomes_map[x.node]).tolist(centered=True)
    finally:
        OBSERVERS.reset(token)
    return max(0, context._budget(values, ct.level))
