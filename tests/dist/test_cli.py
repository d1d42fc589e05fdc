"""``python -m ren.dist``: a saved plan over a folder of items, on the local engine."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.dist import plans

pytestmark = pytest.mark.cc

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ren.dist", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        check=False,
    )


def test_a_folder_of_items_goes_through(cpu: plans.Setup, tmp_path: Path) -> None:
    inputs, outputs = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    items = {f"ct{i:02d}": cpu.item(i) for i in range(6)}
    items["ct03"] = items["ct03"][:-1]  # truncated
    for name, blob in items.items():
        (inputs / name).write_bytes(blob)
    (tmp_path / "keys").write_bytes(cpu.keys.to_bytes())
    done = _run(
        cpu.plan,
        inputs,
        outputs,
        "--keys",
        tmp_path / "keys",
        "--engine",
        "local",
        "--workers",
        "2",
        "--insecure",
        "--quiet",
        "--audit",
        "2",
    )
    assert done.returncode == 1, done.stderr  # one item failed
    assert "5 of 6 items written" in done.stdout
    for name, blob in items.items():
        if name != "ct03":
            assert (outputs / name).read_bytes() == cpu.expected(blob)
    assert not (outputs / "ct03").exists()
    (error,) = json.loads((outputs / "errors.json").read_text())
    assert error["item"] == "ct03" and error["kind"] == "input"
    assert "ct03: input:" in done.stderr


def test_insecure_keys_need_the_opt_in(cpu: plans.Setup, tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "keys").write_bytes(cpu.keys.to_bytes())
    done = _run(
        cpu.plan,
        tmp_path / "in",
        tmp_path / "out",
        "--keys",
        tmp_path / "keys",
        "--engine",
        "local",
        "--workers",
        "1",
        "--quiet",
    )
    assert done.returncode == 2
    assert "insecure" in done.stderr


def test_a_missing_keys_file_is_exit_status_2(cpu: plans.Setup, tmp_path: Path) -> None:
    done = _run(
        cpu.plan, tmp_path, tmp_path / "out", "--keys", tmp_path / "nope", "--engine", "local"
    )
    assert done.returncode == 2 and "nope" in done.stderr
