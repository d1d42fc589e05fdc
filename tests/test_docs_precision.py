"""The precision guide (``docs/guides/precision.md``) runs and prints what it shows.

The page's blocks run in order (``tests.pages.run_page``, strict): the predicted and measured
precision it prints, and the parameters ``choose`` gives. The figures it quotes of the model are
checked where they are made (``tests/schemes/test_ckks_noise.py``, ``test_ckks_choose.py``).
"""

from __future__ import annotations

from pathlib import Path

from tests import pages

PAGE = Path(__file__).resolve().parents[1] / "docs" / "guides" / "precision.md"


def test_every_example_runs_and_prints_what_the_page_shows():
    namespace, checked = pages.run_page(PAGE)
    assert namespace and checked == 2
