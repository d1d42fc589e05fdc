"""The benchmark scripts run and write the JSON they promise (the figures are never checked)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

TIMING_KEYS = {"median_s", "min_s", "first_s", "times_s"}


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
    script = ROOT / "benchmarks" / "jit.py"
    cmd = [sys.executable, str(script), "--quick", "--repeat", "1", "--out", str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
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
    script = ROOT / "benchmarks" / "ckks.py"
    cmd = [sys.executable, str(script), "--quick", "--repeat", "1", "--repeat-python", "1"]
    cmd += ["--trials", "1", "--json", str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == f"wrote {out}"
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
