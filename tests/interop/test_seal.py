"""``ren.interop.seal``: Microsoft SEAL's bytes read and written, its CKKS recomputed word for word.

Oracles, none of them Ren: SEAL 4.4's own saved objects and results in ``tests/vectors/seal``
(its keys, two ciphertexts, their product before and after relinearization and rescale, two
rotations, and SEAL's decryptions; see the README there), zlib's and zstandard's own
decompressors, the values the vectors encode, and, where seal-python is installed, SEAL itself:
fresh vectors from ``scripts/peers/seal_vectors.py`` and SEAL loading the bytes Ren writes.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import struct
import sys
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ren import Poly, RingSpec
from ren.interop import seal as rs
from ren.interop import seal_format
from ren.ring import ntt_primes
from ren.schemes import ckks

try:
    import seal
except ImportError:  # a peer library, the peers extra
    seal = None

needs_seal = pytest.mark.skipif(seal is None, reason="needs seal-python: pip install -e '.[peers]'")
ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "tests/vectors/seal"
MANIFEST = json.loads((VECTORS / "manifest.json").read_text())
FILES = sorted(MANIFEST["files"])
DECRYPTED = [f for f in FILES if f.endswith("_decrypted.seal")]


class Vectors:
    """One directory of SEAL vectors: the manifest, the parameters, the objects read lazily."""

    def __init__(self, directory: Path):
        self.dir = directory
        self.manifest = json.loads((directory / "manifest.json").read_text())
        self.params = rs.SealParams(self.manifest["n"], tuple(self.manifest["coeff_modulus"]))
        self.values = dict(np.load(directory / "values.npz"))

    def blob(self, name: str) -> bytes:
        return (self.dir / name).read_bytes()

    @functools.cache  # noqa: B019  (a handful of Vectors per run)
    def __getitem__(self, name: str) -> Any:
        return rs.read(self.blob(name), self.manifest["files"][name]["kind"])


COMMITTED = Vectors(VECTORS)


def same(ours: Any, seal_value: Any) -> None:
    """Every word, the parms_id and the scale equal SEAL's."""
    meta = (seal_value.parms_id, seal_value.scale, seal_value.data.shape)
    assert (ours.parms_id, ours.scale, ours.data.shape) == meta
    differ = int(np.count_nonzero(ours.data != seal_value.data))
    assert differ == 0, f"{differ} of {ours.data.size} words differ from SEAL's"


def _decompressed(blob: bytes, compression: str) -> bytes:
    """The members of a compressed blob, by zlib or zstandard directly (not Ren's reader)."""
    if compression == "zlib":
        return zlib.decompress(blob[16:])
    import zstandard

    return zstandard.ZstdDecompressor().decompressobj().decompress(blob[16:])


# --- the checks, on any directory of vectors ------------------------------------------------


def check_read(v: Vectors, name: str) -> None:
    info, blob = v.manifest["files"][name], v.blob(name)
    header = rs.read_header(blob)
    assert header == seal_format.Header((4, 4), info["compression"], len(blob))
    value = v[name]
    rs.check(value, v.params)  # a level of SEAL's parameters, every word below its modulus
    if info["kind"] in ("SecretKey", "PublicKey", "RelinKeys", "GaloisKeys"):
        assert value.parms_id == v.params.parms_id()  # SEAL's hash of every modulus


def check_write(v: Vectors, name: str) -> None:
    info, blob = v.manifest["files"][name], v.blob(name)
    written = rs.write(v[name], info["kind"])
    if info["compression"] == "none":
        assert written == blob
    else:  # SEAL's uncompressed save: the same header with mode 0 and its size, then the members
        members = _decompressed(blob, info["compression"])
        magic, hsize, major, minor, _, reserved, _ = struct.unpack_from("<HBBBBHQ", blob)
        header = struct.pack("<HBBBBHQ", magic, hsize, major, minor, 0, reserved, 16 + len(members))
        assert written == header + members
        assert rs.uncompressed(blob) == written


def check_decrypt(v: Vectors, name: str) -> None:
    ct = v[name.replace("_decrypted", "")]
    same(rs.decrypt(ct, v["secret_key.seal"], v.params), v[name])


def check_operations(v: Vectors) -> None:
    p, keys = v.params, v["galois_keys.seal"]
    same(rs.multiply(v["a.seal"], v["b.seal"], p), v["ab.seal"])
    same(rs.relinearize(v["ab.seal"], v["relin_keys.seal"], p), v["ab_relin.seal"])
    same(rs.rescale(v["ab_relin.seal"], p), v["ab_rescaled.seal"])
    steps = v.manifest["rotation_steps"]
    same(rs.rotate(v["a.seal"], steps[0], keys, p), v["a_rot1.seal"])
    same(rs.rotate(v["ab_rescaled.seal"], steps[1], keys, p), v["ab_rot.seal"])  # a lower level


def check_chain(v: Vectors) -> None:
    p = v.params
    ab = rs.multiply(v["a.seal"], v["b.seal"], p)
    ab = rs.rescale(rs.relinearize(ab, v["relin_keys.seal"], p), p)
    rot = rs.rotate(ab, v.manifest["rotation_steps"][1], v["galois_keys.seal"], p)
    same(rs.decrypt(rot, v["secret_key.seal"], p), v["ab_rot_decrypted.seal"])


def check_values(v: Vectors) -> None:
    p, a, b = v.params, v.values["a"], v.values["b"]
    steps = v.manifest["rotation_steps"]
    assert ckks.precision_bits(rs.decode(v["a_plain.seal"], p), a) > 28  # scale 2^35
    assert ckks.precision_bits(rs.decode(v["b_decrypted.seal"], p), b) > 22
    assert ckks.precision_bits(rs.decode(v["a_rot1_decrypted.seal"], p), np.roll(a, -steps[0])) > 22
    got = rs.decode(v["ab_rot_decrypted.seal"], p)
    assert ckks.precision_bits(got, np.roll(a * b, -steps[1])) > 20
    assert np.allclose(got, v.values["seal_decode_ab_rot"], rtol=0, atol=1e-12)  # SEAL's decode
    check_encoding(v)


def check_encoding(v: Vectors) -> None:
    """SEAL's encoding of ``a`` is Ren's in SEAL's slot order: ``round(scale * c)``, word for word.

    ``c = embed_inverse(a, generator=3)``, rounded and reduced with Python integers, then Ren's
    NTT: SEAL keeps CKKS plaintexts in NTT form. In Ren's order (powers of 5) the words differ.
    """
    plain, n = v["a_plain.seal"], v.params.n
    moduli = v.params.coeff_modulus[: plain.data.size // n]
    for generator, same_words in ((3, True), (5, False)):
        coeffs = ckks.embed_inverse(v.values["a"], n, generator=generator)
        want = [round(float(c) * plain.scale) for c in coeffs]
        limbs = np.array([[c % q for c in want] for q in moduli], dtype=np.uint64)
        ours = Poly.from_limbs(limbs, RingSpec(n, tuple(moduli))).ntt().limbs()
        assert np.array_equal(ours.reshape(-1), plain.data) is same_words, generator


# --- the committed vectors ------------------------------------------------------------------


@pytest.mark.parametrize("name", FILES)
def test_read(name: str) -> None:
    check_read(COMMITTED, name)


@pytest.mark.parametrize("name", FILES)
def test_write_back(name: str) -> None:
    check_write(COMMITTED, name)


def test_every_compression_is_exercised() -> None:
    modes = {MANIFEST["files"][f]["compression"] for f in FILES}
    kinds = {MANIFEST["files"][f]["kind"] for f in FILES}
    assert modes == {"none", "zlib", "zstd"}
    assert kinds == {"Ciphertext", "Plaintext", "SecretKey", "PublicKey", "RelinKeys", "GaloisKeys"}


def test_parms_id_is_seals_hash_of_each_level() -> None:
    p = COMMITTED.params
    assert COMMITTED["a.seal"].parms_id == p.parms_id(3)  # the first data level: no special prime
    assert COMMITTED["ab_rescaled.seal"].parms_id == p.parms_id(2)
    assert p.moduli(COMMITTED["ab_rot.seal"].parms_id) == p.coeff_modulus[:2]


@pytest.mark.parametrize("name", DECRYPTED)
def test_decrypt(name: str) -> None:
    check_decrypt(COMMITTED, name)


def test_multiply_relinearize_rescale_rotate() -> None:
    check_operations(COMMITTED)


def test_chain_from_the_two_ciphertexts() -> None:
    check_chain(COMMITTED)


def test_values_in_seals_slot_order() -> None:
    check_values(COMMITTED)
    pt, n = COMMITTED["a_plain.seal"], COMMITTED.params.n
    coeffs = np.array(rs.to_poly(pt, COMMITTED.params).intt().tolist(centered=True)) / pt.scale
    by_five = ckks.embed(coeffs, n)  # Ren's order (powers of 5) is not SEAL's
    assert ckks.precision_bits(by_five, COMMITTED.values["a"]) < 1


def test_galois_keys_sit_at_seals_elements() -> None:
    n, steps = COMMITTED.params.n, MANIFEST["rotation_steps"]
    want = sorted((rs.galois_element(n, s) - 1) // 2 for s in steps)
    assert list(COMMITTED["galois_keys.seal"].entries) == want  # where SEAL put its keys
    assert rs.galois_element(n, -3) == pow(3, n // 2 - 3, 2 * n)
    assert COMMITTED["relin_keys.seal"].entries == (0,)


def _key_errors(keys: Any, entry: int, s_new: Poly, s: Poly) -> list[int]:
    """``b_j + a_j s - p T_j s'`` for every digit, centred: the keys' errors."""
    ring = s.ring
    p, Q = ring.moduli[-1], ring.Q
    errors = []
    for j, (b, a) in enumerate(rs.key_polys(keys, entry, COMMITTED.params)):
        t = (Q // ring.moduli[j]) * pow(Q // ring.moduli[j], -1, ring.moduli[j])  # 1 at q_j only
        errors += (b + a * s - s_new * (p * t % Q)).tolist(centered=True)
    return errors


def test_keys_are_seals_gadget() -> None:
    s = rs.to_poly(COMMITTED["secret_key.seal"], COMMITTED.params)
    assert max(map(abs, _key_errors(COMMITTED["relin_keys.seal"], 0, s * s, s))) < 64
    keys = COMMITTED["galois_keys.seal"]
    for entry in keys.entries:
        s_g = s.automorphism(2 * entry + 1)  # the key switches s(X^g) to s
        assert max(map(abs, _key_errors(keys, entry, s_g, s))) < 64


def centred_key_switch(c: Poly, key: Any) -> tuple[Poly, Poly]:
    """Ren's default digits: each limb extended centred (``to_ring``), then SEAL's ModDown."""
    K, ring = key[0][0].ring, c.ring
    ups = [c.intt().to_ring(ring.with_moduli((q,))).to_ring(K).ntt() for q in ring.moduli]
    d0 = sum((u * b for u, (b, _) in zip(ups, key, strict=True)), Poly.const(0, K))
    d1 = sum((u * a for u, (_, a) in zip(ups, key, strict=True)), Poly.const(0, K))
    return d0.rescale().ntt(), d1.rescale().ntt()


def test_seal_digits_are_not_centred() -> None:
    p, ab = COMMITTED.params, COMMITTED["ab.seal"]
    c0, c1, c2 = rs.to_polys(ab, p)
    d0, d1 = centred_key_switch(c2, rs.key_polys(COMMITTED["relin_keys.seal"], 0, p, ab.parms_id))
    centred = rs.from_polys((c0 + d0, c1 + d1), p, ab.scale)
    seal_words = COMMITTED["ab_relin.seal"].data
    assert np.count_nonzero(centred.data != seal_words) > 0.9 * seal_words.size
    sk = COMMITTED["secret_key.seal"]
    gap = rs.to_poly(rs.decrypt(centred, sk, p), p) - rs.to_poly(
        rs.decrypt(COMMITTED["ab_relin.seal"], sk, p), p
    )
    assert max(map(abs, gap.tolist(centered=True))) < 2**40  # the same message, the scale is 2^70


def test_seal_rotates_before_switching_keys() -> None:
    p, a, keys = COMMITTED.params, COMMITTED["a.seal"], COMMITTED["galois_keys.seal"]
    g = rs.galois_element(p.n, MANIFEST["rotation_steps"][0])
    c1 = rs.to_polys(a, p)[1]
    K = rs.key_polys(keys, g // 2, p, a.parms_id)[0][0].ring
    seal_order = rs.mod_up(c1.automorphism(g), K)  # what rotate() does, and matches SEAL
    other_order = [u.automorphism(g) for u in rs.mod_up(c1, K)]  # Ren's key_switch order
    for x, y in zip(seal_order, other_order, strict=True):  # X^g negates about half the terms
        assert np.count_nonzero(x.limbs() != y.limbs()) > 0.5 * y.limbs().size


def test_ren_ckks_values() -> None:
    p = COMMITTED.params
    ren = rs.ren_params(p, scale_bits=35)  # distinct bit sizes: Ren picks SEAL's primes
    assert ren.q_moduli + ren.p_moduli == p.coeff_modulus
    ct = rs.to_ckks(COMMITTED["ab_rescaled.seal"], p, ren)
    assert (ct.level, ct.scale, ct.params) == (1, COMMITTED["ab_rescaled.seal"].scale, ren)
    same(rs.from_polys(ct.parts, p, ct.scale), COMMITTED["ab_rescaled.seal"])
    with pytest.raises(ValueError, match="key level"):
        rs.to_ckks(COMMITTED["public_key.seal"], p)


def test_seal_hands_out_repeated_prime_sizes_smallest_first() -> None:
    create = tuple(MANIFEST["seal_create_60_40_40_60"])  # SEAL's CoeffModulus::Create
    n = MANIFEST["n"]
    assert create[3] == ntt_primes(n, 60, 1)[0] and create[0] == ntt_primes(n, 60, 2)[1]
    assert create[1:3] == ntt_primes(n, 40, 2)[::-1]
    with pytest.raises(ValueError, match="no Ren Params holds SEAL's moduli"):
        rs.ren_params(rs.SealParams(n, create))


# --- errors ---------------------------------------------------------------------------------

A = COMMITTED.blob("a.seal")


def _patched(blob: bytes, offset: int, fmt: str, value: int) -> bytes:
    out = bytearray(blob)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


BAD = {
    "truncated": (A[:-1], "truncated: the SEAL Ciphertext is"),
    "no-header": (A[:10], "less than a SEALHeader"),
    "magic": (_patched(A, 0, "<H", 0xA15F), "bad magic 0xA15F"),
    "header-size": (_patched(A, 2, "<B", 17), "header size 17"),
    "version-3": (_patched(A, 3, "<B", 3), "unsupported version: SEAL 3.4"),
    "version-4.9": (_patched(A, 4, "<B", 9), "unsupported version: SEAL 4.9"),
    "mode": (_patched(A, 5, "<B", 7), "unknown compression mode 7"),
    "size-larger": (_patched(A, 8, "<Q", len(A) + 8), "truncated: the SEAL Ciphertext is"),
    "size-smaller": (_patched(A, 8, "<Q", len(A) - 8), "size disagrees: the SEAL Ciphertext"),
    "size-tiny": (_patched(A, 8, "<Q", 3), "less than its own header"),
    "trailing": (A + bytes(8), "size disagrees"),
    "dynarray-count": (_patched(A, 16 + 73 + 16, "<Q", 7), "the DynArray holds 7"),
    "seeded": (_patched(A, 16 + 73 + 16, "<Q", 3 * 1024), "seeded ciphertext"),
    "parts": (_patched(A, 16 + 33, "<Q", 3), "calls for 9216 words, the DynArray holds 6144"),
    "short-members": (
        _patched(A[:-8], 8, "<Q", len(A) - 8),
        "truncated SEAL Ciphertext: Ciphertext's DynArray needs",
    ),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_blobs(case: str) -> None:
    blob, message = BAD[case]
    with pytest.raises(ValueError, match=message):
        rs.read(blob, "Ciphertext")


@pytest.mark.parametrize("compression", ["zlib", "zstd"])
def test_bad_compressed_streams(compression: str) -> None:
    blob = rs.write(COMMITTED["a.seal"], "Ciphertext", compression)
    cut = _patched(blob[:-20], 8, "<Q", len(blob) - 20)
    with pytest.raises(ValueError, match=f"truncated SEAL Ciphertext: its {compression} stream"):
        rs.read(cut, "Ciphertext")
    if compression == "zlib":
        bad = bytearray(blob)
        bad[len(blob) // 2] ^= 0xFF
        with pytest.raises(ValueError, match="corrupt zlib data"):
            rs.read(bytes(bad), "Ciphertext")


def test_missing_zstandard(monkeypatch: pytest.MonkeyPatch) -> None:
    zstd = COMMITTED.blob("b.seal")
    monkeypatch.setitem(sys.modules, "zstandard", None)  # import zstandard fails
    with pytest.raises(ValueError, match="install zstandard"):
        rs.read(zstd, "Ciphertext")
    with pytest.raises(ValueError, match="install zstandard"):
        rs.write(COMMITTED["a.seal"], "Ciphertext", "zstd")


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="kind='Ciphertxt': one of Ciphertext"):
        rs.read(A, "Ciphertxt")
    with pytest.raises(ValueError, match="compression='gzip'"):
        rs.write(COMMITTED["a.seal"], "Ciphertext", "gzip")
    with pytest.raises(TypeError, match="written from a SealPlaintext"):
        rs.write(COMMITTED["a.seal"], "SecretKey")
    with pytest.raises(TypeError, match="blob must be bytes"):
        rs.read("a.seal", "Ciphertext")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="relinearize takes a ciphertext of 3 parts"):
        rs.relinearize(COMMITTED["a.seal"], COMMITTED["relin_keys.seal"], COMMITTED.params)
    with pytest.raises(ValueError, match=r"entry=5 holds no key; the entries with keys: \(0,\)"):
        rs.key_polys(COMMITTED["relin_keys.seal"], 5, COMMITTED.params)


def test_check_against_the_parameters() -> None:
    p, a = COMMITTED.params, COMMITTED["a.seal"]
    data = a.data.copy()
    data[1, 2, 3] = p.coeff_modulus[2]
    with pytest.raises(ValueError, match=r"\(part 1, limb 2, index 3\) is not below its modulus"):
        rs.check(seal_format.SealCiphertext(a.parms_id, data, True, a.scale), p)
    with pytest.raises(ValueError, match="is no level of"):
        other = rs.SealParams(p.n, (p.coeff_modulus[1], p.coeff_modulus[0], *p.coeff_modulus[2:]))
        rs.check(COMMITTED["a.seal"], other)
    with pytest.raises(ValueError, match="size disagrees: words shaped"):
        rs.check(seal_format.SealCiphertext(a.parms_id, a.data[:, :2], True, a.scale), p)


# --- fresh vectors from SEAL itself ---------------------------------------------------------


@needs_seal
def test_fresh_vectors_from_seal(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "seal_vectors", ROOT / "scripts/peers/seal_vectors.py"
    )
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    script.make(tmp_path)
    v = Vectors(tmp_path)
    for name in v.manifest["files"]:
        check_read(v, name)
        check_write(v, name)
        if name.endswith("_decrypted.seal"):
            check_decrypt(v, name)
    check_operations(v)
    check_chain(v)
    check_values(v)

    # SEAL loads the bytes Ren writes, and computes on Ren's results
    parms = seal.EncryptionParameters(seal.scheme_type.ckks)
    parms.set_poly_modulus_degree(v.params.n)
    parms.set_coeff_modulus([seal.Modulus(q) for q in v.params.coeff_modulus])
    ctx = seal.SEALContext(parms, True, seal.sec_level_type.none)
    load = {
        "Ciphertext": (ctx.from_cipher_str, lambda x: x.to_string()),
        "Plaintext": (ctx.from_plain_str, lambda x: x.to_bytes()),
        "SecretKey": (ctx.from_secret_str, lambda x: x.to_string()),
        "PublicKey": (ctx.from_public_str, lambda x: x.to_string()),
        "RelinKeys": (ctx.from_relin_str, lambda x: x.to_string()),
        "GaloisKeys": (ctx.from_galois_str, lambda x: x.to_string()),
    }
    for name, info in v.manifest["files"].items():
        ours = rs.write(v[name], info["kind"])
        loader, saver = load[info["kind"]]
        assert saver(loader(ours)) == ours
        if script._seal_mode(info["compression"]) is not None:  # a SEAL that reads this mode
            assert saver(loader(v.blob(name))) == ours
    relin = rs.relinearize(v["ab.seal"], v["relin_keys.seal"], v.params)
    theirs = seal.Evaluator(ctx).rescale_to_next(ctx.from_cipher_str(rs.write(relin, "Ciphertext")))
    decrypted = seal.Decryptor(ctx, ctx.from_secret_str(v.blob("secret_key.seal"))).decrypt(theirs)
    mine = rs.decrypt(rs.rescale(relin, v.params), v["secret_key.seal"], v.params)
    assert decrypted.to_bytes() == rs.write(mine, "Plaintext")
