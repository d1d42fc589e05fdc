"""``ckks.Params.choose``: the smallest secure chain for a depth and a precision, and its reasons.

The oracle: the chosen parameters run the chain of products they were chosen for (fresh values
of magnitude at most 1, each product relinearized and rescaled), and the decryption, compared with
the exact product in NumPy, must measure at least the precision asked; the security check of
``ckks.Params`` itself (``insecure=False``) must accept them.
"""

from __future__ import annotations

import numpy as np
import pytest

from ren.schemes import ckks
from ren.schemes.ckks import choose
from ren.schemes.rlwe.security import SECURITY_BOUNDS


@pytest.mark.parametrize(("depth", "bits"), [(1, 20), (2, 30), (4, 20)])
def test_chosen_parameters_measure_the_precision_asked(depth: int, bits: int) -> None:
    params = ckks.Params.choose(depth=depth, precision_bits=bits)
    assert not params.insecure and params.max_level == depth
    assert params.log2_qp <= SECURITY_BOUNDS[params.n]
    assert choose.measured_chain(params, depth) >= bits


@pytest.mark.parametrize("bits", [20, 30])
def test_every_depth_to_twenty_is_secure_and_predicted_to_hold(bits: int) -> None:
    previous = 0
    for depth in range(1, 21):
        params = ckks.Params.choose(depth=depth, precision_bits=bits)
        assert params.log2_qp <= SECURITY_BOUNDS[params.n], depth
        assert params.n >= previous  # more depth never fits a smaller ring
        previous = params.n
        assert choose.chain_precision(params, depth)[-1] >= bits + choose.MARGIN


def test_explain_says_how_it_was_chosen_and_what_each_depth_keeps() -> None:
    params = ckks.Params.choose(depth=3, precision_bits=25, slots=4096)
    text = params.explain()
    assert "how it was chosen" in text and "n=8192" in text and "chosen: n=" in text
    assert "depth 3:" in text and f"log2(QP) = {params.log2_qp:.1f}" in text
    plain = ckks.Params(n=8192, q_bits=(50, 40, 40), p_bits=(60,)).explain()
    assert "depth 2:" in plain and "how it was chosen" not in plain


def test_requirements_no_secure_chain_holds_are_refused_with_what_would_fit() -> None:
    with pytest.raises(ValueError, match=r"at n=65536 the most a secure chain of depth 3 .* 33"):
        ckks.Params.choose(depth=3, precision_bits=45)
    with pytest.raises(ValueError, match="both reaches it and fits its bound"):
        ckks.Params.choose(depth=40, precision_bits=30)
    assert ckks.Params.choose(depth=3, precision_bits=45 - 12, secure=False).insecure


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(depth=1.5, precision_bits=20), TypeError, "depth must be an int"),
        (dict(depth=-1, precision_bits=20), ValueError, "depth must be from 0 to 60"),
        (dict(depth=2, precision_bits="20"), TypeError, "precision_bits must be a number"),
        (dict(depth=2, precision_bits=80), ValueError, "precision_bits must be from 1 to 51"),
        (dict(depth=2, precision_bits=20, slots=0), ValueError, "slots must be from 1"),
        (dict(depth=2, precision_bits=20, secure=1), TypeError, "secure must be True or False"),
    ],
)
def test_bad_requirements_name_the_argument(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        ckks.Params.choose(**kwargs)


def _logistic_step(x: ckks.Ciphertext, w: np.ndarray) -> ckks.Ciphertext:
    z = ckks.inner_product(x, w)  # w . x in every slot
    return 0.5 + 0.197 * z - 0.004 * (z * z * z)  # the sigmoid's degree-3 fit on [-8, 8]


def test_for_program_chooses_for_the_program_and_it_measures_what_was_asked() -> None:
    rng = np.random.default_rng(31)
    xs, w = rng.uniform(-1, 1, 256), rng.uniform(-1, 1, 256) / 64
    params = ckks.Params.for_program(lambda x: _logistic_step(x, w), xs, precision_bits=20)
    assert not params.insecure and "the program takes" in params.explain()
    with ckks.Context(params, seed=32, device="cpu") as ctx:
        out = _logistic_step(ctx.encrypt(xs), w)
        got = ctx.decrypt(out).real
    z = float(np.dot(w, xs))
    assert ckks.precision_bits(got[:256], np.full(256, 0.5 + 0.197 * z - 0.004 * z**3)) >= 20
    assert ckks.predicted_precision(out) >= 20


def test_for_program_names_what_it_cannot_take() -> None:
    with pytest.raises(TypeError, match="fn must be callable"):
        ckks.Params.for_program(3, np.zeros(4), precision_bits=20)
    with pytest.raises(ValueError, match="at least one example input"):
        ckks.Params.for_program(lambda x: x, precision_bits=20)
    with pytest.raises(TypeError, match=r"return a ckks\.Ciphertext"):
        ckks.Params.for_program(lambda x: 3, np.zeros(4), precision_bits=20)


def test_the_recorded_choices_fit_rings_no_larger_than_openfhes_and_measure_what_was_asked():
    """``benchmarks/choose.py``'s figures: OpenFHE 1.6.1's ring for each depth, in the same run."""
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "figures" / "choose-2026-11-29.json"
    figures = json.loads(path.read_text(encoding="utf-8"))
    assert len(figures["rows"]) == 40 and figures["openfhe"]
    for row in figures["rows"]:
        assert row["n"] <= figures["openfhe"][str(row["depth"])], row
        assert row["log2_qp"] <= SECURITY_BOUNDS[row["n"]]
        assert row.get("measured_bits", row["precision_bits"]) >= row["precision_bits"], row
    for row in figures["rows"][::7]:  # Ren chooses today what it chose then
        p = ckks.Params.choose(depth=row["depth"], precision_bits=row["precision_bits"])
        assert (p.n, list(p.q_bits), p.dnum) == (row["n"], row["q_bits"], row["dnum"])
