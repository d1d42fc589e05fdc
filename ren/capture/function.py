"""``ren.jit``: capture the exec units of a polynomial function once, replay them many times.

A jitted function is called with arguments that hold ``Poly`` values (directly, or in lists,
tuples, dicts and dataclasses). On each call:

1. the ``Poly`` inputs are found and realized (the replay boundary is concrete buffers);
2. the key: per input its path and ``("buffer", ring, size, dtype, device, domain, view)``, or
   ``("const", ring, "any" or the value, device, domain)`` (``ren.capture.constants``), and every
   other hashable argument (an int rotation amount changes the program: it is in the key);
3. on a miss, the function is *captured*: called once, its outputs realized, every exec unit any
   realization ran meanwhile recorded (``prune=True``: those that read no input run once and are
   dropped); the temporaries planned again into one arena per device (the plan keeps that
   ``MemoryPlan``), the places each input is read noted, and a graph runner asked for;
4. on a hit, the plan is replayed on the new inputs (``ren.capture.plan``): the *same* output
   structure as at capture is returned, its buffers holding the new values.

Threads: a capture records only its own thread's realizations (a context variable), each thread
replays into buffers of its own, and the table of plans is locked.
"""

from __future__ import annotations

import functools
import inspect
import sys
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Generic, NamedTuple, ParamSpec, TypeVar, cast, overload

import numpy as np

from ren.capture.arguments import Leaf, rebuild, spec, storage_of, walk
from ren.capture.constants import as_inputs, const_node, own_constants, rebindable
from ren.capture.plan import CapturedPlan, PlanRunner, rebound, replan, run_pruned
from ren.capture.reads import stored_names
from ren.capture.saved import Saving
from ren.engine import debug_level
from ren.engine.observe import notify
from ren.engine.realize import CAPTURE_RECORDER, ExecUnit
from ren.errors import JitError
from ren.ir.facts import is_const
from ren.poly import Poly, buffer_node, realize
from ren.repoint import stored

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
# the jitted function


class JitFunction(Saving, Generic[P, R]):
    """A function wrapped by :func:`jit`, called like the function, typed like it.

    ``JitFunction[P, R]`` wraps a ``Callable[P, R]``.
    """

    def __init__(self, fn: Callable[P, R], prune: bool = False, max_plans: int = 8) -> None:
        if not callable(fn):
            raise TypeError(f"ren.jit wraps a function, got {type(fn).__name__}")
        if not isinstance(prune, bool):
            raise TypeError(f"prune must be True or False, got {prune!r}")
        if isinstance(max_plans, bool) or not isinstance(max_plans, int) or max_plans < 1:
            raise ValueError(f"max_plans must be an int >= 1, got {max_plans!r}")
        self.fn, self.prune, self.max_plans = fn, prune, max_plans
        self.plans: OrderedDict[tuple[object, ...], CapturedPlan] = OrderedDict()
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

        The key: where each ``Poly`` input sits in the arguments (lists, tuples, dicts,
        dataclasses) with its ring, device, domain and storage, which inputs share a buffer, and
        every other leaf. A new key captures (the least recently used of ``max_plans`` plans
        goes); a known key replays, with the values of ``Poly.const`` inputs the plan rebinds.

        Returns:
            What the function returns, with every ``Poly`` in it realized. Safe from several
            threads at once: each gets its own result structure (the same at each of its calls).

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
        leaves: list[Leaf] = []
        for name, value in self._named(args, kwargs):
            walk(value, name, polys, leaves)
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
            None if is_const(p.node) else first.setdefault(id(storage_of(p)[0]), i)
            for i, (_, p) in enumerate(polys)
        )
        key: tuple[object, ...] = (tuple(spec(path, p) for path, p in polys), alias, tuple(leaves))
        values = None  # a plan that cannot take other values of its constants: keyed by them too
        with self._lock:
            plan = self.plans.get(key)
            if plan is None:
                values = tuple(
                    None if (c := const_node(p)) is None else c.arg.value for _, p in polys
                )
                if any(v is not None for v in values):
                    plan = self.plans.get((key, values))
                    key = (key, values) if plan is not None else key
            if plan is not None:
                self.plans.move_to_end(key)
                self.hits += 1
                self.last = plan
            else:
                self.misses += 1
        if plan is not None:
            start = time.perf_counter()
            result = plan.replay(self, polys)
            notify("on_jit_replay", self, plan, time.perf_counter() - start)
            return cast(R, result)  # the plan's result structure, over this call's outputs
        notify("on_jit_start", self)
        start = time.perf_counter()
        # a constant argument is an input: a node of its own, never a constant of the body
        called, named, polys = as_inputs(args, kwargs, polys)
        plan = self._capture(key, lambda: self.fn(*called, **named), polys)
        if plan.fixed_consts:
            key = (key, values)  # computed above: this call missed
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
        return cast(R, plan.result)  # what the function returned, its polys realized

    def _named(
        self, args: tuple[object, ...], kwargs: dict[str, object]
    ) -> list[tuple[str, object]]:
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
        self, key: tuple[object, ...], call: Callable[[], R], polys: list[tuple[str, Poly]]
    ) -> CapturedPlan:
        start = time.perf_counter()
        # the inputs as called: an input the function returns is repointed by the realization
        called = [p.node for _, p in polys]
        inputs = [None if is_const(p.node) else storage_of(p)[0] for _, p in polys]
        recorded: list[ExecUnit] = []
        capturing_token = CAPTURING.set(self)
        recorder_token = CAPTURE_RECORDER.set(recorded.append)
        try:
            result = call()
            outs: list[tuple[str, Poly]] = []
            walk(result, "result", outs, None)
            if not outs:
                raise JitError(
                    f"jitted function {self.name} returned no Poly (got "
                    f"{type(result).__name__}); its result must hold at least one Poly"
                )
            realize(*(p for _, p in outs))
        finally:
            CAPTURE_RECORDER.reset(recorder_token)
            CAPTURING.reset(capturing_token)
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
            fresh = Poly._wrap(buffer_node(words, p.ring, p.domain, p.device))
            swap[id(p)] = fresh
            passthrough.append((src, storage_of(fresh)[0]))
        if swap:
            result = rebuild(result, swap)
            outs = []
            walk(result, "result", outs, None)
        out_bufs = {id(storage_of(p)[0]) for _, p in outs}

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
        units, keep = run_pruned(units, pruned, out_bufs)
        units, memory = replan(units, keep | set(input_ids))

        bindings = [
            (i, j, input_ids[id(b)])
            for i, u in enumerate(units)
            for j, b in enumerate(u.bufs)
            if id(b) in input_ids
        ]
        # the plan keeps no input buffer of the capture: their slots are filled at each replay
        units = [rebound(u, dict.fromkeys(input_ids)) for u in units]
        const_rows, fixed = rebindable(units, called)
        units = own_constants(units, const_rows)
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
            memory=memory,
            const_rows=const_rows,
            fixed_consts=fixed,
        )
        plan.seal(stored_names(self.fn))
        plan.capture_s = time.perf_counter() - start
        if debug_level() >= 1:
            print(
                f"ren.jit: captured {self.name}: {len(units)} units, {len(pruned)} pruned, "
                f"runner={plan.runner_kind}, {plan.capture_s * 1e3:.1f} ms",
                file=sys.stderr,
            )
        return plan


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
    """Capture a function once per argument spec, replay it: ``@ren.jit``, ``@ren.jit(prune=True)``.

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
