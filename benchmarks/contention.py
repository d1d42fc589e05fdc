"""Ren's cpu device on a busy machine: each thread setting against ``REN_THREADS=1``.

An eager CKKS multiply (and a jitted one) at set a (``n=8192, q_bits=(60, 40, 40),
p_bits=(60,)``, ``cpu``; ``--sets a,b`` adds set b, ``n=16384, q_bits=(60, 40 x 6)``) is timed
with the machine idle and with a bounded background load (``--load`` busy processes, one per core
by default, ``--load 1`` for one core kept busy; each ends by itself after ``--load-seconds``;
unpinned, as another program is, or process ``i`` on core ``i`` with ``--pin``), each with every
thread setting of ``--settings`` (default: the default, ``REN_THREADS=2``) and with
``REN_THREADS=1``. Each figure pools ``--trials`` fresh worker processes, the settings taking
turns, so every setting starts cold and the background load is the only thing that differs.
Unpinned load is a lottery for a single process (three busy threads on two cores: the scheduler
leaves one alone on a core), which the trials average out.

    .venv/bin/python benchmarks/contention.py                  # JSON in benchmarks/results/
    .venv/bin/python benchmarks/contention.py --quick          # about a minute
    .venv/bin/python benchmarks/contention.py --ren /tmp/old   # time another checkout of Ren
    .venv/bin/python benchmarks/contention.py --settings default,OMP_WAIT_POLICY=passive
    .venv/bin/python benchmarks/contention.py --load 1 --sets a,b --modes jit   # one core busy

The JSON: ``{"machine", "run", "results": [{"bench", "backend", "params", "mode", "median_ms",
"threads", "load", "setting", "min_ms", "times_ms", "check"}, ...], "ratios": [...]}``; a ratio
row is a load's median for a setting over its ``REN_THREADS=1`` median (above 1: slower than one
thread). ``--settings`` takes more settings to compare, each ``default`` or ``VAR=VALUE`` (joined
by ``+`` for several variables): ``OMP_WAIT_POLICY=passive`` tells whether OpenMP's spinning is
the cost. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _machine  # noqa: E402

SETS = _machine.THREAD_SETS


def worker(mode: str, repeat: int, tiny: bool, name: str = "a") -> dict:
    """Time ``repeat`` multiplies in this process; the figures as a dict (printed as JSON)."""
    import numpy as np

    import ren
    from ren.schemes import ckks

    if tiny:  # the tests' check that the script runs: a small ring, not a figure to report
        params = ckks.Params(n=256, q_bits=(40, 30), p_bits=(40,), scale_bits=30, insecure=True)
    else:
        params = ckks.Params(**SETS[name][0], scale_bits=40)
    rng = np.random.default_rng(1)
    v, w = rng.uniform(-1, 1, params.slots), rng.uniform(-1, 1, params.slots)
    with ckks.Context(params, seed=1, device="cpu") as ctx:
        x, y = ckks.encrypt(v).realize(), ckks.encrypt(w).realize()
        mul = ren.jit(lambda a, b: ckks.multiply(a, b)) if mode == "jit" else ckks.multiply
        out = mul(x, y).realize()  # warm: compile every kernel, start the OpenMP threads
        bits = ckks.precision_bits(ctx.decrypt(out), v * w)
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            mul(x, y).realize()
            times.append((time.perf_counter() - start) * 1e3)
    return {
        "median_ms": statistics.median(times),
        "min_ms": min(times),
        "times_ms": times,
        "check": "ok" if bits > 15 else f"FAIL ({bits:.1f} bits)",
    }


def start_load(count: int, seconds: float, pin: bool) -> list[subprocess.Popen]:
    """``count`` processes that each keep one core busy for ``seconds`` and then exit.

    Unpinned by default, as another program on the machine is: the scheduler moves them, and
    Ren's threads, between cores. With ``pin``, process ``i`` stays on the ``i``-th core.
    """
    cores: list[int] = []
    if pin:
        try:
            cores = sorted(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cores = []
    procs = []
    for i in range(count):
        pin = f"os.sched_setaffinity(0, {{{cores[i % len(cores)]}}})\n" if cores else ""
        loop = (
            f"import os, time\n{pin}end = time.time() + {seconds}\n"
            "while time.time() < end:\n    pass\n"
        )
        procs.append(subprocess.Popen([sys.executable, "-c", loop]))
    return procs


def stop_load(procs: list[subprocess.Popen]) -> None:
    """End the load processes (they end by themselves too)."""
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def measure(
    mode: str, setting: str, repeat: int, ren_path: str | None, tiny: bool, name: str = "a"
) -> dict:
    """One worker process for ``mode`` at set ``name`` with the thread ``setting``; its figures."""
    env = dict(os.environ)
    for var in _machine.DEBUG_VARS:
        env.pop(var, None)
    for var in ("REN_THREADS", "OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
        env.pop(var, None)
    if setting != "default":
        for pair in setting.split("+"):
            var, _, value = pair.partition("=")
            env[var] = value
    if ren_path:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [ren_path, env.get("PYTHONPATH")]))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", mode, "--repeat", str(repeat)]
    cmd += ["--tiny"] if tiny else ["--sets", name]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, timeout=900)
    if done.returncode != 0:
        return {"median_ms": None, "check": f"FAIL: {done.stderr.strip()[-400:]}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def pooled(trials: list[dict]) -> dict:
    """One figure from several processes' runs: the median and minimum of all their times."""
    failed = [t for t in trials if t.get("median_ms") is None or t["check"] != "ok"]
    if failed:
        return {"median_ms": None, "check": failed[0]["check"], "trials": len(trials)}
    times = [ms for t in trials for ms in t["times_ms"]]
    return {
        "median_ms": statistics.median(times),
        "min_ms": min(times),
        "trial_medians_ms": [t["median_ms"] for t in trials],
        "times_ms": times,
        "trials": len(trials),
        "check": "ok",
    }


def _threads(setting: str) -> int | str:
    """What a row's ``threads`` says: the ``REN_THREADS`` of the setting, else ``default``."""
    for pair in setting.split("+"):
        var, _, value = pair.partition("=")
        if var == "REN_THREADS" and value.isdigit():
            return int(value)
    return "default"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=41, help="timed multiplies per process")
    parser.add_argument(
        "--trials", type=int, default=5, help="fresh processes per figure, settings interleaved"
    )
    parser.add_argument("--quick", action="store_true", help="11 multiplies per figure")
    parser.add_argument("--load", type=int, default=os.cpu_count() or 2, help="busy processes")
    parser.add_argument("--load-seconds", type=float, default=900.0, help="their lifetime")
    parser.add_argument("--pin", action="store_true", help="pin load process i to core i")
    parser.add_argument("--modes", default="eager,jit", help="eager, jit or both")
    parser.add_argument(
        "--settings",
        default="default,REN_THREADS=2",
        help="default or VAR=VALUE[+VAR=VALUE], comma-separated",
    )
    parser.add_argument("--sets", default="a", help="parameter sets, of a, b (comma-separated)")
    parser.add_argument("--ren", default=None, help="time the Ren in this checkout instead")
    parser.add_argument("--out", default=str(HERE / "results" / "contention.json"))
    parser.add_argument("--tiny", action="store_true", help="a small insecure ring (for tests)")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.repeat, args.tiny, args.sets)))
        return
    try:
        sets = _machine.names(args.sets, tuple(SETS), "--sets")
    except argparse.ArgumentTypeError as e:
        parser.error(str(e))
    repeat = 11 if args.quick else args.repeat
    started = time.perf_counter()
    pinned = ", pinned" if args.pin else ""
    results = []
    for load in ("idle", "busy"):
        procs = start_load(args.load, args.load_seconds, args.pin) if load == "busy" else []
        try:
            if procs:
                time.sleep(1.0)  # let the load get going
            settings = list(dict.fromkeys([*args.settings.split(","), "REN_THREADS=1"]))
            for name, mode in [(n, m) for n in sets for m in args.modes.split(",")]:
                trials: dict[str, list[dict]] = {setting: [] for setting in settings}
                for _ in range(args.trials):  # interleaved: a drift in the load hits all alike
                    for setting in settings:
                        got = measure(mode, setting, repeat, args.ren, args.tiny, name)
                        trials[setting].append(got)
                for setting in settings:
                    row = pooled(trials[setting])
                    row.update(
                        bench="ckks.multiply",
                        backend="cpu",
                        params="tiny n=256" if args.tiny else SETS[name][1],
                        mode=mode,
                        load=load if load == "idle" else f"busy ({args.load} processes{pinned})",
                        setting=setting,
                        threads=_threads(setting),
                    )
                    results.append(row)
                    ms = row["median_ms"]
                    shown = "failed" if ms is None else f"{ms:8.2f} ms"
                    print(
                        f"{load:5} {row['params']:14} {mode:5} {setting:24} {shown}  "
                        f"{row['check']}",
                        flush=True,
                    )
        finally:
            stop_load(procs)
    ratios = []
    for load, params, mode in dict.fromkeys((r["load"], r["params"], r["mode"]) for r in results):
        pair = {
            r["setting"]: r
            for r in results
            if (r["load"], r["params"], r["mode"]) == (load, params, mode)
        }
        base = pair["REN_THREADS=1"]["median_ms"]
        for setting, row in pair.items():
            if setting != "REN_THREADS=1" and row["median_ms"] and base:
                ratio = row["median_ms"] / base
                ratios.append(
                    {
                        "load": load,
                        "params": params,
                        "mode": mode,
                        "setting": setting,
                        "over_one_thread": ratio,
                    }
                )
    out = {
        "machine": _machine.machine(),
        "run": {
            "repeat": repeat,
            "trials": args.trials,
            "tiny": args.tiny,
            "load_processes": args.load,
            "pinned": args.pin,
            "ren": args.ren or str(HERE.parent),
            "wall_s": time.perf_counter() - started,
        },
        "results": results,
        "ratios": sorted(ratios, key=lambda r: (r["load"], r["params"], r["mode"], r["setting"])),
    }
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    for r in out["ratios"]:
        print(
            f"{r['load']:24} {r['params']:14} {r['mode']:5} {r['setting']} / REN_THREADS=1 = "
            f"{r['over_one_thread']:.2f}"
        )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
