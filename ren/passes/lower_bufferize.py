"""``lower_bufferize``: each ``BUFFERIZE(x)`` becomes a buffer, a store, and an order.

``BUFFERIZE(x)`` -> ``AS_RING(AFTER(B, STORE(B, x)), ring, domain)`` with ``B`` a new, not yet
allocated ``BUFFER`` of ``L * n`` words on ``x``'s device. ``STORE(B, x)`` writes the value;
``AFTER(B, ...)`` is ``B`` read only after that store ran, so users depend on the kernel that
fills it; ``AS_RING`` says what the words mean.

*Requires*: ``bufferize`` ran.

*Establishes*: no ``BUFFERIZE``; every materialized value is ``AS_RING(AFTER(BUFFER, STORE))``.
Values are unchanged.
"""

from __future__ import annotations

from ren.device import Buffer
from ren.ir.facts import facts
from ren.ir.node import BufferArg, Node, RingArg
from ren.ir.op import DType, Op
from ren.ir.rewrite import Pat, Rules, graph_rewrite
from ren.passes import ScheduleContext
from ren.ring import Domain

__all__ = ["rules", "run"]
ESTABLISHES: frozenset[str] = frozenset()  # what the verifier checks from here on


def lower_bufferize(x: Node) -> Node:
    """A ``BUFFERIZE`` becomes a new buffer, the store that fills it, and the read after it.

    ``bufferize(x) -> as_ring(after(B, store(B, x)))``
    """
    f = facts(x)
    ring = f.need_ring()
    buf = Node(Op.BUFFER, x.dtype, (), BufferArg(Buffer(f.need_device(), ring.dtype, ring.size)))
    store = Node(Op.STORE, DType.VOID, (buf, x))
    domain = f.domain or Domain.COEFF
    return Node(
        Op.AS_RING, x.dtype, (Node(Op.AFTER, x.dtype, (buf, store)),), RingArg(ring, domain)
    )


rules = Rules([(Pat(Op.BUFFERIZE, src=(Pat.var("x"),)), lower_bufferize)])


def run(sink: Node, ctx: ScheduleContext | None = None) -> Node:
    """Rewrite the graph below ``sink`` with ``rules`` until none matches; return the new sink.

    Each rule that fires is recorded in ``ctx``, under ``"lower_bufferize"``, if one is given.
    """
    record = ctx.rewrites("lower_bufferize") if ctx is not None else None
    return graph_rewrite(sink, rules, record=record)
