"""The first calls of a kernel the compile cache lacks: they run at once, while it builds.

A program's first run on the cpu device needs kernels nobody has built yet. Rather than wait for
the compiler, the cpu device runs such a kernel on something that needs no build of its own, and
builds it in the background (``REN_TIERED``, on by default):

* an elementwise kernel runs on the elementwise machine (``ren.codegen.vm``: one library for
  every body, itself built once per machine), or, until that library exists, on the python
  backend's interpreter;
* an NTT, INTT, rescale or basis change runs on the python backend.

Both give the very words the compiled kernel gives (the conformance tests compare every backend
with the python one), so only the time of those first calls differs. A background thread runs
the compiler (``ren.codegen.batch``, one process per free core, at the program's priority); the
first call after the build finishes loads the library and uses it from then on (``Tiered``). A
build that fails is tried again at that call, in the caller's thread, so the ``CompileError``
reaches the program that needs the kernel.

Off (``REN_TIERED=0``), under ``REN_VALIDATE`` (which checks the compiled kernels themselves) and
for ``python -m ren.codegen warm`` (which exists to build), every kernel is built before it runs.
A process that exits while a build runs waits for it (its libraries fill the cache for the next
run); ``wait()`` does the same from a program.

Threads: the table of builds under way is behind a lock; a ``Tiered`` kernel may be called from
several threads at once (each may load the finished library; the loads agree). Processes: a
forked child has no background thread, so a kernel still building in the parent is built in the
child's own thread at its next call there.
"""

from __future__ import annotations

import atexit
import contextvars
import ctypes
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future

import numpy as np

from ren import settings
from ren.backends import cpu_threads
from ren.codegen import compiler, vm
from ren.device import Buffer

__all__ = ["Tiered", "VMKernel", "enabled", "pending", "submit", "wait"]

_lock = threading.Lock()  # guards _pending, _queue and _worker
_pending: dict[str, Future[int]] = {}  # source -> the background build that makes it
_Job = tuple[
    list[tuple[str, str]], Callable[[list[tuple[str, str]]], int], Future[int], contextvars.Context
]
_queue: list[_Job] = []  # submitted, not started: (pairs, build, future, settings)
_worker: list[threading.Thread] = []  # the background thread, while it runs
_machines: dict[str, tuple[Callable[..., int], object]] = {}  # dtype -> (entry point, library)


_generation = [0]  # one more in each forked child: builds of the parent never finish there


def _forked() -> None:
    """In a forked child: no build runs here (the parent's thread is not copied), so forget them.

    A ``Tiered`` kernel made before the fork then builds in the caller's thread at its next call.
    """
    global _lock
    _lock = threading.Lock()
    compiler.after_fork()  # the background thread may have held the compile cache's locks
    _pending.clear()
    _queue.clear()
    _worker.clear()
    _generation[0] += 1


os.register_at_fork(after_in_child=_forked)


def enabled() -> bool:
    """Whether kernels the cache lacks run at once while they build (``REN_TIERED``)."""
    return settings.TIERED.get() and not settings.VALIDATE.get()


def pending(source: str) -> Future[int] | None:
    """The background build that makes ``source``, while it runs; else ``None``."""
    with _lock:
        return _pending.get(source)


def submit(pairs: list[tuple[str, str]], build: Callable[[list[tuple[str, str]]], int]) -> int:
    """Build ``(name, source)`` pairs not already under way in the background, with ``build``.

    Returns how many were submitted. ``build`` runs in the background thread, in a copy of the
    caller's settings (``contextvars``). What is submitted while a build runs is built together
    after it, in one build: a program's first realizations, each with a few new kernels, make a
    few libraries, not one per realization.
    """
    with _lock:
        todo = [(name, src) for name, src in pairs if src not in _pending]
        if not todo:
            return 0
        future: Future[int] = Future()
        _queue.append((todo, build, future, contextvars.copy_context()))
        for _, src in todo:
            _pending[src] = future
        if not _worker:
            _worker.append(threading.Thread(target=_work, name="ren-build"))
            _worker[0].start()
    return len(todo)


def _work() -> None:
    """The background thread: build everything queued, together, until nothing is left."""
    while True:
        with _lock:
            jobs = list(_queue)
            _queue.clear()
            if not jobs:
                _worker.clear()
                return
        items = list(dict.fromkeys(pair for pairs, _, _, _ in jobs for pair in pairs))
        _, build, _, context = jobs[-1]  # the latest settings
        error: BaseException | None = None
        try:
            context.run(build, items)
        except BaseException as e:  # the kernels' own calls build them again and raise it
            error = e
        for _, _, future, _ in jobs:  # done before they leave the table: wait() sees them
            if error is None:
                future.set_result(len(items))
            else:
                future.set_exception(error)
        with _lock:
            for pairs, _, future, _ in jobs:
                for _, src in pairs:
                    if _pending.get(src) is future:
                        del _pending[src]


def wait() -> None:
    """Wait until every background build has finished (its errors are left to the kernels)."""
    with _lock:
        futures = set(_pending.values())
    for future in futures:
        future.exception()  # waits; a failed build is tried again by the kernel that needs it


atexit.register(wait)


class Tiered:
    """A kernel that runs on ``fallback`` until its library (``future``) is built, then on it.

    ``make()`` loads the built kernel (a ``CompiledKernel``); ``fallback()`` gives the runner to
    use meanwhile (asked again at each call, so an elementwise kernel moves to the machine as
    soon as the machine's library is built).
    """

    def __init__(
        self,
        name: str,
        future: Future[int],
        make: Callable[[], Callable[[tuple[Buffer, ...]], None]],
        fallback: Callable[[], Callable[[tuple[Buffer, ...]], None]],
    ) -> None:
        self.name, self.future, self._make, self._fallback = name, future, make, fallback
        self.compiled: Callable[[tuple[Buffer, ...]], None] | None = None
        self._generation = _generation[0]

    def __call__(self, bufs: tuple[Buffer, ...]) -> None:
        """Run the kernel on ``bufs``: built, or on the fallback while the build runs."""
        kernel = self.resolved()
        if kernel is None:
            self._fallback()(bufs)
        else:
            kernel(bufs)

    def resolved(self) -> Callable[[tuple[Buffer, ...]], None] | None:
        """The built kernel, loaded at the first call after its build finished; else ``None``."""
        if self.compiled is None and (
            self.future.done() or self._generation != _generation[0]  # or forked since
        ):
            self.compiled = self._make()
        return self.compiled

    @property
    def building(self) -> bool:
        """Whether the library is still being built (the kernel runs on its fallback)."""
        return self.resolved() is None

    @property
    def tables(self) -> tuple[np.ndarray, ...]:
        """The built kernel's tables (none while it builds)."""
        return getattr(self.compiled, "tables", ())

    def __repr__(self) -> str:
        state = "built" if self.compiled is not None else "building"
        return f"<Tiered {self.name} ({state})>"


class VMKernel:
    """An elementwise body run on the elementwise machine (``ren.codegen.vm``).

    ``tables`` are the body's gather tables then its ring table, as the fused kernel takes them.
    """

    def __init__(
        self,
        code: vm.Code,
        n: int,
        tables: tuple[np.ndarray, ...],
        fn: Callable[..., int],
        threaded: bool,
    ) -> None:
        self.code, self.n, self.fn, self.threaded = code, n, fn, threaded
        self._perm = np.array([t.ctypes.data for t in tables[:-1]] or [0], dtype=np.uint64)
        self._ring = tables[-1]
        self._keep = tables

    def __call__(self, bufs: tuple[Buffer, ...]) -> None:
        """Run the body over ``bufs`` (output first)."""
        if self.threaded:  # the threads of the call, as for a compiled kernel
            cpu_threads.apply()
        ptrs = np.array([b.need_array().ctypes.data for b in bufs], dtype=np.uint64)
        code = self.code
        failed = self.fn(
            code.words.ctypes.data,
            code.count,
            code.regs,
            code.out,
            self.n,
            ptrs.ctypes.data,
            self._perm.ctypes.data,
            self._ring.ctypes.data,
        )
        if failed:
            raise MemoryError(f"the elementwise machine could not allocate {code.regs} rows")


def machine(dtype: str, flags: tuple[str, ...]) -> Callable[..., int] | None:
    """The machine's entry point for ``dtype`` when its library is built; else ``None``."""
    held = _machines.get(dtype)
    if held is not None:
        return held[0]
    name, source = vm.vm_name(dtype), vm.vm_source(dtype)
    if pending(source) is not None or not compiler.cached(source, flags, name=name):
        return None
    lib = compiler.load_cached(source, flags, name=name)
    fn = getattr(lib, name)
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]
    fn.argtypes += [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    with _lock:  # the library is kept with its entry point, loaded while the process runs
        return _machines.setdefault(dtype, (fn, lib))[0]


def forget() -> None:
    """Forget the loaded machines (``cpu.forget_kernels``)."""
    with _lock:
        _machines.clear()
