"""``python -m ren.testing compare A B``: two sets of words, compared word by word.

For an engineer checking a library, a GPU kernel or a hardware block against Ren: ``A`` and ``B``
are files ``ren.interop.words.load_words`` reads (``.npy``, ``.npz`` with ``:KEY``, SEAL's
saved ciphertexts and plaintexts, OpenFHE's JSON ciphertexts and keys, Ren's bytes).
``compare_words(a, b)`` says, in this order:

* the shapes (parts, limbs, words per limb) and the moduli where the files tell them; limbs of
  the same moduli in another order are matched by modulus, and it says so;
* whether every word agrees; else the first differing word (its part, limb, modulus and index,
  both values) and how many words differ in each limb;
* whether the difference is a known convention: ``B`` equals ``A`` after one of ``TRANSFORMS``
  (bit-reversed order, a Montgomery factor ``R``, Ren's NTT or inverse NTT, negation, a factor
  ``n`` or ``n^-1``, SEAL's slot order for slot values), with the option that applies it
  (``--apply-a NAME`` or ``--apply-b NAME``).

Slot values (complex arrays) are compared to within ``--tolerance`` (default ``2^-20``) and the
precision in bits is given. Exit status: 0 equal, 1 different, 2 a usage error.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable, Sequence

import numpy as np

from ren.interop.words import Words, load_words
from ren.ring import Domain, RingSpec, generator_root_2n, primitive_root_2n

__all__ = ["TRANSFORMS", "Comparison", "apply", "compare_words", "main"]


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


def _bitrev(w: Words) -> np.ndarray:
    n = w.words.shape[-1]
    bits = n.bit_length() - 1
    order = [int(f"{i:0{bits}b}"[::-1], 2) if bits else 0 for i in range(n)]
    return w.words[..., order]


def _ntt(w: Words, inverse: bool) -> np.ndarray:
    from ren.poly import Poly

    ring = RingSpec(w.words.shape[2], _need_moduli(w))
    out = []
    for part in w.words:
        src = Domain.NTT if inverse else Domain.COEFF
        p = Poly.from_limbs(part, ring, src, "python")
        out.append((p.intt() if inverse else p.ntt()).limbs())
    return np.stack(out).astype(np.uint64)


def _root_order(w: Words, to_other: bool) -> np.ndarray:
    """NTT slots from Ren's root to Lattigo's (``generator_root_2n``), or back, limb by limb.

    Both NTTs put ``a(psi^(2 brv(i) + 1))`` in slot ``i``; with Lattigo's ``psi' = psi^k``,
    slot ``i`` of Lattigo's is slot ``j`` of Ren's where ``2 brv(j) + 1 = k (2 brv(i) + 1)``.
    """
    out = np.empty_like(w.words)
    n = w.words.shape[2]
    bits = n.bit_length() - 1
    odd = [2 * (int(f"{i:0{bits}b}"[::-1], 2) if bits else 0) + 1 for i in range(n)]
    slot_of = {e: j for j, e in enumerate(odd)}
    for limb, q in enumerate(_need_moduli(w)):
        psi, other = primitive_root_2n(q, n), generator_root_2n(q, n)
        k = next(k for k in range(1, 2 * n, 2) if pow(psi, k, q) == other)
        perm = [slot_of[k * e % (2 * n)] for e in odd]  # Lattigo's slot i = Ren's slot perm[i]
        if to_other:
            out[:, limb, :] = w.words[:, limb, perm]
        else:
            out[:, limb, perm] = w.words[:, limb, :]
    return out


def _slot_order(w: Words, to_ren: bool) -> np.ndarray:
    """Slots from SEAL's order (powers of 3) to Ren's (powers of 5), or back."""
    z = w.words
    count = z.shape[0]
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
    words = TRANSFORMS[name][1](w)
    return dataclasses.replace(w, words=words, source=f"{w.source} after {name}")


@dataclasses.dataclass
class Comparison:
    """What ``compare_words`` found: ``equal``, and the report's lines."""

    equal: bool
    lines: list[str]

    def __str__(self) -> str:
        return "\n".join(self.lines) + "\n"


def _describe(w: Words) -> str:
    if w.slots:
        return f"{w.source}: {w.words.shape[0]} slot values"
    p, L, n = w.words.shape
    known = "moduli known" if w.moduli else "moduli unknown"
    form = f", {w.form} form" if w.form else ""
    return f"{w.source}: {p} part(s) x {L} limb(s) x {n} words ({known}{form})"


def compare_words(a: Words, b: Words, tolerance: float = 2.0**-20) -> Comparison:
    """Compare ``a`` and ``b`` (see the module docstring); never raises on a difference."""
    lines = [f"A: {_describe(a)}", f"B: {_describe(b)}"]
    if a.slots != b.slots:
        lines.append("A and B are not comparable: one holds residues, the other slot values")
        return Comparison(False, lines)
    if a.words.shape != b.words.shape:
        lines.append(f"the shapes differ: A {a.words.shape}, B {b.words.shape}")
        return Comparison(False, lines)
    if a.slots:
        return _compare_slots(a, b, tolerance, lines)
    if a.moduli and b.moduli and a.moduli != b.moduli:
        if sorted(a.moduli) != sorted(b.moduli):
            lines.append(f"the moduli differ: A {list(a.moduli)}, B {list(b.moduli)}")
            return Comparison(False, lines)
        order = [b.moduli.index(q) for q in a.moduli]
        b = dataclasses.replace(b, words=b.words[:, order, :], moduli=a.moduli)
        lines.append(f"the same moduli in another order: B's limbs taken as {order} (SEAL keeps")
        lines.append("the special prime last; Ren's key ring holds the special moduli first)")
    moduli = a.moduli or b.moduli
    diff = a.words != b.words
    if not diff.any():
        lines.append(f"equal: all {a.words.size} words agree")
        return Comparison(True, lines)
    part, limb, index = (int(x) for x in np.argwhere(diff)[0])
    q = f" (q = {moduli[limb]})" if moduli else ""
    lines.append(f"differ: {int(diff.sum())} of {a.words.size} words")
    lines.append(
        f"first difference: part {part}, limb {limb}{q}, word {index}: "
        f"A {int(a.words[part, limb, index])}, B {int(b.words[part, limb, index])}"
    )
    for p in range(diff.shape[0]):
        counts = ", ".join(str(int(c)) for c in diff[p].sum(axis=1))
        lines.append(f"  part {p}: differing words per limb: {counts}")
    with_moduli = (dataclasses.replace(a, moduli=moduli), dataclasses.replace(b, moduli=moduli))
    lines += _conventions(*with_moduli, lambda x, y: bool(np.array_equal(x, y)))
    return Comparison(False, lines)


def _compare_slots(a: Words, b: Words, tolerance: float, lines: list[str]) -> Comparison:
    err = float(np.max(np.abs(a.words - b.words), initial=0.0))
    bits = np.inf if err == 0 else -np.log2(err)
    lines.append(f"largest slot difference {err:.3g} ({bits:.1f} bits); tolerance {tolerance:.3g}")
    if err <= tolerance:
        lines.append("equal within the tolerance")
        return Comparison(True, lines)
    j = int(np.argmax(np.abs(a.words - b.words)))
    lines.append(f"largest at slot {j}: A {a.words[j]:.6g}, B {b.words[j]:.6g}")
    lines += _conventions(a, b, lambda x, y: bool(np.max(np.abs(x - y)) <= tolerance))
    return Comparison(False, lines)


#: Transforms tried before another one when no single one explains a difference.
_FIRST = ("ntt", "intt", "bitrev")


def _conventions(a: Words, b: Words, same: Callable[[np.ndarray, np.ndarray], bool]) -> list[str]:
    """The transforms that make ``A`` equal ``B`` (or ``B`` equal ``A``), as advice.

    Single transforms first; then one of ``_FIRST`` followed by another (coefficients against
    another library's NTT form, say). At most three are named.
    """
    chains: list[tuple[str, ...]] = [(name,) for name in TRANSFORMS]
    chains += [(f, name) for f in _FIRST for name in TRANSFORMS if name != f]
    found: list[str] = []
    for chain in chains:
        if found and len(chain) > 1:
            break
        for x, y, flag in ((a, b, "--apply-a"), (b, a, "--apply-b")):
            try:
                moved = x
                for name in chain:
                    moved = apply(moved, name)
            except (ValueError, TypeError):  # not for these words, or moduli unknown
                continue
            if same(moved.words, y.words):
                what = ", then ".join(TRANSFORMS[name][0] for name in chain)
                options = " ".join(f"{flag} {name}" for name in chain)
                found.append(f"known convention: {what}; {options} makes them equal")
                break
        if len(found) == 3:
            break
    return found or ["no known convention explains the difference (see --list-transforms)"]


# --------------------------------------------------------------------------------------------
# the command


def _load(spec: str, moduli: tuple[int, ...] | None) -> Words:
    path, _, key = spec.partition(":") if spec.count(":") == 1 else (spec, "", "")
    w = load_words(path, key or None)
    if moduli is not None and not w.slots:
        one_row = w.words.shape[:2] == (1, 1) and w.words.shape[2] % len(moduli) == 0
        if one_row and len(moduli) > 1:  # limbs one after the other (a SEAL plaintext)
            w = dataclasses.replace(w, words=w.words.reshape(1, len(moduli), -1))
        if len(moduli) != w.words.shape[1]:
            raise ValueError(f"--moduli gives {len(moduli)} moduli for {w.words.shape[1]} limbs")
        w = dataclasses.replace(w, moduli=moduli)
    return w


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ren.testing compare A B [options]``; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m ren.testing compare",
        description="Compare two sets of words (.npy, .npz:KEY, SEAL's or OpenFHE's files, Ren's "
        "bytes) word by word, and name a known convention that explains a difference. "
        "Exit status: 0 equal, 1 different, 2 a usage error.",
    )
    parser.add_argument("a", nargs="?", help="the first file (PATH or PATH.npz:KEY)")
    parser.add_argument("b", nargs="?", help="the second file")
    parser.add_argument("--moduli", help="the limbs' moduli, comma-separated, for both files")
    parser.add_argument("--apply-a", action="append", default=[], metavar="T", help="transform A")
    parser.add_argument("--apply-b", action="append", default=[], metavar="T", help="transform B")
    parser.add_argument("--tolerance", type=float, default=2.0**-20, help="for slot values")
    parser.add_argument("--list-transforms", action="store_true", help="list them and exit")
    try:
        opts = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    if opts.list_transforms:
        for name, (what, _) in TRANSFORMS.items():
            print(f"{name:<20} {what}")
        return 0
    if opts.a is None or opts.b is None:
        print("ren.testing compare: give two files, A and B", file=sys.stderr)
        return 2
    try:
        moduli = None
        if opts.moduli:
            moduli = tuple(int(q) for q in opts.moduli.split(","))
        a, b = _load(opts.a, moduli), _load(opts.b, moduli)
        for name in opts.apply_a:
            a = apply(a, name)
        for name in opts.apply_b:
            b = apply(b, name)
    except (OSError, ValueError, TypeError) as e:
        print(f"ren.testing compare: {e}", file=sys.stderr)
        return 2
    result = compare_words(a, b, opts.tolerance)
    print(result, end="")
    return 0 if result.equal else 1
