"""Running a documentation page's examples, as the ``tests/test_docs_*.py`` files do.

A page's ```` ```python ```` blocks run in order in one namespace (as a reader would type them);
each ```` ```text ```` block right after one is the output that block must print.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib.util
import io
import re
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def blocks(page: Path) -> list[tuple[str, str]]:
    """The fenced blocks of ``page``, as ``(language, body)`` in order."""
    return re.findall(r"```(\w+)\n(.*?)```", page.read_text(encoding="utf-8"), re.DOTALL)


def run_page(page: Path, strict: bool = True) -> tuple[dict[str, object], int]:
    """Run the page's python blocks, comparing each one's output with the text block after it.

    Args:
        page: the Markdown file.
        strict: every text block must follow a python block; without it, a text block that
            follows none (output shown for another reason, such as a shell command's) is skipped.

    Returns:
        The namespace the blocks ran in, and how many outputs were compared.
    """
    namespace: dict[str, object] = {}
    printed: str | None = None
    checked = 0
    for lang, body in blocks(page):
        if lang == "python":
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                # dont_inherit: no __future__ import of this file's (a reader types the page bare)
                exec(compile(body, str(page), "exec", dont_inherit=True), namespace)
            printed = out.getvalue()
        elif lang == "text":
            if printed is None:
                assert not strict, f"a text block follows no python block:\n{body}"
                continue
            assert printed.strip() == body.strip(), "\n".join(
                difflib.unified_diff(
                    body.strip().splitlines(), printed.strip().splitlines(), "page", "printed"
                )
            )
            printed = None
            checked += 1
    return namespace, checked


def load_hooks() -> ModuleType:
    """``docs/hooks.py`` (the site's MkDocs hooks), loaded as MkDocs loads it: from its path."""
    spec = importlib.util.spec_from_file_location("ren_docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
