"""The scheduler's passes, one module each, in the order ``ren/engine/schedule.py`` runs them.

Every pass module has a docstring (what it does, *Requires*, *Establishes*), its ``rules``,
``run(sink, ctx=None) -> sink``, and ``ESTABLISHES``: the properties of :data:`VERIFIABLE` that hold
from that pass on, which the scheduler's verifier (``REN_CHECK=1``) then checks after every later
pass. ``ctx`` is the ``ScheduleContext`` of one realization; a pass that needs none ignores it, so
``run(sink)`` works for every pass. Only the pass list (``ren.engine.schedule.PASSES``) orders them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ren.ir.node import Node
from ren.ir.op import Op
from ren.ir.rewrite import Rewrite

__all__ = ["VERIFIABLE", "ScheduleContext", "is_stored", "make"]

#: The properties a pass may establish (its ``ESTABLISHES``) and the verifier then checks.
VERIFIABLE: dict[str, str] = {
    "domains": "every op reads its sources in the domain it computes in",
}


@dataclass
class ScheduleContext:
    """What one realization's passes share.

    Attributes:
        outputs: the requested output nodes, in order (the sources of the original ``SINK``).
        becomes_map: filled by ``becomes_map``: each output node -> the node of its realized value
            (an ``AS_RING`` over its buffer, or over a view of one).
        record: every rule that fired, per pass name (``Rewrite(rule, before, after)``).
        timings: seconds each pass took, per pass name.
        memory_plan: the ``MemoryPlan`` of the realization, once planned.
        cache: what the schedule cache did: ``"off"``, ``"miss"`` (the passes ran and their
            result was kept), ``"hit"`` (no pass ran: a kept schedule was bound), or
            ``"hit, scheduled again"`` (a tool that shows the passes was watching, so they ran).
        cache_key: a short hash of the graph's structure, the schedule cache's key.
    """

    outputs: tuple[Node, ...] = ()
    becomes_map: dict[Node, Node] = field(default_factory=dict)
    record: dict[str, list[Rewrite]] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    memory_plan: object = None
    cache: str = "off"
    cache_key: str = ""

    def rewrites(self, name: str) -> list[Rewrite]:
        """The list a pass appends the rules it fired to."""
        return self.record.setdefault(name, [])


def is_stored(node: Node) -> bool:
    """Whether ``node`` is a value already held in storage.

    That is ``AS_RING`` over a buffer, over a buffer that a kernel of this realization writes
    (``AFTER``), or over a view of either.
    """
    return node.op is Op.AS_RING and node.src[0].op in (Op.BUFFER, Op.AFTER, Op.BUFFER_VIEW)


def make(op: Op, *src: Node, arg: object = None) -> Node:
    """``Node(op, dtype of the first source, src, arg)``: the shape of most rewrites."""
    return Node(op, src[0].dtype, src, arg)
