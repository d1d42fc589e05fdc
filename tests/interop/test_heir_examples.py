"""HEIR's own example programs (its ``tests/Examples``), lowered by heir-opt and run on Ren.

The oracle: each example's function written again on NumPy (``benchmarks/heir_references.py``),
itself checked first against the inputs and outputs of HEIR's own test harnesses (the C++ and Go
tests beside each example), which needs no heir-opt. A CKKS result must be right to at least
``logDefaultScale - 20`` bits relative to ``max(1, max |reference|)``: the scale less what the
encryption noise, the rescales' rounding and the values' growth take (the chain is HEIR's, from
``ckks.schemeParam``); a BGV result exactly, as the function's integer type. The sources are
copies in ``heir_examples/`` (HEIR's, Apache-2.0, the first line of each says where from); the
examples run here take about a second each, ``benchmarks/heir_examples.py`` runs every one.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from ren.interop import heir
from ren.interop.heir.tools import find_heir_opt

ROOT = Path(__file__).resolve().parents[2]
COPIES = Path(__file__).resolve().parent / "heir_examples"


def _references():
    spec = importlib.util.spec_from_file_location(
        "heir_references", ROOT / "benchmarks" / "heir_references.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


refs = _references()

needs_heir = pytest.mark.skipif(
    find_heir_opt() is None, reason="heir-opt not installed (pip install -e .[heir])"
)

#: (example, scheme) run here: each about a second on a 2-CPU machine, keys and kernels included.
RUN = [
    ("dot_product_8f", "ckks"),
    ("dot_product_8", "ckks"),
    ("dot_product_8", "bgv"),
    ("matmul", "ckks"),
    ("bicyclic_matmul", "ckks"),
    ("bicyclic_matmul_pt", "ckks"),
    ("matvec_8x4", "ckks"),
    ("matvec", "ckks"),
    ("matvec_preprocessed", "ckks"),
    ("pad_dot", "ckks"),
    ("linalg_dot", "ckks"),
    ("custom_arithmetization", "ckks"),
    ("conv1d_ncw", "ckks"),
    ("conv1d_ncw_padded", "ckks"),
    ("conv2d_nchw_tall_1", "ckks"),
    ("conv2d_nchw_padded", "ckks"),
    ("conv2d_nchw_chain", "ckks"),
    ("conv_1d", "ckks"),
    ("conv_2d", "ckks"),
    ("convolution", "ckks"),
    ("cmux", "ckks"),
    ("cmux", "bgv"),
    ("binops", "ckks"),
    ("binops", "bgv"),
    ("mult_dep_8", "ckks"),
    ("mult_dep_8", "bgv"),
    ("mult_dep_8", "bfv"),  # HEIR multiplies two unrelinearized products here
    ("mult_dep_16", "bgv"),
    ("mult_indep_8", "bgv"),
    ("mult_indep_16", "bgv"),
    ("cross_level_ckks", "ckks"),
    ("cross_level_bgv", "bgv"),
    ("tensor_extract", "ckks"),
    ("tensor_extract", "bgv"),
    ("ext_const", "bgv"),
]

#: Bits of the scale a result may lose past the 20 every example is allowed: three squarings of
#: values up to 8 (each a product by up to 16 of the error before it).
MARGIN = {"cross_level_ckks": 8}

#: Why Ren gets a result wrong: each an xfail that must start to pass when mended (none now).
KNOWN: dict[tuple[str, str], str] = {}


def _example(name: str):
    example = refs.BY_NAME[name]
    return example, (COPIES / example.path).read_text()


def _arrays(args):
    return [np.asarray(a) if isinstance(a, list) else a for a in args]


# -- the references themselves, against HEIR's harnesses (no heir-opt needed)


@pytest.mark.parametrize("name", [e.name for e in refs.EXAMPLES if e.harness])
def test_each_reference_gives_what_heirs_own_harness_expects(name):
    example, text = _example(name)
    args, want = example.harness
    got = example.expected(text, *_arrays(args))
    assert np.allclose(got, np.asarray(want, dtype=np.float64).reshape(np.shape(got)), atol=1e-9)


def test_a_constant_written_as_hex_bytes_is_read_as_heirs_harness_reads_it():
    # openfhe/ckks/halevi_shoup_matvec: e_0 picks the matrix's first element, 0x5036cb3d =
    # 0.0992246866..., plus the bias's first, -0.451415330...: -0.35219 in slot 0.
    example, text = _example("matvec")
    got = example.expected(text, np.eye(16)[0])
    assert got[0] == pytest.approx(-0.35219, abs=1e-5)
    assert refs.constants(text)["matrix"].shape == (16, 16)


def test_integers_wrap_as_their_type():
    assert refs.wrap([32767, 32768, -32769, 65536 + 5], 16).tolist() == [32767, -32768, 32767, 5]
    assert refs.wrap([2**40], 64).tolist() == [2**40]


def test_every_example_has_its_copy_with_the_line_that_says_where_from():
    copies = {p.relative_to(COPIES).as_posix() for p in COPIES.rglob("*.mlir")}
    assert copies == {e.path for e in refs.EXAMPLES}
    for path in copies:
        first = (COPIES / path).read_text().splitlines()[0]
        assert first == f"// From HEIR's tests/Examples/{path} (Apache License 2.0)."


# -- the examples lowered and run on Ren


def _cases():
    for name, scheme in RUN:
        marks = []
        if (name, scheme) in KNOWN:
            marks.append(pytest.mark.xfail(reason=KNOWN[name, scheme], strict=True))
        yield pytest.param(name, scheme, id=f"{name}-{scheme}", marks=marks)


@needs_heir
@pytest.mark.parametrize(("name", "scheme"), list(_cases()))
def test_an_example_runs_on_ren_as_numpy_computes_it(name, scheme):
    example, text = _example(name)
    program = heir.compile(text, scheme, seed=1)
    args = example.arguments(0)
    want = example.expected(text, *args)
    got = np.asarray(program(*args), dtype=np.float64)
    assert got.size == want.size, f"a result of shape {got.shape}, not {want.shape}"
    got = got.reshape(want.shape)
    if scheme == "ckks":
        error = float(np.max(np.abs(got - want)))
        bits = math.inf if error == 0 else -math.log2(error / max(1.0, float(np.max(np.abs(want)))))
        bound = program.params.scale_bits - 20 - MARGIN.get(name, 0)
        assert bits >= max(15, bound), f"{bits:.1f} bits, under {bound}: {got} against {want}"
    else:
        wrong = np.flatnonzero(refs.wrap(got, example.integer) != want)
        assert wrong.size == 0, f"at {wrong}: {got.ravel()[wrong]} against {want.ravel()[wrong]}"
