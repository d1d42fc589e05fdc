"""``linearize``: a kernel body as a flat, ordered list of instructions.

An elementwise kernel body is ``STORE(SLOT 0, value)``, ``value`` a tree of modular ops over
``LOAD``s and ``IMM``s. Its instructions, in a deterministic order (sources before users, the
graph's toposort), each define one value ``v<i>`` for the word at limb ``i``, slot ``k``::

    v0 = LOAD  slot 1, limb +0, slot k            (INDEX arg: limb offset, gather table)
    v1 = IMM   slot 2, row 0, all                  (a constant: its Montgomery word for limb i)
    v2 = MUL   v0, v1                              (Montgomery product modulo q_i)
    STORE slot 0 <- v2

Renderers loop over ``i`` and ``k`` around these lines. A ``Table`` is an extra read-only array a
kernel needs (the gather permutation of an automorphism), passed after the buffers.
"""

from __future__ import annotations

from dataclasses import dataclass

from ren.ir.node import ConstRowArg, IndexArg, Node
from ren.ir.op import Op
from ren.ring import Domain, RingSpec

__all__ = ["Instr", "Program", "Table", "linearize"]


@dataclass(frozen=True)
class Table:
    """A read-only table argument: ``kind`` ``"perm"`` is ``automorphism_ntt_table(n, g)``."""

    kind: str
    n: int
    g: int

    @property
    def name(self) -> str:
        """The table's parameter name in a kernel's source, ``<kind>_g<g>``."""
        return f"{self.kind}_g{self.g}"


@dataclass(frozen=True)
class Instr:
    """``dest = op(srcs)`` with the node's arg; ``dest`` is the index of the value defined.

    ``arg`` is the ``IndexArg`` of a ``LOAD``, the ``ConstRowArg`` of an ``IMM``, else ``None``.
    """

    dest: int
    op: Op
    srcs: tuple[int, ...]
    arg: IndexArg | ConstRowArg | None
    slot: int | None = None  # LOAD/STORE: the buffer parameter
    table: Table | None = None  # LOAD with a gather


@dataclass(frozen=True)
class Program:
    """The linearized body: instructions, how many buffer slots, the tables, the ring it writes."""

    instrs: tuple[Instr, ...]
    slots: int
    tables: tuple[Table, ...]
    ring: RingSpec
    out: int  # the value stored


def linearize(ast: Node) -> Program:
    """Flatten an elementwise kernel body (``STORE(SLOT 0, value)``)."""
    if ast.op is not Op.STORE:
        raise ValueError(f"a kernel body is a STORE, got {ast.op.name}")
    value = ast.src[1]
    order = [n for n in value.toposort() if n.op not in (Op.INDEX, Op.GIDX, Op.SLOT)]
    index: dict[Node, int] = {}
    instrs: list[Instr] = []
    tables: list[Table] = []
    slots = 1
    for node in order:
        dest = len(instrs)
        index[node] = dest
        if node.op is Op.LOAD:
            slot = node.src[0].src[0].arg.index
            slots = max(slots, slot + 1)
            table = None
            if node.arg.galois is not None:
                if node.arg.domain is not Domain.NTT:
                    # the gather table is the NTT-form permutation; a coefficient-form
                    # automorphism also negates, and runs as a kernel of its own
                    raise ValueError(
                        f"a LOAD with Galois element {node.arg.galois} in "
                        f"{node.arg.domain.name} form cannot be rendered as a gather"
                    )
                table = Table("perm", node.arg.ring.n, node.arg.galois)
                if table not in tables:
                    tables.append(table)
            instrs.append(Instr(dest, Op.LOAD, (), node.arg, slot, table))
        elif node.op is Op.IMM:
            if not isinstance(node.arg, ConstRowArg):
                raise ValueError(
                    f"a constant {node.arg!r} in a body not kernelized: kernelize moves each "
                    "constant into the kernel's constants argument"
                )
            slot = node.src[0].arg.index  # the constants argument
            slots = max(slots, slot + 1)
            instrs.append(Instr(dest, Op.IMM, (), node.arg, slot))
        elif node.op in (Op.ADD, Op.SUB, Op.NEG, Op.MUL):
            instrs.append(Instr(dest, node.op, tuple(index[s] for s in node.src), None))
        else:
            raise ValueError(f"{node.op.name} is not elementwise: it has a template of its own")
    from ren.ir.facts import facts

    ring = facts(value).need_ring()
    return Program(tuple(instrs), slots, tuple(tables), ring, index[value])
