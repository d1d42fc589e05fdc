# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Memory planning
#
# Every kernel Ren runs writes one buffer, and most of those buffers are *temporaries*: an NTT
# form that one product reads, a sum that one inverse NTT reads, and then nothing ever again.
# The memory planner (`ren.engine.memory`) packs all the temporaries of a realization into one
# arena, so that temporaries never needed at the same time share the same bytes. This notebook:
#
# 1. schedules a small program and works out by hand when each buffer is alive;
# 2. computes by hand the memory without sharing and the lower bound that no plan can beat;
# 3. runs the planner, reads the plan (a plain value), and replays its allocator by hand;
# 4. draws the plan (`ren.viz.plan_text`, `ren.viz.plan_svg`);
# 5. checks that no two buffers alive at the same time overlap, and that the planned kernels
#    compute the same values as the reference evaluator, with and without the plan.
#
# `docs/memory.md` describes the planner in full.

# %%
import os

import numpy as np

import ren.viz
from ren import Poly, RingSpec, ntt_primes, reference
from ren.engine.memory import ALIGN, TLSF, MemoryPlan, plan_memory
from ren.engine.realize import make_exec_units, run_exec_units
from ren.engine.schedule import schedule
from ren.ir.node import Node, base_buffer
from ren.ir.op import DType, Op

# %% [markdown]
# ## 1. A program and its kernels
#
# Three random polynomials over three 20-bit moduli with `n = 16`. Each product is followed by
# a rescale, as in a CKKS circuit, and `u` is used twice, once rotated.

# %%
ring = RingSpec(16, ntt_primes(16, 20, 3))
rng = np.random.default_rng(7)
x, y, z = (Poly.uniform(ring, rng) for _ in range(3))

u = (x * y).rescale()
v = (y * z + x).rescale()
out = (u * v + u.rotate(1)).rescale()
print(ring)
print(out.ring, out.domain)

# %% [markdown]
# The reference value, for the checks at the end: exact Python integers, computed from the
# graph before anything runs.

# %%
want = reference.evaluate(out.node)

# %% [markdown]
# `schedule` turns the graph into kernels without running or allocating anything (see the
# previous tutorial). Each kernel writes `bufs[0]` and reads the rest. We name the inputs `x`,
# `y`, `z`, the output `out`, and the temporaries `b0, b1, ...` in the order they are written
# (the names `ren.viz.plan_text` uses below).

# %%
sink = Node(Op.SINK, DType.VOID, (out.node,))
kernels, ctx = schedule(sink)
out_buffer = base_buffer(ctx.becomes_map[out.node]).arg.buffer

names = {id(base_buffer(p.node).arg.buffer): s for s, p in (("x", x), ("y", y), ("z", z))}
names[id(out_buffer)] = "out"
for k in kernels:
    names.setdefault(id(k.bufs[0]), f"b{len(names) - 4}")

for i, k in enumerate(kernels):
    written, *read = (names[id(buf)] for buf in k.bufs)
    print(f"{i:2d}  {k.info.name:<23} {written:<3} <- {', '.join(read)}")

# %% [markdown]
# ## 2. Lifetimes
#
# Number the kernels in the order they run. A buffer is alive from the first kernel that
# touches it (for a temporary, the one that writes it) to the last kernel that reads it. Inputs
# and the output are not planned: their data exist before the schedule runs, or are read after
# it. Everything else is a temporary.

# %%
first, last, size = {}, {}, {}
for i, k in enumerate(kernels):
    for buf in k.bufs:
        first.setdefault(names[id(buf)], i)
        last[names[id(buf)]] = i
        size[names[id(buf)]] = buf.nbytes
temps = [name for name in first if name.startswith("b")]

print(f"{'':4} {'bytes':>5}  kernel " + "".join(f"{i % 10}" for i in range(len(kernels))))
for name in temps:
    row = "".join("#" if first[name] <= i <= last[name] else "." for i in range(len(kernels)))
    print(f"{name:4} {size[name]:>5}         {row}")

# %% [markdown]
# Three limbs of 16 words of 4 bytes are 192 bytes; after one rescale, 128. Most temporaries
# live for two kernels (written, then read once). `b0` and `b1`, the NTT forms of `x` and `y`,
# live long: the NTT of `y` is shared by both products, and the NTT of `x` is reused for the
# `+ x` of the second one. `b5`, the NTT form of `u`, lives until the last product.
#
# Two numbers follow from the lifetimes alone. Without sharing, each temporary takes its own
# bytes, each rounded up to whole 64-byte granules (`ALIGN`, a cache line). And while kernel
# `i` runs, every temporary alive at `i` is needed at once: the largest such total is a
# **lower bound** for any arena.


# %%
def aligned(nbytes: int) -> int:
    """Bytes a buffer takes in the arena: whole ALIGN granules."""
    return -(-nbytes // ALIGN) * ALIGN


unshared = sum(aligned(size[t]) for t in temps)
steps = range(len(kernels))
live = [sum(aligned(size[t]) for t in temps if first[t] <= i <= last[t]) for i in steps]
lower_bound = max(live)
print("live bytes while each kernel runs:", live)
peak = live.index(lower_bound)
print(f"unshared: {unshared} bytes, lower bound: {lower_bound} bytes (at kernel {peak})")

# %% [markdown]
# ## 3. The plan
#
# `plan_memory(kernels, outputs)` finds the same lifetimes, then *simulates* an allocator over
# the kernels in order: before kernel `i` runs, the temporaries it writes first are allocated;
# after it ran, those it was the last to read are freed. The offsets it got become the plan.
# The allocator is TLSF (two-level segregated fit): free blocks are kept in lists by size class,
# a request takes a free block of its own class if one fits (so a hole of exactly the right size
# is reused) or else one from the next class up, the block is split, and freed blocks merge with
# free neighbours. The arena is the highest offset ever used.
#
# It returns the kernels with every temporary replaced by a view of the arena, and a
# `MemoryPlan`: one `DevicePlan` per device, a plain frozen value.

# %%
planned, plan = plan_memory(kernels, outputs=(out_buffer,))
arena = plan.device("python")
print(arena.summary())
print(
    "arena:",
    arena.arena_bytes,
    "| lower bound:",
    arena.lower_bound_bytes,
    "| unshared:",
    arena.unshared_bytes,
)
assert (arena.unshared_bytes, arena.lower_bound_bytes) == (unshared, lower_bound)

# %% [markdown]
# `arena.buffers` gives each temporary's place and lifetime (`PlannedBuffer`), in the order of
# first use, so the `i`-th is our `b{i}`. `arena.events` is the simulation step by step.

# %%
placed = dict(zip(temps, arena.buffers, strict=True))
print("name  offset  bytes  first  last")
for name, p in placed.items():
    assert (p.first, p.last, p.nbytes) == (first[name], last[name], size[name])
    print(f"{name:4} {p.offset:7d} {p.nbytes:6d} {p.first:6d} {p.last:5d}")

by_id = {p.buffer_id: name for name, p in placed.items()}
for e in arena.events[:8]:
    where = f"[{e.offset}, {e.offset + e.nbytes})"
    print(f"kernel {e.step:2d}: {e.kind:<5} {by_id[e.buffer_id]:<3} {where}")
print("...")

# %% [markdown]
# The `TLSF` class can be driven by hand. Replaying the same requests in the same order (the
# largest first when several start at the same kernel; frees after the kernel) gives the same
# offsets. `blocks()` lists the blocks as `(offset, size, free)`; we keep the list just before
# the request of kernel 7, where the most bytes are live.

# %%
tlsf = TLSF(unshared)
offsets, blocks_at_peak = {}, None
for i in steps:
    for t in sorted((t for t in temps if first[t] == i), key=lambda t: -size[t]):
        if i == peak:
            blocks_at_peak = tlsf.blocks()
        offsets[t] = tlsf.alloc(size[t])
    for t in (t for t in temps if last[t] == i):
        tlsf.free(offsets[t])
print("offsets by hand:", offsets)
print("arena by hand:", tlsf.high_water, "bytes; at the end:", tlsf.blocks())
print(f"blocks before kernel {peak}'s request:", blocks_at_peak)
assert offsets == {name: p.offset for name, p in placed.items()}
assert tlsf.high_water == arena.arena_bytes

# %% [markdown]
# The arena (1024 bytes) is larger than the lower bound (896): the free bytes were not in one
# piece when a request came. This is *fragmentation*. Before kernel 7, `b7` needs 192
# contiguous bytes, but the only hole is the 128 bytes at offset 384 that `b4` left behind, with
# the long-lived `b5` right after it. So `b7` goes after everything else, at 832, and the arena
# grows by 128 bytes past the bound. The planner reports this ratio (`1.14x` above); on larger
# programs `benchmarks/memory.py` measures it.

# %% [markdown]
# The rewritten kernels read and write views of one arena buffer: same kernel bodies, other
# buffers bound to their slots. Inputs and the output keep their own buffers.

# %%
for i, k in enumerate(planned):
    where = [
        f"arena[{buf.offset}:{buf.offset + buf.nbytes}]" if buf.base is not None else names[id(buf)]
        for buf in k.bufs
    ]
    print(f"{i:2d}  {k.info.name:<23} {where[0]:<15} <- {', '.join(where[1:])}")

# %% [markdown]
# ## 4. Pictures
#
# `ren.viz.plan_text` draws the plan in a terminal: kernels across, arena offset down, one
# character per cell naming the buffer that occupies it, `.` for free bytes, `<` at the lower
# bound. Two buffers drawn in the same rows share those bytes at different times.

# %%
print(ren.viz.plan_text(arena))

# %% [markdown]
# `ren.viz.plan_svg` draws the same as a self-contained SVG picture (a tooltip on each buffer
# and kernel), for a browser or a report: write it to a file with
# `Path("plan.svg").write_text(svg)`. `python -m ren.viz memory my_program.py` writes the
# pictures of every realization of a script.

# %%
svg = ren.viz.plan_svg(arena, [k.info.name for k in kernels], title="u * v + rotate(u)")
print(svg.splitlines()[1])
print(len(svg), "characters of SVG,", svg.count('class="buffer"'), "buffers drawn")

# %% [markdown]
# In a notebook, `Display` shows the picture itself (hover a buffer for its name, bytes and
# lifetime):

# %%
from ren.display import Display

Display(svg, ren.viz.plan_text(arena))

# %% [markdown]
# ## 5. Checks
#
# **No overlap.** Recompute from the plan alone: any two temporaries whose lifetimes share a
# kernel must have disjoint byte ranges, every range lies inside the arena, and every offset
# is a multiple of `ALIGN`. Then replay the event list and check the same at every step.

# %%
bufs = arena.buffers
for i, p in enumerate(bufs):
    assert p.offset % ALIGN == 0 and p.offset + p.nbytes <= arena.arena_bytes
    for q in bufs[i + 1 :]:
        alive_together = p.first <= q.last and q.first <= p.last
        disjoint = (
            p.offset + aligned(p.nbytes) <= q.offset or q.offset + aligned(q.nbytes) <= p.offset
        )
        assert disjoint or not alive_together, (p, q)

now = {}  # buffer id -> (start, end) of the bytes it holds now
for e in arena.events:
    if e.kind == "alloc":
        start, end = e.offset, e.offset + aligned(e.nbytes)
        assert all(end <= s or e2 <= start for s, e2 in now.values()), e
        now[e.buffer_id] = (start, end)
    else:
        del now[e.buffer_id]
assert not now
print("no two live buffers overlap")

# %% [markdown]
# **Same values.** Run the planned kernels with *poison* on: right after the last kernel that
# uses a view, its bytes are overwritten with `0xFF` (no valid residue is all ones), so a kernel
# that read bytes already given to another buffer would compute garbage. Read the output's
# words by their definition and compare with the reference value.

# %%
run_exec_units(make_exec_units(planned), poison=True)
done = ctx.becomes_map[out.node]
planned_words = out_buffer.array.copy()
got = reference.read_words(planned_words, done.arg.ring, done.arg.domain)
assert got == want
print("planned run == reference:", got[:4], "...")

# %% [markdown]
# **Without a plan.** `REN_NO_PLAN=1` turns the planner off: `plan_memory` returns the kernels
# unchanged and an empty `MemoryPlan`, so every temporary keeps a buffer of its own. It is the
# switch to flip when a wrong result is suspected to come from the planner. The words of the
# output are the same, bit for bit.

# %%
os.environ["REN_NO_PLAN"] = "1"
try:
    unplanned, no_plan = plan_memory(kernels, outputs=(out_buffer,))
finally:
    del os.environ["REN_NO_PLAN"]
print(no_plan, "| kernels unchanged:", unplanned is kernels)
assert no_plan == MemoryPlan() and unplanned is kernels
run_exec_units(make_exec_units(unplanned))
assert np.array_equal(out_buffer.array, planned_words)

# %% [markdown]
# **The ordinary way.** `realize()` schedules, plans and runs in one call; `ren.viz.record()`
# keeps its plan. It is the same plan (buffer ids aside), and the value is the reference value.

# %%
with ren.viz.record() as trace:
    out.realize()
(rec,) = trace.realizations
recorded = rec.plan.device("python")
print(recorded.summary())


def shape(plan_of_device):
    """A device plan without buffer ids: sizes, offsets, lifetimes."""
    return [(p.nbytes, p.offset, p.first, p.last) for p in plan_of_device.buffers]


assert shape(recorded) == shape(arena) and recorded.arena_bytes == arena.arena_bytes
assert out.tolist() == want
print("all checks passed")

# %% [markdown]
# The recorded plan as a notebook shows it, `trace.memory()`: the arena's numbers over its
# picture (the compact drawing, light enough for the plan of a bootstrap).

# %%
trace.memory()
