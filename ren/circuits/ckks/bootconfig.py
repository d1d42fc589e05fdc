"""Bootstrapping's settings (``BootstrapConfig``), their ranges, and the presets made for it.

A configuration says how a bootstrap spends its levels: ``level_budget = (c, s)`` levels for
CoeffToSlot and SlotToCoeff, and ``ceil(log2(degree + 1)) + double_angle`` for EvalMod (the
cosine's Chebyshev series, then the double-angle steps). ``Params.preset`` gives five parameter
sets with a chain laid out for it, top down: CoeffToSlot's and EvalMod's moduli (60 bits: the
slots there are at the scale ``2^60``), SlotToCoeff's (40 bits, but the last, 48: SlotToCoeff runs
at ``2^8`` times the scale and its last transform takes that back, its diagonals keeping 40 bits),
the levels left to the user (40 bits, the scale), and ``q_0`` (48 bits: the message's coefficients
are at most about ``2^-8`` of it, where the sine with the arcsine correction is ``x mod 1`` to
``2^-33``; a smaller ``q_0 / scale`` makes EvalMod's noise smaller next to the values). The two
``-precise`` presets are made for iterated bootstrapping (``bootstrap(ct, iterations=2)``): the
same layout with a scale of ``2^53``, user moduli of 53 bits and ``q_0`` of 61, so the input holds
the message to 40 bits and more, and the error of one bootstrap can be taken away.

**Ranges.** ``__post_init__`` and ``check`` hold a configuration to the ranges derived in
``ren.schemes.ckks.ranges``: ``K`` against the secret's weight, ``degree`` against ``K`` and
``double_angle``, ``double_angle`` against the rounding at ``2^60``; ``design_scale`` and
``input_bound`` say what inputs a bootstrap keeps to its precision.

**Where it is found.** The scheme floor names bootstrapping without importing it:
``ckks.BootstrapConfig`` and ``Params.preset`` are what this package registers with
``ren.schemes.ckks.registry``. A configuration keeps the path it had there,
``ren.schemes.ckks.bootconfig.BootstrapConfig`` (which finds it through the registry), so its
pickles keep their bytes.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any

from ren.poly import is_int
from ren.schemes.ckks.params import Params
from ren.schemes.ckks.ranges import (
    DEGREE_MAX,
    H_MAX,
    K_MAX,
    K_SIGMAS,
    check_series,
    k_needed,
    x_bound,
)
from ren.schemes.rlwe import bytes as _fmt

__all__ = ["PRESETS", "BootstrapConfig", "preset"]


def _chain(user: int, stc: int, evalmod: int, cts: int) -> tuple[int, ...]:
    return (48,) + (40,) * user + (48,) + (40,) * (stc - 1) + (60,) * (evalmod + cts)


def _precise_chain(user: int, stc: int, evalmod: int, cts: int) -> tuple[int, ...]:
    return (61,) + (53,) * user + (61,) + (40,) * (stc - 1) + (60,) * (evalmod + cts)


def _dense_weight(params: Params) -> tuple[float, str]:
    """The Hamming weight of ``params``' secret (expected, for a uniform ternary one), in words."""
    if params.hamming_weight is not None:
        return params.hamming_weight, f"the sparse secret of h={params.hamming_weight}"
    h = 2 * params.n / 3
    return (
        h,
        f"a uniform ternary secret of n={params.n} (about 2n/3 = {h:.0f} nonzero coefficients)",
    )


@dataclasses.dataclass(frozen=True)
class BootstrapConfig:
    """How ``ckks.bootstrap`` spends its levels, and the bounds it relies on.

    Args:
        level_budget: ``(c, s)``: the levels of CoeffToSlot and of SlotToCoeff, each from 1 to
            ``log2(slots)``; the ``log2(slots)`` stages of each DFT are merged into that many
            linear transforms (fewer levels, more rotations each).
        K: the bound on the integer part ``I`` of ``t / q_0`` after ModRaise (``t = m + q_0 I``):
            with a ternary secret of ``h`` nonzero coefficients, ``I`` is a sum of about ``h + 1``
            uniform numbers in ``[-1/2, 1/2]``, so ``K`` must be at least 6 standard deviations,
            ``k_needed(h) = ceil(6 sqrt((h + 1) / 12))`` (``|I| > K`` about once in ``10^9``
            coefficients): checked here for ``sparse_secret``, by ``check(params)`` for the
            parameters' secret.
        degree: the degree of the Chebyshev series of the cosine (EvalMod), from 2 to 1023: at
            least ``min_degree(K, double_angle, arcsine)``, where the series follows the cosine
            over ``[-K - 1, K + 1]`` as closely as the sine identity itself at the edge of the
            message range (``series_error``).
        double_angle: ``r``, the double-angle steps after it: the series is of
            ``cos(2 pi (t - 1/4) / 2^r)``, then ``r`` times ``c <- 2 c^2 - 1``. Each step
            multiplies EvalMod's error by up to 4, so at most 14 with the arcsine (11 without),
            where the rounding at the scale ``2^60`` alone reaches the tolerance.
        arcsine: correct the sine by ``c + c^3 / 6``, the start of ``arcsin(c)``: two more levels,
            and ``2 pi x`` instead of ``sin(2 pi x)`` to ``2^-43`` for ``|x| <= 2^-10`` (``2^-33``
            for ``|x| <= 2^-8``), so ``q_0`` may be ``2^8`` times the scale (the presets) rather
            than about ``2^14``: six bits more precision.
        slots: the slots the message uses, a power of two from 2 to ``n/2`` (default ``n/2``).
            With fewer, the message is repeated ``n / 2 / slots`` times (encrypt
            ``numpy.tile(values, n // 2 // slots)``), the real and imaginary parts share one
            EvalMod, and the output is repeated the same way.
        sparse_secret: ``None``, or the Hamming weight ``h`` of an ephemeral sparse secret:
            the ciphertext is switched to it at level 0, raised, and switched back, so ``I`` is
            bounded by ``h`` instead of the secret's weight (Bossuat et al., 2022); it needs two
            more keys (``ctx.bootstrap_keys()`` makes them).
        bsgs_ratio: the linear transforms' baby-step to giant-step ratio, a finite number above 0.

    Raises:
        TypeError: for a setting of the wrong type, naming it.
        ValueError: for a setting out of range, naming it, its value and the range with its
            reason; ``check(params)`` also says when the chain has too few levels or ``K`` is
            too small for the parameters' secret.
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
            ("K", self.K, k_needed(1)),  # I sums at least two uniform terms: c_0 and one of s
            ("degree", self.degree, 2),
            ("double_angle", self.double_angle, 0),
        ):
            if not is_int(value):
                raise TypeError(f"{name} must be an int, got {_fmt.describe(value)}")
            if value < least:
                why = ""
                if name == "K":
                    why = " (K must cover I for a secret of even one nonzero coefficient)"
                raise ValueError(f"{name} must be at least {least}, got {value}{why}")
        object.__setattr__(self, "level_budget", (int(budget[0]), int(budget[1])))
        for name in ("K", "degree", "double_angle"):
            object.__setattr__(self, name, int(getattr(self, name)))
        if self.K > K_MAX:
            raise ValueError(
                f"K must be at most 2^{K_MAX.bit_length() - 1}, got {_fmt.describe(self.K)}: "
                "EvalMod's cosine then turns too fast for any series of degree up to "
                f"{DEGREE_MAX}, even after the most double angles the rounding allows"
            )
        if self.degree > DEGREE_MAX:
            raise ValueError(
                f"degree must be at most {DEGREE_MAX}, got {self.degree}: the series alone would "
                f"take {math.ceil(math.log2(self.degree + 1))} levels, and no K a chain can hold "
                "needs it"
            )
        if not isinstance(self.arcsine, bool):
            raise TypeError(f"arcsine must be True or False, got {_fmt.describe(self.arcsine)}")
        for name in ("slots", "sparse_secret"):
            value = getattr(self, name)
            if value is not None and not is_int(value):
                raise TypeError(f"{name} must be None or an int, got {_fmt.describe(value)}")
        if self.slots is not None and (self.slots < 2 or self.slots & (self.slots - 1)):
            raise ValueError(f"slots must be a power of two of at least 2, got {self.slots}")
        h = self.sparse_secret
        if h is not None and not 1 <= h <= H_MAX:
            raise ValueError(
                f"sparse_secret must be None or from 1 to {H_MAX} (its K, k_needed(h), must be "
                f"at most 2^{K_MAX.bit_length() - 1}), got {_fmt.describe(h)}"
            )
        ratio = self.bsgs_ratio
        if not isinstance(ratio, numbers.Real) or isinstance(ratio, bool):
            raise TypeError(f"bsgs_ratio must be a number, got {_fmt.describe(ratio)}")
        try:
            finite = math.isfinite(ratio)
        except OverflowError:  # an int past the floats
            finite = False
        if not (finite and ratio > 0):
            raise ValueError(
                f"bsgs_ratio must be a finite number above 0, got {_fmt.describe(ratio)}"
            )
        check_series(self.K, self.degree, self.double_angle, self.arcsine)
        if h is not None and k_needed(h) > self.K:
            raise ValueError(
                f"K={self.K} is too small for sparse_secret={h}: after ModRaise the integer part I "
                f"is a sum of about h + 1 = {h + 1} numbers uniform in [-1/2, 1/2] (standard "
                f"deviation {math.sqrt((h + 1) / 12):.2f}), and K must cover {K_SIGMAS} of them "
                f"(|I| > K about once in 10^9 coefficients): use K >= {k_needed(h)}"
            )

    @property
    def x_bound(self) -> float:
        """The largest ``|t / q_0|`` EvalMod keeps to its precision (``X_ARCSINE``, ``X_SINE``)."""
        return x_bound(self.arcsine)

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

    def design_scale(self, params: Params) -> float:
        """``q_0 x_bound``: the input scale at which slots of size 1 reach the edge of the range.

        At a smaller scale the bootstrap keeps ``log2(design / scale)`` bits fewer than at this one
        (its error is fixed next to ``q_0``); at a larger one fewer slots are in range.
        """
        return params.q_moduli[0] * self.x_bound

    def input_bound(self, params: Params, scale: float | None = None) -> float:
        """The largest ``|slot|`` a bootstrap keeps to its precision: ``x_bound q_0 / scale``.

        ``scale`` is the input's (default ``params.scale``). Slots ``v`` make coefficients of at
        most ``max |v|``, so ``|t / q_0| <= x_bound`` for every such message (sufficient, not
        necessary: random slots make coefficients about ``1 / sqrt(n)`` times smaller).
        """
        return self.design_scale(params) / (params.scale if scale is None else scale)

    def check(self, params: Params) -> BootstrapConfig:
        """``self`` if it fits ``params``; a ``ValueError`` saying what does not, otherwise.

        The slots and the level budget against ``n``, the depth against the chain, and ``K``
        against the secret ``I`` comes from: ``sparse_secret`` when set, else the parameters'
        (their ``hamming_weight``, or about ``2n/3`` for a uniform ternary secret).
        """
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
        if self.sparse_secret is None:
            h, secret = _dense_weight(params)
            if k_needed(h) > self.K:
                raise ValueError(
                    f"K={self.K} is too small for {secret}: after ModRaise the integer part I is "
                    f"a sum of about h + 1 numbers uniform in [-1/2, 1/2], and K must cover "
                    f"{K_SIGMAS} standard deviations (|I| > K about once in 10^9 coefficients): "
                    f"use K >= {k_needed(h)}, or sparse_secret=h' (encapsulation: I then comes "
                    "from a sparse secret of h' nonzero coefficients)"
                )
        return self

    def levels_left(self, params: Params) -> int:
        """The level of a bootstrap's output with ``params``."""
        self.check(params)
        return params.max_level - self.depth

    @classmethod
    def for_params(cls, params: Params) -> BootstrapConfig:
        """The configuration of the preset ``params`` is (``Params.preset``).

        The precise presets' (``boot-n12-precise``, ``boot-n16-precise``) are boot-n12's and
        boot-n16's: their chains leave the level a second iteration takes
        (``bootstrap(ct, iterations=2)``), and their scale ``2^53`` the bits it gains.

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
    # iterated bootstrapping: scale 2^53, q_0 61 bits (q_0 / scale = 2^8, as above)
    "boot-n12-precise": (
        dict(
            n=4096,
            q_bits=_precise_chain(3, 3, 10, 3),
            p_bits=(61,) * 10,
            dnum=2,
            scale_bits=53,
            hamming_weight=192,
            insecure=True,
        ),
        BootstrapConfig(
            level_budget=(3, 3), K=16, degree=63, double_angle=2, arcsine=True, sparse_secret=32
        ),
    ),
    "boot-n16-precise": (
        dict(n=65536, q_bits=_precise_chain(5, 3, 10, 3), p_bits=(61,) * 8, dnum=3, scale_bits=53),
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


# Pickled (and shown by type) under the scheme's path, as before bootstrapping moved up a floor.
BootstrapConfig.__module__ = "ren.schemes.ckks.bootconfig"
