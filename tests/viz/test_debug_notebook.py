"""The debugger in a notebook (``ren.viz.debug.notebook``): its steps, its widget, its fallback.

Oracles, each independent of the notebook debugger:

* The steps: a plain ``Stepper`` driven by ``next_region`` in parallel over the same program built
  again from fresh inputs (the same screens, times aside), and the realization's own kernels
  grouped here into runs of one region (the order the regions are stepped in).
* The values: ``ren.reference.evaluate`` of the graph before any step (Python integers), against
  ``tolist()`` after ``finish``.
* CKKS: the slots and precision in the tables against ``ckks.decrypt`` of the same values realized
  after the walk and ``ckks.precision_bits`` against the NumPy shadow.
* The widget: ipywidgets' own ``Button.click`` (which fires the handlers), the HTML shown
  against the debugger's latest step, and the Stepper's cursors.
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest

import ren
from ren import reference
from ren.display import LIMIT, Display
from ren.poly import Poly
from ren.ring import RingSpec, ntt_primes
from ren.schemes import ckks
from ren.viz.debug import NotebookDebugger, Stepper, debug, notebook
from ren.viz.debug.screens import complex_row

nb = sys.modules["ren.viz.debug.notebook"]  # the attribute ren.viz.debug.notebook is the function
watching = sys.modules["ren.viz.debug.watching"]
RING = RingSpec(16, ntt_primes(16, 30, 2))  # N=16/limbs=2
PARAMS = ckks.Params(n=64, q_bits=(50, 30, 30), p_bits=(50,), scale_bits=30, insecure=True)
TIME = re.compile(r" in \d+\.\d+ ms")


@pytest.fixture(autouse=True)
def plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plan and run as ``realize`` does by default, whatever the shell has set; no stale watches."""
    for var in ("REN_NO_PLAN", "REN_POISON", "REN_DEBUG", "REN_DEVICE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(watching, "_WATCHED", [])


def program(seed: int = 0) -> tuple[Poly, Poly]:
    """Three regions, one inside another and one met twice: ``(c, d)``, lazy, fresh inputs."""
    a = Poly([(7 * i + seed) % 97 - 40 for i in range(16)], RING)
    with ren.region("outer"):
        b = a * a
        with ren.region("inner"):
            c = (b + a).rescale()
    with ren.region("tail"):
        d = a * 3 + 1
    return c, d


def region_runs(stepper: Stepper, depth: int = 2) -> list[tuple[str, ...]]:
    """The regions of the kernels (cut to ``depth``) as runs, in execution order."""
    runs: list[tuple[str, ...]] = []
    for k in stepper.realization.kernels:
        path = tuple(k.region)[:depth]
        if not runs or runs[-1] != path:
            runs.append(path)
    return runs


def assert_offline(display: Display) -> None:
    html = display.html
    assert html.startswith("<div") and len(html.encode()) <= LIMIT
    assert "<script" not in html and "http" not in html and "src=" not in html


# --------------------------------------------------------------------------------------------
# the steps


def test_steps_are_the_steppers_region_by_region_and_the_value_is_the_reference():
    c, d = program()
    want = [reference.evaluate(c.node), reference.evaluate(d.node)]
    dbg = notebook(c, d, widgets=False)
    plain = Stepper(*program())  # the same program from fresh inputs, stepped by hand
    runs = region_runs(dbg.stepper)
    assert runs == region_runs(plain) and len(runs) >= 3
    assert str(dbg) == repr(dbg) and dbg.stepper.regions() in repr(dbg)
    seen = []
    for step in dbg.steps():
        assert isinstance(step, Display) and step is dbg.latest
        assert TIME.sub("", step.text) == TIME.sub("", plain.next_region())
        assert dbg.stepper.ran == plain.ran
        assert_offline(step)
        seen.append(step.text.split(":", 1)[0].removeprefix("ran "))
        assert f"step {len(seen)}: next region" in step.html
    assert seen == ["/".join(path) or "(no region)" for path in runs]
    assert dbg.done and plain.done
    assert [c.tolist(), d.tolist()] == want


def test_the_table_of_what_ran_names_each_kernel_once():
    c, _ = program()
    dbg = notebook(c, widgets=False)
    kernels = dbg.stepper.realization.kernels
    step = dbg.next_region()
    ran = dbg.stepper.ran
    assert "what ran: " in step.html
    region = "/".join(kernels[0].region)
    row = re.search(rf"<tr><td[^>]*>{re.escape(region)}</td><td[^>]*>([^<]*)</td>", step.html)
    assert row and row[1] == (str(0) if ran == 1 else f"0-{ran - 1}")
    limbs = sorted({k.info.ring.L for k in kernels[:ran]})
    span = str(limbs[0]) if len(limbs) == 1 else f"{limbs[0]}-{limbs[-1]}"
    assert f">{span}</td></tr>" in step.html  # the limbs the region's kernels wrote
    assert f"{ran} of {len(kernels)}" in step.html  # the status: units ran
    step = dbg.run(2)
    assert dbg.stepper.ran == ran + 2 and "what ran: 2 units" in step.html
    assert step.text.count("\nran ") + step.text.startswith("ran ") == 2


def test_next_pass_shows_each_pass_with_the_rules_it_fired():
    c, _ = program()
    dbg = notebook(c, widgets=False)
    passes = dbg.stepper.record.passes
    for p in passes:
        step = dbg.next_pass()
        assert dbg.stepper.cursor == p.step and step.text.startswith(f"pass {p.step}/")
        for rule, n in p.rule_counts():
            assert f">{rule}</td><td" in step.html and f">{n}</td>" in step.html
        assert ("rules pass" in step.html) == bool(p.rules)
    assert any(p.rules for p in passes)
    last = dbg.next_pass()
    assert last.text.startswith(f"no pass after pass {len(passes)}") and dbg.stepper.ran == 0


def test_after_the_last_step_each_step_says_it_is_done():
    c, _ = program()
    want = reference.evaluate(c.node)
    dbg = notebook(c, widgets=False)
    first = dbg.finish()
    assert dbg.done and "units ran: done" in first.text and c.tolist() == want
    assert dbg.next_region().text == "every unit ran already: the realization is done"
    assert dbg.run().text == "every unit ran already: the realization is done"
    assert dbg.finish().text == "the realization is done"
    assert list(dbg.steps()) == []
    assert "every unit ran: the values are realized" in dbg._repr_html_()
    with pytest.raises(ValueError, match="at least 1, got 0"):
        dbg.run(0)


def test_region_runs_to_the_region_first():
    c, _ = program()
    dbg = notebook(c, region="inner", widgets=False)
    first = next(i for i, k in enumerate(dbg.stepper.realization.kernels) if "inner" in k.region)
    assert dbg.stepper.ran == first > 0
    assert repr(dbg).startswith(f"ran kernel{'s' * (first > 1)} 0")
    with pytest.raises(ValueError, match="region names are: outer, inner"):
        notebook(program()[0], region="nowhere")


# --------------------------------------------------------------------------------------------
# the ways in


def test_a_function_and_its_arguments_are_the_values_it_returns():
    made: list[Poly] = []

    def build(seed: int) -> tuple[Poly, Poly]:
        made.extend(program(seed))
        return made[-2], made[-1]

    by_fn = notebook(build, 5, widgets=False)
    by_values = notebook(*program(5), widgets=False)
    assert repr(by_fn) == repr(by_values)
    kernels = [(k.info.name, k.region) for k in by_fn.stepper.realization.kernels]
    assert kernels == [(k.info.name, k.region) for k in by_values.stepper.realization.kernels]
    want = [reference.evaluate(v.node) for v in made]
    for a, b in zip(by_fn.steps(), by_values.steps(), strict=True):
        assert TIME.sub("", a.text) == TIME.sub("", b.text)
    assert [v.tolist() for v in made] == want
    one = notebook(lambda: made[0] + 1, widgets=False)  # one value, not a tuple
    assert "realizing 1 value:" in repr(one)
    one.finish()
    assert one.done and one.stepper.realization.sink.src[0] is not None


def test_a_value_that_is_neither_is_refused_by_name():
    accepted = "notebook\\(\\) takes lazy Poly values or ciphertexts"
    c, _ = program()
    with pytest.raises(TypeError, match=accepted + r".*argument 1, of type str: 'c'"):
        notebook(c, "c")
    with pytest.raises(TypeError, match=r"<lambda>\(\.\.\.\) returned, as value 0, of type int: 3"):
        notebook(lambda: 3)
    with pytest.raises(TypeError, match=r"<lambda>\(\.\.\.\) returned, as value 1, of type list"):
        notebook(lambda: (c, [1, 2]))
    with pytest.raises(TypeError, match=r"nothing\(\.\.\.\) returned no value"):
        notebook(nothing)
    with pytest.raises(TypeError, match=accepted + ".*it got none"):
        notebook()
    with pytest.raises(ValueError, match="the region depth must be a number from 1 on, got 0"):
        notebook(c, depth=0)
    with pytest.raises(TypeError, match="widgets is True, False or None"):
        NotebookDebugger(Stepper(c), widgets="yes")  # type: ignore[arg-type]
    assert not c.realized  # nothing ran


def nothing() -> tuple[()]:
    return ()


def test_values_realized_already_are_refused_as_the_stepper_does():
    c, _ = program()
    c.realize()
    with pytest.raises(ValueError, match="nothing to realize: every value given is realized"):
        notebook(c)
    with pytest.raises(ValueError, match="nothing to realize"):
        notebook(lambda: c)


def test_debug_carries_the_notebook_way_in():
    assert debug.notebook is notebook  # type: ignore[attr-defined]
    assert debug.NotebookDebugger is NotebookDebugger  # type: ignore[attr-defined]
    assert nb.notebook is notebook and ren.viz.debug is debug


# --------------------------------------------------------------------------------------------
# the widget and the fallback


def test_the_buttons_step_and_show_the_latest_step():
    c, d = program()
    want = [reference.evaluate(c.node), reference.evaluate(d.node)]
    dbg = notebook(c, d)  # ipywidgets is installed: the widget, automatically
    bundle = dbg._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    box, shown = dbg.widget().children
    buttons = {b.description: b for b in box.children}
    assert list(buttons) == ["next region", "next pass", "run unit", "finish"]
    assert shown.value == dbg.overview().html and not any(b.disabled for b in buttons.values())
    plain = Stepper(*program())
    buttons["next region"].click()
    plain.next_region()
    assert dbg.stepper.ran == plain.ran > 0
    assert shown.value == dbg.latest.html and "step 1: next region" in shown.value
    assert TIME.sub("", plain.regions()) == TIME.sub("", dbg.stepper.regions())
    buttons["next pass"].click()
    assert dbg.stepper.cursor == 1 and "step 2: next pass" in shown.value
    buttons["run unit"].click()
    assert dbg.stepper.ran == plain.ran + 1 and "step 3: run 1 unit" in shown.value
    dbg.next_region()  # a step called in a cell moves the widget too
    assert shown.value == dbg.latest.html and "step 4: next region" in shown.value
    buttons["finish"].click()
    assert dbg.done and [c.tolist(), d.tolist()] == want
    assert "step 5: finish" in shown.value
    assert [b.disabled for b in buttons.values()] == [True, False, True, True]
    while dbg.stepper.cursor < len(dbg.stepper.record.passes):
        buttons["next pass"].click()
    assert buttons["next pass"].disabled
    assert dbg.widget() is dbg.widget()  # made once: shown twice, the same buttons


def test_a_step_that_fails_is_shown_in_the_box(monkeypatch):
    c, _ = program()
    dbg = notebook(c, widgets=True)
    box, shown = dbg.widget().children

    def broken(count: int | None = 1) -> str:
        raise ValueError("the unit broke")

    monkeypatch.setattr(dbg.stepper, "run", broken)
    box.children[2].click()
    assert "ren debugger: error" in shown.value and "error: the unit broke" in shown.value


def test_without_ipywidgets_the_debugger_shows_how_to_step(monkeypatch):
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import ipywidgets raises ImportError
    c, _ = program()
    dbg = notebook(c)
    assert dbg._repr_mimebundle_() is None  # IPython shows _repr_html_ then
    html = dbg._repr_html_()
    assert "dbg.next_region() in the next cell" in html
    for line in dbg.stepper.regions().splitlines():
        assert line.replace(">", "&gt;") in html
    with pytest.raises(ImportError, match="need ipywidgets \\(pip install ipywidgets\\)"):
        dbg.widget()
    step = dbg.next_region()  # the printed steps: each call's value shows its step
    assert step._repr_html_() == step.html and repr(step) == step.text


def test_widgets_false_forces_the_fallback_where_ipywidgets_is():
    c, _ = program()
    assert notebook(c, widgets=False)._repr_mimebundle_() is None
    assert notebook(program()[0], widgets=None)._repr_mimebundle_() is not None


# --------------------------------------------------------------------------------------------
# CKKS: watched values


def test_watched_values_show_their_slots_and_precision_and_others_none():
    ctx = ckks.Context(PARAMS, seed=1)
    ctx.keygen()
    xs = np.linspace(-1, 1, PARAMS.slots)
    ys = np.linspace(0.5, -0.5, PARAMS.slots)
    x, y = ctx.encrypt(xs).realize(), ctx.encrypt(ys).realize()
    with ren.region("multiply"):
        z = x * y
    with ren.region("add"):
        w = z + z
    unwatched = notebook(*(x * 2).parts, widgets=False)  # its parts: no ciphertext to watch
    for step in [unwatched.overview(), *unwatched.steps(), unwatched.finish()]:
        assert "slots" not in step.text and "watched values" not in step.html
        assert not re.search(r"\d{10,}", step.html)  # no word of a value or a key
    dbg = notebook(w, widgets=False).watch(z, ctx, xs * ys, label="z").watch(w, ctx, 2 * xs * ys)
    html = [step.html for step in dbg.steps()]
    assert dbg.done
    for step in html:
        assert len(step.encode()) <= LIMIT and "<script" not in step
    shown = "".join(html)
    final = dbg.slots()  # every watched value, as their buffers stand at the end
    assert [v["label"] for v in nb.watched_values(final.text)] == ["ct0", "z"]
    assert final.html.count("<tr>") == 3 + 1 + 2  # the status, the header, a row each
    for ct, label, expected in ((z, "z", xs * ys), (w, "ct0", 2 * xs * ys)):
        got = ctx.decrypt(ct)  # realized after the walk, on its own (z was fused away)
        bits = ckks.precision_bits(got, expected)
        assert bits > 20
        cells = re.search(
            rf"<tr><td[^>]*>{label}</td><td[^>]*>([^<]*)</td><td[^>]*>([^<]*)</td>"
            rf"<td[^>]*>([^<]*)</td><td[^>]*>([^<]*)</td>",
            shown,
        )
        assert cells, label
        assert cells[2] == complex_row(got[:4])
        assert cells[4].startswith(f"{bits:.2f} bits (absolute, vs expected; over")
    assert "computed apart" in shown  # z: fused into the sum, computed on its own


def test_watched_values_reads_a_screen_field_by_field():
    screen = (
        "ran add: kernel 29, 1 unit in 0.200 ms\n"
        "30 of 30 units ran: done; the outputs are stored\n"
        "w: level 1, scale 2^30.00\n"
        "  slots[:2]    -1.000000004+0.000000000j  -0.875130057+0.000000000j\n"
        "  expected[:2] -1.000000000+0.000000000j  -0.875130073+0.000000000j\n"
        "  precision: 23.67 bits (absolute, vs expected; over 32 slots)\n"
        "  predicted: 23.54 bits (absolute)\n"
        "v: level 2, scale 2^30.00\n"
        "  part c0 is not written yet: kernel 3 writes it\n"
        "not yet available: u ('slots' says when)"
    )
    assert nb.watched_values(screen) == [
        {
            "label": "w",
            "summary": "level 1, scale 2^30.00",
            "slots": "-1.000000004+0.000000000j  -0.875130057+0.000000000j",
            "expected": "-1.000000000+0.000000000j  -0.875130073+0.000000000j",
            "precision": "23.67 bits (absolute, vs expected; over 32 slots)",
            "notes": "predicted: 23.54 bits (absolute)",
        },
        {
            "label": "v",
            "summary": "level 2, scale 2^30.00",
            "notes": "part c0 is not written yet: kernel 3 writes it",
        },
    ]
