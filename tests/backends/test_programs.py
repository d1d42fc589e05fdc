"""Whole programs on each compiled device (every kernel family) equal the python device and the
reference.

Runs with ``REN_VALIDATE=1``, so every compiled kernel is also compared word for word with the
NumPy backend as it runs. ``cuda`` runs on the GPU when there is one, else on the host emulator.
"""

import os
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ren import Poly, RingSpec, ntt_primes, realize
from ren.reference import evaluate
from tests.devices import COMPILED

RINGS = [
    pytest.param(RingSpec(8, (17, 97, 113)), id="N=8/limbs=3/u32"),
    pytest.param(RingSpec(64, ntt_primes(64, 30, 3)), id="N=64/limbs=3/u32"),
    pytest.param(RingSpec(64, ntt_primes(64, 60, 3)), id="N=64/limbs=3/u64"),
]


def programs(ring: RingSpec, device: str, coeffs_a, coeffs_b) -> list[Poly]:
    a, b = Poly(coeffs_a, ring, device), Poly(coeffs_b, ring, device)
    view = RingSpec(ring.n, ring.moduli[1:], ring.dtype)
    fresh = RingSpec(ring.n, ntt_primes(ring.n, 40, 2))
    return [
        a * b,
        (a * b + 3).rescale(),
        (a * b).rescale(ring.moduli[:2]),
        a.rotate(3) * b - a.conjugate(),
        a.to_ring(view).ntt() * 5,
        (a * 2 + 1).to_ring(fresh),
        (a * b).intt().contiguous() + b,
    ]


@pytest.mark.parametrize("device", COMPILED, indirect=True)
@pytest.mark.parametrize("ring", RINGS)
@settings(max_examples=4)
@given(data=st.data())
def test_programs_equal_python_and_reference(ring, device, data):
    small = st.integers(-1000, 1000)
    ca = data.draw(st.lists(small, min_size=ring.n, max_size=ring.n))
    cb = data.draw(st.lists(small, min_size=ring.n, max_size=ring.n))
    cpu, py = programs(ring, device, ca, cb), programs(ring, "python", ca, cb)
    want = [evaluate(p.node) for p in py]
    with mock.patch.dict(os.environ, {"REN_VALIDATE": "1"}):
        realize(*cpu)
    realize(*py)
    for c, p, w in zip(cpu, py, want, strict=True):
        assert c.device == device
        assert (c.limbs() == p.limbs()).all()
        assert c.tolist() == w
