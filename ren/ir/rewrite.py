"""The one pattern/rewrite engine every pass uses.

A rule is ``(pattern, function)``: when ``pattern`` matches a node, ``function`` is called with the
named captures as keyword arguments (and ``ctx=`` when it takes one) and returns the replacement
node, or ``None`` to leave the node alone. ``graph_rewrite(sink, rules)`` rewrites bottom-up to a
fixed point: sources first, then the node, and any node a rule produced is itself rewritten, so at
the end no rule matches anywhere in the result. The walk is iterative.

A rule that keeps producing nodes it has seen (``a -> b -> a``), or that rewrites a node into a
graph containing that node again, raises ``RewriteLoopError`` naming the rules involved.

Pass ``record=[]`` to get the list of ``Rewrite(rule, before, after)`` that fired, in order; the
viz and the debugger read it.

Example::

    rules = Rules([
        (Pat(Op.NTT, src=(Pat(Op.INTT, src=(Pat.var("x"),)),)), lambda x: x),  # ntt(intt(x)) -> x
    ])
    out = graph_rewrite(sink, rules)
"""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeAlias, TypedDict, Unpack

from ren.errors import RenError
from ren.ir.node import Node
from ren.ir.op import DType, Op
from ren.ir.region import enter, leave, region_of

__all__ = ["Pat", "Rewrite", "RewriteLoopError", "Rule", "Rules", "graph_rewrite"]

# How many times one node may be rewritten in a chain before the engine calls it a loop.
MAX_CHAIN = 1000

#: A rule's function: the captures by name (and ``ctx`` when it asks), a new node or ``None``.
RuleFn: TypeAlias = Callable[..., "Node | None"]
#: A rule, or ``(pattern, function)`` or ``(pattern, function, name)``.
RuleLike: TypeAlias = "Rule | tuple[Pat, RuleFn] | tuple[Pat, RuleFn, str]"


class RewriteLoopError(RenError):
    """A rule set does not reach a fixed point: its rules keep rewriting a node."""


class Pat:
    """A pattern over nodes.

    Args:
        op: an ``Op``, a collection of ops, or ``None`` for any op.
        src: ``None`` (any sources), a tuple of patterns (that many sources, matched in order),
            or a single pattern every source must match (any number of sources).
        arg: ``None`` (any arg) or a value the arg must equal.
        arg_type: a class the arg must be an instance of.
        dtype: a ``DType`` (or collection) the node must have.
        name: capture the matched node under this keyword. A name used twice must match the
            same node both times.
        where: a predicate on the node that must hold.
    """

    __slots__ = ("arg", "arg_type", "dtype", "name", "ops", "src", "where")

    def __init__(
        self,
        op: Op | Iterable[Op] | None = None,
        src: tuple[Pat, ...] | Pat | None = None,
        arg: object = None,
        *,
        arg_type: type | tuple[type, ...] | None = None,
        dtype: DType | Iterable[DType] | None = None,
        name: str | None = None,
        where: Callable[[Node], bool] | None = None,
    ) -> None:
        self.ops = None if op is None else frozenset([op] if isinstance(op, Op) else op)
        self.src = src
        self.arg = arg
        self.arg_type = arg_type
        self.dtype = (
            None if dtype is None else frozenset([dtype] if isinstance(dtype, DType) else dtype)
        )
        self.name = name
        self.where = where

    @classmethod
    def var(cls, name: str, **kwargs: Unpack[PatOptions]) -> Pat:
        """Any node, captured as ``name``."""
        return cls(name=name, **kwargs)

    def match(self, node: Node, captures: dict[str, Node]) -> bool:
        """Match ``node``, adding named captures to ``captures``; ``False`` leaves them unusable."""
        if self.ops is not None and node.op not in self.ops:
            return False
        if self.dtype is not None and node.dtype not in self.dtype:
            return False
        if self.arg is not None and node.arg != self.arg:
            return False
        if self.arg_type is not None and not isinstance(node.arg, self.arg_type):
            return False
        if self.name is not None and captures.setdefault(self.name, node) is not node:
            return False
        if isinstance(self.src, Pat):
            if not all(self.src.match(s, captures) for s in node.src):
                return False
        elif self.src is not None:
            if len(self.src) != len(node.src):
                return False
            if not all(p.match(s, captures) for p, s in zip(self.src, node.src, strict=True)):
                return False
        return self.where is None or bool(self.where(node))

    def __repr__(self) -> str:
        ops = "any" if self.ops is None else "|".join(sorted(o.name for o in self.ops))
        return f"Pat({ops}{f' as {self.name}' if self.name else ''})"


class PatOptions(TypedDict, total=False):
    """The keywords of ``Pat`` besides ``name``, which ``Pat.var`` passes on."""

    op: Op | Iterable[Op] | None
    src: tuple[Pat, ...] | Pat | None
    arg: object
    arg_type: type | tuple[type, ...] | None
    dtype: DType | Iterable[DType] | None
    where: Callable[[Node], bool] | None


@dataclass(frozen=True)
class Rule:
    """A named rule. ``name`` defaults to the function's name (or ``module:line`` for a lambda)."""

    pattern: Pat
    fn: RuleFn
    name: str
    wants_ctx: bool

    @classmethod
    def make(cls, item: RuleLike) -> Rule:
        """A ``Rule`` from a rule or a ``(pattern, fn)`` or ``(pattern, fn, name)`` tuple.

        The rule's function gets the schedule context when it has a ``ctx`` parameter.

        Raises:
            TypeError: if ``item`` is not a rule, or not a tuple of a ``Pat`` and a callable.
        """
        if isinstance(item, Rule):
            return item
        if not isinstance(item, tuple) or len(item) not in (2, 3):
            raise TypeError(
                f"a rule is (pattern, function) or (pattern, function, name), got {item!r}"
            )
        pattern, fn = item[0], item[1]
        if not isinstance(pattern, Pat) or not callable(fn):
            raise TypeError(f"a rule is (Pat, callable), got ({pattern!r}, {fn!r})")
        if len(item) == 3:
            name = item[2]
        elif fn.__name__ == "<lambda>":
            code = fn.__code__
            name = f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}"
        else:
            name = fn.__name__
        wants_ctx = "ctx" in inspect.signature(fn).parameters
        return cls(pattern, fn, name, wants_ctx)


class Rules:
    """A compiled rule list: rules indexed by the ops their pattern can match, in list order."""

    def __init__(self, rules: Iterable[RuleLike]) -> None:
        self.rules = tuple(Rule.make(r) for r in rules)
        self._by_op: dict[Op, tuple[Rule, ...]] = {
            op: tuple(r for r in self.rules if r.pattern.ops is None or op in r.pattern.ops)
            for op in Op
        }

    def __add__(self, other: Rules) -> Rules:
        return Rules(self.rules + other.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def rewrite_once(self, node: Node, ctx: object = None) -> tuple[Rule, Node] | None:
        """The first rule that matches ``node`` and returns a different node, with that node."""
        for rule in self._by_op[node.op]:
            captures: dict[str, Node] = {}
            if not rule.pattern.match(node, captures):
                continue
            out = rule.fn(ctx=ctx, **captures) if rule.wants_ctx else rule.fn(**captures)
            if out is not None and out is not node:
                if not isinstance(out, Node):
                    raise TypeError(f"rule {rule.name} returned {out!r}, not a Node")
                return rule, out
        return None


@dataclass(frozen=True)
class Rewrite:
    """One rule firing: ``rule`` rewrote ``before`` into ``after``."""

    rule: str
    before: Node
    after: Node


def graph_rewrite(
    sink: Node,
    rules: Rules | Iterable[RuleLike],
    ctx: object = None,
    record: list[Rewrite] | None = None,
) -> Node:
    """Rewrite the graph below ``sink`` bottom-up until no rule matches anywhere; return the root.

    Raises:
        RewriteLoopError: when rules keep rewriting a node (a cycle, or an endless chain).
    """
    rules = rules if isinstance(rules, Rules) else Rules(rules)
    by_op = rules._by_op
    done: dict[Node, Node] = {}
    pending: set[Node] = set()  # visited, result not known yet
    chain: dict[Node, int] = {}  # node a rule produced -> how many rewrites led to it
    recent: deque[str] = deque(maxlen=6)  # the last rules that fired, for loop messages
    # stack items: (node, stage, replacement); stage 0 = visit, 1 = sources done, 2 = await output
    stack: list[tuple[Node, int, Node | None]] = [(sink, 0, None)]
    while stack:
        node, stage, out = stack.pop()
        if stage == 0:
            if node in done:
                continue
            if node in pending:
                raise RewriteLoopError(
                    f"rule loop: rewriting {node!r} led back to itself "
                    f"(last rules: {', '.join(recent)})"
                )
            pending.add(node)
            stack.append((node, 1, None))
            stack.extend([(s, 0, None) for s in reversed(node.src) if s not in done])
        elif stage == 1:
            src = node.src
            new_src = tuple([done[s] for s in src])
            same = new_src == src
            if same and not by_op[node.op]:  # nothing to rebuild, no rule to try
                done[node] = node
                pending.discard(node)
                continue
            path = region_of(node)
            token = enter(path) if path else None  # build in the node's region (ren.ir.region)
            try:
                cur = node if same else Node(node.op, node.dtype, new_src, node.arg)
                fired = rules.rewrite_once(cur, ctx)
            finally:
                if token is not None:
                    leave(token)
            if fired is None:
                done[node] = done[cur] = cur
                pending.discard(node)
                continue
            rule, new = fired
            recent.append(rule.name)
            if record is not None:
                record.append(Rewrite(rule.name, cur, new))
            depth = chain.get(node, 0) + 1
            if depth > MAX_CHAIN:
                raise RewriteLoopError(
                    f"rule loop: {node!r} was rewritten {MAX_CHAIN} times in a row "
                    f"(last rule: {rule.name})"
                )
            if new in pending:
                raise RewriteLoopError(
                    f"rule loop: rule {rule.name} rewrote {cur!r} into {new!r}, "
                    "which is still being rewritten"
                )
            chain[new] = depth
            stack.append((node, 2, new))
            stack.append((new, 0, None))
        else:
            assert out is not None  # stage 2 items carry the rule's output
            done[node] = done[out]
            pending.discard(node)
    return done[sink]
