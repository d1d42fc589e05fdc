"""Composite polynomials ``p_K(... p_1(p_0(x)))``, their noise predicted as of one function.

A composite (``functions.sign``'s ``g_3`` and ``f_3`` steps) evaluates one polynomial after
another, each with ``evaluate_polynomial``. Predicted stage by stage, each stage would carry its
input's error by its own largest slope, and the product of those is far above the composite's: a
slot where one stage is steep is taken where the next is flat (``g_3``'s slope is largest at
``|x| = 1``, 6.9, and it takes 1 to 0.75, where the next ``g_3``'s is 1.5). Here an error made
before stage ``i`` reaches stage ``k``'s output times the composite's own largest slope from ``i``
to ``k``, over the input's range, on the same slot at every stage, and it takes its largest values
on the share of the slots where that slope is near its largest, for slots spread evenly over the
range (the mean of its square over its largest's): a share of 1.6 % after three ``g_3``.

For slots that all sit where the slope is largest, the prediction is then optimistic by at most
the difference between the largest error of that share of the slots and of all of them: about a
bit at 32 slots, a third of one at ``2^15``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from ren.circuits.ckks.polynomial import evaluate_polynomial
from ren.schemes import ckks

__all__ = ["chain_slopes", "evaluate_composite"]

#: The points of the input's range the slopes are taken on.
POINTS = 16385


def chain_slopes(
    stages: Sequence[np.ndarray], interval: tuple[float, float]
) -> list[list[tuple[float, float]]]:
    """``chain[i][k]``: the composite's slope from stage ``i`` to stage ``k`` over the slots.

    ``(largest, share)``: the largest ``|d x_(k+1) / d x_i|`` for inputs ``x_0`` in
    ``interval`` (``x_(k+1)`` is stage ``k``'s output, of monomial coefficients ``stages[k]``),
    and the mean of its square over that largest's square: the share of the slots where it is
    near its largest, for slots spread evenly there. ``(1, 1)`` for ``k < i``.
    """
    poly = np.polynomial.polynomial
    x = np.linspace(interval[0], interval[1], POINTS)
    slopes = []
    for coeffs in stages:
        slopes.append(np.abs(poly.polyval(x, poly.polyder(coeffs))))
        x = poly.polyval(x, coeffs)
    chain = [[(1.0, 1.0)] * len(stages) for _ in stages]
    for i in range(len(stages)):
        run = np.ones_like(x)
        for k in range(i, len(stages)):
            run = run * slopes[k]
            top = float(np.max(run))
            chain[i][k] = (top, float(np.mean(run * run)) / (top * top) if top > 0 else 1.0)
    return chain


def evaluate_composite(
    ct: ckks.Ciphertext, stages: Sequence[np.ndarray], interval: tuple[float, float]
) -> ckks.Ciphertext:
    """``stages[-1](... stages[0](x))`` on every slot, each of monomial coefficients.

    ``interval``: where ``ct``'s slots lie, for the noise model only (an odd composite: the
    positive half of a symmetric range is enough). Each stage is ``evaluate_polynomial``'s region
    of its own; the levels are the sum of theirs.
    """
    chain = chain_slopes(stages, interval)
    made: dict[int, tuple[int, float]] = {}  # source -> (the stage it entered at, its spread)
    for part in () if ct.noise is None else ct.noise.parts:
        made[part.source] = (0, part.spread)
    x = ct
    for k, coeffs in enumerate(stages):
        x = _ready(x, made, chain, k)  # each error at its slope to stage k's output: carried by 1
        x = evaluate_polynomial(x, coeffs, basis="monomial", slope=1.0)
        for part in () if x.noise is None else x.noise.parts:
            made.setdefault(part.source, (k + 1, part.spread))  # stage k's own error
    return x


def _ready(
    x: ckks.Ciphertext,
    made: dict[int, tuple[int, float]],
    chain: list[list[tuple[float, float]]],
    k: int,
) -> ckks.Ciphertext:
    """``x``'s error components made ready for stage ``k`` to carry by 1.

    A component that entered at stage ``i`` (``made``: the stage and its spread then; one not
    listed is taken as the input's) is at ``chain[i][k - 1]``'s slope times its first size, and
    goes to ``chain[i][k]``'s, over its share of the slots it took values on.
    """
    if x.noise is None:
        return x
    parts = []
    for part in x.noise.parts:
        i, spread = made.get(part.source, (0, part.spread))
        before = chain[i][k - 1][0] if k > i else 1.0
        top, share = chain[i][k]
        f = top / before if before > 0 else 0.0
        parts.append(dataclasses.replace(part.scaled(f * f), spread=max(1.0, spread * share)))
    return dataclasses.replace(x, noise=dataclasses.replace(x.noise, parts=tuple(parts)))
