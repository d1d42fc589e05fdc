"""``ren.display``: the notebook displays of ``Poly`` values, and the pieces every display uses.

Oracles: Python integers for the residues a stored value shows, ``reference.expected_limbs`` for
an NTT-form value's slots, the graph's own node count for a summarized graph.
"""

from __future__ import annotations

import collections
import re
import shutil

import numpy as np
import pytest

from ren import display, reference
from ren.ir.node import toposort
from ren.poly import Poly
from ren.ring import Domain, RingSpec, ntt_primes

RING = RingSpec(16, ntt_primes(16, 30, 2))
COEFFS = [(7 * k * k + 3) * 1_000_003 + k for k in range(16)]


def cells(html: str, row_start: str) -> list[str]:
    """The cells of the table row whose first cell is ``row_start``."""
    for row in re.findall(r"<tr>(.*?)</tr>", html):
        found = re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row)
        if found and found[0] == row_start:
            return found[1:]
    raise AssertionError(f"no row {row_start!r} in the display")


def offline(html: str) -> None:
    """No script, no stylesheet or frame, no URL but an SVG namespace: nothing is fetched."""
    lowered = html.lower()
    for tag in ("<script", "<link", "<iframe", "<img", "@import", "javascript:"):
        assert tag not in lowered, tag
    urls = set(re.findall(r"https?://[^\s\"'<>]+", html))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}, urls
    assert len(html.encode()) <= display.LIMIT


def test_a_stored_poly_shows_its_ring_and_first_residues():
    p = Poly(COEFFS, RING).realize()
    html = p._repr_html_()
    offline(html)
    assert "n = 16, 2 moduli (30 + 30 bits), u32 words" in html
    assert cells(html, "domain") == ["coeff"] and cells(html, "value") == ["stored"]
    for q in RING.moduli:  # the first 8 residues of each limb, from Python integers
        assert cells(html, str(q)) == [str(c % q) for c in COEFFS[:8]] + ["..."]


def test_an_ntt_form_poly_shows_its_slots():
    p = Poly(COEFFS, RING).ntt().realize()
    html = p._repr_html_()
    want = reference.expected_limbs(COEFFS, RING, Domain.NTT)
    assert "slots in NTT order" in html
    for i, q in enumerate(RING.moduli):
        assert cells(html, str(q))[:8] == [str(int(x)) for x in want[i, :8]]


def test_a_lazy_poly_shows_its_graph_and_computes_nothing():
    a = Poly(COEFFS, RING).realize()
    lazy = (a * a).rescale()
    html = lazy._repr_html_()
    offline(html)
    assert not lazy.realized  # the display ran nothing
    assert "lazy (RESCALE: computed when needed)" in html
    if shutil.which("dot"):
        assert "<svg" in html and "RESCALE" in html
    else:
        assert "dot is not installed" in html
    exact = reference.evaluate((Poly(COEFFS, RING) * Poly(COEFFS, RING)).rescale().node)
    assert lazy.tolist() == exact  # and the value is still the one it was going to be


def test_a_large_graph_is_counted_by_op_not_drawn():
    a = Poly(COEFFS, RING).realize()
    x = a
    for k in range(40):
        x = x * a + k
    html = x._repr_html_()
    offline(html)
    nodes = toposort(x.node)
    assert len(nodes) > display.GRAPH_NODES and "<svg" not in html
    assert f"{len(nodes)} nodes, more than the {display.GRAPH_NODES}" in html
    counts = collections.Counter(n.op.name for n in nodes)
    for op, count in counts.items():
        assert cells(html, op) == [str(count)]


def test_many_limbs_and_long_rings_are_cut():
    ring = RingSpec(64, ntt_primes(64, 30, 9))
    p = Poly.uniform(ring, np.random.default_rng(1)).realize()
    html = p._repr_html_()
    assert f"... {ring.L - display.LIMBS} more limbs" in html
    shown = re.findall(r"<tr><td[^>]*>(\d+)</td>", html)
    assert [int(q) for q in shown] == list(ring.moduli[: display.LIMBS])


def test_text_is_escaped_and_a_display_too_large_is_cut():
    assert display.esc('<b a="1">&') == "&lt;b a=&quot;1&quot;&gt;&amp;"
    assert "<script>" not in display.table(["<script>"], [["<script>"]])
    huge = display.box("big", "x" * (display.LIMIT + 1))
    assert len(huge) < 1000 and "not shown whole" in huge


@pytest.mark.parametrize("limit", [0, 1])
def test_the_graph_summary_names_why(limit):
    a = Poly(COEFFS, RING).realize()
    html = display.graph((a + a).node, limit=limit)
    assert "more than the" in html and "<svg" not in html


# --------------------------------------------------------------------------------------------
# a ren.jit function and a loaded plan


def _product(a: Poly, b: Poly) -> Poly:
    return (a * b).rescale()


def test_a_jit_function_shows_its_calls_its_plan_and_its_memory(tmp_path, monkeypatch):
    import ren

    f = ren.jit(_product)
    assert cells(f._repr_html_(), "latest plan") == ["none: not called yet"]
    a, b = Poly(COEFFS, RING).realize(), Poly(COEFFS[::-1], RING).realize()
    f(a, b)
    f(b, a)
    html = f._repr_html_()
    offline(html)
    assert cells(html, "calls") == ["1 captured, 1 replayed; 1 plans held (at most 8)"]
    # the product in NTT form (two NTTs, one pointwise kernel), back to coefficients, rescaled
    assert cells(html, "exec units") == ["5: ntt 2, elementwise 1, intt 1, rescale 1"]
    device = f.last.memory.devices[0]
    assert cells(html, "python") == [
        str(device.arena_bytes), str(device.lower_bound_bytes), str(device.unshared_bytes),
        str(len(device.buffers)),
    ]  # fmt: skip
    assert "<svg" in html and "memory plan: ren.jit" in html

    loaded = ren.load(f.save(tmp_path / "product.plan"))
    shown = loaded._repr_html_()
    offline(shown)
    assert cells(shown, "fingerprint") == [loaded.data["fingerprint"]]
    assert cells(shown, "manifest") == ["2 inputs, 1 outputs, stored: none"]
    assert "<svg" in shown

    monkeypatch.setattr(display, "LENT", {})  # no picture lent: the tables, and a note
    assert "(the memory picture: import ren)" in f._repr_html_()
    monkeypatch.setattr(display, "LIMIT", 20_000)  # a picture past half the limit is left out
    monkeypatch.setattr(display, "LENT", {"memory_plan": lambda *args: "<svg>" + "x" * 10_001})
    assert "more than a display shows" in f._repr_html_()


def test_a_table_aligns_numbers_right_and_words_left():
    html = display.table(
        ("name", "value"), [("q_0", 1125899906842177), ("role", "level 0"), ("x", "2.5")]
    )
    styles = re.findall(r'<td style="([^"]*)">([^<]*)</td>', html)
    right = {
        text for style, text in styles if style.endswith("text-align:right;font-family:monospace")
    }
    assert right == {"1125899906842177", "2.5"}
    left = {text for style, text in styles if style.endswith("text-align:left")}
    assert left == {"q_0", "role", "level 0", "x"}
