"""``benchmarks/openfhe_peer.py`` finds OpenFHE's Python and runs the peer script there.

OpenFHE itself is never needed: an interpreter "with OpenFHE" is this Python behind a shell script
that puts a stand-in ``openfhe`` module on its path, and the peer script is a stand-in that echoes
what it was given.
"""

from __future__ import annotations

import importlib.util
import json
import stat
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def peer():
    """``benchmarks/openfhe_peer.py`` as a module (standard library only)."""
    path = ROOT / "benchmarks" / "openfhe_peer.py"
    spec = importlib.util.spec_from_file_location("openfhe_peer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fake_python(tmp_path: Path, *, with_openfhe: bool) -> Path:
    """An executable that runs this Python, with a stand-in ``openfhe`` module when asked."""
    lib = tmp_path / "lib"
    lib.mkdir()
    if with_openfhe:
        (lib / "openfhe.py").write_text("__version__ = '0.0-stand-in'\n", encoding="utf-8")
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH="{lib}" exec "{sys.executable}" "$@"\n')
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    return python


ECHO = """\
import json, os, sys
config, out = sys.argv[1], sys.argv[2]
with open(config) as f:
    config = json.load(f)
result = {"config": config, "quick": "--quick" in sys.argv,
          "omp": os.environ.get("OMP_NUM_THREADS"), "rows": [], "skipped": []}
with open(out, "w") as f:
    json.dump(result, f)
"""


def test_a_missing_interpreter_is_none_with_a_reason(peer, monkeypatch, tmp_path: Path):
    missing = tmp_path / "no-such-python"
    monkeypatch.setenv(peer.ENV_VAR, str(missing))
    assert peer.find_python() is None
    reason = peer.skip_reason()
    assert isinstance(reason, str)
    assert str(missing) in reason and peer.ENV_VAR in reason
    assert "benchmarks/peers/README.md" in reason


def test_an_interpreter_without_openfhe_is_none(peer, monkeypatch, tmp_path: Path):
    monkeypatch.setenv(peer.ENV_VAR, str(fake_python(tmp_path, with_openfhe=False)))
    assert peer.find_python() is None
    reason = peer.skip_reason()
    assert "cannot import openfhe" in reason and "No module named 'openfhe'" in reason


def test_an_interpreter_with_openfhe_is_found(peer, monkeypatch, tmp_path: Path):
    python = fake_python(tmp_path, with_openfhe=True)
    monkeypatch.setenv(peer.ENV_VAR, str(python))
    assert peer.find_python() == str(python)
    assert peer.skip_reason() is None


def test_without_the_variable_the_repository_venv_is_tried(peer, monkeypatch, tmp_path: Path):
    assert peer.DEFAULT_PYTHON == ROOT / ".venv-openfhe" / "bin" / "python"
    monkeypatch.delenv(peer.ENV_VAR, raising=False)
    monkeypatch.setattr(peer, "DEFAULT_PYTHON", tmp_path / "absent" / "python")
    assert peer.find_python() is None
    reason = peer.skip_reason()
    assert str(tmp_path / "absent" / "python") in reason
    assert f"set {peer.ENV_VAR} to use another" in reason


def test_run_hands_over_the_config_and_returns_the_json(peer, monkeypatch, tmp_path: Path):
    monkeypatch.setenv(peer.ENV_VAR, str(fake_python(tmp_path, with_openfhe=True)))
    monkeypatch.setenv("OMP_NUM_THREADS", "8")  # the peer runs on one thread whatever is set
    script = tmp_path / "echo.py"
    script.write_text(ECHO, encoding="utf-8")
    monkeypatch.setattr(peer, "SCRIPT", script)
    config = {"n": 8192, "groups": {"sum": {}}}
    result = peer.run(config, quick=True)
    assert result == {"config": config, "quick": True, "omp": "1", "rows": [], "skipped": []}
    assert peer.run(config)["quick"] is False


def test_run_names_the_stderr_tail_on_failure(peer, monkeypatch, tmp_path: Path):
    monkeypatch.setenv(peer.ENV_VAR, str(fake_python(tmp_path, with_openfhe=True)))
    script = tmp_path / "fail.py"
    script.write_text("import sys\nsys.exit('ring dimension 8192 refused')\n", encoding="utf-8")
    monkeypatch.setattr(peer, "SCRIPT", script)
    with pytest.raises(RuntimeError, match=r"exit 1.*\n.*ring dimension 8192 refused"):
        peer.run({})


def test_run_reports_a_script_that_writes_no_json(peer, monkeypatch, tmp_path: Path):
    monkeypatch.setenv(peer.ENV_VAR, str(fake_python(tmp_path, with_openfhe=True)))
    script = tmp_path / "silent.py"
    script.write_text("import sys\nprint('nothing written', file=sys.stderr)\n", encoding="utf-8")
    monkeypatch.setattr(peer, "SCRIPT", script)
    with pytest.raises(RuntimeError, match=r"wrote no JSON.*\n.*nothing written"):
        peer.run({})


def test_run_stops_at_the_timeout(peer, monkeypatch, tmp_path: Path):
    monkeypatch.setenv(peer.ENV_VAR, str(fake_python(tmp_path, with_openfhe=True)))
    script = tmp_path / "slow.py"
    script.write_text("import sys, time\nprint('keygen', file=sys.stderr, flush=True)\n"
                      "time.sleep(30)\n", encoding="utf-8")  # fmt: skip
    monkeypatch.setattr(peer, "SCRIPT", script)
    with pytest.raises(RuntimeError, match="ran past 1 s"):
        peer.run({}, timeout=1)


def test_run_without_the_peer_raises_the_skip_reason(peer, monkeypatch, tmp_path: Path):
    monkeypatch.setenv(peer.ENV_VAR, str(tmp_path / "no-such-python"))
    with pytest.raises(RuntimeError, match="OpenFHE peer unavailable"):
        peer.run({})


def test_the_saved_config_names_every_group_once(peer):
    assert set(peer.CONFIG["groups"]) == {"rotations", "linear", "sum", "chebyshev"}
    assert json.loads(json.dumps(peer.CONFIG)) == peer.CONFIG  # it travels to the peer as JSON
