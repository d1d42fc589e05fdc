"""``python -m ren.testing compare``: words compared, differences located, conventions named.

Oracles: arrays changed by hand with NumPy and Python integers (one word, a bit-reversed order,
a Montgomery factor, limbs swapped), Microsoft SEAL's own coefficient and NTT-form words
(``tests/vectors``), and the canonical embedding at powers of 5 and of 3.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ren.interop.words import Words, as_words, load_words
from ren.schemes import ckks
from ren.testing.cli import main as ren_testing_main
from ren.testing.compare_files import TRANSFORMS, apply, compare_words, main

VECTORS = Path(__file__).resolve().parents[1] / "vectors"
Q = (1152921504606844417, 1099511623297)  # two NTT-friendly primes (n = 8)
RNG = np.random.default_rng(4)


def random_words(parts: int = 2, n: int = 8) -> np.ndarray:
    return np.stack([[RNG.integers(0, q, n, dtype=np.uint64) for q in Q] for _ in range(parts)])


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_equal_files(tmp_path, capsys):
    a = random_words()
    np.save(tmp_path / "a.npy", a)
    np.savez(tmp_path / "b.npz", words=a, moduli=np.array(Q, dtype=np.uint64))
    status, out, _ = run(capsys, str(tmp_path / "a.npy"), f"{tmp_path / 'b.npz'}:words")
    assert status == 0 and "equal: all 32 words agree" in out
    assert ren_testing_main(["compare", str(tmp_path / "a.npy"), str(tmp_path / "a.npy")]) == 0


def test_the_first_difference_and_the_count_per_limb(tmp_path, capsys):
    a = random_words()
    b = a.copy()
    b[1, 0, 5] = (int(b[1, 0, 5]) + 1) % Q[0]
    b[1, 0, 6] = (int(b[1, 0, 6]) + 1) % Q[0]
    b[0, 1, 7] = (int(b[0, 1, 7]) + 1) % Q[1]
    result = compare_words(as_words(a, Q, source="a"), as_words(b, Q, source="b"))
    text = str(result)
    assert not result.equal and "differ: 3 of 32 words" in text
    assert f"first difference: part 0, limb 1 (q = {Q[1]}), word 7: " in text
    assert f"A {int(a[0, 1, 7])}, B {int(b[0, 1, 7])}" in text
    assert "part 0: differing words per limb: 0, 1" in text
    assert "part 1: differing words per limb: 2, 0" in text
    assert "no known convention" in text


def montgomery(a: np.ndarray, R: int) -> np.ndarray:
    out = a.astype(object)
    for limb, q in enumerate(Q):
        out[:, limb, :] = out[:, limb, :] * R % q
    return out.astype(np.uint64)


@pytest.mark.parametrize(
    ("name", "change"),
    [
        ("bitrev", lambda a: a[..., [0, 4, 2, 6, 1, 5, 3, 7]]),
        ("mont64", lambda a: montgomery(a, 2**64)),
        ("mont32", lambda a: montgomery(a, 2**32)),
        ("negate", lambda a: montgomery(a, -1)),
        ("times-n", lambda a: montgomery(a, 8)),
    ],
)
def test_a_known_convention_is_named_with_its_option(tmp_path, capsys, name, change):
    a = random_words()
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", change(a))
    moduli = ",".join(map(str, Q))
    status, out, _ = run(
        capsys, str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), "--moduli", moduli
    )
    assert status == 1
    assert f"--apply-a {name} makes them equal" in out
    status, out, _ = run(
        capsys,
        str(tmp_path / "a.npy"),
        str(tmp_path / "b.npy"),
        "--moduli",
        moduli,
        "--apply-a",
        name,
    )
    assert status == 0, out


def test_seals_ntt_is_rens_ntt():
    """SEAL's coefficient and NTT-form words of one ciphertext: Ren's NTT maps one to the other."""
    path = VECTORS / "seal_n16_30bit.npz"
    coeff, ntt = load_words(path, "a_coef"), load_words(path, "a_ntt")
    assert coeff.moduli is not None and coeff.moduli == ntt.moduli
    result = compare_words(coeff, ntt)
    assert not result.equal and "--apply-a ntt makes them equal" in str(result)
    assert compare_words(apply(coeff, "ntt"), ntt).equal
    assert compare_words(coeff, apply(ntt, "intt")).equal


def test_limbs_in_another_order_are_matched_by_modulus():
    a = random_words()
    b = Words(a[:, ::-1, :].copy(), Q[::-1], source="b")
    result = compare_words(as_words(a, Q, source="a"), b)
    assert result.equal and "the same moduli in another order" in str(result)


def test_slot_values_and_seals_order():
    n = 32
    coeffs = np.random.default_rng(1).uniform(-1, 1, n)
    ren = Words(ckks.embed(coeffs, n), source="ren")
    seal = Words(ckks.embed(coeffs, n, generator=3), source="seal")
    result = compare_words(ren, seal)
    assert not result.equal and "--apply-b seal-to-ren-slots makes them equal" in str(result)
    assert compare_words(ren, apply(seal, "seal-to-ren-slots")).equal
    close = Words(ren.words + 1e-9, source="close")
    assert compare_words(ren, close).equal and "bits" in str(compare_words(ren, close))


def test_rens_bytes(tmp_path, capsys):
    params = ckks.Params(n=16, q_bits=(40, 30), p_bits=(40,), scale_bits=20, insecure=True)
    with ckks.Context(params, seed=1):
        ct = ckks.encrypt(np.ones(8)).realize()
    (tmp_path / "ct.bin").write_bytes(ct.to_bytes())
    np.save(tmp_path / "limbs.npy", np.stack([p.limbs() for p in ct.parts]))
    status, out, _ = run(capsys, str(tmp_path / "ct.bin"), str(tmp_path / "limbs.npy"))
    assert status == 0 and "Ren ciphertext" in out and "ntt form" in out


def test_usage_errors(tmp_path, capsys):
    np.savez(tmp_path / "two.npz", x=np.zeros(4, np.uint64), y=np.zeros(4, np.uint64))
    np.save(tmp_path / "a.npy", np.zeros(4, np.uint64))
    status, _, err = run(capsys, str(tmp_path / "two.npz"), str(tmp_path / "a.npy"))
    assert status == 2 and "holds the arrays x, y: name one" in err
    status, _, err = run(capsys, str(tmp_path / "nope.npy"), str(tmp_path / "a.npy"))
    assert status == 2 and "no such file" in err
    status, _, err = run(capsys, str(tmp_path / "a.npy"), str(tmp_path / "a.npy"), "--apply-a", "x")
    assert status == 2 and "no transform 'x'" in err
    (tmp_path / "seal.bin").write_bytes(b"\x5e\xa1\x10\x04" + bytes(12))
    status, _, err = run(capsys, str(tmp_path / "seal.bin"), str(tmp_path / "a.npy"))
    assert status == 2 and "starts as a SEAL object but reads as none" in err
    (tmp_path / "openfhe.json").write_text('{"value0": {}}', encoding="utf-8")
    status, _, err = run(capsys, str(tmp_path / "openfhe.json"), str(tmp_path / "a.npy"))
    assert status == 2 and "openfhe.json" in err and "OpenFHE CKKS objects saved as JSON" in err
    for name, what in (("eval_mult_key.json", "eval mult keys"), ("context.json", "context")):
        status, _, err = run(capsys, str(VECTORS / "openfhe" / name), str(tmp_path / "a.npy"))
        assert status == 2 and what in err and "ciphertext, public key or secret key" in err
    (tmp_path / "junk.bin").write_bytes(b"\x00\x01junk")
    status, _, err = run(capsys, str(tmp_path / "junk.bin"), str(tmp_path / "a.npy"))
    assert status == 2 and "none of the files Ren compares" in err
    status, _, err = run(capsys, str(tmp_path / "a.npy"))
    assert status == 2 and "give two files" in err
    status, out, _ = run(capsys, "--list-transforms")
    assert status == 0 and all(name in out for name in TRANSFORMS)
    with pytest.raises(ValueError, match="needs the moduli"):
        apply(as_words(np.zeros((1, 1, 4), np.uint64), source="x"), "mont64")
    with pytest.raises(TypeError, match="integers or complex"):
        as_words(np.zeros(4), source="floats")


@pytest.mark.parametrize("n", [16, 64])
def test_lattigos_ntt_is_rens_with_another_root(n):
    """Lattigo's own test data: its NTT has Ren's values in the order of its root."""
    path = VECTORS / "lattigo" / f"lattigo_ntt_n{n}.npz"
    coeff, ntt = load_words(path, "coeff"), load_words(path, "ntt")
    assert not compare_words(apply(coeff, "ntt"), ntt).equal  # the order differs
    assert compare_words(apply(apply(coeff, "ntt"), "ren-to-lattigo-ntt"), ntt).equal
    assert compare_words(apply(coeff, "ntt"), apply(ntt, "lattigo-to-ren-ntt")).equal
    text = str(compare_words(coeff, ntt))
    assert "--apply-a ntt --apply-a ren-to-lattigo-ntt makes them equal" in text


@pytest.mark.parametrize("page", ["oracle.md", "conventions.md"])
def test_the_guides_show_what_the_command_prints(capsys, monkeypatch, page):
    root = VECTORS.parent.parent
    page = (root / "docs" / "guides" / page).read_text(encoding="utf-8")
    block = page.split("```console\n$ cd ", 1)[1].split("```", 1)[0]
    folder, command, shown = block.split("\n", 2)
    assert command.startswith("$ python -m ren.testing compare ")
    command = command.removeprefix("$ python -m ren.testing compare ")
    monkeypatch.chdir(root / folder)
    status, out, _ = run(capsys, *command.split())
    assert status == 1 and out == shown


def test_seal_files(capsys):
    """SEAL's saved ciphertexts and plaintexts, shaped as SEAL's manifest says."""
    import json

    seal = VECTORS / "seal"
    manifest = json.loads((seal / "manifest.json").read_text(encoding="utf-8"))
    n, moduli = manifest["n"], manifest["coeff_modulus"][:-1]  # the special prime is last
    a = load_words(seal / "a.seal")
    assert a.words.shape == (2, len(moduli), n) and a.form == "ntt" and a.moduli is None
    assert compare_words(a, a).equal
    status, out, _ = run(capsys, str(seal / "a.seal"), str(seal / "b.seal"))
    assert status == 1 and f"differ: {2 * len(moduli) * n} of" in out
    given = ",".join(map(str, moduli))
    status, out, _ = run(
        capsys, str(seal / "a_plain.seal"), str(seal / "a_plain.seal"), "--moduli", given
    )
    assert status == 0 and f"1 part(s) x {len(moduli)} limb(s) x {n} words" in out


def test_openfhe_files_read_in_ren_ntt_order(tmp_path, capsys):
    """OpenFHE's ciphertext and secret key, as compare reads them, decrypt to OpenFHE's words.

    Oracle: the manifest's ``plain``, the coefficients OpenFHE itself decrypted ``a.json`` to.
    ``c_0 + c_1 s`` taken word by word on the files' words (in Ren's NTT order) must be Ren's
    NTT of those coefficients, and compare must name that convention.
    """
    import json

    d = VECTORS / "openfhe"
    ct, sk = load_words(d / "a.json"), load_words(d / "secret_key.json")
    assert ct.form == sk.form == "ntt" and ct.words.shape == (2, 3, 64)
    assert (
        ct.moduli
        == sk.moduli
        == tuple(json.loads((d / "manifest.json").read_text())["parameters"]["moduli"])
    )
    assert "OpenFHE Ciphertext" in ct.source and "Ren's NTT order" in ct.source
    q = np.array(ct.moduli, dtype=object)[:, None]
    c0, c1, s = (ct.words[0].astype(object), ct.words[1].astype(object), sk.words[0].astype(object))
    m_ntt = (c0 + c1 * s) % q
    plain = json.loads((d / "manifest.json").read_text())["ciphertexts"]["a.json"]["plain"]
    m = np.array([[c % int(qi) for c in plain] for qi in ct.moduli], dtype=np.uint64)
    moduli = np.array(ct.moduli, dtype=np.uint64)
    np.savez(tmp_path / "ntt.npz", words=m_ntt.astype(np.uint64), moduli=moduli)
    np.savez(tmp_path / "plain.npz", words=m, moduli=moduli)
    status, out, _ = run(capsys, str(tmp_path / "ntt.npz"), str(tmp_path / "plain.npz"))
    assert status == 1 and "--apply-b ntt" in out, out
    status, out, _ = run(
        capsys, str(tmp_path / "ntt.npz"), str(tmp_path / "plain.npz"), "--apply-b", "ntt"
    )
    assert status == 0 and "equal" in out, out
    status, out, _ = run(capsys, str(d / "a.json"), str(d / "a.json"))
    assert status == 0 and "all 384 words agree" in out
