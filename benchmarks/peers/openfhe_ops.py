"""OpenFHE's CKKS multiply and rotation on a given number of threads, as a peer for Ren's threads.

Runs under the Python 3.10 environment where OpenFHE's wheel imports (set-up in
``benchmarks/peers/README.md``) and imports only ``openfhe``, NumPy and the standard library.
``benchmarks/threads.py`` runs it::

    .venv-openfhe/bin/python benchmarks/peers/openfhe_ops.py CONFIG.json OUT.json

CONFIG: ``{"n", "q_bits", "scale_bits", "threads", "repeats"}`` (a Ren parameter set: ``q_bits``
the ciphertext moduli, the first one's size is OpenFHE's first modulus, the others its scaling
size). ``OMP_NUM_THREADS`` is set to ``threads`` before ``openfhe`` is imported. The context:
``CCParamsCKKSRNS``, ring dimension ``n``, depth ``len(q_bits) - 1``, ``FIXEDMANUAL`` rescaling,
``HYBRID`` key switching with one modulus a digit (``dnum = len(q_bits)``, as Ren's sets), batch
``n / 2``, 128-bit classical security where OpenFHE accepts the ring, ``HEStd_NotSet``
otherwise (its special moduli, which it picks itself, can take the ring past the bound).

Timed, each the median of ``repeats`` calls timed alone after one untimed call, on fresh
encryptions of uniform values in [-1, 1]: ``ckks.multiply`` (``EvalMult`` of two ciphertexts,
which relinearizes, then ``Rescale``) and ``ckks.rotate`` (``EvalRotate`` by 1). Each result is
decrypted and compared with NumPy: ``check_bits`` is ``-log2`` of the largest error.

OUT: ``{"openfhe": {"version"}, "threads", "security", "config", "rows": [{"bench",
"median_ms", "min_ms", "times_ms", "check_bits"}]}``.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
import time


def main(config_path: str, out_path: str) -> None:
    """Run the CONFIG and write OUT (see the module docstring)."""
    with open(config_path, encoding="utf-8") as f:
        config = json.load(f)
    os.environ["OMP_NUM_THREADS"] = str(int(config["threads"]))  # before OpenFHE starts its pool
    import numpy as np
    import openfhe as fhe

    n, q_bits = int(config["n"]), [int(b) for b in config["q_bits"]]
    repeats = int(config.get("repeats", 11))
    p = fhe.CCParamsCKKSRNS()
    p.SetRingDim(n)
    p.SetMultiplicativeDepth(len(q_bits) - 1)
    p.SetScalingModSize(int(config["scale_bits"]))
    p.SetFirstModSize(q_bits[0])
    p.SetScalingTechnique(fhe.FIXEDMANUAL)
    p.SetKeySwitchTechnique(fhe.HYBRID)
    p.SetNumLargeDigits(len(q_bits))
    p.SetBatchSize(n // 2)
    security = "HEStd_128_classic"
    p.SetSecurityLevel(fhe.HEStd_128_classic)
    try:
        cc = fhe.GenCryptoContext(p)
    except RuntimeError:  # its own special moduli put the ring past the standard's bound
        security = "HEStd_NotSet"
        p.SetSecurityLevel(fhe.HEStd_NotSet)
        cc = fhe.GenCryptoContext(p)
    for feature in (fhe.PKE, fhe.KEYSWITCH, fhe.LEVELEDSHE):
        cc.Enable(feature)
    keys = cc.KeyGen()
    cc.EvalMultKeyGen(keys.secretKey)
    cc.EvalRotateKeyGen(keys.secretKey, [1])
    rng = np.random.default_rng(1)
    v, w = rng.uniform(-1, 1, n // 2), rng.uniform(-1, 1, n // 2)

    def encrypt(values):
        return cc.Encrypt(keys.publicKey, cc.MakeCKKSPackedPlaintext(values.tolist()))

    def bits(ct, want) -> float:
        pt = cc.Decrypt(keys.secretKey, ct)
        pt.SetLength(n // 2)
        got = np.array(pt.GetRealPackedValue())
        return -math.log2(max(float(np.max(np.abs(got - want))), 2.0**-60))

    x, y = encrypt(v), encrypt(w)
    ops = {
        "ckks.multiply": (lambda: cc.Rescale(cc.EvalMult(x, y)), v * w),
        "ckks.rotate": (lambda: cc.EvalRotate(x, 1), np.roll(v, -1)),
    }
    rows = []
    for bench, (op, want) in ops.items():
        op()
        times, out = [], None
        for _ in range(repeats):
            start = time.perf_counter()
            out = op()
            times.append((time.perf_counter() - start) * 1e3)
        rows.append(
            {
                "bench": bench,
                "median_ms": statistics.median(times),
                "min_ms": min(times),
                "times_ms": times,
                "check_bits": bits(out, want),
            }
        )
    result = {
        "openfhe": {"version": getattr(fhe, "__version__", None)},
        "threads": int(config["threads"]),
        "security": security,
        "config": config,
        "rows": rows,
    }
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
