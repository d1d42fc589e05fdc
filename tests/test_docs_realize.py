"""The examples in ``docs/realize.md`` run and print what the page shows.

The page's ```` ```python ```` blocks run in order in one namespace (as a reader would type them);
each ```` ```text ```` block right after one is the output that block must print. The last text
block (``REN_DEBUG`` timings on stderr) follows no code block and is not checked.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "realize.md"


def blocks() -> list[tuple[str, str]]:
    return re.findall(r"```(\w+)\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)


def test_every_example_prints_what_the_page_shows():
    namespace: dict[str, object] = {}
    printed: str | None = None
    checked = 0
    for lang, body in blocks():
        if lang == "python":
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(body, str(PAGE), "exec"), namespace)
            printed = out.getvalue()
        elif lang == "text" and printed is not None:
            assert printed.strip() == body.strip()
            printed = None
            checked += 1
    assert checked >= 7  # every example with an output block was compared
