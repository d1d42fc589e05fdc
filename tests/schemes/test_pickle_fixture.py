"""Pickles written by an older Ren load in this one, and pickle again to the same bytes.

The fixture (``tests/vectors/pickles``, written by ``scripts/pickle_fixture.py`` at the commit its
``manifest.json`` names) holds pickles, in protocols 4 and 5, of CKKS, BFV and BGV parameters,
plaintexts, ciphertexts, keys and contexts, and the secret keys exported by
``ctx.export_secret_key()``. Oracles: the bytes of each file (a loaded object pickled again with
the file's protocol must give them back); the parameters made again from the manifest's
arguments; NumPy on the manifest's inputs and operations (CKKS within a precision in bits, BFV and
BGV exactly mod ``t``); the manifest's key fingerprints and Galois elements.
"""

from __future__ import annotations

import json
import pickle
import pickletools
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ren.schemes import bfv, bgv, ckks

FIXTURE = Path(__file__).resolve().parents[1] / "vectors" / "pickles"
MANIFEST = json.loads((FIXTURE / "manifest.json").read_text(encoding="utf-8"))
FILES = MANIFEST["files"]
PICKLES = sorted(f for f, e in FILES.items() if e["protocol"] is not None)
PROTOCOLS = MANIFEST["protocols"]
DEVICE = MANIFEST["device"]
MODULES = {"ckks": ckks, "bfv": bfv, "bgv": bgv}

#: The least precision, in bits (absolute, ``ckks.precision_bits``), of every CKKS result here:
#: the fixture's ciphertext, its plaintext (scale 2^25) and a product of two loaded ciphertexts
#: measure 22.9, 22.9 and 22.1 bits with the Ren that wrote them (n=64, 30-bit scale).
CKKS_BITS = 20.0


def public_type(scheme: str, kind: str) -> type:
    """The public class a pickle of ``kind`` must load as."""
    module = MODULES[scheme]
    names = {
        "params": "Params",
        "plaintext": "Plaintext",
        "ciphertext": "Ciphertext",
        "evaluation-keys": "EvaluationKeys",
        "context": "Context",
        "context-no-keys": "Context",
    }
    if kind == "rotation-key":
        return ckks.KeySwitchKey
    return getattr(module, names[kind])


def file_name(scheme: str, kind: str, protocol: int) -> str:
    return f"{scheme}-{kind}.p{protocol}.pickle"


def load(scheme: str, kind: str, protocol: int):
    return pickle.loads((FIXTURE / file_name(scheme, kind, protocol)).read_bytes())


def params(scheme: str):
    """The scheme's parameters made now from the manifest's arguments."""
    args = MANIFEST["schemes"][scheme]["params"]
    kw = {k: tuple(v) if isinstance(v, list) else v for k, v in args.items()}
    return MODULES[scheme].Params(**kw)


def secret_context(scheme: str):
    """A context holding the fixture's exported secret key (read through the public API)."""
    blob = (FIXTURE / f"{scheme}-secret-key.bin").read_bytes()
    return MODULES[scheme].Context(params(scheme), device=DEVICE, secret_key=blob)


def names_in(blob: bytes) -> list[str]:
    """The short strings a pickle holds (the module and function names it imports by)."""
    found = []
    for op, arg, _ in pickletools.genops(blob):
        if isinstance(arg, str) and len(arg) < 80:
            found.append(arg)
        elif op.name == "GLOBAL":
            found.append(str(arg))
    return found


def ckks_expected(ops) -> np.ndarray:
    """NumPy's result of the manifest's CKKS operations on ``x``."""
    inputs = {
        k: np.array(v["real"]) + 1j * np.array(v["imag"])
        for k, v in MANIFEST["schemes"]["ckks"]["inputs"].items()
    }
    v = inputs["x"]
    for op, arg in ops:
        if op == "multiply":
            v = v * inputs[arg]
        elif op == "rotate":
            v = np.roll(v, -arg)
        else:
            raise ValueError(f"the manifest names an unknown CKKS operation {op!r}")
    return v


def integer_expected(scheme: str, ops) -> np.ndarray:
    """NumPy's result mod ``t`` of the manifest's BFV or BGV operations on ``x``."""
    entry = MANIFEST["schemes"][scheme]
    t, n = entry["params"]["t"], entry["params"]["n"]
    inputs = {k: np.array(v, dtype=np.int64) for k, v in entry["inputs"].items()}
    v = inputs["x"]
    for op, arg in ops:
        if op == "multiply":
            v = v * inputs[arg] % t
        elif op == "rotate_rows":
            v = np.roll(v.reshape(2, n // 2), -arg, axis=1).reshape(-1)
        elif op != "mod_switch":  # the message stays
            raise ValueError(f"the manifest names an unknown {scheme} operation {op!r}")
    return v


# --- the folder -----------------------------------------------------------------------------------


def test_readme_and_manifest_name_every_file():
    on_disk = {p.name for p in FIXTURE.iterdir()}
    readme = (FIXTURE / "README.md").read_text(encoding="utf-8")
    assert sorted(f for f in on_disk if f"`{f}`" not in readme and f != "README.md") == []
    assert sorted(on_disk - set(FILES) - {"README.md", "manifest.json"}) == []
    assert sorted(set(FILES) - on_disk) == []


def test_manifest_commit_is_an_ancestor_of_head():
    commit = MANIFEST["commit"]
    root = FIXTURE.parents[2]
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    inside = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"],
        capture_output=True,
        text=True,
    )
    if inside.returncode != 0:
        pytest.skip(f"{root} is not a git checkout")
    if subprocess.run(["git", "-C", str(root), "cat-file", "-e", commit]).returncode != 0:
        pytest.skip(f"the checkout lacks commit {commit} (a shallow clone?)")
    ancestor = ["git", "-C", str(root), "merge-base", "--is-ancestor", commit, "HEAD"]
    assert subprocess.run(ancestor).returncode == 0, f"{commit} is not an ancestor of HEAD"


def test_no_pickle_holds_a_secret_key():
    for name in PICKLES:
        assert b"secret-key" not in (FIXTURE / name).read_bytes(), name


# --- every pickle ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", PICKLES)
def test_pickle_loads_and_pickles_to_the_same_bytes(name):
    entry = FILES[name]
    blob = (FIXTURE / name).read_bytes()
    value = pickle.loads(blob)
    assert isinstance(value, public_type(entry["scheme"], entry["kind"]))
    again = pickle.dumps(value, protocol=entry["protocol"])
    if again != blob:
        at = next((i for i, (a, b) in enumerate(zip(blob, again, strict=False)) if a != b), None)
        at = min(len(blob), len(again)) if at is None else at
        pytest.fail(
            f"{name}: pickled again, {len(again)} bytes instead of {len(blob)}, the first "
            f"difference at byte {at}; names then {names_in(blob)}, now {names_in(again)}"
        )


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda p: f"protocol={p}")
@pytest.mark.parametrize("scheme", sorted(MODULES))
def test_loaded_params_equal_params_made_now(scheme, protocol):
    loaded, fresh = load(scheme, "params", protocol), params(scheme)
    assert loaded == fresh
    assert (loaded.q_moduli, loaded.p_moduli) == (fresh.q_moduli, fresh.p_moduli)
    assert pickle.dumps(fresh, protocol=protocol) == pickle.dumps(loaded, protocol=protocol)


@pytest.mark.parametrize("scheme", sorted(MODULES))
def test_exported_secret_key_loads_and_exports_the_same_bytes(scheme):
    ctx = secret_context(scheme)
    entry = FILES[f"{scheme}-secret-key.bin"]
    assert ctx.has_secret_key
    assert ctx.key_fingerprint == entry["key_fingerprint"]
    assert ctx.export_secret_key() == (FIXTURE / f"{scheme}-secret-key.bin").read_bytes()
    with pytest.raises(TypeError, match="export_secret_key"):
        pickle.dumps(ctx)


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda p: f"protocol={p}")
@pytest.mark.parametrize("scheme", sorted(MODULES))
def test_loaded_keys_are_the_manifest_keys(scheme, protocol):
    for kind in ("evaluation-keys", "context"):
        entry = FILES[file_name(scheme, kind, protocol)]
        value = load(scheme, kind, protocol)
        keys = value if kind == "evaluation-keys" else value.evaluation_keys()
        assert keys.fingerprint == entry["key_fingerprint"], kind
        assert sorted(keys.galois) == entry["galois"], kind
        assert keys.params == params(scheme), kind
    if scheme == "ckks":
        key = load("ckks", "rotation-key", protocol)
        assert key.galois == FILES[file_name("ckks", "rotation-key", protocol)]["galois"]
        assert key.galois in load("ckks", "evaluation-keys", protocol).galois
        empty = load("ckks", "context-no-keys", protocol)
        assert empty.key_fingerprint is None and not empty.has_secret_key


# --- decryption -----------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda p: f"protocol={p}")
def test_ckks_ciphertext_decrypts_to_numpy_result(protocol):
    ct = load("ckks", "ciphertext", protocol)
    entry = FILES[file_name("ckks", "ciphertext", protocol)]
    assert (ct.level, float(ct.scale).hex()) == (entry["level"], entry["scale"])
    want = ckks_expected(MANIFEST["schemes"]["ckks"]["operations"])
    got = secret_context("ckks").decrypt(ct)
    assert ckks.precision_bits(got, want) >= CKKS_BITS


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda p: f"protocol={p}")
def test_ckks_plaintext_decodes_to_x(protocol):
    pt = load("ckks", "plaintext", protocol)
    entry = FILES[file_name("ckks", "plaintext", protocol)]
    assert (pt.level, float(pt.scale).hex()) == (entry["level"], entry["scale"])
    got = secret_context("ckks").decode(pt)
    assert ckks.precision_bits(got, ckks_expected([])) >= CKKS_BITS


@pytest.mark.parametrize("protocol", PROTOCOLS, ids=lambda p: f"protocol={p}")
@pytest.mark.parametrize("scheme", ["bfv", "bgv"])
def test_integer_ciphertext_decrypts_exactly(scheme, protocol):
    ct = load(scheme, "ciphertext", protocol)
    entry = FILES[file_name(scheme, "ciphertext", protocol)]
    assert (ct.level, ct.correction) == (entry["level"], entry["correction"])
    ctx = secret_context(scheme)
    want = integer_expected(scheme, MANIFEST["schemes"][scheme]["operations"])
    assert np.array_equal(ctx.decrypt(ct), want)
    assert np.array_equal(
        ctx.decode(load(scheme, "plaintext", protocol)), integer_expected(scheme, [])
    )


# --- a loaded context evaluates -------------------------------------------------------------------


def test_loaded_ckks_context_evaluates_and_holds_no_secret():
    server = load("ckks", "context", PROTOCOLS[0])
    assert not server.has_secret_key
    a, b = (load("ckks", "ciphertext", p) for p in PROTOCOLS)
    with server:
        out = (a * b).rotate(1)  # relinearized with the loaded key, rotated with the loaded one
    with pytest.raises(ValueError, match="no secret key"):
        server.decrypt(out)
    z = ckks_expected(MANIFEST["schemes"]["ckks"]["operations"])
    want = np.roll(z * z, -1)
    got = secret_context("ckks").decrypt(pickle.loads(pickle.dumps(out)))
    assert ckks.precision_bits(got, want) >= CKKS_BITS
    again = pickle.loads(pickle.dumps(server))
    assert not again.has_secret_key and again.key_fingerprint == server.key_fingerprint


@pytest.mark.parametrize("scheme", ["bfv", "bgv"])
def test_loaded_integer_context_evaluates_and_holds_no_secret(scheme):
    server = load(scheme, "context", PROTOCOLS[0])
    assert not server.has_secret_key
    a, b = (load(scheme, "ciphertext", p) for p in PROTOCOLS)
    with server:
        out = (a * b).rotate_rows(1)
    with pytest.raises(ValueError, match="no secret key"):
        server.decrypt(out)
    t, n = server.params.t, server.params.n
    z = integer_expected(scheme, MANIFEST["schemes"][scheme]["operations"])
    want = np.roll((z * z % t).reshape(2, n // 2), -1, axis=1).reshape(-1)
    got = secret_context(scheme).decrypt(pickle.loads(pickle.dumps(out)))
    assert np.array_equal(got, want)
