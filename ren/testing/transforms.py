"""The conventions ``python -m ren.testing compare`` knows: transforms of words, by name.

Each transform (:data:`TRANSFORMS`) turns words as one library or device holds them into words as
another does: the bit-reversed order, a Montgomery factor ``R``, Ren's NTT and its inverse, another
NTT root's order (Lattigo's), a negation, a factor ``n`` or ``n^-1``, SEAL's slot order for slot
values. :func:`apply` applies one, after checking that it applies (residues or slot values, limbs
known, the moduli where it needs them, a power-of-two length where it reorders or transforms);
``ren.testing.compare_files`` tries them to explain a difference.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from ren.interop.words import Words
from ren.ring import Domain, RingSpec, bit_reverse, generator_root_2n

__all__ = ["TRANSFORMS", "apply"]


def _modmul(w: Words, factor: Callable[[int, int], int]) -> np.ndarray:
    out = np.empty_like(w.words)
    n = w.words.shape[2]
    for limb, q in enumerate(_need_moduli(w)):
        f = factor(q, n) % q
        col = w.words[:, limb, :].astype(object) * f % q
        out[:, limb, :] = col.astype(np.uint64)
    return out


def _need_moduli(w: Words) -> tuple[int, ...]:
    if w.moduli is None:
        raise ValueError(f"{w.source}: this needs the moduli (give them with --moduli)")
    return w.moduli


def _power_of_two(w: Words) -> int:
    n: int = w.words.shape[-1]
    if n < 1 or n & (n - 1):
        what = "slot values" if w.slots else "words per limb"
        raise ValueError(f"{w.source} has {n} {what}: this needs a power of two")
    return n


def _bitrev(w: Words) -> np.ndarray:
    n = _power_of_two(w)
    return w.words[..., [bit_reverse(i, n.bit_length() - 1) for i in range(n)]]


def _ntt(w: Words, inverse: bool) -> np.ndarray:
    from ren.poly import Poly

    ring = RingSpec(_power_of_two(w), _need_moduli(w))
    out = []
    for part in w.words:
        src = Domain.NTT if inverse else Domain.COEFF
        p = Poly.from_limbs(part, ring, src, "python")
        out.append((p.intt() if inverse else p.ntt()).limbs())
    return np.stack(out).astype(np.uint64)


def _root_order(w: Words, to_other: bool) -> np.ndarray:
    """NTT slots from Ren's root to Lattigo's (``generator_root_2n``), or back, limb by limb.

    Both NTTs put ``a(psi^(2 brv(i) + 1))`` in slot ``i``; with Lattigo's ``psi' = psi^k``,
    slot ``i`` of Lattigo's is slot ``j`` of Ren's where ``2 brv(j) + 1 = k (2 brv(i) + 1)``:
    the permutation ``ren.interop.openfhe`` applies to an NTT with another root.
    """
    from ren.interop.openfhe import from_ren_ntt, to_ren_ntt

    n = RingSpec(_power_of_two(w), _need_moduli(w)).n  # NTT-friendly moduli, or a ValueError
    moduli = _need_moduli(w)
    roots = [generator_root_2n(q, n) for q in moduli]
    return (from_ren_ntt if to_other else to_ren_ntt)(w.words, moduli, roots)


def _slot_order(w: Words, to_ren: bool) -> np.ndarray:
    """Slots from SEAL's order (powers of 3) to Ren's (powers of 5), or back."""
    z = w.words
    count = _power_of_two(w)
    two_n = 4 * count
    ren_of = {pow(5, i, two_n): i for i in range(count)}
    out = np.empty_like(z)
    for j in range(count):  # SEAL's slot j is m(zeta^(3^j)): Ren's slot, or its conjugate
        e = pow(3, j, two_n)
        i, conj = (ren_of[e], False) if e in ren_of else (ren_of[two_n - e], True)
        if to_ren:
            out[i] = np.conj(z[j]) if conj else z[j]
        else:
            out[j] = np.conj(z[i]) if conj else z[i]
    return out


#: name -> (what it does, the factor ``f(q, n)`` every word is multiplied by, mod ``q``).
_FACTORS: dict[str, tuple[str, Callable[[int, int], int]]] = {
    "mont32": ("times R = 2^32 mod q (plain to Montgomery, 32-bit words)", lambda q, n: 2**32),
    "mont64": ("times R = 2^64 mod q (plain to Montgomery, 64-bit words)", lambda q, n: 2**64),
    "mont16": ("times R = 2^16 mod q (ML-KEM's Montgomery form)", lambda q, n: 2**16),
    "unmont32": ("times 2^-32 mod q (Montgomery to plain)", lambda q, n: pow(2, -32, q)),
    "unmont64": ("times 2^-64 mod q (Montgomery to plain)", lambda q, n: pow(2, -64, q)),
    "unmont16": ("times 2^-16 mod q", lambda q, n: pow(2, -16, q)),
    "negate": ("q - x: every word negated", lambda q, n: -1),
    "times-n": ("times n mod q (an inverse NTT without its n^-1)", lambda q, n: n),
    "times-n-inverse": ("times n^-1 mod q", lambda q, n: pow(n, -1, q)),
}


def _by(factor: Callable[[int, int], int]) -> Callable[[Words], np.ndarray]:
    return lambda w: _modmul(w, factor)


#: name -> (what it does, the function of the words): the conventions ``compare`` recognises.
TRANSFORMS: dict[str, tuple[str, Callable[[Words], np.ndarray]]] = {
    "bitrev": ("the words of each limb in bit-reversed index order", _bitrev),
    **{name: (what, _by(f)) for name, (what, f) in _FACTORS.items()},
    "ntt": ("Ren's NTT of each limb (coefficients to NTT slots)", lambda w: _ntt(w, False)),
    "intt": ("Ren's inverse NTT of each limb", lambda w: _ntt(w, True)),
    "ren-to-lattigo-ntt": (
        "NTT slots from Ren's root (the smallest) to Lattigo's (a generator's power)",
        lambda w: _root_order(w, True),
    ),
    "lattigo-to-ren-ntt": (
        "NTT slots from Lattigo's root to Ren's",
        lambda w: _root_order(w, False),
    ),
    "seal-to-ren-slots": (
        "slots from SEAL's order (powers of 3) to Ren's (powers of 5)",
        lambda w: _slot_order(w, True),
    ),
    "ren-to-seal-slots": ("slots from Ren's order to SEAL's", lambda w: _slot_order(w, False)),
}

_SLOT_TRANSFORMS = ("seal-to-ren-slots", "ren-to-seal-slots")
#: Why a transform limb by limb cannot apply to a SEAL plaintext's row of limbs.
UNSPLIT = (
    "{source} holds the limbs of a SEAL plaintext one after the other, how many the file does "
    "not say (give the moduli with --moduli)"
)


def apply(w: Words, name: str) -> Words:
    """``w`` after the transform ``name`` (one of ``TRANSFORMS``).

    Raises:
        ValueError: an unknown name (the message lists them), a transform of residues on slot
            values or the other way, or one that needs moduli the words do not have.
    """
    if name not in TRANSFORMS:
        raise ValueError(f"no transform {name!r}; the transforms are: {', '.join(TRANSFORMS)}")
    if (name in _SLOT_TRANSFORMS) != w.slots:
        kind = "slot values" if w.slots else "residues"
        raise ValueError(f"{name} does not apply to {kind} ({w.source})")
    if not w.limbs_known:
        raise ValueError(f"{name} works limb by limb: {UNSPLIT.format(source=w.source)}")
    words = TRANSFORMS[name][1](w)
    return dataclasses.replace(w, words=words, source=f"{w.source} after {name}")
