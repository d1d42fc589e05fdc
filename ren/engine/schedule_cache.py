"""The schedule cache: a graph scheduled once is bound and run again without the passes.

Eager code builds the same graph shape over and over (every CKKS multiply at one level is one
graph over other buffers, often with other constants). The cache keeps what scheduling and memory
planning made of a graph, under a key of its *structure*:

* the key: ``REN_NO_PLAN`` and the graph in topological order, each node as its op, dtype, arg
  and the positions of its sources, each input buffer replaced by its position among the inputs
  (with its device, dtype and size), each constant's value by its position among the constants.
  Rings, domains, devices, limb windows and Galois elements are args: they change the key, and
  so does each node's region (``ren.region``; its instances numbered by first appearance, and
  none for a constant, which keeps the region of the program that first made it), so a hit
  reports the regions of its own program;
* the entry: the kernels (bodies, infos, and where each buffer comes from: an input, a view of
  the arena, a buffer the schedule made), the memory plan, what each output becomes, and the
  values of the constants that had to match (below); no buffer;
* a hit makes a fresh arena and outputs, binds the new inputs and constants, and runs.

Constants. A value is abstracted only where the schedule cannot depend on it: its residue is not
0, 1 or -1 (what ``simplify`` rewrites by), it is centered, no two constants of the graph share it,
no pass made a new constant value (folding, ``x * 0``, ``x - x``), and it appears as such in the
kernels' constants. Any other constant is part of the entry: another value there misses.

Bounded (``REN_SCHEDULE_CACHE`` schedules, least recently used go; ``0``: off), shared by the
threads of a process (a lock; entries never change once kept), in memory only. ``REN_DEBUG>=1``
prints each hit and miss.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ren import settings
from ren.device import Buffer
from ren.engine import debug_level, dump
from ren.engine.hits import Code, bind, sources
from ren.engine.memory import MemoryPlan, plan_memory
from ren.engine.observe import active
from ren.engine.schedule import ScheduledKernel, schedule
from ren.ir.facts import is_const
from ren.ir.kernels import KernelInfo
from ren.ir.node import BufferArg, Node, base_buffer
from ren.ir.op import Op
from ren.ir.region import Instance, Numbering, ranks_in, region_of
from ren.passes import ScheduleContext

if TYPE_CHECKING:  # realize imports this module
    from ren.engine.realize import Backend, Runner

__all__ = [
    "CacheStats",
    "Entry",
    "Key",
    "clear",
    "graph_key",
    "lookup",
    "remember",
    "scheduled",
    "stats",
]

#: Rules of ``simplify`` that make a constant value no input holds.
_NEW_VALUES = frozenset({"fold_constants", "mul_zero", "sub_self"})

#: A constant's class in the key: residue 0, 1 or -1 (rewritten by simplify), centered, other.
_ZERO, _ONE, _MINUS_ONE, _CENTERED, _OTHER = range(5)


class _Structure(tuple[object, ...]):
    """A key's structure: a tuple that hashes once (the cache's lookup and the digest hash it)."""

    def __hash__(self) -> int:
        h = self.__dict__.get("hash")
        if h is None:
            h = self.__dict__["hash"] = tuple.__hash__(self)
        return h


@dataclass(frozen=True)
class Key:
    """A graph's structure and what it binds: the key, its inputs and its constants, in order."""

    structure: tuple[object, ...]
    inputs: tuple[Buffer, ...]
    consts: tuple[int, ...]
    classes: tuple[int, ...]
    const_nodes: tuple[Node, ...] = ()
    instances: tuple[Instance, ...] = ()  # the graph's region instances, by first appearance

    @property
    def digest(self) -> str:
        """A short hash of the structure, as ``REN_DEBUG`` and the report show it.

        It names the key within one process (ops hash by identity); it is not a file name.
        """
        return format(hash(self.structure) & 0xFFFFFFFFFFFF, "012x")


def _class(value: int, Q: int) -> int:
    r = value % Q
    if r == 0:
        return _ZERO
    if r == 1:
        return _ONE
    if r == Q - 1:
        return _MINUS_ONE
    return _CENTERED if -(Q // 2) <= value <= Q // 2 else _OTHER


def graph_key(sink: Node) -> Key:
    """The cache key of the graph below ``sink``, with its inputs and constants in key order."""
    index: dict[Node, int] = {}
    inputs: list[Buffer] = []
    consts: list[int] = []
    classes: list[int] = []
    const_index: dict[Node, int] = {}
    const_nodes: list[Node] = []
    structure: list[object] = [("no_plan", settings.NO_PLAN.get())]  # REN_NO_PLAN: no arena
    add = structure.append
    numbering = Numbering()  # region instances, by first appearance
    for i, node in enumerate(sink.toposort()):
        index[node] = i
        op, arg, src = node.op, node.arg, node.src
        if op is Op.BUFFER:
            buf = arg.buffer
            arg = ("buffer", len(inputs), buf.device, buf.dtype, buf.size)
            inputs.append(buf)
        elif op is Op.CONST:
            const_index[node] = len(consts)
            const_nodes.append(node)
            arg = ("const", len(consts), arg.device)
            consts.append(node.arg.value)
            classes.append(_CENTERED)
        elif op is Op.AS_RING and src[0].op is Op.CONST:
            c = src[0]
            cls = _class(c.arg.value, arg.ring.Q)
            k = const_index[c]
            if cls != _CENTERED:
                classes[k] = cls
            arg = (arg, cls)
        where = () if op is Op.CONST or is_const(node) else numbering.key(region_of(node))
        add((op, node.dtype, arg, tuple([index[s] for s in src]), where))
    return Key(
        _Structure(structure),
        tuple(inputs),
        tuple(consts),
        tuple(classes),
        tuple(const_nodes),
        tuple(numbering.instances),
    )


# ---------------------------------------------------------------------------------------------
# entries


@dataclass(frozen=True)
class Kernel:
    """One kernel of an entry: its body and info, its buffers as refs, its constants as refs.

    A buffer ref is ``("in", i)`` (input ``i`` of the key), ``("view", v)`` (planned view ``v``)
    or ``("new", j)`` (buffer ``j`` the schedule made). A constant ref is ``("const", k)``
    (constant ``k`` of the key) or ``("value", c)`` (the value ``c`` itself).
    """

    ast: Node
    info: KernelInfo
    bufs: tuple[tuple[str, int], ...]
    consts: tuple[tuple[str, int], ...]
    region: tuple[int, ...] = ()  # the ranks of its region's instances in the key


@dataclass(frozen=True)
class Entry:
    """What the cache keeps of one scheduled graph (no buffer: refs, sizes and offsets)."""

    digest: str
    literal: tuple[tuple[int, int], ...]  # (constant position, value) that must match
    kernels: tuple[Kernel, ...]
    arenas: tuple[tuple[str, int], ...]  # (device, bytes)
    views: tuple[tuple[int, str, int, int], ...]  # (arena, dtype, size, byte offset)
    news: tuple[tuple[str, str, int], ...]  # (device, dtype, size)
    becomes: tuple[Code, ...]  # per output: its realized node, buffers as refs
    memory_plan: MemoryPlan
    timings: tuple[tuple[str, float], ...]
    runners: list[tuple[Backend, Runner]] = field(default_factory=list, compare=False)  # per kernel
    graph: list[Any] = field(default_factory=list, compare=False)  # Any: a backend's graph runner

    def matches(self, consts: tuple[int, ...]) -> bool:
        """Whether the constants this entry fixed have the same values in ``consts``."""
        return not self.literal or all(consts[k] == v for k, v in self.literal)


def _generic(key: Key, kernels: list[ScheduledKernel], ctx: ScheduleContext) -> set[int]:
    """The constants whose values the entry may leave out (see the module's docstring)."""
    if len(set(key.consts)) != len(key.consts):
        return set()
    if any(r.rule in _NEW_VALUES for r in ctx.record.get("simplify", ())):
        return set()
    used = {c for k in kernels for c in k.consts}
    return {
        k
        for k, (v, cls) in enumerate(zip(key.consts, key.classes, strict=True))
        if cls == _CENTERED and v in used
    }


class _Uncacheable(Exception):
    """A schedule refers to a buffer that is neither an input, a planned view nor its own."""


def _entry(key: Key, kernels: list[ScheduledKernel], ctx: ScheduleContext) -> Entry:
    generic = _generic(key, kernels, ctx)
    by_value = {key.consts[k]: k for k in generic}
    inputs = {id(b): i for i, b in enumerate(key.inputs)}
    arenas: dict[int, int] = {}
    arena_list: list[tuple[str, int]] = []
    views: dict[int, int] = {}
    view_list: list[tuple[int, str, int, int]] = []
    news: dict[int, int] = {}
    new_list: list[tuple[str, str, int]] = []

    def ref(buf: Buffer) -> tuple[str, int]:
        if id(buf) in inputs:
            return ("in", inputs[id(buf)])
        if buf.base is not None:
            if id(buf) not in views:
                root = buf.base
                if id(root) not in arenas:
                    arenas[id(root)] = len(arena_list)
                    arena_list.append((root.device, root.size))
                views[id(buf)] = len(view_list)
                view_list.append((arenas[id(root)], buf.dtype, buf.size, buf.offset))
            return ("view", views[id(buf)])
        if buf.allocated:  # holds data the schedule did not write: not something to re-make
            raise _Uncacheable
        if id(buf) not in news:
            news[id(buf)] = len(new_list)
            new_list.append((buf.device, buf.dtype, buf.size))
        return ("new", news[id(buf)])

    rank = {instance.serial: r for r, instance in enumerate(key.instances)}
    regions = [ranks_in(k.region, rank) for k in kernels]
    if None in regions:  # a region the graph does not hold: passes build in their nodes'
        raise _Uncacheable
    entries = tuple(
        Kernel(
            k.ast,
            k.info,
            tuple(ref(b) for b in k.bufs),
            tuple(("const", by_value[c]) if c in by_value else ("value", c) for c in k.consts),
            regions[i] or (),
        )
        for i, k in enumerate(kernels)
    )
    becomes = tuple(_encode(ctx.becomes_map[out], ref) for out in ctx.outputs)
    literal = tuple((k, v) for k, v in enumerate(key.consts) if k not in generic)
    return Entry(
        key.digest,
        literal,
        entries,
        tuple(arena_list),
        tuple(view_list),
        tuple(new_list),
        becomes,
        ctx.memory_plan if isinstance(ctx.memory_plan, MemoryPlan) else MemoryPlan(),
        tuple(ctx.timings.items()),
    )


def _encode(node: Node, ref: Callable[[Buffer], tuple[str, int]]) -> Code:
    """A realized output node with its buffers as refs (no buffer is kept)."""
    if node.op is Op.BUFFER:
        return ("buffer", node.dtype, ref(node.arg.buffer))
    return (node.op, node.dtype, node.arg, tuple(_encode(s, ref) for s in node.src))


def _decode(code: Code, buf: Callable[[tuple[str, int]], Buffer]) -> Node:
    if code[0] == "buffer":
        return Node(Op.BUFFER, code[1], (), BufferArg(buf(code[2])))
    op, dtype, arg, src = code
    return Node(op, dtype, tuple(_decode(s, buf) for s in src), arg)


# ---------------------------------------------------------------------------------------------
# the cache


@dataclass(frozen=True)
class CacheStats:
    """Hits, misses, schedules held and the bound (``REN_SCHEDULE_CACHE``)."""

    hits: int
    misses: int
    currsize: int
    maxsize: int


_LOCK = threading.Lock()
_CACHE: OrderedDict[tuple[object, ...], list[Entry]] = OrderedDict()
_COUNTS = {"hits": 0, "misses": 0, "size": 0}


def enabled() -> bool:
    """Whether the schedule cache is on (``REN_SCHEDULE_CACHE`` is not 0)."""
    return settings.SCHEDULE_CACHE.get() > 0


def lookup(key: Key) -> Entry | None:
    """The entry for ``key`` whose fixed constants match, or ``None`` (a miss)."""
    with _LOCK:
        hit = next((e for e in _CACHE.get(key.structure, ()) if e.matches(key.consts)), None)
        if hit is not None:
            _CACHE.move_to_end(key.structure)
        _COUNTS["hits" if hit is not None else "misses"] += 1
    if debug_level() >= 1:
        what = f"hit ({len(hit.kernels)} kernels)" if hit is not None else "miss"
        print(f"  schedule cache {what} {key.digest}", file=sys.stderr)
    return hit


def remember(key: Key, kernels: list[ScheduledKernel], ctx: ScheduleContext) -> Entry | None:
    """Keep what scheduling made of ``key``'s graph; ``None`` if it cannot be kept."""
    try:
        entry = _entry(key, kernels, ctx)
    except _Uncacheable:
        return None
    bound = settings.SCHEDULE_CACHE.get()
    with _LOCK:
        variants = _CACHE.setdefault(key.structure, [])
        if any(e.literal == entry.literal for e in variants):
            return entry  # another thread kept the same one meanwhile
        variants.append(entry)
        _CACHE.move_to_end(key.structure)
        _COUNTS["size"] += 1
        while _COUNTS["size"] > bound and _CACHE:
            _, dropped = _CACHE.popitem(last=False)
            _COUNTS["size"] -= len(dropped)
    return entry


def scheduled(sink: Node) -> tuple[list[ScheduledKernel], ScheduleContext, Entry | None]:
    """The kernels of ``sink`` with memory planned: from the schedule cache, or the passes.

    Also returns the cache's entry (kept or hit), whose ``runners`` the exec units reuse. While a
    tool that shows passes watches (an observer, ``REN_DUMP``), the passes run even on a hit, so
    every realization can be shown; the context says it was a hit all the same.
    """
    if not enabled():
        return (*_plan(*schedule(sink)), None)
    key = graph_key(sink)
    entry = lookup(key)
    if entry is not None and not (active() or dump.dump_dir() is not None):
        sched, buf = bind(entry, key)
        ctx = ScheduleContext(outputs=sink.src, cache="hit", cache_key=key.digest)
        outs = [_decode(code, buf) for code in entry.becomes]  # what each output became
        ctx.becomes_map.update(zip(sink.src, outs, strict=True))
        ctx.memory_plan = entry.memory_plan
        return sched, ctx, entry
    sched, ctx = _plan(*schedule(sink))
    ctx.cache, ctx.cache_key = ("miss" if entry is None else "hit, scheduled again"), key.digest
    if entry is None:
        entry = remember(key, sched, ctx)
    if entry is not None:  # say which rows hold an abstracted constant (for ren.jit)
        sched = [
            dataclasses.replace(k, const_sources=sources(e, key))
            for k, e in zip(sched, entry.kernels, strict=True)
        ]
    return sched, ctx, None if ctx.cache != "miss" else entry


def _plan(
    sched: list[ScheduledKernel], ctx: ScheduleContext
) -> tuple[list[ScheduledKernel], ScheduleContext]:
    outputs = tuple(base_buffer(n).arg.buffer for n in ctx.becomes_map.values())
    sched, ctx.memory_plan = plan_memory(sched, outputs)
    return sched, ctx


def stats() -> CacheStats:
    """The cache's hits, misses and size in this process."""
    with _LOCK:
        return CacheStats(
            _COUNTS["hits"], _COUNTS["misses"], _COUNTS["size"], settings.SCHEDULE_CACHE.get()
        )


def clear() -> None:
    """Drop every schedule and reset the counts."""
    with _LOCK:
        _CACHE.clear()
        _COUNTS.update(hits=0, misses=0, size=0)
