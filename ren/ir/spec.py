"""The verifier: is a graph well formed?

``verify(sink)`` checks every node against the rule of its op (number and kind of sources, arg
type, ring, domain and device agreement) and raises ``SpecError`` naming the first bad node and
the rule it breaks. The scheduler runs it after every pass when ``REN_CHECK=1``.

An op without a rule here is reported as such: a pass that introduces an op must also teach the
verifier what a well-formed use of it looks like.
"""

from __future__ import annotations

from collections.abc import Callable

from ren.device import devices
from ren.errors import SpecError
from ren.ir.bodies import body_problem
from ren.ir.facts import facts, is_const, is_view, need_ring
from ren.ir.node import (
    BufferArg,
    ConstArg,
    ConstRowArg,
    CopyArg,
    GaloisArg,
    ImmArg,
    IndexArg,
    KernelArg,
    Node,
    RescaleArg,
    RingArg,
    SlotArg,
    ToRingArg,
    ViewArg,
    base_buffer,
)
from ren.ir.op import DType, Op
from ren.ring import Domain

__all__ = ["SPEC", "verify"]


def _nsrc(node: Node, count: int) -> str | None:
    if len(node.src) != count:
        return f"takes {count} source(s), has {len(node.src)}"
    return None


def _arg(node: Node, kind: type) -> str | None:
    if not isinstance(node.arg, kind):
        return f"arg must be a {kind.__name__}, got {node.arg!r}"
    return None


def _ring_src(node: Node) -> str | None:
    """Every source carries a ring value whose word dtype is the node's dtype."""
    for i, s in enumerate(node.src):
        f = facts(s)
        if f.ring is None:
            return f"source {i} ({s.op.name}) has no ring"
        if s.dtype is not DType.of_ring(f.ring.dtype):
            return f"source {i} dtype {s.dtype.value} differs from its ring's {f.ring.dtype}"
    return None


def _same_ring_and_device(node: Node) -> str | None:
    fs = [facts(s) for s in node.src]
    for f in fs[1:]:
        if f.ring != fs[0].ring:
            return f"sources are in different rings: {fs[0].ring} and {f.ring}"
        known = f.device is not None and fs[0].device is not None  # kernel slots have no device
        if known and f.device != fs[0].device:
            return f"sources are on different devices: {fs[0].device} and {f.device}"
    ring = fs[0].need_ring()  # _ring_src has checked every source has one
    if node.dtype is not DType.of_ring(ring.dtype):
        return f"dtype {node.dtype.value} differs from the ring's {ring.dtype}"
    return None


def _unary(node: Node) -> str | None:
    return _nsrc(node, 1) or _ring_src(node) or _same_ring_and_device(node)


def _binary(node: Node) -> str | None:
    return _nsrc(node, 2) or _ring_src(node) or _same_ring_and_device(node)


def _const(node: Node) -> str | None:
    return _nsrc(node, 0) or _arg(node, ConstArg)  # ConstArg checks its value is an int


def _buffer(node: Node) -> str | None:
    if err := _nsrc(node, 0) or _arg(node, BufferArg):
        return err
    if node.dtype.value != node.arg.buffer.dtype:
        return f"dtype {node.dtype.value} differs from its buffer's {node.arg.buffer.dtype}"
    return None


def _buffer_view(node: Node) -> str | None:
    if err := _nsrc(node, 1) or _arg(node, ViewArg):
        return err
    base = node.src[0]
    if base.op not in (Op.BUFFER, Op.AFTER):
        return f"views a {base.op.name}, not a BUFFER"
    a = node.arg  # ViewArg checks offset and size are non-negative
    size = base_buffer(base).arg.buffer.size
    if a.offset + a.size > size:
        return f"window [{a.offset}, {a.offset + a.size}) is outside its {size}-word buffer"
    return None


def _as_ring(node: Node) -> str | None:
    if err := _nsrc(node, 1) or _arg(node, RingArg):
        return err
    ring, src = node.arg.ring, node.src[0]
    if node.dtype is not DType.of_ring(ring.dtype):
        return f"dtype {node.dtype.value} differs from the ring's {ring.dtype}"
    if src.op not in (Op.BUFFER, Op.BUFFER_VIEW, Op.AFTER, Op.CONST):
        return f"attaches a ring to a {src.op.name}; only BUFFER, BUFFER_VIEW, AFTER or CONST"
    if src.op is not Op.CONST:
        size = src.arg.size if src.op is Op.BUFFER_VIEW else base_buffer(src).arg.buffer.size
        if size != ring.size:
            return f"ring {ring} needs {ring.size} words, its storage has {size}"
    if src.dtype is not node.dtype:
        return f"storage dtype {src.dtype.value} differs from the ring's {ring.dtype}"
    return None


def _to_ring(node: Node) -> str | None:
    if err := _nsrc(node, 1) or _arg(node, ToRingArg) or _ring_src(node):
        return err
    src_ring, ring = need_ring(node.src[0]), node.arg.ring
    if ring.n != src_ring.n:
        return f"changes the degree from n={src_ring.n} to n={ring.n}"
    if node.dtype is not DType.of_ring(ring.dtype):
        return f"dtype {node.dtype.value} differs from the target ring's {ring.dtype}"
    return None


def _rescale(node: Node) -> str | None:
    if err := _nsrc(node, 1) or _arg(node, RescaleArg) or _ring_src(node):
        return err
    ring, moduli = need_ring(node.src[0]), node.arg.moduli  # RescaleArg: non-empty, distinct
    missing = [q for q in moduli if q not in ring.moduli]
    if missing:
        return f"modulus {missing[0]} is not in the ring {ring}"
    if len(moduli) >= len(ring.moduli):
        return f"dividing by all of {ring.moduli} leaves no modulus"
    result = need_ring(node)
    if node.dtype is not DType.of_ring(result.dtype):
        return f"dtype {node.dtype.value} differs from the result ring's {result.dtype}"
    return None


def _galois(node: Node) -> str | None:
    if err := _unary(node) or _arg(node, GaloisArg):
        return err
    n, g = need_ring(node.src[0]).n, node.arg.galois
    if not 0 < g < 2 * n or g % 2 == 0:
        return f"Galois element {g} must be odd and in (0, 2n={2 * n})"
    return None


def _copy(node: Node) -> str | None:
    if err := _nsrc(node, 1) or _arg(node, CopyArg) or _ring_src(node):
        return err
    if node.arg.device not in devices():
        return f"copies to unknown device {node.arg.device!r}"
    return None


def _sink(node: Node) -> str | None:
    if node.dtype is not DType.VOID:
        return f"dtype must be void, is {node.dtype.value}"
    return None


def _bufferize(node: Node) -> str | None:
    return _nsrc(node, 1) or _ring_src(node)


def _store(node: Node) -> str | None:
    if err := _nsrc(node, 2):
        return err
    if node.dtype is not DType.VOID:
        return f"dtype must be void, is {node.dtype.value}"
    if node.src[0].op not in (Op.BUFFER, Op.SLOT):
        return f"stores into a {node.src[0].op.name}, not a BUFFER or SLOT"
    return None


def _after(node: Node) -> str | None:
    if len(node.src) < 2:
        return f"takes a buffer and what it waits for, has {len(node.src)} source(s)"
    if node.src[0].op is not Op.BUFFER:
        return f"orders a {node.src[0].op.name}, not a BUFFER"
    if any(s.op not in (Op.STORE, Op.KERNEL) for s in node.src[1:]):
        return "waits for something that is not a STORE or KERNEL"
    return None


def _imm(node: Node) -> str | None:
    if isinstance(node.arg, ConstRowArg):  # in a kernel body: a row of the constants argument
        if len(node.src) != 1 or node.src[0].op is not Op.SLOT:
            return "a constant read from the kernel's constants takes one SLOT"
    elif err := _nsrc(node, 0) or _arg(node, ImmArg):
        return err
    if node.dtype is not DType.of_ring(node.arg.ring.dtype):  # the arg checks its layout
        return f"dtype {node.dtype.value} differs from the ring's {node.arg.ring.dtype}"
    return None


def _index(node: Node) -> str | None:
    if err := _nsrc(node, 2) or _arg(node, IndexArg):
        return err
    base, idx = node.src
    if base.op not in (Op.BUFFER, Op.AFTER, Op.SLOT):
        return f"indexes a {base.op.name}, not a BUFFER, AFTER or SLOT"
    if idx.op is not Op.GIDX:
        return f"index expression is a {idx.op.name}, not GIDX"
    return None


def _load(node: Node) -> str | None:
    if err := _nsrc(node, 1) or _arg(node, IndexArg):
        return err
    if node.src[0].op is not Op.INDEX or node.src[0].arg != node.arg:
        return "reads something that is not its INDEX"
    return None


def _slot(node: Node) -> str | None:
    return _nsrc(node, 0) or _arg(node, SlotArg)


def _gidx(node: Node) -> str | None:
    if node.src or node.dtype is not DType.INDEX:
        return "GIDX has no sources and dtype index"
    return None


def _kernel(node: Node) -> str | None:
    if err := _arg(node, KernelArg):
        return err
    if any(s.op not in (Op.BUFFER, Op.AFTER) for s in node.src):
        return "its parameters must be BUFFER or AFTER nodes"
    ast = node.arg.ast
    if ast.op is not Op.STORE:
        return f"its body is a {ast.op.name}, not a STORE"
    slots = {n.arg.index for n in ast.toposort() if n.op is Op.SLOT}
    params = len(node.src) + (1 if node.arg.consts else 0)  # the constants come last
    if slots != set(range(params)):
        return f"its body uses slots {sorted(slots)} but it has {params} parameters"
    rows = {n.arg.row for n in ast.toposort() if isinstance(n.arg, ConstRowArg)}
    if rows != set(range(len(node.arg.consts))):
        return f"its body reads constant rows {sorted(rows)} of {len(node.arg.consts)}"
    return None  # its body is checked by ``verify``: node by node, then as a whole


#: The rule of each op: a function returning ``None`` or what is wrong.
SPEC: dict[Op, Callable[[Node], str | None]] = {
    Op.ADD: _binary,
    Op.SUB: _binary,
    Op.MUL: _binary,
    Op.NEG: _unary,
    Op.NTT: _unary,
    Op.INTT: _unary,
    Op.CONTIGUOUS: _unary,
    Op.TO_RING: _to_ring,
    Op.RESCALE: _rescale,
    Op.ROTATE: _galois,
    Op.AUTOMORPHISM: _galois,
    Op.COPY: _copy,
    Op.CONST: _const,
    Op.BUFFER: _buffer,
    Op.BUFFER_VIEW: _buffer_view,
    Op.AS_RING: _as_ring,
    Op.SINK: _sink,
    Op.BUFFERIZE: _bufferize,
    Op.STORE: _store,
    Op.AFTER: _after,
    Op.IMM: _imm,
    Op.INDEX: _index,
    Op.LOAD: _load,
    Op.SLOT: _slot,
    Op.GIDX: _gidx,
    Op.KERNEL: _kernel,
}


def _domains(node: Node) -> str | None:
    """Once domains are final: every op reads its non-constant sources in its own domain."""
    op = node.op
    if op in (Op.ADD, Op.SUB, Op.MUL, Op.AUTOMORPHISM):
        want = facts(node).domain
        for i, s in enumerate(node.src):
            got = facts(s).domain
            if not is_const(s) and got is not want:
                return f"source {i} is in {_form(got)} form, the op computes in {_form(want)}"
        if op is Op.MUL and not any(is_const(s) for s in node.src) and want is not Domain.NTT:
            return "a product of two non-constants must be computed in NTT form"
        if op is Op.AUTOMORPHISM and want is not Domain.NTT:
            return "an automorphism must read NTT form"
    if op is Op.RESCALE and facts(node.src[0]).domain is not Domain.COEFF:
        return "rescale must read coefficient form"
    extends = op is Op.TO_RING and not is_view(node)
    if extends and facts(node.src[0]).domain is not Domain.COEFF:
        return "a basis extension must read coefficient form"
    return None


def _form(domain: Domain | None) -> str:
    return "an unknown" if domain is None else domain.value


def verify(sink: Node, domains: bool = False) -> Node:
    """Check every node below ``sink``; return it, or raise ``SpecError`` at the first bad one.

    With ``domains=True`` (the scheduler sets it once a pass establishes ``"domains"``) also check
    that every op reads its sources in the domain it computes in.
    """
    for node in sink.toposort():
        check = SPEC.get(node.op)
        err = f"no verifier rule for op {node.op.name}" if check is None else check(node)
        if not err and domains:
            err = _domains(node)
        if not err and node.op is Op.KERNEL:  # its body: each node, then a shape kernelize writes
            verify(node.arg.ast, domains=domains)
            err = body_problem(node.arg.ast)
        if err:
            raise SpecError(f"bad {node.op.name} node {node!r}: {err}")
    return sink
