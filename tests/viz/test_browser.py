"""The report as a reader sees it, in Debian's chromium (headless): not blank, and it fits.

Skips, saying why, without chromium (``scripts/test.sh`` installs it as an optional part).
Oracles: a PNG made by hand for the decoder; for the pages, the browser's own layout (the
positions and sizes it reports) against the 1400-pixel window, and the bootstrap's stages.
The docs' home page and a page of formulas are looked at by ``scripts/check_site.py``.
"""

from __future__ import annotations

import re
import struct
import zlib
from pathlib import Path

import pytest

from ren.viz.browser import find, measure, png_colours, screenshot
from ren.viz.examples import run_example
from ren.viz.precision import measure_precision
from ren.viz.report import write_report

WIDTH = 1400

needs_chromium = pytest.mark.skipif(
    find() is None, reason="needs Debian's chromium: apt-get install chromium"
)


def test_png_colours() -> None:
    """The decoder against a PNG made by hand: 2 x 2 RGB, rows filtered Sub and Paeth."""
    rows = [bytes([1, 10, 20, 30, 5, 5, 5]), bytes([4, 1, 2, 3, 200, 0, 0])]
    ihdr = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + b"\0\0\0\0"

    png = (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"".join(rows)))
    )
    png += chunk(b"IEND", b"")
    # row 0 (Sub): (10, 20, 30), (15, 25, 35); row 1 (Paeth): (11, 22, 33), (215, 25, 35)
    assert png_colours(png, 100) == 4
    with pytest.raises(ValueError, match="not a PNG"):
        png_colours(b"GIF89a", 4)


@needs_chromium
def test_screenshot_is_not_blank(tmp_path: Path) -> None:
    trace, outcome = run_example("ckks-mul")
    path = write_report(trace, tmp_path, "ckks-mul", outcome.summary, labels=outcome.labels)
    shot = screenshot(path.resolve().as_uri(), tmp_path / "out.png", 1200, 900)
    assert png_colours(shot.read_bytes(), enough=16) >= 16


#: In the page: the focused realization's region boxes, where they are and what they say.
LOOK = """
var view = document.querySelector("#%s .regions");
var r = view.getBoundingClientRect();
var boxes = Array.prototype.slice.call(view.querySelectorAll("details.box"));
var shown = boxes.filter(function (b) { return b.checkVisibility(); });
function name(b) { return b.querySelector("summary b, summary i").textContent; }
return {left: r.left, right: r.right, page: document.documentElement.scrollWidth,
        window: window.innerWidth, shown: shown.map(name),
        widest: Math.max.apply(null, shown.map(function (b) {
          return b.getBoundingClientRect().right; }))};
"""


@pytest.fixture(scope="module")
def boot_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    trace, outcome = run_example("bootstrap")
    measure_precision(trace, progress=False)
    out = tmp_path_factory.mktemp("boot")
    path = write_report(
        trace, out, "bootstrap", outcome.summary, labels=outcome.labels, focus=outcome.focus
    )
    (focus,) = outcome.focus
    return path, focus


def fits(got: dict) -> None:
    assert got["window"] == WIDTH
    assert got["page"] <= WIDTH, f"the page is {got['page']} px wide"
    assert got["left"] >= 0 and got["right"] <= WIDTH and got["widest"] <= WIDTH


@needs_chromium
def test_the_bootstraps_collapsed_graph_fits(boot_page: tuple[Path, int], tmp_path: Path) -> None:
    path, focus = boot_page
    got = measure(path, LOOK % f"r{focus}", WIDTH, 900)
    fits(got)
    stages = ["mod_raise", "coeff_to_slot", "eval_mod", "eval_mod", "slot_to_coeff"]
    assert [n for n in got["shown"] if not n.endswith(("kernel", "kernels"))] == [
        "bootstrap",
        *stages,
    ]  # the open bootstrap box and one box per stage, nothing deeper
    shot = screenshot(f"{path.resolve().as_uri()}#r{focus}-g1", tmp_path / "collapsed.png")
    assert png_colours(shot.read_bytes(), enough=16) >= 16


@needs_chromium
def test_a_region_expands_in_place(boot_page: tuple[Path, int], tmp_path: Path) -> None:
    path, focus = boot_page
    text = path.read_text(encoding="utf-8")
    m = re.search(rf'<details class="box" id="(r{focus}-g\d+)"><summary><b>eval_mod</b>', text)
    assert m is not None
    opened = path.with_name("opened.html")
    opened.write_text(text.replace(m.group(0), m.group(0).replace('">', '" open>', 1)), "utf-8")
    got = measure(opened, LOOK % f"r{focus}", WIDTH, 900)
    fits(got)
    inner = got["shown"][got["shown"].index("eval_mod") + 1 :]
    assert "evaluate_polynomial" in inner and "multiply" in inner  # its regions, drawn in place
    shot = screenshot(f"{opened.resolve().as_uri()}#{m.group(1)}", tmp_path / "expanded.png")
    assert png_colours(shot.read_bytes(), enough=16) >= 16
