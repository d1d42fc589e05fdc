"""The examples in ``docs/circuits/`` run and print what each page shows.

Each page's ```` ```python ```` blocks run in order in one namespace, each ```` ```text ```` block
the output of the block before it; the pages check their values against NumPy in the blocks.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import pages

PAGES = sorted((Path(__file__).resolve().parents[1] / "docs" / "circuits").glob("*.md"))


@pytest.fixture(autouse=True)
def plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("REN_DEVICE", "REN_DEBUG", "REN_DUMP", "REN_NO_PLAN", "REN_POISON"):
        monkeypatch.delenv(var, raising=False)


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_every_example_runs_and_prints_what_the_page_shows(page: Path):
    namespace, checked = pages.run_page(page)
    assert namespace and checked >= 1
