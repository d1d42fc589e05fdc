"""Benchmark: a saved plan over many ciphertexts with ``ren.dist``, against a bare replay loop.

Run from the repository root::

    .venv/bin/python benchmarks/dist.py [--out FILE.json] [--quick] [--items N] [--plan NAME]

The plan (``--plan``) is a CKKS multiply (relinearized, rescaled) and three rotations in a row
(``mul-3rot``), or that followed by a second multiply and six rotations (``mul-3rot-mul-6rot``,
the default: past 20 ms a replay on one core), at set a (``n=8192, q_bits=(60, 40, 40),
p_bits=(60,)``; ``--quick``: a small insecure ring), saved on the ``cpu`` device with the
evaluation keys as stored inputs. Each item is a ciphertext's bytes;
each result the bytes of the plan's result. Figures, each in this run:

* ``bare``: one process (``REN_THREADS=1``) reading each item, replaying ``ren.load``'s plan and
  writing the result's bytes, in a loop: the work a worker does, with nothing around it; also
  the replay alone (``replay_ms``). It runs first and again last, and a worker's overhead is
  over the mean of the two (the machine drifts over a run);
* for each engine (``ray``, ``local``) and 1 and 2 workers: the start-up (Ray's, the workers'
  loading of plan and keys), reported apart, then items/s over ``--items`` items, the median of
  ``--repeat`` runs (3; the bare loop's too);
* the driver's peak memory (``tracemalloc``) streaming N and 4N items through ``imap``, results
  dropped as they come: it must not grow with N;
* the transfers of the plan and the keys (``ray.put``: once each, whatever the items).

Goals (reported, never asserted): 2 workers at least 1.7x the items/s of 1; at 1 worker at most
15% over the bare loop's time an item; the driver's peak memory flat in the number of items.
Every result is checked against the bare loop's bytes, word for word.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from _machine import machine, switch_off, write_results

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "dist.json"

SET_A = {"n": 8192, "q_bits": (60, 40, 40), "p_bits": (60,), "scale_bits": 40}
QUICK = {"n": 1024, "q_bits": (40, 30, 30), "p_bits": (40,), "scale_bits": 30, "insecure": True}

BARE = """
import json, sys, time
import ren
from ren.schemes import ckks
plan_path, keys_path, items_path = sys.argv[1:4]
keys_blob = open(keys_path, "rb").read()
items = json.load(open(items_path))
items = [bytes.fromhex(x) for x in items]
keys = ckks.EvaluationKeys.from_bytes(keys_blob, "cpu", insecure=True)
server = ckks.Context(keys.params, keys=keys, device="cpu")
with server:
    plan = ren.load(plan_path, stored={"keys": keys})
    warm = [ckks.Ciphertext.from_bytes(items[0], server)]
    for _ in range(5):
        plan(*warm).to_bytes()
    runs = []
    for _ in range(int(sys.argv[4])):
        out = []
        start = time.perf_counter()
        for blob in items:
            out.append(plan(ckks.Ciphertext.from_bytes(blob, server)).to_bytes())
        runs.append(time.perf_counter() - start)
    seconds = sorted(runs)[len(runs) // 2]
    start = time.perf_counter()
    for _ in range(10):
        plan(*warm)
    replay = (time.perf_counter() - start) / 10
print(json.dumps({"seconds": seconds, "runs_s": runs, "replay_s": replay,
                  "results": [b.hex() for b in out[:8]]}))
"""


def _rotated(a):
    return (a * a).rotate(1).rotate(2).rotate(3)


def _twice(a):
    b = _rotated(a)
    c = b * b
    for step in range(4, 10):
        c = c.rotate(step)
    return c


#: The plans: the issue's (a multiply and three rotations) and one past 20 ms a replay at set a.
PLANS = {"mul-3rot": _rotated, "mul-3rot-mul-6rot": _twice}


def _make(folder: Path, params: dict, count: int, plan: str) -> tuple[Path, bytes, list[bytes]]:
    import numpy as np

    import ren
    from ren.schemes import ckks

    p = ckks.Params(**params)
    ctx = ckks.Context(p, seed=1, device="cpu")
    with ctx:
        rng = np.random.default_rng(1)
        cts = [ckks.encrypt(rng.uniform(-1, 1, p.slots)) for _ in range(min(count, 16))]
        f = ren.jit(PLANS[plan])
        f(cts[0])
        path = folder / "plan.renplan"
        f.save(path, stored={"keys": ctx.evaluation_keys()})
        blobs = [c.to_bytes() for c in cts]
        keys = ctx.evaluation_keys().to_bytes()
    return path, keys, [blobs[i % len(blobs)] for i in range(count)]


def _bare(plan: Path, keys: bytes, items: list[bytes], folder: Path, repeat: int) -> dict:
    (folder / "keys").write_bytes(keys)
    (folder / "items.json").write_text(json.dumps([b.hex() for b in items]))
    env = dict(os.environ, REN_THREADS="1")
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            BARE,
            str(plan),
            str(folder / "keys"),
            str(folder / "items.json"),
            str(repeat),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=False,
    )
    if out.returncode:
        raise SystemExit(f"the bare loop failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _engine(
    engine: str,
    workers: int,
    plan: Path,
    keys: bytes,
    items: list[bytes],
    want: list[bytes],
    repeat: int,
):
    from ren import dist
    from ren.schemes import ckks

    evk = ckks.EvaluationKeys.from_bytes(keys, "python", insecure=True)
    start = time.perf_counter()
    with dist.Pool(plan, stored={"keys": evk}, engine=engine, workers=workers) as pool:
        started = time.perf_counter() - start
        pool.map(items[: 2 * workers], progress=False)  # each worker's first calls, untimed
        rates, cpus = [], []
        for _ in range(repeat):
            cpu = time.process_time()
            got = pool.map(items, progress=False)
            cpus.append(time.process_time() - cpu)
            rates.append(pool.stats["items_per_s"])
        stats = pool.stats
        rate = sorted(rates)[len(rates) // 2]
        memory = {}
        if workers == 2:
            for count in (len(items) // 4, len(items)):
                tracemalloc.start()
                for _ in pool.imap(
                    (bytes(bytearray(items[i % len(items)])) for i in range(count)), progress=False
                ):
                    pass
                memory[count] = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
    ok = got[: len(want)] == want
    return {
        "engine": engine,
        "workers": workers,
        "start_s": started,
        "items": len(items),
        "items_per_s": rate,
        "runs_items_per_s": rates,
        "errors": stats["errors"],
        "driver_cpu_s": sorted(cpus)[len(cpus) // 2],
        "puts": stats["puts"],
        "driver_peak_bytes": memory,
        "check": "ok" if ok and not stats["errors"] else "MISMATCH",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/dist.py", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    parser.add_argument("--quick", action="store_true", help="a small ring, few items")
    parser.add_argument("--items", type=int, default=None, help="items a figure (200; quick 40)")
    parser.add_argument("--engines", default="ray,local", help="engines to run (ray,local)")
    parser.add_argument("--repeat", type=int, default=None, help="runs a figure, median (3)")
    parser.add_argument("--plan", choices=PLANS, default="mul-3rot-mul-6rot", help="the plan")
    args = parser.parse_args(argv)
    switch_off()
    count = args.items or (40 if args.quick else 200)
    args.repeat = args.repeat or (1 if args.quick else 3)
    params = QUICK if args.quick else SET_A
    engines = [e for e in args.engines.split(",") if e]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        plan, keys, items = _make(folder, params, count, args.plan)
        plan_bytes = plan.stat().st_size
        bare = _bare(plan, keys, items, folder, args.repeat)
        want = [bytes.fromhex(x) for x in bare["results"]]
        bare_rate = count / bare["seconds"]
        print(
            f"bare loop: {bare_rate:8.1f} items/s, {1e3 * bare['seconds'] / count:.1f} ms an item,"
            f" replay alone {1e3 * bare['replay_s']:.1f} ms"
        )
        for engine in engines:
            if engine == "ray":
                try:
                    import ray
                except ImportError:
                    print("ray: not installed, skipped")
                    continue
                start = time.perf_counter()
                ray.init(include_dashboard=False, log_to_driver=False)
                ray_start = time.perf_counter() - start
                print(f"ray.init: {ray_start:.1f} s (apart)")
            for workers in (1, 2):
                row = _engine(engine, workers, plan, keys, items, want, args.repeat)
                if engine == "ray":
                    row["ray_init_s"] = ray_start
                row["over_bare"] = bare_rate / row["items_per_s"] - 1
                rows.append(row)
                print(
                    f"{engine:5} {workers} worker(s): {row['items_per_s']:8.1f} items/s "
                    f"(start {row['start_s']:.1f} s apart), {100 * row['over_bare']:+.1f}% time "
                    f"an item over bare, check {row['check']}"
                )
            if engine == "ray":
                ray.shutdown()
        # the bare loop again, after the engines: the machine's drift over the run, both reported
        again = _bare(plan, keys, items, folder, args.repeat)
        bare_rates = [bare_rate, count / again["seconds"]]
        print(f"bare loop again: {bare_rates[1]:8.1f} items/s")
        for row in rows:
            row["over_bare"] = sum(bare_rates) / 2 / row["items_per_s"] - 1
    goals = []
    for engine in engines:
        one = [r for r in rows if r["engine"] == engine and r["workers"] == 1]
        two = [r for r in rows if r["engine"] == engine and r["workers"] == 2]
        if not one or not two:
            continue
        speedup = two[0]["items_per_s"] / one[0]["items_per_s"]
        mem = two[0]["driver_peak_bytes"]
        small, large = sorted(mem)
        goals.append(
            {
                "engine": engine,
                "speedup_2_over_1": speedup,
                "speedup_goal_met": speedup >= 1.7,
                "overhead_1_worker": one[0]["over_bare"],
                "overhead_goal_met": one[0]["over_bare"] <= 0.15,
                "driver_peak_bytes": {str(k): v for k, v in mem.items()},
                "memory_flat": mem[large] < 1.5 * mem[small] + (1 << 20),
            }
        )
        print(
            f"goal {engine}: 2 workers {speedup:.2f}x 1 worker (>= 1.7); 1 worker "
            f"{100 * one[0]['over_bare']:+.1f}% over bare (<= 15%); driver peak "
            f"{mem[small] / 2**20:.1f} MiB at {small} items, "
            f"{mem[large] / 2**20:.1f} MiB at {large}"
        )
    data = {
        "benchmark": "dist",
        "quick": args.quick,
        "plan": args.plan,
        "repeat": args.repeat,
        "params": {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()},
        "machine": machine(),
        "bare": {
            "items": count,
            "items_per_s": bare_rate,
            "items_per_s_again": bare_rates[1],
            "ms_an_item": 1e3 * bare["seconds"] / count,
            "replay_ms": 1e3 * bare["replay_s"],
            "item_bytes": len(items[0]),
            "result_bytes": len(want[0]),
            "keys_bytes": len(keys),
            "plan_bytes": plan_bytes,
        },
        "results": rows,
        "goals": goals,
    }
    write_results(data, args.out)
    return 0 if all(r["check"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
