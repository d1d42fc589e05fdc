"""HEIR's example programs and what each computes, on NumPy: the oracle of ``heir_examples.py``.

Each ``Example`` names a source under HEIR's ``tests/Examples`` (``path``), the function it
defines written again by hand on NumPy from the MLIR (``reference``: linalg, arith and tensor ops
as NumPy, the element type's semantics included: an ``i16`` result wraps to 16 bits), and its
arguments (``inputs``: a seeded generator, the shapes of the function's signature, values in the
range the example's own test harness uses). ``harness`` is that harness's inputs and expected
output (HEIR's C++ and Go tests beside the example), a check of the reference itself.

Values stay small, for both schemes: BGV computes modulo the plaintext modulus (65537 by
default), so a result past +-32768 would not be the ``i16`` the function returns; and HEIR's
default CKKS chain (a first modulus of 55 bits, a scale of 2^45) leaves a value about 10 bits
above its scale, so one past +-2^9 wraps (``cmux`` of 702 decrypts to 702 - 1024 = -322). The
integer examples keep every value they make within +-2^9. Large constants (a 16 x 16
matrix written as hex bytes, a convolution's filter) are read from the source by ``constants``;
everything else is written here. The sources are HEIR's (Apache-2.0); a copy of each is in
``tests/interop/heir_examples/``, under its path in HEIR's tree.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable
from typing import Any

import numpy as np

Rng = np.random.Generator


def wrap(x: Any, bits: int = 16) -> np.ndarray:
    """``x`` as a signed ``bits``-bit integer: ``((x + 2^(b-1)) mod 2^b) - 2^(b-1)``."""
    if bits >= 64:
        return np.asarray(np.rint(x), dtype=np.int64)
    half = 1 << (bits - 1)
    return (np.asarray(np.rint(x), dtype=np.int64) + half) % (2 * half) - half


_DTYPES = {"f32": "<f4", "f64": "<f8", "i8": "i1", "i16": "<i2", "i32": "<i4", "i64": "<i8"}
_CONSTANT = re.compile(
    r"%([\w.$-]+)\s*=\s*arith\.constant\s+dense<(.*?)>\s*:\s*tensor<((?:\d+x)*)(\w+)>", re.S
)


def constants(source: str) -> dict[str, np.ndarray]:
    """The ``arith.constant dense<...> : tensor<...>`` values of ``source``, by SSA name.

    A splat, nested lists, or a hex string of the elements' little-endian bytes (MLIR's form for
    a large tensor), each shaped as its type says.
    """
    out = {}
    for name, body, dims, element in _CONSTANT.findall(source):
        shape = tuple(int(d) for d in dims.split("x") if d)
        dtype = np.dtype(_DTYPES.get(element, "<f8"))
        body = body.strip()
        if body.startswith('"0x'):
            flat = np.frombuffer(bytes.fromhex(body[3:-1]), dtype=dtype).astype(np.float64)
        else:
            flat = np.asarray(ast.literal_eval(re.sub(r"\s+", " ", body)), dtype=np.float64)
        out[name] = np.broadcast_to(flat, shape).copy() if flat.size == 1 else flat.reshape(shape)
    return out


def conv_nchw(x: np.ndarray, w: np.ndarray, stride: int = 1, dilation: int = 1) -> np.ndarray:
    """``linalg.conv_2d_nchw_fchw`` of stride ``s`` and dilation ``d``.

    ``out[n, f, i, j] = sum_{c, a, b} x[n, c, s i + d a, s j + d b] w[f, c, a, b]``.
    """
    _, _, h, wd = x.shape
    _, _, kh, kw = w.shape
    oh = (h - dilation * (kh - 1) - 1) // stride + 1
    ow = (wd - dilation * (kw - 1) - 1) // stride + 1
    out = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for a in range(kh):
        for b in range(kw):
            i, j = a * dilation, b * dilation
            patch = x[
                :, :, i : i + stride * (oh - 1) + 1 : stride, j : j + stride * (ow - 1) + 1 : stride
            ]
            out += np.einsum("ncij,fc->nfij", patch, w[:, :, a, b])
    return out


def conv_ncw(x: np.ndarray, w: np.ndarray, stride: int = 1, dilation: int = 1) -> np.ndarray:
    """``linalg.conv_1d_ncw_fcw``: ``conv_nchw`` of a height of one."""
    return conv_nchw(x[:, :, None, :], w[:, :, None, :], stride, dilation)[:, :, 0, :]


def correlate(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``linalg.conv_1d`` and ``linalg.conv_2d``: ``out[i..] = sum_k x[i+k..] w[k..]`` (no flip)."""
    conv = conv_ncw if x.ndim == 1 else conv_nchw
    return conv(x[None, None], w[None, None])[0, 0]


def roll(x: np.ndarray, k: int) -> np.ndarray:
    """``tensor_ext.rotate x, k``: slot ``i`` takes slot ``i + k`` (a rotation to the left)."""
    return np.roll(x, -k, axis=-1)


def uniform(*shape: int, low: float = -1.0, high: float = 1.0) -> Callable[[Rng], np.ndarray]:
    return lambda rng: rng.uniform(low, high, shape)


def small_ints(*shape: int, bound: int = 10) -> Callable[[Rng], np.ndarray]:
    return lambda rng: rng.integers(-bound, bound + 1, shape)


def _product_args(count: int) -> Callable[[Rng], tuple]:
    """``count`` scalars of +-1 and +-2, at most 7 of them 2: the product within 2^7."""

    def make(rng: Rng) -> tuple:
        values = rng.choice([-1, 1], count) * np.where(rng.random(count) < 0.3, 2, 1)
        while np.count_nonzero(np.abs(values) == 2) > 7:
            values[np.argmax(np.abs(values))] //= 2
        return tuple(int(v) for v in values)

    return make


@dataclasses.dataclass(frozen=True)
class Example:
    """One of HEIR's examples: its source, its function on NumPy and its arguments.

    ``reference(c, *args)`` takes ``c``, the source's ``constants``; ``inputs(rng)`` gives the
    arguments. ``integer``: the result is an integer type of that many bits (compared exactly
    under BGV, after ``wrap``). ``heavy``: a long run, left out of ``--quick``, and why.
    ``note``: what else to know of the example.
    """

    name: str
    path: str
    reference: Callable[..., Any]
    inputs: Callable[[Rng], tuple]
    integer: int | None = None
    harness: tuple[tuple, Any] | None = None
    heavy: str = ""
    note: str = ""

    def arguments(self, seed: int = 0) -> tuple:
        """The arguments from a seeded generator (``seed``)."""
        return self.inputs(np.random.default_rng(seed))

    def expected(self, source: str, *args: Any) -> np.ndarray:
        """The reference's value on ``args``, wrapped to the result's integer type if any."""
        out = np.asarray(self.reference(constants(source), *args), dtype=np.float64)
        return wrap(out, self.integer) if self.integer else out


def _args(*makers: Callable[[Rng], Any]) -> Callable[[Rng], tuple]:
    return lambda rng: tuple(m(rng) for m in makers)


def _bsgs(v: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``sum_g rotate(sum_b rotate(v, 64 b) * d[8 g + b], 512 g)``, ``b, g`` in ``0..7``."""
    return sum(
        roll(sum(roll(v, 64 * b) * d[8 * g + b] for b in range(8)), 512 * g) for g in range(8)
    )


def _chained(c: dict, x: np.ndarray, p4: np.ndarray, p224: np.ndarray) -> np.ndarray:
    """Rotom's chained_matmul: two products by 64 diagonals, each in baby and giant steps.

    The source is 428 lines of that shape (extract_slice, rotate, mulf, addf), written out.
    """
    return _bsgs(_bsgs(x[0], p4), p224)[None, :]


def _conv_padded_1d(c: dict, x: np.ndarray) -> np.ndarray:
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1)))
    return conv_ncw(xp, c["filter"]) + c["bias"][None, :, None]


def _conv_padded_2d(c: dict, x: np.ndarray) -> np.ndarray:
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    return conv_nchw(xp, c["filter"]) + c["bias"][None, :, None, None]


def _custom(c: dict, x, a1, a2, a3, a4) -> np.ndarray:
    r = roll(x, 4)
    return x * a1 + r * a2 + roll(x * a3 + r * a4, 8)


def _cross_level(c: dict, base: np.ndarray, add: np.ndarray) -> np.ndarray:
    v = base + add
    for _ in range(3):
        v = v * v + add
    return v


_M84 = np.arange(32.0).reshape(8, 4)
_PACKING = "a matrix of 512 rows: 10 to 15 s (minutes while the client's packing ran per element)"
_ONES = np.ones


def _ex(name: str, path: str, ref, inputs, **kw) -> Example:
    return Example(name, path, ref, inputs, **kw)


# fmt: off
_HALF = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
_CUSTOM_M = np.arange(16.0).reshape(4, 4).T.ravel()  # the 4 x 4 matrix 0..15, column-major
_CUSTOM_D = (
    [0.0] * 4 + [5.0] * 4 + [10.0] * 4 + [15.0] * 4,
    [4.0] * 4 + [9.0] * 4 + [14.0] * 4 + [3.0] * 4,
    [2.0] * 4 + [7.0] * 4 + [8.0] * 4 + [13.0] * 4,
    [6.0] * 4 + [11.0] * 4 + [12.0] * 4 + [1.0] * 4,
)
_CUSTOM_OUT = [56, 152, 248, 344, 62, 174, 286, 398, 68, 196, 324, 452, 74, 218, 362, 506]
_PADDED_1D = [0.0, 0.35, 0.25, 0.15, 0.05, -0.05, -0.15, 1.35, -1.4, -0.7, -0.75, -0.8, -0.85,
              -0.9, -0.95, -0.6, 0.0, -0.7, -0.7, -0.7, -0.7, -0.7, -0.7, -1.5]
# channel c holds 0.0 .. 1.5 turned left by 5 c
_PADDED_2D_IN = [((i + 5 * c) % 16) / 10 for c in range(4) for i in range(16)]
_PADDED_2D_OUT = [
    -0.35, -1.85, -0.20, 2.10, -0.20, 4.80, -0.10, -0.80, -1.20, -2.80, -2.90, 0.80, 0.80, 0.90,
    2.40, -0.30, 2.70, -0.40, -2.05, -2.45, -1.75, -3.05, -0.65, 2.05, 1.85, 2.55, -0.65, -3.15,
    -1.05, -1.35, -1.30, 0.20, -1.00, 0.80, 4.10, 1.00, 4.20, 1.10, -1.20, -1.10, -0.60, -0.10,
    1.60, 3.90, 1.60, 0.90, -0.75, -1.55, -0.45, -1.75, -1.75, 0.95, -2.35, -0.25, 4.50, 0.00,
    0.45, -1.25, -2.90, -1.80, -0.50, 0.90, 1.80, 2.70,
]

EXAMPLES: tuple[Example, ...] = (
    # -- common/: the shared sources, lowered for every backend
    _ex("dot_product_8f", "common/dot_product_8f.mlir", lambda c, a, b: np.dot(a, b) + 0.1,
        _args(uniform(8), uniform(8)), harness=((_HALF, [v + 0.1 for v in _HALF]), 2.5)),
    _ex("dot_product_8", "common/dot_product_8.mlir", lambda c, a, b: np.dot(a, b),
        _args(small_ints(8, bound=7), small_ints(8, bound=7)), integer=16,
        harness=((list(range(1, 9)), list(range(2, 10))), 240)),
    _ex("matmul", "common/matmul.mlir", lambda c, a, b: a @ b, _args(uniform(3, 5), uniform(5, 2))),
    _ex("bicyclic_matmul", "common/bicyclic_matmul.mlir", lambda c, a, b: a @ b,
        _args(uniform(16, 17), uniform(17, 19))),
    _ex("bicyclic_matmul_pt", "common/bicyclic_matmul_pt.mlir", lambda c, a, b: a @ b,
        _args(uniform(13, 14), uniform(14, 16))),
    _ex("bicyclic_matmul_chain", "common/bicyclic_matmul_chain.mlir",
        lambda c, a, b, d: (a @ b) @ d, _args(uniform(13, 18), uniform(18, 16), uniform(16, 9))),
    _ex("matvec", "common/matvec.mlir", lambda c, x: c["matrix"] @ x + c["cst_1"],
        _args(uniform(16)), note="its harness: e_0 gives -0.35219 in slot 0"),
    _ex("matvec_8x4", "common/matvec_8x4.mlir", lambda c, x: _M84 @ x, _args(uniform(4)),
        harness=(([1.0, 2.0, 3.0, 4.0],), [20, 60, 100, 140, 180, 220, 260, 300])),
    _ex("matvec_512x512", "common/matvec_512x512.mlir", lambda c, x: _ONES((512, 512)) @ x,
        _args(uniform(512)), heavy=_PACKING),
    _ex("matvec_512x784", "common/matvec_512x784.mlir", lambda c, x: _ONES((512, 784)) @ x,
        _args(uniform(784)), heavy=_PACKING),
    _ex("conv1d_ncw", "common/conv1d_ncw.mlir",
        lambda c, x: conv_ncw(x, _ONES((8, 1, 2)), stride=2), _args(uniform(1, 1, 4)),
        harness=((np.arange(4.0).reshape(1, 1, 4),), [[[1.0, 5.0]] * 8])),
    _ex("conv1d_ncw_padded", "common/conv1d_ncw_padded.mlir", _conv_padded_1d,
        _args(uniform(1, 2, 8)),
        harness=(((np.arange(16.0) / 10).reshape(1, 2, 8),), np.reshape(_PADDED_1D, (1, 3, 8)))),
    _ex("conv2d_nchw_padded", "common/conv2d_nchw_padded.mlir", _conv_padded_2d,
        _args(uniform(1, 4, 4, 4)),
        harness=((np.reshape(_PADDED_2D_IN, (1, 4, 4, 4)),),
                 np.reshape(_PADDED_2D_OUT, (1, 4, 4, 4)))),
    _ex("conv2d_nchw_tall_1", "common/conv2d_nchw_tall_1.mlir",
        lambda c, x: conv_nchw(x, _ONES((8, 1, 2, 2)), stride=2), _args(uniform(1, 1, 4, 4)),
        harness=((np.arange(16.0).reshape(1, 1, 4, 4),), [[[[10, 18], [42, 50]]] * 8])),
    _ex("conv2d_nchw_tall_2", "common/conv2d_nchw_tall_2.mlir",
        lambda c, x: conv_nchw(x, _ONES((8, 1, 2, 2)), stride=2), _args(uniform(1, 1, 8, 8))),
    _ex("cmux", "common/cmux.mlir", lambda c, a, b, cond: a if cond else b,
        lambda rng: (int(rng.integers(-100, 101)), int(rng.integers(-100, 101)),
                     bool(rng.integers(0, 2))),
        integer=64, harness=((1, 2, True), 1)),
    _ex("mult_dep_8", "common/mult_dep_8.mlir", lambda c, x: x**8,
        lambda rng: (int(rng.choice([-2, 2])),), integer=16),
    _ex("mult_dep_16", "common/mult_dep_16.mlir", lambda c, x: x**8,
        lambda rng: (int(rng.choice([-2, 2])),), integer=16,
        note="returns %6 (x^8), not the last of its 15 products"),
    _ex("mult_indep_8", "common/mult_indep_8.mlir", lambda c, *a: np.prod(a), _product_args(8),
        integer=16),
    _ex("mult_indep_16", "common/mult_indep_16.mlir", lambda c, *a: np.prod(a), _product_args(16),
        integer=16),
    _ex("mult_indep_32", "common/mult_indep_32.mlir", lambda c, *a: np.prod(a), _product_args(32),
        integer=16),
    # -- lattigo/: sources of the Lattigo backend's tests
    _ex("binops", "lattigo/bgv/binops/binops.mlir", lambda c, a, b: roll((a + b) * b, 1),
        _args(small_ints(4, bound=15), small_ints(4, bound=15)), integer=16,
        harness=(([0, 1, 2, 3], [1, 2, 3, 4]), [6, 15, 28, 1])),
    _ex("ext_const", "lattigo/bgv/ext_const/ext_const.mlir", lambda c: [1, 2, 3, 4],
        lambda rng: (), integer=32, note="no secret: heir-opt warns, the program returns it"),
    _ex("cross_level_bgv", "lattigo/bgv/cross_level/cross_level.mlir", _cross_level,
        _args(small_ints(4, bound=1), small_ints(4, bound=1)), integer=16,
        harness=(([1, 0, 1, 0], [0, 1, 0, 1]), [1, 26, 1, 26]),
        note="its own bgv.schemeParam (logN 13, four moduli)"),
    _ex("cross_level_ckks", "lattigo/ckks/cross_level/cross_level.mlir", _cross_level,
        _args(uniform(4), uniform(4)), harness=(([1, 0, 1, 0], [0, 1, 0, 1]), [1, 26, 1, 26]),
        note="its own ckks.schemeParam (logN 14, logDefaultScale 45)"),
    _ex("linalg_dot", "lattigo/ckks/linalg_dot/linalg_dot.mlir", lambda c, a, b: np.dot(a, b),
        _args(uniform(1024), uniform(1024))),
    _ex("pad_dot", "lattigo/ckks/pad_dot/pad_dot.mlir",
        lambda c, a, b: np.dot(np.pad(a, (2, 1)), b), _args(uniform(5), uniform(8)),
        harness=(([0.1, 0.2, 0.3, 0.4, 0.5], [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]), 1.0)),
    _ex("matvec_preprocessed", "lattigo/ckks/preprocessing/matvec.mlir",
        lambda c, x, y: c["matrix"] @ x + y, _args(uniform(16), uniform(16))),
    _ex("conv1d_dilated", "lattigo/ckks/conv1d_dilated/conv1d_dilated.mlir",
        lambda c, x: conv_ncw(x, _ONES((4, 1, 3)), dilation=2), _args(uniform(1, 1, 28))),
    _ex("conv2d_dilated", "lattigo/ckks/conv2d_dilated/conv2d_dilated.mlir",
        lambda c, x: conv_nchw(x, _ONES((4, 1, 3, 3)), dilation=2), _args(uniform(1, 1, 10, 10))),
    _ex("conv2d_nchw_chain", "lattigo/ckks/conv2d_nchw_chain/conv2d_nchw_chain.mlir",
        lambda c, x: conv_nchw(conv_nchw(x, _ONES((1, 1, 2, 2))), _ONES((1, 1, 2, 1))),
        _args(uniform(1, 1, 4, 4)),
        harness=((np.arange(1.0, 17).reshape(1, 1, 4, 4),),
                 [[[[44, 52, 60], [76, 84, 92]]]])),
    # -- openfhe/: sources of the OpenFHE backend's tests
    _ex("conv_1d", "openfhe/ckks/conv_1d/conv_1d.mlir", lambda c, x, w: correlate(x, w),
        _args(uniform(8), uniform(4)),
        harness=(([0.0, *_HALF[:-1]], [1.0, -1.0, 0.0, 1.0]),
                 [0.2, 0.3, 0.4, 0.5, 0.6])),
    _ex("conv_2d", "openfhe/ckks/conv_2d/conv_2d.mlir", lambda c, x, w: correlate(x, w),
        _args(uniform(3, 3), uniform(2, 2)),
        harness=((np.full((3, 3), 0.1), np.full((2, 2), 0.1)), np.full((2, 2), 0.04))),
    _ex("convolution", "openfhe/ckks/convolution/convolution.mlir",
        lambda c, x, w: conv_nchw(x, w), _args(uniform(1, 1, 4, 4), uniform(2, 1, 3, 3)),
        harness=((np.arange(16.0).reshape(1, 1, 4, 4),
                  np.tile(np.arange(9.0), 2).reshape(2, 1, 3, 3)),
                 np.reshape([258, 294, 402, 438] * 2, (1, 2, 2, 2))),
        note="its output starts as tensor.empty: taken as zeros"),
    _ex("custom_arithmetization", "openfhe/ckks/custom_arithmetization/custom_arithmetization.mlir",
        _custom, _args(*[uniform(16)] * 5),
        harness=((_CUSTOM_M, *_CUSTOM_D), _CUSTOM_OUT)),
    _ex("chained_matmul", "openfhe/ckks/rotom/chained_matmul/chained_matmul.mlir", _chained,
        _args(uniform(1, 4096), uniform(64, 4096), uniform(64, 4096)),
        heavy="4096 values in 4 ciphertexts, 128 plaintext products: ~30 s"),
    _ex("ext_const_openfhe", "openfhe/ext_const/ext_const.mlir", lambda c: [1, 2, 3, 4],
        lambda rng: (), integer=32, note="the same source as lattigo/bgv/ext_const"),
    # -- plaintext/: the cleartext backend's own test
    _ex("tensor_extract", "plaintext/tensor_extract/tensor_extract.mlir", lambda c, x: x[0],
        _args(small_ints(8)), integer=16),
)

# fmt: on

BY_NAME = {e.name: e for e in EXAMPLES}
