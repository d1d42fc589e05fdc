"""Benchmark: a saved plan loaded and run once in a new process, against capturing it there.

Run from the repository root::

    .venv/bin/python benchmarks/saved.py [--out FILE.json] [--quick] [--repeat R]

Two programs, on the ``cpu`` device (``python`` when there is no C compiler):

* ``ckks.multiply``: ``a * b`` of two CKKS ciphertexts (relinearized and rescaled) at set a
  (``n=8192, q_bits=(60, 40, 40), p_bits=(60,)``; ``--quick``: a small insecure ring), its
  evaluation keys given as stored inputs;
* ``program``: a chain of ``--steps`` (350; ``--quick`` 120) steps ``y = (y.ntt() * z).intt() +
  c_i`` over ``RingSpec(1024, ntt_primes(1024, 50, 3))``, three kernels a step (over 1,000 in
  all), with the constants ``c_i`` all different.

Each figure is one fresh process (``--repeat`` of them, the median reported), doing its setup
(keys, inputs) untimed, then timing either ``capture`` (the first call of the jitted function:
the passes, the planner, the compile cache, one run) or ``load`` (``ren.load`` of the plan file
saved beforehand, and its first call: no pass and no planner runs). The compile cache is warm in
both (the plan is saved once before any figure). Each process checks its result against the
program computed eagerly (``check``). The goal (reported, never asserted): ``load`` at least 10x
faster than ``capture``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from _machine import machine, write_results

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "saved.json"

SETUP = {
    "ckks.multiply": """
        import numpy as np
        from ren.schemes import ckks
        params = ckks.Params(**PARAMS)
        v = np.linspace(-1, 1, params.slots)
        ctx = ckks.Context(params, seed=1, device=DEVICE).__enter__()
        x, y = ckks.encrypt(v).realize(), ckks.encrypt(0.5 * v).realize()
        stored = {"keys": ctx.evaluation_keys()}
        fn, args = (lambda a, b: a * b), (x, y)
        def check(out):
            return ckks.precision_bits(ckks.decrypt(out), 0.5 * v * v) > 15
    """,
    "program": """
        from ren import Poly, RingSpec, ntt_primes
        ring = RingSpec(1024, ntt_primes(1024, 50, 3))
        x = Poly.uniform(ring, rng=1, device=DEVICE).realize()
        z = Poly.uniform(ring, rng=2, device=DEVICE).ntt().realize()
        stored = None
        def fn(y, z):
            for i in range(STEPS):
                y = (y.ntt() * z).intt() + (1000 + i)
            return y
        args = (x, z)
        def check(out):
            return out.tolist() == fn(x, z).tolist()
    """,
}

RUN = """
import json, sys, time
import ren
DEVICE, PARAMS, STEPS, MODE, PLAN = {device!r}, {params!r}, {steps!r}, {mode!r}, {plan!r}
{setup}
if MODE == "save":
    f = ren.jit(fn)
    f.export(PLAN, *args, stored=stored)
    print(json.dumps({{"units": len(f.last.units)}}))
    sys.exit(0)
start = time.perf_counter()
if MODE == "capture":
    out = ren.jit(fn)(*args)
else:
    out = ren.load(PLAN, stored=stored)(*args)
seconds = time.perf_counter() - start
print(json.dumps({{"ms": seconds * 1e3, "check": bool(check(out))}}))
"""


def _run(bench: str, mode: str, device: str, params: dict, steps: int, plan: Path) -> dict:
    code = RUN.format(
        device=device,
        params=params,
        steps=steps,
        mode=mode,
        plan=str(plan),
        setup=textwrap.dedent(SETUP[bench]),
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    if out.returncode != 0:
        raise SystemExit(f"{bench} {mode} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _device() -> str:
    try:
        from ren.codegen.toolchain import find_compiler

        find_compiler()
    except Exception:
        return "python"
    return "cpu"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/saved.py", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    parser.add_argument("--quick", action="store_true", help="small programs, 3 processes each")
    parser.add_argument("--repeat", type=int, default=None, help="processes per figure (5)")
    parser.add_argument("--steps", type=int, default=None, help="steps of the program (350)")
    args = parser.parse_args(argv)
    repeat = args.repeat or (3 if args.quick else 5)
    steps = args.steps or (120 if args.quick else 350)
    device = _device()
    params = (
        {"n": 16, "q_bits": (30, 25), "p_bits": (30,), "scale_bits": 25, "insecure": True}
        if args.quick
        else {"n": 8192, "q_bits": (60, 40, 40), "p_bits": (60,), "scale_bits": 40}
    )
    rows, ratios = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for bench in SETUP:
            plan = Path(tmp) / f"{bench}.renplan"
            units = _run(bench, "save", device, params, steps, plan)["units"]
            figures = {}
            for mode in ("capture", "load"):
                runs = [_run(bench, mode, device, params, steps, plan) for _ in range(repeat)]
                ok = all(r["check"] for r in runs)
                ms = statistics.median(r["ms"] for r in runs)
                figures[mode] = ms
                rows.append(
                    {
                        "bench": f"saved.{bench}",
                        "backend": device,
                        "mode": mode,
                        "median_ms": ms,
                        "times_ms": [r["ms"] for r in runs],
                        "units": units,
                        "check": "ok" if ok else "MISMATCH",
                    }
                )
                print(f"{bench:<14} {mode:<8} {units:5d} units {ms:10.1f} ms  check {ok}")
            ratio = figures["capture"] / figures["load"]
            ratios.append({"bench": bench, "capture_over_load": ratio, "goal_met": ratio >= 10})
            print(f"goal {bench} load {ratio:.1f}x faster than capture (>= 10x)")
    write_results({"machine": machine(), "results": rows, "ratios": ratios}, args.out)
    return 0 if all(r["check"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
