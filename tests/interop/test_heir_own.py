"""Programs of our own in MLIR, as HEIR's users write them, lowered by heir-opt and run on Ren.

Three small networks' parts: a polynomial activation (a cubic fit of the sigmoid), a dense layer
(a 8 x 16 matrix, a bias, a square) and a 2D convolution (a 3 x 3 kernel over an 8 x 8 image),
each a function with ``{secret.secret}`` arguments. The oracle is NumPy on the same numbers: CKKS
within ``logDefaultScale - 20`` bits relative to ``max(1, max |reference|)`` (as
``test_heir_examples.py``), BGV exactly. HEIR's BGV pipeline refuses ``linalg.matvec`` and
``linalg.conv_2d_nchw_fchw`` on integers (its noise analysis has no rule for the linear
transform they become), so the integer convolution is written as HEIR's own examples write such
kernels: the image flattened, each tap a ``tensor_ext.rotate`` and a product by its weight.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ren.interop import heir
from ren.interop.heir.tools import find_heir_opt

pytestmark = pytest.mark.skipif(
    find_heir_opt() is None, reason="heir-opt not installed (pip install -e .[heir])"
)

ACTIVATION = """
func.func @activation(%x: tensor<16xf32> {secret.secret}) -> tensor<16xf32> {
  %c0 = arith.constant dense<0.5> : tensor<16xf32>
  %c1 = arith.constant dense<0.197> : tensor<16xf32>
  %c3 = arith.constant dense<-0.004> : tensor<16xf32>
  %x2 = arith.mulf %x, %x : tensor<16xf32>
  %x3 = arith.mulf %x2, %x : tensor<16xf32>
  %t1 = arith.mulf %x, %c1 : tensor<16xf32>
  %t3 = arith.mulf %x3, %c3 : tensor<16xf32>
  %s = arith.addf %t1, %t3 : tensor<16xf32>
  %y = arith.addf %s, %c0 : tensor<16xf32>
  return %y : tensor<16xf32>
}
"""

KERNEL = np.array([[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]])  # Sobel's, along x


def _dense(values: np.ndarray) -> str:
    """``values`` as MLIR's nested list (exact in ``f32``: eighths)."""
    if values.ndim == 0:
        return repr(float(values))
    return "[" + ", ".join(_dense(v) for v in values) + "]"


def mlp(w: np.ndarray, b: np.ndarray) -> str:
    """A dense layer ``(w x + b)^2``, ``w`` 8 x 16 and ``b`` written into the source."""
    return f"""
func.func @mlp(%x: tensor<16xf32> {{secret.secret}}) -> tensor<8xf32> {{
  %w = arith.constant dense<{_dense(w)}> : tensor<8x16xf32>
  %b = arith.constant dense<{_dense(b)}> : tensor<8xf32>
  %0 = linalg.matvec ins(%w, %x : tensor<8x16xf32>, tensor<16xf32>) outs(%b : tensor<8xf32>)
    -> tensor<8xf32>
  %1 = arith.mulf %0, %0 : tensor<8xf32>
  return %1 : tensor<8xf32>
}}
"""


CONV = f"""
func.func @conv(%x: tensor<1x1x8x8xf32> {{secret.secret}}) -> tensor<1x1x6x6xf32> {{
  %k = arith.constant dense<[[{_dense(KERNEL)}]]> : tensor<1x1x3x3xf32>
  %z = arith.constant dense<0.0> : tensor<1x1x6x6xf32>
  %0 = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : vector<2xi64>,
    strides = dense<1> : vector<2xi64>}} ins(%x, %k : tensor<1x1x8x8xf32>, tensor<1x1x3x3xf32>)
    outs(%z : tensor<1x1x6x6xf32>) -> tensor<1x1x6x6xf32>
  return %0 : tensor<1x1x6x6xf32>
}}
"""


def conv_rotations(element: str) -> str:
    """The 3 x 3 convolution on the flattened 8 x 8 image: ``sum k[a, b] rotate(x, 8 a + b)``.

    Every one of the 64 outputs is computed, those past the image's edge wrapping around; the
    valid 6 x 6 are ``out[8 i + j]``, ``i, j < 6``.
    """
    t = f"tensor<64x{element}>"
    lines = [f"func.func @conv(%x: {t} {{secret.secret}}) -> {t} {{"]
    terms = []
    for (a, b), k in np.ndenumerate(KERNEL):
        if k == 0:
            continue
        weight = f"{k:.1f}" if element == "f32" else str(int(k))
        name, src = f"{a}{b}", "%x"
        if 8 * a + b:
            lines += [f"  %c{name} = arith.constant {8 * a + b} : index",
                      f"  %r{name} = tensor_ext.rotate %x, %c{name} : {t}, index"]  # fmt: skip
            src = f"%r{name}"
        op = "arith.mulf" if element == "f32" else "arith.muli"
        lines += [f"  %k{name} = arith.constant dense<{weight}> : {t}",
                  f"  %t{name} = {op} {src}, %k{name} : {t}"]  # fmt: skip
        terms.append(f"%t{name}")
    add = "arith.addf" if element == "f32" else "arith.addi"
    acc = terms[0]
    for i, term in enumerate(terms[1:]):
        lines.append(f"  %s{i} = {add} {acc}, {term} : {t}")
        acc = f"%s{i}"
    return "\n".join([*lines, f"  return {acc} : {t}", "}", ""])


def conv_reference(x: np.ndarray) -> np.ndarray:
    """``sum_{a, b} k[a, b] x[i + a, j + b]``, no flip (``linalg``'s convolution)."""
    return sum(k * x[a : a + 6, b : b + 6] for (a, b), k in np.ndenumerate(KERNEL))


def rotated_reference(x: np.ndarray) -> np.ndarray:
    """``conv_rotations`` on NumPy: the 64 sums, the edges wrapped."""
    flat = x.ravel()
    return sum(k * np.roll(flat, -(8 * a + b)) for (a, b), k in np.ndenumerate(KERNEL))


def _check_ckks(program, got, want) -> None:
    got = np.asarray(got, dtype=np.float64).reshape(np.shape(want))
    error = float(np.max(np.abs(got - want)))
    bits = math.inf if error == 0 else -math.log2(error / max(1.0, float(np.max(np.abs(want)))))
    bound = max(15, program.params.scale_bits - 20)
    assert bits >= bound, f"{bits:.1f} bits, under {bound}"


def test_a_polynomial_activation():
    program = heir.compile(ACTIVATION, "ckks", seed=1)
    x = np.random.default_rng(0).uniform(-4, 4, 16)
    _check_ckks(program, program(x), 0.5 + 0.197 * x - 0.004 * x**3)


def test_a_dense_layer_with_its_bias_and_a_square():
    rng = np.random.default_rng(1)
    w, b = rng.integers(-8, 9, (8, 16)) / 8, rng.integers(-4, 5, 8) / 8
    program = heir.compile(mlp(w, b), "ckks", seed=1)
    x = rng.uniform(-1, 1, 16)
    _check_ckks(program, program(x), (w @ x + b) ** 2)


def test_a_2d_convolution_as_linalg_writes_it():
    program = heir.compile(CONV, "ckks", seed=1)
    x = np.random.default_rng(2).uniform(-1, 1, (8, 8))
    _check_ckks(program, program(x.reshape(1, 1, 8, 8)), conv_reference(x).reshape(1, 1, 6, 6))


def test_a_2d_convolution_by_rotations_on_ckks():
    program = heir.compile(conv_rotations("f32"), "ckks", seed=1)
    x = np.random.default_rng(3).uniform(-1, 1, (8, 8))
    got = np.asarray(program(x.ravel()))
    _check_ckks(program, got, rotated_reference(x))
    valid = got.reshape(8, 8)[:6, :6]  # the convolution itself, inside the image
    assert np.max(np.abs(valid - conv_reference(x))) < 2.0**-15


def test_a_2d_convolution_by_rotations_on_bgv_is_exact():
    program = heir.compile(conv_rotations("i16"), "bgv", seed=1)
    x = np.random.default_rng(4).integers(-8, 9, (8, 8))
    got = np.asarray(program(x.ravel()))
    assert np.array_equal(got, rotated_reference(x).astype(np.int64))
    assert np.array_equal(got.reshape(8, 8)[:6, :6], conv_reference(x))
