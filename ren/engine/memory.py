"""Memory planning: pack the temporaries of a schedule into one arena per device.

``plan_memory(schedule)`` finds each buffer's lifetime (the first and last kernel that touches
it), then simulates a TLSF allocator over the kernels in order: before kernel ``i`` runs, the
buffers it is the first to touch are allocated; after it ran, the buffers it is the last to read
are freed. Every planned buffer becomes a view at its offset in its device's arena, so
temporaries whose lifetimes do not overlap share bytes. The result is a plain value,
``MemoryPlan``, that the visualizer and the tests read without running anything.

Buffers that keep their identity (are not planned): the outputs of the realization, buffers that
are already allocated (inputs), buffers written by a copy between devices, and buffers marked
``no_opt``.
"""

from __future__ import annotations

import dataclasses
import sys
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from ren import settings
from ren.device import Buffer
from ren.engine import debug_level
from ren.engine.tlsf import ALIGN, TLSF, OutOfMemoryError
from ren.errors import RenError
from ren.ir.args import check_device, check_int
from ren.ir.kernels import Family

if TYPE_CHECKING:
    from ren.engine.schedule import ScheduledKernel

__all__ = [
    "ALIGN",
    "TLSF",
    "DevicePlan",
    "Event",
    "MemoryPlan",
    "OutOfMemoryError",
    "PlannedBuffer",
    "captured_temporaries",
    "lifetimes",
    "plan_memory",
    "rebind",
]

# --------------------------------------------------------------------------------------------
# the plan


@dataclass(frozen=True)
class PlannedBuffer:
    """Where one buffer lives: ``nbytes`` at ``offset`` of its device's arena.

    It is alive from kernel ``first`` to kernel ``last`` (indices into the schedule).
    """

    buffer_id: int
    dtype: str
    size: int
    nbytes: int
    offset: int
    first: int
    last: int

    def __post_init__(self) -> None:
        _ints(self, "buffer_id", "size", "nbytes", "offset", "first", "last")
        if self.dtype not in ("u8", "u32", "u64"):
            raise ValueError(f"PlannedBuffer.dtype must be u8, u32 or u64, got {self.dtype!r}")


@dataclass(frozen=True)
class Event:
    """One step of the simulation.

    ``kind`` is ``"alloc"`` (before kernel ``step``) or ``"free"`` (after it).
    """

    kind: str
    step: int
    buffer_id: int
    offset: int
    nbytes: int

    def __post_init__(self) -> None:
        if self.kind not in ("alloc", "free"):
            raise ValueError(f"Event.kind must be 'alloc' or 'free', got {self.kind!r}")
        _ints(self, "step", "buffer_id", "offset", "nbytes")


@dataclass(frozen=True)
class DevicePlan:
    """The arena of one device.

    ``unshared_bytes`` is what the planned buffers would take each on its own; ``lower_bound_bytes``
    is the most bytes live at once (no arena can be smaller); ``arena_bytes`` is what TLSF used.
    """

    device: str
    arena_bytes: int
    unshared_bytes: int
    lower_bound_bytes: int
    buffers: tuple[PlannedBuffer, ...]
    events: tuple[Event, ...]

    def __post_init__(self) -> None:
        check_device("DevicePlan.device", self.device)
        _ints(self, "arena_bytes", "unshared_bytes", "lower_bound_bytes")
        _items(self, "buffers", PlannedBuffer)
        _items(self, "events", Event)

    def summary(self) -> str:
        """One line: the unshared bytes, the arena, the lower bound and the arena's ratio to it."""
        ratio = self.arena_bytes / self.lower_bound_bytes if self.lower_bound_bytes else 1.0
        return (
            f"memory {self.device}: unshared {_fmt(self.unshared_bytes)} -> arena "
            f"{_fmt(self.arena_bytes)} (lower bound {_fmt(self.lower_bound_bytes)}, "
            f"{ratio:.2f}x)"
        )


@dataclass(frozen=True)
class MemoryPlan:
    """Every device's arena. Empty when nothing was planned."""

    devices: tuple[DevicePlan, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        _items(self, "devices", DevicePlan)

    def device(self, name: str) -> DevicePlan:
        """The arena planned on device ``name``.

        Raises:
            KeyError: if no arena was planned on that device.
        """
        for d in self.devices:
            if d.device == name:
                return d
        raise KeyError(f"no arena planned on device {name!r}")


def _ints(obj: object, *names: str) -> None:
    """Each field ``names`` of ``obj`` is a non-negative int (``TypeError``/``ValueError``)."""
    for name in names:
        check_int(f"{type(obj).__name__}.{name}", getattr(obj, name))


def _items(obj: object, name: str, kind: type) -> None:
    """Field ``name`` of ``obj`` is a tuple of ``kind`` (``TypeError``)."""
    value = getattr(obj, name)
    if type(value) is not tuple or not all(isinstance(v, kind) for v in value):
        raise TypeError(f"{type(obj).__name__}.{name} must be a tuple of {kind.__name__}")


def _fmt(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return str(size)  # pragma: no cover


class _Bound(Protocol):
    """A kernel bound to buffers (a ``ScheduledKernel``, or an exec unit of ``ren.jit``)."""

    @property
    def bufs(self) -> tuple[Buffer, ...]: ...


def lifetimes(schedule: Sequence[_Bound]) -> dict[int, tuple[Buffer, int, int]]:
    """Each buffer of the schedule, by id: ``(buffer, first kernel, last kernel)``."""
    life: dict[int, tuple[Buffer, int, int]] = {}
    for i, k in enumerate(schedule):
        for buf in k.bufs:
            first = life[id(buf)][1] if id(buf) in life else i
            life[id(buf)] = (buf, first, i)
    return life


def _written_first(schedule: Sequence[_Bound]) -> dict[int, tuple[Buffer, int, int]]:
    """The buffers a kernel of the schedule writes before any reads them: not inputs."""
    writers: dict[int, int] = {}
    for i, k in enumerate(schedule):
        writers.setdefault(id(k.bufs[0]), i)
    return {key: t for key, t in lifetimes(schedule).items() if writers.get(key) == t[1]}


def _planned(
    schedule: list[ScheduledKernel], outputs: set[int]
) -> dict[int, tuple[Buffer, int, int]]:
    """The buffers the planner may place: temporaries first written by a kernel of the schedule."""
    copies = {id(k.bufs[0]) for k in schedule if k.info.family is Family.COPY}
    return {
        key: (buf, first, last)
        for key, (buf, first, last) in _written_first(schedule).items()
        if not (
            key in outputs or key in copies or buf.allocated or buf.no_opt or buf.base is not None
        )
    }


def captured_temporaries(
    units: Sequence[_Bound], keep: set[int]
) -> dict[int, tuple[Buffer, int, int]]:
    """The buffers a captured plan may place anew: each one a unit writes first, not in ``keep``.

    A capture runs several realizations; their temporaries (views of each one's arena) are placed
    again by their lifetimes over the whole plan, in one arena per device.
    """
    return {
        key: t for key, t in _written_first(units).items() if key not in keep and t[0].dtype != "u8"
    }


B = TypeVar("B", bound=_Bound)


def plan_memory(
    schedule: list[B],
    outputs: tuple[Buffer, ...] | None = None,
    *,
    temporaries: Mapping[int, tuple[Buffer, int, int]] | None = None,
    bind: Callable[[B, Mapping[int, Buffer]], B] | None = None,
) -> tuple[list[B], MemoryPlan]:
    """Place the schedule's temporaries in one arena per device.

    The one planner of Ren: a realization plans its kernels with it, and ``ren.jit`` plans a
    captured plan's exec units with it (``temporaries=captured_temporaries(units, keep)``,
    ``bind`` binding a unit to the new views).

    Args:
        schedule: the kernels (or exec units) in execution order.
        outputs: the buffers the caller will read afterwards (they keep their identity). Default:
            every buffer no later kernel reads after its last write.
        temporaries: the buffers to place, ``id -> (buffer, first, last)``; default: the
            temporaries a realization's schedule writes (not outputs, copies or inputs).
        bind: binds one item of the schedule to the views; default: :func:`rebind`, a
            ``ScheduledKernel``'s.

    Returns:
        The schedule with every planned buffer replaced by a view of its arena, and the plan
        (empty under ``REN_NO_PLAN=1``).
    """
    if temporaries is None:
        if outputs is None:
            last_read = {}
            for i, k in enumerate(schedule):
                for buf in k.bufs[1:]:
                    last_read[id(buf)] = i
            outputs = tuple(
                k.bufs[0] for i, k in enumerate(schedule) if last_read.get(id(k.bufs[0]), -1) <= i
            )
        kernels = cast("list[ScheduledKernel]", schedule)
        temporaries = _planned(kernels, {id(b) for b in outputs})
    if not temporaries or settings.NO_PLAN.get():
        return schedule, MemoryPlan()
    by_device: dict[str, list[tuple[Buffer, int, int]]] = {}
    for buf, first, last in temporaries.values():
        by_device.setdefault(buf.device, []).append((buf, first, last))
    devices, views = [], {}
    for device in sorted(by_device):
        plan, arena_views = _plan_device(device, by_device[device], len(schedule))
        devices.append(plan)
        views.update(arena_views)
    if bind is None:
        bind = cast("Callable[[B, Mapping[int, Buffer]], B]", rebind)
    memory = MemoryPlan(tuple(devices))
    if debug_level() >= 2:
        for d in memory.devices:
            print(f"  {d.summary()}", file=sys.stderr)
    return [bind(k, views) for k in schedule], memory


#: Where ``reuse_delay`` finds a device's backend: set by ``ren.engine.realize`` (which imports
#: this module) to its ``backend``; until then every device reuses at once.
backend_of: Callable[[str], object] | None = None


def reuse_delay(device: str) -> int:
    """How many kernels later a freed block of ``device``'s arena may be reused: 0 (at once).

    A device that runs a plan's independent kernels at the same time says more
    (``reuse_delay()`` on its backend; the cpu device with OpenMP: ``ren.backends.cpu_tasks``):
    a kernel that reuses the block a kernel just before it read must wait for that kernel, so
    reusing at once would chain kernels that are otherwise independent.
    """
    if backend_of is None:
        return 0
    try:
        hook = getattr(backend_of(device), "reuse_delay", None)
    except RenError:  # a device no backend serves plans nothing here
        return 0
    return int(hook()) if callable(hook) else 0


def _aligned(nbytes: int) -> int:
    """The bytes a buffer takes in an arena: whole ``ALIGN`` granules, at least one."""
    return -(-max(nbytes, 1) // ALIGN) * ALIGN


def _plan_device(
    device: str, bufs: list[tuple[Buffer, int, int]], steps: int
) -> tuple[DevicePlan, dict[int, Buffer]]:
    unshared = sum(_aligned(b.nbytes) for b, _, _ in bufs)
    tlsf = TLSF(unshared)
    starts: dict[int, list[Buffer]] = {}
    ends: dict[int, list[Buffer]] = {}
    life = {}
    for buf, first, last in bufs:
        starts.setdefault(first, []).append(buf)
        ends.setdefault(last, []).append(buf)
        life[id(buf)] = (first, last)
    offsets, events, live, lower = {}, [], 0, 0
    delay = reuse_delay(device)
    held: deque[tuple[int, int]] = deque()  # (the step a freed block may be reused at, offset)
    for step in range(steps):
        while held and held[0][0] <= step:
            tlsf.free(held.popleft()[1])
        for buf in sorted(starts.get(step, ()), key=lambda b: -b.nbytes):  # big blocks first
            offsets[id(buf)] = tlsf.alloc(buf.nbytes, ALIGN)
            events.append(Event("alloc", step, buf.id, offsets[id(buf)], buf.nbytes))
            live += _aligned(buf.nbytes)
        lower = max(lower, live)
        for buf in ends.get(step, ()):
            if delay:
                held.append((step + 1 + delay, offsets[id(buf)]))
            else:
                tlsf.free(offsets[id(buf)])
            events.append(Event("free", step, buf.id, offsets[id(buf)], buf.nbytes))
            live -= _aligned(buf.nbytes)
    arena = Buffer(device, "u8", tlsf.high_water, no_opt=True)
    views = {
        id(buf): Buffer(device, buf.dtype, buf.size, base=arena, offset=offsets[id(buf)])
        for buf, _, _ in bufs
    }
    planned = tuple(
        PlannedBuffer(buf.id, buf.dtype, buf.size, buf.nbytes, offsets[id(buf)], *life[id(buf)])
        for buf, _, _ in sorted(bufs, key=lambda t: (t[1], t[0].id))
    )
    plan = DevicePlan(device, tlsf.high_water, unshared, lower, planned, tuple(events))
    return plan, views


def rebind(kernel: ScheduledKernel, views: Mapping[int, Buffer | None]) -> ScheduledKernel:
    """``kernel`` with each buffer whose id is in ``views`` replaced (``None``: an empty slot)."""
    # None (from ren.jit) empties an input slot, which each replay binds to the call's buffer
    bufs = cast("tuple[Buffer, ...]", tuple(views.get(id(b), b) for b in kernel.bufs))
    if all(a is b for a, b in zip(bufs, kernel.bufs, strict=True)):
        return kernel
    return dataclasses.replace(kernel, bufs=bufs)
