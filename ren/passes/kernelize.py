"""``kernelize``: every store becomes a kernel with numbered buffer parameters.

``AFTER(B, STORE(B, value))`` -> ``AFTER(B, KERNEL(B, b1, b2, ...))`` where the ``KERNEL``'s arg
holds the kernel body, ``STORE(SLOT 0, value')``, in which each buffer the value reads is
replaced by ``SLOT i`` (in order of first use), and a ``KernelInfo``: the family (``elementwise``
or ``ntt``, ``intt``, ``rescale``, ``base_convert``, ``copy``), the ring and domain written, the
device, and a short name. The ``KERNEL``'s sources are the buffers in slot order; the ones that
other kernels fill are ``AFTER`` nodes, so a walk of the graph meets kernels in a valid order.

Because buffers become slots, and each constant's value moves out of the body into
``KernelArg.consts`` (an ``IMM`` reads row ``j`` of one more slot, the constants argument),
two kernels that do the same thing to other buffers or with other constants have the same body
(the same interned node): a code cache keyed on the body compiles it once.

*Requires*: ``indexify`` ran.

*Establishes*: no ``STORE`` outside a kernel body; ``schedule`` can read the kernels off the graph.
"""

from __future__ import annotations

from ren.errors import RenError
from ren.ir.facts import facts
from ren.ir.kernels import FAMILY_OF_OP, Family, KernelInfo, TemplateParams
from ren.ir.node import ConstRowArg, ImmArg, IndexArg, KernelArg, Node, SlotArg
from ren.ir.op import DType, Op
from ren.ir.rewrite import Pat, Rules, graph_rewrite
from ren.passes import ScheduleContext
from ren.ring import Domain

__all__ = ["const_rows", "kernel_info", "rules", "run", "template_params"]
ESTABLISHES: frozenset[str] = frozenset()  # what the verifier checks from here on


def _slots(value: Node, out: Node) -> tuple[Node, tuple[Node, ...]]:
    """``value`` with every ``INDEX`` base replaced by its ``SLOT``, and the bases in slot order."""
    bases: list[Node] = [out]
    new: dict[Node, Node] = {}
    stack: list[tuple[Node, bool]] = [(value, False)]
    while stack:
        node, ready = stack.pop()
        if node in new:
            continue
        if node.op is Op.INDEX:  # do not walk into the buffer's own graph
            base = node.src[0]
            if base not in bases:
                bases.append(base)
            slot = Node(Op.SLOT, base.dtype, (), SlotArg(bases.index(base)))
            new[node] = node.replace(src=(slot, node.src[1]))
        elif ready:
            new[node] = node.replace(src=tuple(new[s] for s in node.src)) if node.src else node
        else:
            stack.append((node, True))
            stack.extend((s, False) for s in reversed(node.src) if s not in new)
    return new[value], tuple(bases)


def const_rows(body: Node, slot: int) -> tuple[Node, tuple[int, ...]]:
    """``body`` with each constant read from row ``j`` of ``SLOT slot``, and the rows' values.

    ``imm(c, layout) -> imm(slot, row j, layout)`` with ``consts[j] = c``; equal values share a
    row. A body without constants is returned as it is, with no rows.
    """
    consts: list[int] = []
    new: dict[Node, Node] = {}
    param = Node(Op.SLOT, body.dtype, (), SlotArg(slot))
    for node in body.toposort():
        if node.op is Op.IMM and isinstance(node.arg, ImmArg):
            arg = node.arg
            if arg.value not in consts:
                consts.append(arg.value)
            row = ConstRowArg(consts.index(arg.value), arg.ring, arg.device, arg.layout)
            new[node] = Node(Op.IMM, node.dtype, (param,), row)
        elif node.src and any(s in new for s in node.src):
            new[node] = node.replace(src=tuple(new.get(s, s) for s in node.src))
    return new.get(body, body), tuple(consts)


def kernelize(buf: Node, value: Node) -> Node:
    """A store becomes a kernel: its body with slots for buffers, and the buffers in slot order.

    ``after(B, store(B, value)) -> after(B, kernel(B, inputs...))``
    """
    body, bases = _slots(value, buf)
    body, consts = const_rows(body, len(bases))
    out_slot = Node(Op.SLOT, buf.dtype, (), SlotArg(0))
    ast = Node(Op.STORE, DType.VOID, (out_slot, body))
    info = kernel_info(value, buf.arg.buffer.device)
    kernel = Node(Op.KERNEL, DType.VOID, bases, KernelArg(ast, info, consts))
    return Node(Op.AFTER, buf.dtype, (buf, kernel))


def kernel_info(value: Node, device: str) -> KernelInfo:
    """The ``KernelInfo`` of a kernel on ``device`` storing ``value`` (or its body's value)."""
    f = facts(value)
    domain = f.domain
    if domain is None:  # a stored constant: its layout says its domain
        first = isinstance(value.arg, ImmArg | ConstRowArg) and value.arg.layout == "first"
        domain = Domain.COEFF if first else Domain.NTT
    family = FAMILY_OF_OP.get(value.op, Family.ELEMENTWISE)
    ring = f.need_ring()
    name = f"{family.value}_n{ring.n}_L{ring.L}_{ring.dtype}"
    params = None if family is Family.ELEMENTWISE else template_params(value)
    return KernelInfo(family, ring, domain, device, name, params)


def template_params(value: Node) -> TemplateParams:
    """What a template or copy kernel storing ``value`` reads, from the ``LOAD`` of its input.

    The input is a stored value or a window of limbs of one (a copy never reads a fused or
    gathered value: ``bufferize`` materializes those first).

    Raises:
        RenError: if the input is not a load of a stored value (or a window of limbs of one).
    """
    load = value.src[0]
    read = load.arg
    if load.op is not Op.LOAD or not isinstance(read, IndexArg) or read.galois is not None:
        raise RenError(f"a {value.op.name} kernel reads a stored value, not:\n{value}")
    return TemplateParams(
        read.ring,
        read.limb_offset,
        value.arg.moduli if value.op is Op.RESCALE else (),
        value.arg.ring if value.op is Op.TO_RING else None,
    )


rules = Rules(
    [
        (
            Pat(
                Op.AFTER,
                src=(
                    Pat(Op.BUFFER, name="buf"),
                    Pat(Op.STORE, src=(Pat(Op.BUFFER), Pat.var("value"))),
                ),
            ),
            kernelize,
        )
    ]
)


def run(sink: Node, ctx: ScheduleContext | None = None) -> Node:
    """Rewrite the graph below ``sink`` with ``rules`` until none matches; return the new sink.

    Each rule that fires is recorded in ``ctx``, under ``"kernelize"``, if one is given.
    """
    record = ctx.rewrites("kernelize") if ctx is not None else None
    return graph_rewrite(sink, rules, record=record)
