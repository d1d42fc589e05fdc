"""``ren.load`` refusing stored keys or inputs of another spec names only what differs, and the fix.

Keys read with ``EvaluationKeys.from_bytes`` land on ``$REN_DEVICE`` (python by default), while a
plan saved from a context on another device reads its keys there. The refusal names the one
differing field with both values and the call that fixes it; following it, the plan loads and
its result decrypts to the product (oracle: plaintext NumPy, a precision in bits).
"""

from __future__ import annotations

import numpy as np
import pytest

import ren
from ren.poly import Poly
from ren.ring import RingSpec, ntt_primes
from ren.schemes import ckks

PARAMS = ckks.Params(n=16, q_bits=(30, 25, 25), p_bits=(30,), scale_bits=25, insecure=True)
V = np.linspace(-1, 1, PARAMS.slots)


@pytest.fixture(autouse=True)
def default_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """``from_bytes`` without ``device=`` reads onto the default device, python."""
    monkeypatch.delenv("REN_DEVICE", raising=False)


def mul(a, b):
    return a * b


def saved_on(device: str, tmp_path):
    """A CKKS multiply saved from a context on ``device``, that context and its keys' bytes."""
    with ckks.Context(PARAMS, seed=1, device=device) as ctx:
        f = ren.jit(mul)
        x, y = ckks.encrypt(V), ckks.encrypt(V)
        path = f.export(tmp_path / "mul.renplan", x, y, stored={"keys": ctx.evaluation_keys()})
    return path, ctx, ctx.evaluation_keys().to_bytes()


def refusal(path, keys) -> str:
    with pytest.raises(ValueError) as e:
        ren.load(path, stored={"keys": keys})
    return str(e.value)


def check_names_the_device_only(message: str, have: str, want: str) -> None:
    assert f"is on device {have!r}" in message
    assert f"the plan was saved with device {want!r}" in message
    assert f"pass device={want!r} to EvaluationKeys.from_bytes" in message
    assert "RingSpec" not in message and "domain" not in message and "words" not in message
    assert message.startswith("stored input keys.")
    assert "more stored inputs of keys" in message  # the other keys: counted, not listed
    assert len(message) < 300


@pytest.mark.cc
def test_keys_from_bytes_on_the_default_device_for_a_cpu_plan(tmp_path):
    path, ctx, blob = saved_on("cpu", tmp_path)
    keys = ckks.EvaluationKeys.from_bytes(blob, insecure=True)  # onto python
    check_names_the_device_only(refusal(path, keys), "python", "cpu")
    keys = ckks.EvaluationKeys.from_bytes(blob, device="cpu", insecure=True)  # the fix
    with ctx:
        loaded = ren.load(path, stored={"keys": keys})
        out = loaded(ckks.encrypt(V), ckks.encrypt(V))
        assert ckks.precision_bits(ckks.decrypt(out), V * V) > 12


def test_keys_read_onto_another_device_than_the_plan(tmp_path):
    path, ctx, blob = saved_on("python", tmp_path)
    keys = ckks.EvaluationKeys.from_bytes(blob, device="cpu", insecure=True)  # no kernel runs
    check_names_the_device_only(refusal(path, keys), "cpu", "python")
    with ctx:
        loaded = ren.load(
            path, stored={"keys": ckks.EvaluationKeys.from_bytes(blob, insecure=True)}
        )
        out = loaded(ckks.encrypt(V), ckks.encrypt(V))
        assert ckks.precision_bits(ckks.decrypt(out), V * V) > 12


RING = RingSpec(16, ntt_primes(16, 30, 2))
OTHER = RingSpec(16, ntt_primes(16, 25, 2))


def add(a, b):
    return a + b


def test_an_input_of_another_ring_names_the_ring_and_nothing_else(tmp_path):
    f = ren.jit(add)
    path = f.export(tmp_path / "add.renplan", Poly(list(range(16)), RING), Poly([1] * 16, RING))
    loaded = ren.load(path)
    with pytest.raises(ValueError) as e:
        loaded(Poly(list(range(16)), RING), Poly([1] * 16, OTHER))
    message = str(e.value)
    assert message.startswith("input b of add")
    assert f"is in ring {OTHER!r}; the plan was saved for ring {RING!r}" in message
    assert "device" not in message and "words" not in message


def test_a_stored_poly_on_another_device_is_told_to_move(tmp_path):
    table = Poly(list(range(16)), RING).realize()

    def reads_a_table(x):
        return x * table

    f = ren.jit(reads_a_table)
    path = f.export(tmp_path / "t.renplan", Poly([2] * 16, RING), stored={"table": table})
    given = Poly(list(range(16)), RING, device="cpu").realize()
    with pytest.raises(ValueError) as e:
        ren.load(path, stored={"table": given})
    message = str(e.value)
    assert message.startswith("stored input table is on device 'cpu'; ")
    assert "the plan was saved with device 'python': give it on device 'python'" in message
    assert "Poly.to('python')" in message
    loaded = ren.load(path, stored={"table": given.to("python")})  # the fix
    want = (Poly([2] * 16, RING) * Poly(list(range(16)), RING)).tolist()
    assert loaded(Poly([2] * 16, RING)).tolist() == want
