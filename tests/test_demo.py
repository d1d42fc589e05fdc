"""The README's main job: the demo builds a program, prints its graph, and the values agree."""

import subprocess
import sys

from ren import demo


def test_demo_agrees(capsys):
    assert demo.main([]) == 0
    out = capsys.readouterr().out
    assert "MUL u32" in out and "BUFFER u32 b0" in out
    assert "agree: True" in out


def test_demo_other_ring(capsys):
    assert demo.main(["--n", "16", "--moduli", "97", "193", "257"]) == 0
    assert "agree: True" in capsys.readouterr().out


def test_demo_runs_as_a_module():
    out = subprocess.run(
        [sys.executable, "-m", "ren.demo"], capture_output=True, text=True, check=True
    ).stdout
    assert "agree: True" in out
