"""The examples in ``docs/jit.md`` run and print what the page shows.

As for ``docs/realize.md``: the page's ```` ```python ```` blocks run in order in one namespace
(as a reader would type them), and each ```` ```text ```` block is the output of the python block
just before it. Here every text block must follow one. The examples print their own oracles (the
same function computed without the JIT, or values worked out by hand in ``docs/rings.md``).

The page's ```` ```console ```` line (``REN_DEBUG=1``) is compared with what a capture prints,
times aside; its ```` ```c ```` block with the C a ``cpu`` plan compiles to, digests aside.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ren
from ren.capture.function import JitFunction
from tests import pages

PAGE = Path(__file__).resolve().parents[1] / "docs" / "jit.md"
TEXT = PAGE.read_text(encoding="utf-8")
ENV = ("REN_DEBUG", "REN_VALIDATE", "REN_JIT_GRAPH", "REN_NO_PLAN", "REN_DEVICE", "REN_POISON")


def blocks() -> list[tuple[str, str]]:
    return pages.blocks(PAGE)


@pytest.fixture(autouse=True)
def plain_env(monkeypatch: pytest.MonkeyPatch):
    """The page shows the defaults (python device, graph runner on, no debug output) and starts
    with no plan captured, whatever the shell and the tests before have set."""
    for var in ENV:
        monkeypatch.delenv(var, raising=False)
    ren.clear_jit()
    yield
    ren.clear_jit()


def run_page() -> tuple[dict[str, object], int]:
    """Run the page's python blocks, comparing outputs; the namespace and the blocks compared."""
    return pages.run_page(PAGE)


def test_every_example_prints_what_the_page_shows():
    _, checked = run_page()
    assert checked >= 19  # every example with an output block was compared


def test_the_page_names_every_public_name_and_option():
    for name in ("jit", "clear_jit", "JitError"):
        assert name in ren.__all__ and f"ren.{name}" in TEXT, name
    for name in ("@ren.jit", "ren.jit(prune=True, max_plans=8)", "prune=True", "max_plans"):
        assert name in TEXT, name
    methods = [
        m for m in vars(JitFunction) if not m.startswith("_") and callable(vars(JitFunction)[m])
    ]
    assert {"cache_info", "cache_clear"} <= set(methods)
    for name in methods:  # every public method of a jitted function
        assert f"f.{name}()" in TEXT, name
    assert "f.last" in TEXT
    assert "(hits, misses, maxsize, currsize)" in TEXT
    for attr in ("runner_kind", ".units", ".paths", ".pruned", "runner.source"):
        assert attr in TEXT, attr
    for var in ("REN_VALIDATE=1", "REN_JIT_GRAPH=0", "REN_DEBUG=1", "REN_DEBUG=2"):
        assert f"| `{var}` |" in TEXT, var


def test_every_failure_mode_has_a_section_and_its_message_on_the_page():
    sections = re.findall(r"^### (.+)$", TEXT.split("## Failure modes")[1], re.MULTILINE)
    for title in (
        "No `Poly` in the arguments",
        "No `Poly` in the result",
        "Nested capture",
        "An input whose buffer was freed",
    ):
        assert title in sections, title
    for message in (
        "got no Poly in its arguments",
        "returned no Poly (got int)",
        "(nested capture)",
        "input y holds no data (its buffer was freed)",
    ):
        assert message in TEXT, message


def test_every_dont_has_an_example():
    for code in (
        "if x.tolist()[0] > 5:",  # value-dependent control flow
        'print("capturing two_steps")',  # side effects
        "s = (x + 1).realize()",  # a value realized inside
        "Poly.gaussian(ring)",  # randomness drawn inside
        "outer(x)",  # nested capture
        "second is first",  # the output is reused
    ):
        assert code in TEXT, code


def test_the_debug_line_is_what_a_capture_prints(monkeypatch: pytest.MonkeyPatch):
    (shown,) = re.findall(r"```console\n(.*?)\n```", TEXT, re.DOTALL)
    pattern = re.escape(shown).replace(r"4\.4", r"[0-9]+\.[0-9]")
    namespace, _ = run_page()
    ren.clear_jit()
    monkeypatch.setenv("REN_DEBUG", "1")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        namespace["step"](namespace["x"], namespace["y"])
    lines = [line for line in err.getvalue().splitlines() if line.startswith("ren.jit:")]
    assert len(lines) == 1
    assert re.fullmatch(pattern, lines[0]), lines[0]


def _no_digests(source: str) -> str:
    return re.sub(r"_[0-9a-f]{8,}\b", "_<digest>", source).strip()


PLAN = """
import ren
from ren import Poly, RingSpec

ring = RingSpec(n=8, moduli=(17, 97))

@ren.jit
def step(x, y):
    return (x + y) * (x - 1)

x = Poly([1, 2, 3, 4, 5, 6, 7, 8], ring, device="cpu")
y = Poly([8, 7, 6, 5, 4, 3, 2, 1], ring, device="cpu")
out = step(x, y)
assert step.last.runner_kind == "graph"
assert out.tolist() == [1334, 1370, 1424, 1496, 1586, 45, 171, 315]  # docs/rings.md
print(step.last.runner.source)
"""


def _plan_source(threads: str | None) -> str:
    """``plan.runner.source`` of the page's plan, in a process with ``REN_THREADS=threads``."""
    env = {k: v for k, v in os.environ.items() if k != "REN_THREADS"}
    if threads is not None:
        env["REN_THREADS"] = threads
    done = subprocess.run(
        [sys.executable, "-c", PLAN], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.cc
def test_the_c_on_the_page_is_what_a_cpu_plan_compiles_to():
    """On one thread, the function every replay calls; with OpenMP, the same calls as tasks."""
    shown, tasks = re.findall(r"```c\n(.*?)```", TEXT, re.DOTALL)
    assert _no_digests(shown) in _no_digests(_plan_source("1"))
    assert _no_digests(tasks) == _no_digests(_plan_source("2"))
