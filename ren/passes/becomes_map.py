"""``becomes_map``: record what each requested output becomes once realized.

For each output (a source of the ``SINK``, matched by position to the nodes the user asked for),
the node of its realized value:

* ``AS_RING(AFTER(B, STORE(B, x)))`` -> ``AS_RING(B)``: the buffer the kernel fills;
* a view of a stored value -> ``AS_RING(BUFFER_VIEW(B))`` over the underlying buffer;
* a value that already is stored -> itself.

After the kernels ran, every ``Poly`` whose graph holds an output node is repointed through this
map, so nothing is computed twice.

*Requires*: ``lower_bufferize`` ran (outputs are stored, or views of stored values).

*Establishes*: ``ctx.becomes_map`` holds one entry per output. The graph is unchanged.
"""

from __future__ import annotations

from ren.ir.node import Node, RingArg
from ren.ir.op import Op
from ren.passes import ScheduleContext, is_stored
from ren.passes.views import view_of

__all__ = ["realized", "rules", "run"]
ESTABLISHES: frozenset[str] = frozenset()  # what the verifier checks from here on


def realized(node: Node) -> Node:
    """The realized form of a stored output (or of views of one)."""
    if node.op is Op.TO_RING:
        return view_of(realized(node.src[0]), node.arg.ring)
    if not is_stored(node):
        raise ValueError(f"output {node!r} is not stored; bufferize must run first")
    store = node.src[0]
    if store.op is Op.AFTER:
        return Node(Op.AS_RING, node.dtype, (store.src[0],), node.arg)
    if store.op is Op.BUFFER_VIEW and store.src[0].op is Op.AFTER:
        view = store.replace(src=(store.src[0].src[0],))
        return Node(Op.AS_RING, node.dtype, (view,), RingArg(node.arg.ring, node.arg.domain))
    return node


rules = (("realized", realized),)


def run(sink: Node, ctx: ScheduleContext | None = None) -> Node:
    """Map each output in ``ctx.outputs`` to its realized node in ``ctx.becomes_map``.

    The graph is returned unchanged; without a context there is nothing to record.

    Raises:
        ValueError: if an output is not stored (``bufferize`` did not run).
    """
    if ctx is None:
        return sink
    for old, new in zip(ctx.outputs, sink.src, strict=True):
        ctx.becomes_map[old] = realized(new)
    return sink
