"""Benchmark: CKKS bootstrapping (``ckks.bootstrap``), Ren beside OpenFHE's ``EvalBootstrap``.

Run from the repository root::

    .venv/bin/python benchmarks/bootstrap.py --out benchmarks/figures/bootstrap.json  # n=4096
    .venv/bin/python benchmarks/bootstrap.py --n16 --out ...   # and n=65536: 30 min, ~15 GB
    .venv/bin/python benchmarks/bootstrap.py --quick           # boot-toy (n=64), no peer
    .venv/bin/python benchmarks/bootstrap.py --precise --out ...  # iterated: boot-n12-precise

**Ren**, on the ``cpu`` device (the python device when no C compiler is found) and one thread
(``REN_THREADS=1``, ``OMP_NUM_THREADS=1``), with ``REN_CHECK`` and the other debug switches off,
for each preset (``ckks.Params.preset``: ``boot-n12``, with ``--n16`` ``boot-n16`` too;
``--quick``: ``boot-toy`` alone) in a process of its own, so that each has its own peak memory:

* ``ckks.bootstrap_keys``: ``ctx.keygen()`` (secret, public and relinearization keys,
  ``keygen_ms``), the rotation, conjugation and encapsulation keys of the preset's plan
  (``switch_keys_ms``), then ``ctx.bootstrap_keys()``, which finds them made and encodes the
  transforms' plaintexts (``encode_ms``); ``median_ms`` is the sum (one run). The row records
  the preset as it was run: ``q_bits``, ``p_bits``, ``dnum`` and ``config`` (its
  ``BootstrapConfig``). ``key_bytes`` is the
  words every key holds in memory (public key, relinearization, rotation and conjugation keys,
  and the two encapsulation keys: ``n * limbs * word`` bytes per polynomial); at ``n <= 4096``
  ``serialized_bytes`` is ``len(ctx.evaluation_keys().to_bytes())`` too (the encapsulation keys
  are not in that format).
* ``ckks.bootstrap``, ``eager``: ``ckks.bootstrap(ct).realize()`` on a ciphertext at level 0:
  the first call (``first_ms``: building, scheduling, compiling the kernels the compile cache
  does not hold, ``compiled`` says how many, and running), then ``--repeat`` calls (``median_ms``,
  ``min_ms``). One more call under an observer gives ``profile``: the kernels' seconds
  (``kernels_ms``) by stage of the bootstrap (``mod_raise``, ``coeff_to_slot``, ``eval_mod``,
  ``slot_to_coeff``) and by kind, and the scheduler's passes run uncached (``passes_ms``, as a
  first call runs them). The units then run one by one, each timed: on a busy machine the sum
  can exceed a warm call's time; the shares are the figure to read.
* ``ckks.bootstrap``, ``jit``: ``ren.jit(ckks.bootstrap)`` captured on another ciphertext
  (``capture_ms``), then ``--repeat`` replays (``median_ms``); ``units`` and ``runner``.

Every result is decrypted: ``check_bits`` is ``-log2`` of the largest error over all slots of the
real values, uniform in [-1, 1] (``numpy.random.default_rng(7)``), which must reach
``MIN_BITS``; ``predicted_bits`` (eager rows) is ``ckks.predicted_precision`` of the result, the
noise model's figure made before anything ran; ``level_out`` is the result's level.
``peak_rss_bytes`` is ``ru_maxrss`` at the end (the interpreter, keys, plaintexts, eager and jit
buffers), with the peak after the imports (``base_rss_bytes``), after the keys and after the
eager calls beside it.

**OpenFHE** (``peers/openfhe_bootstrap.py`` in its Python 3.10 environment, through
``openfhe_peer.find_python``; skipped with the reason when absent or with ``--quick``), in the
same run, one process per case, on the same values and ring dimension, all slots, following
OpenFHE's own example (``FLEXIBLEAUTO``, 59-bit scaling moduli, ``HEStd_NotSet``): level budget
(4, 4) with ``UNIFORM_TERNARY`` and with ``SPARSE_ENCAPSULATED`` (a sparse secret of weight 32
for ModRaise, as Ren's presets: the like-for-like row), with as many levels after as Ren's preset
leaves; at ``n=4096`` also budget (3, 3) (Ren's) and (4, 4) with 10 levels after (OpenFHE's
example). Its rows: ``ckks.bootstrap_keys`` (``EvalBootstrapSetup``, ``KeyGen``,
``EvalMultKeyGen``, ``EvalBootstrapKeyGen``) and ``ckks.bootstrap`` (``EvalBootstrap``).

**Iterated bootstrapping** (``--precise``): the presets ``boot-n12-precise`` (with ``--n16``,
``boot-n16-precise`` too), each bootstrap row twice, for ``ckks.bootstrap(ct)`` and
``ckks.bootstrap(ct, iterations=2)`` (``iterations`` in every row), on values at the preset's
scale (``2^53``); and OpenFHE's ``EvalBootstrap(ct, 2, precision)`` in the same run, level budget
(3, 3) (its iterative example's) with ``SPARSE_TERNARY``, ``UNIFORM_TERNARY`` and
``SPARSE_ENCAPSULATED``, and (4, 4) with ``SPARSE_TERNARY`` (at ``n=65536`` (3, 3) only, with
``SPARSE_ENCAPSULATED``, Ren's secret, and ``UNIFORM_TERNARY``), as many levels after as Ren's
iterated bootstrap leaves, each case timing one iteration and then two with the precision the
first measured (``peers/openfhe_bootstrap.py``). The eager rows' ``eager_rss_bytes`` is the
peak after that count's eager calls.

**Rounds** (``--precise --rounds R``): on a shared machine the load can change between Ren's
process and OpenFHE's, so one run does not settle which is faster. ``--rounds`` runs Ren's preset
and OpenFHE's like-for-like iterated case (``SPARSE_TERNARY``, budget (3, 3), its example's) one
after the other ``R`` times; ``rounds`` in the JSON lists each round's two-iteration times (Ren's
jitted replay, OpenFHE's ``EvalBootstrap(ct, 2, precision)``) and their ratio, and
``rounds_summary`` the medians: the ratio of one round is of two runs minutes apart, not hours.

Output: a Markdown table on stdout and JSON (``--out``): ``results`` (Ren's rows) and ``openfhe``
(the peer's), each ``{"bench", "backend", "params", "mode", "median_ms", ...}`` in the shape of
``benchmarks/run.py``; ``params`` is ``"n=4096 slots=2048"`` on both sides.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from _machine import cpu_missing, jit_replays, machine, switch_off, write_results

SWITCHED_OFF = switch_off()
os.environ["REN_THREADS"] = "1"  # before Ren is imported
os.environ["OMP_NUM_THREADS"] = "1"

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "bootstrap.json"
PEER_SCRIPT = ROOT / "benchmarks" / "peers" / "openfhe_bootstrap.py"
#: a bootstrap keeps about 20 bits with the presets; a misuse (a wrong key, a wrong scale) about 0.
MIN_BITS = 10.0
SEED, OTHER_SEED = 7, 8
#: preset -> (--repeat default, peer timeout in seconds)
PRESETS = {
    "boot-toy": (3, 0),
    "boot-n12": (5, 900),
    "boot-n16": (2, 3600),
    "boot-n12-precise": (5, 900),
    "boot-n16-precise": (2, 5400),
}

ren: Any = None
ckks: Any = None


def _import_ren() -> None:
    global ren, ckks
    import ren as _ren
    from ren.schemes import ckks as _ckks

    ren, ckks = _ren, _ckks


def _rss() -> int:
    """This process's peak resident memory so far, in bytes (Linux: ``ru_maxrss`` is KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _params_name(params: Any) -> str:
    return f"n={params.n} slots={params.slots}"


# --------------------------------------------------------------------------------------------
# Ren, one preset in this process (--child)


def _poly_bytes(p: Any) -> int:
    ring = p.ring
    return ring.n * len(ring.moduli) * (8 if ring.dtype == "u64" else 4)


def _key_bytes(ctx: Any, h: int | None) -> dict[str, int]:
    """The words each kind of key holds, in bytes, and how many keys."""
    keys = ctx.evaluation_keys()
    galois = list(keys.galois.values())
    switch = [keys.relin, *galois, *(ctx.encapsulation_keys(h) if h else ())]
    words = sum(_poly_bytes(p) for p in keys.public)
    words += sum(_poly_bytes(p) for k in switch for pair in k.parts for p in pair)
    out = {"key_bytes": words, "switch_keys": len(switch), "galois_keys": len(galois)}
    if ctx.params.n <= 4096:
        out["serialized_bytes"] = len(keys.to_bytes())
    return out


class Profile:
    """Seconds of the kernels by bootstrap stage and by kind, and of the scheduler's passes.

    While an observer watches, the units run one by one and the passes run even when the schedule
    cache holds the graph: ``passes_ms`` is what scheduling costs uncached (a first call), and
    ``wall_ms`` is no warm call's time.
    """

    def __init__(self) -> None:
        self.stages: defaultdict[str, float] = defaultdict(float)
        self.kinds: defaultdict[str, float] = defaultdict(float)
        self.passes: defaultdict[str, float] = defaultdict(float)
        self.units: Counter[str] = Counter()

    def on_unit(self, unit: Any, seconds: float) -> None:
        region = unit.kernel.region
        stage = "other"
        if "bootstrap" in region:  # an iterated bootstrap's stages are one region further in
            rest = [r for r in region[region.index("bootstrap") + 1 :] if "iteration " not in r]
            stage = rest[0] if rest else "bootstrap (between stages)"
        self.stages[stage] += seconds
        self.kinds[unit.kernel.info.kind] += seconds
        self.units[stage] += 1

    def on_pass(self, step: int, name: str, sink: Any, previous: Any, ctx: Any) -> None:
        self.passes[name] += ctx.timings.get(name, 0.0)

    def summary(self, wall_s: float) -> dict[str, Any]:
        return {
            "wall_ms": wall_s * 1e3,
            "kernels_ms": sum(self.stages.values()) * 1e3,
            "passes_ms": sum(self.passes.values()) * 1e3,
            "units": sum(self.units.values()),
            "stages_ms": {k: v * 1e3 for k, v in sorted(self.stages.items())},
            "stage_units": dict(sorted(self.units.items())),
            "kinds_ms": {k: v * 1e3 for k, v in sorted(self.kinds.items())},
        }


def _compiled() -> int:
    """How many kernels the compile cache holds."""
    from ren.codegen.compiler import cache_dir

    directory = cache_dir()
    return len(list(directory.glob("*.so"))) if directory.is_dir() else 0


def preset_rows(
    name: str, device: str, repeat: int, iterations: tuple[int, ...] = (1,)
) -> list[dict[str, Any]]:
    """Ren's rows for one preset, measured in this process: the keys, then for each count of
    ``iterations`` an eager and a jitted bootstrap."""
    from ren.circuits.ckks.bootstrap import plan

    params = ckks.Params.preset(name)
    config = ckks.BootstrapConfig.for_params(params)
    h = config.sparse_secret
    x, y = (np.random.default_rng(s).uniform(-1, 1, params.slots) for s in (SEED, OTHER_SEED))
    common = {
        "preset": name,
        "n": params.n,
        "slots": params.slots,
        "level_budget": list(config.level_budget),
        "secret": f"sparse encapsulation h={h}" if h else "ternary (dense)",
        "threads": 1,
    }
    made = plan(params, config)
    base_rss = _rss()

    def bits(ct: Any) -> float:
        return float(ckks.precision_bits(np.real(ckks.decrypt(ct)), x))

    with ckks.Context(params, seed=1, device=device) as ctx:
        start = time.perf_counter()
        ctx.keygen()
        keygen_s = time.perf_counter() - start
        start = time.perf_counter()
        for k in made.rotations:
            ctx.rotation_key(k)
        ctx.galois_key(2 * params.n - 1)
        if h:
            ctx.encapsulation_keys(h)
        switch_s = time.perf_counter() - start
        start = time.perf_counter()
        ctx.bootstrap_keys(config, progress=False)
        encode_s = time.perf_counter() - start
        keys_rss = _rss()
        sizes = _key_bytes(ctx, h)
        keys_row = {
            "bench": "ckks.bootstrap_keys", "backend": device, "params": _params_name(params),
            "mode": "eager", "median_ms": (keygen_s + switch_s + encode_s) * 1e3,
            "keygen_ms": keygen_s * 1e3, "switch_keys_ms": switch_s * 1e3,
            "encode_ms": encode_s * 1e3, "rotations": len(made.rotations), **sizes,
            "q_bits": list(params.q_bits), "p_bits": list(params.p_bits), "dnum": params.dnum,
            "config": dataclasses.asdict(config),
            "key_bytes_counted": "words in memory: public key, relinearization, rotation, "
            "conjugation and encapsulation keys", **common,
        }  # fmt: skip

        ct = ckks.encrypt(x, level=0).realize()
        other = ckks.encrypt(y, level=0).realize()
        boots = []
        for its in iterations:
            boots += _bootstrap_rows(its, ct, other, device, repeat, bits, common)
    keys_row["eager_rss_bytes"] = boots[0]["eager_rss_bytes"]
    rss = {"peak_rss_bytes": _rss(), "keys_rss_bytes": keys_rss}
    rss["base_rss_bytes"] = base_rss
    return [{**r, **rss} for r in (keys_row, *boots)]


def _bootstrap_rows(
    its: int, ct: Any, other: Any, device: str, repeat: int, bits: Any, common: dict[str, Any]
) -> list[dict[str, Any]]:
    """The eager and the jitted row of ``ckks.bootstrap(ct, iterations=its)``."""
    from ren.engine.observe import observing

    params = ct.context.params

    def boot(c: Any) -> Any:
        return ckks.bootstrap(c, iterations=its)

    cached = _compiled()
    start = time.perf_counter()
    out = boot(ct).realize()
    first_s = time.perf_counter() - start
    compiled = _compiled() - cached
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = boot(ct).realize()
        times.append(time.perf_counter() - start)
    eager_bits, level_out = bits(out), out.level
    predicted = ckks.predicted_precision(out)  # the noise model's figure, beside the measure
    profile = Profile()
    with observing(profile):
        start = time.perf_counter()
        boot(ct).realize()
        profiled = profile.summary(time.perf_counter() - start)
    del out
    eager_rss = _rss()
    eager = {
        "bench": "ckks.bootstrap", "backend": device, "params": _params_name(params),
        "mode": "eager", **_figures(times), "first_ms": first_s * 1e3, "compiled": compiled,
        **_check(eager_bits), "predicted_bits": predicted, "level_out": level_out,
        "kernels": profiled["units"],
        "profile": profiled, "iterations": its, "eager_rss_bytes": eager_rss, **common,
    }  # fmt: skip
    capture_s, times, out, jitted = jit_replays(boot, ct, other, repeat)
    jit = {
        "bench": "ckks.bootstrap", "backend": device, "params": _params_name(params),
        "mode": "jit", **_figures(times), "capture_ms": capture_s * 1e3,
        "units": len(jitted.last.units), "runner": jitted.last.runner_kind,
        **_check(bits(out)), "level_out": out.level, "iterations": its,
        "eager_rss_bytes": eager_rss, **common,
    }  # fmt: skip
    return [eager, jit]


def _figures(times: list[float]) -> dict[str, Any]:
    return {
        "median_ms": statistics.median(times) * 1e3,
        "min_ms": min(times) * 1e3,
        "times_ms": [t * 1e3 for t in times],
        "repeat": len(times),
    }


def _check(bits: float) -> dict[str, Any]:
    return {"check": "ok" if bits >= MIN_BITS else "FAIL", "check_bits": bits}


# --------------------------------------------------------------------------------------------
# the driver: one process per preset and per peer case


def _child(name: str, device: str, repeat: int, tmp: Path) -> tuple[list[dict], str | None]:
    """Runs ``preset_rows`` in a new process; its rows, or none and why."""
    out = tmp / f"{name}.json"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", name, "--out", str(out)]
    cmd += ["--device", device, "--repeat", str(repeat)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    print(f"ren {name}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    if proc.returncode or not out.exists():
        return [], f"exit {proc.returncode}: {(proc.stdout + proc.stderr).strip()[-2000:]}"
    return json.loads(out.read_text(encoding="utf-8"))["rows"], None


def peer_cases(params: Any, levels_after: int, repeat: int) -> list[dict[str, Any]]:
    """OpenFHE's cases at ``params``'s ring: see the module's docstring."""
    base = {"n": params.n, "slots": params.slots, "levels_after": levels_after, "repeats": repeat}
    cases = [
        {**base, "level_budget": [4, 4], "secret": secret}
        for secret in ("UNIFORM_TERNARY", "SPARSE_ENCAPSULATED")
    ]
    if params.n <= 4096:  # cheap here: Ren's budget, and OpenFHE's example as it is
        cases += [
            {**base, "level_budget": [3, 3], "secret": secret}
            for secret in ("UNIFORM_TERNARY", "SPARSE_ENCAPSULATED")
        ]
        example = {"level_budget": [4, 4], "secret": "UNIFORM_TERNARY", "levels_after": 10}
        cases.append({**base, **example})
    return cases


def peer_cases_precise(params: Any, levels_after: int, repeat: int) -> list[dict[str, Any]]:
    """OpenFHE's iterated cases (module docstring), as many levels after as Ren's two
    iterations leave (``levels_after - 1``)."""
    base = {"n": params.n, "slots": params.slots, "levels_after": levels_after - 1}
    base |= {"repeats": repeat, "iterations": 2}
    if params.n > 4096:  # minutes each: the like-for-like secret (Ren's) and the standard's
        secrets: tuple[str, ...] = ("SPARSE_ENCAPSULATED", "UNIFORM_TERNARY")
    else:
        secrets = ("SPARSE_TERNARY", "UNIFORM_TERNARY", "SPARSE_ENCAPSULATED")
    cases = [{**base, "level_budget": [3, 3], "secret": secret} for secret in secrets]
    if params.n <= 4096:
        cases.append({**base, "level_budget": [4, 4], "secret": "SPARSE_TERNARY"})
    return cases


def run_peer(cases: list[dict], timeout: float, tmp: Path) -> tuple[list[dict], list[dict], dict]:
    """Each case in its own process (its own peak memory): rows, skipped cases, OpenFHE's info."""
    import openfhe_peer  # beside this script

    python = openfhe_peer.find_python()
    if python is None:
        why = openfhe_peer.skip_reason() or "OpenFHE peer unavailable"
        return [], [{"case": c, "reason": why} for c in cases], {}
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    rows, skipped, info = [], [], {}
    for i, case in enumerate(cases):
        config, out = tmp / f"peer-{i}.json", tmp / f"peer-{i}-out.json"
        config.write_text(json.dumps({"seed": SEED, "min_bits": MIN_BITS, "cases": [case]}))
        start = time.perf_counter()
        try:
            proc = subprocess.run([python, str(PEER_SCRIPT), str(config), str(out)], env=env,
                                  capture_output=True, text=True, timeout=timeout)  # fmt: skip
        except subprocess.TimeoutExpired:
            skipped.append({"case": case, "reason": f"ran past {timeout:g} s"})
            continue
        label = f"{case['n']} {case['secret']} {case['level_budget']}"
        print(f"openfhe {label}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
        if proc.returncode or not out.exists():
            tail = (proc.stdout + proc.stderr).strip()[-2000:]
            skipped.append({"case": case, "reason": f"exit {proc.returncode}: {tail}"})
            continue
        data = json.loads(out.read_text(encoding="utf-8"))
        rows += data["rows"]
        skipped += data["skipped"]
        info = {"openfhe": data["openfhe"], "machine": data["machine"], "threads": data["threads"]}
    return rows, skipped, info


#: OpenFHE's case ``--rounds`` repeats: its iterative example's, the sparse secret.
ROUND_CASE = {"level_budget": [3, 3], "secret": "SPARSE_TERNARY"}


def _two(rows: list[dict], **match: Any) -> dict | None:
    """The two-iteration bootstrap row of ``rows`` with the fields of ``match``, if any."""
    for r in rows:
        two = r["bench"] == "ckks.bootstrap" and r.get("iterations", 1) == 2
        if two and all(r.get(k) == v for k, v in match.items()):
            return r
    return None


def _rounds(
    name: str, device: str, repeat: int, count: int, ren_rows: list, peer_rows: list, tmp: Path
) -> list[dict[str, Any]]:
    """``count`` rounds of Ren's preset then OpenFHE's ``ROUND_CASE``: the first is the run's."""
    params = ckks.Params.preset(name)
    after = ckks.BootstrapConfig.for_params(params).levels_left(params)
    case = next(
        c for c in peer_cases_precise(params, after, repeat)
        if all(c[k] == v for k, v in ROUND_CASE.items())
    )  # fmt: skip
    out = []
    for i in range(count):
        if i:
            ren_rows, _ = _child(name, device, repeat, tmp)
            peer_rows, _, _ = run_peer([case], PRESETS[name][1], tmp)
        mine = _two(ren_rows, mode="jit")
        theirs = _two(peer_rows, **ROUND_CASE)
        if mine is None or theirs is None:
            continue
        ren_ms, peer_ms = mine["median_ms"], theirs["median_ms"]
        out.append({
            "preset": name, "round": i, "ren_jit_ms": ren_ms, "openfhe_ms": peer_ms,
            "ratio": ren_ms / peer_ms, "ren_bits": mine["check_bits"],
            "openfhe_bits": theirs["check_bits"], "loadavg": os.getloadavg(),
        })  # fmt: skip
    return out


def _rounds_summary(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Each preset's medians over its rounds."""
    out = {}
    for name in dict.fromkeys(r["preset"] for r in rounds):
        mine = [r for r in rounds if r["preset"] == name]
        out[name] = {
            key: statistics.median(r[key] for r in mine)
            for key in ("ren_jit_ms", "openfhe_ms", "ratio")
        } | {"rounds": len(mine), "ren_faster": sum(r["ratio"] < 1 for r in mine)}
    return out


def round_lines(rounds: list[dict[str, Any]]) -> list[str]:
    """The rounds as a table, then their medians."""
    lines = ["", "| preset | round | Ren jit s | OpenFHE sparse (3, 3) s | Ren / OpenFHE |"]
    lines.append("|---|---|---|---|---|")
    for r in rounds:
        lines.append(
            f"| {r['preset']} | {r['round']} | {r['ren_jit_ms'] / 1e3:.2f} | "
            f"{r['openfhe_ms'] / 1e3:.2f} | {r['ratio']:.2f} |"
        )
    for name, m in _rounds_summary(rounds).items():
        lines.append(
            f"| {name} | median of {m['rounds']} | {m['ren_jit_ms'] / 1e3:.2f} | "
            f"{m['openfhe_ms'] / 1e3:.2f} | {m['ratio']:.2f} |"
        )
    return lines


# --------------------------------------------------------------------------------------------
# the table


def _s(ms: float | None) -> str:
    return "-" if ms is None else f"{ms / 1e3:.2f}" if ms < 100e3 else f"{ms / 1e3:.0f}"


def _mb(b: int | None) -> str:
    return "-" if b is None else f"{b / 2**20:,.0f}"


def _gb(b: int | None) -> str:
    return "-" if b is None else f"{b / 2**30:.2f}"


def table(results: list[dict], peer: list[dict]) -> str:
    """One line per Ren preset and per OpenFHE case: keys, times, precision, memory."""
    head = (
        "| params | library | secret | budget | iterations | levels out | keys s | key MB | "
        "first s | bootstrap s | capture s | jit s | bits (absolute, vs NumPy) | peak RSS GB |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    by = {(r["preset"], r["bench"], r["mode"], r.get("iterations", 1)): r for r in results}
    for preset, its in dict.fromkeys(
        (r["preset"], r.get("iterations", 1)) for r in results if r["bench"] == "ckks.bootstrap"
    ):
        keys = by[preset, "ckks.bootstrap_keys", "eager", 1]
        eager, jit = (by[preset, "ckks.bootstrap", mode, its] for mode in ("eager", "jit"))
        lines.append(
            f"| {keys['params']} | Ren {keys['backend']} ({preset}) | {keys['secret']} | "
            f"{tuple(keys['level_budget'])} | {its} | {jit['level_out']} | "
            f"{_s(keys['median_ms'])} | {_mb(keys['key_bytes'])} | {_s(eager['first_ms'])} | "
            f"{_s(eager['median_ms'])} | {_s(jit['capture_ms'])} | {_s(jit['median_ms'])} | "
            f"{jit['check_bits']:.1f} | {_gb(jit['peak_rss_bytes'])} |"
        )
    cases: dict[tuple, dict[Any, dict]] = defaultdict(dict)
    for r in peer:
        case = r["params"], r["secret"], tuple(r["level_budget"]), r["depth"]
        cases[case][r["bench"], r.get("iterations", 1)] = r
    for (params, secret, budget, _), rows in cases.items():
        keys = rows["ckks.bootstrap_keys", 1]
        for (bench, its), boot in rows.items():
            if bench != "ckks.bootstrap":
                continue
            lines.append(
                f"| {params} | OpenFHE | {secret} | {budget} | {its} | {boot['levels_after']} | "
                f"{_s(keys['median_ms'])} | {_mb(keys['key_bytes'])} | {_s(boot['first_ms'])} | "
                f"{_s(boot['median_ms'])} | - | - | {boot['check_bits']:.1f} | "
                f"{_gb(boot['peak_rss_bytes'])} |"
            )
    return "\n".join(lines)


def profile_lines(results: list[dict]) -> list[str]:
    """Where one eager bootstrap of each preset spends its time (see ``Profile``)."""
    out = []
    by = {
        (r["preset"], r["mode"], r.get("iterations", 1)): r
        for r in results
        if r["bench"] == "ckks.bootstrap"
    }
    for (preset, mode, its), r in by.items():
        p = r.get("profile")
        if mode != "eager" or not p:
            continue
        jit = by.get((preset, "jit", its), {}).get("median_ms")
        preset = preset if its == 1 else f"{preset}, {its} iterations"
        stages = ", ".join(f"{k} {v / 1e3:.2f}" for k, v in p["stages_ms"].items())
        kinds = sorted(p["kinds_ms"].items(), key=lambda kv: -kv[1])
        out.append(
            f"{preset}: kernels {p['kernels_ms'] / 1e3:.2f} s ({p['units']} units) of an eager "
            f"call's {r['median_ms'] / 1e3:.2f} s (jit {_s(jit)} s); by stage (s): {stages}; "
            f"by kind (s): {', '.join(f'{k} {v / 1e3:.2f}' for k, v in kinds)}; the passes "
            f"uncached: {p['passes_ms'] / 1e3:.2f} s"
        )
    return out


# --------------------------------------------------------------------------------------------
# main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks/bootstrap.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    parser.add_argument("--quick", action="store_true", help="boot-toy alone, no peer")
    parser.add_argument("--n16", action="store_true", help="boot-n16 too (minutes, ~15 GB)")
    parser.add_argument("--no-peer", action="store_true", help="leave OpenFHE out")
    parser.add_argument(
        "--precise", action="store_true", help="iterated: boot-n12-precise, 1 and 2 iterations"
    )
    parser.add_argument("--repeat", type=int, default=None, help="timed calls after the first")
    parser.add_argument(
        "--rounds", type=int, default=1, help="--precise: Ren then OpenFHE's sparse case, R times"
    )
    parser.add_argument("--device", default="cpu", help="cpu (default) or python")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)  # one preset, here
    args = parser.parse_args(argv)
    if args.repeat is not None and args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.precise and args.quick:
        parser.error("--precise has no quick form: its smallest preset is n=4096")
    if (
        args.rounds < 1
        or (args.rounds > 1 and not args.precise)
        or (args.rounds > 1 and args.no_peer)
    ):
        parser.error("--rounds takes a count of at least 1, with --precise and the peer")
    _import_ren()
    if args.child is not None:
        repeat = args.repeat or PRESETS[args.child][0]
        its = (1, 2) if args.child.endswith("-precise") else (1,)
        rows = preset_rows(args.child, args.device, repeat, its)
        args.out.write_text(json.dumps({"rows": rows}), encoding="utf-8")
        return 0

    skipped: dict[str, Any] = {}
    device = args.device
    if device == "cpu" and (reason := cpu_missing()):
        skipped["cpu"] = reason
        device = "python"
    presets = ["boot-toy"] if args.quick else ["boot-n12"] + (["boot-n16"] if args.n16 else [])
    if args.precise:
        presets = [f"{name}-precise" for name in presets if name != "boot-toy"]
    start, load_before = time.perf_counter(), os.getloadavg()
    results: list[dict] = []
    peer: list[dict] = []
    peer_skipped: list[dict] = []
    info: dict[str, Any] = {}
    rounds: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ren-bootstrap-") as tmp:
        for name in presets:
            repeat = args.repeat or PRESETS[name][0]
            rows, why = _child(name, device, repeat, Path(tmp))
            if why:
                skipped[name] = why
            results += rows
            if args.quick or args.no_peer:
                continue
            params = ckks.Params.preset(name)
            after = ckks.BootstrapConfig.for_params(params).levels_left(params)
            cases = peer_cases_precise if args.precise else peer_cases
            got, lost, seen = run_peer(cases(params, after, repeat), PRESETS[name][1], Path(tmp))
            peer, peer_skipped, info = peer + got, peer_skipped + lost, seen or info
            if args.rounds > 1:
                rounds += _rounds(name, device, repeat, args.rounds, rows, got, Path(tmp))
    if args.quick or args.no_peer:
        skipped["openfhe"] = "--quick: no peer" if args.quick else "--no-peer"
    elif peer_skipped:
        skipped["openfhe"] = "; ".join(
            f"n={s['case']['n']} {s['case']['secret']} {s['case']['level_budget']}: {s['reason']}"
            for s in peer_skipped
        )

    print(table(results, peer))
    print("\n".join(profile_lines(results)))
    if rounds:
        print("\n".join(round_lines(rounds)))
    env = {"off_while_timing": list(SWITCHED_OFF), "given": SWITCHED_OFF}
    env["threads"] = {v: os.environ.get(v) for v in ("REN_THREADS", "OMP_NUM_THREADS")}
    data = {"benchmark": "bootstrap", "quick": args.quick, "n16": args.n16, "presets": presets}
    data |= {"precise": args.precise}
    data |= {"device": device, "skipped": skipped, "min_bits": MIN_BITS, "environment": env}
    data |= {"machine": {**machine(), "loadavg_before": load_before,
                        "loadavg_after": os.getloadavg()}}  # fmt: skip
    data |= {"wall_s": time.perf_counter() - start, "results": results, "openfhe": peer}
    data |= {"openfhe_info": info}
    if rounds:
        data |= {"rounds": rounds, "rounds_summary": _rounds_summary(rounds)}
    write_results(data, args.out)
    failed = [r for r in results + peer if r.get("check", "ok") != "ok"]
    for r in failed:
        print(f"FAIL {r['bench']} {r['backend']} {r['params']}: {r['check_bits']:.1f} bits")
    return 1 if failed or any(p in skipped for p in presets) else 0


if __name__ == "__main__":
    sys.exit(main())
