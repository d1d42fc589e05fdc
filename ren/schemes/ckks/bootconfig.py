"""Bootstrapping's settings (``BootstrapConfig``) and the parameter presets made for it.

A configuration says how a bootstrap spends its levels: ``level_budget = (c, s)`` levels for
CoeffToSlot and SlotToCoeff, and ``ceil(log2(degree + 1)) + double_angle`` for EvalMod (the
cosine's Chebyshev series, then the double-angle steps). ``Params.preset`` gives three parameter
sets with a chain laid out for it, top down: CoeffToSlot's and EvalMod's moduli (60 bits: the
slots there are at the scale ``2^60``), SlotToCoeff's (40 bits, but the last, 48: SlotToCoeff runs
at ``2^8`` times the scale and its last transform takes that back, its diagonals keeping 40 bits),
the levels left to the user (40 bits, the scale), and ``q_0`` (48 bits: the message's coefficients
are at most about ``2^-8`` of it, where the sine with the arcsine correction is ``x mod 1`` to
``2^-33``; a smaller ``q_0 / scale`` makes EvalMod's noise smaller next to the message).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any

from ren.poly import is_int
from ren.schemes.ckks.params import Params
from ren.schemes.rlwe import bytes as _fmt

__all__ = ["PRESETS", "BootstrapConfig", "preset"]


def _chain(user: int, stc: int, evalmod: int, cts: int) -> tuple[int, ...]:
    return (48,) + (40,) * user + (48,) + (40,) * (stc - 1) + (60,) * (evalmod + cts)


@dataclasses.dataclass(frozen=True)
class BootstrapConfig:
    """How ``ckks.bootstrap`` spends its levels, and the bound it relies on.

    Args:
        level_budget: ``(c, s)``: the levels of CoeffToSlot and of SlotToCoeff, each from 1 to
            ``log2(slots)``; the ``log2(slots)`` stages of each DFT are merged into that many
            linear transforms (fewer levels, more rotations each).
        K: the bound on the integer part ``I`` of ``t / q_0`` after ModRaise (``t = m + q_0 I``):
            with a ternary secret of ``h`` nonzero coefficients, ``I`` is a sum of about ``h + 1``
            uniform numbers in ``[-1/2, 1/2]``, so ``K`` near 6 standard deviations,
            ``6 sqrt((h + 1) / 12)``, fails about once in ``10^9`` coefficients.
        degree: the degree of the Chebyshev series of the cosine (EvalMod).
        double_angle: ``r``, the double-angle steps after it: the series is of
            ``cos(2 pi (t - 1/4) / 2^r)``, then ``r`` times ``c <- 2 c^2 - 1``.
        arcsine: correct the sine by ``c + c^3 / 6``, the start of ``arcsin(c)``: two more levels,
            and ``2 pi x`` instead of ``sin(2 pi x)`` to ``2^-43`` for ``|x| <= 2^-10`` (``2^-33``
            for ``|x| <= 2^-8``), so ``q_0`` may be ``2^8`` times the scale (the presets) rather
            than ``2^15``: seven bits more precision.
        slots: the slots the message uses, a power of two from 2 to ``n/2`` (default ``n/2``).
            With fewer, the message is repeated ``n / 2 / slots`` times (encrypt
            ``numpy.tile(values, n // 2 // slots)``), the real and imaginary parts share one
            EvalMod, and the output is repeated the same way.
        sparse_secret: ``None``, or the Hamming weight ``h`` of an ephemeral sparse secret:
            the ciphertext is switched to it at level 0, raised, and switched back, so ``I`` is
            bounded by ``h`` instead of the secret's weight (Bossuat et al., 2022); it needs two
            more keys (``ctx.bootstrap_keys()`` makes them).
        bsgs_ratio: the linear transforms' baby-step to giant-step ratio.

    Raises:
        TypeError: for a setting of the wrong type, naming it.
        ValueError: for a setting out of range; ``check(params)`` also says when the chain has
            too few levels.
    """

    level_budget: tuple[int, int] = (3, 3)
    K: int = 12
    degree: int = 47
    double_angle: int = 3
    arcsine: bool = False
    slots: int | None = None
    sparse_secret: int | None = None
    bsgs_ratio: float = 2.0

    def __post_init__(self) -> None:
        budget = self.level_budget
        if not isinstance(budget, tuple | list) or len(budget) != 2:
            raise TypeError(
                f"level_budget must be a pair of ints (CoeffToSlot, SlotToCoeff), got "
                f"{_fmt.describe(budget)}"
            )
        for name, value, least in (
            ("level_budget[0]", budget[0], 1),
            ("level_budget[1]", budget[1], 1),
            ("K", self.K, 1),
            ("degree", self.degree, 2),
            ("double_angle", self.double_angle, 0),
        ):
            if not is_int(value):
                raise TypeError(f"{name} must be an int, got {_fmt.describe(value)}")
            if value < least:
                raise ValueError(f"{name} must be at least {least}, got {value}")
        object.__setattr__(self, "level_budget", (int(budget[0]), int(budget[1])))
        if not isinstance(self.arcsine, bool):
            raise TypeError(f"arcsine must be True or False, got {_fmt.describe(self.arcsine)}")
        for name in ("slots", "sparse_secret"):
            value = getattr(self, name)
            if value is not None and not is_int(value):
                raise TypeError(f"{name} must be None or an int, got {_fmt.describe(value)}")
        if self.slots is not None and (self.slots < 2 or self.slots & (self.slots - 1)):
            raise ValueError(f"slots must be a power of two of at least 2, got {self.slots}")
        if self.sparse_secret is not None and self.sparse_secret < 1:
            raise ValueError(f"sparse_secret must be None or at least 1, got {self.sparse_secret}")
        ratio = self.bsgs_ratio
        if not isinstance(ratio, numbers.Real) or isinstance(ratio, bool) or not ratio > 0:
            raise ValueError(f"bsgs_ratio must be a positive number, got {ratio!r}")

    @property
    def eval_mod_depth(self) -> int:
        """EvalMod's levels: ``ceil(log2(degree + 1)) + double_angle`` (+ 2 with ``arcsine``)."""
        return math.ceil(math.log2(self.degree + 1)) + self.double_angle + 2 * self.arcsine

    @property
    def depth(self) -> int:
        """The levels a bootstrap uses: CoeffToSlot, EvalMod and SlotToCoeff."""
        return self.level_budget[0] + self.eval_mod_depth + self.level_budget[1]

    def slots_for(self, params: Params) -> int:
        """The slots the message uses with ``params``."""
        return params.slots if self.slots is None else self.slots

    def check(self, params: Params) -> BootstrapConfig:
        """``self`` if it fits ``params``; a ``ValueError`` saying what does not, otherwise."""
        if not isinstance(params, Params):
            raise TypeError(f"params must be a ckks.Params, got {_fmt.describe(params)}")
        s = self.slots_for(params)
        if s > params.slots:
            raise ValueError(
                f"slots={s} is more than the {params.slots} slots of n={params.n} (n/2)"
            )
        stages = s.bit_length() - 1
        for name, b in zip(("CoeffToSlot", "SlotToCoeff"), self.level_budget, strict=True):
            if b > stages:
                raise ValueError(
                    f"level_budget gives {name} {b} levels, more than its {stages} stages "
                    f"(log2 of {s} slots)"
                )
        if self.depth > params.max_level:
            raise ValueError(
                f"not enough levels: this bootstrap uses {self.depth} (CoeffToSlot "
                f"{self.level_budget[0]}, EvalMod {self.eval_mod_depth}, SlotToCoeff "
                f"{self.level_budget[1]}) and the chain has {params.max_level} above q_0; add "
                "moduli or lower the level budget, degree or double_angle"
            )
        if self.sparse_secret is not None and self.sparse_secret > params.n:
            raise ValueError(f"sparse_secret={self.sparse_secret} is more than n={params.n}")
        return self

    def levels_left(self, params: Params) -> int:
        """The level of a bootstrap's output with ``params``."""
        self.check(params)
        return params.max_level - self.depth

    @classmethod
    def for_params(cls, params: Params) -> BootstrapConfig:
        """The configuration of the preset ``params`` is (``Params.preset``).

        Raises:
            ValueError: for parameters that are no preset (pass ``config=`` to ``bootstrap``).
        """
        for kwargs, config in PRESETS.values():
            if params == Params(**kwargs):
                return config
        raise ValueError(
            "these parameters are not a bootstrapping preset, so there is no configuration to "
            "take: pass config=ckks.BootstrapConfig(...) (checked against the chain), or start "
            f"from ckks.Params.preset(name) with name in {sorted(PRESETS)}"
        )


#: ``name: (Params keyword arguments, BootstrapConfig)``.
PRESETS: dict[str, tuple[dict[str, Any], BootstrapConfig]] = {
    "boot-toy": (
        dict(n=64, q_bits=_chain(2, 2, 10, 2), p_bits=(61,) * 9, dnum=2, insecure=True),
        BootstrapConfig(level_budget=(2, 2), K=12, degree=47, double_angle=2, arcsine=True),
    ),
    "boot-n12": (
        dict(n=4096, q_bits=_chain(3, 3, 10, 3), p_bits=(61,) * 10, dnum=2, insecure=True),
        BootstrapConfig(
            level_budget=(3, 3), K=16, degree=63, double_angle=2, arcsine=True, sparse_secret=32
        ),
    ),
    "boot-n16": (
        dict(n=65536, q_bits=_chain(7, 3, 10, 3), p_bits=(61,) * 8, dnum=3),
        BootstrapConfig(
            level_budget=(3, 3), K=16, degree=63, double_angle=2, arcsine=True, sparse_secret=32
        ),
    ),
}


def preset(name: str) -> Params:
    """The parameters of a bootstrapping preset (see ``Params.preset``)."""
    if not isinstance(name, str):
        raise TypeError(f"the preset name must be a str, got {_fmt.describe(name)}")
    if name not in PRESETS:
        raise ValueError(f"no preset named {name!r}; the presets are {sorted(PRESETS)}")
    return Params(**PRESETS[name][0])
