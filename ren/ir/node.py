"""``Node``: the one graph type, interned; typed ``arg`` dataclasses; toposort and printing.

``Node(op, dtype, src, arg)`` returns the existing object when a structurally equal node is alive
(same op, dtype, arg, and the *same* source objects), so equality is identity and a graph shares its
common subexpressions by construction. The cache holds nodes weakly: a graph nobody references is
freed.

Printing (``str(node)``) is deterministic indented text: children below parents, a node used more
than once is printed once with a ``[k]`` label and then referred to as ``^k``; buffers are numbered
``b0, b1, ...`` in order of appearance, so the same program prints the same bytes every time.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from ren.ir.kernels import KernelInfo
from ren.ir.op import DType, Op
from ren.ir.region import tag
from ren.ring import Domain, RingSpec

__all__ = [
    "BufferArg",
    "ConstArg",
    "ConstRowArg",
    "CopyArg",
    "GaloisArg",
    "ImmArg",
    "IndexArg",
    "KernelArg",
    "KernelInfo",
    "Node",
    "RescaleArg",
    "RingArg",
    "SlotArg",
    "ToRingArg",
    "ViewArg",
    "base_buffer",
    "toposort",
]


# --------------------------------------------------------------------------------------------
# typed args: one small frozen dataclass per op family, with a short repr


@dataclass(frozen=True)
class RingArg:
    """``AS_RING`` metadata: the ring and the domain of the data below it."""

    ring: RingSpec
    domain: Domain

    def __hash__(self) -> int:
        # computed once: the node cache hashes the arg of every AS_RING it looks up
        h = self.__dict__.get("_hash")
        if h is None:
            h = self.__dict__["_hash"] = hash((self.ring, self.domain))
        return h

    def __getstate__(self) -> dict[str, Any]:
        # the hash is this process's (strings and enums hash differently in another)
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    def __repr__(self) -> str:
        return f"n={self.ring.n} q={self.ring.moduli} {self.domain.value}"


@dataclass(frozen=True)
class ToRingArg:
    """``TO_RING`` target: the ring whose moduli the value is carried to."""

    ring: RingSpec

    def __repr__(self) -> str:
        return f"-> n={self.ring.n} q={self.ring.moduli}"


@dataclass(frozen=True)
class RescaleArg:
    """``RESCALE``: divide by the product of ``moduli`` (which are dropped), rounding."""

    moduli: tuple[int, ...]

    def __repr__(self) -> str:
        return f"/ {'*'.join(map(str, self.moduli))}"


@dataclass(frozen=True)
class GaloisArg:
    """``ROTATE``/``AUTOMORPHISM``: ``X -> X^galois``; ``steps`` records a slot rotation."""

    galois: int
    steps: int | None = None

    def __repr__(self) -> str:
        return f"g={self.galois}" + (f" (rot {self.steps})" if self.steps is not None else "")


@dataclass(frozen=True)
class CopyArg:
    """``COPY`` destination device."""

    device: str

    def __repr__(self) -> str:
        return f"-> {self.device}"


@dataclass(frozen=True)
class ConstArg:
    """``CONST``: the integer ``value`` (any size; reduced per modulus when lowered)."""

    value: int
    device: str

    def __repr__(self) -> str:
        return f"{self.value} {self.device}"


@dataclass(frozen=True, eq=False)
class BufferArg:
    """``BUFFER``: a device buffer, compared by identity (two buffers are never equal)."""

    buffer: Any  # ren.device.Buffer; typed loosely so the IR does not import devices

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BufferArg) and other.buffer is self.buffer

    def __hash__(self) -> int:
        return id(self.buffer)

    def __repr__(self) -> str:
        return f"{self.buffer.device} {self.buffer.size} words"


@dataclass(frozen=True)
class ViewArg:
    """``BUFFER_VIEW``: ``size`` words starting ``offset`` words into the source buffer."""

    offset: int
    size: int

    def __repr__(self) -> str:
        return f"@{self.offset} {self.size} words"


# --------------------------------------------------------------------------------------------
# the node


#: Held while a new node is made and entered in the cache (lookups of existing nodes take no lock).
_INTERN_LOCK = threading.Lock()


class _Interning(type):
    """Metaclass: ``Node(...)`` returns the live node with the same fields, or makes one."""

    _cache: ClassVar[weakref.WeakValueDictionary] = weakref.WeakValueDictionary()

    def __call__(cls, op: Op, dtype: DType, src: tuple[Node, ...] = (), arg: Any = None) -> Node:
        src = tuple(src)
        key = (op, dtype, src, arg)
        try:
            hit = cls._cache.get(key)
        except TypeError as e:
            raise TypeError(f"{op.name} arg {arg!r} is not hashable; args must be frozen") from e
        if hit is not None:
            return hit
        if not isinstance(op, Op):
            raise TypeError(f"op must be an Op, got {op!r}")
        if not isinstance(dtype, DType):
            raise TypeError(f"dtype must be a DType, got {dtype!r}")
        for s in src:
            if not isinstance(s, Node):
                raise TypeError(f"{op.name} source {s!r} is not a Node")
        # two threads making the same node at once must get one object: look again under the lock
        with _INTERN_LOCK:
            hit = cls._cache.get(key)
            if hit is None:  # the dataclass's fields, set without its __init__ (a hot path)
                hit = object.__new__(cast("type[Node]", cls))
                hit.__dict__.update(op=op, dtype=dtype, src=src, arg=arg)
                tag(hit)  # the region it is first made in (ren.ir.region)
                cls._cache[key] = hit
        return hit


@dataclass(frozen=True, eq=False, repr=False)
class Node(metaclass=_Interning):
    """One IR node. Build it as ``Node(op, dtype, src, arg)``; equal nodes are the same object."""

    op: Op
    dtype: DType
    src: tuple[Node, ...] = ()
    arg: Any = None

    def replace(self, **changes: Any) -> Node:
        """The node with some of ``op``, ``dtype``, ``src``, ``arg`` changed (interned)."""
        fields = {"op": self.op, "dtype": self.dtype, "src": self.src, "arg": self.arg}
        fields.update(changes)
        return Node(fields["op"], fields["dtype"], tuple(fields["src"]), fields["arg"])

    def toposort(self) -> list[Node]:
        """Every node reachable from this one, sources before users (deterministic)."""
        return toposort(self)

    def __repr__(self) -> str:
        arg = "" if self.arg is None else f" {self.arg!r}"
        return f"<{self.op.name} {self.dtype.value}{arg} src={len(self.src)}>"

    def __str__(self) -> str:
        return format_graph(self)

    # interned: a copy would be a second object for one node, so copies are the node itself
    def __copy__(self) -> Node:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Node:
        return self

    def __reduce__(self) -> Any:
        raise TypeError(
            f"a graph Node ({self.op.name}) cannot be pickled: nodes are interned and hold "
            "buffers; pickle the Poly instead (pickle.dumps(poly) stores its value)"
        )


def base_buffer(node: Node) -> Node:
    """The ``BUFFER`` under a storage node, through ``AS_RING``, ``BUFFER_VIEW`` and ``AFTER``.

    Each of those has its storage as its first source.
    """
    while node.op is not Op.BUFFER:
        node = node.src[0]
    return node


def live_nodes() -> int:
    """How many interned nodes are alive (for tests that check graphs are freed)."""
    return len(_Interning._cache)


def toposort(root: Node) -> list[Node]:
    """Nodes reachable from ``root`` in post-order: every node after all its sources.

    Iterative (no recursion limit on deep graphs); the order depends only on the graph's shape.
    """
    order: list[Node] = []
    done: set[Node] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if node in done:
            continue
        if expanded:
            done.add(node)
            order.append(node)
            continue
        stack.append((node, True))
        for s in reversed(node.src):
            if s not in done:
                stack.append((s, False))
    return order


def format_graph(root: Node, name_of: Callable[[Any], str] | None = None) -> str:
    """Deterministic indented text of the graph below ``root`` (see the module docstring).

    Buffers are named ``b0``, ``b1``, ... in the order they are printed, or ``name_of(buffer)``
    (the step-through debugger names them as its ``buffer`` command does).
    """
    uses: dict[Node, int] = {}
    for node in toposort(root):
        for s in node.src:
            uses[s] = uses.get(s, 0) + 1
    labels: dict[Node, int] = {}
    buffers: dict[int, str] = {}
    lines: list[str] = []
    stack: list[tuple[Node, int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        pad = "  " * depth
        if node in labels:
            lines.append(f"{pad}^{labels[node]} {node.op.name}")
            continue
        label = ""
        if uses.get(node, 0) > 1:
            labels[node] = len(labels)
            label = f"[{labels[node]}] "
        arg = _fmt_arg(node, buffers, name_of)
        lines.append(f"{pad}{label}{node.op.name} {node.dtype.value}{arg}")
        for s in reversed(node.src):
            stack.append((s, depth + 1))
    return "\n".join(lines)


def _fmt_arg(
    node: Node, buffers: dict[int, str], name_of: Callable[[Any], str] | None = None
) -> str:
    if node.arg is None:
        return ""
    if isinstance(node.arg, BufferArg):
        if name_of is not None:
            return f" {name_of(node.arg.buffer)} {node.arg!r}"
        name = buffers.setdefault(id(node.arg.buffer), f"b{len(buffers)}")
        return f" {name} {node.arg!r}"
    return f" {node.arg!r}"


# --------------------------------------------------------------------------------------------
# args of the scheduler's and kernels' ops


@dataclass(frozen=True)
class ImmArg:
    """``IMM``: the constant polynomial ``value`` of ``ring`` (on ``device``), lowered.

    ``layout`` says which words hold it: ``"all"`` (every word: a constant in NTT form, or a scalar
    factor in either form) or ``"first"`` (coefficient 0 of each limb, zeros elsewhere: a constant
    added in coefficient form). The value is the same ring element either way.
    """

    value: int
    ring: RingSpec
    device: str
    layout: str = "all"

    def __repr__(self) -> str:
        return f"{self.value} {self.layout} n={self.ring.n} q={self.ring.moduli}"


@dataclass(frozen=True)
class ConstRowArg:
    """``IMM`` in a kernel body: the constant's words are a row of the kernel's constants.

    Row ``row`` of the constants argument (the ``SLOT`` the ``IMM`` reads) holds the words per
    limb; they are not literals in the body.
    ``kernelize`` moves every constant's value out of the body into ``KernelArg.consts``, so
    kernels that differ only in constant values have one body (one compiled library). ``layout``
    is ``ImmArg``'s: ``"all"`` or ``"first"`` (coefficient 0 of each limb, zeros elsewhere).
    """

    row: int
    ring: RingSpec
    device: str
    layout: str = "all"

    def __repr__(self) -> str:
        return f"row {self.row} {self.layout} n={self.ring.n} q={self.ring.moduli}"


@dataclass(frozen=True)
class IndexArg:
    """``INDEX``/``LOAD``: read a value of ``ring`` in ``domain`` from a buffer.

    Output word ``(limb i, slot k)`` reads buffer word ``(i + limb_offset) * n + j``: ``j = k``,
    or ``j = perm_g[k]`` (the NTT-form automorphism gather) when ``galois`` is set.
    """

    ring: RingSpec
    domain: Domain
    limb_offset: int = 0
    galois: int | None = None

    def __repr__(self) -> str:
        out = f"n={self.ring.n} q={self.ring.moduli} {self.domain.value}"
        if self.limb_offset:
            out += f" +{self.limb_offset} limbs"
        return out + (f" gather g={self.galois}" if self.galois is not None else "")


@dataclass(frozen=True)
class SlotArg:
    """``SLOT``: the kernel's ``index``-th buffer parameter (0 is the output)."""

    index: int

    def __repr__(self) -> str:
        return f"#{self.index}"


@dataclass(frozen=True)
class KernelArg:
    """``KERNEL``: the kernel body ``ast`` (a ``STORE`` over ``SLOT`` parameters) and its info.

    ``consts`` are the values of the body's constants, by row (an ``IMM`` with a ``ConstRowArg``
    reads row ``row``): a backend gets their Montgomery words per limb as one more argument,
    after the buffers, so the body itself holds no constant value.
    """

    ast: Node
    info: KernelInfo
    consts: tuple[int, ...] = ()

    def __repr__(self) -> str:
        return repr(self.info)
