"""The components of a predicted CKKS error (``ren.schemes.ckks.noise``), and how they combine.

A component is an error of one origin: its slot variances by power of ``|s_j|^2``, how many
independent values it takes over the slots, and the rotation it has been through. Copies of one
error (a value and its rotations) share a source, so their sums are counted as what they are.
"""

from __future__ import annotations

import dataclasses
import itertools
import math

__all__ = ["COMPONENTS", "DEGREE", "SOURCES", "Part", "limit", "merge", "new_part", "shifted"]

#: The powers of ``|s_j|^2`` kept (``var[0] .. var[DEGREE]``): higher ones come from products of
#: two errors, far below the terms kept.
DEGREE = 2


def _pad(var: tuple[float, ...]) -> tuple[float, ...]:
    return tuple(var[: DEGREE + 1]) + (0.0,) * (DEGREE + 1 - len(var))


#: The most components a ``Noise`` keeps apart; past it the smallest are merged.
COMPONENTS = 12

#: Where each component and message comes from: a new number each.
SOURCES = itertools.count(1)


@dataclasses.dataclass(frozen=True)
class Part:
    """One component of an error: the variances, how many slots it varies over, where from.

    Attributes:
        var: ``var[k]``: its slot variance (words squared) in ``|s_j|^(2k)``.
        spread: how many independent values it takes over the slots: all of them for a fresh
            error, fewer once rotated copies of it are added (a sum of every slot takes one
            value in all).
        source: the step that made it; ``offset``: the rotation it has been through since.
    """

    var: tuple[float, ...]
    spread: float
    source: int
    offset: int = 0

    def scaled(self, f2: float) -> Part:
        """This component with its variances times ``f2``."""
        return dataclasses.replace(self, var=tuple(v * f2 for v in self.var))


def new_part(var: tuple[float, ...], spread: float) -> Part:
    """A new independent component (a source of its own), ``var`` padded to ``DEGREE``."""
    return Part(_pad(var), float(spread), next(SOURCES))


def merge(parts: tuple[Part, ...], sub: int | None = None) -> tuple[Part, ...]:
    """Components of one source combined: at one offset coherently, at others as rotations.

    Copies at the same offset are the same error on the same slots: their amplitudes add
    (``(sqrt v_1 + sqrt v_2)^2``, as if of one sign), or, an exact copy in the parts from
    ``sub`` on (subtracted), cancel (``x - y`` for a ``y`` that carries ``x``'s error as it is).
    Copies at other offsets are one error on other slots: variances add, and the sum takes half
    as many independent values (``x + rot(x)`` pairs the slots up).
    """
    out: dict[int, Part] = {}
    for i, p in enumerate(parts):
        have = out.get(p.source)
        if have is None:
            out[p.source] = p
        elif have.offset == p.offset:
            # an exact copy subtracted cancels (a bootstrap's x - y); a scaled one (its sign not
            # kept, a product's scaled slot by slot) adds, at worst
            sign = -1.0 if sub is not None and i >= sub and have.var == p.var else 1.0
            var = tuple(
                (math.sqrt(a) + sign * math.sqrt(b)) ** 2
                for a, b in zip(have.var, p.var, strict=True)
            )
            out[p.source] = dataclasses.replace(have, var=var, spread=min(have.spread, p.spread))
        else:
            var = tuple(a + b for a, b in zip(have.var, p.var, strict=True))
            spread = max(1.0, min(have.spread, p.spread) / 2)
            out[p.source] = dataclasses.replace(have, var=var, spread=spread)
    return limit(tuple(out.values()))


def limit(parts: tuple[Part, ...]) -> tuple[Part, ...]:
    """At most ``COMPONENTS`` components: the smallest merged into one (the widest spread)."""
    if len(parts) <= COMPONENTS:
        return parts
    ranked = sorted(parts, key=lambda p: sum(p.var), reverse=True)
    keep, rest = ranked[: COMPONENTS - 1], ranked[COMPONENTS - 1 :]
    var = tuple(sum(p.var[k] for p in rest) for k in range(DEGREE + 1))
    return (*keep, new_part(var, max(p.spread for p in rest)))


def shifted(p: Part, r2: float) -> Part:
    """``p`` times a normal value of mean square ``r2``: a power of ``|s_j|^2`` up (last: mean)."""
    v = [0.0] * (DEGREE + 1)
    for k, x in enumerate(p.var):
        if k < DEGREE:
            v[k + 1] += x * r2
        else:
            v[DEGREE] += x * r2 * (DEGREE + 1)
    return dataclasses.replace(p, var=tuple(v))
