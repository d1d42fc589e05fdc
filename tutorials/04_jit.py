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
# # The JIT
#
# Every time you realize a `Poly`, Ren runs its whole pipeline: the scheduler passes turn the
# graph into kernels, the memory planner packs the temporaries into an arena, each kernel is
# prepared for its device, and only then do the kernels run. For a step you call many times on
# fresh values of one shape (a decryption inside a loop, one layer of a homomorphic circuit),
# everything but the last part gives the same answer every time.
#
# `ren.jit` keeps that answer. The first call *captures* a plan (the kernels that ran, bound to
# a planned arena); later calls with arguments of the same kind *replay* it on the new inputs.
# This notebook:
#
# 1. runs a function on polynomials eagerly, and checks it with Python integers;
# 2. wraps it with `ren.jit`: a capture, then replays;
# 3. opens the captured plan: its kernels, its arena, where the inputs go;
# 4. reads the key a plan is filed under;
# 5. lists what captures again (a *retrace*);
# 6. times eager calls against replays;
# 7. feeds an output back, and prunes work that reads no input;
# 8. shows what not to do, and the errors Ren raises;
# 9. checks replays against eager runs, the reference evaluator `ren.reference` and Python
#    integers, on several inputs.
#
# The ring has degree 8 and two tiny moduli so that every number fits on a line. See
# `docs/jit.md` for the whole guide.

# %%
import time

import numpy as np

import ren
import ren.reference
from ren import Poly, RingSpec, ntt_primes
from ren.codegen.compiler import CompileError, find_compiler

ring = RingSpec(8, (17, 97))  # both moduli are 1 (mod 2n = 16): the NTT exists
Q = ring.Q
print(ring, "Q =", Q)

# %% [markdown]
# ## 1. A function on polynomials, run eagerly
#
# `mac` is a multiply-accumulate, `a + b * s`: the shape of a decryption `c0 + c1 * s`. Called
# on `Poly` values it only builds a graph; `tolist()` realizes it (schedule, plan, run) and reads
# the coefficients back.


# %%
def mac(a: Poly, b: Poly, s: Poly) -> Poly:
    return a + b * s


a = Poly.uniform(ring, rng=1)
b = Poly.uniform(ring, rng=2)
s = Poly.uniform(ring, rng=3)

lazy = mac(a, b, s)
print(lazy)  # a graph, not yet a value
eager = lazy.tolist()
print("a + b*s =", eager)

# %% [markdown]
# The oracle: the same product written out with Python integers. In `Z_Q[X]/(X^n + 1)` a
# product is the schoolbook product in which `X^n = -1`, so a term that passes `X^(n-1)` wraps
# around with its sign flipped.


# %%
def negacyclic_mul(x: list[int], y: list[int], modulus: int) -> list[int]:
    n = len(x)
    out = [0] * n
    for i, xi in enumerate(x):
        for j, yj in enumerate(y):
            if i + j < n:
                out[i + j] += xi * yj
            else:
                out[i + j - n] -= xi * yj  # X^n = -1
    return [c % modulus for c in out]


def mac_by_hand(x: list[int], y: list[int], z: list[int], modulus: int) -> list[int]:
    return [(u + v) % modulus for u, v in zip(x, negacyclic_mul(y, z, modulus), strict=True)]


print("by hand =", mac_by_hand(a.tolist(), b.tolist(), s.tolist(), Q))
assert eager == mac_by_hand(a.tolist(), b.tolist(), s.tolist(), Q)

# %% [markdown]
# ## 2. The same function under `ren.jit`
#
# `ren.jit(mac)` (or `@ren.jit` above the `def`) wraps the function. The first call is a miss:
# Ren runs `mac`, realizes what it returns, and records every kernel that ran meanwhile: the
# *capture*. `cache_info()` counts as `functools.lru_cache` does: `hits` are replays, `misses`
# are captures.

# %%
fast_mac = ren.jit(mac)

out = fast_mac(a, b, s)
print(out.tolist() == eager, fast_mac.cache_info())

# %% [markdown]
# The second call has inputs of the same kind (same ring, size, domain, device), so it is a hit:
# Ren does not call `mac`, does not schedule anything, puts the new input buffers into the plan
# and runs its kernels again.
#
# A replay returns the **same** `Poly` objects as the capture, their buffers overwritten with the
# new values. Read what you need (`tolist()`) or copy it before the next call.

# %%
a2 = Poly.uniform(ring, rng=11)
out2 = fast_mac(a2, b, s)
print(out2.tolist() == mac_by_hand(a2.tolist(), b.tolist(), s.tolist(), Q))
print("same object as the first result:", out2 is out)
print(fast_mac.cache_info())

# %% [markdown]
# ## 3. The captured plan
#
# `fast_mac.last` is the plan the latest call ran. It lists its exec units (one per kernel, in
# order), the paths of its inputs in the arguments, and how it replays: `units` (one call per
# kernel, the python device) or `graph` (the whole plan as one compiled function, the cpu
# device; see section 6).

# %%
plan = fast_mac.last
print(plan)
print("inputs:", plan.paths, "| replays so far:", plan.replays)
print(f"capture took {plan.capture_s * 1e3:.1f} ms")

# %% [markdown]
# Each unit writes the buffer of its slot 0 and reads the others. The temporaries (here the
# three NTTs: `a`, `b` and `s` are in coefficient form, and the product needs NTT form) are views
# into one *arena*, a single buffer of bytes the memory planner laid out for the whole plan. The
# input slots are empty in the plan (`None`); `plan.bindings` says which input fills each one at
# a replay. The output has a buffer of its own: it is the buffer `out` reads.


# %%
def show_plan(plan) -> None:
    inputs = {(unit, slot): plan.paths[k] for unit, slot, k in plan.bindings}
    arenas = {}  # by id, in the order they appear
    for i, unit in enumerate(plan.units):
        names = []
        for j, buf in enumerate(unit.bufs):
            if (i, j) in inputs:
                names.append(f"input {inputs[i, j]}")
            elif buf.base is not None:
                arenas[id(buf.base)] = buf.base
                names.append(f"arena[{buf.offset}:{buf.offset + buf.nbytes}]")
            else:
                names.append(f"own buffer #{buf.id}")
        kind = unit.kernel.info.kind
        print(f"  {i}  {kind:<12} writes {names[0]:<16} reads {', '.join(names[1:])}")
    for arena in arenas.values():
        print(f"  arena: {arena.nbytes} bytes")


show_plan(plan)

# %% [markdown]
# In a notebook the jitted function shows the same at a glance: its captures and replays, the
# latest plan's units by family, its inputs and runner, the arena and the picture of the memory
# plan (one column a kernel, one box a buffer, its height its bytes).

# %%
fast_mac

# %% [markdown]
# Each NTT temporary is `L * n = 16` words of 4 bytes. All three are alive when the product
# reads them, so they cannot share bytes: the arena is three of them side by side. In a longer
# plan, temporaries whose lifetimes do not overlap share the same bytes (`docs/memory.md`).
#
# ## 4. What is in the key
#
# A plan is filed under a key built from the arguments. The *values* in the input buffers are
# not in it (that is the point), but everything that changes which kernels run is. `plan.key`
# is a tuple of three parts:

# %%
specs, aliasing, others = plan.key
for spec in specs:
    print(spec)
print("which inputs share a buffer:", aliasing)
print("other arguments:", others)

# %% [markdown]
# Per `Poly` input: its path (`a`, `b`, `s`; inside containers `ct.c0`, `keys['s'][1]`), that it
# holds a buffer, the ring, the buffer size, the word type, the device, the domain, and the limb
# window when it is a view of a larger buffer. Then, for each input, the position of the first
# input with the same buffer (`(0, 1, 2)`: each is its own, none share). Then every argument
# that is not a `Poly`, by type and value. A constant `Poly.const(c, ring)` holds no buffer: its
# spec holds the value `c` instead.
#
# ## 5. Retraces: what captures again
#
# A call whose key is new captures a new plan: a *retrace*. The function keeps up to
# `max_plans` plans (8 by default), so switching between a few kinds of arguments replays each.
# Here is each kind of change, one call at a time:

# %%
wide = RingSpec(8, (17, 97, 113))  # three moduli
fast_mac.cache_clear()


def call(label: str, *args, **kwargs) -> None:
    misses = fast_mac.cache_info().misses
    fast_mac(*args, **kwargs)
    what = "capture" if fast_mac.cache_info().misses > misses else "replay"
    print(f"  {label:<44} {what}")


call("first call", a, b, s)
call("new values, same kind", Poly.uniform(ring, rng=4), b, s)
call("the same, s given by keyword", a, b, s=Poly.uniform(ring, rng=5))
call("a in NTT form", a.ntt().realize(), b, s)
call("inputs in another ring", *(Poly.uniform(wide, rng=k) for k in (1, 2, 3)))
call("s also passed as b: one buffer read twice", a, s, s)
call("b = Poly.const(3, ring)", a, Poly.const(3, ring), s)
call("b = Poly.const(4, ring): another value", a, Poly.const(4, ring), s)
call("b = Poly([4, 0, ...], ring): a buffer", a, Poly([4] + [0] * 7, ring), s)
call("s a view: 2 of the 3 moduli of a wide value", a, b, Poly.uniform(wide, rng=6).to_ring(ring))
print(fast_mac.cache_info())

# %% [markdown]
# Two lessons. A value that changes from call to call belongs in a buffer (`Poly(list, ring)`,
# `Poly.uniform`, an earlier result): `Poly.const(4, ring)` captures once per value, while
# `Poly([4, 0, ...], ring)` replays. And a `Poly` whose domain changes (an NTT-form result fed
# back, see section 7) captures once per domain.
#
# An argument that is not a `Poly` *selects a program*: each value gets a plan, and the same
# value replays it. A rotation amount is the usual one. It must be hashable (an int, a string, a
# tuple); section 8 shows what happens otherwise.


# %%
@ren.jit
def rotate_then_mac(a: Poly, b: Poly, s: Poly, steps: int) -> Poly:
    return mac(a, b, s).rotate(steps)


for steps in (1, 2, 1, 1, 2):
    rotate_then_mac(a, b, s, steps)
    print(f"  steps={steps}  {rotate_then_mac.cache_info()}")
print("key part of steps:", rotate_then_mac.last.key[2])

# %% [markdown]
# ## 6. Eager against replay
#
# A replay skips the Python function, the scheduler and the kernel preparation; it still runs
# every kernel. So the gain is largest where kernels are cheap next to the bookkeeping: small
# rings, and compiled devices. `time.perf_counter` around calls, the median of a few runs
# (timings vary from machine to machine; they are printed, not checked):


# %%
def median_ms(fn, repeats: int = 15) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2] * 1e3


def compare_timings(n: int, device: str) -> None:
    big = RingSpec(n, ntt_primes(n, 30, 3))
    x, y, z = (Poly.uniform(big, rng=k, device=device).realize() for k in (1, 2, 3))
    jitted = ren.jit(mac)
    jitted(x, y, z)  # the capture
    eager_ms = median_ms(lambda: mac(x, y, z).realize())
    replay_ms = median_ms(lambda: jitted(x, y, z))
    print(
        f"  n={n:<5} {device:<7} eager {eager_ms:7.3f} ms   replay {replay_ms:7.3f} ms   "
        f"({eager_ms / replay_ms:5.1f}x, replays with {jitted.last.runner_kind})"
    )


compare_timings(16, "python")
compare_timings(4096, "python")

# %% [markdown]
# On the `python` device the kernels are NumPy calls, so at `n = 4096` they are most of the time
# and the replay saves less. On the `cpu` device (compiled C, which needs a C compiler) the plan
# replays as one C function that calls every kernel in order, one `ctypes` call in all:

# %%
try:
    find_compiler()
    have_cc = True
except CompileError as e:
    have_cc = False
    print("no cpu timings:", e)

if have_cc:
    compare_timings(16, "cpu")
    compare_timings(4096, "cpu")
    cpu_mac = ren.jit(mac)
    cpu_mac(*(Poly.uniform(ring, rng=k, device="cpu") for k in (1, 2, 3)))
    print(cpu_mac.last.runner.source)

# %% [markdown]
# In that C, `F` holds the compiled kernels' entry points and `B` the buffers: the inputs are
# bound into their slots of `B` just before the call, the arena is one of the others, and the
# offsets into it are baked into the source.
#
# ## 7. Feeding an output back, and pruning
#
# A loop that feeds a result back in, `acc = f(acc, ...)`, is safe: when an input is a buffer
# the plan itself writes, the replay copies it first, so no kernel reads a word another kernel of
# the same replay already overwrote. Count the captures: the first `acc` is in coefficient form,
# but `a + b * s` comes back in NTT form, and the domain is in the key, so there are two plans;
# from the third call on, the second one replays, reading its own output.

# %%
fast_mac.cache_clear()
acc = Poly([1, 2, 3, 4, 5, 6, 7, 8], ring)
want = acc.tolist()
for _ in range(4):
    acc = fast_mac(acc, b, s)  # from the third call on, acc is the plan's own output
    want = mac_by_hand(want, b.tolist(), s.tolist(), Q)
    print(acc.tolist() == want, fast_mac.cache_info())

# %% [markdown]
# Work that reads no input gives the same result at every call: a key derived from a fixed seed,
# a table, a mask. By default it is part of the plan and runs at every replay.
# `ren.jit(prune=True)` runs it once, at capture, keeps its results in buffers of their own, and
# leaves it out of the replay:


# %%
def masked(x: Poly) -> Poly:
    key = Poly.uniform(ring, rng=7) * 3 + 1  # reads no input: the same at every call
    return x * key


plain = ren.jit(masked)
pruned = ren.jit(prune=True)(masked)
for seed in (1, 2, 3):
    x = Poly.uniform(ring, rng=seed)
    want = masked(x).tolist()  # eager
    print(plain(x).tolist() == want, pruned(x).tolist() == want)
print("plain: ", plain.last)
print("pruned:", pruned.last)

# %% [markdown]
# The two pruned units are `key * 3 + 1` and its NTT; each replay of `pruned` runs only the NTT
# of `x` and the product.
#
# ## 8. What not to do
#
# The function runs once, at capture. Whatever it decides in Python there is frozen into the
# plan. A branch on a *value* is the classic mistake: Ren cannot see it (reading `x.tolist()`
# runs no kernel, so there is nothing to record), and every replay takes the branch the capture
# took, silently.


# %%
def double_or_triple(x: Poly) -> Poly:
    if x.tolist()[0] > 5:  # decided in Python, once, at capture
        return x * 2
    return x * 3


bad = ren.jit(double_or_triple)
small, large = Poly([1] * 8, ring), Poly([9] * 8, ring)
print("jit, small:", bad(small).tolist(), " eager:", double_or_triple(small).tolist())
print("jit, large:", bad(large).tolist(), " eager:", double_or_triple(large).tolist())

# %% [markdown]
# The replay on `large` multiplied by 3, the branch taken for `small`. The fix is to pass the
# decision as a non-`Poly` argument, which is part of the key: `f(x, double=True)` captures one
# plan per choice, and the caller decides outside the plan. Side effects such as `print`, and
# random samples drawn inside the function, are frozen the same way: they happen at capture
# only, so pass fresh randomness in as a `Poly`.
#
# What Ren *can* see, it refuses with a `ren.JitError` (a `RenError`) that names the function or
# the argument. An argument it cannot put in the key, such as a NumPy array of coefficients
# passed as data (it is not hashable, and its contents could change between calls):


# %%
@ren.jit
def add_coeffs(x: Poly, coeffs) -> Poly:
    return x + Poly(coeffs, ring)


try:
    add_coeffs(a, np.arange(8))
except ren.JitError as e:
    print("JitError:", e)
print(add_coeffs(a, tuple(range(8))).tolist() == [(u + k) % Q for k, u in enumerate(a.tolist())])

# %% [markdown]
# A tuple is hashable, so it works; but each new tuple is a new key, and the values are baked
# into the plan. Data that changes belongs in a `Poly`. Calling one jitted function while
# another is being captured (nested capture) is an error too; the outer capture records every
# kernel anyway, so call a plain function inside instead:


# %%
@ren.jit
def outer(x: Poly) -> Poly:
    return fast_mac(x, b, s) * 2


try:
    outer(a)
except ren.JitError as e:
    print("JitError:", e)

# %% [markdown]
# `fast_mac.__wrapped__` is the plain `mac`, for use inside another jitted function. The other
# errors (no `Poly` among the arguments, none in the result, an input whose buffer was freed)
# are in `docs/jit.md`.
#
# ## 9. Check
#
# A jitted step with a rotation amount and a rescale: `(c0 + c1 * s).rotate(steps).rescale()`
# on the three-moduli ring. For several fresh inputs, the replayed result must equal
#
# - the same function run eagerly, without the JIT;
# - `ren.reference.evaluate`, which computes the lazy graph with Python integers and shares no
#   code with the kernels;
# - the formula written out here with Python integers: the negacyclic product, the automorphism
#   `X -> X^g` with `g = 5^steps mod 2n`, and rescaling by the last modulus `p`: `round(c / p)`
#   of the centered value `c`, ties up.


# %%
def step(c0: Poly, c1: Poly, s: Poly, steps: int) -> Poly:
    return mac(c0, c1, s).rotate(steps).rescale()


def automorphism_by_hand(x: list[int], g: int, modulus: int) -> list[int]:
    n = len(x)
    out = [0] * n
    for i, c in enumerate(x):
        k = i * g % (2 * n)
        if k < n:
            out[k] += c
        else:
            out[k - n] -= c  # X^n = -1
    return [c % modulus for c in out]


def rescale_by_hand(x: list[int], modulus: int, p: int) -> list[int]:
    centered = [c - modulus if c > modulus // 2 else c for c in x]
    return [(2 * c + p) // (2 * p) % (modulus // p) for c in centered]  # floor(c/p + 1/2)


def step_by_hand(c0, c1, s, steps: int) -> list[int]:
    n, Qw, p = wide.n, wide.Q, wide.moduli[-1]
    value = mac_by_hand(c0.tolist(), c1.tolist(), s.tolist(), Qw)
    return rescale_by_hand(automorphism_by_hand(value, pow(5, steps, 2 * n), Qw), Qw, p)


fast_step = ren.jit(step)
for seed in range(6):
    steps = 1 + seed % 2  # two plans: steps = 1 and steps = 2
    c0, c1, sk = (Poly.uniform(wide, rng=10 * seed + k) for k in range(3))
    by_hand = step_by_hand(c0, c1, sk, steps)
    reference = ren.reference.evaluate(step(c0, c1, sk, steps).node)  # the lazy graph
    eager = step(c0, c1, sk, steps).tolist()
    replayed = fast_step(c0, c1, sk, steps).tolist()
    print(f"seed {seed}, steps {steps}: {replayed}")
    assert replayed == eager == reference == by_hand, seed
print(fast_step.cache_info())
assert fast_step.cache_info() == (4, 2, 8, 2)  # 2 captures, then every call replayed
print("all checks passed")
