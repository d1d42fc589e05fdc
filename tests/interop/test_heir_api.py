"""``ren.interop.heir``'s interface: compile, load, heir-py's steps, cleartext, regions, diverge.

The oracles: NumPy's value of the original function (within what the chain allows for CKKS,
exactly for BGV and BFV), the eager run's words for the jitted one, the report's regions against
the module's own scheme ops, and a planted wrong rotation for the divergence tool (it must name
that op). Everything here needs ``heir-opt`` (the ``heir`` extra) and skips without it, but the
errors that come before heir-opt runs.
"""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

import ren
from ren.interop import heir
from ren.interop.heir.__main__ import main
from ren.interop.heir.api import _options, text_of
from ren.interop.heir.diverge import diverge, sample_args
from ren.interop.heir.tools import find_heir_opt

needs_heir = pytest.mark.skipif(
    find_heir_opt() is None, reason="heir-opt not installed (pip install -e .[heir])"
)

DOT_F = (
    "func.func @dot(%a: tensor<8xf32> {secret.secret}, %b: tensor<8xf32> {secret.secret})"
    " -> f32 {\n  %c = arith.constant dense<0.25> : tensor<f32>\n"
    "  %0 = linalg.dot ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%c : tensor<f32>)"
    " -> tensor<f32>\n  %1 = tensor.extract %0[] : tensor<f32>\n  return %1 : f32\n}\n"
)
DOT_I = DOT_F.replace("f32", "i16").replace("0.25", "3")


@pytest.fixture(scope="module")
def dot(tmp_path_factory):
    path = tmp_path_factory.mktemp("heir") / "dot.mlir"
    path.write_text(DOT_F)
    return path, heir.compile(path, "ckks", seed=1)


def _inputs(seed=3):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, 8), rng.uniform(-1, 1, 8)


@needs_heir
def test_compile_and_heir_pys_steps_agree_with_numpy(dot):
    _, program = dot
    a, b = _inputs()
    want = np.dot(a, b) + 0.25
    assert program.arg_names == ["a", "b"] or program.arg_names == ["arg0", "arg1"]
    names = program.arg_names
    assert abs(program(a, b) - want) < 2.0**-20
    enc = [getattr(program, f"encrypt_{n}")(v) for n, v in zip(names, (a, b), strict=True)]
    assert abs(program.decrypt_result(program.eval(*enc)) - want) < 2.0**-20
    assert abs(program.cleartext(a, b) - want) < 1e-12  # no noise: the float's own rounding
    with pytest.raises(TypeError, match="got the encryption of"):
        program.eval(enc[1], enc[0])
    with pytest.raises(TypeError, match="is secret"):
        program.eval(a, enc[1])
    with pytest.raises(TypeError, match="takes 2 arguments, got 1"):
        program(a)
    with pytest.raises(AttributeError, match="encrypt_nope"):
        program.encrypt_nope  # noqa: B018


@needs_heir
def test_load_takes_either_syntax_and_a_path(dot, tmp_path):
    path, _ = dot
    generic = heir.lower(path, "ckks")
    custom = subprocess.run(
        [str(find_heir_opt())], input=generic, capture_output=True, text=True, check=True
    ).stdout  # heir-opt's own printing: MLIR's custom syntax
    assert '"builtin.module"' in generic and '"builtin.module"' not in custom
    (tmp_path / "lowered.mlir").write_text(generic)
    a, b = _inputs(4)
    want = np.dot(a, b) + 0.25
    for source in (generic, custom, tmp_path / "lowered.mlir", heir.parse(generic)):
        assert abs(heir.load(source, seed=2)(a, b) - want) < 2.0**-20


@needs_heir
@pytest.mark.parametrize("scheme", ["bgv", "bfv"])
def test_integer_schemes_exactly(scheme):
    program = heir.compile(DOT_I, scheme, seed=5)
    assert program.scheme == scheme and program.params.t == 65537
    rng = np.random.default_rng(6)
    a, b = rng.integers(-20, 21, 8), rng.integers(-20, 21, 8)
    want = int(np.dot(a, b)) + 3
    assert program(a, b) == want
    assert program.cleartext(a, b) == want


def test_bad_requests_are_refused_before_heir_opt_runs(tmp_path):
    with pytest.raises(ValueError, match="scheme must be one of"):
        _options("tfhe", None)
    with pytest.raises(TypeError, match="options must be a dict"):
        _options("ckks", 3)
    assert _options("bgv", {"plaintext-modulus": 786433})[-1] == (
        "--mlir-to-bgv=plaintext-modulus=786433"
    )
    with pytest.raises(FileNotFoundError, match="no MLIR file"):
        text_of(tmp_path / "absent.mlir")
    with pytest.raises(TypeError, match="MLIR text or a path"):
        text_of(3)  # type: ignore[arg-type]
    no_scheme = '"builtin.module"() ({\n}) : () -> ()\n'
    with pytest.raises(heir.MlirError, match="names no scheme"):
        heir.load(no_scheme)


@needs_heir
def test_a_missing_heir_opt_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("REN_HEIR_OPT", str(tmp_path / "absent-heir-opt"))
    with pytest.raises(heir.HeirMissing, match=r"pip install -e \.\[heir\]"):
        heir.compile(DOT_F)


@needs_heir
def test_the_jitted_eval_gives_the_eager_words(dot):
    _, program = dot
    run = ren.jit(program.eval)
    for seed in (7, 8):
        a, b = _inputs(seed)
        enc = (program.encrypt(program.arg_names[0], a), program.encrypt(program.arg_names[1], b))
        jitted, eager = run(*enc), program.eval(*enc)
        for x, y in zip(jitted.values[0].parts, eager.values[0].parts, strict=True):
            assert np.array_equal(x.words(), y.words())
        assert abs(program.decrypt_result(jitted) - (np.dot(a, b) + 0.25)) < 2.0**-20


@needs_heir
def test_every_scheme_op_is_a_region_with_its_precision(dot):
    from ren.viz.precision import measure_precision
    from ren.viz.report import text_report
    from ren.viz.trace import record

    _, program = dot
    ops = [
        f"{op.name} {op.results[0]}"
        for op in program.functions[program.entry].walk()
        if op.name.startswith("ckks.")
    ]
    # each op named with the source line it came from: the product and the sums are linalg.dot's
    lines = DOT_F.splitlines()
    dot, extract = (
        next(i for i, x in enumerate(lines, 1) if op in x)
        for op in ("linalg.dot", "tensor.extract")
    )
    assert set(program.locations.values()) == {f"dot.mlir:{dot}:8", f"dot.mlir:{extract}:8"}
    with record() as trace:
        program(*_inputs(9))
    measure_precision(trace, progress=False)
    text = text_report(trace, "dot", times=False)
    for label in ops:
        line = next(
            (x for x in text.splitlines() if x.strip().startswith(label + " (dot.mlir:")), None
        )
        assert line is not None, label
        if not label.startswith("ckks.relinearize"):  # a three-part value has no precision
            assert re.search(r"\d+\.\d bits; .*predicted \d+\.\d", line), line


@needs_heir
def test_diverge_finds_a_planted_wrong_rotation(dot, tmp_path, capsys):
    path, program = dot
    args = sample_args(program, seed=1)
    assert diverge(program, args) is None
    text = heir.lower(path, "ckks")
    rotations = re.findall(r'(%\w+) = "ckks.rotate"\((%\w+), (%\w+)\)', text)
    assert len(rotations) >= 2
    target, source, steps = rotations[0]
    wrong = rotations[1][2]  # the next rotation's step, in the first one's place
    planted = text.replace(
        f'{target} = "ckks.rotate"({source}, {steps})',
        f'{target} = "ckks.rotate"({source}, {wrong})',
    )
    found = diverge(heir.load(planted, seed=1), args, reference=program)
    assert found is not None and found.kind == "value"
    assert found.op.name == "ckks.rotate" and found.op.results == [target]
    assert found.error > 0.01
    bad = tmp_path / "planted.mlir"
    bad.write_text(planted)
    assert main(["diverge", str(path), "--lowered", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"ckks.rotate {target}" in out and "departs from the cleartext" in out
    assert main(["diverge", str(path)]) == 0
    assert main(["diverge", str(tmp_path / "absent.mlir")]) == 2


@needs_heir
def test_a_device_gives_the_same_words_as_another():
    program = heir.compile(DOT_I, "bgv", seed=9)  # one seed: the same keys and draws on each
    a, b = np.arange(8) - 3, np.arange(8) * 2 + 1
    words = {}
    for device in ("python", "cpu"):
        enc = [
            program.encrypt(n, v, device=device)
            for n, v in zip(program.arg_names, (a, b), strict=True)
        ]
        out = program.eval(*enc, device=device)
        words[device] = [p.words() for p in out.values[0].parts]
        assert out.values[0].parts[0].device == device
        assert program.decrypt_result(out, device=device) == int(np.dot(a, b)) + 3
    assert all(np.array_equal(x, y) for x, y in zip(words["python"], words["cpu"], strict=True))


@needs_heir
def test_an_integer_tensor_result_is_an_integer_array():
    source = (
        "func.func @ew(%x: tensor<8xi16> {secret.secret}, %y: tensor<8xi16> {secret.secret})"
        " -> tensor<8xi16> {\n  %0 = arith.muli %x, %y : tensor<8xi16>\n"
        "  %1 = arith.addi %0, %x : tensor<8xi16>\n  return %1 : tensor<8xi16>\n}\n"
    )
    program = heir.compile(source, "bgv", seed=3)
    a, b = np.arange(8) - 3, np.arange(8) * 2 + 1
    for got in (program(a, b), program.cleartext(a, b)):
        assert got.dtype == np.int64 and np.array_equal(got, a * b + a)


@needs_heir
def test_program_jit_makes_the_encryptions_of_zero_outside_the_capture():
    from pathlib import Path

    source = Path(__file__).parent / "heir_examples" / "common" / "matvec.mlir"
    program = heir.compile(source, "ckks", seed=4)
    assert program.zeros  # this entry takes an encryption of zero: eval alone cannot be jitted
    run = program.jit()
    for seed in (1, 2):
        x = np.random.default_rng(seed).uniform(-1, 1, 16)
        enc = program.encrypt(program.arg_names[0], x)
        zeros = program.encrypt_zeros()
        eager = program.eval(enc, zeros=zeros)
        jitted = run(enc)
        want = program.cleartext(x)
        for got in (eager, jitted):
            assert np.max(np.abs(program.decrypt_result(got) - want)) < 2.0**-20


@needs_heir
def test_source_locations_are_all_or_nothing(dot):
    from ren.interop.heir.locations import source_locations

    path, program = dot
    flags = ("--mlir-to-secret-arithmetic",)
    secret = heir.parse(heir.tools.run_heir_opt(path.read_text(), *flags, name="dot.mlir"))
    found = source_locations(program.module, program.entry, secret)
    assert found == program.locations and len(found) == sum(program.op_counts().values())
    extra = DOT_F.replace(
        "  return %1 : f32", "  %2 = arith.addf %1, %1 : f32\n  return %2 : f32"
    )  # one op more at the secret stage than the program has: they do not pair
    other = heir.parse(heir.tools.run_heir_opt(extra, *flags))
    assert source_locations(program.module, program.entry, other) == {}
