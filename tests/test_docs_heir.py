"""The HEIR guide (``docs/guides/heir.md``) runs and prints what it shows, and its numbers are true.

The page's blocks run in order (``tests.pages.run_page``, strict). That only says the page agrees
with Ren, so its claims are checked here against NumPy's value of the function it compiles, the
dot product plus 0.5 (CKKS) or plus 3 (BGV, BFV, exact), and the op counts against the lowered
module's text. It needs ``heir-opt`` and heir-py's frontend (the ``heir`` extra).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ren.interop.heir.tools import find_heir_opt
from tests import pages

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "guides" / "heir.md"

pytestmark = pytest.mark.skipif(
    find_heir_opt() is None, reason="heir-opt not installed (pip install -e .[heir])"
)


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    pytest.importorskip("numba", reason="heir-py's frontend needs numba (pip install -e .[heir])")
    return pages.run_page(PAGE)


def test_every_example_runs_and_prints_what_the_page_shows(ran):
    _, checked = ran
    assert checked == len([b for lang, b in pages.blocks(PAGE) if lang == "text"]) == 7


def test_the_page_s_numbers_are_numpy_s(ran):
    ns, _ = ran
    x, w = ns["x"], ns["w"]
    program = ns["program"]
    assert abs(program(x, w) - (np.dot(x, w) + 0.5)) < 2.0**-25
    assert abs(program.cleartext(x, w) - (np.dot(x, w) + 0.5)) < 1e-12
    lowered = ns["lowered"]
    counted = {
        name: len(re.findall(rf'"{re.escape(name)}"\(', lowered)) for name in program.op_counts()
    }
    assert counted == program.op_counts()
    a, b = np.arange(8) - 3, np.arange(8) * 2 + 1
    assert f"bgv 65537 {int(np.dot(a, b)) + 3} {int(np.dot(a, b)) + 3}" in PAGE.read_text()
