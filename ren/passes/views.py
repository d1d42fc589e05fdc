"""``views``: a ``TO_RING`` onto a contiguous run of the moduli is a window, not work.

The words of a polynomial over moduli ``(q_s, ..., q_{s+k-1})`` are rows ``s`` to ``s+k-1`` of
the source's limb-major buffer (same Montgomery radix, same dtype). So:

* ``TO_RING`` of a stored value -> ``AS_RING(BUFFER_VIEW(base, offset, size))``, no kernel
  (``offset = s * n`` words; a view of a view adds the offsets);
* ``TO_RING`` of elementwise work is pushed through it to the loads: ``TO_RING(ADD(x, y))`` ->
  ``ADD(TO_RING(x), TO_RING(y))`` (each limb is computed alone), through ``NEG``, ``SUB``, ``MUL``
  and ``AUTOMORPHISM`` too; a lowered constant takes the new ring. The view is then fused into
  the loads that read it.

*Requires*: constants lowered (``lower_constants``), automorphisms at the loads
(``lower_automorphism``).

*Establishes*: no ``TO_RING`` views remain; every limb view is a ``BUFFER_VIEW``. Values are
unchanged: ``a_c mod Q'`` is the residues of ``a`` modulo each kept ``q_i``.
"""

from __future__ import annotations

from dataclasses import replace

from ren.ir.facts import is_view
from ren.ir.node import Node, RingArg, ToRingArg, ViewArg
from ren.ir.op import Op
from ren.ir.rewrite import Pat, Rules, graph_rewrite
from ren.passes import ScheduleContext, is_stored
from ren.ring import RingSpec

__all__ = ["rules", "run", "view_of"]
ESTABLISHES: frozenset[str] = frozenset()  # what the verifier checks from here on


def view_of(x: Node, ring: RingSpec) -> Node:
    """The stored value ``x`` (an ``AS_RING`` over storage) restricted to ``ring``'s moduli.

    ``ring``'s moduli are a contiguous run of ``x``'s; the result is
    ``AS_RING(BUFFER_VIEW(base, offset, size), ring, domain)``.
    """
    store, arg = x.src[0], x.arg
    offset = arg.ring.contiguous_offset(ring) * ring.n
    if store.op is Op.BUFFER_VIEW:
        store, offset = store.src[0], offset + store.arg.offset
    view = Node(Op.BUFFER_VIEW, x.dtype, (store,), ViewArg(offset, ring.size))
    return Node(Op.AS_RING, x.dtype, (view,), RingArg(ring, arg.domain))


def view_stored(node: Node, x: Node) -> Node:
    """A limb view of a stored value becomes a window of its buffer.

    ``to_ring(stored x) -> as_ring(buffer_view(x))``
    """
    return view_of(x, node.arg.ring)


def push_view(node: Node, x: Node) -> Node:
    """Push a limb view through elementwise work to its sources; a constant takes the new ring.

    ``to_ring(op(a, b)) -> op(to_ring(a), to_ring(b))``; ``to_ring(imm) -> imm`` in the new ring
    """
    ring = node.arg.ring
    if x.op is Op.IMM:
        return x.replace(arg=replace(x.arg, ring=ring))
    src = tuple(Node(Op.TO_RING, node.dtype, (s,), ToRingArg(ring)) for s in x.src)
    return x.replace(src=src)


rules = Rules(
    [
        (
            Pat(Op.TO_RING, src=(Pat.var("x", where=is_stored),), name="node", where=is_view),
            view_stored,
        ),
        (
            Pat(
                Op.TO_RING,
                src=(Pat((Op.ADD, Op.SUB, Op.NEG, Op.MUL, Op.AUTOMORPHISM, Op.IMM), name="x"),),
                name="node",
                where=is_view,
            ),
            push_view,
        ),
    ]
)


def run(sink: Node, ctx: ScheduleContext | None = None) -> Node:
    """Rewrite the graph below ``sink`` with ``rules`` until none matches; return the new sink.

    Each rule that fires is recorded in ``ctx``, under ``"views"``, if one is given.
    """
    record = ctx.rewrites("views") if ctx is not None else None
    return graph_rewrite(sink, rules, record=record)
