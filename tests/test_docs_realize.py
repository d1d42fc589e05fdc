"""The examples in ``docs/realize.md`` run and print what the page shows.

The page's ```` ```python ```` blocks run in order in one namespace (as a reader would type them);
each ```` ```text ```` block right after one is the output that block must print. The last text
block (``REN_DEBUG`` timings on stderr) follows no code block and is not checked.
"""

from __future__ import annotations

from pathlib import Path

from tests import pages

PAGE = Path(__file__).resolve().parents[1] / "docs" / "realize.md"


def test_every_example_prints_what_the_page_shows():
    _, checked = pages.run_page(PAGE, strict=False)
    assert checked >= 7  # every example with an output block was compared
