"""``scripts/trial.py``, the adversarial trial, runs and finds nothing to report on this tree.

Each of its cases carries its own oracle (the refusal a bad input must get, with a message naming
the argument; or the right answer, checked against Python integers, NumPy or the python backend).
Its quick set runs here: a case that turns silent or crashes again fails this test, named.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CATEGORIES = {
    "bad input",
    "crafted blobs",
    "cache faults",
    "threads",
    "jit misuse",
    "security",
    "crafted plans",
    "jit oracle",
    "interop files",
    "ckks ranges",
}


@pytest.mark.cc
def test_the_quick_trial_finds_every_case_clear(tmp_path: Path):
    out = tmp_path / "trial.json"
    cmd = [sys.executable, str(ROOT / "scripts" / "trial.py"), "--quick", "--out", str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert set(data["totals"]) == CATEGORIES
    assert out.with_suffix(".md").exists()
    for category, total in data["totals"].items():
        assert total["cases"] > 0, category
        assert total["cases"] == total["clear"] + total["silent"] + total["crash"]
    bad = [c for c in data["cases"] if c["outcome"] != "clear"]
    assert not bad, "\n".join(f"{c['category']}: {c['name']}: {c['detail']}" for c in bad)
