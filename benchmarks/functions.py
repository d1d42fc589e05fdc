"""Benchmark: Chebyshev function evaluation, Ren beside OpenFHE's ``EvalChebyshevFunction``.

Run from the repository root::

    .venv/bin/python benchmarks/functions.py [--quick] [--json OUT.json]

Both evaluate the same functions at the same degrees on the same ring, in one run, one thread
each: ``n=16384``, ``q_bits=(60,) + (40,) * 9`` (depth 9) and two 60-bit special moduli (OpenFHE
chooses its special moduli itself and picks two here; Ren is given the same), scale ``2^40``,
below the 128-bit bound's ring size for that modulus (insecure, like OpenFHE's ``HEStd_NotSet``):
sigmoid on ``[-8, 8]``, exp on ``[-1, 1]``, ``1/x`` on ``[1, 16]`` and sqrt on ``[0.01, 1]``, at
degrees 59 and 119 (``--quick``: a check of the script in seconds: degree 59 of sigmoid and exp
at ``n=1024``, no peer).

Ren: ``functions.evaluate_function`` (fit and ``evaluate_polynomial``), jitted on ``cpu``
(``REN_THREADS=1``), the median of ``--repeat`` replays (default 3) after the capture; the
precision is ``-log2`` of the largest error against NumPy over the slots, evenly spaced over the
interval. OpenFHE: ``benchmarks/openfhe_peer.py`` (a Python 3.10 environment of its own; skipped
with the reason when absent), both of its scaling techniques: ``FIXEDMANUAL`` (a fixed scale) and
``FLEXIBLEAUTO`` (exact scales, as Ren keeps them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

os.environ["REN_THREADS"] = "1"

import numpy as np

from ren.circuits.ckks import functions
from ren.schemes import ckks

sys.path.insert(0, str(Path(__file__).resolve().parent))
import openfhe_peer
from _machine import jit_replays, machine

PARAMS = {"n": 16384, "q_bits": (60,) + (40,) * 9, "p_bits": (60, 60), "scale_bits": 40}
FUNCTIONS = {  # name: (f, interval)
    "sigmoid": (lambda v: 1 / (1 + np.exp(-v)), (-8.0, 8.0)),
    "exp": (np.exp, (-1.0, 1.0)),
    "inverse": (lambda v: 1 / v, (1.0, 16.0)),
    "sqrt": (np.sqrt, (0.01, 1.0)),
}


def ren_rows(names: list[str], degrees: list[int], repeat: int, n: int) -> list[dict]:
    params = ckks.Params(**{**PARAMS, "n": n}, insecure=True)
    rows = []
    with ckks.Context(params, seed=1, device="cpu"):
        for name in names:
            f, interval = FUNCTIONS[name]
            x = np.linspace(*interval, params.slots)
            ct = ckks.encrypt(x).realize()
            other = ckks.encrypt(x[::-1]).realize()
            for degree in degrees:
                capture, times, out, _ = jit_replays(
                    lambda c, f=f, i=interval, d=degree: functions.evaluate_function(c, f, i, d),
                    ct,
                    other,  # the capture, on other values
                    repeat,
                )
                bits = ckks.precision_bits(ckks.decrypt(out).real, f(x))
                rows.append(
                    {
                        "bench": f"chebyshev.{name}",
                        "backend": "cpu",
                        "mode": "jit",
                        "degree": degree,
                        "median_ms": statistics.median(times) * 1e3,
                        "capture_ms": capture * 1e3,
                        "bits": bits,
                        "levels": ct.level - out.level,
                    }
                )
                print(
                    f"ren     {name:<8} degree {degree:4d} {rows[-1]['median_ms']:9.1f} ms "
                    f"{bits:6.1f} bits (absolute, vs NumPy) {rows[-1]['levels']} levels",
                    flush=True,
                )
    return rows


def peer_rows(names: list[str], degrees: list[int], repeat: int) -> tuple[list[dict], str | None]:
    why = openfhe_peer.skip_reason()
    if why is not None:
        return [], why
    config = {
        "n": PARAMS["n"],
        "q_bits": list(PARAMS["q_bits"]),
        "p_bits": list(PARAMS["p_bits"]),
        "scale_bits": 40,
        "repeats": repeat,
        "seed": 1,
        "groups": {
            "chebyshev": {
                "n": PARAMS["n"],
                "scale_bits": 40,
                "first_mod_bits": 60,
                "depth": 9,
                "degrees": degrees,
                "points": 8192,
                "functions": names,
                "scaling": ["FIXEDMANUAL", "FLEXIBLEAUTO"],
            }
        },
    }
    out = openfhe_peer.run(config)
    rows = out.get("rows", [])
    for r in rows:
        print(f"openfhe {json.dumps({k: r[k] for k in r if k != 'ring'})}", flush=True)
    return rows, None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/functions.py")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    names = ["sigmoid", "exp"] if args.quick else list(FUNCTIONS)
    degrees = [59] if args.quick else [59, 119]
    rows = ren_rows(names, degrees, args.repeat, 1024 if args.quick else PARAMS["n"])
    peers, skipped = (
        ([], "--quick: no peer") if args.quick else peer_rows(names, degrees, args.repeat)
    )
    result = {
        "machine": machine(),
        "params": PARAMS,
        "ren": rows,
        "openfhe": peers,
        "skipped": {} if skipped is None else {"openfhe": skipped},
    }
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
