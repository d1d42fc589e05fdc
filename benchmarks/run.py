"""Benchmark: every benchmark in one run, one JSON file of rows in one shape, one Markdown table.

Run from the repository root::

    .venv/bin/python benchmarks/run.py              # everything, JSON in benchmarks/results/
    .venv/bin/python benchmarks/run.py --quick      # about 90 s (ntt to ckks: 20 s)
    .venv/bin/python benchmarks/run.py --only ntt,ckks --threads-compare --out /tmp/run.json

It runs ``ntt.py``, ``schedule.py``, ``memory.py``, ``jit.py``, ``ckks.py``, ``bfv.py``,
``saved.py``, ``circuits.py``, ``functions.py`` and ``bootstrap.py`` (beside OpenFHE, when its
environment is there) in that order (``--only`` picks some, by the script's name without
``.py``: ``ntt``, ..., ``bfv``, ...), each as a subprocess writing its own JSON to a temporary
folder (``--quick``: each script's quick mode with few repeats), and turns each script's figures
into rows of one shape::

    {"machine": {...}, "run": {...}, "peers": {...}, "skipped": [...], "failed": [...],
     "results": [{"bench": ..., "backend": ..., "params": ..., "mode": ..., "median_ms": ...,
                  "threads": ..., ...extras}, ...], "precision": [...], "noise": [...]}

``bench`` names what is timed (``ntt.forward``, ``schedule``, ``realize``, ``memory.plan``,
``jit.seed``, ``ckks.multiply``, ``bfv.multiply``, ``bgv.rotate_rows``, ...), ``backend`` where
(``python``, ``cpu``, ``cuda``, or a peer: ``seal``), ``params`` the ring or parameter set in a
few words, ``mode`` ``eager`` or ``jit`` (``saved.py``: ``capture`` or ``load``, each in a new
process); the other keys are each script's own figures under stable names (``min_ms``,
``check``, ``kernels``, ``arena_ratio``, ...). Ren runs with ``REN_THREADS=--threads`` (default
1) and the same ``OMP_NUM_THREADS``, but for ``bfv.py``, which runs Ren on one thread (as SEAL's
evaluator) whatever ``--threads`` says. Figures that are not times sit beside ``results``:
``precision`` is ``ckks.py``'s (bits of precision per trial), ``noise`` is ``bfv.py``'s (the
noise budget in bits of a fresh ciphertext and of a product, Ren's and SEAL's, each row
``{"bench", "backend", "params", "stage", "bits", "check", ...}``), in a table of its own.

**Peers.** When ``import seal`` works (``pip install -e .[peers]``), ``ckks.py`` and ``bfv.py``
time SEAL's CKKS, BFV and BGV operations in the same run, and this script times SEAL's NTT: a
CKKS ciphertext of two polynomials at each NTT ring's ``n`` and limb count (60-bit primes), taken
out of and back into NTT form with ``Evaluator.transform_from_ntt_inplace`` /
``transform_to_ntt_inplace``, each call timed alone and divided by the two polynomials. Every
Ren row with a SEAL row of the same ``bench`` and ``params`` gets ``peer``, ``peer_ms`` and
``ratio`` (Ren's median over SEAL's; below 1 Ren is faster). Without SEAL the NTT row at
``n=16384``, one limb, falls back to ``ntt.py``'s goal, 0.31 ms (SEAL 4.4 on the machine the
templates were written on), marked ``"measured": false``.

**Threads.** ``--threads-compare`` (``M``, default 2) runs the cpu NTT and CKKS figures again
with ``REN_THREADS=M``: those rows have ``threads: M`` and ``threads_speedup``, the median at
``--threads`` over the median at ``M``. The NTT templates split the loop over limbs only, so the
NTT is compared at 8 limbs (``ntt.py``'s ``c-openmp`` rows).

What cannot run (no C compiler, no GPU, no peer) is listed under ``skipped`` with the reason; a
script that fails (a ``MISMATCH``, a crash) is listed under ``failed`` and the exit status is 1.
The Markdown table (``--out`` with the suffix ``.md``) is printed too, then the Ren/SEAL ratios.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from _machine import RUN_SECONDS, machine, peer, write_results

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "benchmarks"
DEFAULT_OUT = HERE / "results" / "run.json"
PEERS = ("seal",)
#: the NTT figure used when SEAL cannot be timed here: ntt.py's goal (what SEAL 4.4 measured).
SEAL_NTT_FALLBACK = {"n": 16384, "limbs": 1, "direction": "forward", "median_ms": 0.31}
PEER_MIN_BITS = 12.0  # as benchmarks/ckks.py: what the check catches is a misuse, about 0 bits
Row = dict[str, Any]


def row(bench: str, backend: str, params: str, mode: str, median_ms: float | None, **extra) -> Row:
    """One result in the common shape: the five keys every row has, then its extras."""
    return {
        "bench": bench,
        "backend": backend,
        "params": params,
        "mode": mode,
        "median_ms": median_ms,
        **extra,
    }


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1e3


def _threads(value: str | int | None) -> int | None:
    """A thread count from the environment (``None``: not set, OpenMP's default)."""
    return int(value) if value not in (None, "") else None


# --------------------------------------------------------------------------------------------
# each script's JSON -> rows


def ntt_rows(data: Mapping[str, Any], env: Mapping[str, str]) -> list[Row]:
    """``ntt.py``: one row per (direction, ring, backend). ``numpy`` is the python backend's
    kernel, ``c`` the cpu backend's template on one thread; ``c-openmp`` is what the cpu backend
    runs with ``REN_THREADS`` above 1, so its rows at one thread are left out."""
    backends = {"numpy": "python", "c": "cpu", "c-openmp": "cpu"}
    rows = []
    for r in data["rows"]:
        if r["backend"] == "c-openmp" and r["threads"] == 1:
            continue
        params = f"n={r['n']} L={r['limbs']} {r['bits']}-bit"
        rows.append(
            row(
                f"ntt.{r['direction']}",
                backends.get(r["backend"], r["backend"]),  # cuda, cuda-emulated as they are
                params,
                "eager",
                _ms(r["median_s"]),
                threads=r["threads"],
                min_ms=_ms(r["min_s"]),
                first_ms=_ms(r["first_s"]),
                number=r["number"],
                variant=r["backend"],
                check=r["check"],
                butterflies_per_ns=r["butterflies_per_ns"],
            )
        )
    return rows


def schedule_rows(data: Mapping[str, Any], env: Mapping[str, str]) -> list[Row]:
    """``schedule.py``: ``schedule`` per program size and ``realize`` per ring, on the default
    device (``REN_DEVICE``, else python)."""
    backend = env.get("REN_DEVICE") or "python"
    threads = _threads(env.get("REN_THREADS")) if backend == "cpu" else 1
    rows = []
    for r in data["schedule"]:
        rows.append(
            row(
                "schedule",
                backend,
                f"nodes={r['nodes']} n=4096 L=4",
                "eager",
                _ms(r["median_s"]),
                threads=threads,
                min_ms=_ms(r["min_s"]),
                first_ms=_ms(r["first_s"]),
                target_nodes=r["target_nodes"],
                nodes=r["nodes"],
                outputs=r["outputs"],
                kernels=r["kernels"],
                passes_ms={k: v * 1e3 for k, v in r["passes_median_s"].items()},
            )
        )
    for name, r in data["realize"].items():
        ring = r["ring"]
        rows.append(
            row(
                "realize",
                backend,
                f"{name} n={ring['n']} L={len(ring['moduli'])}",
                "eager",
                _ms(r["median_s"]),
                threads=threads,
                min_ms=_ms(r["min_s"]),
                first_ms=_ms(r["first_s"]),
                kernels=r["kernels"],
                phases_ms={k: v * 1e3 for k, v in r["phases_median_s"].items()},
            )
        )
    return rows


def memory_rows(data: Mapping[str, Any], env: Mapping[str, str]) -> list[Row]:
    """``memory.py``: one row per (program, device arena); the time is ``plan_memory``'s, the
    extras are the plan's bytes and ``arena_ratio`` (arena over the lower bound)."""
    rows = []
    for name, r in data["programs"].items():
        extra = {} if "check" not in r else {"check": "ok" if r["check"] else "DIFFERS"}
        for device, d in r["devices"].items():
            rows.append(
                row(
                    "memory.plan",
                    device,
                    name,
                    "eager",
                    _ms(r["plan_memory_median_s"]),
                    threads=1,
                    rings=r["rings"],
                    kernels=r["kernels"],
                    planned_buffers=d["planned_buffers"],
                    kept_buffers=r["kept_buffers"],
                    unshared_bytes=d["unshared_bytes"],
                    arena_bytes=d["arena_bytes"],
                    lower_bound_bytes=d["lower_bound_bytes"],
                    arena_ratio=d["ratio"],
                    **extra,
                )
            )
    return rows


def jit_rows(data: Mapping[str, Any], env: Mapping[str, str]) -> list[Row]:
    """``jit.py``: per (case, device) an ``eager`` row (build and realize) and a ``jit`` row
    (the replay), the replay's breakdown as extras."""
    threads = _threads(data["environment"]["threads"].get("REN_THREADS"))
    rows = []
    for r in data["rows"]:
        bench, params = f"jit.{r['case']}", f"{r['ring']} ops={r['ops']}"
        n_threads = threads if r["device"] == "cpu" else 1
        eager, replay = r["eager"], r["replay"]
        rows.append(
            row(
                bench,
                r["device"],
                params,
                "eager",
                _ms(eager["median_s"]),
                threads=n_threads,
                min_ms=_ms(eager["min_s"]),
                number=eager["number"],
                check=r["check"],
            )
        )
        rows.append(
            row(
                bench,
                r["device"],
                params,
                "jit",
                _ms(replay["median_s"]),
                threads=n_threads,
                min_ms=_ms(replay["min_s"]),
                number=replay["number"],
                check=r["check"],
                units=r["units"],
                runner=r["runner"],
                pruned=r["pruned"],
                capture_ms=_ms(r["capture_s"]),
                first_capture_ms=_ms(r["first_capture_s"]),
                replay_units_ms=_ms(r["replay_units"]["median_s"]),
                kernels_ms=_ms(r["kernels"]["median_s"]),
                graph_ms=None if r["graph"] is None else _ms(r["graph"]["median_s"]),
                speedup_over_eager=r["speedup"],
                overhead_us=r["overhead_us"],
            )
        )
    return rows


#: the extras of a ckks.py row that are kept (times_ms is left out; vs_seal becomes ratio).
CKKS_EXTRAS = ("min_ms", "first_ms", "number", "repeat", "check", "check_bits")
CKKS_EXTRAS += ("capture_ms", "units", "runner")


def ckks_rows(data: Mapping[str, Any], env: Mapping[str, str]) -> list[Row]:
    """``ckks.py``: its rows have the common shape already; ``params`` gains the ring degree."""
    threads = _threads(data["environment"]["threads"].get("REN_THREADS"))
    rows = []
    for r in data["results"]:
        n = data["params"][r["params"]]["n"]
        extra = {k: r[k] for k in CKKS_EXTRAS if k in r}
        rows.append(
            row(
                r["bench"],
                r["backend"],
                f"set {r['params']} n={n}",
                r["mode"],
                r["median_ms"],
                threads=threads if r["backend"] == "cpu" else 1,
                **extra,
            )
        )
    return rows


#: the extras of a bfv.py row that are kept: its peer fields (``peer``, ``peer_ms``, ``ratio``,
#: ``note``) are made again by ``add_peers``, and ``times_ms`` is left out.
BFV_EXTRAS = ("threads", "min_ms", "first_ms", "number", "repeat", "check")
BFV_EXTRAS += ("capture_ms", "units", "runner")


def bfv_rows(data: Mapping[str, Any], env: Mapping[str, str]) -> list[Row]:
    """``bfv.py``: BFV and BGV (multiply, rotate_rows) and SEAL's, in the common shape already;
    ``threads`` is the script's own (it runs Ren on one thread, as SEAL's evaluator). Its noise
    budget rows are not timings: ``run_bench`` keeps them under ``noise``."""
    del env
    keep = ("bench", "backend", "params", "mode", "median_ms")
    return [
        row(*(r[k] for k in keep), **{k: r[k] for k in BFV_EXTRAS if k in r})
        for r in data["results"]
    ]


def skipped_of(name: str, data: Mapping[str, Any], stderr: str) -> list[Row]:
    """What a script says it did not time: ``skipped`` in its JSON, an unavailable peer, a cuda
    runtime it could not start (``ntt.py`` prints ``cuda: not timed (...)``)."""
    out = [
        {"bench": name, "backend": backend, "reason": reason}
        for backend, reason in data.get("skipped", {}).items()
    ]
    peer = data.get("peer")
    if peer and not peer.get("available"):
        out.append({"bench": name, "backend": peer["name"], "reason": peer.get("reason", "")})
    for line in stderr.splitlines():
        if line.startswith("cuda: not timed (") and line.endswith(")"):
            out.append({"bench": name, "backend": "cuda", "reason": line[17:-1]})
    return out


def saved_rows(data: Mapping[str, Any], env: Mapping[str, str]) -> list[Row]:
    """``saved.py``: per program a ``capture`` row (a new process captures) and a ``load`` row (a
    new process loads the saved plan and runs it once), with the ratio on the ``load`` row."""
    del env
    ratios = {f"saved.{r['bench']}": r["capture_over_load"] for r in data["ratios"]}
    rows = []
    for r in data["results"]:
        extra = {"capture_over_load": ratios[r["bench"]]} if r["mode"] == "load" else {}
        rows.append(
            row(
                r["bench"],
                r["backend"],
                f"{r['units']} units",
                r["mode"],
                r["median_ms"],
                check=r["check"],
                **extra,
            )
        )
    return rows


def circuits_rows(data: Mapping[str, Any], env: Mapping[str, str]) -> list[Row]:
    """``circuits.py``: its rows as they are (rotations, sums, linear transforms at set a)."""
    del env
    keep = ("bench", "backend", "params", "mode", "median_ms")
    out = [
        row(*(r[k] for k in keep), **{k: v for k, v in r.items() if k not in keep})
        for r in data["results"]
    ]
    for r in data.get("openfhe", []):  # the peer, in the same run
        extra = {k: v for k, v in r.items() if k not in ("bench", "params", "median_ms", "ring")}
        out.append(row(f"circuits.{r['bench']}", "openfhe", "a", "eager", r["median_ms"], **extra))
    return out


def functions_rows(data: Mapping[str, Any], env: Mapping[str, str]) -> list[Row]:
    """``functions.py``: Ren's Chebyshev function rows, and OpenFHE's of the same run beside."""
    del env
    out = []
    for r in data["ren"]:
        extra = {k: v for k, v in r.items() if k not in ("bench", "backend", "mode", "median_ms")}
        out.append(
            row(r["bench"], r["backend"], "n=16384 depth 9", r["mode"], r["median_ms"], **extra)
        )
    for r in data["openfhe"]:
        extra = {k: v for k, v in r.items() if k not in ("bench", "median_ms", "ring")}
        out.append(row(r["bench"], "openfhe", "n=16384 depth 9", "eager", r["median_ms"], **extra))
    return out


def bootstrap_rows(data: Mapping[str, Any], env: Mapping[str, str]) -> list[Row]:
    """``bootstrap.py``: Ren's bootstrapping rows per preset (the keys, eager, jit), then
    OpenFHE's of the same run; ``variant`` names the preset, or the peer's secret distribution,
    level budget and levels left."""
    del env
    keep = ("bench", "backend", "params", "mode", "median_ms")
    drop = {*keep, "times_ms", "profile", "config"}
    out = []
    for r in data["results"]:
        extra = {k: v for k, v in r.items() if k not in drop}
        out.append(row(*(r[k] for k in keep), variant=r["preset"], **extra))
    for r in data.get("openfhe", []):
        budget = "x".join(map(str, r["level_budget"]))
        variant = f"{r['secret']} {budget}, {r['levels_after']} levels left"
        extra = {k: v for k, v in r.items() if k not in drop}
        out.append(row(*(r[k] for k in keep), variant=variant, **extra))
    return out


# --------------------------------------------------------------------------------------------
# the scripts


@dataclass(frozen=True)
class Bench:
    """One script: its output flag, its arguments in full and quick runs, its row converter."""

    script: str
    out_flag: str
    full: tuple[str, ...]
    quick: tuple[str, ...]
    convert: Callable[[Mapping[str, Any], Mapping[str, str]], list[Row]]
    needs_cc: bool = False


#: the scripts in the order they run; quick arguments: about 90 s in all on a 2-CPU machine
#: (ntt to ckks: 20 s, bfv: 3 s, circuits: 30 s).
BENCHES: dict[str, Bench] = {
    "ntt": Bench("ntt.py", "--out", (), ("--quick", "--repeat", "7"), ntt_rows, needs_cc=True),
    "schedule": Bench("schedule.py", "--out", (), ("--quick", "--repeat", "7"), schedule_rows),
    "memory": Bench("memory.py", "--out", (), ("--quick",), memory_rows),
    "jit": Bench("jit.py", "--out", (), ("--quick", "--repeat", "7"), jit_rows),
    "ckks": Bench(
        "ckks.py",
        "--json",
        (),
        ("--quick", "--repeat", "15", "--repeat-python", "3", "--trials", "2"),
        ckks_rows,
    ),
    "bfv": Bench("bfv.py", "--out", (), ("--quick",), bfv_rows),
    "saved": Bench(
        "saved.py", "--out", (), ("--quick", "--repeat", "1", "--steps", "40"), saved_rows
    ),
    "circuits": Bench("circuits.py", "--json", (), ("--quick",), circuits_rows),
    "functions": Bench("functions.py", "--json", (), ("--quick", "--repeat", "1"), functions_rows),
    "bootstrap": Bench("bootstrap.py", "--out", (), ("--quick", "--repeat", "1"), bootstrap_rows),
}


@dataclass
class Ran:
    """What one script run left: its JSON (``None`` when it wrote none), status and output."""

    name: str
    command: list[str]
    env: dict[str, str]
    data: dict[str, Any] | None
    returncode: int
    stdout: str
    stderr: str
    wall_s: float


def run_script(name: str, args: list[str], threads: int, tmp: Path, tag: str = "") -> Ran:
    """Run ``benchmarks/<script>`` with ``args`` and REN_THREADS=OMP_NUM_THREADS=``threads``."""
    bench = BENCHES[name]
    out = tmp / f"{name}{tag}.json"
    command = [sys.executable, str(HERE / bench.script), *args, bench.out_flag, str(out)]
    env = {**os.environ, "REN_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    wall_s = time.perf_counter() - start
    data = json.loads(out.read_text(encoding="utf-8")) if out.exists() else None
    shown = " ".join(["benchmarks/" + bench.script, *args])
    print(f"{name}{tag}: {wall_s:.1f} s, status {proc.returncode} ({shown})", file=sys.stderr)
    if proc.returncode != 0:
        print(proc.stdout[-2000:] + proc.stderr[-2000:], file=sys.stderr)
    return Ran(name, command, env, data, proc.returncode, proc.stdout, proc.stderr, wall_s)


def cc_missing() -> str | None:
    """Why ``ntt.py`` cannot compile its kernels here (it calls ``cc``), or ``None``."""
    import shutil

    return None if shutil.which("cc") else "no C compiler: `cc` is not on PATH"


# --------------------------------------------------------------------------------------------
# the peer's NTT: SEAL's, through seal-python


def seal_ntt(rings: list[tuple[int, int, int]], repeat: int) -> tuple[list[Row], list[Row]]:
    """Time SEAL's forward and inverse NTT on each ``(n, limbs, bits)`` ring; returns the rows
    and what was skipped. A row per direction: the time of one call on a ciphertext (two
    polynomials of ``limbs`` limbs) divided by two, each call timed alone while the ciphertext
    goes out of NTT form and back; checked by decrypting it afterwards."""
    try:
        import seal
    except ImportError as e:
        return [], [{"bench": "ntt", "backend": "seal", "reason": f"import seal: {e}"}]
    missing = [
        f"Evaluator.{m}"
        for m in ("transform_to_ntt_inplace", "transform_from_ntt_inplace")
        if not hasattr(seal.Evaluator, m)
    ]
    if missing:
        reason = f"seal-python {getattr(seal, '__version__', '?')} exposes no {', '.join(missing)}"
        return [], [{"bench": "ntt", "backend": "seal", "reason": reason}]
    rows, skipped = [], []
    for n, limbs, bits in rings:
        params = f"n={n} L={limbs} {bits}-bit"
        try:
            rows += _seal_ntt_ring(seal, n, limbs, bits, params, repeat)
        except Exception as e:  # SEAL refuses the parameters, or its bindings differ
            reason = f"{type(e).__name__}: {e}"
            skipped.append({"bench": "ntt", "backend": "seal", "params": params, "reason": reason})
    return rows, skipped


def _seal_ntt_ring(seal: Any, n: int, limbs: int, bits: int, params: str, repeat: int) -> list:
    parms = seal.EncryptionParameters(seal.scheme_type.ckks)
    parms.set_poly_modulus_degree(n)
    # with more than one prime SEAL keeps the last for key switching: one more, so the
    # ciphertext has `limbs` limbs. No security level: only the transform is timed.
    primes = [bits] * (limbs if limbs == 1 else limbs + 1)
    parms.set_coeff_modulus(seal.CoeffModulus.Create(n, primes))
    context = seal.SEALContext(parms, True, seal.sec_level_type.none)
    if not context.parameters_set():
        raise ValueError(f"SEAL rejects n={n}, {limbs} x {bits}-bit primes: "
                         f"{context.parameter_error_message()}")  # fmt: skip
    keys = seal.KeyGenerator(context)
    encoder, evaluator = seal.CKKSEncoder(context), seal.Evaluator(context)
    x = np.random.default_rng(n + limbs).uniform(-1.0, 1.0, n // 2) + 0j
    ct = seal.Encryptor(context, keys.create_public_key()).encrypt(
        encoder.encode_complex(x, 2.0**40)
    )
    if ct.coeff_modulus_size() != limbs:
        raise ValueError(f"the SEAL ciphertext has {ct.coeff_modulus_size()} limbs, not {limbs}")
    polys = ct.size()
    inverse, forward = evaluator.transform_from_ntt_inplace, evaluator.transform_to_ntt_inplace

    def rounds(number: int) -> tuple[float, float]:
        """``number`` round trips; the seconds spent in each direction."""
        spent_inv = spent_fwd = 0.0
        clock = time.perf_counter
        for _ in range(number):
            t0 = clock()
            inverse(ct)
            t1 = clock()
            forward(ct)
            t2 = clock()
            spent_inv += t1 - t0
            spent_fwd += t2 - t1
        return spent_fwd, spent_inv

    rounds(1)  # warm
    once = sum(rounds(1))
    number = max(1, int(RUN_SECONDS / max(once, 1e-9)))
    times: dict[str, list[float]] = {"forward": [], "inverse": []}
    for _ in range(repeat):
        gc.collect()
        fwd, inv = rounds(number)
        times["forward"].append(fwd / number / polys)
        times["inverse"].append(inv / number / polys)
    got = np.asarray(encoder.decode_complex(seal.Decryptor(context, keys.secret_key()).decrypt(ct)))
    error = float(np.max(np.abs(got - x)))
    check_bits = -math.log2(error) if error > 0 else math.inf
    check = "ok" if check_bits > PEER_MIN_BITS else "FAIL"
    return [
        row(
            f"ntt.{direction}",
            "seal",
            params,
            "eager",
            _ms(statistics.median(ts)) if check == "ok" else None,
            threads=1,
            min_ms=_ms(min(ts)) if check == "ok" else None,
            number=number,
            polys=polys,
            check=check,
            check_bits=check_bits,
            measured=True,
        )
        for direction, ts in times.items()
    ]


def seal_ntt_fallback(ntt: list[Row], reason: str) -> list[Row]:
    """The row that stands for SEAL's NTT when it cannot be timed here: ntt.py's goal figure."""
    f = SEAL_NTT_FALLBACK
    params = f"n={f['n']} L={f['limbs']} 60-bit"
    if not any(r["params"] == params and r["bench"] == f"ntt.{f['direction']}" for r in ntt):
        return []
    note = f"not measured in this run ({reason}): SEAL 4.4's figure from ntt.py's goal"
    return [row(f"ntt.{f['direction']}", "seal", params, "eager", f["median_ms"], threads=1,
                measured=False, note=note)]  # fmt: skip


#: the peer libraries looked for: (module, PyPI package)
PEER_PACKAGES = (("seal", "seal-python"), ("tenseal", "tenseal"))


def peer_info() -> dict[str, Any]:
    """Which peers import here, and their versions (``_machine.peer``)."""
    return {name: peer(name, package) for name, package in PEER_PACKAGES}


# --------------------------------------------------------------------------------------------
# combining rows


def add_peers(rows: list[Row]) -> None:
    """``peer``, ``peer_ms`` and ``ratio`` (Ren's median over the peer's) in each Ren row with a
    peer row of the same ``bench`` and ``params`` (a ``jit`` row is compared with the peer's
    eager figure: the peer computes at every call)."""
    theirs = {(r["bench"], r["params"]): r for r in rows if r["backend"] in PEERS}
    for r in rows:
        peer = theirs.get((r["bench"], r["params"]))
        if r["backend"] in PEERS or peer is None:
            continue
        r["peer"], r["peer_ms"] = peer["backend"], peer["median_ms"]
        ok = r["median_ms"] is not None and peer["median_ms"]
        r["ratio"] = r["median_ms"] / peer["median_ms"] if ok else None
        if not peer.get("measured", True):
            r["peer_measured"] = False


def add_speedups(base: list[Row], compared: list[Row], threads: int) -> None:
    """``threads_speedup`` in each row of ``compared``: the median of the same figure at
    ``threads`` (in ``base``) over its own."""
    key = lambda r: (r["bench"], r["backend"], r["params"], r["mode"])  # noqa: E731
    before = {key(r): r for r in base if r.get("threads") == threads}
    for r in compared:
        b = before.get(key(r))
        ok = b is not None and b["median_ms"] is not None and r["median_ms"]
        r["threads_base"] = threads
        r["threads_speedup"] = b["median_ms"] / r["median_ms"] if ok else None


def in_table_order(rows: list[Row]) -> list[Row]:
    """``rows`` grouped by ``(bench, params)`` in the order the groups first ran; in a group the
    peer first, then python, cpu, the rest, each eager before jit, fewer threads first."""
    first: dict[tuple[str, str], int] = {}
    for i, r in enumerate(rows):
        first.setdefault((r["bench"], r["params"]), i)
    backends = {b: i for i, b in enumerate((*PEERS, "python", "cpu"))}
    return sorted(
        rows,
        key=lambda r: (
            first[r["bench"], r["params"]],
            backends.get(r["backend"], len(backends)),
            r["mode"] != "eager",
            r.get("threads") or 0,
        ),
    )


# --------------------------------------------------------------------------------------------
# the report


def fmt_ms(value: float | None) -> str:
    if value is None:
        return "-"
    if value < 1:
        return f"{value:.4f}"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}" if value < 1000 else f"{value:.0f}"


def note(r: Row) -> str:
    """The few extras worth a glance, per kind of row."""
    parts = []
    if r["bench"].startswith("ckks.bootstrap") and "variant" in r:
        parts.append(r["variant"])
    if "butterflies_per_ns" in r:
        parts.append(f"{r['butterflies_per_ns']:.2f} bf/ns")
    if "arena_ratio" in r:
        parts.append(f"arena/lower {r['arena_ratio']:.2f}")
    if "kernels" in r:
        parts.append(f"{r['kernels']} kernels")
    if "speedup_over_eager" in r:
        parts.append(f"{r['speedup_over_eager']:.1f}x eager, {r['units']} units, {r['runner']}")
    elif "units" in r:
        parts.append(f"{r['units']} units, {r['runner']}")
    if "check_bits" in r:
        parts.append(f"{r['check_bits']:.1f} bits")
    if r.get("threads_speedup") is not None:
        parts.append(f"{r['threads_speedup']:.2f}x over {r['threads_base']} thread(s)")
    if r.get("peer_measured") is False:
        parts.append("peer: goal figure, not measured here")
    if r.get("measured") is False:
        parts.append("goal figure, not measured in this run")
    check = r.get("check")
    if check not in (None, "ok", "reference"):
        parts.append(check)
    return ", ".join(parts)


def markdown(results: Mapping[str, Any]) -> str:
    m, run = results["machine"], results["run"]
    lines = ["# Ren benchmarks", ""]
    lines.append(
        f"{'quick' if run['quick'] else 'full'} run of {', '.join(run['only'])}; "
        f"REN_THREADS={run['threads']}; {run['wall_s']:.0f} s; python {m['python']}, numpy "
        f"{m['numpy']}, {m['cpu_count']} CPUs, {m['platform']}; commit "
        f"{(m['git_commit'] or '?')[:10]}{' (dirty)' if m['git_dirty'] else ''}"
    )
    peers = [f"{k} {v['version']}" for k, v in results["peers"].items() if v["available"]]
    lines.append(f"peers: {', '.join(peers) or 'none'}; Ren/SEAL is Ren's median over SEAL's")
    lines.append("")
    lines.append(
        "| bench | params | backend | mode | threads | median ms | min ms | Ren/SEAL | notes |"
    )
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for r in results["results"]:
        ratio = r.get("ratio")
        cells = (
            r["bench"],
            r["params"],
            r["backend"],
            r["mode"],
            "-" if r.get("threads") is None else str(r["threads"]),
            fmt_ms(r["median_ms"]),
            fmt_ms(r.get("min_ms")),
            "-" if ratio is None else f"{ratio:.2f}x",
            note(r),
        )
        lines.append("| " + " | ".join(cells) + " |")
    compared = [r for r in results["results"] if "threads_speedup" in r]
    if compared:
        lines += ["", f"Threads: REN_THREADS={run['threads_compare']} over {run['threads']}", ""]
        lines.append(
            f"| bench | params | backend | mode | {run['threads']} thread(s) ms "
            f"| {run['threads_compare']} threads ms | speed-up |"
        )
        lines.append("|---|---|---|---|---|---|---|")
        key = lambda r: (r["bench"], r["backend"], r["params"], r["mode"])  # noqa: E731
        base = {key(r): r for r in results["results"] if r.get("threads") == run["threads"]}
        for r in compared:
            b = base.get(key(r))
            s = r["threads_speedup"]
            lines.append(
                f"| {r['bench']} | {r['params']} | {r['backend']} | {r['mode']} "
                f"| {fmt_ms(b['median_ms'] if b else None)} | {fmt_ms(r['median_ms'])} "
                f"| {'-' if s is None else f'{s:.2f}x'} |"
            )
    noise = results.get("noise") or []
    if noise:
        title = "Noise budget, bits (Ren: ctx.noise_budget; SEAL: invariant_noise_budget):"
        lines += ["", title, ""]
        lines.append("| bench | params | stage | backend | bits | SEAL bits | check |")
        lines.append("|---|---|---|---|---|---|---|")
        for r in [r for r in noise if r["backend"] != "seal"] or noise:  # SEAL's: beside Ren's
            peer_bits = r.get("peer_bits")
            lines.append(
                f"| {r['bench']} | {r['params']} | {r['stage']} | {r['backend']} | {r['bits']} "
                f"| {'-' if peer_bits is None else peer_bits} | {r['check']} |"
            )
    if results["skipped"]:
        lines += ["", "Skipped:", ""]
        for s in results["skipped"]:
            where = " ".join(x for x in (s["bench"], s["backend"], s.get("params", "")) if x)
            lines.append(f"- {where}: {s['reason']}")
    if results["failed"]:
        lines += ["", "Failed:", ""]
        for f in results["failed"]:
            lines.append(f"- {f['bench']}: status {f['returncode']}")
    return "\n".join(lines) + "\n"


def ratio_lines(rows: list[Row]) -> list[str]:
    out = []
    for r in rows:
        if r.get("ratio") is None:
            continue
        measured = "" if r.get("peer_measured", True) else " (SEAL: goal figure, not measured)"
        out.append(
            f"{r['bench']} {r['params']} {r['backend']} {r['mode']} threads={r['threads']}: "
            f"Ren/{r['peer'].upper()} {r['ratio']:.2f}x ({fmt_ms(r['median_ms'])} ms vs "
            f"{fmt_ms(r['peer_ms'])} ms){measured}"
        )
    return out


# --------------------------------------------------------------------------------------------
# main


def _only(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in names if t not in BENCHES]
    if bad or not names:
        raise argparse.ArgumentTypeError(
            f"--only takes a comma-separated list of {', '.join(BENCHES)}; got {text!r}"
        )
    return [name for name in BENCHES if name in names]  # in the run's order


@dataclass
class Collected:
    """Everything a run gathers, in the order the scripts ran."""

    rows: list[Row] = field(default_factory=list)
    skipped: list[Row] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)
    scripts: list[dict[str, Any]] = field(default_factory=list)
    precision: list[Row] = field(default_factory=list)
    noise: list[Row] = field(default_factory=list)

    def take(self, ran: Ran, again: bool = False) -> list[Row]:
        """Record a script run (a failure; what it skipped, unless it ran ``again`` at another
        thread count) and return its rows."""
        command = " ".join(ran.command[1:])
        self.scripts.append(
            {"bench": ran.name, "command": command, "threads": int(ran.env["REN_THREADS"]),
             "returncode": ran.returncode, "wall_s": ran.wall_s}
        )  # fmt: skip
        if ran.returncode != 0 or ran.data is None:
            tail = (ran.stdout + ran.stderr).strip().splitlines()[-5:]
            self.failed.append({"bench": ran.name, "returncode": ran.returncode, "tail": tail})
        if ran.data is None:
            return []
        if not again:
            self.skipped += skipped_of(ran.name, ran.data, ran.stderr)
        return BENCHES[ran.name].convert(ran.data, ran.env)


def run_bench(name: str, args: argparse.Namespace, peers: dict, tmp: Path, got: Collected) -> None:
    """Run one benchmark (and its peer, and its second thread count) into ``got``."""
    bench = BENCHES[name]
    if bench.needs_cc and (reason := cc_missing()):
        got.skipped.append({"bench": name, "backend": "cpu", "reason": reason})
        return
    argv = list(bench.quick if args.quick else bench.full)
    ran = run_script(name, [*argv, *ckks_threads(name, args.threads)], args.threads, tmp)
    rows = got.take(ran)
    if ran.data is None:
        return
    if name == "ntt":
        rings = sorted({(r["n"], r["limbs"], r["bits"]) for r in ran.data["rows"]})
        peer_rows, peer_skipped = seal_ntt(rings, ran.data["repeat"])
        got.skipped += peer_skipped
        if not peer_rows:
            reason = peer_skipped[0]["reason"] if peer_skipped else "no SEAL figure"
            peer_rows = seal_ntt_fallback(rows, reason)
        rows += peer_rows
    if name == "ckks":
        got.precision += ran.data.get("precision", [])
        tenseal = peers["tenseal"]
        why = tenseal.get("reason") or "importable, but only SEAL's own bindings are timed"
        got.skipped.append({"bench": name, "backend": "tenseal", "reason": why})
    if name == "bfv":
        got.noise += ran.data.get("noise", [])
    got.rows += rows

    compare = args.threads_compare
    if compare is None or name not in ("ntt", "ckks"):
        return
    if name == "ckks":
        argv += ["--backends", "cpu", "--no-peer"]
    again = run_script(name, [*argv, *ckks_threads(name, compare)], compare, tmp, f"-{compare}t")
    more = [r for r in got.take(again, True) if r["backend"] == "cpu" and r["threads"] == compare]
    add_speedups(rows, more, args.threads)
    got.rows += more


def ckks_threads(name: str, threads: int) -> list[str]:
    """``ckks.py`` sets REN_THREADS itself, from ``--threads``."""
    return ["--threads", str(threads)] if name == "ckks" else []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/run.py", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the JSON (and .md) to write")
    parser.add_argument("--quick", action="store_true", help="quick modes, few repeats (~90 s)")
    parser.add_argument("--only", type=_only, default=list(BENCHES), help="e.g. ntt,ckks")
    parser.add_argument("--threads", type=int, default=1, help="REN_THREADS for Ren (default 1)")
    parser.add_argument(
        "--threads-compare",
        type=int,
        nargs="?",
        const=2,
        default=None,
        metavar="M",
        help="also time the cpu NTT and CKKS with REN_THREADS=M (default 2); report the speed-up",
    )
    args = parser.parse_args(argv)
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    if args.threads_compare is not None and args.threads_compare in (0, args.threads):
        parser.error("--threads-compare must differ from --threads and be at least 1")

    start = time.perf_counter()
    peers = peer_info()
    got = Collected()
    with tempfile.TemporaryDirectory(prefix="ren-bench-run-") as tmp:
        for name in args.only:
            run_bench(name, args, peers, Path(tmp), got)
    add_peers(got.rows)
    got.rows = in_table_order(got.rows)
    wall_s = time.perf_counter() - start

    results = {
        "machine": machine(),
        "run": {
            "quick": args.quick,
            "only": args.only,
            "threads": args.threads,
            "threads_compare": args.threads_compare,
            "wall_s": wall_s,
            "scripts": got.scripts,
        },
        "peers": peers,
        "skipped": got.skipped,
        "failed": got.failed,
        "results": got.rows,
        "precision": got.precision,
        "noise": got.noise,
    }
    text = markdown(results)
    print(text)
    write_results(results, args.out)
    md = args.out.with_suffix(".md")
    md.write_text(text, encoding="utf-8")
    print(f"wrote {md}")
    lines = ratio_lines(got.rows)
    if lines:
        print("Ren/SEAL, median over median (below 1: Ren is faster):")
        print("\n".join(lines))
    print(f"{len(got.rows)} rows in {wall_s:.1f} s")
    return 1 if got.failed else 0


if __name__ == "__main__":
    sys.exit(main())
