"""The examples in ``docs/codegen.md`` run as written (each in a fresh interpreter, since one sets
``REN_CUDA_EMULATE`` before Ren runs a cuda kernel); each ends with its own check or realizes a
value whose words the backend tests compare with the NumPy backend."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "codegen.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)


@pytest.mark.cc
@pytest.mark.parametrize("code", EXAMPLES, ids=[f"example{i}" for i in range(len(EXAMPLES))])
def test_the_example_runs(code: str, tmp_path: Path):
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert proc.returncode == 0, proc.stderr


def test_the_page_has_the_emulator_example():
    assert len(EXAMPLES) >= 2
    assert any('os.environ["REN_CUDA_EMULATE"] = "1"' in code for code in EXAMPLES)
