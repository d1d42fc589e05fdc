"""``indexify``: every read of a stored value becomes an indexed load.

Inside the kernels, a stored value is read word by word: the word of output limb ``i``, slot ``k``
(``GIDX`` = ``i * n + k``) comes from buffer word ``(i + limb_offset) * n + j``:

* ``AS_RING(BUFFER | AFTER)`` -> ``LOAD(INDEX(base, GIDX))`` (``j = k``);
* ``AS_RING(BUFFER_VIEW(base, offset))`` -> the same with ``limb_offset = offset / n``;
* ``AUTOMORPHISM(LOAD(...), g)`` -> a gathered load, ``j = perm_g[k]``
  (``ren.ring.automorphism_ntt_table``).

The ring, domain, limb offset and Galois element of each read are in the ``INDEX``'s arg; the
interpreter and the renderers compute addresses from it. Polynomial kernels read their source the
same way (as a whole).

*Requires*: views are ``BUFFER_VIEW`` (``views``), automorphisms sit on stored values
(``lower_automorphism``).

*Establishes*: no ``AS_RING`` and no ``AUTOMORPHISM`` below a ``STORE``; every read is a ``LOAD``.
Values are unchanged.
"""

from __future__ import annotations

from dataclasses import replace

from ren.ir.node import IndexArg, Node
from ren.ir.op import DType, Op
from ren.ir.rewrite import Pat, Rules, graph_rewrite
from ren.passes import ScheduleContext, is_stored

__all__ = ["GIDX", "rules", "run"]
ESTABLISHES: frozenset[str] = frozenset()  # what the verifier checks from here on

GIDX = Node(Op.GIDX, DType.INDEX)


def load(node: Node) -> Node:
    """A read of storage becomes an indexed load.

    ``as_ring(storage) -> load(index(base, gidx))``
    """
    store, ring, domain = node.src[0], node.arg.ring, node.arg.domain
    offset = 0
    if store.op is Op.BUFFER_VIEW:
        store, offset = store.src[0], store.arg.offset // ring.n
    arg = IndexArg(ring, domain, offset)
    return Node(Op.LOAD, node.dtype, (Node(Op.INDEX, DType.INDEX, (store, GIDX), arg),), arg)


def gather(node: Node, ld: Node) -> Node:
    """An automorphism of a load becomes a gathered load (Galois elements compose).

    ``automorphism(load(index(b, gidx)), g) -> load(index(b, perm_g(gidx)))``
    """
    arg = ld.arg
    g = node.arg.galois if arg.galois is None else arg.galois * node.arg.galois % (2 * arg.ring.n)
    new = replace(arg, galois=None if g == 1 else g)
    index = ld.src[0].replace(arg=new)
    return ld.replace(src=(index,), arg=new)


rules = Rules(
    [
        (Pat(Op.AS_RING, name="node", where=is_stored), load),
        (Pat(Op.AUTOMORPHISM, src=(Pat(Op.LOAD, name="ld"),), name="node"), gather),
    ]
)


def run(sink: Node, ctx: ScheduleContext | None = None) -> Node:
    """Rewrite the graph below ``sink`` with ``rules`` until none matches; return the new sink.

    Each rule that fires is recorded in ``ctx``, under ``"indexify"``, if one is given.
    """
    record = ctx.rewrites("indexify") if ctx is not None else None
    return graph_rewrite(sink, rules, record=record)
