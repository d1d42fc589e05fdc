"""The python backend: interprets kernel bodies with NumPy. The reference for every backend.

A kernel body is ``STORE(SLOT 0, value)``. The interpreter evaluates ``value`` once over whole
``(L, n)`` arrays (all limbs, all slots at once), one obvious NumPy step per op, with the ring
kernels of ``ren.ring.arith``:

* ``LOAD``: rows ``limb_offset .. limb_offset + L`` of the slot's buffer, gathered by the
  NTT-form automorphism permutation when the load has a Galois element;
* ``IMM``: the constant's Montgomery words per limb (a row of the kernel's constants argument,
  its last slot), in every word or in coefficient 0 only;
* ``ADD``/``SUB``/``NEG``/``MUL``: modular add, sub, negate, Montgomery product, per limb;
* ``NTT``/``INTT``/``RESCALE``/``TO_RING`` (basis extension)/``COPY``: the whole-polynomial
  kernels.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ren.device import Buffer
from ren.errors import RenError
from ren.ir.facts import need_ring
from ren.ir.node import ConstRowArg, KernelInfo, Node
from ren.ir.op import Op
from ren.ring import Domain, automorphism_ntt_table
from ren.ring import arith as rk
from ren.ring.spec import WordArray

__all__ = ["compile", "interpret"]


def _imm(node: Node, bufs: tuple[Buffer, ...]) -> WordArray:
    arg = node.arg
    if not isinstance(arg, ConstRowArg):
        raise RenError(f"a constant {arg!r} in a body not kernelized: it has no constants row")
    ring = arg.ring
    words = bufs[node.src[0].arg.index].need_array().reshape(-1, ring.L)  # the constants argument
    col = words[arg.row].reshape(ring.L, 1)
    if arg.layout == "all":
        return np.broadcast_to(col, (ring.L, ring.n))
    out = np.zeros((ring.L, ring.n), dtype=ring.np_dtype)
    out[:, :1] = col
    return out


def _load(node: Node, bufs: tuple[Buffer, ...]) -> WordArray:
    arg = node.arg
    ring = arg.ring
    slot = node.src[0].src[0].arg.index
    rows: WordArray = (
        bufs[slot].need_array().reshape(-1, ring.n)[arg.limb_offset : arg.limb_offset + ring.L]
    )
    if arg.galois is None:
        return rows
    if arg.domain is Domain.NTT:
        return rows[:, automorphism_ntt_table(ring.n, arg.galois)]
    return rk.automorphism(ring, rows, arg.galois, Domain.COEFF)


def _eval(node: Node, src: list[WordArray], bufs: tuple[Buffer, ...]) -> WordArray:
    op = node.op
    if op is Op.LOAD:
        return _load(node, bufs)
    if op is Op.IMM:
        return _imm(node, bufs)
    ring = need_ring(node)
    if op is Op.ADD:
        return rk.add(ring, *src)
    if op is Op.SUB:
        return rk.sub(ring, *src)
    if op is Op.NEG:
        return rk.neg(ring, src[0])
    if op is Op.MUL:
        return rk.mont_mul(ring, *src)
    src_ring = need_ring(node.src[0])
    if op is Op.NTT:
        return rk.ntt(src_ring, src[0])
    if op is Op.INTT:
        return rk.intt(src_ring, src[0])
    if op is Op.RESCALE:
        return rk.rescale(src_ring, src[0], node.arg.moduli)
    if op is Op.TO_RING:
        return rk.base_convert(src_ring, src[0], node.arg.ring)
    if op is Op.COPY:
        return np.array(src[0], copy=True)
    raise RenError(f"the python backend has no rule for {op.name} in a kernel body")


def interpret(ast: Node, bufs: tuple[Buffer, ...]) -> None:
    """Run the kernel body ``ast`` (``STORE(SLOT 0, value)``) on ``bufs``."""
    _run_order(ast)(bufs)


@functools.lru_cache(maxsize=4096)
def _run_order(ast: Node) -> Callable[[tuple[Buffer, ...]], None]:
    value = ast.src[1]
    order = [n for n in value.toposort() if n.op not in (Op.INDEX, Op.GIDX, Op.SLOT)]

    def run(bufs: tuple[Buffer, ...]) -> None:
        vals: dict[Node, WordArray] = {}
        for node in order:
            # the order has no INDEX, GIDX or SLOT (a LOAD reads its buffer itself)
            vals[node] = _eval(node, [vals[s] for s in node.src if s in vals], bufs)
        out = bufs[0].need_array()
        out[:] = np.asarray(vals[value], dtype=out.dtype).reshape(-1)

    return run


def compile(ast: Node, info: KernelInfo | None) -> Callable[[tuple[Buffer, ...]], None]:
    """The runner of a kernel body: for the python backend, its interpreter (``info`` unused)."""
    del info  # everything the interpreter needs is in the body
    return _run_order(ast)


def source(ast: Node, info: KernelInfo) -> str:
    """What the python device runs for one kernel body: the body itself, printed as the IR.

    The python device interprets the body node by node with NumPy.
    """
    del info
    return str(ast) + "\n"
