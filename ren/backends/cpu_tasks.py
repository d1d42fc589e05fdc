"""A captured plan as tasks for several cores: parts of kernels, each run once its inputs are.

With OpenMP, a graph runner (``ren.backends.cpu_graph``) does not call the kernels one after
another, each spreading its limbs over the team and ending at a barrier. It cuts the plan into
*tasks*:

- a kernel whose limbs are independent (an NTT, an inverse NTT, an elementwise kernel) is one task
  per limb (per few limbs on small rings): the same entry point, called with its pointers moved to
  the first limb of the range and a ring table of the range's limbs (:func:`template_split`,
  :func:`elementwise_split`);
- a rescale or a basis change, which reads every limb of a coefficient, is a task per range of
  coefficients: the same entry point with another ``words`` range (:func:`word_ranges`);
- a copy is one task.

A kernel waits only for the kernels it depends on (:func:`dependencies`: it reads what they
write, or writes what they read or write). One C function built once for every plan
(``ren.backends.cpu_runner.RUNNER``) reads the plan as arrays: when a kernel's last dependency
finishes, its tasks join a ready queue, and each thread of the team takes the oldest ready
task. So independent kernels (the digits of a key switch, the two halves of a ciphertext, the
rotations of a linear transform) run at the same time, and no thread waits at a barrier for the
rest of a kernel it does not need. A thread with nothing ready spins a little, then yields its core
(``sched_yield``), so a thread the system switched out (another process on its core) delays only
the kernels that need its task. The memory planner helps by reusing a freed block only
``REUSE_DELAY`` kernels later (``ren.engine.memory.reuse_delay``): a block reused at once would
chain the kernel that read it to the one that overwrites it.

Each task computes exactly the words its kernel computes for its part, so the words are those of
the one-thread replay. ``cpu_runner.profile`` reads a traced replay: each thread's busy and idle
time, the plan's work and span.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np

from ren.codegen.ckernel import BLOCK
from ren.codegen.linearize import Program
from ren.ir.args import ConstRowArg, IndexArg
from ren.ir.kernels import Family
from ren.ring import RingSpec

__all__ = [
    "MIN_TASK_WORDS",
    "REUSE_DELAY",
    "RING",
    "WORDS",
    "WORD_TASKS",
    "Access",
    "dependencies",
    "elementwise_split",
    "limb_ranges",
    "ring_window",
    "template_split",
    "word_ranges",
]

#: In a kernel's ``split``: this argument is the ring table, replaced by the range's own.
RING = -1

#: In a kernel's ``split``: this argument is the ``words`` range of a kernel that loops over
#: blocks of coefficients (``ren.codegen.ckernel.WORDS_ARG``), replaced by the task's range.
WORDS = -2

#: The coefficient ranges a rescale or basis change is cut into (each a multiple of the block).
WORD_TASKS = 8

#: How many kernels later the memory planner reuses a block a threaded plan freed
#: (``ren.engine.memory.reuse_delay``). A kernel that overwrites a block another kernel read must
#: wait for it, so a block reused at once chains kernels that are otherwise independent (the
#: rotations of a bootstrap's linear transforms, the two halves of a key switch). Eight kernels
#: (measured, boot-n12 on two cores: a replay 0.81 s at 0, 0.67 s at 8, and at 16 more work from
#: a larger arena) keep that many kernels free to overlap, for a larger arena.
REUSE_DELAY = 8

#: The fewest words (``limbs * n``) worth a task of their own: a task costs about a microsecond
#: to take and wait for, a limb of n = 4096 about thirty.
MIN_TASK_WORDS = 1 << 12

#: One access of a kernel: ``(slot of B, first byte, end byte, written)``.
Access = tuple[int, int, int, bool]


def template_split(family: Family, ring: RingSpec, tables: int) -> tuple[int, ...] | None:
    """How a template kernel of ``ring`` with ``tables`` tables runs a part of its work alone.

    An NTT or inverse NTT (``out, in, tw, tw_shoup, ring``) a range of limbs: every array is
    ``(L, n)`` words, row ``i`` read or written for limb ``i`` only. A rescale or a basis change
    reads every limb of a coefficient, so it takes a range of coefficients instead: its last
    table is the ``words`` range (``WORDS``).
    """
    if family in (Family.NTT, Family.INTT):
        row = ring.n * np.dtype(ring.np_dtype).itemsize
        return (row, row, row, row, RING)
    if family in (Family.RESCALE, Family.BASE_CONVERT):
        return (0, 0, *([0] * (tables - 1)), WORDS)
    return None


def elementwise_split(prog: Program, tables: int) -> tuple[int, ...] | None:
    """How an elementwise kernel runs a range of limbs, or ``None`` when it cannot.

    A buffer it ``LOAD``s (or stores) moves by a row of ``n`` words per limb, a constants argument
    whose ``IMM``s all read row 0 by a word per limb; gather tables stay; the ring table (the last
    of the ``tables`` tables) is the range's. A constants argument with rows past 0 is laid out
    ``row * L + i``, which a range of limbs cannot address: such a kernel stays whole.
    """
    ring = prog.ring
    word = np.dtype(ring.np_dtype).itemsize
    strides = [0] * prog.slots
    strides[0] = ring.n * word
    for ins in prog.instrs:
        if ins.slot is None:
            continue
        if isinstance(ins.arg, IndexArg):
            stride = ring.n * word
        elif isinstance(ins.arg, ConstRowArg) and ins.arg.row == 0:
            stride = word
        else:
            return None
        if strides[ins.slot] not in (0, stride):
            return None
        strides[ins.slot] = stride
    return (*strides, *([0] * (tables - 1)), RING)


def limb_ranges(limbs: int, n: int, threads: int = 2) -> list[tuple[int, int]]:
    """The limb ranges ``[lo, hi)`` a kernel of ``limbs`` limbs is cut into (one range: whole).

    One limb a task, or as few limbs as make ``MIN_TASK_WORDS`` words.
    """
    if limbs < 2 or threads < 2:
        return [(0, limbs)]
    per = max(1, -(-MIN_TASK_WORDS // n))
    return [(lo, min(lo + per, limbs)) for lo in range(0, limbs, per)]


def word_ranges(n: int, threads: int = 2) -> list[tuple[int, int]]:
    """The coefficient ranges ``[lo, hi)`` a rescale or basis change of degree ``n`` is cut into.

    At most ``WORD_TASKS`` ranges, each of at least ``MIN_TASK_WORDS`` coefficients and a whole
    number of the kernels' blocks (``ren.codegen.ckernel.BLOCK``); one range: whole.
    """
    parts = min(WORD_TASKS, n // max(MIN_TASK_WORDS, BLOCK)) if threads >= 2 else 1
    if parts < 2:
        return [(0, n)]
    step = n // parts
    return [(lo, lo + step) for lo in range(0, n, step)]


def ring_window(table: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """The ring table of limbs ``lo .. hi - 1`` of ``table`` (``L``, the moduli, ``q^-1 mod R``)."""
    limbs = int(table[0])
    if not 0 <= lo < hi <= limbs or table.size < 2 * limbs + 1:
        raise ValueError(f"limbs {lo}..{hi} are not a window of a ring table of {limbs} limbs")
    moduli, inverses = table[1 : 1 + limbs], table[1 + limbs : 1 + 2 * limbs]
    window = np.concatenate([table[:1], moduli[lo:hi], inverses[lo:hi]])
    window[0] = hi - lo
    window.flags.writeable = False
    return window


class _Ranges:
    """The bytes of one slot of ``B``: segments, each with its last writer and readers since."""

    def __init__(self) -> None:
        self.starts: list[int] = [0]
        self.state: list[tuple[int, list[int]]] = [(-1, [])]  # (writer, readers) from each start

    def _cut(self, at: int) -> int:
        """The index of the segment that starts at ``at`` (made by cutting one in two)."""
        i = bisect.bisect_right(self.starts, at) - 1
        if self.starts[i] != at:
            writer, readers = self.state[i]
            self.starts.insert(i + 1, at)
            self.state.insert(i + 1, (writer, list(readers)))
            i += 1
        return i

    def access(self, kernel: int, start: int, end: int, written: bool, deps: set[int]) -> None:
        """Record an access of ``kernel``, adding what it must wait for to ``deps``."""
        first, last = self._cut(start), self._cut(end)
        for writer, readers in self.state[first:last]:
            if writer >= 0:
                deps.add(writer)
            if written:
                deps.update(readers)
        if written:
            self.starts[first:last] = [start]
            self.state[first:last] = [(kernel, [])]
        else:
            for _, readers in self.state[first:last]:
                readers.append(kernel)


def dependencies(accesses: Sequence[Sequence[Access]]) -> list[list[int]]:
    """For each kernel, the earlier kernels it must wait for, given every kernel's accesses.

    A read waits for the last writer of each of its bytes; a write also for every reader since.
    Earlier accesses are ordered before those (the writer waited for them), so they need no wait.
    """
    slots: dict[int, _Ranges] = {}
    out: list[list[int]] = []
    for k, kernel in enumerate(accesses):
        deps: set[int] = set()
        for slot, start, end, written in kernel:
            slots.setdefault(slot, _Ranges()).access(k, start, end, written, deps)
        deps.discard(k)
        out.append(sorted(deps))
    return out
