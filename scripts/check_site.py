"""Check a built site as a reader opens it from disk: every page's links lead to files.

Run by ``scripts/test.sh`` after ``mkdocs build``::

    .venv/bin/python scripts/check_site.py SITE_DIR

Every relative ``href`` and ``src`` of every page (``404.html`` aside: a web server's page, with
links from the site's root) must name a file under ``SITE_DIR``: not a directory, which a browser
opening the site from disk shows as a listing (``use_directory_urls: false`` in ``mkdocs.yml``
makes every page ``name.html``). A docstring's ``::`` must not end a paragraph, and no formula
may be left as LaTeX (``docs/hooks.py`` writes ``::`` as ``:`` and formulas as MathML). Exits 1
and names each problem, else prints how many links it read.

Where Debian's chromium is installed (``scripts/test.sh`` installs it as an optional part), the
home page and a page of formulas are also opened in it, 1400 pixels wide: each screenshot must
not be blank, the page must fit the window's width, and every formula must be drawn (a MathML
box of some width). Without chromium it says so and skips that part.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

LINK = re.compile(r'(?:href|src)="([^"#?]*)')
EXTERNAL = ("http:", "https:", "mailto:", "data:", "javascript:")


def problems(site: Path) -> tuple[list[str], int]:
    """``(problems, links read)`` for the built site in ``site``."""
    found: list[str] = []
    links = 0
    for page in sorted(site.rglob("*.html")):
        if page.name == "404.html" and page.parent == site:
            continue
        text = page.read_text(encoding="utf-8")
        where = page.relative_to(site).as_posix()
        for href in LINK.findall(text):
            if not href or href.startswith(EXTERNAL):
                continue
            links += 1
            target = (page.parent / href).resolve()
            if not target.is_file():
                kind = "a directory" if target.is_dir() else "missing"
                found.append(f"{where}: link {href!r} is {kind}")
        if "::</p>" in text:
            found.append(f"{where}: a paragraph ends with '::'")
        if 'class="arithmatex"' in text:
            found.append(f"{where}: a formula left as LaTeX (not made MathML)")
    return found, links


#: The pages looked at in a browser: the home page, and a page of formulas.
LOOKED_AT = ("index.html", "concepts/montgomery.html")

_LOOK = """
var maths = Array.prototype.slice.call(document.querySelectorAll("article math"));
return {width: document.documentElement.scrollWidth, window: window.innerWidth,
        formulas: maths.length,
        drawn: maths.filter(function (m) { return m.getBoundingClientRect().width > 0; }).length};
"""


def looked_at(site: Path, shots: Path) -> list[str]:
    """The problems a browser shows on ``LOOKED_AT`` (screenshots written into ``shots``)."""
    from ren.viz.browser import find, measure, png_colours, screenshot

    if find() is None:
        print("browser: skipped (chromium is not installed: apt-get install chromium)")
        return []
    found = []
    for name in LOOKED_AT:
        page = site / name
        shot = screenshot(page.resolve().as_uri(), shots / (name.replace("/", "-") + ".png"))
        colours = png_colours(shot.read_bytes(), enough=16)
        if colours < 16:
            found.append(f"{name}: the screenshot is blank ({colours} colours)")
        got = measure(page, _LOOK, 1400, 900)
        if got["width"] > got["window"]:
            found.append(f"{name}: {got['width']} px wide, wider than the window ({got['window']})")
        if got["drawn"] != got["formulas"]:
            found.append(f"{name}: {got['formulas'] - got['drawn']} formulas not drawn")
        drawn = f"{got['drawn']} formulas drawn"
        print(f"browser: {name}: {colours}+ colours, {got['width']} px wide, {drawn}")
    if name == LOOKED_AT[-1] and not got["formulas"]:
        found.append(f"{name}: no formula on the page of formulas")
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: check_site.py SITE_DIR (a directory mkdocs built)", file=sys.stderr)
        return 2
    found, links = problems(Path(argv[0]))
    with tempfile.TemporaryDirectory() as shots:
        found += looked_at(Path(argv[0]), Path(shots))
    for line in found:
        print(line)
    print(f"site: {links} links read, {len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
