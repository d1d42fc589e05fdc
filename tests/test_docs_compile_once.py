"""The examples in ``docs/compile-once.md`` run and print what the page shows.

The page's ```` ```python ```` blocks run in order in one namespace, each ```` ```text ```` block
the output of the block before it. The values are checked by hand against ``docs/rings.md``'s ring
(``3 * x + y`` in ``Z_1649``), and the counts by the cache itself, started empty.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ren.engine import schedule_cache
from ren.reference import evaluate
from tests import pages

PAGE = Path(__file__).resolve().parents[1] / "docs" / "compile-once.md"


@pytest.fixture(autouse=True)
def empty_cache(monkeypatch: pytest.MonkeyPatch):
    for var in ("REN_DEBUG", "REN_SCHEDULE_CACHE", "REN_DEVICE", "REN_NO_PLAN"):
        monkeypatch.delenv(var, raising=False)
    schedule_cache.clear()
    yield
    schedule_cache.clear()


def test_the_page_runs_and_prints_what_it_shows():
    namespace, checked = pages.run_page(PAGE)
    assert checked == 4
    x, y = namespace["x"], namespace["y"]
    Q = 17 * 97
    for c, out in zip((3, 4, 5), ((x * c + y).tolist() for c in (3, 4, 5)), strict=True):
        assert out == [(c * a + b) % Q for a, b in zip(x.tolist(), y.tolist(), strict=True)]
    for name in ("loaded", "again"):  # from the file, and from its bytes
        loaded = namespace[name]
        assert loaded(x, y).tolist() == list(evaluate(((x + y) * (x - 1)).node))  # big integers


def test_the_page_is_in_the_nav():
    nav = (PAGE.parents[1] / "mkdocs.yml").read_text(encoding="utf-8")
    assert "compile-once.md" in nav
