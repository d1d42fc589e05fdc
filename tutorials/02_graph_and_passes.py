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
# # The lazy graph and the passes
#
# Arithmetic on `Poly` values computes nothing. Each operation adds a node to a graph, and only
# when a value is asked for does Ren turn the graph into kernels and run them. This notebook
# follows one small program through that pipeline:
#
# 1. build the program and print its graph (nothing has run);
# 2. run the scheduler's twelve passes one at a time, as `ren.engine.schedule.schedule` does,
#    and look at what each one changed: the node count, the rules that fired, and selected
#    rewrites before and after;
# 3. after every pass, evaluate the graph with the reference evaluator `ren.reference` (exact
#    Python integers) and check that its value did not change;
# 4. read the kernels off the final graph, run them, and check the result;
# 5. do the same the ordinary way (`realize()`) while `ren.viz.record()` watches, and check the
#    value against the reference once more.
#
# `docs/scheduler.md` describes every pass; `docs/realize.md` the steps around the scheduler.

# %%
from collections import Counter

import ren.viz
from ren import Poly, RingSpec, reference
from ren.engine.realize import make_exec_units, run_exec_units
from ren.engine.schedule import PASSES, kernels_of
from ren.ir.node import Node, base_buffer, toposort
from ren.ir.op import DType, Op
from ren.passes import ScheduleContext

# %% [markdown]
# ## 1. A program, and its lazy graph
#
# Two polynomials over three moduli, and a program that uses most kinds of operation: sums,
# a subtraction of a constant, products, a change back to coefficient form, a rotation (an
# automorphism `X -> X^5`), a rescale (divide by the last modulus and round), a change to the
# ring of the first two moduli, and a Python `sum`, which starts from the integer `0`. The two
# `ren.region` blocks name its halves: they change nothing in what is computed, and the
# trace of section 5 shows each as a box.

# %%
ring = RingSpec(n=8, moduli=(17, 97, 113))
small = RingSpec(n=8, moduli=(17, 97))  # the first two moduli of `ring`
a = Poly([1, 2, 3, 4, 5, 6, 7, 8], ring)
b = Poly([2, 7, -1, 8, -2, 8, 1, -8], ring)

with ren.region("products"):
    x = (a + b) * (a - 1)  # a product: Ren computes it in NTT form
    y = x.intt() * b  # back to coefficients, then another product
with ren.region("finish"):
    out = sum([y.rotate(1).rescale(), 2 * b.to_ring(small)])
print(out, "| realized:", out.realized)

# %% [markdown]
# `out.node` is the root of the graph. Printing it shows one node per line, sources indented
# below their user. A node used twice is printed once with a label (`[0]`) and referred to
# later by `^0`. `BUFFER` nodes are the stored inputs `a` and `b`; `CONST` nodes are constants;
# `AS_RING` says which ring and domain a value is in. Nothing here has been computed.

# %%
print(out.node)

# %% [markdown]
# In a notebook, the value itself draws the same graph (Graphviz): one box a node, an arrow from
# each source to its user. It stays a graph: showing it computes nothing.

# %%
out

# %% [markdown]
# Before scheduling anything, the reference evaluator gives the exact value of the graph: one
# obvious Python-integer function per op (a schoolbook product, `a(X^g)` for the rotation,
# exact rounding for the rescale). This is the value every later step must keep.

# %%
sink = Node(Op.SINK, DType.VOID, (out.node,))  # what realize() hands to the scheduler
(want,) = reference.evaluate(sink)
Q = small.Q
print("reference value:", [v - Q if v > Q // 2 else v for v in want])

# %% [markdown]
# ## 2. The pass list
#
# The scheduler is a loop over the `PASSES` tuple. Each entry is a pass module and the reason it
# sits where it does; the first line of each module's docstring says what it does.

# %%
for step, (module, why) in enumerate(PASSES, start=1):
    name = module.__name__.rsplit(".", 1)[-1]
    print(f"{step:2d} {name:<19} {why}")

# %% [markdown]
# ## 3. Walking the passes
#
# `schedule(sink)` runs `module.run(sink, ctx)` for every pass in order. Here we run the same
# loop by hand and keep every intermediate graph. The `ScheduleContext` is what the passes of
# one realization share: `ctx.record[name]` lists the rewrites a pass made
# (`Rewrite(rule, before, after)`), and `ctx.becomes_map` will say which buffer holds the output.
#
# After each pass we count the nodes, count the rules that fired, and evaluate the new graph
# with the reference evaluator. It reads every graph up to pass 11 (`indexify`): stores, views,
# constants lowered to `IMM`, indexed loads. After pass 12 the work sits inside `KERNEL` nodes,
# which only a backend can run; that graph is checked in section 4 by running it.

# %%
ctx = ScheduleContext(outputs=sink.src)
graphs = {"input": sink}
graph = sink
print(f"{'pass':<22} {'nodes':>9}  value  rules fired")
for step, (module, _why) in enumerate(PASSES, start=1):
    name = module.__name__.rsplit(".", 1)[-1]
    after = module.run(graph, ctx)
    rules = Counter(r.rule for r in ctx.record.get(name, []))
    if name == "kernelize":
        same = "(run)"
    else:
        assert reference.evaluate(after) == (want,), f"pass {name} changed the value"
        same = "same"
    nodes = f"{len(toposort(graph))}->{len(toposort(after))}"
    print(f"{step:2d} {name:<19} {nodes:>9}  {same:<5}  {dict(rules)}")
    graphs[name] = graph = after

# %% [markdown]
# Now a closer look at what the passes did. `ctx.record` keeps each rewrite's `before` and
# `after` graphs, so any one of them can be printed.
#
# **`simplify`** removes work whose result is known. Python's `sum` starts from the integer 0,
# so the graph began with `0 + ...`; the rule `zero_add` (`0 + x -> x`) dropped the zero.


# %%
def head(node: Node, lines: int = 4) -> str:
    """The first lines of a printed graph."""
    return "\n".join([*str(node).splitlines()[:lines], "  ..."])


(r,) = ctx.record["simplify"]
print(r.rule)
print(head(r.before))
print("->")
print(head(r.after, 2))

# %% [markdown]
# **`lower_rotate`** turns the front-end `ROTATE` into the `AUTOMORPHISM` that kernels
# implement (`g = 5`: one slot rotation). **`inject_domains`** then decides where each value is
# computed. A product of two non-constants is computed slot by slot in NTT form, so `NTT` nodes
# appear on its sources; a rescale divides coefficients, so an `INTT` appears below it. The
# product `x.intt() * b` now reads `NTT(INTT(x))`:

# %%
print(graphs["inject_domains"])

# %% [markdown]
# **`fold_domains`** removes that round trip (`ntt(intt(x)) -> x`): the coefficient form of `x`
# that the program asked for along the way is never computed.

# %%
print([r.rule for r in ctx.record["fold_domains"]])
print(graphs["fold_domains"])

# %% [markdown]
# **`bufferize`** decides which values get a buffer of their own, and records why: `output` (a
# requested value), `poly_kernel` (computed by a whole-polynomial kernel: NTT, INTT, rescale),
# `poly_input` (read by one: such kernels read whole buffers, not fused expressions). Every
# `BUFFERIZE` will be one kernel; everything between them fuses.

# %%
print(Counter(r.rule for r in ctx.record["bufferize"]))
print(graphs["bufferize"])

# %% [markdown]
# **`lower_bufferize`** gives each `BUFFERIZE` a real (not yet allocated) `BUFFER`, a `STORE`
# into it, and an `AFTER` that makes readers wait for the store. **`becomes_map`** records which
# buffer will hold each requested output; it changes nothing in the graph.

# %%
print(ctx.record["lower_bufferize"][0].after)
print("the output becomes:")
print(ctx.becomes_map[out.node])

# %% [markdown]
# **`lower_automorphism`** pushes the rotation down through the slot-wise product to the stored
# values it reads, where it becomes a permutation of the words that are loaded.
#
# **`lower_constants`** turns each ring constant into explicit words, `IMM`. As a factor a
# constant is a scalar, the same in every word (`all`): that is the `2` of `2 * b`. Added to a
# coefficient-form value it touches coefficient 0 only, so the rule `coeff_addend` changes the
# `1` of `a - 1` to `first`.

# %%
for r in ctx.record["lower_constants"]:
    print(f"{r.rule:<13} {r.before.op.name:<8} -> {str(r.after).splitlines()[-1].strip()}")

# %% [markdown]
# **`views`** notices that `b.to_ring(small)` keeps the first two of `b`'s three limbs: no
# arithmetic at all, just a window of 16 words at offset 0 of `b`'s buffer.

# %%
print(ctx.record["views"][0].after)

# %% [markdown]
# **`indexify`** turns every read of storage into an indexed `LOAD` (a `gather` load for the
# permuted reads of the rotation), and **`kernelize`** cuts the graph at every `STORE`: each
# becomes a `KERNEL` over numbered buffer slots. The graph shrinks, since the kernel bodies now
# live inside the `KERNEL` nodes.

# %%
print(ctx.record["indexify"][0].after)
print(graphs["kernelize"])

# %% [markdown]
# ## 4. The kernels
#
# `kernels_of(graph)` reads the `KERNEL` nodes in an order where every kernel runs after the
# ones it reads from. Each is a `ScheduledKernel(ast, bufs, info)`; `bufs[0]` is the buffer it
# writes. Below, `a`, `b` and `out` are the inputs' and the output's buffers and `t0, t1, ...`
# the temporaries. Nine kernels: `a + b` and `a - 1` (each computed into a buffer, because an
# NTT reads whole buffers), three NTTs, one elementwise kernel for both products and the
# rotation (as gathered loads), the INTT and the rescale, and a last kernel that adds `2 * b`,
# reading `b`'s buffer through the two-limb window.

# %%
kernels = kernels_of(graph)
out_buffer = base_buffer(ctx.becomes_map[out.node]).arg.buffer
names = {id(base_buffer(p.node).arg.buffer): name for name, p in (("a", a), ("b", b))}
names[id(out_buffer)] = "out"
for k in kernels:  # the temporaries: t0, t1, ... in the order they are written
    names.setdefault(id(k.bufs[0]), f"t{len(names) - 3}")
for i, k in enumerate(kernels):
    written, *read = (names[id(buf)] for buf in k.bufs)
    print(f"{i}  {k.info.name:<24} {written:<3} <- {', '.join(read)}")

# %% [markdown]
# The body of the last kernel: load the rescaled value (slot 1) and the window of `b` (slot 2),
# multiply the second by the constant 2 in every word, add, store into slot 0. The python
# backend interprets this tree with NumPy over all limbs at once. `ren.viz.kernel_source` shows
# what another backend would run; rendering C needs no compiler.

# %%
print(kernels[-1].ast)
c_source = ren.viz.kernel_source(kernels[-1], "cpu").splitlines()
start = next(i for i, line in enumerate(c_source) if line.startswith("void "))
print("\n".join(c_source[start:]))  # the function; constants and helpers come before it

# %% [markdown]
# Run them: `make_exec_units` compiles each kernel for its device (here, NumPy) and binds its
# buffers; `run_exec_units` runs them in order, allocating each buffer just before its first
# use. (This skips the memory planner, which `realize()` runs in between: see the next
# tutorial.) The output's words are read back by their definition with
# `reference.read_words` (Montgomery form, limb-major, in the output's domain).

# %%
run_exec_units(make_exec_units(kernels))
done = ctx.becomes_map[out.node]  # AS_RING(BUFFER): the ring and domain of the words
got = reference.read_words(out_buffer.array, done.arg.ring, done.arg.domain)
print("kernels computed:", [v - Q if v > Q // 2 else v for v in got])
assert got == want

# %% [markdown]
# ## 5. The ordinary way, watched
#
# `out.realize()` does all of the above in one call (and plans memory). `ren.viz.record()`
# watches it and keeps the same facts as plain objects: the graph after each pass, the nodes
# each pass created, the rules fired, the kernels, the memory plan and the exec units.

# %%
with ren.viz.record() as trace:
    out.realize()
(rec,) = trace.realizations
for p in rec.passes:
    print(f"{p.step:2d} {p.name:<19} {len(p.created):3d} new nodes  {p.rule_counts()}")
print([u.name for u in rec.units])

# %% [markdown]
# The trace shows itself as the report's region boxes: one a `ren.region`, with its kernels,
# its time and the bytes it wrote (click a box to open it). `ren.viz.record("name.html")` would
# also write the whole report, every graph and kernel source, beside the notebook.

# %%
trace

# %% [markdown]
# And one pass, before and after: here `inject_domains`, which made the domains explicit (the
# nodes it created have a thick red border). Compare it with the printed graphs of section 3.

# %%
shown = trace.before_after("inject_domains")
assert shown.text.startswith("pass 3 of 12: inject_domains")
shown

# %% [markdown]
# After the realization `out` is repointed to the buffer that holds its value, so reading it
# again runs nothing.

# %%
print(out.node)

# %% [markdown]
# ## Check
#
# The value Ren computed is the reference value of the original graph; the recorded passes
# fired the same rules as our walk (the passes are deterministic); the kernels are the same;
# and the value of the graph was the same after every pass that the reference evaluator reads.

# %%
assert out.tolist() == want
assert rec.input is sink  # nodes are interned: the same graph is the same object
for p in rec.passes:
    ours = Counter(r.rule for r in ctx.record.get(p.name, []))
    assert Counter(dict(p.rule_counts())) == ours, p.name
    if p.name != "kernelize":
        assert reference.evaluate(p.graph) == (want,), p.name
assert [k.info.name for k in rec.kernels] == [k.info.name for k in kernels]
print("all checks passed")
