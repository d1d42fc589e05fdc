"""Benchmark: CKKS circuits (``ren.circuits.ckks``): hoisted rotations, sums, linear transforms.

Run from the repository root::

    .venv/bin/python benchmarks/circuits.py --quick       # a small insecure set, under a minute
    .venv/bin/python benchmarks/circuits.py --json benchmarks/figures/circuits.json

Parameter sets (``ckks.Params``): ``a``, ``n=8192``, ``q_bits=(60, 40, 40)``, ``p_bits=(60,)``,
scale ``2^40`` (4096 slots); ``--quick`` runs ``q`` instead, ``n=1024`` with the same moduli and
``insecure=True`` (a check of the script, not a figure to quote). Ren runs on the ``cpu`` device
(``--device``; the python device when no C compiler is found) on one thread (``REN_THREADS=1``,
``--threads``), with ``REN_CHECK`` and the other debug switches off.

What is timed, each on one ciphertext at the top level (level 2), every key made beforehand:

* ``circuits.rotate_many``, for 1, 4, 16 and 64 rotations (by 1 .. r): ``hoisted`` is
  ``rotate_many(ct, steps)`` realized together (one ModUp); ``separate`` realizes each rotation
  alone (a ModUp each). Mode ``eager`` builds the graph and realizes it at every call; ``jit``
  replays a ``ren.jit`` plan captured once on another ciphertext (for ``separate``, a plan that
  records the r realizations one after the other);
* ``circuits.sum_slots`` for radix 2, 4 and 8, and ``circuits.inner_product``;
* ``circuits.linear_transform``: a dense matrix (4096 x 4096 at set ``a``: 4096 diagonals) and a
  sparse one (8 diagonals, offsets -4 .. 3) for a few ``bsgs_ratio`` values; the time to build the
  diagonals and encode them (``build_ms``, ``encode_ms``, measured once, outside the apply time)
  and to apply the transform (eager and jit).

Each row has the kernels one call runs, by kind (counted on an eager call), the rotation keys it
needs (``keys``), and ``check_bits``: ``ckks.precision_bits`` of the last timed result against
NumPy (``np.roll``, ``np.sum``, ``M @ v``), which must be above ``MIN_BITS`` (``check``: ``ok`` or
``FAIL``; a failed row reports no time and the script exits with status 1); an eager row has
``predicted_bits`` beside it, ``ckks.predicted_precision`` of the same result (the noise model's
figure, made before anything ran; for rotations the least of theirs). A figure is the median
and the minimum over ``--repeat`` runs of ``benchmarks/_machine.time_calls`` (default 9; the dense
transform: 3).

OpenFHE (``openfhe_peer.py``, in its Python 3.10 environment; skipped with the reason when absent
or with ``--quick``) runs its hoisted and separate rotations, linear transforms and sums at set a
after Ren's figures, in the same run: its rows are under ``"openfhe"``.

Output: a table on stdout and JSON (``--json``, default ``benchmarks/results/circuits.json``):
``results``, rows ``{"bench", "backend", "params", "mode", "median_ms", ...}`` in the shape of
``benchmarks/run.py``; ``rows(quick)`` returns them for a caller that adds its own.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _machine import cpu_missing, machine, switch_off, time_calls, write_results

SWITCHED_OFF = switch_off()

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "circuits.json"
SETS: dict[str, dict[str, Any]] = {
    "a": {"n": 8192, "q_bits": (60, 40, 40), "p_bits": (60,), "scale_bits": 40},
    "q": {"n": 1024, "q_bits": (60, 40, 40), "p_bits": (60,), "scale_bits": 40, "insecure": True},
}
COUNTS, QUICK_COUNTS = (1, 4, 16, 64), (1, 4, 16)
RADICES = (2, 4, 8)
SPARSE_OFFSETS = (-4, -3, -2, -1, 0, 1, 2, 3)
SPARSE_RATIOS = (2, 4)
DENSE_RATIOS = (0.5, 2)
DENSE_SIZE = {"a": 4096, "q": 128}
#: a checked result must be right to more bits than this: a misuse (a wrong key, a rotation the
#: wrong way) gives about 0, and a sum over 4096 slots keeps about 20 of the ~26 of a fresh value.
MIN_BITS = 15.0

ren: Any = None
ckks: Any = None
circuits: Any = None  # ren.circuits.ckks.rotations and .linear, as one namespace


def _import_ren(threads: int | None) -> None:
    global ren, ckks, circuits
    os.environ["REN_THREADS"] = str(threads) if threads is not None else "1"
    import ren as _ren
    from ren.circuits.ckks import linear, rotations
    from ren.schemes import ckks as _ckks

    ren, ckks = _ren, _ckks
    circuits = argparse.Namespace(**vars(rotations), LinearTransform=linear.LinearTransform)


KINDS = ("intt", "ntt", "base_convert", "rescale", "elementwise")


class Kernels:
    """Counts the kernels of the realizations in an ``observing`` block, by kind."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()

    def on_unit(self, unit: Any, seconds: float) -> None:
        self.kinds[unit.kernel.info.kind] += 1


def count_kernels(call: Callable[[], Any]) -> dict[str, int]:
    from ren.engine.observe import observing

    with observing(Kernels()) as kernels:
        call()
    kinds = kernels.kinds
    return {"kernels": sum(kinds.values()), **{k: kinds.get(k, 0) for k in KINDS}}


def _realize(cts: list[Any]) -> list[Any]:
    ren.realize(*[p for c in cts for p in c.parts])
    return cts


def _separately(ct: Any, steps: list[int]) -> list[Any]:
    return [ct.rotate(k).realize() for k in steps]  # a ModUp each: nothing shared across them


def _row(bench: str, backend: str, params: str, mode: str, stats: dict | None, bits: float,
         **extra: Any) -> dict[str, Any]:  # fmt: skip
    ok = bits > MIN_BITS

    def ms(key: str) -> float | None:
        return stats[key] * 1e3 if ok and stats else None

    return {
        "bench": bench,
        "backend": backend,
        "params": params,
        "mode": mode,
        "median_ms": ms("median_s"),
        "min_ms": ms("min_s"),
        "number": stats["number"] if stats else None,
        "repeat": len(stats["times_s"]) if stats else None,
        "threads": int(os.environ["REN_THREADS"]) if backend == "cpu" else 1,
        "check": "ok" if ok else "FAIL",
        "check_bits": bits,
        **extra,
    }


def _predicted(out: Any) -> dict[str, float]:
    """``predicted_bits``: the noise model's figure for ``out`` (a list: the least of theirs)."""
    values = out if isinstance(out, list) else [out]
    return {"predicted_bits": min(ckks.predicted_precision(c) for c in values)}


def _timed(call: Callable[[], Any], repeat: int) -> tuple[dict[str, Any], Any]:
    last: list[Any] = [None]

    def run() -> None:
        last[0] = call()

    return time_calls(run, repeat), last[0]


def _jit_pair(fn: Callable[[Any], Any], ct: Any, other: Any, repeat: int) -> tuple[dict, Any, Any]:
    """``fn`` under ``ren.jit``: captured on ``other``, timed replaying on ``ct``."""
    jitted = ren.jit(fn)
    start = time.perf_counter()
    jitted(other)
    capture_ms = (time.perf_counter() - start) * 1e3
    stats, out = _timed(lambda: jitted(ct), repeat)
    extra = {"capture_ms": capture_ms, "units": len(jitted.last.units)}
    extra["runner"] = jitted.last.runner_kind
    return stats, out, extra


def rotation_rows(name: str, device: str, counts: tuple[int, ...], repeat: int) -> list[dict]:
    params = ckks.Params(**SETS[name])
    x, y = _values(params.slots, 2)
    rows = []
    with ckks.Context(params, seed=1, device=device) as ctx:
        for k in range(1, max(counts) + 1):
            ctx.rotation_key(k)  # outside every timing
        ct, other = ckks.encrypt(x).realize(), ckks.encrypt(y).realize()
        for r in counts:
            steps = list(range(1, r + 1))
            variants = {
                "hoisted": lambda c, s=steps: _realize(circuits.rotate_many(c, s)),
                "separate": lambda c, s=steps: _separately(c, s),
            }
            for variant, fn in variants.items():
                kinds = count_kernels(lambda fn=fn: fn(ct))
                common = {"variant": variant, "rotations": r, "keys": r, **kinds}
                stats, out = _timed(lambda fn=fn: fn(ct), repeat)
                bits = _bits_rotations(out, x, steps)
                rows.append(
                    _row(
                        "circuits.rotate_many", device, name, "eager", stats, bits, **common,
                        **_predicted(out),
                    )
                )  # fmt: skip
                stats, out, extra = _jit_pair(fn, ct, other, repeat)
                bits = _bits_rotations(out, x, steps)
                rows.append(
                    _row(
                        "circuits.rotate_many", device, name, "jit", stats, bits, **common, **extra
                    )
                )
    return rows


def _bits_rotations(out: list[Any], x: np.ndarray, steps: list[int]) -> float:
    return min(
        ckks.precision_bits(ckks.decrypt(c), np.roll(x, -k))
        for c, k in zip(out, steps, strict=True)
    )


def sum_rows(name: str, device: str, repeat: int) -> list[dict]:
    params = ckks.Params(**SETS[name])
    x, y, w = _values(params.slots, 3)
    rows = []
    with ckks.Context(params, seed=1, device=device) as ctx:
        for radix in RADICES:
            for k in circuits.sum_slots_rotations(params, radix):
                ctx.rotation_key(k)
        ct, other = ckks.encrypt(x).realize(), ckks.encrypt(y).realize()
        cases = {
            f"sum_slots radix={radix}": (
                lambda c, r=radix: circuits.sum_slots(c, radix=r).realize(),
                np.sum(x),
                len(circuits.sum_slots_rotations(params, radix)),
            )
            for radix in RADICES
        }
        cases["inner_product"] = (
            lambda c: circuits.inner_product(c, w).realize(),
            np.dot(w, x),
            len(circuits.sum_slots_rotations(params)),
        )
        for variant, (fn, want, keys) in cases.items():
            bench = "circuits.inner_product" if variant == "inner_product" else "circuits.sum_slots"
            common = {"variant": variant, "keys": keys, **count_kernels(lambda fn=fn: fn(ct))}
            stats, out = _timed(lambda fn=fn: fn(ct), repeat)
            bits = ckks.precision_bits(ckks.decrypt(out), np.full(params.slots, want))
            rows.append(
                _row(bench, device, name, "eager", stats, bits, **common, **_predicted(out))
            )
            stats, out, extra = _jit_pair(fn, ct, other, repeat)
            bits = ckks.precision_bits(ckks.decrypt(out), np.full(params.slots, want))
            rows.append(_row(bench, device, name, "jit", stats, bits, **common, **extra))
    return rows


def transform_rows(name: str, device: str, repeat: int, dense_repeat: int) -> list[dict]:
    params = ckks.Params(**SETS[name])
    slots = params.slots
    x, y = _values(params.slots, 2)
    rng = np.random.default_rng(3)
    d = DENSE_SIZE[name]
    dense = rng.uniform(-1, 1, (d, d))
    sparse = {k: rng.uniform(-1, 1, slots) for k in SPARSE_OFFSETS}
    cases: list[tuple[str, dict[str, Any], np.ndarray, int]] = []
    for ratio in DENSE_RATIOS:
        want = _padded(dense @ x[:d], slots)
        kwargs = {"matrix": dense, "bsgs_ratio": ratio}
        cases.append((f"dense {d}x{d}, ratio {ratio:g}", kwargs, want, dense_repeat))
    for ratio in SPARSE_RATIOS:
        want = sum(diag * np.roll(x, -k) for k, diag in sparse.items())
        kwargs = {"diagonals": sparse, "bsgs_ratio": ratio}
        cases.append((f"sparse 8 diagonals, ratio {ratio:g}", kwargs, want, repeat))
    rows = []
    with ckks.Context(params, seed=1, device=device) as ctx:
        ct, other = ckks.encrypt(x).realize(), ckks.encrypt(y).realize()
        for variant, kwargs, want, reps in cases:
            builds, encodes = [], []
            for _ in range(1 if variant.startswith("dense") else 3):  # each on a fresh transform
                start = time.perf_counter()
                lt = circuits.LinearTransform(**kwargs, slots=slots)
                builds.append(time.perf_counter() - start)
                for k in lt.rotations():
                    ctx.rotation_key(k)
                start = time.perf_counter()
                lt.encode(ct.level, ctx)
                encodes.append(time.perf_counter() - start)
            build_ms, encode_ms = statistics.median(builds) * 1e3, statistics.median(encodes) * 1e3
            common = {
                "variant": variant,
                "size": d if variant.startswith("dense") else slots,
                "diagonals": len(lt.diagonals),
                "bsgs_ratio": lt.bsgs_ratio,
                "n1": lt.n1,
                "baby_steps": len(set(lt.baby_steps) - {0}),
                "giant_steps": len(set(lt.giant_steps) - {0}),
                "keys": len(lt.rotations()),
                "build_ms": build_ms,
                "encode_ms": encode_ms,
                **count_kernels(lambda lt=lt: lt(ct).realize()),
            }
            fn = lambda c, lt=lt: lt(c).realize()  # noqa: E731
            stats, out = _timed(lambda fn=fn: fn(ct), reps)
            bits = ckks.precision_bits(ckks.decrypt(out), want)
            rows.append(
                _row(
                    "circuits.linear_transform",
                    device,
                    name,
                    "eager",
                    stats,
                    bits,
                    **common,
                    **_predicted(out),
                )
            )
            stats, out, extra = _jit_pair(fn, ct, other, reps)
            bits = ckks.precision_bits(ckks.decrypt(out), want)
            rows.append(
                _row(
                    "circuits.linear_transform", device, name, "jit", stats, bits, **common, **extra
                )
            )
            del lt  # the dense plaintexts (about 0.8 GB at set a) go before the next case
    return rows


def _padded(v: np.ndarray, slots: int) -> np.ndarray:
    return np.concatenate([v, np.zeros(slots - len(v))])


def _values(slots: int, count: int) -> list[np.ndarray]:
    """``count`` real vectors uniform in ``[-1, 1]`` (seed 7)."""
    rng = np.random.default_rng(7)
    return [rng.uniform(-1, 1, slots) for _ in range(count)]


def rows(quick: bool, device: str = "cpu", repeat: int | None = None) -> list[dict[str, Any]]:
    """Every figure as rows of ``benchmarks/run.py``'s shape (``--quick``: set ``q``, few runs)."""
    if ren is None:
        _import_ren(None)
    if device == "cpu" and cpu_missing():
        device = "python"
    name = "q" if quick else "a"
    repeat = repeat if repeat is not None else 3 if quick else 9
    dense_repeat = min(repeat, 3)
    out = rotation_rows(name, device, QUICK_COUNTS if quick else COUNTS, repeat)
    out += sum_rows(name, device, repeat)
    out += transform_rows(name, device, repeat, dense_repeat)
    return out


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def _bits(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def print_table(results: list[dict[str, Any]]) -> None:
    head = (
        "| bench | variant | r | mode | median ms | min ms | kernels | intt | keys | abs bits | "
        "predicted |"
    )
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in results:
        print(
            f"| {r['bench'][9:]} | {r['variant']} | {r.get('rotations', r.get('n1', '-'))} | "
            f"{r['mode']} | {_ms(r['median_ms'])} | {_ms(r['min_ms'])} | {r['kernels']} | "
            f"{r['intt']} | {r['keys']} | {r['check_bits']:.1f} | "
            f"{_bits(r.get('predicted_bits'))} |"
        )
    for r in results:
        if "encode_ms" in r and r["mode"] == "eager":
            print(
                f"{r['variant']}: {r['diagonals']} diagonals, "
                f"n1={r['n1']} ({r['baby_steps']} baby + {r['giant_steps']} giant steps), "
                f"{r['keys']} keys; build {_ms(r['build_ms'])} ms, encode {_ms(r['encode_ms'])} ms"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks/circuits.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--json", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    parser.add_argument("--quick", action="store_true", help="the small insecure set q, few runs")
    parser.add_argument("--repeat", type=int, default=None, help="timed runs per figure (9)")
    parser.add_argument("--threads", type=int, default=None, help="REN_THREADS (default 1)")
    parser.add_argument("--device", default="cpu", help="cpu (default) or python")
    args = parser.parse_args(argv)
    if args.repeat is not None and args.repeat < 1:
        parser.error("--repeat must be at least 1")
    _import_ren(args.threads)
    skipped = {}
    device = args.device
    if device == "cpu" and (reason := cpu_missing()):
        skipped["cpu"] = reason
        device = "python"
    start = time.perf_counter()
    results = rows(args.quick, device, args.repeat)
    name = "q" if args.quick else "a"
    print_table(results)
    params = {k: list(v) if isinstance(v, tuple) else v for k, v in SETS[name].items()}
    env = {"off_while_timing": list(SWITCHED_OFF), "given": SWITCHED_OFF}
    env["threads"] = {v: os.environ.get(v) for v in ("REN_THREADS", "OMP_NUM_THREADS")}
    data = {"benchmark": "circuits", "quick": args.quick, "params": {name: params}}
    data |= {"device": device, "skipped": skipped, "min_bits": MIN_BITS, "environment": env}
    data |= {"machine": machine(), "wall_s": time.perf_counter() - start, "results": results}
    peer_rows, why = _openfhe(args.quick)
    data |= {"openfhe": peer_rows}
    if why:
        data["skipped"]["openfhe"] = why
    write_results(data, args.json)
    failed = [r for r in results if r["check"] != "ok"]
    for r in failed:
        print(f"FAIL {r['bench']} {r['variant']} {r['mode']}: {r['check_bits']:.1f} bits")
    return 1 if failed else 0


def _openfhe(quick: bool) -> tuple[list[dict[str, Any]], str | None]:
    """OpenFHE's rotations, linear transforms and sums at set a, in this run (``openfhe_peer``).

    Returns its rows (printed too), or none and the reason (``--quick``, or no environment).
    """
    if quick:
        return [], "--quick: no peer"
    import openfhe_peer  # beside this script

    why = openfhe_peer.skip_reason()
    if why is not None:
        return [], why
    config = {k: v for k, v in openfhe_peer.CONFIG.items() if k != "groups"}
    config["groups"] = {k: v for k, v in openfhe_peer.CONFIG["groups"].items() if k != "chebyshev"}
    out = openfhe_peer.run(config)
    for r in out.get("rows", []):
        extra = {k: r[k] for k in ("variant", "count", "keys", "bits", "route") if k in r}
        print(f"openfhe {r['bench']:<28} {r['median_ms']:10.2f} ms {extra}")
    return out.get("rows", []), None


if __name__ == "__main__":
    sys.exit(main())
