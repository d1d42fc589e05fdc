"""Benchmark: ``ckks.Params.choose`` for depths 1 to 20, beside OpenFHE's multiplicative depth.

Run from the repository root::

    .venv/bin/python benchmarks/choose.py --out benchmarks/figures/choose.json
    .venv/bin/python benchmarks/choose.py --measure-up-to 16384   # measure the chains up to n

For each depth ``d`` from 1 to 20 and each precision (20 and 30 bits), Ren's choice
(``ckks.Params.choose(depth=d, precision_bits=b)``): its ring degree, moduli, ``dnum``,
``log2(QP)`` against the HE standard's bound, the predicted precision after a chain of ``d``
products (``ren.schemes.ckks.choose.chain_precision``) and, where the ring is at most
``--measure-up-to`` (default 16384: larger rings take minutes of key generation each), the
precision measured on that chain: ``x_0 * x_1 * ... * x_d`` of fresh encryptions of complex values
in the unit disk (NumPy seed 12), each relinearized and rescaled, decrypted against NumPy.

OpenFHE 1.6.1 (in its Python 3.10 environment, ``openfhe_peer.find_python``; skipped with the
reason when absent), in the same run: the ring dimension its ``GenCryptoContext`` takes for
``SetMultiplicativeDepth(d)``, ``SetScalingModSize(40)`` and ``HEStd_128_classic``.

Output: a table on stdout and JSON (``--out``): ``rows`` (Ren's) and ``openfhe`` (depth: ring
dimension), with the machine's description.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import openfhe_peer

from ren.schemes import ckks
from ren.schemes.ckks.choose import chain_precision, measured_chain
from ren.schemes.rlwe.security import SECURITY_BOUNDS

PEER = """
import json
from openfhe import CCParamsCKKSRNS, GenCryptoContext, SecurityLevel
out = {}
for d in range(1, 21):
    p = CCParamsCKKSRNS()
    p.SetMultiplicativeDepth(d)
    p.SetScalingModSize(40)
    p.SetSecurityLevel(SecurityLevel.HEStd_128_classic)
    out[d] = GenCryptoContext(p).GetRingDimension()
print(json.dumps(out))
"""


def openfhe() -> tuple[dict[str, int] | None, str | None]:
    """OpenFHE's ring dimension for each depth, or why it did not run."""
    python = openfhe_peer.find_python()
    if python is None:
        return None, openfhe_peer.skip_reason()
    proc = subprocess.run([python, "-c", PEER], capture_output=True, text=True, timeout=600)
    if proc.returncode:
        return None, proc.stderr.strip()[-400:]
    found: dict[str, int] = json.loads(proc.stdout)
    return found, None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/choose.py")
    parser.add_argument("--out", type=Path, default=None, help="write the JSON here")
    parser.add_argument("--measure-up-to", type=int, default=16384, help="largest n measured")
    args = parser.parse_args(argv)
    rows: list[dict[str, Any]] = []
    for bits in (20, 30):
        for depth in range(1, 21):
            start = time.perf_counter()
            p = ckks.Params.choose(depth=depth, precision_bits=bits)
            seconds = time.perf_counter() - start
            row: dict[str, Any] = {
                "depth": depth,
                "precision_bits": bits,
                "n": p.n,
                "q_bits": list(p.q_bits),
                "p_bits": list(p.p_bits),
                "dnum": p.dnum,
                "log2_qp": round(p.log2_qp, 1),
                "bound": SECURITY_BOUNDS[p.n],
                "predicted_bits": round(chain_precision(p, depth)[-1], 2),
                "choose_seconds": round(seconds, 3),
            }
            if p.n <= args.measure_up_to:
                row["measured_bits"] = round(measured_chain(p, depth), 2)
            rows.append(row)
            print(json.dumps(row), flush=True)
    peer, why = openfhe()
    print("\n| depth | bits | Ren n | OpenFHE n (40-bit scaling) | predicted | measured |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        theirs = peer.get(str(r["depth"]), "-") if peer else "-"
        print(
            f"| {r['depth']} | {r['precision_bits']} | {r['n']} | {theirs} | "
            f"{r['predicted_bits']} | {r.get('measured_bits', '-')} |"
        )
    if why:
        print(f"OpenFHE: {why}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        out = {"rows": rows, "openfhe": peer, "openfhe_skipped": why}
        args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
