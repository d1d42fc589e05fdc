"""The scheduler: runs the passes in order and reads the kernels off the final graph.

``schedule(sink)`` takes the ``SINK`` of every requested output and returns the
``ScheduledKernel`` list in a valid execution order, plus the ``ScheduleContext`` (the
``becomes_map`` and every rule that fired). After each pass the driver calls the dump hook
(``REN_DUMP=<dir>`` or ``ren.viz.dump_to``) and, with ``REN_CHECK=1``, the verifier.
``REN_DEBUG>=1`` prints each pass's name and time.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from types import ModuleType

from ren import settings
from ren.device import Buffer
from ren.engine import debug_level, dump
from ren.engine.observe import notify
from ren.ir.node import KernelInfo, Node, base_buffer
from ren.ir.op import DType, Op
from ren.ir.region import region_of
from ren.ir.spec import verify
from ren.passes import (
    ScheduleContext,
    becomes_map,
    bufferize,
    fold_domains,
    indexify,
    inject_domains,
    kernelize,
    lower_automorphism,
    lower_bufferize,
    lower_constants,
    lower_rotate,
    simplify,
    views,
)

__all__ = ["PASSES", "ScheduledKernel", "schedule"]

#: The pass order, each with the reason it sits where it does.
PASSES = (
    (simplify, "fold constants and identities first, so later passes see less"),
    (lower_rotate, "turn ROTATE into NTT-form AUTOMORPHISM before domains are decided"),
    (inject_domains, "every op now names its domain; put NTT/INTT where one is needed"),
    (fold_domains, "injection can create NTT(INTT(x)); remove round trips before materializing"),
    (bufferize, "decide buffers once the conversions (whole-polynomial kernels) are final"),
    (lower_bufferize, "give each boundary a real buffer, a store and an ordering"),
    (becomes_map, "outputs now have buffers: record what each requested node becomes"),
    (lower_automorphism, "push permutations to the stored values they read, inside fused work"),
    (lower_constants, "domains and fusion are final: a constant's words depend on its user"),
    (views, "limb views of stored values become windows; of fused work, views in the loads"),
    (indexify, "every read of storage becomes an indexed (maybe gathered) load"),
    (kernelize, "each store becomes a kernel over numbered buffer slots"),
)


@dataclass(frozen=True)
class ScheduledKernel:
    """One kernel to run: its body, the buffers bound to its slots, and what it is.

    The body is a ``STORE`` over ``SLOT``s; slot 0 is the buffer written. ``consts`` are the
    values of its constants by row (``KernelArg.consts``): the exec unit passes their words as
    one more argument after the buffers. ``const_sources`` says, when the schedule cache could
    tell, which ``CONST`` node of the realized graph each row holds the value of, such that the
    schedule does not depend on that value (``None`` for a row that is not so, an empty tuple when
    nobody looked): ``ren.jit`` rebinds those rows to a new value of a constant input.
    """

    ast: Node
    bufs: tuple[Buffer, ...]
    info: KernelInfo
    consts: tuple[int, ...] = ()
    const_sources: tuple[Node | None, ...] = ()
    region: tuple[str, ...] = ()  # the region of the value it computes (ren.ir.region)

    def __repr__(self) -> str:
        return f"<ScheduledKernel {self.info.name} bufs={[b.id for b in self.bufs]}>"


def _pass_name(module: ModuleType) -> str:
    return module.__name__.rsplit(".", 1)[-1]


def schedule(
    sink: Node, ctx: ScheduleContext | None = None
) -> tuple[list[ScheduledKernel], ScheduleContext]:
    """Run the passes over ``sink`` and list its kernels in execution order."""
    if sink.op is not Op.SINK:
        sink = Node(Op.SINK, DType.VOID, (sink,))
    ctx = ctx or ScheduleContext(outputs=sink.src)
    check = settings.CHECK.get()
    debug = debug_level()
    if check:
        verify(sink)
    dump.dump_input(sink)
    notify("on_input", sink)
    established: frozenset[str] = frozenset()  # what the passes so far made hold (VERIFIABLE)
    for step, (module, _why) in enumerate(PASSES, start=1):
        name = _pass_name(module)
        start = time.perf_counter()
        out = module.run(sink, ctx)
        elapsed = time.perf_counter() - start
        ctx.timings[name] = elapsed
        if debug >= 1:
            print(f"  pass {step:2d} {name:<20} {elapsed * 1e3:8.2f} ms", file=sys.stderr)
        if debug >= 3:
            print(out, file=sys.stderr)
        dump.dump_pass(step, name, out, sink)
        notify("on_pass", step, name, out, sink, ctx)
        established |= module.ESTABLISHES
        if check:
            verify(out, domains="domains" in established)
        sink = out
    return kernels_of(sink), ctx


def kernels_of(sink: Node) -> list[ScheduledKernel]:
    """The ``KERNEL`` nodes of a kernelized graph, sources first (a valid execution order)."""
    out = []
    for node in sink.toposort():
        if node.op is Op.KERNEL:
            bufs = tuple(base_buffer(s).arg.buffer for s in node.src)
            arg = node.arg
            out.append(ScheduledKernel(arg.ast, bufs, arg.info, arg.consts, region=region_of(node)))
    return out
