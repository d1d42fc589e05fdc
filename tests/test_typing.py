"""Ren's version and types: ``ren.__version__``, the ``py.typed`` marker, a user's program.

The version's oracle is ``pyproject.toml`` read here with ``tomllib`` and the installed
distribution's metadata. The types' oracle is ``mypy --strict`` on ``tests/typing_usage.py`` (a
user's program with ``assert_type`` on what a checker must infer), run from another directory
with Ren on the path as an installed package: mypy then reads Ren's annotations only because of
its ``py.typed``, as it does for a user (the same check without the marker fails, below).
"""

from __future__ import annotations

import re
import runpy
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

import ren

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
USAGE = ROOT / "tests" / "typing_usage.py"


def test_version_is_the_installed_distributions_and_pyprojects():
    version = PYPROJECT["project"]["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    assert ren.__version__ == metadata.version("ren") == version
    assert "version" not in PYPROJECT["project"].get("dynamic", [])  # written in one place


def test_version_of_a_source_tree_that_was_never_installed(monkeypatch: pytest.MonkeyPatch):
    def not_installed(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", not_installed)
    ren._version.cache_clear()
    try:
        assert ren.__version__ == PYPROJECT["project"]["version"]
    finally:
        ren._version.cache_clear()


def test_other_missing_names_are_still_attribute_errors():
    assert not hasattr(ren, "__versions__")
    with pytest.raises(AttributeError, match="module 'ren' has no attribute 'Polynomial'"):
        ren.Polynomial  # type: ignore[attr-defined]  # noqa: B018


def test_py_typed_is_in_the_package_and_shipped():
    assert (ROOT / "ren" / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["ren"]


def _mypy_strict(tmp_path: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mypy --strict`` on a copy of the usage file in ``tmp_path``, with ``site`` on the path."""
    shutil.copy(USAGE, tmp_path / USAGE.name)
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\nstrict = True\npython_version = 3.11\n", encoding="utf-8")
    command = [sys.executable, "-m", "mypy", "--config-file", str(config), USAGE.name]
    command += ["--cache-dir", str(tmp_path / ".mypy_cache")]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(site), "HOME": str(tmp_path)}
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)


@pytest.mark.slow
def test_a_users_program_type_checks_strictly_against_the_installed_package(tmp_path: Path):
    result = _mypy_strict(tmp_path, ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found in 1 source file" in result.stdout


@pytest.mark.slow
def test_without_py_typed_a_checker_does_not_read_ren(tmp_path: Path):
    site = tmp_path / "site"
    ignore = shutil.ignore_patterns("__pycache__", "py.typed")
    shutil.copytree(ROOT / "ren", site / "ren", ignore=ignore)
    result = _mypy_strict(tmp_path, site)
    assert result.returncode == 1
    missing = 'Skipping analyzing "ren": module is installed, but missing library stubs or py.typed'
    assert missing in result.stdout


def test_the_users_program_runs():
    runpy.run_path(str(USAGE), run_name="typing_usage")


def test_the_test_command_type_checks_the_package():
    script = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    steps = re.findall(r'^echo "== ([^"]+)"', script, re.MULTILINE)
    assert steps.index("mypy") == steps.index("ruff format --check") + 1
    assert steps.index("mypy") < steps.index("pytest")
    assert "\n.venv/bin/mypy ren\n" in script
    mypy = PYPROJECT["tool"]["mypy"]
    assert mypy["python_version"] == "3.11" and mypy["check_untyped_defs"] is True
    assert "ignore_missing_imports" not in mypy  # only for the optional extras' modules
    strict = [o for o in mypy["overrides"] if o.get("disallow_untyped_defs")]
    assert strict and strict[0]["disallow_incomplete_defs"] is True
    for module in ("ren", "ren.poly", "ren.ring", "ren.capture.function", "ren.schemes.ckks"):
        assert module in strict[0]["module"], module
    assert ".mypy_cache/" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "mypy" in readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
