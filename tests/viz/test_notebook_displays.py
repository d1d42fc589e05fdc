"""What a ``Trace`` shows in a notebook (``ren.viz.shown``), and the compact memory picture.

Oracles, each read off the recorded objects, not off the drawing code:

* the compact picture: every rectangle, turned back into kernels and bytes by the picture's
  scale, is a buffer of the ``DevicePlan`` (its first and last kernel, its offset and size), each
  buffer once; its size, for a ``boot-toy`` bootstrap, within what a display shows;
* the trace's display: its totals counted from the trace, its boxes named as the region tree's,
  its link to the page ``record(page=...)`` wrote (and the page the report of the trace);
* a pass before and after: the rules against ``PassRecord.rule_counts()``, the node counts
  against the graphs, the nodes drawn with the thick red border (or counted in the collapsed
  boxes) against ``PassRecord.created``;
* the memory display: its numbers against the ``DevicePlan``, its text against ``plan_text``;
* every display offline (no script, no link, no URL) and within ``ren.display.LIMIT`` bytes,
  a ``boot-toy`` bootstrap's too. (How long each takes is measured by
  ``benchmarks/displays.py``, not asserted here.)
"""

from __future__ import annotations

import collections
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import ren
import ren.viz
from ren import Poly, display
from ren.engine.memory import DevicePlan, PlannedBuffer
from ren.ir.node import toposort
from ren.ring import RingSpec, ntt_primes
from ren.schemes import ckks
from ren.viz import memory as viz
from ren.viz.memory import buffer_order, plan_scale, plan_svg, plan_text
from ren.viz.report.blocks import CSS, GRAPH_NODE_LIMIT, rules_text
from ren.viz.report.regions import realization_tree
from ren.viz.shown import SCOPE, scoped_css
from ren.viz.trace import Trace
from tests.test_display import cells
from tests.viz.boot_input import boot_toy_input

RING = RingSpec(16, ntt_primes(16, 30, 2))
SVG = "{http://www.w3.org/2000/svg}"
EPS = 0.051  # the compact picture writes one decimal


def offline(html: str) -> None:
    """Nothing fetched or run: no script, no link or frame, no URL at all; within the limit."""
    lowered = html.lower()
    for tag in ("<script", "<link", "<iframe", "<img", "@import", "javascript:", "url("):
        assert tag not in lowered, tag
    assert "http://" not in lowered and "https://" not in lowered
    assert len(html.encode()) <= display.LIMIT


def small_program() -> Poly:
    """A product and a sum, each in a region: two boxes, one reading the other."""
    a = Poly(list(range(16)), RING)
    b = Poly([3 * i - 7 for i in range(16)], RING)
    with ren.region("product"):
        c = (a * b).rescale()
    with ren.region("plus"):
        return (c + 1).realize()


@pytest.fixture(scope="module")
def small() -> Trace:
    """Two realizations: an unnamed sum, then the small program (the one with more kernels)."""
    with ren.viz.record() as trace:
        (Poly(list(range(16)), RING) + 1).realize()
        small_program()
    return trace


@pytest.fixture(scope="module")
def boot() -> tuple[Trace, object]:
    """A ``boot-toy`` bootstrap captured by ``ren.jit`` in a trace: ``(trace, the function)``."""
    _, _, _, ct = boot_toy_input()
    fn = ren.jit(ckks.bootstrap)
    with ren.viz.record() as trace:
        fn(ct)
    return trace, fn


# --------------------------------------------------------------------------------------------
# the compact memory picture


def compact_boxes(svg: str) -> list[tuple[str, float, float, float, float]]:
    """``(tooltip or "", x, y, width, height)`` of every buffer the compact picture draws."""
    root = ET.fromstring(svg)
    (group,) = [g for g in root.iter(f"{SVG}g") if g.get("class") == "buffers"]
    boxes = []
    for path in group.iter(f"{SVG}path"):
        d = path.get("d", "")
        found = re.findall(r"M([\d.]+) ([\d.]+)h([\d.]+)v([\d.]+)h-([\d.]+)z", d)
        assert "".join(f"M{x} {y}h{w}v{h}h-{w2}z" for x, y, w, h, w2 in found) == d
        boxes += [("", float(x), float(y), float(w), float(h)) for x, y, w, h, _ in found]
    for rect in group.iter(f"{SVG}rect"):
        tip = rect.find(f"{SVG}title")
        assert tip is not None and rect.get("class") == "buffer"
        boxes.append(
            (tip.text or "", *(float(rect.get(k, "")) for k in ("x", "y", "width", "height")))
        )
    return boxes


def where(p: PlannedBuffer) -> tuple[int, int, int, int]:
    """A buffer's place in the picture: first and last kernel, offset and bytes."""
    return (p.first, p.last, p.offset, p.nbytes)


def check_compact(plan: DevicePlan, kernels: list[str]) -> str:
    """The compact picture of ``plan``, checked buffer by buffer against the plan; returns it."""
    svg = plan_svg(plan, kernels, "compact", compact=True)
    scale = plan_scale(plan, kernels, "compact")
    cw, ppb = scale.column_width, scale.pixels_per_byte
    drawn: collections.Counter[tuple[int, int, int, int]] = collections.Counter()
    order = buffer_order(plan)
    for tip, x, y, w, h in compact_boxes(svg):
        first = round((x - scale.left) / cw)
        last = round((x + w - scale.left) / cw) - 1
        assert x == pytest.approx(scale.x(first), abs=EPS)
        assert w == pytest.approx((last - first + 1) * cw, abs=2 * EPS)
        offset = (y - scale.top) / ppb
        match = [
            p
            for p in plan.buffers
            if (p.first, p.last) == (first, last) and abs(p.offset - offset) * ppb <= EPS
        ]
        assert len({(p.offset, p.nbytes) for p in match}) == 1, (x, y, w, h)
        p = match[0]
        true_h = p.nbytes * ppb  # grown to the minimum height only
        assert true_h - EPS <= h <= max(true_h, viz.MIN_RECT_HEIGHT) + EPS
        drawn[where(p)] += 1
        if tip:  # the largest: a tooltip naming it as the full picture does
            i = int(tip.split(":")[0][1:])
            assert where(order[i]) == where(p)
            assert tip.startswith(f"b{i}: {p.nbytes} B") and f"offset {p.offset} to" in tip
    assert drawn == collections.Counter(where(p) for p in plan.buffers)
    return svg


def test_the_compact_picture_draws_every_buffer_where_the_plan_puts_it(small):
    rec = max(small.realizations, key=lambda r: len(r.kernels))
    (plan,) = rec.plan.devices
    svg = check_compact(plan, [k.info.name for k in rec.kernels])
    # the scale, the arena and the lower bound as in the full picture
    full = ET.fromstring(plan_svg(plan, [k.info.name for k in rec.kernels], "compact"))
    root = ET.fromstring(svg)
    assert (root.get("width"), root.get("height")) == (full.get("width"), full.get("height"))
    for cls in ("arena", "lower-bound"):
        same = [e.attrib for e in full.iter() if e.get("class") == cls]
        assert [e.attrib for e in root.iter() if e.get("class") == cls] == same
    assert f"arena {plan.arena_bytes} B, lower bound {plan.lower_bound_bytes} B" in svg


def test_a_boot_toy_bootstrap_s_compact_picture_fits_a_display(boot):
    _, fn = boot
    (plan,) = fn.last.memory.devices
    kernels = [u.kernel.info.name for u in fn.last.units]
    svg = check_compact(plan, kernels)
    assert len(plan.buffers) > 1000
    assert len(svg.encode()) <= display.LIMIT // 2 < len(plan_svg(plan, kernels).encode())
    # the jit function's display now shows it (the picture ren lends ren.display)
    html = fn._repr_html_()
    assert "<svg" in html and "more than a display shows" not in html
    assert len(html.encode()) <= display.LIMIT


# --------------------------------------------------------------------------------------------
# the trace


def box_names(html: str) -> list[str]:
    """The names of the region boxes drawn, in order."""
    return re.findall(r'<details class="box[^"]*"[^>]*><summary><[bi]>([^<]*)</[bi]>', html)


def test_the_trace_shows_its_totals_and_the_largest_realization_s_regions(small):
    html = small._repr_html_()
    offline(html)
    kernels = sum(len(r.kernels) for r in small.realizations)
    assert (
        f"{len(small.realizations)} realizations, {kernels} scheduled kernels, 0 ren.jit calls"
        in html
    )
    best = max(small.realizations, key=lambda r: len(r.kernels))
    tree = realization_tree(best, best.kernels)
    assert tree is not None
    assert box_names(html) == [b.name for b in list(tree.walk())[1:]] == ["product", "plus"]
    other = next(r for r in small.realizations if r is not best)
    assert f"realization {other.index}: output n=16 L=2, {len(other.kernels)} kernel" in html
    # readable without the report's page: its rules, each under the display's class
    style = re.search(r"<style>(.*?)</style>", html, re.S).group(1)
    assert style == scoped_css()
    assert 'ren.viz.record("name.html")' in html and "<a href" not in html
    assert small.page is None


def test_the_style_is_the_report_s_scoped_to_the_display():
    rules = re.findall(r"([^{}]+)\{([^{}]*)\}", CSS)
    scoped = re.findall(r"([^{}]+)\{([^{}]*)\}", scoped_css())
    page = [s for s, _ in rules if s.strip().split()[0] in ("body", "h1", "h2")]
    assert len(scoped) == len(rules) - len(page)
    for selectors, body in scoped:
        assert all(s.strip().startswith(f".{SCOPE} ") for s in selectors.split(","))
        assert any(" ".join(b.split()) == body for _, b in rules)


def test_record_writes_the_page_and_the_display_links_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with ren.viz.record("pages/name.html") as trace:
        small_program()
    assert trace.page == Path("pages/name.html")
    page = (tmp_path / "pages" / "name.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "Realization 0" in page
    html = trace._repr_html_()
    offline(html)
    assert '<a href="pages/name.html">' in html
    # a block that raises writes nothing
    with pytest.raises(RuntimeError), ren.viz.record("failed.html") as failed:
        raise RuntimeError("stop")
    assert failed.page is None and not (tmp_path / "failed.html").exists()


def test_a_boot_toy_bootstrap_s_trace_display_is_small(boot):
    trace, _ = boot
    html = trace._repr_html_()
    offline(html)
    (rec,) = trace.realizations
    tree = realization_tree(rec, rec.kernels)
    assert tree is not None  # every box of the tree, each once (the display fits them all)
    drawn = collections.Counter(box_names(html))
    assert drawn == collections.Counter(b.name for b in list(tree.walk())[1:])
    assert {"bootstrap", "coeff_to_slot", "eval_mod", "slot_to_coeff"} <= set(drawn)
    assert "1 realization, 1269 scheduled kernels, 1 ren.jit call" in html


def test_a_display_too_small_for_every_box_drops_names_then_the_deepest(boot, monkeypatch):
    trace, _ = boot
    (rec,) = trace.realizations
    tree = realization_tree(rec, rec.kernels)
    assert tree is not None
    depth = {id(tree): 0}
    for box in tree.walk():
        depth.update({id(c): depth[id(box)] + 1 for c in box.children})
    monkeypatch.setattr(display, "LIMIT", 150_000)  # every box, kernels by number only
    html = trace._repr_html_()
    assert len(html.encode()) <= display.LIMIT and "(kernel names left out" in html
    assert len(box_names(html)) == len(depth) - 1 and "<code>ntt_" not in html
    monkeypatch.setattr(display, "LIMIT", 100_000)  # the boxes down to a depth
    html = trace._repr_html_()
    cut = int(re.search(r"and the regions below depth (\d+) left out", html).group(1))
    assert len(html.encode()) <= display.LIMIT and 1 <= cut < max(depth.values())
    kept = [b.name for b in list(tree.walk())[1:] if depth[id(b)] <= cut]
    assert collections.Counter(box_names(html)) == collections.Counter(kept)


# --------------------------------------------------------------------------------------------
# a pass before and after


def red_nodes(svg: str) -> int:
    """The nodes drawn with the created border in a dot picture."""
    return len(re.findall(r'<g class="node">(?:(?!</g>).)*?stroke="#d32f2f"', svg, re.S))


@pytest.mark.graphviz
def test_a_pass_before_and_after_marks_what_it_created(small):
    best = max(small.realizations, key=lambda r: len(r.kernels))
    for step, p in enumerate(best.passes, start=1):
        previous = best.passes[step - 2].graph if step > 1 else best.input
        shown = small.before_after(p.name)
        assert shown.html == small.before_after(step).html  # by name or by step
        offline(shown.html)
        text = str(shown)
        assert text.splitlines()[0] == f"pass {step} of 12: {p.name} (realization {best.index})"
        assert f"rules fired: {rules_text(p.rule_counts())}" in text
        counts = (len(toposort(previous)), len(toposort(p.graph)))
        assert f"nodes: {counts[0]} before, {counts[1]} after" in text
        svgs = re.findall(r"<svg.*?</svg>", shown.html, re.S)
        if p.graph is previous:
            assert "the same before and after" in shown.html and len(svgs) == 1
            continue
        assert len(svgs) == 2
        for svg, n in zip(svgs, counts, strict=True):
            assert svg.count('<g class="node">') == n
        assert red_nodes(svgs[0]) == 0 and red_nodes(svgs[1]) == len(p.created)


def test_a_large_pass_is_drawn_collapsed_to_its_regions(boot):
    trace, _ = boot
    (rec,) = trace.realizations
    p = max(rec.passes, key=lambda q: len(q.created))
    shown = trace.before_after(p.name)
    offline(shown.html)
    assert len(toposort(p.graph)) > GRAPH_NODE_LIMIT and "<svg" not in shown.html
    created = re.findall(r"<br>\d+ nodes, (\d+) created</div>", shown.html)
    assert sum(int(n) for n in created) == len(p.created) > 0
    assert f"{len(p.created)} created, {len(p.rebuilt)} rebuilt" in str(shown)


def test_bad_arguments_say_what_is_accepted(small):
    names = re.escape(f"({', '.join(small.passes)})")
    with pytest.raises(ValueError, match=rf"pass_='fused' is no pass .*: give a pass name {names}"):
        small.before_after("fused")
    for step in (0, 13):
        with pytest.raises(ValueError, match=r"a step number from 1 to 12"):
            small.before_after(step)
    with pytest.raises(ValueError, match=r"realization=2 is not an index .* give 0 to 1"):
        small.before_after(1, realization=2)
    with pytest.raises(ValueError, match=r"realization=-1"):
        small.memory(-1)
    with pytest.raises(TypeError, match=r"pass_=1.5 must be"):
        small.before_after(1.5)
    with pytest.raises(TypeError, match=r"realization='0' must be"):
        small.memory("0")
    empty = Trace()
    with pytest.raises(ValueError, match="the trace recorded no realization"):
        empty.before_after(1)
    with pytest.raises(ValueError, match="the trace recorded no realization"):
        empty.memory()
    assert "0 realizations" in empty._repr_html_()


# --------------------------------------------------------------------------------------------
# the memory plan


def test_the_memory_display_has_the_plan_s_numbers_and_picture(small):
    for rec in small.realizations:
        shown = small.memory(rec.index)
        offline(shown.html)
        for d in rec.plan.devices:
            want = [d.arena_bytes, d.lower_bound_bytes, d.unshared_bytes, len(d.buffers)]
            assert cells(shown.html, d.device) == [str(v) for v in want]
            assert plan_text(d) in str(shown)
        if rec.plan.devices:
            assert shown.html.count("<svg") == len(rec.plan.devices)
        else:
            assert "nothing was planned" in str(shown)
    best = max(small.realizations, key=lambda r: len(r.kernels))
    assert small.memory().html == small.memory(best.index).html


def test_a_boot_toy_bootstrap_s_memory_display_is_small(boot):
    trace, _ = boot
    shown = trace.memory()
    offline(shown.html)
    (d,) = trace.realizations[0].plan.devices
    assert cells(shown.html, d.device)[0] == str(d.arena_bytes)
    assert "<svg" in shown.html and str(shown).endswith(plan_text(d))
