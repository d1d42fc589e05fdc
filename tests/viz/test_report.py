"""The report of ``python -m ren.viz``: HTML and text, built from the built-in examples.

Oracles, each independent of the report code:

* Structure: the HTML parses with ``html.parser`` into balanced elements, and every inline
  ``<svg>`` is well-formed XML.
* Content, against the trace itself: every pass of ``ren.engine.schedule.PASSES`` is listed for
  every realization; every kernel's source, rendered by ``kernel_source`` for each backend, is in
  the page; every planned buffer of every device plan is drawn (its rectangles counted); every exec
  unit is listed; the jit calls are the trace's.
* Self-containment: no URL at all (no ``http``, no ``src=``, only ``#anchor`` links), no script.
* Stability: the same example run twice gives the same bytes with ``times=False``, and with times
  on the pages differ only in the times.
* The command line, through ``subprocess``: the files it writes, its exit statuses, its errors.
* What a browser shows (screenshots, sizes) is in ``test_browser.py``.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import types
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

import ren.viz
from ren import Poly
from ren.engine.schedule import PASSES
from ren.ir.node import Node, toposort
from ren.ring import RingSpec, ntt_primes
from ren.viz.examples import EXAMPLES, run_example
from ren.viz.memory import plan_text
from ren.viz.report import (
    BACKENDS,
    GRAPH_NODE_LIMIT,
    INSTALL_NOTE,
    build_report,
    fold_helpers,
    inline_svg,
    text_report,
    write_report,
)
from ren.viz.trace import Trace, kernel_source

ROOT = Path(__file__).resolve().parents[2]
PASS_NAMES = [m.__name__.rsplit(".", 1)[-1] for m, _ in PASSES]
VOID = {"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "wbr", "source"}


@pytest.fixture(autouse=True)
def plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plan and report as by default, whatever the shell has set."""
    for var in ("REN_NO_PLAN", "REN_POISON", "REN_DEBUG", "REN_DUMP"):
        monkeypatch.delenv(var, raising=False)


#: The examples whose report is checked here. ``bootstrap``'s is left to
#: ``tests/viz/test_debug_bootstrap.py``: its 1260 kernels make a 16 MB page, and checking every
#: source in it here would take a minute.
REPORTED = [name for name in EXAMPLES if name != "bootstrap"]


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[Trace, object]]:
    """Every example reported here, run once for the module: name -> (trace, outcome)."""
    return {name: run_example(name) for name in REPORTED}


def report(run: tuple[Trace, object], **options: object) -> str:
    trace, outcome = run
    return build_report(
        trace, "test", outcome.summary, labels=outcome.labels, focus=outcome.focus, **options
    )


# --------------------------------------------------------------------------------------------
# checks


class Balanced(HTMLParser):
    """Fails on a closing tag that does not close the innermost open element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.svg_depth = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        pass  # <path .../> inside an svg: self-closing

    def handle_endtag(self, tag: str) -> None:
        assert self.stack, f"</{tag}> closes nothing"
        assert self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1]}>"
        self.stack.pop()


def check_structure(page: str) -> list[ET.Element]:
    parser = Balanced()
    parser.feed(page)
    parser.close()
    assert parser.stack == [], f"unclosed: {parser.stack}"
    svgs = re.findall(r"<svg[\s>].*?</svg>", page, re.S)
    return [ET.fromstring(s) for s in svgs]


def check_self_contained(page: str) -> None:
    assert "http://" not in page and "https://" not in page
    assert "src=" not in page
    # one inline script, which sorts the region table; nothing loaded
    assert page.lower().count("<script") == 1 and "<script>" in page and "<link" not in page.lower()
    assert "digraph" not in page  # no graph is ever shown as DOT text
    assert "url(" not in page
    for href in re.findall(r'href="([^"]*)"', page):
        assert href.startswith("#"), href
        assert f'id="{href[1:]}"' in page, f"a link to a missing anchor: {href}"


def chunks(page: str, trace: Trace) -> list[str]:
    """The HTML of each realization, in order."""
    starts = [
        page.index(f'<details class="realization" id="r{r.index}"') for r in trace.realizations
    ]
    ends = [*starts[1:], page.index('<section id="jit">')]
    return [page[a:b] for a, b in zip(starts, ends, strict=True)]


def captured_plans(trace: Trace) -> list:
    """The memory plans the trace's jit captures kept (the report draws them too)."""
    return [c.memory for c in trace.jit if c.kind == "capture" and c.memory is not None]


def arenas(trace: Trace) -> int:
    """The memory pictures of the report: one per device arena of a realization or a capture."""
    plans = [r.plan for r in trace.realizations] + captured_plans(trace)
    return sum(len(p.devices) for p in plans)


def small(graph: Node) -> bool:
    return len(toposort(graph)) <= GRAPH_NODE_LIMIT


def is_graph(svg: ET.Element) -> bool:
    return any(g.get("class") == "graph" for g in svg.iter("g"))


# --------------------------------------------------------------------------------------------
# the HTML report


@pytest.mark.graphviz
@pytest.mark.parametrize("name", REPORTED)
def test_report_shows_the_whole_trace(runs: dict, name: str) -> None:
    trace, outcome = runs[name]
    assert outcome.ok, outcome.summary
    page = report(runs[name])
    svgs = check_structure(page)
    check_self_contained(page)
    assert html.escape(outcome.summary.splitlines()[0]) in page
    focus = set(outcome.focus)
    drawn = big = 0
    for rec, part in zip(trace.realizations, chunks(page, trace), strict=True):
        i = rec.index
        assert (" open>" in part.split("\n", 1)[0]) == (i in focus)
        # every pass, in order, in the table; the graph after each for the focused ones
        rows = [re.search(rf'id="r{i}-row{s:02d}"', part) for s in range(1, len(PASS_NAMES) + 1)]
        assert all(rows), f"realization {i}: a pass row is missing"
        positions = [part.index(f">{n}<", r.start()) for n, r in zip(PASS_NAMES, rows, strict=True)]
        assert positions == sorted(positions)
        assert [p.name for p in rec.passes] == PASS_NAMES
        if i in focus:
            for p in rec.passes:
                assert f'id="r{i}-pass{p.step:02d}"' in part
                for rule, n in p.rule_counts():
                    assert f"{html.escape(rule)} \u00d7{n}" in part
        # the lazy graph is drawn, and for the focused ones each pass that changed the graph
        # (a graph over the limit is DOT text)
        drawn += small(rec.input)
        previous = rec.input
        for p in rec.passes:
            drawn += i in focus and p.graph is not previous and small(p.graph)
            big += i in focus and p.graph is not previous and not small(p.graph)
            previous = p.graph
        # every planned buffer is a rectangle of the memory picture
        planned = sum(len(d.buffers) for d in rec.plan.devices)
        assert part.count('<rect class="buffer"') == planned
        assert part.count('<rect class="arena"') == len(rec.plan.devices)
        # every exec unit, with its buffers
        for u in rec.units:
            assert f"<code>{html.escape(u.name)}</code>" in part
            assert html.escape(", ".join(u.buffers)) in part
    # every kernel's source for every backend (a body shown once, then linked)
    for rec in trace.realizations:
        for k in rec.kernels:
            for device, _ in BACKENDS:
                assert shown(kernel_source(k, device), page)
    graphs = [s for s in svgs if is_graph(s)]
    assert len(graphs) == drawn + page.count("<summary>its graph:")  # and regions' graphs
    assert page.count("too large to draw here") == big
    assert len(svgs) - len(graphs) == arenas(trace)


def test_jit_section_lists_captures_and_replays(runs: dict) -> None:
    trace, _ = runs["jit"]
    page = report(runs["jit"], svg=False)
    assert [c.kind for c in trace.jit] == ["capture", "replay", "replay"]
    section = page[page.index('<section id="jit">') : page.index('<section id="timing">')]
    assert "1 capture, 2 replays" in section
    for j, call in enumerate(trace.jit):
        assert f'id="jit{j}"' in section
        assert html.escape(call.function) in section
        assert f"<td class=num>{call.units}</td>" in section
    (capture,) = trace.jit[0].realizations
    assert f'<a href="#r{capture}">realization {capture}</a>' in section
    assert section.count("none: the captured units ran again") == 2
    assert f'id="r{capture}" open' in page  # the example marks its capture


@pytest.mark.graphviz
def test_same_bytes_twice() -> None:
    """Two runs of ckks-mul: identical pages without times; with times, only the times (and
    what the schedule cache did, which depends on what ran before, as times do) differ."""
    first, second = run_example("ckks-mul"), run_example("ckks-mul")
    a = report(first, times=False)
    assert a == report(second, times=False)
    timed = report(second)
    assert timed != a
    cache = re.findall(r"<p class=muted>Schedule cache: ([^<]*)</p>\n", timed)
    assert cache and all(c.startswith("hit.") for c in cache)  # the second run: every one a hit
    timed = re.sub(r"<p class=muted>Schedule cache: [^<]*</p>\n", "", timed)
    timed = re.sub(r"\d+\.\d{3} ms", "\u2013", timed)
    # a time's sort key in the region table (data-v) is the time too
    assert re.sub(r'data-v="[^"]*">\u2013', 'data-v="0">\u2013', timed) == a


def test_same_text_twice(runs: dict) -> None:
    trace, outcome = runs["seed"]
    again = run_example("seed")
    texts = [
        text_report(t, "seed", o.summary, labels=o.labels, focus=o.focus, times=False)
        for t, o in ((trace, outcome), again)
    ]
    assert texts[0] == texts[1]


def test_without_dot_keeps_everything_else(runs: dict) -> None:
    """``dot`` missing: the install note instead of graphs (no DOT text); the rest is there."""
    trace, outcome = runs["ckks-mul"]
    page = report(runs["ckks-mul"], dot=None)
    svgs = check_structure(page)
    check_self_contained(page)
    assert html.escape(INSTALL_NOTE) in page
    assert not any(is_graph(s) for s in svgs)
    assert len(svgs) == arenas(trace)
    focus = trace.realizations[outcome.focus[0]]
    assert "digraph" not in page
    # each lazy graph within the limit says why it is not drawn
    small_graphs = sum(small(r.input) for r in trace.realizations)
    assert page.count(f"Not drawn: {html.escape(INSTALL_NOTE)}.") >= small_graphs
    for p in focus.passes:
        assert f'id="r{focus.index}-pass{p.step:02d}"' in page
    for k in focus.kernels:
        for device, _ in BACKENDS:
            assert shown(kernel_source(k, device), page)
    plans = [r.plan for r in trace.realizations] + captured_plans(trace)
    assert page.count('<rect class="buffer"') == sum(
        len(d.buffers) for p in plans for d in p.devices
    )


@pytest.mark.graphviz
def test_a_large_graph_is_drawn_collapsed(runs: dict) -> None:
    """Over the limit: the graph collapsed to its regions, or, with none, a sentence saying how."""
    page = report(runs["seed"], max_nodes=5)
    check_structure(page)
    assert "too large to draw here" in page and "digraph" not in page
    assert "in no region: too large to draw here" in page  # the seed program names no region
    small = report(runs["seed"])
    assert "too large to draw here" not in small
    trace, _ = runs["ckks-mul"]
    page = report(runs["ckks-mul"], max_nodes=20)
    assert "drawn collapsed to its regions" in page
    for path in {k.region[:1] for r in trace.realizations for k in r.kernels if k.region}:
        assert f"<b>{path[0]}</b><br>" in page  # each outer region, with its node count


def test_a_failing_dot_costs_the_pictures_only(runs: dict) -> None:
    """A ``dot`` that fails (here ``false``, which exits 1) costs the pictures, nothing else."""
    if shutil.which("false") is None:
        pytest.skip("needs the false program")
    page = report(runs["seed"], dot="false")
    check_structure(page)
    assert "dot could not draw it (dot exited with 1)" in page
    assert "digraph" not in page
    assert html.escape(INSTALL_NOTE) not in page


def test_graphs_none_and_all(runs: dict) -> None:
    trace, _ = runs["ckks-rotate"]
    none = report(runs["ckks-rotate"], graphs="none")
    assert "digraph" not in none and "<g id=" not in none
    every = report(runs["ckks-rotate"], graphs="all", svg=False)
    for rec in trace.realizations:
        for p in rec.passes:
            assert f'id="r{rec.index}-pass{p.step:02d}"' in every
    with pytest.raises(ValueError, match="graphs="):
        report(runs["ckks-rotate"], graphs="some")


def test_inline_svg_is_fit_for_html() -> None:
    svg = (
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n'
        '<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN"\n'
        ' "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n'
        "<!-- Generated by graphviz -->\n"
        '<svg width="8pt" height="8pt" xmlns="http://www.w3.org/2000/svg" '
        'xmlns:xlink="http://www.w3.org/1999/xlink">\n'
        '<g id="graph0" class="graph">\n<!-- n0 -->\n'
        '<text text-anchor="middle" font-family="Times,serif" font-size="10.00">A</text>\n'
        '<text text-anchor="middle" font-family="Times,serif" font-size="8.00">B</text>\n'
        "</g>\n</svg>\n"
    )
    out = inline_svg(svg, "r1-p02")
    assert out.startswith('<svg text-anchor="middle" font-family="Times,serif" width="8pt"')
    assert "http" not in out and "<!--" not in out
    assert 'id="r1-p02-graph0"' in out
    assert out.count('font-size="') == 2  # differs between the texts: kept on each
    texts = ET.fromstring(out).iter("text")
    assert [t.text for t in texts] == ["A", "B"]


def test_write_report(tmp_path: Path, runs: dict) -> None:
    trace, outcome = runs["seed"]
    path = write_report(trace, tmp_path / "out", "seed", outcome.summary, svg=False)
    assert path == tmp_path / "out" / "report.html"
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_text_report(runs: dict) -> None:
    for name, (trace, outcome) in runs.items():
        text = text_report(trace, name, outcome.summary, labels=outcome.labels, focus=outcome.focus)
        assert outcome.summary.splitlines()[0] in text
        for rec in trace.realizations:
            assert f"--- realization {rec.index}: {outcome.labels[rec.index]} ---" in text
        for i in outcome.focus:
            rec = trace.realizations[i]
            for p in rec.passes:
                assert re.search(rf"^ +{p.step} {p.name} ", text, re.M)
            for u in rec.units:
                assert u.name in text
        for p in PASS_NAMES:
            assert re.search(rf"^  {p} +{len(trace.realizations)} runs", text, re.M)
        assert ("capture" in text) == (name == "jit")


def test_a_captured_plans_memory_plan_is_shown(runs: dict) -> None:
    """A jit capture whose plan keeps a ``MemoryPlan`` (``plan.memory``): drawn and written out.

    The stand-in plan carries the memory plan of a recorded realization, so the oracle is that
    realization's own memory plan: the same buffers, the same arena, in the jit section.
    """
    source, _ = runs["ckks-mul"]
    planned = next(r.plan for r in source.realizations if r.plan.devices)
    trace = Trace()
    fn = types.SimpleNamespace(name="step")
    plan = types.SimpleNamespace(runner=None, units=[1, 2], pruned=0, paths=["x"], memory=planned)
    trace.on_jit_capture(fn, plan, 0.001)
    trace.on_jit_replay(fn, plan, 0.001)
    assert trace.jit[0].memory is planned
    page = build_report(trace, "captured", times=False)
    check_structure(page)
    section = page[page.index('<section id="jit">') : page.index('<section id="timing">')]
    assert section.count('id="jit0-memory"') == 1 and 'id="jit1-memory"' not in section
    assert section.count('<rect class="arena"') == len(planned.devices)
    assert section.count('<rect class="buffer"') == sum(len(d.buffers) for d in planned.devices)
    for d in planned.devices:
        assert f"arena {d.arena_bytes} B" in section
    text = text_report(trace, "captured", times=False)
    assert text.count("memory plan of the captured plan:") == len(planned.devices)
    for d in planned.devices:
        assert plan_text(d).splitlines()[0].strip() in text
    bare = Trace()
    bare.on_jit_capture(fn, types.SimpleNamespace(runner=None, units=[], pruned=0, paths=[]), 0.0)
    assert bare.jit[0].memory is None
    assert "jit0-memory" not in build_report(bare, "bare", times=False)


# --------------------------------------------------------------------------------------------
# the command line


def cli(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "ren.viz", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_example(tmp_path: Path) -> None:
    done = cli("--example", "seed", "--out", "tmp", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    path = tmp_path / "tmp" / "report.html"
    assert f"report: {path}" in done.stdout
    page = path.read_text(encoding="utf-8")
    check_structure(page)
    check_self_contained(page)
    assert "agree: True" in page
    # report.json beside it, and two of them compared
    summary = json.loads((tmp_path / "tmp" / "report.json").read_text(encoding="utf-8"))
    assert summary["totals"]["realizations"] == page.count('<details class="realization"')
    again = cli("--example", "seed", "--out", "tmp2", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    both = cli("compare", "tmp", "tmp2/report.json", "--names", "one,two", cwd=tmp_path)
    assert both.returncode == 0, both.stderr
    assert both.stdout.startswith("A: one\nB: two\n") and "kernels" in both.stdout
    assert (tmp_path / "ren-viz-compare" / "compare.html").is_file()
    bad = cli("compare", "tmp", "nowhere", cwd=tmp_path)
    assert bad.returncode == 2 and "no run summary at nowhere" in bad.stderr


def test_cli_text_list_and_errors(tmp_path: Path) -> None:
    done = cli("--text", "--example", "seed", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert all(p in done.stdout for p in PASS_NAMES)
    assert list(tmp_path.iterdir()) == []  # --text writes no file
    listed = cli("--list", cwd=tmp_path)
    assert listed.returncode == 0
    assert [line.split()[0] for line in listed.stdout.splitlines()] == list(EXAMPLES)
    unknown = cli("--example", "nope", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "no example named 'nope'" in unknown.stderr and "ckks-mul" in unknown.stderr
    missing = cli("missing.py", cwd=tmp_path)
    assert missing.returncode == 2
    assert "no such script: missing.py" in missing.stderr
    nothing = cli(cwd=tmp_path)
    assert nothing.returncode == 2


def test_cli_script_that_raises(tmp_path: Path) -> None:
    """The report of what ran before the error is written; the error is shown; exit status 1."""
    script = tmp_path / "boom.py"
    script.write_text(
        "import sys\n"
        "from ren.poly import Poly\n"
        "from ren.ring import RingSpec\n"
        "print('argv', sys.argv[1:])\n"
        "ring = RingSpec(8, (17, 97))\n"
        "(Poly(list(range(8)), ring, 'python') * 3).realize()\n"
        "raise ValueError('boom after one realization')\n",
        encoding="utf-8",
    )
    done = cli("--out", "out", "boom.py", "--flag", "x", cwd=tmp_path)
    assert done.returncode == 1
    assert "argv ['--flag', 'x']" in done.stdout
    assert "ValueError: boom after one realization" in done.stderr
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    check_structure(page)
    assert "ValueError: boom after one realization" in page
    assert 'id="r0"' in page and 'id="r1"' not in page
    assert "runpy" not in page  # the traceback starts in the script


def test_cli_memory(tmp_path: Path) -> None:
    trace, _ = run_example("seed")
    (plan,) = [d for r in trace.realizations for d in r.plan.devices]
    done = cli("memory", "--example", "seed", "--out", "mem", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (svg,) = sorted((tmp_path / "mem").iterdir())
    assert svg.name == "memory-r00-python.svg"
    root = ET.fromstring(svg.read_text(encoding="utf-8"))
    rects = [e for e in root.iter("{http://www.w3.org/2000/svg}rect") if e.get("class") == "buffer"]
    assert len(rects) == len(plan.buffers)
    assert plan.summary() in done.stdout
    text = cli("memory", "--text", "--example", "seed", cwd=tmp_path)
    assert text.returncode == 0 and plan.summary() in text.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mem"]


def test_cli_debug_dispatch(tmp_path: Path) -> None:
    """``debug`` hands the script, the debugger's options and the script's args to
    ``ren.viz.debug.main``; without a script it is a usage error."""
    done = cli("debug", cwd=tmp_path)
    assert done.returncode == 2
    assert "debug [--all] [--skip N] [--region NAME] SCRIPT.py" in done.stderr
    script = tmp_path / "small.py"
    script.write_text(
        "import sys\n"
        "from ren.poly import Poly\n"
        "from ren.ring import RingSpec\n"
        "print('argv', sys.argv[1:])\n"
        "print((Poly(list(range(8)), RingSpec(8, (17, 97)), 'python') * 3).tolist())\n",
        encoding="utf-8",
    )
    done = cli("debug", "--all", "small.py", "--all", "x", cwd=tmp_path, stdin="continue\n")
    assert done.returncode == 0, done.stderr
    assert "argv ['--all', 'x']" in done.stdout
    assert "[0, 3, 6, 9, 12, 15, 18, 21]" in done.stdout


# --------------------------------------------------------------------------------------------
# a screenshot


def shown(source: str, page: str) -> bool:
    """Whether ``source`` is on ``page``: the kernel, then each folded helper block."""
    main, folded = fold_helpers(source)
    return html.escape(main) in page and all(html.escape(b) in page for _, b in folded)


def test_kernel_sources_show_the_kernel_first_and_fold_the_helpers() -> None:
    ring = RingSpec(16, ntt_primes(16, 30, 2))
    with ren.viz.record() as trace:
        a, b = Poly(list(range(16)), ring), Poly([3 * i - 7 for i in range(16)], ring)
        ((a * b).rescale() + 1).realize()
    (rec,) = trace.realizations
    for k in rec.kernels:
        for device in ("cpu", "cuda"):
            source = kernel_source(k, device)
            main, folded = fold_helpers(source)
            assert folded, (k.info.name, device)  # every C and CUDA kernel has helpers
            again = main
            for line, block in folded:
                assert line in main and "mont_mul" in block
                again = again.replace(line, block, 1)
            assert again == source  # nothing lost: the lines stand for the blocks
            body = main.split("\n")
            entry = next(i for i, t in enumerate(body) if t.startswith(("void ", 'extern "C"')))
            helper = r"(static inline|__forceinline__) \w+ (add|sub|neg)_mod_u|mont_mul_u\d+\(\w+ a"
            assert re.search(helper, main) is None, main  # no helper defined before the kernel
            if k.info.kind == "elementwise":  # the loop within a dozen lines of the top
                assert entry < 12, (device, main)
    page = build_report(trace, "fold")
    assert page.count("modular helpers (") >= len(rec.kernels)


def test_regions_show_beside_their_kernels() -> None:
    import ren
    from ren import Poly, RingSpec, ntt_primes
    from ren.engine.observe import observing

    ring = RingSpec(16, ntt_primes(16, 30, 2))
    a = Poly.uniform(ring, rng=1)
    with ren.region("square"):
        y = a * a
    with ren.region("shift"):
        z = y + 3
    trace = Trace()
    with observing(trace):
        z.realize()
    text = text_report(trace, "regions", times=False)
    kernel_lines = [line for line in text.splitlines() if "[" in line and "_n16_" in line]
    assert any(line.endswith("[square]") for line in kernel_lines)
    assert any(line.endswith("[shift]") for line in kernel_lines)
    page = build_report(trace, "regions", times=False)
    check_structure(page)
    assert "<th>region</th>" in page.replace(' class="num"', "") or ">region<" in page
    assert ">square<" in page and ">shift<" in page
