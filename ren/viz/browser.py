"""A headless Chromium, for checking pages as a reader sees them: pictures, sizes, load time.

Ren's set-up installs Debian's ``chromium`` as an optional part (``scripts/setup.sh``); the
tests that need it skip without it. ``find()`` names the program (``None`` without one);
``screenshot`` writes a PNG of a page; ``measure`` runs a script in a page once it has loaded and
returns what the script returns (JSON), for sizes and positions; ``load_ms`` is the time a page
takes to load (its ``load`` event). ``png_colours`` counts the colours of a screenshot with the
standard library, so that a test can tell a blank picture from a drawn one.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path
from typing import Any

__all__ = ["find", "load_ms", "measure", "png_colours", "screenshot"]

_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars")


def find() -> str | None:
    """The path of ``chromium`` (or ``chromium-browser``) on ``PATH``, or ``None``."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _browser() -> str:
    browser = find()
    if browser is None:
        raise FileNotFoundError("needs Debian's chromium: apt-get install chromium")
    return browser


def screenshot(
    url: str, out: str | Path, width: int = 1400, height: int = 900, wait_ms: int = 5000
) -> Path:
    """A PNG of ``url`` (a ``file://`` URI) as a ``width`` x ``height`` window shows it.

    A URL with a ``#fragment`` is shown scrolled there (in a frame: headless chromium takes its
    picture before it scrolls a page itself).

    Raises:
        FileNotFoundError: no chromium, or it wrote no picture.
    """
    out = Path(out)
    if "#" in url:
        frame = (
            '<html><body style="margin:0"><iframe style="border:0;width:100%;height:100vh" '
            f'src="{html.escape(url)}"></iframe></body></html>'
        )
        with tempfile.NamedTemporaryFile("w", suffix=".html", encoding="utf-8") as f:
            f.write(frame)
            f.flush()
            return screenshot(Path(f.name).as_uri(), out, width, height, wait_ms)
    subprocess.run(
        [
            _browser(),
            *_FLAGS,
            f"--virtual-time-budget={wait_ms}",
            f"--screenshot={out}",
            f"--window-size={width},{height}",
            url,
        ],
        capture_output=True,
        timeout=180,
        check=False,
    )
    if not out.is_file():
        raise FileNotFoundError(f"chromium wrote no screenshot of {url}")
    return out


_PROBE = """<script>
window.addEventListener("load", function () {
  setTimeout(function () {
    var result;
    try { result = (function () { %s })(); } catch (e) { result = {"error": String(e)}; }
    document.title = "REN-RESULT " + JSON.stringify(result);
  }, 0);
});
</script>"""


# Any: the script's value through JSON, whose shape the caller's script decides (as json.loads)
def measure(page: str | Path, script: str, width: int = 1400, height: int = 900) -> Any:
    """What ``script`` (a function body ending in ``return``) gives in ``page`` once loaded.

    ``page`` is HTML text, loaded from a temporary file, or the path of an HTML file, loaded from a
    copy beside it (so that its relative links, its stylesheets, still work), in a ``width`` x
    ``height`` window. The script's value comes back through JSON.

    Raises:
        FileNotFoundError: no chromium.
        RuntimeError: the page gave no result, or the script raised (its message).
    """
    probe = _PROBE % script
    text = page.read_text(encoding="utf-8") if isinstance(page, Path) else page
    text = text.replace("<head>", "<head>" + probe, 1) if "<head>" in text else probe + text
    where = page.parent if isinstance(page, Path) else None
    with tempfile.NamedTemporaryFile("w", suffix=".html", dir=where, encoding="utf-8") as f:
        f.write(text)
        f.flush()
        done = subprocess.run(
            [
                _browser(),
                *_FLAGS,
                f"--window-size={width},{height}",
                "--dump-dom",
                Path(f.name).resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
    found = re.search(r"<title>REN-RESULT (.*?)</title>", done.stdout, re.S)
    if found is None:
        raise RuntimeError(f"the page gave no result (chromium: {done.stderr.strip()[-300:]})")
    value = json.loads(html.unescape(found.group(1)))
    if isinstance(value, dict) and "error" in value and len(value) == 1:
        raise RuntimeError(f"the script raised: {value['error']}")
    return value


def load_ms(page: str, width: int = 1400, height: int = 900) -> float:
    """The milliseconds from navigation to the end of the ``load`` event of ``page`` (HTML)."""
    got = measure(page, "return performance.now();", width, height)
    return float(got)


def png_colours(data: bytes, enough: int) -> int:
    """The number of distinct pixel values of an 8-bit RGB or RGBA PNG (up to ``enough``).

    Counts row by row and stops once ``enough`` are found; decodes with the standard library
    (zlib and the five row filters).

    Raises:
        ValueError: data that is not an 8-bit RGB or RGBA PNG.
    """
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG: the data does not start with the PNG signature")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, _, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in (2, 6):
                raise ValueError(f"an 8-bit RGB or RGBA PNG only: depth {depth}, colour {colour}")
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    seen: set[bytes] = set()
    for start in range(0, len(raw), stride + 1):
        how, row = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for x in range(stride):
            a = row[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if how == 1:
                row[x] = (row[x] + a) & 0xFF
            elif how == 2:
                row[x] = (row[x] + b) & 0xFF
            elif how == 3:
                row[x] = (row[x] + (a + b) // 2) & 0xFF
            elif how == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                row[x] = (row[x] + pred) & 0xFF
        seen.update(bytes(row[x : x + bpp]) for x in range(0, stride, bpp))
        if len(seen) >= enough:
            break
        prev = row
    return len(seen)
