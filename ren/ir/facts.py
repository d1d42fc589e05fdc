"""Derived facts of a node: its ring, domain and device, computed once and kept in a side table.

Nothing here is stored on ``Node``: the facts follow from the op, the arg and the sources' facts.
``facts(node)`` walks iteratively down to nodes already known, so asking for the facts of a node
on top of a deep, already-seen graph costs one step.

The rules (the front end's meaning of each op; the verifier checks the sources agree):

* ``AS_RING`` states ring and domain; ``BUFFER``/``CONST``/``COPY`` state the device.
* Kernel-level ``INDEX``/``LOAD`` state ring and domain in their arg; a lowered constant ``IMM``
  has a ring but no domain of its own (it is read in the domain of the op that uses it).
* ``NTT`` gives NTT form, ``INTT`` coefficient form, ``RESCALE`` and a non-view ``TO_RING``
  coefficient form (they compute there); a view ``TO_RING`` (a contiguous run of the moduli) keeps
  the source's domain.
* ``MUL`` of two non-constants and ``ROTATE`` of a non-constant give NTT form (they compute
  there). ``ADD``/``SUB`` give NTT form when any non-constant source is in NTT form (mixed
  inputs are pushed toward NTT). An operation with a constant keeps the other source's domain.
"""

from __future__ import annotations

from typing import NamedTuple

from ren.errors import SpecError
from ren.ir.node import Node
from ren.ir.op import Op
from ren.ring import Domain, RingSpec

__all__ = [
    "Facts",
    "device_of",
    "domain_of",
    "facts",
    "is_const",
    "is_view",
    "need_ring",
    "ring_of",
]


class Facts(NamedTuple):
    """What a node's value is: its ring, representation and device (``None`` where it has none)."""

    ring: RingSpec | None
    domain: Domain | None
    device: str | None

    def need_ring(self) -> RingSpec:
        """The ring, for a value that must have one (a ``SpecError`` if it has none)."""
        if self.ring is None:
            raise SpecError(f"a ring value was expected, got a value without a ring ({self})")
        return self.ring

    def need_domain(self) -> Domain:
        """The domain, for a value that must have one (a ``SpecError`` if it has none)."""
        if self.domain is None:
            raise SpecError(f"a value in a domain was expected, got one without ({self})")
        return self.domain

    def need_device(self) -> str:
        """The device, for a value that must live on one (a ``SpecError`` if it has none)."""
        if self.device is None:
            raise SpecError(f"a value on a device was expected, got one without ({self})")
        return self.device


_NONE = Facts(None, None, None)
#: Where a node keeps its facts (in its ``__dict__``; a frozen dataclass only refuses setattr).
_KEY = "_facts"


def is_const(node: Node) -> bool:
    """Whether ``node`` is a ring constant.

    A ring constant is ``AS_RING(CONST)`` (maybe under NEG/NTT/INTT) or its lowered form ``IMM``.
    """
    while node.op in (Op.NEG, Op.NTT, Op.INTT) and node.src:
        node = node.src[0]
    return node.op is Op.IMM or (node.op is Op.AS_RING and node.src[0].op is Op.CONST)


def is_view(node: Node) -> bool:
    """Whether ``node`` is a ``TO_RING`` onto a contiguous run of its source's moduli (same dtype).

    Such a node is a window of limbs, no compute, in any domain.
    """
    if node.op is not Op.TO_RING:
        return False
    return facts(node.src[0]).need_ring().contiguous_offset(node.arg.ring) is not None


def _derive(node: Node, src: list[Facts]) -> Facts:
    op, arg = node.op, node.arg
    if op is Op.BUFFER:
        return Facts(None, None, arg.buffer.device)
    if op is Op.CONST:
        return Facts(None, None, arg.device)
    if op is Op.AS_RING:
        return Facts(arg.ring, arg.domain, src[0].device)
    if op is Op.IMM:  # a lowered constant takes the domain of the op that uses it
        return Facts(arg.ring, None, arg.device)
    if op in (Op.INDEX, Op.LOAD):
        return Facts(arg.ring, arg.domain, src[0].device)
    if op in (Op.SLOT, Op.GIDX, Op.KERNEL):
        return _NONE
    if not src or op is Op.SINK:
        return _NONE
    first = src[0]
    if op is Op.NTT:
        return Facts(first.ring, Domain.NTT, first.device)
    if op is Op.INTT:
        return Facts(first.ring, Domain.COEFF, first.device)
    if op is Op.COPY:
        return Facts(first.ring, first.domain, arg.device)
    if op is Op.RESCALE:
        ring = first.need_ring()
        keep = tuple(q for q in ring.moduli if q not in arg.moduli)
        return Facts(ring.with_moduli(keep), Domain.COEFF, first.device)
    if op is Op.TO_RING:
        view = first.need_ring().contiguous_offset(arg.ring) is not None  # is_view, from src
        return Facts(arg.ring, first.domain if view else Domain.COEFF, first.device)
    if op is Op.ADD or op is Op.SUB or op is Op.MUL:
        varying = [f for f, s in zip(src, node.src, strict=True) if not is_const(s)] or [first]
        domain: Domain | None
        if (op is Op.MUL and len(varying) == 2) or any(f.domain is Domain.NTT for f in varying):
            domain = Domain.NTT
        else:
            domain = varying[0].domain
        return Facts(first.ring, domain, first.device)
    if op is Op.ROTATE:
        return first if is_const(node.src[0]) else Facts(first.ring, Domain.NTT, first.device)
    if op is Op.STORE:  # STORE(buffer, value): nothing to read, on the buffer's device
        return Facts(None, None, first.device)
    # NEG, CONTIGUOUS, AUTOMORPHISM, BUFFERIZE, BUFFER_VIEW, AFTER keep their first source's facts
    return first


def facts(node: Node) -> Facts:
    """The ring, domain and device of ``node``'s value (memoized on the node; iterative).

    A node's facts never change (nodes are immutable), so they are kept in the node's own
    ``__dict__`` under ``_facts``: they live and die with it, and a lookup is one dict read.
    """
    hit: Facts | None = node.__dict__.get(_KEY)
    if hit is not None:
        return hit
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        n, ready = stack.pop()
        known = n.__dict__
        if _KEY in known:
            continue
        if ready:
            known[_KEY] = _derive(n, [s.__dict__[_KEY] for s in n.src])
            continue
        stack.append((n, True))
        stack.extend((s, False) for s in n.src if _KEY not in s.__dict__)
    result: Facts = node.__dict__[_KEY]
    return result


def ring_of(node: Node) -> RingSpec | None:
    """The ring of ``node``'s value."""
    return facts(node).ring


def need_ring(node: Node) -> RingSpec:
    """The ring of ``node``'s value, for a node that must have one (``SpecError`` if not)."""
    return facts(node).need_ring()


def domain_of(node: Node) -> Domain | None:
    """The domain (representation) of ``node``'s value."""
    return facts(node).domain


def device_of(node: Node) -> str | None:
    """The device ``node``'s value lives on."""
    return facts(node).device
