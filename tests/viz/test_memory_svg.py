"""The memory-plan pictures of ``ren.viz.memory``: SVG and text, on real and hand-made plans.

Oracles, each independent of the drawing code:

* Geometry: every buffer rectangle is recomputed from the plan (``first``, ``last``, ``offset``,
  ``nbytes``) and the scale, and the scale itself is checked against its rules (column width,
  clamped plot width, arena height) and against the SVG's declared size and arena outline.
* No two rectangles of buffers alive at the same time overlap: checked on the parsed SVG, pair by
  pair, so the minimum-height rule cannot break what the planner guarantees.
* Numbers: the arena, lower bound and unshared total are written in exact bytes; they are compared
  with the plan's fields.
* Text: on plans whose offsets and sizes are multiples of a row's bytes, the whole grid is
  recomputed cell by cell from the plan.
* Stability: the same program built twice (other buffer ids) gives the same bytes.
"""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from ren import settings
from ren.engine.memory import DevicePlan, MemoryPlan, PlannedBuffer, plan_memory
from ren.engine.realize import realize_nodes
from ren.engine.schedule import schedule
from ren.ir.node import Node
from ren.ir.op import DType, Op
from ren.poly import Poly
from ren.ring import Domain, RingSpec, ntt_primes
from ren.viz import memory as viz
from ren.viz.memory import buffer_order, plan_scale, plan_svg, plan_text, plans_svg, symbol

SVG = "{http://www.w3.org/2000/svg}"
EPS = 0.011  # coordinates are written with two decimals


@pytest.fixture(autouse=True)
def plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plan as ``realize`` does by default, whatever the shell has set."""
    for var in ("REN_NO_PLAN", "REN_POISON", "REN_DEBUG"):
        monkeypatch.delenv(var, raising=False)


# --------------------------------------------------------------------------------------------
# programs and plans


def worked_example() -> tuple[list[str], DevicePlan]:
    """The worked example of ``docs/memory.md``: ``((a * a).rescale() * 5 + 1).rescale()``."""
    ring = RingSpec(1024, ntt_primes(1024, 30, 3))
    a = Poly.uniform(ring, np.random.default_rng(0))
    out = ((a * a).rescale() * 5 + 1).rescale()
    kernels, _ = schedule(Node(Op.SINK, DType.VOID, (out.node,)))
    _, plan = plan_memory(kernels)
    return [k.info.name for k in kernels], plan.device("python")


def chain(steps: int = 30) -> Poly:
    """``steps`` mixed operations at ``n=64`` over three primes, rescaled twice (three sizes)."""
    rng = np.random.default_rng(7)
    x = Poly.uniform(RingSpec(64, ntt_primes(64, 30, 3)), rng)
    history = [x]
    for step in range(steps):
        kind = step % 6
        if step in (10, 20):
            x = x.rescale()
            history = [x]
            continue
        if kind == 0:
            x = x * Poly.uniform(x.ring, rng)
        elif kind == 1:
            x = x + history[max(0, len(history) - 3)]
        elif kind == 2:
            x = x.rotate(step + 1)
        elif kind == 3:
            x = (x * (step + 2)).contiguous()
        elif kind == 4:
            x = x.ntt() if x.domain is Domain.COEFF else x.intt()
        else:
            x = x - Poly.uniform(x.ring, rng)
        history.append(x)
    return x


def chain_plan() -> DevicePlan:
    """The chain realized (it runs), and the plan the realization kept."""
    ctx = realize_nodes((chain().node,))
    return ctx.memory_plan.device("python")


def chain_kernels() -> list[str]:
    kernels, _ = schedule(Node(Op.SINK, DType.VOID, (chain().node,)))
    return [k.info.name for k in kernels]


def _buf(i: int, nbytes: int, offset: int, first: int, last: int) -> PlannedBuffer:
    return PlannedBuffer(100 + i, "u32", nbytes // 4, nbytes, offset, first, last)


#: A hand-made arena with fragmentation: ``c`` reuses ``a``'s bytes, ``d`` has to go above
#: ``b``'s old place, ``e`` is a 40-byte buffer (below the minimum height, free space under it)
#: and ``f`` a 40-byte one right on top of ``d`` (no room to grow).
HAND = DevicePlan(
    device="python",
    arena_bytes=24576,
    unshared_bytes=28800,
    lower_bound_bytes=16448,
    buffers=(
        _buf(0, 4096, 0, 0, 1),
        _buf(1, 8192, 4096, 1, 2),
        _buf(2, 4096, 0, 2, 3),
        _buf(3, 12288, 12288, 3, 4),
        _buf(4, 40, 4096, 3, 4),
        _buf(5, 40, 12224, 4, 4),
    ),
    events=(),
)


def plans() -> dict[str, tuple[DevicePlan, list[str] | None]]:
    """Every plan the geometry tests draw, with its kernel names (or none)."""
    names, example = worked_example()
    return {
        "worked_example": (example, names),
        "worked_example/no_names": (example, None),
        "chain30": (chain_plan(), chain_kernels()),
        "hand": (HAND, None),
    }


PLANS = plans()


# --------------------------------------------------------------------------------------------
# reading an SVG back


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


def rects(root: ET.Element, cls: str) -> list[ET.Element]:
    return [r for r in root.iter(f"{SVG}rect") if r.get("class") == cls]


def box(rect: ET.Element) -> tuple[float, float, float, float]:
    return tuple(float(rect.get(k)) for k in ("x", "y", "width", "height"))


def texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


def tooltip(elem: ET.Element) -> str:
    title = elem.find(f"{SVG}title")
    assert title is not None, f"no tooltip on {elem.attrib}"
    return title.text or ""


# --------------------------------------------------------------------------------------------
# SVG


@pytest.mark.parametrize("name", list(PLANS))
def test_svg_is_well_formed_and_self_contained(name):
    plan, kernels = PLANS[name]
    svg = plan_svg(plan, kernels)
    root = parse(svg)
    for tag in root.iter():
        assert tag.tag.startswith(SVG), f"foreign element {tag.tag}"
        assert tag.tag not in (f"{SVG}script", f"{SVG}image", f"{SVG}a", f"{SVG}style")
        assert not any("href" in k for k in tag.attrib), tag.attrib
    for forbidden in ("<script", "href", "url(", "@import", "http://", "https://"):
        assert svg.replace('xmlns="http://www.w3.org/2000/svg"', "").count(forbidden) == 0


@pytest.mark.parametrize("name", list(PLANS))
def test_scale_follows_its_rules_and_the_svg_declares_it(name):
    plan, kernels = PLANS[name]
    scale = plan_scale(plan, kernels)
    columns = max([len(kernels or ()), *(p.last + 1 for p in plan.buffers)])
    assert scale.columns == columns
    assert scale.plot_width == pytest.approx(columns * scale.column_width)
    assert viz.MIN_PLOT_WIDTH <= scale.plot_width <= viz.MAX_PLOT_WIDTH
    if viz.MIN_PLOT_WIDTH < columns * viz.COLUMN_WIDTH < viz.MAX_PLOT_WIDTH:
        assert scale.column_width == viz.COLUMN_WIDTH
    assert scale.extent_bytes == max(plan.arena_bytes, plan.lower_bound_bytes)
    assert scale.plot_height == pytest.approx(scale.extent_bytes * scale.pixels_per_byte)
    assert viz.PLOT_HEIGHT <= scale.plot_height <= viz.MAX_PLOT_HEIGHT

    root = parse(plan_svg(plan, kernels))
    assert (root.get("width"), root.get("height")) == (str(scale.width), str(scale.height))
    assert root.get("viewBox") == f"0 0 {scale.width} {scale.height}"
    assert scale.x(scale.columns) <= scale.width and scale.y(scale.extent_bytes) <= scale.height
    # the arena's outline: the plot's width, the arena's bytes
    (arena,) = rects(root, "arena")
    assert box(arena) == pytest.approx(
        (scale.left, scale.top, scale.plot_width, plan.arena_bytes * scale.pixels_per_byte),
        abs=EPS,
    )
    # the lower bound: a dashed line across the plot at its offset
    (bound,) = [line for line in root.iter(f"{SVG}line") if line.get("class") == "lower-bound"]
    y = scale.top + plan.lower_bound_bytes * scale.pixels_per_byte
    assert float(bound.get("y1")) == pytest.approx(y, abs=EPS)
    assert float(bound.get("y2")) == pytest.approx(y, abs=EPS)
    assert float(bound.get("x2")) - float(bound.get("x1")) == pytest.approx(scale.plot_width)
    assert bound.get("stroke-dasharray")


@pytest.mark.parametrize("name", list(PLANS))
def test_one_rectangle_per_buffer_where_the_plan_puts_it(name):
    plan, kernels = PLANS[name]
    scale = plan_scale(plan, kernels)
    root = parse(plan_svg(plan, kernels))
    drawn = rects(root, "buffer")
    assert len(drawn) == len(plan.buffers)
    # the drawing order: by first kernel, then offset (never by buffer id)
    order = sorted(plan.buffers, key=lambda p: (p.first, p.offset))
    assert buffer_order(plan) == order
    ppb, cw = scale.pixels_per_byte, scale.column_width
    for i, (p, rect) in enumerate(zip(order, drawn, strict=True)):
        x, y, w, h = box(rect)
        assert rect.get("id") == f"b{i}"
        assert x == pytest.approx(scale.left + p.first * cw, abs=EPS)
        assert w == pytest.approx((p.last - p.first + 1) * cw, abs=EPS)
        assert y == pytest.approx(scale.top + p.offset * ppb, abs=EPS)
        true_h = p.nbytes * ppb
        assert true_h - EPS <= h <= max(true_h, viz.MIN_RECT_HEIGHT) + EPS
        # grown to the minimum height unless a buffer alive at the same time is right below
        below = [
            q.offset
            for q in plan.buffers
            if q is not p and q.first <= p.last and p.first <= q.last and q.offset >= p.offset
        ]
        room = (min(below) - p.offset) * ppb if below else float("inf")
        assert h == pytest.approx(max(true_h, min(viz.MIN_RECT_HEIGHT, room)), abs=EPS)
        # the tooltip: name, size, offset, lifetime
        tip = tooltip(rect)
        assert tip.startswith(f"b{i}: {p.nbytes} B")
        assert f"offset {p.offset} to {p.offset + p.nbytes}" in tip
        life = f"kernel {p.first}" if p.first == p.last else f"kernels {p.first}-{p.last}"
        assert life in tip
        if kernels:
            assert f"first: kernel {p.first} ({kernels[p.first]})" in tip
    # colours: a function of the index alone, neighbours differ
    fills = [r.get("fill") for r in drawn]
    assert all(re.fullmatch(r"#[0-9a-f]{6}", f) for f in fills)
    assert all(a != b for a, b in itertools.pairwise(fills))


@pytest.mark.parametrize("name", list(PLANS))
def test_buffers_alive_together_do_not_overlap_in_the_picture(name):
    plan, kernels = PLANS[name]
    boxes = [box(r) for r in rects(parse(plan_svg(plan, kernels)), "buffer")]
    checked = 0
    for (x1, y1, w1, h1), (x2, y2, w2, h2) in itertools.combinations(boxes, 2):
        if x1 < x2 + w2 - EPS and x2 < x1 + w1 - EPS:  # same kernels
            checked += 1
            assert y1 + h1 <= y2 + EPS or y2 + h2 <= y1 + EPS, ((x1, y1, w1, h1), (x2, y2, w2, h2))
    assert checked > 0


@pytest.mark.parametrize("name", list(PLANS))
def test_the_numbers_are_written_on_the_picture(name):
    plan, kernels = PLANS[name]
    written = texts(parse(plan_svg(plan, kernels)))
    ratio = plan.arena_bytes / plan.lower_bound_bytes
    assert plan.summary() in written
    (facts,) = [t for t in written if t.startswith("arena ") and " B, " in t]
    assert f"arena {plan.arena_bytes} B" in facts
    assert f"lower bound {plan.lower_bound_bytes} B" in facts
    assert f"unshared {plan.unshared_bytes} B" in facts
    (counts,) = [t for t in written if " buffers over " in t]
    assert counts == (
        f"{len(plan.buffers)} buffers over {plan_scale(plan, kernels).columns} kernels, "
        f"arena / lower bound {ratio:.2f}x"
    )
    assert f"memory plan: {plan.device}" in written
    assert plan.device in plan.summary()


def test_hand_plan_numbers_and_labels():
    """The hand-made plan, numbers known in advance: fragmentation shows as ratio 1.49x."""
    written = texts(parse(plan_svg(HAND)))
    assert "arena 24576 B, lower bound 16448 B, unshared 28800 B" in written
    assert "6 buffers over 5 kernels, arena / lower bound 1.49x" in written
    assert plan_scale(HAND).width >= 16 + 6 * len(HAND.summary())  # wide enough for the text
    assert "arena 24 KiB" in written and "lower bound 16.06 KiB" in written
    # y axis: 0 B at the top, power-of-two steps, at most 8 of them
    ticks = [t for t in written if re.fullmatch(r"[\d.]+ (B|KiB)", t)]
    assert ticks == [f"{4 * k} KiB" if k else "0 B" for k in range(7)]


def test_kernel_columns_are_named_and_numbered():
    names, plan = worked_example()
    root = parse(plan_svg(plan, names))
    columns = rects(root, "kernel")
    assert [tooltip(c) for c in columns] == [f"kernel {k} ({n})" for k, n in enumerate(names)]
    written = texts(root)
    for k, n in enumerate(names):
        assert str(k) in written
        assert n in written  # short names are written whole under their columns
    bare = parse(plan_svg(plan))
    assert [tooltip(c) for c in rects(bare, "kernel")] == [f"kernel {k}" for k in range(6)]


def test_text_is_escaped():
    title = 'a <b> & "c"'
    names = [f"k&{i}<x>" for i in range(6)]
    _, plan = worked_example()
    root = parse(plan_svg(plan, names, title=title))
    assert title in texts(root)
    assert root.find(f"{SVG}title").text == title
    assert "kernel 2 (k&2<x>)" in [tooltip(c) for c in rects(root, "kernel")]


def test_large_plan_stays_within_bounds():
    """Hundreds of buffers: the width is clamped, every buffer is still drawn and visible."""
    buffers = tuple(
        _buf(i, 4096 * (1 + i % 3), 12288 * (i % 2), i, i + 1) for i in range(300)
    )  # two lanes, each buffer alive for two kernels, alternating lanes
    plan = DevicePlan("python", 24576, sum(b.nbytes for b in buffers), 24576, buffers, ())
    scale = plan_scale(plan)
    assert scale.columns == 301
    assert scale.plot_width == viz.MAX_PLOT_WIDTH
    assert scale.column_width == pytest.approx(viz.MAX_PLOT_WIDTH / 301)
    root = parse(plan_svg(plan))
    drawn = rects(root, "buffer")
    assert len(drawn) == 300
    assert all(box(r)[2] > 0 and box(r)[3] >= viz.MIN_RECT_HEIGHT for r in drawn)
    # kernel numbers are thinned out so they do not collide
    numbers = [int(t) for t in texts(root) if t.isdigit()]
    assert numbers[0] == 0 and len(numbers) < 301
    assert min(b - a for a, b in itertools.pairwise(numbers)) * scale.column_width >= 24


def test_tiny_plan_has_a_minimum_width():
    plan = DevicePlan("cpu", 128, 128, 128, (_buf(0, 64, 0, 0, 0), _buf(1, 64, 64, 0, 1)), ())
    scale = plan_scale(plan)
    assert scale.columns == 2
    assert scale.plot_width == viz.MIN_PLOT_WIDTH
    assert len(rects(parse(plan_svg(plan)), "buffer")) == 2


def test_plan_without_buffers_still_draws():
    plan = DevicePlan("python", 0, 0, 0, (), ())
    root = parse(plan_svg(plan))
    assert rects(root, "buffer") == []
    assert "no planned buffers" in texts(root)


def test_plans_svg_gives_one_picture_per_device():
    assert plans_svg(MemoryPlan()) == []
    other = DevicePlan("cpu", *(HAND.arena_bytes, HAND.unshared_bytes), 16448, HAND.buffers, ())
    pictures = plans_svg(MemoryPlan((other, HAND)))
    assert [d for d, _ in pictures] == ["cpu", "python"]
    assert pictures[1][1] == plan_svg(HAND)
    assert "memory plan: cpu" in texts(parse(pictures[0][1]))
    names, example = worked_example()
    ((device, svg),) = plans_svg(MemoryPlan((example,)), names)
    assert (device, svg) == ("python", plan_svg(example, names))


# --------------------------------------------------------------------------------------------
# stability


def test_same_program_twice_gives_the_same_bytes():
    names1, plan1 = worked_example()
    names2, plan2 = worked_example()
    assert [p.buffer_id for p in plan1.buffers] != [p.buffer_id for p in plan2.buffers]
    assert names1 == names2
    assert plan_svg(plan1, names1) == plan_svg(plan2, names2)
    assert plan_text(plan1) == plan_text(plan2)
    with settings.override(SCHEDULE_CACHE=0):  # scheduled twice: other buffers, same plan
        chain1, chain2 = chain_plan(), chain_plan()
    assert [p.buffer_id for p in chain1.buffers] != [p.buffer_id for p in chain2.buffers]
    assert plan_svg(chain1) == plan_svg(chain2)
    assert plan_text(chain1) == plan_text(chain2)
    assert plan_text(chain1, width=40) == plan_text(chain2, width=40)


# --------------------------------------------------------------------------------------------
# text


def _bytes_of(label: str) -> int:
    value, unit = label.split()
    return round(float(value) * {"B": 1, "KiB": 1024, "MiB": 1 << 20}[unit])


def grid(text: str) -> tuple[list[int], list[str], str]:
    """The row offsets, the rows' cells and the right borders of a ``plan_text`` picture."""
    offsets, rows, borders = [], [], ""
    for line in text.splitlines():
        m = re.fullmatch(r"\s*([\d.]+ (?:B|KiB|MiB)) \|(.*)([|<])", line)
        if m:
            offsets.append(_bytes_of(m.group(1)))
            rows.append(m.group(2))
            borders += m.group(3)
    return offsets, rows, borders


@pytest.mark.parametrize("name", ["worked_example", "chain30", "hand"])
def test_text_grid_cell_by_cell(name):
    plan, _ = PLANS[name]
    text = plan_text(plan)
    lines = text.splitlines()
    assert lines[0] == plan.summary()
    assert lines[1] == (
        f"arena {plan.arena_bytes} B, lower bound {plan.lower_bound_bytes} B, "
        f"unshared {plan.unshared_bytes} B"
    )
    offsets, rows, borders = grid(text)
    columns = max(p.last + 1 for p in plan.buffers)
    band = offsets[1] - offsets[0]
    assert offsets == [r * band for r in range(len(rows))]
    assert (len(rows) - 1) * band < plan.arena_bytes <= len(rows) * band
    assert all(len(row) == columns for row in rows)  # one column per kernel
    # '<' on the row of the lower bound's last byte, '|' elsewhere
    assert borders.count("<") == 1 and borders.index("<") == (plan.lower_bound_bytes - 1) // band
    order = buffer_order(plan)
    for i in range(len(order)):
        assert symbol(i) in "".join(rows), f"b{i} is not drawn"
        assert f"{symbol(i)}=b{i} " in text  # the key
    if all(p.offset % band == 0 and p.nbytes % band == 0 for p in plan.buffers):
        for r, k in itertools.product(range(len(rows)), range(columns)):
            lo = r * band
            alive = [
                i
                for i, p in enumerate(order)
                if p.first <= k <= p.last and p.offset <= lo < p.offset + p.nbytes
            ]
            assert len(alive) <= 1
            assert rows[r][k] == (symbol(alive[0]) if alive else "."), (r, k)
    for line in lines[2:]:
        if "|" in line or "+" in line:
            assert len(line) <= 72


def test_text_worked_example_golden():
    """The page's arena over time (``docs/memory.md``), turned a quarter: kernels across."""
    _, plan = worked_example()
    assert plan_text(plan) == (
        "memory python: unshared 52.0 KiB -> arena 24.0 KiB (lower bound 24.0 KiB, 1.00x)\n"
        "arena 24576 B, lower bound 24576 B, unshared 53248 B\n"
        "5 buffers over 6 kernels, arena / lower bound 1.00x\n"
        "kernel  0    5\n"
        "offset +------+\n"
        "   0 B |002244|\n"
        " 2 KiB |002244|\n"
        " 4 KiB |002244|\n"
        " 6 KiB |002244|\n"
        " 8 KiB |0022..|\n"
        "10 KiB |0022..|\n"
        "12 KiB |.1133.|\n"
        "14 KiB |.1133.|\n"
        "16 KiB |.1133.|\n"
        "18 KiB |.1133.|\n"
        "20 KiB |.11...|\n"
        "22 KiB |.11...<\n"
        "       +------+\n"
        "one row: 2 KiB, one column: one kernel, '.': free\n"
        "'<': the row of the lower bound (24 KiB); the arena is 24 KiB\n"
        "0=b0 12 KiB k0-1   1=b1 12 KiB k1-2   2=b2 12 KiB k2-3   3=b3 8 KiB k3-4\n"
        "4=b4 8 KiB k4-5\n"
    )


def test_text_narrow_width_groups_kernels():
    plan = chain_plan()
    text = plan_text(plan, width=30)
    _, rows, _ = grid(text)
    assert rows and all(len(row) < max(p.last + 1 for p in plan.buffers) for row in rows)
    for line in text.splitlines():
        if line.rstrip().endswith(("|", "<", "+")):
            assert len(line) <= 30
    assert "kernels, '.': free" in text  # the footer says how many kernels a column holds
