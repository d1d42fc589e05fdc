"""Benchmark: HEIR's example programs lowered by heir-opt and run on Ren, against NumPy.

Run from the repository root::

    .venv/bin/python benchmarks/heir_examples.py --quick          # the small ones, one run each
    .venv/bin/python benchmarks/heir_examples.py --heir PATH      # every source in HEIR's tree
    .venv/bin/python benchmarks/heir_examples.py --only dot_product_8f,binops --schemes bgv

The sources: by default the copies in ``tests/interop/heir_examples/`` (those that lower, the
paths of HEIR's ``tests/Examples``); with ``--heir PATH`` (a HEIR checkout or a git directory of
one, read at ``HEAD``) every ``.mlir`` under its ``tests/Examples`` folders for the CKKS, BGV and
BFV backends (``FOLDERS``), those that do not lower included, with heir-opt's reason.

For each example and scheme (``--schemes``, default ``ckks,bgv``), heir-opt lowers the source
with no option beyond the pipeline's (``ren.interop.heir.lower``: ``--mlir-to-ckks``, or
``--annotate-module=backend=lattigo scheme=bgv --mlir-to-bgv``), timed (``lower_ms``). ``ops``
counts the entry function's ops by name, the functions it calls included at each call, a static
count: an op inside a loop counts once (``loops`` says how many loops are left; HEIR unrolls
most); ``ops_run`` counts the scheme ops one run executes (on the cleartext run, loops and all).
Ren (``ren.interop.heir.load``, seed 1, the ``cpu`` device on one thread, the debug switches off)
runs it on the arguments of ``heir_references`` (seed 0):

* ``first_ms``: the first whole call (keys, encryption, kernels built, the function, decryption);
* ``median_ms`` (mode ``eager``): ``program.eval`` on the encrypted arguments, realized, over
  ``--repeat`` runs;
* ``jit``: ``program.eval`` under ``ren.jit`` (the encrypted arguments passed, the plain ones
  closed over, the encryptions of zero the entry takes made before each call, outside the
  capture, as ``program.jit()`` does), captured once (``capture_ms``), then replayed
  (``median_ms``), and checked as the eager result; or the error Ren gave.

The decrypted result is checked against the example's NumPy reference (``heir_references``):
CKKS as ``check_bits``, ``-log2(max |got - ref| / max(1, max |ref|))`` (``abs_bits`` beside it,
``ckks.precision_bits``: the absolute figure ``circuits.py`` reports), at least ``MIN_BITS``;
BGV and BFV exactly, ``mismatches`` the count of elements that differ from the reference wrapped
to the result's integer type. ``check`` is ``ok``, ``FAIL`` (too few bits), ``MISMATCH``,
``ERROR`` (Ren raised: ``error``), ``not lowered`` (``reason``) or ``no reference``.
``cleartext`` is the same check of ``program.cleartext`` (the module on plain slot vectors): a
result wrong there too is the module's meaning as Ren reads it, not the encryption's noise.

``--quick`` leaves out the examples marked ``heavy`` (a large ring or minutes of the client's
packing loops; ``--skip-heavy`` does too in a full run) and runs once. Output: a table on stdout
and JSON (``--out``, default ``benchmarks/results/heir_examples.json``), one row per (example,
scheme) in the shape of ``benchmarks/run.py`` (``bench`` ``heir.<example>``). The script exits
with status 1 when a result that ran is wrong or Ren raised.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from _machine import cpu_missing, machine, names, switch_off, write_results
from heir_references import BY_NAME, EXAMPLES, Example, wrap

SWITCHED_OFF = switch_off()

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "heir_examples.json"
COPIES = ROOT / "tests" / "interop" / "heir_examples"
#: HEIR's example folders for the CKKS, BGV and BFV backends (the others are CGGI's: tfhe, jaxite).
FOLDERS = ("common", "lattigo", "openfhe", "orion", "dacapo", "plaintext")
SCHEMES = ("ckks", "bgv", "bfv")
MIN_BITS = 15.0
#: ops of a lowered module's scheme and client dialects, printed in the table.
SCHEME_DIALECTS = ("ckks.", "bgv.", "bfv.", "lwe.", "mgmt.", "tensor_ext.")


def sources(heir: Path | None) -> dict[str, str]:
    """``{path under tests/Examples: text}``: the copies, or every source of HEIR's tree."""
    if heir is None:
        return {
            p.relative_to(COPIES).as_posix(): p.read_text() for p in sorted(COPIES.rglob("*.mlir"))
        }
    tree = heir / "tests" / "Examples"
    if tree.is_dir():
        found = sorted(p for f in FOLDERS for p in (tree / f).rglob("*.mlir"))
        return {p.relative_to(tree).as_posix(): p.read_text() for p in found}

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(heir), *args], check=True, capture_output=True,
                              text=True).stdout  # fmt: skip

    listed = git("ls-tree", "-r", "--name-only", "HEAD", *(f"tests/Examples/{f}" for f in FOLDERS))
    paths = [p for p in listed.split() if p.endswith(".mlir")]
    return {p.removeprefix("tests/Examples/"): git("show", f"HEAD:{p}") for p in paths}


def op_counts(program: Any) -> tuple[dict[str, int], int]:
    """The entry function's ops by name (callees at each call, loops' bodies once) and loops."""
    counts: Counter[str] = Counter()
    stack = [program.functions[program.entry]]
    while stack:
        fn = stack.pop()
        for op in list(fn.walk())[1:]:
            counts[op.name] += 1
            callee = op.attr("callee")
            if op.name == "func.call" and getattr(callee, "name", None) in program.functions:
                stack.append(program.functions[callee.name])
    loops = sum(n for name, n in counts.items() if name in ("scf.for", "affine.for"))
    return dict(sorted(counts.items())), loops


def why_not(text: str, scheme: str) -> str:
    """heir-opt's first error on ``text`` (its whole message, which the library cuts to its end)."""
    from ren.interop.heir.api import SCHEMES as FLAGS
    from ren.interop.heir.tools import find_heir_opt

    done = subprocess.run([str(find_heir_opt()), *FLAGS[scheme]], input=text, text=True,
                          capture_output=True, timeout=600, check=False)  # fmt: skip
    for ln in done.stderr.splitlines():
        if "Unable to find backend attribute" in ln:  # printed as an error, yet not fatal
            continue
        if "error: " in ln or ln.startswith("LLVM ERROR"):
            return ln.split("error: ", 1)[-1].strip()[:200]
    crashed = "PLEASE submit a bug report" in done.stderr
    return "heir-opt crashed (a stack dump)" if crashed else f"exit status {done.returncode}"


def check(example: Example, scheme: str, got: Any, want: np.ndarray) -> dict[str, Any]:
    """The result against the reference: CKKS in bits, BGV and BFV exactly."""
    got = np.asarray(got, dtype=np.float64)
    if got.size != want.size:
        return {
            "check": "SHAPE",
            "shape": list(got.shape),
            "reason": f"{got.shape}, not {want.shape}",
        }
    got = got.reshape(want.shape)
    if scheme != "ckks":
        bad = int(np.count_nonzero(wrap(got, example.integer or 64) != want))
        return {"mismatches": bad, "check": "ok" if bad == 0 else "MISMATCH"}
    err = float(np.max(np.abs(got - want))) if want.size else 0.0
    peak = max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
    bits = math.inf if err == 0 else -math.log2(err / peak)
    abs_bits = math.inf if err == 0 else -math.log2(err)
    return {"check_bits": bits, "abs_bits": abs_bits, "max_error": err,
            "check": "ok" if bits >= MIN_BITS else "FAIL"}  # fmt: skip


def _realize(result: Any) -> None:
    import ren

    for enc in result if isinstance(result, tuple) else (result,):
        for ct in getattr(enc, "values", ()):
            if hasattr(ct, "parts"):  # a result the entry computed in the clear stays as it is
                ren.realize(*ct.parts)


def run_one(example: Example, scheme: str, text: str, repeat: int, jit: bool) -> dict[str, Any]:
    """Lower, count, run and check one example under one scheme: its row's figures."""
    from ren.interop import heir

    row: dict[str, Any] = {"lowered": False}
    start = time.perf_counter()
    try:
        lowered = heir.lower(text, scheme)
    except heir.MlirError:
        return row | {"check": "not lowered", "reason": why_not(text, scheme)}
    row |= {"lowered": True, "lower_ms": (time.perf_counter() - start) * 1e3}
    try:
        program = heir.load(heir.parse(lowered), seed=1)
        row["ops"], row["loops"] = op_counts(program)
        p = program.params
        row["params"] = f"{scheme} n={p.n} L={len(p.q_moduli)}"
        args = example.arguments(0)
        want = example.expected(text, *args)
        trace: list[Any] = []
        clear = program.run_clear(list(args), trace)
        row["ops_run"] = dict(sorted(Counter(op.name for op, _ in trace).items()))
        row["cleartext"] = check(example, scheme, clear, want)
        start = time.perf_counter()
        program(*args)
        row["first_ms"] = (time.perf_counter() - start) * 1e3
        inputs = [
            program.encrypt(name, a) if i in program.encrypts else a
            for i, (name, a) in enumerate(zip(program.arg_names, args, strict=True))
        ]
        times, out = [], None
        for _ in range(repeat):
            start = time.perf_counter()
            out = program.eval(*inputs)
            _realize(out)
            times.append((time.perf_counter() - start) * 1e3)
        row |= {"median_ms": statistics.median(times), "min_ms": min(times), "times_ms": times}
        row |= check(example, scheme, _result(program, out), want)
        if jit and program.encrypts:  # with nothing encrypted there is nothing to capture
            row["jit"] = _jit(program, inputs, repeat, example, scheme, want)
    except Exception as e:  # a row says what Ren could not do; the next example still runs
        row |= {"check": "ERROR", "error": f"{type(e).__name__}: {str(e)[:300]}"}
    return row


def _result(program: Any, out: Any) -> Any:
    """``eval``'s result decrypted; a result the entry computed in the clear, as it is."""
    got = program.decrypt_result(out)
    return got.value() if hasattr(got, "value") else got


def _jit(program: Any, inputs: list[Any], repeat: int, example: Example, scheme: str,
         want: np.ndarray) -> dict[str, Any]:  # fmt: skip
    """``program.eval`` under ``ren.jit``: the encrypted arguments its inputs, the plain ones
    closed over (a plan is captured for those values; an array is no jit cache key)."""
    import ren

    secret = sorted(program.encrypts)

    def server(encrypted: tuple[Any, ...], zeros: tuple[Any, ...]) -> Any:
        args = list(inputs)
        for i, e in zip(secret, encrypted, strict=True):
            args[i] = e
        return program.eval(*args, zeros=zeros)

    try:
        jitted = ren.jit(server)

        def run(*given: Any) -> Any:  # the zeros made outside the capture, as program.jit() does
            return jitted(given, program.encrypt_zeros())

        given = [inputs[i] for i in secret]
        start = time.perf_counter()
        _realize(run(*given))
        capture = (time.perf_counter() - start) * 1e3
        times, out = [], None
        for _ in range(repeat):
            start = time.perf_counter()
            out = run(*given)
            _realize(out)
            times.append((time.perf_counter() - start) * 1e3)
        got = check(example, scheme, _result(program, out), want)
        return {"capture_ms": capture, "median_ms": statistics.median(times), **got}
    except Exception as e:
        return {"check": "ERROR", "error": f"{type(e).__name__}: {str(e)[:300]}"}


def rows(texts: dict[str, str], schemes: list[str], only: list[str] | None, quick: bool,
         skip_heavy: bool, repeat: int, jit: bool) -> list[dict[str, Any]]:  # fmt: skip
    by_path = {e.path: e for e in EXAMPLES}
    out = []
    for path, text in texts.items():
        example = by_path.get(path)
        name = example.name if example else path.removesuffix(".mlir").replace("/", ".")
        if only and name not in only:
            continue
        for scheme in schemes:
            row = {"bench": f"heir.{name}", "backend": "cpu", "params": scheme, "mode": "eager",
                   "median_ms": None, "threads": 1, "example": name, "path": path,
                   "scheme": scheme}  # fmt: skip
            if example and example.heavy:
                row["heavy"] = example.heavy
            if example and example.heavy and (quick or skip_heavy):
                row |= {"check": "skipped", "reason": f"heavy: {example.heavy}"}
            elif example is None:
                row |= run_one(Example(name, path, lambda c: None, lambda r: ()), scheme, text, 0,
                               False)  # fmt: skip
                if row["lowered"]:
                    row["check"] = "no reference"
            else:
                row |= run_one(example, scheme, text, repeat, jit)
            out.append(row)
            print(line(row), flush=True)
    return out


def _scheme_ops(ops: dict[str, int] | None) -> str:
    shown = {k: v for k, v in (ops or {}).items() if k.startswith(SCHEME_DIALECTS)}
    return ", ".join(f"{k} {v}" for k, v in shown.items()) or "-"


def line(r: dict[str, Any]) -> str:
    """One row of the table."""
    ms = "-" if r.get("median_ms") is None else f"{r['median_ms']:.0f}"
    first = "-" if r.get("first_ms") is None else f"{r['first_ms']:.0f}"
    jit = r.get("jit", {}).get("median_ms")
    jit_ms = "-" if jit is None else f"{jit:.0f}"
    if "check_bits" in r:
        figure = f"{r['check_bits']:.1f} bits"
    elif "mismatches" in r:
        figure = f"{r['mismatches']} wrong"
    else:
        figure = r.get("reason") or r.get("error") or ""
    clear = r.get("cleartext", {}).get("check", "-")
    ops = _scheme_ops(r.get("ops"))
    return (f"| {r['example']} | {r['scheme']} | {r.get('params', '-')} | {first} | {ms} | "
            f"{jit_ms} | {r['check']} | {figure} | {clear} | {ops} |")  # fmt: skip


HEAD = (
    "| example | scheme | params | first ms | eager ms | jit ms | check | figure | cleartext "
    "| scheme ops (static) |\n|---|---|---|---|---|---|---|---|---|---|"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks/heir_examples.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    parser.add_argument("--quick", action="store_true", help="no heavy example, one run each")
    parser.add_argument("--only", default=None, help="examples to run, comma-separated")
    parser.add_argument("--heir", type=Path, default=None, help="a HEIR checkout: every source")
    parser.add_argument("--schemes", default="ckks,bgv", help="of ckks, bgv, bfv")
    parser.add_argument("--repeat", type=int, default=None, help="timed runs per figure (3)")
    parser.add_argument("--skip-heavy", action="store_true", help="leave the heavy ones out")
    parser.add_argument("--no-jit", action="store_true", help="eager figures only")
    args = parser.parse_args(argv)
    schemes = names(args.schemes, SCHEMES, "--schemes")
    only = [n.strip() for n in args.only.split(",")] if args.only else None
    texts = sources(args.heir)
    known = set(BY_NAME) | {p.removesuffix(".mlir").replace("/", ".") for p in texts}
    if only and (bad := [n for n in only if n not in known]):
        parser.error(f"--only names no example: {bad} (known: {sorted(BY_NAME)})")
    repeat = args.repeat or (1 if args.quick else 3)
    os.environ["REN_THREADS"] = "1"
    from ren.interop.heir.tools import find_heir_opt

    if find_heir_opt() is None:
        print("heir-opt not found: pip install -e .[heir] (or set REN_HEIR_OPT)")
        return 1
    skipped = {"cpu": why} if (why := cpu_missing()) else {}
    print(HEAD)
    start = time.perf_counter()
    results = rows(texts, schemes, only, args.quick, args.skip_heavy, repeat, not args.no_jit)
    data = {"benchmark": "heir_examples", "quick": args.quick, "repeat": repeat,
            "schemes": schemes, "sources": str(args.heir or COPIES.relative_to(ROOT)),
            "min_bits": MIN_BITS, "skipped": skipped, "machine": machine(),
            "environment": {"off_while_timing": list(SWITCHED_OFF), "given": SWITCHED_OFF},
            "wall_s": time.perf_counter() - start, "results": results}  # fmt: skip
    write_results(data, args.out)
    wrong = ("FAIL", "MISMATCH", "SHAPE", "ERROR")
    bad = [r for r in results if r["check"] in wrong or r.get("jit", {}).get("check") in wrong]
    for r in bad:
        jit = r.get("jit", {}).get("check", "-")
        print(f"{r['check']} (jit {jit}) {r['example']} {r['scheme']}: {r.get('error', '')}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
