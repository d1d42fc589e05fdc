"""Benchmark: the forward and inverse NTT, NumPy reference kernels against the C templates.

Run from the repository root::

    .venv/bin/python benchmarks/ntt.py [--out FILE.json] [--quick] [--repeat R]

For ``n = 2**12 .. 2**16`` and ``L = 1`` and ``8`` limbs of 60-bit moduli (``ntt_primes(n, 60,
L)``; ``--bits`` takes another size: below 50 bits a machine with AVX-512 IFMA runs the
butterflies of ``ren.codegen.ntt_ifma``) it times, per direction:

* ``numpy``: :func:`ren.ring.arith.ntt` / ``intt``;
* ``c``: the C source of :mod:`ren.codegen.templates` compiled with ``cc -O3 -march=native
  -shared -fPIC`` and *no* ``-fopenmp``: one thread;
* ``c-openmp``: the same source compiled with ``-fopenmp`` (``L = 8`` only; the limb loop is
  split over ``OMP_NUM_THREADS`` threads, by default every CPU);
* ``cuda``: the CUDA programs of :mod:`ren.codegen.cuda_templates` (one launch per butterfly
  stage) through the cuda backend, when PyCUDA sees a GPU; a figure is launches plus a
  synchronize, with the data already on the GPU. ``--cuda-emulated`` times the host emulator
  instead (``REN_CUDA_EMULATE=1``): that checks the path and its words, and its times mean nothing.

Each figure is the median of ``--repeat`` runs, a run being a loop of as many calls as take about
20 ms (one call at least), divided by the number of calls. Butterflies per nanosecond are
``(n/2) * log2(n) * L / time_ns``. Before timing, every C result is compared word for word with
NumPy's; a mismatch is reported and the script exits with status 1.

The goal (reported, never asserted): the single-thread C forward NTT at ``n = 16384`` with one
60-bit limb within 0.31 ms, what Microsoft SEAL 4.4 measured on the machine this was written on.
The last line printed is ``goal <ms> ms (<= 0.31 ms: met|missed)``.

``--quick`` times ``n = 2**12`` and ``2**14`` only.
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from _machine import machine, machine_line, time_calls, write_results

from ren.codegen import cuda_templates, templates
from ren.device import Buffer
from ren.errors import RenError
from ren.ring import RingSpec, ntt_primes
from ren.ring import arith as rk

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "ntt.json"
SIZES = [1 << k for k in range(12, 17)]
QUICK_SIZES = [1 << 12, 1 << 14]
LIMBS = [1, 8]
BITS = 60
CFLAGS = ["-O3", "-march=native", "-shared", "-fPIC"]
GOAL = {
    "what": "C forward NTT, n=16384, one 60-bit limb, single thread",
    "n": 16384,
    "limbs": 1,
    "target_s": 0.31e-3,
    "reference": "Microsoft SEAL 4.4, measured on the machine this benchmark was written on",
}

#: (template, tables, reference) per direction.
DIRECTIONS = {
    "forward": (templates.ntt_source, templates.ntt_tables, rk.ntt),
    "inverse": (templates.intt_source, templates.intt_tables, rk.intt),
}
CUDA_PROGRAMS = {"forward": cuda_templates.ntt_program, "inverse": cuda_templates.intt_program}


def cuda_runtime(emulated: bool):
    """The cuda backend's runtime, or ``None`` with the reason printed (no PyCUDA, no GPU)."""
    if emulated:
        os.environ["REN_CUDA_EMULATE"] = "1"
    from ren.backends import cuda

    cuda.runtime.cache_clear()
    try:
        return cuda.runtime()
    except RenError as e:
        print(f"cuda: not timed ({e})", file=sys.stderr)
        return None


def bench_cuda(ring: RingSpec, direction: str, a: np.ndarray, want, repeat: int, rt) -> dict:
    """Time one NTT program on the cuda device (inputs and output stay on the device)."""
    from ren.backends import cuda

    kernel = cuda._from_program(CUDA_PROGRAMS[direction](ring), (0, 0))
    out = Buffer("cuda", ring.dtype, a.size, np.zeros(a.size, ring.np_dtype))
    src = Buffer("cuda", ring.dtype, a.size, a.reshape(-1))
    bufs = (out, src)
    kernel(bufs)
    check = "ok" if np.array_equal(out.array.reshape(a.shape), want) else "MISMATCH"

    def call() -> None:
        kernel(bufs)
        rt.synchronize()

    backend = "cuda" if rt.name == "pycuda" else "cuda-emulated"
    return {"backend": backend, "threads": 0, "check": check, **time_calls(call, repeat)}


# --------------------------------------------------------------------------------------------
# compiling (ren.codegen.compiler.compile_cached will take this over)


def compile_kernel(source: str, name: str, openmp: bool, workdir: Path, args: int = 4):
    """Compile ``source`` to a shared library in ``workdir``; return its C function ``name``.

    One library per source: the NTT of every ring of one ``n`` is one source (its limbs and
    moduli are a table), built once and loaded once (a library is never written over while it
    is loaded).
    """
    tag = "omp" if openmp else "st"
    digest = hashlib.sha256(source.encode()).hexdigest()[:12]
    src, lib = workdir / f"{name}_{tag}_{digest}.c", workdir / f"{name}_{tag}_{digest}.so"
    if not lib.is_file():
        src.write_text(source, encoding="utf-8")
        flags = [*CFLAGS, "-fopenmp"] if openmp else [*CFLAGS, "-Wno-unknown-pragmas"]
        subprocess.run(["cc", *flags, "-o", str(lib), str(src)], check=True)
    fn = getattr(ctypes.CDLL(str(lib)), name)
    fn.restype = None
    fn.argtypes = [ctypes.c_void_p] * args
    return fn


def openmp_works(workdir: Path) -> bool:
    try:
        compile_kernel("void ren_probe(void *a, void *b, void *c, void *d) {}\n", "ren_probe", True,
                       workdir)  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return False
    return True


def compiler_version() -> str | None:
    try:
        out = subprocess.run(["cc", "--version"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.splitlines()[0]


# --------------------------------------------------------------------------------------------
# timing


def butterflies(n: int, limbs: int) -> int:
    return (n // 2) * int(math.log2(n)) * limbs


def bench_ring(
    n: int, limbs: int, repeat: int, workdir: Path, openmp: bool, rt=None, bits: int = BITS
) -> list[dict]:
    ring = RingSpec(n, ntt_primes(n, bits, limbs))
    rng = np.random.default_rng(n * 31 + limbs)
    a = np.stack([rng.integers(0, q, size=n, dtype=np.uint64) for q in ring.moduli])
    a = a.astype(ring.np_dtype)
    rows = []
    for direction, (source_of, tables_of, reference) in DIRECTIONS.items():
        want = reference(ring, a)
        base = {"n": n, "limbs": limbs, "bits": bits, "direction": direction}
        stats = time_calls(lambda r=ring, ref=reference: ref(r, a), repeat)
        rows.append({**base, "backend": "numpy", "threads": 1, "check": "reference", **stats})
        kernel = source_of(ring)
        tables = tables_of(ring)  # the twiddles and the ring table (the limbs and moduli)
        out = np.zeros_like(a)
        ptrs = [x.ctypes.data for x in (out, a, *tables)]
        variants = [("c", False)] + ([("c-openmp", True)] if openmp and limbs > 1 else [])
        for backend, omp in variants:
            fn = compile_kernel(kernel.source, kernel.name, omp, workdir, len(ptrs))
            out[:] = 0
            fn(*ptrs)
            check = "ok" if np.array_equal(out, want) else "MISMATCH"
            stats = time_calls(lambda f=fn, p=ptrs: f(*p), repeat)
            threads = _omp_threads() if omp else 1
            rows.append({**base, "backend": backend, "threads": threads, "check": check, **stats})
        if rt is not None:
            rows.append({**base, **bench_cuda(ring, direction, a, want, repeat, rt)})
    for row in rows:
        row["butterflies_per_ns"] = butterflies(n, limbs) / (row["median_s"] * 1e9)
    return rows


def _omp_threads() -> int:
    given = os.environ.get("OMP_NUM_THREADS", "")
    return int(given) if given.isdigit() else os.cpu_count() or 1


def call_overhead(repeat: int, workdir: Path) -> float:
    """The median time of a ctypes call to an empty C function of four pointers (in every C
    figure)."""
    fn = compile_kernel("void ren_noop(void *a, void *b, void *c, void *d) {}\n", "ren_noop",
                        False, workdir)  # fmt: skip
    return time_calls(lambda: fn(0, 0, 0, 0), repeat)["median_s"]


# --------------------------------------------------------------------------------------------
# reporting


def goal(rows: list[dict]) -> dict[str, object]:
    row = next(
        (
            r
            for r in rows
            if (r["n"], r["limbs"], r["bits"], r["direction"], r["backend"])
            == (GOAL["n"], GOAL["limbs"], BITS, "forward", "c")
        ),
        None,
    )
    measured = row["median_s"] if row else None
    return {**GOAL, "c_median_s": measured, "met": measured is not None and measured <= 0.31e-3}


def print_table(results: dict[str, object]) -> None:
    print(f"NTT, {results['bits']}-bit moduli: median of {results['repeat']} runs; ms per call")
    print(f"C: {results['compiler']['cc']}, {' '.join(CFLAGS)} (c-openmp adds -fopenmp)")
    print()
    backends = ["numpy", "c", "c-openmp"]
    backends += sorted({r["backend"] for r in results["rows"]} - set(backends))
    header = f"{'n':>6} {'L':>2} {'direction':<8} " + " ".join(f"{b:>10}" for b in backends)
    print(header + f" {'C bf/ns':>8} {'numpy/C':>8} check")
    by_key: dict[tuple, dict[str, dict]] = {}
    for row in results["rows"]:
        key = (row["n"], row["limbs"], row["direction"])
        by_key.setdefault(key, {})[row["backend"]] = row
    for (n, limbs, direction), cells in by_key.items():
        times = " ".join(
            f"{cells[b]['median_s'] * 1e3:10.4f}" if b in cells else f"{'-':>10}" for b in backends
        )
        c = cells["c"]
        speedup = cells["numpy"]["median_s"] / c["median_s"]
        checks = ",".join(sorted({r["check"] for r in cells.values() if r["check"] != "reference"}))
        print(
            f"{n:>6} {limbs:>2} {direction:<8} {times} {c['butterflies_per_ns']:8.3f} "
            f"{speedup:8.0f}x {checks}"
        )
    print()
    m = results["machine"]
    print(machine_line(m))
    print(f"ctypes call overhead (in every C figure): {results['call_overhead_s'] * 1e6:.2f} us")


def goal_line(g: dict[str, object]) -> str:
    if g["c_median_s"] is None:
        return "goal not measured (n=16384 or 60-bit moduli left out)"
    return f"goal {g['c_median_s'] * 1e3:.4f} ms (<= 0.31 ms: {'met' if g['met'] else 'missed'})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/ntt.py", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per figure (>= 1)")
    parser.add_argument("--quick", action="store_true", help="n = 2**12 and 2**14 only")
    parser.add_argument(
        "--bits", type=int, default=BITS, help="modulus size (default 60; below 50, IFMA's path)"
    )
    parser.add_argument(
        "--cuda-emulated",
        action="store_true",
        help="time the cuda programs on the host emulator (checks the path; times mean nothing)",
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    with tempfile.TemporaryDirectory(prefix="ren-ntt-bench-") as tmp:
        workdir = Path(tmp)
        openmp = openmp_works(workdir)
        rt = cuda_runtime(args.cuda_emulated)
        rows = []
        for n in QUICK_SIZES if args.quick else SIZES:
            for limbs in LIMBS:
                rows += bench_ring(n, limbs, args.repeat, workdir, openmp, rt, args.bits)
        overhead = call_overhead(args.repeat, workdir)
    results = {
        "benchmark": "ntt",
        "repeat": args.repeat,
        "quick": args.quick,
        "bits": args.bits,
        "compiler": {"cc": compiler_version(), "flags": CFLAGS, "openmp": openmp},
        "cuda": None if rt is None else rt.description,
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "machine": machine(),
        "call_overhead_s": overhead,
        "rows": rows,
        "goal": goal(rows),
    }
    print_table(results)
    write_results(results, args.out)
    print(goal_line(results["goal"]))
    return 1 if any(r["check"] == "MISMATCH" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
