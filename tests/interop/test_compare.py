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


# --- SEAL's plaintexts, unknown moduli, hostile files --------------------------------------------


def seal_moduli() -> list[int]:
    import json

    manifest = json.loads((VECTORS / "seal" / "manifest.json").read_text(encoding="utf-8"))
    return manifest["coeff_modulus"][:-1]  # a fresh value's level: the special prime is last


def test_two_seal_plaintexts_compare_without_a_traceback(capsys):
    """SEAL's decryption of ``a`` against its encoding: the message plus the noise, not equal.

    A plaintext's file holds its limbs one after the other (3 x 1024 words here): without the
    moduli nothing says how many, so nothing is tried limb by limb and the report says so.
    """
    seal = VECTORS / "seal"
    status, out, err = run(capsys, str(seal / "a_decrypted.seal"), str(seal / "a_plain.seal"))
    assert (status, err) == (1, "") and "3072 words, the limbs of one level" in out
    assert "first difference: word 0:" in out and "give the moduli with --moduli" in out
    given = ",".join(map(str, seal_moduli()))
    status, out, _ = run(
        capsys, str(seal / "a_decrypted.seal"), str(seal / "a_plain.seal"), "--moduli", given
    )
    assert status == 1 and "1 part(s) x 3 limb(s) x 1024 words" in out
    a = load_words(seal / "a_decrypted.seal")
    assert a.words.shape == (1, 1, 3072) and not a.limbs_known
    with pytest.raises(ValueError, match="give the moduli with --moduli"):
        apply(a, "bitrev")
    status, out, _ = run(capsys, str(seal / "a.seal"), str(seal / "a_plain.seal"))
    assert "a_plain.seal (SEAL Plaintext), split as 3 limbs: 1 part(s) x 3 limb(s)" in out


def test_a_montgomery_difference_without_moduli_says_to_give_them(tmp_path, capsys):
    a = random_words()
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", montgomery(a, 2**64))
    status, out, _ = run(capsys, str(tmp_path / "a.npy"), str(tmp_path / "b.npy"))
    assert status == 1 and "no known convention" in out
    assert "the moduli are unknown" in out and "--moduli Q0,Q1" in out and "Montgomery" in out
    np.savez(tmp_path / "a.npz", words=a, moduli=np.array(Q, dtype=np.uint64))  # one file says
    status, out, _ = run(capsys, f"{tmp_path / 'a.npz'}:words", str(tmp_path / "b.npy"))
    assert status == 1 and "--apply-a mont64 makes them equal" in out


def test_the_command_lists_compare_in_its_help(capsys):
    assert ren_testing_main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "python -m ren.testing compare A B" in out and "compare --help" in out


def test_npz_members_are_capped_before_they_are_read(tmp_path):
    """Oracle: the zip directory and the .npy header, read here with zipfile and NumPy."""
    import tracemalloc
    import zipfile

    np.savez_compressed(tmp_path / "zeros.npz", words=np.zeros(1 << 21, np.uint64))  # 16 MiB
    info = zipfile.ZipFile(tmp_path / "zeros.npz").getinfo("words.npy")
    assert info.file_size > 16 << 20 and (tmp_path / "zeros.npz").stat().st_size < 100_000
    tracemalloc.start()
    with pytest.raises(ValueError, match=r"zeros.npz:words is 16777344 bytes uncompressed"):
        load_words(tmp_path / "zeros.npz", max_words=1 << 20)
    assert tracemalloc.get_traced_memory()[1] < 1 << 20
    tracemalloc.stop()
    assert load_words(tmp_path / "zeros.npz", max_words=1 << 21).words.size == 1 << 21


def npy_with_header(shape: tuple[int, ...], dtype: str, data: bytes) -> bytes:
    """An .npy file whose header declares ``shape`` and ``dtype`` and ``data`` after it."""
    import io

    out = io.BytesIO()
    header = {"descr": np.dtype(dtype).str if dtype != "O" else "|O", "fortran_order": False}
    np.lib.format.write_array_header_1_0(out, header | {"shape": shape})
    return out.getvalue() + data


HOSTILE = {
    "npy declaring 2^40 words": (
        npy_with_header((1 << 40,), "<u8", bytes(64)),
        "declares 1099511627776 words",
    ),
    "npy of objects": (npy_with_header((4,), "O", b"\x80\x04N."), "holds Python objects"),
    "npy truncated": (npy_with_header((64,), "<u8", bytes(8)), "size disagrees"),
    "npy header garbage": (b"\x93NUMPY\x01\x00\x10\x00{'descr': 1,  }\n", "no .npy header"),
    "npz not a zip": (b"PK\x03\x04 not really", "not a .npz"),
    "json nested": (b'{"value0": ' + b"[" * 50_000 + b"]" * 50_000 + b"}", "cannot be read"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_file_is_one_line_and_status_2(tmp_path, capsys, case):
    data, words = HOSTILE[case]
    suffix = ".npy" if case.startswith("npy") else ".npz" if case.startswith("npz") else ".bin"
    path = tmp_path / f"x{suffix}"
    path.write_bytes(data)
    np.save(tmp_path / "a.npy", np.zeros(4, np.uint64))
    status, out, err = run(capsys, str(path), str(tmp_path / "a.npy"))
    assert status == 2 and out == "" and err.count("\n") == 1 and words in err, err


def test_transforms_that_do_not_apply_are_not_a_traceback(tmp_path, capsys):
    np.save(tmp_path / "odd.npy", np.arange(12, dtype=np.uint64).reshape(1, 12))  # 12: no NTT
    np.save(tmp_path / "odd2.npy", np.arange(1, 13, dtype=np.uint64).reshape(1, 12))
    status, out, _ = run(capsys, str(tmp_path / "odd.npy"), str(tmp_path / "odd2.npy"))
    assert status == 1 and "no known convention" in out
    status, _, err = run(
        capsys, str(tmp_path / "odd.npy"), str(tmp_path / "odd2.npy"), "--apply-a", "bitrev"
    )
    assert status == 2 and "needs a power of two" in err
    np.save(tmp_path / "z3.npy", np.arange(3) + 1j)  # 3 slot values: no slot order
    status, out, _ = run(
        capsys, str(tmp_path / "z3.npy"), str(tmp_path / "z3.npy"), "--tolerance", "-1"
    )
    assert status == 1 and "no known convention" in out
    for bad, words in (
        ("abc", "integers separated by commas"),
        ("0,5", "modulus 0"),
        (str(2**64), "2^64"),
    ):
        status, _, err = run(
            capsys, str(tmp_path / "odd.npy"), str(tmp_path / "odd2.npy"), "--moduli", bad
        )
        assert status == 2 and words in err and err.count("\n") == 1, err
    np.savez(
        tmp_path / "m.npz", words=np.zeros((1, 12), np.uint64), moduli=np.array([0], np.uint64)
    )
    status, _, err = run(capsys, f"{tmp_path / 'm.npz'}:words", str(tmp_path / "odd.npy"))
    assert status == 2 and "modulus 0 of m.npz:words" in err


def test_a_seal_bomb_through_the_command(tmp_path):
    """The whole command, in its own process: a 4 GiB bomb ends in one line and status 2."""
    import subprocess
    import sys
    import zlib

    a = (VECTORS / "seal" / "a.seal").read_bytes()
    raw = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate, flushed: a repeatable segment
    zeros = raw.compress(bytes(16 << 20)) + raw.flush(zlib.Z_FULL_FLUSH)
    c = zlib.compressobj(9)
    body = c.compress(a[16:]) + c.flush(zlib.Z_FULL_FLUSH) + zeros * 256 + c.flush()  # 4 GiB
    head = np.array([0xA15E], "<u2").tobytes() + bytes([16, 4, 4, 1, 0, 0])
    (tmp_path / "bomb.seal").write_bytes(head + np.array([16 + len(body)], "<u8").tobytes() + body)

    def limit() -> None:  # 2 GiB of address space: a reader that inflates the bomb runs out
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    proc = subprocess.run(
        [sys.executable, "-m", "ren.testing", "compare", "bomb.seal", "bomb.seal"],
        preexec_fn=limit,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1 and "inflates past them" in proc.stderr
