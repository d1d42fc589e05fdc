"""Benchmark: the first run on the cpu device with an empty compile cache, beside a warm one.

Run from the repository root::

    .venv/bin/python benchmarks/first_run.py --out benchmarks/figures/first_run.json
    .venv/bin/python benchmarks/first_run.py --quick          # boot-toy and n=4096 only

Each case runs in a process of its own with an empty ``REN_CACHE_DIR``, on one thread
(``REN_THREADS=1``, ``OMP_NUM_THREADS=1``; the compiler may still use every core), the debug
switches off:

* ``boot-n12`` (``--quick``: ``boot-toy``): ``ckks.Params.preset``, keys made
  (``ctx.keygen()``, ``ctx.bootstrap_keys()``), a value encrypted at level 0; then
  ``ckks.bootstrap(ct).realize()`` once (``first_s``), once more (``second_s``, the next one
  in the same process, as a user sees it), and, once no build runs, three more times
  (``warm_s``, the least of them);
* ``multiply-n16384`` (``--quick``: n=4096): a context of n=16384 with moduli (60, 40 x 5) and a
  special modulus of 60 bits (7 moduli), keys made, two values encrypted and realized; then
  ``ckks.multiply(a, b).realize()`` (relinearized and rescaled) once, once more, and, once no
  build runs, 5 more times;
* ``load`` of ``boot-n12`` (``--quick``: ``boot-toy``): a jitted CKKS multiply-and-rotate at
  the preset's chain, saved (``export``) with its evaluation keys in a first process; in a
  second process with an empty cache, the keys read (``EvaluationKeys.from_bytes``) and
  ``ren.load`` of the plan (``first_s``, its kernels built), then ``ren.load`` again three times
  after forgetting what the process built (``warm_s``: the cache on disk hit, as a new process
  finds it). (A whole bootstrap cannot be saved yet: its plan reads the encoded transforms,
  which no stored input names.)

Also ``setup_s`` (the keys and inputs made before the first call, where the builds a Ren with
``REN_TIERED`` starts in the background overlap the user's own work), ``first_call_s`` (the
loaded plan's first call) and ``drain_s`` (the wait, after the second call, for background builds
still running, so that ``warm_s`` is the steady state; a program that goes on meanwhile runs its
kernels without their libraries until they are built). For each case: ``libraries`` (distinct
library files in the cache afterwards: hard links to one
library count once), ``entries`` (kernels in the cache), ``compiler_runs`` and
``compiler_s`` (wall seconds during which at least one compiler process started by the
program's own thread ran, in the timed call: what it waited for; a background build is not
counted), ``ren_s`` (``first_s - compiler_s``: Ren's own work in the first call), ``cache_bytes``
(the cache's size on disk), and ``ratio`` (``first_s / warm_s``). Every result is checked:
a bootstrap and a multiply decrypt to the plaintext within ``MIN_BITS``; the loaded plan's result
decrypts to the rotated product.

``--tree A --tree B --rounds 2`` runs every case with the Ren of checkout ``A`` and of ``B``,
alternately, twice: a before and after in one run. Output: a Markdown table on stdout and JSON
(``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _machine import machine, switch_off, write_results

ROOT = Path(__file__).resolve().parents[1]

#: Bits every checked result must reach (a bootstrap keeps about 20 with the presets).
MIN_BITS = 12.0


# -- in the child process --------------------------------------------------------------------


class CompilerClock:
    """Counts compiler processes and the wall time during which at least one of them ran."""

    def __init__(self) -> None:
        self.intervals: list[tuple[float, float]] = []
        real_run, real_popen = subprocess.run, subprocess.Popen
        clock = self

        def builds(cmd: Any) -> bool:  # in the caller's thread: background builds do not wait
            if threading.current_thread() is not threading.main_thread():
                return False
            return isinstance(cmd, list) and "-o" in cmd and any(str(c).endswith(".c") for c in cmd)

        def run(cmd: Any, *args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            out = real_run(cmd, *args, **kwargs)
            if builds(cmd):
                clock.intervals.append((start, time.perf_counter()))
            return out

        class Popen(real_popen):  # type: ignore[misc, valid-type]
            def __init__(self, cmd: Any, *args: Any, **kwargs: Any) -> None:
                super().__init__(cmd, *args, **kwargs)
                self._ren_start = time.perf_counter() if builds(cmd) else None

            def communicate(self, *args: Any, **kwargs: Any) -> Any:
                out = super().communicate(*args, **kwargs)
                if self._ren_start is not None:
                    clock.intervals.append((self._ren_start, time.perf_counter()))
                    self._ren_start = None
                return out

        subprocess.run, subprocess.Popen = run, Popen  # type: ignore[assignment, misc]

    def mark(self) -> int:
        return len(self.intervals)

    def since(self, mark: int) -> tuple[int, float]:
        """Compiler processes since ``mark`` and the wall seconds they covered (overlaps once)."""
        spans = sorted(self.intervals[mark:])
        total, end = 0.0, float("-inf")
        for a, b in spans:
            if b > end:
                total += b - max(a, end)
                end = b
        return len(spans), total


def cache_figures(directory: Path) -> dict[str, int]:
    libs: dict[tuple[int, int], int] = {}
    entries = 0
    for path in directory.glob("*.so"):
        st = path.stat()
        libs[(st.st_dev, st.st_ino)] = st.st_size
        entries += 1
    sums = sum(p.stat().st_size for p in directory.glob("*.sum"))
    return {"libraries": len(libs), "entries": entries, "cache_bytes": sum(libs.values()) + sums}


def timed(call: Any, clock: CompilerClock) -> tuple[float, int, float]:
    mark = clock.mark()
    start = time.perf_counter()
    call()
    took = time.perf_counter() - start
    runs, compiler_s = clock.since(mark)
    return took, runs, compiler_s


def case_bootstrap(preset: str, clock: CompilerClock) -> dict[str, Any]:
    import numpy as np

    from ren.schemes import ckks

    params = ckks.Params.preset(preset)
    config = ckks.BootstrapConfig.for_params(params)
    x = np.random.default_rng(7).uniform(-1, 1, params.slots)
    start = time.perf_counter()
    with ckks.Context(params, seed=1, device="cpu") as ctx:
        ctx.keygen()
        ctx.bootstrap_keys(config, progress=False)
        ct = ckks.encrypt(x, level=0).realize()
        setup = time.perf_counter() - start
        out: list[Any] = []
        first, runs, compiler_s = timed(lambda: out.append(ckks.bootstrap(ct).realize()), clock)
        second = timed(lambda: out.append(ckks.bootstrap(ct).realize()), clock)[0]
        drain = _drain()
        warm = [timed(lambda: out.append(ckks.bootstrap(ct).realize()), clock)[0] for _ in range(3)]
        bits = float(ckks.precision_bits(np.real(ckks.decrypt(out[-1])), x))
    row = _row(f"bootstrap {preset}", first, [second, *warm], runs, compiler_s, bits)
    return row | {"setup_s": setup, "drain_s": drain}


def case_multiply(n: int, clock: CompilerClock) -> dict[str, Any]:
    import numpy as np

    from ren.schemes import ckks

    quick = n < 16384  # the quick case is below the HE standard's bound for 7 moduli
    q_bits = (60, 40, 40, 40, 40, 40)
    params = ckks.Params(n=n, q_bits=q_bits, p_bits=(60,), scale_bits=40, insecure=quick)
    x, y = (np.random.default_rng(s).uniform(-1, 1, params.slots) for s in (1, 2))
    start = time.perf_counter()
    with ckks.Context(params, seed=1, device="cpu") as ctx:
        ctx.keygen()
        a, b = ckks.encrypt(x).realize(), ckks.encrypt(y).realize()
        setup = time.perf_counter() - start
        out: list[Any] = []
        first, runs, compiler_s = timed(lambda: out.append(ckks.multiply(a, b).realize()), clock)
        second = timed(lambda: out.append(ckks.multiply(a, b).realize()), clock)[0]
        drain = _drain()
        warm = [
            timed(lambda: out.append(ckks.multiply(a, b).realize()), clock)[0] for _ in range(5)
        ]
        bits = float(ckks.precision_bits(np.real(ckks.decrypt(out[-1])), x * y))
    row = _row(f"multiply n={n} (7 moduli)", first, [second, *warm], runs, compiler_s, bits)
    return row | {"setup_s": setup, "drain_s": drain}


def case_load(directory: Path, preset: str, clock: CompilerClock) -> dict[str, Any]:
    import numpy as np

    import ren
    from ren.schemes import ckks

    params = ckks.Params.preset(preset)
    secret = (directory / "secret.bin").read_bytes()
    blob = (directory / "keys.bin").read_bytes()
    x, y = (np.random.default_rng(s).uniform(-1, 1, params.slots) for s in (1, 2))
    level = ckks.BootstrapConfig.for_params(params).levels_left(params)  # the scale's moduli
    with ckks.Context(params, secret_key=secret, device="cpu"):
        keys = ckks.EvaluationKeys.from_bytes(blob, device="cpu", insecure=True)
        plan = directory / "plan.renplan"
        loaded: list[Any] = []
        first, runs, compiler_s = timed(
            lambda: loaded.append(ren.load(plan, stored={"keys": keys})), clock
        )
        args = ckks.encrypt(x, level=level).realize(), ckks.encrypt(y, level=level).realize()
        start = time.perf_counter()
        out = loaded[0](*args)
        call = time.perf_counter() - start
        drain = _drain()
        bits = float(ckks.precision_bits(np.real(ckks.decrypt(out)), np.roll(x * y, -1)))
        warm = []
        for _ in range(3):
            from ren.backends import cpu
            from ren.codegen import compiler

            compiler._memory.clear()  # what a new process has: the disk cache only
            for cache in ("_elementwise_parts", "_elementwise", "_polynomial"):
                if hasattr(cpu, cache):  # (the names of this and earlier versions of Ren)
                    getattr(cpu, cache).cache_clear()
            warm.append(timed(lambda: ren.load(plan, stored={"keys": keys}), clock)[0])
    row = _row(f"ren.load of a saved plan ({preset})", first, warm, runs, compiler_s, bits)
    return row | {"first_call_s": call, "drain_s": drain}


def multiply_rotate(a: Any, b: Any) -> Any:
    """The saved program: a product, relinearized and rescaled, rotated by one slot."""
    return (a * b).rotate(1)


def save_plan(directory: Path, preset: str) -> None:
    """Jit ``multiply_rotate`` at ``preset``'s chain; save it, its keys and the secret key."""
    import numpy as np

    import ren
    from ren.schemes import ckks

    params = ckks.Params.preset(preset)
    x = np.random.default_rng(3).uniform(-1, 1, params.slots)
    level = ckks.BootstrapConfig.for_params(params).levels_left(params)  # the scale's moduli
    with ckks.Context(params, seed=1, device="cpu") as ctx:
        ctx.keygen()
        ctx.rotation_key(1)
        f = ren.jit(multiply_rotate)
        stored = {"keys": ctx.evaluation_keys()}
        a, b = ckks.encrypt(x, level=level), ckks.encrypt(x, level=level)
        f.export(directory / "plan.renplan", a, b, stored=stored)
        (directory / "keys.bin").write_bytes(ctx.evaluation_keys().to_bytes())
        (directory / "secret.bin").write_bytes(ctx.export_secret_key())


def _drain() -> float:
    """Wait for builds still running in the background (a Ren with ``REN_TIERED``); seconds."""
    start = time.perf_counter()
    try:
        from ren.backends import cpu_tiers
    except ImportError:  # a Ren without them
        return 0.0
    cpu_tiers.wait()
    return time.perf_counter() - start


def _row(
    case: str, first: float, warm: list[float], runs: int, compiler_s: float, bits: float
) -> dict[str, Any]:
    best = min(warm[1:]) if len(warm) > 1 else warm[0]  # the calls after the second
    return {
        "case": case, "first_s": first, "second_s": warm[0], "warm_s": best,
        "ratio": first / best, "ratio_second": first / warm[0], "compiler_runs": runs,
        "compiler_s": compiler_s, "ren_s": first - compiler_s, "check_bits": bits,
    }  # fmt: skip


def child(case: str, quick: bool, directory: Path) -> dict[str, Any]:
    clock = CompilerClock()
    if case == "bootstrap":
        row = case_bootstrap("boot-toy" if quick else "boot-n12", clock)
    elif case == "multiply":
        row = case_multiply(4096 if quick else 16384, clock)
    elif case == "save":
        save_plan(directory, "boot-toy" if quick else "boot-n12")
        return {}
    else:
        row = case_load(directory, "boot-toy" if quick else "boot-n12", clock)
    row.update(cache_figures(Path(os.environ["REN_CACHE_DIR"])))
    return row


# -- the driver ------------------------------------------------------------------------------


def run_child(
    case: str, quick: bool, directory: Path, cache: Path, tree: Path = ROOT
) -> dict[str, Any]:
    env = dict(os.environ, REN_CACHE_DIR=str(cache), REN_THREADS="1", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")])
    cmd = [sys.executable, __file__, "--child", case, "--dir", str(directory)]
    cmd += ["--quick"] if quick else []
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"case {case} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| tree | case | first s | second s | warm s | first / warm | libraries | compiler runs | "
        "compiler s | Ren s | setup s | drain s | cache MB |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {Path(r.get('tree', ROOT)).name} | {r['case']} | {r['first_s']:.2f} | "
            f"{r['second_s']:.3f} | {r['warm_s']:.3f} | "
            f"{r['ratio']:.1f}x | {r['libraries']} | {r['compiler_runs']} | "
            f"{r['compiler_s']:.2f} | {r['ren_s']:.2f} | "
            f"{r.get('setup_s', r.get('first_call_s', 0)):.2f}"
            f" | {r['drain_s']:.2f} | {r['cache_bytes'] / 2**20:.1f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=None, help="write the JSON here")
    parser.add_argument("--quick", action="store_true", help="small cases (CI smoke run)")
    parser.add_argument(
        "--tree",
        type=Path,
        action="append",
        default=None,
        help="run Ren from this checkout (again for each; default: this one), rounds interleaved",
    )
    parser.add_argument("--rounds", type=int, default=1, help="rounds of every case and tree")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--dir", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        switch_off()
        print(json.dumps(child(args.child, args.quick, args.dir)))
        return 0
    rows = []
    trees = [t.resolve() for t in (args.tree or [ROOT])]
    with tempfile.TemporaryDirectory(prefix="ren-first-run-") as tmp:
        for rnd in range(args.rounds):
            for t, tree in enumerate(trees):
                base = Path(tmp) / f"{rnd}-{t}"
                base.mkdir()
                for case in ("bootstrap", "multiply"):
                    rows.append(run_child(case, args.quick, base, base / f"c-{case}", tree))
                    rows[-1] |= {"tree": str(tree), "round": rnd}
                run_child("save", args.quick, base, base / "c-save", tree)
                rows.append(run_child("load", args.quick, base, base / "c-load", tree))
                rows[-1] |= {"tree": str(tree), "round": rnd}
    failed = [r["case"] for r in rows if r["check_bits"] < MIN_BITS]
    print(table(rows))
    data = {"benchmark": "first_run", "quick": args.quick, "results": rows, "failed": failed}
    data["environment"] = machine()
    if args.out is not None:
        write_results(data, args.out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
