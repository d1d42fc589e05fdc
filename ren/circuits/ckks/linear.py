"""Plaintext matrix times encrypted vector: the diagonal method with baby-step giant-step.

For a ``slots x slots`` matrix ``M`` the generalized diagonal ``k`` is
``diag_k[i] = M[i][(i + k) % slots]``, and ``M v = sum_k diag_k * rot_k(v)``, with ``rot_k`` the
rotation that moves slot ``i + k`` to slot ``i`` (Halevi and Shoup, *Algorithms in HElib*, 2014).
Writing ``k = j n1 + i`` with ``0 <= i < n1`` and ``rot_a(x) * rot_a(y) = rot_a(x * y)``:

    M v = sum_j rot_{j n1}( sum_i rot_{-j n1}(diag_{j n1 + i}) * rot_i(v) )

The baby steps ``rot_i(v)`` are rotations of one ciphertext and share one ModUp (hoisting,
``rotate_many``); each giant step rotates one inner sum. The pre-rotated diagonals are plaintexts,
encoded once per level at the scale ``q_l``, so the one rescale at the end gives back the input's
scale exactly and the transform uses one level. ``n1`` follows Lattigo's rule (``FindBestBSGSRatio``
in ``he/linear_transformation.go``): the largest power of two whose count of nonzero baby steps is
at most ``bsgs_ratio`` times the count of nonzero giant steps, stopping early where a larger
``n1`` would need more rotations in all (``choose_n1``).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import threading
from typing import Any

import numpy as np

from ren.circuits import in_region
from ren.circuits.ckks.rotations import (
    add_all,
    check_rotation_keys,
    context_of,
    exact_scale,
    finite_numbers,
    need_a_level,
    rotate_many,
)
from ren.engine.realize import uncaptured
from ren.poly import is_int
from ren.poly import realize as realize_polys
from ren.schemes import ckks

__all__ = ["LinearTransform", "bsgs_index", "choose_n1"]


def bsgs_index(diagonals: list[int], slots: int, n1: int) -> dict[int, list[int]]:
    """The nonzero diagonals grouped by giant step: ``{j n1: [i, ...]}`` with ``k = j n1 + i``."""
    index: dict[int, list[int]] = {}
    for k in sorted(diagonals):
        index.setdefault((k // n1) * n1 % slots, []).append(k % n1)
    return index


def choose_n1(diagonals: list[int], slots: int, ratio: float) -> int:
    """The number of baby steps ``n1``, a power of two below ``slots``.

    Lattigo's rule (``FindBestBSGSRatio``): ``n1`` doubles while ``b / g``, the count of nonzero
    baby steps over the count of nonzero giant steps, stays at most ``ratio`` (``g = 0`` counts
    as infinite). One more stop: ``n1`` does not double when that would raise the count of
    rotations ``b + g``, so a banded matrix (diagonals ``-4 .. 3``) keeps ``n1 = 4`` (3 baby steps,
    1 giant step) where the ratio alone would allow 7 baby steps and 1 giant step. With only
    the diagonal 0 there is nothing to rotate and ``n1 = 1``.
    """
    best, fewest = 1, math.inf
    n1 = 1
    while n1 < slots:
        index = bsgs_index(diagonals, slots, n1)
        giants = len(index) - (0 in index)
        babies = len({i for group in index.values() for i in group} - {0})
        if giants == 0 or babies / giants > ratio or babies + giants > fewest:
            break
        best, fewest = n1, babies + giants
        n1 *= 2
    return best


def _from_matrix(matrix: object, slots: int) -> dict[int, np.ndarray]:
    m = finite_numbers(matrix, "the matrix")
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.shape[0] == 0:
        raise ValueError(f"the matrix must be square (d x d, d >= 1), got shape {m.shape}")
    d = m.shape[0]
    if d > slots:
        raise ValueError(f"a {d} x {d} matrix does not fit {slots} slots: d must be at most that")
    rows = np.arange(d)
    out = {}
    for k in (*range(d), *range(max(d, slots - d + 1), slots)):  # the diagonals that meet M
        cols = (rows + k) % slots
        inside = cols < d
        diag = np.zeros(slots, dtype=m.dtype)
        diag[rows[inside]] = m[rows[inside], cols[inside]]
        out[k] = diag
    return out


def _from_diagonals(diagonals: object, slots: int) -> dict[int, np.ndarray]:
    if not isinstance(diagonals, dict):
        raise TypeError(f"diagonals must be a dict {{k: vector}}, got {type(diagonals).__name__}")
    out: dict[int, np.ndarray] = {}
    for key, values in diagonals.items():
        if not is_int(key):
            raise TypeError(f"diagonal keys must be ints, got {key!r} ({type(key).__name__})")
        if not -slots < key < slots:
            raise ValueError(f"diagonal key {key} is outside -{slots} < k < {slots} (the slots)")
        k = int(key) % slots
        if k in out:
            raise ValueError(f"diagonal keys {key} and {k - slots if key >= 0 else k} are the same")
        v = finite_numbers(values, f"diagonal {key}")
        if v.ndim != 1 or not 1 <= v.shape[0] <= slots:
            raise ValueError(
                f"diagonal {key} must be a vector of 1 to {slots} numbers, got shape {v.shape}"
            )
        out[k] = np.concatenate([v, np.zeros(slots - v.shape[0], dtype=v.dtype)])
    return out


class LinearTransform:
    """A plaintext ``slots x slots`` matrix, applied to a ciphertext by baby-step giant-step.

    ``lt(ct)`` is ``M`` times the slots of ``ct``: one level lower, with ``ct``'s scale (times
    ``scale_factor``). Give
    either ``matrix`` (square, ``d x d`` with ``d <= slots``: a smaller matrix acts on the first
    ``d`` slots, as if padded with zeros to ``slots x slots``, and the other slots come out 0)
    or ``diagonals``, ``{k: diag_k}`` with ``diag_k[i] = M[i][(i + k) % slots]`` (``k`` in
    ``(-slots, slots)``, a vector of at most ``slots`` numbers, zero padded). Real or complex;
    diagonals that are all zero are dropped.

    The diagonals are encoded as plaintexts on the first call at each level (``level=`` or the
    ciphertext's), then reused; ``encode`` does it ahead. Everything else is lazy, so ``ren.jit``
    captures ``lt(ct)`` as one graph.

    Args:
        matrix: a square matrix (array-like).
        diagonals: the nonzero generalized diagonals, instead of ``matrix``.
        level: the level the transform runs at (a ciphertext above it is brought down to it);
            default: the ciphertext's.
        bsgs_ratio: the largest ratio of baby steps to giant steps (Lattigo's rule, see
            ``choose_n1``); larger means more hoisted baby steps and more keys.
        slots: the slot count of the parameters it is for (default: the current context's).
        scale_factor: the result's scale is the input's times this (the diagonals are encoded at
            ``q_level * scale_factor``); below 1 it brings a scale down for free, at the cost of
            as many bits of the diagonals' precision.

    Raises:
        TypeError: for a matrix or diagonals that are not numbers, keys that are not ints.
        ValueError: a matrix that is not square or bigger than the slots, diagonals with bad keys
            or lengths, NaN or infinity, both or neither of ``matrix`` and ``diagonals``, a bad
            ``level``, ``bsgs_ratio`` or ``slots``.
    """

    def __init__(
        self,
        matrix: object = None,
        *,
        diagonals: dict[int, Any] | None = None,
        level: int | None = None,
        bsgs_ratio: float = 2.0,
        slots: int | None = None,
        scale_factor: float = 1.0,
    ):
        if (matrix is None) == (diagonals is None):
            raise ValueError("pass a matrix or diagonals= (one of them)")
        if slots is None:
            try:
                slots = ckks.current().params.slots
            except RuntimeError:
                raise ValueError(
                    "pass slots= (params.slots), or build the transform inside a "
                    "`with ckks.Context(params):` block"
                ) from None
        if not is_int(slots) or slots < 1 or slots & (slots - 1):
            raise ValueError(f"slots must be a power of two (params.slots), got {slots!r}")
        if level is not None and (not is_int(level) or level < 1):
            raise ValueError(
                f"level must be an int of at least 1 (it rescales once), got {level!r}"
            )
        ratio_ok = isinstance(bsgs_ratio, numbers.Real) and not isinstance(bsgs_ratio, bool)
        if not ratio_ok or not 0 < float(bsgs_ratio) < math.inf:
            raise ValueError(f"bsgs_ratio must be a positive number, got {bsgs_ratio!r}")
        factor_ok = isinstance(scale_factor, numbers.Real) and not isinstance(scale_factor, bool)
        if not factor_ok or not 0 < float(scale_factor) < math.inf:
            raise ValueError(f"scale_factor must be a positive number, got {scale_factor!r}")
        self.scale_factor = float(scale_factor)
        self.slots = int(slots)
        self.level = None if level is None else int(level)
        self.bsgs_ratio = float(bsgs_ratio)
        found = _from_diagonals(diagonals, self.slots) if matrix is None else None
        found = _from_matrix(matrix, self.slots) if found is None else found
        self.diagonals: dict[int, np.ndarray] = {
            k: v for k, v in sorted(found.items()) if np.any(v != 0)
        }
        for v in self.diagonals.values():
            v.setflags(write=False)
        self.n1 = choose_n1(list(self.diagonals), self.slots, self.bsgs_ratio)
        self.index = bsgs_index(list(self.diagonals), self.slots, self.n1)
        self.baby_steps = sorted({i for group in self.index.values() for i in group})
        self.giant_steps = sorted(self.index)
        # the largest 2-norm of a row: the DFT's factors keep the size of values of random phase
        # (a row sums them as a random walk), where the sum of |entries| takes a row at its worst
        rows = sum((np.abs(d) ** 2 for d in self.diagonals.values()), np.zeros(self.slots))
        self.row_norm = float(np.sqrt(np.max(rows, initial=0.0)))
        self._plaintexts: dict[tuple[Any, ...], dict[tuple[int, int], ckks.Plaintext]] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        babies = len(set(self.baby_steps) - {0})
        giants = len(set(self.giant_steps) - {0})
        return (
            f"<LinearTransform slots={self.slots}, {len(self.diagonals)} nonzero diagonals, "
            f"level={self.level}, n1={self.n1} ({babies} baby + {giants} giant rotations), "
            f"bsgs_ratio={self.bsgs_ratio:g}>"
        )

    def rotations(self) -> list[int]:
        """The rotation steps the transform uses (its keys), sorted: baby and giant steps."""
        return sorted((set(self.baby_steps) | set(self.giant_steps)) - {0})

    def encode(self, level: int, context: ckks.Context | None = None) -> LinearTransform:
        """Encode (and compute now) the pre-rotated diagonals at ``level``, if not done yet.

        The plaintext for giant step ``j`` and baby step ``i`` is ``rot_{-j}(diag_{j + i})`` at the
        scale ``q_level``. Made outside any ``ren.jit`` capture: a captured plan reads them as
        stored values. Returns ``self``.

        Raises:
            ValueError: for a context of another slot count, or a level it does not have.
        """
        ctx = ckks.current() if context is None else context
        self._check_params(ctx.params, level)
        key = (ctx.params, ctx.device, level)
        if key in self._plaintexts:
            return self
        with self._lock:
            if key not in self._plaintexts:
                scale = float(ctx.params.q_moduli[level]) * self.scale_factor
                pts = {}
                for j, group in self.index.items():
                    for i in group:
                        diagonal = np.roll(self.diagonals[j + i], j)
                        pt = ctx.encode(diagonal, level, scale)
                        # its exact values: a recording's shadow multiplies by them, whenever
                        # the transform was first used (ren.schemes.ckks.shadow.plain_shadow)
                        pts[(j, i)] = dataclasses.replace(pt, exact=diagonal)
                with uncaptured():
                    realize_polys(*(pt.poly for pt in pts.values()))
                self._plaintexts[key] = pts
        return self

    def _check_params(self, params: ckks.Params, level: int) -> None:
        if params.slots != self.slots:
            raise ValueError(
                f"this LinearTransform is for {self.slots} slots; the ciphertext's parameters "
                f"have {params.slots} (n={params.n}): build one for them"
            )
        if not is_int(level) or not 1 <= level <= params.max_level:
            raise ValueError(
                f"level {level!r} is not one the transform can run at: 1 to {params.max_level}"
            )

    @in_region("linear_transform")
    def __call__(self, ct: ckks.Ciphertext) -> ckks.Ciphertext:
        """``M`` times the slots of ``ct``: one level lower, ``ct``'s scale times the factor.

        Raises:
            TypeError: for anything but a ciphertext.
            ValueError: for a ciphertext of another slot count, at level 0 or below ``level``,
                of three parts, or, in an evaluation-only context, when rotation keys are missing
                (naming every missing step), before any graph is built.
        """
        ctx = context_of(ct)
        if ctx.params.slots != self.slots:
            self._check_params(ctx.params, ct.level)
        need_a_level(ct, "this linear transform")
        level = ct.level if self.level is None else self.level
        if ct.level < level:
            raise ValueError(
                f"this linear transform runs at level {level} and the ciphertext is at level "
                f"{ct.level}: build it with level={ct.level} (or level=None)"
            )
        if ct.size != 2:
            raise ValueError("a linear transform needs a two-part ciphertext: relinearize first")
        check_rotation_keys(ctx, self.rotations(), "this linear transform")
        ct = ct.at_level(level)
        if not self.diagonals:  # the zero matrix: a product by 0 keeps the level accounting
            zero = exact_scale(ckks.multiply(ct, 0.0), ct.scale)
            return dataclasses.replace(zero, scale=ct.scale * self.scale_factor)
        pts = self.encode(level, ctx)._plaintexts[(ctx.params, ctx.device, level)]
        babies = dict(zip(self.baby_steps, rotate_many(ct, self.baby_steps), strict=True))
        outer = []
        for j, group in self.index.items():
            terms = [ckks.multiply(babies[i], pts[(j, i)], rescale=False) for i in group]
            inner = add_all(terms)
            if j:  # c_0 in a buffer of its own: else its products fuse into the final sum, and
                # one kernel would read every plaintext (thousands of arguments for a dense M)
                c0, c1 = inner.parts
                inner = dataclasses.replace(inner, parts=(c0.contiguous(), c1)).rotate(j)
            outer.append(inner)
        return exact_scale(add_all(outer).rescale(), ct.scale * self.scale_factor)
