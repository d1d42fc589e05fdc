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

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, cast

from ren import settings
from ren.device import Buffer
from ren.engine import debug_level
from ren.errors import RenError

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
    "plan_memory",
]

#: Every planned buffer starts at a multiple of this many bytes (a cache line).
ALIGN = 64


class OutOfMemoryError(RenError):
    """The allocator has no free block large enough for a request."""


# --------------------------------------------------------------------------------------------
# the allocator


@dataclass
class _Block:
    offset: int
    size: int
    free: bool = True
    prev: _Block | None = None  # physical neighbours
    next: _Block | None = None


class TLSF:
    """A two-level segregated fit allocator over ``[0, capacity)``.

    From M. Masmano et al., "TLSF: a new dynamic memory allocator for real-time systems",
    ECRTS 2004.

    Free blocks are kept in lists by size class. The *first level* is the power of two below the
    size, ``fl = floor(log2(size))``; the *second level* splits that range ``[2^fl, 2^(fl+1))``
    into ``2^SL_BITS`` equal parts, ``sl = (size >> (fl - SL_BITS)) - 2^SL_BITS``. Two bitmaps say
    which lists are non-empty, so finding a list with a block that fits takes a few bit tricks,
    not a scan over blocks.

    ``alloc(size, align)`` first looks in the request's own list for a block that fits (so a hole
    of exactly the right size is reused), then in the next non-empty list above it, where every
    block fits. The free block at the end of the pool (the *top*) is kept off the lists and used
    only when no freed block fits, so the used part of the pool grows only when it must (the
    planner's arena is the high-water mark). The block found is *split*: the front part is
    returned, and the rest (when at least ``granule`` bytes) goes back on a free list.
    ``free(offset)`` *merges* the block with its free physical neighbours before listing it, so
    freeing everything leaves one block.
    Alignment: every size is rounded up to ``granule`` and every block starts at a multiple of it;
    a larger ``align`` is met by splitting off the front of a block.
    """

    SL_BITS = 4

    def __init__(self, capacity: int, granule: int = ALIGN) -> None:
        if granule <= 0 or granule & (granule - 1):
            raise ValueError(f"granule {granule} must be a power of two")
        capacity -= capacity % granule
        if capacity <= 0:
            raise ValueError(f"capacity must hold at least one {granule}-byte granule")
        self.capacity, self.granule = capacity, granule
        self.fl_bitmap = 0
        self.sl_bitmap: dict[int, int] = {}
        self.lists: dict[tuple[int, int], list[_Block]] = {}
        self.used: dict[int, _Block] = {}  # offset -> allocated block
        self.high_water = 0  # the largest end offset ever allocated
        self.top: _Block | None = None  # the free block at the end, kept off the lists
        self._first = _Block(0, capacity)  # the block at offset 0 is never merged away
        self._insert(self._first)

    # --- size classes ------------------------------------------------------------------------
    def _mapping(self, size: int) -> tuple[int, int]:
        fl = size.bit_length() - 1
        if fl < self.SL_BITS:
            return fl, 0
        sl = (size >> (fl - self.SL_BITS)) - (1 << self.SL_BITS)
        return fl, sl

    def _insert(self, block: _Block) -> None:
        if block.next is None:  # the untouched end: used only when no freed block fits
            self.top = block
            return
        fl, sl = self._mapping(block.size)
        self.lists.setdefault((fl, sl), []).append(block)
        self.fl_bitmap |= 1 << fl
        self.sl_bitmap[fl] = self.sl_bitmap.get(fl, 0) | (1 << sl)

    def _remove(self, block: _Block) -> None:
        if block is self.top:
            self.top = None
            return
        fl, sl = self._mapping(block.size)
        lst = self.lists[(fl, sl)]
        lst.remove(block)
        if not lst:
            self.sl_bitmap[fl] &= ~(1 << sl)
            if not self.sl_bitmap[fl]:
                self.fl_bitmap &= ~(1 << fl)

    def _find(self, need: int) -> _Block | None:
        fl, sl = self._mapping(need)
        for block in self.lists.get((fl, sl), ()):  # the request's own class: a fitting hole
            if block.size >= need:
                return block
        # the next non-empty class above: every block in it is large enough
        sl_map = self.sl_bitmap.get(fl, 0) & (-1 << (sl + 1))
        if not sl_map:
            fl_map = self.fl_bitmap & (-1 << (fl + 1))
            if not fl_map:  # no freed block fits: grow into the untouched end
                return self.top if self.top is not None and self.top.size >= need else None
            fl = (fl_map & -fl_map).bit_length() - 1
            sl_map = self.sl_bitmap[fl]
        sl = (sl_map & -sl_map).bit_length() - 1
        return self.lists[(fl, sl)][-1]

    # --- the interface -----------------------------------------------------------------------
    def round_size(self, n: int) -> int:
        """``n`` rounded up to whole granules (at least one): the bytes a request takes."""
        return -(-max(n, 1) // self.granule) * self.granule

    def alloc(self, size: int, align: int = ALIGN) -> int:
        """Reserve ``size`` bytes starting at a multiple of ``align``; return the offset.

        Raises:
            OutOfMemoryError: no free block can hold the request.
        """
        if size < 0:
            raise ValueError(f"cannot allocate {size} bytes")
        if align <= 0 or align & (align - 1):
            raise ValueError(f"alignment {align} must be a power of two")
        need = self.round_size(size)
        block = self._find(need)
        if (
            block is not None
            and block.offset % align
            and block.size < need + (-block.offset % align)
        ):
            # that block fits only unaligned: look for one with room for the worst-case gap
            block = self._find(need + align - self.granule)
        if block is None:
            free = sum(b.size for lst in self.lists.values() for b in lst)
            free += self.top.size if self.top is not None else 0
            raise OutOfMemoryError(
                f"out of memory: {size} bytes (aligned to {align}) requested, {free} of "
                f"{self.capacity} bytes free and no free block large enough"
            )
        self._remove(block)
        gap = -block.offset % align
        if gap:  # split off the front so the block starts aligned
            front = block
            block = self._split(front, gap)
            self._insert(front)
        rest = self._split(block, need) if block.size - need >= self.granule else None
        if rest is not None:
            self._insert(rest)
        block.free = False
        self.used[block.offset] = block
        self.high_water = max(self.high_water, block.offset + block.size)
        return block.offset

    def _split(self, block: _Block, size: int) -> _Block:
        """Cut ``block`` to ``size`` bytes; return the (free) remainder, linked after it."""
        rest = _Block(block.offset + size, block.size - size, True, block, block.next)
        if block.next is not None:
            block.next.prev = rest
        block.next, block.size = rest, size
        return rest

    def free(self, offset: int) -> None:
        """Release the block at ``offset``, merging it with free neighbours."""
        block = self.used.pop(offset, None)
        if block is None:
            raise ValueError(f"no allocated block at offset {offset}")
        block.free = True
        nxt = block.next
        if nxt is not None and nxt.free:
            self._remove(nxt)
            block.size += nxt.size
            block.next = nxt.next
            if nxt.next is not None:
                nxt.next.prev = block
        prev = block.prev
        if prev is not None and prev.free:
            self._remove(prev)
            prev.size += block.size
            prev.next = block.next
            if block.next is not None:
                block.next.prev = prev
            block = prev
        self._insert(block)

    def blocks(self) -> list[tuple[int, int, bool]]:
        """Every block in address order: ``(offset, size, free)``."""
        out = []
        block: _Block | None = self._first
        while block is not None:
            out.append((block.offset, block.size, block.free))
            block = block.next
        return out


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

    def device(self, name: str) -> DevicePlan:
        """The arena planned on device ``name``.

        Raises:
            KeyError: if no arena was planned on that device.
        """
        for d in self.devices:
            if d.device == name:
                return d
        raise KeyError(f"no arena planned on device {name!r}")


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


def _lifetimes(schedule: Sequence[_Bound]) -> dict[int, tuple[Buffer, int, int]]:
    """Each buffer of the schedule: ``(buffer, first kernel, last kernel)``."""
    life: dict[int, tuple[Buffer, int, int]] = {}
    for i, k in enumerate(schedule):
        for buf in k.bufs:
            first = life[id(buf)][1] if id(buf) in life else i
            life[id(buf)] = (buf, first, i)
    return life


def _planned(
    schedule: list[ScheduledKernel], outputs: set[int]
) -> dict[int, tuple[Buffer, int, int]]:
    """The buffers the planner may place: temporaries first written by a kernel of the schedule."""
    copies = {id(k.bufs[0]) for k in schedule if k.info.kind == "copy"}
    writers: dict[int, int] = {}
    for i, k in enumerate(schedule):
        writers.setdefault(id(k.bufs[0]), i)
    out = {}
    for key, (buf, first, last) in _lifetimes(schedule).items():
        keep = (
            key in outputs
            or key in copies
            or buf.allocated
            or buf.no_opt
            or buf.base is not None
            or writers.get(key) != first  # read before written: an input
        )
        if not keep:
            out[key] = (buf, first, last)
    return out


def plan_memory(
    schedule: list[ScheduledKernel], outputs: tuple[Buffer, ...] | None = None
) -> tuple[list[ScheduledKernel], MemoryPlan]:
    """Place the schedule's temporaries in one arena per device.

    Args:
        schedule: the kernels in execution order.
        outputs: the buffers the caller will read afterwards (they keep their identity). Default:
            every buffer no later kernel reads after its last write.

    Returns:
        The schedule with every planned buffer replaced by a view of its arena, and the plan.
    """
    if outputs is None:
        last_read = {}
        for i, k in enumerate(schedule):
            for buf in k.bufs[1:]:
                last_read[id(buf)] = i
        outputs = tuple(
            k.bufs[0] for i, k in enumerate(schedule) if last_read.get(id(k.bufs[0]), -1) <= i
        )
    planned = _planned(schedule, {id(b) for b in outputs})
    if not planned or settings.NO_PLAN.get():
        return schedule, MemoryPlan()
    by_device: dict[str, list[tuple[Buffer, int, int]]] = {}
    for buf, first, last in planned.values():
        by_device.setdefault(buf.device, []).append((buf, first, last))
    devices, views = [], {}
    for device in sorted(by_device):
        plan, arena_views = _plan_device(device, by_device[device], len(schedule))
        devices.append(plan)
        views.update(arena_views)
    new = [_rebind(k, views) for k in schedule]
    memory = MemoryPlan(tuple(devices))
    if debug_level() >= 2:
        for d in memory.devices:
            print(f"  {d.summary()}", file=sys.stderr)
    return new, memory


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
    for step in range(steps):
        for buf in sorted(starts.get(step, ()), key=lambda b: -b.nbytes):  # big blocks first
            offsets[id(buf)] = tlsf.alloc(buf.nbytes, ALIGN)
            events.append(Event("alloc", step, buf.id, offsets[id(buf)], buf.nbytes))
            live += _aligned(buf.nbytes)
        lower = max(lower, live)
        for buf in ends.get(step, ()):
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


def _rebind(kernel: ScheduledKernel, views: Mapping[int, Buffer | None]) -> ScheduledKernel:
    # None (from ren.jit) empties an input slot, which each replay binds to the call's buffer
    bufs = cast("tuple[Buffer, ...]", tuple(views.get(id(b), b) for b in kernel.bufs))
    if all(a is b for a, b in zip(bufs, kernel.bufs, strict=True)):
        return kernel
    return type(kernel)(kernel.ast, bufs, kernel.info)
