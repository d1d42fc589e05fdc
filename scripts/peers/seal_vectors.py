"""Make Microsoft SEAL CKKS test vectors for ``ren.interop.seal``: run by hand, with seal-python.

Usage::

    .venv/bin/python scripts/peers/seal_vectors.py OUT_DIR

SEAL (through seal-python, the ``peers`` extra) makes CKKS parameters with ``n = 1024`` and no
security check (``sec_level_type.none``: test data only), its keys (secret, public,
relinearization, Galois keys for two rotations), two encryptions of seeded random values, their
product (multiply, relinearize, rescale), two rotations and the decryptions, and saves each as
SEAL saves it, some compressed with zlib, some with zstd, some not. ``manifest.json`` names every
file with its kind, compression and what made it, the parameters, the values and the seed.

SEAL's own randomness cannot be seeded from Python, so two runs give different keys and
ciphertexts (the values are seeded): the files in ``tests/vectors/seal`` were made once. Where
this seal-python cannot compress (a build without zlib or zstd) the compressed files are SEAL's
uncompressed bytes recompressed by ``ren.interop.seal_format.write`` as SEAL's ``Save`` does; the
manifest says which.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import seal

from ren.interop import seal_format

N = 1024
BITS = (50, 40, 35, 55)  # q_0, q_1, q_2 and the special prime: distinct sizes, so Ren agrees
SCALE = 2.0**35
STEPS = (1, -3)  # the rotations with Galois keys
SEED = 20240611  # for the values only: SEAL's own randomness is not seedable


def _seal_mode(name: str) -> Any:
    """SEAL's compression mode ``name``, or None where this seal-python was built without it."""
    mode = getattr(seal.compr_mode_type, name, None)
    if mode is None:
        return None
    try:  # a build without the library knows the name from its stub but refuses the mode
        seal.EncryptionParameters(seal.scheme_type.ckks).to_bytes(mode)
    except (ValueError, RuntimeError):
        return None
    return mode


def _saved(obj: Any, kind: str, compression: str) -> tuple[bytes, str]:
    """``obj`` saved with ``compression``, and who compressed it (SEAL, or Ren's writer)."""
    mode = seal.compr_mode_type.none if compression == "none" else _seal_mode(compression)
    if mode is not None and kind == "Ciphertext":
        return obj.to_string(mode), "SEAL"
    if mode is not None and kind == "Plaintext":
        return obj.to_bytes(mode), "SEAL"
    if compression == "none":  # seal-python saves keys uncompressed only
        return obj.to_string(), "SEAL"
    raw = _saved(obj, kind, "none")[0]
    blob = seal_format.write(seal_format.read(raw, kind), kind, compression)
    return blob, "ren.interop.seal_format"


def _complex_values(rng: np.random.Generator, count: int) -> np.ndarray:
    return rng.uniform(-1, 1, count) + 1j * rng.uniform(-1, 1, count)


def make(out: Path) -> dict[str, Any]:
    """Write the vectors to ``out`` (created if need be); returns the manifest."""
    out.mkdir(parents=True, exist_ok=True)
    parms = seal.EncryptionParameters(seal.scheme_type.ckks)
    parms.set_poly_modulus_degree(N)
    parms.set_coeff_modulus(seal.CoeffModulus.Create(N, list(BITS)))
    ctx = seal.SEALContext(parms, True, seal.sec_level_type.none)
    if not ctx.parameters_set():
        raise RuntimeError(f"SEAL refuses the parameters: {ctx.parameter_error_message()}")
    keygen = seal.KeyGenerator(ctx)
    sk, pk, rk = keygen.secret_key(), keygen.create_public_key(), keygen.create_relin_keys()
    gk = seal.GaloisKeys()
    keygen.create_galois_keys(list(STEPS), gk)
    encoder, encryptor = seal.CKKSEncoder(ctx), seal.Encryptor(ctx, pk)
    evaluator, decryptor = seal.Evaluator(ctx), seal.Decryptor(ctx, sk)

    rng = np.random.default_rng(SEED)
    va, vb = _complex_values(rng, N // 2), _complex_values(rng, N // 2)
    a_plain = encoder.encode_complex(list(va), SCALE)
    a, b = encryptor.encrypt(a_plain), encryptor.encrypt(encoder.encode_complex(list(vb), SCALE))
    ab = evaluator.multiply(a, b)
    ab_relin = evaluator.relinearize(ab, rk)
    ab_rescaled = evaluator.rescale_to_next(ab_relin)
    a_rot = evaluator.rotate_vector(a, STEPS[0], gk)
    ab_rot = evaluator.rotate_vector(ab_rescaled, STEPS[1], gk)

    # name: (object, kind, compression, what it is)
    files: dict[str, tuple[Any, str, str, str]] = {
        "secret_key.seal": (sk, "SecretKey", "none", "the secret key"),
        "public_key.seal": (pk, "PublicKey", "zlib", "the public key"),
        "relin_keys.seal": (rk, "RelinKeys", "zstd", "the relinearization keys"),
        "galois_keys.seal": (gk, "GaloisKeys", "zlib", f"Galois keys for the steps {STEPS}"),
        "a_plain.seal": (a_plain, "Plaintext", "zstd", "SEAL's encoding of values a"),
        "a.seal": (a, "Ciphertext", "none", "encrypt(a_plain) with the public key"),
        "b.seal": (b, "Ciphertext", "zstd", "an encryption of values b"),
        "ab.seal": (ab, "Ciphertext", "zlib", "multiply(a, b): 3 parts"),
        "ab_relin.seal": (ab_relin, "Ciphertext", "none", "relinearize(ab)"),
        "ab_rescaled.seal": (ab_rescaled, "Ciphertext", "zstd", "rescale_to_next(ab_relin)"),
        "a_rot1.seal": (a_rot, "Ciphertext", "none", f"rotate_vector(a, {STEPS[0]})"),
        "ab_rot.seal": (ab_rot, "Ciphertext", "zlib", f"rotate_vector(ab_rescaled, {STEPS[1]})"),
    }
    for name in ("a", "b", "ab_relin", "ab_rescaled", "a_rot1", "ab_rot"):
        obj = files[f"{name}.seal"][0]
        mode = "zlib" if name in ("b", "a_rot1") else "zstd" if name == "ab_rot" else "none"
        what = f"decrypt({name}) with the secret key"
        files[f"{name}_decrypted.seal"] = (decryptor.decrypt(obj), "Plaintext", mode, what)

    manifest: dict[str, Any] = {
        "made_by": "scripts/peers/seal_vectors.py with seal-python " + seal.__version__,
        "scheme": "ckks",
        "n": N,
        "coeff_modulus_bits": list(BITS),
        "coeff_modulus": [m.value() for m in parms.coeff_modulus()],
        "sec_level": "none",
        "scale": SCALE,
        "rotation_steps": list(STEPS),
        "seed": SEED,
        "values": {
            "file": "values.npz",
            "a": "the values encoded in a_plain (complex128, n/2)",
            "b": "the values encrypted in b",
            "seal_decode_ab_rot": "SEAL's decode_complex of ab_rot_decrypted",
        },
        "seal_create_60_40_40_60": [
            m.value() for m in seal.CoeffModulus.Create(N, [60, 40, 40, 60])
        ],
        "files": {},
    }
    for name, (obj, kind, compression, what) in files.items():
        blob, by = _saved(obj, kind, compression)
        (out / name).write_bytes(blob)
        manifest["files"][name] = {
            "kind": kind,
            "compression": compression,
            "compressed_by": by if compression != "none" else None,
            "what": what,
            "bytes": len(blob),
        }
    seal_decode = np.asarray(encoder.decode_complex(files["ab_rot_decrypted.seal"][0]))
    np.savez(out / "values.npz", a=va, b=vb, seal_decode_ab_rot=seal_decode)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python scripts/peers/seal_vectors.py OUT_DIR", file=sys.stderr)
        return 2
    manifest = make(Path(argv[1]))
    total = sum(f["bytes"] for f in manifest["files"].values())
    print(f"{len(manifest['files'])} files, {total} bytes, in {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
