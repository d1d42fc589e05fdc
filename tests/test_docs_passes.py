"""The scheduler page (``docs/scheduler.md``) is generated from the code and shows what it runs.

The mkdocs hook (``docs/hooks.py``) replaces the page's marker line with a table of ``PASSES``:
each pass's link to its own page, its reason and the first line of its docstring. These tests call
the hook directly, as mkdocs does, on the real page, and check every pass is there, in pipeline
order, linking to a page that renders the pass module's whole docstring. The last test runs the
page's kernel-counting example and looks for its printed output on the page.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import ren
from ren.engine.schedule import PASSES, schedule
from ren.ir.node import Node
from ren.ir.op import DType, Op
from ren.poly import Poly
from ren.ring import RingSpec
from tests.pages import load_hooks

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "scheduler.md"


class FakePage:
    """What mkdocs passes as ``page``; the hook does not need more."""

    title = "The scheduler"
    file = None


def _rendered() -> str:
    hooks = load_hooks()
    text = PAGE.read_text(encoding="utf-8")
    return hooks.on_page_markdown(text, page=FakePage(), config={}, files=None)


def test_the_page_has_the_marker():
    assert load_hooks().MARKER in PAGE.read_text(encoding="utf-8").splitlines()


def test_every_pass_is_on_the_page_in_order():
    text = _rendered()
    assert load_hooks().MARKER not in text
    positions = []
    for step, (module, why) in enumerate(PASSES, start=1):
        name = module.__name__.rsplit(".", 1)[-1]
        page = f"pipeline/passes/{step:02d}_{name}.md"
        row = f"| {step} | [`{name}`]({page}) | {why} | "
        assert row in text, row
        first_line = inspect.cleandoc(module.__doc__).splitlines()[0]
        assert first_line.replace("|", "\\|") in text, first_line
        positions.append(text.index(row))
        # the pass's page renders its whole docstring (mkdocstrings) and names its reason
        body = (ROOT / "docs" / page).read_text(encoding="utf-8")
        assert f"::: {module.__name__}\n" in body
        assert f"**Why here:** {why}." in body
    assert positions == sorted(positions)
    assert len(PASSES) == 12


def test_pages_without_the_marker_are_left_alone():
    text = "# A page\n\nNo passes here.\n"
    assert load_hooks().on_page_markdown(text, page=FakePage(), config={}, files=None) == text


def test_mkdocs_runs_the_hook_and_lists_the_page():
    lines = [line.split("#")[0].strip() for line in (ROOT / "mkdocs.yml").read_text().splitlines()]
    assert "- docs/hooks.py" in lines[lines.index("hooks:") :]
    nav = [line.rsplit(":", 1)[-1].strip() for line in lines[lines.index("nav:") + 1 :]]
    assert nav.index("scheduler.md") == nav.index("ir.md") + 1
    pages = [
        f"pipeline/passes/{i:02d}_{m.__name__.rsplit('.', 1)[-1]}.md"
        for i, (m, _) in enumerate(PASSES, start=1)
    ]
    assert [nav.index(p) for p in pages] == list(
        range(nav.index(pages[0]), nav.index(pages[0]) + 12)
    )
    assert nav.index(pages[0]) == nav.index("scheduler.md") + 2  # after the "The passes:" heading


def test_the_kernel_counting_example_prints_what_the_page_shows():
    text = PAGE.read_text(encoding="utf-8")
    ring = RingSpec(n=8, moduli=(17, 97))
    a, b, c, d = ren.realize(*(Poly([k + i for i in range(8)], ring).ntt() for k in range(4)))
    e = ((a + b) * (c - 1)).rotate(3) + d
    kernels, ctx = schedule(Node(Op.SINK, DType.VOID, (e.node,)))
    printed = [f"{len(kernels)} {kernels[0].info}", str(kernels[0].ast)]
    printed += [f"{name:<20} {[r.rule for r in rs]}" for name, rs in ctx.record.items()]
    a, b, c, d = (Poly([k + i for i in range(8)], ring) for k in range(4))
    e = ((a + b) * (c - 1)).rotate(3) + d
    kernels, _ = schedule(Node(Op.SINK, DType.VOID, (e.node,)))
    printed.append("\n".join(str(k.info) for k in kernels))
    missing = [block for block in printed if block not in text]
    assert not missing, "docs/scheduler.md disagrees with the code:\n" + "\n\n".join(missing)
