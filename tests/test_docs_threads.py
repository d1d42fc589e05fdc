"""The examples in ``docs/threads.md`` run and print what the page shows.

The page's ```` ```python ```` blocks run in order in one namespace, each ```` ```text ```` block
being the output of the python block before it; the threaded example checks its own words against
a schoolbook product in Python integers.
"""

from __future__ import annotations

from pathlib import Path

from tests import pages

PAGE = Path(__file__).resolve().parents[1] / "docs" / "threads.md"


def test_every_example_prints_what_the_page_shows():
    _, checked = pages.run_page(PAGE)
    assert checked == 3


def test_the_page_is_in_the_site_navigation():
    nav = (PAGE.parents[1] / "mkdocs.yml").read_text(encoding="utf-8")
    assert "threads.md" in nav
