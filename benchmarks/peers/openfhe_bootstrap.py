"""OpenFHE's CKKS bootstrapping as a peer for Ren's (``benchmarks/bootstrap.py``), one thread.

Runs under the Python 3.10 environment where OpenFHE's wheel imports (set-up in
``benchmarks/peers/README.md``); it imports only ``openfhe``, NumPy and the standard library.
``benchmarks/bootstrap.py`` runs it once per case, so each case's peak memory is its own::

    .venv-openfhe/bin/python benchmarks/peers/openfhe_bootstrap.py CONFIG.json OUT.json

``OMP_NUM_THREADS`` is set to 1 before ``openfhe`` is imported, whatever the caller had.

**A case** follows OpenFHE's own example (``examples/pke/simple-ckks-bootstrapping.py``):
``CCParamsCKKSRNS`` with ``secret`` (``UNIFORM_TERNARY``, ``SPARSE_ENCAPSULATED``, ...),
``HEStd_NotSet`` and ring dimension ``n``, ``FLEXIBLEAUTO`` rescaling with 59-bit scaling moduli
and a 60-bit first modulus, ``HYBRID`` key switching with OpenFHE's default digits, and depth
``levels_after + GetBootstrapDepth(level_budget, secret)``; then ``EvalBootstrapSetup(level_budget,
[0, 0], slots)`` (the transforms' plaintexts), ``KeyGen``, ``EvalMultKeyGen`` and
``EvalBootstrapKeyGen(sk, slots)``. The input is ``slots`` values uniform in [-1, 1]
(``numpy.random.default_rng(seed)``: Ren's values), encrypted at level ``depth - 1`` as in the
example, and ``EvalBootstrap`` runs once (``first_ms``) and ``repeats`` more times (``median_ms``,
``min_ms``)::

    {"seed": 7, "min_bits": 10,
     "cases": [{"n": 4096, "slots": 2048, "level_budget": [4, 4],
                "secret": "SPARSE_ENCAPSULATED", "levels_after": 3, "repeats": 3}]}

**Iterated bootstrapping** (``"iterations": 2`` in a case; OpenFHE's own example,
``examples/pke/iterative-ckks-bootstrapping.py``): the depth has one level more per extra
iteration, ``EvalBootstrap(ct)`` runs first (its row has ``iterations`` 1), and its precision,
``floor`` of the bits it measured (``"precision"`` in the case overrides it, as the example's
"empirically measured value"), is what ``EvalBootstrap(ct, iterations, precision)`` takes (a row
with ``iterations`` and ``precision``).

**Output.** ``{"openfhe": {"version", "distribution"}, "machine", "threads", "config", "rows",
"skipped"}``. A case gives two rows in the shape of ``benchmarks/run.py`` (``bench``, ``backend``
``"openfhe"``, ``params`` ``"n=4096 slots=2048"``, ``mode`` ``"eager"``, ``median_ms``):
``ckks.bootstrap_keys`` (``EvalBootstrapSetup`` and the keys, once; ``setup_ms`` and
``keygen_ms`` apart) and ``ckks.bootstrap``; both carry ``secret``, ``level_budget``, ``depth``,
``levels_after`` (``depth - level - (noise_scale_deg - 1)`` of the result), ``key_bytes`` (the
relinearization key and the automorphism keys serialized as BINARY; OpenFHE keeps the two
switching keys of SPARSE_ENCAPSULATED, to and from its weight-32 secret, in the automorphism key
map at the indices ``2n - 4`` and ``2n - 2``; above ``n = 16384`` the relinearization key's size
times the count, as the whole map serialized at once would double the peak),
``automorphism_keys`` (their count, the conjugation key included),
``peak_rss_bytes`` (``ru_maxrss`` after the bootstraps, before the keys are serialized; the whole
process, interpreter and OpenFHE included) and ``base_rss_bytes`` (the same after the imports).
The bootstrap row has ``check_bits``: ``-log2`` of the largest error of the real slots against the
input, ``check`` ``ok`` when at least ``min_bits``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import statistics
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from typing import Any

_CALLER_OMP = os.environ.get("OMP_NUM_THREADS")
os.environ["OMP_NUM_THREADS"] = "1"  # before NumPy and OpenFHE start their thread pools

import numpy as np  # noqa: E402
import openfhe as fhe  # noqa: E402

BASE_RSS = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
#: a whole key set serialized at once above this ring dimension would double the peak: one key
#: (the relinearization key, the automorphism keys' shape) is serialized and multiplied instead.
SERIALIZE_ALL_UP_TO = 16384


def peak_rss() -> int:
    """The process's peak resident memory so far, in bytes."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def bits(got: np.ndarray, want: np.ndarray) -> float:
    """``-log2`` of the largest absolute error (64 for an exact result)."""
    err = float(np.max(np.abs(np.asarray(got) - np.asarray(want))))
    return round(-math.log2(max(err, 2.0**-64)), 2)


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
    }


def context(case: dict[str, Any]) -> tuple[Any, Any, int]:
    """The crypto context of ``case`` (setup not yet run), its secret distribution and depth."""
    secret = getattr(fhe.SecretKeyDist, case["secret"])
    budget = list(case["level_budget"])
    p = fhe.CCParamsCKKSRNS()
    p.SetSecretKeyDist(secret)
    p.SetSecurityLevel(fhe.HEStd_NotSet)
    p.SetRingDim(case["n"])
    p.SetScalingModSize(59)
    p.SetScalingTechnique(fhe.FLEXIBLEAUTO)
    p.SetFirstModSize(60)
    depth = case["levels_after"] + fhe.CryptoContext.GetBootstrapDepth(budget, secret)
    depth += case.get("iterations", 1) - 1  # one level more per extra iteration
    p.SetMultiplicativeDepth(depth)
    cc = fhe.GenCryptoContext(p)
    for feature in (fhe.PKE, fhe.KEYSWITCH, fhe.LEVELEDSHE, fhe.ADVANCEDSHE, fhe.FHE):
        cc.Enable(feature)
    return cc, secret, depth


def key_bytes(cc: Any, keys: Any, n: int) -> tuple[int, int, str]:
    """The bytes of the relinearization and automorphism keys, their count, and how counted."""
    tag = keys.secretKey.GetKeyTag()
    count = len(cc.GetExistingEvalAutomorphismKeyIndices(tag))
    relin = len(fhe.Serialize(cc.GetEvalMultKeyVector(tag)[0], fhe.BINARY))
    if n <= SERIALIZE_ALL_UP_TO:
        rotations = len(fhe.Serialize(cc.GetEvalAutomorphismKeyMap(tag), fhe.BINARY))
        how = "serialized (BINARY): the relinearization key and the automorphism key map"
    else:
        rotations = relin * count
        how = "the relinearization key serialized (BINARY), times 1 + the automorphism keys"
    return relin + rotations, count, how


def run_case(case: dict[str, Any], seed: int, min_bits: float) -> list[dict[str, Any]]:
    """The two rows of one case (see the module's docstring)."""
    n, slots, budget = case["n"], case["slots"], list(case["level_budget"])
    cc, _, depth = context(case)
    start = time.perf_counter()
    cc.EvalBootstrapSetup(budget, [0, 0], slots)
    setup_s = time.perf_counter() - start
    start = time.perf_counter()
    keys = cc.KeyGen()
    cc.EvalMultKeyGen(keys.secretKey)
    cc.EvalBootstrapKeyGen(keys.secretKey, slots)
    keygen_s = time.perf_counter() - start
    keys_rss = peak_rss()

    values = np.random.default_rng(seed).uniform(-1, 1, slots)
    pt = cc.MakeCKKSPackedPlaintext(values.tolist(), 1, depth - 1, None, slots)
    ct = cc.Encrypt(keys.publicKey, pt)
    runs = [timed(cc, keys, ct, values, case["repeats"], depth, 1, 0)]
    iterations = case.get("iterations", 1)
    if iterations > 1:
        precision = case.get("precision") or math.floor(runs[0]["check_bits"])
        runs.append(timed(cc, keys, ct, values, case["repeats"], depth, iterations, precision))
    rss = peak_rss()
    size, count, how = key_bytes(cc, keys, n)

    params = f"n={n} slots={slots}"
    common = {
        "secret": case["secret"],
        "level_budget": budget,
        "depth": depth,
        "ring_dim": cc.GetRingDimension(),
        "key_bytes": size,
        "key_bytes_counted": how,
        "automorphism_keys": count,
        "peak_rss_bytes": rss,
        "keys_rss_bytes": keys_rss,
        "base_rss_bytes": BASE_RSS,
        "threads": 1,
    }
    keygen = {
        "bench": "ckks.bootstrap_keys",
        "backend": "openfhe",
        "params": params,
        "mode": "eager",
        "median_ms": (setup_s + keygen_s) * 1e3,
        "setup_ms": setup_s * 1e3,
        "keygen_ms": keygen_s * 1e3,
        "levels_after": runs[-1]["levels_after"],
        **common,
    }
    boots = [
        {
            "bench": "ckks.bootstrap",
            "backend": "openfhe",
            "params": params,
            "mode": "eager",
            **run,
            "check": "ok" if run["check_bits"] >= min_bits else "FAIL",
            **common,
        }
        for run in runs
    ]
    return [keygen, *boots]


def timed(
    cc: Any, keys: Any, ct: Any, values: np.ndarray, repeats: int, depth: int, its: int, p: int
) -> dict[str, Any]:
    """``EvalBootstrap(ct, its, p)`` once (``first_ms``) then ``repeats`` times; its figures."""
    start = time.perf_counter()
    out = cc.EvalBootstrap(ct, its, p)
    first_s = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = cc.EvalBootstrap(ct, its, p)
        times.append(time.perf_counter() - start)
    result = cc.Decrypt(out, keys.secretKey)
    result.SetLength(len(values))
    return {
        "median_ms": statistics.median(times) * 1e3 if times else first_s * 1e3,
        "min_ms": min(times) * 1e3 if times else first_s * 1e3,
        "first_ms": first_s * 1e3,
        "times_ms": [t * 1e3 for t in times],
        "repeat": len(times),
        "iterations": its,
        "precision": p,
        "check_bits": bits(np.array(result.GetRealPackedValue()), values),
        "levels_after": depth - out.GetLevel() - (out.GetNoiseScaleDeg() - 1),
    }


def main(argv: list[str] | None = None) -> int:
    """Read CONFIG, run its cases in this process, write OUT and print one line per row."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("config", help="the CONFIG JSON file")
    parser.add_argument("out", help="where the results go (JSON)")
    args = parser.parse_args(argv)
    with open(args.config, encoding="utf-8") as f:
        config = json.load(f)
    rows, skipped = [], []
    for case in config["cases"]:
        try:
            rows += run_case(case, config.get("seed", 7), config.get("min_bits", 10.0))
        except Exception as e:  # an OpenFHE refusal names its reason; the other cases still run
            skipped.append({"case": case, "reason": f"{type(e).__name__}: {e}"})
    try:
        distribution = version("openfhe")
    except PackageNotFoundError:
        distribution = None
    result = {
        "openfhe": {"version": getattr(fhe, "__version__", None), "distribution": distribution},
        "machine": {**machine(), "loadavg_after": os.getloadavg()},
        "threads": {
            "OMP_NUM_THREADS": os.environ["OMP_NUM_THREADS"],
            "caller_OMP_NUM_THREADS": _CALLER_OMP,
        },
        "config": config,
        "rows": rows,
        "skipped": skipped,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    for r in rows:
        extra = f" {r['check_bits']:6.2f} bits" if "check_bits" in r else ""
        print(f"{r['bench']:<20} {r['params']} {r['secret']:<20} {r['median_ms']:10.1f} ms{extra}")
    for s in skipped:
        print(f"skipped {s['case']}: {s['reason']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
