"""Watched values: the ``slots`` view of a scheme's values, through the watch protocol.

A value the debugger can watch has ``parts`` (a tuple of ``Poly``) and ``__ren_watch__(context)``
returning a view with ``summary``, ``decrypt(parts)`` and ``precision_bits(got, expected)``; the
debugger names no scheme.
"""

from __future__ import annotations

import contextlib
import dataclasses
import weakref
from collections.abc import Iterator
from typing import Any, Self

import numpy as np

from ren.engine.observe import OBSERVERS
from ren.engine.realize import uncaptured
from ren.poly import Poly
from ren.repoint import stored
from ren.viz.debug.screens import StepperBase, _complex_row

# --------------------------------------------------------------------------------------------
# watched values


@dataclasses.dataclass
class _Watch:
    ciphertext: weakref.ref  # to a ckks.Ciphertext
    context: Any  # a ckks.Context, or None: the ciphertext's own
    expected: np.ndarray | None
    label: str


#: Ciphertexts registered with ``watch``: every stepper and debugger session sees them.
_WATCHED: list[_Watch] = []


def watch(
    ciphertext: Any, context: Any = None, expected: Any = None, label: str | None = None
) -> Any:
    """Register a CKKS ciphertext (and its plaintext shadow) for the debugger's ``slots`` view.

    Args:
        ciphertext: a ``ckks.Ciphertext``, usually not realized yet.
        context: the ``ckks.Context`` holding the secret key (default: the ciphertext's own).
        expected: the slots it should hold, computed in plaintext with NumPy; the ``slots`` view
            then shows ``ckks.precision_bits`` against it.
        label: a name for the screens (default: ``ct0``, ``ct1``, ... in order of registration).

    Returns:
        ciphertext (ckks.Ciphertext): ``ciphertext`` itself, so a script can write
            ``z = watch(x * y, ctx, xs * ys)``.

    Raises:
        TypeError: for a value that is not a ``ckks.Ciphertext``.
    """
    _WATCHED[:] = [w for w in _WATCHED if w.ciphertext() is not None]
    _WATCHED.append(_make_watch(ciphertext, context, expected, label, len(_WATCHED)))
    return ciphertext


def _view(ct: Any, context: Any = None) -> Any:
    """The watch view of ``ct`` (its ``__ren_watch__(context)``): how the debugger shows it.

    The view has ``summary`` (a line after the label), ``decrypt(parts)`` (the slots of a copy of
    the value holding these parts) and ``precision_bits(got, expected)``; a scheme's value type
    provides it, so the debugger names no scheme.
    """
    method = getattr(ct, "__ren_watch__", None)
    if method is None or not hasattr(ct, "parts"):
        raise TypeError(
            f"watch takes a ckks.Ciphertext (a value with __ren_watch__), got {type(ct).__name__}"
        )
    return method(context)


def _make_watch(ct: Any, context: Any, expected: Any, label: str | None, i: int) -> _Watch:
    _view(ct, context)  # a bad value or context fails here, where it is registered
    shadow = None if expected is None else np.asarray(expected, dtype=np.complex128).reshape(-1)
    return _Watch(weakref.ref(ct), context, shadow, label or f"ct{i}")


@contextlib.contextmanager
def _unobserved() -> Iterator[None]:
    """Hide the realizations in the block from observers and jit captures.

    Realizations in the block (a decryption for the ``slots`` view) are seen by no observer,
    recorded by no jit capture, and so never stop the debugger again.
    """
    token = OBSERVERS.set(())
    try:
        with uncaptured():
            yield
    finally:
        OBSERVERS.reset(token)


class WatchViews(StepperBase):
    """The stepper's ``watch``, ``decrypt`` and ``slots``."""

    def watch(self, ciphertext: Any, context: Any = None, expected: Any = None) -> Self:
        """Watch a ``ckks.Ciphertext`` in this stepper's ``slots`` view (see ``watch``)."""
        w = _make_watch(ciphertext, context, expected, None, 0)
        mine = [v for v in self._watches if v.ciphertext() is ciphertext]
        if mine:  # watched again: the new context and shadow replace the old
            w.label = mine[0].label
            self._watches[self._watches.index(mine[0])] = w
        else:
            w.label = f"ct{len(self._all_watches())}"
            self._watches.append(w)
        return self

    def _all_watches(self) -> list[_Watch]:
        return [w for w in [*self._watches, *_WATCHED] if w.ciphertext() is not None]

    def _part(self, p: Poly) -> tuple[Poly | None, str]:
        """A ciphertext part as a stored poly at this step, or why it is not available."""
        becomes = self.realization.ctx.becomes_map
        node = becomes.get(p.node)
        if node is None and p.node in becomes.values():
            node = p.node  # repointed already (after the last unit)
        if node is None:
            if p.realized:
                return p, ""
            return None, "not computed by this realization (realize it on its own first)"
        where = stored(node)
        if where is None:
            return Poly._wrap(node), ""
        info = self._infos.get(id(where[0]))
        if info is not None and info.writer is not None and info.writer >= self.ran:
            return None, f"not written yet: kernel {info.writer} writes it"
        return Poly._wrap(node), ""

    def _relevant(self, w: _Watch) -> bool:
        ct = w.ciphertext()
        becomes = self.realization.ctx.becomes_map
        values = set(becomes.values())
        return ct is not None and any(p.node in becomes or p.node in values for p in ct.parts)

    def decrypt(self, ciphertext: Any, context: Any = None) -> np.ndarray:
        """The slots of ``ciphertext`` from the buffers this realization wrote so far.

        Raises:
            ValueError: when a part is not written yet (or not computed here), or the context
                holds no secret key.
        """
        ct = ciphertext
        view = _view(ct, context)
        parts = []
        for i, p in enumerate(ct.parts):
            poly, why = self._part(p)
            if poly is None:
                raise ValueError(f"part c{i} is {why}")
            parts.append(poly)
        with _unobserved():
            return view.decrypt(tuple(parts))

    def slots(
        self, ciphertext: Any = None, context: Any = None, expected: Any = None, limit: int = 4
    ) -> str:
        """Decrypted slots of a ciphertext as its parts' buffers stand now, and their precision.

        The default ciphertext is every watched one this realization computes. The precision is
        ``ckks.precision_bits`` against ``expected`` (the plaintext shadow given to ``watch``, when
        not given here).
        """
        if ciphertext is not None:
            match = [w for w in self._all_watches() if w.ciphertext() is ciphertext]
            w = _make_watch(ciphertext, context, expected, None, 0)
            w.label = match[0].label if match else "ciphertext"
            if w.expected is None and match:
                w.expected = match[0].expected
            if w.context is None and match:
                w.context = match[0].context
            todo = [w]
        else:
            everything = self._all_watches()
            todo = [w for w in everything if self._relevant(w)]
            if not todo:
                if everything:
                    return (
                        "no watched ciphertext is computed by this realization (its parts are "
                        "not outputs here; realize the ciphertext on its own to watch it)"
                    )
                return (
                    "no ciphertext is watched: call ren.viz.debug.watch(ct, context, expected) "
                    "in the script, or Stepper.watch"
                )
        lines = []
        for w in todo:
            ct = w.ciphertext()
            if ct is None:  # collected since
                continue
            view = _view(ct, w.context)
            lines.append(f"{w.label}: {view.summary}")
            try:
                got = self.decrypt(ct, w.context)
            except ValueError as e:
                lines.append(f"  {e}")
                continue
            shown = min(limit, got.size)
            lines.append(f"  slots[:{shown}]    {_complex_row(got[:shown])}")
            if w.expected is not None:
                expected = w.expected
                if expected.size < got.size:
                    expected = np.concatenate([expected, np.zeros(got.size - expected.size)])
                lines.append(f"  expected[:{shown}] {_complex_row(expected[:shown])}")
                bits = view.precision_bits(got, expected[: got.size])
                lines.append(f"  precision: {bits:.2f} bits (over {got.size} slots)")
        return "\n".join(lines)
