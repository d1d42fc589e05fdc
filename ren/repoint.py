"""Where a value is stored, and how a realization repoints the ``Poly`` values that used it.

Every ``Poly`` is registered (weakly, by ``id``) in the registry of the thread that made it.
After a realization, ``repoint`` points the values it was asked for at their buffers, and
rewrites this thread's other live values that used one of them to read the buffer instead, so
nothing is computed twice. Another thread's values keep their graphs: they compute the same words
when realized, and a ``ren.jit`` capture in progress there never reads a buffer it did not
compute. ``stored`` and ``storage`` read where a stored value lives.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from ren.device import Buffer
from ren.ir.facts import is_const
from ren.ir.node import Node
from ren.ir.op import DType, Op
from ren.ir.rewrite import Pat, graph_rewrite

if TYPE_CHECKING:
    from ren.poly import Poly

__all__ = ["LIVE", "repoint", "storage", "storage_or_const", "stored"]


#: The fewest entries the registry grows to before dead ones are dropped. Small: every
#: realization walks the registry, and eager code makes and drops values at a high rate.
PURGE_MIN = 64


class _Registry(threading.local):
    """The live ``Poly`` values made in the current thread, by ``id`` (weakly held).

    After a realization, the ones whose graph overlapped are repointed to the realized buffers. A
    ``Poly`` need not be hashable to be here. Each thread has its own registry, so a realization
    in one thread never rewrites the values another thread is building (or capturing with
    ``ren.jit``); the values a realization was *asked for* are repointed whichever thread made
    them. Dead entries are purged when the registry has doubled since the last purge.
    """

    def __init__(self) -> None:
        self.refs: dict[int, weakref.ref[Poly]] = {}
        self.purge_at = PURGE_MIN

    def add(self, p: Poly) -> None:
        refs = self.refs
        refs[id(p)] = weakref.ref(p)
        if len(refs) >= self.purge_at:
            self.refs = {k: r for k, r in refs.items() if r() is not None}
            self.purge_at = max(PURGE_MIN, 2 * len(self.refs))

    def live(self) -> list[Poly]:
        """The live polys that may use a realized value; the others leave the registry.

        A stored value or a constant uses nothing, and only a realization changes a poly's node
        (a value asked for is repointed without the registry), so once stored a poly is never
        needed here again: eager code realizes almost everything it makes.
        """
        out = []
        refs = self.refs
        for k, r in list(refs.items()):
            p = r()
            if p is None or storage_or_const(p.node):
                del refs[k]
            else:
                out.append(p)
        return out


LIVE = _Registry()


#: Held while polys are repointed: a rewrite only replaces the node it read (compare and set).
_REPOINT_LOCK = threading.Lock()


def repoint(becomes: dict[Node, Node], asked: Iterable[tuple[Poly, Node]] = ()) -> None:
    """Point the requested polys and this thread's live polys at the realized buffers.

    A poly that *is* a realized output takes its buffer. A poly whose graph *uses* one reads the
    buffer instead (one shared walk over all live graphs, one rewrite). Constants are the
    exception: a graph using a constant keeps it inline (cheaper than reading a buffer).

    The polys are the ones the realization was asked for (``asked``: each with the node it had
    then, from any thread) and the live ones this thread made; another thread's values keep
    their graphs (they compute the same words when realized), so a capture in progress there
    never sees a buffer it did not compute.
    A realized value always takes its buffer; a value that only *uses* one is rewritten only
    if its node is still the one read here (compare and set, under a lock), so another thread's
    repointing never turns a stored value back into a graph.
    """
    becomes = {old: new for old, new in becomes.items() if old is not new}
    if not becomes:
        return
    polys = LIVE.live()
    nodes = [p.node for p in polys]
    with _REPOINT_LOCK:
        for p, node in asked:  # a realized value takes its buffer, whatever it points at now
            if node in becomes:
                p.node = becomes[node]
        for i, (p, node) in enumerate(zip(polys, nodes, strict=True)):
            if node in becomes:
                nodes[i] = p.node = becomes[node]
    # a constant (even one in NTT form) stays inline in the graphs that use it: a buffer would be
    # slower to read, and would turn a constant operand into a varying one (changing domains)
    inner = {
        old: new for old, new in becomes.items() if not (is_const(old) or storage_or_const(old))
    }
    if not inner:
        return
    uses = _uses_any(inner, nodes)
    affected = [(p, node) for p, node in zip(polys, nodes, strict=True) if uses[node]]
    if not affected:
        return
    rule = [(Pat(name="node", where=lambda n: n in inner), lambda node: inner[node])]
    sink = graph_rewrite(Node(Op.SINK, DType.VOID, tuple(node for _, node in affected)), rule)
    with _REPOINT_LOCK:
        for (p, old), node in zip(affected, sink.src, strict=True):
            if p.node is old:  # unless another thread repointed it meanwhile (maybe stored it)
                p.node = node


def _uses_any(keys: dict[Node, Node], roots: list[Node]) -> dict[Node, bool]:
    """For every node below ``roots``: does its graph contain one of ``keys``?

    The walk is memoized and iterative; it stops at stored values, which contain nothing to
    replace.
    """
    memo: dict[Node, bool] = {}
    for root in roots:
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            node, ready = stack.pop()
            if node in memo:
                continue
            if node in keys:
                memo[node] = True
            elif storage_or_const(node):
                memo[node] = False
            elif ready:
                memo[node] = any(memo[s] for s in node.src)
            else:
                stack.append((node, True))
                stack.extend((s, False) for s in node.src if s not in memo)
    return memo


def stored(node: Node) -> tuple[Buffer, tuple[int, int] | None] | None:
    """Where a stored value lives: its buffer, and ``(offset, size)`` in words for a view.

    ``None`` for a value that is not an ``AS_RING`` over a buffer or a view of one.
    """
    if node.op is not Op.AS_RING:
        return None
    store = node.src[0]
    if store.op is Op.BUFFER:
        return store.arg.buffer, None
    if store.op is Op.BUFFER_VIEW and store.src[0].op is Op.BUFFER:
        return store.src[0].arg.buffer, (store.arg.offset, store.arg.size)
    return None


def storage(node: Node) -> np.ndarray | None:
    """The words of a stored value (an ``AS_RING`` over a filled buffer or a view of one)."""
    where = stored(node)
    if where is None:
        return None
    buf, view = where
    array = buf.array
    if array is None or view is None:
        return array
    return array[view[0] : view[0] + view[1]]


def storage_or_const(node: Node) -> bool:
    """Whether ``node`` is a stored value (a buffer or a view of one) or a constant."""
    return node.op is Op.AS_RING and node.src[0].op in (Op.BUFFER, Op.BUFFER_VIEW, Op.CONST)
