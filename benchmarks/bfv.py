"""Benchmark: BFV and BGV (``ren.schemes.bfv``, ``ren.schemes.bgv``) against Microsoft SEAL 4.4.

Run from the repository root::

    .venv/bin/python benchmarks/bfv.py                      # n=8192, SEAL's 218-bit chain
    .venv/bin/python benchmarks/bfv.py --quick              # fewer repeats (5)
    .venv/bin/python benchmarks/bfv.py --schemes bgv --backends cpu,python --out /tmp/bgv.json
    .venv/bin/python benchmarks/bfv.py --quick --n 1024 --insecure   # a check of the script

**Parameters.** ``n=8192``, the ciphertext moduli of SEAL's default chain for that ring
(``CoeffModulus.BFVDefault(8192)``: primes of 43, 43, 44 and 44 bits, and a 44-bit special prime
for key switching, 218 bits in all, the HE standard's 128-bit bound), plain modulus
``t = 65537`` (a prime ``= 1 mod 2n``: batching, ``n`` slots in a 2 x ``n/2`` matrix). Ren gets
``Params(n, q_bits=(43, 43, 44, 44), p_bits=(44,), t=65537)`` and picks its own primes of those
sizes; SEAL its own (both are in the JSON). ``--n`` takes another ring with the same bit sizes
(below 8192 that is beyond the 128-bit bound: it needs ``--insecure``, which gives Ren
``insecure=True`` and SEAL ``sec_level_type.none``; a check of the script, not a figure to quote).

**Timings**, per scheme (``--schemes``, default ``bfv,bgv``), one thread (``REN_THREADS=1``;
SEAL's evaluator runs on one thread):

* ``<scheme>.multiply``: the product of two fresh ciphertexts, relinearized: Ren ``a * b``,
  SEAL ``evaluator.multiply`` then ``relinearize_inplace``;
* ``<scheme>.rotate_rows``: both rows of the slot matrix rotated left by one: Ren
  ``ct.rotate_rows(1)``, SEAL ``evaluator.rotate_rows(ct, 1, galois_keys)`` (the Galois key for
  step 1 made beforehand, as Ren's).

Ren is timed on each backend of ``--backends`` (default ``cpu``; ``python`` also runs, slowly;
``cpu`` needs a C compiler, else its rows are skipped with the reason) in two modes, as
``benchmarks/ckks.py`` times them: ``eager`` builds the lazy graph and realizes it at every call,
``jit`` wraps the same expression in ``ren.jit``, captures it once on other ciphertexts
(``capture_ms``) and then replays the plan on the timed inputs, each replay realized. SEAL's rows
are ``"backend": "seal"``, ``"mode": "eager"`` (it computes at each call). A figure is the median
and the minimum over ``--repeat`` runs (default 15, ``--quick`` 5) after a warm-up call, a run
being a loop of as many calls as take about 20 ms (one at least), divided by the number of calls,
with a garbage collection before each run (``benchmarks/_machine.py``). ``REN_CHECK``,
``REN_DEBUG``, ``REN_DUMP``, ``REN_VALIDATE``, ``REN_POISON``, ``REN_NO_PLAN`` and
``REN_JIT_GRAPH`` are switched off (``environment.given`` says what was set).

**Checks.** The slots are ``n`` integers drawn uniformly in ``[0, t)``. The result of the last
timed call (for ``jit``, a replay on inputs other than the capture's) is decrypted and compared,
every slot, with NumPy's integers: ``x * y mod t`` for the product, and for the rotation each row
of the ``2 x n/2`` matrix rolled by ``-1`` (SEAL's layout: slot ``j + 1`` of a row moves to slot
``j``). ``check`` is ``ok`` or ``MISMATCH``; a row that fails reports no time, and the script exits
with status 1.

**Noise budget**, in bits (the ``noise`` section): Ren's ``ctx.noise_budget(ct)`` and SEAL's
``decryptor.invariant_noise_budget(ct)`` of a fresh encryption (``fresh``) and of the product of two
fresh encryptions, relinearized (``multiply``), on the first Ren backend run; each Ren row has the
peer's figure beside it (``peer_bits``, ``ratio`` = Ren's bits over SEAL's, ``difference_bits``).
A noise row's ``check`` says whether that ciphertext decrypted right.

**Peer.** When ``import seal`` works (``pip install -e '.[peers]'``), SEAL is timed in the same run
on the same ring, bit sizes and plain modulus. Each Ren row gets ``peer`` (``"seal"``),
``peer_ms`` (the SEAL median of the same bench and params) and ``ratio`` (Ren's median over it:
below 1, Ren is faster). Without SEAL the Ren rows still run, their peer fields are ``null`` and
``note`` says why.

Output: a table on stdout and JSON (``--out``, default ``benchmarks/results/bfv.json``):
``results``, one row per (bench, backend, params, mode) starting with the five keys of
``benchmarks/run.py``'s rows (``bench``, ``backend``, ``params``, ``mode``, ``median_ms``), then
``threads``, ``min_ms``, ``first_ms``, ``times_ms``, ``number``, ``repeat``, ``check``, the peer
fields and, for ``jit``, ``capture_ms``, ``units`` and ``runner``; ``noise``, one row per (bench,
backend, params, stage) with ``bits``; ``params``, ``peer``, ``environment`` and ``machine``.
"""

from __future__ import annotations

import argparse
import os
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
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "bfv.json"

SCHEMES = ("bfv", "bgv")
BACKENDS = ("python", "cpu")
BENCHES = ("multiply", "rotate_rows")
STAGES = ("fresh", "multiply")
N = 8192
#: SEAL's CoeffModulus.BFVDefault(8192): four ciphertext primes and the special prime, 218 bits.
Q_BITS = (43, 43, 44, 44)
P_BITS = (44,)
T = 65537  # prime, = 1 mod 2n up to n = 32768: batching
REPEAT, QUICK_REPEAT = 15, 5

# Ren is imported in main(), after REN_THREADS is set.
ren: Any = None


def _import_ren() -> None:
    global ren
    os.environ["REN_THREADS"] = "1"
    import ren as _ren

    ren = _ren


def _scheme(name: str) -> Any:
    """``ren.schemes.bfv`` or ``ren.schemes.bgv``."""
    import importlib

    return importlib.import_module(f"ren.schemes.{name}")


# --------------------------------------------------------------------------------------------
# values and checks


def slots(seed: int, n: int, t: int = T) -> np.ndarray:
    """``n`` integers uniform in ``[0, t)``."""
    return np.random.default_rng(seed).integers(0, t, n, dtype=np.int64)


def rotate_rows(x: np.ndarray, steps: int = 1) -> np.ndarray:
    """SEAL's ``rotate_rows(ct, steps)`` on the slots: each row of the ``2 x n/2`` matrix rolled
    left by ``steps``."""
    return np.roll(x.reshape(2, -1), -steps, axis=1).reshape(-1)


def expected(x: np.ndarray, y: np.ndarray, t: int = T) -> dict[str, np.ndarray]:
    return {"multiply": x * y % t, "rotate_rows": rotate_rows(x)}


def check(decrypt: Callable[[Any], Any], ct: Any, want: np.ndarray, t: int = T) -> str:
    """``ok`` when every slot of ``decrypt(ct)`` equals ``want`` mod ``t``, else ``MISMATCH``
    (a decryption that raises, Ren's ``NoiseBudgetExhausted`` say, included)."""
    try:
        got = np.mod(np.asarray(decrypt(ct), dtype=np.int64).reshape(-1), t)
    except Exception:  # a failed decryption is a wrong result here
        return "MISMATCH"
    return "ok" if got.shape == want.shape and np.array_equal(got, want) else "MISMATCH"


def params_label(n: int, insecure: bool) -> str:
    return f"n={n} {sum(Q_BITS + P_BITS)}-bit t={T}" + (" insecure" if insecure else "")


def _row(
    scheme: str,
    bench: str,
    backend: str,
    params: str,
    mode: str,
    stats: dict[str, Any],
    checked: str,
    **extra: Any,
) -> dict[str, Any]:
    """One result in ``run.py``'s shape: a time only when the check passed."""
    ok = checked == "ok"
    return {
        "bench": f"{scheme}.{bench}",
        "backend": backend,
        "params": params,
        "mode": mode,
        "median_ms": stats["median_s"] * 1e3 if ok else None,
        "threads": 1,
        "min_ms": stats["min_s"] * 1e3 if ok else None,
        "first_ms": stats["first_s"] * 1e3 if ok else None,
        "times_ms": [t * 1e3 for t in stats["times_s"]] if ok else None,
        "number": stats["number"],
        "repeat": len(stats["times_s"]),
        "check": checked,
        **extra,
    }


def _noise_row(
    scheme: str, backend: str, params: str, stage: str, bits: int, checked: str
) -> dict[str, Any]:
    return {
        "bench": f"{scheme}.noise_budget",
        "backend": backend,
        "params": params,
        "stage": stage,
        "bits": int(bits),
        "check": checked,
    }


# --------------------------------------------------------------------------------------------
# Ren


def ren_params(scheme: str, n: int, insecure: bool) -> Any:
    kwargs: dict[str, Any] = {"n": n, "q_bits": Q_BITS, "p_bits": P_BITS, "t": T}
    if insecure:
        kwargs["insecure"] = True
    return _scheme(scheme).Params(**kwargs)


def bench_ren(
    scheme: str, backend: str, n: int, insecure: bool, repeat: int, noise: bool
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    mod = _scheme(scheme)
    params = ren_params(scheme, n, insecure)
    label = params_label(n, insecure)
    x, y, z = (slots(seed, n) for seed in (7, 8, 9))
    want = expected(x, y)
    rows, noise_rows = [], []
    with mod.Context(params, seed=1, device=backend) as ctx:
        cx, cy, cz = (mod.encrypt(v).realize() for v in (x, y, z))
        cx.rotate_rows(1)  # makes the Galois key for step 1 here, not in the first timed call
        ops: dict[str, tuple[Callable[..., Any], tuple, tuple]] = {
            # bench -> (function, timed inputs, capture inputs)
            "multiply": (lambda a, b: a * b, (cx, cy), (cz, cy)),
            "rotate_rows": (lambda a: a.rotate_rows(1), (cx,), (cz,)),
        }
        for bench, (fn, args, capture_args) in ops.items():
            stats, out = measure(lambda fn=fn, args=args: fn(*args).realize(), repeat)
            checked = check(mod.decrypt, out, want[bench])
            rows.append(_row(scheme, bench, backend, label, "eager", stats, checked))

            jitted = ren.jit(fn)
            jitted(*capture_args)  # the capture, on other inputs: a replay that does not
            capture_s = jitted.last.capture_s  # compute would leave the capture's values
            stats, out = measure(lambda j=jitted, args=args: j(*args).realize(), repeat)
            extra = {"capture_ms": capture_s * 1e3, "units": len(jitted.last.units)}
            extra["runner"] = jitted.last.runner_kind
            checked = check(mod.decrypt, out, want[bench])
            rows.append(_row(scheme, bench, backend, label, "jit", stats, checked, **extra))

        if noise:
            product = (cx * cy).realize()
            for stage, ct, values in (("fresh", cx, x), ("multiply", product, want["multiply"])):
                checked = check(mod.decrypt, ct, values)
                bits = ctx.noise_budget(ct)
                noise_rows.append(_noise_row(scheme, backend, label, stage, bits, checked))
    return rows, noise_rows


def ren_info(scheme: str, n: int, insecure: bool) -> dict[str, Any]:
    p = ren_params(scheme, n, insecure)
    info: dict[str, Any] = {"n": n, "q_bits": list(Q_BITS), "p_bits": list(P_BITS), "t": T}
    info["insecure"] = insecure
    for key in ("q_moduli", "p_moduli"):
        if hasattr(p, key):
            info[key] = [str(q) for q in getattr(p, key)]
    if hasattr(p, "log2_qp"):
        info["log2_qp"] = p.log2_qp
    return info


# --------------------------------------------------------------------------------------------
# the peer: Microsoft SEAL's Python bindings (PyPI seal-python)


class Seal:
    """SEAL's BFV or BGV at ring ``n``: keys (relinearization, Galois for step 1), batch encoder,
    encryptor (public key), decryptor, evaluator."""

    def __init__(self, scheme: str, n: int, insecure: bool):
        import seal

        self.seal, self.n = seal, n
        parms = seal.EncryptionParameters(getattr(seal.scheme_type, scheme))
        parms.set_poly_modulus_degree(n)
        if n == N and not insecure:  # SEAL's own default chain, the one these bit sizes copy
            chain = seal.CoeffModulus.BFVDefault(n)
        else:
            chain = seal.CoeffModulus.Create(n, [*Q_BITS, *P_BITS])
        parms.set_coeff_modulus(chain)
        parms.set_plain_modulus(T)
        level = seal.sec_level_type.none if insecure else seal.sec_level_type.tc128
        self.context = seal.SEALContext(parms, True, level)
        if not self.context.parameters_set():
            raise ValueError(
                f"SEAL rejects {scheme} n={n}: {self.context.parameter_error_message()}"
            )
        self.moduli = [m.value() for m in parms.coeff_modulus()]
        bits = [m.bit_count() for m in parms.coeff_modulus()]
        if bits != [*Q_BITS, *P_BITS]:
            raise ValueError(f"SEAL's chain has bit sizes {bits}, not {[*Q_BITS, *P_BITS]}")
        self.encoder = seal.BatchEncoder(self.context)
        self.evaluator = seal.Evaluator(self.context)
        kg = seal.KeyGenerator(self.context)
        self.relin = kg.create_relin_keys()
        self.galois = seal.GaloisKeys()
        kg.create_galois_keys([1], self.galois)
        self.encryptor = seal.Encryptor(self.context, kg.create_public_key())
        self.decryptor = seal.Decryptor(self.context, kg.secret_key())

    def encrypt(self, values: np.ndarray) -> Any:
        return self.encryptor.encrypt(self.encoder.encode(values.astype(np.uint64)))

    def decrypt(self, ct: Any) -> np.ndarray:
        return np.asarray(self.encoder.decode(self.decryptor.decrypt(ct)))

    def multiply(self, a: Any, b: Any) -> Any:
        out = self.evaluator.multiply(a, b)
        self.evaluator.relinearize_inplace(out, self.relin)
        return out

    def rotate_rows(self, a: Any) -> Any:
        return self.evaluator.rotate_rows(a, 1, self.galois)

    def noise_budget(self, ct: Any) -> int:
        return int(self.decryptor.invariant_noise_budget(ct))


def bench_seal(
    scheme: str, n: int, insecure: bool, repeat: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    s = Seal(scheme, n, insecure)
    label = params_label(n, insecure)
    x, y = slots(7, n), slots(8, n)
    want = expected(x, y)
    cx, cy = s.encrypt(x), s.encrypt(y)
    rows = []
    ops = {"multiply": lambda: s.multiply(cx, cy), "rotate_rows": lambda: s.rotate_rows(cx)}
    for bench, call in ops.items():
        stats, out = measure(call, repeat)
        checked = check(s.decrypt, out, want[bench])
        rows.append(_row(scheme, bench, "seal", label, "eager", stats, checked))
    product = s.multiply(cx, cy)
    noise_rows = [
        _noise_row(scheme, "seal", label, stage, s.noise_budget(ct), check(s.decrypt, ct, values))
        for stage, ct, values in (("fresh", cx, x), ("multiply", product, want["multiply"]))
    ]
    info = {
        "coeff_moduli": [str(q) for q in s.moduli],
        "sec_level": "none" if insecure else "tc128",
    }
    return rows, noise_rows, info


# --------------------------------------------------------------------------------------------
# reporting


def add_peers(rows: list[dict[str, Any]], noise: list[dict[str, Any]], note: str | None) -> None:
    """The peer's figure beside each Ren row: ``peer``, ``peer_ms`` (``peer_bits``) and ``ratio``
    (Ren's over SEAL's); ``null`` with a ``note`` where SEAL was not timed."""
    for group, key in ((rows, "median_ms"), (noise, "bits")):
        peer_key = "peer_ms" if key == "median_ms" else "peer_bits"

        def ident(r: dict[str, Any]) -> tuple:
            return (r["bench"], r["params"], r.get("stage"))

        theirs = {ident(r): r for r in group if r["backend"] == "seal"}
        for r in group:
            if r["backend"] == "seal":
                continue
            other = theirs.get(ident(r))
            if other is None:
                r.update({"peer": None, peer_key: None, "ratio": None})
                if key == "bits":
                    r["difference_bits"] = None
                r["note"] = note or "no SEAL figure for this bench"
                continue
            r["peer"], r[peer_key] = "seal", other[key]
            ok = r[key] is not None and other[key]
            r["ratio"] = r[key] / other[key] if ok else None
            if key == "bits":
                r["difference_bits"] = r["bits"] - other["bits"]


def _ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}" if value < 1000 else f"{value:.0f}"


def _rule(head: str) -> str:
    return "|" + "|".join("-" * len(c) for c in head.split("|")[1:-1]) + "|"


def print_table(results: dict[str, Any]) -> None:
    env = results["environment"]
    given = ", ".join(f"{k}={v}" for k, v in env["given"].items() if v)
    print(
        f"BFV / BGV: ms per call, median and min of {results['repeat']} runs; "
        f"REN_THREADS={env['threads']['REN_THREADS']}"
    )
    print(f"{', '.join(SWITCHED_OFF)} off while timing{f' (given: {given})' if given else ''}")
    for scheme, p in results["params"].items():
        print(
            f"{scheme}: n={p['n']}, q_bits={tuple(p['q_bits'])}, p_bits={tuple(p['p_bits'])}, "
            f"t={p['t']}" + (" (insecure)" if p["insecure"] else "")
        )
    peer_info = results["peer"]
    if peer_info["available"]:
        print(
            f"peer: Microsoft SEAL {peer_info['version']} (seal-python {peer_info['package']}), "
            "one thread"
        )
    else:
        print(f"peer: SEAL not timed ({peer_info['reason']}; pip install seal-python)")
    print()
    width = max((len(r["params"]) for r in results["results"]), default=6)
    head = f"| {'bench':<15} | {'params':<{width}} | {'backend':<7} | {'mode':<5} |"
    head += f" {'median ms':>10} | {'min ms':>10} | {'Ren/SEAL':>8} | check    |"
    print(head)
    print(_rule(head))
    order = {b: i for i, b in enumerate(("seal", *BACKENDS))}
    rows = sorted(
        results["results"],
        key=lambda r: (
            SCHEMES.index(r["bench"].split(".")[0]),
            r["params"],
            BENCHES.index(r["bench"].split(".", 1)[1]),
            order[r["backend"]],
            r["mode"],
        ),
    )
    for r in rows:
        ratio = r.get("ratio")
        print(
            f"| {r['bench']:<15} | {r['params']:<{width}} | {r['backend']:<7} | {r['mode']:<5} |"
            f" {_ms(r['median_ms']):>10} | {_ms(r['min_ms']):>10} |"
            f" {'-' if ratio is None else f'{ratio:.2f}x':>8} | {r['check']:<8} |"
        )
    jit = [r for r in rows if r["mode"] == "jit"]
    if jit:
        print()
        print("jit: replays of a plan captured once on other inputs (capture ms, exec units):")
        for r in jit:
            print(
                f"  {r['bench']:<15} {r['backend']:<6} capture {r['capture_ms']:.1f} ms, "
                f"{r['units']} units, runner {r['runner']}"
            )
    for backend, reason in results["skipped"].items():
        print(f"{backend}: not timed ({reason})")

    if results["noise"]:
        print()
        print("noise budget, bits (Ren: ctx.noise_budget; SEAL: invariant_noise_budget):")
        head = f"| {'bench':<16} | {'stage':<8} | {'backend':<7} | {'Ren bits':>8} |"
        head += f" {'SEAL bits':>9} | {'Ren-SEAL':>8} | check    |"
        print(head)
        print(_rule(head))
        seal_bits = {
            (r["bench"], r["stage"]): r for r in results["noise"] if r["backend"] == "seal"
        }
        ren_rows = [r for r in results["noise"] if r["backend"] != "seal"]
        shown = ren_rows or [{**r, "backend": "-", "bits": None} for r in seal_bits.values()]
        for r in shown:
            theirs = seal_bits.get((r["bench"], r["stage"]))
            diff = r.get("difference_bits")
            checks = {r["check"] if r["bits"] is not None else "ok"}
            checks |= {theirs["check"]} if theirs else set()
            print(
                f"| {r['bench']:<16} | {r['stage']:<8} | {r['backend']:<7} |"
                f" {'-' if r['bits'] is None else r['bits']:>8} |"
                f" {'-' if theirs is None else theirs['bits']:>9} |"
                f" {'-' if diff is None else f'{diff:+d}':>8} |"
                f" {'ok' if checks == {'ok'} else 'MISMATCH':<8} |"
            )
    print()
    m = results["machine"]
    print(machine_line(m))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/bfv.py", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--schemes",
        type=lambda t: names(t, SCHEMES, "--schemes"),
        default=list(SCHEMES),
        help="schemes to time (default bfv,bgv)",
    )
    parser.add_argument(
        "--backends",
        type=lambda t: names(t, BACKENDS, "--backends"),
        default=["cpu"],
        help="Ren backends (default cpu)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    parser.add_argument(
        "--repeat",
        type=int,
        default=None,
        help=f"timed runs per figure ({REPEAT}; --quick: {QUICK_REPEAT})",
    )
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_REPEAT} runs per figure")
    parser.add_argument("--n", type=int, default=N, help=f"ring degree (default {N})")
    parser.add_argument(
        "--insecure",
        action="store_true",
        help="allow a ring beyond the 128-bit bound (Ren insecure=True, SEAL sec_level none)",
    )
    parser.add_argument("--no-peer", action="store_true", help="do not time SEAL")
    args = parser.parse_args(argv)
    repeat = args.repeat if args.repeat is not None else QUICK_REPEAT if args.quick else REPEAT
    if repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.n < 2 * len(Q_BITS) or args.n & (args.n - 1) or (T - 1) % (2 * args.n):
        parser.error(f"--n must be a power of two with t={T} = 1 mod 2n (up to 32768)")
    if args.n < N and not args.insecure:
        parser.error(
            f"--n {args.n} with 218 bits of moduli is beyond the 128-bit bound: add --insecure"
        )

    _import_ren()
    skipped: dict[str, str] = {}
    backends = list(args.backends)
    if "cpu" in backends and (reason := cpu_missing()):
        skipped["cpu"] = reason
        backends.remove("cpu")
    if args.no_peer:
        peer_info: dict[str, Any] = {"name": "seal", "available": False, "reason": "--no-peer"}
    else:
        peer_info = peer("seal", "seal-python")
    note = None if peer_info["available"] else f"SEAL not timed: {peer_info['reason']}"

    rows: list[dict[str, Any]] = []
    noise: list[dict[str, Any]] = []
    params: dict[str, Any] = {}
    for scheme in args.schemes:
        try:
            params[scheme] = ren_info(scheme, args.n, args.insecure)
            ren_backends = backends
        except ImportError as e:  # Ren without the scheme: the peer alone
            skipped[f"ren.{scheme}"] = f"import ren.schemes.{scheme}: {e}"
            params[scheme] = {"n": args.n, "q_bits": list(Q_BITS), "p_bits": list(P_BITS)}
            params[scheme] |= {"t": T, "insecure": args.insecure}
            ren_backends = []
        if peer_info["available"]:
            seal_rows, seal_noise, info = bench_seal(scheme, args.n, args.insecure, repeat)
            rows += seal_rows
            noise += seal_noise
            params[scheme]["seal"] = info
        for i, backend in enumerate(ren_backends):
            ren_rows, ren_noise = bench_ren(
                scheme, backend, args.n, args.insecure, repeat, noise=i == 0
            )
            rows += ren_rows
            noise += ren_noise
    add_peers(rows, noise, note)

    results = {
        "benchmark": "bfv",
        "quick": args.quick,
        "repeat": repeat,
        "schemes": args.schemes,
        "environment": {
            "off_while_timing": list(SWITCHED_OFF),
            "given": SWITCHED_OFF,
            "threads": {v: os.environ.get(v) for v in ("REN_THREADS", "OMP_NUM_THREADS")},
        },
        "machine": machine(),
        "params": params,
        "backends": backends,
        "skipped": skipped,
        "peer": peer_info,
        "results": rows,
        "noise": noise,
    }
    print_table(results)
    write_results(results, args.out)
    failed = [r for r in rows + noise if r["check"] != "ok"]
    for r in failed:
        what = r.get("stage") or r["mode"]
        print(f"MISMATCH {r['bench']} {r['backend']} {r['params']} {what}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
