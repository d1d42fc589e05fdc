"""What a BFV or BGV ciphertext's noise estimate is, and the algebra that combines estimates.

A :class:`NoiseEstimate` is a weighed sum of independent :class:`Source` noises; a source is a
polynomial in the secret, ``sum_k a_k s^k`` (or in its image ``s(X^g)`` under an automorphism),
held as the ``log2`` of the variance ``T_k`` of each term's coefficients. ``ren.schemes.integer
.noise`` says what each operation of the schemes does to an estimate, with these functions: sums
that weigh sources (and cancel them), products of terms (with their binomials), correlations.
Every figure is a ``log2``: no variance overflows a float at any modulus.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterable, Sequence
from typing import NamedTuple

__all__ = [
    "NoiseEstimate",
    "Source",
    "add",
    "combined",
    "correlation",
    "groups",
    "independent",
    "key",
    "log2_or_zero",
    "log_sum",
    "masked",
    "new",
    "product",
    "shift",
    "times",
]

ZERO = -math.inf  # log2 of a zero variance
#: Sources and terms this far (in log2 of variance) below the largest change nothing: dropped.
NEGLIGIBLE = 80.0
#: The keys of encryptions' sources: each its own (above every hash, which derived keys are).
KEYS = itertools.count(2**64)

#: ``log2 T_k`` by the degree ``k`` in ``s``.
Terms = tuple[float, ...]


class Source(NamedTuple):
    """One independent noise of an estimate, as the ciphertext holds it.

    Attributes:
        key: which source (the operation that made it).
        weight: the ciphertext's noise holds ``weight`` times it.
        terms: ``log2 T_k``, the variance of the coefficients of its term ``a_k s^k``.
        galois: the automorphism it went through (``1``: none): a polynomial in ``s(X^g)``.
        peak: ``log2`` of the mean of its constant coefficient (``-inf``: none).
        plain: whether it is a plaintext's (added to ``c_0`` alone: ``c_1`` knows nothing of it).
    """

    key: int
    weight: float
    terms: Terms
    galois: int = 1
    peak: float = ZERO
    plain: bool = False


@dataclasses.dataclass(frozen=True)
class NoiseEstimate:
    """The predicted noise of a ciphertext: a weighed sum of independent sources.

    Attributes:
        sources: the sources, by key (``Source``).
    """

    sources: tuple[Source, ...]

    @property
    def log2_variance(self) -> float:
        """``log2 V``: the variance of one coefficient of ``v``, every source weighed."""
        return log_sum(*(weight_bits(s) + log_sum(*s.terms) for s in self.sources))

    @property
    def log2_peak(self) -> float:
        """``log2`` of the mean of ``v``'s constant coefficient (``-inf``: centred)."""
        logs = [(log2_or_zero(abs(s.weight)) + s.peak, s.weight) for s in self.sources]
        top = max((x for x, _ in logs), default=ZERO)
        if top == ZERO:
            return ZERO
        return top + log2_or_zero(abs(sum(math.copysign(2.0 ** (x - top), w) for x, w in logs)))

    @property
    def log2_constant(self) -> float:
        """``log2`` of the variance of ``v``'s constant coefficient.

        Every automorphism fixes it: the images ``sigma_g(u)`` of one source add their constant
        coefficients coherently (``(sum_g w_g)^2 T``, where the rest adds ``sum_g w_g^2 T``), as
        a sum of a ciphertext's rotations does.
        """
        by_key: dict[int, tuple[float, float]] = {}
        for s in self.sources:
            w, size = by_key.get(s.key, (0.0, log_sum(*s.terms)))
            by_key[s.key] = (w + s.weight, size)
        return log_sum(*(2 * log2_or_zero(abs(w)) + size for w, size in by_key.values()))

    def __repr__(self) -> str:
        return f"NoiseEstimate(log2_variance={self.log2_variance:.2f}, sources={len(self.sources)})"


def log_sum(*logs: float) -> float:
    """``log2(sum 2^x)`` over ``logs`` (``-inf`` terms are zeros)."""
    finite = [x for x in logs if x != ZERO]
    if not finite:
        return ZERO
    top = max(finite)
    return top + math.log2(sum(2.0 ** (x - top) for x in finite))


def log2_or_zero(x: float) -> float:
    """``log2 x``, or ``-inf`` (``ZERO``) for ``x <= 0``."""
    return math.log2(x) if x > 0 else ZERO


def weight_bits(s: Source) -> float:
    """``log2`` of the variance factor ``weight^2`` of a source."""
    return 2 * log2_or_zero(abs(s.weight))


def add(*many: Sequence[float]) -> list[float]:
    """Termwise sum of independent noises' terms."""
    size = max((len(x) for x in many), default=0)
    return [log_sum(*(x[k] for x in many if k < len(x))) for k in range(size)]


def shift(x: Sequence[float], by: float) -> list[float]:
    """Every term times ``2^by`` (``by`` a log2)."""
    return [v + by for v in x]


def product(a: Sequence[float], b: Sequence[float], n: int) -> list[float]:
    """The terms of ``u_a u_b`` for independent ``u_a``, ``u_b``: ``n T_i T_j binom(i+j, i)``."""
    out: list[list[float]] = [[] for _ in range(len(a) + len(b) - 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            if x != ZERO and y != ZERO:
                out[i + j].append(math.log2(n * math.comb(i + j, i)) + x + y)
    return [log_sum(*column) for column in out]


def key(tag: str, *inputs: object) -> int:
    """The key of a source that ``tag`` derives from ``inputs``, the same for the same inputs.

    Every step but encryption is deterministic: one done twice on one ciphertext leaves the
    same noise twice (``x.rotate_rows(1) - x.rotate_rows(1)`` is 0), so its source's key is a
    hash of the step and of its inputs' sources (estimates, levels, plaintexts).
    """
    return hash((tag, *(identity(x) if isinstance(x, NoiseEstimate) else x for x in inputs)))


def identity(a: NoiseEstimate) -> tuple[tuple[int, float, int], ...]:
    """What a derived key takes of an estimate: its sources' keys, weights and automorphisms."""
    return tuple((s.key, s.weight, s.galois) for s in a.sources)


def masked(a: NoiseEstimate) -> NoiseEstimate:
    """``a`` without its plaintexts' sources: what ``c_1`` was made from.

    Steps that read ``c_1`` alone (a rotation's key switch, the rounding of ``c_1``) derive
    their keys from it, so they are the same for ``x`` and ``x + 1``.
    """
    return NoiseEstimate(tuple(s for s in a.sources if not s.plain))


def new(
    terms: Sequence[float], key: int | None = None, peak: float = ZERO, *, plain: bool = False
) -> NoiseEstimate:
    """A source of these terms, of weight 1: derived (``key``), or an encryption's (new)."""
    top = max(terms, default=ZERO)
    kept = [x if x >= top - NEGLIGIBLE else ZERO for x in terms]
    while len(kept) > 1 and kept[-1] == ZERO:
        kept.pop()
    key = next(KEYS) if key is None else key
    return NoiseEstimate((Source(key, 1.0, tuple(kept) or (ZERO,), 1, peak, plain),))


def combined(parts: Iterable[tuple[NoiseEstimate, float]]) -> NoiseEstimate:
    """``sum weight * estimate``: the weights of one source (and automorphism) add up."""
    found: dict[tuple[int, int], Source] = {}
    for est, weight in parts:
        for s in est.sources:
            mine = s._replace(weight=s.weight * weight)
            if (mine.key, mine.galois) in found:
                before = found[mine.key, mine.galois]
                mine = mine._replace(weight=before.weight + mine.weight)
            found[mine.key, mine.galois] = mine
    kept = [s for _, s in sorted(found.items()) if s.weight != 0]
    top = max((weight_bits(s) + log_sum(*s.terms) for s in kept), default=ZERO)
    kept = [s for s in kept if weight_bits(s) + log_sum(*s.terms) >= top - NEGLIGIBLE]
    return NoiseEstimate(tuple(kept))


def groups(a: NoiseEstimate, n: int) -> dict[int, list[float]]:
    """The terms of ``a`` by the automorphism of their secret (``1``: ``s`` itself).

    The constant coefficient's peak and coherent images are a term of degree 0: a coefficient
    ``c`` is ``c^2 / n`` of the mean square a product takes.
    """
    out: dict[int, list[float]] = {}
    for s in a.sources:
        out[s.galois] = add(out.get(s.galois, []), shift(s.terms, weight_bits(s)))
    constant = log_sum(2 * a.log2_peak, a.log2_constant)
    if constant != ZERO:
        out[1] = add(out.get(1, []), [constant - math.log2(n)])
    return out


def times(a: NoiseEstimate, b: dict[int, list[float]], n: int) -> list[float]:
    """The terms of ``u_a u_b`` for independent ``u_a``, ``u_b`` (``b`` by automorphism).

    Terms in one secret (``s``, or one ``s(X^g)``) multiply with their binomials; terms in two
    multiply as independent (their degree 0), and a product in ``s(X^g)`` is one of degree 0.
    """
    out: list[float] = []
    for g, x in groups(a, n).items():
        for h, y in b.items():
            one = math.log2(n) + log_sum(*x) + log_sum(*y)
            made = product(x, y, n) if g == h else [one]
            out = add(out, made if g == 1 and h == 1 else [log_sum(*made)])
    return out


def correlation(a: NoiseEstimate, b: NoiseEstimate, n: int) -> tuple[float, float]:
    """``rho`` of ``a`` and ``b`` (the sources they share), and ``log2`` of the peak of ``a b``.

    A source ``u`` in ``a`` whose image under ``X -> X^-1`` is in ``b`` puts ``sum_i u_i^2 =
    n T`` in the product's constant coefficient (times both weights).
    """
    scale = (a.log2_variance + b.log2_variance) / 2
    if scale == ZERO:
        return 0.0, ZERO
    theirs = {(s.key, s.galois): s.weight for s in b.sources}
    cov = peak = 0.0
    for s in a.sources:
        size = log_sum(*s.terms) - scale
        same = theirs.get((s.key, s.galois))
        if same is not None:
            cov += math.copysign(
                2.0 ** (log2_or_zero(abs(s.weight * same)) + size), s.weight * same
            )
        mirror = theirs.get((s.key, -s.galois % (2 * n)))
        if mirror is not None:
            peak += math.copysign(
                2.0 ** (log2_or_zero(abs(s.weight * mirror)) + size), s.weight * mirror
            )
    return cov, (log2_or_zero(abs(peak)) + math.log2(n) + scale if peak else ZERO)


def _signed(weight: float, size: float) -> float:
    """``weight 2^size``, computed as ``sign(weight) 2^(log2 |weight| + size)``."""
    return math.copysign(2.0 ** (log2_or_zero(abs(weight)) + size), weight)


def independent(a: NoiseEstimate) -> NoiseEstimate:
    """The same terms from new sources: a ciphertext made the same way from other encryptions."""
    return NoiseEstimate(tuple(s._replace(key=next(KEYS)) for s in a.sources))
