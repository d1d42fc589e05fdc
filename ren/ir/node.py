"""``Node``: the one graph type, interned; the kernel's ``arg``; toposort and printing.

``Node(op, dtype, src, arg)`` returns the existing object when a structurally equal node is alive
(same op, dtype, arg, and the *same* source objects), so equality is identity and a graph shares its
common subexpressions by construction. The cache holds nodes weakly: a graph nobody references is
freed.

Printing (``str(node)``) is deterministic indented text: children below parents, a node used more
than once is printed once with a ``[k]`` label and then referred to as ``^k``; buffers are numbered
``b0, b1, ...`` in order of appearance, so the same program prints the same bytes every time.

The typed ``arg`` of every other op family is in ``ren.ir.args`` (re-exported here).
"""

from __future__ import annotations

import threading
import weakref
from _weakref import _remove_dead_weakref  # type: ignore[attr-defined]
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, TypeAlias, TypedDict, Unpack, cast

from ren.device import Buffer
from ren.ir.args import (
    BufferArg,
    ConstArg,
    ConstRowArg,
    CopyArg,
    GaloisArg,
    ImmArg,
    IndexArg,
    RescaleArg,
    RingArg,
    SlotArg,
    ToRingArg,
    ViewArg,
    check_int,
)
from ren.ir.kernels import KernelInfo
from ren.ir.op import DType, Op
from ren.ir.region import tag

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
# the node


#: Held while a new node is made and entered in the cache (lookups of existing nodes take no lock).
_INTERN_LOCK = threading.Lock()

#: A live node's key: its op, dtype, sources and arg.
_Key: TypeAlias = tuple[Op, DType, tuple["Node", ...], object]

#: The live nodes by ``(op, dtype, src, arg)``, each held weakly: a plain dict of keyed weak
#: references (what ``weakref.WeakValueDictionary`` keeps, read here without its Python-level
#: wrapper, since every node built goes through it). A reference's callback removes its entry when
#: the node dies, only if the entry is still that dead reference.
_LIVE: dict[_Key, weakref.KeyedRef[_Key, Node]] = {}


def _forget(ref: weakref.KeyedRef[_Key, Node]) -> None:
    _remove_dead_weakref(_LIVE, ref.key)


class _Interning(type):
    """Metaclass: ``Node(...)`` returns the live node with the same fields, or makes one."""

    def __call__(cls, op: Op, dtype: DType, src: Sequence[Node] = (), arg: object = None) -> Node:
        src = tuple(src)
        key = (op, dtype, src, arg)
        try:
            ref = _LIVE.get(key)
        except TypeError as e:
            raise TypeError(f"{op.name} arg {arg!r} is not hashable; args must be frozen") from e
        if ref is not None and (hit := ref()) is not None:
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
            ref = _LIVE.get(key)
            hit = None if ref is None else ref()
            if hit is None:  # the dataclass's fields, set without its __init__ (a hot path)
                hit = object.__new__(cast("type[Node]", cls))
                hit.__dict__.update(op=op, dtype=dtype, src=src, arg=arg)
                tag(hit)  # the region it is first made in (ren.ir.region)
                _LIVE[key] = weakref.KeyedRef(hit, _forget, key)
        return hit


class NodeChanges(TypedDict, total=False):
    """What ``Node.replace`` may change: any of the four fields."""

    op: Op
    dtype: DType
    src: Sequence[Node]
    arg: object


@dataclass(frozen=True, eq=False, repr=False)
class Node(metaclass=_Interning):
    """One IR node. Build it as ``Node(op, dtype, src, arg)``; equal nodes are the same object."""

    op: Op
    dtype: DType
    src: tuple[Node, ...] = ()
    arg: Any = None  # the op family's arg (ren.ir.args); Any: which class it is, op tells

    def replace(self, **changes: Unpack[NodeChanges]) -> Node:
        """The node with some of ``op``, ``dtype``, ``src``, ``arg`` changed (interned)."""
        op, dtype = changes.get("op", self.op), changes.get("dtype", self.dtype)
        return Node(op, dtype, tuple(changes.get("src", self.src)), changes.get("arg", self.arg))

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

    def __deepcopy__(self, memo: dict[int, object]) -> Node:
        return self

    def __reduce__(self) -> NoReturn:
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
    return len(_LIVE)


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


def format_graph(root: Node, name_of: Callable[[Buffer], str] | None = None) -> str:
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
        arg = fmt_arg(node, buffers, name_of)
        lines.append(f"{pad}{label}{node.op.name} {node.dtype.value}{arg}")
        for s in reversed(node.src):
            stack.append((s, depth + 1))
    return "\n".join(lines)


def fmt_arg(
    node: Node, buffers: dict[int, str], name_of: Callable[[Buffer], str] | None = None
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
# the kernel's arg (the other args are in ren.ir.args)


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

    def __post_init__(self) -> None:
        if not isinstance(self.ast, Node) or self.ast.op is not Op.STORE:
            raise TypeError(f"KernelArg.ast must be a STORE node, got {self.ast!r}")
        if not isinstance(self.info, KernelInfo):
            raise TypeError(f"KernelArg.info must be a KernelInfo, got {type(self.info).__name__}")
        if type(self.consts) is not tuple:
            raise TypeError(f"KernelArg.consts must be a tuple, got {type(self.consts).__name__}")
        for c in self.consts:
            check_int("KernelArg.consts", c, None)

    def __repr__(self) -> str:
        return repr(self.info)
