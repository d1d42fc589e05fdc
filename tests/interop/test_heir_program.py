"""HEIR's programs run on Ren (``ren.interop.heir``): the plain ops, and CKKS programs end to end.

The oracles: Python's own arithmetic for the plain ops (C's truncating division for ``divsi`` and
``remsi``, the floor for ``floordivsi``), and NumPy's value of the original function for a
program that ``heir-opt`` lowered (a dot product, a matrix times a vector), within the precision
Ren predicts for the result. The programs need ``heir-opt`` (the ``heir`` extra) and skip without.
"""

from __future__ import annotations

import numpy as np
import pytest

from ren.interop.heir import ir
from ren.interop.heir.cleartext import Interpreter
from ren.interop.heir.reader import parse
from ren.interop.heir.tools import find_heir_opt, run_heir_opt

PLAIN = "\n".join(
    [
        '"builtin.module"() ({',
        '  "func.func"() <{function_type = (tensor<4xi64>, i64) -> (tensor<2x4xi64>, i64, i64,'
        ' i64, i64), sym_name = "f"}> ({',
        "  ^bb0(%x: tensor<4xi64>, %d: i64):",
        '    %c0 = "arith.constant"() <{value = 0 : index}> : () -> index',
        '    %c1 = "arith.constant"() <{value = 1 : index}> : () -> index',
        '    %c4 = "arith.constant"() <{value = 4 : index}> : () -> index',
        '    %z = "arith.constant"() <{value = dense<0> : tensor<2x4xi64>}>'
        " : () -> tensor<2x4xi64>",
        '    %m7 = "arith.constant"() <{value = -7 : i64}> : () -> i64',
        '    %r = "scf.for"(%c0, %c4, %c1, %z) ({',
        "    ^bb0(%i: index, %acc: tensor<2x4xi64>):",
        '      %v = "tensor.extract"(%x, %i) : (tensor<4xi64>, index) -> i64',
        '      %w = "arith.muli"(%v, %v) : (i64, i64) -> i64',
        '      %a = "tensor.insert"(%v, %acc, %c0, %i)'
        " : (i64, tensor<2x4xi64>, index, index) -> tensor<2x4xi64>",
        '      %b = "tensor.insert"(%w, %a, %c1, %i)'
        " : (i64, tensor<2x4xi64>, index, index) -> tensor<2x4xi64>",
        '      "scf.yield"(%b) : (tensor<2x4xi64>) -> ()',
        "    }) : (index, index, index, tensor<2x4xi64>) -> tensor<2x4xi64>",
        '    %q = "arith.divsi"(%m7, %d) : (i64, i64) -> i64',
        '    %s = "arith.remsi"(%m7, %d) : (i64, i64) -> i64',
        '    %f = "arith.floordivsi"(%m7, %d) : (i64, i64) -> i64',
        '    %lt = "arith.cmpi"(%m7, %d) <{predicate = 2 : i64}> : (i64, i64) -> i1',
        '    %sel = "arith.select"(%lt, %q, %f) : (i1, i64, i64) -> i64',
        '    "func.return"(%r, %q, %s, %f, %sel) : (tensor<2x4xi64>, i64, i64, i64, i64) -> ()',
        "  }) : () -> ()",
        "}) : () -> ()",
        "",
    ]
)


def test_the_plain_ops_against_python():
    run = Interpreter(parse(PLAIN))
    x = np.array([3, -1, 4, 2])
    table, q, r, f, sel = run.call("f", [x, 2])
    assert np.array_equal(table, np.stack([x, x * x]))
    assert (q, r, f) == (-3, -1, -4)  # C's -7 / 2 and -7 % 2; the floor of -3.5
    assert sel == q  # -7 < 2


def test_an_op_outside_the_subset_is_named_with_its_location():
    text = PLAIN.replace('"arith.muli"(%v, %v)', '"arith.bogus"(%v, %v)').replace(
        "-> i64\n      %a", '-> i64 loc("prog.mlir":7:9)\n      %a'
    )
    with pytest.raises(ir.MlirError, match=r"arith\.bogus at prog\.mlir:7:9 is outside the subset"):
        Interpreter(parse(text)).call("f", [np.array([1, 2, 3, 4]), 2])


HEIR_OPT = find_heir_opt()
needs_heir = pytest.mark.skipif(
    HEIR_OPT is None, reason="heir-opt not installed (pip install -e .[heir])"
)

DOT = (
    "func.func @dot(%a: tensor<8xf32> {secret.secret}, %b: tensor<8xf32> {secret.secret})"
    " -> f32 {\n  %c = arith.constant dense<0.5> : tensor<f32>\n"
    "  %0 = linalg.dot ins(%a, %b : tensor<8xf32>, tensor<8xf32>) outs(%c : tensor<f32>)"
    " -> tensor<f32>\n  %1 = tensor.extract %0[] : tensor<f32>\n  return %1 : f32\n}\n"
)
MATVEC = (
    "func.func @matvec(%x: tensor<4xf32> {secret.secret}) -> tensor<8xf32> {\n"
    "  %m = arith.constant dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0],"
    " [8.0, 9.0, 10.0, 11.0], [12.0, 13.0, 14.0, 15.0], [16.0, 17.0, 18.0, 19.0],"
    " [20.0, 21.0, 22.0, 23.0], [24.0, 25.0, 26.0, 27.0], [28.0, 29.0, 30.0, 31.0]]>"
    " : tensor<8x4xf32>\n  %o = arith.constant dense<0.0> : tensor<8xf32>\n"
    "  %0 = linalg.matvec ins(%m, %x : tensor<8x4xf32>, tensor<4xf32>) outs(%o : tensor<8xf32>)"
    " -> tensor<8xf32>\n  return %0 : tensor<8xf32>\n}\n"
)


@needs_heir
def test_a_lowered_dot_product_runs_on_ren():
    from ren.interop.heir.program import Program

    program = Program(parse(run_heir_opt(DOT, "--mlir-to-ckks")), seed=1)
    assert program.params.q_moduli == tuple(int(q) for q in _field(program, "Q"))  # as given
    rng = np.random.default_rng(3)
    a, b = rng.uniform(-1, 1, 8), rng.uniform(-1, 1, 8)
    got = program(a, b)
    assert abs(got - (np.dot(a, b) + 0.5)) < 2.0**-25


@needs_heir
def test_a_lowered_matrix_vector_product_runs_on_ren():
    from ren.interop.heir.program import Program

    program = Program(parse(run_heir_opt(MATVEC, "--mlir-to-ckks")), seed=2)
    x = np.random.default_rng(4).uniform(-1, 1, 4)
    got = program(x)
    want = np.arange(32.0).reshape(8, 4) @ x
    assert got.shape == (8,)
    assert np.max(np.abs(got - want)) < 2.0**-20  # values up to 100: 27 bits of them
    with pytest.raises(TypeError, match="takes 1 arguments, got 2"):
        program(x, x)


def _field(program, name: str) -> list[str]:
    import re

    text = program.module.op.attr("ckks.schemeParam").text
    return re.search(rf"{name} = \[([^\]]*)\]", text).group(1).split(",")
