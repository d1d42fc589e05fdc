"""Every tutorial runs as a notebook, and its display cells show Ren's rich displays.

``tests/test_tutorials.py`` runs each tutorial as a script; here each is executed as a reader's
Jupyter would run it: jupytext reads the percent-format ``.py`` as an ``.ipynb`` and ``nbclient``
runs it in an IPython kernel (``docs/hooks.py``'s ``execute_notebook``, which the docs build uses
too). Oracles:

- every value a cell showed (its ``execute_result``: the kernel shows the value of a cell's last
  line unless it is ``None``) is a Ren object's rich display, ``text/html`` or
  ``image/svg+xml``; a cell ending in a bare name or attribute (``trace``, ``ctx.params``: no
  call, which may return ``None``) shows one; each tutorial shows at least one;
- every rich output is offline (no script, no URL fetched) and under the 200 KB of a display;
- two notebooks exported to HTML (nbconvert) and opened in headless chromium at 1400 pixels:
  the screenshot is not blank, and the browser's own layout holds a drawn graph, the region
  boxes and a table, each of some size.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ren.display import LIMIT
from ren.viz.browser import find, measure, png_colours, screenshot

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = sorted((ROOT / "tutorials").glob("[0-9][0-9]_*.py"))
RICH = ("text/html", "image/svg+xml")
XMLNS = re.compile(r'xmlns(:\w+)?="[^"]*"')


@functools.cache
def hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ren_docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def executed(name: str) -> Any:
    """The tutorial ``name`` executed as a notebook (once per test process)."""
    return hooks().execute_notebook(ROOT / "tutorials" / name)


def is_display_cell(source: str) -> bool:
    """Whether the cell must show a value: its last statement a bare name, attribute or subscript
    (a value, not a call that may return ``None``), without the ``;`` that hides it."""
    body = ast.parse(source).body
    if not body or not isinstance(body[-1], ast.Expr) or source.rstrip().endswith(";"):
        return False
    return isinstance(body[-1].value, (ast.Name, ast.Attribute, ast.Subscript))


def rich(cell: Any) -> list[str]:
    """The rich bodies (HTML or SVG) a code cell displayed."""
    found = []
    for o in cell.get("outputs", []):
        data = o.get("data", {})
        found += [data[kind] for kind in RICH if kind in data]
    return found


def test_display_cells_are_recognized():
    assert is_display_cell("x = 1\nx")
    assert is_display_cell("ctx.params")
    assert is_display_cell("steps['x']")
    assert not is_display_cell("print(x)")
    assert not is_display_cell("show_plan(plan)")
    assert not is_display_cell("x = 1")
    assert not is_display_cell("x;")
    assert not is_display_cell("for i in range(2):\n    i")


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_runs_as_a_notebook_and_shows_ren_objects(path: Path):
    notebook = executed(path.name)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    for cell in code:
        last = cell.source.splitlines()[-1]
        values = [o for o in cell.outputs if o["output_type"] == "execute_result"]
        if is_display_cell(cell.source):
            assert values, f"{path.name}: the cell ending {last!r} showed no value"
        for value in values:
            assert any(kind in value["data"] for kind in RICH), (
                f"{path.name}: the cell ending {last!r} showed {list(value['data'])}, "
                "not a rich display (text/html or image/svg+xml)"
            )
    assert any(rich(c) for c in code), f"{path.name} shows no Ren object"
    for cell in code:
        for body in rich(cell):
            assert len(body.encode()) < LIMIT, f"{path.name}: a display of {len(body)} bytes"
            assert "<script" not in body.lower(), f"{path.name}: a display with a script"
            named = XMLNS.sub("", body)  # SVG's namespaces are names, not links
            assert "http:" not in named and "https:" not in named, f"{path.name} links out"


# -- as a reader sees them: two notebooks exported to HTML -----------------------------------------

needs_chromium = pytest.mark.skipif(
    find() is None, reason="needs Debian's chromium: apt-get install chromium"
)

#: In the exported page: the drawn graphs, the region boxes and the tables, with their sizes.
LOOK = """
function sized(nodes) {
  return Array.prototype.slice.call(nodes).map(function (e) {
    var r = e.getBoundingClientRect();
    return [Math.round(r.width), Math.round(r.height)];
  }).filter(function (wh) { return wh[0] > 0 && wh[1] > 0; });
}
var out = document.querySelectorAll(".jp-OutputArea-output");
var scope = Array.prototype.slice.call(out);
function within(selector) {
  var found = [];
  scope.forEach(function (o) { found = found.concat(Array.prototype.slice.call(
    o.querySelectorAll(selector))); });
  return found;
}
return {
  width: document.documentElement.scrollWidth,
  graphs: sized(within("svg g.node")).length,
  svgs: sized(within("svg")),
  boxes: sized(within(".ren-shown details.box")).length,
  tables: sized(within("table")).length,
};
"""


#: What each exported notebook must show: at least this many drawn graph nodes, region boxes
#: and tables. Tutorial 02 draws its graphs and a pass before and after, and boxes its two
#: regions; tutorial 07 boxes a bootstrap's stages and tables its steps (its graphs are far past
#: what a display draws).
SHOWN = {
    "02_graph_and_passes.py": {"graphs": 3, "boxes": 2, "tables": 1},
    "07_bootstrapping.py": {"graphs": 0, "boxes": 5, "tables": 3},
}


@needs_chromium
@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot for the graphs")
@pytest.mark.parametrize("name", sorted(SHOWN))
def test_an_exported_notebook_shows_graphs_boxes_and_tables(name: str, tmp_path: Path):
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter().from_notebook_node(executed(name))
    page = tmp_path / f"{Path(name).stem}.html"
    page.write_text(body, encoding="utf-8")
    shot = screenshot(page.resolve().as_uri(), tmp_path / "shot.png", 1400, 2400)
    assert png_colours(shot.read_bytes(), enough=32) >= 32, "the screenshot is blank"
    seen = measure(page, LOOK, width=1400, height=2400)
    assert seen["width"] <= 1400, f"{name} is wider than the window: {seen}"
    for what, least in SHOWN[name].items():
        assert seen[what] >= least, f"{name}: {seen[what]} {what}, fewer than {least}: {seen}"
    if SHOWN[name]["graphs"]:
        assert any(w >= 100 and h >= 50 for w, h in seen["svgs"]), seen
