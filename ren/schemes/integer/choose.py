"""Parameters from requirements: the smallest secure chain whose predicted budget holds a depth.

``bfv.Params.choose(depth=d, t=...)`` and ``bgv.Params.choose(...)`` (:func:`choose`) try the ring
degrees of the HE standard's table from the smallest, and at each the fewest moduli whose chain
keeps a *product tree of depth d* (``2^d`` fresh encryptions multiplied in pairs, each product
relinearized: the usual multiplicative depth; BGV switches the modulus after each product) above
``margin`` bits of predicted budget (``ren.schemes.integer.noise``), under the bound. The first
that fits is the answer; ``params.explain()`` (:func:`explain`) says why, with every ring tried.

BFV keeps every modulus to the end: ``L`` moduli as even as they come, of at most 60 bits. BGV's
chain is ``q_0`` (what is left at the end: the margin above the noise) and one modulus per
product, each as small as keeps the switched noise within a quarter of its floor. Hybrid key
switching takes one digit per modulus and one special modulus as large as the largest (the
least ``P`` the digits allow); BV none.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple, TypeVar

import numpy as np

from ren.errors import describe
from ren.poly import is_int
from ren.ring import is_prime
from ren.schemes.integer import noise
from ren.schemes.integer.estimate import NoiseEstimate
from ren.schemes.integer.types import Plaintext
from ren.schemes.rlwe.security import SECURITY_BOUNDS

if TYPE_CHECKING:
    from ren.schemes.integer.params import IntParams

__all__ = ["Reasoning", "choose", "explain", "tree_budgets"]

P = TypeVar("P", bound="IntParams")
Estimate = NoiseEstimate | None

#: BGV: how far (log2) below the noise a switch leaves (its floor) the product's noise over
#: ``q`` is brought. Little makes small moduli, but a product's noise left over has terms of
#: higher degree in ``s``, which the next products grow faster: a deep chain needs more.
HEADROOMS = (2.0, 4.0, 6.0, 8.0)
#: The largest modulus the chooser takes (``Params`` allows 62 bits; SEAL and OpenFHE keep 60).
MAX_BITS = 60


class Reasoning(NamedTuple):
    """What ``choose`` found, kept on the parameters it returns (``params.reasoning``).

    Attributes:
        depth: the depth asked for.
        margin: the bits of predicted budget kept after it.
        tried: one line per ring degree tried: why it was refused, or that it was chosen.
    """

    depth: int
    margin: float
    tried: tuple[str, ...]


def tree_budgets(params: IntParams, depth: int, *, clamp: bool = True) -> list[tuple[int, float]]:
    """``(level, predicted budget)`` after each depth ``0 .. depth`` of a product tree.

    Depth 0 is a fresh encryption. Each step multiplies two independent ciphertexts of the step
    before (relinearized); BGV's also switches the modulus once after it, while a level is left.
    """
    rng = np.random.default_rng(0)
    pt = Plaintext(rng.integers(0, params.t, params.n), params)
    level = params.max_level
    x: Estimate = noise.encrypted(params, pt)
    out = [(level, noise.budget(params, _known(x), level, clamp=clamp))]
    for _ in range(depth):
        product = noise.tensored(params, x, noise.independent(_known(x)), level)
        x = noise.key_switched(params, product, level)
        if params.scheme == "bgv" and level > 0:
            x = noise.mod_switched(params, x, level)
            level -= 1
        out.append((level, noise.budget(params, _known(x), level, clamp=clamp)))
    return out


def _known(x: Estimate) -> NoiseEstimate:
    """An estimate made from estimates (never ``None``)."""
    assert x is not None
    return x


@dataclasses.dataclass(frozen=True)
class _Ask:
    """What a chain must hold: the scheme's ``Params``, the depth, ``t``, the technique."""

    cls: type[IntParams]
    depth: int
    t: int
    technique: str
    margin: float

    def least(self, n: int) -> int:
        """The smallest modulus: above ``t``, 10 bits above ``2n`` (dozens of primes of a size)."""
        return max(self.t.bit_length() + 1, (2 * n).bit_length() + 10)

    def build(self, n: int, q_bits: list[int]) -> IntParams | None:
        """The chain of these sizes, insecure (``None``: too few primes of a size)."""
        p_bits = (max(q_bits),) if self.technique == "hybrid" else ()
        try:
            return self.cls(
                n=n,
                q_bits=tuple(q_bits),
                p_bits=p_bits,
                t=self.t,
                insecure=True,
                key_switching=self.technique,
            )
        except ValueError:
            return None

    def short(self, params: IntParams) -> float:
        """The bits the budget after the depth lacks of the margin (``<= 0``: it holds).

        The budget is not clamped at 0: a chain short of it says by how much.
        """
        return self.margin - tree_budgets(params, self.depth, clamp=False)[-1][1]


def _bfv_chains(ask: _Ask, n: int, bound: float | None) -> Iterator[IntParams]:
    """The least ``Q`` that holds, in the fewest moduli of at most 60 bits, then in more.

    More moduli make each smaller, and ``P`` with them: up to ten more, while a modulus keeps
    ``_Ask.least`` bits, and while a smaller ``P`` could bring the chain within ``bound``.
    """
    # a Q far too large first (its noise nowhere near Q: the deficit is then exact), then the
    # least Q it says, and a few rounds for what the moduli's sizes change
    ample = ask.least(n) + ask.depth * (2 * ask.t.bit_length() + n.bit_length() + 24) + 100
    total, first, L = ample, 0, 0
    for _ in range(200):  # the budget grows with Q about bit for bit: a few rounds settle it
        L = L or -(-total // MAX_BITS)
        params = ask.build(n, [total // L + (i < total % L) for i in range(L)])
        if params is None:
            return
        short = ask.short(params)
        if total == ample:
            total = max(ask.least(n), total + math.ceil(short))
            L = 0
            continue
        if short > 0:
            total += math.ceil(short)
            if bound is not None and total > bound:
                return  # Q alone is past the bound
            L = max(L, -(-total // MAX_BITS)) if first else 0
            continue
        yield params
        first = first or L
        L += 1
        least = ask.least(n)
        if bound is None or total + least > bound or first + 10 < L or total // L < least:
            return


def _bgv_chains(ask: _Ask, n: int, bound: float | None) -> Iterator[IntParams]:
    """The chains of :func:`_bgv_chain` for each of ``HEADROOMS``, the smallest first."""
    found = (_bgv_chain(ask, n, headroom, bound) for headroom in HEADROOMS)
    yield from sorted((p for p in found if p is not None), key=lambda p: p.log2_qp)


def _bgv_chain(ask: _Ask, n: int, headroom: float, bound: float | None) -> IntParams | None:
    """``q_0`` for the margin, then one modulus per product that shrinks its noise to the floor.

    The sizes are found by rounds until they stay (``None``: they do not, pass 60 bits, or
    stay well past ``bound`` after a few rounds).
    """
    least = ask.least(n)
    sizes = [least + 10] * (ask.depth + 1)
    for rounds in range(30):
        params = ask.build(n, sizes)
        if params is None:
            return None
        wanted = list(sizes)
        x: Estimate = noise.encrypted(params, Plaintext(np.zeros(n, dtype=np.int64), params))
        floor_ = _known(noise.mod_switched(params, x, 1) if ask.depth else x)
        for level in range(ask.depth, 0, -1):
            product = _known(noise.tensored(params, x, noise.independent(_known(x)), level))
            switched = noise.key_switched(params, product, level)
            # the switch leaves T / q^2 + t^2 R: q so that the product's T / q^2 is below that
            # floor by the headroom (a key switch's noise over q, BV's, stays whatever q is)
            rest = product.log2_variance - floor_.log2_variance + headroom
            wanted[level] = max(least, math.ceil(rest / 2))
            x = noise.mod_switched(params, switched, level)
        wanted[0] = max(least, sizes[0] + math.ceil(ask.short(params)))
        special = max(wanted) if ask.technique == "hybrid" else 0
        if max(wanted) > MAX_BITS or (
            bound is not None and rounds >= 2 and sum(wanted) + special > bound + 8
        ):
            return None
        if wanted == sizes:
            return params
        sizes = wanted
    return None


def _fit(ask: _Ask, n: int, bound: float | None) -> tuple[IntParams | None, float | None]:
    """The first chain at ``n`` within ``bound`` (``None``: any), and the least ``log2(QP)``."""
    least = None
    chains = _bfv_chains if ask.cls.scheme == "bfv" else _bgv_chains
    for params in chains(ask, n, bound):
        least = params.log2_qp if least is None else min(least, params.log2_qp)
        if bound is None or params.log2_qp <= bound:
            return params, least
    return None, least


def choose(
    cls: type[P],
    depth: int,
    t: int,
    *,
    batching: bool,
    secure: bool,
    key_switching: str,
    margin: float,
    n: int | None,
) -> P:
    """The smallest parameters holding ``depth`` (``IntParams.choose`` documents the arguments).

    Raises:
        TypeError, ValueError: as ``IntParams.choose`` says.
    """
    for name, value in (("depth", depth), ("t", t)):
        if not is_int(value) or isinstance(value, bool):
            raise TypeError(f"{name} must be an int, got {describe(value)}")
    if depth < 0:
        raise ValueError(f"depth={depth} must be at least 0 (0: encryptions and additions only)")
    if t < 2:
        raise ValueError(f"t={t} must be at least 2")
    if batching and not is_prime(t):
        raise ValueError(
            f"t={t} is not a prime: batching needs a prime t = 1 mod 2n (such as 65537); pass "
            "batching=False to encode polynomials instead"
        )
    if not isinstance(margin, int | float) or not 0 <= margin < 1000:
        raise ValueError(f"margin={margin!r} must be a number of bits from 0 to 1000")
    if n is not None and (not is_int(n) or isinstance(n, bool) or n < 4 or n & (n - 1)):
        raise ValueError(f"n={n!r} must be None or a power of two >= 4")
    ask = _Ask(cls, int(depth), int(t), key_switching, float(margin))
    log: list[str] = []
    for size in sorted(SECURITY_BOUNDS) if n is None else [int(n)]:
        bound = SECURITY_BOUNDS.get(size) if secure else None
        if batching and t % (2 * size) != 1:
            log.append(f"n={size}: refused, t={t} is not 1 mod 2n={2 * size} (no batching)")
            continue
        if secure and bound is None:
            log.append(f"n={size}: refused, not in the HE standard's table (secure=False)")
            continue
        chosen, least = _fit(ask, size, bound)
        if least is None:
            within = "" if bound is None else f" and log2(QP) within the bound {bound}"
            log.append(f"n={size}: refused, no chain of moduli up to {MAX_BITS} bits{within}")
        elif chosen is None:
            log.append(
                f"n={size}: refused, the chain needs log2(QP) = {least:.1f} bits, above the "
                f"bound {bound} for 128-bit security"
            )
        else:
            final = cls(
                n=size,
                q_bits=chosen.q_bits,
                p_bits=chosen.p_bits,
                t=t,
                insecure=not secure,
                key_switching=key_switching,
            )
            log.append(
                f"n={size}: chosen, log2(QP) = {final.log2_qp:.1f} bits"
                + (f" of the bound {bound}" if bound is not None else " (insecure: no bound)")
            )
            object.__setattr__(final, "reasoning", Reasoning(depth, margin, tuple(log)))
            return final
    raise ValueError(_refusal(ask, batching, secure, log))


def _refusal(ask: _Ask, batching: bool, secure: bool, log: list[str]) -> str:
    """Why no ring holds the depth: the rings tried, the largest depth that fits, a larger ring."""
    t, depth = ask.t, ask.depth
    sizes = [s for s in sorted(SECURITY_BOUNDS) if not batching or t % (2 * s) == 1]
    text = f"no {'secure ' if secure else ''}{ask.cls.scheme.upper()} chain holds depth {depth}"
    text += f" with t={t} and a {ask.margin:g}-bit margin: " + "; ".join(log)
    if not sizes:
        return text + f"; t={t} allows batching at no ring of the table (batching=False)"
    top = sizes[-1]
    best, low, high = -1, 0, depth - 1
    while low <= high:  # the largest depth that fits at the largest ring, by bisection
        mid = (low + high) // 2
        if _fit(dataclasses.replace(ask, depth=mid), top, SECURITY_BOUNDS[top])[0] is not None:
            best, low = mid, mid + 1
        else:
            high = mid - 1
    if best >= 0:
        text += f"; the largest depth that fits at 128-bit security is {best} (n={top})"
    need = _fit(ask, top, None)[1]
    if need is not None:
        larger = [r for r in sorted(SECURITY_BOUNDS) if r > top and SECURITY_BOUNDS[r] >= need]
        if larger:
            r = larger[0]
            text += (
                f"; it needs log2(QP) = {need:.0f} bits, which n={r} (bound "
                f"{SECURITY_BOUNDS[r]}) would hold with a t = 1 mod {2 * r}, or batching=False"
            )
        else:
            ring, bound = max(SECURITY_BOUNDS), SECURITY_BOUNDS[max(SECURITY_BOUNDS)]
            while bound < need:  # the standard's bounds about double with n beyond its table
                ring, bound = 2 * ring, 2 * bound
            text += (
                f"; it needs log2(QP) = {need:.0f} bits, which a ring of n={ring} or more would "
                "hold (beyond the HE standard's table), or secure=False at a smaller one"
            )
    return text


def explain(params: IntParams, depth: int | None = None) -> str:
    """The predicted budget of ``params`` through a product tree, and how they were chosen.

    Args:
        params: the parameters.
        depth: how deep to go (default: the chosen depth, else until the budget is spent or,
            for BGV, no level is left).

    Returns:
        Lines of text: the chain, the budget at each depth, and (for parameters from ``choose``)
        every ring tried and why it was refused.
    """
    reasoning = getattr(params, "reasoning", None)
    lines = [f"{params.scheme.upper()} parameters {params!r}"]
    bound = SECURITY_BOUNDS.get(params.n)
    secure = "insecure (no bound)" if params.insecure else f"128-bit bound {bound}"
    lines.append(
        f"  n={params.n}, t={_t_text(params)}, log2(QP) = {params.log2_qp:.1f} bits ({secure}); "
        f"{params.key_switching} key switching, {_special(params)}"
    )
    if reasoning is not None:
        chosen_depth, margin, log = reasoning
        lines.append(
            f"  chosen for a product tree of depth {chosen_depth} keeping {margin:g} bits:"
        )
        lines += [f"    {line}" for line in log]
        depth = chosen_depth if depth is None else depth
    last = depth if depth is not None else (params.L - 1 if params.scheme == "bgv" else 64)
    lines.append(
        "  predicted budget of a product tree (relinearized"
        + (", a mod_switch after each product):" if params.scheme == "bgv" else "):")
    )
    for d, (level, bits) in enumerate(tree_budgets(params, last)):
        lines.append(f"    depth {d:2d}: level {level}, {bits:6.1f} bits")
        if bits <= 0 and depth is None:
            break
    return "\n".join(lines)


def _special(params: IntParams) -> str:
    count = len(params.p_moduli)
    return f"{count} special modul{'us' if count == 1 else 'i'}"


def _t_text(params: IntParams) -> str:
    """``t`` and whether it batches."""
    return f"{params.t} ({'batching' if params.batching else 'no batching'})"
