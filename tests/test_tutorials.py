"""Every tutorial runs: ``python tutorials/<name>.py`` from the repository root exits with 0.

A tutorial is a jupytext notebook in the percent format (``# %%`` code cells, ``# %% [markdown]``
text cells) that ends by checking its results against a reference, so running it as a script is
the test. Each runs in a subprocess of its own, as a reader would run it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "tutorials").glob("*.py"))


def test_there_are_tutorials():
    assert [p.name for p in TUTORIALS if p.name == "05_ckks.py"] == ["05_ckks.py"]


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_is_a_percent_notebook_with_a_title(path: Path):
    text = path.read_text(encoding="utf-8")
    assert "format_name: percent" in text, "the jupytext header names the percent format"
    assert "\n# %% [markdown]\n# # " in text, "the first markdown cell starts with a title"
    assert "\n# %%\n" in text, "at least one code cell"


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_runs(path: Path):
    env = {k: v for k, v in os.environ.items() if k not in ("REN_DEBUG", "REN_DUMP")}
    result = subprocess.run(
        [sys.executable, str(path.relative_to(ROOT))],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, f"{path.name} failed:\n{result.stdout}\n{result.stderr}"
