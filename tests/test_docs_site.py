"""The documentation site as a whole: its sections, its generated pages, the README.

- Every page under ``docs/`` is in the navigation, under the sections the site promises
  (Tutorials, Concepts, Pipeline, Guides, Reference), and every tutorial notebook has its page.
- The pass pages and their graphs are what ``scripts/pass_pages.py`` makes from the code now.
- The environment-variable table lists every ``REN_*`` variable the package reads, and the
  ``REN_DEBUG`` ladder every level the package tests for.
- The API reference covers every module of the package.
- The hook that turns notebooks into pages keeps every cell and each cell's output, and a
  notebook that fails fails the build.
- The README's ten-line example prints what the README shows; its picture is what ``ren.viz``
  draws today; its links point at files that exist.
"""

from __future__ import annotations

import importlib.util
import pkgutil
import re
import sys
from pathlib import Path

import pytest

import ren
from tests.pages import blocks, load_hooks, run_page

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _nav() -> list[tuple[int, str, str]]:
    """``mkdocs.yml``'s nav as ``(indent, title, page)`` lines (page ``""`` for a section)."""
    lines = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\n")
    out = []
    for line in lines[lines.index("nav:") + 1 :]:
        if not line.strip():
            continue
        if not line.startswith(" "):
            break
        item = line.strip().removeprefix("- ")
        title, _, page = item.rpartition(": ") if ": " in item else ("", "", item)
        if item.endswith(":"):
            title, page = item[:-1], ""
        out.append((len(line) - len(line.lstrip()), title, page.strip()))
    return out


def _section(name: str) -> list[str]:
    """The pages under the top-level nav section ``name``."""
    nav = _nav()
    top = min(indent for indent, _, _ in nav)
    start = next(i for i, (ind, title, _) in enumerate(nav) if ind == top and title == name)
    pages = []
    for indent, _, page in nav[start + 1 :]:
        if indent == top:
            break
        if page:
            pages.append(page)
    return pages


def test_the_site_has_its_sections():
    nav = _nav()
    top = min(indent for indent, _, _ in nav)
    sections = [title for indent, title, page in nav if indent == top and not page]
    assert sections == ["Tutorials", "Concepts", "Pipeline", "Guides", "Reference"]
    concepts = _section("Concepts")
    for page in (
        "rings-and-rns",
        "montgomery",
        "domains",
        "automorphisms",
        "rescale",
        "ckks-types",
    ):
        assert f"concepts/{page}.md" in concepts
    assert {"ckks.md", "jit.md", "viz.md", "backends.md", "guides/oracle.md"} <= set(
        _section("Guides")
    )
    assert {"reference/env.md", "reference/api/index.md"} <= set(_section("Reference"))
    assert {"memory.md", "codegen.md", "pipeline/jit.md", "scheduler.md"} <= set(
        _section("Pipeline")
    )


def test_every_page_is_in_the_navigation_once():
    pages = [page for _, _, page in _nav() if page]
    assert len(pages) == len(set(pages))
    on_disk = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert sorted(on_disk - set(pages)) == []
    generated = {p for p in pages if p.startswith("tutorials/")}
    assert sorted(set(pages) - on_disk - generated) == []


def test_every_tutorial_has_a_page_in_order():
    hooks = load_hooks()
    paths = hooks.tutorial_paths()
    assert [p.stem[:2] for p in paths] == [
        "01",
        "02",
        "03",
        "04",
        "05",
        "06",
        "07",
        "08",
        "09",
        "10",
    ]
    want = ["tutorials/index.md", *(f"tutorials/{p.stem}.md" for p in paths)]
    assert _section("Tutorials") == want


def test_pass_pages_are_current():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import pass_pages
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    assert pass_pages.main(["--check"]) == 0, "run: python scripts/pass_pages.py"
    for dot in (DOCS / "pipeline" / "passes" / "graphs").glob("*.dot"):
        svg = dot.with_suffix(".svg")
        assert svg.is_file() and svg.read_text(encoding="utf-8").lstrip().startswith("<?xml"), svg


def test_every_pass_page_fires_a_rule_or_says_why_not():
    from ren.engine.schedule import PASSES

    for step, (module, _) in enumerate(PASSES, start=1):
        name = module.__name__.rsplit(".", 1)[-1]
        text = (DOCS / "pipeline" / "passes" / f"{step:02d}_{name}.md").read_text(encoding="utf-8")
        assert "Rules fired: none." not in text or "rewrites nothing" in text, name


# -- environment variables -------------------------------------------------------------------------


def _package_sources() -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for p in (ROOT / "ren").rglob("*.py")}


def test_every_environment_variable_is_in_the_table():
    from ren import settings

    read = {s.name for s in settings.all_settings()}  # every variable is declared there
    for text in _package_sources().values():
        read |= set(re.findall(r"environ(?:\.get)?\(?\[?\"(REN_[A-Z_]+)\"", text))
    assert "REN_DEVICE" in read and "REN_THREADS" in read
    page = (DOCS / "reference" / "env.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip().strip("`") for line in page.splitlines() if "| `" in line}
    issue = {
        "REN_DEVICE",
        "REN_DEBUG",
        "REN_DUMP",
        "REN_CHECK",
        "REN_VALIDATE",
        "REN_CCACHE",
        "REN_CACHE_DIR",
        "REN_THREADS",
    }
    assert sorted((read | issue) - rows) == []


def test_every_debug_level_is_on_the_ladder():
    levels = set()
    for text in _package_sources().values():
        levels |= {int(n) for n in re.findall(r"debug(?:_level\(\))? >= (\d)", text)}
    assert levels == {1, 2, 3, 4}
    page = (DOCS / "reference" / "env.md").read_text(encoding="utf-8")
    ladder = page.split("## The `REN_DEBUG` ladder", 1)[1]
    for level in levels:
        assert f"\n| `{level}` |" in ladder, level


# -- the API reference -----------------------------------------------------------------------------

#: modules with no API page, and why
NOT_IN_THE_API = {
    "ren.demo": "a script (python -m ren.demo), shown in the README and the tutorials",
    "ren.viz.__main__": "the command line, documented on the ren.viz page",
    "ren.testing.__main__": "the command line, documented on the backends page",
}


def test_a_docstring_paragraph_ending_in_a_double_colon_ends_in_one():
    """What mkdocstrings makes of ``Use::`` and its literal block, and ``::`` elsewhere kept."""
    hooks = load_hooks()
    html = "<p>Use::</p>\n<pre><code>ckks.encrypt(x)\n</code></pre>\n<p>C++ <code>a::b</code></p>"
    assert hooks.on_page_content(html) == html.replace("<p>Use::</p>", "<p>Use:</p>")


def test_the_site_check_finds_directory_links_missing_files_and_double_colons(tmp_path: Path):
    spec = importlib.util.spec_from_file_location("check_site", ROOT / "scripts" / "check_site.py")
    assert spec is not None and spec.loader is not None
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "page.html").write_text("<p>x</p>", encoding="utf-8")
    (tmp_path / "404.html").write_text('<a href="/nowhere.html">', encoding="utf-8")  # a server's
    good = '<a href="guide/page.html#top">a</a> <img src="https://example.org/x.png">'
    (tmp_path / "index.html").write_text(good, encoding="utf-8")
    assert check.problems(tmp_path) == ([], 1)
    bad = good + '<a href="guide/">b</a><a href="gone.html">c</a><p>Use::</p>'
    bad += '<span class="arithmatex">\\(x\\)</span>'
    (tmp_path / "index.html").write_text(bad, encoding="utf-8")
    assert check.problems(tmp_path) == (
        [
            "index.html: link 'guide/' is a directory",
            "index.html: link 'gone.html' is missing",
            "index.html: a paragraph ends with '::'",
            "index.html: a formula left as LaTeX (not made MathML)",
        ],
        3,
    )


def test_formulas_become_mathml_at_build_time():
    """What pymdownx.arithmatex (generic) writes, made MathML: inline and display, entities read."""
    hooks = load_hooks()
    page = (
        '<p>A slot <span class="arithmatex">\\(x_k &lt; 2^{-8}\\)</span>.</p>\n'
        '<div class="arithmatex">\\[\n\\frac{q_0}{\\Delta}\n\\]</div>'
    )
    out = hooks.on_page_content(page)
    assert "arithmatex" not in out and "\\(" not in out
    inline, block = re.findall(r'<math xmlns="[^"]+" display="(\w+)">(.*?)</math>', out)
    assert inline[0] == "inline" and "<msub><mi>x</mi><mi>k</mi></msub>" in inline[1]
    assert "<mo>&#x0003C;</mo>" in inline[1] and "<msup><mn>2</mn>" in inline[1]  # < and 2^
    assert block[0] == "block" and "<mfrac>" in block[1] and "&#x00394;" in block[1]  # Delta
    assert out.startswith("<p>A slot <math") and out.count("</math>") == 2


def test_every_module_is_in_the_api_reference():
    api = DOCS / "reference" / "api"
    covered = set()
    for page in api.glob("*.md"):
        covered |= set(re.findall(r"^::: ([\w.]+)$", page.read_text(encoding="utf-8"), re.M))
    for page in (DOCS / "pipeline" / "passes").glob("*.md"):
        covered |= set(re.findall(r"^::: ([\w.]+)$", page.read_text(encoding="utf-8"), re.M))
    modules = {"ren"} | {
        m.name for m in pkgutil.walk_packages(ren.__path__, "ren.") if not m.name.endswith("_")
    }
    missing = sorted(m for m in modules - covered if m not in NOT_IN_THE_API)
    assert missing == [], f"modules with no API page: {missing}"


# -- the tutorial hook -----------------------------------------------------------------------------

NOTEBOOK = """# ---
# jupyter:
#   jupytext:
#     formats: py:percent
# ---

# %% [markdown]
# # A title
#
# Some text.

# %%
x = 6 * 7
print(x)

# %%
y = x + 1

# %% [markdown]
# ## More
#
# Text again.

# %%
print(y)
assert y == 43
"""


def test_cells_are_read_in_order():
    cells = load_hooks().read_cells(NOTEBOOK)
    assert [c.kind for c in cells] == ["markdown", "code", "code", "markdown", "code"]
    assert cells[0].source == "# A title\n\nSome text."
    assert cells[1].source == "x = 6 * 7\nprint(x)"
    lines = NOTEBOOK.split("\n")
    for cell in cells:  # each cell knows where it starts in the file
        first = cell.source.split("\n")[0]
        assert lines[cell.line - 1].endswith(
            first.lstrip("#").strip() if cell.kind == "markdown" else first
        )


def test_a_notebook_page_keeps_every_cell_and_its_output(tmp_path: Path):
    hooks = load_hooks()
    path = tmp_path / "01_demo.py"
    path.write_text(NOTEBOOK, encoding="utf-8")
    outputs = hooks.run_cells(path)
    assert outputs == [[("text", "42\n")], [], [("text", "43\n")]]
    text = hooks.tutorial_markdown(path, outputs, rel=path.name)
    assert text.startswith("# A title\n\nSome text.\n\n!!! note")
    assert "```python\nx = 6 * 7\nprint(x)\n```\n\n```text\n42\n```" in text
    assert "```python\ny = x + 1\n```\n\n## More" in text  # no output block for a silent cell
    assert text.rstrip().endswith("```text\n43\n```")


def test_a_rich_display_is_kept_as_html_on_the_page(tmp_path: Path):
    """A cell ending in a Ren value shows its ``_repr_html_`` in the kernel, and on the page."""
    hooks = load_hooks()
    path = tmp_path / "01_poly.py"
    path.write_text(
        NOTEBOOK.split("# %%\n", 1)[0]
        + "# %%\nfrom ren.poly import Poly\nfrom ren.ring import RingSpec, ntt_primes\n"
        + "a = Poly(list(range(16)), RingSpec(16, ntt_primes(16, 30, 1))).realize()\n"
        + "print('made')\na\n",
        encoding="utf-8",
    )
    outputs = hooks.run_cells(path)
    assert [kind for kind, _ in outputs[0]] == ["text", "html"]
    (_, printed), (_, shown) = outputs[0]
    assert printed == "made\n"
    from ren.poly import Poly
    from ren.ring import RingSpec, ntt_primes

    want = Poly(list(range(16)), RingSpec(16, ntt_primes(16, 30, 1))).realize()._repr_html_()
    assert shown == want
    page = hooks.tutorial_markdown(path, outputs, rel=path.name)
    block = page.split('<div class="ren-output">\n', 1)[1].split("\n</div>", 1)[0]
    assert block.replace("\n", "") == want.replace("\n", "") and "\n\n" not in block


def test_long_outputs_are_cut():
    hooks = load_hooks()
    text = "\n".join(str(i) for i in range(hooks.MAX_OUTPUT_LINES + 5))
    cut = hooks._cut(text).split("\n")
    assert len(cut) == hooks.MAX_OUTPUT_LINES + 1 and cut[-1] == "... (5 more lines)"


def test_a_failing_notebook_fails_the_build(tmp_path: Path):
    path = tmp_path / "01_broken.py"
    path.write_text(NOTEBOOK.replace("assert y == 43", "assert y == 44, 'wrong y'"), "utf-8")
    with pytest.raises(RuntimeError, match=r"(?s)01_broken\.py failed at line 26.*wrong y"):
        load_hooks().executed([path])


def test_the_real_tutorials_pages(monkeypatch: pytest.MonkeyPatch):
    hooks = load_hooks()
    monkeypatch.setenv("REN_DOCS_EXECUTE", "0")
    paths = hooks.tutorial_paths()
    index = hooks.tutorials_index(paths)
    for path in paths:
        title, summary = hooks.title_and_summary(path)
        assert f"- [{title}]({path.stem}.md): {summary}" in index
        assert summary, f"{path.name} has no first paragraph"
        page = hooks.tutorial_markdown(path, None)
        for cell in hooks.read_cells(path.read_text(encoding="utf-8")):
            assert cell.source in page


# -- the README ------------------------------------------------------------------------------------


def test_readme_example_has_ten_lines_and_prints_what_it_shows():
    readme = ROOT / "README.md"
    code = [body for lang, body in blocks(readme) if lang == "python"]
    assert len(code) == 1 and len(code[0].strip().splitlines()) <= 10
    namespace, checked = run_page(readme, strict=False)
    assert checked == 1
    import numpy as np

    v = np.random.default_rng(7).uniform(-1, 1, 4096)  # the slots, by NumPy alone
    got = namespace["got"]
    assert np.max(np.abs(got - np.roll(0.5 * v * v + v, -1))) < 2.0**-20


def test_readme_links_point_at_files():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#]+)\)", readme)
    assert "docs/images/ckks-mul-memory.svg" in targets
    local = [t for t in targets if not t.startswith(("http://", "https://"))]
    assert [t for t in local if not (ROOT / t).exists()] == []


def test_the_picture_is_what_ren_viz_draws_today():
    from ren.viz.examples import run_example
    from ren.viz.memory import plan_svg

    trace, outcome = run_example("ckks-mul")
    assert outcome.ok
    rec = next(r for r in trace.realizations if "multiply" in outcome.labels.get(r.index, ""))
    title = f"realization {rec.index}: {outcome.labels[rec.index]}: python"
    kernels = [k.info.name for k in rec.kernels]
    svg = plan_svg(rec.plan.devices[0], kernels, title=title)
    want = (DOCS / "images" / "ckks-mul-memory.svg").read_text(encoding="utf-8")
    assert svg == want, "run: python -m ren.viz memory --example ckks-mul (realization 5)"
    # the figures the README and the home page give for it
    plan = rec.plan.devices[0]
    kib = f"{plan.arena_bytes // 1024} KiB"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    home = (DOCS / "index.md").read_text(encoding="utf-8")
    nbuf, nk = len(plan.buffers), len(kernels)
    assert f"the {nk} kernels of the multiply" in readme
    assert f"arena ({kib}, where the {nbuf} buffers unshared would take\n" in readme
    assert f"\n{plan.unshared_bytes // 1024} KiB):" in readme
    assert f"{nbuf} buffers over {nk} kernels packed" in readme
    assert (
        f"{nbuf} temporary buffers over its {nk} kernels, packed\ninto one arena of {kib}" in home
    )


# -- the pipeline's JIT page -----------------------------------------------------------------------


def test_the_pipeline_jit_page_runs():
    _, checked = run_page(DOCS / "pipeline" / "jit.md")
    assert checked == 2
