"""The example in ``docs/notebooks.md`` runs and prints what the page shows."""

from __future__ import annotations

from pathlib import Path

from tests import pages

PAGE = Path(__file__).resolve().parents[1] / "docs" / "notebooks.md"


def test_every_example_prints_what_the_page_shows():
    _, checked = pages.run_page(PAGE)
    assert checked == 3


def test_the_page_is_in_the_site_navigation():
    nav = (PAGE.parents[1] / "mkdocs.yml").read_text(encoding="utf-8")
    assert "notebooks.md" in nav
