"""The graph runner of ``ren.jit`` on the cpu device: a whole captured plan as one C function.

``graph_runner(units, bindings, threaded)`` writes a C function that calls every kernel of a plan
through a table of entry points (``ren.backends.cpu`` re-exports it as the backend's
``graph_runner``); ``GraphRunner`` builds and calls it. Without OpenMP (``REN_THREADS=1``) the
function calls the kernels in order. With OpenMP it runs the plan as tasks on the team: limb
ranges and coefficient ranges of kernels, each started once the kernels it depends on are done
(``ren.backends.cpu_tasks``).
"""

from __future__ import annotations

import copy
import ctypes
import hashlib
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from ren.backends import cpu_runner, cpu_tasks, cpu_threads, cpu_tiers
from ren.backends.base import BoundRunner, Runner
from ren.codegen.ckernel import word_range
from ren.codegen.compiler import load_cached
from ren.codegen.helpers import c_int, c_name
from ren.device import Buffer

if TYPE_CHECKING:
    from _ctypes import CFuncPtr

    from ren.backends.cpu import CompiledKernel

__all__ = ["RUNNER_FLAGS", "GraphRunner", "graph_runner"]

#: How a graph runner is built (``GraphRunner``).
RUNNER_FLAGS = ("-O1", "-shared", "-fPIC")

#: How the task runner (``cpu_runner.RUNNER``) is built, once.
TASK_FLAGS = ("-O2", "-shared", "-fPIC", "-fopenmp")

#: What a slot of ``B`` points to: a root buffer, or a kernel's table.
Root: TypeAlias = Buffer | np.ndarray


class GraphRunner:
    """A captured plan as one C call; each replay is one ctypes call.

    Without OpenMP, the call is a C function written for the plan: every kernel called in order
    through a table of function pointers, with the byte offsets of arena views and limb windows
    baked into the source, which depends only on the plan's shape (indices, offsets, sizes), so
    the same plan in another process hits the compile cache. With OpenMP (``arrays`` given), the
    call is ``cpu_runner.RUNNER``, built once for every plan, reading the plan's tasks from
    ``arrays``; ``source`` then describes them.

    The call takes ``F`` (the kernels' entry points) and ``B`` (the address of every root buffer
    and table the plan touches). Inputs are slots of ``B`` set just before the call and cleared
    after it.
    """

    def __init__(
        self,
        source: str,
        name: str,
        fns: list[CFuncPtr],
        roots: list[Root | None],
        input_slots: dict[int, int],
        keep: list[Runner],
        arrays: dict[str, np.ndarray] | None = None,
    ) -> None:
        self.source, self.name, self.threaded = source, name, arrays is not None
        self._keep = keep  # the compiled kernels (and their libraries) the pointers point into
        self.arrays = arrays
        if arrays is None:
            # -O1: the runner is a list of calls; -O2 took twice as long to build a bootstrap's
            # (2.0 s against 1.1 s for 3,000 calls), for no faster replay
            lib = load_cached(source, RUNNER_FLAGS, name=name)
            self.fn: CFuncPtr = getattr(lib, name)
            self.fn.restype = None
            self.fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
            self._lib = lib
        else:
            self.fn = _task_runner()
        self.F = np.array(
            [ctypes.cast(f, ctypes.c_void_p).value for f in fns] or [0], dtype=np.uint64
        )
        self.roots: Sequence[Root | None] = (
            roots  # keeps every buffer and table alive while the runner is
        )
        self.B = np.array([0 if r is None else _address(r) for r in roots] or [0], dtype=np.uint64)
        self.input_slots = input_slots  # input position -> slot of B
        self.slots: list[tuple[int, int]] | None = None  # each argument's (slot, offset)
        self.windows: list[np.ndarray] = []  # ring tables of limb ranges: the last slots of B
        #: the tasks of a threaded runner (``ren.backends.cpu_tasks``), else ``None``
        self.tasks: cpu_runner.TaskGraph | None = None
        #: set to a float64 array of ``(tasks, 4)`` and the next replays trace their tasks in it
        #: (``cpu_runner.profile`` reads it); ``None``: no trace
        self.trace: np.ndarray | None = None

    def rebound(self, units: Sequence[BoundRunner]) -> GraphRunner | None:
        """This runner over the buffers of ``units``, the same kernels over other buffers.

        For a schedule-cache hit, whose units are those of the realization the runner was made
        for, over fresh buffers: ``None`` unless the kernels are the same and their buffers are
        shared the same way (each root in the same slot of ``B``, each view at the same offset).
        """
        if len(units) != len(self._keep) or any(
            u.fn is not f for u, f in zip(units, self._keep, strict=True)
        ):
            return None
        roots, slots = _roots(units)
        if slots != self.slots:
            return None
        new = copy.copy(self)
        every: list[Root] = [*roots, *self.windows]
        new.roots = every
        new.B = np.array([_address(r) for r in every] or [0], dtype=np.uint64)
        return new

    def run(self, inputs: list[Buffer | None]) -> None:
        """One replay with ``inputs`` (by input position) bound."""
        if self.threaded:
            cpu_threads.apply()
        B = self.B
        for k, slot in self.input_slots.items():
            buf = inputs[k]
            assert buf is not None  # a bound input is a buffer (None: a constant, never bound)
            B[slot] = buf.need_array().ctypes.data
        try:
            self.launch(B)
        finally:
            for slot in self.input_slots.values():
                B[slot] = 0

    def launch(self, B: np.ndarray) -> None:
        """The C call alone, over the table of buffers ``B`` (inputs bound in it already)."""
        if self.arrays is None:
            self.fn(self.F.ctypes.data, B.ctypes.data)
            return
        a, trace = self.arrays, self.trace
        if trace is not None and (trace.dtype != np.float64 or not trace.flags.writeable):
            raise ValueError("GraphRunner.trace must be a writable float64 array")
        tasks = len(a["tasks"])
        if trace is not None and trace.size < 4 * tasks:
            raise ValueError(f"GraphRunner.trace needs ({tasks}, 4) floats")
        self.fn(
            self.F.ctypes.data, B.ctypes.data, a["tasks"].ctypes.data, tasks,
            a["args"].ctypes.data, a["first"].ctypes.data, len(a["first"]) - 1,
            a["dep_start"].ctypes.data, a["out_start"].ctypes.data, a["outs"].ctypes.data,
            None if trace is None else trace.ctypes.data,
        )  # fmt: skip


def _task_text(names: list[str], kernel_of: list[int], deps: list[list[int]]) -> str:
    """What a threaded runner runs, as a C comment: each kernel, its tasks and its waits."""
    count: dict[int, int] = {}
    for k in kernel_of:
        count[k] = count.get(k, 0) + 1
    first = {k: names[t] for t, k in reversed(list(enumerate(kernel_of)))}
    lines = [
        f"/* A plan captured by ren.jit, run as {len(names)} tasks of {len(deps)} kernels on the",
        "   OpenMP team by ren_run_tasks (ren.backends.cpu_runner.RUNNER), each kernel's tasks",
        "   once the kernels it waits for are done:",
    ]
    for k, waits in enumerate(deps):
        after = f", after {', '.join(map(str, waits))}" if waits else ""
        tasks = f"{count.get(k, 0)} task{'s' if count.get(k, 0) != 1 else ''}"
        lines.append(f"   kernel {k}: {first.get(k, '-')}, {tasks}{after}")
    return "\n".join(lines) + " */\n"


def _parts(
    fn: CompiledKernel,
    args: list[tuple[int, int]],
    window: Callable[[np.ndarray, int, int, int], tuple[int, int]],
) -> list[list[tuple[int, int]]]:
    """The arguments of each task of one kernel: its limb or coefficient ranges, or it whole."""
    split = fn.split
    if split is None or len(split) != len(args):
        return [args]
    table = fn.tables[-1]
    if split[-1] == cpu_tasks.RING:
        ranges = cpu_tasks.limb_ranges(int(table[0]), split[0] // table.itemsize)
    else:
        ranges = cpu_tasks.word_ranges(int(table[1]))
    if len(ranges) < 2:
        return [args]
    return [
        [
            window(table, lo, hi, stride) if stride < 0 else (slot, byte + lo * stride)
            for (slot, byte), stride in zip(args, split, strict=True)
        ]
        for lo, hi in ranges
    ]


_runner_lock = threading.Lock()
_runner: tuple[CFuncPtr, ctypes.CDLL] | None = None  # the function and its library, kept loaded


def _task_runner() -> CFuncPtr:
    """``ren_run_tasks`` (``cpu_runner.RUNNER``), built once per process (and cached on disk)."""
    global _runner
    with _runner_lock:
        if _runner is None:
            lib = load_cached(cpu_runner.RUNNER, TASK_FLAGS, name="ren_run_tasks")
            fn = lib.ren_run_tasks
            fn.restype = None
            fn.argtypes = [ctypes.c_void_p] * 11
            _runner = (fn, lib)
        return _runner[0]


def _roots(units: Sequence[BoundRunner]) -> tuple[list[Root], list[tuple[int, int]]]:
    """Every root buffer and table ``units`` touch, in order, and each argument's slot and offset.

    The offset is the argument's byte offset in its root, which the runner's source bakes in.
    """
    roots: list[Root] = []
    index: dict[int, int] = {}
    slots: list[tuple[int, int]] = []
    for unit in units:
        args: list[tuple[Root, int]] = [(b.root, b.offset) for b in unit.bufs]
        args += [(t, 0) for t in getattr(unit.fn, "tables", ())]
        for obj, offset in args:
            key = id(obj)
            if key not in index:
                index[key] = len(roots)
                roots.append(obj)
            slots.append((index[key], offset))
    return roots, slots


def _address(obj: Root) -> int:
    array = obj if isinstance(obj, np.ndarray) else obj.ensure_allocated().need_array()
    return array.ctypes.data


def graph_runner(
    units: Sequence[BoundRunner], bindings: list[tuple[int, int, int]], threaded: bool = False
) -> GraphRunner | None:
    """The graph runner for a captured plan on the cpu device, or ``None`` if it cannot have one.

    There is none when a unit is neither a compiled kernel nor a copy between host buffers (nor
    yet while one is still building in the background). ``threaded``: the kernels were built
    with OpenMP, so each call sets its team size.
    """
    from ren.backends.cpu import CompiledKernel, CopyKernel  # (cpu imports this module)

    roots: list[Root | None] = []
    index: dict[int, int] = {}
    input_slots: dict[int, int] = {}
    bound = {(i, j): k for i, j, k in bindings}

    def slot_of(obj: Root | None, key: int) -> int:
        if key not in index:
            index[key] = len(roots)
            roots.append(obj)
        return index[key]

    fns: list[CFuncPtr] = []
    calls: list[str] = []  # without OpenMP: the C statements, one per unit
    tasks = cpu_runner.Tasks()  # with OpenMP: the tasks
    names: list[str] = []  # each task's kernel, for a profile
    accesses: list[list[cpu_tasks.Access]] = []
    # the ring tables and coefficient ranges of tasks, given slots after every other root (as
    # ``rebound`` wants); until then a task names one as slot -1 - its index here
    windows: dict[tuple[int, int, int], tuple[int, np.ndarray]] = {}  # key -> (index, table)

    def window(table: np.ndarray, lo: int, hi: int, stride: int) -> tuple[int, int]:
        key = (id(table), lo, hi)
        if key not in windows:
            made = (
                cpu_tasks.ring_window(table, lo, hi)
                if stride == cpu_tasks.RING
                else word_range(int(table[1]), lo, hi)
            )
            windows[key] = (len(windows), made)
        return (-1 - windows[key][0], 0)

    for i, unit in enumerate(units):
        args = []
        access: list[cpu_tasks.Access] = []
        for j, buf in enumerate(unit.bufs):
            if (i, j) in bound:
                k = bound[(i, j)]
                slot = slot_of(None, -1 - k)
                input_slots[k] = slot
                args.append((slot, 0))
                access.append((slot, 0, 1 << 62, j == 0))
            else:
                slot = slot_of(buf.root, id(buf.root))
                args.append((slot, buf.offset))
                access.append((slot, buf.offset, buf.offset + buf.nbytes, j == 0))
        accesses.append(access)
        fn: Runner | None = unit.fn
        if isinstance(fn, cpu_tiers.Tiered):  # built in the background: only once it is
            fn = fn.resolved()
        if isinstance(fn, CompiledKernel):
            for j, off in enumerate(fn.offsets):
                if off:
                    slot, byte = args[j]
                    args[j] = (slot, byte + off)
            args += [(slot_of(t, id(t)), 0) for t in fn.tables]
            if not threaded:
                params = ", ".join(["void *"] * len(args))
                call = ", ".join(f"B[{c_int(s)}] + {c_int(o)}" for s, o in args)
                note = c_name(fn.name)
                calls.append(f"((void (*)({params}))F[{len(fns)}])({call});  /* {note} */")
            elif len(args) > cpu_runner.MAX_ARGS:  # a kernel the task runner cannot call
                return graph_runner(units, bindings, threaded=False)
            else:
                for part in _parts(fn, args, window):
                    tasks.add(i, len(fns), part)
                    names.append(fn.name)
            fns.append(fn.fn)
        elif isinstance(fn, CopyKernel):
            (ds, do), (ss, so) = args
            nbytes = unit.bufs[0].nbytes
            so += fn.offset * (nbytes // fn.size)  # the window's first word, in bytes
            if not threaded:
                where = f"B[{c_int(ds)}] + {c_int(do)}, B[{c_int(ss)}] + {c_int(so)}"
                calls.append(f"memcpy({where}, {c_int(nbytes)});  /* copy */")
            else:
                tasks.add(i, -1, [(ds, do), (ss, so)], nbytes)
                names.append("copy")
        else:
            return None
    arrays = None
    if threaded:
        deps = cpu_tasks.dependencies(accesses)
        slots = [slot_of(w, id(w)) for _, w in windows.values()]
        arrays = tasks.finish(deps)
        pairs = arrays["args"].reshape(-1, 2)
        named = pairs[:, 0] < 0
        pairs[named, 0] = np.asarray(slots, dtype=np.int64)[-1 - pairs[named, 0]]
        digest = hashlib.sha256(b"".join(a.tobytes() for a in arrays.values())).hexdigest()
        name = f"ren_tasks_{digest[:12]}"
        source = _task_text(names, arrays["tasks"][:, 0].tolist() if names else [], deps)
    else:
        body = "\n".join(f"    {call}" for call in calls)
        name = f"ren_graph_{hashlib.sha256(body.encode()).hexdigest()[:12]}"
        source = (
            "/* A plan captured by ren.jit: every kernel in order. F: entry points; B: root "
            "buffers\n   and tables (inputs are bound just before the call). Offsets are in bytes."
            " */\n#include <string.h>\n\n"
            f"void {name}(void *const *F, char *const *B)\n{{\n{body}\n}}\n"
        )
    keep = [u.fn for u in units]
    runner = GraphRunner(source, name, fns, roots, input_slots, keep, arrays)
    runner.windows = [w for _, w in windows.values()]
    if arrays is not None:
        kernel_of = tuple(int(k) for k in arrays["tasks"][:, 0]) if names else ()
        graph = (kernel_of, tuple(tuple(d) for d in deps), tuple(names))
        traffic = sum(e - s for a in accesses for _, s, e, _ in a if e < 1 << 62)
        runner.tasks = cpu_runner.TaskGraph(*graph, traffic=traffic)
    if not bindings:  # a realization's units: the shape a schedule-cache hit can rebind
        runner.slots = _roots(units)[1]
    return runner
