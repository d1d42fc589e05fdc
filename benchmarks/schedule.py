"""Benchmark: what scheduling and realizing a ``Poly`` program cost.

Run from the repository root::

    .venv/bin/python benchmarks/schedule.py [--out FILE.json] [--repeat N] [--quick]

It prints a table and writes the figures as JSON (default ``benchmarks/results/schedule.json``):

* ``schedule``: the time of ``ren.engine.schedule.schedule(sink)`` on generated programs of about
  10, 100 and 1000 nodes (``--quick``: 10 and 100), with the actual node count, the number of
  outputs and of kernels, and the time of each pass. Scheduling creates the buffers of the
  kernels but runs nothing. Every repeat schedules a freshly built graph (same shape, new input
  buffers), so no repeat reuses the work of another; building the graph is not timed.
* ``realize``: ``expr.realize()`` end to end (schedule, memory plan, exec units, run) for
  ``expr = (a + b) * (a - 1)`` at ``n=8, q=(17, 97)`` (the first program of the docs) and at
  ``n=4096`` with four 30-bit moduli, fresh ``Poly`` values each repeat; plus the same work split
  into its phases.

Times are wall-clock seconds from ``time.perf_counter``: ``median`` and ``min`` over ``--repeat``
runs, ``first`` (the first of them) and every run in ``times_s``. An untimed warm-up runs before
any figure, so imports, ring tables (NTT twiddles, Montgomery constants) and the python backend's
code cache (kernel bodies are interned, so the same body is compiled once per process) are warm:
the figures are what a program pays for its second and later realizations of a shape, not for
its first. ``REN_CHECK``, ``REN_DEBUG`` and ``REN_DUMP`` are switched off while timing. Nothing
here asserts a time: the figures are for reading and comparing, on the machine in ``machine``.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

# Off before Ren reads them: the verifier, debug printing and graph dumps are not what we time.
#: the variables switched off while timing -> what the caller had set (None: unset).
SWITCHED_OFF = {var: os.environ.pop(var, None) for var in ("REN_CHECK", "REN_DEBUG", "REN_DUMP")}

from _machine import machine, write_results  # noqa: E402  (benchmarks/ is on sys.path)

from ren.engine.memory import plan_memory  # noqa: E402
from ren.engine.realize import make_exec_units, run_exec_units  # noqa: E402
from ren.engine.schedule import schedule  # noqa: E402
from ren.ir.node import Node  # noqa: E402
from ren.ir.op import DType, Op  # noqa: E402
from ren.poly import Poly  # noqa: E402
from ren.ring import RingSpec, ntt_primes  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "schedule.json"
SIZES = (10, 100, 1000)
QUICK_SIZES = (10, 100)
#: the ring of the scheduling programs and of the large realization: n=4096, four 30-bit primes.
BIG_RING = RingSpec(4096, ntt_primes(4096, 30, 4))
SEED_RING = RingSpec(n=8, moduli=(17, 97))
T = TypeVar("T")


# --------------------------------------------------------------------------------------------
# the programs


def program(target: int, seed: int = 0, ring: RingSpec = BIG_RING) -> Node:
    """A random but reproducible ``Poly`` program of about ``target`` nodes, under one ``SINK``.

    Three uniform inputs, then one operation per step: adds, subtractions, products, products
    and sums with constants, rotations, negations. The first operand is the newest value nothing
    has used yet, the second (when there is one) an input not used yet, else mostly a recent
    value, so the program is a chain with shared subexpressions and few loose ends. At a
    quarter, a half and three quarters of the target (once a level has a few values) the newest
    value is rescaled, and the steps after it work one modulus down, as a CKKS circuit does.
    The outputs are the computed values nothing else used. The same ``target`` and ``seed``
    give the same shape every time, over new input buffers.
    """
    rng = np.random.default_rng(seed)
    pool = [Poly.uniform(ring, rng) for _ in range(3)]
    computed: list[Node] = []
    used: set[Node] = set()
    seen: set[Node] = set()  # every node of the graph so far, less the SINK
    rescales = [target * k // 4 for k in (1, 2, 3)]
    constants: set[int] = set()

    def constant() -> int:
        # Each constant once: for now the same constant at two levels fails to schedule
        # (bufferize's "shared" rule wraps the bare CONST node that both rings' AS_RING share).
        c = int(rng.integers(2, 1 << 20))
        while c in constants:
            c = int(rng.integers(2, 1 << 20))
        constants.add(c)
        return c

    def fresh() -> Poly:
        """The newest value not used yet (or a recent one when all are)."""
        for p in reversed(pool):
            if p.node not in used:
                return p
        return recent()

    def recent() -> Poly:
        back = min(int(rng.geometric(0.5)) - 1, len(pool) - 1)  # 0 = newest, most often
        return pool[len(pool) - 1 - back]

    while len(seen) + 1 < target:  # + 1: the SINK
        x = fresh()
        inputs = [p for p in pool[:3] if p.node not in used and p is not x and p.realized]
        y = inputs[0] if inputs else recent()  # every input gets used, early
        if rescales and len(seen) >= rescales[0] and len(pool) > 3 and x.ring.L > 1:
            rescales.pop(0)
            v, operands = x.rescale(), (x,)
            pool = [v]  # the next level starts from the rescaled value
        else:
            r = rng.random()
            if r < 0.25:
                v, operands = x + y, (x, y)
            elif r < 0.35:
                if x.node is y.node:  # x - x is the constant 0: not a computation worth timing
                    continue
                v, operands = x - y, (x, y)
            elif r < 0.60:
                v, operands = x * y, (x, y)
            elif r < 0.70:
                v, operands = x * constant(), (x,)
            elif r < 0.78:
                v, operands = x + constant(), (x,)
            elif r < 0.93:
                v, operands = x.rotate(int(rng.integers(1, 16))), (x,)
            elif x.node.op is not Op.NEG:  # -(-x) is x, and -(-x) - x a constant
                v, operands = -x, (x,)
            else:
                continue
            if v.node in seen:  # nothing new (an interned node, or an operand returned as is)
                continue
            pool.append(v)
        used.update(p.node for p in operands)
        computed.append(v.node)
        _add_nodes(seen, v.node)
    outputs = tuple(node for node in computed if node not in used)
    return Node(Op.SINK, DType.VOID, outputs)


def _add_nodes(seen: set[Node], root: Node) -> None:
    """Add ``root`` and every node below it to ``seen``, stopping at nodes already there."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(s for s in node.src if s not in seen)


def seed_expr(ring: RingSpec) -> Poly:
    """``(a + b) * (a - 1)`` with ``a = [1..n]`` and ``b = [n..1]``: the docs' first program."""
    a = Poly(list(range(1, ring.n + 1)), ring)
    b = Poly(list(range(ring.n, 0, -1)), ring)
    return (a + b) * (a - 1)


# --------------------------------------------------------------------------------------------
# timing


def _timed(fn: Callable[[], T]) -> tuple[float, T]:
    """``fn()``'s wall-clock seconds and its result."""
    gc.collect()  # the previous repeat's garbage is not this one's cost
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def _summary(times: list[float]) -> dict[str, object]:
    return {
        "median_s": statistics.median(times),
        "min_s": min(times),
        "first_s": times[0],
        "times_s": times,
    }


def bench_schedule(target: int, repeat: int) -> dict[str, object]:
    """Schedule a fresh ``program(target)`` ``repeat`` times."""
    times: list[float] = []
    passes: dict[str, list[float]] = {}
    nodes = outputs = kernels = 0
    for _ in range(repeat):
        sink = program(target)
        nodes, outputs = len(sink.toposort()), len(sink.src)
        seconds, (sched, ctx) = _timed(lambda sink=sink: schedule(sink))
        times.append(seconds)
        kernels = len(sched)
        for name, pass_s in ctx.timings.items():
            passes.setdefault(name, []).append(pass_s)
        del sink, sched, ctx
    return {
        "target_nodes": target,
        "nodes": nodes,
        "outputs": outputs,
        "kernels": kernels,
        **_summary(times),
        "passes_median_s": {name: statistics.median(ts) for name, ts in passes.items()},
    }


def bench_realize(ring: RingSpec, repeat: int) -> dict[str, object]:
    """``seed_expr(ring).realize()`` end to end, then the same work phase by phase."""
    times = []
    for _ in range(repeat):
        expr = seed_expr(ring)
        times.append(_timed(expr.realize)[0])
        del expr
    phases: dict[str, list[float]] = {"schedule": [], "make_exec_units": [], "run_exec_units": []}
    kernels = 0
    for _ in range(repeat):
        sink = Node(Op.SINK, DType.VOID, (seed_expr(ring).node,))
        gc.collect()
        t0 = time.perf_counter()
        sched, _ctx = schedule(sink)
        sched, _plan = plan_memory(sched)
        t1 = time.perf_counter()
        units = make_exec_units(sched)
        t2 = time.perf_counter()
        run_exec_units(units)
        t3 = time.perf_counter()
        for name, seconds in zip(phases, (t1 - t0, t2 - t1, t3 - t2), strict=True):
            phases[name].append(seconds)
        kernels = len(sched)
        del sink, sched, _ctx, units
    return {
        "ring": {"n": ring.n, "moduli": list(ring.moduli), "dtype": ring.dtype},
        "expression": "(a + b) * (a - 1)",
        "kernels": kernels,
        **_summary(times),
        "phases_median_s": {name: statistics.median(ts) for name, ts in phases.items()},
    }


def warm_up() -> None:
    """One untimed realization per ring: imports, ring tables and first-call costs."""
    for ring in (SEED_RING, BIG_RING):
        seed_expr(ring).realize()
    schedule(program(30))


# --------------------------------------------------------------------------------------------
# the report


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:10.3f}"


def print_table(results: dict[str, object]) -> None:
    given = ", ".join(f"{k}={v}" for k, v in results["environment"]["given"].items() if v)
    print(f"Ren benchmarks: {results['repeat']} repeats; times in ms (median, min, first)")
    print(f"REN_CHECK, REN_DEBUG, REN_DUMP off while timing{f' (given: {given})' if given else ''}")
    print()
    print("schedule(sink), ring n=4096 L=4 (nothing runs)")
    print(f"{'nodes':>7} {'outputs':>7} {'kernels':>7} {'median':>10} {'min':>10} {'first':>10}")
    for row in results["schedule"]:
        print(
            f"{row['nodes']:>7} {row['outputs']:>7} {row['kernels']:>7} "
            f"{_ms(row['median_s'])} {_ms(row['min_s'])} {_ms(row['first_s'])}"
        )
    print()
    print("expr.realize(), expr = (a + b) * (a - 1), end to end")
    print(f"{'ring':<22} {'kernels':>7} {'median':>10} {'min':>10} {'first':>10}")
    for name, row in results["realize"].items():
        ring = row["ring"]
        label = f"{name}: n={ring['n']} L={len(ring['moduli'])}"
        print(
            f"{label:<22} {row['kernels']:>7} "
            f"{_ms(row['median_s'])} {_ms(row['min_s'])} {_ms(row['first_s'])}"
        )
    print()
    m = results["machine"]
    print(
        f"python {m['python']}, numpy {m['numpy']}, {m['cpu_count']} CPUs, {m['platform']}",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks/schedule.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per figure (>= 1)")
    parser.add_argument(
        "--quick", action="store_true", help="programs of 10 and 100 nodes only (for tests)"
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    warm_up()
    sizes = QUICK_SIZES if args.quick else SIZES
    results = {
        "benchmark": "schedule",
        "repeat": args.repeat,
        "quick": args.quick,
        "environment": {"off_while_timing": list(SWITCHED_OFF), "given": SWITCHED_OFF},
        "machine": machine(),
        "schedule": [bench_schedule(target, args.repeat) for target in sizes],
        "realize": {
            "seed": bench_realize(SEED_RING, args.repeat),
            "large": bench_realize(BIG_RING, args.repeat),
        },
    }
    print_table(results)
    write_results(results, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
