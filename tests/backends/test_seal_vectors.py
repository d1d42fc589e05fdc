"""Ren's NTT and NTT-form products against vectors produced by Microsoft SEAL 4.4.

Each ``.npz`` (see ``tests/vectors/README.md``) holds two CKKS ciphertexts ``a`` and ``b`` in
coefficient form (plain residues) and in SEAL's NTT form, and SEAL's tensor product
``(a0*b0, a0*b1 + a1*b0, a1*b1)`` in NTT form. Both libraries use the smallest primitive ``2n``-th
root and the bit-reversed slot order, so the words must agree exactly. The vectors ship with the
tests (``tests/vectors``); ``REN_VECTORS`` names another folder of them.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from ren.ring import RingSpec
from ren.ring import arith as rk

SHIPPED = Path(__file__).resolve().parents[1] / "vectors"


def _vector_dir() -> Path:
    env = os.environ.get("REN_VECTORS")
    return Path(env) if env else SHIPPED


VECTORS = sorted(_vector_dir().glob("*.npz"))


def test_the_shipped_vectors_are_there():
    names = sorted(p.name for p in SHIPPED.glob("*.npz"))
    assert names == ["seal_n1024_60_40.npz", "seal_n16_30bit.npz", "seal_n2048_50_40_40.npz"]


def _load(path: Path) -> tuple[RingSpec, dict[str, np.ndarray]]:
    data = dict(np.load(path))
    n = data["a_coef"].shape[-1]
    return RingSpec(n, tuple(int(q) for q in data["moduli"])), data


def _ntt_words(ring: RingSpec, coef: np.ndarray) -> np.ndarray:
    """Ren's NTT (Montgomery words) of plain coefficient residues."""
    return rk.ntt(ring, rk.to_mont(ring, coef.astype(ring.np_dtype)))


def _id(path: Path) -> str:
    ring, _ = _load(path)
    return f"{path.stem}/N={ring.n}/limbs={ring.L}"


needs_vectors = pytest.mark.skipif(
    not VECTORS, reason=f"no SEAL vectors (*.npz) in {_vector_dir()} (REN_VECTORS)"
)


@needs_vectors
@pytest.mark.parametrize("path", VECTORS, ids=_id)
def test_ntt_matches_seal(path):
    ring, data = _load(path)
    for name in ("a", "b"):
        for c in range(2):
            got = rk.from_mont(ring, _ntt_words(ring, data[f"{name}_coef"][c]))
            np.testing.assert_array_equal(got, data[f"{name}_ntt"][c], err_msg=f"{name}{c}")
            back = rk.from_mont(ring, rk.intt(ring, rk.to_mont(ring, got)))
            np.testing.assert_array_equal(back, data[f"{name}_coef"][c])


@needs_vectors
@pytest.mark.parametrize("path", VECTORS, ids=_id)
def test_tensor_product_matches_seal(path):
    ring, data = _load(path)
    a = [_ntt_words(ring, data["a_coef"][c]) for c in range(2)]
    b = [_ntt_words(ring, data["b_coef"][c]) for c in range(2)]
    prod = [
        rk.mont_mul(ring, a[0], b[0]),
        rk.add(ring, rk.mont_mul(ring, a[0], b[1]), rk.mont_mul(ring, a[1], b[0])),
        rk.mont_mul(ring, a[1], b[1]),
    ]
    for c in range(3):
        got = rk.from_mont(ring, prod[c])
        np.testing.assert_array_equal(got, data["prod_ntt"][c], err_msg=f"component {c}")
