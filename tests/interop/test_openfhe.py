"""``ren.interop.openfhe``: OpenFHE 1.x's saved CKKS objects read and checked word for word.

Every expected value is OpenFHE's own output, in ``tests/vectors/openfhe`` (made by
``scripts/peers/openfhe_vectors.py``; its ``README.md`` says what each file is): the words of
its JSON files, what it decrypted each ciphertext to before decoding (the manifest's ``plain``,
from ``SchemeletRLWEMP.DecryptCoeff``), its decoded slots, its tensor product and its rescale.
Python integers do the few sums, products and searches the checks need; the values OpenFHE
encrypted are the oracle of its precision. Nothing expected was copied from Ren's output.

The checks take a folder: ``test_vectors_made_now`` runs them all on vectors OpenFHE makes during
the test, where OpenFHE's Python (``.venv-openfhe``, see ``benchmarks/peers/README.md``) exists.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ren import Poly
from ren.interop import openfhe as of
from ren.ring import primitive_root_2n

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "tests" / "vectors" / "openfhe"
SCRIPT = ROOT / "scripts" / "peers" / "openfhe_vectors.py"
KINDS = {
    "ciphertext": of.OpenFHECiphertext,
    "public key": of.OpenFHEPublicKey,
    "secret key": of.OpenFHESecretKey,
    "eval mult key": tuple,
    "crypto context": of.OpenFHEParams,
}


def manifest(d: Path) -> dict[str, Any]:
    return json.loads((d / "manifest.json").read_text())


def decrypted(d: Path) -> dict[str, Any]:
    """The ciphertexts OpenFHE decrypted to words (``plain``): two parts each."""
    return {k: v for k, v in manifest(d)["ciphertexts"].items() if "plain" in v}


def pointwise(ct: of.OpenFHEValue, sk: of.OpenFHEValue) -> np.ndarray:
    """``c_0 + c_1 s (+ c_2 s^2)`` slot by slot on the files' own words, with Python ints."""
    out = []
    for i, q in enumerate(ct.moduli):
        s = [int(x) for x in sk.words[0, i]]
        acc = [int(x) for x in ct.words[0, i]]
        power = s
        for part in ct.words[1:]:
            acc = [(x + int(c) * p) % q for x, c, p in zip(acc, part[i], power, strict=True)]
            power = [p * t % q for p, t in zip(power, s, strict=True)]
        out.append(acc)
    return np.array(out, dtype=np.uint64)


def centered(values: list[int], q: int) -> list[int]:
    return [v - q if v > q // 2 else v for v in (x % q for x in values)]


# --- the checks, each on a folder of vectors ---------------------------------------------------


def check_files_parse(d: Path) -> None:
    m = manifest(d)
    params = of.read_context(d / "context.json")
    want = m["parameters"]
    assert (params.n, list(params.moduli)) == (want["ring_dim"], want["moduli"])
    assert params.scaling_technique == want["scaling_technique"]
    assert params.scaling_mod_size == want["scaling_mod_size"]
    assert params.batch_size == want["batch_size"]
    assert params.data_type == want["ckks_data_type"]
    assert params.security_level == want["security_level"]
    assert params.key_switching == want["key_switching"]
    assert params.multiplicative_depth == want["multiplicative_depth"]
    for name, entry in m["files"].items():
        value = of.read(d / name)
        assert isinstance(value, KINDS[entry["kind"]]), name
        for v in value if isinstance(value, tuple) else [value]:
            got = v if isinstance(v, of.OpenFHEParams) else v.params
            assert got.moduli == params.moduli and got.n == params.n, name
    for name, entry in m["ciphertexts"].items():
        ct = of.read_ciphertext(d / name)
        assert ct.words.shape == (entry["parts"], entry["towers"], params.n), name
        assert ct.moduli == params.moduli[: entry["towers"]] and ct.form == "ntt"
        assert (ct.level, ct.noise_scale_degree) == (entry["level"], entry["noise_scale_degree"])
        assert (ct.scale, ct.slots) == (entry["scaling_factor"], entry["slots"])


def check_roots(d: Path) -> None:
    """Every tower's root (the P towers' too) is the smallest primitive 2n-th root, Ren's."""
    (key,) = of.read_eval_mult_keys(d / "eval_mult_key.json")
    n = key.params.n
    for q, root in zip(key.moduli, key.roots, strict=True):
        assert pow(root, n, q) == q - 1
        assert root == min(pow(root, k, q) for k in range(1, 2 * n, 2))  # all primitive roots
        assert root == primitive_root_2n(q, n) and of.root_power(root, q, n) == 1
    assert len(key.p_moduli) == 2 and all(p % (2 * n) == 1 for p in key.p_moduli)
    a3 = of.read_ciphertext(d / "a_root3.json")
    assert [of.root_power(r, q, n) for q, r in zip(a3.moduli, a3.roots, strict=True)] == [3] * 3


def check_decrypt(d: Path) -> None:
    sk = of.read_secret_key(d / "secret_key.json")
    for name, entry in decrypted(d).items():
        m = of.decrypt(of.read_ciphertext(d / name), sk)
        assert m.tolist(centered=True) == entry["plain"], name


def check_decode(d: Path) -> None:
    m = manifest(d)
    sk = of.read_secret_key(d / "secret_key.json")
    values = {k: np.array([complex(*p) for p in v]) for k, v in m["values"].items()}
    for name, entry in m["ciphertexts"].items():
        ct = of.read_ciphertext(d / name)
        got = of.decode(of.decrypt(ct, sk), ct)
        assert np.max(np.abs(got - [complex(*p) for p in entry["decoded"]])) < 1e-9, name
        stem = name.removesuffix(".json")
        want = values["a"] * values["b"] if stem.startswith("ab") else values[stem]
        assert np.max(np.abs(got - want)) < 2.0**-12, name  # OpenFHE's precision at 2^30


def check_ntt(d: Path) -> None:
    """OpenFHE's EVALUATION words are Ren's NTT of the same coefficients, word for word."""
    sk = of.read_secret_key(d / "secret_key.json")
    for name, entry in decrypted(d).items():
        ct = of.read_ciphertext(d / name)
        theirs = pointwise(ct, sk)  # OpenFHE's decryption in its evaluation form
        ours = Poly(entry["plain"], of.ring(ct)).ntt().limbs()  # Ren's NTT of its coefficients
        assert np.array_equal(of.to_ren_ntt(theirs, ct.moduli, ct.roots), ours), name
        assert np.array_equal(theirs, ours), name  # OpenFHE's roots are Ren's: no permutation
        assert np.array_equal(of.from_ren_ntt(ours, ct.moduli, ct.roots), theirs), name


def check_another_root(d: Path) -> None:
    """Under the cubed roots OpenFHE's words mean another polynomial; the map finds Ren's slots."""
    other = manifest(d)["other_root"]
    ct = of.read_ciphertext(d / other["ciphertext"])
    sk = of.read_secret_key(d / other["secret_key"])
    theirs = pointwise(ct, sk)
    ours = Poly(other["plain"], of.ring(ct)).ntt().limbs()
    mapped = of.to_ren_ntt(theirs, ct.moduli, ct.roots)
    assert np.array_equal(mapped, ours) and not np.array_equal(theirs, ours)
    assert np.array_equal(of.from_ren_ntt(ours, ct.moduli, ct.roots), theirs)
    assert of.decrypt(ct, sk).tolist(centered=True) == other["plain"]
    # the same words under root psi^3 are a(X^g), g = 3^-1 mod 2n: coefficient i moves to g i
    n, plain = ct.params.n, decrypted(d)["a.json"]["plain"]
    g, moved = pow(other["power"], -1, 2 * n), [0] * ct.params.n
    for i, c in enumerate(plain):
        j = i * g % (2 * n)
        moved[j % n] = c if j < n else -c
    assert other["plain"] == moved


def check_tensor_and_rescale(d: Path) -> None:
    a, b, ab, tensor, rescaled = (
        of.to_polys(of.read_ciphertext(d / f"{x}.json"))
        for x in ("a", "b", "ab", "ab_tensor", "ab_rescaled")
    )
    ours = (a[0] * b[0], a[0] * b[1] + a[1] * b[0], a[1] * b[1])
    for k in range(3):
        assert np.array_equal(ours[k].limbs(), tensor[k].limbs()), f"tensor part {k}"
    for k in range(2):
        assert rescaled[k].ring.moduli == ab[k].ring.moduli[:-1]
        assert np.array_equal(ab[k].rescale().ntt().limbs(), rescaled[k].limbs()), f"part {k}"


def check_keys(d: Path) -> None:
    sk = of.read_secret_key(d / "secret_key.json")
    bound = 10 * sk.params.sigma
    limbs = zip(sk.moduli, of.to_poly(sk).intt().limbs(), strict=True)
    coeffs = [centered([int(x) for x in row], q) for q, row in limbs]
    assert all(c == coeffs[0] for c in coeffs) and set(coeffs[0]) <= {-1, 0, 1}  # one ternary s
    e = of.public_key_error(of.read_public_key(d / "public_key.json"), sk).tolist(centered=True)
    assert 0 < max(map(abs, e)) <= bound
    (key,) = of.read_eval_mult_keys(d / "eval_mult_key.json")
    assert key.power == 2 and len(key.words) == 2 * key.params.dnum == 4
    assert [list(t) for t in of.digit_towers(key)] == [[0, 1], [2]]  # 3 towers, 2 digits
    for j, err in enumerate(of.eval_key_errors(key, sk)):  # a wrong digit: errors of ~Q
        assert 0 < max(map(abs, err.tolist(centered=True))) <= bound, f"digit {j}"


CHECKS = [
    check_files_parse,
    check_roots,
    check_decrypt,
    check_decode,
    check_ntt,
    check_another_root,
    check_tensor_and_rescale,
    check_keys,
]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__.removeprefix("check_"))
def test_committed_vectors(check):
    check(VECTORS)


# --- Ren values ------------------------------------------------------------------------------


def test_to_ckks_carries_the_level_and_openfhe_decoding_scale():
    ct = of.read_ciphertext(VECTORS / "ab.json")
    ren_ct = of.to_ckks(ct)
    assert ren_ct.level == 2 and ren_ct.scale == 2.0**60 == of.decode_scale(ct) == ct.scale
    assert all(np.array_equal(p.limbs(), w) for p, w in zip(ren_ct.parts, ct.words, strict=True))


def test_a_coefficient_form_file_reads_as_coefficients():
    """OpenFHE's COEFFICIENT format (``f: 1``): its plain words as ``c_0``, ``c_1 = 0``."""
    doc = json.loads((VECTORS / "a.json").read_text())
    plain = decrypted(VECTORS)["a.json"]["plain"]
    data = doc["value0"]["ptr_wrapper"]["data"]
    for k, poly in enumerate(data["v"]):
        poly["f"] = 1
        for tower in poly["v"]:
            vec = tower["v"]["ptr_wrapper"]["data"]
            q = vec["m"]["v"]
            vec["v"] = [c % q for c in plain] if k == 0 else [0] * len(plain)
            tower["f"] = 1
    ct = of.read_ciphertext(json.dumps(doc))
    assert ct.form == "coeff"
    m = of.decrypt(ct, of.read_secret_key(VECTORS / "secret_key.json"))
    assert m.tolist(centered=True) == plain


# --- clear errors ------------------------------------------------------------------------------


def edited(name: str, edit) -> str:
    doc = json.loads((VECTORS / name).read_text())
    edit(doc)
    return json.dumps(doc)


def tower0(doc: dict) -> dict:
    return doc["value0"]["ptr_wrapper"]["data"]["v"][0]["v"][0]


def set_word(doc: dict, value: Any) -> None:
    tower0(doc)["v"]["ptr_wrapper"]["data"]["v"][5] = value


BAD: dict[str, tuple[Any, str]] = {
    "not JSON": (b"\x00\x01cereal binary", "not JSON"),
    "binary": (b"\x80\x81", "save the object again with SERJSON"),
    "not CKKS": (
        (VECTORS / "a.json")
        .read_text()
        .replace("CryptoParametersCKKSRNS", "CryptoParametersBGVRNS"),
        "only CKKS",
    ),
    "word too large": (
        edited("a.json", lambda d: set_word(d, 2**63)),
        "tower 0, index 5: word 9223372036854775808 is not an integer in [0, 35184372088321)",
    ),
    "negative word": (edited("a.json", lambda d: set_word(d, -1)), "word -1 is not an integer"),
    "float word": (edited("a.json", lambda d: set_word(d, 1.5)), "word 1.5 is not an integer"),
    "short tower": (
        edited("a.json", lambda d: tower0(d)["v"]["ptr_wrapper"]["data"]["v"].pop()),
        "holds 63 words; the ring dimension is 64",
    ),
    "format": (
        edited("a.json", lambda d: d["value0"]["ptr_wrapper"]["data"]["v"][1].update(f=7)),
        "format 7, not 0 (EVALUATION) or 1 (COEFFICIENT)",
    ),
    "modulus": (
        edited("a.json", lambda d: tower0(d)["v"]["ptr_wrapper"]["data"]["m"].update(v=17)),
        "its words are modulo 17, its parameters say 35184372088321",
    ),
    "dangling": (
        edited("a.json", lambda d: tower0(d)["p"]["ptr_wrapper"].update(id=99)),
        "refers to object 99, which the file never holds",
    ),
    "encoding": (
        edited("a.json", lambda d: d["value0"]["ptr_wrapper"]["data"].update(e=2)),
        "encoding is 2, not CKKS packed (4)",
    ),
    "unknown": ('{"value0": {"ptr_wrapper": {"id": 1, "data": {"x": 1}}}}', "fields ['x']"),
    "no value0": ('{"other": 1}', "no 'value0' in the top level"),
    "scaling": (
        edited(
            "context.json",
            lambda d: d["value0"]["ptr_wrapper"]["data"]["cc"]["ptr_wrapper"]["data"][
                "value0"
            ].update(rs=42),
        ),
        "the scaling technique (rs) is 42",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_input_is_a_value_error_that_says_what_is_wrong(case):
    source, words = BAD[case]
    with pytest.raises(ValueError, match="accepted") as info:
        of.read(source)
    assert words in str(info.value)


def test_the_wrong_kind_names_both():
    with pytest.raises(ValueError, match=r"public_key\.json holds a public key, not a ciphertext"):
        of.read_ciphertext(VECTORS / "public_key.json")
    with pytest.raises(ValueError, match="holds eval mult keys, not a private key"):
        of.read_secret_key(VECTORS / "eval_mult_key.json")
    with pytest.raises(FileNotFoundError):
        of.read(VECTORS / "no-such-file.json")
    with pytest.raises(TypeError, match="path, JSON text or bytes"):
        of.read(42)  # type: ignore[arg-type]


def test_keys_of_another_pair_and_bad_roots_are_refused():
    ct = of.read_ciphertext(VECTORS / "a.json")
    sk = of.read_secret_key(VECTORS / "secret_key.json")
    other = dataclasses.replace(sk, key_tag="0" * 32)
    with pytest.raises(ValueError, match="another key pair"):
        of.decrypt(ct, other)
    q, n = ct.moduli[0], ct.params.n
    with pytest.raises(ValueError, match=f"not a primitive 128-th root of unity modulo {q}"):
        of.root_power(1, q, n)
    with pytest.raises(ValueError, match="one modulus and one root per limb"):
        of.to_ren_ntt(ct.words, ct.moduli[:2], ct.roots[:2])


def test_the_readme_names_every_file():
    readme = (VECTORS / "README.md").read_text()
    for path in sorted(VECTORS.iterdir()):
        assert f"`{path.name}`" in readme or path.name == "README.md", path.name
    assert sum(p.stat().st_size for p in VECTORS.iterdir()) < 1_000_000


# --- vectors made now, where OpenFHE's Python is installed --------------------------------------


def _peer():
    spec = importlib.util.spec_from_file_location(
        "openfhe_peer", ROOT / "benchmarks/openfhe_peer.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_vectors_made_now(tmp_path: Path):
    peer = _peer()
    python = peer.find_python()
    if python is None:
        pytest.skip(peer.skip_reason())
    out = tmp_path / "openfhe"
    subprocess.run([python, str(SCRIPT), str(out)], check=True, capture_output=True, timeout=600)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        p.name for p in VECTORS.iterdir() if p.name != "README.md"
    )
    for check in CHECKS:
        check(out)
