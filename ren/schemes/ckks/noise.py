"""Predicted precision: an average-case estimate of each CKKS ciphertext's error, without running.

Every ciphertext the evaluator makes carries a :class:`Noise` beside its lazy graph: a few floats
each operation computes from its operands' (no kernel runs, no key is read). It describes the
error ``z_j`` of slot ``j`` of the decryption, in words (times the scale: absolute, so reading a
value at another scale changes nothing), as a complex normal variable whose variance depends on
the slot through the secret: ``E |z_j|^2 = sum_k var[k] |s_j|^(2k)``, where ``s_j`` is the slot
``j`` of the secret over its root mean square (``|s_j|^2`` is about exponential with mean 1,
``s(zeta_j)`` being a sum of ``H`` signed roots of unity). A term ``u s`` (a rounding of the
second part, times the secret) has slots ``u_j s_j``, so the slots where the secret is large
carry most of the largest errors: the maximum over ``n/2`` slots is heavier-tailed than a normal
variable's, and :func:`max_error` takes that into account. ``bound`` bounds the message's slots
(in words), for the error a product adds: ``m_1 z_2 + m_2 z_1 + z_1 z_2``.

The steps' variances are the table of the guide "How much precision will I get?"
(``ren.schemes.rlwe.noise`` gives them for coefficients; ``V`` makes a slot variance ``n V``).

Circuits that know better than the bounds' arithmetic (a polynomial's values stay in its range;
a linear transform's are not the sum of their diagonals' bounds) say so with :func:`bounded`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ren.schemes.ckks.parts import DEGREE, SOURCES, Part, limit, merge, new_part, shifted
from ren.schemes.ckks.tails import FLOAT_FLOOR, max_error, precision_bits
from ren.schemes.rlwe import noise as rlwe_noise

__all__ = [
    "FLOAT_FLOOR",
    "Noise",
    "Part",
    "add",
    "bound_of",
    "bounded",
    "carried",
    "exact",
    "fresh",
    "key_switch",
    "magnitude",
    "max_error",
    "multiply",
    "normal",
    "plain",
    "precision_bits",
    "renewed",
    "rescale",
    "times",
    "within",
]


@dataclasses.dataclass(frozen=True)
class Noise:
    """A ciphertext's predicted error, as components (``Part``), and a bound on its values.

    Attributes:
        parts: the error's components: independent of each other unless they share a
            ``source`` (then they are copies of one error, rotated by their ``offset``).
        bound: a bound on the message's slots, in words (``max |v| * scale``).
        mass: a bound on the sum of their sizes (``sum |v| * scale``): a value padded with
            zeros, or a product by one, has far less than ``bound`` in every slot.
        origin: ``(source, offset, mass)`` of the message: values rotated from one message
            share its source, and a sum of them at other offsets (a sum of slots) takes each
            slot of it once, so it is at most its ``mass``.
        relative: the error of a value inside a circuit that follows its own error apart
            from its input's (``exact``), which it adds back at its output (``carried``): not
            the value's whole error, so no precision is predicted from it.
        normal: the slots' root mean square (words) when they are spread like a complex normal
            variable's (``normal``), else ``None``: an error times them moves up a power of
            ``|s_j|^2`` (``parts.shifted``) rather than taking ``bound^2`` on every slot.
        peak: a bound on the message's coefficients (words): the encoder's, kept by sums,
            numbers and automorphisms (a bootstrap's approximation error grows with it).
        power: a bound on ``sum |v_j|^2`` (words squared): the encoder's, through sums
            (Minkowski) and products (the sum of a square is the factor's power).
        support: at most how many slots the message is not zero on (the encoder counts them;
            sums add them, products keep the smaller): an error times it is zero on the
            others, so it takes at most that many values (a padded matrix's diagonals).
    """

    parts: tuple[Part, ...]
    bound: float
    mass: float = math.inf
    origin: tuple[int, int, float] = (0, 0, math.inf)
    relative: bool = False
    normal: float | None = None
    peak: float = math.inf
    power: float = math.inf
    support: float = math.inf

    @property
    def var(self) -> tuple[float, ...]:
        """The slot variances of the whole error, by power of ``|s_j|^2``."""
        return tuple(sum(p.var[k] for p in self.parts) for k in range(DEGREE + 1))

    def times(self, factor: float) -> Noise:
        """The error and the bound of ``factor`` times the value (``|factor|``)."""
        f = abs(factor)
        source, offset, mass = self.origin
        scaled = tuple(p.scaled(f * f) for p in self.parts)
        origin = (source, offset, mass * f)
        normal = None if self.normal is None else self.normal * f
        sizes = {"bound": self.bound * f, "mass": self.mass * f, "peak": self.peak * f}
        return Noise(scaled, **sizes, origin=origin, relative=self.relative, normal=normal,
                     power=self.power * f * f, support=self.support)  # fmt: skip

    def plus(self, var: tuple[float, ...], slots: int) -> Noise:
        """This noise with a new independent component of slot variances ``var``."""
        return dataclasses.replace(self, parts=limit((*self.parts, new_part(var, slots))))

    def rotated(self, steps: int, slots: int) -> Noise:
        """The error of the value rotated by ``steps`` (before the key switch's own noise)."""
        moved = tuple(dataclasses.replace(p, offset=(p.offset + steps) % slots) for p in self.parts)
        source, offset, mass = self.origin
        origin = (source, (offset + steps) % slots, mass)
        return dataclasses.replace(self, parts=moved, origin=origin)


def _message(
    bound: float,
    mass: float,
    peak: float = math.inf,
    power: float = math.inf,
    support: float = math.inf,
) -> dict[str, Any]:
    """The message fields of a new value: its sizes, and an origin of its own."""
    bound, power = min(bound, mass), min(power, bound * mass, mass * mass)
    origin, peak = (next(SOURCES), 0, mass), min(peak, bound)
    sizes = {"bound": bound, "mass": mass, "peak": peak, "power": power, "support": support}
    return {**sizes, "origin": origin}


def slot_terms(params: Any, terms: rlwe_noise.Terms) -> tuple[float, float]:
    """Coefficient variances ``(V_0, V_1)`` as slot variances ``(n V_0, n V_1)``.

    ``V_1`` (products with a polynomial the keys fix: the secret, a key's error) goes with
    ``|s_j|^2``: its slots are as heavy-tailed as the secret's terms, and where both appear they
    are taken as large on the same slots (a bound on the tail, not an average).
    """
    return (params.n * terms[0], params.n * terms[1])


def magnitude(pt: Any) -> float:
    """A plaintext's largest ``|value|`` (``Plaintext.magnitude``), or 1 when it is not known."""
    m = getattr(pt, "magnitude", None)
    return 1.0 if m is None else float(m)


def plain(params: Any, pt: Any) -> Noise:
    """An encoded plaintext: the rounding of its coefficients, and its values' bound.

    ``pt``'s ``rounding`` (the encoder measures it: ``0`` for values the scale holds exactly),
    else ``1/12``; its ``magnitude`` (``magnitude``), ``mass`` and ``peak``.
    """
    rounding = getattr(pt, "rounding", None)
    v = 1 / 12 if rounding is None else float(rounding)
    bound = magnitude(pt) * pt.scale
    mass = getattr(pt, "mass", None)
    mass = params.slots * bound if mass is None else float(mass) * pt.scale
    peak, power = getattr(pt, "peak", None), getattr(pt, "power", None)
    peak = math.inf if peak is None else float(peak) * pt.scale
    power = math.inf if power is None else float(power) * pt.scale**2
    support = getattr(pt, "support", None)
    message = _message(bound, mass, peak, power, math.inf if support is None else support)
    return Noise((new_part((params.n * v,), params.slots),), **message)


def fresh(params: Any, pt: Any) -> Noise:
    """An encryption of the plaintext ``pt``: its encoding's noise and the encryption's."""
    terms = slot_terms(params, rlwe_noise.fresh_terms(params))
    return plain(params, pt).plus(terms, params.slots)


def add(a: Noise, b: Noise, same: bool = False, sub: bool = False) -> Noise:
    """The sum (``sub``: difference) of two values: ``same`` when ``b`` is ``a`` itself."""
    if same:
        return a.times(0 if sub else 2)  # a - a is exactly zero
    parts = merge(a.parts + b.parts, len(a.parts) if sub else None)
    bound, mass, relative = a.bound + b.bound, a.mass + b.mass, a.relative or b.relative
    normal, peak = _normal_sum(a, b), a.peak + b.peak
    power = (math.sqrt(a.power) + math.sqrt(b.power)) ** 2  # Minkowski
    support = a.support + b.support
    if a.origin[0] == b.origin[0] != 0 and a.origin[1] != b.origin[1]:  # rotated copies: a sum
        within = max(a.origin[2], b.origin[2])
        origin = (a.origin[0], a.origin[1], within)
        bound = min(bound, within)
        peak = min(peak, bound)
        return Noise(parts, bound, mass, origin, relative, normal, peak, power, support)
    message = _message(bound, mass, peak, power, support)
    return Noise(parts, **message, relative=relative, normal=normal)


def _on(p: Part, by: Noise) -> Part:
    """``p`` times ``by``'s message: at most as many values as it has slots not zero."""
    return p if by.support >= p.spread else dataclasses.replace(p, spread=max(1.0, by.support))


def _normal_sum(a: Noise, b: Noise) -> float | None:
    """The sum's ``normal``: independent normal values' add in quadrature, one's copies add."""
    if a.bound == 0 or b.bound == 0:  # adding nothing (an error carried alone)
        return b.normal if a.bound == 0 else a.normal
    if a.normal is None or b.normal is None:
        return None
    if a.origin[0] == b.origin[0] and a.origin[1] == b.origin[1]:
        return a.normal + b.normal
    return math.sqrt(a.normal**2 + b.normal**2)


def multiply(a: Noise, b: Noise, same: bool = False) -> Noise:
    """The product of two values (a ciphertext or plaintext ``b``), before any rescale.

    ``m_1 z_2 + m_2 z_1 + z_1 z_2``: each component of one side times the other's bound
    squared (a value by itself: ``2 m z``, four times) or by a ``normal`` value's mean square a
    power of ``|s_j|^2`` up (``parts.shifted``), and the product of the two errors. A component
    times a message of ``support`` slots is zero on the others: it takes at most that many
    values. The sum of a square's sizes is its factor's power; of a product, at most
    ``sqrt(power_1 power_2)``.
    """
    cross = [0.0] * (DEGREE + 1)
    for i, x in enumerate(a.var):
        for j, y in enumerate(b.var):
            if i + j <= DEGREE:
                cross[i + j] += x * y
    spread = max([p.spread for p in a.parts + b.parts], default=1.0)
    if same:
        lead = tuple(p.scaled(4 * a.bound * a.bound) for p in a.parts)
    else:
        ba, bb = a.bound * a.bound, b.bound * b.bound
        lead = tuple(
            _on(p.scaled(bb) if b.normal is None else shifted(p, b.normal**2), b) for p in a.parts
        ) + tuple(
            _on(p.scaled(ba) if a.normal is None else shifted(p, a.normal**2), a) for p in b.parts
        )
    parts = merge(lead)
    if any(cross):
        parts = limit((*parts, new_part(tuple(cross), spread)))
    if same:  # sum |a|^2 is a's power; sum |a|^4 at most its power times its largest squared
        mass, power = min(a.mass * a.bound, a.power), a.power * a.bound**2
    else:
        mass = min(a.mass * b.bound, b.mass * a.bound, math.sqrt(a.power * b.power))
        power = min(a.power * b.bound**2, b.power * a.bound**2)
    message = _message(a.bound * b.bound, mass, power=power, support=min(a.support, b.support))
    normal = None  # a normal value times a bounded one: normal, at most times the bound
    if not same and a.normal is not None and b.normal is None:
        normal = a.normal * b.bound
    elif not same and b.normal is not None and a.normal is None:
        normal = b.normal * a.bound
    return Noise(parts, **message, relative=a.relative or b.relative, normal=normal)


def times(a: Noise, factor: float, rounded: bool) -> Noise:
    """``a`` times a number's ``factor`` in words.

    ``rounded``: the factor was rounded to an int, so the message is off by ``|delta| <= 1/2``
    of itself on every slot (``bound^2 / 12`` more).
    """
    out = a.times(factor)
    spread = max([p.spread for p in a.parts], default=1.0)
    return out.plus((a.bound * a.bound / 12,), int(spread)) if rounded else out


def zero(a: Noise) -> bool:
    """Whether ``a`` is of an exact zero (``x - x``): key switches and rescales keep it zero."""
    return a.bound == 0 and not any(a.var)


def rescale(params: Any, a: Noise, q: float) -> Noise:
    """``a`` divided by ``q`` (rounded): a smaller error, plus the rounding of both parts."""
    if zero(a):
        return a
    terms = slot_terms(params, rlwe_noise.rounding_terms(params))
    return a.times(1 / q).plus(terms, params.slots)


def key_switch(params: Any, a: Noise, level: int) -> Noise:
    """``a`` after a key switch at ``level`` (relinearization, rotation, conjugation)."""
    if zero(a):
        return a
    return a.plus(slot_terms(params, rlwe_noise.key_switch_terms(params, level)), params.slots)


def bounded(a: Noise, bound: float) -> Noise:
    """``a`` with its message known to be at most ``bound`` words (a circuit knows better)."""
    normal = None if a.normal is None else min(a.normal, bound)
    power = min(a.power, bound * a.mass)
    return dataclasses.replace(
        a, bound=min(a.bound, bound), normal=normal, peak=min(a.peak, bound), power=power
    )


def exact(ct: Any) -> Any:
    """``ct`` taken as holding no error (its bound kept): to follow a circuit's own noise apart.

    A circuit that knows how its input's error reaches its output (a polynomial: by its slope)
    builds on ``exact(ct)`` and adds the input's error back with ``carried``. Nothing is built.
    """
    if ct.noise is None:
        return ct
    return dataclasses.replace(ct, noise=dataclasses.replace(ct.noise, parts=(), relative=True))


def carried(out: Any, source: Any, slope: float) -> Any:
    """``out`` with ``source``'s error added, times ``slope`` (from its scale to ``out``'s).

    ``out``'s own estimate (from ``exact``) is kept; ``None`` if either has none. The result is
    as ``relative`` as ``source``: its whole error, when the source's is.
    """
    if out.noise is None or source.noise is None:
        return dataclasses.replace(out, noise=None)
    f = slope * out.scale / source.scale
    moved = Noise(
        tuple(p.scaled(f * f) for p in source.noise.parts), **_message(0.0, 0.0, support=0)
    )
    whole = dataclasses.replace(add(out.noise, moved), relative=source.noise.relative)
    return dataclasses.replace(out, noise=whole)


def renewed(ct: Any, magnitude: float) -> Any:
    """``ct`` noted to hold another message, of at most ``magnitude`` (sum and origin unknown).

    ModRaise: its slots are no longer the input's values but those of ``t + q_0 I``, and its
    error is counted from there (not ``relative``): the message is the decryption itself.
    """
    if ct.noise is None:
        return ct
    fields = _message(magnitude * ct.scale, math.inf)
    fields["normal"] = None
    return dataclasses.replace(ct, noise=dataclasses.replace(ct.noise, **fields, relative=False))


def bound_of(ct: Any) -> float:
    """The bound on ``ct``'s slots, over its scale (``inf`` for a ciphertext without estimate)."""
    return math.inf if ct.noise is None else ct.noise.bound / ct.scale


def within(ct: Any, magnitude: float) -> Any:
    """``ct`` noted to hold slots of at most ``magnitude`` (a circuit knows better than bounds).

    A polynomial in the Chebyshev basis keeps ``|T_i(y)| <= 1`` for ``y`` in ``[-1, 1]``, where
    the arithmetic of bounds would find ``2 |T_h| |T_g| + |T_j|``; its value is at most the
    series' largest ``|p|`` there. Only the predicted error's bound changes (nothing is built);
    a ciphertext without an estimate is returned as it is.
    """
    if ct.noise is None:
        return ct
    return dataclasses.replace(ct, noise=bounded(ct.noise, magnitude * ct.scale))


def normal(ct: Any, rms: float) -> Any:
    """``ct`` noted to hold slots spread like a complex normal's, of root mean square ``rms``.

    ModRaise's slots sum ``n`` coefficients ``t + q_0 I`` of random signs: a plaintext product
    in CoeffToSlot then makes an error as large as the slot it multiplies, not as the largest
    slot (``Noise.normal``). Over its scale, as ``within``; nothing is built.
    """
    if ct.noise is None:
        return ct
    return dataclasses.replace(ct, noise=dataclasses.replace(ct.noise, normal=rms * ct.scale))
