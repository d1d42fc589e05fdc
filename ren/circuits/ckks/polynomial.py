"""Polynomials on CKKS ciphertexts: baby-step giant-step in the Chebyshev basis, at minimal depth.

``evaluate_polynomial(ct, coeffs, basis, interval)`` computes ``p(x)`` on every slot of ``ct``:
``sum_j c_j T_j(y)`` with ``y = (2x - a - b) / (b - a)`` the slot mapped from ``interval = (a, b)``
to ``[-1, 1]`` (``basis="chebyshev"``), or ``sum_j c_j x^j`` (``basis="monomial"``, rewritten in the
Chebyshev basis of ``y`` first). Coefficients below ``TOLERANCE`` times the largest are left out,
so an odd function costs no even terms. ``plan`` says, before anything is built, how many levels
and ciphertext products it takes; ``depth(degree, interval)`` gives the levels of a dense series.

**The algorithm** (Paterson and Stockmeyer's baby-step giant-step, in the Chebyshev basis, as
Lattigo's ``he.EvaluatePolynomial`` and OpenFHE's ``EvalChebyshevSeriesPS`` evaluate series;
Bossuat, Mouchet, Troncoso-Pastoriza and Hubaux, *Efficient bootstrapping for approximate
homomorphic encryption with non-sparse keys*, 2021, section 4.2). The *powers* are ``T_i(y)``:
baby steps ``T_2 .. T_(k-1)`` and giant steps ``T_m`` for powers of two ``m``, each made by one
product, ``T_2m = 2 T_m^2 - 1`` or ``T_i = 2 T_h T_(i-h) - T_(2h-i)`` (``h`` the largest power of
two below ``i``), so ``T_i`` lies ``ceil(log2 i)`` levels below ``y``. The series is divided by
``T_m``, ``m`` the largest power of two not above its degree: ``p = q T_m + r``
(``chebyshev.divide``), and ``q`` and ``r`` are evaluated the same way, down to *leaves*, series
whose every term is a power made already: a leaf is ``sum c_i T_i``, products by numbers only.

**Depth.** A leaf whose largest term is ``T_i`` delivers one level below ``T_i``; ``q T_m`` one
below the lower of ``q`` and ``T_m``. Each call is asked for its result at a level and takes a leaf
when its terms are high enough, else a division, which reaches ``ceil(log2(d + 1))`` levels for
every degree ``d``: no evaluation beats it (a product at most doubles the degree), so a leaf that
cannot is divided again (as Lattigo's leading leaf). The map to ``[-1, 1]`` takes one more level
(a product by ``alpha = 2 / (b - a)``), none for an integer ``alpha`` or degree 1. Among baby-step
counts ``k`` from 2 to about ``2 sqrt(d)``, ``plan`` keeps the one with the fewest ciphertext
products at that depth: about ``2 sqrt(d) + log2(d)`` for a dense series.

**Scales** (Lattigo's scale-invariant evaluation). Each call is asked for its series at a level
``l`` and a scale ``S``, and returns it *before* its last rescale: at level ``l + 1`` and scale
exactly ``S q_(l+1)``. A leaf multiplies each ``T_i`` (scale ``s_i``, viewed at level ``l + 1``)
by the int ``round(c_i S q_(l+1) / s_i)`` (exact and elementwise; a plaintext encoded at scale
``S q_(l+1) / s_i`` for a complex ``c_i``), so every term is at scale ``S q_(l+1)`` and they add
exactly; ``c_0`` is added at that scale. A division asks for ``q`` at level ``l + 1`` and scale
``S q_(l+1) / s_m``, rescales it and multiplies by ``T_m`` unrescaled: scale ``S q_(l+1)``, as
``r``'s, so one rescale of the sum. The top call asks for the input's scale: the result has
exactly ``ct.scale``. Powers likewise: ``2 T_h T_(i-h)`` unrescaled, minus ``T_(2h-i)`` times
``round(s_h s_(i-h) / s_(2h-i))``. Every decision reads levels, scales and coefficients only,
never an encrypted value, so the evaluation is one lazy graph and ``ren.jit`` captures it whole.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ren.circuits import in_region
from ren.circuits.ckks.chebyshev import affine, check_interval, divide, monomial_to_chebyshev, peak
from ren.circuits.ckks.rotations import add_all, context_of, finite_numbers
from ren.poly import is_int
from ren.schemes import ckks
from ren.schemes.ckks.noise import carried, exact, within

__all__ = ["TOLERANCE", "Plan", "depth", "evaluate_polynomial", "plan"]

#: Coefficients at most this times the largest (in absolute value) are left out.
TOLERANCE = 1e-14


@dataclasses.dataclass(frozen=True, eq=False)
class _Leaf:
    """``sum_i c_i T_i``: every nonzero ``c_i`` (``i >= 1``) is of a power made already."""

    c: np.ndarray


@dataclasses.dataclass(frozen=True, eq=False)
class _Split:
    """``high T_m + low``."""

    m: int
    high: _Leaf | _Split
    low: _Leaf | _Split


@dataclasses.dataclass(frozen=True, eq=False)
class Plan:
    """How ``evaluate_polynomial`` evaluates a series: decided from the coefficients alone.

    Attributes:
        coeffs: the Chebyshev coefficients in ``y`` (in ``x`` when the map is folded), with the
            small ones zeroed and trailing zeros dropped.
        interval: ``(a, b)``.
        degree: the degree left after dropping small coefficients.
        depth: the levels the evaluation takes, the map included.
        map_levels: the levels the map to ``[-1, 1]`` takes (0 or 1).
        baby: ``k``: the baby steps are ``T_1 .. T_(k-1)`` (those the series uses).
        powers: the indices ``i >= 2`` of the powers ``T_i`` made, one product each.
        products: the ciphertext products in all (each one relinearization): the powers, and
            one per division with a non-constant quotient.
        tree: the leaves and divisions, as the evaluation walks them.
        alpha: the map's factor, an ``int`` when the map is a product by an int (1: no map).
        beta: the map's offset.
    """

    coeffs: np.ndarray = dataclasses.field(repr=False)
    interval: tuple[float, float]
    degree: int
    depth: int
    map_levels: int
    baby: int
    powers: tuple[int, ...]
    products: int
    tree: _Leaf | _Split = dataclasses.field(repr=False)
    alpha: int | float = dataclasses.field(repr=False)
    beta: float = dataclasses.field(repr=False)


def _ceil_log2(i: int) -> int:
    return (i - 1).bit_length()


def _trim(c: np.ndarray) -> np.ndarray:
    nonzero = np.flatnonzero(c)
    return c[: nonzero[-1] + 1] if nonzero.size else c[:1]


def _recipe(i: int) -> tuple[int, int, int]:
    """``(h, i - h, j)`` with ``T_i = 2 T_h T_(i-h) - T_j`` (``T_0 = 1``)."""
    h = 1 << (_ceil_log2(i) - 1)
    return h, i - h, 2 * h - i


class _Planner:
    """The leaves and divisions of a series for ``k`` baby steps, at the fewest levels."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.memo: dict[bytes, int] = {}

    def leaf_need(self, c: np.ndarray) -> int | None:
        used = np.flatnonzero(c[1:]) + 1
        if not used.size:
            return 0
        if any(i >= self.k and i & (i - 1) for i in used.tolist()):
            return None  # a term that is neither a baby step nor a power of two
        return 1 + _ceil_log2(int(used[-1]))

    def need(self, c: np.ndarray) -> int:
        """The fewest levels ``c`` takes below ``T_1``."""
        key = c.tobytes()
        if key not in self.memo:
            leaf = self.leaf_need(c)
            best = math.inf if leaf is None else leaf
            d = len(c) - 1
            if d >= 2 and best > d.bit_length():  # a division could do better
                m = 1 << (d.bit_length() - 1)
                q, r = (_trim(v) for v in divide(c, m))
                best = min(best, max(m.bit_length(), self.need(q) + 1, self.need(r)))
            self.memo[key] = int(best)
        return self.memo[key]

    def build(self, c: np.ndarray, budget: int) -> _Leaf | _Split:
        """The cheapest evaluation of ``c`` within ``budget`` levels (at least ``need(c)``)."""
        leaf = self.leaf_need(c)
        if leaf is not None and leaf <= budget:
            return _Leaf(c)
        d = len(c) - 1
        m = 1 << (d.bit_length() - 1)
        q, r = (_trim(v) for v in divide(c, m))
        return _Split(m, self.build(q, budget - 1), self.build(r, budget))


def _count(tree: _Leaf | _Split) -> tuple[tuple[int, ...], int]:
    """The powers a tree needs (closed under their recipes) and its ciphertext products."""
    wanted: set[int] = set()
    divisions = 0
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, _Leaf):
            wanted.update(i for i in (np.flatnonzero(node.c[1:]) + 1).tolist() if i >= 2)
        else:
            wanted.add(node.m)
            divisions += _constant(node.high) is None
            stack += [node.high, node.low]
    made: set[int] = set()
    todo = sorted(wanted)
    while todo:
        i = todo.pop()
        if i >= 2 and i not in made:
            made.add(i)
            todo += [j for j in _recipe(i) if j >= 2]
    return tuple(sorted(made)), len(made) + divisions


def _constant(node: _Leaf | _Split) -> float | complex | None:
    """The value of a constant series (a leaf of degree 0), else ``None``."""
    if isinstance(node, _Leaf) and len(node.c) == 1:
        c = complex(node.c[0])
        return c.real if c.imag == 0 else c
    return None


def _coefficients(coeffs: object, basis: object) -> np.ndarray:
    if not isinstance(basis, str):
        raise TypeError(f"basis must be 'chebyshev' or 'monomial', got {basis!r}")
    if basis not in ("chebyshev", "monomial"):
        raise ValueError(f"basis must be 'chebyshev' or 'monomial', got {basis!r}")
    arr = finite_numbers(coeffs, "coeffs")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"coeffs must be a non-empty 1-D sequence, got shape {arr.shape}")
    return arr.astype(complex if arr.dtype.kind == "c" else float)


def plan(
    coeffs: object, basis: str = "chebyshev", interval: tuple[float, float] = (-1.0, 1.0)
) -> Plan:
    """How ``evaluate_polynomial`` evaluates ``coeffs``: its depth, powers and products.

    Raises:
        TypeError: ``coeffs`` not numbers, ``basis`` not a string, ``interval`` not two numbers.
        ValueError: ``coeffs`` empty, not 1-D or not finite; an unknown ``basis``; ``a >= b``.
    """
    arr = _coefficients(coeffs, basis)
    a, b = check_interval(interval)
    alpha, beta = affine((a, b))
    c = monomial_to_chebyshev(arr, (a, b)) if basis == "monomial" else arr
    c = np.where(np.abs(c) <= TOLERANCE * np.max(np.abs(c)), 0, c)
    c = _trim(c)
    d = len(c) - 1
    map_levels = 0
    if (a, b) != (-1.0, 1.0):
        if d == 1:  # c_0 + c_1 (alpha x + beta): a series in x, no map
            c, alpha, beta = np.array([c[0] + c[1] * beta, c[1] * alpha]), 1, 0.0
        elif alpha == round(alpha):
            alpha = round(alpha)  # y = alpha x + beta with an int: exact, no level
        else:
            map_levels = 1
    best: tuple[int, int, int, _Leaf | _Split, tuple[int, ...]] | None = None
    for k in range(2, max(2, 2 * math.isqrt(d) + 2) + 1):
        planner = _Planner(k)
        need = planner.need(c)
        tree = planner.build(c, need)
        powers, products = _count(tree)
        if best is None or (need, products) < best[:2]:
            best = (need, products, k, tree, powers)
    assert best is not None
    need, products, k, tree, powers = best
    return Plan(c, (a, b), d, need + map_levels, map_levels, k, powers, products, tree, alpha, beta)


def depth(degree: int, interval: tuple[float, float] = (-1.0, 1.0)) -> int:
    """The levels ``evaluate_polynomial`` takes for a dense series of ``degree`` on ``interval``.

    ``ceil(log2(degree + 1))``, plus one for the map of an interval other than ``(-1, 1)``
    unless ``2 / (b - a)`` is an integer or the degree is 1. A sparse series may take fewer
    (``plan`` gives its figure).

    Raises:
        TypeError: ``degree`` not an int; ``interval`` not two numbers.
        ValueError: ``degree < 0``; ``a >= b``.
    """
    if not is_int(degree):
        raise TypeError(f"degree must be an int, got {degree!r} ({type(degree).__name__})")
    if degree < 0:
        raise ValueError(f"degree must be at least 0, got {degree}")
    a, b = check_interval(interval)
    alpha, _ = affine((a, b))
    mapped = (a, b) != (-1.0, 1.0) and degree > 1 and alpha != round(alpha)
    return int(degree).bit_length() + int(mapped)


@in_region("evaluate_polynomial")
def evaluate_polynomial(
    ct: ckks.Ciphertext,
    coeffs: object,
    basis: str = "chebyshev",
    interval: tuple[float, float] = (-1.0, 1.0),
    *,
    slope: float | None = None,
) -> ckks.Ciphertext:
    """``p(x)`` on every slot of ``ct``: ``ct``'s scale exactly, ``plan(...).depth`` levels down.

    Args:
        ct: a two-part ciphertext whose slots lie in ``interval`` (a Chebyshev series is accurate
            there only; outside, ``T_j`` grows like ``|y|^j``).
        coeffs: ``c_0, c_1, ...`` (real or complex) of ``T_j(y)`` (``basis="chebyshev"``) or of
            ``x^j`` (``basis="monomial"``).
        basis: ``"chebyshev"`` or ``"monomial"``.
        interval: ``(a, b)``; ``(-1, 1)`` means no map.
        slope: for the noise model only (nothing built changes): the largest ``|p'(x)|`` over
            the values ``ct``'s slots hold, when the caller knows them closer than ``interval``.
            ``ct``'s error reaches the result times it. Default: over the whole interval.

    Raises:
        TypeError: ``ct`` not a ciphertext, ``slope`` not a number; see ``plan`` for the others.
        ValueError: a three-part ``ct``, or one with fewer levels than the plan needs (the message
            gives both), a negative or infinite ``slope``; see ``plan`` for the others.
    """
    ctx = context_of(ct)
    p = plan(coeffs, basis, interval)
    if slope is not None:
        if isinstance(slope, bool) or not isinstance(slope, int | float):
            raise TypeError(f"slope must be a number or None, got {type(slope).__name__}")
        if not 0 <= slope < math.inf:
            raise ValueError(f"slope must be finite and at least 0, got {slope}")
    if ct.size != 2:
        raise ValueError("evaluate_polynomial needs a two-part ciphertext: relinearize first")
    if ct.level < p.depth:
        raise ValueError(
            f"a polynomial of degree {p.degree} on {p.interval} needs {p.depth} levels and the "
            f"ciphertext has {ct.level}: evaluate it before spending that many levels, or use "
            "more moduli (q_bits)"
        )
    if p.degree == 0:  # a constant: the ciphertext times the int 0, plus c_0
        constant: ckks.Ciphertext = ct * 0 + p.coeffs[0]
        return constant
    y = ct
    if p.map_levels:  # a product by a float: encoded at q_level and rescaled, ct's scale kept
        y = ckks.multiply(ct, p.alpha)
    elif p.alpha != 1:
        y = ct * p.alpha
    if p.beta:
        y = y + p.beta
    # the evaluation's own noise is followed on an input without error; the input's error is
    # then carried by the series' slope, which the powers' bounds would overstate (|T_i'| <= i^2)
    run = _Run(ctx, within(exact(y), 1.0))  # the map takes the interval to [-1, 1]
    level = y.level - (p.depth - p.map_levels)
    out = _scaled(run.pending(p.tree, level, ct.scale).rescale(), ct.scale)
    dy = peak(np.polynomial.chebyshev.chebder(p.coeffs)) if slope is None else slope / p.alpha
    out = carried(out, y, dy)
    return within(out, peak(p.coeffs))


def _scaled(ct: ckks.Ciphertext, scale: float) -> ckks.Ciphertext:
    """``ct`` recorded at ``scale``, the scale it holds up to the rounding of its ints."""
    return ct if ct.scale == scale else dataclasses.replace(ct, scale=float(scale))


class _Run:
    """One evaluation: the powers of ``y`` made so far, and the series on them."""

    def __init__(self, ctx: ckks.Context, y: ckks.Ciphertext) -> None:
        self.ctx = ctx
        self.q = ctx.params.q_moduli
        self.T = {1: y}

    def power(self, i: int) -> ckks.Ciphertext:
        """``T_i``, ``ceil(log2 i)`` levels below ``T_1``, made with its recipe's powers."""
        if i not in self.T:
            h, g, j = _recipe(i)
            prod = ckks.multiply(self.power(h), self.power(g), rescale=False) * 2  # 2 T_h T_g
            if j == 0:
                prod = prod - 1.0  # T_2h = 2 T_h^2 - 1
            else:
                tj = self.power(j).at_level(prod.level)
                prod = prod - _scaled(tj * round(prod.scale / tj.scale), prod.scale)
            self.T[i] = within(prod.rescale(), 1.0)  # |T_i(y)| <= 1 on [-1, 1]
        return self.T[i]

    def term(self, t: ckks.Ciphertext, c: complex, scale: float) -> ckks.Ciphertext | None:
        """``c t`` at ``scale`` and ``t``'s level, no rescale (``None`` below resolution)."""
        if isinstance(c, complex | np.complexfloating) and c.imag != 0:
            pt = self.ctx.encode(c, t.level, scale / t.scale)
            return _scaled(ckks.multiply(t, pt, rescale=False), scale)
        k = round(float(np.real(c)) * scale / t.scale)
        return _scaled(t * k, scale) if k else None

    def pending(self, node: _Leaf | _Split, level: int, scale: float) -> ckks.Ciphertext:
        """The series at ``level + 1`` and scale exactly ``scale q_(level+1)``, to be rescaled."""
        target = scale * self.q[level + 1]
        if isinstance(node, _Leaf):
            c = node.c
            terms = [
                self.term(self.power(i).at_level(level + 1), c[i], target)
                for i in range(1, len(c))
                if c[i]
            ]
            kept = [t for t in terms if t is not None]
            out = _scaled(add_all(kept) if kept else self.power(1).at_level(level + 1) * 0, target)
            c0 = _constant(_Leaf(c[:1]))
            return within(out + c0 if c0 else out, peak(_series(node)))
        G = self.power(node.m).at_level(level + 1)
        q0 = _constant(node.high)
        if q0 is not None:  # a constant quotient: q_0 T_m is a term
            prod = self.term(G, q0, target) or _scaled(G * 0, target)
        else:
            want = target / G.scale
            h = _scaled(self.pending(node.high, level + 1, want).rescale(), want)
            prod = _scaled(ckks.multiply(h, G, rescale=False), target)
        r0 = _constant(node.low)
        if r0 is not None:  # a constant remainder
            out = prod + r0 if r0 else prod
        else:
            out = prod + self.pending(node.low, level, scale)
        # a part of the series is at most its largest on [-1, 1], whatever its terms' bounds add to
        return within(out, peak(_series(node)))


def _series(node: _Leaf | _Split) -> np.ndarray:
    """The Chebyshev coefficients of the part of the series ``node`` evaluates."""
    if isinstance(node, _Leaf):
        return np.asarray(node.c)
    cheb, t_m = np.polynomial.chebyshev, np.eye(node.m + 1)[-1]  # T_m
    return cheb.chebadd(cheb.chebmul(_series(node.high), t_m), _series(node.low))
