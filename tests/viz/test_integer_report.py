"""The report of a BFV program: each region's noise budget, as the context measures it.

Oracle: ``ctx.noise_budget`` of the same values (itself checked against the noise computed by
hand with Python integers in ``tests/schemes/test_integer.py``) and NumPy mod t for the result.
"""

from __future__ import annotations

import numpy as np

from ren.ir.region import instances_of
from ren.schemes import bfv
from ren.viz import record
from ren.viz.examples import run_example
from ren.viz.precision import measure_precision
from ren.viz.report.page import write_report


def budgets_by_region(trace) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for rec in trace.realizations:
        for kernel in rec.kernels:
            for instance in instances_of(kernel.region):
                if "noise_budget" in instance.notes:
                    out.setdefault(instance.name, set()).add(instance.notes["noise_budget"])
    return out


def test_each_region_notes_the_budget_the_context_measures():
    params = bfv.Params(n=64, q_bits=(50, 50), p_bits=(55,), t=257, insecure=True)
    ctx = bfv.Context(params, seed=4, device="python")
    ctx.keygen()
    x, y = np.arange(64), np.arange(64)[::-1]
    with record() as trace:
        a, b = ctx.encrypt(x), ctx.encrypt(y)
        c = (a * b).realize()
    assert measure_precision(trace) >= 3
    got = budgets_by_region(trace)
    assert got["encrypt"] == {ctx.noise_budget(a), ctx.noise_budget(b)}
    assert got["multiply"] == got["relinearize"] == {ctx.noise_budget(c)}
    assert np.array_equal(ctx.decrypt(c), x * y % 257)


def test_the_bfv_example_report_shows_the_budgets(tmp_path):
    trace, outcome = run_example("bfv-mul")
    assert outcome.ok and "equal in all 8192 slots" in outcome.summary
    measure_precision(trace)
    fresh, after = (int(v) for v in outcome.summary.rsplit("noise budget ", 1)[1].split()[::3])
    assert budgets_by_region(trace)["multiply"] == {after} and fresh > after
    path = write_report(trace, tmp_path, title="bfv", summary=outcome.summary)
    html = path.read_text(encoding="utf-8")
    assert f"noise budget {after} bits" in html and f"noise budget {fresh} bits" in html
