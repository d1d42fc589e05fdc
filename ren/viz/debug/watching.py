"""Watched values: the ``slots`` view of a scheme's values, through the watch protocol.

A value the debugger can watch has ``parts`` (a tuple of ``Poly``) and ``__ren_watch__(context)``
returning a view with ``summary``, ``decrypt(parts)`` and ``precision_bits(got, expected)``, and
optionally ``precision_label`` (what the bits measure: ``"absolute"`` for CKKS),
``notes(parts)`` (lines saying what ranges the value breaks) and ``predicted()`` (the figure a
static noise model gives, in words, or ``None``); the debugger names no scheme.

A watched value whose parts are outputs of the realization is read from the buffers its kernels
wrote. One that the realization only passes through (a bootstrap's stage, fused into the kernels
of the next) has no buffer of its own there: it is *computed apart*, by a realization of its own
graph that no observer sees, no ``ren.jit`` capture records and that repoints no ``Poly``, so the
stepped realization (its kernels, buffers, plan and results) is the one ``realize`` would run. It
is shown once the stepped realization has run every kernel that can work toward it (``_made``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import weakref
from collections.abc import Iterator
from typing import Self, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ren.engine.observe import OBSERVERS
from ren.engine.realize import prepare, uncaptured
from ren.ir.node import Node
from ren.ir.region import region_name, region_of
from ren.poly import Poly
from ren.repoint import storage_or_const, stored
from ren.viz.debug.screens import Slots, StepperBase, Watchable, WatchView, complex_row

T = TypeVar("T")

# --------------------------------------------------------------------------------------------
# watched values


@dataclasses.dataclass
class Watch:
    """A watched ciphertext: what it is, its context, the values expected, its label."""

    ciphertext: weakref.ref[Watchable]  # to a ckks.Ciphertext
    context: object  # a ckks.Context, or None: the ciphertext's own (the value checks it)
    expected: NDArray[np.complex128] | None
    label: str


#: What ``_part`` says of a part computed apart (fused away in the stepped realization).
APART = "computed apart"

#: Ciphertexts registered with ``watch``: every stepper and debugger session sees them.
_WATCHED: list[Watch] = []


def watch(
    ciphertext: T,
    context: object = None,
    expected: ArrayLike | None = None,
    label: str | None = None,
) -> T:
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


def _view(ct: object, context: object = None) -> tuple[Watchable, WatchView]:
    """``ct`` and its watch view (its ``__ren_watch__(context)``): how the debugger shows it.

    The view has ``summary`` (a line after the label), ``decrypt(parts)`` (the slots of a copy of
    the value holding these parts) and ``precision_bits(got, expected)``; a scheme's value type
    provides it, so the debugger names no scheme.
    """
    method = getattr(ct, "__ren_watch__", None)
    if method is None or not hasattr(ct, "parts"):
        raise TypeError(
            f"watch takes a ckks.Ciphertext (a value with __ren_watch__), got {type(ct).__name__}"
        )
    return cast(Watchable, ct), cast(WatchView, method(context))  # checked just above


def _make_watch(
    ct: object, context: object, expected: ArrayLike | None, label: str | None, i: int
) -> Watch:
    value, _ = _view(ct, context)  # a bad value or context fails here, where it is registered
    shadow = None if expected is None else np.asarray(expected, dtype=np.complex128).reshape(-1)
    return Watch(weakref.ref(value), context, shadow, label or f"ct{i}")


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
    """The stepper's ``watch``, ``decrypt`` and ``slots``, and the values computed apart."""

    def watch(
        self,
        ciphertext: object,
        context: object = None,
        expected: ArrayLike | None = None,
        label: str | None = None,
    ) -> Self:
        """Watch a ``ckks.Ciphertext`` in this stepper's ``slots`` view (see ``watch``)."""
        w = _make_watch(ciphertext, context, expected, label, 0)
        mine = [v for v in self._watches if v.ciphertext() is ciphertext]
        if mine:  # watched again: the new context and shadow replace the old
            w.label = label or mine[0].label
            self._watches[self._watches.index(mine[0])] = w
        else:
            w.label = label or f"ct{len(self._all_watches())}"
            self._watches.append(w)
        return self

    def _all_watches(self) -> list[Watch]:
        """This stepper's watches, then ``watch``'s; a ciphertext once (the first kept)."""
        out, seen = [], set()
        for w in [*self._watches, *_WATCHED]:
            ct = w.ciphertext()
            if ct is not None and id(ct) not in seen:
                seen.add(id(ct))
                out.append(w)
        return out

    # --- where a part is -------------------------------------------------------------------------
    def _in_graph(self, node: Node) -> bool:
        """Whether ``node`` is in the graph this realization was handed."""
        if self._graph is None:
            self._graph = frozenset(self.realization.sink.toposort())
        return node in self._graph

    def _made(self, nodes: tuple[Node, ...]) -> int:
        """The last kernel that can work toward ``nodes``: once it ran, they are shown.

        A kernel can when it computes in a region the nodes' graph was built in
        (``ren.ir.region.region_of``) and reads only that graph's stored inputs and what such
        kernels wrote; with none (a program without regions), the last kernel.
        """
        made = self._made_at.get(nodes)
        if made is None:
            regions: set[tuple[str, ...]] = set()
            ok: set[int] = set()  # buffers that can hold part of the value: its inputs first
            seen, stack = set(), list(nodes)
            while stack:
                node = stack.pop()
                if node in seen:
                    continue
                seen.add(node)
                where = stored(node)
                if where is not None:
                    ok.add(id(where[0]))
                elif not storage_or_const(node):
                    regions.add(region_of(node))
                    stack.extend(node.src)
            made = len(self._kernels) - 1
            last = None
            for i, k in enumerate(self._kernels):
                reads = all(id(b) in ok or id(b.base) in ok for b in k.bufs[1:])
                if reads and tuple(getattr(k, "region", ())) in regions:
                    last = i
                    ok.add(id(k.bufs[0]))
                else:
                    ok.discard(id(k.bufs[0]))  # written over by a kernel of something else
            made = self._made_at[nodes] = made if last is None else last
        return made

    def _part(self, p: Poly, nodes: tuple[Node, ...] = ()) -> tuple[Poly | None, str]:
        """A ciphertext part as a stored poly at this step, or ``None`` and why it is not.

        For a part computed apart, the reason is ``APART``. ``nodes`` are the nodes of the whole
        value (its parts are shown together).
        """
        becomes = self.realization.ctx.becomes_map
        node = becomes.get(p.node)
        if node is None and p.node in becomes.values():
            node = p.node  # repointed already (after the last unit)
        if node is None:
            if p.realized:
                return p, ""
            if not self._in_graph(p.node):
                return None, "not computed by this realization (realize it on its own first)"
            made = self._made(nodes or (p.node,))
            if not self.done and made >= self.ran:
                name = region_name(getattr(self._kernels[made], "region", ()))
                return None, (
                    f"fused away in this realization: computed apart once kernel {made} ran"
                    + (f" ({name})" if name else "")
                )
            return Poly._wrap(self._computed_apart(p.node)), APART
        where = stored(node)
        if where is None:
            return Poly._wrap(node), ""
        info = self._infos.get(id(where[0]))
        if info is not None and info.writer is not None and info.writer >= self.ran:
            return None, f"not written yet: kernel {info.writer} writes it"
        return Poly._wrap(node), ""

    def _computed_apart(self, node: Node) -> Node:
        """``node``'s value from a realization apart (with every part due now): its stored node.

        That realization is prepared and run with no ``finish``, so it repoints no ``Poly``;
        no observer sees it and no ``ren.jit`` capture records it. It shares no kernel, buffer
        or plan with the stepped one (it reads only the stored inputs, which nothing writes).
        """
        if node not in self._apart:
            becomes, todo = self.realization.ctx.becomes_map, [node]
            for w in self._all_watches():  # every part due now, in one realization
                ct = w.ciphertext()
                nodes = tuple(p.node for p in ct.parts) if ct is not None else ()
                fused = [n for n in nodes if self._in_graph(n) and n not in becomes]
                if fused and (self.done or self._made(nodes) < self.ran):
                    todo += [n for n in fused if n not in todo and n not in self._apart]
            todo = [n for n in todo if not storage_or_const(n)]
            with _unobserved():
                apart = prepare(tuple(todo))  # no finish: nothing is repointed
                apart.run()
            for n in todo:
                self._apart[n] = apart.ctx.becomes_map[n]
        return self._apart[node]

    def _relevant(self, w: Watch) -> bool:
        ct = w.ciphertext()
        becomes = self.realization.ctx.becomes_map
        values = set(becomes.values())
        return ct is not None and any(
            p.node in becomes or p.node in values or self._in_graph(p.node) for p in ct.parts
        )

    def _parts(self, ct: Watchable) -> tuple[tuple[Poly, ...], bool]:
        """``ct``'s parts as stored polys now, and whether they were computed apart.

        Raises:
            ValueError: naming the first part not available (and why).
        """
        nodes = tuple(p.node for p in ct.parts)
        parts, apart = [], False
        for i, p in enumerate(ct.parts):
            poly, why = self._part(p, nodes)
            if poly is None:
                raise ValueError(f"part c{i} is {why}")
            parts.append(poly)
            apart = apart or why == APART
        return tuple(parts), apart

    def decrypt(self, ciphertext: object, context: object = None) -> Slots:
        """The slots of ``ciphertext`` from the buffers this realization wrote so far.

        A value the realization fuses away is computed apart (see the module), once the kernels
        that can work toward it ran.

        Raises:
            ValueError: when a part is not written yet (or not computed here), or the context
                holds no secret key.
        """
        value, view = _view(ciphertext, context)
        parts, _ = self._parts(value)
        with _unobserved():
            return view.decrypt(parts)

    def _available(self) -> set[int]:
        """The watches (by ``id``) of this realization whose every part can be shown now."""
        ready = set()
        for w in self._all_watches():
            ct = w.ciphertext()
            if ct is None or not self._relevant(w):
                continue
            nodes = tuple(p.node for p in ct.parts)
            if all(self._ready(p, nodes) for p in ct.parts):
                ready.add(id(w))
        return ready

    def _ready(self, p: Poly, nodes: tuple[Node, ...]) -> bool:
        becomes = self.realization.ctx.becomes_map
        node = becomes.get(p.node, p.node if p.node in becomes.values() else None)
        if node is None:
            return p.realized or self.done or self._made(nodes) < self.ran
        where = stored(node)
        info = self._infos.get(id(where[0])) if where is not None else None
        return info is None or info.writer is None or info.writer < self.ran

    def _arrivals(self, before: set[int], limit: int = 4) -> str:
        """The ``slots`` of the watches available now and not in ``before``; the others waiting."""
        now = self._available()
        todo = [w for w in self._all_watches() if id(w) in now - before]
        lines = [self._slot_rows(todo, limit)] if todo else []
        waiting = [
            w.label
            for w in self._all_watches()
            if self._relevant(w) and id(w) not in now and w.ciphertext() is not None
        ]
        if waiting:
            lines.append(f"not yet available: {', '.join(waiting)} ('slots' says when)")
        return "\n".join(lines)

    def slots(
        self,
        ciphertext: object = None,
        context: object = None,
        expected: ArrayLike | None = None,
        limit: int = 4,
    ) -> str:
        """Decrypted slots of a ciphertext as its parts' buffers stand now, and their precision.

        The default ciphertext is every watched one this realization computes, whether as an
        output or on the way (fused away: computed apart, see the module). The precision is
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
            return self._slot_rows([w], limit)
        everything = self._all_watches()
        todo = [w for w in everything if self._relevant(w)]
        if todo:
            return self._slot_rows(todo, limit)
        if everything:
            return (
                "no watched ciphertext is computed by this realization (its parts are "
                "not in its graph; realize the ciphertext on its own to watch it)"
            )
        return (
            "no ciphertext is watched: call ren.viz.debug.watch(ct, context, expected) "
            "in the script, or Stepper.watch"
        )

    def _slot_rows(self, todo: list[Watch], limit: int) -> str:
        lines = []
        for w in todo:
            ct = w.ciphertext()
            if ct is None:  # collected since
                continue
            _, view = _view(ct, w.context)
            head = f"{w.label}: {view.summary}"
            try:
                parts, apart = self._parts(ct)
                with _unobserved():
                    got = view.decrypt(parts)
            except ValueError as e:
                lines += [head, f"  {e}"]
                continue
            lines.append(head + ("  (computed apart: fused away in this realization)" * apart))
            shown = min(limit, got.size)
            lines.append(f"  slots[:{shown}]    {complex_row(got[:shown])}")
            if w.expected is not None:
                expected = np.zeros(got.size, np.result_type(w.expected, float))  # missing: 0
                expected[: min(got.size, w.expected.size)] = w.expected[: got.size]
                lines.append(f"  expected[:{shown}] {complex_row(expected[:shown])}")
                bits = view.precision_bits(got, expected)
                label = getattr(view, "precision_label", "")
                what = f"{label}, vs expected" if label else "vs expected"
                lines.append(f"  precision: {bits:.2f} bits ({what}; over {got.size} slots)")
                if text := getattr(view, "predicted", lambda: None)():  # beside the measure
                    lines.append(f"  predicted: {text}")
            lines += self._range_notes(view, parts)
        return "\n".join(lines)

    @staticmethod
    def _range_notes(view: WatchView, parts: tuple[Poly, ...]) -> list[str]:
        """The ranges the value breaks (the view's optional ``notes(parts)``), one line each."""
        notes = getattr(view, "notes", None)
        if notes is None:
            return []
        with _unobserved():
            return [f"  out of range: {line}" for line in notes(parts)]
