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
precision in bits is given. Exit status: 0 equal, 1 different, 2 a usage error or a file that
cannot be read (one line on stderr, never a traceback).

The moduli come from the files (an ``.npz``'s ``moduli``, OpenFHE's towers, Ren's bytes), from one
file for both, or from ``--moduli``; SEAL's files name theirs only by a hash. Where they are
unknown, the conventions that need them (a Montgomery factor, an NTT, a negation, a factor ``n``)
cannot be tried, and the report says to pass ``--moduli``. A SEAL plaintext's limbs are one row of
``L * n`` words: the moduli split it, or the other file's shape where it holds as many words.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable, Sequence

import numpy as np

from ren.interop.words import Words, check_moduli, load_words
from ren.testing.transforms import TRANSFORMS, UNSPLIT, apply

__all__ = ["TRANSFORMS", "Comparison", "apply", "compare_words", "main"]

_NEED_MODULI = (
    "the moduli are unknown (SEAL's files name them only by a hash): --moduli Q0,Q1,... lets "
    "compare try the conventions that need them (Montgomery factors, NTTs, a negation, a factor n)"
)


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
    if not w.limbs_known:
        return (
            f"{w.source}: {n} words, the limbs of one level one after the other (how many: unknown)"
        )
    known = "moduli known" if w.moduli else "moduli unknown"
    form = f", {w.form} form" if w.form else ""
    return f"{w.source}: {p} part(s) x {L} limb(s) x {n} words ({known}{form})"


def compare_words(a: Words, b: Words, tolerance: float = 2.0**-20) -> Comparison:
    """Compare ``a`` and ``b`` (see the module docstring); never raises on a difference."""
    a = _split(a, b)
    b = _split(b, a)
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
    where = f"part {part}, limb {limb}{q}, word {index}" if a.limbs_known else f"word {index}"
    lines.append(f"differ: {int(diff.sum())} of {a.words.size} words")
    lines.append(
        f"first difference: {where}: "
        f"A {int(a.words[part, limb, index])}, B {int(b.words[part, limb, index])}"
    )
    for p in range(diff.shape[0] if a.limbs_known else 0):
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
            except (ValueError, TypeError, ArithmeticError):  # not for these words
                continue
            if same(moved.words, y.words):
                what = ", then ".join(TRANSFORMS[name][0] for name in chain)
                options = " ".join(f"{flag} {name}" for name in chain)
                found.append(f"known convention: {what}; {options} makes them equal")
                break
        if len(found) == 3:
            break
    if found:
        return found
    none = "no known convention explains the difference (see --list-transforms)"
    if not a.limbs_known or not b.limbs_known:
        return [none, UNSPLIT.format(source=(b if a.limbs_known else a).source)]
    return [none, _NEED_MODULI] if a.moduli is None and not a.slots else [none]


# --------------------------------------------------------------------------------------------
# the command


def _split(w: Words, like: Words) -> Words:
    """A SEAL plaintext's row of limbs split: by its moduli, or as ``like``'s words per part."""
    if w.limbs_known or w.slots:
        return w
    count = w.words.shape[2]
    limbs = None
    if w.moduli:
        limbs = len(w.moduli)
    elif like.limbs_known and not like.slots and like.words.shape[1] * like.words.shape[2] == count:
        limbs = like.words.shape[1]
    if not limbs or count % limbs:
        return w
    words = w.words.reshape(1, limbs, count // limbs)
    source = f"{w.source}, split as {limbs} limbs"
    return dataclasses.replace(w, words=words, limbs_known=True, source=source)


def _load(spec: str, moduli: tuple[int, ...] | None) -> Words:
    path, _, key = spec.partition(":") if spec.count(":") == 1 else (spec, "", "")
    w = load_words(path, key or None)
    if moduli is not None and not w.slots:
        count = w.words.shape[2]
        n, rest = divmod(count, len(moduli))
        if not w.limbs_known and (rest or n & (n - 1)):
            raise ValueError(
                f"--moduli gives {len(moduli)} moduli: {w.source}'s {count} words are no whole "
                "number of limbs of a power-of-two length for them"
            )
        if w.words.shape[:2] == (1, 1) and len(moduli) > 1 and not rest:
            w = dataclasses.replace(w, words=w.words.reshape(1, len(moduli), -1))  # one row
        if len(moduli) != w.words.shape[1]:
            raise ValueError(f"--moduli gives {len(moduli)} moduli for {w.words.shape[1]} limbs")
        w = dataclasses.replace(w, moduli=moduli, limbs_known=True)
    return w


def _moduli(text: str) -> tuple[int, ...]:
    try:
        moduli = tuple(int(q) for q in text.split(","))
    except ValueError:
        raise ValueError(f"--moduli {text!r}: integers separated by commas") from None
    return check_moduli(moduli, "--moduli")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ren.testing compare A B [options]``; returns the exit status.

    Every failure is one line on stderr and the status 2, never a traceback.
    """
    parser = argparse.ArgumentParser(
        prog="python -m ren.testing compare",
        description="Compare two sets of words (.npy, .npz:KEY, SEAL's or OpenFHE's files, Ren's "
        "bytes) word by word, and name a known convention that explains a difference. "
        "Exit status: 0 equal, 1 different, 2 a usage error or a file that cannot be read.",
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
        moduli = _moduli(opts.moduli) if opts.moduli else None
        a, b = _load(opts.a, moduli), _load(opts.b, moduli)
        a = _split(a, b)
        b = _split(b, a)
        for name in opts.apply_a:
            a = apply(a, name)
        for name in opts.apply_b:
            b = apply(b, name)
        result = compare_words(a, b, opts.tolerance)
    except (OSError, ValueError, TypeError) as e:
        print(f"ren.testing compare: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    except Exception as e:  # a fault of Ren's own: still one line, and a status
        text = " ".join(f"{type(e).__name__}: {e}".split())
        print(f"ren.testing compare: could not compare ({text}); please report it", file=sys.stderr)
        return 2
    print(result, end="")
    return 0 if result.equal else 1
