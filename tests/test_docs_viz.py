"""The examples in ``docs/viz.md`` run and print what the page shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import pages

PAGE = Path(__file__).resolve().parents[1] / "docs" / "viz.md"


@pytest.fixture(autouse=True)
def plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page shows the defaults (python device, planner on, no dumps), whatever the shell set."""
    for var in ("REN_DEVICE", "REN_DEBUG", "REN_DUMP", "REN_NO_PLAN", "REN_POISON"):
        monkeypatch.delenv(var, raising=False)


def test_every_example_prints_what_the_page_shows():
    _, checked = pages.run_page(PAGE)
    assert checked >= 4


def test_every_debugger_command_is_documented():
    from ren.viz.debug import Debugger

    text = PAGE.read_text(encoding="utf-8")
    commands = {name[3:] for name in dir(Debugger) if name.startswith("do_")} - {"EOF", "help"}
    missing = sorted(c for c in commands if f"`{c}" not in text)
    assert not missing, f"debugger commands not on the page: {missing}"
