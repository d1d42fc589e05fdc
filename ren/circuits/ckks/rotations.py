"""Rotations of one ciphertext that share its ModUp (hoisting), and sums over the slots.

A rotation by ``k`` key switches ``c_1`` through the automorphism ``X -> X^(5^k)``: ModUp (one
inverse NTT of ``c_1``, then per digit a basis extension to the key ring and an NTT), the
automorphism of each extended digit, the products with the key, and ModDown of the two sums (each
an inverse NTT of the special limbs, a basis extension and an NTT). The ModUp depends only on
``c_1`` and the level, so every rotation of one ciphertext builds the same ModUp nodes and
rotations realized together compute it once (Halevi and Shoup, *Faster homomorphic linear
transformations in HElib*, 2018, call this hoisting). At level ``l`` with ``D`` digits, ``r``
rotations realized together run ``1 + 2r`` inverse NTTs, ``D + 2r`` basis extensions and
``D + 2r`` NTTs, where ``r`` separate realizations run ``3r``, ``(D + 2) r`` and ``(D + 2) r``.

``rotate_many`` builds the rotations of one ciphertext this way after checking every key it needs;
``sum_slots`` adds every slot into every slot with ``log2(slots)`` rotations (``radix=2``), each
of the running sum, so they cannot share a ModUp; ``inner_product`` is one plaintext product and a
``sum_slots``. Everything is lazy: the results are ciphertexts whose parts are graphs, realized
together by ``ren.realize`` (or a decryption), captured whole by ``ren.jit``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from ren.circuits import in_region
from ren.poly import is_int
from ren.poly import realize as realize_polys
from ren.ring import galois_for_rotation
from ren.schemes import ckks

__all__ = [
    "add_all",
    "check_rotation_keys",
    "context_of",
    "exact_scale",
    "finite_numbers",
    "inner_product",
    "need_a_level",
    "rotate_many",
    "sum_slots",
    "sum_slots_rotations",
]


def context_of(ct: ckks.Ciphertext) -> ckks.Context:
    """The context ``ct`` computes in: its own, else the current one (``ckks.current()``).

    Raises:
        TypeError: for anything but a ``ckks.Ciphertext``.
        RuntimeError: for a ciphertext with no context (unpickled) outside every ``with`` block.
    """
    if not isinstance(ct, ckks.Ciphertext):
        raise TypeError(f"expected a ckks.Ciphertext, got {type(ct).__name__}")
    return ct.context if ct.context is not None else ckks.current()


def _steps(steps: Any, slots: int) -> list[int]:
    """``steps`` as ints in ``[0, slots)`` (rotations are taken modulo the slots), in order."""
    if is_int(steps) or isinstance(steps, str | bytes):
        raise TypeError(f"steps must be an iterable of ints, got {type(steps).__name__}")
    try:
        items = list(steps)
    except TypeError:
        raise TypeError(f"steps must be an iterable of ints, got {type(steps).__name__}") from None
    for k in items:
        if not is_int(k):
            raise TypeError(f"rotation steps must be ints, got {k!r} ({type(k).__name__})")
    return [int(k) % slots for k in items]


def check_rotation_keys(context: ckks.Context, steps: Iterable[int], what: str) -> None:
    """Raise before any graph is built when ``context`` cannot rotate by every one of ``steps``.

    A context holding the secret key makes a missing rotation key on first use, so only an
    evaluation-only context (``ckks.Context(params, keys=...)``) can lack one; the error names
    every missing step, not just the first.

    Args:
        context: the context the rotations run in.
        steps: rotation amounts (taken modulo the slots; 0 needs no key).
        what: the operation, for the message (``"rotate_many"``, ``"this linear transform"``).

    Raises:
        ValueError: naming the missing steps and their Galois elements, and how to make them.
    """
    if context.has_secret_key or context.key_fingerprint is None:
        return  # keys are made on first use (or the ciphertext's own check will fail first)
    prm = context.params
    have = set(context.evaluation_keys().galois)
    wanted = sorted({int(k) % prm.slots for k in steps} - {0})
    missing = [k for k in wanted if galois_for_rotation(prm.n, k) not in have]
    if missing:
        listed = ", ".join(str(k) for k in missing)
        elements = ", ".join(str(galois_for_rotation(prm.n, k)) for k in missing)
        raise ValueError(
            f"{what} needs rotation keys this evaluation-only context was not given: steps "
            f"{listed} (Galois elements {elements}); make them in the context holding the secret "
            f"key with ctx.rotation_key(k) for each step, then export ctx.evaluation_keys() again"
        )


@in_region("rotate_many")
def rotate_many(
    ct: ckks.Ciphertext, steps: Iterable[int], *, realize: bool = False
) -> list[ckks.Ciphertext]:
    """``[ct.rotate(k) for k in steps]``, every rotation built on one ModUp of ``ct`` (hoisted).

    Rotation ``k`` moves slot ``j + k`` to slot ``j``. Steps may come in any order and repeat
    (a repeated step gives the same ciphertext object); a step of 0 (mod the slots) gives ``ct``
    itself. The results are lazy: realize them together, ``ren.realize(*[p for r in out for p in
    r.parts])`` (or decrypt them after such a joint realization, or pass ``realize=True``), and
    the ModUp runs once; realizing each one alone runs a ModUp each.

    Args:
        ct: a two-part ciphertext.
        steps: rotation amounts (ints, taken modulo the slots).
        realize: compute every rotation now, together, before returning.

    Raises:
        TypeError: for a ``ct`` that is not a ciphertext, or steps that are not ints.
        ValueError: for a three-part ciphertext, or, in an evaluation-only context, when a
            rotation key is missing (naming every missing step), before any graph is built.
    """
    ctx = context_of(ct)
    wanted = _steps(steps, ctx.params.slots)
    if ct.size != 2:
        raise ValueError("rotate_many needs a two-part ciphertext: relinearize first")
    check_rotation_keys(ctx, wanted, "rotate_many")
    made: dict[int, ckks.Ciphertext] = {0: ct}
    for k in wanted:
        if k not in made:
            made[k] = ct.rotate(k)  # each builds the same ModUp nodes of ct's c_1 (interned)
    out = [made[k] for k in wanted]
    if realize:
        realize_polys(*[p for r in made.values() for p in r.parts])
    return out


def _radix(radix: object) -> int:
    if not is_int(radix) or radix < 2 or radix & (radix - 1):
        raise ValueError(f"radix must be a power of two, at least 2; got {radix!r}")
    return int(radix)


def _stages(slots: int, radix: int) -> list[list[int]]:
    """The rotation steps of each stage of ``sum_slots``: stage ``t`` adds ``r - 1`` rotations.

    With ``step`` the product of the earlier stages' radices, a stage adds the rotations by
    ``step, 2 step, ..., (r - 1) step`` to the running sum, ``r = min(radix, slots / step)``.
    """
    stages, step = [], 1
    while step < slots:
        r = min(radix, slots // step)
        stages.append([step * j for j in range(1, r)])
        step *= r
    return stages


def sum_slots_rotations(params: ckks.Params, radix: int = 2) -> list[int]:
    """The rotation steps ``sum_slots(ct, radix=radix)`` needs, sorted.

    ``[1, 2, 4, ..., slots/2]`` for ``radix=2``: ``log2(slots)`` keys.

    Raises:
        TypeError: when ``params`` is not a ``ckks.Params``.
        ValueError: for a radix that is not a power of two (at least 2).
    """
    if not isinstance(params, ckks.Params):
        raise TypeError(f"params must be a ckks.Params, got {type(params).__name__}")
    return sorted(k for stage in _stages(params.slots, _radix(radix)) for k in stage)


@in_region("sum_slots")
def sum_slots(ct: ckks.Ciphertext, *, radix: int = 2) -> ckks.Ciphertext:
    """Every slot holds the sum of all slots of ``ct``; no level is used, the scale is kept.

    With ``radix=2`` it is ``log2(slots)`` steps ``acc = acc + acc.rotate(2^t)``. Each rotation is
    of the running sum, which the step before made, so the rotations cannot share a ModUp: the
    sum costs ``log2(slots)`` full key switches. A larger radix ``r`` (a power of two) adds
    ``r - 1`` rotations of the running sum per stage, hoisted (one ModUp per stage), in
    ``log_r(slots)`` stages: fewer ModUps, more rotations and keys (``sum_slots_rotations``).

    Raises:
        TypeError: for a ``ct`` that is not a ciphertext.
        ValueError: for a bad radix, a three-part ciphertext, or a missing rotation key (naming
            every missing step), before any graph is built.
    """
    ctx = context_of(ct)
    stages = _stages(ctx.params.slots, _radix(radix))
    if ct.size != 2:
        raise ValueError("sum_slots needs a two-part ciphertext: relinearize first")
    check_rotation_keys(ctx, [k for stage in stages for k in stage], "sum_slots")
    acc = ct
    for stage in stages:
        acc = add_all([acc, *rotate_many(acc, stage)])
    return acc


#: the most terms one fused kernel of ``add_all`` adds. The scheduler fuses a sum with what
#: computes its terms, so a sum of many products would be one kernel reading every operand: on
#: the cpu device such a kernel runs slower per term past about 16 (a dense 4096 x 4096 transform
#: at n = 8192: 0.51 s with groups of 16, 1.17 s with 32, 1.33 s with 64), and one reading more
#: than 1024 buffers cannot be called at all.
FAN_IN = 16


def add_all(terms: list[ckks.Ciphertext], fan_in: int = FAN_IN) -> ckks.Ciphertext:
    """The sum of ``terms`` (at least one), as a balanced tree.

    Past ``fan_in`` terms, each group of ``fan_in`` is summed into a buffer of its own
    (``Poly.contiguous``), and the groups' sums are added the same way, so no kernel reads more
    than about ``fan_in`` terms' inputs.
    """
    if not is_int(fan_in) or fan_in < 2:
        raise ValueError(f"fan_in must be an int of at least 2, got {fan_in!r}")
    while len(terms) > fan_in:
        groups = [terms[i : i + fan_in] for i in range(0, len(terms), fan_in)]
        terms = [_materialized(add_all(g, fan_in)) if len(g) > 1 else g[0] for g in groups]
    while len(terms) > 1:
        pairs = [terms[i] + terms[i + 1] for i in range(0, len(terms) - 1, 2)]
        terms = pairs + terms[len(terms) - len(terms) % 2 :]
    return terms[0]


def _materialized(ct: ckks.Ciphertext) -> ckks.Ciphertext:
    """``ct`` with each part computed into a buffer of its own when realized."""
    return dataclasses.replace(ct, parts=tuple(p.contiguous() for p in ct.parts))


def finite_numbers(values: object, what: str) -> np.ndarray:
    """``values`` as an array of finite real or complex numbers (``what`` names it in errors).

    Raises:
        TypeError: values that are not numbers.
        ValueError: NaN or infinity.
    """
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must hold numbers, got {type(values).__name__}") from None
    if arr.dtype.kind not in "iufc":
        raise TypeError(f"{what} must hold real or complex numbers, got dtype {arr.dtype}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} holds NaN or infinity")
    return arr


def _vector(values: object, slots: int, what: str) -> np.ndarray:
    """``values`` as a 1-D array of finite real or complex numbers, at most ``slots`` long."""
    arr = finite_numbers(values, what)
    if arr.ndim != 1 or arr.shape[0] == 0:
        raise ValueError(f"{what} must be a non-empty 1-D vector, got shape {arr.shape}")
    if arr.shape[0] > slots:
        raise ValueError(f"{what} has {arr.shape[0]} entries; the ciphertext has {slots} slots")
    return arr


def need_a_level(ct: ckks.Ciphertext, what: str) -> None:
    """Raise when ``ct`` is at level 0: ``what`` rescales once.

    Raises:
        ValueError: naming the level needed (1) and the level the ciphertext has (0).
    """
    if ct.level < 1:
        raise ValueError(
            f"{what} needs 1 level (it rescales once) and the ciphertext has 0 (it is at level "
            "0); run it before the last multiplication, or use more moduli (q_bits)"
        )


@in_region("inner_product")
def inner_product(ct: ckks.Ciphertext, vec: object) -> ckks.Ciphertext:
    """``sum_i vec_i * slot_i`` of ``ct``, in every slot: one level used, the scale kept.

    ``vec`` (real or complex, at most ``slots`` long, zero padded) is encoded at the scale
    ``q_level`` and multiplied slot-wise, and the product rescaled, which gives back ``ct``'s
    scale exactly; then ``sum_slots``. There is no conjugation: pass ``np.conj(w)`` for the
    Hermitian product ``<w, x>``.

    Raises:
        TypeError: for a ``ct`` that is not a ciphertext, or a ``vec`` that is not numbers.
        ValueError: for a ``vec`` that is not 1-D, too long or not finite; at level 0; for a
            missing rotation key (naming every missing step), before any graph is built.
    """
    ctx = context_of(ct)
    arr = _vector(vec, ctx.params.slots, "vec")
    need_a_level(ct, "inner_product")
    check_rotation_keys(ctx, sum_slots_rotations(ctx.params), "inner_product")
    product = ckks.multiply(ct, arr, rescale=True)
    return sum_slots(exact_scale(product, ct.scale))


def exact_scale(ct: ckks.Ciphertext, scale: float) -> ckks.Ciphertext:
    """``ct`` with its scale recorded as ``scale``, which it equals up to float rounding.

    A product by a plaintext encoded at ``q_l``, rescaled by ``q_l``, has the scale of the
    ciphertext it started from; the float arithmetic ``s * q_l / q_l`` may differ in the last bit.
    """
    if ct.scale == scale:
        return ct
    assert math.isclose(ct.scale, scale, rel_tol=2.0**-40), (ct.scale, scale)
    return dataclasses.replace(ct, scale=float(scale))
