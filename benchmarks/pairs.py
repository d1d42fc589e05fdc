"""Benchmark: Ren's jitted CKKS multiply and rotation against SEAL's, timed in alternation.

Run from the repository root::

    .venv/bin/python benchmarks/pairs.py                        # sets a and b, 151 pairs each
    .venv/bin/python benchmarks/pairs.py --sets a --pairs 301 --out /tmp/pairs.json
    .venv/bin/python benchmarks/pairs.py --sets q --pairs 5     # a check that it runs

``ckks.py`` times every SEAL operation, then every Ren one: on a machine whose speed drifts by tens
of percent from one minute to the next (a shared cloud machine), their ratio moves as much as the
change being measured. Here each operation is timed as **pairs**: one Ren call and one SEAL call
back to back, the order flipping from pair to pair, and the figure is the median of the pairs'
ratios (Ren's time over SEAL's). Drift slower than a pair cancels out, so two checkouts can be
compared through their ratios to SEAL, each measured in its own process.

The operations are ``ckks.py``'s: Ren's ``ren.jit(ckks.multiply)`` (relinearized and rescaled) and
``ren.jit(lambda c: c.rotate(1))`` on the cpu device with ``REN_THREADS=1``, replayed on
ciphertexts other than the capture's; SEAL's ``multiply`` + ``relinearize_inplace`` +
``rescale_to_next_inplace`` and ``rotate_vector(ct, 1)``, on the same ring and moduli sizes
(``ckks.py``'s sets and its ``Seal``). Before the pairs, each side is called until the kernels are
built, and both results are decrypted and compared with NumPy (``ckks.py``'s bounds): a wrong
result fails the row instead of timing it.

Needs SEAL's Python bindings (``pip install -e .[peers]``); without them the script says so,
writes ``{"peer": {"available": false, "reason": ...}, "results": []}`` and exits 0.

JSON (default ``benchmarks/results/pairs.json``): ``{"benchmark": "pairs", "machine", "peer",
"pairs", "results": [{"bench", "params", "ren_ms", "seal_ms", "ratio", "ratio_q1", "ratio_q3",
"ren_bits", "seal_bits", "check"}, ...]}``: ``ren_ms`` and ``seal_ms`` are the medians of each
side's times, ``ratio`` the median of the pairs' ratios and ``ratio_q1``, ``ratio_q3`` their
quartiles. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _machine  # noqa: E402
import ckks as ckks_bench  # noqa: E402  (its sets, its SEAL and its checks; Ren not yet imported)

DEFAULT_OUT = HERE / "results" / "pairs.json"
OPS = ("multiply", "rotate")


def pairs(ren_call: Any, seal_call: Any, count: int) -> dict[str, float]:
    """``count`` pairs of calls back to back, the order flipping; medians and ratio quartiles."""
    ren_ms, seal_ms, ratios = [], [], []
    for i in range(count):
        first, second = (ren_call, seal_call) if i % 2 else (seal_call, ren_call)
        t0 = time.perf_counter()
        first()
        t1 = time.perf_counter()
        second()
        t2 = time.perf_counter()
        r, s = (t1 - t0, t2 - t1) if i % 2 else (t2 - t1, t1 - t0)
        ren_ms.append(r * 1e3)
        seal_ms.append(s * 1e3)
        ratios.append(r / s)
    q1, _, q3 = statistics.quantiles(ratios, n=4) if count > 1 else (ratios[0],) * 3
    return {
        "ren_ms": statistics.median(ren_ms),
        "seal_ms": statistics.median(seal_ms),
        "ratio": statistics.median(ratios),
        "ratio_q1": q1,
        "ratio_q3": q3,
    }


def run_set(name: str, count: int) -> list[dict[str, Any]]:
    """The rows of one set: each operation's pairs, after both results were checked."""
    ren, ckks = ckks_bench.ren, ckks_bench.ckks
    seal = ckks_bench.Seal(name)
    rng = np.random.default_rng(7)
    x, y = ckks_bench.disk(rng, seal.n // 2), ckks_bench.disk(rng, seal.n // 2)
    cx, cy = seal.encrypt(x), seal.encrypt(y)
    rows = []
    with ckks.Context(ckks.Params(**ckks_bench.SETS[name]), seed=1, device="cpu") as ctx:
        ctx.rotation_key(1)
        a, b = ckks.encrypt(x).realize(), ckks.encrypt(y).realize()
        capture_a, capture_b = ckks.encrypt(y).realize(), ckks.encrypt(x).realize()
        mul, rot = ren.jit(ckks.multiply), ren.jit(lambda c: c.rotate(1))
        mul(capture_a, capture_b), rot(capture_a)  # captured on other ciphertexts
        ops = {
            "multiply": (lambda: mul(a, b).realize(), lambda: seal.multiply(cx, cy), x * y),
            "rotate": (lambda: rot(a).realize(), lambda: seal.rotate(cx), np.roll(x, -1)),
        }
        for op, (ren_call, seal_call, want) in ops.items():
            for _ in range(3):
                ren_call()
            _machine.settle()  # kernels built in the background: time the built ones
            ren_bits = ckks.precision_bits(ckks.decrypt(ren_call()), want)
            seal_bits = ckks.precision_bits(seal.decrypt(seal_call()), want)
            check = (
                ckks_bench._checked(ren_bits, "cpu")
                == "ok"
                == ckks_bench._checked(seal_bits, "seal")
            )
            row = {"bench": f"ckks.{op}", "params": name, "ren_bits": ren_bits}
            row |= {"seal_bits": seal_bits, "check": "ok" if check else "FAIL"}
            if check:
                row |= pairs(ren_call, seal_call, count)
            rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--sets",
        type=lambda t: _machine.names(t, tuple(ckks_bench.SETS), "--sets"),
        default=["a", "b"],
        help="comma-separated parameter sets of ckks.py (a, b, q; default a,b)",
    )
    parser.add_argument("--pairs", type=int, default=151, help="pairs per operation (151)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    args = parser.parse_args(argv)
    if args.pairs < 1:
        parser.error(f"--pairs must be at least 1, got {args.pairs}")
    os.environ["OMP_NUM_THREADS"] = "1"
    ckks_bench._import_ren(1)
    results: dict[str, Any] = {"benchmark": "pairs", "machine": _machine.machine()}
    results |= {"peer": _machine.peer("seal", "seal-python"), "pairs": args.pairs, "results": []}
    if not results["peer"]["available"]:
        print(f"SEAL is not installed here ({results['peer']['reason']}): nothing to pair")
        _machine.write_results(results, args.out)
        return 0
    print(f"Ren jit (cpu, REN_THREADS=1) against SEAL, {args.pairs} pairs each; ratio = Ren/SEAL")
    print("| bench         | set |  Ren ms | SEAL ms | ratio (q1-q3)      | check |")
    print("|---------------|-----|---------|---------|--------------------|-------|")
    failed = False
    for name in args.sets:
        for row in run_set(name, args.pairs):
            results["results"].append(row)
            failed |= row["check"] != "ok"
            if row["check"] != "ok":
                print(
                    f"| {row['bench']:<13} | {name:<3} | {'-':>7} | {'-':>7} | {'-':<18} | FAIL  |"
                )
                continue
            spread = f"{row['ratio']:.3f} ({row['ratio_q1']:.2f}-{row['ratio_q3']:.2f})"
            print(
                f"| {row['bench']:<13} | {name:<3} | {row['ren_ms']:7.2f} | {row['seal_ms']:7.2f} "
                f"| {spread:<18} | ok    |"
            )
    print(_machine.machine_line(results["machine"]))
    _machine.write_results(results, args.out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
