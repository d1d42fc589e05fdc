"""Write pickles of Ren's scheme values, keys and contexts, for a test that later Ren loads them.

Run with the checkout of Ren whose pickles you want first on ``PYTHONPATH``::

    git worktree add --detach /tmp/ren-c0fa03b c0fa03b
    PYTHONPATH=/tmp/ren-c0fa03b .venv/bin/python scripts/pickle_fixture.py tests/vectors/pickles

It makes, on the ``python`` device and with seeded contexts (the same files on every run), small
and insecure CKKS, BFV and BGV parameters (``n = 64``), keys, and ciphertexts that went through a
multiply and a rotation, and writes into ``OUT_DIR``:

- ``<scheme>-<kind>.p4.pickle`` and ``.p5.pickle``: ``pickle.dumps(value, protocol=4)`` and
  ``protocol=5`` of each value: the ``Params``, a ``Plaintext``, the ``Ciphertext``, the
  ``EvaluationKeys`` (with a rotation key), a ``Context`` holding those evaluation keys (a context
  pickles without secrets), and for CKKS a ``KeySwitchKey`` and a ``Context`` holding no keys;
- ``<scheme>-secret-key.bin``: the bytes of ``ctx.export_secret_key()`` of the context that made
  the ciphertext (an insecure toy key: it exists so the test can decrypt);
- ``manifest.json``: the commit of the Ren that wrote them, the parameters' arguments, and for
  each ciphertext the values encrypted and the operations applied (the test's oracle), and for
  each file what it holds;
- ``README.md``: what the folder is, how it was made, and a table naming every file.

``tests/schemes/test_pickle_fixture.py`` loads every file with the Ren it tests, checks that a
pickle written again is the same bytes, and decrypts the ciphertexts against NumPy.
"""

from __future__ import annotations

import argparse
import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np

import ren
from ren.schemes import bfv, bgv, ckks

PROTOCOLS = (4, 5)
DEVICE = "python"

CKKS_ARGS = {
    "n": 64,
    "q_bits": [50, 30, 30],
    "p_bits": [50],
    "scale_bits": 30,
    "insecure": True,
}
INTEGER_ARGS = {"n": 64, "q_bits": [50, 50, 50], "p_bits": [55, 55], "t": 257, "insecure": True}

#: CKKS: ``z = rotate(x * y, 1)`` (relinearized and rescaled); the context's rotation key is 1.
CKKS_OPERATIONS = [["multiply", "y"], ["rotate", 1]]
#: BFV: ``z = rotate_rows(x * y, 1)`` on the 2 x n/2 slot matrix, mod t; BGV then switches ``z``
#: down a modulus (``mod_switch``: the message stays, the level and the correction factor change).
INTEGER_OPERATIONS = {
    "bfv": [["multiply", "y"], ["rotate_rows", 1]],
    "bgv": [["multiply", "y"], ["rotate_rows", 1], ["mod_switch", None]],
}


def params_of(module, args: dict):
    """``module.Params`` of the manifest's arguments (lists as tuples)."""
    return module.Params(**{k: tuple(v) if isinstance(v, list) else v for k, v in args.items()})


def ckks_inputs() -> dict[str, np.ndarray]:
    """``x`` and ``y``: 32 complex slots each, every part a multiple of 2^-10 in (-1, 1)."""
    rng = np.random.default_rng(20261130)
    parts = np.round(rng.uniform(-1, 1, (2, 2, 32)) * 1024) / 1024
    return {"x": parts[0, 0] + 1j * parts[0, 1], "y": parts[1, 0] + 1j * parts[1, 1]}


def integer_inputs(seed: int, t: int) -> dict[str, np.ndarray]:
    """``x`` and ``y``: 64 residues mod ``t`` each, with 0, 1, t-1 and t/2 among them."""
    rng = np.random.default_rng(seed)
    out = {}
    for name in ("x", "y"):
        v = rng.integers(0, t, 64)
        v[:4] = (0, 1, t - 1, t // 2)
        out[name] = v
    return out


def complex_list(v: np.ndarray) -> dict[str, list[float]]:
    return {"real": [float(a) for a in v.real], "imag": [float(a) for a in v.imag]}


def ren_commit() -> str:
    """The commit of the Ren checkout imported here (``-dirty`` with uncommitted changes)."""
    root = Path(ren.__file__).resolve().parents[1]
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True
        )
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "ren"],
            capture_output=True,
            text=True,
        )
    except OSError:
        return "unknown"
    if head.returncode != 0:
        return "unknown"
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def to_json(value, pad: str = "", lead: int = 0) -> str:
    """``value`` as JSON: on one line where it fits in 100 columns, else a dict's keys a line each.

    The same value gives the same text (keys in the order given), so the manifest diffs well.
    """
    one_line = json.dumps(value, separators=(", ", ": "))
    if not isinstance(value, dict) or len(pad) + lead + len(one_line) <= 100:
        return one_line
    inner = pad + " "
    rows = [f"{inner}{json.dumps(k)}: {to_json(v, inner, len(k) + 4)}" for k, v in value.items()]
    return "{\n" + ",\n".join(rows) + "\n" + pad + "}"


class Writer:
    """Writes each value's pickles into ``out`` and notes them for the manifest."""

    def __init__(self, out: Path):
        self.out = out
        self.files: dict[str, dict] = {}

    def pickles(self, scheme: str, kind: str, value, what: str, **facts) -> None:
        """``<scheme>-<kind>.p<protocol>.pickle`` for each protocol."""
        for protocol in PROTOCOLS:
            file = f"{scheme}-{kind}.p{protocol}.pickle"
            (self.out / file).write_bytes(pickle.dumps(value, protocol=protocol))
            entry = {"scheme": scheme, "kind": kind, "protocol": protocol, "what": what}
            self.files[file] = entry | facts

    def secret_key(self, scheme: str, context) -> None:
        """``<scheme>-secret-key.bin``: the bytes of ``context.export_secret_key()``."""
        file = f"{scheme}-secret-key.bin"
        (self.out / file).write_bytes(context.export_secret_key())
        what = "the secret key and its public key, ctx.export_secret_key() (an insecure toy key)"
        entry = {"scheme": scheme, "kind": "secret-key", "protocol": None, "what": what}
        self.files[file] = entry | {"key_fingerprint": context.key_fingerprint}


def write_ckks(w: Writer) -> dict:
    """CKKS's files; returns the manifest's entry for the scheme."""
    params = params_of(ckks, CKKS_ARGS)
    w.pickles("ckks", "params", params, "ckks.Params")
    inputs = ckks_inputs()
    client = ckks.Context(params, seed=1, device=DEVICE)
    x, y = client.encrypt(inputs["x"]), client.encrypt(inputs["y"])
    z = (x * y).rotate(1)
    assert z.level != params.max_level and z.scale != params.scale  # not the fresh ones
    what = "ckks.Ciphertext z = rotate(x * y, 1), relinearized and rescaled"
    w.pickles("ckks", "ciphertext", z, what, level=z.level, scale=float(z.scale).hex())
    pt = client.encode(inputs["x"], level=1, scale=2.0**25)
    what = "ckks.Plaintext of x at level 1, scale 2^25"
    w.pickles("ckks", "plaintext", pt, what, level=pt.level, scale=float(pt.scale).hex())
    rotation = client.rotation_key(1)
    what = "ckks.KeySwitchKey of rotate(1)"
    w.pickles("ckks", "rotation-key", rotation, what, galois=rotation.galois)
    keys = client.evaluation_keys()
    facts = {"key_fingerprint": keys.fingerprint, "galois": sorted(keys.galois)}
    what = "ckks.EvaluationKeys: public key, relinearization key, rotate(1) key"
    w.pickles("ckks", "evaluation-keys", keys, what, **facts)
    server = ckks.Context(params, device=DEVICE, keys=keys)
    w.pickles("ckks", "context", server, "ckks.Context holding those evaluation keys", **facts)
    empty = ckks.Context(params, device=DEVICE)
    w.pickles("ckks", "context-no-keys", empty, "ckks.Context holding no keys")
    w.secret_key("ckks", client)
    return {
        "params": CKKS_ARGS,
        "inputs": {k: complex_list(v) for k, v in inputs.items()},
        "operations": CKKS_OPERATIONS,
        "key_fingerprint": client.key_fingerprint,
    }


def write_integer(w: Writer, module, seed: int) -> dict:
    """BFV's or BGV's files; returns the manifest's entry for the scheme."""
    name = module.__name__.rsplit(".", 1)[-1]
    params = params_of(module, INTEGER_ARGS)
    w.pickles(name, "params", params, f"{name}.Params")
    inputs = integer_inputs(seed, params.t)
    client = module.Context(params, seed=seed, device=DEVICE)
    x, y = client.encrypt(inputs["x"]), client.encrypt(inputs["y"])
    z = (x * y).rotate_rows(1)
    what = f"{name}.Ciphertext z = rotate_rows(x * y, 1), relinearized"
    if name == "bgv":
        z = client.mod_switch(z)
        assert z.level != params.L - 1 and z.correction != 1  # not the fresh ones
        what += ", then mod_switch"
    w.pickles(name, "ciphertext", z, what, level=z.level, correction=z.correction)
    w.pickles(name, "plaintext", client.encode(inputs["x"]), f"{name}.Plaintext of x")
    client.rotation_key(1)
    keys = client.evaluation_keys()
    facts = {"key_fingerprint": keys.fingerprint, "galois": sorted(keys.galois)}
    what = f"{name}.EvaluationKeys: public key, relinearization key, rotate_rows(1) key"
    w.pickles(name, "evaluation-keys", keys, what, **facts)
    server = module.Context(params, device=DEVICE, keys=keys)
    w.pickles(name, "context", server, f"{name}.Context holding those evaluation keys", **facts)
    w.secret_key(name, client)
    return {
        "params": INTEGER_ARGS,
        "inputs": {k: [int(a) for a in v] for k, v in inputs.items()},
        "operations": INTEGER_OPERATIONS[name],
        "key_fingerprint": client.key_fingerprint,
    }


README = """\
# Pickles written by Ren before its scheme floor was restructured

Ren promises that a pickle of a CKKS, BFV or BGV value, key or context written by one version loads
in a later one, and that pickling the loaded object again gives the same bytes.
`tests/schemes/test_pickle_fixture.py` checks both with the Ren it runs on, decrypts the
ciphertexts with the exported secret keys and compares them with NumPy.

These files were written by `scripts/pickle_fixture.py` at Ren commit
`{commit}`
(before key switching became a part a context holds and the contexts shared one RLWE context),
with Python {python}, on the `{device}` device, in pickle protocols 4 (Python 3.11's default) and 5
(the highest):

    PYTHONPATH=/path/to/a/checkout/of/{short} .venv/bin/python scripts/pickle_fixture.py \\
        tests/vectors/pickles

Do not write them again with a later Ren: their point is that they are old. The parameters are
tiny and insecure (`n = 64`, `insecure=True`), and the secret keys here are toy keys that exist
only so the test can decrypt. `manifest.json` holds the parameters' arguments, the values encrypted
and the operations applied to them (the test's oracle), and for each file what it is.

| file | what |
|---|---|
{rows}
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the folder to write into (made if missing)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    w = Writer(args.out)
    schemes = {
        "ckks": write_ckks(w),
        "bfv": write_integer(w, bfv, seed=2),
        "bgv": write_integer(w, bgv, seed=3),
    }
    manifest = {
        "commit": ren_commit(),
        "written_by": "scripts/pickle_fixture.py",
        "python": ".".join(map(str, sys.version_info[:3])),
        "device": DEVICE,
        "protocols": list(PROTOCOLS),
        "schemes": schemes,
        "files": dict(sorted(w.files.items())),
    }
    (args.out / "manifest.json").write_text(to_json(manifest) + "\n", encoding="utf-8")
    rows = [f"| `{f}` | {e['what']} (protocol {e['protocol']}) |" for f, e in w.files.items()]
    rows = [r.replace(" (protocol None)", "") for r in rows]
    rows.append("| `manifest.json` | what each file holds, the inputs and operations, the commit |")
    info = {k: manifest[k] for k in ("commit", "python", "device")}
    text = README.format(rows="\n".join(sorted(rows)), short=manifest["commit"][:7], **info)
    (args.out / "README.md").write_text(text, encoding="utf-8")
    size = sum((args.out / f).stat().st_size for f in w.files)
    print(f"{len(w.files)} files, {size} bytes, and manifest.json in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
