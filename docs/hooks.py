"""MkDocs hooks: pages generated from the code, so the site cannot drift from it.

MkDocs loads this file through ``hooks:`` in ``mkdocs.yml``; it imports ``ren`` from the
environment MkDocs runs in (``pip install -e .``). Nothing here touches the network.

- **The pass table.** ``docs/scheduler.md`` holds the marker line ``<!-- ren:passes -->``.
  ``on_page_markdown`` replaces it with a table of ``ren.engine.schedule.PASSES`` in order: the
  pass (a link to its page under ``pipeline/passes/``, written by ``scripts/pass_pages.py``), the
  reason the tuple gives for its position, and the first line of the pass module's docstring.
- **The tutorials.** ``on_files`` turns every ``tutorials/NN_name.py`` (a jupytext notebook in the
  percent format) into the page ``tutorials/NN_name.md``: markdown cells as text, code cells as
  Python blocks, each followed by what it printed and by the rich displays it showed (a Ren
  object's HTML or SVG, inline, as the notebook shows it), plus an index page
  ``tutorials/index.md``. The notebooks are executed as notebooks while the site builds: jupytext
  reads each as an ``.ipynb`` and ``nbclient`` runs it in a Jupyter kernel, each in a subprocess
  of its own (``python docs/hooks.py --run PATH OUT`` writes the cells' outputs to ``OUT`` as
  JSON); a notebook that fails fails the build, naming its line. ``REN_DOCS_EXECUTE=0`` skips
  running them (the pages then show code only), which keeps ``mkdocs serve`` quick while writing.
- **Formulas.** A page writes ``$...$`` (inline) or ``$$...$$`` (display) in LaTeX;
  ``pymdownx.arithmatex`` keeps them apart from Markdown, and ``on_page_content`` turns each into
  MathML with ``latex2mathml`` while the site builds, which browsers draw themselves: no script,
  no font to fetch, nothing from a CDN (the site works offline and from disk).
- **Docstrings' literal blocks.** Ren's docstrings end the line before a literal block with
  ``::`` (reStructuredText, as ``help()`` shows it); the API pages render that block as code, so
  ``on_page_content`` writes the ``::`` ending a paragraph as one ``:``.
"""

from __future__ import annotations

import html
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / "tutorials"
MARKER = "<!-- ren:passes -->"

#: an output longer than this many lines is cut, with a line saying how many were left out.
MAX_OUTPUT_LINES = 60


def pass_name(module: Any) -> str:
    """The pass's short name: the last part of its module name (``ren.passes.simplify``)."""
    return module.__name__.rsplit(".", 1)[-1]


def pass_page(step: int, module: Any) -> str:
    """The pass page's path relative to ``docs/`` (``pipeline/passes/05_bufferize.md``)."""
    return f"pipeline/passes/{step:02d}_{pass_name(module)}.md"


def render_passes() -> str:
    """The markdown table of every pass in ``PASSES``: step, page link, reason, summary line."""
    from ren.engine.schedule import PASSES

    rows = ["| step | pass | why here | what it does |", "|---|---|---|---|"]
    for step, (module, why) in enumerate(PASSES, start=1):
        doc = inspect.cleandoc(module.__doc__ or "(this pass has no docstring)")
        first = doc.splitlines()[0].replace("|", "\\|")
        link = f"[`{pass_name(module)}`]({pass_page(step, module)})"
        rows.append(f"| {step} | {link} | {why} | {first} |")
    return "\n".join(rows) + "\n"


def on_page_markdown(markdown: str, page: Any = None, config: Any = None, files: Any = None) -> str:
    """Replace each line that is exactly ``MARKER`` (spaces aside) with ``render_passes()``."""
    if MARKER not in markdown:
        return markdown
    rendered = render_passes()
    lines = markdown.split("\n")
    return "\n".join(rendered if line.strip() == MARKER else line for line in lines)


#: What ``pymdownx.arithmatex`` (generic) writes for ``$...$`` and for ``$$...$$``.
MATH = re.compile(
    r'<span class="arithmatex">\\\((.*?)\\\)</span>|<div class="arithmatex">\\\[(.*?)\\\]</div>',
    re.S,
)


def mathml(match: re.Match[str]) -> str:
    """The MathML of one formula ``MATH`` found (inline or display)."""
    from latex2mathml.converter import convert

    inline, block = match.group(1), match.group(2)
    latex = html.unescape(inline if inline is not None else block)
    return convert(latex, display="inline" if inline is not None else "block")


def on_page_content(html_text: str, page: Any = None, config: Any = None, files: Any = None) -> str:
    """Formulas as MathML; a paragraph ending ``::`` (a docstring's literal block follows) ends
    ``:`` instead."""
    return MATH.sub(mathml, html_text).replace("::</p>", ":</p>")


# -- tutorials -------------------------------------------------------------------------------------


class Cell(NamedTuple):
    """One cell of a percent-format notebook: ``kind`` is ``"markdown"`` or ``"code"``."""

    kind: str
    source: str
    line: int = 1  # the line of the notebook file where ``source`` starts (from 1)


def read_cells(text: str) -> list[Cell]:
    """The cells of a jupytext percent-format notebook (its ``# ---`` header block skipped).

    A line ``# %%`` starts a code cell and ``# %% [markdown]`` a markdown cell, whose lines lose
    their leading ``# `` (or a bare ``#``). Cells are stripped of blank lines at both ends; empty
    cells are dropped.
    """
    lines = text.split("\n")
    first = 0
    if lines and lines[0].strip() == "# ---":
        first = next((i for i in range(1, len(lines)) if lines[i].strip() == "# ---"), -1) + 1
    cells: list[Cell] = []
    kind, body, start = None, [], 0

    def close() -> None:
        if kind is None:
            return
        joined = "\n".join(body)
        source = joined.strip("\n")
        if source.strip():
            skipped = len(joined) - len(joined.lstrip("\n"))
            cells.append(Cell(kind, source, start + skipped + 1))

    for number in range(first, len(lines)):
        line = lines[number]
        if line.startswith("# %%"):
            close()
            kind, body, start = ("markdown" if "[markdown]" in line else "code"), [], number + 1
        elif kind == "markdown":
            body.append(line[2:] if line.startswith("# ") else line.lstrip("#"))
        elif kind is not None:
            body.append(line)
    close()
    return cells


#: One output of a code cell, as a page shows it: ``("text", what it printed)`` or ``("html",
#: a rich display)`` (a Ren object's ``_repr_html_``, or an ``image/svg+xml``).
Output = tuple[str, str]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def notebook_outputs(cell: Any) -> list[Output]:
    """The outputs of one executed code cell (an ``nbformat`` cell), in order, for the page.

    Printed text (``stdout``) and a plain result are ``"text"``, consecutive ones joined; a
    display with ``text/html`` or ``image/svg+xml`` is ``"html"``; ``stderr`` (progress bars) is
    left out.
    """
    out: list[Output] = []
    for o in cell.get("outputs", []):
        if o["output_type"] == "stream":
            item = ("text", o["text"]) if o["name"] == "stdout" else None
        elif o["output_type"] in ("execute_result", "display_data"):
            data = o.get("data", {})
            rich = data.get("text/html") or data.get("image/svg+xml")
            item = ("html", rich) if rich else ("text", data.get("text/plain", "") + "\n")
        else:
            item = None
        if item is None:
            continue
        if item[0] == "text" and out and out[-1][0] == "text":
            out[-1] = ("text", out[-1][1] + item[1])
        else:
            out.append(item)
    return out


def execute_notebook(path: Path, timeout: int = 600) -> Any:
    """The notebook ``path`` (jupytext's percent format), executed in a Jupyter kernel.

    jupytext reads it as an ``nbformat`` notebook; ``nbclient`` runs its code cells in order in a
    fresh IPython kernel (this Python's), from the repository root, as a reader's Jupyter would.
    Returns the executed notebook, every cell with its outputs.

    Raises:
        RuntimeError: a cell failed; the message names the notebook's line (not the cell's) and
            holds the traceback.
    """
    import jupytext
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    notebook = jupytext.read(path)
    manager = KernelManager(kernel_name="python3", transport="ipc")
    client = NotebookClient(
        notebook, timeout=timeout, km=manager, resources={"metadata": {"path": str(ROOT)}}
    )
    try:
        with tempfile.TemporaryDirectory() as tmp:
            manager.connection_file = str(Path(tmp) / "kernel.json")
            manager.ip = str(Path(tmp) / "kernel")
            client.execute()
    except CellExecutionError as e:
        starts = [c.line for c in read_cells(path.read_text(encoding="utf-8")) if c.kind == "code"]
        code = [c for c in notebook.cells if c.cell_type == "code"]
        failed = next(i for i, c in enumerate(code) if any(
            o["output_type"] == "error" for o in c.get("outputs", [])))  # fmt: skip
        trace = _ANSI.sub("", str(e))
        lines = [int(n) for n in re.findall(r"^-*> *(\d+)", trace, re.M)] or [1]
        where = starts[failed] + lines[-1] - 1
        raise RuntimeError(f"{path.name} failed at line {where}:\n{trace}") from None
    return notebook


def run_cells(path: Path) -> list[list[Output]]:
    """Execute the notebook as a notebook (``execute_notebook``); each code cell's outputs."""
    notebook = execute_notebook(path)
    return [notebook_outputs(c) for c in notebook.cells if c.cell_type == "code"]


def executed(paths: list[Path]) -> dict[Path, list[list[Output]] | None]:
    """Each notebook's code-cell outputs, run in parallel subprocesses (``None``: not run).

    Raises:
        RuntimeError: a notebook failed; the message holds its stderr.
    """
    if os.environ.get("REN_DOCS_EXECUTE", "1") == "0":
        return dict.fromkeys(paths)
    env = {k: v for k, v in os.environ.items() if k not in ("REN_DEBUG", "REN_DUMP")}

    def one(path: Path) -> list[list[Output]]:
        with tempfile.TemporaryDirectory() as tmp:
            result = Path(tmp) / "outputs.json"
            done = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--run", str(path), str(result)],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            if done.returncode != 0:
                raise RuntimeError(
                    f"tutorial {path.name} failed while building the docs:\n{done.stderr}"
                )
            cells = json.loads(result.read_text(encoding="utf-8"))
            return [[(kind, body) for kind, body in cell] for cell in cells]

    with ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1))) as pool:
        return dict(zip(paths, pool.map(one, paths), strict=True))


def _fence(text: str, lang: str) -> str:
    ticks = "````" if "```" in text else "```"
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _cut(output: str) -> str:
    lines = output.rstrip("\n").split("\n")
    if len(lines) <= MAX_OUTPUT_LINES:
        return "\n".join(lines)
    left = len(lines) - MAX_OUTPUT_LINES
    return "\n".join([*lines[:MAX_OUTPUT_LINES], f"... ({left} more lines)"])


def _html_block(body: str) -> str:
    """A rich display as a raw HTML block of the page: no blank line (which would end it)."""
    lines = [line for line in body.strip().split("\n") if line.strip()]
    return '<div class="ren-output">\n' + "\n".join(lines) + "\n</div>"


def tutorial_markdown(
    path: Path, outputs: list[list[Output]] | None, rel: str | None = None
) -> str:
    """The page of one tutorial: its cells, each code cell followed by its outputs (if any).

    Printed text is a text block (cut past ``MAX_OUTPUT_LINES``); a rich display (the HTML or
    SVG of a Ren object, as the notebook showed it) is inline HTML.

    ``rel`` is the notebook's path as the page names it (default: relative to the repository).
    """
    cells = read_cells(path.read_text(encoding="utf-8"))
    rel = rel or path.relative_to(ROOT).as_posix()
    note = (
        '!!! note "Run it yourself"\n'
        f"    This page is the notebook `{rel}`, executed when the site was built. Run it "
        f"with `python {rel}` from the repository root, or open it in Jupyter "
        f"with jupytext (`jupytext --to ipynb {rel}`)."
    )
    parts: list[str] = []
    code = 0
    for i, cell in enumerate(cells):
        if cell.kind == "markdown":
            parts.append(cell.source)
            if i == 0:
                parts.append(note)
            continue
        parts.append(_fence(cell.source, "python"))
        for kind, body in outputs[code] if outputs is not None else ():
            if kind == "html":
                parts.append(_html_block(body))
            elif body.strip():
                parts.append(_fence(_cut(body), "text"))
        code += 1
    return "\n\n".join(parts) + "\n"


def title_and_summary(path: Path) -> tuple[str, str]:
    """The notebook's title (its first heading) and first paragraph after it."""
    first = next(c for c in read_cells(path.read_text(encoding="utf-8")) if c.kind == "markdown")
    lines = first.source.split("\n")
    title = lines[0].lstrip("#").strip()
    paragraph = []
    for line in lines[1:]:
        if not line.strip():
            if paragraph:
                break
            continue
        paragraph.append(line.strip())
    return title, " ".join(paragraph)


def tutorials_index(paths: list[Path]) -> str:
    """The tutorials' index page: one entry per notebook, with its first paragraph."""
    out = [
        "# Tutorials",
        "",
        f"{_count(len(paths))} notebooks, in order: each builds on the one before, runs in "
        "seconds to minutes on a laptop, and ends by checking its results against an independent "
        "reference (Python integers, the reference evaluator or NumPy). They live in "
        "`tutorials/` as jupytext percent-format `.py` files: run one with `python "
        "tutorials/NAME.py`, or open it in Jupyter with `jupytext --to ipynb tutorials/NAME.py`, "
        "where Ren's values show themselves as tables and pictures ([Ren in "
        "notebooks](../notebooks.md)). The test suite runs every one both ways, as a script and "
        "as a notebook, and the pages below are the notebooks as they ran, displays included.",
        "",
    ]
    for path in paths:
        title, summary = title_and_summary(path)
        out.append(f"- [{title}]({path.stem}.md): {summary}")
    return "\n".join(out) + "\n"


def _count(k: int) -> str:
    """``k`` in words up to twelve (``"Ten"``), else in digits."""
    words = [
        "Zero",
        "One",
        "Two",
        "Three",
        "Four",
        "Five",
        "Six",
        "Seven",
        "Eight",
        "Nine",
        "Ten",
        "Eleven",
        "Twelve",
    ]
    return words[k] if k < len(words) else str(k)


def tutorial_paths() -> list[Path]:
    """The tutorial notebooks, in order of their names."""
    return sorted(TUTORIALS.glob("[0-9][0-9]_*.py"))


def on_files(files: Any, config: Any) -> Any:
    """Add the generated tutorial pages (``tutorials/*.md``) to the site's files."""
    from mkdocs.structure.files import File

    paths = tutorial_paths()
    outputs = executed(paths)
    pages = {"tutorials/index.md": tutorials_index(paths)}
    for path in paths:
        pages[f"tutorials/{path.stem}.md"] = tutorial_markdown(path, outputs[path])
    for uri, content in pages.items():
        files.append(File.generated(config, uri, content=content))
    return files


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--run":
        sys.path.insert(0, str(ROOT))
        try:
            outputs = run_cells(Path(sys.argv[2]).resolve())
        except RuntimeError as e:
            sys.exit(str(e))
        Path(sys.argv[3]).write_text(json.dumps(outputs), encoding="utf-8")
    else:
        sys.exit("usage: python docs/hooks.py --run tutorials/NN_name.py OUTPUT.json")
