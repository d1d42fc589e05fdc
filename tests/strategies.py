"""Hypothesis strategies shared by Ren's tests: random rings and coefficient lists with edge values.

``rings()`` builds ``RingSpec``s from :func:`ren.ring.ntt_primes` with a random degree, word size
and number of moduli, in a random order (sometimes mixing two bit sizes, as SEAL's 60/40/40
chains do). ``coeff_lists(ring)`` draws ``n`` Python ints that mix the values kernels get wrong:
``0``, ``q - 1``, negatives, values far beyond ``Q``, and values next to ``+-Q/2``.
"""

from __future__ import annotations

import random

from hypothesis import strategies as st

from ren.ring import DTYPE_LIMIT_BITS, RingSpec, ntt_primes
from tests.oracles import centered

#: The smallest bit size of the first modulus pool per dtype (u64 rings get a modulus >= 2**30, so
#: that the 64-bit path really is exercised); the largest comes from ``DTYPE_LIMIT_BITS``.
_MIN_BITS = {"u32": 0, "u64": 31}


def _min_bits(log_n: int) -> int:
    """The fewest bits that leave plenty of primes ``1 (mod 2n)`` (2**8 candidates or more)."""
    return log_n + 9


@st.composite
def rings(
    draw: st.DrawFn,
    max_n: int = 4096,
    max_limbs: int = 6,
    dtypes: tuple[str, ...] = ("u32", "u64"),
    *,
    min_n: int = 2,
    min_limbs: int = 1,
) -> RingSpec:
    """A random ring: ``n = 2**k`` in ``[min_n, max_n]``, ``min_limbs..max_limbs`` moduli.

    The moduli are a random selection, in random order, of the largest NTT primes of one bit size
    (valid for the dtype: up to 30 bits for ``u32``; 31 to 62 for ``u64``), sometimes pooled with
    those of a second bit size (for ``u64`` that one may be small). The dtype is passed explicitly.
    """
    # sampled_from draws near-uniformly; st.integers leans hard on its lower bound
    log_n = draw(st.sampled_from(range(min_n.bit_length() - 1, max_n.bit_length())))
    n = 1 << log_n
    dtype = draw(st.sampled_from(dtypes))
    top = DTYPE_LIMIT_BITS[dtype]
    low = max(_min_bits(log_n), _MIN_BITS[dtype])
    bits = draw(st.sampled_from(range(low, top + 1)))
    pool = list(ntt_primes(n, bits, max_limbs))
    if draw(st.booleans()):
        bits2 = draw(st.sampled_from(range(_min_bits(log_n), top + 1)))
        pool += [p for p in ntt_primes(n, bits2, max_limbs) if p not in pool]
    limbs = draw(st.sampled_from(range(min_limbs, max_limbs + 1)))
    moduli = draw(st.permutations(pool))[:limbs]
    return RingSpec(n, tuple(moduli), dtype)


def edge_values(ring: RingSpec) -> list[int]:
    """Values kernels get wrong: 0, +-1, q-1 and q for each modulus, +-Q, and the ones at +-Q/2."""
    Q, h = ring.Q, ring.Q // 2
    out = [0, 1, -1, Q - 1, Q, -Q, Q + 1, h, h + 1, -h, -h - 1, 2**64 - 1, -(2**63)]
    for q in ring.moduli:
        out += [q - 1, q, q + 1, -q, -(q - 1), q * q - 1]
    return out


@st.composite
def coeff_lists(draw: st.DrawFn, ring: RingSpec, *, away_from_half: bool = False) -> list[int]:
    """``n`` Python ints mixing edge values, small and huge values, and random ints in ``(-Q, Q)``.

    The bulk comes from a ``random.Random`` seeded by hypothesis (so ``n = 4096`` stays cheap);
    up to 8 positions are set to edge values hypothesis chooses, so failures shrink to them.

    Args:
        ring: the ring whose ``n`` and moduli shape the values.
        away_from_half: keep every centered value at least ``Q / 2**40`` away from ``+-Q/2``
            (fast base conversion is only exact there); offenders are divided by 3.
    """
    n, Q = ring.n, ring.Q
    rnd = random.Random(draw(st.integers(0, 2**64 - 1)))
    edges = edge_values(ring)
    out = []
    for _ in range(n):
        kind = rnd.random()
        if kind < 0.25:
            out.append(rnd.choice(edges))
        elif kind < 0.35:
            out.append(rnd.randrange(-1000, 1001))
        elif kind < 0.5:
            out.append(rnd.randrange(-(Q << 80), Q << 80))
        else:
            out.append(rnd.randrange(-Q + 1, Q))
    for i, v in draw(
        st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(edges)), max_size=8)
    ):
        out[i] = v
    if away_from_half:
        margin = Q >> 40
        out = [x if abs(centered(x, Q)) <= Q // 2 - margin else centered(x, Q) // 3 for x in out]
    return out
