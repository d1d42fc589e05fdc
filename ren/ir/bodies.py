"""What a kernel body is: the shapes ``kernelize`` writes, as one check.

``body_problem(ast)`` says what makes ``ast`` a body ``kernelize`` never writes (or ``None``):
which ops a body holds, over which sources, with which args and word types, and how its slots
are numbered. The verifier (``ren.ir.spec``) applies it to every ``KERNEL``'s body, and a plan
file's bodies are checked with it when they are read back (``ren.capture.planfile``), so a body
that renders is a body Ren could have made.
"""

from __future__ import annotations

from ren.ir.args import ConstRowArg, SlotArg
from ren.ir.node import Node
from ren.ir.op import DType, Op
from ren.ring import Domain

__all__ = ["body_problem"]

#: The ops of a template (or copy) kernel: the body's value, over one load of a stored value.
_TEMPLATE_OPS = frozenset({Op.NTT, Op.INTT, Op.RESCALE, Op.TO_RING, Op.COPY})
_ELEMENTWISE_OPS = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.NEG})
_VALUES = _ELEMENTWISE_OPS | {Op.LOAD, Op.IMM}
_NO_ARG = _ELEMENTWISE_OPS | {Op.STORE, Op.GIDX, Op.NTT, Op.INTT}


def body_problem(ast: Node) -> str | None:
    """What makes ``ast`` a kernel body ``kernelize`` never writes, or ``None``.

    A body is ``STORE(SLOT 0, value)``: ``value`` is a tree of ``ADD``, ``SUB``, ``MUL``,
    ``NEG`` over loads (``LOAD(INDEX(SLOT i, GIDX))``, ``i >= 1``, a gather only in NTT form)
    and constants (``IMM(SLOT c)`` with a ``ConstRowArg``), or one template op (``NTT``,
    ``INTT``, ``RESCALE``, ``TO_RING``, ``COPY``) over one plain load. The buffer slots are
    ``0 .. k-1`` and the constants slot, if any, is ``k``. (The rule of each node, its sources
    and rings, is ``verify``'s.)
    """
    if ast.op is not Op.STORE or len(ast.src) != 2:
        return f"a kernel body is STORE(SLOT 0, value), not {ast.op.name}"
    out, value = ast.src
    if out.op is not Op.SLOT or out.arg != SlotArg(0) or out.dtype is not value.dtype:
        return f"a kernel body stores into SLOT 0 of its value's word type, not {out!r}"
    if value.op not in _VALUES and value.op not in _TEMPLATE_OPS:
        return f"a kernel body stores no {value.op.name}"
    loads, consts = {0}, set()
    for node in (ast, *value.toposort()):
        op = node.op
        if op in _NO_ARG and node.arg is not None:
            return f"{op.name} in a kernel body has no arg, got {node.arg!r}"
        if node is ast:
            continue
        if op in _ELEMENTWISE_OPS:
            if any(s.op not in _VALUES for s in node.src):
                return f"{op.name} in a kernel body reads loads, constants and elementwise ops"
        elif op in _TEMPLATE_OPS:
            if node is not value or node.src[0].op is not Op.LOAD or node.src[0].arg.galois:
                return f"{op.name} in a kernel body is the value stored, over one plain LOAD"
        elif op is Op.LOAD:
            index, base = node.src[0], node.src[0].src[0]
            if base.op is not Op.SLOT or base.arg.index == 0:
                return "a LOAD in a kernel body reads a SLOT other than 0 (the output)"
            word = DType.of_ring(node.arg.ring.dtype)
            if node.dtype is not word or base.dtype is not word or index.dtype is not DType.INDEX:
                return f"a LOAD of {node.arg.ring.dtype} words is {word.name} over an INDEX"
            if node.arg.galois is not None and node.arg.domain is not Domain.NTT:
                return "a gathered LOAD in a kernel body reads NTT form"
            loads.add(base.arg.index)
        elif op is Op.IMM:
            if not isinstance(node.arg, ConstRowArg):
                return "an IMM in a kernel body reads a row of the constants (a ConstRowArg)"
            if node.src[0].dtype is not node.dtype:
                return "an IMM in a kernel body reads a SLOT of its own word type"
            consts.add(node.src[0].arg.index)
        elif op is Op.INDEX:
            if node.src[0].op is not Op.SLOT:
                return "an INDEX in a kernel body indexes a SLOT"
        elif op not in (Op.GIDX, Op.SLOT):
            return f"a kernel body holds no {op.name}"
    if loads != set(range(len(loads))):
        return f"a kernel body reads the buffer slots {sorted(loads)}, not 0 .. k-1"
    if consts and consts != {len(loads)}:
        return f"a kernel body reads constants from slot {sorted(consts)}, not {len(loads)}"
    return None
