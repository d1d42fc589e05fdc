"""Benchmark: the rich displays a notebook shows around a ``boot-toy`` bootstrap, bytes and time.

Run from the repository root::

    .venv/bin/python benchmarks/displays.py                     # boot-toy on the python device
    .venv/bin/python benchmarks/displays.py --device cpu --repeat 5 --out /tmp/displays.json
    .venv/bin/python benchmarks/displays.py --quick --repeat 1  # a check that it runs

The issue "Teaching notebooks" asks that each display stay under ``ren.display.LIMIT`` (200 KB)
for a ``boot-toy`` bootstrap and render in under 1 s. The script builds one ``boot-toy`` CKKS
bootstrap (``--quick``: a multiply and a rotation in two ``ren.region``s on a tiny insecure ring)
and measures every rich display a notebook user meets at that size:

* ``ciphertext`` and ``ciphertext.parts[0]``: the lazy bootstrapped ciphertext and its first part,
  before it is realized;
* ``context``, ``params``: the CKKS context and its parameters;
* ``jit``: ``ren.jit`` of the program after one call;
* ``trace``, ``trace.memory()``, ``trace.before_after(PASS)`` for every pass of ``trace.passes``:
  a ``ren.viz.record()`` of the realization of a fresh lazy bootstrap;
* ``debugger (prepare)``: ``ren.viz.debug.notebook(lazy, widgets=False)``, which schedules and
  compiles (its bytes: what the cell shows, the overview it makes), then ``debugger.overview()``
  and the first ``debugger.next_region()`` (which runs the region's units). Each of the
  ``--repeat`` times is a new debugger on a new lazy bootstrap.

Each display is made ``--repeat`` times (default 3), each call timed alone with
``time.perf_counter``: ``min_s`` and ``median_s``. ``bytes`` is the UTF-8 size of its HTML,
``under_limit`` whether that is at most ``ren.display.LIMIT``, ``offline`` whether the HTML holds
no ``<script`` and no ``http:`` or ``https:`` outside ``xmlns`` attributes. A line after the
table names the displays over the limit or over 1 s (their ``min_s``): a statement, not a check.

JSON (default ``benchmarks/results/displays.json``): ``{"benchmark": "displays", "machine",
"device", "quick", "repeat", "limit_bytes", "results": [{"display", "bytes", "min_s",
"median_s", "offline", "under_limit"}, ...]}``. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _machine  # noqa: E402

SWITCHED_OFF = _machine.switch_off()  # before Ren reads them

import ren  # noqa: E402
import ren.viz  # noqa: E402
from ren import display  # noqa: E402
from ren.schemes import ckks  # noqa: E402
from ren.viz.debug import notebook  # noqa: E402

DEFAULT_OUT = HERE / "results" / "displays.json"
#: the time a display should render in (the issue's figure; stated, not asserted)
SECONDS = 1.0
#: --quick: a ring far too small to be secure (ren.viz.examples.CKKS_PARAMS)
QUICK_PARAMS: dict[str, Any] = {
    "n": 64,
    "q_bits": (50, 30, 30),
    "p_bits": (50,),
    "scale_bits": 30,
    "insecure": True,
}
_XMLNS = re.compile(r"""\sxmlns(?::[\w.-]+)?\s*=\s*(?:"[^"]*"|'[^']*')""")


def offline(html: str) -> bool:
    """Whether ``html`` holds no ``<script`` and no URL (``http:``, ``https:``) but a namespace."""
    lowered = _XMLNS.sub("", html).lower()
    return not any(mark in lowered for mark in ("<script", "http:", "https:"))


def row(name: str, html: str, times: list[float]) -> dict[str, Any]:
    """One display's figures: its bytes, the min and median of ``times``, its two rules."""
    size = len(html.encode("utf-8"))
    return {
        "display": name,
        "bytes": size,
        "min_s": min(times),
        "median_s": statistics.median(times),
        "offline": offline(html),
        "under_limit": size <= display.LIMIT,
    }


def shown(name: str, make: Callable[[], str], repeat: int) -> dict[str, Any]:
    """``make()`` (a display's HTML) called ``repeat`` times, each timed alone."""
    times, html = [], ""
    for _ in range(repeat):
        start = time.perf_counter()
        html = make()
        times.append(time.perf_counter() - start)
    return row(name, html, times)


def quick_program(ct: Any) -> Any:
    """``--quick``'s program: ``rotate(ct * ct, 1)``, each step in a region."""
    with ren.region("multiply"):
        square = ckks.multiply(ct, ct)
    with ren.region("rotate"):
        return square.rotate(1)


def setup(quick: bool, device: str) -> tuple[Any, Any, Any, Callable[[Any], Any]]:
    """``(params, ctx, ct, program)``: keys made, ``ct`` realized, ``program(ct)`` lazy."""
    if quick:
        params = ckks.Params(**QUICK_PARAMS)
        ctx = ckks.Context(params, seed=1, device=device)
        ctx.keygen()
        ctx.rotation_key(1)
        z = np.random.default_rng(0).uniform(-1, 1, params.slots)
        return params, ctx, ctx.encrypt(z).realize(), quick_program
    params = ckks.Params.preset("boot-toy")
    ctx = ckks.Context(params, seed=1, device=device)
    ctx.keygen()
    ctx.bootstrap_keys(progress=False)
    z = np.random.default_rng(0).uniform(-1, 1, params.slots)
    return params, ctx, ctx.encrypt(z, level=0).realize(), ckks.bootstrap


def measure(quick: bool, device: str, repeat: int) -> list[dict[str, Any]]:
    """Every display's row, in the order a notebook meets them."""
    params, ctx, ct, program = setup(quick, device)
    out = program(ct)
    rows = [
        shown("ciphertext", out._repr_html_, repeat),
        shown("ciphertext.parts[0]", out.parts[0]._repr_html_, repeat),
        shown("context", ctx._repr_html_, repeat),
        shown("params", params._repr_html_, repeat),
    ]
    jitted = ren.jit(program)
    jitted(ct)
    _machine.settle()
    rows.append(shown("jit", jitted._repr_html_, repeat))

    fresh = program(ct)
    with ren.viz.record() as trace:
        fresh.realize()
    _machine.settle()
    rows.append(shown("trace", trace._repr_html_, repeat))
    rows.append(shown("trace.memory()", lambda: trace.memory().html, repeat))
    for name in trace.passes:
        make = lambda name=name: trace.before_after(name).html  # noqa: E731
        rows.append(shown(f"trace.before_after({name!r})", make, repeat))

    prepare, overview, step = [], [], []
    html = {"prepare": "", "overview": "", "step": ""}
    for _ in range(repeat):
        lazy = program(ct)
        start = time.perf_counter()
        dbg = notebook(lazy, widgets=False)
        prepare.append(time.perf_counter() - start)
        html["prepare"] = dbg.latest.html  # what the cell shows: the overview it made
        start = time.perf_counter()
        html["overview"] = dbg.overview().html
        overview.append(time.perf_counter() - start)
        start = time.perf_counter()
        html["step"] = dbg.next_region().html
        step.append(time.perf_counter() - start)
        _machine.settle()
    rows.append(row("debugger (prepare)", html["prepare"], prepare))
    rows.append(row("debugger.overview()", html["overview"], overview))
    rows.append(row("debugger.next_region()", html["step"], step))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--device", default="python", help="python (default) or cpu (C)")
    parser.add_argument("--repeat", type=int, default=3, help="calls of each display (3)")
    parser.add_argument("--quick", action="store_true", help="a tiny insecure ring, not boot-toy")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    if args.device == "cpu" and (why := _machine.cpu_missing()) is not None:
        parser.error(f"--device cpu needs a C compiler: {why}")
    given = {k: v for k, v in SWITCHED_OFF.items() if v is not None}
    if given:
        print(f"{', '.join(given)} off while timing (given: {given})")
    what = "a multiply and a rotation, n=64 (--quick)" if args.quick else "one boot-toy bootstrap"
    print(f"the displays of {what} on the {args.device} device, {args.repeat} calls each")
    rows = measure(args.quick, args.device, args.repeat)
    results: dict[str, Any] = {"benchmark": "displays", "machine": _machine.machine()}
    results |= {"device": args.device, "quick": args.quick, "repeat": args.repeat}
    results |= {"limit_bytes": display.LIMIT, "results": rows}

    width = max(len(r["display"]) for r in rows)
    print(f"| {'display':<{width}} |   bytes |  min ms | median ms | offline |")
    print(f"|{'-' * (width + 2)}|--------:|--------:|----------:|---------|")
    for r in rows:
        print(
            f"| {r['display']:<{width}} | {r['bytes']:7d} | {r['min_s'] * 1e3:7.1f} "
            f"| {r['median_s'] * 1e3:9.1f} | {'yes' if r['offline'] else 'NO':<7} |"
        )
    over = [
        f"{r['display']} ({r['bytes']} bytes, {r['min_s']:.2f} s)"
        for r in rows
        if not r["under_limit"] or r["min_s"] > SECONDS
    ]
    limit = f"{display.LIMIT} bytes or {SECONDS:g} s"
    print(f"over {limit}: {'; '.join(over)}" if over else f"every display within {limit}")
    print(_machine.machine_line(results["machine"]))
    _machine.write_results(results, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
