"""Realization: scheduled kernels -> exec units -> run, and ``realize`` of a set of outputs.

``make_exec_units`` lowers each ``ScheduledKernel`` for its device's backend (the module
``ren.backends.<device>``, which provides ``compile(ast, info) -> callable(bufs)``).
``run_exec_units`` consumes the list as it runs, so each unit (and the buffers only it held) is
released after it ran; buffers are allocated just before the first unit that uses them. A
``recorder`` sees every unit (the JIT records a plan this way).
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol, cast

import numpy as np

from ren import settings
from ren.device import HOST_DEVICES, Buffer, registered_backend
from ren.engine import debug_level, memory, schedule_cache
from ren.engine.hits import run_as_graph
from ren.engine.memory import MemoryPlan
from ren.engine.observe import active, notify
from ren.engine.schedule import ScheduledKernel
from ren.errors import RenError
from ren.ir.kernels import const_words
from ren.ir.node import KernelInfo, Node
from ren.ir.op import DType, Op
from ren.passes import ScheduleContext
from ren.ring import RingSpec

__all__ = [
    "Backend",
    "ExecUnit",
    "Realization",
    "backend",
    "capture_recorder",
    "make_exec_units",
    "prepare",
    "prepare_all",
    "realize_nodes",
    "run_exec_units",
    "uncaptured",
    "unit_buffers",
]


@dataclass
class ExecUnit:
    """One runnable step: a compiled kernel bound to its buffers (slot order; slot 0 is written)."""

    name: str
    device: str
    bufs: tuple[Buffer, ...]
    fn: Callable[[tuple[Buffer, ...]], None]
    kernel: ScheduledKernel

    def __call__(self) -> None:
        """Run the kernel on its buffers."""
        self.fn(self.bufs)

    def __repr__(self) -> str:
        ids = ["input" if b is None else b.id for b in self.bufs]  # None: a jit input slot
        return f"<ExecUnit {self.name} {self.device} bufs={ids}>"


class Backend(Protocol):
    """What realization asks of a device's backend.

    A backend is a module of ``ren.backends``, or the object ``register_device`` was given.
    ``compile(ast, info)`` returns the runner of one kernel body (``STORE(SLOT 0, value)``):
    ``runner(bufs)`` runs it on a tuple of buffers, slot 0 written. Tools also use, when a backend
    has them, ``source(ast, info)`` (what it runs, as text) and ``graph_runner(units, bindings)``
    (a ``ren.jit`` plan as one call), and ``prepare(kernels)``, called with every ``(ast, info)``
    of a realization before the first ``compile``, to build them together.
    """

    def compile(self, ast: Node, info: KernelInfo) -> Callable[[tuple[Buffer, ...]], None]:
        """The runner of the kernel body ``ast``."""


#: What a backend makes of a kernel: called with the kernel's buffers (output first), it runs it.
Runner = Callable[[tuple[Buffer, ...]], None]

_backends: dict[str, Backend] = {}
_backends_lock = threading.Lock()

#: While ``ren.jit`` captures a function, every exec unit a realization runs *in the same thread
#: (or asyncio task)* goes to this recorder too. A context variable: realizations in other
#: threads are never recorded into a capture.
CAPTURE_RECORDER: ContextVar[Callable[[ExecUnit], None] | None] = ContextVar(
    "ren_capture_recorder", default=None
)


def capture_recorder() -> Callable[[ExecUnit], None] | None:
    """The recorder of the ``ren.jit`` capture in progress in this thread, or ``None``."""
    return CAPTURE_RECORDER.get()


@contextlib.contextmanager
def uncaptured() -> Iterator[None]:
    """Realizations inside this block are not recorded by a ``ren.jit`` capture in progress.

    For values made once and kept, such as CKKS keys made on first use inside a jitted function:
    they are computed now, and the captured plan reads them as stored values. It applies to the
    current thread only, as captures do.
    """
    token = CAPTURE_RECORDER.set(None)
    try:
        yield
    finally:
        CAPTURE_RECORDER.reset(token)


def backend(device: str) -> Backend:
    """The backend of ``device``: the one ``register_device`` gave, or ``ren.backends.<device>``."""
    registered = registered_backend(device)  # looked up each time: it can be replaced
    if registered is not None:
        return cast(Backend, registered)  # register_device checked its compile is callable
    module = _backends.get(device)
    if module is not None:
        return module
    with _backends_lock:
        if device not in _backends:
            try:
                _backends[device] = importlib.import_module(f"ren.backends.{device}")
            except ModuleNotFoundError as e:
                if e.name != f"ren.backends.{device}":
                    raise
                raise RenError(
                    f"device {device!r} has no backend in this version of Ren; realize on "
                    "'python' (Poly(..., device='python') or REN_DEVICE=python)"
                ) from None
        return _backends[device]


memory.backend_of = backend  # the memory planner asks a device's backend how soon to reuse


def unit_buffers(kernel: ScheduledKernel) -> tuple[Buffer, ...]:
    """The buffers of ``kernel``'s exec unit: its own, then its constants' words, if it has any.

    The constants argument is a small buffer on the kernel's device, made from ``kernel.consts``
    (``ren.ir.kernels.const_words``): the kernel body reads it as its last slot. Kernels only
    read it, so on the host devices one buffer serves every kernel with the same constants.
    """
    if not kernel.consts:
        return kernel.bufs
    return (*kernel.bufs, _constants(kernel.info.device, kernel.info.ring, kernel.consts))


_CONSTANTS: dict[tuple[str, RingSpec, tuple[int, ...]], Buffer] = {}
_CONSTANTS_LOCK = threading.Lock()


def _constants(device: str, ring: RingSpec, consts: tuple[int, ...]) -> Buffer:
    """The constants argument of a kernel (kept for ``python`` and ``cpu``: host memory)."""
    key = (device, ring, consts)
    buf = _CONSTANTS.get(key)
    if buf is None:
        words = const_words(ring, consts)
        buf = Buffer(device, ring.dtype, words.size, words)
        if device in HOST_DEVICES:
            with _CONSTANTS_LOCK:
                if len(_CONSTANTS) >= 4096:
                    _CONSTANTS.pop(next(iter(_CONSTANTS)))
                buf = _CONSTANTS.setdefault(key, buf)
    return buf


def prepare_all(kernels: list[tuple[Backend, Node, KernelInfo]]) -> None:
    """Let each backend that can build many kernels at once (``prepare``) build these first."""
    by_owner: dict[int, tuple[Backend, list[tuple[Node, KernelInfo]]]] = {}
    for owner, ast, info in kernels:
        by_owner.setdefault(id(owner), (owner, []))[1].append((ast, info))
    for owner, items in by_owner.values():
        prepare = getattr(owner, "prepare", None)
        if prepare is not None:
            prepare(items)


def make_exec_units(
    sched: list[ScheduledKernel], runners: list[tuple[Backend, Runner]] | None = None
) -> list[ExecUnit]:
    """Compile each scheduled kernel for its device and bind it to its buffers (and constants).

    ``runners`` are the compiled kernels of a schedule cache hit, with the backend each came from
    (a kernel whose device has another backend since is compiled again).
    """
    owners = [backend(k.info.device) for k in sched]
    fresh = [i for i, owner in enumerate(owners) if runners is None or runners[i][0] is not owner]
    prepare_all([(owners[i], sched[i].ast, sched[i].info) for i in fresh])
    units = []
    for i, k in enumerate(sched):
        owner = owners[i]
        if runners is not None and runners[i][0] is owner:
            fn = runners[i][1]
        else:
            fn = owner.compile(k.ast, k.info)
        units.append(ExecUnit(k.info.name, k.info.device, unit_buffers(k), fn, k))
    return units


#: The byte a freed arena region is filled with in poison mode (no valid residue is all ones).
POISON = 0xFF


def last_uses(units: list[ExecUnit]) -> dict[int, list[Buffer]]:
    """Unit index -> the arena views no later unit uses (what poison mode fills after it)."""
    seen: dict[int, tuple[Buffer, int]] = {}
    for i, unit in enumerate(units):
        for buf in unit.bufs:
            if buf.base is not None:
                seen[id(buf)] = (buf, i)
    out: dict[int, list[Buffer]] = {}
    for buf, i in seen.values():
        out.setdefault(i, []).append(buf)
    return out


def run_exec_units(
    units: list[ExecUnit],
    recorder: Callable[[ExecUnit], None] | None = None,
    poison: bool | None = None,
    last_use: dict[int, list[Buffer]] | None = None,
    first_step: int = 0,
) -> None:
    """Run ``units`` in order, consuming the list. Buffers are allocated just before first use.

    With ``poison`` (default: ``REN_POISON=1``) every arena view is filled with ``0xFF`` bytes
    right after the last unit that uses it, so a unit that read memory the planner had given to
    someone else would compute garbage, and the tests would see it. ``units`` may be a batch of a
    longer list: ``last_use`` (``last_uses`` of the whole list) and ``first_step`` (the batch's
    first index in it) then say when each view is done.
    """
    debug = debug_level()
    validate = settings.VALIDATE.get()
    if poison is None:
        poison = settings.POISON.get()
    if not poison:
        last_use = {}
    elif last_use is None:
        last_use = last_uses(units)
    step = first_step
    watched = active()
    while units:
        unit = units.pop(0)
        if recorder is not None:
            recorder(unit)
        for buf in unit.bufs:
            buf.ensure_allocated()
        start = time.perf_counter()
        unit()
        seconds = time.perf_counter() - start
        if validate and unit.device != "python":
            validate_unit(unit)
        if debug >= 2:
            print(f"  {unit.name:<40} {seconds * 1e3:8.3f} ms", file=sys.stderr)
        if watched:
            notify("on_unit", unit, seconds)
        for buf in last_use.get(step, ()):
            buf.need_array().view(np.uint8)[:] = POISON
        step += 1


def validate_unit(unit: ExecUnit) -> None:
    """Re-run ``unit``'s kernel on the python backend from the same inputs; compare every word.

    Raises:
        RenError: at the first differing word, naming the kernel and showing its source.
    """
    from ren.backends import python

    out = unit.bufs[0]
    ref = Buffer("python", out.dtype, out.size).ensure_allocated()
    python.interpret(unit.kernel.ast, (ref, *unit.bufs[1:]))
    got, want = out.need_array(), ref.need_array()
    bad = np.flatnonzero(got != want)
    if bad.size:
        i, n = int(bad[0]), unit.kernel.info.ring.n
        source = getattr(unit.fn, "source", "(no source: not a rendered kernel)")
        raise RenError(
            f"REN_VALIDATE: kernel {unit.name} on {unit.device} differs from the python backend "
            f"at word {i} (limb {i // n}, slot {i % n}): got {int(got[i])}, expected "
            f"{int(want[i])}; {bad.size} of {out.size} words differ. Source:\n{source}"
        )


def _check_inputs(sched: list[ScheduledKernel]) -> None:
    """Every buffer read but not written by this schedule must hold data."""
    written = {id(k.bufs[0]) for k in sched}
    for k in sched:
        for buf in k.bufs[1:]:
            if id(buf) not in written and not buf.allocated:
                raise RenError(
                    f"kernel {k.info.name} reads {buf!r}, which holds no data: it was freed "
                    "(Buffer.deallocate) before this graph was realized"
                )


@dataclass
class Realization:
    """One realization, prepared: what ``realize_nodes`` runs, for tools that step through it.

    Attributes:
        sink: the ``SINK`` over the requested outputs, as handed to the scheduler.
        kernels: the scheduled kernels in execution order (planned buffers are arena views).
        ctx: the schedule context (``becomes_map``, rules fired, pass timings, ``memory_plan``).
        units: the exec units not run yet, in order.
        finish: called with ``ctx.becomes_map`` once the last unit ran (``Poly`` repoints the
            values that used the outputs).
        ran: how many units ran.
    """

    sink: Node
    kernels: list[ScheduledKernel]
    ctx: ScheduleContext
    units: list[ExecUnit]
    finish: Callable[[dict[Node, Node]], None] | None = None
    ran: int = 0
    entry: schedule_cache.Entry | None = None  # the cache's entry, for a hit (ren.engine.hits)
    _last_use: dict[int, list[Buffer]] | None = field(default=None, repr=False)

    @property
    def memory_plan(self) -> MemoryPlan:
        """The plan of the arenas (empty when nothing was planned)."""
        plan = self.ctx.memory_plan
        assert isinstance(plan, MemoryPlan)  # planned before a Realization is made
        return plan

    @property
    def done(self) -> bool:
        """Whether every unit ran (and ``finish`` was called)."""
        return not self.units and self.finish is None

    def run(self, count: int | None = None) -> ScheduleContext:
        """Run the next ``count`` units (default: all that are left), in order.

        After the last unit, ``finish`` is called.

        Returns:
            The schedule context.
        """
        if count is None and self.ran == 0 and self.entry is not None:
            recording = CAPTURE_RECORDER.get() is not None
            if run_as_graph(self.units, self.entry, backend, recording):  # a cache hit, in one call
                self.ran, self.units = len(self.units), []
        todo = len(self.units) if count is None else min(count, len(self.units))
        if self._last_use is None:  # over every unit, so a batch poisons only what is done
            poison = settings.POISON.get()
            self._last_use = last_uses(self.units) if poison and self.ran == 0 else {}
        batch, self.units = self.units[:todo], self.units[todo:]
        run_exec_units(batch, CAPTURE_RECORDER.get(), last_use=self._last_use, first_step=self.ran)
        self.ran += todo
        if not self.units and self.finish is not None:
            finish, self.finish = self.finish, None
            finish(self.ctx.becomes_map)
        return self.ctx


def prepare(
    nodes: tuple[Node, ...], finish: Callable[[dict[Node, Node]], None] | None = None
) -> Realization:
    """Schedule ``nodes`` together (one ``SINK``), plan memory and build the exec units.

    Nothing runs. ``prepare(nodes).run()`` is ``realize_nodes(nodes)``; ``finish`` is called with
    the ``becomes_map`` after the last unit ran.
    """
    sink = Node(Op.SINK, DType.VOID, tuple(nodes))
    sched, ctx, entry = schedule_cache.scheduled(sink)
    _check_inputs(sched)
    runners = entry.runners if entry is not None else None
    hit = runners is not None and ctx.cache == "hit" and len(runners) == len(sched)
    units = make_exec_units(sched, runners if hit else None)
    if runners is not None and not hit:
        runners[:] = [(backend(u.device), u.fn) for u in units]
    prepared = Realization(sink, sched, ctx, units, finish, entry=entry if hit else None)
    notify("on_prepared", prepared)
    return prepared


def realize_nodes(nodes: tuple[Node, ...]) -> ScheduleContext:
    """Compute every node in ``nodes`` together (one ``SINK``, shared work once).

    Returns the schedule context: its ``becomes_map`` maps each output node to the node of its
    realized value.
    """
    return prepare(nodes).run()
