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
# # Writing a backend
#
# A Ren device is a name and a **backend**: an object with one method,
# `compile(ast, info)`, that returns a runner for one kernel; `runner(bufs)` runs it. That is
# the whole contract (`docs/backends.md`). A compiled backend is four parts: a **renderer**
# (elementwise kernels as source), a **template set** (the NTT, INTT, rescale and basis
# extension kernels), a **compiler** and a **runtime**, joined by the one dispatch of
# `ren.backends.base`. This notebook writes one for a new target, step by step, and checks it:
#
# 1. the smallest backend there is: one that hands every kernel to the NumPy reference, and
#    prints what Ren gives it;
# 2. the words a runner must write: Montgomery form, limb-major;
# 3. elementwise kernels as C, with a `Renderer` subclass;
# 4. the runtime: build the C, call it through `ctypes`, take the NTT and rescale kernels from
#    Ren's C templates; register the device and run a program on it;
# 5. the conformance kit `ren.testing`, from Python;
# 6. a one-character bug in a modular reduction, and the kit's report that finds it;
# 7. a final check against the NumPy backend and the reference evaluator `ren.reference`.
#
# Steps 4 to 6 build C, so they need a C compiler (`cc`, `gcc` or `clang`; `$CC` picks one).
# Without one the notebook says so, and the new device runs its kernels on NumPy instead.

# %%
import ctypes
import hashlib
import re

import numpy as np

import ren.reference
from ren import Poly, RingSpec, ntt_primes, settings
from ren.backends import python as python_backend
from ren.backends.base import dispatch
from ren.backends.cpu import TEMPLATES as C_TEMPLATES
from ren.codegen.compiler import CompileError, compile_cached, find_compiler
from ren.codegen.linearize import linearize
from ren.codegen.renderer import Renderer
from ren.device import devices, register_device
from ren.ir.kernels import Family
from ren.ir.op import Op
from ren.ring import automorphism_ntt_table
from ren.testing import run_conformance, stored_words

ring = RingSpec(8, (97, 113))  # tiny moduli (each 1 mod 2n = 16), so that words are short
print(ring)

# %% [markdown]
# ## 1. The smallest backend
#
# `Spy` satisfies the contract by asking the NumPy backend (`ren.backends.python`, the reference
# every other backend is checked against) for each runner, and keeps what it was given.
# `register_device` makes its name a device: from then on `Poly(..., device="spy")` realizes
# there.


# %%
class Spy:
    """A backend that runs every kernel on the NumPy reference, and records each request."""

    def __init__(self):
        self.requests = []

    def compile(self, ast, info):
        self.requests.append((ast, info))
        return python_backend.compile(ast, info)


spy = Spy()
register_device("spy", spy)
print("devices:", devices())

a = Poly.uniform(ring, rng=1, device="spy")
b = Poly.uniform(ring, rng=2, device="spy")
c = (a * b + 3).rescale()
c

# %% [markdown]
# `c` is a graph on the device `spy`: nothing has asked `spy` for a kernel yet. Reading it runs
# the realization, which asks for one kernel at a time:

# %%
print(c.tolist())

# %% [markdown]
# One `compile` call per kernel. `info` is a `KernelInfo`: `kind` (what the kernel does),
# `ring` and `domain` (of the value written), `device` and a short `name`. `ast` is the kernel
# *body*: always `STORE(SLOT 0, value)`, writing the buffer of slot 0 and reading the others
# through `LOAD`s.

# %%
for ast, info in spy.requests:
    print(f"--- {info.kind}: writes {info.ring.short()} in {info.domain.value} form")
    print(ast)

# %% [markdown]
# The product needs NTT form, so `a` and `b` are transformed first; `a * b + 3` is one fused
# elementwise kernel (`+ 3` in NTT form is `3` in every slot: `IMM row 0 all`, which reads row 0
# of the kernel's *constants*, one more buffer after the others, slot 3 here: the value `3` is
# not in the body); rescale needs coefficient form, so an inverse NTT comes before it.
#
# The two NTT bodies are the same object: a body is made of *slots*, not buffers, and nodes are
# interned, so the same work on other data (or with other constants) has the same body.
# Realizing the program again on new inputs asks for nothing: the schedule cache kept its kernels
# and their runners. With the cache off (`REN_SCHEDULE_CACHE=0`) it asks for the same bodies
# again, so a backend builds each body once and keeps it, in a dict keyed by `ast`.

# %%
first = len(spy.requests)
x = Poly.uniform(ring, rng=5, device="spy")
y = Poly.uniform(ring, rng=6, device="spy")
(x * y + 3).rescale().realize()
print("asked again, the schedule cache on:", len(spy.requests) - first)
with settings.override(SCHEDULE_CACHE=0):
    (x * y + 3).rescale().realize()
again = [ast for ast, _ in spy.requests[first:]]
before = [ast for ast, _ in spy.requests[:first]]
print("same bodies as before:", [new is old for new, old in zip(again, before, strict=True)])

# %% [markdown]
# ## 2. What a runner writes
#
# `runner(bufs)` gets the kernel's `ren.device.Buffer`s in slot order. `buf.array` is a flat
# NumPy array of words (`uint32` or `uint64`, from `ring.dtype`), limb-major: word `i * n + k`
# is slot (or coefficient) `k` modulo `q_i`. Each word is in **Montgomery form**, `x * R mod q_i`
# with `R = 2^32` (u32) or `2^64` (u64), and in `[0, q_i)`. There is exactly one right word for
# each position, so a backend is compared with the reference by `==`, word for word.
#
# `ren.testing.stored_words(p)` shows a value's words as an `(L, n)` array, `p.limbs()` the plain
# residues `x`. For the input `a`, with `R = 2^32`:

# %%
words = stored_words(a)
residues = a.limbs()
R = 1 << ring.word_bits
print("words:   ", words.tolist())
print("residues:", residues.tolist())
print("R mod q: ", [R % q for q in ring.moduli])
for row_words, row_residues, q in zip(words, residues, ring.moduli, strict=True):
    assert [int(w) for w in row_words] == [int(x) * R % q for x in row_residues]

# %% [markdown]
# Kernel families (`info.family`, a `ren.ir.kernels.Family`; `info.kind` is its name) and what
# the body's `value` is. For every family but `elementwise`, `info.params` also says what the
# kernel reads: `source` (the ring of the input, from limb `limb_offset` on), `drop` (the moduli
# a rescale divides by) and `target` (the ring a basis extension writes), so a backend never digs
# them out of the body:
#
# | `info.kind` | `value` |
# |---|---|
# | `elementwise` | a tree of `LOAD`, `IMM` (a constant), `ADD`, `SUB`, `NEG`, `MUL`, per word |
# | `ntt`, `intt` | `NTT(LOAD)`, `INTT(LOAD)` |
# | `rescale` | `RESCALE(LOAD)` |
# | `base_convert` | `TO_RING(LOAD)`, a basis extension |
# | `copy` | `COPY(LOAD)`: the words of a buffer on another device |
#
# ## 3. Elementwise kernels as C
#
# `ren.codegen.linearize.linearize(ast)` flattens an elementwise body into a `Program`: a list
# of instructions `v<d> = op(...)` for the word at limb `i`, slot `k`.

# %%
mul_add = next(ast for ast, info in spy.requests if info.kind == "elementwise")
program = linearize(mul_add)
for ins in program.instrs:
    if ins.op is Op.LOAD:
        what = f"slot {ins.slot}, limb i, word k"
    elif ins.op is Op.IMM:
        what = f"row {ins.arg.row} of the constants (slot {ins.slot}), in {ins.arg.layout} words"
    else:
        what = ", ".join(f"v{s}" for s in ins.srcs)
    print(f"v{ins.dest} = {ins.op.name:<4} {what}")
print(f"slot 0 <- v{program.out}")

# %% [markdown]
# A subclass of `ren.codegen.renderer.Renderer` writes such a program as source. The base class
# writes one line per instruction (`code_for_op` says how: by default `add_mod(a, b, q)`,
# `sub_mod`, `neg_mod`, `mont_mul(a, b, q, qinv)`) and the per-limb constants. A subclass fills
# three hooks: `prelude(ring)` (word types and those four helpers), `kernel_signature(name,
# params)` and `loop(ring, body)` (how every `(i, k)` is visited). `SerialC` is plain serial C:
# two nested loops, no threads. Every helper keeps its result in `[0, q)`, with the bound in a
# comment.

# %%
PRELUDE = """\
#include <stdint.h>
typedef {word} word_t;
typedef {wide} wide_t; /* holds a product of two words */
/* a + b mod q for a, b in [0, q): a + b < 2q fits a word (q < 2^(bits - 2)) */
static inline word_t add_mod(word_t a, word_t b, word_t q) {{
  word_t s = a + b;
  return s >= q ? s - q : s;
}}
static inline word_t sub_mod(word_t a, word_t b, word_t q) {{ return a >= b ? a - b : a + q - b; }}
static inline word_t neg_mod(word_t a, word_t q) {{ return a ? q - a : 0; }}
/* Montgomery: a * b * R^-1 mod q in [0, q), with qinv = q^-1 mod R */
static inline word_t mont_mul(word_t a, word_t b, word_t q, word_t qinv) {{
  wide_t t = (wide_t)a * b;
  word_t m = (word_t)t * qinv; /* t - m q is divisible by R */
  word_t hi = (word_t)(t >> {bits}), mq = (word_t)(((wide_t)m * q) >> {bits});
  return hi >= mq ? hi - mq : hi - mq + q; /* (t - m q) / R in (-q, q), moved to [0, q) */
}}
"""


class SerialC(Renderer):
    """Elementwise kernels as one C function: a loop over limbs i around a loop over words k."""

    name = "serial-c"

    def prelude(self, ring):
        wide = "uint64_t" if ring.dtype == "u32" else "unsigned __int128"
        return PRELUDE.format(word=self.word(ring), wide=wide, bits=ring.word_bits)

    def kernel_signature(self, name, params):
        return f"void {name}({', '.join(params)})"

    def loop(self, ring, body):
        return [
            f"for (int i = 0; i < {ring.L}; i++) {{",
            f"  for (int k = 0; k < {ring.n}; k++) {{",
            *("    " + line for line in body),
            "  }",
            "}",
        ]


source = SerialC().render(program, "mul_add_3")
print(source[source.index("static const") :])  # after the prelude

# %% [markdown]
# `Q` and `QINV` hold the modulus and `q^-1 mod R` of each limb, `IMM2` the Montgomery word of
# the constant 3 per limb; `b1` and `b2` are the buffers of slots 1 and 2. Rendering needs no
# compiler; building does.
#
# ## 4. The runtime
#
# The runtime turns each body into something callable:
#
# - elementwise: render, build with `ren.codegen.compiler.compile_cached` (the system C compiler,
#   cached in memory and on disk by a hash of the source and flags), load with `ctypes`. A body
#   that reads through an automorphism (a rotation in NTT form) also takes a gather table from
#   `linearize`, passed after the buffers;
# - NTT, inverse NTT, rescale, basis extension: `ren.codegen.templates` has C for each, one
#   source per ring, with the twiddle tables it takes. A C target uses them as they are. The
#   kernel may read a window of limbs of a larger buffer (`limb_offset` of the `LOAD`);
# - copy: the words of one host array into another.
#
# The compiler is found as `compile_cached` finds it: `$CC`, then `cc`, `gcc`, `clang`.

# %%
try:
    compiler, version = find_compiler()
    print("C compiler:", compiler, "|", version)
except CompileError as e:
    compiler = None
    print(e)
    print("Without a compiler the device below runs its kernels on NumPy; steps 5 and 6 say so.")

FLAGS = ("-O2", "-shared", "-fPIC")


class Kernel:
    """A built C function, called with the buffers' words in slot order, then ``tables``.

    ``in_offset`` is the first word of slot 1 the kernel reads (a window of limbs).
    """

    def __init__(self, name, source, tables=(), in_offset=0):
        self.name, self.source, self.tables, self.in_offset = name, source, tables, in_offset
        self.lib = ctypes.CDLL(str(compile_cached(source, FLAGS, name=name)))
        self.fn = getattr(self.lib, name)
        self.fn.restype = None

    def __call__(self, bufs):
        pointers = [buf.array.ctypes.data for buf in bufs]
        if self.in_offset:
            pointers[1] += self.in_offset * bufs[1].itemsize
        pointers += [table.ctypes.data for table in self.tables]
        self.fn(*(ctypes.c_void_p(p) for p in pointers))


def copy_words(bufs):
    np.copyto(bufs[0].array, bufs[1].array)


class TinyC:
    """A backend: elementwise kernels rendered by ``renderer``, the others from the templates."""

    def __init__(self, renderer):
        self.renderer = renderer
        self.built = {}  # body -> runner: bodies are interned, so each is built once

    def compile(self, ast, info):
        if ast not in self.built:
            self.built[ast] = self.build(ast, info)
        return self.built[ast]

    def build(self, ast, info):
        if compiler is None and info.family is not Family.COPY:  # no C compiler: run on NumPy
            return python_backend.compile(ast, info)
        # the dispatch every compiled backend shares: by family, to one of the three parts
        return dispatch(
            ast, info, elementwise=self.elementwise, copy=self.copy, template=self.polynomial
        )

    def copy(self, params):
        return copy_words

    def elementwise(self, ast):
        program = linearize(ast)
        draft = self.renderer.render(program, "KERNEL")
        name = f"tiny_{self.renderer.name.replace('-', '_')}_"
        name += hashlib.sha256(draft.encode()).hexdigest()[:12]  # one name per source
        tables = tuple(
            np.ascontiguousarray(automorphism_ntt_table(t.n, t.g)) for t in program.tables
        )
        return Kernel(name, draft.replace("KERNEL", name), tables)

    def polynomial(self, info):
        # the template set: Ren's C templates, picked by family (`ren.backends.base.Templates`)
        kernel, tables = C_TEMPLATES.template(info)
        prm = info.params  # the ring it reads, from limb `limb_offset` on
        return Kernel(kernel.name, kernel.source, tuple(tables), prm.limb_offset * prm.source.n)


tiny = TinyC(SerialC())
register_device("tinyc", tiny)

# %% [markdown]
# `tinyc` is now a device like the others. A program on it: two products, a constant, a
# rotation (a gather inside the fused kernel), a rescale. Its result should be the same words as
# the NumPy backend's, from the same inputs:

# %%
a = Poly.uniform(ring, rng=1, device="tinyc")
b = Poly.uniform(ring, rng=2, device="tinyc")
c = ((a * b + 3).rotate(1) * a).rescale()
same = ((a.to("python") * b.to("python") + 3).rotate(1) * a.to("python")).rescale()
print(c.device, c.tolist())
print("python", same.tolist())
print("same words:", np.array_equal(stored_words(c), stored_words(same)))

print("built:")
for runner in tiny.built.values():
    print(" ", runner.name if isinstance(runner, Kernel) else runner.__name__)

# %% [markdown]
# The rotation did not get a kernel of its own: in NTT form it is a permutation of the slots, so
# the fused kernel reads its inputs through a gather table, `perm_g5` (`X -> X^5`), passed after
# the buffers:

# %%
if compiler is not None:
    fused = next(r for r in tiny.built.values() if isinstance(r, Kernel) and "perm_g" in r.source)
    print(fused.source[fused.source.index("void ") :])
    print("perm_g5 =", fused.tables[0].tolist())

# %% [markdown]
# ## 5. The conformance kit
#
# `python -m ren.testing --import MODULE --device NAME` checks a device against the NumPy
# backend; `ren.testing.run_conformance` is the same from Python. Each *case* builds one small
# program twice from the same seeded inputs, on the device and on `python`, and compares every
# output word by word. Inputs are made on `python` and copied to the device, so a case runs on
# the device only the kernels of its own *family* and the copy.
#
# `quick=True` runs every family on two small rings (n = 8 with 30-bit moduli, n = 64 with 60-bit
# ones; the edge family adds 62-bit moduli, the largest a u64 ring allows). The first run spends
# most of its time in the C compiler; builds are cached, so the next is faster.

# %%
report = run_conformance("tinyc", quick=True)
print(report.table())

# %% [markdown]
# In a notebook the report shows itself as a table:

# %%
report

# %% [markdown]
# `report.ok` says whether all passed; `report.families` has the counts, `report.failures` the
# failed cases, `report.to_json()` everything. Without `quick` the suite runs about a thousand
# cases, on rings up to n = 4096: run it from the command line before trusting a backend.
#
# ## 6. A bug, and the report that finds it
#
# Change one character: `add_mod` subtracts `q` when `s > q` instead of `s >= q`. Its result is
# wrong only when `a + b` is exactly `q`, where it leaves the word `q` instead of 0: a word
# outside `[0, q)`.

# %%
RIGHT = "return s >= q ? s - q : s;"
WRONG = "return s > q ? s - q : s;"


class OffByOne(SerialC):
    """SerialC with the reduction of add_mod off by one."""

    name = "off-by-one"

    def prelude(self, ring):
        return super().prelude(ring).replace(RIGHT, WRONG)


register_device("tinyc_bad", TinyC(OffByOne()))

# %% [markdown]
# Random inputs almost never hit it: two uniform words add up to exactly `q` with a probability
# of about `1/q` per word, at most `10^-9` with the kit's 30- to 62-bit moduli. The `edge`
# family builds such inputs on purpose (all ones plus `Q - 1`, `q//2` plus `(q+1)/2`, ...).
# The elementwise and edge families:

# %%
if compiler is None:
    broken = None
    print("skipped: the bug is in C, and there is no C compiler to build it")
else:
    broken = run_conformance("tinyc_bad", quick=True, families=["elementwise", "edge"])
    print(broken.table().split("\n\n[", 1)[0])  # the counts; the failures follow in the table
    for failure in broken.failures[:2]:  # each a CaseResult
        print(f"\n[{failure.family}] {failure.name} ({failure.ring})")
        print(failure.message)
    print(f"\n... and {len(broken.failures) - 2} more")

# %% [markdown]
# Every elementwise case (uniform random inputs) passes; the edge cases fail. Each failure
# names the case (`[edge] ones`, its ring), the output that differs (`e+f`), its first wrong
# word (limb, slot, the modulus), the word computed and the word expected: here always `q` and
# `0`, the sum the `>` left unreduced. The line after it comes from running the case again
# with `REN_VALIDATE=1`, which runs every kernel of the device again on NumPy and stops at the
# first that differs: the elementwise kernel, where the bug is. (`REN_VALIDATE=1` works on your
# own programs too.)
#
# ## 7. Check
#
# The right backend, on a program with every kernel kind (NTT, inverse NTT, a fused elementwise
# kernel with a rotation, rescale, basis extension to more moduli), on a u32 and a u64 ring,
# for several seeds, must give:
#
# - the same words as the NumPy backend, from the same inputs;
# - the values of `ren.reference.evaluate`, which computes the program's graph with Python
#   integers and shares no code with either backend.


# %%
def program_on(device, ring, seed):
    a = Poly.uniform(ring, rng=seed, device=device)
    b = Poly.uniform(ring, rng=seed + 1, device=device)
    wider = RingSpec(ring.n, ring.moduli + ntt_primes(ring.n, 28, 1), ring.dtype)
    return ((a * b - 7).rotate(3) * a + b).rescale().to_ring(wider)


rings = [RingSpec(16, (97, 193, 353)), RingSpec(16, ntt_primes(16, 60, 3))]
for check_ring in rings:
    for seed in (1, 2, 3):
        want = program_on("python", check_ring, seed)
        reference = ren.reference.evaluate(want.node)  # the lazy graph, before it runs
        got = program_on("tinyc", check_ring, seed)
        assert got.device == "tinyc"
        assert np.array_equal(stored_words(got), stored_words(want)), (check_ring, seed)
        assert got.tolist() == want.tolist() == reference, (check_ring, seed)
    print(f"{check_ring.short()}: 3 seeds agree with the NumPy backend and the reference")

assert report.ok, report.table()
if broken is not None:
    assert not broken.ok
    assert broken.families["elementwise"].failed == 0  # random values miss the bug
    assert {f.family for f in broken.failures} == {"edge"}
    for failure in broken.failures:  # every first wrong word is the modulus, left unreduced
        q, got_word = re.search(r"q=(\d+)\): got word (\d+), expected 0;", failure.message).groups()
        assert q == got_word, failure.message
print("all checks passed")

# %% [markdown]
# ## Other compilers' programs
#
# Whatever builds the graph, the backend runs it. The programs Google's HEIR compiler lowers to
# CKKS, BGV or BFV run on Ren op by op, each op a region of the report, checked against the same
# program in cleartext: [Running HEIR programs on Ren](../guides/heir.md).
