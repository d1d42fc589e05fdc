"""Memory planning: the TLSF allocator, ``plan_memory`` on real schedules, and realization with and
without a plan.

Oracles, each independent of the code under test:

* TLSF: a model of the live blocks as an interval list, kept by the state machine (hypothesis
  ``RuleBasedStateMachine``); overlap, alignment, bounds, tiling, merging and the high-water mark
  are checked against it after every step.
* ``plan_memory``: lifetimes, the kept buffers, the lower bound, the unshared total and the event
  list are recomputed by brute force from the schedule; every pair of planned buffers with
  overlapping lifetimes is checked for overlapping bytes.
* Realization: random programs realized with ``REN_NO_PLAN=1`` and with the plan under
  ``REN_POISON=1`` (freed arena regions filled with ``0xFF``) give the same words, and both equal
  ``ren.reference.evaluate``. Two sabotaged planners (everything at offset 0; frees one kernel
  early) show that these checks fail when the plan is wrong.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import re
from dataclasses import dataclass
from unittest import mock

import numpy as np
import pytest
from hypothesis import Phase, event, find, given, note, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import ren
from ren.device import Buffer
from ren.engine import memory as memory_mod
from ren.engine import realize as realize_mod
from ren.engine import schedule_cache
from ren.engine.memory import (
    ALIGN,
    TLSF,
    DevicePlan,
    Event,
    MemoryPlan,
    OutOfMemoryError,
    PlannedBuffer,
    plan_memory,
)
from ren.engine.schedule import ScheduledKernel, schedule
from ren.errors import RenError
from ren.ir import DType, Node, Op
from ren.ir.node import base_buffer
from ren.poly import Poly
from ren.reference import evaluate, expected_limbs
from ren.ring import RingSpec, ntt_primes
from tests.strategies import rings

ALIGNS = (64, 128, 256, 4096)


def _round(n: int, granule: int) -> int:
    return -(-max(n, 1) // granule) * granule


# --------------------------------------------------------------------------------------------
# 1. the allocator, against an interval model


class TLSFMachine(RuleBasedStateMachine):
    """Random allocs and frees against a model: ``live`` maps each returned offset to the end of
    the bytes it reserved (the request rounded up to the granule)."""

    def __init__(self) -> None:
        super().__init__()
        self.tlsf: TLSF | None = None

    @initialize(
        granule=st.sampled_from((16, 64)),
        granules=st.integers(1, 300),
        slack=st.integers(0, 63),
    )
    def setup(self, granule: int, granules: int, slack: int) -> None:
        self.granule, self.capacity = granule, granules * granule
        self.tlsf = TLSF(self.capacity + slack % granule, granule)  # rounded down to granules
        assert self.tlsf.capacity == self.capacity
        self.live: dict[int, int] = {}
        self.freed: set[int] = set()  # offsets freed and not reused: freeing them again is an error
        self.high = 0  # the largest end ever reserved

    def largest_free(self) -> int:
        return max((size for _, size, free in self.tlsf.blocks() if free), default=0)

    @rule(data=st.data(), align=st.sampled_from(ALIGNS))
    def alloc(self, data: st.DataObject, align: int) -> None:
        size = data.draw(
            st.one_of(st.integers(0, 3 * self.granule), st.integers(0, self.capacity + 64)),
            label="size",
        )
        need = _round(size, self.granule)
        before, high = self.tlsf.blocks(), self.tlsf.high_water
        fits = need <= self.largest_free()
        try:
            offset = self.tlsf.alloc(size, align)
        except OutOfMemoryError as e:
            assert isinstance(e, RenError)
            assert str(size) in str(e), f"the error does not name the size {size}: {e}"
            # a request no free block can hold fails; one that fits (no alignment to meet) succeeds
            assert not fits or align > self.granule, f"{need} bytes fit, yet: {e}"
            assert self.tlsf.blocks() == before, "a failed alloc changed the blocks"
            assert self.tlsf.high_water == high
            return
        assert fits, f"{need} bytes allocated with no free block that large: {before}"
        assert offset % align == 0, f"offset {offset} is not a multiple of {align}"
        assert offset >= 0 and offset + need <= self.capacity, (offset, need, self.capacity)
        for start, end in self.live.items():
            assert offset + need <= start or end <= offset, (
                f"[{offset}, {offset + need}) overlaps live [{start}, {end})"
            )
        blocks = {off: (size_, free) for off, size_, free in self.tlsf.blocks()}
        assert blocks.get(offset) == (need, False), "the returned block is not exactly the request"
        self.live[offset] = offset + need
        self.freed.discard(offset)
        self.high = max(self.high, offset + need)

    @rule(data=st.data())
    def free(self, data: st.DataObject) -> None:
        if not self.live:
            return
        offset = data.draw(st.sampled_from(sorted(self.live)), label="free")
        self.tlsf.free(offset)
        del self.live[offset]
        self.freed.add(offset)

    @rule(data=st.data())
    def bad_free(self, data: st.DataObject) -> None:
        """A double free, or an offset no alloc returned, is a ValueError and changes nothing."""
        # an offset that is live plus one is not a multiple of the granule, so it is no block
        wrong = st.integers(-64, self.capacity + 64).map(lambda o: o + (o in self.live))
        offset = data.draw(
            st.sampled_from(sorted(self.freed)) if self.freed else wrong, label="bad free"
        )
        before = self.tlsf.blocks()
        with pytest.raises(ValueError, match=str(offset)):
            self.tlsf.free(offset)
        assert self.tlsf.blocks() == before

    @rule(data=st.data())
    def free_all(self, data: st.DataObject) -> None:
        for offset in data.draw(st.permutations(sorted(self.live)), label="order"):
            self.tlsf.free(offset)
            self.freed.add(offset)
        self.live.clear()
        assert self.tlsf.blocks() == [(0, self.capacity, True)]

    @invariant()
    def blocks_tile_the_capacity(self) -> None:
        if self.tlsf is None:
            return
        blocks = self.tlsf.blocks()
        at = 0
        for offset, size, _ in blocks:
            assert offset == at and size > 0 and size % self.granule == 0, blocks
            at += size
        assert at == self.capacity, blocks
        for (_, _, a), (_, _, b) in itertools.pairwise(blocks):
            assert not (a and b), f"two adjacent free blocks were not merged: {blocks}"
        used = {offset: offset + size for offset, size, free in blocks if not free}
        assert used == self.live, "the allocated blocks are not the live allocations"

    @invariant()
    def high_water_is_the_largest_end(self) -> None:
        if self.tlsf is None:
            return
        assert self.tlsf.high_water == self.high
        assert all(end <= self.tlsf.high_water for end in self.live.values())

    def teardown(self) -> None:
        if self.tlsf is None:
            return
        for offset in list(self.live):
            self.tlsf.free(offset)
        assert self.tlsf.blocks() == [(0, self.capacity, True)]


TestTLSFAgainstAModel = TLSFMachine.TestCase
TestTLSFAgainstAModel.settings = settings(max_examples=200, stateful_step_count=80)


def test_tlsf_out_of_memory_names_the_size_and_changes_nothing():
    tlsf = TLSF(64 * 10)
    a = tlsf.alloc(64 * 4)
    tlsf.alloc(64 * 2)
    tlsf.free(a)  # free: [0, 256) and [384, 640); largest 256
    before = tlsf.blocks()
    with pytest.raises(OutOfMemoryError, match="257 bytes") as err:
        tlsf.alloc(257)
    assert isinstance(err.value, RenError)
    assert tlsf.blocks() == before and tlsf.high_water == 384
    assert tlsf.alloc(256) in (0, 384)  # a request that fits still succeeds


@pytest.mark.parametrize(
    "call",
    [
        lambda: TLSF(1024).alloc(-1),
        lambda: TLSF(1024).alloc(64, align=0),
        lambda: TLSF(1024).alloc(64, align=-64),
        lambda: TLSF(1024).alloc(64, align=96),
        lambda: TLSF(1024, granule=0),
        lambda: TLSF(1024, granule=48),
        lambda: TLSF(1024, granule=-64),
        lambda: TLSF(63),  # not one whole granule
        lambda: TLSF(1024).free(0),  # nothing allocated there
        lambda: TLSF(1024).free(-64),
    ],
    ids=[
        "size=-1",
        "align=0",
        "align=-64",
        "align=96",
        "granule=0",
        "granule=48",
        "granule=-64",
        "capacity=63",
        "free-unallocated",
        "free-negative",
    ],
)
def test_tlsf_bad_arguments_are_value_errors(call):
    with pytest.raises(ValueError):
        call()


def test_tlsf_double_free_is_a_value_error():
    tlsf = TLSF(1024)
    a = tlsf.alloc(100)
    tlsf.free(a)
    with pytest.raises(ValueError, match="0"):
        tlsf.free(a)
    assert tlsf.blocks() == [(0, 1024, True)]


def test_tlsf_zero_bytes_take_one_granule():
    tlsf = TLSF(1024)
    assert tlsf.round_size(0) == tlsf.round_size(1) == 64 and tlsf.round_size(65) == 128
    a, b = tlsf.alloc(0), tlsf.alloc(0)
    assert a != b and tlsf.high_water == 128


# --------------------------------------------------------------------------------------------
# 2. holes are reused


@pytest.mark.parametrize("size", [64, 200, 1000, 4160], ids=lambda s: f"size={s}")
@pytest.mark.parametrize("tail", [0, 1, 64], ids=lambda t: f"tail={t}blocks")
def test_tlsf_freed_holes_are_reused(size, tail):
    """16 equal blocks, every other one freed, then 8 allocated again: they land in the holes
    (the same offsets), and the high-water mark does not move. ``tail``: free space left after the
    blocks, in blocks (one block is the holes' size class; 64 are a class of their own)."""
    step = _round(size, 64)
    tlsf = TLSF(step * (16 + tail))
    offsets = [tlsf.alloc(size) for _ in range(16)]
    assert offsets == [i * step for i in range(16)]
    high = tlsf.high_water
    holes = offsets[::2]
    for offset in holes:
        tlsf.free(offset)
    again = [tlsf.alloc(size) for _ in holes]
    assert sorted(again) == holes, "a freed hole of the right size was not reused"
    assert tlsf.high_water == high


def test_tlsf_prefers_a_freed_hole_to_the_untouched_tail():
    """The untouched end of the pool is used only when no freed block fits, so the high-water
    mark (the planner's arena) grows only when it must."""
    tlsf = TLSF(64 * 3)
    a = tlsf.alloc(64)
    tlsf.alloc(64)
    tlsf.free(a)  # free: the hole [0, 64) and the tail [128, 192), one size class
    assert tlsf.alloc(64) == 0
    assert tlsf.high_water == 128


def test_tlsf_aligned_request_fits_a_block_that_starts_aligned():
    tlsf = TLSF(4096)
    assert tlsf.alloc(200, align=4096) == 0
    tlsf = TLSF(8192)
    assert tlsf.alloc(64) == 0 and tlsf.alloc(4096, align=4096) == 4096


# --------------------------------------------------------------------------------------------
# plans: an independent check of a MemoryPlan against its schedule


@dataclass
class Expected:
    """The brute-force facts of a schedule: each buffer's lifetime, and which may be planned."""

    life: dict[int, tuple[Buffer, int, int]]  # id(buffer) -> (buffer, first, last)
    planned: dict[int, tuple[Buffer, int, int]]


def expected_plan(sched: list[ScheduledKernel], outputs: tuple[Buffer, ...]) -> Expected:
    life: dict[int, tuple[Buffer, int, int]] = {}
    for key in {id(b): b for k in sched for b in k.bufs}:
        uses = [i for i, k in enumerate(sched) if any(id(b) == key for b in k.bufs)]
        buf = next(b for b in sched[uses[0]].bufs if id(b) == key)
        life[key] = (buf, min(uses), max(uses))
    keep = {id(b) for b in outputs}
    keep |= {id(k.bufs[0]) for k in sched if k.info.kind == "copy"}
    keep |= {key for key, (b, _, _) in life.items() if b.allocated or b.no_opt}
    return Expected(life, {key: v for key, v in life.items() if key not in keep})


def check_plan(
    sched: list[ScheduledKernel],
    outputs: tuple[Buffer, ...],
    new: list[ScheduledKernel],
    plan: MemoryPlan,
    expected: Expected,
) -> None:
    """Everything a plan promises, recomputed from the schedule (``expected`` is taken before
    ``plan_memory`` ran, while ``allocated`` still says what the inputs are)."""
    # a plain frozen value
    for value in (plan, *plan.devices, *(b for d in plan.devices for b in (*d.buffers, *d.events))):
        assert dataclasses.is_dataclass(value) and value.__dataclass_params__.frozen, value
    assert isinstance(plan.devices, tuple)
    hash(plan)
    assert len(new) == len(sched)
    if not expected.planned:
        assert plan == MemoryPlan() and all(a is b for a, b in zip(new, sched, strict=True))
        return
    devices = sorted({b.device for b, _, _ in expected.planned.values()})
    assert [d.device for d in plan.devices] == devices
    views: dict[int, Buffer] = {}  # id(original) -> its view, the same object in every kernel
    for old, k in zip(sched, new, strict=True):
        assert k.ast is old.ast and k.info == old.info
        for a, b in zip(old.bufs, k.bufs, strict=True):
            if id(a) in expected.planned:
                assert views.setdefault(id(a), b) is b, f"{a!r} has two views"
                assert b.base is not None and (b.device, b.dtype, b.size) == (
                    a.device,
                    a.dtype,
                    a.size,
                )
            else:
                assert b is a, f"{a!r} keeps its identity, yet became {b!r}"
    assert views.keys() == expected.planned.keys()
    for d in plan.devices:
        mine = {key: v for key, v in expected.planned.items() if v[0].device == d.device}
        by_id = {b.buffer_id: b for b in d.buffers}
        assert len(by_id) == len(d.buffers) == len(mine)
        arena = {views[key].base for key in mine}
        assert len(arena) == 1, "one arena per device"
        (arena,) = arena
        assert (arena.device, arena.dtype, arena.nbytes) == (d.device, "u8", d.arena_bytes)
        assert arena.no_opt and not arena.allocated
        for key, (buf, first, last) in mine.items():
            p = by_id[buf.id]
            assert (p.dtype, p.size, p.nbytes) == (buf.dtype, buf.size, buf.nbytes)
            assert (p.first, p.last) == (first, last), f"lifetime of {buf!r}"
            assert views[key].offset == p.offset and p.offset % ALIGN == 0
            assert p.offset >= 0 and p.offset + p.nbytes <= d.arena_bytes, f"{p} leaves the arena"
        bufs = list(d.buffers)
        for i, p in enumerate(bufs):
            for r in bufs[i + 1 :]:
                if p.first <= r.last and r.first <= p.last:
                    assert p.offset + p.nbytes <= r.offset or r.offset + r.nbytes <= p.offset, (
                        f"live at once and overlapping: {p} and {r}"
                    )
        aligned = {b.id: _round(b.nbytes, ALIGN) for b, _, _ in mine.values()}
        lower = max(
            sum(aligned[b.id] for b, f, t in mine.values() if f <= step <= t)
            for step in range(len(sched))
        )
        assert d.lower_bound_bytes == lower
        assert d.unshared_bytes == sum(aligned.values())
        assert lower <= d.arena_bytes <= d.unshared_bytes
        want = [("alloc", p.first, p.buffer_id) for p in bufs]
        want += [("free", p.last, p.buffer_id) for p in bufs]
        got = [(e.kind, e.step, e.buffer_id) for e in d.events]
        assert sorted(got) == sorted(want), "one alloc and one free per planned buffer"
        order = [(e.step, e.kind == "free") for e in d.events]
        assert order == sorted(order), "events by step, allocs before frees"
        for e in d.events:
            assert (e.offset, e.nbytes) == (by_id[e.buffer_id].offset, by_id[e.buffer_id].nbytes)


def plan_and_check(
    sched: list[ScheduledKernel], outputs: tuple[Buffer, ...]
) -> tuple[list[ScheduledKernel], MemoryPlan]:
    expected = expected_plan(sched, outputs)
    new, plan = plan_memory(sched, outputs)
    check_plan(sched, outputs, new, plan, expected)
    again = plan_memory(sched, outputs)[1]
    assert again == plan, "planning the same schedule twice gives a different plan"
    return new, plan


def scheduled(*polys: Poly) -> tuple[list[ScheduledKernel], tuple[Buffer, ...]]:
    """The schedule of ``polys`` and its outputs (the buffers realization keeps)."""
    sched, ctx = schedule(Node(Op.SINK, DType.VOID, tuple(p.node for p in polys)))
    return sched, tuple(base_buffer(n).arg.buffer for n in ctx.becomes_map.values())


# --------------------------------------------------------------------------------------------
# random programs: a description (plain data) that builds the same Polys every time


@dataclass(frozen=True)
class Program:
    ring: RingSpec
    steps: tuple[tuple, ...]
    outputs: tuple[int, ...]


#: Step kinds; the ones that end a fused kernel (so make a temporary) come twice.
KINDS = ("add", "sub", "mul", "neg", "rotate", "view", "scalar", "realize")
KINDS += ("ntt", "intt", "rescale", "contiguous") * 2


@st.composite
def programs(
    draw: st.DrawFn, ns=(2, 4, 8, 16, 32, 64), max_steps: int = 24, devices: bool = False
) -> Program:
    """Leaves (uniform, some in NTT form), then steps over earlier values of the same ring (so
    subexpressions are shared), a realization now and then, and 1-3 outputs. With ``devices``,
    values also move between ``python`` and ``cpu`` (copies; such a program is only scheduled,
    so it has no realizations)."""
    n = draw(st.sampled_from(ns), label="n")
    dtype = draw(st.sampled_from(("u32", "u64")), label="dtype")
    ring = draw(rings(min_n=n, max_n=n, max_limbs=3, dtypes=(dtype,)), label="ring")
    kinds = tuple(k for k in KINDS if k != "realize") + ("to",) * 2 if devices else KINDS
    steps: list[tuple] = []
    kind_of: list[tuple[RingSpec, str]] = []  # each value's ring and device
    for _ in range(draw(st.integers(1, 3), label="leaves")):
        steps.append(("leaf", draw(st.integers(0, 2**32)), draw(st.booleans())))
        kind_of.append((ring, "python"))
    for _ in range(draw(st.integers(3, max_steps), label="steps")):
        kind = draw(st.sampled_from(kinds), label="kind")
        recent = st.integers(max(len(kind_of) - 2, 0), len(kind_of) - 1)  # long chains
        i = draw(st.one_of(recent, st.integers(0, len(kind_of) - 1)), label="operand")
        r, device = kind_of[i]
        if kind in ("add", "sub", "mul"):
            j = draw(st.sampled_from([j for j, s in enumerate(kind_of) if s == kind_of[i]]))
            steps.append((kind, i, j))
        elif kind == "scalar":
            steps.append((kind, i, draw(st.sampled_from(("+", "*", "-"))), draw(st.integers())))
        elif kind == "rotate":
            steps.append((kind, i, draw(st.integers(-n, n))))
        elif kind == "rescale":
            if r.L == 1:
                continue
            steps.append((kind, i))
            r = r.with_moduli(r.moduli[:-1])
        elif kind == "view":
            count = draw(st.integers(1, r.L))
            start = draw(st.integers(0, r.L - count))
            steps.append((kind, i, start, count))
            r = RingSpec(n, r.moduli[start : start + count], r.dtype)
        elif kind == "to":
            device = "cpu" if device == "python" else "python"
            steps.append((kind, i, device))
        else:
            steps.append((kind, i))
        if kind != "realize":
            kind_of.append((r, device))
    last = len(kind_of) - 1
    more = draw(st.lists(st.integers(0, last), max_size=2, unique=True), label="outputs")
    return Program(ring, tuple(steps), tuple(dict.fromkeys((last, *more))))


def build(prog: Program) -> list[Poly]:
    """The program's Polys (running its realizations); returns the outputs."""
    vals: list[Poly] = []
    for step in prog.steps:
        kind, args = step[0], step[1:]
        if kind == "leaf":
            p = Poly.uniform(prog.ring, rng=args[0])
            p = p.ntt() if args[1] else p
        elif kind == "realize":
            vals[args[0]].realize()
            continue
        elif kind in ("add", "sub", "mul"):
            a, b = vals[args[0]], vals[args[1]]
            p = a + b if kind == "add" else a - b if kind == "sub" else a * b
        elif kind == "scalar":
            a, op, c = vals[args[0]], args[1], args[2]
            p = a + c if op == "+" else a * c if op == "*" else c - a
        elif kind == "neg":
            p = -vals[args[0]]
        elif kind == "rotate":
            p = vals[args[0]].rotate(args[1])
        elif kind == "rescale":
            p = vals[args[0]].rescale()
        elif kind == "to":
            p = vals[args[0]].to(args[1])
        elif kind == "view":
            a, start, count = vals[args[0]], args[1], args[2]
            p = a.to_ring(RingSpec(a.ring.n, a.ring.moduli[start : start + count], a.ring.dtype))
        else:  # ntt, intt, contiguous
            p = getattr(vals[args[0]], kind)()
        vals.append(p)
    return [vals[i] for i in prog.outputs]


@dataclass
class Run:
    expected: list[list[int]]  # the reference, per output
    got: list[tuple[list[int], list[list[int]]]]  # tolist() and limbs(), per output
    plans: list[MemoryPlan]
    views: list[Buffer]  # every arena view the realizations used


def realize_program(prog: Program, *, plan: bool, poison: bool, check: bool = True) -> Run:
    """Build and realize ``prog`` (planned or not, poisoned or not), checking every plan made."""
    env = {"REN_NO_PLAN": "0" if plan else "1", "REN_POISON": "1" if poison else "0"}
    env["REN_SCHEDULE_CACHE"] = "0"  # every realization is planned, so every plan is checked
    plans: list[MemoryPlan] = []
    views: list[Buffer] = []
    real = schedule_cache.plan_memory

    def recorder(sched, outputs=None):
        expected = expected_plan(sched, outputs)
        new, memory = real(sched, outputs)
        if check:
            if plan:
                check_plan(sched, outputs, new, memory, expected)
            else:
                assert memory == MemoryPlan() and new is sched
        plans.append(memory)
        views.extend(b for k in new for b in k.bufs if b.base is not None)
        return new, memory

    with (
        mock.patch.dict(os.environ, env),
        mock.patch.object(schedule_cache, "plan_memory", recorder),
    ):
        outs = build(prog)
        want = evaluate(Node(Op.SINK, DType.VOID, tuple(p.node for p in outs)))
        ren.realize(*outs)
        got = [(p.tolist(), p.limbs().tolist()) for p in outs]
        expected = [list(w) for w in want]
    if check:
        for p, value, (_, limbs) in zip(outs, expected, got, strict=True):
            assert limbs == expected_limbs(value, p.ring, p.domain).tolist(), f"limbs of {p}"
    return Run(expected, got, plans, views)


def same_values(prog: Program) -> Run:
    """Realized without a plan and with one (poisoned): the same words, and the reference."""
    free = realize_program(prog, plan=False, poison=False)
    packed = realize_program(prog, plan=True, poison=True)
    assert [g[0] for g in free.got] == free.expected, "unplanned realization is wrong"
    assert packed.got == free.got, "the planned realization differs from the unplanned one"
    assert [g[0] for g in packed.got] == packed.expected
    # poison really ran: every arena view was filled with 0xFF after its last use
    for view in packed.views:
        assert (view.array.view(np.uint8) == 0xFF).all(), f"{view!r} was not poisoned"
    return packed


# --------------------------------------------------------------------------------------------
# 3. plan_memory on real schedules


def _ring(n=16, limbs=3, dtype="u32") -> RingSpec:
    return RingSpec(n, ntt_primes(n, 30 if dtype == "u32" else 50, limbs), dtype)


def test_a_chain_reuses_memory():
    ring = _ring()
    a, b = Poly.uniform(ring, rng=1), Poly.uniform(ring, rng=2)
    x = (a * b).ntt()
    y = ((x * x).intt() + 1).rescale()
    out = (y * y.rotate(1)).ntt().intt()
    _, plan = plan_and_check(*scheduled(out))
    (d,) = plan.devices
    assert d.device == "python"
    assert d.arena_bytes < d.unshared_bytes, d.summary()
    assert {b.offset for b in d.buffers} != {0} and len({b.offset for b in d.buffers}) > 1


def two_device_program() -> list[Poly]:
    ring = _ring()
    a, b = Poly.uniform(ring, rng=1), Poly.uniform(ring, rng=2)
    x = (a * b).ntt()
    y = x.to("cpu")
    z = ((y * y).intt() + 1).ntt()
    w = z.to("python").intt().rescale()
    return [w, (x * x).intt()]


def test_each_device_gets_its_own_arena_and_copies_keep_their_buffers():
    sched, outputs = scheduled(*two_device_program())
    copies = [k.bufs[0] for k in sched if k.info.kind == "copy"]
    assert len(copies) == 2
    _, plan = plan_and_check(sched, outputs)
    assert [d.device for d in plan.devices] == ["cpu", "python"]
    planned = {b.buffer_id for d in plan.devices for b in d.buffers}
    assert not planned & {b.id for b in (*copies, *outputs)}


def test_no_opt_and_allocated_buffers_keep_their_identity():
    ring = _ring()
    a = Poly.uniform(ring, rng=1)
    out = ((a * a).ntt() * 3).intt().rescale()
    sched, outputs = scheduled(out)
    temps = [k.bufs[0] for k in sched if k.bufs[0] not in outputs]
    assert len(temps) >= 2
    temps[0].no_opt = True
    temps[1].ensure_allocated()  # as if it held data already
    new, plan = plan_and_check(sched, outputs)
    planned = {b.buffer_id for b in plan.devices[0].buffers}
    assert temps[0].id not in planned and temps[1].id not in planned
    assert any(temps[0] in k.bufs for k in new) and any(temps[1] in k.bufs for k in new)


def test_default_outputs_are_the_buffers_no_later_kernel_reads():
    ring = _ring()
    a = Poly.uniform(ring, rng=1)
    x = (a * a).ntt()
    sched, _ = scheduled(x.intt(), (x + 1).intt())
    last_read = {}
    for i, k in enumerate(sched):
        for buf in k.bufs[1:]:
            last_read[id(buf)] = i
    outputs = tuple(k.bufs[0] for i, k in enumerate(sched) if last_read.get(id(k.bufs[0]), -1) <= i)
    expected = expected_plan(sched, outputs)
    new, plan = plan_memory(sched)
    check_plan(sched, outputs, new, plan, expected)


def test_nothing_to_plan_and_no_plan_give_the_empty_plan(monkeypatch):
    a = Poly.uniform(_ring(), rng=1)
    sched, outputs = scheduled(a + a)  # one kernel, writing the output
    assert plan_memory(sched, outputs) == (sched, MemoryPlan())
    sched, outputs = scheduled((a * a).ntt().intt() + 1)
    monkeypatch.setenv("REN_NO_PLAN", "1")
    new, plan = plan_memory(sched, outputs)
    assert new is sched and plan == MemoryPlan()
    with pytest.raises(KeyError, match="cpu"):
        plan.device("cpu")


def test_the_plan_is_a_plain_frozen_value():
    _, plan = plan_and_check(*scheduled(*two_device_program()))
    d = plan.device("python")
    assert isinstance(d, DevicePlan) and d is plan.devices[1]
    assert all(isinstance(b, PlannedBuffer) for b in d.buffers)
    assert all(isinstance(e, Event) for e in d.events)
    assert isinstance(d.buffers, tuple) and isinstance(d.events, tuple)
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.arena_bytes = 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.buffers[0].offset = 64
    assert dataclasses.replace(plan) == plan


def test_realize_records_the_plan():
    ring = _ring()
    a = Poly.uniform(ring, rng=1)
    out = ((a * a).ntt() * 3).intt()
    ctx = realize_mod.realize_nodes((out.node,))
    assert isinstance(ctx.memory_plan, MemoryPlan) and ctx.memory_plan.devices


def test_debug_2_prints_one_memory_line_per_device(monkeypatch, capsys):
    sched, outputs = scheduled(*two_device_program())
    monkeypatch.setenv("REN_DEBUG", "2")
    _, plan = plan_memory(sched, outputs)
    lines = [line for line in capsys.readouterr().err.splitlines() if "memory" in line]
    pattern = re.compile(
        r"^\s*memory (\w+): unshared ([\d.]+ \w+) -> arena ([\d.]+ \w+) "
        r"\(lower bound ([\d.]+ \w+), ([\d.]+)x\)$"
    )
    assert len(lines) == len(plan.devices) == 2, lines
    for line, d in zip(lines, plan.devices, strict=True):
        m = pattern.match(line)
        assert m, line
        assert m[1] == d.device
        assert m[2] == f"{d.unshared_bytes} B" and m[3] == f"{d.arena_bytes} B", line
        assert m[4] == f"{d.lower_bound_bytes} B"
        assert float(m[5]) == pytest.approx(d.arena_bytes / d.lower_bound_bytes, abs=0.005)
    monkeypatch.setenv("REN_DEBUG", "1")
    plan_memory(sched, outputs)
    assert "memory" not in capsys.readouterr().err


def test_debug_line_formats_large_sizes():
    d = DevicePlan("python", 3 << 20, 5 << 30, 3 << 19, (), ())
    line = d.summary()
    assert line == "memory python: unshared 5.0 GiB -> arena 3.0 MiB (lower bound 1.5 MiB, 2.00x)"


@settings(max_examples=300)
@given(prog=programs(ns=(2, 8, 64, 1024), max_steps=30, devices=True))
def test_plans_of_random_schedules_check_out(prog):
    note(repr(prog))
    outs = build(prog)
    _, plan = plan_and_check(*scheduled(*outs))
    event(f"{len(plan.devices)} arenas")


# --------------------------------------------------------------------------------------------
# 4. planned and unplanned realizations agree, and equal the reference


@settings(max_examples=600, phases=tuple(p for p in Phase if p is not Phase.explain))
@given(prog=programs())
def test_random_programs_realize_the_same_with_and_without_a_plan(prog):
    note(repr(prog))
    packed = same_values(prog)
    shared = any(d.arena_bytes < d.unshared_bytes for m in packed.plans for d in m.devices)
    event("memory shared" if shared else "planned, nothing shared" if packed.views else "no plan")


def test_a_program_that_reuses_memory_realizes_correctly_poisoned():
    ring = _ring(n=32, limbs=3, dtype="u64")
    prog = Program(
        ring,
        (
            ("leaf", 1, False),
            ("leaf", 2, True),
            ("mul", 0, 0),  # 2
            ("ntt", 2),  # 3
            ("mul", 3, 1),  # 4
            ("intt", 4),  # 5
            ("rescale", 5),  # 6
            ("rotate", 6, 3),  # 7
            ("add", 7, 6),  # 8
            ("ntt", 8),  # 9
            ("view", 9, 1, 1),  # 10
            ("contiguous", 10),  # 11
            ("intt", 9),  # 12
        ),
        (11, 12),
    )
    same_values(prog)
    run = realize_program(prog, plan=True, poison=True)
    (d,) = run.plans[-1].devices
    assert d.arena_bytes < d.unshared_bytes, d.summary()


# --------------------------------------------------------------------------------------------
# 5. the checks fail when the plan is wrong


def _alloc_at_zero(self: TLSF, size: int, align: int = ALIGN) -> int:
    self.high_water = max(self.high_water, self.round_size(size))
    return 0


def _wrong(prog: Program, poison: bool) -> bool:
    """Whether ``prog`` realizes (planned) to something other than the reference."""
    run = realize_program(prog, plan=True, poison=poison, check=False)
    return [g[0] for g in run.got] != run.expected


TEETH = settings(max_examples=200, derandomize=True, database=None, phases=[Phase.generate])


def test_a_planner_that_overlaps_everything_is_caught(monkeypatch):
    monkeypatch.setattr(TLSF, "alloc", _alloc_at_zero)
    monkeypatch.setattr(TLSF, "free", lambda self, offset: None)
    prog = find(programs(), lambda p: _wrong(p, poison=False), settings=TEETH)
    print(prog)
    with pytest.raises(AssertionError):
        same_values(prog)


def _lifetimes_one_kernel_short(real):
    def lifetimes(sched):
        return {k: (b, f, max(f, t - 1)) for k, (b, f, t) in real(sched).items()}

    return lifetimes


def test_a_buffer_freed_one_kernel_early_is_caught_by_poison(monkeypatch):
    """Freed before its last reader ran, a buffer's bytes go to that reader's output. On the
    python backend a kernel computes before it stores, so this aliasing gives right values; only
    poison (the freed region filled with 0xFF after the read) shows the plan is wrong."""
    monkeypatch.setattr(memory_mod, "lifetimes", _lifetimes_one_kernel_short(memory_mod.lifetimes))
    prog = find(
        programs(),
        lambda p: not _wrong(p, poison=False) and _wrong(p, poison=True),
        settings=TEETH,
    )
    print(prog)
    with pytest.raises(AssertionError):
        same_values(prog)


# --------------------------------------------------------------------------------------------
# 6. the memory goal, as a sanity check (the benchmark measures it)


def test_a_50_op_chain_packs_within_its_unshared_size():
    ring = _ring(n=1024, limbs=4, dtype="u64")
    leaves = [Poly.uniform(ring, rng=i) for i in range(4)]
    x = leaves[0]
    for i in range(50):
        other = leaves[i % 4] if x.ring == ring else leaves[i % 4].to_ring(x.ring)
        kind = i % 7
        if kind == 0:
            x = (x * other).ntt()
        elif kind == 1:
            x = x.intt() + other
        elif kind == 2:
            x = x.rotate(i)
        elif kind == 3:
            x = -x * other
        elif kind == 4:
            x = (x - other).ntt()
        elif kind == 5:
            x = x.intt().rescale() if x.ring.L > 2 and i % 3 == 0 else x.intt()
        else:
            x = x * 5 + other
    _, plan = plan_and_check(*scheduled(x))
    (d,) = plan.devices
    print(d.summary())
    assert d.arena_bytes <= d.unshared_bytes
