"""The TLSF allocator the memory planner simulates (``TLSF``; the class says how it works).

Nothing is allocated for real: the planner replays a schedule's allocations and frees through it
and records the offsets, each a multiple of ``ALIGN`` bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from ren.errors import RenError

__all__ = ["ALIGN", "TLSF", "OutOfMemoryError"]


#: Every planned buffer starts at a multiple of this many bytes (a cache line).
ALIGN = 64


class OutOfMemoryError(RenError):
    """The allocator has no free block large enough for a request."""


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
