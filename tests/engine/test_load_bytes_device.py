"""``ren.load`` of a plan's bytes, and of a plan moved to another device (``device=``).

Oracles: Python big integers (``docs/rings.md``'s values and ``ren.reference.evaluate``), the
jitted function's own result, the replay of the same plan on the device it was saved on (word for
word, and a CKKS result byte for byte), and plaintext NumPy for CKKS (precision in bits).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ren
from ren import Poly, RingSpec
from ren.capture import planfile
from ren.capture.planfile import PlanFileError, fingerprint
from ren.capture.retarget import devices, moved
from ren.errors import RenError
from ren.reference import evaluate

RING = RingSpec(n=8, moduli=(17, 97))
X = [1, 2, 3, 4, 5, 6, 7, 8]
Y = [8, 7, 6, 5, 4, 3, 2, 1]
WANT = [1334, 1370, 1424, 1496, 1586, 45, 171, 315]  # (x + y) * (x - 1), docs/rings.md


def step(x: Poly, y: Poly) -> Poly:
    return (x + y) * (x - 1)


def saved(tmp_path: Path, device: str = "python") -> Path:
    x, y = Poly(X, RING, device=device), Poly(Y, RING, device=device)
    return ren.jit(step).export(tmp_path / "step.renplan", x, y)


def inputs(device: str, seed: int = 3) -> tuple[Poly, Poly]:
    return (
        Poly.uniform(RING, rng=seed, device=device),
        Poly.uniform(RING, rng=seed + 1, device=device),
    )


def unit_devices(loaded) -> set[str]:
    return {u.device for u in loaded.plan.units}


# --- a plan from bytes -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_bytes_give_the_words_of_the_path_and_of_the_function(tmp_path, kind):
    path = saved(tmp_path)
    from_bytes, from_path = ren.load(kind(path.read_bytes())), ren.load(path)
    a, b = inputs("python")
    assert from_bytes(a, b).tolist() == from_path(a, b).tolist() == step(a, b).tolist()
    assert from_bytes(Poly(X, RING), Poly(Y, RING)).tolist() == WANT
    assert from_bytes.data == from_path.data
    assert from_bytes.name == "step (loaded from bytes)"
    assert from_path.name == "step (loaded from step.renplan)"


def test_bytes_with_a_flipped_byte_are_refused(tmp_path):
    raw = bytearray(saved(tmp_path).read_bytes())
    raw[raw.index(b'"step"') + 1] = ord("S")  # still JSON, still a plan: not what was saved
    with pytest.raises(PlanFileError, match="the plan given as bytes does not match its finger"):
        ren.load(bytes(raw))
    with pytest.raises(PlanFileError, match="the plan given as bytes is not a Ren plan file"):
        ren.load(b"\x00not json")


def test_bytes_past_the_size_limit_are_refused_before_they_are_parsed(tmp_path, monkeypatch):
    raw = saved(tmp_path).read_bytes()
    monkeypatch.setattr(planfile, "MAX_FILE_BYTES", len(raw) - 1)
    with pytest.raises(PlanFileError, match=f"holds {len(raw)} bytes; .* at most {len(raw) - 1}"):
        ren.load(raw)
    with pytest.raises(PlanFileError, match=f"step.renplan holds {len(raw)} bytes"):
        ren.load(tmp_path / "step.renplan")  # a file: its size is read before its bytes


def test_a_source_that_is_neither_a_path_nor_bytes(tmp_path):
    with pytest.raises(TypeError, match=r"source must be a plan file's path .* got int 3"):
        ren.load(3)  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError):
        ren.load(str(tmp_path / "nowhere.renplan"))
    text = saved(tmp_path).read_text()
    with pytest.raises(TypeError, match=r"give a plan's text as bytes \(\.encode\(\)\)"):
        ren.load(text)
    assert ren.load(text.encode())(Poly(X, RING), Poly(Y, RING)).tolist() == WANT


# --- a plan moved to another device ----------------------------------------------------------


@pytest.mark.cc
@pytest.mark.parametrize(("saved_on", "replay_on"), [("cpu", "python"), ("python", "cpu")])
def test_a_moved_plan_gives_the_words_of_the_saved_device(tmp_path, saved_on, replay_on):
    path = saved(tmp_path, saved_on)
    here, there = ren.load(path), ren.load(path.read_bytes(), device=replay_on)
    assert unit_devices(here) == {saved_on} and unit_devices(there) == {replay_on}
    assert there.moved_from == saved_on and here.moved_from is None
    for seed in (3, 5):
        a, b = inputs(saved_on, seed)
        want = here(a, b).tolist()
        assert want == list(evaluate(step(a, b).node))  # big integers
        assert there(a.to(replay_on), b.to(replay_on)).tolist() == want
    assert there(Poly(X, RING, device=replay_on), Poly(Y, RING, device=replay_on)).tolist() == WANT


@pytest.mark.cc
def test_a_moved_plan_is_a_plan_of_the_new_device(tmp_path):
    path = saved(tmp_path, "cpu")
    data = planfile.read(path)
    new = moved(data, "python")
    assert devices(data) == ["cpu"] and devices(new) == ["python"]
    assert new["fingerprint"] == data["fingerprint"]  # the identity of the plan that was read
    changed = {k for k in data if new[k] != data[k]}
    assert changed == {"buffers", "kernels", "manifest", "memory", "sources"}
    assert new["units"] == data["units"] and new["result"] == data["result"]
    assert moved(new, "python") is new
    again = planfile.write(tmp_path / "python.renplan", new)  # hashes as python renders
    loaded = ren.load(again)
    assert loaded.moved_from is None and unit_devices(loaded) == {"python"}
    assert loaded(Poly(X, RING), Poly(Y, RING)).tolist() == WANT


@pytest.mark.cc
def test_the_function_s_other_arguments_are_not_moved(tmp_path):
    @ren.jit
    def tagged(x: Poly, tag: str) -> Poly:
        return x * 2 if tag == "cpu" else x * 3

    x = Poly(X, RING, device="cpu")
    path = tagged.export(tmp_path / "tagged.renplan", x, "cpu")
    loaded = ren.load(path, device="python")
    assert loaded.data["manifest"]["metadata"] == planfile.read(path)["manifest"]["metadata"]
    assert "cpu" in json.dumps(loaded.data["manifest"]["metadata"])
    assert unit_devices(loaded) == {"python"}
    got = loaded(x.to("python"), "cpu").tolist()
    assert got == ren.load(path)(x, "cpu").tolist() == list(evaluate((x * 2).node))
    with pytest.raises(ValueError, match=r"argument tag .* is 'python' \(str\); .* 'cpu' \(str\)"):
        loaded(x.to("python"), "python")


@pytest.mark.cc
def test_inputs_on_the_saved_device_are_refused_by_a_moved_plan(tmp_path):
    loaded = ren.load(saved(tmp_path, "cpu"), device="python")
    with pytest.raises(ValueError) as e:
        loaded(*inputs("cpu"))
    message = str(e.value)
    assert message.startswith("input x of step (loaded from step.renplan) is on device 'cpu'; ")
    assert "the plan (saved on 'cpu', moved) is for device 'python'" in message
    assert "give it on device 'python' (Poly.to('python')" in message


def test_a_plan_of_the_device_asked_for_is_not_moved(tmp_path):
    path = saved(tmp_path, "python")
    data = planfile.read(path)
    assert moved(data, "python") is data
    loaded = ren.load(path, device="python")
    assert loaded.moved_from is None and loaded.data == data
    a, b = inputs("python")
    assert loaded(a, b).tolist() == list(evaluate(step(a, b).node))


@pytest.mark.cc
def test_a_plan_on_two_devices_is_not_moved(tmp_path):
    f = ren.jit(lambda x: (x + 1).to("cpu") * 2)
    x = Poly(X, RING)
    path = f.export(tmp_path / "two.renplan", x)
    with pytest.raises(ValueError, match=r"runs on the devices \['cpu', 'python'\]: only a plan"):
        ren.load(path, device="python")
    assert ren.load(path)(x).tolist() == list(evaluate(((x + 1) * 2).node))


def test_a_device_that_is_not_a_device_is_refused(tmp_path):
    path = saved(tmp_path)
    with pytest.raises(TypeError, match=r"device must be a device name .* got int 1"):
        ren.load(path, device=1)  # type: ignore[arg-type]
    with pytest.raises(RenError, match="cannot be moved to device 'tpu'"):
        ren.load(path, device="tpu")


@pytest.mark.cc
def test_a_moved_plan_is_checked_as_any_plan(tmp_path):
    path = saved(tmp_path, "cpu")
    data = json.loads(path.read_text())
    data["kernels"][0]["body"][-1][0] = "NOPE"  # a body Ren never writes, fingerprint redone
    data["fingerprint"] = fingerprint(data)
    with pytest.raises(PlanFileError, match=r"node .* has the op 'NOPE'"):
        ren.load(json.dumps(data).encode(), device="python")


# --- CKKS: a multiply and a rotation, replayed on the reference -------------------------------


@pytest.fixture(scope="module")
def ckks_plan(tmp_path_factory):
    """A CKKS ``(a * b).rotate(1)`` saved on cpu: its bytes, the keys' and inputs' bytes."""
    from ren.schemes import ckks

    params = ckks.Params(n=16, q_bits=(30, 25, 25), p_bits=(30,), scale_bits=25, insecure=True)
    v = np.linspace(-1, 1, params.slots)
    with ckks.Context(params, seed=1, device="cpu") as client:
        f = ren.jit(lambda a, b: (a * b).rotate(1))
        x, y = ckks.encrypt(v), ckks.encrypt(0.5 * v)
        f(x, y)  # the rotation key is made at the first call: saved with the keys after it
        path = f.save(
            tmp_path_factory.mktemp("ckks") / "mr.renplan",
            stored={"keys": client.evaluation_keys()},
        )
        blob = client.evaluation_keys().to_bytes()
    return params, client, path.read_bytes(), blob, (x.to_bytes(), y.to_bytes()), v


def replay(ckks_plan, keys_on: str, ctx_on: str, move: str | None):
    from ren.schemes import ckks

    params, _, raw, blob, (xb, yb), _ = ckks_plan
    keys = ckks.EvaluationKeys.from_bytes(blob, device=keys_on, insecure=True)
    ctx = ckks.Context(params, keys=keys, device=ctx_on)
    with ctx:
        loaded = ren.load(raw, stored={"keys": keys}, device=move)
        x, y = ckks.Ciphertext.from_bytes(xb, ctx), ckks.Ciphertext.from_bytes(yb, ctx)
        return loaded, loaded(x, y).to_bytes()


@pytest.mark.cc
def test_a_ckks_plan_moved_to_python_gives_the_bytes_of_the_cpu_replay(ckks_plan):
    from ren.schemes import ckks

    _, on_cpu = replay(ckks_plan, "cpu", "cpu", None)
    loaded, on_python = replay(ckks_plan, "python", "python", "python")
    assert unit_devices(loaded) == {"python"} and loaded.moved_from == "cpu"
    assert on_python == on_cpu
    _, client, *_, v = ckks_plan
    with client:
        got = ckks.decrypt(ckks.Ciphertext.from_bytes(on_python, client))
    assert ckks.precision_bits(got, np.roll(0.5 * v * v, -1)) > 12


@pytest.mark.cc
def test_stored_keys_on_the_saved_device_are_refused_by_a_moved_plan(ckks_plan):
    with pytest.raises(ValueError) as e:
        replay(ckks_plan, "cpu", "python", "python")
    message = str(e.value)
    assert message.startswith("stored input keys.")
    assert "is on device 'cpu'" in message and "more stored inputs of keys" in message
    assert "the plan (saved on 'cpu', moved) is for device 'python'" in message
    assert "pass device='python' to EvaluationKeys.from_bytes" in message
