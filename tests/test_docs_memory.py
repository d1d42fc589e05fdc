"""The examples in ``docs/memory.md`` run and print what the page shows.

As for ``docs/realize.md``: the page's ```` ```python ```` blocks run in order in one namespace,
and each ```` ```text ```` block right after one is the output that block must print. The page's
last text block, the ``REN_DEBUG=2`` line for the worked example, follows no code block; it is
checked against a realization of the example's ``out`` with ``REN_DEBUG=2``.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from tests import pages

PAGE = Path(__file__).resolve().parents[1] / "docs" / "memory.md"


def blocks() -> list[tuple[str, str]]:
    return pages.blocks(PAGE)


@pytest.fixture
def plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page shows the planner on, without debug output, whatever the shell has set."""
    for var in ("REN_NO_PLAN", "REN_POISON", "REN_DEBUG"):
        monkeypatch.delenv(var, raising=False)


def run_page() -> tuple[dict[str, object], int]:
    """Run the page's code blocks, comparing outputs; the namespace and the blocks compared."""
    return pages.run_page(PAGE, strict=False)


@pytest.mark.usefixtures("plain_env")
def test_every_example_prints_what_the_page_shows():
    _, checked = run_page()
    assert checked >= 6  # the TLSF demo and every step of the worked example


@pytest.mark.usefixtures("plain_env")
def test_debug_line_is_what_realize_prints(monkeypatch: pytest.MonkeyPatch):
    namespace, _ = run_page()
    monkeypatch.setenv("REN_DEBUG", "2")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        namespace["out"].realize()
    memory_lines = [line for line in err.getvalue().splitlines() if "memory python:" in line]
    assert len(memory_lines) == 1
    assert blocks()[-1] == ("text", memory_lines[0] + "\n")
    assert memory_lines[0].strip() == namespace["arena"].summary()  # the plan realize used
