"""``Renderer``: turns a linearized elementwise kernel into source for one backend.

A renderer says how to write each op (``code_for_op``) and fills three hooks (the prelude of
types and helpers, the signature, the loop over words); what its target can do shows in those
hooks. The loop structure, the value naming and the per-limb constants are common.
``CRenderer`` and ``CUDARenderer`` override only what differs: word types, the kernel prefix,
how the loop over words is spread (a loop, or one thread per word), and launch bounds.

A source holds only Ren's own text, integers and names: every number taken from the kernel's IR
is written by ``c_int`` (an ``int``, or a ``TypeError``) and every name by ``c_name`` (an
identifier), so no IR object, however it was made, puts text of its own into a source.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import ClassVar

from ren.codegen.helpers import c_int, c_name
from ren.codegen.linearize import Instr, Program
from ren.ir.node import ConstRowArg, IndexArg
from ren.ir.op import Op
from ren.ring import RingSpec

__all__ = ["Renderer", "render_named"]


class Renderer(ABC):
    """The base renderer. Subclasses set the class attributes and override the hooks."""

    #: A short name used in kernel names and the compile cache key.
    name = "base"
    #: How each op is written: a function of the operand expressions.
    code_for_op: ClassVar[dict[Op, Callable[..., str]]] = {
        Op.ADD: lambda a, b: f"add_mod({a}, {b}, q)",
        Op.SUB: lambda a, b: f"sub_mod({a}, {b}, q)",
        Op.NEG: lambda a: f"neg_mod({a}, q)",
        Op.MUL: lambda a, b: f"mont_mul({a}, {b}, q, qinv)",
    }

    #: How a pointer parameter is marked not to alias, and how a constant table is declared.
    restrict = "restrict"
    const_table = "static const"
    #: Whether a kernel reads its limb count and moduli from a last argument, ``ring`` (the words
    #: of ``ren.codegen.templates.ring_table``), so that one source serves every ring of one
    #: ``n`` and word size; otherwise they are constants of the source.
    ring_argument = False

    def word(self, ring: RingSpec) -> str:
        """The C type of one word of ``ring``: ``uint32_t`` or ``uint64_t``."""
        return "uint32_t" if ring.dtype == "u32" else "uint64_t"

    def literal(self, value: int, ring: RingSpec) -> str:
        """A word constant, typed (``123u`` or ``123ull``) so no compiler has to guess."""
        return f"{c_int(value)}u" if ring.dtype == "u32" else f"{c_int(value)}ull"

    @abstractmethod
    def prelude(self, ring: RingSpec) -> str:
        """Type definitions and the modular helpers the ``code_for_op`` lines call."""

    @abstractmethod
    def kernel_signature(self, name: str, params: list[str]) -> str:
        """The kernel's declaration line, without the opening brace."""

    @abstractmethod
    def loop(self, ring: RingSpec, body: list[str]) -> list[str]:
        """The lines that run ``body`` for every limb ``i`` and slot ``k``."""

    # --- common ------------------------------------------------------------------------------
    def _words(self, values: Iterable[int], ring: RingSpec) -> str:
        return ", ".join(self.literal(v, ring) for v in values)

    def expr(self, ins: Instr, prog: Program) -> str:
        """The expression that computes ``ins`` for limb ``i`` and slot ``k``.

        A ``LOAD`` reads its buffer (through its permutation table, if any, and from its limb
        window), an ``IMM`` reads its word for limb ``i`` from the kernel's constants argument
        (row ``row``), and every other op is written by ``code_for_op`` on the values of its
        sources.
        """
        ring, arg = prog.ring, ins.arg
        if isinstance(arg, IndexArg):  # a LOAD
            k = f"{c_name(ins.table.name)}[k]" if ins.table is not None else "k"
            row = f"(i + {c_int(arg.limb_offset)})" if arg.limb_offset else "i"
            return f"b{c_int(ins.slot)}[{row} * {c_int(ring.n)} + {k}]"
        if isinstance(arg, ConstRowArg):  # an IMM: the constants argument, row by row
            b = f"b{c_int(ins.slot)}"
            row = f"{c_int(arg.row)} * L" if self.ring_argument else c_int(arg.row * ring.L)
            word = f"{b}[{row} + i]" if arg.row else f"{b}[i]"
            return word if arg.layout == "all" else f"(k == 0 ? {word} : 0)"
        return self.code_for_op[ins.op](*(f"v{c_int(s)}" for s in ins.srcs))

    def render(self, prog: Program, name: str) -> str:
        """The whole source of one elementwise kernel called ``name``."""
        ring = prog.ring
        word = self.word(ring)
        table = self.const_table
        L, n = c_int(ring.L), c_int(ring.n)
        if self.ring_argument:  # L, q and q^-1 from the last argument (ring_table's words)
            consts: list[str] = []
            body = ["const word_t q = ring[1 + i], qinv = ring[1 + L + i];"]
        else:
            consts = [
                f"{table} {word} Q[{L}] = {{{self._words(ring.moduli, ring)}}};",
                f"{table} {word} QINV[{L}] = {{{self._words(qinv_words(ring), ring)}}};",
            ]
            body = [f"const {word} q = Q[i], qinv = QINV[i];"]
        for ins in prog.instrs:
            body.append(f"const {word} v{c_int(ins.dest)} = {self.expr(ins, prog)};")
        body.append(f"b0[i * {n} + k] = v{c_int(prog.out)};")
        r = self.restrict
        params = [f"{word} *{r} b0"]
        params += [f"const {word} *{r} b{s}" for s in range(1, prog.slots)]
        params += [f"const int64_t *{r} {c_name(t.name)}" for t in prog.tables]
        if self.ring_argument:
            params.append(f"const {word} *{r} ring")
        signature = self.kernel_signature(c_name(name), params)
        lines = [self.prelude(ring), *consts, "", signature + " {"]
        if self.ring_argument:
            lines.append("  const int L = (int)ring[0];")
        lines += ["  " + line for line in self.loop(ring, body)]
        lines.append("}")
        return "\n".join(lines) + "\n"


def render_named(renderer: Renderer, prog: Program) -> tuple[str, str]:
    """``(name, source)`` of an elementwise kernel, with a name that is the same in every process.

    The name holds the ring's shape and a hash of the source, so a disk cache of builds hits.
    """
    ring = prog.ring
    draft = renderer.render(prog, "REN_KERNEL")
    digest = hashlib.sha256(draft.encode()).hexdigest()[:10]
    shape = f"n{ring.n}" if renderer.ring_argument else f"n{ring.n}_L{ring.L}"
    name = f"ren_ew_{shape}_{ring.dtype}_{digest}"
    return name, draft.replace("REN_KERNEL", name)


def qinv_words(ring: RingSpec) -> list[int]:
    """``q^-1 mod R`` per modulus (``R = 2^word_bits``)."""
    return [m.q_inv for m in ring.tables().mods]
