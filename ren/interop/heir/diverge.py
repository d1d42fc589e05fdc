"""Where an encrypted HEIR program departs from its cleartext: the first op, with both values.

``diverge(program, args)`` runs the program twice on the same inputs: encrypted on Ren, noting
every scheme op's result, and in cleartext (``ren.interop.heir.clear``: the same ops on plain
slot vectors), noting the same. It then decrypts the encrypted results in order and returns the
first whose slots depart from the cleartext's by more than ``threshold`` (a ``Divergence``), or
``None``. The cleartext may come from another module (``reference=``): the program's source
lowered again, to check a lowered file someone edited or a pass changed. The two runs are
compared op for op in the order they ran, so they must run the same ops: where the op names part,
that is the divergence (``kind="op"``).

An error is measured over every slot, relative to ``max(1, max |cleartext|)`` (CKKS); BGV and
BFV compare the integers mod ``t`` exactly.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ren.interop.heir.ir import Op, tensor_type
from ren.interop.heir.program import Program

__all__ = ["DEFAULT_THRESHOLD", "Divergence", "diverge", "sample_args"]

#: The default threshold (CKKS): an error past ``2^-10`` of the values' size.
DEFAULT_THRESHOLD = 2.0**-10


@dataclasses.dataclass(frozen=True)
class Divergence:
    """The first op an encrypted run departs from the cleartext at.

    ``index`` counts the scheme ops run before it; ``source`` is its line in the source where
    ``heir.compile`` found it (else the op's own location); ``kind`` is ``"value"`` (its slots
    depart by ``error``) or ``"op"`` (the two runs ran different ops here: ``op`` encrypted,
    ``reference`` in cleartext). ``encrypted`` and ``clear`` are the slots (``None`` for
    ``"op"``).
    """

    index: int
    op: Op
    kind: str
    error: float
    encrypted: np.ndarray | None
    clear: np.ndarray | None
    reference: Op | None = None
    source: str | None = None

    def __str__(self) -> str:
        loc = self.source or self.op.loc
        where = f"{self.op.name} {' '.join(self.op.results)} (line {self.op.line}" + (
            f", {loc})" if loc else ")"
        )
        if self.kind == "op":
            other = self.reference.name if self.reference else "nothing"
            return f"op {self.index}: the runs part: {where} encrypted, {other} in cleartext"
        assert self.encrypted is not None and self.clear is not None
        worst = int(np.argmax(np.abs(_difference(self.encrypted, self.clear))))
        lines = [
            f"op {self.index}: {where} departs from the cleartext by {self.error:.3g}",
            f"  worst slot {worst}: encrypted {_show(self.encrypted[worst])}, "
            f"cleartext {_show(self.clear[worst])}",
            f"  encrypted slots: {_first(self.encrypted)}",
            f"  cleartext slots: {_first(self.clear)}",
        ]
        return "\n".join(lines)


def _show(v: Any) -> str:
    return f"{v:.6g}" if isinstance(v, float | np.floating) else str(v)


def _first(v: np.ndarray, k: int = 8) -> str:
    return "[" + ", ".join(_show(x) for x in v[:k]) + (", ...]" if v.size > k else "]")


def _difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)


def _error(program: Program, got: np.ndarray, want: np.ndarray) -> float:
    """The largest slot error: relative to ``max(1, max |want|)`` (CKKS), or a mismatch count."""
    if program.scheme != "ckks":
        t = getattr(program.params, "t", 0)
        return float(np.count_nonzero((np.asarray(got, dtype=object) - want) % t))
    size = max(1.0, float(np.max(np.abs(want))))
    return float(np.max(np.abs(_difference(got, want)))) / size


def diverge(
    program: Program,
    args: list[Any],
    *,
    reference: Program | None = None,
    threshold: float | None = None,
    device: str | None = None,
) -> Divergence | None:
    """The first scheme op whose encrypted result departs from the cleartext's, or ``None``.

    Args:
        program: the program run encrypted.
        args: its arguments (arrays shaped like the function's).
        reference: the program whose cleartext is the reference (default: ``program``).
        threshold: the largest error accepted (CKKS; default ``DEFAULT_THRESHOLD``); BGV and BFV
            accept none.
        device: Ren's device for the encrypted run.
    """
    limit = DEFAULT_THRESHOLD if threshold is None else float(threshold)
    if limit < 0:
        raise ValueError(f"threshold must be at least 0, got {threshold}")
    clear: list[tuple[Op, Any]] = []
    encrypted: list[tuple[Op, Any]] = []
    (reference or program).run_clear(list(args), clear)
    program.run_traced(list(args), encrypted, device)
    for i, ((op, value), pair) in enumerate(
        zip(encrypted, clear + [None] * len(encrypted), strict=False)
    ):
        other, want = pair if pair is not None else (None, None)
        if other is None or other.name != op.name:
            source = program.locations.get(op.line)
            return Divergence(i, op, "op", float("inf"), None, None, other, source)
        got, expected = program.slots_of(value, device), (reference or program).slots_of(want)
        if got is None or expected is None:
            continue
        error = _error(program, got, expected)
        if error > (0 if program.scheme != "ckks" else limit):
            source = program.locations.get(op.line)
            return Divergence(i, op, "value", error, got, expected, None, source)
    return None


def sample_args(program: Program, seed: int = 0) -> list[Any]:
    """Random arguments for ``program``'s function, shaped and typed as its signature says.

    Floats uniform in ``[-1, 1]``; integers in ``[-8, 8]`` (small, so that BGV's sums and
    products stay below its plaintext modulus).
    """
    rng = np.random.default_rng(seed)
    info = program.functions[program.entry].attr("heir.interface") or {}
    out: list[Any] = []
    for given in info.get("input_types", []):
        text = str(getattr(given, "text", given))
        t = tensor_type(text)
        shape, element = (t.shape, t.element) if t is not None else ((), text)
        if element.startswith("f") or element.startswith("bf"):
            value: Any = rng.uniform(-1, 1, shape)
        else:
            value = rng.integers(-8, 9, shape)
        out.append(value if shape else value.item())
    return out
