"""SEAL files as a hostile user writes them: bombs, and metadata SEAL itself would refuse.

Oracles, none of them Ren's reader: zlib's and zstandard's own compressors build every blob (so
each checksum is recomputed after a change); ``tracemalloc`` measures what a read allocates; the
sizes a blob declares give the limits; and SEAL's own rules, restated here from its source
(``valcheck.cpp``'s ``is_metadata_valid_for``, ``evaluator.cpp``'s ``is_scale_within_bounds``,
``defines.h``), decide which mutated blobs SEAL loads.
"""

from __future__ import annotations

import io
import json
import math
import struct
import sys
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from ren.interop import seal as rs

VECTORS = Path(__file__).resolve().parents[1] / "vectors" / "seal"
MANIFEST = json.loads((VECTORS / "manifest.json").read_text())
PARAMS = rs.SealParams(MANIFEST["n"], tuple(MANIFEST["coeff_modulus"]))
N, L = MANIFEST["n"], len(MANIFEST["coeff_modulus"]) - 1  # a fresh ciphertext's level: 3 moduli
META = "<4QB3QdQ"  # a Ciphertext's metadata: parms_id, is_ntt_form, size, n, limbs, scale, factor
SEGMENT = 16 << 20  # zeros per repeated raw deflate segment


def blob(name: str) -> bytes:
    return (VECTORS / name).read_bytes()


def members(saved: bytes) -> bytes:
    """The members of a saved object, inflated by zlib or zstandard (not by Ren)."""
    mode, body = saved[5], saved[16:]
    if mode == 1:
        return zlib.decompress(body)
    if mode == 2:
        return zstandard.ZstdDecompressor().decompressobj().decompress(body)
    return body


def saved(body: bytes, mode: int = 0) -> bytes:
    """A SEALHeader (SEAL 4.4, ``compr_mode`` mode) and ``body`` as it is."""
    return struct.pack("<HBBBBHQ", 0xA15E, 16, 4, 4, mode, 0, 16 + len(body)) + body


def compressed(data: bytes, mode: int) -> bytes:
    """``data`` saved with zlib (1) or zstd (2), by the compressors themselves."""
    if mode == 1:
        return saved(zlib.compress(data), 1)
    if mode == 2:
        return saved(zstandard.ZstdCompressor(level=3).compress(data), 2)
    return saved(data)


@pytest.fixture(scope="module")
def zeros_segment() -> bytes:
    """A raw deflate segment of ``SEGMENT`` zeros that ends on a full flush: repeatable."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(bytes(SEGMENT)) + c.flush(zlib.Z_FULL_FLUSH)


def zlib_bomb(prefix: bytes, segment: bytes, count: int) -> bytes:
    """A zlib stream of ``prefix`` then ``count * SEGMENT`` zeros (its checksum left wrong)."""
    c = zlib.compressobj(9)
    return (
        c.compress(prefix) + c.flush(zlib.Z_FULL_FLUSH) + segment * count + b"\x03\x00" + bytes(4)
    )


def zstd_bomb(prefix: bytes, zeros: int) -> bytes:
    """A zstd frame of ``prefix`` then ``zeros`` zero bytes."""
    out = io.BytesIO()
    with zstandard.ZstdCompressor(level=3).stream_writer(out, closefd=False) as w:
        w.write(prefix)
        for _ in range(zeros // SEGMENT):
            w.write(bytes(SEGMENT))
    return out.getvalue()


def peak(fn: Callable[[], Any]) -> tuple[BaseException | None, int]:
    """What ``fn`` raised (or ``None``) and the most bytes it held at once."""
    tracemalloc.start()
    try:
        fn()
        error = None
    except Exception as e:
        error = e
    finally:
        top = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return error, top


A = blob("a.seal")  # a Ciphertext, saved uncompressed: 2 parts of 3 x 1024 words
A_MEMBERS = A[16:]
A_META, A_DYN = A_MEMBERS[:73], A_MEMBERS[73:]  # the metadata, the nested DynArray


# --- bombs -------------------------------------------------------------------------------------


def test_a_zlib_bomb_inflates_no_further_than_its_members(zeros_segment: bytes) -> None:
    bomb = saved(zlib_bomb(A_MEMBERS, zeros_segment, 8), 1)  # the members, then 128 MiB of zeros
    assert len(bomb) < 200_000
    error, top = peak(lambda: rs.read(bomb, "Ciphertext"))
    assert isinstance(error, ValueError), error
    assert f"members of a SEAL Ciphertext take {len(A_MEMBERS)} bytes" in str(error)
    assert "zlib stream inflates past them" in str(error)
    assert top < 1 << 20, f"{top} bytes held to read {len(A_MEMBERS)}"  # the zeros: 128 MiB


def test_a_zstd_bomb_inflates_no_further_than_its_members() -> None:
    bomb = saved(zstd_bomb(A_MEMBERS, 4 * SEGMENT), 2)
    error, top = peak(lambda: rs.read(bomb, "Ciphertext"))
    assert isinstance(error, ValueError), error
    assert "zstd stream inflates past them" in str(error)
    assert top < 1 << 20, top


def test_the_issues_bomb_nested_in_a_compressed_object(zeros_segment: bytes) -> None:
    """A few kilobytes, a compressed DynArray inside a compressed ciphertext: 4 GiB inflated."""
    words = A_DYN[16:24] + bytes(8 * 2 * L * N)  # the count, then zero words: they compress
    nested = saved(zlib_bomb(words, zeros_segment, 256), 1)  # and 4 GiB of zeros after them
    bomb = saved(zlib.compress(A_META + nested, 9), 1)
    assert len(bomb) < 20_000
    error, top = peak(lambda: rs.read(bomb, "Ciphertext"))
    assert isinstance(error, ValueError), error
    assert "the SEAL Ciphertext's DynArray declares" in str(error)
    assert top < 1 << 20


def test_a_nested_zstd_stream_with_bytes_after_its_words() -> None:
    nested = saved(zstd_bomb(A_DYN[16:], 4 * SEGMENT), 2)  # small: within what 6144 words take
    error, top = peak(lambda: rs.read(saved(zlib.compress(A_META + nested), 1), "Ciphertext"))
    assert isinstance(error, ValueError), error
    assert "members of a SEAL Ciphertext's DynArray take 49160 bytes" in str(error)
    assert top < 1 << 20


@pytest.mark.parametrize("parts", [2, 3, 16])
def test_a_nested_objects_limit_is_what_its_declared_words_take(parts: int) -> None:
    """The most bytes a DynArray may declare follow from the words the metadata calls for."""
    words = parts * L * N
    meta = bytearray(A_META)
    struct.pack_into("<Q", meta, 33, parts)
    stored = 16 + 8 + 8 * words  # the DynArray uncompressed: it must fit
    for declared in (stored, 4 * stored):
        header = struct.pack("<HBBBBHQ", 0xA15E, 16, 4, 4, 0, 0, declared)
        with pytest.raises(ValueError) as info:
            rs.read(saved(bytes(meta) + header + bytes(16)), "Ciphertext")
        limit = "more than its contents can take"
        if declared == stored:  # within the limit: refused only when the bytes run out
            assert limit not in str(info.value) and "truncated" in str(info.value)
        else:
            most = int(str(info.value).split("(")[-1].split()[0])
            assert limit in str(info.value) and stored <= most < 1.5 * stored


def test_max_words_caps_a_read() -> None:
    assert rs.read(A, "Ciphertext", max_words=2 * L * N).data.shape == (2, L, N)
    with pytest.raises(ValueError, match=r"declares 6144 words, more than this read allows: max"):
        rs.read(A, "Ciphertext", max_words=2 * L * N - 1)
    galois = blob("galois_keys.seal")  # 2 entries of 3 keys of 2 x 4 x 1024 words
    with pytest.raises(ValueError, match="max_words=40000"):
        rs.read(galois, "GaloisKeys", max_words=40_000)


def test_uncompressed_reads_no_further_than_the_members(zeros_segment: bytes) -> None:
    bomb = saved(zlib_bomb(A_MEMBERS, zeros_segment, 8), 1)
    error, top = peak(lambda: rs.uncompressed(bomb))
    assert isinstance(error, ValueError) and "inflates past them" in str(error), error
    assert top < 1 << 20
    for name in ("b.seal", "galois_keys.seal", "a_plain.seal"):  # SEAL's own, each layout
        assert rs.uncompressed(blob(name)) == saved(members(blob(name)))


# --- metadata SEAL refuses ---------------------------------------------------------------------

KEY_ID = PARAMS.parms_id()  # SEAL's hash of the key level: a real parms_id, of the wrong level


def meta(**fields: Any) -> bytes:
    """``a.seal`` with metadata fields replaced (``pid``, ``ntt``, ``size``, ``n``, ...)."""
    names = ("pid", "ntt", "size", "n", "limbs", "scale", "factor")
    values = struct.unpack(META, A_META)
    current = dict(zip(names, (values[:4], *values[4:]), strict=True))
    current.update(fields)
    packed = struct.pack(META, *current["pid"], *(current[k] for k in names[1:]))
    return saved(packed + A_DYN)


#: name -> (blob, params given, the field the refusal must name)
BAD_META: dict[str, tuple[bytes, bool, str]] = {
    "ntt byte 2": (meta(ntt=2), False, "is_ntt_form byte 2"),
    "ntt 0 (CKKS)": (meta(ntt=0), True, "is_ntt_form 0"),
    "size 1": (meta(size=1), False, "size 1: a ciphertext has 2 to 16"),
    "size 17": (meta(size=17), False, "size 17"),
    "n 1000": (meta(n=1000), False, "poly_modulus_degree 1000"),
    "n 2^18": (meta(n=1 << 18), False, "poly_modulus_degree 262144"),
    "n 2048 (params)": (meta(n=2048), True, "poly_modulus_degree 2048"),
    "limbs 0": (meta(limbs=0), False, "coeff_modulus_size 0"),
    "limbs 65": (meta(limbs=65), False, "coeff_modulus_size 65"),
    "limbs 2 (params)": (meta(limbs=2), True, "coeff_modulus_size 2"),
    "scale denormal": (meta(scale=5e-324), False, "scale 5e-324 is not a positive normal"),
    "scale 0": (meta(scale=0.0), False, "scale 0.0"),
    "scale -1": (meta(scale=-1.0), False, "scale -1.0"),
    "scale nan": (meta(scale=math.nan), False, "scale nan"),
    "scale inf": (meta(scale=math.inf), False, "scale inf"),
    "scale 2^125 (params)": (meta(scale=2.0**125), True, "scale 2^125.0 is out of bounds"),
    "factor 0": (meta(factor=0), False, "correction_factor 0"),
    "factor 2 (CKKS)": (meta(factor=2), True, "correction_factor 2"),
    "key level (params)": (meta(pid=KEY_ID), True, "at the key level"),
    "unknown level (params)": (
        meta(pid=(1, 2, 3, 4)),
        True,
        "parms_id 0000000000000001... is no level",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_META))
@pytest.mark.parametrize("mode", [0, 1, 2], ids=["none", "zlib", "zstd"])
def test_metadata_seal_refuses_is_refused(case: str, mode: int) -> None:
    bad, with_params, field = BAD_META[case]
    with pytest.raises(ValueError) as info:
        rs.read(compressed(members(bad), mode), "Ciphertext", *([PARAMS] if with_params else []))
    assert field in str(info.value)


def test_a_ciphertext_in_coefficient_form_is_not_decrypted() -> None:
    """SEAL's CKKS decryptor refuses it ("encrypted must be in NTT form"); so does Ren."""
    ct = rs.read(meta(ntt=0), "Ciphertext")  # SEAL's load takes it without its context
    assert not ct.ntt_form
    with pytest.raises(ValueError, match="is_ntt_form is 0"):
        rs.decrypt(ct, rs.read(blob("secret_key.seal"), "SecretKey"), PARAMS)
    with pytest.raises(ValueError, match="is_ntt_form is 0"):
        rs.to_ckks(ct, PARAMS)


def test_a_scale_out_of_seals_bounds_is_refused_by_its_operations() -> None:
    a = rs.read(meta(scale=2.0**70), "Ciphertext", PARAMS)  # within 125 bits
    with pytest.raises(ValueError, match=r"product's scale 2\^140.0 is out of bounds"):
        rs.multiply(a, a, PARAMS)
    low = rs.read(meta(scale=2.0**34), "Ciphertext", PARAMS)
    assert 0 < rs.rescale(low, PARAMS).scale < 1  # 2^34 / q_2: positive and normal, as SEAL allows


def test_keys_and_plaintexts_against_the_parameters() -> None:
    pk, sk, relin = blob("public_key.seal"), blob("secret_key.seal"), blob("relin_keys.seal")
    assert rs.read(pk, "PublicKey", PARAMS).parms_id == KEY_ID
    with pytest.raises(ValueError, match="not the key level"):
        rs.read(A, "PublicKey", PARAMS)
    with pytest.raises(ValueError, match="a public key of 2 parts, is_ntt_form 0"):
        rs.read(compressed(members(pk)[:32] + b"\0" + members(pk)[33:], 0), "PublicKey")
    with pytest.raises(ValueError, match=r"at the key level .* loads a Plaintext at a data level"):
        rs.read(sk, "Plaintext", PARAMS)
    plain = members(blob("a_plain.seal"))
    with pytest.raises(ValueError, match="coeff_count 2048: its level's is 3 x 1024"):
        rs.read(saved(plain[:32] + struct.pack("<Q", 2048) + plain[40:]), "Plaintext", PARAMS)
    with pytest.raises(ValueError, match="parms_id zero"):
        rs.read(saved(bytes(32) + plain[32:]), "Plaintext", PARAMS)
    keys = members(relin)
    with pytest.raises(ValueError, match="15 entries: a SEAL RelinKeys holds at most 14"):
        rs.read(saved(keys[:32] + struct.pack("<Q", 15) + keys[40:]), "RelinKeys")
    with pytest.raises(ValueError, match="entry 0 has 2 keys: 0 or 3, one per data modulus"):
        rs.read(saved(keys[:40] + struct.pack("<Q", 2) + keys[48:]), "RelinKeys", PARAMS)


# --- a fuzz: every metadata field, SEAL's rules as the oracle ----------------------------------


def seal_refuses(fields: dict[str, Any], with_params: bool) -> bool:
    """Whether SEAL (its load, then its CKKS evaluator) refuses ``a.seal`` with ``fields``."""
    ntt, size, n, limbs = fields["ntt"], fields["size"], fields["n"], fields["limbs"]
    scale, factor = fields["scale"], fields["factor"]
    if ntt not in (0, 1) or size == 1 or size > 16 or not 1 <= limbs <= 64:
        return True
    if n < 2 or n > 1 << 17 or n & (n - 1) or factor == 0:
        return True
    if not (math.isfinite(scale) and scale >= sys.float_info.min):
        return True
    if size * n * limbs != 2 * L * N:  # the words the DynArray holds
        return True
    if not with_params:
        return False
    total = math.prod(PARAMS.coeff_modulus[:L]).bit_length()
    level_ok = fields["pid"] == PARAMS.parms_id(L) and (n, limbs) == (N, L)
    return not level_ok or not ntt or factor != 1 or int(math.log2(scale)) >= total


FIELD_VALUES = {
    "ntt": st.sampled_from([0, 1, 2, 255]),
    "size": st.sampled_from([0, 1, 2, 3, 6, 16, 17, 2**63]),
    "n": st.sampled_from([0, 1, 512, 1000, 1024, 2048, 3072, 1 << 17, 1 << 18, 2**64 - 1]),
    "limbs": st.sampled_from([0, 1, 2, 3, 6, 64, 65, 2**40]),
    "scale": st.sampled_from([5e-324, 0.0, -1.0, math.nan, math.inf, 1.0, 2.0**35, 2.0**125]),
    "factor": st.sampled_from([0, 1, 2, 2**64 - 1]),
    "pid": st.sampled_from([PARAMS.parms_id(L), PARAMS.parms_id(), (0, 0, 0, 0)]),
}


@given(
    fields=st.fixed_dictionaries({}, optional=FIELD_VALUES),
    mode=st.sampled_from([0, 1, 2]),
    with_params=st.booleans(),
)
def test_every_metadata_field_is_held_to_seals_rules(
    fields: dict[str, Any], mode: int, with_params: bool
) -> None:
    saved_values = struct.unpack(META, A_META)
    names = ("ntt", "size", "n", "limbs", "scale", "factor")
    values = dict(zip(names, saved_values[4:], strict=True), pid=saved_values[:4])
    values.update(fields)
    bad = compressed(members(meta(**fields)), mode)  # its checksum recomputed by the compressor
    read = lambda: rs.read(bad, "Ciphertext", *([PARAMS] if with_params else []))  # noqa: E731
    if seal_refuses(values, with_params):
        with pytest.raises(ValueError):
            read()
    else:
        ct = read()
        assert ct.data.shape == (values["size"], values["limbs"], values["n"])
        assert np.array_equal(ct.data.reshape(-1), np.frombuffer(A_DYN[24:], dtype="<u8"))
