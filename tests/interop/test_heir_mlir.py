"""The reader of MLIR's generic form (``ren.interop.heir.reader``): what it reads, and what it
refuses.

The oracle for what it reads is the text itself: a module written here by hand, each op's names,
operands, attributes, regions and locations checked against what the text says. Hostile text
(every truncation, seeded random edits, deep nesting, dense tensors that claim more than they
hold) must give a ``MlirError`` or a module, never another exception, and never run anything.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

from ren.interop.heir import ir
from ren.interop.heir.reader import parse
from ren.interop.heir.tools import HeirMissing, find_heir_opt, run_heir_opt

MODULE = "\n".join(
    [
        "#map = affine_map<(d0) -> (d0)>",
        "!t = tensor<4xf32>",
        '"builtin.module"() ({',
        '  "func.func"() <{function_type = (!t, i32) -> !t, sym_name = "f"}> ({',
        '  ^bb0(%arg0: !t loc("f.mlir":1:10), %arg1: i32 loc(unknown)):',
        '    %0 = "arith.constant"() <{value = dense<[1.5, -2.0, 0.0, 4.0]> : tensor<4xf32>}>'
        " : () -> !t loc(#loc1)",
        '    %1 = "arith.constant"() <{value = dense<"0x0100000002000000"> : tensor<2xi32>}>'
        " : () -> tensor<2xi32>",
        '    %2 = "arith.constant"() <{value = dense<7> : tensor<2x2xi64>}>'
        " : () -> tensor<2x2xi64>",
        '    %c3 = "arith.constant"() <{value = 3 : index}> : () -> index',
        '    %3 = "arith.addf"(%arg0, %0) <{fastmath = #arith.fastmath<none>}>'
        ' : (!t, !t) -> !t loc("f.mlir":2:3)',
        '    %4 = "scf.for"(%c3, %c3, %c3, %3) ({',
        "    ^bb0(%i: index, %acc: !t):",
        '      "scf.yield"(%acc) : (!t) -> ()',
        "    }) : (index, index, index, !t) -> !t",
        '    %5 = "tensor.extract_slice"(%4) <{operandSegmentSizes = array<i32: 1, 0, 0, 0>,'
        " static_offsets = array<i64: 0>, static_sizes = array<i64: 4>,"
        " static_strides = array<i64: 1>}> : (!t) -> !t",
        '    %6 = "func.call"(%5, %arg1) <{callee = @g}> {note = "a \\"quoted\\" string", flag,'
        " ratio = 2.5e-01 : f32} : (!t, i32) -> !t",
        '    "func.return"(%6) : (!t) -> ()',
        "  }) : () -> ()",
        "}) {scheme.ckks, ckks.schemeParam = #ckks.scheme_param<logN = 4, Q = [17, 97],"
        " P = [193], logDefaultScale = 3>} : () -> ()",
        '#loc1 = loc("f.mlir":3:5)',
        "",
    ]
)


def _ops(module: ir.Module) -> dict[str, ir.Op]:
    return {op.results[0] if op.results else op.name: op for op in module.op.walk()}


def test_a_hand_written_module_reads_as_written():
    m = parse(MODULE)
    assert list(m.functions()) == ["f"]
    f = m.functions()["f"]
    assert f.attr("function_type").text == "(tensor<4xf32>, i32) -> tensor<4xf32>"
    (block,) = f.regions[0]
    assert block.args == [("%arg0", "tensor<4xf32>"), ("%arg1", "i32")]
    ops = _ops(m)
    assert np.array_equal(ops["%0"].attr("value").values, [1.5, -2.0, 0.0, 4.0])
    assert ops["%0"].loc == "f.mlir:3:5"  # an alias defined after the module
    assert list(ops["%1"].attr("value").values) == [1, 2]  # little-endian i32 words
    assert ops["%2"].attr("value").values.shape == (2, 2)
    assert (ops["%2"].attr("value").values == 7).all()
    assert ops["%c3"].attr("value") == ir.Typed(3, "index")
    assert ops["%3"].operands == ["%arg0", "%0"] and ops["%3"].loc == "f.mlir:2:3"
    assert ops["%3"].result_types == ["tensor<4xf32>"]
    loop = ops["%4"]
    assert loop.operands == ["%c3", "%c3", "%c3", "%3"]
    assert loop.regions[0][0].args == [("%i", "index"), ("%acc", "tensor<4xf32>")]
    assert list(ops["%5"].attr("static_sizes")) == [4]
    call = ops["%6"]
    assert call.attr("callee") == ir.Symbol("g") and call.attr("flag") is True
    assert call.attr("note") == 'a "quoted" string'
    assert call.attr("ratio") == ir.Typed(0.25, "f32")
    assert m.op.attr("scheme.ckks") is True
    assert "Q = [17, 97]" in m.op.attr("ckks.schemeParam").text
    assert ir.tensor_type("tensor<1x1024xf32>") == ir.TensorType((1, 1024), "f32")
    assert ir.tensor_type("index") is None


def test_every_truncation_is_refused_by_name():
    whole = MODULE.index("\n#loc1 =")  # from here the module is whole, its last alias cut
    for end in range(whole):
        with pytest.raises(ir.MlirError):
            parse(MODULE[:end])
    for end in range(whole, len(MODULE)):
        with contextlib.suppress(ir.MlirError):
            parse(MODULE[:end])


def test_random_edits_give_a_module_or_a_clear_error():
    rng = np.random.default_rng(2026)
    alphabet = [*'%"(){}<>[],:=!#@^-x0123456789 \n', "loc(", "dense<", "array<i64: "]
    for _ in range(1500):
        text = list(MODULE)
        for _ in range(int(rng.integers(1, 4))):
            at = int(rng.integers(0, len(text)))
            kind = int(rng.integers(0, 3))
            if kind == 0:
                del text[at]
            elif kind == 1:
                text.insert(at, str(rng.choice(alphabet)))
            else:
                text[at] = str(rng.choice(alphabet))
        with contextlib.suppress(ir.MlirError):
            parse("".join(text))


def test_limits_hold_before_anything_is_made(monkeypatch):
    region = '"x.y"() ({\n'
    deep = '"builtin.module"() ({\n' + region * 300 + "}) : () -> ()\n" * 301
    with pytest.raises(ir.MlirError, match="nested more than"):
        parse(deep)
    huge = MODULE.replace("tensor<2x2xi64>}>", "tensor<65536x65536xi64>}>")
    with pytest.raises(ir.MlirError, match=r"more than \d+ elements"):
        parse(huge)
    short = MODULE.replace('"0x0100000002000000"', '"0x01000000020000"')
    with pytest.raises(ir.MlirError, match="hex string of the wrong length"):
        parse(short)
    monkeypatch.setitem(ir.LIMITS, "chars", 100)
    with pytest.raises(ir.MlirError, match="past the limit 100"):
        parse(MODULE)
    monkeypatch.setitem(ir.LIMITS, "chars", 2**20)
    monkeypatch.setitem(ir.LIMITS, "ops", 5)
    with pytest.raises(ir.MlirError, match="more than 5 ops"):
        parse(MODULE)


def test_what_is_not_the_generic_form():
    with pytest.raises(TypeError, match="must be text"):
        parse(b"module {}")  # type: ignore[arg-type]
    with pytest.raises(ir.MlirError, match="--mlir-print-op-generic"):
        parse("module {\n  func.func @f() { return }\n}")
    with pytest.raises(ir.MlirError, match=r"not a builtin\.module"):
        parse('"func.func"() ({\n}) : () -> ()')
    with pytest.raises(ir.MlirError, match="text after the module"):
        parse(MODULE + '"x.y"() : () -> ()')
    with pytest.raises(ir.MlirError, match="successors"):
        parse('"builtin.module"() ({\n "cf.br"()[^bb1] : () -> ()\n}) : () -> ()')


HEIR_OPT = find_heir_opt()
SOURCE = (
    "func.func @dot(%a: tensor<8xf32> {secret.secret}, %b: tensor<8xf32> {secret.secret})"
    " -> f32 {\n  %c = arith.constant dense<0.0> : tensor<f32>\n"
    "  %0 = linalg.dot ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%c : tensor<f32>)"
    " -> tensor<f32>\n  %1 = tensor.extract %0[] : tensor<f32>\n  return %1 : f32\n}\n"
)


@pytest.mark.skipif(HEIR_OPT is None, reason="heir-opt not installed (pip install -e .[heir])")
def test_heir_opt_s_ckks_output_reads():
    m = parse(run_heir_opt(SOURCE, "--mlir-to-ckks"))
    names = {op.name for op in m.op.walk()}
    assert {"ckks.mul", "ckks.rotate", "ckks.rescale", "lwe.rlwe_encrypt"} <= names
    assert "logN" in m.op.attr("ckks.schemeParam").text
    muls = [op for op in m.op.walk() if op.name == "ckks.mul"]
    assert muls and all(op.loc and op.loc.startswith("<stdin>:") for op in muls)
    with pytest.raises(ir.MlirError, match="refused the module"):
        run_heir_opt("func.func @f(", "--mlir-to-ckks")


def test_without_heir_opt_the_message_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("REN_HEIR_OPT", str(tmp_path / "nothing-here"))
    assert find_heir_opt() is None
    with pytest.raises(HeirMissing, match=r"pip install -e \.\[heir\]"):
        run_heir_opt(SOURCE, "--mlir-to-ckks")
