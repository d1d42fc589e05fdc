"""The slots' DFT, factored into sparse matrices: the linear stages of bootstrapping.

The slots of a real polynomial ``t`` of degree below ``n`` are ``U (t_low + i t_high)``, with
``t_low``, ``t_high`` its coefficients below and from ``n/2``, ``U[j][k] = zeta^(5^j k)`` (an
``M x M`` matrix, ``M = n/2`` slots) and ``zeta = exp(i pi / n)``: ``zeta^(5^j n/2) = i`` for every
``j``. Bootstrapping needs ``U^-1`` (CoeffToSlot: coefficients into slots, where a polynomial can
act on each) and ``U`` (SlotToCoeff: back).

**The factorization.** Splitting ``k`` into even and odd, ``U_M v = A + w B`` in the first half of
the slots and ``A - w B`` in the second, with ``A``, ``B`` the half-size transforms of the even
and odd entries and ``w_j = omega^(5^j)`` (``omega`` a primitive ``4M``-th root): ``5^(M/2)`` is
``2M + 1`` modulo ``4M``, so slot ``j + M/2`` takes ``-w_j``. Unrolled, ``U = S_M ... S_4 S_2 R``,
with ``R`` the bit-reversal permutation and ``S_L`` the butterflies of the size-``L`` transforms
(blocks of ``L`` slots): each ``S_L`` has three nonzero generalized diagonals, ``0`` and
``+-L/2``. Bootstrapping drops ``R``: CoeffToSlot computes ``R U^-1`` (``S_2^-1 ... S_M^-1``), the
slots in bit-reversed order, which the slot-wise EvalMod does not mind, and SlotToCoeff undoes it
(``U R^-1 = S_M ... S_2``). A *level budget* of ``b`` merges the ``log2 M`` stages into ``b``
consecutive groups, one ``LinearTransform`` (one level) each: a group of ``g`` stages has at most
``2^(g+1) - 1`` diagonals (Chen, Chillotti and Song, *Improved bootstrapping for approximate
homomorphic encryption*, 2019; Han and Ki, 2020).

**Sparse slots.** A message of ``s < M`` slots repeated ``M / s`` times is a polynomial in
``X^(n / 2s)``, and the same factorization of size ``s`` applies on each period; the transforms are
built on a period of ``N`` slots and their diagonals repeated (``tile``) to ``M`` slots. With
``2s <= M`` the real and imaginary parts share one ciphertext, in the two halves of a ``2s``
period: CoeffToSlot then works on ``N = 2s`` and keeps only the first half of each period (a
``mask``), SlotToCoeff starts by ``v_j + i v_(j+s)`` (``combine``).

Everything here is NumPy on diagonals, ``{k: diag_k}`` with ``diag_k[i] = M[i][(i + k) % N]``,
the ``LinearTransform`` convention: no dense ``M x M`` matrix is ever formed.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "Diagonals",
    "coeff_to_slot_groups",
    "compose",
    "dense",
    "slot_to_coeff_groups",
    "slots_matrix",
    "stage",
    "tile",
]

Diagonals = dict[int, np.ndarray]


def slots_matrix(s: int) -> np.ndarray:
    """``U_s[j][k] = omega^(5^j k)`` with ``omega = exp(2 pi i / 4s)``, dense (for tests)."""
    e = np.array([pow(5, j, 4 * s) for j in range(s)], dtype=np.int64)
    matrix: np.ndarray = np.exp(2j * np.pi * np.outer(e, np.arange(s)) / (4 * s))
    return matrix


def stage(N: int, L: int, inverse: bool = False) -> Diagonals:
    """The butterflies ``S_L`` (or ``S_L^-1``) of size-``L`` transforms, on ``N`` slots.

    For block start ``b`` and ``j < L/2``: ``x[b+j], x[b+j+L/2] <- x[b+j] +- w_j x[b+j+L/2]``,
    ``w_j = exp(2 pi i 5^j / 4L)``; the inverse is ``(x + y) / 2`` and ``(x - y) / (2 w_j)``.
    """
    w = np.exp(2j * np.pi * np.array([pow(5, j, 4 * L) for j in range(L // 2)]) / (4 * L))
    half = L // 2
    first = np.tile(np.concatenate([np.ones(half, bool), np.zeros(half, bool)]), N // L)
    wj = np.tile(np.concatenate([w, w]), N // L)
    d0 = np.where(first, 1.0, -wj) if not inverse else np.where(first, 0.5, -0.5 / wj)
    dup = np.where(first, wj, 0) if not inverse else np.where(first, 0.5, 0)
    ddown = np.where(first, 0, 1.0) if not inverse else np.where(first, 0, 0.5 / wj)
    out: Diagonals = {}
    for k, v in ((0, d0), (half % N, dup), (-half % N, ddown)):
        out[k] = out.get(k, 0) + v.astype(np.complex128)
    return out


def compose(a: Diagonals, b: Diagonals, N: int) -> Diagonals:
    """The diagonals of ``A B`` (``B`` applied first): ``(AB)_k[i] = sum A_a[i] B_b[i + a]``."""
    out: Diagonals = {}
    for ka, va in a.items():
        for kb, vb in b.items():
            k = (ka + kb) % N
            out[k] = out.get(k, 0) + va * np.roll(vb, -ka)
    return {k: v for k, v in sorted(out.items()) if np.any(np.abs(v) > 1e-300)}


def dense(d: Diagonals, N: int) -> np.ndarray:
    """The ``N x N`` matrix of diagonals ``d`` (for tests)."""
    m = np.zeros((N, N), dtype=np.complex128)
    rows = np.arange(N)
    for k, v in d.items():
        m[rows, (rows + k) % N] += v
    return m


def tile(d: Diagonals, N: int, M: int) -> Diagonals:
    """Diagonals on a period of ``N`` slots, repeated to ``M``: the same map on each period.

    For an ``N``-periodic input ``x``, ``x[(i + k) % N] = x[(i + k) % M]``, so the ``M``-slot
    transform with these diagonals computes the ``N``-slot one on every period.
    """
    return {k: np.tile(v, M // N) for k, v in d.items()}


def _groups(stages: list[Diagonals], budget: int, N: int) -> list[Diagonals]:
    """The stages (in the order applied) merged into ``budget`` consecutive groups.

    As even as can be: the first groups take the extra stages.
    """
    count = len(stages)
    sizes = [count // budget + (1 if g < count % budget else 0) for g in range(budget)]
    out, at = [], 0
    for size in sizes:
        group = stages[at]
        for nxt in stages[at + 1 : at + size]:
            group = compose(nxt, group, N)
        out.append(group)
        at += size
    return out


def _scaled(d: Diagonals, factor: complex | np.ndarray) -> Diagonals:
    """Each row ``i`` times ``factor`` (or ``factor[i]``): ``diag(factor) D``."""
    return {k: v * factor for k, v in d.items()}


def coeff_to_slot_groups(s: int, budget: int, packed: bool, constant: float) -> list[Diagonals]:
    """CoeffToSlot, ``constant R U_s^-1``, as ``budget`` groups of diagonals (applied in order).

    On ``N = s`` slots, or with ``packed`` on ``N = 2s`` slots, keeping the first ``s`` of each
    period (the second half comes out zero). ``s >= 2``, a power of two; ``budget`` from 1 to
    ``log2 s``.
    """
    N = 2 * s if packed else s
    stages = []
    L = s
    while L >= 2:
        stages.append(stage(N, L, inverse=True))
        L //= 2
    groups = _groups(stages, budget, N)
    groups[0] = _scaled(groups[0], constant)
    if packed:
        mask = np.tile(np.concatenate([np.ones(s), np.zeros(s)]), N // (2 * s))
        groups[-1] = _scaled(groups[-1], mask)
    return groups


def slot_to_coeff_groups(s: int, budget: int, packed: bool, constant: float) -> list[Diagonals]:
    """SlotToCoeff, ``constant U_s R``, as ``budget`` groups of diagonals (applied in order).

    With ``packed`` (``N = 2s``) the input holds real parts in the first half of each period and
    imaginary parts in the second; the first group starts by ``v_j + i v_(j + s)`` on every slot
    (``v_(j - s) + i v_j`` in the second half), and the output is ``s``-periodic.
    """
    N = 2 * s if packed else s
    stages = []
    L = 2
    while s >= L:
        stages.append(stage(N, L))
        L *= 2
    if packed:
        first = np.concatenate([np.ones(s), np.zeros(s)])
        combine = {0: np.where(first, 1.0, 1j).astype(np.complex128)}
        combine[s] = np.where(first, 1j, 1.0).astype(np.complex128)
        stages[0] = compose(stages[0], combine, N)
    groups = _groups(stages, budget, N)
    groups[0] = _scaled(groups[0], constant)
    return groups
