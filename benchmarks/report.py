"""Benchmark: the report of ``python -m ren.viz`` at the size of a bootstrap: bytes and load time.

Run from the repository root::

    .venv/bin/python benchmarks/report.py [--example bootstrap] [--repeat 3] [--out FILE.json]

It runs ``python -m ren.viz --example NAME`` (default ``bootstrap``: one ``boot-toy`` bootstrap,
1260 kernels) in a subprocess and reports:

* ``run_s``: the whole command (the program, the observing pass and the report);
* ``report_bytes``: the size of ``report.html``; ``regions``: the region boxes it draws;
* ``load_ms``: the time headless chromium takes from navigation to the end of the page's ``load``
  event, each of ``--repeat`` loads (``null`` without chromium), and their median.

Nothing is asserted: the figures go in the JSON (default ``benchmarks/results/report.json``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _machine import machine, write_results

from ren.viz.browser import find, load_ms


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--example", default="bootstrap", help="the ren.viz example to report")
    parser.add_argument("--repeat", type=int, default=3, help="loads in chromium (median kept)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/report.json"))
    opts = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "ren.viz", "--example", opts.example, "--out", tmp],
            capture_output=True,
            text=True,
            check=False,
        )
        run_s = time.perf_counter() - start
        if done.returncode != 0:
            print(done.stdout + done.stderr, file=sys.stderr)
            return 1
        page = (Path(tmp) / "report.html").read_text(encoding="utf-8")
        loads = [load_ms(page) for _ in range(opts.repeat)] if find() is not None else []
    results = {
        "benchmark": "report",
        "machine": machine(),
        "example": opts.example,
        "run_s": run_s,
        "report_bytes": len(page.encode("utf-8")),
        "regions": page.count('<details class="box'),
        "load_ms": loads or None,
        "load_ms_median": statistics.median(loads) if loads else None,
        "browser": find(),
    }
    write_results(results, opts.out)
    load = f"{results['load_ms_median']:.0f} ms" if loads else "not measured (no chromium)"
    print(
        f"{opts.example}: report {results['report_bytes'] / 2**20:.2f} MiB, "
        f"{results['regions']} region boxes, load {load}, whole run {run_s:.1f} s"
    )
    print(json.dumps({k: results[k] for k in ("report_bytes", "load_ms_median")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
