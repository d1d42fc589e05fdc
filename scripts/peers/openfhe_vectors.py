"""Make OpenFHE CKKS test vectors for ``ren.interop.openfhe``: run by hand, with OpenFHE's wheel.

Usage (the wheel imports only on Python 3.10; set-up in ``benchmarks/peers/README.md``)::

    .venv-openfhe/bin/python scripts/peers/openfhe_vectors.py OUT_DIR
    .venv-openfhe/bin/python scripts/peers/openfhe_vectors.py OUT_DIR --key-switching BV \
        [--digit-size B]
    .venv-openfhe/bin/python scripts/peers/openfhe_vectors.py --precision OUT.json

OpenFHE makes small CKKS parameters (``n = 64``, three towers, ``FIXEDMANUAL`` rescaling,
``HEStd_NotSet``: test data only), a key pair and the relinearization key, encrypts two vectors of
seeded random complex values (``n/2`` slots) and a third of 8 slots (packed sparsely), multiplies
the first two (``EvalMult``, which relinearizes; ``EvalMultNoRelin``, three parts) and rescales
the product. Every object is written as OpenFHE's
``SerializeToFile(..., SERJSON)`` writes it. ``manifest.json`` holds the parameters, the values,
and for each ciphertext what OpenFHE decrypts it to:

* ``plain``: the polynomial ``c_0 + c_1 s`` before decoding, its ``n`` coefficients as signed
  integers, from OpenFHE itself (``SchemeletRLWEMP.ConvertCKKSToRLWE`` brings the ciphertext to
  coefficient form over its own modulus ``Q``, ``DecryptCoeff`` with ``p = Q`` computes ``b + a
  s``, interpolates it and reads every coefficient: both modulus switches are by ``Q/Q``);
* ``decoded``: ``Decrypt`` then ``GetCKKSPackedValue``. The data type is ``COMPLEX``, under which
  OpenFHE's decoding adds no noise of its own (with ``REAL`` it adds a Gaussian draw to every
  slot), so the decoded values are a function of ``plain``.

``DecryptCoeff`` returns 64-bit integers: the scale is ``2^30`` so that even the product before
rescaling (scale ``2^60``) fits, and the script checks every ``plain`` against OpenFHE's decoded
values (an overflow would not decode to them).

**Another root of unity.** ``a_root3.json`` and ``secret_key_root3.json`` are ``a.json`` and
``secret_key.json`` with every tower's root of unity (``ru``) replaced by its cube, the words left
as they are: an edit by this script, not OpenFHE's output. A fresh OpenFHE process reads them, so
its NTT tables are built from those roots, and decrypts; ``manifest["other_root"]["plain"]`` is
what it gives. It shows how OpenFHE's evaluation form depends on the root its file names.

**BV key switching** (``--key-switching BV``, for ``tests/vectors/openfhe-bv``): the same
parameters with ``KeySwitchTechnique.BV`` and OpenFHE's digit size ``B`` (``SetDigitSize``; 0,
OpenFHE's default, is one digit per tower; at most 30). Only the files a relinearization needs
are written: the context, the secret key, the eval mult key, ``a``, ``b``, their product ``ab``
(``EvalMult``) and ``ab_tensor`` (``EvalMultNoRelin``); the manifest's parameters add
``digit_size``.

**Precision** (``--precision OUT.json``): OpenFHE's CKKS precision at ``n = 8192``, scale
``2^40``, ``Q`` of 60, 40 and 40 bits asked for (OpenFHE picks 60, 40 and 41; ``FIXEDMANUAL``,
``HEStd_NotSet``, data type ``COMPLEX``): ``-log2`` of the largest error over the ``n/2`` slots,
against NumPy, on values of magnitude at most 1, of a fresh encryption, of ``EvalMult`` then
``Rescale`` and of ``EvalRotate`` by 1, for HYBRID key switching and BV at several digit sizes
(``PRECISION_CASES``); each figure is the worst of ``PRECISION_RUNS`` key pairs.

OpenFHE's randomness cannot be seeded from Python, so two runs give different keys and
ciphertexts (the values are seeded): the files in ``tests/vectors/openfhe`` were made once.
Standard library, NumPy and ``openfhe`` only: Ren is not imported.
"""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import openfhe as fhe

N = 64
DEPTH = 2  # towers q_0, q_1, q_2
FIRST_MOD_BITS = 45
SCALE_BITS = 30
SEED = 20241125  # for the values only: OpenFHE's own randomness is not seedable
ROOT_POWER = 3  # the other root of unity: each tower's root to this power
SPARSE = 8  # the slots of c.json: fewer than n/2, so OpenFHE packs them sparsely


def _values(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` complex values in the disk of radius 0.9 (a product stays below 1)."""
    radius = 0.9 * np.sqrt(rng.uniform(0, 1, count))
    return radius * np.exp(2j * np.pi * rng.uniform(0, 1, count))


def _pairs(values: Any) -> list[list[float]]:
    return [[float(np.real(v)), float(np.imag(v))] for v in values]


def _towers(path: Path) -> int:
    """The number of towers of the ciphertext saved at ``path``."""
    data = json.loads(path.read_text())["value0"]["ptr_wrapper"]["data"]
    return len(data["v"][0]["v"])


def _plain(ct: Any, keys: Any, towers: int) -> list[int]:
    """OpenFHE's ``c_0 + c_1 s`` of a 2-part ciphertext over its ``towers`` towers, every
    coefficient, as signed integers."""
    rlwe = fhe.SchemeletRLWEMP
    q = rlwe.GetQPrime(keys.publicKey, towers - 1)
    params = rlwe.GetElementParams(keys.secretKey, DEPTH + 1 - towers)
    coeff = rlwe.ConvertCKKSToRLWE(ct, q)
    return [int(x) for x in rlwe.DecryptCoeff(coeff, q, q, keys.secretKey, params, N // 2, N)]


def _moduli(keys: Any) -> list[int]:
    """``q_0, q_1, ...`` from OpenFHE's products ``q_0 ... q_l`` (``GetQPrime``)."""
    products = [int(fhe.SchemeletRLWEMP.GetQPrime(keys.publicKey, l)) for l in range(DEPTH + 1)]
    return [products[0]] + [b // a for a, b in itertools.pairwise(products)]


def _decoded(cc: Any, keys: Any, ct: Any) -> np.ndarray:
    pt = cc.Decrypt(keys.secretKey, ct)
    pt.SetLength(ct.GetSlots())
    return np.array(pt.GetCKKSPackedValue(), dtype=np.complex128)


def _check(name: str, plain: list[int], decoded: np.ndarray, degree: int) -> None:
    """``plain`` decodes to OpenFHE's values: slot ``j`` is ``m(zeta^(5^j)) / 2^(30 degree)``,
    ``m`` the coefficients OpenFHE reads (every ``n / (2 slots)``-th)."""
    zeta = np.exp(1j * np.pi * np.arange(N) / N)
    roots = [(pow(5, j, 2 * N) - 1) // 2 for j in range(len(decoded))]
    m = np.array(plain, dtype=np.float64) / 2.0 ** (SCALE_BITS * degree)
    gap = N // (2 * len(decoded))
    m[np.arange(N) % gap != 0] = 0.0
    slots = (N * np.fft.ifft(m * zeta))[roots]
    err = float(np.max(np.abs(slots - decoded)))
    if not err < 1e-6:
        raise RuntimeError(f"{name}: the words do not decode to OpenFHE's values (error {err})")


def _cube_roots(text: str) -> str:
    """The JSON ``text`` with every tower's root of unity (``ru``) to the ``ROOT_POWER``."""
    data = json.loads(text)
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            cm, ru = node.get("cm"), node.get("ru")
            tower = isinstance(cm, dict) and isinstance(cm.get("v"), int)
            if tower and isinstance(ru, dict) and ru.get("v"):
                ru["v"] = pow(ru["v"], ROOT_POWER, cm["v"])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return json.dumps(data, indent=4)


def _decrypt_files(secret_key: str, ciphertext: str, towers: int) -> list[int]:
    """In this process (a fresh one): OpenFHE's ``c_0 + c_1 s`` of the saved files."""
    sk, ok = fhe.DeserializePrivateKey(secret_key, fhe.JSON)
    ct, ok2 = fhe.DeserializeCiphertext(ciphertext, fhe.JSON)
    if not (ok and ok2):
        raise RuntimeError(f"OpenFHE could not read {secret_key} or {ciphertext}")
    data = json.loads(Path(ciphertext).read_text())["value0"]["ptr_wrapper"]["data"]
    q = math.prod(t["v"]["ptr_wrapper"]["data"]["m"]["v"] for t in data["v"][0]["v"])
    params = fhe.SchemeletRLWEMP.GetElementParams(sk, DEPTH + 1 - towers)
    coeff = fhe.SchemeletRLWEMP.ConvertCKKSToRLWE(ct, q)
    return [int(x) for x in fhe.SchemeletRLWEMP.DecryptCoeff(coeff, q, q, sk, params, N // 2, N)]


def _context(
    key_switching: str,
    digit_size: int,
    n: int = N,
    bits: tuple[int, int] = (FIRST_MOD_BITS, SCALE_BITS),
) -> Any:
    """A CKKS context: ring ``n``, depth 2, ``bits`` the first modulus's and the scale's,
    ``FIXEDMANUAL``, ``COMPLEX``, ``HEStd_NotSet``; BV key switching with ``digit_size`` where
    asked (HYBRID, OpenFHE's default, is left as it is)."""
    p = fhe.CCParamsCKKSRNS()
    p.SetRingDim(n)
    p.SetSecurityLevel(fhe.SecurityLevel.HEStd_NotSet)
    p.SetMultiplicativeDepth(DEPTH)
    p.SetFirstModSize(bits[0])
    p.SetScalingModSize(bits[1])
    p.SetBatchSize(n // 2)
    p.SetScalingTechnique(fhe.ScalingTechnique.FIXEDMANUAL)
    p.SetCKKSDataType(fhe.CKKSDataType.COMPLEX)
    if key_switching == "BV":
        p.SetKeySwitchTechnique(fhe.KeySwitchTechnique.BV)
        p.SetDigitSize(digit_size)
    cc = fhe.GenCryptoContext(p)
    for feature in (fhe.PKE, fhe.KEYSWITCH, fhe.LEVELEDSHE):
        cc.Enable(feature)
    return cc


def make(out: Path, key_switching: str = "HYBRID", digit_size: int = 0) -> dict[str, Any]:
    """Write the vectors to ``out`` (created if need be); returns the manifest.

    ``key_switching`` ``"HYBRID"`` (every file) or ``"BV"`` (with ``digit_size``: the files a
    relinearization needs).
    """
    out.mkdir(parents=True, exist_ok=True)
    hybrid = key_switching == "HYBRID"
    cc = _context(key_switching, digit_size)
    keys = cc.KeyGen()
    cc.EvalMultKeyGen(keys.secretKey)

    rng = np.random.default_rng(SEED)
    va, vb, vc = _values(rng, N // 2), _values(rng, N // 2), _values(rng, SPARSE)
    a = cc.Encrypt(keys.publicKey, cc.MakeCKKSPackedPlaintext([complex(v) for v in va]))
    b = cc.Encrypt(keys.publicKey, cc.MakeCKKSPackedPlaintext([complex(v) for v in vb]))
    ab = cc.EvalMult(a, b)
    ab_tensor = cc.EvalMultNoRelin(a, b)

    files: dict[str, tuple[str, str]] = {
        "context.json": ("crypto context", "SerializeToFile(cc): the parameters, no keys"),
        "secret_key.json": ("secret key", "KeyGen().secretKey"),
        "public_key.json": ("public key", "KeyGen().publicKey"),
        "eval_mult_key.json": ("eval mult key", "SerializeEvalMultKey after EvalMultKeyGen"),
        "a.json": ("ciphertext", "Encrypt(publicKey, values a)"),
        "b.json": ("ciphertext", "Encrypt(publicKey, values b)"),
        "c.json": ("ciphertext", f"Encrypt(publicKey, values c): {SPARSE} slots, sparse"),
        "ab.json": ("ciphertext", "EvalMult(a, b): multiplied and relinearized, 2 parts"),
        "ab_tensor.json": ("ciphertext", "EvalMultNoRelin(a, b): 3 parts"),
        "ab_rescaled.json": ("ciphertext", "Rescale(ab): the last tower dropped"),
    }
    objects = {"a.json": a, "b.json": b, "ab.json": ab, "ab_tensor.json": ab_tensor}
    objects |= {"context.json": cc, "secret_key.json": keys.secretKey}
    if hybrid:
        c = cc.Encrypt(keys.publicKey, cc.MakeCKKSPackedPlaintext(list(vc), 1, 0, None, SPARSE))
        objects |= {"c.json": c, "ab_rescaled.json": cc.Rescale(ab)}
        objects |= {"public_key.json": keys.publicKey}
    else:
        files = {k: v for k, v in files.items() if k in objects or k == "eval_mult_key.json"}
    for name, obj in objects.items():
        if not fhe.SerializeToFile(str(out / name), obj, fhe.JSON):
            raise RuntimeError(f"OpenFHE could not write {name}")
    if not cc.SerializeEvalMultKey(str(out / "eval_mult_key.json"), fhe.JSON):
        raise RuntimeError("OpenFHE could not write eval_mult_key.json")

    ciphertexts: dict[str, Any] = {}
    for name in [k for k in files if files[k][0] == "ciphertext"]:
        ct = objects[name]
        towers, degree = _towers(out / name), ct.GetNoiseScaleDeg()
        decoded = _decoded(cc, keys, ct)
        entry: dict[str, Any] = {
            "parts": ct.NumberCiphertextElements(),
            "towers": towers,
            "level": ct.GetLevel(),
            "noise_scale_degree": degree,
            "scaling_factor": ct.GetScalingFactor(),
            "slots": ct.GetSlots(),
            "decoded": _pairs(decoded),
        }
        if entry["parts"] == 2:  # DecryptCoeff reads b + a s: two parts only
            entry["plain"] = _plain(ct, keys, towers)
            _check(name, entry["plain"], decoded, degree)
        ciphertexts[name] = entry

    parameters: dict[str, Any] = {
        "ring_dim": N,
        "multiplicative_depth": DEPTH,
        "first_mod_size": FIRST_MOD_BITS,
        "scaling_mod_size": SCALE_BITS,
        "batch_size": N // 2,
        "scaling_technique": "FIXEDMANUAL",
        "ckks_data_type": "COMPLEX",
        "security_level": "HEStd_NotSet",
        "key_switching": cc.GetKeySwitchTechnique().name,
        "moduli": _moduli(keys),
    }
    values = {"a": _pairs(va), "b": _pairs(vb)}
    if hybrid:
        other_root = _other_root(out, files, ciphertexts["a.json"]["towers"])
        values["c"] = _pairs(vc)
    else:
        parameters["digit_size"] = digit_size
    manifest: dict[str, Any] = {
        "made_by": f"scripts/peers/openfhe_vectors.py with openfhe {fhe.__version__}",
        "numpy": np.__version__,
        "scheme": "CKKS",
        "parameters": parameters,
        "seed": SEED,
        "values": values,
        "files": {
            name: {"kind": kind, "what": what, "bytes": (out / name).stat().st_size}
            for name, (kind, what) in files.items()
        },
        "ciphertexts": ciphertexts,
    }
    if hybrid:
        manifest["other_root"] = other_root
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest


def _other_root(out: Path, files: dict[str, tuple[str, str]], towers: int) -> dict[str, Any]:
    """Writes ``a_root3.json`` and ``secret_key_root3.json`` (adds them to ``files``); returns
    the manifest's ``other_root``: what a fresh OpenFHE process decrypts them to."""
    for src, dst in (("a.json", "a_root3.json"), ("secret_key.json", "secret_key_root3.json")):
        (out / dst).write_text(_cube_roots((out / src).read_text()))
    files["a_root3.json"] = ("ciphertext", f"a.json, every root of unity to the {ROOT_POWER}rd")
    files["secret_key_root3.json"] = ("secret key", "secret_key.json, the same edit")
    cmd = [sys.executable, __file__, "--decrypt", str(out / "secret_key_root3.json")]
    cmd += [str(out / "a_root3.json"), str(towers)]
    fresh = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return {
        "ciphertext": "a_root3.json",
        "secret_key": "secret_key_root3.json",
        "power": ROOT_POWER,
        "plain": json.loads(fresh.stdout),
    }


# --- precision: OpenFHE's own, the peer figure for Ren's key switching ---------------------------

#: ``(key switching, digit size)``: HYBRID (OpenFHE's default digits), BV at each digit size.
PRECISION_CASES = (("HYBRID", 0), ("BV", 0), ("BV", 5), ("BV", 10), ("BV", 20), ("BV", 30))
PRECISION_N = 8192
PRECISION_BITS = (60, 40)  # the first modulus, the scaling moduli (and the scale)
PRECISION_RUNS = 5  # key pairs per case: each figure is the worst of these


def _bits(got: list[complex], want: np.ndarray) -> float:
    err = float(np.max(np.abs(np.array(got[: len(want)]) - want)))
    return -math.log2(err) if err > 0 else math.inf


def _key_shape(key_tag: str) -> dict[str, Any]:
    """The relinearization key's digits and the bits of its towers (``Q``'s, then ``P``'s)."""
    doc = json.loads(fhe.SerializeEvalMultKeyString(fhe.JSON, key_tag))
    key = doc["value0"][0]["value"][0]["ptr_wrapper"]["data"]
    towers = key["ak"][0]["v"]
    bits = [t["v"]["ptr_wrapper"]["data"]["m"]["v"].bit_length() for t in towers]
    return {"digits": len(key["ak"]), "key_tower_bits": bits}


def precision_case(key_switching: str, digit_size: int, runs: int) -> dict[str, Any]:
    """The bits of a fresh encryption, ``EvalMult`` + ``Rescale`` and ``EvalRotate(1)`` for one
    case (each the worst of ``runs`` key pairs), and the shape of OpenFHE's key."""
    cc = _context(key_switching, digit_size, PRECISION_N, PRECISION_BITS)
    rng = np.random.default_rng(SEED)
    bits: dict[str, list[float]] = {"fresh": [], "mult_rescale": [], "rotate": []}
    for _ in range(runs):
        keys = cc.KeyGen()
        cc.EvalMultKeyGen(keys.secretKey)
        cc.EvalRotateKeyGen(keys.secretKey, [1])
        va, vb = (_values(rng, PRECISION_N // 2) / 0.9 for _ in range(2))  # |v| <= 1
        a, b = (
            cc.Encrypt(keys.publicKey, cc.MakeCKKSPackedPlaintext([complex(x) for x in v]))
            for v in (va, vb)
        )
        results = {
            "fresh": (a, va),
            "mult_rescale": (cc.Rescale(cc.EvalMult(a, b)), va * vb),
            "rotate": (cc.EvalRotate(a, 1), np.roll(va, -1)),
        }
        for name, (ct, want) in results.items():
            bits[name].append(_bits(_decoded(cc, keys, ct).tolist(), want))
        shape = _key_shape(keys.secretKey.GetKeyTag())
    fhe.ClearEvalMultKeys()
    cc.ClearEvalAutomorphismKeys()
    return {
        "key_switching": key_switching,
        "digit_size": digit_size,
        **shape,
        "runs": runs,
        **{f"{name}_bits": min(v) for name, v in bits.items()},
        "each_run": bits,
    }


def precision(out: Path) -> list[dict[str, Any]]:
    """Every ``PRECISION_CASES`` row, written to ``out`` as JSON with the set-up."""
    rows = [precision_case(ks, ds, PRECISION_RUNS) for ks, ds in PRECISION_CASES]
    doc = {
        "made_by": f"scripts/peers/openfhe_vectors.py --precision with openfhe {fhe.__version__}",
        "ring_dim": PRECISION_N,
        "q_bits_asked": [PRECISION_BITS[0], PRECISION_BITS[1], PRECISION_BITS[1]],
        "scale_bits": PRECISION_BITS[1],
        "scaling_technique": "FIXEDMANUAL",
        "security_level": "HEStd_NotSet",
        "ckks_data_type": "COMPLEX",
        "values": "uniform in the unit disk, n/2 slots",
        "bits": "-log2 of the largest absolute error over the slots, worst of the runs",
        "rows": rows,
    }
    out.write_text(json.dumps(doc, indent=1) + "\n")
    return rows


USAGE = (
    "usage: python scripts/peers/openfhe_vectors.py OUT_DIR [--key-switching HYBRID|BV] "
    "[--digit-size B]\n       python scripts/peers/openfhe_vectors.py --precision OUT.json"
)


def main(argv: list[str]) -> int:
    """``OUT_DIR [--key-switching BV] [--digit-size B]``: write the vectors; ``--precision
    OUT.json``: measure; ``--decrypt SK CT TOWERS``: print a decryption (JSON)."""
    if len(argv) == 5 and argv[1] == "--decrypt":
        print(json.dumps(_decrypt_files(argv[2], argv[3], int(argv[4]))))
        return 0
    if len(argv) == 3 and argv[1] == "--precision":
        for row in precision(Path(argv[2])):
            print(json.dumps({k: v for k, v in row.items() if k != "each_run"}))
        return 0
    args, options = argv[1:], {"--key-switching": "HYBRID", "--digit-size": "0"}
    while len(args) >= 2 and args[-2] in options:
        options[args[-2]] = args[-1]
        args = args[:-2]
    ks, ds = options["--key-switching"], options["--digit-size"]
    if len(args) != 1 or ks not in ("HYBRID", "BV") or not ds.isdigit():
        print(USAGE, file=sys.stderr)
        return 2
    if ks == "HYBRID" and ds != "0":
        print("--digit-size is BV's (HYBRID's digits are its dnum)", file=sys.stderr)
        return 2
    manifest = make(Path(args[0]), ks, int(ds))
    total = sum(f["bytes"] for f in manifest["files"].values())
    print(f"{len(manifest['files'])} files, {total} bytes, in {args[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
