"""Two runs of one program side by side: kernel counts, times, memory and precision per region.

``run_summary(trace, title)`` keeps what a comparison needs of a run, as plain data (JSON):
its totals (realizations, kernels, exec units' time, arena bytes) and one row per region path,
summed over its instances (``ren.viz.report.regions``). ``python -m ren.viz`` writes it beside
each report as ``report.json``, so two runs made apart (``REN_SCHEDULE_CACHE=0`` or not, dnum 1
or 3, the ``python`` device or ``cpu``) can be compared later:
``python -m ren.viz compare DIR_A DIR_B`` writes ``compare.html`` (and prints the totals).
``compare_report(a, b)`` is the page; ``compare_text(a, b)`` its totals for a terminal; ``main``
the command line.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal, TypedDict, cast

from ren.viz.report.blocks import CSS, SCRIPT, escape_html, html_table, sortable
from ren.viz.report.boxes import PRECISION_LABEL, PRECISION_MEANING, fmt_bytes
from ren.viz.report.regions import Box, realization_tree
from ren.viz.trace import Trace

__all__ = [
    "RegionSummary",
    "RunSummary",
    "Totals",
    "compare_report",
    "compare_text",
    "load_summary",
    "run_summary",
]

#: The version of ``report.json``'s layout; ``load_summary`` refuses other versions. Version 2:
#: ``bits`` is absolute against the plaintext shadow (version 1 held it relative to the values'
#: size where they passed 1), said by the summary's ``precision``.
SUMMARY_VERSION = 2


class Totals(TypedDict):
    """A run's totals: its realizations, their kernels, exec units' time and arena bytes."""

    realizations: int
    kernels: int
    seconds: float
    arena_bytes: int


class RegionSummary(TypedDict):
    """One region path of a run, summed over its instances (``bits``: the lowest, or none)."""

    instances: int
    kernels: int
    seconds: float
    bytes: int
    key_bytes: int
    bits: float | None


class RunSummary(TypedDict):
    """A run's summary, as ``report.json`` holds it (see the module docstring)."""

    format: str
    version: int
    title: str
    precision: str
    totals: Totals
    regions: dict[str, RegionSummary]


def run_summary(trace: Trace, title: str) -> RunSummary:
    """What a comparison needs of a recorded run (see the module docstring); JSON-ready."""
    regions: dict[str, RegionSummary] = {}
    totals: Totals = {
        "realizations": len(trace.realizations),
        "kernels": 0,
        "seconds": 0.0,
        "arena_bytes": 0,
    }
    for rec in trace.realizations:
        totals["kernels"] += len(rec.kernels)
        totals["seconds"] += sum(u.seconds or 0.0 for u in rec.units)
        totals["arena_bytes"] += sum(d.arena_bytes for d in rec.plan.devices)
        tree = realization_tree(rec, rec.kernels)
        if tree is None:
            continue
        for box in tree.walk():
            if box.loose or not box.path:
                continue
            _add(regions.setdefault("/".join(box.path), _empty()), box)
    return {
        "format": "ren-viz-run",
        "version": SUMMARY_VERSION,
        "title": title,
        "precision": f"bits: the lowest of each region's outputs, {PRECISION_LABEL} "
        f"({PRECISION_MEANING})",
        "totals": totals,
        "regions": regions,
    }


def _empty() -> RegionSummary:
    return {"instances": 0, "kernels": 0, "seconds": 0.0, "bytes": 0, "key_bytes": 0, "bits": None}


def _add(row: RegionSummary, box: Box) -> None:
    row["instances"] += 1
    row["kernels"] += len(box.kernels)
    row["seconds"] += box.seconds or 0.0
    row["bytes"] += box.bytes
    row["key_bytes"] += box.key_bytes
    bits = box.notes.get("bits")
    if bits is not None and math.isfinite(bits):
        row["bits"] = bits if row["bits"] is None else min(row["bits"], bits)


def load_summary(path: str | Path) -> RunSummary:
    """A run's summary from its ``report.json``, or from the report directory holding it.

    Raises:
        FileNotFoundError: no such file (or no ``report.json`` in the directory).
        ValueError: a file that is not a run summary of this version (says what it is).
    """
    p = Path(path)
    if p.is_dir():
        p = p / "report.json"
    if not p.is_file():
        raise FileNotFoundError(f"no run summary at {p} (python -m ren.viz writes report.json)")
    try:
        data: object = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{p} is not JSON: {e}") from None
    if not isinstance(data, dict) or data.get("format") != "ren-viz-run":
        raise ValueError(f"{p} is not a run summary written by python -m ren.viz")
    if data.get("version") != SUMMARY_VERSION:
        raise ValueError(
            f"{p} is a run summary of version {data.get('version')!r}; this Ren reads version "
            f"{SUMMARY_VERSION}: run the program again"
        )
    return cast(RunSummary, data)  # its format and version checked: as run_summary wrote it


def _ratio(a: float, b: float) -> str:
    if a == 0 and b == 0:
        return "="
    if a == 0:
        return "new"
    return f"{b / a:.2f}\u00d7"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


_TotalKey = Literal["realizations", "kernels", "seconds", "arena_bytes"]
_TOTALS: tuple[tuple[_TotalKey, str, Callable[[float], str]], ...] = (
    ("realizations", "realizations", str),
    ("kernels", "kernels", str),
    ("seconds", "exec units' time", _ms),
    ("arena_bytes", "arena bytes", fmt_bytes),
)


def compare_text(a: RunSummary, b: RunSummary) -> str:
    """The totals of two run summaries side by side, for a terminal."""
    lines = [f"A: {a['title']}", f"B: {b['title']}", f"{'':<18}{'A':>14}{'B':>14}{'B / A':>9}"]
    for key, label, fmt in _TOTALS:
        x, y = a["totals"][key], b["totals"][key]
        lines.append(f"{label:<18}{fmt(x):>14}{fmt(y):>14}{_ratio(x, y):>9}")
    return "\n".join(lines) + "\n"


def compare_report(a: RunSummary, b: RunSummary, title: str = "") -> str:
    """The HTML page comparing two run summaries: totals, then one sortable row per region."""
    title = title or "Two runs compared"
    rows = []
    for key, label, fmt in _TOTALS:
        x, y = a["totals"][key], b["totals"][key]
        rows.append([escape_html(label), escape_html(fmt(x)), escape_html(fmt(y)), _ratio(x, y)])
    body = [
        f"<h1>{escape_html(title)}</h1>",
        f"<p><b>A</b>: {escape_html(a['title'])}<br><b>B</b>: {escape_html(b['title'])}</p>",
        "<h2>Totals</h2>",
        html_table(["", "A", "B", "B / A"], rows, num=(1, 2, 3)),
        "<h2>Per region</h2>",
        "<p>Each region path summed over its instances (a region of one run only shows a dash "
        f"for the other); bits are the lowest precision of its outputs, {PRECISION_LABEL} "
        f"({PRECISION_MEANING}). Click a heading to sort.</p>",
        sortable(_HEAD, _region_rows(a["regions"], b["regions"]), num=range(1, len(_HEAD))),
    ]
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            '<head><meta charset="utf-8">',
            f"<title>{escape_html(title)}</title>",
            f"<style>{CSS}</style></head>",
            "<body>",
            *body,
            f"<script>{SCRIPT}</script>",
            "</body>",
            "</html>",
            "",
        ]
    )


_HEAD = [
    "region",
    "kernels A",
    "kernels B",
    "time A",
    "time B",
    "time B / A",
    "written A",
    "written B",
    "key bytes A",
    "key bytes B",
    "bits A (absolute)",
    "bits B (absolute)",
]


_RegionKey = Literal["kernels", "seconds", "bytes", "key_bytes", "bits"]


def _region_rows(
    ra: dict[str, RegionSummary], rb: dict[str, RegionSummary]
) -> list[list[tuple[str, float | None]]]:
    out = []
    for path in dict.fromkeys([*ra, *rb]):
        x, y = ra.get(path), rb.get(path)

        def cell(
            row: RegionSummary | None, key: _RegionKey, fmt: Callable[[float], str]
        ) -> tuple[str, float | None]:
            value = None if row is None else row[key]
            if value is None:
                return ("-", None)
            return (escape_html(fmt(value)), float(value))

        ratio = "-" if x is None or y is None else _ratio(x["seconds"], y["seconds"])
        key = None if x is None or y is None or not x["seconds"] else y["seconds"] / x["seconds"]
        out.append(
            [
                (escape_html(path), None),
                cell(x, "kernels", str),
                cell(y, "kernels", str),
                cell(x, "seconds", _ms),
                cell(y, "seconds", _ms),
                (ratio, key),
                cell(x, "bytes", fmt_bytes),
                cell(y, "bytes", fmt_bytes),
                cell(x, "key_bytes", fmt_bytes),
                cell(y, "key_bytes", fmt_bytes),
                cell(x, "bits", lambda v: f"{v:.1f}"),
                cell(y, "bits", lambda v: f"{v:.1f}"),
            ]
        )
    return out


def main(argv: Sequence[str]) -> int:
    """``python -m ren.viz compare A B [--out DIR]``: two runs' summaries side by side."""
    parser = argparse.ArgumentParser(
        prog="python -m ren.viz compare",
        description="Compare two runs of one program: each is a report directory written by "
        "python -m ren.viz (or its report.json). Writes compare.html and prints the totals.",
    )
    parser.add_argument("a", help="the first run: a report directory or its report.json")
    parser.add_argument("b", help="the second run")
    parser.add_argument("--out", type=Path, default=Path("ren-viz-compare"), help="folder")
    parser.add_argument(
        "--names", metavar="A,B", help='what each run is, e.g. "cache on,cache off"'
    )
    opts = parser.parse_args(argv)
    try:
        a, b = load_summary(opts.a), load_summary(opts.b)
    except (OSError, ValueError) as e:
        return _fail(str(e))
    if opts.names is not None:
        names = opts.names.split(",")
        if len(names) != 2 or not all(n.strip() for n in names):
            return _fail(f"--names takes two names with a comma between, got {opts.names!r}")
        a, b = {**a, "title": names[0].strip()}, {**b, "title": names[1].strip()}
    opts.out.mkdir(parents=True, exist_ok=True)
    path = opts.out / "compare.html"
    path.write_text(compare_report(a, b), encoding="utf-8")
    print(compare_text(a, b), end="")
    print(f"comparison: {path.resolve()}")
    return 0


def _fail(message: str) -> int:
    print(f"ren.viz compare: {message}", file=sys.stderr)
    return 2
