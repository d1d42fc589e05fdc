"""The report and the debugger show the predicted precision beside the measured, labelled.

The oracle: the measured precision of each region (its decryption against the plaintext
shadow, the report's observing pass; the secret key's decryption against NumPy in the debugger),
which the prediction must be within 2 bits of.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from ren.ir.region import instances_of
from ren.schemes import ckks
from ren.viz import record
from ren.viz.debug import Stepper
from ren.viz.precision import measure_precision
from ren.viz.report.boxes import PREDICTED_LABEL, bits_text
from ren.viz.report.page import write_report

PARAMS = ckks.Params(n=8192, q_bits=(50, 40, 40), p_bits=(60,))


@pytest.fixture(scope="module")
def ctx() -> ckks.Context:
    context = ckks.Context(PARAMS, seed=7, device="cpu")
    context.keygen()
    return context


def test_every_measured_region_notes_its_prediction_within_two_bits(ctx, tmp_path) -> None:
    rng = np.random.default_rng(8)
    xs, ys = rng.uniform(-1, 1, PARAMS.slots), rng.uniform(-1, 1, PARAMS.slots)
    with record() as trace:
        x, y = ctx.encrypt(xs), ctx.encrypt(ys)
        z = (x * y + x).rotate(3) * 0.5
        z.realize()
    assert measure_precision(trace) >= 4
    seen = set()
    for rec in trace.realizations:
        for kernel in rec.kernels:
            for instance in instances_of(kernel.region):
                notes = instance.notes
                if "bits" in notes and notes["bits"] != float("inf"):
                    assert abs(notes["bits_predicted"] - notes["bits"]) <= 2, instance.name
                    seen.add(instance.name)
    assert {"encrypt", "multiply", "rotate", "rescale"} <= seen
    text = bits_text({"bits": 25.0, "bits_predicted": 24.5})
    assert text.endswith(f"; predicted 24.5 ({PREDICTED_LABEL})")
    html = write_report(trace, tmp_path, title="predicted").read_text(encoding="utf-8")
    assert "predicted" in html and PREDICTED_LABEL in html


def test_the_debugger_shows_the_prediction_beside_the_measure(ctx) -> None:
    rng = np.random.default_rng(9)
    xs = rng.uniform(-1, 1, PARAMS.slots)
    x = ctx.encrypt(xs)
    z = x * x
    st = Stepper(*z.parts).watch(z, ctx, xs * xs)
    st.finish()
    screen = st.slots()
    measured = float(re.search(r"precision: ([\d.]+) bits", screen).group(1))
    predicted = float(re.search(r"predicted: ([\d.]+) bits \(absolute, vs exact", screen).group(1))
    assert abs(predicted - measured) <= 2
    assert predicted == pytest.approx(ckks.predicted_precision(z), abs=0.01)


def test_a_jitted_functions_regions_are_measured_until_a_replay_overwrites_them(ctx) -> None:
    """A capture's regions keep values in the plan's buffers: measured against NumPy's figure
    while they hold the capture's words, and left unmeasured (saying why) once a replay wrote
    another call's words there, not measured as garbage."""
    import ren
    from ren.viz.precision import REPLAYED

    rng = np.random.default_rng(9)
    xs = [rng.uniform(-1, 1, PARAMS.slots) for _ in range(3)]
    step = ren.jit(lambda c: (c * c).rotate(1))
    for calls in (1, 3):
        with record() as trace:
            outs = [step(ctx.encrypt(x)) for x in xs[:calls]]
        first = ckks.precision_bits(ctx.decrypt(outs[0]).real, np.roll(xs[0] ** 2, -1))
        measure_precision(trace, progress=False)
        notes = [
            i.notes for r in trace.realizations for k in r.kernels for i in instances_of(k.region)
        ]
        rotated = [n for n in notes if n.get("bits") is not None or n.get("unmeasured")]
        assert rotated
        if calls == 1:
            assert max(n["bits"] for n in rotated if "bits" in n) == pytest.approx(first, abs=1.0)
        else:
            jitted = [n for n in rotated if n.get("unmeasured") == REPLAYED]
            assert jitted and all("bits" not in n for n in jitted)
        step.cache_clear()
