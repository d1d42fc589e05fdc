"""The step-through realization debugger: walk one realization pass by pass and unit by unit.

A realization (``docs/realize.md``) schedules a graph through the twelve passes, plans memory,
builds exec units and runs them. The debugger shows each of those steps as it really happened:
the passes' rewrites are the ones the scheduler recorded (``ren.viz.record``), the kernels and the
memory plan are the realization's own, and the units run through ``Realization.run`` one batch at
a time, so the buffers shown are the real ones at that point. Nothing is scheduled or compiled
differently from a normal ``realize``.

Three ways in:

* ``Stepper(*values)``: the programmatic stepper, for notebooks and tests. Every method returns a
  screen (a string)::

      st = Stepper(c)              # c: a Poly (or a ckks.Ciphertext) not realized yet
      print(st.step())             # the first pass: rules fired, nodes created, the graph after
      print(st.kernels())
      print(st.run(1))             # runs exec unit 0
      print(st.buffer(0, "limbs")) # what kernel 0 wrote
      st.finish()                  # runs the rest; c is realized exactly as realize() does

* ``debug(*values)``: the same steps as an interactive prompt (``(ren)``; ``help`` lists the
  commands).
* ``python -m ren.viz debug SCRIPT.py`` (``main``): runs a script and stops at its first
  realization (``--skip N`` lets ``N`` run first, ``--all`` stops at every one); when the prompt is
  left, the rest of the units run and the script goes on.

For CKKS, ``watch(ciphertext, context, expected)`` registers a ciphertext and its plaintext shadow
(a NumPy array of the slots it should hold); once the kernels writing its parts ran, the ``slots``
command decrypts the written buffers (with the context's secret key) and shows the first slots and
the precision in bits against the shadow.
"""

from __future__ import annotations

import cmd
import contextlib
import dataclasses
import os
import re
import runpy
import sys
import traceback
import weakref
from collections import Counter
from collections.abc import Iterator
from types import FrameType
from typing import Any, TextIO

import numpy as np

import ren
from ren.device import Buffer, canonical_device
from ren.engine.memory import DevicePlan
from ren.engine.observe import OBSERVERS, observing
from ren.engine.realize import ExecUnit, Realization, uncaptured
from ren.engine.schedule import PASSES
from ren.errors import RenError
from ren.ir.facts import facts
from ren.ir.node import Node, RingArg
from ren.ir.op import Op
from ren.ir.rewrite import Rewrite
from ren.poly import Poly, prepare_realize
from ren.repoint import stored
from ren.ring import Domain, RingSpec
from ren.ring import arith as rk
from ren.viz.trace import RealizationRecord, Trace, kernel_source, record

__all__ = ["Debugger", "Stepper", "debug", "main", "watch"]

#: Lines of a graph shown by ``step`` / ``show_pass`` before it is cut (``graph N`` shows all).
GRAPH_LINES = 40

#: Why each pass sits where it does, by pass name (from ``ren.engine.schedule.PASSES``).
_WHY = {module.__name__.rsplit(".", 1)[-1]: why for module, why in PASSES}

_HELP = """\
commands (a name in brackets is optional; aliases after the slash):
  passes                   the passes, with the rules each fired and its time; '->' marks the cursor
  step / s                 the next pass and what it changed; after the last pass, run one unit
  pass N                   go to pass N (0: the input graph): rules fired, nodes created, graph
  graph [N]                the whole graph after pass N (default: the cursor)
  kernels / k              the kernels in execution order: kind, device, buffers, whether it ran
  source N [DEVICE]        what DEVICE (python, cpu or cuda; default its own) runs for kernel N
  run [N] / r              run the next N exec units (default 1); 'run all' runs the rest
  buffer NAME [limbs|coeffs] [COUNT] / b
                           a buffer's words decoded: limbs (plain residues) or coeffs (CRT ints);
                           NAME as in 'kernels' (b3, arena[0:128]), or kI (what kernel I writes),
                           kI.S (slot S of kernel I)
  arena / a                the memory arena now: which regions hold data, which are free
  slots                    decrypted slots of the watched CKKS ciphertexts, precision vs the shadow
  continue / c             run the rest of this realization and go on
  quit / q                 run the rest and go on without stopping again
  help [COMMAND]           this list, or one command's help"""


# --------------------------------------------------------------------------------------------
# watched ciphertexts (CKKS)


@dataclasses.dataclass
class _Watch:
    ciphertext: weakref.ref  # to a ckks.Ciphertext
    context: Any  # a ckks.Context, or None: the ciphertext's own
    expected: np.ndarray | None
    label: str


#: Ciphertexts registered with ``watch``: every stepper and debugger session sees them.
_WATCHED: list[_Watch] = []


def watch(
    ciphertext: Any, context: Any = None, expected: Any = None, label: str | None = None
) -> Any:
    """Register a CKKS ciphertext (and its plaintext shadow) for the debugger's ``slots`` view.

    Args:
        ciphertext: a ``ckks.Ciphertext``, usually not realized yet.
        context: the ``ckks.Context`` holding the secret key (default: the ciphertext's own).
        expected: the slots it should hold, computed in plaintext with NumPy; the ``slots`` view
            then shows ``ckks.precision_bits`` against it.
        label: a name for the screens (default: ``ct0``, ``ct1``, ... in order of registration).

    Returns:
        ciphertext (ckks.Ciphertext): ``ciphertext`` itself, so a script can write
            ``z = watch(x * y, ctx, xs * ys)``.

    Raises:
        TypeError: for a value that is not a ``ckks.Ciphertext``.
    """
    _WATCHED[:] = [w for w in _WATCHED if w.ciphertext() is not None]
    _WATCHED.append(_make_watch(ciphertext, context, expected, label, len(_WATCHED)))
    return ciphertext


def _view(ct: Any, context: Any = None) -> Any:
    """The watch view of ``ct`` (its ``__ren_watch__(context)``): how the debugger shows it.

    The view has ``summary`` (a line after the label), ``decrypt(parts)`` (the slots of a copy of
    the value holding these parts) and ``precision_bits(got, expected)``; a scheme's value type
    provides it, so the debugger names no scheme.
    """
    method = getattr(ct, "__ren_watch__", None)
    if method is None or not hasattr(ct, "parts"):
        raise TypeError(
            f"watch takes a ckks.Ciphertext (a value with __ren_watch__), got {type(ct).__name__}"
        )
    return method(context)


def _make_watch(ct: Any, context: Any, expected: Any, label: str | None, i: int) -> _Watch:
    _view(ct, context)  # a bad value or context fails here, where it is registered
    shadow = None if expected is None else np.asarray(expected, dtype=np.complex128).reshape(-1)
    return _Watch(weakref.ref(ct), context, shadow, label or f"ct{i}")


@contextlib.contextmanager
def _unobserved() -> Iterator[None]:
    """Hide the realizations in the block from observers and jit captures.

    Realizations in the block (a decryption for the ``slots`` view) are seen by no observer,
    recorded by no jit capture, and so never stop the debugger again.
    """
    token = OBSERVERS.set(())
    try:
        with uncaptured():
            yield
    finally:
        OBSERVERS.reset(token)


# --------------------------------------------------------------------------------------------
# the stepper


@dataclasses.dataclass
class _BufferInfo:
    """One buffer of the realization: its trace name, the kernels using it, its writer."""

    buffer: Buffer
    name: str
    first: int
    last: int
    writer: int | None = None
    ring: RingSpec | None = None
    domain: Domain | None = None


def _ms(seconds: float | None) -> str:
    return "       -   " if seconds is None else f"{seconds * 1e3:8.3f} ms"


def _count_text(counts: Counter) -> str:
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{name} {n}" for name, n in items)


def _cut(text: str, max_lines: int | None, more: str) -> str:
    lines = text.splitlines()
    if max_lines is None or len(lines) <= max_lines:
        return text
    return "\n".join([*lines[:max_lines], f"... {len(lines) - max_lines} more lines ({more})"])


def _describe(node: Node) -> str:
    f = facts(node)
    if f.ring is None:
        return node.op.name
    domain = f.domain.value if f.domain is not None else "?"
    return f"{f.ring.short()} {domain} {f.device}"


def _int_arg(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{what} must be a number, got {text!r}") from None


class Stepper:
    """One realization, prepared and recorded but not run, to be stepped through.

    ``Stepper(*values)`` records (``ren.viz.record``) and prepares the realization of ``values``
    with ``ren.poly.prepare_realize``: scheduling, memory planning and compilation happen exactly
    as in ``realize``, and no unit runs. Two cursors move forward: the *pass cursor* (0 is the
    input graph, ``1 .. 12`` the passes) and the *unit cursor* (how many exec units ran). Every
    method returns a screen (a string); ``finish()`` runs the rest and repoints every ``Poly``
    exactly as ``realize`` does.

    Args:
        values: ``Poly`` values (realized together, as ``ren.realize`` does) or
            ``ckks.Ciphertext`` values (their parts; each is watched for the ``slots`` view with
            its own context).

    Raises:
        TypeError: for a value that is neither.
        ValueError: when every value is realized already (nothing to step through).
    """

    def __init__(self, *values: Any) -> None:
        polys, cts = _split_values(values)
        with record() as trace:
            realization = prepare_realize(*polys)
        if realization is None:
            raise ValueError("nothing to realize: every value given is realized already")
        self._setup(realization, trace.realizations[-1])
        for ct in cts:
            self.watch(ct)

    @classmethod
    def attach(cls, realization: Realization, rec: RealizationRecord, title: str = "") -> Stepper:
        """A stepper over a realization prepared elsewhere (an observer's ``on_run``).

        ``rec`` is the record a ``Trace`` kept of its passes; ``title`` heads the banner.
        """
        self = object.__new__(cls)
        self._setup(realization, rec, title)
        return self

    def _setup(self, realization: Realization, rec: RealizationRecord, title: str = "") -> None:
        self.realization = realization
        self.record = rec
        self.title = title
        self.cursor = 0
        self._watches: list[_Watch] = []
        self._ring_of_input: dict[int, RingArg] | None = None
        self._unit_index = {id(u): realization.ran + j for j, u in enumerate(realization.units)}
        self._infos: dict[int, _BufferInfo] = {}
        self._order: list[_BufferInfo] = []
        for i, k in enumerate(realization.kernels):
            for slot, buf in enumerate(k.bufs):
                info = self._infos.get(id(buf))
                if info is None:
                    info = _BufferInfo(buf, rec.names.get(id(buf), f"#{buf.id}"), i, i)
                    self._infos[id(buf)] = info
                    self._order.append(info)
                info.last = i
                if slot == 0 and info.writer is None:
                    info.writer, info.ring, info.domain = i, k.info.ring, k.info.domain

    def __repr__(self) -> str:
        state = "done" if self.done else f"{self.ran} of {len(self._kernels)} units ran"
        return f"<Stepper pass {self.cursor}/{len(self.record.passes)}, {state}>"

    # --- facts -----------------------------------------------------------------------------------
    @property
    def _kernels(self) -> list:
        """The scheduled kernels, in execution order."""
        return self.realization.kernels

    @property
    def ran(self) -> int:
        """How many exec units ran."""
        return self.realization.ran

    @property
    def done(self) -> bool:
        """Whether every unit ran and the polys were repointed."""
        return self.realization.done

    def banner(self) -> str:
        """What is realized: the outputs' rings, domains and devices, the kernels, the arena."""
        outs = Counter(_describe(n) for n in self.realization.sink.src)
        kinds = Counter(k.info.kind for k in self._kernels)
        lines = [self.title] if self.title else []
        parts = [f"{n} x {d}" if n > 1 else d for d, n in outs.items()]
        count = sum(outs.values())
        lines.append(f"realizing {count} value{'s' if count != 1 else ''}: {', '.join(parts)}")
        arenas = ", ".join(
            f"arena {d.arena_bytes} B on {d.device}" for d in self.realization.memory_plan.devices
        )
        lines.append(
            f"{len(self.record.passes)} passes, {len(self._kernels)} kernels "
            f"({_count_text(kinds)})" + (f", {arenas}" if arenas else "")
        )
        watched = [w for w in self._all_watches() if self._relevant(w)]
        if watched:
            lines.append(f"watched ciphertexts: {', '.join(w.label for w in watched)} ('slots')")
        return "\n".join(lines)

    # --- passes ----------------------------------------------------------------------------------
    def _graph_of(self, i: int) -> Node:
        passes = self.record.passes
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i <= len(passes):
            raise ValueError(
                f"no pass {i!r}: this realization has passes 0 (the input) to {len(passes)}"
            )
        return self.record.input if i == 0 else passes[i - 1].graph

    def passes(self) -> str:
        """Every pass: rewrites fired, nodes created, time; ``->`` marks the pass cursor."""
        lines = [f"   {'#':>2}  {'pass':<20} {'rewrites':>8} {'created':>8} {'time':>11}"]
        mark = "->" if self.cursor == 0 else "  "
        nodes = len(self.record.input.toposort())
        lines.append(f"{mark} {0:2d}  {'input':<20} {'':>8} {'':>8} {'':>11}  ({nodes} nodes)")
        for p in self.record.passes:
            mark = "->" if self.cursor == p.step else "  "
            lines.append(
                f"{mark} {p.step:2d}  {p.name:<20} {len(p.rules):8d} {len(p.created):8d} "
                f"{_ms(p.seconds)}"
            )
        total = sum(p.seconds for p in self.record.passes)
        lines.append(f"    {len(self.record.passes)} passes in {total * 1e3:.3f} ms")
        return "\n".join(lines)

    def next_pass(self) -> str:
        """Move the pass cursor to the next pass and show it (what changed)."""
        if self.cursor >= len(self.record.passes):
            return (
                f"no pass after pass {self.cursor}: the schedule is final ('kernels' lists the "
                "kernels, 'run' runs them)"
            )
        self.cursor += 1
        return self.show_pass(self.cursor)

    def step(self) -> str:
        """The next pass while passes remain (``next_pass``), then the next exec unit (``run``)."""
        if self.cursor < len(self.record.passes):
            return self.next_pass()
        if not self.done:
            return self.run(1)
        return "the realization is done: nothing left to step"

    def show_pass(self, i: int, max_lines: int | None = GRAPH_LINES) -> str:
        """Pass ``i`` (0: the input graph): rules fired, nodes created, and the graph after it.

        The rules come with counts and an example each, the nodes are counted by op, and the
        graph is cut to ``max_lines`` lines.
        """
        graph = self._graph_of(i)
        more = f"'graph {i}' shows all"
        if i == 0:
            nodes = len(graph.toposort())
            return "\n".join(
                [
                    f"pass 0: the input graph, as handed to the scheduler ({nodes} nodes)",
                    _cut(str(graph), max_lines, more),
                ]
            )
        p = self.record.passes[i - 1]
        counts = p.rule_counts()
        lines = [
            f"pass {p.step}/{len(self.record.passes)} {p.name}: {len(p.rules)} rewrites by "
            f"{len(counts)} rules, {len(p.created)} nodes created, {p.seconds * 1e3:.3f} ms",
        ]
        if p.name in _WHY:
            lines.append(f"  (here because: {_WHY[p.name]})")
        if counts:
            lines.append("rules fired:")
            width = max(len(name) for name, _ in counts)
            first: dict[str, Rewrite] = {}
            for r in p.rules:
                first.setdefault(r.rule, r)
            for name, n in counts:
                example = first[name]
                lines.append(
                    f"  {name:<{width}}  x{n:<4} e.g. {_short(example.before)} -> "
                    f"{_short(example.after)}"
                )
        elif graph is self._graph_of(i - 1):
            lines.append("rules fired: none; the graph is unchanged")
        else:
            lines.append("rules fired: none recorded (the pass rebuilt the graph directly)")
        created = Counter(n.op.name for n in p.created)
        if created:
            lines.append(f"nodes created: {_count_text(created)}")
        text = str(graph)
        lines.append(f"graph after the pass ({len(text.splitlines())} lines):")
        lines.append(_cut(text, max_lines, more))
        return "\n".join(lines)

    def graph(self, i: int | None = None) -> str:
        """The whole graph after pass ``i`` (default: the pass cursor; 0: the input)."""
        return str(self._graph_of(self.cursor if i is None else i))

    # --- kernels ---------------------------------------------------------------------------------
    def _kernel(self, i: int):
        kernels = self._kernels
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(kernels):
            raise ValueError(
                f"no kernel {i!r}: this realization has {len(kernels)} kernels "
                f"(0 to {len(kernels) - 1})"
            )
        return kernels[i]

    def kernels(self) -> str:
        """The kernels in execution order: kind, device, buffers, and whether each ran.

        Slot 0 is the buffer written; ``->`` marks the next unit to run.
        """
        kernels = self._kernels
        width = max([len(k.info.name) for k in kernels] + [6])
        lines = [
            f"{len(kernels)} kernels, {self.ran} ran"
            + ("" if self.done else f", next: {self.ran}"),
            f"   {'#':>3}  ran  {'kernel':<{width}}  {'kind':<12}  {'device':<6}  writes <- reads",
        ]
        for i, k in enumerate(kernels):
            mark = "->" if i == self.ran and not self.done else "  "
            names = [self._infos[id(b)].name for b in k.bufs]
            bufs = names[0] + (" <- " + ", ".join(names[1:]) if len(names) > 1 else "")
            ran = "yes" if i < self.ran else "no "
            lines.append(
                f"{mark} {i:3d}  {ran}  {k.info.name:<{width}}  {k.info.kind:<12}  "
                f"{k.info.device:<6}  {bufs}"
            )
        return "\n".join(lines)

    def source(self, i: int, device: str | None = None) -> str:
        """What ``device``'s backend (default: the kernel's own) runs for kernel ``i``.

        That is C, CUDA C, or the IR body the python backend interprets
        (``ren.viz.kernel_source``; rendered only).
        """
        kernel = self._kernel(i)
        return kernel_source(kernel, None if device is None else canonical_device(device))

    # --- running ---------------------------------------------------------------------------------
    def on_unit(self, unit: ExecUnit, seconds: float) -> None:
        """Observer method: keep the time of each unit this stepper runs."""
        i = self._unit_index.get(id(unit))
        if i is not None and i < len(self.record.units):
            self.record.units[i].seconds = seconds

    def run(self, count: int | None = 1) -> str:
        """Run the next ``count`` exec units (``None``: all that are left); show what ran.

        The units run through ``Realization.run``; after the last one the polys are repointed.
        """
        if count is not None and (not isinstance(count, int) or count < 1):
            raise ValueError(f"the number of units to run must be at least 1, got {count!r}")
        if self.done:
            return "every unit ran already: the realization is done"
        start = self.ran
        with observing(self):
            self.realization.run(count)
        lines = []
        for i in range(start, self.ran):
            k = self._kernels[i]
            unit = self.record.units[i] if i < len(self.record.units) else None
            seconds = unit.seconds if unit is not None else None
            lines.append(
                f"ran {i:3d}  {k.info.name:<28} {k.info.kind:<12} {k.info.device:<6} "
                f"{_ms(seconds)}  wrote {self._infos[id(k.bufs[0])].name}"
            )
        total = len(self._kernels)
        if self.done:
            lines.append(
                f"{self.ran} of {total} units ran: done; the outputs are stored and every Poly "
                "that used them reads them"
            )
        else:
            nxt = self._kernels[self.ran].info.name
            lines.append(f"{self.ran} of {total} units ran; next: {self.ran} {nxt}")
        return "\n".join(lines)

    def run_all(self) -> str:
        """Run every unit left (``run(None)``)."""
        return self.run(None)

    def finish(self) -> str:
        """Run the rest, so every value is realized and repointed exactly as ``realize`` does."""
        if self.done:
            return "the realization is done"
        return self.run(None)

    # --- buffers ---------------------------------------------------------------------------------
    def _resolve(self, ref: int | str) -> tuple[_BufferInfo, str]:
        """The buffer ``ref`` names, and a note when the name was ambiguous."""
        if isinstance(ref, int) and not isinstance(ref, bool):
            return self._infos[id(self._kernel(ref).bufs[0])], ""
        if not isinstance(ref, str):
            raise TypeError(f"a buffer is named by a string or a kernel index, got {ref!r}")
        text = ref.strip()
        m = re.fullmatch(r"[kK]?(\d+)(?:\.(\d+))?", text)
        if m and (text[0] in "kK" or m.group(2) is None):
            k = self._kernel(int(m.group(1)))
            slot = int(m.group(2) or 0)
            if slot >= len(k.bufs):
                raise ValueError(
                    f"kernel {m.group(1)} has {len(k.bufs)} buffers (slots 0 to {len(k.bufs) - 1})"
                )
            return self._infos[id(k.bufs[slot])], ""
        hits = [info for info in self._order if info.name == text]
        if not hits:
            names = list(dict.fromkeys(info.name for info in self._order))
            shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
            raise ValueError(
                f"no buffer {text!r} in this realization; its buffers are {shown} "
                "(or kI: what kernel I writes)"
            )
        if len(hits) == 1:
            return hits[0], ""
        written = [h for h in hits if h.writer is not None and h.writer < self.ran]
        pick = written[-1] if written else hits[0]
        writers = ", ".join(f"k{h.writer}" for h in hits)
        note = (
            f"({text} names {len(hits)} buffers over this realization, written by {writers}; "
            f"this is the one kernel {pick.writer} writes)"
        )
        return pick, note

    def _ring(self, info: _BufferInfo) -> tuple[RingSpec | None, Domain | None]:
        if info.ring is not None:
            return info.ring, info.domain
        if self._ring_of_input is None:  # inputs: the AS_RING over them in the lazy graph
            self._ring_of_input = {}
            for node in self.record.input.toposort():
                if node.op is Op.AS_RING and node.src[0].op is Op.BUFFER:
                    self._ring_of_input[id(node.src[0].arg.buffer)] = node.arg
        arg = self._ring_of_input.get(id(info.buffer))
        if arg is not None and arg.ring.L * arg.ring.n == info.buffer.size:
            return arg.ring, arg.domain
        return None, None

    def _overwritten_by(self, info: _BufferInfo) -> _BufferInfo | None:
        """A later buffer whose writer ran and that shares bytes of ``info``'s arena region."""
        buf = info.buffer
        if buf.base is None or info.writer is None:
            return None
        lo, hi = buf.offset, buf.offset + buf.nbytes
        later: tuple[int, _BufferInfo] | None = None  # (its writer, the buffer)
        for other in self._order:
            ob, writer = other.buffer, other.writer
            if other is info or ob.base is not buf.base or writer is None:
                continue
            if info.writer < writer < self.ran and ob.offset < hi and lo < ob.offset + ob.nbytes:
                later = (writer, other) if later is None or writer > later[0] else later
        return None if later is None else later[1]

    def _state(self, info: _BufferInfo) -> tuple[np.ndarray | None, str]:
        """The buffer's words, or ``None`` and why they cannot be shown now."""
        if info.writer is not None and info.writer >= self.ran:
            k = self._kernels[info.writer]
            return None, f"not written yet: kernel {info.writer} ({k.info.name}) writes it"
        later = self._overwritten_by(info)
        if later is not None:
            return None, (
                f"its arena bytes were reused after its last use (kernel {info.last}): kernel "
                f"{later.writer} wrote {later.name} over them"
            )
        array = info.buffer.array
        if array is None:
            return None, "it holds no data (freed)"
        return array, ""

    def _decoded(self, ref: int | str | _BufferInfo) -> tuple[RingSpec, Domain, np.ndarray]:
        info = ref if isinstance(ref, _BufferInfo) else self._resolve(ref)[0]
        ring, domain = self._ring(info)
        if ring is None or domain is None:
            raise ValueError(f"the ring of buffer {info.name} is not known; its words are raw")
        words, why = self._state(info)
        if words is None:
            raise ValueError(f"buffer {info.name}: {why}")
        return ring, domain, words.reshape(ring.L, ring.n)

    def limbs(self, ref: int | str) -> np.ndarray:
        """Buffer ``ref``'s plain residues, an ``(L, n)`` array in its stored domain.

        Raises:
            ValueError: for an unknown buffer, or one whose words cannot be read now (not written
                yet, or its arena bytes were reused).
        """
        ring, _, words = self._decoded(ref)
        return rk.from_mont(ring, words)

    def coeffs(self, ref: int | str) -> list[int]:
        """Buffer ``ref``'s coefficients as Python ints in ``(-Q/2, Q/2]``.

        The coefficients come from the CRT; an NTT-form buffer is converted on a copy.

        Raises:
            ValueError: as ``limbs`` does.
        """
        return self._coeffs_of(ref)

    def _coeffs_of(self, ref: int | str | _BufferInfo) -> list[int]:
        ring, domain, words = self._decoded(ref)
        if domain is Domain.NTT:
            words = rk.intt(ring, words)
        return rk.crt(ring, words, centered=True)

    def buffer(self, ref: int | str, as_: str = "coeffs", limit: int = 8) -> str:
        """A buffer's words decoded as ``"limbs"`` or ``"coeffs"``.

        ``"limbs"`` are the plain residues, one row per modulus, in the stored domain;
        ``"coeffs"`` are the CRT big integers, centered (NTT form converted).

        ``ref`` is a name as ``kernels`` shows it (``b3``, ``arena[0:128]``: an arena name used by
        several buffers means the one most recently written), ``kI`` or ``I`` (what kernel ``I``
        writes), or ``kI.S`` (slot ``S`` of kernel ``I``). Only the first ``limit`` words of each
        row are shown.
        """
        if as_ not in ("limbs", "coeffs"):
            raise ValueError(f"a buffer is shown as 'limbs' or 'coeffs', not {as_!r}")
        if not isinstance(limit, int) or limit < 1:
            raise ValueError(f"the number of words to show must be at least 1, got {limit!r}")
        info, note = self._resolve(ref)
        buf = info.buffer
        where = (
            f"view of the {buf.device} arena at byte {buf.offset}, {buf.nbytes} bytes"
            if buf.base is not None
            else f"its own storage, {buf.size} x {buf.dtype} on {buf.device}"
        )
        role = (
            f"written by kernel {info.writer} ({self._kernels[info.writer].info.name})"
            if info.writer is not None
            else "an input: stored before this realization"
        )
        used = (
            f"kernel {info.first}"
            if info.first == info.last
            else f"kernels {info.first}-{info.last}"
        )
        lines = [f"buffer {info.name} ({where}); {role}; used by {used}"]
        if note:
            lines.append(note)
        ring, domain = self._ring(info)
        words, why = self._state(info)
        if words is None:
            lines.append(why)
            return "\n".join(lines)
        if ring is None or domain is None:
            raw = " ".join(str(int(w)) for w in words[:limit])
            lines.append(f"ring unknown; raw words: {raw}" + (" ..." if words.size > limit else ""))
            return "\n".join(lines)
        lines.append(f"ring n={ring.n} q={ring.moduli} ({ring.dtype}), {domain.value} form")
        shown = min(limit, ring.n)
        tail = f" ... ({ring.n - shown} more)" if shown < ring.n else ""
        if as_ == "limbs":
            plain = rk.from_mont(ring, words.reshape(ring.L, ring.n))
            what = "NTT slots in ren.ring's order" if domain is Domain.NTT else "coefficients"
            lines.append(f"limbs: plain residues ({what}), first {shown} of {ring.n} per limb")
            width = max(len(str(q)) for q in ring.moduli)
            for i, q in enumerate(ring.moduli):
                row = " ".join(str(int(x)) for x in plain[i, :shown])
                lines.append(f"  mod {q:>{width}}: {row}{tail}")
        else:
            values = self._coeffs_of(info)
            via = ", converted from NTT form on a copy" if domain is Domain.NTT else ""
            lines.append(
                f"coeffs: CRT integers centered in (-Q/2, Q/2]{via}, first {shown} of {ring.n}"
            )
            lines.append("  " + " ".join(str(v) for v in values[:shown]) + tail)
        return "\n".join(lines)

    # --- memory ----------------------------------------------------------------------------------
    def arena(self, width: int = 72) -> str:
        """The memory plan at the unit cursor: the arena picture, and what each region holds.

        The regions are those with data that a later kernel still reads, those the next kernel
        allocates, and the free ones.
        """
        plan = self.realization.memory_plan
        step = self.ran
        total = len(self._kernels)
        if self.done:
            head = f"memory after the last kernel ({total} of {total} ran): every region is free"
        else:
            name = self._kernels[step].info.name
            head = f"memory before kernel {step} ({name}); {step} of {total} ran"
        lines = [head]
        if not plan.devices:
            lines.append(
                "no arena: every buffer of this realization has its own storage (nothing to "
                "share, or REN_NO_PLAN=1)"
            )
        for d in plan.devices:
            lines.extend(self._device_arena(d, step, width))
        own = [info for info in self._order if info.buffer.base is None]
        if own:
            lines.append("own storage (outside the arena):")
            for info in own:
                if info.writer is None:
                    state = "input"
                elif info.writer < self.ran:
                    state = f"written by kernel {info.writer}"
                else:
                    state = f"kernel {info.writer} writes it (not yet)"
                lines.append(f"  {info.name:<24} {info.buffer.nbytes:>8} B  {state}")
        return "\n".join(lines)

    def _device_arena(self, d: DevicePlan, step: int, width: int) -> list[str]:
        lines: list[str] = []
        symbols: dict[tuple[int, int], str] = {}
        try:
            from ren.viz.memory import buffer_order, plan_text, symbol
        except ImportError:  # the picture is optional; the lists below say the same
            lines.append(d.summary())
        else:
            order = buffer_order(d)
            key = [
                f"{symbol(i)}=arena[{p.offset}:{p.offset + p.nbytes}] k{p.first}-{p.last}"
                for i, p in enumerate(order)
            ]
            text = plan_text(d, width=width)
            lines.extend(_mark_column(text, step, len(self._kernels), key, width))
            symbols = {(p.offset, p.first): symbol(i) for i, p in enumerate(order)}
        done = self.done
        live = [p for p in d.buffers if not done and p.first < step <= p.last]
        fresh = [p for p in d.buffers if not done and p.first == step]
        for title, group in (
            ("holding data a later kernel reads", live),
            (f"allocated for kernel {step}", fresh),
        ):
            if not group:
                continue
            lines.append(f"{title}:")
            for p in sorted(group, key=lambda p: p.offset):
                sym = symbols.get((p.offset, p.first))
                tag = f" ('{sym}' above)" if sym else ""
                name = f"arena[{p.offset}:{p.offset + p.nbytes}]"
                lines.append(f"  {name:<24} {p.nbytes:>8} B  kernels {p.first}-{p.last}{tag}")
        used = sum(p.nbytes for p in live + fresh)
        lines.append(f"{used} of {d.arena_bytes} arena bytes in use on {d.device}")
        return lines

    # --- CKKS ------------------------------------------------------------------------------------
    def watch(self, ciphertext: Any, context: Any = None, expected: Any = None) -> Stepper:
        """Watch a ``ckks.Ciphertext`` in this stepper's ``slots`` view (see ``watch``)."""
        w = _make_watch(ciphertext, context, expected, None, 0)
        mine = [v for v in self._watches if v.ciphertext() is ciphertext]
        if mine:  # watched again: the new context and shadow replace the old
            w.label = mine[0].label
            self._watches[self._watches.index(mine[0])] = w
        else:
            w.label = f"ct{len(self._all_watches())}"
            self._watches.append(w)
        return self

    def _all_watches(self) -> list[_Watch]:
        return [w for w in [*self._watches, *_WATCHED] if w.ciphertext() is not None]

    def _part(self, p: Poly) -> tuple[Poly | None, str]:
        """A ciphertext part as a stored poly at this step, or why it is not available."""
        becomes = self.realization.ctx.becomes_map
        node = becomes.get(p.node)
        if node is None and p.node in becomes.values():
            node = p.node  # repointed already (after the last unit)
        if node is None:
            if p.realized:
                return p, ""
            return None, "not computed by this realization (realize it on its own first)"
        where = stored(node)
        if where is None:
            return Poly._wrap(node), ""
        info = self._infos.get(id(where[0]))
        if info is not None and info.writer is not None and info.writer >= self.ran:
            return None, f"not written yet: kernel {info.writer} writes it"
        return Poly._wrap(node), ""

    def _relevant(self, w: _Watch) -> bool:
        ct = w.ciphertext()
        becomes = self.realization.ctx.becomes_map
        values = set(becomes.values())
        return ct is not None and any(p.node in becomes or p.node in values for p in ct.parts)

    def decrypt(self, ciphertext: Any, context: Any = None) -> np.ndarray:
        """The slots of ``ciphertext`` from the buffers this realization wrote so far.

        Raises:
            ValueError: when a part is not written yet (or not computed here), or the context
                holds no secret key.
        """
        ct = ciphertext
        view = _view(ct, context)
        parts = []
        for i, p in enumerate(ct.parts):
            poly, why = self._part(p)
            if poly is None:
                raise ValueError(f"part c{i} is {why}")
            parts.append(poly)
        with _unobserved():
            return view.decrypt(tuple(parts))

    def slots(
        self, ciphertext: Any = None, context: Any = None, expected: Any = None, limit: int = 4
    ) -> str:
        """Decrypted slots of a ciphertext as its parts' buffers stand now, and their precision.

        The default ciphertext is every watched one this realization computes. The precision is
        ``ckks.precision_bits`` against ``expected`` (the plaintext shadow given to ``watch``, when
        not given here).
        """
        if ciphertext is not None:
            match = [w for w in self._all_watches() if w.ciphertext() is ciphertext]
            w = _make_watch(ciphertext, context, expected, None, 0)
            w.label = match[0].label if match else "ciphertext"
            if w.expected is None and match:
                w.expected = match[0].expected
            if w.context is None and match:
                w.context = match[0].context
            todo = [w]
        else:
            everything = self._all_watches()
            todo = [w for w in everything if self._relevant(w)]
            if not todo:
                if everything:
                    return (
                        "no watched ciphertext is computed by this realization (its parts are "
                        "not outputs here; realize the ciphertext on its own to watch it)"
                    )
                return (
                    "no ciphertext is watched: call ren.viz.debug.watch(ct, context, expected) "
                    "in the script, or Stepper.watch"
                )
        lines = []
        for w in todo:
            ct = w.ciphertext()
            if ct is None:  # collected since
                continue
            view = _view(ct, w.context)
            lines.append(f"{w.label}: {view.summary}")
            try:
                got = self.decrypt(ct, w.context)
            except ValueError as e:
                lines.append(f"  {e}")
                continue
            shown = min(limit, got.size)
            lines.append(f"  slots[:{shown}]    {_complex_row(got[:shown])}")
            if w.expected is not None:
                expected = w.expected
                if expected.size < got.size:
                    expected = np.concatenate([expected, np.zeros(got.size - expected.size)])
                lines.append(f"  expected[:{shown}] {_complex_row(expected[:shown])}")
                bits = view.precision_bits(got, expected[: got.size])
                lines.append(f"  precision: {bits:.2f} bits (over {got.size} slots)")
        return "\n".join(lines)


def _short(node: Node, width: int = 48) -> str:
    """``OP arg (SOURCE OPS)``: one node and what it reads, on one line."""
    arg = "" if node.arg is None else f" {node.arg!r}"
    text = f"{node.op.name}{arg}"
    if len(text) > width:
        text = text[: width - 3] + "..."
    return f"{text}({', '.join(s.op.name for s in node.src)})"


def _complex_row(values: np.ndarray) -> str:
    return "  ".join(f"{z.real:+.9f}{z.imag:+.9f}j" for z in np.asarray(values, complex))


def _mark_column(text: str, step: int, kernels: int, key: list[str], width: int) -> list[str]:
    """``plan_text``'s lines with a ``^`` under kernel ``step``'s column, and its key replaced.

    The ``^`` is there when the picture has one column per kernel. The picture's key (``b0``,
    ``b1``, ... by drawing order, which would read as the trace's buffer names) is replaced by
    ``key``: the symbols' arena regions.
    """
    lines = text.rstrip("\n").splitlines()
    legend = next((i for i, line in enumerate(lines) if line.startswith("'<':")), None)
    if legend is not None and key:
        packed = [""]
        for entry in key:
            if packed[-1] and len(packed[-1]) + 3 + len(entry) > width:
                packed.append("")
            packed[-1] = f"{packed[-1]}   {entry}" if packed[-1] else entry
        lines[legend + 1 :] = packed
    for i, line in enumerate(lines):
        m = re.fullmatch(r"(\s*offset \+)(-+)\+", line)
        if m is None:
            continue
        if len(m.group(2)) == kernels and step < kernels:
            bottom = next(
                (j for j in range(len(lines) - 1, i, -1) if lines[j].strip().startswith("+-")),
                None,
            )
            if bottom is not None:
                pad = " " * (len(m.group(1)) + step)
                lines.insert(bottom + 1, f"{pad}^ kernel {step} runs next")
        break
    return lines


def _split_values(values: tuple[Any, ...]) -> tuple[list[Poly], list[Any]]:
    polys, cts = [], []
    for v in values:
        if isinstance(v, Poly):
            polys.append(v)
            continue
        if hasattr(v, "__ren_watch__") and hasattr(v, "parts"):
            cts.append(v)
            polys.extend(v.parts)
        else:
            raise TypeError(f"the debugger steps through Poly or ckks.Ciphertext values, got {v!r}")
    return polys, cts


# --------------------------------------------------------------------------------------------
# the interactive loop


class Debugger(cmd.Cmd):
    """The ``(ren)`` prompt over a ``Stepper``; ``help`` lists the commands.

    Args:
        stepper: the stepper to drive.
        stdin: where commands come from (default: the terminal, with line editing).
        stdout: where screens go (default: the terminal).
        leaving: what is said when the prompt is left.
    """

    prompt = "(ren) "

    def __init__(
        self,
        stepper: Stepper,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        leaving: str = "leaving the debugger",
    ) -> None:
        super().__init__(stdin=stdin, stdout=stdout)
        if stdin is not None:
            self.use_rawinput = False
        self.stepper = stepper
        self.leaving = leaving  # said when the prompt is left
        self.quit_all = False  # 'quit': no more stops in this program

    def say(self, text: str) -> None:
        """Write one screen."""
        self.stdout.write(text.rstrip("\n") + "\n")
        self.stdout.flush()

    def loop(self) -> None:
        """Read commands until ``continue``, ``quit`` or end of input; then run the rest."""
        intro = self.stepper.banner() + "\ntype help for the commands"
        while True:
            try:
                self.cmdloop(intro)
                break
            except KeyboardInterrupt:
                self.say("\ninterrupted: 'continue' runs the rest, 'quit' stops debugging")
                intro = ""
        if not self.stepper.done:
            self.say(self.stepper.finish())

    def _leave(self) -> bool:
        if not self.stepper.done:
            self.say(self.stepper.finish())
        self.say(self.leaving)
        return True

    # --- plumbing --------------------------------------------------------------------------------
    def onecmd(self, line: str) -> bool:
        """Run one command line; a bad argument is said as an error and the prompt stays."""
        try:
            return super().onecmd(line)
        except (ValueError, TypeError, KeyError, IndexError, RenError) as e:
            self.say(f"error: {e}")
            return False

    def default(self, line: str) -> None:
        """Say that the command is unknown; the prompt stays."""
        self.say(f"error: unknown command {line.split()[0]!r}; type help for the commands")

    def emptyline(self) -> bool:
        """Do nothing for an empty line (not repeat the last command)."""
        return False

    # The do_* docstrings are the commands' ``help`` text: each starts with the command as typed,
    # in lower case (hence ``noqa: D403``). The API docs render them as Markdown, where
    # ``[a] [b]`` is a reference link: two spaces between brackets keep it text.
    def do_help(self, arg: str) -> bool | None:
        """help [COMMAND]: the commands, or one command's help."""  # noqa: D403
        if arg.strip():
            name = arg.strip()
            method = getattr(self, f"do_{name}", None)
            if method is None or not method.__doc__:
                self.say(f"error: no command {name!r}; type help for the commands")
            else:
                self.say(method.__doc__)
            return False
        self.say(_HELP)
        return False

    # --- commands --------------------------------------------------------------------------------
    def do_passes(self, arg: str) -> bool:
        """passes: every pass with its rewrites, nodes created and time; '->' is the cursor."""
        self.say(self.stepper.passes())
        return False

    def do_step(self, arg: str) -> bool:
        """step [N] (s): the next pass and what it changed; after the last pass, the next unit."""  # noqa: D403
        count = _int_arg(arg, "the number of steps") if arg.strip() else 1
        for _ in range(max(count, 1)):
            self.say(self.stepper.step())
        return False

    do_s = do_step

    def do_pass(self, arg: str) -> bool:
        """pass N: pass N (0 is the input graph): the rules it fired, nodes created, the graph.

        The cursor moves there ('graph' shows it whole, 'step' goes on from it).
        """  # noqa: D403
        if not arg.strip():
            raise ValueError("which pass? 'pass N' with N from 0 (the input) to 12")
        i = _int_arg(arg.strip(), "the pass")
        self.say(self.stepper.show_pass(i))
        self.stepper.cursor = i
        return False

    def do_graph(self, arg: str) -> bool:
        """graph [N]: the whole graph after pass N (default: the cursor; 0 is the input)."""  # noqa: D403
        i = _int_arg(arg.strip(), "the pass") if arg.strip() else None
        self.say(self.stepper.graph(i))
        return False

    def do_kernels(self, arg: str) -> bool:
        """kernels (k): the kernels in execution order, their buffers and whether they ran."""  # noqa: D403
        self.say(self.stepper.kernels())
        return False

    do_k = do_kernels

    def do_source(self, arg: str) -> bool:
        """source N [python|cpu|cuda]: what that device runs for kernel N (rendered, not built)."""  # noqa: D403
        words = arg.split()
        if not words or len(words) > 2:
            raise ValueError("usage: source N [python|cpu|cuda]")
        device = words[1] if len(words) > 1 else None
        self.say(self.stepper.source(_int_arg(words[0], "the kernel"), device))
        return False

    def do_run(self, arg: str) -> bool:
        """run [N|all] (r): run the next N exec units (default 1), or all that are left."""  # noqa: D403
        text = arg.strip()
        count = None if text == "all" else _int_arg(text, "the number of units") if text else 1
        self.say(self.stepper.run(count))
        return False

    do_r = do_run

    def do_buffer(self, arg: str) -> bool:
        """buffer NAME [limbs|coeffs]  [COUNT] (b): a buffer's words decoded (default coeffs, 8).

        NAME as 'kernels' shows it (b3, arena[0:128]), kI (what kernel I writes) or kI.S (slot S
        of kernel I).
        """  # noqa: D403
        words = arg.split()
        if not words:
            raise ValueError("usage: buffer NAME [limbs|coeffs] [COUNT]")
        as_, limit = "coeffs", 8
        for w in words[1:]:
            if w.isdigit():
                limit = int(w)
            else:
                as_ = w
        self.say(self.stepper.buffer(words[0], as_, limit))
        return False

    do_b = do_buffer

    def do_arena(self, arg: str) -> bool:
        """arena (a): the memory arena before the next kernel: regions in use and free."""  # noqa: D403
        self.say(self.stepper.arena())
        return False

    do_a = do_arena

    def do_slots(self, arg: str) -> bool:
        """slots [COUNT]: the watched CKKS ciphertexts' decrypted slots and bits of precision.

        The precision is against the plaintext shadow given to ren.viz.debug.watch.
        """  # noqa: D403
        limit = _int_arg(arg.strip(), "the number of slots") if arg.strip() else 4
        self.say(self.stepper.slots(limit=limit))
        return False

    def do_continue(self, arg: str) -> bool:
        """continue (c): run the rest of this realization and let the program go on."""  # noqa: D403
        return self._leave()

    do_c = do_continue

    def do_quit(self, arg: str) -> bool:
        """quit (q): run the rest of this realization; the program goes on without stopping."""  # noqa: D403
        self.quit_all = True
        return self._leave()

    do_q = do_quit

    def do_EOF(self, arg: str) -> bool:
        """End of input: as 'quit'."""
        self.say("")
        return self.do_quit(arg)


def debug(*values: Any, stdin: TextIO | None = None, stdout: TextIO | None = None):
    """Step through the realization of ``values`` at a ``(ren)`` prompt.

    ``help`` lists the commands. When the prompt is left, the rest runs, so ``values`` end up
    realized.

    Args:
        values: ``Poly`` or ``ckks.Ciphertext`` values (see ``Stepper``).
        stdin: where commands come from (default: the terminal).
        stdout: where screens go (default: the terminal).

    Returns:
        stepper (Stepper | None): the ``Stepper``, or ``None`` when there was nothing to realize.
    """
    out = stdout if stdout is not None else sys.stdout
    try:
        stepper = Stepper(*values)
    except ValueError as e:
        out.write(f"{e}\n")
        return None
    Debugger(stepper, stdin, out).loop()
    return stepper


# ``ren.viz`` may bind the name ``debug`` to the function above, hiding this module's attribute
# there; the function carries the module's other names so ``ren.viz.debug.watch(...)`` and
# ``ren.viz.debug.Stepper`` read the same either way.
debug.watch = watch  # type: ignore[attr-defined]
debug.Stepper = Stepper  # type: ignore[attr-defined]
debug.Debugger = Debugger  # type: ignore[attr-defined]


# --------------------------------------------------------------------------------------------
# python -m ren.viz debug SCRIPT.py

_USAGE = """\
usage: python -m ren.viz debug [--all] [--skip N] SCRIPT.py [ARGS ...]

Run SCRIPT.py and stop at its first realization with a (ren) prompt (help lists the commands).
  --skip N   let N realizations run first
  --all      stop at every realization ('quit' stops no more)
Arguments after the script (or after '--') are the script's own sys.argv[1:]."""


class _Session:
    """The observer ``main`` runs a script under.

    It records each realization's passes and opens the prompt in ``on_run`` for the realizations
    it stops at.
    """

    def __init__(self, stop_all: bool, skip: int, stdin: TextIO | None, stdout: TextIO) -> None:
        self.stop_all, self.skip = stop_all, skip
        self.stdin, self.stdout = stdin, stdout
        self.seen = 0  # realizations about to run (on_run)
        self.stops = 0
        self.quit = False
        self.trace: Trace | None = None

    def _may_stop(self) -> bool:
        return not self.quit and (self.stop_all or self.stops == 0)

    def on_input(self, sink: Node) -> None:
        self.trace = Trace() if self._may_stop() else None
        if self.trace is not None:
            self.trace.on_input(sink)

    def on_pass(self, step: int, name: str, sink: Node, previous: Node, ctx: Any) -> None:
        if self.trace is not None:
            self.trace.on_pass(step, name, sink, previous, ctx)

    def on_prepared(self, realization: Realization) -> None:
        if self.trace is not None:
            self.trace.on_prepared(realization)

    def on_run(self, realization: Realization) -> None:
        index = self.seen
        self.seen += 1
        trace, self.trace = self.trace, None
        if index < self.skip or not self._may_stop() or trace is None:
            return
        rec = next(
            (r for r in reversed(trace.realizations) if r.kernels == realization.kernels), None
        )
        if rec is None:
            return
        self.stops += 1
        title = f"stop {self.stops}: realization {index} of the program, {_where()}"
        stepper = Stepper.attach(realization, rec, title)
        loop = Debugger(stepper, self.stdin, self.stdout, "the program goes on")
        try:
            loop.loop()
        finally:
            if loop.quit_all:
                self.quit = True


def _where() -> str:
    """Where the program asked for the realization.

    That is the innermost frame outside Ren, and the Ren function it called.
    """
    root = os.path.dirname(os.path.abspath(ren.__file__)) + os.sep
    frame: FrameType | None = sys._getframe(1)
    entry = None
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(root):
            module = frame.f_globals.get("__name__", "")
            name = f"{os.path.basename(path)}:{frame.f_lineno}"
            if entry is not None:
                api = f"{entry.f_globals.get('__name__', '?')}.{entry.f_code.co_qualname}"
                return f"at {name} (in {api})"
            return f"at {name} ({module})"
        entry = frame
        frame = frame.f_back
    return "outside any script"


def _parse(argv: list[str]) -> tuple[bool, int, list[str]]:
    stop_all, skip, i = False, 0, 0
    while i < len(argv):
        a = argv[i]
        if a == "--all":
            stop_all = True
        elif a == "--skip" or a.startswith("--skip="):
            if a == "--skip":
                i += 1
                if i >= len(argv):
                    raise ValueError("--skip needs a number")
                value = argv[i]
            else:
                value = a.split("=", 1)[1]
            if not value.isdigit():
                raise ValueError(f"--skip needs a number of realizations, got {value!r}")
            skip = int(value)
        elif a == "--":
            i += 1
            break
        elif a.startswith("-"):
            raise ValueError(f"unknown option {a!r}")
        else:
            break
        i += 1
    return stop_all, skip, argv[i:]


def main(
    script_path: str,
    argv: list[str],
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
) -> int:
    """Run ``script_path`` as ``__main__`` and stop at its realizations with a ``(ren)`` prompt.

    Args:
        script_path: the Python script.
        argv: the debugger's options (``--all``, ``--skip N``), then the script's own arguments
            (after ``--`` when they start with ``-``).
        stdin: where commands come from (default: the terminal).
        stdout: where screens go (default: the terminal).

    Returns:
        0 when the script ran to its end, 1 when it raised (the traceback is on stderr), 2 for a
        bad option or a missing script.
    """
    out = stdout if stdout is not None else sys.stdout
    if script_path in ("-h", "--help") or any(a in ("-h", "--help") for a in argv[:1]):
        out.write(_USAGE + "\n")
        return 0
    try:
        stop_all, skip, script_args = _parse(list(argv))
    except ValueError as e:
        out.write(f"error: {e}\n{_USAGE}\n")
        return 2
    if not os.path.isfile(script_path):
        out.write(f"error: no script {script_path!r}\n")
        return 2
    session = _Session(stop_all, skip, stdin, out)
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [script_path, *script_args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script_path)))
    code = 0
    try:
        with observing(session):
            runpy.run_path(script_path, run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            out.write(f"the script exited with {e.code!r}\n")
            code = e.code if isinstance(e.code, int) else 1
    except Exception as e:
        traceback.print_exc(file=sys.stderr)
        out.write(f"error: {script_path} raised {type(e).__name__}: {e}\n")
        code = 1
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
    if session.stops == 0 and code == 0:
        why = f" (--skip {skip})" if skip else ""
        out.write(f"the script ran {session.seen} realizations and none stopped{why}\n")
    out.flush()
    return code


debug.main = main  # type: ignore[attr-defined]
