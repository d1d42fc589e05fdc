"""Benchmark: Ren on one thread and on several, beside OpenFHE on the same thread counts.

Run from the repository root::

    .venv/bin/python benchmarks/threads.py                          # sets a, b; 1 and 2 threads
    .venv/bin/python benchmarks/threads.py --bootstrap boot-n12     # and a bootstrap
    .venv/bin/python benchmarks/threads.py --threads 1,2 --rounds 7 --out /tmp/threads.json
    .venv/bin/python benchmarks/threads.py --tiny                   # a check that it runs

**Ren**, on the ``cpu`` device: a jitted CKKS multiply (``ckks.multiply``: relinearized and
rescaled) and a jitted rotation by 1 at set ``a`` (``n=8192, q_bits=(60, 40, 40), p_bits=(60,)``)
and set ``b`` (``n=16384, q_bits=(60, 40 x 6), p_bits=(60,)``), scale ``2^40``; with
``--bootstrap``, a jitted ``ckks.bootstrap`` of each preset named (``boot-n12``, ``boot-n16``) on
a ciphertext at level 0. Each figure is timed in a fresh process with ``REN_THREADS`` set to the
thread count (``REN_THREADS=1`` builds the kernels without OpenMP; above 1 the plan runs as
tasks on the team, ``ren.backends.cpu_tasks``): after warm-up calls (and the kernels built), at
least ``--repeat`` replays and at least ``--seconds`` of them (1.5 s: a noisy machine's speed
changes from second to second), each timed alone, the median. On several threads one more replay
is traced (``cpu_runner.profile``): ``work_ms``, ``span_ms``, ``parallelism``, ``traffic_bytes``,
each thread's ``wait_ms`` and ``brent``, the speed-ups Brent's bound guarantees on 2 to 16
cores. Every result is decrypted and must be right to ``MIN_BITS`` against NumPy.

**OpenFHE** (``peers/openfhe_ops.py`` in its Python 3.10 environment, as
``openfhe_peer.find_python`` finds it; left out with the reason when absent or with
``--no-peer``): ``EvalMult`` then ``Rescale``, and ``EvalRotate`` by 1, on the same ring and
moduli sizes, with ``OMP_NUM_THREADS`` set to the thread count.

**Rounds.** The machine's speed drifts, and a process's speed with it, so the settings take turns:
each of ``--rounds`` rounds runs every thread count once (the order reversed every other round),
and a speed-up is the median over rounds of the ratio within a round (one thread's time over
``N`` threads'), never a ratio of figures minutes apart.

The JSON: ``{"machine", "run", "results": [{"bench", "backend", "params", "mode", "median_ms",
"threads", "round", "min_ms", "check_bits", "team"}, ...], "summary": [{"bench", "backend",
"params", "threads", "median_ms", "speedup", "round_speedups", "vs_openfhe"}, ...]}``: ``team``
is the team size the cpu device chose in the worker (``ren.backends.cpu_threads``); in
``summary``, ``median_ms`` is the median over rounds, ``speedup`` the median of the rounds'
speed-ups over one thread, and ``vs_openfhe`` Ren's median over OpenFHE's at the same thread
count (below 1: Ren is faster). Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _machine  # noqa: E402
import openfhe_peer  # noqa: E402

DEFAULT_OUT = HERE / "results" / "threads.json"
MIN_BITS = 15.0

#: The sets: ``ckks.Params`` keywords and how a row names them (a and b as ``contention.py``'s).
SETS = {
    **_machine.THREAD_SETS,
    "tiny": ({"n": 256, "q_bits": (40, 30), "p_bits": (40,), "insecure": True}, "tiny n=256"),
}
PRESETS = ("boot-toy", "boot-n12", "boot-n16")


def _time(call: Any, repeat: int, seconds: float) -> tuple[list[float], Any]:
    """``call()`` untimed until its kernels are built, then timed alone ``repeat`` times, or
    more, to take at least ``seconds``; the times (ms) and the last value."""
    out = call()
    _machine.settle()  # the kernels built in the background: a timing is of built ones
    start = time.perf_counter()
    for _ in range(3):
        out = call()
    each = (time.perf_counter() - start) / 3
    times = []
    for _ in range(max(repeat, int(seconds / max(each, 1e-6)))):
        start = time.perf_counter()
        out = call()
        times.append((time.perf_counter() - start) * 1e3)
    return times, out


def traced(fn: Any, call: Any) -> dict[str, Any]:
    """One replay of ``fn``'s plan traced (``ren.backends.cpu_runner.profile``), or ``{}``.

    The work, the span, the parallelism and the traffic, and what Brent's bound predicts for
    2 to 16 cores; none when the plan does not run as tasks (one thread).
    """
    runner = getattr(fn.last, "runner", None)
    graph = getattr(runner, "tasks", None)
    if graph is None:
        return {}
    from ren.backends import cpu_runner

    runner.trace = np.zeros((len(graph.names), 4))
    call()
    seen = cpu_runner.profile(graph, runner.trace)
    runner.trace = None
    work, span = seen["work_ms"], seen["span_ms"]
    return {
        "tasks": len(graph.names), "kernels": len(graph.deps), "work_ms": work, "span_ms": span,
        "parallelism": seen["parallelism"], "traffic_bytes": graph.traffic,
        "wait_ms": {str(t): v["wait_ms"] for t, v in seen["threads"].items()},
        "brent": {str(p): cpu_runner.predicted_speedup(work, span, p) for p in (2, 4, 8, 16)},
    }  # fmt: skip


def worker(spec: str, repeat: int, seconds: float = 0.0) -> list[dict[str, Any]]:
    """This process's rows for ``spec`` (a set name, or a bootstrap preset)."""
    import ren
    from ren.backends import cpu_threads
    from ren.schemes import ckks

    rows = []

    def row(bench: str, params: str, times: list[float], bits: float, profile: dict) -> None:
        rows.append(
            {
                "bench": bench, "backend": "cpu", "params": params, "mode": "jit",
                "median_ms": statistics.median(times), "min_ms": min(times), "times_ms": times,
                "check_bits": bits, "team": cpu_threads.decision()["threads"] or 1, **profile,
            }
        )  # fmt: skip

    if spec in PRESETS:
        params = ckks.Params.preset(spec)
        x = np.random.default_rng(1).uniform(-1, 1, params.slots)
        with ckks.Context(params, seed=1, device="cpu") as ctx:
            ctx.bootstrap_keys(progress=False)
            ct = ckks.encrypt(x, level=0).realize()
            boot = ren.jit(ckks.bootstrap)
            times, out = _time(lambda: boot(ct).realize(), repeat, 0.0)
            bits = ckks.precision_bits(np.real(ckks.decrypt(out)), x)
            row("ckks.bootstrap", spec, times, bits, traced(boot, lambda: boot(ct).realize()))
        return rows
    keywords, name = SETS[spec]
    params = ckks.Params(**keywords, scale_bits=40 if spec != "tiny" else 30)
    rng = np.random.default_rng(1)
    v, w = rng.uniform(-1, 1, params.slots), rng.uniform(-1, 1, params.slots)
    with ckks.Context(params, seed=1, device="cpu") as ctx:
        ctx.rotation_key(1)
        x, y = ckks.encrypt(v).realize(), ckks.encrypt(w).realize()
        mul, rot = ren.jit(ckks.multiply), ren.jit(lambda a: a.rotate(1))
        for bench, fn, call, want in (
            ("ckks.multiply", mul, lambda: mul(x, y).realize(), v * w),
            ("ckks.rotate", rot, lambda: rot(x).realize(), np.roll(v, -1)),
        ):
            times, out = _time(call, repeat, seconds)
            bits = ckks.precision_bits(np.real(ckks.decrypt(out)), want)
            row(bench, name, times, bits, traced(fn, call))
    return rows


def run_worker(spec: str, threads: int, repeat: int, seconds: float) -> list[dict[str, Any]]:
    """``worker(spec)`` in a fresh process with ``REN_THREADS=threads``; its rows."""
    env = {k: v for k, v in os.environ.items() if k not in _machine.DEBUG_VARS}
    env.pop("OMP_NUM_THREADS", None)
    env["REN_THREADS"] = str(threads)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", spec]
    done = subprocess.run(
        [*cmd, "--repeat", str(repeat), "--seconds", str(seconds)],
        env=env,
        capture_output=True,
        text=True,
        timeout=7200,
    )
    if done.returncode != 0:
        raise SystemExit(f"{spec} on {threads} threads failed:\n{done.stderr[-2000:]}")
    return [{**r, "threads": threads} for r in json.loads(done.stdout.strip().splitlines()[-1])]


def run_peer(python: str, spec: str, threads: int, repeat: int) -> list[dict[str, Any]]:
    """OpenFHE's rows for set ``spec`` on ``threads`` threads (``peers/openfhe_ops.py``)."""
    keywords, name = SETS[spec]
    config = {"n": keywords["n"], "q_bits": list(keywords["q_bits"]), "scale_bits": 40}
    config |= {"threads": threads, "repeats": repeat}
    with tempfile.TemporaryDirectory(prefix="ren-openfhe-") as tmp:
        cfg, out = Path(tmp) / "config.json", Path(tmp) / "out.json"
        cfg.write_text(json.dumps(config), encoding="utf-8")
        script = HERE / "peers" / "openfhe_ops.py"
        done = subprocess.run(
            [str(python), str(script), str(cfg), str(out)], capture_output=True, text=True,
            timeout=1800,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(f"OpenFHE on {threads} threads failed:\n{done.stderr[-2000:]}")
        data = json.loads(out.read_text(encoding="utf-8"))
    return [
        {
            "bench": r["bench"], "backend": "openfhe", "params": name, "mode": "eager",
            "median_ms": r["median_ms"], "min_ms": r["min_ms"], "times_ms": r["times_ms"],
            "check_bits": r["check_bits"], "threads": threads, "team": threads,
            "version": data["openfhe"]["version"], "security": data["security"],
        }
        for r in data["rows"]
    ]  # fmt: skip


def summarize(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (bench, backend, params, threads): the median over rounds and the rounds' speed-ups."""
    keyed: dict[tuple[str, str, str], dict[int, dict[int, float]]] = {}
    for r in results:
        key = (r["bench"], r["backend"], r["params"])
        keyed.setdefault(key, {}).setdefault(r["threads"], {})[r["round"]] = r["median_ms"]
    summary = []
    for (bench, backend, params), by_threads in keyed.items():
        one = by_threads.get(1, {})
        for threads, rounds in sorted(by_threads.items()):
            ratios = [one[k] / ms for k, ms in rounds.items() if k in one]
            summary.append(
                {
                    "bench": bench, "backend": backend, "params": params, "threads": threads,
                    "median_ms": statistics.median(rounds.values()),
                    "speedup": statistics.median(ratios) if ratios else None,
                    "round_speedups": ratios,
                }
            )  # fmt: skip
    peers = {(s["bench"], s["params"], s["threads"]): s for s in summary if s["backend"] != "cpu"}
    for s in summary:
        peer = peers.get((s["bench"], s["params"], s["threads"]))
        if s["backend"] == "cpu" and peer is not None:
            s["vs_openfhe"] = s["median_ms"] / peer["median_ms"]
    return summary


def table(summary: list[dict[str, Any]]) -> str:
    """The summary as Markdown."""
    lines = [
        "| bench | params | backend | threads | median ms | speed-up over 1 | Ren / OpenFHE |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for s in summary:
        speedup = "-" if s["speedup"] is None else f"{s['speedup']:.2f}x"
        peer = f"{s['vs_openfhe']:.2f}" if "vs_openfhe" in s else "-"
        lines.append(
            f"| {s['bench']} | {s['params']} | {s['backend']} | {s['threads']} | "
            f"{s['median_ms']:.2f} | {speedup} | {peer} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="a,b", help="parameter sets, of a, b")
    parser.add_argument("--threads", default="1,2", help="thread counts (1 is always run)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds, the settings in turn")
    parser.add_argument("--repeat", type=int, default=21, help="timed replays per figure, least")
    parser.add_argument(
        "--seconds", type=float, default=1.5, help="and at least this long (not bootstraps)"
    )
    parser.add_argument("--bootstrap", default="", help="presets: boot-n12, boot-n16")
    parser.add_argument("--boot-repeat", type=int, default=3, help="timed bootstraps per figure")
    parser.add_argument("--no-peer", action="store_true", help="leave OpenFHE out")
    parser.add_argument("--tiny", action="store_true", help="a small insecure set, no peer")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _machine.switch_off()
        print(json.dumps(worker(args.worker, args.repeat, args.seconds)))
        return
    try:
        sets = ["tiny"] if args.tiny else _machine.names(args.sets, ("a", "b"), "--sets")
        boots = _machine.names(args.bootstrap, PRESETS, "--bootstrap") if args.bootstrap else []
    except argparse.ArgumentTypeError as e:
        parser.error(str(e))
    words = [t.strip() for t in args.threads.split(",") if t.strip()]
    if not words or not all(t.isdigit() and int(t) >= 1 for t in words):
        parser.error(f"--threads must be positive integers, comma-separated; got {args.threads!r}")
    counts = sorted({1, *(int(t) for t in words)})
    python, why = None, "--no-peer" if args.no_peer or args.tiny else None
    if why is None:
        python = openfhe_peer.find_python()
        why = None if python is not None else "OpenFHE does not import here"
    started = time.perf_counter()
    results: list[dict[str, Any]] = []
    for k in range(args.rounds):
        order = counts if k % 2 == 0 else counts[::-1]
        for threads in order:
            for spec in [*sets, *boots]:
                repeat = args.boot_repeat if spec in PRESETS else args.repeat
                rows = run_worker(spec, threads, repeat, 0.0 if args.tiny else args.seconds)
                if python is not None and spec in ("a", "b"):
                    rows += run_peer(python, spec, threads, args.repeat)
                for r in rows:
                    r["round"] = k
                    bad = r["check_bits"] < MIN_BITS
                    print(
                        f"round {k} {r['bench']:15} {r['params']:15} {r['backend']:8} "
                        f"{threads} threads (team {r['team']}): {r['median_ms']:9.2f} ms, "
                        f"{r['check_bits']:.1f} bits{'  FAIL' if bad else ''}",
                        flush=True,
                    )
                    if bad:
                        raise SystemExit(f"{r['bench']} is wrong: {r['check_bits']:.1f} bits")
                results += rows
    summary = summarize(results)
    out = {
        "machine": _machine.machine(),
        "run": {
            "sets": sets, "bootstrap": boots, "threads": counts, "rounds": args.rounds,
            "repeat": args.repeat, "seconds": args.seconds, "boot_repeat": args.boot_repeat,
            "peer_skipped": why,
            "wall_s": time.perf_counter() - started,
        },
        "results": results,
        "summary": summary,
    }  # fmt: skip
    print(table(summary))
    if why:
        print(f"OpenFHE left out: {why}")
    _machine.write_results(out, args.out)


if __name__ == "__main__":
    main()
