"""heir-py's Python frontend on Ren (``ren.interop.heir.frontend``): decorated functions, run.

The oracle: NumPy's value of the same Python function (``f.original``), within the precision the
program's chain gives (CKKS), or exactly (BGV). The encrypt/eval/decrypt path is checked against
``f(...)`` bit for bit (the same seed gives the same keys and randomness). The tests need heir-py,
numba (its tracer) and heir-opt, the ``heir`` extra, and skip without.

No ``from __future__ import annotations`` here: heir-py reads a function's annotations as types.
"""

import subprocess
import sys

import numpy as np
import pytest

from ren.interop.heir import frontend
from ren.interop.heir.tools import find_heir_opt


def compiler():
    """heir-py's ``compile`` and its types, or a skip naming what is missing."""
    pytest.importorskip("numba", reason="heir-py's frontend needs numba: pip install -e .[heir]")
    pytest.importorskip("heir", reason="needs heir-py: pip install -e .[heir]")
    if find_heir_opt() is None:
        pytest.skip("heir-opt not installed (pip install -e .[heir])")
    from heir import compile
    from heir import mlir as types

    return compile, types


def bound(f) -> float:
    """The CKKS error bound for values of size about 1: 20 bits below the scale.

    Fresh encryption noise is about N·σ ≈ 2^10 over the scale (N = 2^13 or 2^14), and a product's
    rescaling adds about as much again; 20 bits leave room for both and a few additions.
    """
    return 2.0 ** -(f.context.params.scale_bits - 20)


@pytest.fixture(scope="module")
def squares():
    """``x*x - y*y`` over two secret tensors of 8 (CKKS, seed 1)."""
    compile, t = compiler()

    @compile(scheme="ckks", backend=frontend.Ren(seed=1))
    def squares(x: t.Secret[t.Tensor[[8], t.F32]], y: t.Secret[t.Tensor[[8], t.F32]]):
        return x * x - y * y

    return squares


def test_the_module_imports_without_heir_and_the_backend_names_the_extra():
    script = (
        "import sys; sys.modules['numba'] = sys.modules['heir'] = None\n"  # as if not installed
        "from ren.interop.heir.frontend import Ren\n"
        "try:\n    Ren()\nexcept ImportError as e:\n    print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "needs heir and numba: pip install -e .[heir]" in done.stdout


def test_x_squared_plus_y_matches_numpy():
    compile, t = compiler()

    @compile(scheme="ckks", backend=frontend.Ren(seed=2))
    def f(x: t.Secret[t.F32], y: t.Secret[t.F32]):
        return x * x + y

    for a, b in [(0.5, -0.3), (-0.9, 0.7)]:
        assert abs(f(a, b) - f.original(a, b)) < bound(f)
    assert abs(f(y=-0.3, x=0.5) - (0.25 - 0.3)) < bound(f)  # by name, as to the function
    with pytest.raises(TypeError, match="misses argument"):
        f(0.5)


def test_step_by_step_equals_the_call(squares):
    rng = np.random.default_rng(3)
    a, b = rng.uniform(-1, 1, 8), rng.uniform(-1, 1, 8)
    whole = squares(a, b)
    assert whole.shape == (8,)
    assert np.max(np.abs(whole - squares.original(a, b))) < bound(squares)
    squares.setup()  # the same seed: the same keys and randomness as the call's own setup
    ex, ey = squares.encrypt_x(a), squares.encrypt_y(b)
    assert (ex.identifier, ey.identifier) == ("x", "y")  # heir.interfaces.EncValue
    assert np.array_equal(squares.decrypt_result(squares.eval(ex, ey)), whole)
    assert np.max(np.abs(squares.cleartext(a, b) - squares.original(a, b))) < 1e-6  # float32


def test_swapped_or_plain_secret_arguments_are_refused(squares):
    compile, t = compiler()

    @compile(scheme="ckks", backend=frontend.Ren(seed=4))
    def fresh(x: t.Secret[t.F32]):
        return x * x

    with pytest.raises(RuntimeError, match=r"setup\(\) before"):
        fresh.encrypt_x(0.5)
    a = np.linspace(-1, 1, 8)
    squares.setup()
    ex, ey = squares.encrypt_x(a), squares.encrypt_y(a)
    with pytest.raises(ValueError, match="Expected EncValue for identifier x, got EncValue for y"):
        squares.eval(ey, ex)
    with pytest.raises(ValueError, match="Expected EncValue for argument 1"):
        squares.eval(ex, a)
    with pytest.raises(TypeError, match="takes 2 arguments, got 1"):
        squares.eval(ex)
    with pytest.raises(AttributeError, match="no secret argument 'z'"):
        squares.encrypt_z(a)


def test_a_polynomial_activation_and_a_public_weight():
    compile, t = compiler()

    @compile(scheme="ckks", backend=frontend.Ren(seed=5))
    def act(x: t.Secret[t.F64]):
        return x * x * x * 0.5 + x * 0.25 + 1.0

    @compile(scheme="ckks", backend=frontend.Ren(seed=6))
    def weighted(x: t.Secret[t.Tensor[[8], t.F64]], w: t.Tensor[[8], t.F64]):
        return x * x + x * w  # w is plain: passed to eval as it is

    for v in (-1.0, 0.3):
        assert abs(act(v) - act.original(v)) < bound(act)
    x, w = np.linspace(-1, 1, 8), np.arange(8) / 8
    assert np.max(np.abs(weighted(x, w) - weighted.original(x, w))) < bound(weighted)
    weighted.setup()
    with pytest.raises(AttributeError, match="no secret argument 'w'"):
        weighted.encrypt_w(w)


@pytest.mark.parametrize("scheme", ["bgv", "bfv"])
def test_bgv_and_bfv_are_exact(scheme):
    compile, t = compiler()

    @compile(scheme=scheme, backend=frontend.Ren(seed=7))
    def f(x: t.Secret[t.Tensor[[8], t.I16]], y: t.Secret[t.Tensor[[8], t.I16]]):
        return x * x - y * y

    a = np.arange(-4, 4, dtype=np.int16)
    b = np.arange(8, dtype=np.int16)[::-1].copy()
    assert np.array_equal(f(a, b), f.original(a, b))
