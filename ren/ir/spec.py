"""The verifier: is a graph well formed?

``verify(sink)`` checks every node against the rule of its op (number and kind of sources, arg
type, ring, domain and device agreement) and raises ``SpecError`` naming the first bad node and
the rule it breaks. The scheduler runs it after every pass when ``REN_CHECK=1``.

An op without a rule here is reported as such: a pass that introduces an op must also teach the
verifier what a well-formed use of it looks like.
"""

from __future__ import annotations

from collections.abc import Callable

from ren.device import DEVICES
from ren.errors import SpecError
from ren.ir.facts import facts
from ren.ir.node import (
    BufferArg,
    ConstArg,
    CopyArg,
    GaloisArg,
    Node,
    RescaleArg,
    RingArg,
    ToRingArg,
    ViewArg,
)
from ren.ir.op import DType, Op

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
        if f.device != fs[0].device:
            return f"sources are on different devices: {fs[0].device} and {f.device}"
    if node.dtype is not DType.of_ring(fs[0].ring.dtype):
        return f"dtype {node.dtype.value} differs from the ring's {fs[0].ring.dtype}"
    return None


def _unary(node: Node) -> str | None:
    return _nsrc(node, 1) or _ring_src(node) or _same_ring_and_device(node)


def _binary(node: Node) -> str | None:
    return _nsrc(node, 2) or _ring_src(node) or _same_ring_and_device(node)


def _const(node: Node) -> str | None:
    if err := _nsrc(node, 0) or _arg(node, ConstArg):
        return err
    if not isinstance(node.arg.value, int) or isinstance(node.arg.value, bool):
        return f"constant value {node.arg.value!r} is not an int"
    return None


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
    if base.op is not Op.BUFFER:
        return f"views a {base.op.name}, not a BUFFER"
    a = node.arg
    if a.offset < 0 or a.size < 0 or a.offset + a.size > base.arg.buffer.size:
        size = base.arg.buffer.size
        return f"window [{a.offset}, {a.offset + a.size}) is outside its {size}-word buffer"
    return None


def _as_ring(node: Node) -> str | None:
    if err := _nsrc(node, 1) or _arg(node, RingArg):
        return err
    ring, src = node.arg.ring, node.src[0]
    if node.dtype is not DType.of_ring(ring.dtype):
        return f"dtype {node.dtype.value} differs from the ring's {ring.dtype}"
    if src.op not in (Op.BUFFER, Op.BUFFER_VIEW, Op.CONST):
        return f"attaches a ring to a {src.op.name}; only BUFFER, BUFFER_VIEW or CONST"
    size = {Op.BUFFER: lambda: src.arg.buffer.size, Op.BUFFER_VIEW: lambda: src.arg.size}
    if src.op in size and size[src.op]() != ring.size:
        return f"ring {ring} needs {ring.size} words, its storage has {size[src.op]()}"
    if src.dtype is not node.dtype:
        return f"storage dtype {src.dtype.value} differs from the ring's {ring.dtype}"
    return None


def _to_ring(node: Node) -> str | None:
    if err := _nsrc(node, 1) or _arg(node, ToRingArg) or _ring_src(node):
        return err
    src_ring, ring = facts(node.src[0]).ring, node.arg.ring
    if ring.n != src_ring.n:
        return f"changes the degree from n={src_ring.n} to n={ring.n}"
    if node.dtype is not DType.of_ring(ring.dtype):
        return f"dtype {node.dtype.value} differs from the target ring's {ring.dtype}"
    return None


def _rescale(node: Node) -> str | None:
    if err := _nsrc(node, 1) or _arg(node, RescaleArg) or _ring_src(node):
        return err
    ring, moduli = facts(node.src[0]).ring, node.arg.moduli
    if not moduli or len(set(moduli)) != len(moduli):
        return f"moduli {moduli} must be non-empty and distinct"
    missing = [q for q in moduli if q not in ring.moduli]
    if missing:
        return f"modulus {missing[0]} is not in the ring {ring}"
    if len(moduli) >= len(ring.moduli):
        return f"dividing by all of {ring.moduli} leaves no modulus"
    if node.dtype is not DType.of_ring(facts(node).ring.dtype):
        return f"dtype {node.dtype.value} differs from the result ring's {facts(node).ring.dtype}"
    return None


def _galois(node: Node) -> str | None:
    if err := _unary(node) or _arg(node, GaloisArg):
        return err
    n, g = facts(node.src[0]).ring.n, node.arg.galois
    if not 0 < g < 2 * n or g % 2 == 0:
        return f"Galois element {g} must be odd and in (0, 2n={2 * n})"
    return None


def _copy(node: Node) -> str | None:
    if err := _nsrc(node, 1) or _arg(node, CopyArg) or _ring_src(node):
        return err
    if node.arg.device not in DEVICES:
        return f"copies to unknown device {node.arg.device!r}"
    return None


def _sink(node: Node) -> str | None:
    if node.dtype is not DType.VOID:
        return f"dtype must be void, is {node.dtype.value}"
    return None


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
}


def verify(sink: Node) -> Node:
    """Check every node below ``sink``; return it, or raise ``SpecError`` at the first bad one."""
    for node in sink.toposort():
        check = SPEC.get(node.op)
        err = f"no verifier rule for op {node.op.name}" if check is None else check(node)
        if err:
            raise SpecError(f"bad {node.op.name} node {node!r}: {err}")
    return sink
