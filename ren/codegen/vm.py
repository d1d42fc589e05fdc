"""The elementwise machine: one compiled C function that runs any elementwise kernel body.

A fused elementwise kernel is C of its own, built by the compiler (``ren.codegen.c``). The
machine runs the same body without a build of its own: the body, linearized
(``ren.codegen.linearize``), is encoded as a short list of instructions, and one library per word
size (``ren_vm_u64``, ``ren_vm_u32``), built once like any kernel, interprets it. The cpu device
runs a kernel on it while the kernel's own library is being built (``ren.backends.cpu_tiers``).

The machine walks the words in blocks of ``BLOCK`` per limb; for each block it runs every
instruction over the block (a value is a row of ``BLOCK`` words in a register; a ``LOAD`` only
points into its buffer), then stores the last value. The modular helpers are the very text the
fused kernels include (``CRenderer.prelude``), so every word equals the fused kernel's word and
the python backend's; the conformance tests compare them.

An instruction is five ``int32``: ``op, dest, a, b, c``:

=========  ================================================================================
``LOAD``   register ``dest`` points at limb ``i + b`` of buffer ``a`` (no copy)
``GATHER`` ``dest[k] = buffer a[limb i + b][table c[k]]`` (an automorphism's permutation)
``IMM``    every word of ``dest`` is word ``b * L + i`` of buffer ``a`` (the constants argument)
``IMM0``   the same word in coefficient 0, zero elsewhere
``ADD``    ``dest = a + b mod q_i``; ``SUB``, ``MUL`` (Montgomery) the same; ``NEG``: ``-a``
=========  ================================================================================

Registers are reused once their value is dead, so a body of hundreds of values needs a few
dozen rows of ``BLOCK`` words, which stay in the first-level cache.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ren.codegen.c import CRenderer
from ren.codegen.linearize import Program
from ren.ir.node import ConstRowArg, IndexArg
from ren.ir.op import Op
from ren.ring import RingSpec

__all__ = ["BLOCK", "Code", "encode", "vm_name", "vm_source"]

#: Words per block: a register is one row of this many words.
BLOCK = 64

LOAD, GATHER, IMM, IMM0, ADD, SUB, NEG, MUL = range(8)
_OPS = {Op.ADD: ADD, Op.SUB: SUB, Op.NEG: NEG, Op.MUL: MUL}

_SOURCE = """
enum { VM_LOAD, VM_GATHER, VM_IMM, VM_IMM0, VM_ADD, VM_SUB, VM_NEG, VM_MUL };
enum { VM_B = {block} };

/* One limb i of an elementwise body: S holds `regs` rows of VM_B words, P the row of each
   register (a row of S, or a window of a buffer for a LOAD). */
static void {name}_limb(const int32_t *code, int64_t count, int64_t out, int64_t n, int i, int L,
                        word_t *const *bufs, const int64_t *const *tables, const word_t *ring,
                        word_t *S, const word_t **P)
{
    const word_t q = ring[1 + i], qinv = ring[1 + L + i];
    for (int64_t k0 = 0; k0 < n; k0 += VM_B) {
        const int m = n - k0 < VM_B ? (int)(n - k0) : VM_B;
        for (int64_t t = 0; t < count; ++t) {
            const int32_t *c = code + 5 * t;
            word_t *d = S + (size_t)c[1] * VM_B;
            switch (c[0]) {
            case VM_LOAD:
                P[c[1]] = bufs[c[2]] + (size_t)(i + c[3]) * (size_t)n + (size_t)k0;
                continue;
            case VM_GATHER: {
                const word_t *src = bufs[c[2]] + (size_t)(i + c[3]) * (size_t)n;
                const int64_t *perm = tables[c[4]] + k0;
                for (int b = 0; b < m; ++b)
                    d[b] = src[perm[b]];
                break;
            }
            case VM_IMM: {
                const word_t w = bufs[c[2]][(size_t)c[3] * (size_t)L + (size_t)i];
                for (int b = 0; b < m; ++b)
                    d[b] = w;
                break;
            }
            case VM_IMM0: {
                const word_t w = bufs[c[2]][(size_t)c[3] * (size_t)L + (size_t)i];
                for (int b = 0; b < m; ++b)
                    d[b] = 0;
                if (k0 == 0)
                    d[0] = w;
                break;
            }
            case VM_ADD: {
                const word_t *x = P[c[2]], *y = P[c[3]];
                for (int b = 0; b < m; ++b)
                    d[b] = add_mod(x[b], y[b], q);
                break;
            }
            case VM_SUB: {
                const word_t *x = P[c[2]], *y = P[c[3]];
                for (int b = 0; b < m; ++b)
                    d[b] = sub_mod(x[b], y[b], q);
                break;
            }
            case VM_NEG: {
                const word_t *x = P[c[2]];
                for (int b = 0; b < m; ++b)
                    d[b] = neg_mod(x[b], q);
                break;
            }
            default: {  /* VM_MUL */
                const word_t *x = P[c[2]], *y = P[c[3]];
                for (int b = 0; b < m; ++b)
                    d[b] = mont_mul(x[b], y[b], q, qinv);
                break;
            }
            }
            P[c[1]] = d;
        }
        word_t *dst = bufs[0] + (size_t)i * (size_t)n + (size_t)k0;
        const word_t *v = P[out];
        for (int b = 0; b < m; ++b)
            dst[b] = v[b];
    }
}

/* Run `count` instructions of `code` over every limb (ring[0] of them) and word of the output,
   bufs[0]. Returns 0, or 1 when its scratch rows could not be allocated (nothing written then). */
int {name}(const int32_t *code, int64_t count, int64_t regs, int64_t out, int64_t n,
           word_t *const *bufs, const int64_t *const *tables, const word_t *ring)
{
    const int L = (int)ring[0];
    int failed = 0;
#ifdef _OPENMP
#pragma omp parallel reduction(|:failed)
#endif
    {
        word_t *S = malloc((size_t)regs * VM_B * sizeof(word_t));
        const word_t **P = malloc((size_t)regs * sizeof(word_t *));
        failed = S == NULL || P == NULL;
#ifdef _OPENMP
#pragma omp barrier
#pragma omp for
#endif
        for (int i = 0; i < L; ++i)
            if (S != NULL && P != NULL)
                {name}_limb(code, count, out, n, i, L, bufs, tables, ring, S, P);
        free(S);
        free((void *)P);
    }
    return failed;
}
"""


def vm_name(dtype: str) -> str:
    """The machine's entry point for ``dtype`` words: ``ren_vm_u64`` or ``ren_vm_u32``."""
    if dtype not in ("u32", "u64"):
        raise ValueError(f"the elementwise machine runs u32 or u64 words, not {dtype!r}")
    return f"ren_vm_{dtype}"


@functools.cache
def vm_source(dtype: str) -> str:
    """The machine's C source for ``dtype`` words: the fused kernels' helpers, then the loop."""
    name = vm_name(dtype)
    probe = RingSpec(16, (97,), dtype=dtype)  # the prelude depends on the word size only
    head = CRenderer().prelude(probe)
    return (
        f"/* {name}: Ren's elementwise machine (ren.codegen.vm), for every ring of {dtype} words."
        " */\n#include <stdlib.h>\n"
        + head
        + _SOURCE.replace("{name}", name).replace("{block}", str(BLOCK))
    )


@dataclass(frozen=True)
class Code:
    """An encoded body: ``words`` (``int32``, five per instruction), registers, the output's."""

    words: np.ndarray
    regs: int
    out: int

    @property
    def count(self) -> int:
        """How many instructions."""
        return len(self.words) // 5


def encode(prog: Program) -> Code:
    """The machine's instructions for a linearized elementwise body.

    Each value gets a register; a register is free again after the last instruction that reads
    its value (a value computed into it may then reuse it at once: every op reads word ``b`` of
    its operands before it writes word ``b``). A ``LOAD`` takes a register too, but only as a
    pointer.

    Raises:
        ValueError: an instruction the machine does not run (linearize makes none).
    """
    last: dict[int, int] = {}
    for t, ins in enumerate(prog.instrs):
        for s in ins.srcs:
            last[s] = t
    last[prog.out] = len(prog.instrs)
    free: list[int] = []
    regs = 0
    reg: dict[int, int] = {}
    words: list[int] = []
    for t, ins in enumerate(prog.instrs):
        for s in dict.fromkeys(ins.srcs):  # operands read here for the last time: free now
            if last[s] == t:
                free.append(reg[s])
        if free:
            dest = free.pop()
        else:
            dest, regs = regs, regs + 1
        reg[ins.dest] = dest
        arg, slot = ins.arg, ins.slot if ins.slot is not None else 0
        if isinstance(arg, IndexArg):
            if ins.table is None:
                words += [LOAD, dest, slot, int(arg.limb_offset), 0]
            else:
                words += [GATHER, dest, slot, int(arg.limb_offset), prog.tables.index(ins.table)]
        elif isinstance(arg, ConstRowArg):
            op = IMM if arg.layout == "all" else IMM0
            words += [op, dest, slot, int(arg.row), 0]
        elif ins.op in _OPS:
            a = reg[ins.srcs[0]]
            b = reg[ins.srcs[1]] if len(ins.srcs) > 1 else 0
            words += [_OPS[ins.op], dest, a, b, 0]
        else:
            raise ValueError(f"the elementwise machine does not run {ins.op.name}")
        if last.get(ins.dest, -1) < t:  # a value nothing reads (never the output): free at once
            free.append(dest)
    return Code(np.array(words, dtype=np.int32), max(regs, 1), reg[prog.out])
