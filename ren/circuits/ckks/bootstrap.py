"""CKKS bootstrapping: a ciphertext at level 0 back to a high level, every stage one region.

A ciphertext at level 0 holds ``t = m + e (mod q_0)``: no level is left to multiply. The bootstrap
(Cheon, Han, Kim, Kim and Song, 2018; the full-RNS form of Han and Ki, 2020, and Bossuat et al.,
2021) computes an encryption of the same slots at a high level, in four stages:

1. **ModRaise** (``mod_raise``): read ``t`` modulo the whole chain. It decrypts to ``t + q_0 I``
   with a small integer polynomial ``I``. Read at the scale ``q_0``, its coefficients are
   ``t_k / q_0 + I_k``: near the integers, the message being the small distance to them.
   Optionally the ciphertext is first switched to a sparse ephemeral secret and switched back
   after, so ``I`` stays small whatever the secret (``sparse_secret``).
2. **CoeffToSlot**: the coefficients into the slots, by the inverse of the slots' DFT, factored
   into ``level_budget[0]`` sparse linear transforms (``ren.circuits.ckks.dft``). The slots then
   hold ``(t_k + i t_(k + n/2)) / q_0 + I``, divided by ``2 (K + 1)``; one conjugation splits the
   real and imaginary parts (with fewer slots, both go into one ciphertext).
3. **EvalMod**: ``x mod 1`` by ``sin(2 pi x) / (2 pi)``, from the Chebyshev series of
   ``cos(2 pi ((K + 1) y - 1/4) / 2^r)`` on ``[-1, 1]`` and ``r`` double-angle steps
   ``c <- 2 c^2 - 1``; the ``1 / (2 pi)`` is folded into the next stage.
4. **SlotToCoeff**: the slots' DFT, back to coefficients, in ``level_budget[1]`` transforms.

Reading a value at another scale costs nothing (the scale is how the integers are read): ModRaise's
output is read at ``q_0``, EvalMod's at the input's scale again (times ``2^k`` through SlotToCoeff,
whose last transform takes it back), so the result has the input's slots at about its scale.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from ren.circuits import in_region
from ren.circuits.ckks.bootconfig import BootstrapConfig
from ren.circuits.ckks.bootrange import RaisedRange, check_scale
from ren.circuits.ckks.chebyshev import chebyshev
from ren.circuits.ckks.dft import coeff_to_slot_groups, slot_to_coeff_groups, tile
from ren.circuits.ckks.evalmod import angle_bounds, approximated, coefficients, double_angles
from ren.circuits.ckks.iterate import check_iterations, iterate
from ren.circuits.ckks.linear import LinearTransform
from ren.circuits.ckks.modraise import raise_modulus
from ren.circuits.ckks.polynomial import evaluate_polynomial
from ren.circuits.ckks.rotations import check_rotation_keys, context_of
from ren.ir.region import noted, region
from ren.progress import Progress
from ren.schemes import ckks
from ren.schemes.ckks.noise import bound_of, carried, exact, normal, within
from ren.schemes.ckks.ranges import EVAL_SCALE_BITS, expect
from ren.schemes.ckks.shadow import Shadow
from ren.schemes.rlwe.noise import secret_weight

__all__ = [
    "EVAL_SCALE",
    "LIFT",
    "Plan",
    "bootstrap",
    "bootstrap_keys",
    "eval_sine",
    "plan",
    "raise_modulus",
]

#: The scale the slots have in CoeffToSlot's output and through EvalMod (its moduli are 60 bits).
EVAL_SCALE = 2.0**EVAL_SCALE_BITS

#: ``log2`` of the int the raised ciphertext is multiplied by (exact, no level): CoeffToSlot's
#: rotations add noise of a fixed size, so at a scale ``2^LIFT`` times larger it is that much
#: smaller next to the values; the last transform takes the factor back (its diagonals encoded at
#: ``q_l / 2^LIFT``, ``60 - LIFT`` bits of precision).
LIFT = 8


@dataclasses.dataclass(frozen=True, eq=False)
class Plan:
    """What one bootstrap configuration needs, made once per parameters and configuration.

    Attributes:
        config: the checked configuration.
        slots: the slots the message uses; ``packed`` when fewer than ``n/2`` (real and imaginary
            parts then share one ciphertext, in the halves of a ``2 slots`` period).
        coeff_to_slot, slot_to_coeff: the linear transforms, in the order they run.
        cosine: the Chebyshev coefficients of EvalMod's cosine, on ``[-1, 1]``.
        sixth: with ``arcsine``, the scale ``1/6`` is encoded at: the correction ``c^3 / 6`` then
            ends at the scale ``q_0 2^k``, where SlotToCoeff wants it (free: its precision hardly
            matters, the term being small). SlotToCoeff runs at ``2^k`` times the input's scale
            (``k`` what its last level's modulus has above 40 bits: 8 in the presets), so its key
            switches' noise is ``2^k`` times smaller next to the values, and its last transform
            takes the ``2^k`` back (``scale_factor``).
        sub_sum: the rotations that add the ``n / 2 / slots`` copies of a sparse message.
        rotations: every rotation step the bootstrap uses (its keys, with the conjugation's).
    """

    config: BootstrapConfig
    slots: int
    packed: bool
    coeff_to_slot: tuple[LinearTransform, ...]
    slot_to_coeff: tuple[LinearTransform, ...]
    cosine: np.ndarray
    sixth: float
    sub_sum: tuple[int, ...]
    rotations: tuple[int, ...]


_PLANS: dict[tuple[ckks.Params, BootstrapConfig], Plan] = {}
_LOCK = threading.Lock()


def _transforms(
    groups: list[dict[int, np.ndarray]],
    N: int,
    M: int,
    level: int,
    ratio: float,
    factors: dict[int, float],
) -> tuple[LinearTransform, ...]:
    """One transform per group, from ``level`` down: diagonals on ``N`` slots, repeated to ``M``.

    ``factors[i]`` is the scale factor of the ``i``-th (default 1).
    """
    return tuple(
        LinearTransform(
            diagonals=tile(g, N, M),
            level=level - i,
            slots=M,
            bsgs_ratio=ratio,
            scale_factor=factors.get(i, 1.0),
        )
        for i, g in enumerate(groups)
    )


def plan(params: ckks.Params, config: BootstrapConfig | None = None) -> Plan:
    """The ``Plan`` of ``config`` (default: the preset's) for ``params``; made once and kept.

    Raises:
        TypeError: for parameters or a configuration of the wrong type.
        ValueError: for a configuration the chain cannot hold (``BootstrapConfig.check``), or no
            configuration for parameters that are not a preset.
    """
    if not isinstance(params, ckks.Params):
        raise TypeError(f"params must be a ckks.Params, got {type(params).__name__}")
    if config is None:
        config = BootstrapConfig.for_params(params)
    elif not isinstance(config, BootstrapConfig):
        raise TypeError(f"config must be a ckks.BootstrapConfig, got {type(config).__name__}")
    key = (params, config)
    with _LOCK:
        made = _PLANS.get(key)
    if made is not None:
        return made
    config.check(params)
    M, s = params.slots, config.slots_for(params)
    packed = s < M
    N = 2 * s if packed else s
    top = params.max_level
    b_cts, b_stc = config.level_budget
    # CoeffToSlot: t / EVAL_SCALE to t / q_0, the copies of a sparse message summed (M / s of
    # them), halved for the split, mapped from [-K - 1, K + 1] to [-1, 1] for the series
    c_cts = EVAL_SCALE / params.q_moduli[0] * (s / M) / 2 / (config.K + 1)
    groups = coeff_to_slot_groups(s, b_cts, packed, c_cts)
    cts = _transforms(groups, N, M, top, config.bsgs_ratio, {b_cts - 1: 2.0**-LIFT})
    below = top - b_cts - config.eval_mod_depth
    # SlotToCoeff runs at q_0 2^k, its last transform taking 2^k back with diagonals encoded at
    # q_last / 2^k: k is what the last modulus has above 40 bits, so they keep 40 bits; the key
    # switches' rounding noise is then 2^k times smaller next to the values
    last = params.q_moduli[below - b_stc + 1]
    k_stc = max(0, round(math.log2(last)) - 40)
    land = params.q_moduli[0] * 2.0**k_stc
    # EvalMod's output scale, known ahead: the series keeps EVAL_SCALE, each double angle squares
    # it and divides by its level's modulus; the arcsine's 1/6 (else SlotToCoeff's first
    # transform) brings it to q_0 2^k, so the result has the input's scale
    fix = 2 * config.arcsine  # the arcsine's levels, after the double angles
    end = EVAL_SCALE
    for level in range(below + fix + config.double_angle, below + fix, -1):
        end = end * end / params.q_moduli[level]
    sixth = 0.0
    if config.arcsine:  # c^3 / 6 = (c / 6) * c^2, c / 6 encoded so that it ends at q_0 2^k
        ql, qm = params.q_moduli[below + 2], params.q_moduli[below + 1]
        sixth = land * ql * qm / end**3 * ql  # the scale of the plaintext 1/6
        end = end * (sixth / ql) * (end * end / ql) / qm
    groups = slot_to_coeff_groups(s, b_stc, packed, 1 / (2 * math.pi))
    factors = {0: land / end}
    factors[b_stc - 1] = factors.get(b_stc - 1, 1.0) * 2.0**-k_stc
    stc = _transforms(groups, N, M, below, config.bsgs_ratio, factors)
    # evalmod's cosine, fitted on [-1, 1] in y = x / (K + 1) (CoeffToSlot divides by K + 1)
    K1, r = config.K + 1, config.double_angle
    cosine = chebyshev(
        lambda y: np.cos(2 * np.pi * (K1 * y - 0.25) / 2**r), (-1.0, 1.0), config.degree
    )
    sub_sum = tuple(s << i for i in range((M // s).bit_length() - 1))
    steps = {k for lt in cts + stc for k in lt.rotations()} | set(sub_sum)
    if packed:
        steps.add(M - s)
    made = Plan(config, s, packed, cts, stc, cosine, sixth, sub_sum, tuple(sorted(steps)))
    with _LOCK:
        return _PLANS.setdefault(key, made)


def bootstrap_keys(
    context: ckks.Context | None = None,
    config: BootstrapConfig | None = None,
    *,
    progress: bool | None = None,
) -> Plan:
    """Make every key a bootstrap needs, and encode its linear transforms; returns the plan.

    The rotation keys (``plan.rotations``), the conjugation key and, with ``sparse_secret``, the
    two encapsulation keys, then the transforms' plaintexts at their levels: done once, so
    ``bootstrap`` itself only computes. A line on standard error counts the keys as they are made
    (``progress=None``: when standard error is a terminal).

    Raises:
        ValueError: in a context without the secret key (it cannot make keys), or a configuration
            that does not fit (see ``plan``).
    """
    ctx = ckks.current() if context is None else context
    if not isinstance(ctx, ckks.Context):
        raise TypeError(f"context must be a ckks.Context, got {type(ctx).__name__}")
    made = plan(ctx.params, config)
    if not ctx.has_secret_key:
        check_rotation_keys(ctx, made.rotations, "bootstrap")
    jobs: list[tuple[str, Callable[[], Any]]] = [
        (f"rotation {k}", functools.partial(ctx.rotation_key, k)) for k in made.rotations
    ]
    jobs.append(("conjugation", functools.partial(ctx.galois_key, 2 * ctx.params.n - 1)))
    h = made.config.sparse_secret
    if h is not None:
        jobs.append(("encapsulation", functools.partial(ctx.encapsulation_keys, h)))
    bar = Progress("bootstrap keys", len(jobs), progress)
    for i, (what, make) in enumerate(jobs, 1):
        bar.step(i, what)
        make()
    for lt in made.coeff_to_slot + made.slot_to_coeff:
        assert lt.level is not None  # the plan gives each its level
        lt.encode(lt.level, ctx)
    bar.finish(f"{len(jobs)} made, transforms encoded")
    return made


def _times(ct: ckks.Ciphertext, c: complex) -> ckks.Ciphertext:
    """``ct`` times ``c``, ``+-1`` or ``+-i`` (a signed monomial): exact, no scale, no level."""
    ctx = context_of(ct)
    return ckks.multiply(ct, ctx.encode(c, ct.level, 1.0), rescale=False)


def _transformed(x: ckks.Ciphertext, lt: LinearTransform) -> ckks.Ciphertext:
    """``lt(x)``, noted within ``|x|`` times ``lt.row_norm`` (the DFT keeps sizes), ``normal``."""
    out = within(lt(x), bound_of(x) * lt.row_norm)
    rms = None if x.noise is None else x.noise.normal
    if rms is not None and out.noise is not None and out.noise.normal is not None:
        out = normal(out, min(out.noise.normal / out.scale, rms / x.scale * lt.row_norm))
    return out


def _real(ct: ckks.Ciphertext) -> ckks.Ciphertext:
    return dataclasses.replace(ct, real=True)  # the slots are real: read them so


@in_region("eval_mod")
def eval_sine(ct: ckks.Ciphertext, made: Plan) -> ckks.Ciphertext:
    """Stage 3, EvalMod before its ``1 / (2 pi)``: ``sin(2 pi (K + 1) y)`` on every real slot.

    For ``y`` in ``[-1, 1]``, from the cosine's series and the double angles, then with
    ``arcsine`` ``c + c^3 / 6`` (``2 pi x`` for ``x = (K + 1) y`` near an integer, rather than
    its sine); ``config.eval_mod_depth`` levels down. The bootstrap runs it at ``EVAL_SCALE``.
    """
    config = made.config
    # the noise model: the stage's own noise on an input without error, then the input's error
    # times the slope of sin(2 pi (K + 1) y) (which the powers' and double angles' bounds would
    # overstate: the angles' own bounds keep them off 1); in range, |x| <= x_bound, so the values
    # are at most sin(2 pi x_bound)
    r, series = config.double_angle, evaluate_polynomial(_real(exact(ct)), made.cosine)
    c = double_angles(series, r, angle_bounds(config.K, r, config.x_bound))
    c = within(c, min(1.0, 1.01 * math.sin(2 * math.pi * config.x_bound)))
    if config.arcsine:  # arcsin(c) = c + c^3 / 6 + ..., c = sin(2 pi x) small
        ctx = context_of(c)
        c = ckks.multiply(c, ctx.encode(1 / 6, c.level, made.sixth)) * (c * c) + c
        c = within(c, 1.01 * 2 * math.pi * config.x_bound)
    return carried(c, ct, 2 * math.pi * (config.K + 1))


@in_region("bootstrap")
def bootstrap(
    ct: ckks.Ciphertext,
    config: BootstrapConfig | None = None,
    *,
    iterations: int = 1,
    precision: int | None = None,
    stages: dict[str, ckks.Ciphertext] | None = None,
) -> ckks.Ciphertext:
    """The same slots at ``params.max_level - config.depth``: as many levels as the chain leaves.

    ``ct`` may be at any level (it is brought to level 0 first). The result's slots equal ``ct``'s
    up to the bootstrap's error (about ``2^-32``, ``2^-27`` and ``2^-21`` of the values with the
    presets boot-toy, boot-n12 and boot-n16), at ``ct``'s scale (exactly tracked, as always).
    With ``config.slots`` below ``n/2``, the message must be repeated ``n / 2 / slots`` times
    (``numpy.tile``). With ``iterations=2`` the first bootstrap's error is bootstrapped too and
    taken away (``ren.circuits.ckks.iterate``): ``precision`` bits more, down to the input's own
    noise, one level lower (over 40 bits with boot-n12-precise, at the scale ``2^53``).

    Args:
        ct: a two-part ciphertext whose values are at most about 1 in size (the message's
            coefficients must be small next to ``q_0``).
        config: the configuration (default: the preset's, ``BootstrapConfig.for_params``).
        iterations: how many bootstraps, an int from 1; from 2, each is a region
            (``iteration 1``, ...) and the result is one level lower.
        precision: with ``iterations >= 2``, the error is brought up by ``2^precision`` before
            its bootstrap (``None``: ``iterate.default_precision``, ``floor(25 - log2(n) / 2)``).
        stages: a dict to receive each stage's output (the last iteration's), lazy like the
            result (for teaching and for the debugger's ``watch``; taking them changes nothing
            that is computed): ``"mod_raise"`` (``t + q_0 I`` at the top level, read as
            ``t / 2^60``: not slots), ``"coeff_to_slot"`` (the coefficients of ``t / q_0``,
            bit-reversed, divided by ``2 (K + 1)``), ``"eval_mod"`` (``2 pi`` times the
            message's coefficients at the input's scale, bit-reversed, ``c_k + i c_(k + n/2)``;
            without ``arcsine``, the sine of it) and ``"slot_to_coeff"`` (that bootstrap's
            result).

    Raises:
        TypeError: for anything but a ciphertext, or a configuration, ``iterations`` or
            ``precision`` of the wrong type.
        ValueError: a three-part ciphertext, a configuration that does not fit the chain, in an
            evaluation-only context missing keys (naming the rotations), ``iterations`` or
            ``precision`` out of range, or a chain or input scale that cannot hold a second
            iteration (``iterate.check_iterations``), before any graph is built.
    """
    ctx = context_of(ct)
    if ct.size != 2:
        raise ValueError("bootstrap needs a two-part ciphertext: relinearize first")
    made = plan(ctx.params, config)
    if not ctx.has_secret_key:
        check_rotation_keys(ctx, made.rotations, "bootstrap")
        if made.config.sparse_secret is not None:
            ctx.encapsulation_keys(made.config.sparse_secret)  # the error names what is missing
    p = check_iterations(iterations, precision, ct.scale, made.config, ctx.params)
    check_scale(ct, made.config, ctx.params)  # metadata only: a RangeWarning
    if iterations == 1:
        return _once(ct.at_level(0), made, stages)
    return iterate(ct, lambda x, st: _once(x, made, st), int(iterations), p, stages)


def _once(x: ckks.Ciphertext, made: Plan, stages: dict | None) -> ckks.Ciphertext:
    """One bootstrap of ``x`` (at level 0): its four stages, each a region."""
    ctx = context_of(x)
    q0 = float(ctx.params.q_moduli[0])
    scale, real, given, c = x.scale, x.real, x, made.config
    x = raise_modulus(x, made, lift=LIFT)  # read as t / EVAL_SCALE
    # its slots sum n coefficients t + q_0 I of random signs, I of variance (h + 1) / 12 for a
    # secret of weight h: a slot's deviation is q_0 sqrt(n (h + 2) / 12), its largest about 5 of it
    h = c.sparse_secret if c.sparse_secret is not None else secret_weight(ctx.params)
    # checked where a tool decrypts it (the report, the debugger): on the stage's own output
    expect(x, RaisedRange(ctx.params.q_moduli[0], c.K, c.x_bound, scale, EVAL_SCALE))
    out = {} if stages is None else stages
    out["mod_raise"] = x
    deviation = q0 * math.sqrt(ctx.params.n * (h + 2) / 12) / EVAL_SCALE
    x = normal(within(x, 5 * deviation), deviation)
    if made.sub_sum:
        with region("sub_sum"):
            noted("in", x)
            for k in made.sub_sum:
                x = x + x.rotate(k)
            noted("out", x)
    with region("coeff_to_slot"):
        noted("in", x)
        for lt in made.coeff_to_slot:
            with region(f"level {lt.level}"):  # one transform a level: steppable one by one
                noted("in", x)
                x = _transformed(x, lt)
                noted("out", x)
        # the slots hold (t / q_0 + I) / (2 (K + 1)), within 1/2, whatever the bounds' arithmetic
        out["coeff_to_slot"] = x = within(x, 1.0)
        noted("out", x)
        xc = x.conjugate()
        re, im = _real(x + xc), _real(_times(x - xc, -1j))
    if made.packed:
        v = eval_sine(re + im.rotate(-made.slots), made)
    else:
        v = eval_sine(re, made) + _times(eval_sine(im, made), 1j)
    v = dataclasses.replace(v, scale=v.scale * scale / q0)  # (m + e) / q_0 read as (m + e) / scale
    v = within(v, 2.02 * math.pi * coefficients(given)[0])  # 2 pi c_i: the message's coefficients
    out["eval_mod"] = v
    with region("slot_to_coeff"):
        noted("in", v)
        for lt in made.slot_to_coeff:
            with region(f"level {lt.level}"):
                noted("in", v)
                v = _transformed(v, lt)
                noted("out", v)
        # the input's error is part of its message t: it comes out as it went in
        v = carried(dataclasses.replace(v, real=real), given, 1.0)
        v = within(v, bound_of(given))  # the input's message again, whatever the bounds say
        v, ratio = approximated(v, given, made, h), v.scale / scale
        if given.shadow is not None:  # measured against the input's values, as it is predicted
            v = dataclasses.replace(v, shadow=Shadow(lambda s: s * ratio, given.shadow))
        out["slot_to_coeff"] = v
        noted("out", v)
    return v
