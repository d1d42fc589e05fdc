"""Benchmark: CKKS with hybrid and with BV key switching, precision and time, side by side.

Run from the repository root::

    .venv/bin/python benchmarks/key_switching.py                    # sets a and b, about 3 min
    .venv/bin/python benchmarks/key_switching.py --sets a --quick   # one seed, few repeats
    .venv/bin/python benchmarks/key_switching.py --out figures.json

Sets (``ckks.Params``, scale ``2^40``): ``a``: ``n=8192``, ``q_bits=(60, 40, 40)``; ``b``:
``n=16384``, ``q_bits=(60, 40, 40, 40, 40, 40, 40)``. Hybrid has ``p_bits=(60,)`` and the
default ``dnum``; BV has no special modulus, with RNS digits (one per modulus, as OpenFHE's digit
size 0) and with ``digit_bits`` 40 and 20 (set a) or 40 and 30 (set b: there are too few primes
``1 mod 2n`` below ``2^20`` at ``n=16384``).

For each technique and set: the precision, ``-log2`` of the largest slot error against plaintext
NumPy (inputs uniform in ``[-1, 1]`` for real and imaginary parts; the smallest over
``--seeds`` seeds), of a fresh encryption, of a product (relinearized, rescaled) and of a rotation
by one slot; the key pairs a switching key holds; and the median time of the jitted multiply and
rotate on the ``cpu`` device at one thread (``REN_THREADS=1``; skipped with the reason where no C
compiler is found). The JSON: ``{"machine", "results": [{"set", "technique", "digit_bits",
"key_parts", "bits": {"fresh", "multiply", "rotate"}, "ms": {"multiply", "rotate"}}, ...]}``.
Nothing is asserted.

**OpenFHE beside it.** Where OpenFHE's Python runs (``.venv-openfhe`` or ``REN_OPENFHE_PYTHON``;
``benchmarks/peers/README.md``), the same run asks it for the same figures
(``scripts/peers/openfhe_vectors.py --precision``: set a's chain as OpenFHE picks it, HYBRID and
BV at digit sizes 0 to 30, each the worst of 5 key pairs), written under ``"openfhe"``; where
it does not, the reason is. Both take values of magnitude at most 1 (uniform in the unit disk).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _machine  # noqa: E402

SETS = {
    "a": {"n": 8192, "q_bits": (60, 40, 40), "digits": (40, 20)},
    "b": {"n": 16384, "q_bits": (60,) + (40,) * 6, "digits": (40, 30)},
}


def techniques(digits: tuple[int, ...]) -> list[dict]:
    """Hybrid, BV with RNS digits, BV with each digit size."""
    out: list[dict] = [{"key_switching": "hybrid"}, {"key_switching": "bv"}]
    return out + [{"key_switching": "bv", "digit_bits": d} for d in digits]


def unit_disk(rng, count: int):
    """``count`` complex values uniform in the unit disk (magnitude at most 1)."""
    import numpy as np

    radius = np.sqrt(rng.uniform(0, 1, count))
    return radius * np.exp(2j * np.pi * rng.uniform(0, 1, count))


def openfhe_figures() -> dict:
    """OpenFHE's precision rows, or the reason it did not run."""
    import subprocess
    import tempfile

    import openfhe_peer

    reason = openfhe_peer.skip_reason()
    if reason is not None:
        return {"skipped": reason}
    script = HERE.parent / "scripts" / "peers" / "openfhe_vectors.py"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "precision.json"
        done = subprocess.run(
            [openfhe_peer.find_python(), str(script), "--precision", str(out)],
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if done.returncode != 0:
            return {"skipped": f"OpenFHE's precision run failed: {done.stderr[-500:]}"}
        return json.loads(out.read_text())


def bits(got, want) -> float:
    import numpy as np

    return float(-np.log2(np.max(np.abs(got - want))))


def run_one(name: str, kw: dict, seeds: int, repeat: int, device: str | None) -> dict:
    import numpy as np

    import ren
    from ren.schemes import ckks

    spec = SETS[name]
    params = ckks.Params(n=spec["n"], q_bits=spec["q_bits"], **kw)
    slots = params.slots
    worst = {"fresh": 99.0, "multiply": 99.0, "rotate": 99.0}
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        x, y = (unit_disk(rng, slots) for _ in range(2))
        with ckks.Context(params, seed=seed) as ctx:
            ctx.rotation_key(1)
            a, b = ckks.encrypt(x), ckks.encrypt(y)
            got = {
                "fresh": bits(ckks.decrypt(a), x),
                "multiply": bits(ckks.decrypt(a * b), x * y),
                "rotate": bits(ckks.decrypt(a.rotate(1)), np.roll(x, -1)),
            }
        worst = {k: min(worst[k], got[k]) for k in worst}
    row: dict = {
        "set": name,
        "technique": params.key_switching,
        "digit_bits": params.digit_bits,
        "key_parts": params.key_parts,
        "log2_qp": round(params.log2_qp, 1),
        "bits": {k: round(v, 2) for k, v in worst.items()},
        "ms": None,
    }
    if device is not None:
        with ckks.Context(params, seed=1, device=device) as ctx:
            ctx.rotation_key(1)
            x = np.linspace(-1, 1, slots)
            a, b, c = ckks.encrypt(x), ckks.encrypt(x), ckks.encrypt(x[::-1])
            ms = {}
            for op, fn in (("multiply", lambda u: u * b), ("rotate", lambda u: u.rotate(1))):
                _, times, _, _ = _machine.jit_replays(fn, a, c, repeat)
                ms[op] = round(statistics.median(times) * 1e3, 3)
            ren.realize()
        row["ms"] = ms
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sets", default="a,b", type=lambda t: _machine.names(t, tuple(SETS), "set")
    )
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="one seed, 5 repeats")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--no-openfhe", action="store_true", help="leave OpenFHE out")
    args = parser.parse_args()
    os.environ["REN_THREADS"] = "1"
    _machine.switch_off()
    seeds, repeat = (1, 5) if args.quick else (args.seeds, args.repeat)
    missing = _machine.cpu_missing()
    if missing:
        print(f"cpu timings skipped: {missing}")
    results = []
    for name in args.sets:
        for kw in techniques(SETS[name]["digits"]):
            start = time.perf_counter()
            row = run_one(name, kw, seeds, repeat, None if missing else "cpu")
            results.append(row)
            print(
                f"set {name} {row['technique']:>6} digit_bits={row['digit_bits']!s:>4} "
                f"pairs={row['key_parts']:>2} bits {row['bits']} ms {row['ms']} "
                f"({time.perf_counter() - start:.0f} s)",
                flush=True,
            )
    peer = {"skipped": "--no-openfhe"} if args.no_openfhe else openfhe_figures()
    for row in peer.get("rows", []):
        print(
            f"openfhe {row['key_switching']:>6} digit_size={row['digit_size']:>2} "
            f"pairs={row['digits']:>2} fresh {row['fresh_bits']:.2f} multiply "
            f"{row['mult_rescale_bits']:.2f} rotate {row['rotate_bits']:.2f}"
        )
    if "skipped" in peer:
        print(f"OpenFHE: {peer['skipped']}")
    out = {"machine": _machine.machine(), "results": results, "openfhe": peer}
    if args.out is not None:
        _machine.write_results(out, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
