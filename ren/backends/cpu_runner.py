"""The C side of a threaded plan: one task runner for every plan, the plan as its arrays.

``RUNNER`` is the C function ``ren_run_tasks``, built once per machine (``ren.backends.cpu_graph``
loads it); a plan cut into tasks (``ren.backends.cpu_tasks``) reaches it as the arrays of
:class:`Tasks`, so no plan is compiled for the threads. :class:`TaskGraph` and :func:`profile`
read a traced replay; :func:`predicted_speedup` is Brent's bound for more cores.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["MAX_ARGS", "RUNNER", "TaskGraph", "Tasks", "predicted_speedup", "profile"]

#: The most arguments a kernel called by a task takes (buffers and tables); a plan with a kernel
#: of more runs its kernels in order instead (``ren.backends.cpu_graph``).
MAX_ARGS = 64

#: The one C function that runs every threaded plan: the plan is data (``Tasks``), so nothing is
#: compiled per plan. A task calls ``F[fn]`` on ``argc`` pointers ``B[slot] + offset`` (or, with
#: ``fn = -1``, copies ``bytes`` from its second pointer to its first).
RUNNER = (
    """\
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <omp.h>

typedef void *P;

/* Microseconds on a monotonic clock (for a trace). */
static double ren_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

/* One task: the kernel F[fn] on its arguments, or a copy. */
static void ren_task(void *const *F, char *const *B, const int64_t *task, const int64_t *args)
{
    const int64_t fn = task[1], argc = task[2], *a = args + 2 * task[3];
    P p[MAX_ARGS];
    for (int64_t i = 0; i < argc; ++i)
        p[i] = B[a[2 * i]] + a[2 * i + 1];
    if (fn < 0) {
        memcpy(p[0], p[1], (size_t)task[4]);
        return;
    }
    void *f = F[fn];
    switch (argc) {
"""
    + "".join(
        f"    case {k}: ((void (*)({', '.join(['P'] * k)}))f)"
        f"({', '.join(f'p[{i}]' for i in range(k))}); break;\n"
        for k in range(1, MAX_ARGS + 1)
    )
    + """\
    default: break;
    }
}

/*
 * Run a plan's tasks on the OpenMP team, each as soon as the kernels it depends on are done:
 * a kernel's tasks join the ready queue when its last dependency finishes (the first kernels'
 * at the start), and each thread takes the oldest ready task, runs it, and counts it done.
 *   tasks      5 words a task: kernel, fn (-1: a copy), argc, first argument, bytes (a copy's)
 *   args       2 words an argument: slot of B, byte offset
 *   first      each kernel's first task (n_kernels + 1 words: a kernel's tasks are consecutive)
 *   dep_start, deps     the kernels each kernel waits for
 *   out_start, outs     the kernels that wait for each kernel
 *   trace      NULL, or 4 doubles a task: thread, when the thread looked for work after its
 *              task before (its wait for a ready task), started, ended (microseconds)
 */
void ren_run_tasks(void *const *F, char *const *B, const int64_t *tasks, int64_t n_tasks,
                   const int64_t *args, const int64_t *first, int64_t n_kernels,
                   const int64_t *dep_start, const int64_t *out_start, const int64_t *outs,
                   double *trace)
{
    /* per kernel: tasks left to finish, and dependencies left (a kernel is ready at 0) */
    int64_t *left = malloc(sizeof(int64_t) * (size_t)(2 * (n_kernels > 0 ? n_kernels : 1)));
    int64_t *queue = malloc(sizeof(int64_t) * (size_t)(n_tasks > 0 ? n_tasks : 1));
    int64_t head = 0, tail = 0, finished = 0;
    omp_lock_t lock;
    if (left == NULL || queue == NULL) {
        free(left);
        free(queue);
        return;
    }
    int64_t *waiting = left + n_kernels;
    for (int64_t k = 0; k < n_kernels; ++k) {
        left[k] = first[k + 1] - first[k];
        waiting[k] = dep_start[k + 1] - dep_start[k];
        if (waiting[k] == 0)
            for (int64_t t = first[k]; t < first[k + 1]; ++t)
                queue[tail++] = t;
    }
    omp_init_lock(&lock);
    omp_set_max_active_levels(1);    /* a kernel called by a task runs on its task's thread */
    #pragma omp parallel
    {
    double taken = 0.0;               /* when this thread last looked for work after a task */
    for (int spins = 0;;) {
        int64_t t = -1;
        if (trace && spins == 0)
            taken = ren_now();
        omp_set_lock(&lock);
        if (head < tail)
            t = queue[head++];
        omp_unset_lock(&lock);
        if (t < 0) {                  /* nothing ready: all done, or wait for another thread */
            if (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) == n_tasks)
                break;
            if (++spins < 2000) {
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
            } else {
                sched_yield();
            }
            continue;
        }
        spins = 0;
        const int64_t *task = tasks + 5 * t, k = task[0];
        double started = trace ? ren_now() : 0.0;
        ren_task(F, B, task, args);
        if (trace) {
            trace[4 * t] = omp_get_thread_num();
            trace[4 * t + 1] = taken;
            trace[4 * t + 2] = started;
            trace[4 * t + 3] = ren_now();
        }
        if (__atomic_sub_fetch(&left[k], 1, __ATOMIC_ACQ_REL) == 0) {   /* kernel k is done */
            for (int64_t o = out_start[k]; o < out_start[k + 1]; ++o) {
                const int64_t d = outs[o];
                if (__atomic_sub_fetch(&waiting[d], 1, __ATOMIC_ACQ_REL) == 0) {
                    omp_set_lock(&lock);
                    for (int64_t u = first[d]; u < first[d + 1]; ++u)
                        queue[tail++] = u;
                    omp_unset_lock(&lock);
                }
            }
        }
        __atomic_add_fetch(&finished, 1, __ATOMIC_RELEASE);
    }
    }
    omp_destroy_lock(&lock);
    free(left);
    free(queue);
}
"""
).replace("MAX_ARGS", str(MAX_ARGS))


class Tasks:
    """A plan as the arrays ``ren_run_tasks`` reads (``RUNNER``), built task by task.

    ``add(kernel, fn, args, nbytes=0)`` appends a task of ``kernel`` (kernels in plan order,
    a kernel's tasks one after another) calling entry point ``fn`` (``-1``: a copy of ``nbytes``)
    on ``args``, each ``(slot of B, byte offset)``; ``finish(deps)`` makes the arrays.
    """

    def __init__(self) -> None:
        self.rows: list[tuple[int, int, int, int, int]] = []
        self.args: list[int] = []

    def add(self, kernel: int, fn: int, args: Sequence[tuple[int, int]], nbytes: int = 0) -> None:
        """Append one task (see the class docstring)."""
        if len(args) > MAX_ARGS:
            raise ValueError(f"a task's kernel takes {len(args)} arguments, more than {MAX_ARGS}")
        self.rows.append((kernel, fn, len(args), len(self.args) // 2, nbytes))
        for slot, offset in args:
            self.args += [slot, offset]

    def finish(self, deps: list[list[int]]) -> dict[str, np.ndarray]:
        """The arrays ``RUNNER`` reads (all ``int64``).

        ``tasks``, ``args``, ``first`` (each kernel's first task), ``dep_start`` (where each
        kernel's waits start: only their counts are read), ``out_start`` and ``outs`` (the
        kernels that wait for each kernel).
        """
        counts = np.zeros(len(deps), dtype=np.int64)
        for row in self.rows:
            counts[row[0]] += 1
        outs: list[list[int]] = [[] for _ in deps]
        for k, waits in enumerate(deps):
            for d in waits:
                outs[d].append(k)
        return {
            "tasks": np.array(self.rows or [(0, 0, 0, 0, 0)], dtype=np.int64),
            "args": np.array(self.args or [0, 0], dtype=np.int64),
            "first": np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
            "dep_start": np.cumsum([0, *(len(d) for d in deps)], dtype=np.int64),
            "out_start": np.cumsum([0, *(len(o) for o in outs)], dtype=np.int64),
            "outs": np.array([k for o in outs for k in o] or [0], dtype=np.int64),
        }


@dataclass(frozen=True)
class TaskGraph:
    """A threaded graph runner's tasks: each one's kernel and name, each kernel's waits.

    ``traffic`` is the bytes of buffers a replay's kernels read and write, added over kernels
    (inputs bound at the call and read-only tables such as twiddles aside): what a replay asks
    of memory when nothing stays in cache.
    """

    kernel_of: tuple[int, ...]
    deps: tuple[tuple[int, ...], ...]
    names: tuple[str, ...]
    traffic: int = 0


def profile(graph: TaskGraph, trace: np.ndarray) -> dict[str, Any]:
    """What one traced replay did, and what the plan allows, in milliseconds.

    ``trace`` is the ``(tasks, 4)`` array a replay filled (``GraphRunner.trace``). Returns:

    - ``wall_ms``: from the first look for a task to the last task's end;
    - ``threads``: per thread, its tasks, ``busy_ms`` (running them) and ``wait_ms`` (idle before
      them, with no task ready: waiting for the kernels they needed);
    - ``work_ms``: every task's time, added; ``span_ms``: the longest chain of kernels, each
      counted at its longest task (what no number of cores can go below, at these task times);
      ``parallelism``: ``work_ms / span_ms``;
    - ``kinds``: per kernel name, its tasks, ``busy_ms``, and ``wait_ms``, the idle time before
      its tasks (what a thread waited for to take one).
    """
    took, start, end = trace[:, 1], trace[:, 2], trace[:, 3]
    origin = float(took.min())
    threads: dict[int, dict[str, float]] = {}
    kinds: dict[str, dict[str, float]] = {}
    finish = [0.0] * len(graph.deps)
    longest = [0.0] * len(graph.deps)
    for t, k in enumerate(graph.kernel_of):
        busy, wait = float(end[t] - start[t]) / 1e3, float(start[t] - took[t]) / 1e3
        mine = threads.setdefault(int(trace[t, 0]), {"tasks": 0, "busy_ms": 0.0, "wait_ms": 0.0})
        kind = kinds.setdefault(graph.names[t], {"tasks": 0, "busy_ms": 0.0, "wait_ms": 0.0})
        for row in (mine, kind):
            row["tasks"] += 1
            row["busy_ms"] += busy
            row["wait_ms"] += wait
        longest[k] = max(longest[k], busy)
    for k, deps in enumerate(graph.deps):
        finish[k] = max((finish[d] for d in deps), default=0.0) + longest[k]
    work = float((end - start).sum()) / 1e3
    span = max(finish, default=0.0)
    return {
        "wall_ms": (float(end.max()) - origin) / 1e3,
        "threads": dict(sorted(threads.items())),
        "work_ms": work,
        "span_ms": span,
        "parallelism": work / span if span else 1.0,
        "kinds": kinds,
    }


def predicted_speedup(work_ms: float, span_ms: float, cores: int) -> float:
    """Brent's bound: on ``cores`` greedy workers a replay takes at most ``work / cores + span``.

    The speed-up that bound guarantees over one core's ``work`` (memory bandwidth aside).
    """
    return work_ms / (work_ms / cores + span_ms)
