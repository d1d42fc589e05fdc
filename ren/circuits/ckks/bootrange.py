"""A bootstrap's input range: what its metadata tells at once, and what ModRaise's output must hold.

The ranges are derived in ``ren.schemes.ckks.ranges``: EvalMod gives ``x mod 1`` for
``x = t / q_0 + I`` only while ``|t / q_0| <= x_bound`` (``2^-8`` with the arcsine) and
``|I| <= K``; outside, the result is wrong, not only imprecise. Two checks follow, neither of which
adds work to a program that does not ask for it:

* ``check_scale`` (metadata, every call): the input's scale against the configuration's design
  scale ``q_0 x_bound``. More than a factor 2 below it, the bootstrap keeps ``log2(design /
  scale)`` bits fewer than it is made for (its error is fixed next to ``q_0``); more than a factor
  2 above it, slots of size 1 are out of range. Either is a ``ckks.RangeWarning``.
* ``RaisedRange`` (noted beside ModRaise's output with ``ranges.expect``, checked only where a tool
  decrypts it: the report's observing pass against the exact decryption ``t + q_0 I``, the
  debugger's ``slots`` view): the largest ``|t / q_0|`` and ``|I|``, and the slots they come from.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np

from ren.circuits.ckks.bootconfig import BootstrapConfig
from ren.schemes import ckks
from ren.schemes.ckks.ranges import RangeWarning, log2_text

__all__ = ["RaisedRange", "check_scale"]


def check_scale(ct: ckks.Ciphertext, config: BootstrapConfig, params: ckks.Params) -> None:
    """Warn (``RangeWarning``) when ``ct.scale`` is more than a factor 2 from the design scale."""
    design = config.design_scale(params)
    scale = ct.scale
    if design / 2 <= scale <= 2 * design:
        return
    head = (
        f"ckks.bootstrap: the input's scale 2^{math.log2(scale):.1f} is "
        f"2^{abs(math.log2(design / scale)):.1f} {'below' if scale < design else 'above'} the "
        f"design scale 2^{math.log2(design):.1f} of this configuration (q_0 times "
        f"{log2_text(config.x_bound)}, where slots of size 1 reach the edge of EvalMod's range)"
    )
    if scale < design:
        tail = (
            "; the bootstrap's error is fixed next to q_0, so the result keeps about "
            f"{math.log2(design / scale):.0f} bits fewer than at the design scale: encrypt or "
            "rescale to a scale near it"
        )
    else:
        tail = (
            f"; only slots with |v| <= {config.input_bound(params, scale):.3g} are in range "
            "(x_bound q_0 / scale), larger ones come back wrong: use a smaller scale"
        )
    warnings.warn(head + tail, RangeWarning, stacklevel=4)


@dataclasses.dataclass(frozen=True)
class RaisedRange:
    """ModRaise's output must decrypt to ``t + q_0 I`` with ``|t / q_0| <= x_bound``, ``|I| <= K``.

    Attributes:
        q0: the first modulus.
        K: the configuration's bound on ``I``.
        x_bound: the configuration's bound on ``|t / q_0|``.
        scale: the input's scale (the message's slots are ``embed(t) / scale``).
        words: what the output's slots are multiplied by to give its coefficients ``t + q_0 I``
            (the scale it is read at, over the lift).
    """

    q0: int
    K: int
    x_bound: float
    scale: float
    words: float

    what = "bootstrap"

    @property
    def advice(self) -> str:
        """Why the range matters, and what to do."""
        return (
            "EvalMod computes t mod q_0 by a sine that is accurate only near the integers "
            f"(|t / q_0| <= {log2_text(self.x_bound)}) and over [-K - 1, K + 1], so the result is "
            "wrong, not only imprecise: bring the slots within the range (multiply by a constant "
            "before the bootstrap, divide after), or bootstrap at a smaller scale "
            "(docs/circuits/bootstrapping.md, Ranges)"
        )

    def check(self, slots: np.ndarray, n: int) -> str | None:
        """``None``, or the largest ``|t / q_0|`` and ``|I|`` that break the range."""
        w = ckks.embed_inverse(np.asarray(slots, dtype=np.complex128), n) * self.words
        integer = np.rint(w / self.q0)
        x = w / self.q0 - integer
        worst_x, worst_i = float(np.max(np.abs(x))), int(np.max(np.abs(integer)))
        problems = []
        if worst_x > self.x_bound:
            v = float(np.max(np.abs(ckks.embed(x * self.q0, n)))) / self.scale
            bound = self.x_bound * self.q0 / self.scale
            problems.append(
                f"the message's largest coefficient is {worst_x:.3g} q_0, beyond "
                f"{log2_text(self.x_bound)} (slots up to |v| = {v:.4g} at scale "
                f"2^{math.log2(self.scale):.1f}, where |v| <= {bound:.4g} is in range)"
            )
        if worst_i > self.K:
            problems.append(f"the integer part I after ModRaise reaches {worst_i}, past K={self.K}")
        return "bootstrap: " + "; ".join(problems) if problems else None
