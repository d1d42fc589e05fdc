"""How many OpenMP threads the cpu device uses: at most the cores other processes leave free.

A kernel or a plan that spreads its work over two threads is fast only while both threads run. On
a machine where another process keeps a core busy, the operating system shares that core between
the process and one of Ren's threads, and whatever waits for that thread (the end of a parallel
loop, the next task of a plan) waits for a whole time slice: an eager CKKS multiply, about 25
parallel loops, then takes several times as long as on one thread. So the cpu device never asks
for more threads than there are free cores:

    threads = min(setting, cores Ren may use - cores other processes kept busy in the last sample)

The setting is ``REN_THREADS`` when set, else OpenMP's default (``OMP_NUM_THREADS`` when set, else
every core): ``REN_THREADS=N`` is the most, never more than the free cores, so no setting makes a
busy machine slower than one thread by more than the share the other process takes.

The busy cores are measured from ``/proc/stat`` (the time every core spent outside idle) minus
Ren's own process time, over windows of at least ``SAMPLE_S`` seconds; a window where other
processes used half a core or more counts that core as taken. The first call, with no window yet,
counts the processes running at that moment. The choice is applied per calling thread with
``omp_set_num_threads`` (an OpenMP setting that belongs to the thread), only when it changes.
Where ``/proc/stat`` does not exist, every core is free. ``REN_THREADS=1`` builds the kernels
without OpenMP at all (``ren.backends.cpu.flags``) and measures nothing.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections.abc import Callable

from ren import settings
from ren.codegen.compiler import load_cached

__all__ = ["SAMPLE_S", "apply", "choose", "decision", "free_cores"]

#: The shortest window over which other processes' CPU use is measured again.
SAMPLE_S = 0.1

_HELPER = """\
#include <omp.h>
void ren_omp_set_threads(int n) { omp_set_num_threads(n); }
int ren_omp_max_threads(void) { return omp_get_max_threads(); }
"""

_lock = threading.Lock()  # one thread measures at a time
_helper_lock = threading.Lock()
_local = threading.local()
#: (the set function, OpenMP's own default)
_helper: tuple[Callable[[int], None], int] | None = None
_window: tuple[float, float, float] | None = None  # (wall, busy seconds of all cores, own seconds)
_until = 0.0  # when the current decision expires
_threads = 0  # the current decision (0: none yet)
_others = 0.0  # cores other processes used in the last window


def _load_helper() -> tuple[Callable[[int], None], int]:
    """The ``omp_set_num_threads`` entry point and OpenMP's default team size (built once)."""
    global _helper
    if _helper is None:
        with _helper_lock:
            if _helper is None:
                flags = ("-O2", "-shared", "-fPIC", "-fopenmp")
                lib = load_cached(_HELPER, flags, name="ren_omp_threads")
                set_threads = lib.ren_omp_set_threads
                set_threads.argtypes = [ctypes.c_int]
                set_threads.restype = None
                _helper = (set_threads, int(lib.ren_omp_max_threads()))
    return _helper


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _busy_seconds() -> tuple[float, int] | None:
    """Seconds every core spent outside idle since boot, and the processes running now."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            text = f.read()
    except OSError:
        return None
    fields = text.split("\n", 1)[0].split()
    if not fields or fields[0] != "cpu" or len(fields) < 6:
        return None
    ticks = [int(x) for x in fields[1:9]]
    idle = ticks[3] + ticks[4]  # idle and iowait
    hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    running = 1
    for line in text.splitlines():
        if line.startswith("procs_running"):
            running = int(line.split()[1])
            break
    return (sum(ticks) - idle) / hz, running


def free_cores(now: float | None = None) -> int:
    """Cores other processes left free in the last window (at least 1); measures a new window.

    Cores Ren may use minus the cores other processes kept busy (half a core or more counts as
    one). Without ``/proc/stat``, every core.
    """
    global _window, _others
    cores = _cores()
    sample = _busy_seconds()
    if sample is None:
        return cores
    busy, running = sample
    wall = time.monotonic() if now is None else now
    own = time.process_time()
    if _window is None:  # no window yet: the processes running now, less this one
        _others = float(max(running - 1, 0))
    else:
        last_wall, last_busy, last_own = _window
        span = wall - last_wall
        if span > 0:
            _others = max(0.0, (busy - last_busy) - (own - last_own)) / span
    _window = (wall, busy, own)
    return max(1, cores - int(_others + 0.5))


def choose() -> int:
    """The team size a cpu kernel started now should use (the rule of the module docstring)."""
    most = settings.THREADS.get()
    if most == 1:
        return 1
    if most is None:
        _, most = _load_helper()
    return max(1, min(most, free_cores()))


def decision() -> dict[str, object]:
    """The current choice, for tools and benchmarks: threads, other processes' cores, cores."""
    return {"threads": _threads, "others_cores": round(_others, 2), "cores": _cores()}


def apply() -> None:
    """Set the calling thread's OpenMP team size to the current choice.

    The choice is measured again at most every ``SAMPLE_S`` seconds. Called before each cpu
    kernel and graph replay.
    """
    global _until, _threads
    now = time.monotonic()
    if now >= _until and _lock.acquire(blocking=False):
        try:
            _threads = choose()
            _until = now + SAMPLE_S
        finally:
            _lock.release()
    n = _threads
    if n and getattr(_local, "applied", 0) != n:
        set_threads, _ = _load_helper()
        set_threads(n)
        _local.applied = n
