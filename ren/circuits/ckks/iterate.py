"""Iterated bootstrapping: a second bootstrap of the first one's error, for more bits than one.

One bootstrap keeps about 21 to 32 bits (its error is fixed next to ``q_0``), however finely the
input holds its message. Bae, Cheon, Cho, Kim and Kim ("Meta-BTS: Bootstrapping precision beyond
the limit", CCS 2022) bootstrap the error too, as OpenFHE's ``EvalBootstrap(ct, 2, precision)``
and Lattigo's high-precision bootstrapping do. For an input ``x`` at level 0 and ``p`` bits:

1. ``y = bootstrap(x)``: the slots of ``x`` up to an error ``e``, at the output level;
2. ``d = (x - y) 2^p``, at level 0 (``y``'s limbs dropped, its scale read as ``x``'s; the product
   by the int ``2^p`` is exact and takes no level): the slots ``-e 2^p``, back in the range a
   bootstrap keeps to its precision;
3. ``y + bootstrap(d) 2^-p``: the product by ``2^-p`` takes a level, so the error is that of the
   second bootstrap divided by ``2^p``, down to the input's own noise.

A third iteration takes the difference again, times ``2^(2p)``, and so on. Each iteration is a
region of the bootstrap (``iteration 1``, ``iteration 2``, ...), each holding the usual stages;
each iteration's output carries the input's plaintext shadow, so the report and the debugger
measure it against the slots the bootstrap should give.

**Precision.** ``default_precision``: ``p = floor(25 - log2(n) / 2)``. The sine's identity errs
by ``RELATIVE = 2^-25.1`` of the values at the edge of the range, and a bootstrap's noise grows as
``sqrt(n)`` (a slot sums ``n`` coefficients' errors), so ``2^-p`` is a bound on one bootstrap's
error with bits to spare: ``p`` is 22 at ``n = 64``, 19 at ``n = 4096`` and 17 at ``n = 65536``,
where one bootstrap keeps about 32, 27 to 29 and 21 bits. The error times ``2^p`` then stays well
inside the range (a larger one would come back wrong, not merely imprecise).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from ren.circuits.ckks.bootconfig import BootstrapConfig
from ren.ir.region import noted, region
from ren.poly import is_int
from ren.schemes import ckks
from ren.schemes.ckks.noise import carried, exact, max_error, within
from ren.schemes.ckks.ranges import RELATIVE
from ren.schemes.rlwe.bytes import describe

__all__ = ["MAX_PRECISION", "check_iterations", "default_precision", "iterate", "sure_bits"]

#: The largest ``precision``: one bootstrap keeps about 32 bits at best (``boot-toy``), and
#: ``2^precision`` times its error must stay inside the bootstrap's range.
MAX_PRECISION = 30

Once = Callable[[ckks.Ciphertext, dict[str, ckks.Ciphertext] | None], ckks.Ciphertext]


def sure_bits(params: ckks.Params) -> int:
    """``floor(log2(1 / RELATIVE) - log2(n) / 2)``: bits one bootstrap keeps at the least.

    The identity's relative error at the edge of the range (25.1 bits), less the growth of the
    noise with ``sqrt(n)``: 22, 19 and 17 at ``n`` = 64, 4096 and 65536 (the presets measure
    about 32, 27 and 21).
    """
    return math.floor(-math.log2(RELATIVE) - math.log2(params.n) / 2)


def default_precision(params: ckks.Params) -> int:
    """The ``precision`` an iterated bootstrap takes when given none: ``sure_bits(params)``."""
    return sure_bits(params)


def check_iterations(
    iterations: object,
    precision: object,
    scale: float,
    config: BootstrapConfig,
    params: ckks.Params,
) -> int:
    """The precision ``p`` an iterated bootstrap uses (0 for one iteration), once checked.

    Args:
        iterations: an int, at least 1.
        precision: ``None`` (``default_precision``) or an int from 1 to ``MAX_PRECISION``; only
            with ``iterations >= 2``.
        scale: the input's scale.
        config: the checked configuration.
        params: the parameters.

    Raises:
        TypeError: for ``iterations`` or ``precision`` of the wrong type.
        ValueError: for a value out of range, or a chain or scale that cannot hold a second
            iteration: no level left under the bootstrap's output for the product by ``2^-p``;
            an input scale below ``2^(sure_bits + p)``, too coarse to hold ``p`` bits past one
            bootstrap's; a factor ``2^((iterations - 1) p)`` past ``q_0 / 2``.
    """
    if not is_int(iterations):
        raise TypeError(f"iterations must be an int, got {describe(iterations)}")
    if iterations < 1:
        raise ValueError(f"iterations must be at least 1, got {iterations}")
    its = int(iterations)
    if precision is not None and not is_int(precision):
        raise TypeError(f"precision must be None or an int, got {describe(precision)}")
    if its == 1:
        if precision is not None:
            raise ValueError(
                f"precision={precision} is the factor of the second iteration's input: "
                "pass it with iterations >= 2, or leave it None"
            )
        return 0
    p = default_precision(params) if precision is None else int(precision)
    if not 1 <= p <= MAX_PRECISION:
        raise ValueError(
            f"precision must be from 1 to {MAX_PRECISION}, got {p}: the first bootstrap's error "
            f"times 2^precision must stay inside the bootstrap's range (one bootstrap keeps "
            f"at most about 32 bits)"
        )
    left = config.levels_left(params)
    if left < 1:
        raise ValueError(
            f"iterations={its} needs a level under the bootstrap's output, for the product by "
            f"2^-{p}: this configuration uses {config.depth} of the chain's {params.max_level} "
            "levels and leaves 0; add a modulus at the user levels (the presets "
            "boot-n12-precise and boot-n16-precise are made for it)"
        )
    need = sure_bits(params) + p
    if math.log2(scale) < need:
        raise ValueError(
            f"iterations={its} with precision={p} needs an input scale of at least 2^{need}, "
            f"got 2^{math.log2(scale):.1f}: a second iteration gains p bits past the "
            f"{sure_bits(params)} one bootstrap keeps at the least (sure_bits) only when the "
            "input holds them; use a larger scale (the presets boot-n12-precise and "
            "boot-n16-precise, scale 2^53) or a smaller precision"
        )
    q0 = params.q_moduli[0]
    if 2 ** ((its - 1) * p + 1) >= q0:
        raise ValueError(
            f"iterations={its} with precision={p} multiplies the last difference by "
            f"2^{(its - 1) * p}, which is not below q_0 / 2 (q_0 has {q0.bit_length()} bits): "
            "use fewer iterations or a smaller precision"
        )
    return p


def iterate(
    ct: ckks.Ciphertext,
    once: Once,
    iterations: int,
    precision: int,
    stages: dict[str, ckks.Ciphertext] | None,
) -> ckks.Ciphertext:
    """``iterations`` bootstraps of ``ct`` (module docstring), each in a region of its own.

    ``once(x, stages)`` is one bootstrap of ``x`` at level 0; ``stages`` goes to the last
    iteration's. The result is one level below a single bootstrap's, at ``ct``'s scale, and
    carries ``ct``'s shadow (the slots it should decrypt to).
    """
    x = ct.at_level(0)
    with region("iteration 1"):
        noted("in", x)
        # read at the input's scale (they agree to rounding), so the differences are exact
        out = dataclasses.replace(once(x, None), scale=x.scale, shadow=x.shadow)
        noted("out", out)
    for i in range(2, iterations + 1):
        k = (i - 1) * precision
        with region(f"iteration {i}"):
            noted("in", out)
            error = ckks.multiply(x - out.at_level(0), 2**k)  # exact: the words times 2^k
            if out.noise is not None:  # values no larger than the error left (4 times its median)
                left = max_error(out.noise, out.ring.n // 2, out.real) / out.scale  # over the slots
                error = within(error, 2**k * 4 * left)
            # the noise model: the earlier error cancels, so the result errs by the input's
            # error and this bootstrap's own noise, 2^-k of it (what exact() follows apart)
            fix = ckks.multiply(once(exact(error), stages if i == iterations else None), 2.0**-k)
            out = carried(dataclasses.replace(out + fix, noise=fix.noise), x, 1.0)
            out = dataclasses.replace(out, shadow=x.shadow)
            noted("out", out)
    return out
