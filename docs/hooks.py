"""MkDocs hook: the scheduler page's list of passes, generated from the code.

``docs/scheduler.md`` holds the marker line ``<!-- ren:passes -->``. ``on_page_markdown`` replaces
it with one section per entry of ``ren.engine.schedule.PASSES``, in order: a heading ``N. name``,
the one-line reason the tuple gives for the pass's position, and the pass module's docstring (its
documentation: what it does, *Requires*, *Establishes*). So the page cannot drift from the code.

MkDocs loads this file through ``hooks:`` in ``mkdocs.yml``; it imports ``ren`` from the
environment MkDocs runs in (``pip install -e .``). Nothing here touches the network.
"""

from __future__ import annotations

import inspect
from typing import Any

MARKER = "<!-- ren:passes -->"


def pass_name(module: Any) -> str:
    """The pass's short name: the last part of its module name (``ren.passes.simplify``)."""
    return module.__name__.rsplit(".", 1)[-1]


def render_passes() -> str:
    """The markdown of every pass in ``PASSES``: heading, reason, module docstring."""
    from ren.engine.schedule import PASSES

    sections = []
    for step, (module, why) in enumerate(PASSES, start=1):
        doc = inspect.cleandoc(module.__doc__ or "(this pass has no docstring)")
        sections.append(
            f"### {step}. {pass_name(module)}\n\n"
            f"**Why here:** {why}.\n\n"
            f"Module `{module.__name__}`.\n\n"
            f"{doc}\n"
        )
    return "\n".join(sections)


def on_page_markdown(markdown: str, page: Any = None, config: Any = None, files: Any = None) -> str:
    """Replace each line that is exactly ``MARKER`` (spaces aside) with ``render_passes()``."""
    if MARKER not in markdown:
        return markdown
    rendered = render_passes()
    lines = markdown.split("\n")
    return "\n".join(rendered if line.strip() == MARKER else line for line in lines)
