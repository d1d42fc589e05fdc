"""The cpu device's team size: ``REN_THREADS`` or OpenMP's default, at most the free cores.

Oracle: the rule written out (free = cores - round(others' busy cores)) on simulated samples of
``/proc/stat``; OpenMP's own ``omp_get_max_threads`` in the calling thread for what ``apply``
set; a real busy process for the measurement (it can only lower the count, so the check holds on
a machine that is busier still).
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
import threading
import time

import pytest

from ren.backends import cpu_threads
from ren.codegen.compiler import compile_cached

pytestmark = pytest.mark.cc

PROBE = "#include <omp.h>\nint probe_max_threads(void) { return omp_get_max_threads(); }\n"


def omp_max_threads() -> int:
    """OpenMP's team size for the calling thread, asked of OpenMP itself."""
    lib = ctypes.CDLL(str(compile_cached(PROBE, ("-shared", "-fPIC", "-fopenmp"), name="probe")))
    return int(lib.probe_max_threads())


@pytest.fixture
def fresh(monkeypatch):
    """No window measured yet, no decision made."""
    monkeypatch.setattr(cpu_threads, "_window", None)
    monkeypatch.setattr(cpu_threads, "_until", 0.0)
    monkeypatch.setattr(cpu_threads, "_threads", 0)
    monkeypatch.delenv("REN_THREADS", raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("cores", "others_busy", "free"),
    [(2, 0.0, 2), (2, 0.4, 2), (2, 0.5, 1), (2, 1.0, 1), (2, 2.0, 1), (8, 2.6, 5), (8, 9.0, 1)],
    ids=lambda v: str(v),
)
def test_free_cores_subtracts_what_other_processes_used(fresh, cores, others_busy, free):
    """Over a 1 s window: all cores' busy time, less this process's own, is the others' share."""
    clock = {"busy": 100.0, "own": 5.0}
    fresh.setattr(cpu_threads, "_cores", lambda: cores)
    fresh.setattr(cpu_threads, "_busy_seconds", lambda: (clock["busy"], 3))
    fresh.setattr(cpu_threads.time, "process_time", lambda: clock["own"])
    cpu_threads.free_cores(now=10.0)
    own_use = 0.7  # this process's own threads, never counted against it
    clock["busy"] += others_busy + own_use
    clock["own"] += own_use
    assert cpu_threads.free_cores(now=11.0) == free


def test_the_first_call_counts_the_processes_running_now(fresh):
    fresh.setattr(cpu_threads, "_cores", lambda: 4)
    fresh.setattr(cpu_threads, "_busy_seconds", lambda: (50.0, 3))  # this one and two others
    assert cpu_threads.free_cores(now=1.0) == 2


def test_without_proc_stat_every_core_is_used(fresh):
    fresh.setattr(cpu_threads, "_cores", lambda: 6)
    fresh.setattr(cpu_threads, "_busy_seconds", lambda: None)
    assert cpu_threads.free_cores() == 6


@pytest.mark.parametrize(
    ("setting", "free", "threads"), [(3, 4, 3), (3, 2, 2), (2, 1, 1), (8, 8, 8)]
)
def test_ren_threads_is_a_most_never_past_the_free_cores(fresh, setting, free, threads):
    """``REN_THREADS=N`` on a busy machine: a core another process keeps is never asked for."""
    fresh.setenv("REN_THREADS", str(setting))
    fresh.setattr(cpu_threads, "free_cores", lambda now=None: free)
    assert cpu_threads.choose() == threads


def test_one_thread_measures_nothing(fresh):
    fresh.setenv("REN_THREADS", "1")
    fresh.setattr(cpu_threads, "free_cores", lambda now=None: pytest.fail("measured"))
    assert cpu_threads.choose() == 1


def test_apply_sets_the_calling_threads_openmp_team_size(fresh):
    fresh.setattr(cpu_threads, "free_cores", lambda now=None: 4)
    fresh.setenv("REN_THREADS", "3")
    cpu_threads.apply()
    assert omp_max_threads() == 3
    seen: list[int] = []

    def other() -> None:  # another thread has its own OpenMP setting, set by its own apply
        fresh_value = omp_max_threads()
        cpu_threads.apply()
        seen.extend([fresh_value, omp_max_threads()])

    fresh.setattr(cpu_threads, "_until", 0.0)
    fresh.setenv("REN_THREADS", "2")
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen[1] == 2
    assert omp_max_threads() == 3  # this thread keeps its own until its next apply


def test_a_busy_core_is_left_to_the_process_using_it(fresh):
    """With another process spinning, at least one core counts as taken."""
    cores = cpu_threads._cores()
    if cores < 2:
        pytest.skip("needs two cores: with one, the default is one thread anyway")
    spin = "import time\nend = time.time() + 20\nwhile time.time() < end:\n    pass\n"
    busy = subprocess.Popen([sys.executable, "-c", spin])
    try:
        time.sleep(0.3)
        cpu_threads.free_cores()
        time.sleep(0.5)
        assert cpu_threads.free_cores() <= cores - 1
    finally:
        busy.kill()
        busy.wait()
