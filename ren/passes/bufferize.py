"""``bufferize``: decide where values are materialized, marking them ``BUFFERIZE(x)``.

A value gets a buffer of its own when (the rules, each a predicate over the graph):

* ``output``: it is a requested output (a ``SINK`` source), unless it is stored anyway (a buffer,
  a polynomial kernel's result, or a view of a contiguous run of either's moduli: no kernel);
* ``poly_kernel``: it is computed by a whole-polynomial kernel (``NTT``, ``INTT``, ``RESCALE``, a
  basis-extending ``TO_RING``, ``COPY``): those kernels write a buffer;
* ``poly_input``: it is read by such a kernel and is not stored anyway (those kernels read whole
  buffers or windows of them, not fused expressions);
* ``shared``: it is elementwise work used by more than one node, so it runs once;
* ``contiguous``: ``CONTIGUOUS(x)`` asks for it, unless ``x`` already is a whole buffer (a limb
  view is copied into a buffer of its own); ``CONTIGUOUS`` itself goes away;
* ``wide``: it is a fused source of a node whose sources read more than ``MAX_READS`` buffers.

Everything else stays fusable: chains of ``ADD``/``SUB``/``NEG``/``MUL``, constants, automorphism
gathers and limb views end up in one kernel per materialized value.

*Requires*: domains injected and round trips folded (passes 3 and 4).

*Establishes*: every output and every input and output of a polynomial kernel is ``BUFFERIZE``
or stored; no ``CONTIGUOUS``. Values are unchanged (``BUFFERIZE`` is the identity on values).
"""

from __future__ import annotations

from collections.abc import Callable

from ren.ir.facts import is_const, is_view
from ren.ir.kernels import FAMILY_OF_OP
from ren.ir.node import Node
from ren.ir.op import Op
from ren.ir.region import within
from ren.ir.rewrite import Rewrite
from ren.passes import ScheduleContext, is_stored, make

__all__ = ["is_poly_kernel", "rules", "run"]
ESTABLISHES: frozenset[str] = frozenset()  # what the verifier checks from here on


def is_poly_kernel(node: Node) -> bool:
    """Computed by a kernel of a family of its own (``FAMILY_OF_OP``) rather than elementwise.

    A ``TO_RING`` that is a view of limbs is no kernel at all.
    """
    return node.op in FAMILY_OF_OP and not (node.op is Op.TO_RING and is_view(node))


def stored_or_view(node: Node) -> bool:
    """In storage by the time it is read.

    That is a buffer, a value a polynomial kernel writes, or limb views of either (reading a
    window needs no kernel of its own).
    """
    while is_view(node):
        node = node.src[0]
    return is_stored(node) or is_poly_kernel(node) or node.op is Op.BUFFERIZE


def _whole_buffer(node: Node) -> bool:
    """In a buffer of its own already (or about to be): not a window of another one."""
    return node.op is Op.BUFFERIZE or (is_stored(node) and node.src[0].op is not Op.BUFFER_VIEW)


def _leafy(node: Node) -> bool:
    """Never materialized for sharing: storage, constants, and what already is a boundary."""
    storage = (Op.BUFFER, Op.BUFFER_VIEW, Op.AFTER, Op.CONST, Op.BUFFERIZE)
    return node.op in storage or stored_or_view(node) or is_const(node)


#: The most buffers one fused kernel reads (the ``wide`` rule splits a wider expression).
MAX_READS = 64
Reads = dict[Node, frozenset[Node]]  # the buffers each node's fused expression reads
Fired = list[Rewrite] | None  # the rules bufferize fired, when the context records them

# Each rule: (name, predicate(node, users, outputs)) -> materialize node?
Rule = Callable[[Node, dict[Node, set[Node]], set[Node]], bool]
rules: tuple[tuple[str, Rule], ...] = (
    ("output", lambda n, users, outputs: n in outputs and not stored_or_view(n)),
    ("poly_kernel", lambda n, users, outputs: is_poly_kernel(n)),
    (
        "poly_input",
        lambda n, users, outputs: (
            not _leafy(n) and any(is_poly_kernel(u) for u in users.get(n, ()))
        ),
    ),
    (
        "shared",
        lambda n, users, outputs: (
            not _leafy(n) and n.op is not Op.CONTIGUOUS and len(users.get(n, ())) > 1
        ),
    ),
)


def _users(sink: Node) -> dict[Node, set[Node]]:
    users: dict[Node, set[Node]] = {}
    for node in sink.toposort():
        for s in node.src:
            users.setdefault(s, set()).add(node)
    return users


def run(sink: Node, ctx: ScheduleContext | None = None) -> Node:
    """Mark materialization boundaries: one walk to decide, one bottom-up rebuild."""
    users = _users(sink)
    outputs = set(sink.src)
    fired = ctx.rewrites("bufferize") if ctx is not None else None
    new: dict[Node, Node] = {}  # what users read
    for_sink: dict[Node, Node] = {}  # what the SINK reads, where it differs
    reads: Reads = {}  # the buffers a node's fused expression reads
    for node in sink.toposort():
        if node.op is Op.SINK:
            return node.replace(src=tuple(for_sink.get(s, new[s]) for s in node.src))
        with within(node):  # what replaces a node is in its region (ren.ir.region)
            _split_wide(node, new, reads, fired)
            cur = node.replace(src=tuple(new[s] for s in node.src)) if node.src else node
            if node.op is Op.CONTIGUOUS:  # contiguous(x) -> bufferize(x), or x when whole
                x = cur.src[0]
                out = x if _whole_buffer(x) else make(Op.BUFFERIZE, x)
                _note(fired, "contiguous", cur, out)
            elif why := next((n for n, rule in rules if rule(node, users, outputs)), None):
                out = make(Op.BUFFERIZE, cur)
                _note(fired, why, cur, out)
                if is_const(cur):  # a constant output: users keep the constant inline
                    for_sink[node], out = out, cur
            else:
                out = cur
        new[node] = out
        leaf = out.op is Op.BUFFERIZE or _leafy(out)  # what its kernel reads, when fused
        reads[node] = frozenset({out} if leaf and not is_const(out) else ())
        if not leaf:
            reads[node] = reads[node].union(*(reads[s] for s in node.src))
    raise ValueError("bufferize runs on a SINK")


def _split_wide(node: Node, new: dict[Node, Node], reads: Reads, fired: Fired) -> None:
    """The ``wide`` rule (a kernel of thousands of arguments is past what a C call takes)."""
    if len(node.src) < 2 or len(frozenset().union(*(reads[s] for s in node.src))) <= MAX_READS:
        return
    for s in node.src:
        if len(reads[s]) > 1 and new[s].op is not Op.BUFFERIZE:
            before, new[s] = new[s], make(Op.BUFFERIZE, new[s])
            reads[s] = frozenset({new[s]})
            _note(fired, "wide", before, new[s])


def _note(fired: Fired, why: str, before: Node, after: Node) -> None:
    if fired is not None and before is not after:
        fired.append(Rewrite(why, before, after))
