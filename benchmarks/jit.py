"""Benchmark: ``ren.jit`` replay against eager realization, and the cost of a replay per unit.

Run from the repository root::

    .venv/bin/python benchmarks/jit.py [--out FILE.json] [--quick] [--repeat R] [--ops N]

Two programs, each on the ``python`` and the ``cpu`` device (``cpu`` needs a C compiler; without
one its rows are skipped, with the reason printed):

* ``seed``: the first program of the docs, ``step(x, y) = (x + y) * (x - 1)`` over
  ``RingSpec(n=8, moduli=(17, 97))`` with ``x = [1..8]`` and ``y = [8..1]``;
* ``program``: a seeded chain of ``--ops`` operations (default 200, ``--quick`` 60) over three
  uniform inputs in ``RingSpec(1024, ntt_primes(1024, 50, 3))``: sums and differences with inputs
  or earlier values, products, sums and products with int constants, rotations, negations,
  explicit ``ntt``/``intt``, and at two thirds one ``rescale`` (the inputs are then cut to the
  smaller ring by ``to_ring``, a limb view, and the chain goes on there). The value at a third
  and the last value are the outputs. The same seed builds the same program every call.

Per program and device it times, each figure per call:

* ``eager``: build the graph and realize it, as a program without ``ren.jit`` does (the inputs
  are the same realized values every call);
* ``replay``: call the jitted function, after the one call that captured it (the plan's runner:
  ``graph``, the backend's graph runner, one C call on ``cpu``; ``units``, one call per unit);
* ``replay_units``: the same with the graph runner off (a second jitted function, captured with
  ``REN_JIT_GRAPH=0``): every unit called from Python;
* ``kernels``: the plan's units alone, back to back, with the input slots bound beforehand: a C
  kernel is its entry point called through ctypes with its arguments prepared (about 0.3 us of
  ctypes each), any other unit (the python backend, a copy) is ``unit.fn(bufs)``;
* ``graph`` (graph runner only, else ``None``): the runner's C function alone, one ctypes call,
  the inputs bound in a copy of its table beforehand; ``graph_overhead_us`` is ``replay - graph``,
  the Python work around that call;
* ``capture``: a whole capture (``cache_clear()`` then a call); ``first_capture_s`` is the
  ``capture_s`` the first capture reported (it may include compiling the graph runner, which is
  cached on disk after that).

``speedup`` is ``eager / replay``; ``overhead_us`` is ``replay - kernels`` in microseconds, what a
replay costs beyond its kernels, and ``overhead_per_unit_us`` the same divided by the plan's exec
units (``units_overhead_per_unit_us``: the same for ``replay_units``). On the graph runner most
of the overhead is per call (Python work around one C call), not per unit.

Before anything is timed, the replay, the unit-by-unit replay, the kernels alone and the graph
function alone are each run on outputs first filled with all-ones words and compared word for word
with the eager result (``checks``; ``check``: ``ok``, else ``MISMATCH`` and the script exits with
status 1).

A figure is the median over ``--repeat`` runs (default 7), a run being a loop of as many calls as
take about 20 ms (one at least), divided by the number of calls; a garbage collection runs before
each run. ``REN_CHECK``, ``REN_DEBUG``, ``REN_DUMP``, ``REN_VALIDATE``, ``REN_POISON``,
``REN_NO_PLAN`` and ``REN_JIT_GRAPH`` are switched off while timing (``environment.given`` says
what was set). The goal (reported, never asserted): the seed's replay at least 20 times faster
than its eager realization on ``cpu``. The last line printed is
``goal seed cpu speed-up <X>x (>= 20x: met|missed)``.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _machine import cpu_missing, machine, machine_line, switch_off, time_calls, write_results

# Off before Ren reads them: what the caller had set, for the JSON (None: unset).
SWITCHED_OFF = switch_off()

import ren  # noqa: E402
from ren import Poly, RingSpec, ntt_primes  # noqa: E402
from ren.errors import RenError  # noqa: E402
from ren.repoint import stored  # noqa: E402
from ren.ring import Domain  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "jit.json"
DEVICES = ("python", "cpu")
SEED_RING = RingSpec(n=8, moduli=(17, 97))
PROGRAM_RING = RingSpec(1024, ntt_primes(1024, 50, 3))
OPS, QUICK_OPS = 200, 60
GOAL_SPEEDUP = 20.0
GOAL = {
    "what": "seed example (x + y) * (x - 1), n=8, moduli (17, 97): eager / replay on cpu",
    "case": "seed",
    "device": "cpu",
    "target_speedup": GOAL_SPEEDUP,
}


# --------------------------------------------------------------------------------------------
# the programs


def seed_step(x: Poly, y: Poly) -> Poly:
    """The docs' first program."""
    return (x + y) * (x - 1)


def seed_inputs(device: str) -> tuple[Poly, ...]:
    n = SEED_RING.n
    x = Poly(list(range(1, n + 1)), SEED_RING, device=device)
    y = Poly(list(range(n, 0, -1)), SEED_RING, device=device)
    return ren.realize(x, y)


def chain(xs: tuple[Poly, ...], ops: int, seed: int = 0) -> tuple[tuple[Poly, ...], int]:
    """The ``program`` case: ``ops`` seeded operations over ``xs`` (see the module docstring);
    returns the outputs and the number of operations built (``to_ring`` cuts included)."""
    rng = np.random.default_rng(seed)
    inputs = list(xs)
    x = inputs[0]
    history = [x]  # the values of x's ring, oldest first
    constants = iter(range(3, 1 << 20, 7919))  # each constant once (see schedule.py's program)
    outputs: list[Poly] = []
    count = 0

    def other() -> Poly:
        if rng.random() < 0.3:
            return inputs[int(rng.integers(len(inputs)))]
        back = min(int(rng.geometric(0.4)), len(history) - 1)
        return history[len(history) - 1 - back]

    while count < ops:
        r = rng.random()
        if count == ops * 2 // 3:
            x = x.rescale()
            inputs = [p.to_ring(x.ring) for p in inputs]
            count += len(inputs)
            history = []
        elif r < 0.22:
            x = x + other()
        elif r < 0.34:
            y = other()
            if y.node is x.node:  # x - x is the constant 0: nothing to compute
                continue
            x = x - y
        elif r < 0.56:
            x = x * other()
        elif r < 0.64:
            x = x + next(constants)
        elif r < 0.72:
            x = x * next(constants)
        elif r < 0.84:
            x = x.rotate(int(rng.integers(1, x.ring.n // 2)))
        elif r < 0.90:
            if x.node.op.name == "NEG":  # -(-x) is x: nothing built
                continue
            x = -x
        else:
            x = x.ntt() if x.domain is Domain.COEFF else x.intt()
        count += 1
        history.append(x)
        if count == ops // 3:
            outputs.append(x)
    outputs.append(x)
    return tuple(outputs), count


def program_inputs(device: str) -> tuple[Poly, ...]:
    rng = np.random.default_rng(1)
    return ren.realize(*(Poly.uniform(PROGRAM_RING, rng, device=device) for _ in range(3)))


def cases(ops: int) -> dict[str, tuple[Callable[..., Any], Callable[[str], tuple], int, str]]:
    """name -> (function, inputs of a device, operations, ring label)."""

    def program(a: Poly, b: Poly, c: Poly) -> tuple[Poly, ...]:
        return chain((a, b, c), ops)[0]

    built = chain(program_inputs("python"), ops)[1]
    return {
        "seed": (seed_step, seed_inputs, 3, "n=8 L=2 u32"),
        "program": (program, program_inputs, built, f"n={PROGRAM_RING.n} L=3 u64"),
    }


def _outputs(result: Poly | tuple[Poly, ...]) -> tuple[Poly, ...]:
    return (result,) if isinstance(result, Poly) else tuple(result)


def _words(polys: tuple[Poly, ...]) -> list[tuple[RingSpec, bytes]]:
    return [(p.ring, p.tobytes()) for p in polys]


# --------------------------------------------------------------------------------------------
# timing


def kernels_alone(plan: Any, inputs: tuple[Poly, ...]) -> Callable[[], None]:
    """The plan's units back to back with ``inputs`` in their slots, dispatch prepared."""
    try:
        from ren.backends.cpu import CompiledKernel
    except ImportError:  # pragma: no cover - the cpu backend always imports
        CompiledKernel = None
    bound = [
        stored(p.node)[0] if buffer else None for p, buffer in zip(inputs, plan.inputs, strict=True)
    ]
    slot = {(i, j): k for i, j, k in plan.bindings}
    calls = []
    for i, unit in enumerate(plan.units):
        bufs = tuple(bound[slot[i, j]] if (i, j) in slot else b for j, b in enumerate(unit.bufs))
        fn = unit.fn
        if CompiledKernel is not None and isinstance(fn, CompiledKernel):
            ptrs = [b.array.ctypes.data for b in bufs]
            for j, off in enumerate(fn.offsets):
                ptrs[j] += off
            ptrs += [t.ctypes.data for t in fn.tables]
            calls.append(functools.partial(fn.fn, *(ctypes.c_void_p(p) for p in ptrs)))
        else:
            calls.append(functools.partial(fn, bufs))

    def run() -> None:
        for call in calls:
            call()

    return run


def graph_alone(plan: Any, inputs: tuple[Poly, ...]) -> Callable[[], None] | None:
    """The graph runner's C function alone, with the inputs bound in a private copy of its table
    of buffers (``None`` when the plan has no graph runner)."""
    runner = plan.runner
    if runner is None or not all(hasattr(runner, a) for a in ("launch", "B", "input_slots")):
        return None
    table = runner.B.copy()  # the runner's own table is left as it is
    for k, slot in runner.input_slots.items():
        table[slot] = stored(inputs[k].node)[0].array.ctypes.data
    launch = runner.launch

    def run(table: np.ndarray = table) -> None:  # (the default keeps the table alive)
        launch(table)

    return run


def _clobber(result: Any) -> None:
    """Fill the buffers of ``result``'s outputs with all-ones words (no valid residue), so a
    check after it sees only what the run it checks wrote."""
    for p in _outputs(result):
        words = stored(p.node)[0].array
        words.fill(np.iinfo(words.dtype).max)


def _same(run: Callable[[], Any], result: Any, want: list) -> bool:
    """Whether ``run()`` writes ``want`` into ``result``'s outputs (clobbered first)."""
    _clobber(result)
    run()
    return _words(_outputs(result)) == want


def bench(name: str, case: tuple, device: str, repeat: int) -> dict[str, object]:
    fn, make_inputs, ops, ring = case
    xs = make_inputs(device)

    def eager() -> tuple[Poly, ...]:
        return ren.realize(*_outputs(fn(*xs)))

    want = _words(eager())  # also the warm-up: kernels built, tables made
    jitted = ren.jit(fn)
    jitted(*xs)  # the capture
    first_capture_s = jitted.last.capture_s
    os.environ["REN_JIT_GRAPH"] = "0"  # read at capture: this one replays unit by unit
    try:
        by_units = ren.jit(fn)
        by_units(*xs)
    finally:
        del os.environ["REN_JIT_GRAPH"]
    plan = jitted.last
    kernels, graph = kernels_alone(plan, xs), graph_alone(plan, xs)

    # each run is checked on outputs clobbered first (the capture already wrote the right words)
    checks = {
        "replay": _same(lambda: jitted(*xs), plan.result, want),
        "replay_units": _same(lambda: by_units(*xs), by_units.last.result, want),
        "kernels": _same(kernels, plan.result, want),
    }
    if graph is not None:
        checks["graph"] = _same(graph, plan.result, want)
    check = "ok" if all(checks.values()) else "MISMATCH"

    def capture() -> None:
        jitted.cache_clear()
        jitted(*xs)

    timed = {
        "eager": time_calls(eager, repeat),
        "replay": time_calls(lambda: jitted(*xs), repeat),
        "replay_units": time_calls(lambda: by_units(*xs), repeat),
        "kernels": time_calls(kernels, repeat),
        "graph": None if graph is None else time_calls(graph, repeat),
    }
    capture_s = time_calls(capture, repeat)["median_s"]
    plan = jitted.last  # (the plan of the last capture)
    units = len(plan.units)
    eager_s, replay_s = timed["eager"]["median_s"], timed["replay"]["median_s"]
    kernels_s, units_s = timed["kernels"]["median_s"], timed["replay_units"]["median_s"]
    graph_s = None if graph is None else timed["graph"]["median_s"]
    return {
        "case": name,
        "device": device,
        "ring": ring,
        "ops": ops,
        "units": units,
        "runner": plan.runner_kind,
        "units_runner": by_units.last.runner_kind,
        "pruned": plan.pruned,
        "check": check,
        "checks": {k: "ok" if v else "MISMATCH" for k, v in checks.items()},
        "first_capture_s": first_capture_s,
        "capture_s": capture_s,
        **timed,
        "speedup": eager_s / replay_s,
        "units_speedup": eager_s / units_s,
        "overhead_us": (replay_s - kernels_s) * 1e6,
        "overhead_per_unit_us": (replay_s - kernels_s) / units * 1e6,
        "units_overhead_per_unit_us": (units_s - kernels_s) / units * 1e6,
        "graph_overhead_us": None if graph is None else (replay_s - graph_s) * 1e6,
    }


def cpu_build() -> dict[str, object] | None:
    try:
        from ren.backends import cpu
        from ren.codegen.compiler import find_compiler

        return {"cc": find_compiler()[1], "flags": list(cpu.flags())}
    except RenError:
        return None


# --------------------------------------------------------------------------------------------
# reporting


def goal(rows: list[dict]) -> dict[str, object]:
    row = next((r for r in rows if (r["case"], r["device"]) == ("seed", "cpu")), None)
    speedup = row["speedup"] if row else None
    met = speedup is not None and speedup >= GOAL_SPEEDUP and row["check"] == "ok"
    return {**GOAL, "speedup": speedup, "met": met}


def goal_line(g: dict[str, object]) -> str:
    if g["speedup"] is None:
        return "goal seed cpu speed-up not measured (no cpu device)"
    return (
        f"goal seed cpu speed-up {g['speedup']:.1f}x "
        f"(>= {GOAL_SPEEDUP:.0f}x: {'met' if g['met'] else 'missed'})"
    )


def _cells(cells: tuple[str, ...]) -> str:
    return " ".join(f"{c:>9}" for c in cells)


def print_table(results: dict[str, object]) -> None:
    given = ", ".join(f"{k}={v}" for k, v in results["environment"]["given"].items() if v)
    print(f"ren.jit: eager (build + realize) vs replay; median of {results['repeat']} runs")
    print(f"{', '.join(SWITCHED_OFF)} off while timing{f' (given: {given})' if given else ''}")
    threads = ", ".join(f"{k}={v}" for k, v in results["environment"]["threads"].items())
    if results["cpu"]:
        print(f"cpu: {results['cpu']['cc']}, {' '.join(results['cpu']['flags'])} ({threads})")
    print()
    cols = ("capture", "eager", "replay", "by-unit", "kernels", "graph-fn", "speed-up")
    cols += ("overhead", "ovh/unit", "(by-unit)")
    print(
        f"{'case':<8} {'device':<6} {'ops':>4} {'units':>5} {'runner':<6} " + _cells(cols), "check"
    )
    units = ("ms", "us", "us", "us", "us", "us", "x", "us", "us", "us")
    print(f"{'':<8} {'':<6} {'':>4} {'':>5} {'':<6} " + _cells(units))
    for r in results["rows"]:
        us = {k: r[k]["median_s"] * 1e6 for k in ("eager", "replay", "replay_units", "kernels")}
        graph = "-" if r["graph"] is None else f"{r['graph']['median_s'] * 1e6:.1f}"
        cells = (
            f"{r['capture_s'] * 1e3:.2f}",
            *(f"{us[k]:.1f}" for k in ("eager", "replay", "replay_units", "kernels")),
            graph,
            f"{r['speedup']:.1f}x",
            f"{r['overhead_us']:.1f}",
            f"{r['overhead_per_unit_us']:.2f}",
            f"{r['units_overhead_per_unit_us']:.2f}",
        )
        print(
            f"{r['case']:<8} {r['device']:<6} {r['ops']:>4} {r['units']:>5} {r['runner']:<6} "
            + _cells(cells),
            r["check"],
        )
    print()
    print("by-unit: replay with REN_JIT_GRAPH=0 (one Python call per unit); kernels: the units")
    print("alone, dispatch prepared; graph-fn: the graph runner's C function alone; speed-up:")
    print("eager / replay; overhead: replay - kernels, also per unit (and for by-unit)")
    for device, reason in results["skipped"].items():
        print(f"{device}: not timed ({reason})")
    print()
    m = results["machine"]
    print(machine_line(m))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/jit.py", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per figure (>= 1)")
    parser.add_argument(
        "--quick", action="store_true", help=f"a {QUICK_OPS}-op program instead of {OPS}"
    )
    parser.add_argument("--ops", type=int, default=None, help="operations of the program case")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    ops = args.ops if args.ops is not None else QUICK_OPS if args.quick else OPS
    if ops < 3:
        parser.error("--ops must be at least 3")

    skipped = {}
    devices = list(DEVICES)
    reason = cpu_missing()
    if reason:
        skipped["cpu"] = reason
        devices.remove("cpu")
    rows = [
        bench(name, case, device, args.repeat)
        for name, case in cases(ops).items()
        for device in devices
    ]
    results = {
        "benchmark": "jit",
        "repeat": args.repeat,
        "quick": args.quick,
        "ops": ops,
        "environment": {
            "off_while_timing": list(SWITCHED_OFF),
            "given": SWITCHED_OFF,
            "threads": {v: os.environ.get(v) for v in ("REN_THREADS", "OMP_NUM_THREADS")},
        },
        "machine": machine(),
        "cpu": cpu_build() if "cpu" in devices else None,
        "skipped": skipped,
        "rows": rows,
        "goal": goal(rows),
    }
    print_table(results)
    write_results(results, args.out)
    print(goal_line(results["goal"]))
    return 1 if any(r["check"] == "MISMATCH" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
