"""``ren.jit``: capture the exec units of a polynomial function once, replay them many times.

A jitted function is called with arguments that hold ``Poly`` values (directly, or in lists,
tuples, dicts and dataclasses). On each call:

1. the ``Poly`` inputs are found and realized (the replay boundary is concrete buffers);
2. the cache key is built: per input, ``("buffer", ring, size, dtype, device, domain, view)`` for
   a realized value, ``("const", ring, value, device, domain)`` for a constant, plus the path of
   each input in the arguments and every other hashable argument (an int such as a rotation
   amount changes the program, so it is part of the key);
3. on a miss, the function is *captured*: it is called once, its output ``Poly`` values are
   realized, and every exec unit any realization ran meanwhile is recorded. With
   ``prune=True`` the units that read no input are run once and dropped. The temporaries of the
   whole capture are planned again into one arena per device, the places where each input buffer
   is read are noted, and the backend is asked for a graph runner (``cpu``: one C function
   calling every kernel);
4. on a hit, the new input buffers are swapped in, the plan runs (the graph runner, or the units
   one by one), the bound inputs are cleared, and the *same* output structure as at capture is
   returned, its buffers holding the new values.

An input that is a buffer the plan writes (an output fed back, ``x = step(x, y)``) is copied to a
private buffer first, so no kernel reads a word another kernel of the same replay already wrote.

Threads: a jitted function may be called from several threads at once. A capture records only
the realizations of its own thread (the capture state is a context variable), and each thread
replays into buffers of its own: the first replay in a thread other than the capturing one
copies the plan's shape with a new arena and new output buffers (and its own graph runner), so
every thread gets its own answer, and the same output objects at each of its calls. The table of
plans is behind a lock; two threads that miss on the same key both capture, and one plan is kept.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import sys
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any, Generic, NamedTuple, ParamSpec, Protocol, TypeVar, overload

import numpy as np

from ren import settings
from ren.device import Buffer
from ren.engine import debug_level
from ren.engine.memory import _lifetimes, _plan_device, _rebind
from ren.engine.observe import notify
from ren.engine.realize import CAPTURE_RECORDER, ExecUnit, backend, validate_unit
from ren.errors import JitError
from ren.ir.facts import is_const
from ren.ir.node import BufferArg, Node
from ren.ir.op import Op
from ren.poly import Poly, _buffer_node, realize, stored

__all__ = [
    "CacheInfo",
    "CapturedPlan",
    "JitFunction",
    "PlanRunner",
    "capturing",
    "clear_jit",
    "jit",
]

P = ParamSpec("P")
R = TypeVar("R")

_ALL: weakref.WeakSet[JitFunction[..., Any]] = weakref.WeakSet()
_ALL_LOCK = threading.Lock()

#: The function whose capture is in progress in this thread (or asyncio task), else ``None``.
CAPTURING: ContextVar[JitFunction[..., Any] | None] = ContextVar("ren_jit_capturing", default=None)


def capturing() -> JitFunction[..., Any] | None:
    """The jitted function being captured in the current thread, or ``None``.

    A capture in another thread does not count: each thread captures and computes on its own.
    """
    return CAPTURING.get()


class CacheInfo(NamedTuple):
    """Like ``functools.lru_cache``'s: replays, captures, the plan limit, plans held."""

    hits: int
    misses: int
    maxsize: int
    currsize: int


# ---------------------------------------------------------------------------------------------
# finding Poly values in arguments and results


_SCALARS = frozenset({int, float, complex, bool, str, bytes, type(None)})


def _walk(obj: Any, path: str, polys: list[tuple[str, Poly]], leaves: list[tuple] | None) -> None:
    """Collect ``(path, Poly)`` in a fixed order, and a key part for every other leaf.

    The key part is the leaf itself: the key keeps it alive, so an ``id`` is never reused while a
    plan holds it. A class that sets ``__ren_jit_leaf__ = True`` (a hashable value that holds no
    ``Poly``, such as ``RingSpec`` or ``ckks.Params``) is one leaf even when it is a dataclass.
    """
    if isinstance(obj, Poly):
        polys.append((path, obj))
    elif type(obj) in _SCALARS:  # the common leaves, hashable by construction
        if leaves is not None:
            leaves.append((path, type(obj).__qualname__, obj))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _walk(v, f"{path}[{k!r}]", polys, leaves)
    elif isinstance(obj, list | tuple):
        for i, v in enumerate(obj):
            _walk(v, f"{path}[{i}]", polys, leaves)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        if getattr(obj, "__ren_jit_leaf__", False):
            if leaves is not None:
                leaves.append((path, type(obj).__qualname__, obj))
            return
        for f in dataclasses.fields(obj):
            _walk(getattr(obj, f.name), f"{path}.{f.name}", polys, leaves)
    elif leaves is not None:
        try:
            hash(obj)
        except TypeError:
            raise JitError(
                f"argument {path} is a {type(obj).__name__}, which cannot be part of a jit cache "
                "key (it is not hashable, and its contents may change between calls); pass an "
                "int, a float, a tuple or a Poly instead"
            ) from None
        leaves.append((path, type(obj).__qualname__, obj))


def _rebuild(obj: Any, swap: dict[int, Poly]) -> Any:
    """``obj`` with the polys whose ``id`` is in ``swap`` replaced (containers copied as needed)."""
    if isinstance(obj, Poly):
        return swap.get(id(obj), obj)
    if isinstance(obj, dict):
        return type(obj)({k: _rebuild(v, swap) for k, v in obj.items()})
    if isinstance(obj, list):
        return [_rebuild(v, swap) for v in obj]
    if isinstance(obj, tuple):
        items = [_rebuild(v, swap) for v in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        new = copy.copy(obj)
        for f in dataclasses.fields(obj):
            object.__setattr__(new, f.name, _rebuild(getattr(obj, f.name), swap))
        return new
    return obj


def _spec(path: str, p: Poly) -> tuple[Any, ...]:
    if is_const(p.node):
        value = p.node.src[0].arg.value if p.node.op is Op.AS_RING else p.node.arg.value
        return (path, "const", p.ring, value, p.device, p.domain)
    buf, view = _storage_of(p)
    return (path, "buffer", p.ring, buf.size, buf.dtype, p.device, p.domain, view)


def _storage_of(p: Poly) -> tuple[Buffer, tuple[int, int] | None]:
    """Where a realized value is stored: its buffer, and ``(offset, size)`` for a limb view.

    Raises:
        JitError: when ``p`` is not a stored value (a constant, or a value not realized).
    """
    where = stored(p.node)
    if where is None:
        raise JitError(f"a Poly in {p.ring} was expected to be stored in a buffer, and is not")
    return where


# ---------------------------------------------------------------------------------------------
# the captured plan


class PlanRunner(Protocol):
    """A backend's graph runner (``graph_runner(units, bindings)``): one call replays a plan."""

    def run(self, inputs: list[Buffer | None]) -> None:
        """One replay with ``inputs`` (by input position; ``None`` for a constant) bound."""


@dataclasses.dataclass(eq=False)
class CapturedPlan:
    """What one capture produced, and what a replay needs.

    ``units`` run at each replay (their input slots hold ``None`` until bound); ``inputs`` says, per
    input position, whether it is a buffer (``False``: a constant, part of the key);
    ``bindings`` lists ``(unit, slot, input)`` places to swap;
    ``written`` holds the ids of every root buffer the plan writes (an input that is one of them
    is copied first); ``passthrough`` lists ``(source, output buffer)`` for outputs no kernel
    computes, the source being ``(input position, (offset, size))`` (a window of an input) or a
    ``Poly`` stored before the call; ``result`` is the output structure every call returns.
    ``external`` lists ``(buffer, array, what)`` for every stored value the plan reads that it
    neither writes nor is given (a key, a value the function closes over): a replay checks each
    still holds the array it held at capture, and names ``what`` if not.

    The plan's buffers belong to the thread that captured it. Another thread replays a copy
    (:meth:`for_this_thread`) with buffers of its own.
    """

    key: tuple
    units: list[ExecUnit]
    inputs: list[bool]
    paths: list[str]
    bindings: list[tuple[int, int, int]]
    written: set[int]
    passthrough: list[tuple[tuple[int, tuple[int, int]] | Poly, Buffer]]
    result: Any
    pruned: int = 0
    runner: PlanRunner | None = None
    capture_s: float = 0.0
    staging: dict[int, Buffer] = dataclasses.field(default_factory=dict)
    replays: int = 0
    external: list[tuple[Buffer, Any, str]] = dataclasses.field(default_factory=list)
    owned: list[tuple[Buffer, Any]] = dataclasses.field(default_factory=list)
    _local: Any = dataclasses.field(default_factory=threading.local, repr=False)
    _lock: Any = dataclasses.field(default_factory=threading.Lock, repr=False)

    def for_this_thread(self) -> CapturedPlan:
        """The plan to replay in the current thread: this one, or this thread's own copy.

        The copy has the same units and kernels, reading the same stored values, but writes a
        new arena, new output buffers and new staging buffers, and returns its own result
        structure; it is made at the thread's first replay and dies with the thread.
        """
        mine = getattr(self._local, "plan", None)
        if mine is None:
            mine = self._local.plan = _copy_for_thread(self)
        return mine

    def refresh_owned(self) -> None:
        """Give back storage to any buffer of the plan's own that was freed since its last call.

        The plan writes its outputs (and arena) in full at every replay, so an output the caller
        freed (``Buffer.deallocate``) is allocated again, and the graph runner, which holds the
        addresses, is made again.
        """
        for buf, array in self.owned:
            if buf._array is not array:
                break
        else:
            return  # nothing was freed: the common case, one identity test per buffer
        stale = {id(buf) for buf, array in self.owned if buf._array is not array}
        for u in self.units:
            for b in u.bufs:
                if b is not None and (id(b.root) in stale) and b.base is not None:
                    b.array = None  # a view of a root allocated again: take the new window
        for buf, _ in self.owned:
            buf.ensure_allocated()
        for u in self.units:
            for b in u.bufs:
                if b is not None:
                    b.ensure_allocated()
        self.owned = _owned(self)
        if self.runner is not None:
            self.runner = _graph_runner(self)

    def check_external(self, fn: JitFunction) -> None:
        """Raise ``JitError`` naming a stored value the plan reads that was freed since capture."""
        for buf, array, what in self.external:
            if buf._array is not array:
                name = fn.name
                raise JitError(
                    f"jitted function {name}: the plan reads {what}, whose buffer was freed "
                    "(Buffer.deallocate) since the capture; keep the values a jitted function "
                    f"reads alive, or call {name}.cache_clear() to capture again"
                )

    @functools.cached_property
    def slots_by_unit(self) -> dict[int, list[tuple[int, int]]]:
        """``bindings`` grouped by unit: unit index -> ``[(slot, input position), ...]``."""
        by_unit: dict[int, list[tuple[int, int]]] = {}
        for i, j, k in self.bindings:
            by_unit.setdefault(i, []).append((j, k))
        return by_unit

    @property
    def runner_kind(self) -> str:
        """``"graph"`` when a backend graph runner replays the plan, else ``"units"``."""
        return "graph" if self.runner is not None else "units"

    def __repr__(self) -> str:
        return (
            f"<CapturedPlan {len(self.units)} units ({self.pruned} pruned), "
            f"{sum(self.inputs)} inputs, runner={self.runner_kind}>"
        )


def _replan(units: list[ExecUnit], keep: set[int]) -> list[ExecUnit]:
    """Place every temporary the units write (not in ``keep``) in one arena per device.

    Each temporary is placed by its lifetime over the whole list.

    Returns:
        The units bound to the new views.
    """
    if settings.NO_PLAN.get():
        return units
    life = _lifetimes(units)
    writers: dict[int, int] = {}
    for i, u in enumerate(units):
        writers.setdefault(id(u.bufs[0]), i)
    temps: dict[str, list[tuple[Buffer, int, int]]] = {}
    for key, (buf, first, last) in life.items():
        if key in keep or writers.get(key) != first or buf.dtype == "u8":
            continue
        temps.setdefault(buf.device, []).append((buf, first, last))
    views: dict[int, Buffer] = {}
    for device in sorted(temps):
        _, arena_views = _plan_device(device, temps[device], len(units))
        views.update(arena_views)
    out = [_rebound(u, views) for u in units]
    for u in out:
        for b in u.bufs:
            b.ensure_allocated()
    return out


def _copy_for_thread(plan: CapturedPlan) -> CapturedPlan:
    """``plan`` with new buffers for everything it writes: a replay of its own for a thread.

    Every root buffer a unit writes (the arena, the outputs) and every passthrough output gets a
    new buffer of the same size; arena views are made again at the same offsets. Inputs, stored
    values and pruned results are shared (the plan only reads them).
    """
    roots: dict[int, Buffer] = {}
    for u in plan.units:
        root = u.bufs[0].root
        roots.setdefault(id(root), root)
    for _, dst in plan.passthrough:
        roots.setdefault(id(dst), dst)
    swap: dict[int, Buffer] = {
        k: Buffer(r.device, r.dtype, r.size).ensure_allocated() for k, r in roots.items()
    }

    def moved(buf: Buffer) -> Buffer:
        new = swap.get(id(buf))
        if new is None and buf.base is not None and id(buf.base) in swap:
            new = swap[id(buf)] = Buffer(
                buf.device, buf.dtype, buf.size, base=swap[id(buf.base)], offset=buf.offset
            ).ensure_allocated()
        return buf if new is None else new

    units = [
        _rebound(u, {id(b): moved(b) for b in u.bufs if b is not None and moved(b) is not b})
        for u in plan.units
    ]
    passthrough = [(src, moved(dst)) for src, dst in plan.passthrough]
    outs: list[tuple[str, Poly]] = []
    _walk(plan.result, "result", outs, None)
    polys: dict[int, Poly] = {}
    for _, p in outs:
        if id(p) not in polys:
            polys[id(p)] = Poly._wrap(_with_storage(p.node, moved))
    copy_ = dataclasses.replace(
        plan,
        units=units,
        passthrough=passthrough,
        result=_rebuild(plan.result, polys),
        written={id(u.bufs[0].root) for u in units} | {id(dst) for _, dst in passthrough},
        staging={},
        runner=None,
        replays=0,
        _local=threading.local(),
        _lock=threading.Lock(),
    )
    copy_.owned = _owned(copy_)
    copy_.runner = _graph_runner(copy_)
    return copy_


def _owned(plan: CapturedPlan) -> list[tuple[Buffer, Any]]:
    """The root buffers the plan writes (outputs, arena, passthrough outputs), with their arrays."""
    roots = {id(u.bufs[0].root): u.bufs[0].root for u in plan.units}
    roots.update({id(dst): dst for _, dst in plan.passthrough})
    return [(r, r._array) for r in roots.values()]


def _with_storage(node: Node, moved: Callable[[Buffer], Buffer]) -> Node:
    """A stored value's node (``AS_RING`` over a buffer or a view of one) on moved buffers."""
    store = node.src[0]
    if store.op is Op.BUFFER:
        new = Node(Op.BUFFER, store.dtype, (), BufferArg(moved(store.arg.buffer)))
    else:  # BUFFER_VIEW of a BUFFER
        base = store.src[0]
        buf = Node(Op.BUFFER, base.dtype, (), BufferArg(moved(base.arg.buffer)))
        new = store.replace(src=(buf,))
    return node.replace(src=(new,))


def _stored_names(fn: Callable[..., Any]) -> dict[int, str]:
    """Buffer id -> how the function reaches that stored value (a closure cell, a global).

    For error messages only: a plan that reads a freed value names it this way when it can.
    """
    names: dict[int, str] = {}
    code = getattr(fn, "__code__", None)
    if code is None:
        return names
    found: list[tuple[str, Any]] = []
    for var, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or (), strict=False):
        try:
            found.append((f"the value {var} the function closes over", cell.cell_contents))
        except ValueError:  # an empty cell
            continue
    glob = getattr(fn, "__globals__", {})
    found += [(f"the global {g}", glob[g]) for g in code.co_names if g in glob]
    for what, value in found:
        polys: list[tuple[str, Poly]] = []
        _walk(value, "", polys, None)
        for path, p in polys:
            where = stored(p.node)
            if where is not None:
                names.setdefault(id(where[0]), f"{what}{' at ' + path if path else ''}")
    return names


# ---------------------------------------------------------------------------------------------
# the jitted function


class JitFunction(Generic[P, R]):
    """A function wrapped by :func:`jit`; call it like the function.

    For a type checker it has the function's parameters and return type (``JitFunction[P, R]``
    wraps a ``Callable[P, R]``).
    """

    def __init__(self, fn: Callable[P, R], prune: bool = False, max_plans: int = 8) -> None:
        if not callable(fn):
            raise TypeError(f"ren.jit wraps a function, got {type(fn).__name__}")
        if not isinstance(prune, bool):
            raise TypeError(f"prune must be True or False, got {prune!r}")
        if isinstance(max_plans, bool) or not isinstance(max_plans, int) or max_plans < 1:
            raise ValueError(f"max_plans must be an int >= 1, got {max_plans!r}")
        self.fn, self.prune, self.max_plans = fn, prune, max_plans
        self.plans: OrderedDict[tuple, CapturedPlan] = OrderedDict()
        self.hits = self.misses = 0
        self._lock = threading.Lock()  # the plans and the counts; never held while running
        self.last: CapturedPlan | None = None  # the plan of the latest call (for tools)
        try:
            self._signature: inspect.Signature | None = inspect.signature(fn)
        except (TypeError, ValueError):  # a builtin or other callable without one
            self._signature = None
        functools.update_wrapper(self, fn)
        with _ALL_LOCK:
            _ALL.add(self)

    @property
    def name(self) -> str:
        """The wrapped function's qualified name, as errors and tools show it."""
        name = getattr(self.fn, "__qualname__", None)
        return name if isinstance(name, str) else repr(self.fn)

    def cache_info(self) -> CacheInfo:
        """``(hits, misses, maxsize, currsize)``: replays, captures, ``max_plans``, plans held."""
        with self._lock:
            return CacheInfo(self.hits, self.misses, self.max_plans, len(self.plans))

    def cache_clear(self) -> None:
        """Drop every captured plan and reset the counts.

        A replay already running in another thread finishes on the plan it had.
        """
        with self._lock:
            self.plans.clear()
            self.hits = self.misses = 0
            self.last = None

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> JitFunction[P, R]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> Callable[..., R]: ...

    def __get__(
        self, instance: object | None, owner: type | None = None
    ) -> JitFunction[P, R] | Callable[..., R]:
        if instance is None:
            return self
        method: Callable[..., R] = self  # a method: the instance is the first argument
        return functools.partial(method, instance)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Call the function: replay the plan captured for these inputs, or capture a new one.

        The key of a plan is where each ``Poly`` input sits in the arguments (in lists, tuples,
        dicts and dataclasses) with its ring, device, domain and storage (a constant's value),
        which inputs share a buffer, and every other leaf of the arguments. A new key runs the
        function and captures its plan (the least recently used of ``max_plans`` plans goes); a
        known key replays the plan on the new inputs.

        Returns:
            What the function returns, with every ``Poly`` in it realized.

        Safe to call from several threads at once: each thread replays into buffers of its own
        and gets its own result structure (the same one at each of its calls).

        Raises:
            JitError: if the call is nested in another capture in this thread, no argument (or,
                at capture, no part of the result) holds a ``Poly``, or an input's buffer (or a
                stored value the plan reads) was freed.
        """
        outer = CAPTURING.get()
        if outer is not None:
            raise JitError(
                f"jitted function {self.name} was called while {outer.name} is being "
                "captured (nested capture); keep one jit boundary around the whole computation, "
                "or call a plain (not jitted) helper inside it"
            )
        polys: list[tuple[str, Poly]] = []
        leaves: list[tuple] = []
        for name, value in self._named(args, kwargs):
            _walk(value, name, polys, leaves)
        if not polys:
            raise JitError(
                f"jitted function {self.name} got no Poly in its arguments (looked in lists, "
                "tuples, dicts and dataclasses); a jit boundary needs at least one Poly input"
            )
        for path, p in polys:
            root = stored(p.node)
            if root is not None and not root[0].allocated:
                raise JitError(
                    f"jitted function {self.name}: input {path} holds no data (its buffer was "
                    "freed)"
                )
        realize(*(p for _, p in polys if not is_const(p.node)))
        # which inputs share a buffer (x passed twice): part of the key, as the plan reads one
        first: dict[int, int] = {}
        alias = tuple(
            None if is_const(p.node) else first.setdefault(id(_storage_of(p)[0]), i)
            for i, (_, p) in enumerate(polys)
        )
        key = (tuple(_spec(path, p) for path, p in polys), alias, tuple(leaves))
        with self._lock:
            plan = self.plans.get(key)
            if plan is not None:
                self.plans.move_to_end(key)
                self.hits += 1
                self.last = plan
            else:
                self.misses += 1
        if plan is not None:
            start = time.perf_counter()
            result = self._replay(plan, polys)
            notify("on_jit_replay", self, plan, time.perf_counter() - start)
            return result
        notify("on_jit_start", self)
        start = time.perf_counter()
        plan = self._capture(key, lambda: self.fn(*args, **kwargs), polys)
        with self._lock:
            kept = self.plans.get(key)
            if kept is None:
                self.plans[key] = kept = plan
                if len(self.plans) > self.max_plans:
                    self.plans.popitem(last=False)
            else:  # another thread captured this key meanwhile: keep its plan, and replay this
                # thread's calls into the buffers of its own capture (the same outputs each call)
                self.plans.move_to_end(key)
                kept._local.plan = plan
            self.last = kept
        notify("on_jit_capture", self, plan, time.perf_counter() - start)
        return plan.result

    def _named(self, args: tuple, kwargs: dict) -> list[tuple[str, Any]]:
        """The arguments by parameter name (``x``, ``ys[1]``), or ``args[i]`` where unbound."""
        try:
            if self._signature is None:
                raise TypeError
            bound = self._signature.bind(*args, **kwargs)
        except TypeError:  # no signature, or a call the function will reject
            return [(f"args[{i}]", a) for i, a in enumerate(args)] + list(kwargs.items())
        return list(bound.arguments.items())

    # --- capture ----------------------------------------------------------------------------
    def _capture(
        self, key: tuple[Any, ...], call: Callable[[], R], polys: list[tuple[str, Poly]]
    ) -> CapturedPlan:
        start = time.perf_counter()
        recorded: list[ExecUnit] = []
        capturing_token = CAPTURING.set(self)
        recorder_token = CAPTURE_RECORDER.set(recorded.append)
        try:
            result = call()
            outs: list[tuple[str, Poly]] = []
            _walk(result, "result", outs, None)
            if not outs:
                raise JitError(
                    f"jitted function {self.name} returned no Poly (got "
                    f"{type(result).__name__}); its result must hold at least one Poly"
                )
            realize(*(p for _, p in outs))
        finally:
            CAPTURE_RECORDER.reset(recorder_token)
            CAPTURING.reset(capturing_token)
        inputs = [None if is_const(p.node) else _storage_of(p)[0] for _, p in polys]
        input_ids: dict[int, int] = {}
        for i, b in enumerate(inputs):
            if b is not None:
                input_ids.setdefault(id(b), i)  # inputs sharing a buffer: the first position
        written = {id(u.bufs[0]) for u in recorded}

        # outputs no kernel of the capture wrote (an input returned as it is, a value computed
        # before the call): each gets a buffer of its own, filled by a copy at every replay
        passthrough, swap = [], {}
        for _, p in outs:
            root = stored(p.node)
            if root is None:
                raise JitError(f"jitted function {self.name}: an output could not be realized")
            buf = root[0]
            if id(buf) in written or id(p) in swap:
                continue
            # a window of an input buffer (the input itself, or a limb view of it), or a value
            # that was stored before the call and does not change
            src: tuple[int, tuple[int, int]] | Poly = p
            if id(buf) in input_ids:
                src = (input_ids[id(buf)], root[1] or (0, buf.size))
            words = np.array(p._words(), copy=True)
            fresh = Poly._wrap(_buffer_node(words, p.ring, p.domain, p.device))
            swap[id(p)] = fresh
            passthrough.append((src, _storage_of(fresh)[0]))
        if swap:
            result = _rebuild(result, swap)
            outs = []
            _walk(result, "result", outs, None)
        out_bufs = {id(_storage_of(p)[0]) for _, p in outs}

        # which units read an input (directly or through another such unit)
        dependent, units, pruned = set(input_ids), [], []
        for u in recorded:
            if any(id(b) in dependent for b in u.bufs[1:]):
                dependent.add(id(u.bufs[0]))
                units.append(u)
            elif self.prune:
                pruned.append(u)
            else:
                units.append(u)
        if pruned:
            # their results must outlive every replay: give arena temporaries buffers of their
            # own and run the pruned units once more, into those
            own: dict[int, Buffer] = {}
            for u in pruned:
                out = u.bufs[0]
                if out.base is not None:
                    own[id(out)] = Buffer(out.device, out.dtype, out.size)
            units = [_rebound(u, own) for u in units]
            for u in (_rebound(u, own) for u in pruned):
                for b in u.bufs:
                    b.ensure_allocated()
                u()
            keep = out_bufs | {id(b) for b in own.values()}
        else:
            keep = set(out_bufs)
        units = _replan(units, keep | set(input_ids))

        bindings = [
            (i, j, input_ids[id(b)])
            for i, u in enumerate(units)
            for j, b in enumerate(u.bufs)
            if id(b) in input_ids
        ]
        # the plan keeps no input buffer of the capture: their slots are filled at each replay
        units = [_rebound(u, dict.fromkeys(input_ids)) for u in units]
        written_roots = {id(u.bufs[0].root) for u in units} | {id(dst) for _, dst in passthrough}
        plan = CapturedPlan(
            key=key,
            units=units,
            inputs=[b is not None for b in inputs],
            paths=[path for path, _ in polys],
            bindings=bindings,
            written=written_roots,
            passthrough=passthrough,
            result=result,
            pruned=len(pruned),
        )
        plan.external = _external_reads(plan, _stored_names(self.fn))
        plan.owned = _owned(plan)
        plan._local.plan = plan  # the capturing thread replays into the capture's own buffers
        plan.runner = _graph_runner(plan)
        plan.capture_s = time.perf_counter() - start
        if debug_level() >= 1:
            print(
                f"ren.jit: captured {self.name}: {len(units)} units, {len(pruned)} pruned, "
                f"runner={plan.runner_kind}, {plan.capture_s * 1e3:.1f} ms",
                file=sys.stderr,
            )
        return plan

    # --- replay -----------------------------------------------------------------------------
    def _replay(self, shared: CapturedPlan, polys: list[tuple[str, Poly]]) -> Any:
        shared.check_external(self)
        plan = shared.for_this_thread()
        plan.refresh_owned()
        new: list[Buffer | None] = []
        for i, (_, p) in enumerate(polys):
            if not plan.inputs[i]:
                new.append(None)
                continue
            buf = _storage_of(p)[0]  # allocated: __call__ checked
            if id(buf) in plan.written:  # an output fed back: read a copy, not the live buffer
                stage = plan.staging.get(i)
                if stage is None:
                    stage = plan.staging[i] = Buffer(buf.device, buf.dtype, buf.size)
                    stage.ensure_allocated()
                np.copyto(stage.need_array(), buf.need_array())
                buf = stage
            new.append(buf)
        try:
            validate = settings.VALIDATE.get()
            if plan.runner is not None and not validate:
                plan.runner.run(new)
            else:
                _run_units(plan, new, validate)
            for src, dst in plan.passthrough:
                if isinstance(src, Poly):
                    words = src._words().reshape(-1)
                else:
                    (k, (offset, size)) = src
                    words = _bound(new, k).need_array()[offset : offset + size]
                np.copyto(dst.need_array(), words)
        finally:
            new.clear()  # bound inputs are not kept
        with shared._lock:
            shared.replays += 1
        return plan.result


def _external_reads(plan: CapturedPlan, names: dict[int, str]) -> list[tuple[Buffer, Any, str]]:
    """Every root buffer the plan reads but neither writes nor binds, with its array and name."""
    out: dict[int, tuple[Buffer, Any, str]] = {}
    bound = {(i, j) for i, j, _ in plan.bindings}
    reads = [
        b.root
        for i, u in enumerate(plan.units)
        for j, b in enumerate(u.bufs)
        if j > 0 and b is not None and (i, j) not in bound
    ]
    reads += [_storage_of(src)[0].root for src, _ in plan.passthrough if isinstance(src, Poly)]
    for root in reads:
        if id(root) in plan.written or id(root) in out:
            continue
        what = names.get(
            id(root),
            f"buffer #{root.id} ({root.size} {root.dtype} words on {root.device}, a value stored "
            "before the capture: a key, a constant table or a value the function closes over)",
        )
        out[id(root)] = (root, root._array, what)
    return list(out.values())


def _rebound(u: ExecUnit, swap: Mapping[int, Buffer | None]) -> ExecUnit:
    """``u`` with the buffers whose ``id`` is in ``swap`` replaced (``None``: an input slot)."""
    kernel = _rebind(u.kernel, swap)
    return u if kernel is u.kernel else ExecUnit(u.name, u.device, kernel.bufs, u.fn, kernel)


def _run_units(plan: CapturedPlan, new: list[Buffer | None], validate: bool) -> None:
    """Replay the plan unit by unit, with the new input buffers in their slots."""
    by_unit = plan.slots_by_unit
    debug = debug_level()
    for i, unit in enumerate(plan.units):
        bufs = unit.bufs
        if i in by_unit:
            items = list(bufs)
            for j, k in by_unit[i]:
                items[j] = _bound(new, k)
            bufs = tuple(items)
        start = time.perf_counter()
        unit.fn(bufs)
        if validate and unit.device != "python":
            validate_unit(ExecUnit(unit.name, unit.device, bufs, unit.fn, unit.kernel))
        if debug >= 2:
            ms = (time.perf_counter() - start) * 1e3
            print(f"  replay {unit.name:<33} {ms:8.3f} ms", file=sys.stderr)


def _bound(new: list[Buffer | None], k: int) -> Buffer:
    """The buffer bound to input ``k`` (a binding is always a buffer input, never a constant)."""
    buf = new[k]
    if buf is None:
        raise JitError(f"input {k} of a replay is a constant, and the plan reads it as a buffer")
    return buf


def _graph_runner(plan: CapturedPlan) -> PlanRunner | None:
    """The backend's graph runner for the plan, when every unit is on one device that has one."""
    if not settings.JIT_GRAPH.get() or not plan.units:
        return None
    devices = {u.device for u in plan.units}
    if len(devices) != 1:
        return None
    make = getattr(backend(devices.pop()), "graph_runner", None)
    return make(plan.units, plan.bindings) if make is not None else None


# ---------------------------------------------------------------------------------------------
# the public entry points


@overload
def jit(fn: Callable[P, R], *, prune: bool = False, max_plans: int = 8) -> JitFunction[P, R]: ...


@overload
def jit(
    fn: None = None, *, prune: bool = False, max_plans: int = 8
) -> Callable[[Callable[P, R]], JitFunction[P, R]]: ...


def jit(
    fn: Callable[P, R] | None = None, *, prune: bool = False, max_plans: int = 8
) -> JitFunction[P, R] | Callable[[Callable[P, R]], JitFunction[P, R]]:
    """Capture a polynomial function once per argument spec and replay it.

    Use as ``@ren.jit`` or ``@ren.jit(prune=True, max_plans=8)``.

    Args:
        fn: the function; its arguments must hold at least one ``Poly`` (directly or in lists,
            tuples, dicts, dataclasses) and its result at least one ``Poly``.
        prune: run the work that reads no input once, at capture, and keep its results.
        max_plans: how many argument specs keep a captured plan (least recently used dropped).

    Returns:
        A :class:`JitFunction` (or a decorator making one, when ``fn`` is not given), typed with
        the function's parameters and return type.
    """
    if fn is None:

        def decorate(f: Callable[P, R]) -> JitFunction[P, R]:
            return JitFunction(f, prune=prune, max_plans=max_plans)

        return decorate
    return JitFunction(fn, prune=prune, max_plans=max_plans)


def clear_jit() -> None:
    """Drop the captured plans of every jitted function (the next calls capture again)."""
    with _ALL_LOCK:
        functions = list(_ALL)
    for f in functions:
        f.cache_clear()
