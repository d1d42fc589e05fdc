"""Saved plans: ``JitFunction.save``/``export`` and ``ren.load``.

Oracles: Python big integers (the values worked by hand in ``docs/rings.md`` and
``ren.reference.evaluate``), the jitted function's own result in the saving process, plaintext
NumPy for CKKS (precision in bits), and a subprocess in which the scheduler raises.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import ren
from ren import Poly, RingSpec
from ren.capture.function import JitFunction
from ren.capture.planfile import FORMAT_VERSION, PlanFileError, fingerprint
from ren.errors import JitError, RenError
from ren.reference import evaluate
from ren.ring import ntt_primes
from tests.threads import in_threads

RING = RingSpec(n=8, moduli=(17, 97))
ROOT = Path(__file__).resolve().parents[2]
X = [1, 2, 3, 4, 5, 6, 7, 8]
Y = [8, 7, 6, 5, 4, 3, 2, 1]
WANT = [1334, 1370, 1424, 1496, 1586, 45, 171, 315]  # (x + y) * (x - 1), docs/rings.md


DEVICES = ["python", pytest.param("cpu", marks=pytest.mark.cc)]


def step(x: Poly, y: Poly) -> Poly:
    return (x + y) * (x - 1)


def saved(tmp_path: Path, device: str = "python") -> Path:
    f = ren.jit(step)
    x, y = Poly(X, RING, device=device), Poly(Y, RING, device=device)
    return f.export(tmp_path / "step.renplan", x, y)


def rewrite(path: Path, change) -> None:
    """Change the parsed plan and write it back with a fingerprint that matches (a valid file)."""
    data = json.loads(path.read_text())
    change(data)
    data["fingerprint"] = fingerprint(data)
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("device", DEVICES)
def test_a_loaded_plan_gives_the_words_of_the_function(tmp_path, device):
    loaded = ren.load(saved(tmp_path, device))
    x, y = Poly(X, RING, device=device), Poly(Y, RING, device=device)
    assert loaded(x, y).tolist() == WANT
    a, b = Poly.uniform(RING, rng=3, device=device), Poly.uniform(RING, rng=4, device=device)
    assert loaded(a, b).tolist() == list(evaluate(step(a, b).node))  # new values, same plan
    assert loaded(x=a, y=b).tolist() == list(evaluate(step(a, b).node))  # by name too


@pytest.mark.cc
def test_a_new_process_replays_without_the_scheduler_or_the_planner(tmp_path):
    path = saved(tmp_path, "cpu")
    script = textwrap.dedent(
        f"""
        import ren
        from ren.engine import memory, schedule, schedule_cache
        def refuse(*args, **kwargs):
            raise RuntimeError("the scheduler or the planner ran")
        schedule.schedule = schedule_cache.schedule = refuse
        memory.plan_memory = schedule_cache.plan_memory = refuse
        from ren import Poly, RingSpec
        ring = RingSpec(n=8, moduli=(17, 97))
        f = ren.load({str(path)!r})
        device = f.plan.units[0].device
        x = Poly({X}, ring, device=device).realize()
        y = Poly({Y}, ring, device=device).realize()
        print(f(x, y).tolist())
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(WANT)


def test_a_changed_byte_is_refused(tmp_path):
    path = saved(tmp_path)
    raw = bytearray(path.read_bytes())
    i = raw.index(b'"step"')
    raw[i + 1] = ord("S")  # the function's name: still JSON, still a plan, not what was saved
    path.write_bytes(bytes(raw))
    with pytest.raises(PlanFileError, match="does not match its fingerprint"):
        ren.load(path)
    path.write_bytes(b"\x00not json")
    with pytest.raises(PlanFileError, match="not a Ren plan file"):
        ren.load(path)


@pytest.mark.parametrize("version", [1, 99])  # 1: a plan saved before values' metadata
def test_another_format_version_is_refused(tmp_path, version):
    path = saved(tmp_path)
    rewrite(path, lambda d: d.update(version=version))
    reads = f"this Ren reads version {FORMAT_VERSION}: save the plan again"
    with pytest.raises(PlanFileError, match=f"format version {version}; {reads}"):
        ren.load(path)


def test_kernels_this_ren_renders_differently_are_refused(tmp_path):
    path = saved(tmp_path)

    def other_ren(d):
        d["ren"] = "0.0.1"
        d["kernels"][2]["source_sha256"] = "0" * 64

    rewrite(path, other_ren)
    with pytest.raises(PlanFileError, match=r"kernel 2 .* renders differently .*\(0\.0\.1\)"):
        ren.load(path)


def test_a_device_that_is_not_here_is_refused(tmp_path):
    path = saved(tmp_path)

    def elsewhere(d):
        for k in d["kernels"]:
            k["info"]["device"] = "tpu"

    rewrite(path, elsewhere)
    with pytest.raises((RenError, ValueError), match="tpu"):
        ren.load(path)


def test_inputs_of_another_spec_are_refused(tmp_path):
    loaded = ren.load(saved(tmp_path))
    other = RingSpec(8, ntt_primes(8, 20, 2))
    with pytest.raises(ValueError, match=r"input y of step .* saved for"):
        loaded(Poly(X, RING), Poly(Y, other))
    with pytest.raises(ValueError, match="takes Poly inputs at"):
        loaded(Poly(X, RING), 3)
    x = Poly(X, RING).realize()
    with pytest.raises(ValueError, match="share buffers"):
        loaded(x, x)


def test_pruned_work_cannot_be_saved(tmp_path):
    key = Poly(Y, RING)

    @ren.jit(prune=True)
    def uses_a_key(x: Poly) -> Poly:
        return x * (key * 3)

    uses_a_key(Poly(X, RING))
    with pytest.raises(JitError, match="prune=False"):
        uses_a_key.save(tmp_path / "p.renplan")


def table_reader() -> tuple[JitFunction, Poly]:
    """A jitted ``x * table``, called once, and the stored ``table`` it closes over."""
    table = Poly(Y, RING).realize()

    @ren.jit
    def reads_a_table(x: Poly) -> Poly:
        return x * table

    reads_a_table(Poly(X, RING))
    return reads_a_table, table


def test_stored_values_must_be_named_at_save_and_given_at_load(tmp_path):
    reads_a_table, table = table_reader()
    with pytest.raises(JitError, match="neither an input nor named in stored="):
        reads_a_table.save(tmp_path / "t.renplan")
    path = reads_a_table.save(tmp_path / "t.renplan", stored={"table": table})
    with pytest.raises(ValueError, match=r"stored inputs \['table'\]"):
        ren.load(path)
    loaded = ren.load(path, stored={"table": Poly(X, RING)})  # another value, same spec
    assert loaded(Poly(Y, RING)).tolist() == (Poly(X, RING) * Poly(Y, RING)).tolist()
    with pytest.raises(ValueError, match="stored input table is"):
        ren.load(path, stored={"table": Poly(X, RingSpec(8, ntt_primes(8, 20, 2)))})


def test_nothing_is_saved_before_a_call():
    with pytest.raises(JitError, match="no plan to save"):
        ren.jit(step).save("never.renplan")


def test_concurrent_writers_of_one_path_leave_a_whole_plan(tmp_path):
    f = ren.jit(step)
    f(Poly(X, RING), Poly(Y, RING))
    path = tmp_path / "same.renplan"
    in_threads(lambda i: f.save(path), 12)
    assert ren.load(path)(Poly(X, RING), Poly(Y, RING)).tolist() == WANT
    assert [p.name for p in tmp_path.iterdir()] == ["same.renplan"]  # no temporary left


def test_a_loaded_plan_in_many_threads(tmp_path):
    loaded = ren.load(saved(tmp_path))

    def work(i: int) -> bool:
        a, b = Poly.uniform(RING, rng=i), Poly.uniform(RING, rng=100 + i)
        return loaded(a, b).tolist() == list(evaluate(step(a, b).node))

    assert all(in_threads(work, 12))


def test_a_ckks_plan_holds_no_key_and_no_value(tmp_path):
    from ren.schemes import ckks

    params = ckks.Params(n=16, q_bits=(30, 25), p_bits=(30,), scale_bits=25, insecure=True)
    v = np.linspace(-1, 1, params.slots)
    files = []
    for seed in (1, 2):  # other keys, other values: the same plan file, byte for byte
        with ckks.Context(params, seed=seed) as ctx:
            f = ren.jit(lambda a, b: a * b)
            x, y = ckks.encrypt(v * seed), ckks.encrypt(v)
            path = tmp_path / f"mul{seed}.renplan"
            f.export(path, x, y, stored={"keys": ctx.evaluation_keys()})
            files.append(path.read_bytes())
    assert files[0] == files[1]
    with ckks.Context(params, seed=3) as ctx:  # a third party's keys, given at load
        mul = ren.load(tmp_path / "mul1.renplan", stored={"keys": ctx.evaluation_keys()})
        out = mul(ckks.encrypt(v), ckks.encrypt(0.5 * v))
        assert isinstance(out, ckks.Ciphertext) and out.level == 0
        assert ckks.precision_bits(ckks.decrypt(out), 0.5 * v * v) > 12


def test_a_saved_plan_takes_new_values_of_its_constant_inputs(tmp_path):
    @ren.jit
    def affine(x: Poly, c: Poly) -> Poly:
        return x * c + 1

    x = Poly(X, RING)
    path = affine.export(tmp_path / "affine.renplan", x, Poly.const(5, RING))
    loaded = ren.load(path)
    for c in (5, 6, -7):
        got = loaded(x, Poly.const(c, RING)).tolist()
        assert got == list(evaluate((x * c + 1).node))

    @ren.jit
    def folded(x: Poly, c: Poly) -> Poly:
        return x * (c * c)

    path = folded.export(tmp_path / "folded.renplan", x, Poly.const(5, RING))
    loaded = ren.load(path)
    assert loaded(x, Poly.const(5, RING)).tolist() == list(evaluate((x * 25).node))
    with pytest.raises(ValueError, match="must be the constant 5"):
        loaded(x, Poly.const(6, RING))


def test_a_freed_stored_input_is_named_as_it_was_given(tmp_path):
    reads_a_table, table = table_reader()
    path = reads_a_table.save(tmp_path / "t.renplan", stored={"table": table})
    given = Poly(X, RING).realize()
    loaded = ren.load(path, stored={"table": given})
    given.node.src[0].arg.buffer.deallocate()
    with pytest.raises(JitError, match="the stored input table"):
        loaded(Poly(Y, RING))


def test_an_argument_that_is_not_a_poly_must_be_the_saved_one(tmp_path):
    @ren.jit
    def turn(x: Poly, steps: int) -> Poly:
        return x.rotate(steps)

    x = Poly(X, RING)
    loaded = ren.load(turn.export(tmp_path / "turn.renplan", x, 1))
    assert loaded(x, 1).tolist() == list(evaluate(x.rotate(1).node))
    with pytest.raises(
        ValueError, match=r"argument steps of .*turn .* is 3 \(int\); .* for 1 \(int\)"
    ):
        loaded(x, 3)  # in-process, another int captures another plan
    with pytest.raises(ValueError, match=r"is True \(bool\)"):
        loaded(x, True)


@pytest.mark.parametrize(
    "metadata",
    [
        None,
        [],
        {"inputs": [], "stored": {}},
        {"inputs": [["steps", ["int", 1]]], "stored": {}, "result": []},
        {"inputs": [], "stored": {"keys": "0"}, "result": []},
        {"inputs": [["x", ["leaf", "m:P", [["n", ["tuple", "no"]]]]]], "stored": {}, "result": []},
        {"inputs": [["x.key_fingerprint", ["key"]]], "stored": {}, "result": []},
        {"inputs": [["x.key_fingerprint", ["key", True]]], "stored": {}, "result": []},
        {"inputs": [], "stored": {}, "result": [["result.level", ["key", -1]]]},
    ],
)
def test_malformed_metadata_is_refused_at_load(tmp_path, metadata):
    path = saved(tmp_path)
    rewrite(path, lambda d: d["manifest"].update(metadata=metadata))
    with pytest.raises(PlanFileError, match="metadata"):
        ren.load(path)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)


@settings(max_examples=40)
@example(where="stored", value={"": 0})  # a key group for a stored value the plan does not read
@given(
    where=st.sampled_from(["inputs", "stored", "result", "whole"]),
    value=JSON | st.lists(st.tuples(st.sampled_from(["x", "steps"]), JSON).map(list)),
)
def test_hostile_metadata_is_refused_or_checked_never_a_crash(where, value):
    with tempfile.TemporaryDirectory() as folder:
        path = saved(Path(folder))
        good = json.loads(path.read_text())["manifest"]["metadata"]
        bad = value if where == "whole" else {**good, where: value}
        rewrite(path, lambda d: d["manifest"].update(metadata=bad))
        try:
            loaded = ren.load(path)
        except PlanFileError:
            return  # refused at load, naming the metadata
        x, y = Poly(X, RING), Poly(Y, RING)
        try:
            assert loaded(x, y).tolist() == WANT
        except ValueError as e:  # refused at a call, naming what differs
            assert "saved for" in str(e) or "arguments" in str(e), e


def test_a_result_rebuilt_with_other_metadata_is_refused(tmp_path):
    from ren.schemes import ckks

    params = ckks.Params(n=16, q_bits=(30, 25), p_bits=(30,), scale_bits=25, insecure=True)
    with ckks.Context(params, seed=1):
        f = ren.jit(lambda a, b: a + b)
        v = np.linspace(-1, 1, params.slots)
        path = f.export(tmp_path / "add.renplan", ckks.encrypt(v), ckks.encrypt(v))
    rewrite(path, lambda d: d["result"]["fields"]["real"].update(value=False))  # not as recorded
    with pytest.raises(ValueError, match=r"rebuilt result of .* has real False \(bool\); .* True"):
        ren.load(path)
