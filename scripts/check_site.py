"""Check a built site as a reader opens it from disk: every page's links lead to files.

Run by ``scripts/test.sh`` after ``mkdocs build``::

    .venv/bin/python scripts/check_site.py SITE_DIR

Every relative ``href`` and ``src`` of every page (``404.html`` aside: a web server's page, with
links from the site's root) must name a file under ``SITE_DIR``: not a directory, which a browser
opening the site from disk shows as a listing (``use_directory_urls: false`` in ``mkdocs.yml``
makes every page ``name.html``). A docstring's ``::`` must not end a paragraph, and no formula
may be left as LaTeX (``docs/hooks.py`` writes ``::`` as ``:`` and formulas as MathML). Exits 1
and names each problem, else prints how many links it read.
"""

from __future__ import annotations

import re
import sys
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


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: check_site.py SITE_DIR (a directory mkdocs built)", file=sys.stderr)
        return 2
    found, links = problems(Path(argv[0]))
    for line in found:
        print(line)
    print(f"site: {links} links read, {len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
