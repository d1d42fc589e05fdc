"""Benchmark: CKKS (``ren.schemes.ckks``): the time of each operation, and its precision.

Run from the repository root::

    .venv/bin/python benchmarks/ckks.py --quick             # a small insecure set, a few seconds
    .venv/bin/python benchmarks/ckks.py --sets a --backends cpu --json out.json
    .venv/bin/python benchmarks/ckks.py --sets a,b --backends cpu,python

Parameter sets (``ckks.Params``; ``q`` is what ``--quick`` runs, and only it):

* ``a``: ``n=8192``, ``q_bits=(60, 40, 40)``, ``p_bits=(60,)``, scale ``2^40``;
* ``b``: ``n=16384``, ``q_bits=(60, 40, 40, 40, 40, 40, 40)``, ``p_bits=(60,)``, scale ``2^40``;
* ``q``: ``n=1024``, the moduli of ``a``, ``insecure=True`` (beyond the 128-bit bound: a check
  of the script, not a figure to quote).

**Timings.** Per set and backend (``python``, ``cpu``; ``cpu`` needs a C compiler, else its rows
are skipped with the reason printed), each a figure per call:

* ``ckks.keygen``: entering a new ``ckks.Context(params, seed=1, device=...)`` (secret, public
  and relinearization keys; rotation keys are made on first use and are not in it);
* ``ckks.encrypt``: encode and encrypt ``n/2`` complex values, realized;
* ``ckks.add``: ``ct + ct2``; ``ckks.multiply``: ``ct * ct2`` (relinearized and rescaled);
  ``ckks.rotate``: ``ct.rotate(1)`` (key switched, the key made beforehand);
* ``ckks.decrypt``: decrypt and decode to ``n/2`` complex values.

Mode ``eager`` builds the lazy graph and realizes it at every call (``.realize()``), as a program
without ``ren.jit`` does. Mode ``jit`` (add, multiply, rotate) wraps the same expression in
``ren.jit``: it is captured once on other ciphertexts (``capture_ms``), then each call replays the
captured plan on the timed inputs. A figure is the median and the minimum over ``--repeat`` runs
(default 27; the python backend: ``--repeat-python``, default 5), a run being a loop of as many
calls as take about 20 ms (one at least), divided by the number of calls, with a garbage
collection before each run (``benchmarks/_machine.py``). Ren runs on one thread
(``REN_THREADS=1``) unless ``--threads N`` is given. ``REN_CHECK``, ``REN_DEBUG``, ``REN_DUMP``,
``REN_VALIDATE``, ``REN_POISON``, ``REN_NO_PLAN`` and ``REN_JIT_GRAPH`` are switched off
(``environment.given`` says what was set).

Every timed result is checked: the value of the last timed call (for ``jit``, a replay on inputs
other than the capture's) is decrypted and compared with NumPy, and must be right to more than
``MIN_BITS`` (20) bits (SEAL's: ``PEER_MIN_BITS``, 12, as its rotations keep about 20 bits at set
``b``); a row that fails says ``FAIL``, reports no time, and the script exits with status 1.

**Precision**, for set ``a`` (``q`` with ``--quick``), on the first of ``cpu``, ``python`` that
is run: ``ckks.precision_bits(got, expected)``, ``-log2`` of the largest slot error against NumPy
on complex vectors drawn uniformly in the unit disk (radius ``sqrt(uniform)``, angle uniform), for
a fresh encryption, ``add``, ``multiply`` (relinearized and rescaled), a plaintext multiply
(``ct * ckks.encode(y)``), a scalar multiply (``ct * 0.5``), ``rotate(1)`` (expected
``np.roll(x, -1)``: slot ``j + 1`` moves to slot ``j``) and ``conjugate``; the mean and the
minimum over ``--trials`` pairs of vectors (default 6).

**Peer.** When ``import seal`` works (``pip install seal-python``, or ``pip install -e .[peers]``:
Microsoft SEAL's Python bindings), the same operations are timed with SEAL in the same run, on the
same parameters (``CoeffModulus.Create(n, q_bits + p_bits)``, scale ``2^40``), the same way (rows
with ``"backend": "seal"``, ``"mode": "eager"``: SEAL computes at each call), and checked the
same way; its precision is measured on the same vectors. ``vs_seal`` in a Ren row (``Ren/SEAL``
in the table) is the Ren median over SEAL's for the same operation and set. Without SEAL one line
says so and the rest runs.

Output: a table on stdout, and JSON (default ``benchmarks/results/ckks.json``): ``results``, one
row per (bench, backend, params, mode) with ``median_ms``, ``min_ms``, ``check``, ``check_bits``;
``precision``, one row per (params, backend, op) with ``mean_bits``, ``min_bits`` and ``bits``;
``params``, ``peer``, ``environment`` and ``machine``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _machine import (
    cpu_missing,
    machine,
    machine_line,
    measure,
    names,
    peer,
    switch_off,
    write_results,
)

# Off before Ren reads them: what the caller had set, for the JSON (None: unset).
SWITCHED_OFF = switch_off()

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "ckks.json"

#: name -> the keyword arguments of ``ckks.Params``.
SETS: dict[str, dict[str, Any]] = {
    "a": {"n": 8192, "q_bits": (60, 40, 40), "p_bits": (60,), "scale_bits": 40},
    "b": {"n": 16384, "q_bits": (60, *(40,) * 6), "p_bits": (60,), "scale_bits": 40},
    "q": {"n": 1024, "q_bits": (60, 40, 40), "p_bits": (60,), "scale_bits": 40, "insecure": True},
}
PRECISION_SET, QUICK_SET = "a", "q"
BACKENDS = ("python", "cpu")
BENCHES = ("keygen", "encrypt", "add", "multiply", "rotate", "decrypt")
JIT_BENCHES = ("add", "multiply", "rotate")
PRECISION_OPS = ("fresh", "add", "multiply", "plain_multiply", "scalar_multiply", "rotate")
PRECISION_OPS += ("conjugate",)
MIN_BITS = 20.0  # a checked Ren result must be right to more bits than this (scale 2^40: ~25-30)
#: the same for the peer, whose key switching loses more bits (about 20 after a rotation at set b):
#: what its check catches is a misuse (a wrong key, a rotation the wrong way), about 0 bits.
PEER_MIN_BITS = 12.0

# Ren is imported in main(), after REN_THREADS is set from the arguments.
ren: Any = None
ckks: Any = None


def _import_ren(threads: int | None) -> None:
    global ren, ckks
    os.environ["REN_THREADS"] = str(threads) if threads is not None else "1"
    import ren as _ren
    from ren.schemes import ckks as _ckks

    ren, ckks = _ren, _ckks


# --------------------------------------------------------------------------------------------
# values and checks


def disk(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` complex numbers uniform in the unit disk."""
    radius = np.sqrt(rng.uniform(0.0, 1.0, count))
    return radius * np.exp(2j * np.pi * rng.uniform(0.0, 1.0, count))


def _checked(bits: float, backend: str) -> str:
    return "ok" if bits > (PEER_MIN_BITS if backend == "seal" else MIN_BITS) else "FAIL"


def _row(
    bench: str,
    backend: str,
    params: str,
    mode: str,
    stats: dict[str, Any],
    bits: float,
    **extra: Any,
) -> dict[str, Any]:
    """One result: a time only when the check passed."""
    check = _checked(bits, backend)
    ok = check == "ok"
    return {
        "bench": f"ckks.{bench}",
        "backend": backend,
        "params": params,
        "mode": mode,
        "median_ms": stats["median_s"] * 1e3 if ok else None,
        "min_ms": stats["min_s"] * 1e3 if ok else None,
        "first_ms": stats["first_s"] * 1e3 if ok else None,
        "times_ms": [t * 1e3 for t in stats["times_s"]] if ok else None,
        "number": stats["number"],
        "repeat": len(stats["times_s"]),
        "check": check,
        "check_bits": bits,
        **extra,
    }


# --------------------------------------------------------------------------------------------
# Ren


def bench_ren(name: str, backend: str, repeat: int) -> list[dict[str, Any]]:
    params = ckks.Params(**SETS[name])
    rng = np.random.default_rng(7)
    x, y, z = (disk(rng, params.slots) for _ in range(3))
    rows = []

    def keygen() -> Any:
        with ckks.Context(params, seed=1, device=backend) as made:
            return made

    stats, made = measure(keygen, repeat)
    with made:
        bits = ckks.precision_bits(ckks.decrypt(ckks.encrypt(x)), x)
    rows.append(_row("keygen", backend, name, "eager", stats, bits))

    with ckks.Context(params, seed=1, device=backend) as ctx:
        stats, ct = measure(lambda: ckks.encrypt(x).realize(), repeat)
        rows.append(
            _row("encrypt", backend, name, "eager", stats, ckks.precision_bits(ct.decrypt(), x))
        )

        cx, cy, cz = (ckks.encrypt(v).realize() for v in (x, y, z))
        ctx.rotation_key(1)  # made once here, not in the first timed call
        ops: dict[str, tuple[Callable[..., Any], tuple, tuple, np.ndarray]] = {
            # bench -> (function, timed inputs, capture inputs, expected slots)
            "add": (lambda a, b: a + b, (cx, cy), (cz, cy), x + y),
            "multiply": (lambda a, b: a * b, (cx, cy), (cz, cy), x * y),
            "rotate": (lambda a: a.rotate(1), (cx,), (cz,), np.roll(x, -1)),
        }
        for bench, (fn, args, capture_args, want) in ops.items():
            stats, out = measure(lambda fn=fn, args=args: fn(*args).realize(), repeat)
            bits = ckks.precision_bits(out.decrypt(), want)
            rows.append(_row(bench, backend, name, "eager", stats, bits))

            jitted = ren.jit(fn)
            jitted(*capture_args)  # the capture, on other inputs: a replay that does not
            capture_s = jitted.last.capture_s  # compute would leave the capture's values
            stats, out = measure(lambda j=jitted, args=args: j(*args).realize(), repeat)
            bits = ckks.precision_bits(out.decrypt(), want)
            extra = {"capture_ms": capture_s * 1e3, "units": len(jitted.last.units)}
            extra["runner"] = jitted.last.runner_kind
            rows.append(_row(bench, backend, name, "jit", stats, bits, **extra))

        stats, got = measure(lambda: ckks.decrypt(cx), repeat)
        rows.append(_row("decrypt", backend, name, "eager", stats, ckks.precision_bits(got, x)))
    return rows


def precision_ren(name: str, backend: str, trials: int) -> dict[str, list[float]]:
    params = ckks.Params(**SETS[name])
    bits: dict[str, list[float]] = {op: [] for op in PRECISION_OPS}
    with ckks.Context(params, seed=1, device=backend):
        for x, y in _trial_vectors(params.slots, trials):
            cx, cy = ckks.encrypt(x), ckks.encrypt(y)
            got = {
                "fresh": (cx, x),
                "add": (cx + cy, x + y),
                "multiply": (cx * cy, x * y),
                "plain_multiply": (cx * ckks.encode(y), x * y),
                "scalar_multiply": (cx * 0.5, 0.5 * x),
                "rotate": (cx.rotate(1), np.roll(x, -1)),
                "conjugate": (cx.conjugate(), np.conj(x)),
            }
            for op, (ct, want) in got.items():
                bits[op].append(ckks.precision_bits(ckks.decrypt(ct), want))
    return bits


def _trial_vectors(slots: int, trials: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The same vectors for Ren and the peer: trial ``t`` draws from seed ``1000 + t``."""
    out = []
    for t in range(trials):
        rng = np.random.default_rng(1000 + t)
        out.append((disk(rng, slots), disk(rng, slots)))
    return out


# --------------------------------------------------------------------------------------------
# the peer: Microsoft SEAL's Python bindings (PyPI seal-python)


def peer_info() -> dict[str, Any]:
    """SEAL's availability and versions (``_machine.peer``)."""
    return peer("seal", "seal-python")


class Seal:
    """SEAL at the parameters of one set: keys, encoder, encryptor, decryptor, evaluator."""

    def __init__(self, name: str):
        import seal

        spec = SETS[name]
        self.seal = seal
        self.n = spec["n"]
        self.scale = float(2 ** spec["scale_bits"])
        parms = seal.EncryptionParameters(seal.scheme_type.ckks)
        parms.set_poly_modulus_degree(self.n)
        parms.set_coeff_modulus(
            seal.CoeffModulus.Create(self.n, [*spec["q_bits"], *spec["p_bits"]])
        )
        level = seal.sec_level_type.none if spec.get("insecure") else seal.sec_level_type.tc128
        self.context = seal.SEALContext(parms, True, level)
        if not self.context.parameters_set():
            raise ValueError(f"SEAL rejects set {name}: {self.context.parameter_error_message()}")
        self.encoder = seal.CKKSEncoder(self.context)
        self.evaluator = seal.Evaluator(self.context)
        self.keys = self.keygen()
        self.galois = seal.GaloisKeys()
        self.keys[0].create_galois_keys([0, 1], self.galois)  # step 0: the conjugation key
        self.encryptor = seal.Encryptor(self.context, self.keys[1])
        self.decryptor = seal.Decryptor(self.context, self.keys[0].secret_key())

    def keygen(self) -> tuple[Any, Any, Any]:
        kg = self.seal.KeyGenerator(self.context)
        return kg, kg.create_public_key(), kg.create_relin_keys()

    def encrypt(self, values: np.ndarray) -> Any:
        return self.encryptor.encrypt(self.encoder.encode_complex(values, self.scale))

    def decrypt(self, ct: Any) -> np.ndarray:
        return np.asarray(self.encoder.decode_complex(self.decryptor.decrypt(ct)))

    def add(self, a: Any, b: Any) -> Any:
        return self.evaluator.add(a, b)

    def multiply(self, a: Any, b: Any) -> Any:
        out = self.evaluator.multiply(a, b)
        self.evaluator.relinearize_inplace(out, self.keys[2])
        self.evaluator.rescale_to_next_inplace(out)
        return out

    def multiply_plain(self, a: Any, pt: Any) -> Any:
        out = self.evaluator.multiply_plain(a, pt)
        self.evaluator.rescale_to_next_inplace(out)
        return out

    def rotate(self, a: Any) -> Any:
        return self.evaluator.rotate_vector(a, 1, self.galois)

    def conjugate(self, a: Any) -> Any:
        return self.evaluator.complex_conjugate(a, self.galois)


def bench_seal(name: str, repeat: int) -> list[dict[str, Any]]:
    s = Seal(name)
    rng = np.random.default_rng(7)
    x, y, _ = (disk(rng, s.n // 2) for _ in range(3))
    rows = []

    stats, keys = measure(s.keygen, repeat)
    kg, public, _ = keys
    ct = s.seal.Encryptor(s.context, public).encrypt(s.encoder.encode_complex(x, s.scale))
    got = s.encoder.decode_complex(s.seal.Decryptor(s.context, kg.secret_key()).decrypt(ct))
    rows.append(_row("keygen", "seal", name, "eager", stats, ckks.precision_bits(got, x)))

    stats, ct = measure(lambda: s.encrypt(x), repeat)
    rows.append(
        _row("encrypt", "seal", name, "eager", stats, ckks.precision_bits(s.decrypt(ct), x))
    )

    cx, cy = s.encrypt(x), s.encrypt(y)
    ops = {
        "add": (lambda: s.add(cx, cy), x + y),
        "multiply": (lambda: s.multiply(cx, cy), x * y),
        "rotate": (lambda: s.rotate(cx), np.roll(x, -1)),
    }
    for bench, (call, want) in ops.items():
        stats, out = measure(call, repeat)
        bits = ckks.precision_bits(s.decrypt(out), want)
        rows.append(_row(bench, "seal", name, "eager", stats, bits))

    stats, got = measure(lambda: s.decrypt(cx), repeat)
    rows.append(_row("decrypt", "seal", name, "eager", stats, ckks.precision_bits(got, x)))
    return rows


def precision_seal(name: str, trials: int) -> dict[str, list[float]]:
    s = Seal(name)
    bits: dict[str, list[float]] = {op: [] for op in PRECISION_OPS}
    for x, y in _trial_vectors(s.n // 2, trials):
        cx, cy = s.encrypt(x), s.encrypt(y)
        half = s.encoder.encode(0.5, s.scale)
        got = {
            "fresh": (cx, x),
            "add": (s.add(cx, cy), x + y),
            "multiply": (s.multiply(cx, cy), x * y),
            "plain_multiply": (s.multiply_plain(cx, s.encoder.encode_complex(y, s.scale)), x * y),
            "scalar_multiply": (s.multiply_plain(cx, half), 0.5 * x),
            "rotate": (s.rotate(cx), np.roll(x, -1)),
            "conjugate": (s.conjugate(cx), np.conj(x)),
        }
        for op, (ct, want) in got.items():
            bits[op].append(ckks.precision_bits(s.decrypt(ct), want))
    return bits


# --------------------------------------------------------------------------------------------
# reporting


def set_info(name: str) -> dict[str, Any]:
    p = ckks.Params(**SETS[name])
    return {
        "n": p.n,
        "slots": p.slots,
        "q_bits": list(p.q_bits),
        "p_bits": list(p.p_bits),
        "scale_bits": p.scale_bits,
        "dnum": p.dnum,
        "insecure": p.insecure,
        "log2_qp": p.log2_qp,
        "q_moduli": [str(q) for q in p.q_moduli],
        "p_moduli": [str(q) for q in p.p_moduli],
    }


def precision_rows(name: str, backend: str, bits: dict[str, list[float]]) -> list[dict[str, Any]]:
    return [
        {
            "params": name,
            "backend": backend,
            "op": op,
            "mean_bits": statistics.fmean(values),
            "min_bits": min(values),
            "bits": values,
        }
        for op, values in bits.items()
    ]


def add_ratios(rows: list[dict[str, Any]]) -> None:
    """``vs_seal`` in each Ren row: its median over SEAL's for the same bench and set."""
    peer = {(r["bench"], r["params"]): r["median_ms"] for r in rows if r["backend"] == "seal"}
    for r in rows:
        if r["backend"] == "seal":
            continue
        theirs = peer.get((r["bench"], r["params"]))
        ok = theirs and r["median_ms"] is not None
        r["vs_seal"] = r["median_ms"] / theirs if ok else None


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}" if value < 1000 else f"{value:.0f}"


def print_table(results: dict[str, Any]) -> None:
    env = results["environment"]
    given = ", ".join(f"{k}={v}" for k, v in env["given"].items() if v)
    print(
        f"CKKS: ms per call, median and min of {results['repeat']} runs "
        f"(python backend: {results['repeat_python']}); REN_THREADS={env['threads']['REN_THREADS']}"
    )
    print(f"{', '.join(SWITCHED_OFF)} off while timing{f' (given: {given})' if given else ''}")
    for name, p in results["params"].items():
        print(
            f"set {name}: n={p['n']}, q_bits={tuple(p['q_bits'])}, p_bits={tuple(p['p_bits'])}, "
            f"scale 2^{p['scale_bits']}, log2(QP)={p['log2_qp']:.1f}"
            + (" (insecure)" if p["insecure"] else "")
        )
    peer = results["peer"]
    if peer["available"]:
        print(f"peer: Microsoft SEAL {peer['version']} (seal-python {peer['package']}), one thread")
    else:
        print(f"peer: SEAL not timed ({peer['reason']}; pip install seal-python)")
    print()
    head = f"| {'bench':<14} | {'set':<3} | {'backend':<7} | {'mode':<5} |"
    head += f" {'median ms':>10} | {'min ms':>10} | {'Ren/SEAL':>8} | {'abs bits':>8} | check |"
    print(head)
    print("|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|")
    order = {b: i for i, b in enumerate(("seal", *BACKENDS))}
    rows = sorted(
        results["results"],
        key=lambda r: (r["params"], BENCHES.index(r["bench"][5:]), order[r["backend"]], r["mode"]),
    )
    for r in rows:
        ratio = r.get("vs_seal")
        print(
            f"| {r['bench']:<14} | {r['params']:<3} | {r['backend']:<7} | {r['mode']:<5} |"
            f" {_ms(r['median_ms']):>10} | {_ms(r['min_ms']):>10} |"
            f" {'-' if ratio is None else f'{ratio:.2f}x':>8} | {r['check_bits']:8.1f} |"
            f" {r['check']:<5} |"
        )
    print()
    print("jit: replays of a plan captured once on other inputs (capture ms, exec units):")
    for r in rows:
        if r["mode"] == "jit":
            print(
                f"  {r['bench']:<14} {r['params']} {r['backend']:<6} capture "
                f"{r['capture_ms']:.1f} ms, {r['units']} units, runner {r['runner']}"
            )
    for backend, reason in results["skipped"].items():
        print(f"{backend}: not timed ({reason})")

    if results["precision"]:
        print()
        by = {(r["params"], r["backend"], r["op"]): r for r in results["precision"]}
        for name in sorted({r["params"] for r in results["precision"]}):
            ren_backend = next(
                r["backend"] for r in results["precision"]
                if r["params"] == name and r["backend"] != "seal"
            )  # fmt: skip
            trials = len(by[name, ren_backend, "fresh"]["bits"])
            have_seal = (name, "seal", "fresh") in by
            print(
                f"precision, set {name}: bits (absolute: -log2 of the largest slot error against "
                "NumPy, ckks.precision_bits), mean and min "
                f"over {trials} trials; Ren on {ren_backend}"
            )
            head = f"| {'op':<15} | {'Ren mean':>8} | {'Ren min':>8} |"
            if have_seal:
                head += f" {'SEAL mean':>9} | {'SEAL min':>8} | {'Ren-SEAL':>8} |"
            print(head)
            print("|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|")
            for op in PRECISION_OPS:
                mine = by[name, ren_backend, op]
                line = f"| {op:<15} | {mine['mean_bits']:8.2f} | {mine['min_bits']:8.2f} |"
                if have_seal:
                    theirs = by[name, "seal", op]
                    diff = mine["mean_bits"] - theirs["mean_bits"]
                    line += (
                        f" {theirs['mean_bits']:9.2f} | {theirs['min_bits']:8.2f} | {diff:+8.2f} |"
                    )
                print(line)
    print()
    m = results["machine"]
    print(machine_line(m))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/ckks.py", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sets",
        type=lambda t: names(t, ("a", "b"), "--sets"),
        default=["a", "b"],
        help="parameter sets to time (default a,b)",
    )
    parser.add_argument(
        "--backends",
        type=lambda t: names(t, BACKENDS, "--backends"),
        default=list(BACKENDS),
        help="Ren backends (default python,cpu)",
    )
    parser.add_argument("--json", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    parser.add_argument("--repeat", type=int, default=None, help="timed runs per figure (27)")
    parser.add_argument(
        "--repeat-python", type=int, default=None, help="timed runs per python-backend figure (5)"
    )
    parser.add_argument("--trials", type=int, default=None, help="precision trials (6)")
    parser.add_argument("--threads", type=int, default=None, help="REN_THREADS (default 1)")
    parser.add_argument(
        "--quick", action="store_true", help="the small insecure set q only, few repeats"
    )
    parser.add_argument("--no-peer", action="store_true", help="do not time SEAL")
    args = parser.parse_args(argv)
    repeat = args.repeat if args.repeat is not None else 3 if args.quick else 27
    repeat_python = args.repeat_python if args.repeat_python is not None else 3 if args.quick else 5
    trials = args.trials if args.trials is not None else 2 if args.quick else 6
    for flag, value in (("--repeat", repeat), ("--repeat-python", repeat_python)):
        if value < 1:
            parser.error(f"{flag} must be at least 1")
    if trials < 1:
        parser.error("--trials must be at least 1")
    if args.threads is not None and args.threads < 1:
        parser.error("--threads must be at least 1")
    sets = [QUICK_SET] if args.quick else args.sets

    _import_ren(args.threads)
    skipped = {}
    backends = list(args.backends)
    if "cpu" in backends and (reason := cpu_missing()):
        skipped["cpu"] = reason
        backends.remove("cpu")
    peer = peer_info() if not args.no_peer else {"name": "seal", "available": False}
    if args.no_peer:
        peer["reason"] = "--no-peer"

    rows: list[dict[str, Any]] = []
    for name in sets:
        if peer["available"]:
            rows += bench_seal(name, repeat)
        for backend in backends:
            rows += bench_ren(name, backend, repeat_python if backend == "python" else repeat)
    add_ratios(rows)

    precision: list[dict[str, Any]] = []
    precision_set = QUICK_SET if args.quick else PRECISION_SET
    ren_backend = next((b for b in ("cpu", "python") if b in backends), None)
    if precision_set in sets and ren_backend is not None:
        bits = precision_ren(precision_set, ren_backend, trials)
        precision += precision_rows(precision_set, ren_backend, bits)
        if peer["available"]:
            precision += precision_rows(
                precision_set, "seal", precision_seal(precision_set, trials)
            )

    results = {
        "benchmark": "ckks",
        "quick": args.quick,
        "repeat": repeat,
        "repeat_python": repeat_python,
        "trials": trials,
        "min_bits": MIN_BITS,
        "peer_min_bits": PEER_MIN_BITS,
        "environment": {
            "off_while_timing": list(SWITCHED_OFF),
            "given": SWITCHED_OFF,
            "threads": {v: os.environ.get(v) for v in ("REN_THREADS", "OMP_NUM_THREADS")},
        },
        "machine": machine(),
        "params": {name: set_info(name) for name in sets},
        "backends": backends,
        "skipped": skipped,
        "peer": peer,
        "results": rows,
        "precision": precision,
    }
    print_table(results)
    write_results(results, args.json)
    failed = [r for r in rows if r["check"] != "ok"]
    for r in failed:
        print(
            f"FAIL {r['bench']} {r['backend']} set {r['params']} {r['mode']}: "
            f"{r['check_bits']:.1f} bits "
            f"(needs > {PEER_MIN_BITS if r['backend'] == 'seal' else MIN_BITS:g})"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
