"""The noise model where a value is zero on most slots, or a composite's slope peaks on few.

* ``Plaintext.support`` (the slots a plaintext is not zero on) against NumPy's count, and a
  product by a plaintext of few nonzero slots predicted against the median of its measures (the
  exact values in NumPy): its error is the largest of that many draws, not of every slot.
* ``functions.sign``'s composite slopes (``composite.chain_slopes``) against central differences
  of the composed stages, and ``sign`` predicted within the tolerance of its measure, at its output
  and at each stage, on slots spread over its range, on slots all where its slope is largest
  (``|x| = 1``), on slots all near its gap, and on random ones.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ren.circuits.ckks import functions
from ren.circuits.ckks.composite import chain_slopes
from ren.ir.region import instances_of
from ren.schemes import ckks
from ren.viz.precision import measure_precision
from ren.viz.trace import record

P = np.polynomial.polynomial


@pytest.fixture(scope="module")
def secure() -> ckks.Context:
    params = ckks.Params(n=8192, q_bits=(55, 50, 50), p_bits=(60,), scale_bits=50)
    with ckks.Context(params, seed=5, device="cpu") as ctx:
        yield ctx


def test_the_encoder_counts_the_support(secure):
    rng = np.random.default_rng(1)
    for k in (0, 1, 7, secure.params.slots):
        v = np.zeros(secure.params.slots, dtype=complex)
        v[rng.choice(v.size, size=k, replace=False)] = rng.uniform(0.5, 1, size=k)
        assert secure.encode(v).support == np.count_nonzero(v) == k
    assert secure.encode(0.25).support == secure.params.slots  # a number fills every slot
    assert secure.encode([1.0, 0.0, 2.0]).support == 2  # the missing slots are zero


@pytest.mark.parametrize("k", [1, 16, 4096])
def test_a_product_by_few_slots_is_predicted_from_them(secure, k):
    rng = np.random.default_rng(k)
    slots = secure.params.slots
    measured, predicted = [], []
    for _ in range(15):  # the model predicts the median of the largest error
        # other slots each time: the model's secret is a random one, the context's is fixed
        p = np.zeros(slots, dtype=complex)
        p[rng.choice(slots, size=k, replace=False)] = np.exp(2j * np.pi * rng.uniform(size=k))
        x = rng.uniform(-1, 1, slots) + 1j * rng.uniform(-1, 1, slots)
        ct = secure.encrypt(x)
        # no rescale: its rounding is on every slot, as large as the encryption's error here
        out = ckks.multiply(ct, secure.encode(p, ct.level), rescale=False)
        measured.append(ckks.precision_bits(secure.decrypt(out), x * p))
        predicted.append(ckks.predicted_precision(out))  # the encoder's rounding: a few ulps
    assert max(predicted) - min(predicted) < 0.01
    got, want = float(np.median(measured)), float(np.median(predicted))
    assert abs(got - want) <= 0.75, (k, got, want, measured)


def test_fewer_slots_predict_more_bits(secure):
    slots = secure.params.slots
    ct = secure.encrypt(np.full(slots, 0.5))
    bits = []
    for k in (1, 16, slots):
        p = np.zeros(slots)
        p[:k] = 1.0
        out = ckks.multiply(ct, secure.encode(p, ct.level), rescale=False)
        bits.append(ckks.predicted_precision(out))
    assert bits[0] > bits[1] > bits[2]
    assert bits[0] - bits[2] > 1.5  # one draw against the largest of 4096


def test_sign_chain_is_the_composed_functions_slope():
    # the oracle: central differences of the composed stages (polyval after polyval), where the
    # model multiplies each stage's derivative on one grid
    stages = [functions.G3] * 3 + [functions.F3] * 2
    gap = functions.sign_gap(3)
    chain = chain_slopes(stages, (gap, 1.0))
    x0, h = np.linspace(gap, 1.0, 200001), 1e-6
    for i in range(len(stages)):
        xi = x0
        for j in range(i):
            xi = P.polyval(xi, stages[j])
        for k in range(i, len(stages)):
            hi, lo = xi + h, xi - h
            for j in range(i, k + 1):
                hi, lo = P.polyval(hi, stages[j]), P.polyval(lo, stages[j])
            slope = np.abs(hi - lo) / (2 * h)
            top, share = chain[i][k]
            assert top == pytest.approx(float(np.max(slope)), rel=1e-3), (i, k)
            want = float(np.mean(slope**2) / np.max(slope) ** 2)
            assert share == pytest.approx(want, rel=0.15), (i, k)  # a coarser grid of a peak
    # three g_3 steps carry an error by 56, far below the product of their own largest (6.9^3)
    assert 55 < chain[0][2][0] < 57 < 300 < chain[0][0][0] ** 3


@pytest.fixture(scope="module")
def deep() -> ckks.Context:
    params = ckks.Params(
        n=64, q_bits=(60,) + (40,) * 15, p_bits=(60,), scale_bits=40, insecure=True
    )
    with ckks.Context(params, seed=1) as ctx:
        yield ctx


def _spread(slots: int, gap: float) -> np.ndarray:
    half = np.linspace(gap, 1.0, slots // 2)
    return np.concatenate([-half, half])


@pytest.mark.parametrize("kind", ["spread", "at 1", "near the gap", "random"])
def test_sign_is_predicted_on_every_kind_of_slots(deep, kind):
    slots, gap = deep.params.slots, functions.sign_gap(3)
    rng = np.random.default_rng(len(kind))
    signs = np.where(np.arange(slots) % 2, 1.0, -1.0)
    xs = {
        "spread": _spread(slots, gap),
        "at 1": signs,
        "near the gap": signs * rng.uniform(gap, 2 * gap, slots),
        "random": signs * rng.uniform(gap, 1.0, slots),
    }[kind]
    with record() as trace:
        s = functions.sign(deep.encrypt(xs))
        got = deep.decrypt(s).real
    exact = xs  # the circuit's own values, in NumPy: the prediction is of its noise
    for coeffs in [functions.G3] * 3 + [functions.F3] * 2:
        exact = P.polyval(exact, coeffs)
    measured = ckks.precision_bits(got, exact)
    predicted = ckks.predicted_precision(s)
    assert math.isfinite(predicted)
    assert abs(measured - predicted) <= 2.0, (kind, measured, predicted)
    # and each stage, measured by the report against the same operations on NumPy's values
    measure_precision(trace, progress=False)
    stages = [
        instance.notes
        for instance in _instances(trace)
        if instance.name == "evaluate_polynomial" and "bits_predicted" in instance.notes
    ]
    assert len(stages) == 5
    for notes in stages:
        assert abs(notes["bits"] - notes["bits_predicted"]) <= 2.0, (kind, notes)


def _instances(trace):
    seen = {}
    for rec in trace.realizations:
        for kernel in rec.kernels:
            for instance in instances_of(kernel.region):
                seen.setdefault(instance.serial, instance)
    return list(seen.values())
