"""The benchmark scripts run and write the JSON they promise (the figures are never checked)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
