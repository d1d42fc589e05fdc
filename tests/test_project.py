"""The project's own promises: the README's quick start, CI, the scripts and the test markers."""

from __future__ import annotations

import re
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MARKERS = ("cc", "nvcc", "gpu", "graphviz", "slow")


def quick_start_commands() -> list[str]:
    """The commands in the first code block under the README's ``## Quick start``."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```[a-z]*\n(.*?)```", section, re.DOTALL)
    assert block, "README's Quick start has no code block"
    lines = [line.strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_readme_quick_start_is_two_existing_scripts():
    commands = quick_start_commands()
    assert commands == ["bash scripts/demo.sh", "bash scripts/test.sh"]
    for command in commands:
        assert (ROOT / command.split()[1]).is_file(), command


def test_ci_runs_the_test_script():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in ci
    assert re.search(r"^exec bash scripts/test\.sh\b", ci, re.MULTILINE)


def test_markers_are_registered_and_strict(pytestconfig: pytest.Config):
    registered = {line.split(":", 1)[0].strip() for line in pytestconfig.getini("markers")}
    assert set(MARKERS) <= registered
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "--strict-markers" in pyproject["tool"]["pytest"]["ini_options"]["addopts"]


@pytest.mark.parametrize(
    "script", ["scripts/setup.sh", "scripts/test.sh", "scripts/demo.sh", ".ci/run"]
)
def test_shell_scripts_parse(script: str):
    result = subprocess.run(["bash", "-n", str(ROOT / script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_every_op_has_a_line_in_the_ir_docs():
    from ren.ir.op import Op

    page = (ROOT / "docs" / "ir.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip() for line in page.splitlines() if line.startswith("| `")}
    assert [op.name for op in Op if f"`{op.name}`" not in rows] == []
