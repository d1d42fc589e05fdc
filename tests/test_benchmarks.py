"""The benchmark scripts run and write the JSON they promise (the figures are never checked)."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

TIMING_KEYS = {"median_s", "min_s", "first_s", "times_s"}


def bench(name: str, *args: str, timeout: int) -> str:
    """Run ``benchmarks/<name>.py`` with ``args`` from the repository root; its standard output."""
    cmd = [sys.executable, str(ROOT / "benchmarks" / f"{name}.py"), *args]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_schedule_benchmark_writes_its_json(tmp_path: Path):
    out = tmp_path / "schedule.json"
    result = subprocess.run(
        [sys.executable, "benchmarks/schedule.py", "--quick", "--repeat", "1", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "REN_CHECK, REN_DEBUG, REN_DUMP off while timing" in result.stdout
    data = json.loads(out.read_text(encoding="utf-8"))

    assert data["benchmark"] == "schedule"
    assert data["repeat"] == 1
    assert data["quick"] is True
    assert data["environment"]["off_while_timing"] == ["REN_CHECK", "REN_DEBUG", "REN_DUMP"]
    assert {"python", "numpy", "cpu_count", "platform"} <= set(data["machine"])

    assert [row["target_nodes"] for row in data["schedule"]] == [10, 100]
    for row in data["schedule"]:
        assert {"nodes", "outputs", "kernels", "passes_median_s"} | TIMING_KEYS <= set(row)
        assert row["nodes"] > 1 and row["kernels"] >= 1 and row["outputs"] >= 1
        assert len(row["times_s"]) == 1
        assert len(row["passes_median_s"]) == 12  # one figure per scheduler pass

    assert set(data["realize"]) == {"seed", "large"}
    assert data["realize"]["seed"]["ring"] == {"n": 8, "moduli": [17, 97], "dtype": "u32"}
    assert data["realize"]["large"]["ring"]["n"] == 4096
    for row in data["realize"].values():
        assert {"ring", "expression", "kernels", "phases_median_s"} | TIMING_KEYS <= set(row)
        assert set(row["phases_median_s"]) == {"schedule", "make_exec_units", "run_exec_units"}


def test_memory_benchmark_writes_its_json(tmp_path: Path):
    out = tmp_path / "memory.json"
    result = subprocess.run(
        [sys.executable, "benchmarks/memory.py", "--quick", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"arena/lower_bound \d+\.\d\d", last), last  # the ratio is not checked
    data = json.loads(out.read_text(encoding="utf-8"))

    assert data["benchmark"] == "memory"
    assert data["quick"] is True
    assert data["check"] is False
    assert "REN_NO_PLAN" in data["environment"]["switched_off"]
    assert {"python", "numpy", "cpu_count", "platform"} <= set(data["machine"])

    programs = data["programs"]
    assert {"chain50", "keyswitch_n4096"} <= set(programs)
    assert "keyswitch_n8192" not in programs  # --quick leaves it out
    for row in programs.values():
        assert {"outputs", "kernels", "buffers", "planned_buffers", "kept_buffers"} <= set(row)
        assert {"plan_memory_median_s", "devices"} <= set(row)
        assert row["kernels"] >= 1 and row["planned_buffers"] >= 1
        assert set(row["devices"]) == {"python"}
        for arena in row["devices"].values():
            keys = {"unshared_bytes", "arena_bytes", "lower_bound_bytes", "ratio", "events"}
            assert keys <= set(arena)
            assert arena["lower_bound_bytes"] <= arena["arena_bytes"] <= arena["unshared_bytes"]
    worst = max(a["ratio"] for row in programs.values() for a in row["devices"].values())
    assert data["worst_ratio"] == worst
    assert last == f"arena/lower_bound {worst:.2f}"


@pytest.mark.cc
def test_ntt_benchmark_writes_its_json(tmp_path: Path):
    out = tmp_path / "ntt.json"
    script = ROOT / "benchmarks" / "ntt.py"
    cmd = [sys.executable, str(script), "--quick", "--repeat", "1", "--out", str(out)]
    proc = subprocess.run([*cmd, "--cuda-emulated"], capture_output=True, text=True, check=True)
    assert re.match(r"^goal \d+\.\d+ ms", proc.stdout.strip().splitlines()[-1])
    data = json.loads(out.read_text())
    assert {"rows", "goal", "machine", "compiler"} <= set(data)
    row = data["rows"][0]
    assert {"n", "limbs", "direction", "backend", "median_s", "butterflies_per_ns"} <= set(row)
    assert {r["check"] for r in data["rows"]} <= {"ok", "reference"}  # C words equal NumPy words
    # the cuda path ran (emulated) and its words were compared with NumPy's too
    assert any(r["backend"] == "cuda-emulated" for r in data["rows"])
    assert data["cuda"].startswith("CUDA C emulated")


@pytest.mark.cc
def test_jit_benchmark_writes_its_json(tmp_path: Path):
    out = tmp_path / "jit.json"
    stdout = bench("jit", "--quick", "--repeat", "1", "--out", str(out), timeout=120)
    last = stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"goal seed cpu speed-up \d+\.\dx \(>= 20x: (met|missed)\)", last), last
    data = json.loads(out.read_text(encoding="utf-8"))

    assert data["benchmark"] == "jit"
    assert (data["repeat"], data["quick"], data["ops"]) == (1, True, 60)
    assert data["skipped"] == {} and data["cpu"]["flags"]
    assert "REN_JIT_GRAPH" in data["environment"]["off_while_timing"]
    assert {"python", "numpy", "cpu_count", "platform"} <= set(data["machine"])

    rows = {(r["case"], r["device"]): r for r in data["rows"]}
    assert set(rows) == {(c, d) for c in ("seed", "program") for d in ("python", "cpu")}
    keys = {"ring", "ops", "units", "runner", "units_runner", "pruned", "check", "checks"}
    keys |= {"first_capture_s", "capture_s", "eager", "replay", "replay_units", "kernels", "graph"}
    keys |= {"speedup", "overhead_us", "overhead_per_unit_us", "units_overhead_per_unit_us"}
    keys |= {"graph_overhead_us"}
    for row in rows.values():
        assert keys <= set(row)
        # replay, unit-by-unit replay and kernels alone equal eager realization word for word
        assert row["check"] == "ok"
        assert {"replay", "replay_units", "kernels"} <= set(row["checks"]) <= {*row, "graph"}
        assert set(row["checks"].values()) == {"ok"}
        assert row["runner"] in {"graph", "units"} and row["units_runner"] == "units"
        assert row["units"] >= 1
        figures = ["eager", "replay", "replay_units", "kernels"]
        if row["runner"] == "graph":  # the graph runner's C function alone, checked too
            assert row["checks"]["graph"] == "ok"
            figures.append("graph")
        for figure in figures:
            assert TIMING_KEYS | {"number"} <= set(row[figure])
            assert len(row[figure]["times_s"]) == 1
    assert rows["seed", "cpu"]["ops"] == 3 and rows["program", "cpu"]["ops"] >= 60

    assert {"target_speedup", "speedup", "met"} <= set(data["goal"])
    assert last.startswith(f"goal seed cpu speed-up {data['goal']['speedup']:.1f}x")


@pytest.mark.cc
def test_ckks_benchmark_writes_its_json(tmp_path: Path):
    out = tmp_path / "ckks.json"
    args = ["--quick", "--repeat", "1", "--repeat-python", "1", "--trials", "1", "--json", str(out)]
    stdout = bench("ckks", *args, timeout=180)
    assert stdout.strip().splitlines()[-1] == f"wrote {out}"
    data = json.loads(out.read_text(encoding="utf-8"))

    assert data["benchmark"] == "ckks"
    counts = (data["repeat"], data["repeat_python"], data["trials"])
    assert data["quick"] is True and counts == (1, 1, 1)
    assert data["environment"]["threads"]["REN_THREADS"] == "1"
    assert {"python", "numpy", "cpu_count", "platform"} <= set(data["machine"])
    assert set(data["params"]) == {"q"} and data["params"]["q"]["insecure"] is True
    assert data["skipped"] == {} and data["backends"] == ["python", "cpu"]

    benches = ("keygen", "encrypt", "add", "multiply", "rotate", "decrypt")
    rows = {(r["bench"], r["backend"], r["mode"]): r for r in data["results"]}
    want = {
        (f"ckks.{b}", backend, mode)
        for b in benches
        for backend in ("python", "cpu")
        for mode in ("eager", "jit")
        if mode == "eager" or b in ("add", "multiply", "rotate")
    }
    peer = data["peer"]["available"]
    if peer:  # SEAL is installed: the same operations, timed the same way
        want |= {(f"ckks.{b}", "seal", "eager") for b in benches}
    assert set(rows) == want
    for (_, backend, mode), row in rows.items():
        assert row["params"] == "q"
        # every timed result was decrypted and compared with NumPy before its time was kept
        bound = data["peer_min_bits"] if backend == "seal" else data["min_bits"]
        assert row["check"] == "ok" and row["check_bits"] > bound
        assert 0 < row["min_ms"] <= row["median_ms"] and len(row["times_ms"]) == 1
        if mode == "jit":
            assert row["capture_ms"] > 0 and row["units"] >= 1
        if backend != "seal":
            assert (row["vs_seal"] is not None) == peer

    ops = {"fresh", "add", "multiply", "plain_multiply", "scalar_multiply", "rotate"}
    ops |= {"conjugate"}
    precision = {(r["backend"], r["op"]): r for r in data["precision"]}
    assert set(precision) == {(b, op) for b in ("cpu", *(["seal"] if peer else [])) for op in ops}
    for row in precision.values():
        assert row["params"] == "q" and len(row["bits"]) == 1
        assert row["min_bits"] == row["mean_bits"] > 20  # scale 2^40: about 30 bits


@pytest.mark.cc
def test_bfv_benchmark_writes_its_json(tmp_path: Path):
    out = tmp_path / "bfv.json"
    args = ["--quick", "--repeat", "1", "--n", "1024", "--insecure", "--out", str(out)]
    stdout = bench("bfv", *args, timeout=180)
    assert stdout.strip().splitlines()[-1] == f"wrote {out}"
    data = json.loads(out.read_text(encoding="utf-8"))

    assert data["benchmark"] == "bfv" and data["quick"] is True and data["repeat"] == 1
    assert data["schemes"] == ["bfv", "bgv"] and data["backends"] == ["cpu"]
    assert data["skipped"] == {}
    assert data["environment"]["threads"]["REN_THREADS"] == "1"
    assert {"python", "numpy", "cpu_count", "platform"} <= set(data["machine"])
    for p in data["params"].values():
        assert (p["n"], p["t"], p["insecure"]) == (1024, 65537, True)
        assert p["q_bits"] == [43, 43, 44, 44] and p["p_bits"] == [44]

    peer = data["peer"]["available"]
    schemes, benches = ("bfv", "bgv"), ("multiply", "rotate_rows")
    rows = {(r["bench"], r["backend"], r["mode"]): r for r in data["results"]}
    want = {(f"{s}.{b}", "cpu", m) for s in schemes for b in benches for m in ("eager", "jit")}
    if peer:  # SEAL is installed: the same operations, timed in the same run
        want |= {(f"{s}.{b}", "seal", "eager") for s in schemes for b in benches}
    assert set(rows) == want
    for (_, backend, mode), row in rows.items():
        assert list(row)[:5] == ROW_KEYS and row["params"] == "n=1024 218-bit t=65537 insecure"
        # every timed result was decrypted and compared with NumPy's integers mod t
        assert row["check"] == "ok" and row["threads"] == 1
        assert 0 < row["min_ms"] <= row["median_ms"] and len(row["times_ms"]) == 1
        if mode == "jit":
            assert row["capture_ms"] > 0 and row["units"] >= 1
        if backend != "seal":  # the peer's figure beside Ren's, null (with a note) without it
            assert {"peer", "peer_ms", "ratio"} <= set(row)
            assert (row["ratio"] is not None) == peer and (row["peer"] == "seal") == peer

    noise = {(r["bench"], r["backend"], r["stage"]): r for r in data["noise"]}
    backends = ("cpu", *(["seal"] if peer else []))
    stages = ("fresh", "multiply")
    assert set(noise) == {
        (f"{s}.noise_budget", b, st) for s in schemes for b in backends for st in stages
    }
    for (bench_name, backend, stage), row in noise.items():
        assert row["check"] == "ok" and isinstance(row["bits"], int) and row["bits"] > 0
        if stage == "multiply":  # a product has less budget left than a fresh ciphertext
            assert row["bits"] < noise[bench_name, backend, "fresh"]["bits"]
        if backend == "cpu" and peer:
            assert row["peer_bits"] > 0 and row["difference_bits"] == row["bits"] - row["peer_bits"]


@pytest.mark.cc
@pytest.mark.slow
def test_bootstrap_benchmark_writes_its_json(tmp_path: Path):
    from ren.schemes import ckks

    out = tmp_path / "bootstrap.json"
    stdout = bench("bootstrap", "--quick", "--repeat", "1", "--out", str(out), timeout=600)
    assert stdout.strip().splitlines()[-1] == f"wrote {out}"
    assert "| n=64 slots=32 | Ren cpu (boot-toy) |" in stdout
    data = json.loads(out.read_text(encoding="utf-8"))

    assert data["benchmark"] == "bootstrap" and data["quick"] is True
    assert data["presets"] == ["boot-toy"] and data["openfhe"] == []
    assert data["skipped"] == {"openfhe": "--quick: no peer"}
    assert data["environment"]["threads"] == {"REN_THREADS": "1", "OMP_NUM_THREADS": "1"}
    assert {"python", "numpy", "cpu_count", "platform", "loadavg_before"} <= set(data["machine"])

    rows = {(r["bench"], r["mode"]): r for r in data["results"]}
    assert set(rows) == {
        ("ckks.bootstrap_keys", "eager"),
        ("ckks.bootstrap", "eager"),
        ("ckks.bootstrap", "jit"),
    }
    for r in rows.values():
        assert list(r)[:5] == ["bench", "backend", "params", "mode", "median_ms"]
        assert (r["backend"], r["params"], r["preset"]) == ("cpu", "n=64 slots=32", "boot-toy")
        assert r["median_ms"] > 0 and r["peak_rss_bytes"] >= r["keys_rss_bytes"] > 0
    keys = rows["ckks.bootstrap_keys", "eager"]
    parts = keys["keygen_ms"] + keys["switch_keys_ms"] + keys["encode_ms"]
    assert keys["median_ms"] == pytest.approx(parts)
    # the relinearization key beside the rotation and conjugation keys (boot-toy: no encapsulation)
    assert keys["key_bytes"] > 0 and keys["switch_keys"] == keys["galois_keys"] + 1
    assert keys["serialized_bytes"] >= keys["key_bytes"]
    eager, jit = rows["ckks.bootstrap", "eager"], rows["ckks.bootstrap", "jit"]
    params = ckks.Params.preset("boot-toy")
    levels_left = ckks.BootstrapConfig.for_params(params).levels_left(params)
    assert keys["q_bits"] == list(params.q_bits) and keys["dnum"] == params.dnum
    for r in (eager, jit):
        # every result was decrypted and compared with the input before its time was kept
        assert r["check"] == "ok" and r["check_bits"] > data["min_bits"]
        assert r["level_out"] == levels_left and len(r["times_ms"]) == r["repeat"] == 1
    assert eager["first_ms"] > 0 and eager["kernels"] == eager["profile"]["units"] > 0
    assert abs(eager["predicted_bits"] - eager["check_bits"]) <= 2  # the model beside the measure
    assert set(eager["profile"]["stages_ms"]) >= {"coeff_to_slot", "eval_mod", "slot_to_coeff"}
    assert jit["capture_ms"] > 0 and jit["units"] >= 1 and jit["runner"] in {"graph", "units"}


def test_bootstrap_rounds_take_the_medians_of_their_ratios(monkeypatch):
    # --rounds: Ren's preset then OpenFHE's sparse case, R times; the summary is the medians
    for var in ("REN_THREADS", "OMP_NUM_THREADS"):  # the script sets them when imported: undone
        monkeypatch.setenv(var, "1")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location(
        "bench_boot", ROOT / "benchmarks" / "bootstrap.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        rounds = [
            {"preset": "p", "round": i, "ren_jit_ms": ren, "openfhe_ms": peer, "ratio": ren / peer}
            for i, (ren, peer) in enumerate([(2000.0, 2500.0), (3000.0, 2000.0), (1900.0, 2100.0)])
        ]
        got = module._rounds_summary(rounds)["p"]
        assert got["ren_jit_ms"] == 2000.0 and got["openfhe_ms"] == 2100.0
        assert got["ratio"] == pytest.approx(1900 / 2100) and got["rounds"] == 3
        assert got["ren_faster"] == 2
        assert module.round_lines(rounds)[-1] == "| p | median of 3 | 2.00 | 2.10 | 0.90 |"
        for bad in (["--rounds", "0", "--precise"], ["--rounds", "2"]):
            with pytest.raises(SystemExit):
                module.main(bad)
    finally:
        del sys.modules[spec.name]


# --------------------------------------------------------------------------------------------
# benchmarks/run.py: every benchmark in one JSON of rows in one shape

ROW_KEYS = ["bench", "backend", "params", "mode", "median_ms"]  # every row starts with these


@pytest.fixture(scope="module")
def run_py():
    """``benchmarks/run.py`` as a module (it imports ``_machine`` from ``benchmarks/``)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "benchmarks" / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]
        sys.path.remove(str(ROOT / "benchmarks"))


def _timing(ms: float) -> dict:
    s = ms / 1e3
    return {"number": 10, "median_s": s, "min_s": s / 2, "first_s": s, "times_s": [s]}


def _common(rows: list[dict]) -> None:
    for r in rows:
        assert list(r)[:5] == ROW_KEYS
        assert r["mode"] in {"eager", "jit", "capture", "load"}


def test_run_benchmark_writes_one_json_and_a_table(tmp_path: Path):
    out = tmp_path / "run.json"
    stdout = bench("run", "--quick", "--only", "memory", "--out", str(out), timeout=120)
    data = json.loads(out.read_text(encoding="utf-8"))

    assert {"python", "numpy", "cpu_count", "platform"} <= set(data["machine"])
    assert data["run"]["quick"] is True and data["run"]["only"] == ["memory"]
    assert data["run"]["threads"] == 1 and data["failed"] == []
    assert isinstance(data["skipped"], list)
    assert data["results"]
    for r in data["results"]:
        assert list(r)[:5] == ROW_KEYS
        assert r["mode"] in {"eager", "jit"}
        assert r["bench"] == "memory.plan" and r["backend"] == "python"
        assert isinstance(r["params"], str) and r["median_ms"] > 0
        assert r["lower_bound_bytes"] <= r["arena_bytes"] <= r["unshared_bytes"]

    table = out.with_suffix(".md").read_text(encoding="utf-8").splitlines()
    header = "| bench | params | backend | mode | threads | median ms | min ms | Ren/SEAL | notes |"
    assert header in table
    assert table[table.index(header) + 1].startswith("|---|")
    assert sum(line.startswith("| memory.plan |") for line in table) == len(data["results"])
    assert header in stdout


def test_run_converts_ntt_rows(run_py):
    base = {"n": 16384, "limbs": 8, "bits": 60, "direction": "forward", "check": "ok"}
    base |= {**_timing(0.5), "butterflies_per_ns": 2.5}
    data = {
        "rows": [
            {**base, "backend": "numpy", "threads": 1, "check": "reference"},
            {**base, "backend": "c", "threads": 1},
            {**base, "backend": "c-openmp", "threads": 1},  # what REN_THREADS=1 does not run
            {**base, "backend": "c-openmp", "threads": 2, "direction": "inverse"},
            {**base, "backend": "cuda", "threads": 0},
        ]
    }
    rows = run_py.ntt_rows(data, {})
    _common(rows)
    got = [(r["bench"], r["backend"], r["threads"], r["variant"]) for r in rows]
    assert got == [
        ("ntt.forward", "python", 1, "numpy"),
        ("ntt.forward", "cpu", 1, "c"),
        ("ntt.inverse", "cpu", 2, "c-openmp"),
        ("ntt.forward", "cuda", 0, "cuda"),
    ]
    r = rows[1]
    assert r["params"] == "n=16384 L=8 60-bit" and r["mode"] == "eager"
    assert r["median_ms"] == pytest.approx(0.5) and r["min_ms"] == pytest.approx(0.25)
    assert (r["check"], r["butterflies_per_ns"], r["number"]) == ("ok", 2.5, 10)


def test_run_converts_schedule_rows(run_py):
    data = {
        "schedule": [
            {"target_nodes": 100, "nodes": 101, "outputs": 2, "kernels": 38, **_timing(20.0),
             "passes_median_s": {"bufferize": 0.001}}
        ],
        "realize": {
            "seed": {"ring": {"n": 8, "moduli": [17, 97], "dtype": "u32"}, "kernels": 5,
                     **_timing(2.0), "phases_median_s": {"schedule": 0.0015}}
        },
    }  # fmt: skip
    rows = run_py.schedule_rows(data, {})
    _common(rows)
    assert [(r["bench"], r["params"], r["backend"]) for r in rows] == [
        ("schedule", "nodes=101 n=4096 L=4", "python"),
        ("realize", "seed n=8 L=2", "python"),
    ]
    assert rows[0]["median_ms"] == pytest.approx(20.0) and rows[0]["kernels"] == 38
    assert rows[0]["passes_ms"] == {"bufferize": pytest.approx(1.0)}
    assert rows[1]["phases_ms"] == {"schedule": pytest.approx(1.5)}
    assert run_py.schedule_rows(data, {"REN_DEVICE": "cpu"})[0]["backend"] == "cpu"


def test_run_converts_memory_rows(run_py):
    arena = {"unshared_bytes": 4096, "arena_bytes": 2048, "lower_bound_bytes": 1024,
             "ratio": 2.0, "planned_buffers": 3, "events": 6}  # fmt: skip
    program = {"outputs": 1, "rings": ["n=4096 L=3"], "kernels": 7, "buffers": 9,
               "planned_buffers": 3, "kept_buffers": 6, "plan_memory_median_s": 0.002,
               "devices": {"python": arena}}  # fmt: skip
    data = {"programs": {"chain50": program, "checked": {**program, "check": False}}}
    rows = run_py.memory_rows(data, {})
    _common(rows)
    r = rows[0]
    assert (r["bench"], r["backend"], r["params"]) == ("memory.plan", "python", "chain50")
    assert r["median_ms"] == pytest.approx(2.0)
    assert r["arena_ratio"] == 2.0 and "ratio" not in r  # "ratio" is Ren over its peer
    assert (r["arena_bytes"], r["lower_bound_bytes"], r["unshared_bytes"]) == (2048, 1024, 4096)
    assert "check" not in r and rows[1]["check"] == "DIFFERS"


def test_run_converts_jit_rows(run_py):
    r = {"case": "seed", "device": "cpu", "ring": "n=8 L=2 u32", "ops": 3, "units": 5,
         "runner": "graph", "pruned": 0, "check": "ok", "first_capture_s": 0.003,
         "capture_s": 0.002, "eager": _timing(2.0), "replay": _timing(0.02),
         "replay_units": _timing(0.04), "kernels": _timing(0.001), "graph": None,
         "speedup": 100.0, "overhead_us": 19.0}  # fmt: skip
    data = {"environment": {"threads": {"REN_THREADS": "2"}}, "rows": [r]}
    rows = run_py.jit_rows(data, {})
    _common(rows)
    eager, jit = rows
    assert [(x["bench"], x["mode"], x["threads"]) for x in rows] == [
        ("jit.seed", "eager", 2),
        ("jit.seed", "jit", 2),
    ]
    assert eager["params"] == jit["params"] == "n=8 L=2 u32 ops=3"
    assert eager["median_ms"] == pytest.approx(2.0) and jit["median_ms"] == pytest.approx(0.02)
    assert jit["capture_ms"] == pytest.approx(2.0) and jit["graph_ms"] is None
    assert (jit["units"], jit["runner"], jit["speedup_over_eager"]) == (5, "graph", 100.0)


def test_run_converts_ckks_rows_and_adds_ratios(run_py):
    common = {"params": "a", "min_ms": 1.0, "first_ms": 2.0, "times_ms": [2.0], "number": 3,
              "repeat": 1, "check": "ok", "check_bits": 29.0}  # fmt: skip
    data = {
        "environment": {"threads": {"REN_THREADS": "1"}},
        "params": {"a": {"n": 8192}},
        "results": [
            {"bench": "ckks.multiply", "backend": "seal", "mode": "eager", "median_ms": 4.0,
             **common},
            {"bench": "ckks.multiply", "backend": "cpu", "mode": "jit", "median_ms": 2.0,
             "capture_ms": 9.0, "units": 24, "runner": "graph", "vs_seal": 0.5, **common},
        ],
    }  # fmt: skip
    rows = run_py.ckks_rows(data, {})
    _common(rows)
    seal, cpu = rows
    assert (cpu["bench"], cpu["backend"], cpu["params"], cpu["mode"]) == (
        "ckks.multiply", "cpu", "set a n=8192", "jit"
    )  # fmt: skip
    assert (cpu["capture_ms"], cpu["units"], cpu["threads"]) == (9.0, 24, 1)
    assert "times_ms" not in cpu and "vs_seal" not in cpu
    run_py.add_peers(rows)
    assert (cpu["peer"], cpu["peer_ms"], cpu["ratio"]) == ("seal", 4.0, 0.5)
    assert "ratio" not in seal


def test_run_runs_bfv_and_keeps_its_noise_rows(run_py, monkeypatch: pytest.MonkeyPatch):
    assert list(run_py.BENCHES)[4:6] == ["ckks", "bfv"]  # bfv.py runs after ckks.py
    bfv = run_py.BENCHES["bfv"]
    assert (bfv.script, bfv.out_flag, bfv.quick) == ("bfv.py", "--out", ("--quick",))
    assert not bfv.needs_cc  # without a C compiler bfv.py skips cpu itself, and says so
    assert run_py._only("bfv,ntt") == ["ntt", "bfv"]
    label = "n=8192 218-bit t=65537"
    common = {"params": label, "threads": 1, "min_ms": 1.0, "first_ms": 2.0, "times_ms": [2.0],
              "number": 3, "repeat": 5, "check": "ok"}  # fmt: skip
    data = {
        "skipped": {},
        "peer": {"name": "seal", "available": True},
        "results": [
            {"bench": "bfv.multiply", "backend": "seal", "mode": "eager", "median_ms": 12.0,
             **common},
            {"bench": "bfv.multiply", "backend": "cpu", "mode": "jit", "median_ms": 6.0,
             **common, "peer": "seal", "peer_ms": 12.0, "ratio": 0.5, "capture_ms": 40.0,
             "units": 49, "runner": "graph"},
        ],
        "noise": [
            {"bench": "bfv.noise_budget", "backend": "seal", "params": label, "stage": "fresh",
             "bits": 150, "check": "ok"},
            {"bench": "bfv.noise_budget", "backend": "cpu", "params": label, "stage": "fresh",
             "bits": 150, "check": "ok", "peer": "seal", "peer_bits": 150, "ratio": 1.0,
             "difference_bits": 0},
        ],
    }  # fmt: skip
    rows = run_py.bfv_rows(data, {})
    _common(rows)
    seal, cpu = rows
    assert (cpu["bench"], cpu["backend"], cpu["params"], cpu["mode"]) == (
        "bfv.multiply", "cpu", label, "jit"
    )  # fmt: skip
    assert (cpu["capture_ms"], cpu["units"], cpu["runner"]) == (40.0, 49, "graph")
    assert (cpu["threads"], cpu["repeat"], cpu["check"]) == (1, 5, "ok")
    assert not {"times_ms", "peer", "peer_ms", "ratio"} & set(cpu)  # add_peers makes them again
    run_py.add_peers(rows)
    assert (cpu["peer"], cpu["peer_ms"], cpu["ratio"]) == ("seal", 12.0, 0.5)
    assert "ratio" not in seal

    # run_bench: the script's rows into results, its noise rows into noise, as they are
    ran = run_py.Ran("bfv", ["python", "benchmarks/bfv.py"], {"REN_THREADS": "1"}, data, 0, "", "",
                     1.0)  # fmt: skip
    monkeypatch.setattr(run_py, "run_script", lambda *args, **kwargs: ran)
    got = run_py.Collected()
    args = run_py.argparse.Namespace(quick=True, threads=1, threads_compare=2)
    run_py.run_bench("bfv", args, {}, Path("."), got)
    assert [r["backend"] for r in got.rows] == ["seal", "cpu"] and got.noise == data["noise"]
    assert got.failed == [] and got.skipped == []  # and no second thread count for bfv.py

    results = {
        "machine": {"python": "3", "numpy": "2", "cpu_count": 2, "platform": "x",
                    "git_commit": None, "git_dirty": False},
        "run": {"quick": True, "only": ["bfv"], "threads": 1, "threads_compare": None,
                "wall_s": 1.0},
        "peers": {}, "skipped": [], "failed": [], "results": got.rows, "noise": got.noise,
    }  # fmt: skip
    table = run_py.markdown(results).splitlines()
    header = "| bench | params | stage | backend | bits | SEAL bits | check |"
    assert table[table.index(header) + 2 :] == [
        f"| bfv.noise_budget | {label} | fresh | cpu | 150 | 150 | ok |"
    ]


def test_run_threads_speedup_peer_fallback_and_skips(run_py):
    ntt = [run_py.row("ntt.forward", "cpu", "n=16384 L=1 60-bit", "eager", 0.04, threads=1)]
    fallback = run_py.seal_ntt_fallback(ntt, "import seal: no module")
    assert [r["median_ms"] for r in fallback] == [0.31] and fallback[0]["measured"] is False
    run_py.add_peers(ntt + fallback)
    assert ntt[0]["ratio"] == pytest.approx(0.04 / 0.31) and ntt[0]["peer_measured"] is False

    faster = [run_py.row("ntt.forward", "cpu", "n=16384 L=1 60-bit", "eager", 0.02, threads=2)]
    run_py.add_speedups(ntt, faster, 1)
    assert faster[0]["threads_speedup"] == pytest.approx(2.0)

    data = {"skipped": {"cpu": "no C compiler"}, "peer": {"name": "seal", "available": False,
            "reason": "import seal: no module"}}  # fmt: skip
    skipped = run_py.skipped_of("ckks", data, "cuda: not timed (no GPU)\n")
    assert [(s["backend"], s["reason"]) for s in skipped] == [
        ("cpu", "no C compiler"),
        ("seal", "import seal: no module"),
        ("cuda", "no GPU"),
    ]


def test_the_figures_quoted_are_those_of_the_kept_run():
    """The CKKS-against-SEAL table of benchmarks/README.md and the Speed section of docs/ckks.md
    quote the run kept in benchmarks/figures: every "now" figure is that run's median."""
    run = json.loads((ROOT / "benchmarks" / "figures" / "run-2026-11-21.json").read_text())

    def median(bench: str, params: str, backend: str, mode: str) -> float:
        (row,) = [
            r
            for r in run["results"]
            if (r["bench"], r["params"], r["backend"], r["mode"], r.get("threads", 1))
            == (bench, params, backend, mode, 1)
        ]
        return row["median_ms"]

    readme = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    page = (ROOT / "docs" / "ckks.md").read_text(encoding="utf-8")
    sets = {"a": "set a n=8192", "b": "set b n=16384"}
    for op, s, device in [
        ("multiply", "a", "cpu"),
        ("rotate", "a", "cpu"),
        ("multiply", "b", "cpu"),
        ("rotate", "b", "cpu"),
        ("multiply", "a", "python"),
        ("multiply", "b", "python"),
    ]:
        ren_ms = median(f"ckks.{op}", sets[s], device, "jit")
        seal_ms = median(f"ckks.{op}", sets[s], "seal", "eager")
        (line,) = [
            ln for ln in readme.splitlines() if re.match(rf"\| {op} \| {s}\b.*\| {device} \|", ln)
        ]
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert float(cells[5]) == pytest.approx(ren_ms, rel=0.006), line
        assert float(cells[6]) == pytest.approx(seal_ms, rel=0.006), line
        ratio = ren_ms / seal_ms  # two decimals, or three figures above 10
        assert abs(float(cells[7]) - ratio) <= 0.005 * max(1.0, ratio), line
        assert f"{float(cells[5])} ms" in page or f" {cells[5]} ms" in page, (op, s, device)


@pytest.mark.cc
def test_contention_benchmark_writes_its_json(tmp_path: Path):
    out = tmp_path / "contention.json"
    args = ["--tiny", "--repeat", "2", "--trials", "1", "--modes", "eager,jit"]
    args += ["--load", "1", "--load-seconds", "30", "--out", str(out)]
    stdout = bench("contention", *args, timeout=300)
    assert stdout.strip().splitlines()[-1] == f"wrote {out}"
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["run"]["tiny"] is True and data["run"]["load_processes"] == 1
    rows = {(r["load"], r["mode"], r["setting"]): r for r in data["results"]}
    loads = ("idle", "busy (1 processes)")
    settings = ("default", "REN_THREADS=2", "REN_THREADS=1")
    assert set(rows) == {(ld, m, st) for ld in loads for m in ("eager", "jit") for st in settings}
    for (_, _, setting), row in rows.items():
        assert row["check"] == "ok" and row["median_ms"] > 0 and len(row["times_ms"]) == 2
        assert {"bench", "backend", "params", "mode", "median_ms", "threads"} <= set(row)
        assert row["threads"] == {"default": "default", "REN_THREADS=2": 2}.get(setting, 1)
    assert {(r["load"], r["mode"], r["setting"]) for r in data["ratios"]} == {
        (ld, m, st) for ld in loads for m in ("eager", "jit") for st in settings[:2]
    }


def test_saved_benchmark_writes_its_json(tmp_path: Path):
    out = tmp_path / "saved.json"
    stdout = bench(
        "saved", "--quick", "--repeat", "1", "--steps", "10", "--out", str(out), timeout=300
    )
    data = json.loads(out.read_text(encoding="utf-8"))
    assert [(r["bench"], r["mode"]) for r in data["results"]] == [
        ("saved.ckks.multiply", "capture"),
        ("saved.ckks.multiply", "load"),
        ("saved.program", "capture"),
        ("saved.program", "load"),
    ]
    for r in data["results"]:
        assert r["check"] == "ok" and r["median_ms"] > 0 and len(r["times_ms"]) == 1
    assert [r["bench"] for r in data["ratios"]] == ["ckks.multiply", "program"]
    assert "goal program load" in stdout


def test_run_converts_saved_rows(run_py):
    data = {
        "results": [
            {"bench": "saved.program", "backend": "cpu", "mode": m, "median_ms": ms,
             "units": 30, "check": "ok", "times_ms": [ms]}
            for m, ms in (("capture", 100.0), ("load", 5.0))
        ],
        "ratios": [{"bench": "program", "capture_over_load": 20.0, "goal_met": True}],
    }  # fmt: skip
    rows = run_py.saved_rows(data, {})
    _common(rows)
    capture, load = rows
    assert (capture["mode"], load["mode"], load["params"]) == ("capture", "load", "30 units")
    assert load["capture_over_load"] == 20.0 and "capture_over_load" not in capture


def test_run_converts_circuits_and_functions_rows(run_py):
    circuits = {
        "results": [
            {"bench": "circuits.rotate_many", "backend": "cpu", "params": "a", "mode": "jit",
             "median_ms": 5.0, "rotations": 4, "kernels": 67, "variant": "hoisted"}
        ]
    }  # fmt: skip
    (r,) = run_py.circuits_rows(circuits, {})
    _common([r])
    assert (r["bench"], r["median_ms"], r["kernels"], r["variant"]) == (
        "circuits.rotate_many",
        5.0,
        67,
        "hoisted",
    )
    functions = {
        "ren": [{"bench": "chebyshev.exp", "backend": "cpu", "mode": "jit", "degree": 59,
                 "median_ms": 200.0, "bits": 24.0, "levels": 4}],
        "openfhe": [{"bench": "chebyshev.exp", "median_ms": 300.0, "degree": 59, "bits": 22.0,
                     "scaling": "FLEXIBLEAUTO", "ring": {"n": 16384}}],
    }  # fmt: skip
    ren_row, peer_row = run_py.functions_rows(functions, {})
    _common([ren_row, peer_row])
    assert (ren_row["backend"], peer_row["backend"]) == ("cpu", "openfhe")
    assert peer_row["scaling"] == "FLEXIBLEAUTO" and "ring" not in peer_row
    assert ren_row["params"] == peer_row["params"] == "n=16384 depth 9"


def test_run_converts_the_circuits_peer_rows(run_py):
    data = {
        "results": [],
        "openfhe": [{"bench": "rotations.hoisted", "params": "n=8192", "median_ms": 11.0,
                     "count": 4, "bits": 22.6, "ring": {"n": 8192}}],
    }  # fmt: skip
    (r,) = run_py.circuits_rows(data, {})
    _common([r])
    assert (r["bench"], r["backend"], r["count"], r["median_ms"]) == (
        "circuits.rotations.hoisted",
        "openfhe",
        4,
        11.0,
    )
    assert "ring" not in r


def test_run_converts_bootstrap_rows(run_py):
    data = {
        "results": [{"bench": "ckks.bootstrap", "backend": "cpu", "params": "n=4096 slots=2048",
                     "mode": "jit", "median_ms": 1580.0, "preset": "boot-n12", "units": 1888,
                     "runner": "graph", "check_bits": 24.1, "times_ms": [1580.0]}],
        "openfhe": [{"bench": "ckks.bootstrap", "backend": "openfhe", "params": "n=4096 slots=2048",
                     "mode": "eager", "median_ms": 940.0, "secret": "SPARSE_ENCAPSULATED",
                     "level_budget": [4, 4], "levels_after": 3, "check_bits": 24.2}],
    }  # fmt: skip
    ren_row, peer_row = run_py.bootstrap_rows(data, {})
    _common([ren_row, peer_row])
    assert (ren_row["variant"], "times_ms" in ren_row) == ("boot-n12", False)
    assert peer_row["variant"] == "SPARSE_ENCAPSULATED 4x4, 3 levels left"
    assert run_py.note(peer_row).startswith("SPARSE_ENCAPSULATED 4x4")


def test_report_benchmark_writes_its_json(tmp_path: Path):
    out = tmp_path / "report.json"
    printed = bench(
        "report", "--example", "ckks-mul", "--repeat", "1", "--out", str(out), timeout=300
    )
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["benchmark"] == "report" and data["example"] == "ckks-mul"
    assert data["report_bytes"] > 0 and data["regions"] > 0 and data["run_s"] > 0
    if data["browser"] is None:  # no chromium: said, not measured
        assert data["load_ms"] is None and "not measured" in printed
    else:
        assert len(data["load_ms"]) == 1 and data["load_ms_median"] == data["load_ms"][0]


@pytest.mark.cc
def test_first_run_benchmark_writes_its_json(tmp_path: Path):
    out = tmp_path / "first_run.json"
    stdout = bench("first_run", "--quick", "--out", str(out), timeout=600)
    assert "| case | first s |" in stdout.replace("| tree ", "")
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["benchmark"] == "first_run" and data["quick"] is True and data["failed"] == []
    cases = [row["case"] for row in data["results"]]
    assert cases[0] == "bootstrap boot-toy" and cases[1].startswith("multiply n=4096")
    assert cases[2] == "ren.load of a saved plan (boot-toy)"
    for row in data["results"]:
        assert {
            "first_s",
            "second_s",
            "warm_s",
            "libraries",
            "compiler_runs",
            "cache_bytes",
        } <= set(row)
        # every case starts from an empty cache: its first call builds, the results are checked
        assert row["libraries"] >= 1 and row["compiler_runs"] >= 1 and row["check_bits"] >= 12


def test_key_switching_benchmark_writes_its_json(tmp_path: Path):
    out = tmp_path / "key_switching.json"
    bench("key_switching", "--sets", "a", "--quick", "--no-openfhe", "--out", str(out), timeout=600)
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["openfhe"] == {"skipped": "--no-openfhe"}
    rows = {(r["technique"], r["digit_bits"]): r for r in data["results"]}
    assert set(rows) == {("hybrid", None), ("bv", None), ("bv", 40), ("bv", 20)}
    from ren.schemes import ckks

    for (technique, digit_bits), row in rows.items():
        kw = {} if technique == "hybrid" else {"key_switching": "bv", "digit_bits": digit_bits}
        params = ckks.Params(n=8192, q_bits=(60, 40, 40), **kw)
        assert row["set"] == "a" and row["key_parts"] == params.key_parts
        assert set(row["bits"]) == {"fresh", "multiply", "rotate"}
        assert row["ms"] is None or set(row["ms"]) == {"multiply", "rotate"}
    assert rows[("hybrid", None)]["bits"]["multiply"] > 20  # a sound run: NumPy agrees


def test_circuits_benchmark_predicts_each_rows_precision(tmp_path: Path):
    # every eager row's predicted_bits (the noise model, nothing run) beside its check_bits
    # (the decryption against NumPy): the tolerance, 2 bits, on every circuit
    out = tmp_path / "circuits.json"
    bench("circuits", "--quick", "--repeat", "1", "--json", str(out), timeout=600)
    data = json.loads(out.read_text(encoding="utf-8"))
    eager = [r for r in data["results"] if r["mode"] == "eager"]
    assert len(eager) >= 10
    for r in eager:
        assert r["check"] == "ok"
        assert abs(r["predicted_bits"] - r["check_bits"]) <= 2, (r["variant"], r)
    assert all("predicted_bits" not in r for r in data["results"] if r["mode"] == "jit")


def test_heir_examples_benchmark_writes_its_json(tmp_path: Path):
    from ren.interop.heir.tools import find_heir_opt

    if find_heir_opt() is None:
        pytest.skip("heir-opt not installed (pip install -e .[heir])")
    out = tmp_path / "heir_examples.json"
    only = "dot_product_8f,cross_level_bgv"
    printed = bench("heir_examples", "--quick", "--only", only, "--out", str(out), timeout=600)
    assert "| dot_product_8f | ckks |" in printed
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["benchmark"] == "heir_examples" and data["schemes"] == ["ckks", "bgv"]
    rows = {(r["example"], r["scheme"]): r for r in data["results"]}
    assert set(rows) == {(e, s) for e in only.split(",") for s in ("ckks", "bgv")}
    for r in rows.values():
        assert {"bench", "backend", "params", "mode", "median_ms", "threads"} <= set(r)
    # each scheme's figure: CKKS in bits against NumPy, BGV exact; the jitted replay checked too
    dot, level = rows["dot_product_8f", "ckks"], rows["cross_level_bgv", "bgv"]
    assert dot["check"] == "ok" and dot["check_bits"] >= 15 and dot["ops"]["ckks.rotate"] == 3
    assert level["check"] == "ok" and level["mismatches"] == 0 and level["ops_run"]["bgv.mul"] == 3
    assert dot["jit"]["check"] == "ok" and level["jit"]["check"] == "ok"
    # a pipeline that refuses a source is a row with heir-opt's reason, not a failure
    assert rows["dot_product_8f", "bgv"]["check"] == "not lowered"
    assert "noise analysis" in rows["dot_product_8f", "bgv"]["reason"]


@pytest.mark.cc
def test_dist_benchmark_writes_its_json(tmp_path: Path):
    out = tmp_path / "dist.json"
    bench("dist", "--quick", "--items", "12", "--engines", "local", "--out", str(out), timeout=300)
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["benchmark"] == "dist" and data["quick"] is True
    assert {"items_per_s", "ms_an_item", "replay_ms", "item_bytes", "keys_bytes"} <= set(
        data["bare"]
    )
    assert [(r["engine"], r["workers"]) for r in data["results"]] == [("local", 1), ("local", 2)]
    for row in data["results"]:
        assert row["check"] == "ok" and row["items"] == 12 and row["items_per_s"] > 0
    (goal,) = data["goals"]
    assert {"speedup_2_over_1", "overhead_1_worker", "driver_peak_bytes", "memory_flat"} <= set(
        goal
    )


@pytest.mark.cc
def test_threads_benchmark_writes_its_json(tmp_path: Path):
    """Two rounds of one and two threads in turn; a speed-up is the median of in-round ratios."""
    out = tmp_path / "threads.json"
    args = ["--tiny", "--rounds", "2", "--repeat", "2", "--out", str(out)]
    stdout = bench("threads", *args, timeout=600)
    assert stdout.strip().splitlines()[-1] == f"wrote {out}"
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["run"]["threads"] == [1, 2] and data["run"]["peer_skipped"] == "--no-peer"
    rows = {(r["bench"], r["threads"], r["round"]): r for r in data["results"]}
    benches = ("ckks.multiply", "ckks.rotate")
    assert set(rows) == {(b, t, k) for b in benches for t in (1, 2) for k in (0, 1)}
    for r in rows.values():
        assert r["check_bits"] > 15 and r["median_ms"] > 0 and len(r["times_ms"]) == 2
        assert 1 <= r["team"] <= r["threads"]  # never more than asked, one when REN_THREADS=1
    for s in data["summary"]:
        one = [rows[s["bench"], 1, k]["median_ms"] for k in (0, 1)]
        mine = [rows[s["bench"], s["threads"], k]["median_ms"] for k in (0, 1)]
        want = sorted(a / b for a, b in zip(one, mine, strict=True))
        assert s["round_speedups"] == pytest.approx([one[k] / mine[k] for k in (0, 1)])
        assert s["speedup"] == pytest.approx(sum(want) / 2)  # the median of two


@pytest.mark.cc
def test_pairs_benchmark_writes_its_json(tmp_path: Path):
    out = tmp_path / "pairs.json"
    stdout = bench("pairs", "--sets", "q", "--pairs", "3", "--out", str(out), timeout=300)
    assert stdout.strip().splitlines()[-1] == f"wrote {out}"
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["benchmark"] == "pairs" and data["pairs"] == 3
    if not data["peer"]["available"]:  # SEAL is not installed: said, and nothing timed
        assert data["results"] == [] and "SEAL is not installed" in stdout
        return
    rows = {r["bench"]: r for r in data["results"]}
    assert set(rows) == {"ckks.multiply", "ckks.rotate"}
    for row in rows.values():
        # both results were decrypted and compared with NumPy before a pair was timed
        assert row["params"] == "q" and row["check"] == "ok"
        assert row["ren_bits"] > 20 and row["seal_bits"] > 12
        assert row["ren_ms"] > 0 and row["seal_ms"] > 0
        assert 0 < row["ratio_q1"] <= row["ratio"] <= row["ratio_q3"]


def test_displays_benchmark_writes_its_json(tmp_path: Path):
    from ren.engine.schedule import PASSES

    out = tmp_path / "displays.json"
    stdout = bench("displays", "--quick", "--repeat", "1", "--out", str(out), timeout=300)
    assert stdout.strip().splitlines()[-1] == f"wrote {out}"
    data = json.loads(out.read_text(encoding="utf-8"))
    keys = {"benchmark", "machine", "device", "quick", "repeat", "limit_bytes", "results"}
    assert keys <= set(data)
    assert data["benchmark"] == "displays" and data["device"] == "python"
    assert data["quick"] is True and data["repeat"] == 1 and data["limit_bytes"] == 200_000
    passes = [f"trace.before_after({p.__name__.rsplit('.', 1)[-1]!r})" for p, _ in PASSES]
    shown = ["ciphertext", "ciphertext.parts[0]", "context", "params", "jit", "trace"]
    shown += ["trace.memory()", *passes, "debugger (prepare)", "debugger.overview()"]
    shown += ["debugger.next_region()"]
    assert [row["display"] for row in data["results"]] == shown
    for row in data["results"]:  # the times are there, never checked
        assert {"display", "bytes", "min_s", "median_s", "offline", "under_limit"} == set(row)
        assert row["bytes"] > 0 and row["offline"] is True
        assert row["under_limit"] is (row["bytes"] <= data["limit_bytes"])
