"""``python -m ren.viz PLAN_FILE``: a saved plan shown without running it.

Oracles: the jitted function's own plan (its units, inputs and outputs, counted from the
``CapturedPlan``), and the SVG parsed as XML.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import ren
from ren import Poly, RingSpec
from ren.capture.planfile import FORMAT_VERSION
from ren.viz.__main__ import main

RING = RingSpec(n=8, moduli=(17, 97))


def test_a_saved_plan_is_shown_with_its_manifest_kernels_and_memory(tmp_path, capsys):
    @ren.jit
    def step(x: Poly, y: Poly) -> Poly:
        return (x + y) * (x - 1)

    path = step.export(tmp_path / "step.renplan", Poly([1] * 8, RING), Poly([2] * 8, RING))
    assert main([str(path), "--out", str(tmp_path / "pictures")]) == 0
    out = capsys.readouterr().out
    plan = step.last
    assert f"{len(plan.units)} exec units" in out
    assert "  in0 x: n=8 L=2 u32 coeff on python (16 u32 words)" in out
    assert "  in1 y: " in out and "  result: n=8 L=2 u32 ntt on python" in out  # a product
    for unit in plan.units:
        assert unit.name in out
    assert "memory python:" in out  # the arena picture's summary line
    (svg,) = (tmp_path / "pictures").glob("*.svg")
    assert ET.parse(svg).getroot().tag.endswith("svg")


def test_a_damaged_plan_file_is_a_clear_error(tmp_path, capsys):
    path = tmp_path / "broken.renplan"
    path.write_text(f'{{"format": "ren-plan", "version": {FORMAT_VERSION}, "fingerprint": "0"}}')
    assert main([str(path)]) == 1
    assert "does not match its fingerprint" in capsys.readouterr().err
