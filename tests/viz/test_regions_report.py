"""The report's regions: the tree of boxes, the observing pass's precision, a bootstrap's report.

Oracles: each kernel's own region path (which boxes must hold it), the data it reads (which box
must come after which), plaintext NumPy (the precision a region's output must have), the trace
before the observing pass (which must not change), and the bootstrap's stages in order.
"""

from __future__ import annotations

import html
import json
import math
import re

import numpy as np
import pytest

from ren.circuits.ckks.rotations import sum_slots
from ren.schemes import ckks
from ren.viz.examples import run_example
from ren.viz.precision import measure_precision
from ren.viz.report import build_report, text_report
from ren.viz.report.compare import compare_report, compare_text, load_summary, run_summary
from ren.viz.report.regions import region_tree
from ren.viz.trace import record

N = 64
PARAMS = ckks.Params(n=N, q_bits=(60, 40, 40, 40), p_bits=(60,), scale_bits=40, insecure=True)
STAGES = ["mod_raise", "coeff_to_slot", "eval_mod", "eval_mod", "slot_to_coeff"]


def program():
    """Encrypt, multiply, rotate, add: recorded, with the values the slots must hold."""
    rng = np.random.default_rng(5)
    x, y = rng.uniform(-1, 1, N // 2), rng.uniform(-1, 1, N // 2)
    with ckks.Context(PARAMS, seed=2) as ctx:
        ctx.rotation_key(1)
        with record() as trace:
            a, b = ckks.encrypt(x).realize(), ckks.encrypt(y).realize()
            out = ((a * b).rotate(1) + a).realize()
        got = ctx.decrypt(out)
    return trace, got, np.roll(x * y, -1) + x


@pytest.fixture(scope="module")
def recorded():
    return program()


def biggest(trace):
    return max(trace.realizations, key=lambda r: len(r.kernels))


def test_every_kernel_is_in_one_leaf_and_in_each_box_of_its_path(recorded):
    trace, _, _ = recorded
    rec = biggest(trace)
    root = region_tree(rec.kernels, [u.seconds for u in rec.units], rec.input)
    leaves = [b for b in root.walk() if not b.children]
    assert sorted(k for leaf in leaves for k in leaf.kernels) == list(range(len(rec.kernels)))
    by_serial = {b.serial: b for b in root.walk() if b.serial is not None}
    for k, kernel in enumerate(rec.kernels):
        for instance in kernel.region.instances if kernel.region else ():
            assert k in by_serial[instance.serial].kernels
    for box in root.walk():  # a box reads only from boxes in rows above it
        for child in box.children:
            assert all(box.children[s].row < child.row for s in child.sources)
            assert child.seconds is not None and child.bytes > 0


def test_each_regions_numbers(recorded):
    trace, _, _ = recorded
    rec = biggest(trace)
    root = region_tree(rec.kernels, [u.seconds for u in rec.units], rec.input)
    names = [c.name for c in root.children]
    assert "multiply" in names and "rotate" in names
    for box in root.walk():
        want = sum(rec.units[k].seconds for k in box.kernels)
        assert box.seconds == pytest.approx(want)
        assert box.bytes == sum(rec.kernels[k].bufs[0].nbytes for k in box.kernels)
    (products,) = [b for b in root.walk() if b.name == "products" and b.path[0] == "rotate"]
    assert products.key_bytes > 0  # the rotation key's words, read from outside the realization


def test_the_observing_pass_measures_and_changes_nothing_recorded():
    trace, got, want = program()
    before = [[(k.info.name, tuple(k.region)) for k in r.kernels] for r in trace.realizations]
    count = len(trace.realizations)
    assert measure_precision(trace, progress=False) > 0
    after = [[(k.info.name, tuple(k.region)) for k in r.kernels] for r in trace.realizations]
    assert after == before and len(trace.realizations) == count
    rec = biggest(trace)
    root = region_tree(rec.kernels, [u.seconds for u in rec.units], rec.input)
    notes = {b.name: b.notes for b in root.children if not b.loose}
    assert all("output" not in n for b in root.walk() for n in [b.notes])  # let go
    # the rotation's output against NumPy: the shadow's bits are the decryption's own
    assert notes["rotate"]["bits"] > 20
    final = ckks.precision_bits(got, want)
    assert abs(notes["rotate"]["bits"] - final) < 4


def test_recording_does_not_change_the_schedule():
    """Shadows and kept outputs are beside the graph: the same kernels with and without."""
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, N // 2)
    plans = []
    for recording in (False, True):
        with ckks.Context(PARAMS, seed=2) as ctx:
            ctx.rotation_key(1)
            if recording:
                with record() as trace:
                    (ckks.encrypt(x) * ckks.encrypt(x)).rotate(1).realize()
                rec = biggest(trace)
                plans.append([(k.info.name, tuple(k.region)) for k in rec.kernels])
            else:
                from ren.engine.realize import prepare

                out = (ckks.encrypt(x) * ckks.encrypt(x)).rotate(1)
                prepared = prepare(tuple(p.node for p in out.parts))
                plans.append([(k.info.name, tuple(k.region)) for k in prepared.kernels])
    assert plans[0] == plans[1]


# --------------------------------------------------------------------------------------------
# what a precision is measured against


def test_the_reports_precision_is_ckks_precision_bits_against_the_shadow_and_says_so():
    """A slot sum of 32 values in (0, 1): its slots are about 16, so the absolute figure (what
    ``ckks.precision_bits`` gives) and the relative one (over max |v|) differ by 4 bits; the report
    shows the absolute one first, labelled, then the relative one, labelled."""
    x = np.random.default_rng(8).uniform(0, 1, N // 2)
    with ckks.Context(PARAMS, seed=3) as ctx:
        with record() as trace:
            out = sum_slots(ckks.encrypt(x)).realize()
        got = ctx.decrypt(out).real
        plain = ctx.decode(ctx.encode(x)).real  # the shadow's leaf: the plaintext's own decoding
    want = np.full(N // 2, plain.sum())  # the shadow of the slot sum, in NumPy
    measure_precision(trace, progress=False)
    root = region_tree(biggest(trace).kernels, [u.seconds for u in biggest(trace).units])
    (notes,) = [b.notes for b in root.children if b.name == "sum_slots"]
    bits, relative = ckks.precision_bits(got, want), ckks.precision_bits(got, want, relative=True)
    assert notes["bits"] == pytest.approx(bits, abs=0.01)
    assert notes["bits_relative"] == pytest.approx(relative, abs=0.01)
    assert relative - bits == pytest.approx(math.log2(np.max(want)), abs=0.01)
    assert notes["magnitude"] == pytest.approx(np.max(want))
    shown = (
        f"{notes['bits']:.1f} bits (absolute, vs plaintext shadow); "
        f"{notes['bits_relative']:.1f} relative to max |v| = {notes['magnitude']:.3g}; "
        f"predicted {notes['bits_predicted']:.1f} (predicted by the noise model, nothing run)"
    )
    assert abs(notes["bits_predicted"] - notes["bits"]) <= 2  # the prediction, beside the measure
    page = build_report(trace, "slot sum", times=False)
    assert f'<span class="bits">{html.escape(shown)}</span>' in page
    assert "precision (lowest; absolute, vs plaintext shadow)" in page  # the table's heading
    text = text_report(trace, "slot sum", times=False)
    assert "precision: absolute, vs plaintext shadow" in text
    assert f"{notes['bits']:.1f} bits; {notes['bits_relative']:.1f} relative to max |v|" in text
    summary = run_summary(trace, "slot sum")
    assert summary["regions"]["sum_slots"]["bits"] == pytest.approx(bits, abs=0.01)
    assert "absolute, vs plaintext shadow" in summary["precision"]
    assert "<th class=num>bits A (absolute)</th>" in compare_report(summary, summary)


# --------------------------------------------------------------------------------------------
# the bootstrap's report


@pytest.fixture(scope="module")
def boot():
    trace, outcome = run_example("bootstrap")
    measure_precision(trace, progress=False)
    page = build_report(
        trace, "bootstrap", outcome.summary, labels=outcome.labels, focus=outcome.focus
    )
    return trace, outcome, page


def test_the_bootstraps_default_graph_is_its_stages(boot):
    trace, outcome, page = boot
    (i,) = outcome.focus
    part = page[page.index(f'id="r{i}"') :]
    part = part[: part.index("<h4>The lazy graph</h4>")]
    opened = re.findall(r'<details class="box" id="(r\d+-g\d+)" open><summary><b>([^<]*)</b>', part)
    assert [name for _, name in opened] == ["bootstrap"]  # the one outer box, opened
    inner = part[part.index('<div class="inner">') :]
    depth, names = 0, []
    opening = r"<details[^>]*>(?:<summary>(<b>|<i>)([^<]*))?|</details>"  # every one, to nest
    for m in re.finditer(opening, inner):
        if m.group(0) == "</details>":
            depth -= 1
            if depth < 0:
                break
            continue
        if depth == 0 and m.group(1) == "<b>":
            names.append(m.group(2))
        depth += 1
    assert names == STAGES
    # each stage's box: its kernel count is the trace's, and it has a precision
    rec = trace.realizations[i]
    for stage in set(STAGES):
        count = sum(1 for k in rec.kernels if tuple(k.region[1:2]) == (stage,))
        boxes = re.findall(rf"<summary><b>{stage}</b><br>(\d+) kernels.*?</summary>", inner, re.S)
        assert sum(int(c) for c in boxes[: STAGES.count(stage)]) == count
    bits = [float(b) for b in re.findall(r'class="bits">([\d.]+) bits', inner)]
    assert len(bits) > 5 and min(bits[:5]) > 25
    assert "digraph" not in page
    assert '<table class="sortable">' in part and html.escape("bootstrap/eval_mod") in part


def test_the_bootstraps_precision_agrees_with_numpy(boot):
    """The last stage's precision against its shadow is the decryption's against NumPy's message
    but for EvalMod's approximation (the shadow applies the same polynomial): not below it."""
    _, outcome, page = boot
    (i,) = outcome.focus
    shown = float(re.search(r"precision ([\d.]+) bits \(needs 25", outcome.summary).group(1))
    part = page[page.index(f'id="r{i}"') :]
    stc = re.search(r"<b>slot_to_coeff</b>.*?class=\"bits\">([\d.]+) bits", part, re.S)
    assert float(stc.group(1)) >= shown - 0.5


# --------------------------------------------------------------------------------------------
# two runs compared


def dnum_run(dnum: int):
    """A multiply and a rotation with ``dnum`` digits: recorded, measured, summarized."""
    params = ckks.Params(
        n=N, q_bits=(60, 40, 40, 40), p_bits=(60, 60), scale_bits=40, dnum=dnum, insecure=True
    )
    x = np.random.default_rng(4).uniform(-1, 1, N // 2)
    with ckks.Context(params, seed=2) as ctx:
        ctx.rotation_key(1)
        with record() as trace:
            (ckks.encrypt(x) * ckks.encrypt(x)).rotate(1).realize()
    measure_precision(trace, progress=False)
    return trace, run_summary(trace, f"dnum {dnum}")


def test_two_runs_side_by_side(tmp_path):
    (ta, a), (tb, b) = dnum_run(2), dnum_run(4)
    for trace, s in ((ta, a), (tb, b)):
        assert s["totals"]["kernels"] == sum(len(r.kernels) for r in trace.realizations)
        assert s["totals"]["realizations"] == len(trace.realizations)
        arena = sum(d.arena_bytes for r in trace.realizations for d in r.plan.devices)
        assert s["totals"]["arena_bytes"] == arena
        rec = biggest(trace)
        rotates = [k for k in rec.kernels if tuple(k.region[:1]) == ("rotate",)]
        assert s["regions"]["rotate"]["kernels"] == len(rotates)
        assert s["regions"]["rotate"]["bits"] > 20
    # more digits: more key words read by the products (one key pair a digit)
    key = "multiply/relinearize/key_switch/products"
    assert b["regions"][key]["key_bytes"] > a["regions"][key]["key_bytes"]
    # through report.json, as python -m ren.viz writes it
    for name, s in (("a", a), ("b", b)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "report.json").write_text(json.dumps(s), encoding="utf-8")
    a2, b2 = load_summary(tmp_path / "a"), load_summary(tmp_path / "b" / "report.json")
    assert a2 == json.loads(json.dumps(a)) and b2["title"] == "dnum 4"
    page = compare_report(a2, b2)
    assert page.count("<script>") == 1 and "http" not in page
    assert f'<td data-v="{a["regions"][key]["kernels"]}"' not in page  # kernels are numeric cells
    row = re.search(rf"<tr><td>{re.escape(key)}</td>(.*?)</tr>", page).group(1)
    cells = re.findall(r">([^<]*)</td>", row)
    assert cells[:2] == [str(a["regions"][key]["kernels"]), str(b["regions"][key]["kernels"])]
    text = compare_text(a2, b2)
    assert "dnum 2" in text and f"{a['totals']['kernels']:>14}" in text


def test_load_summary_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"report\.json"):
        load_summary(tmp_path)
    (tmp_path / "x.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match="not a run summary"):
        load_summary(tmp_path / "x.json")
    (tmp_path / "y.json").write_text('{"format": "ren-viz-run", "version": 0}', encoding="utf-8")
    with pytest.raises(ValueError, match="version 0"):
        load_summary(tmp_path / "y.json")
    (tmp_path / "z.json").write_text("not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not JSON"):
        load_summary(tmp_path / "z.json")


def test_the_debuggers_buffer_names_its_region():
    """A buffer's region is that of the kernel writing it (the value it holds)."""
    from ren.viz.debug import Stepper

    with ckks.Context(PARAMS, seed=1):
        a = ckks.encrypt(np.ones(N // 2)).realize()
        stepper = Stepper((a * a).parts[0])
        kernels = list(stepper.realization.kernels)
        stepper.run(None)
        for k, kernel in enumerate(kernels):
            screen = stepper.buffer(f"k{k}").splitlines()[0]
            where = f" in {'/'.join(kernel.region)};" if kernel.region else ";"
            assert f"written by kernel {k} ({kernel.info.name}){where}" in screen


@pytest.mark.parametrize(
    "kw",
    [
        {"p_bits": (60, 60), "dnum": 2},
        {"p_bits": (), "key_switching": "bv"},
        {"p_bits": (), "key_switching": "bv", "digit_bits": 20},
    ],
    ids=["hybrid", "bv", "bv-digit-bits"],
)
def test_the_key_switch_box_names_its_technique_and_digits(kw):
    """The parameters' technique is what the key_switch box says, with the digits it built."""
    params = ckks.Params(n=N, q_bits=(60, 40, 40, 40), scale_bits=40, insecure=True, **kw)
    with ckks.Context(params, seed=2), record() as trace:
        (ckks.encrypt([0.5]) * ckks.encrypt([0.25])).realize()
    # hybrid: dnum digits; BV: one a modulus, or the mixed-radix digits of each (20-bit primes:
    # four for q_0 of 60 bits, three for each 40-bit modulus, their products just below 2^20k)
    digits = {"hybrid": 2, "bv": 4, "bv-digit-bits": 4 + 3 + 3 + 3}
    want = digits["hybrid" if "dnum" in kw else "bv-digit-bits" if "digit_bits" in kw else "bv"]
    assert params.key_parts == want
    technique = kw.get("key_switching", "hybrid")
    page = html.unescape(build_report(trace, "key switching", times=False))
    assert page.count(f"{technique} key switching \u00b7 {want} digits") == 1
    assert page.count("key switching \u00b7") == 1  # one relinearization, one key switch
