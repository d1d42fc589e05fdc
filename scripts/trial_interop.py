"""The trial's "interop files" category: other libraries' files, made hostile, given to Ren.

Each case takes a real file from ``tests/vectors`` (SEAL's saved ciphertexts, plaintexts and keys,
OpenFHE's JSON ciphertexts, keys and context) or an array written with NumPy, changes it as an
attacker would, and gives it to Ren's readers (``ren.interop.seal_format.read``, with and without
SEAL's parameters, ``uncompressed``, ``ren.interop.openfhe_format.read``) or to ``python -m
ren.testing compare`` (its ``main``, in-process, its output captured). Compressed SEAL objects are
compressed again after a change, by zlib and zstandard themselves, so their checksums hold and the
deeper checks are the ones tried.

The changes:

* **bombs**: a few kilobytes that inflate to gigabytes: a zlib stream or a zstd frame whose members
  are followed by zeros (1 and 4 GiB), a compressed ``DynArray`` or key nested in an object (the
  outer one stored, zlib or zstd), the two nested (the issue's 3.5 KB blob), a nested object
  declaring 2^63 bytes; ``.npz`` members of 1 GiB of zeros, ``.npy`` headers declaring 2^40 words,
  object arrays;
* **metadata**: every field of the SEALHeader, of a ciphertext, plaintext and key-switching keys,
  of a nested ``DynArray``, given values SEAL refuses (and, with the parameters, values its CKKS
  context refuses); every field of OpenFHE's ciphertexts, keys and crypto context, given values of
  the wrong type or out of OpenFHE's range;
* **compare**: file pairs (plaintexts, a plaintext against a ciphertext, SEAL against OpenFHE,
  objects compare does not read), Montgomery and other conventions with the moduli given, in a
  file, or unknown, bad ``--moduli``, transforms on lengths they do not apply to, and every
  hostile file above.

**Memory.** Each case runs under a memory budget (``BUDGET`` more address space than its worker
holds, set with ``RLIMIT_AS`` and restored after): a reader that inflates a bomb runs out and the
case is a ``crash``; one that refuses it first is not.

**Classified** (``trial.py``'s outcomes): a bomb or a changed file must be refused with a
``ValueError`` (``TypeError``) naming what is wrong (the field, or the sizes); an unchanged file,
or a change to a value the writer could have chosen, must read to the right words (an oracle:
the words inflated here by zlib or zstandard, or read from the JSON); ``compare`` must end with its
status (0 equal, 1 different, 2 refused, one line on stderr, never an exception) and, for a known
convention, name it or say to pass ``--moduli``.

The module works against any Ren that reads these files (``--ren`` an older checkout): where an
older reader has no ``params``, the case reads and then calls ``seal.check``.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import io
import json
import math
import os
import resource
import struct
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trial import CLEAR, CRASH, ROOT, SILENT, Case, refuse, short, succeed

VECTORS = ROOT / "tests" / "vectors"
BUDGET = 384 << 20  #: address space a case may add to its worker's
GIB = 1 << 30
RAW_SEGMENT = 64 << 20  #: zeros in one repeatable raw deflate segment
#: what a refused bomb's message names (its sizes, or the limit it met)
BOMB = (
    r"inflates past|more than its contents can take|max_words|more than the \d+ read|"
    r"bytes uncompressed"
)


# ---------------------------------------------------------------------------------------------
# memory


def _address_space() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def bounded(fn: Callable[[], Any], budget: int = BUDGET) -> Callable[[], Any]:
    """``fn`` to run with at most ``budget`` bytes more address space than the worker holds."""

    def run() -> Any:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = _address_space() + budget
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        try:
            return fn()
        finally:
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))

    return run


# ---------------------------------------------------------------------------------------------
# SEAL's files, taken apart and put together with zlib and zstandard (not Ren)

SEAL_FILES = {  # file -> kind
    "a.seal": "Ciphertext",
    "ab.seal": "Ciphertext",
    "ab_rescaled.seal": "Ciphertext",
    "a_plain.seal": "Plaintext",
    "public_key.seal": "PublicKey",
    "secret_key.seal": "SecretKey",
    "relin_keys.seal": "RelinKeys",
    "galois_keys.seal": "GaloisKeys",
}
MODES = {"none": 0, "zlib": 1, "zstd": 2}


@functools.cache
def seal_manifest() -> dict:
    return json.loads((VECTORS / "seal" / "manifest.json").read_text())


def seal_blob(name: str) -> bytes:
    return (VECTORS / "seal" / name).read_bytes()


def members(blob: bytes) -> bytes:
    """The members of a saved object, inflated by zlib or zstandard."""
    if blob[5] == 1:
        return zlib.decompress(blob[16:])
    if blob[5] == 2:
        import zstandard

        return zstandard.ZstdDecompressor().decompressobj().decompress(blob[16:])
    return blob[16:]


def header(mode: int, size: int, version: tuple[int, int] = (4, 4)) -> bytes:
    return struct.pack("<HBBBBHQ", 0xA15E, 16, *version, mode, 0, size)


def saved(body: bytes, mode: int) -> bytes:
    """``body`` (already compressed, or stored) behind a SEALHeader of its size."""
    return header(mode, 16 + len(body)) + body


def compress(data: bytes, mode: int) -> bytes:
    """``data`` saved with ``mode``: stored, zlib's or zstandard's own stream (checksums right)."""
    if mode == 1:
        return saved(zlib.compress(data), 1)
    if mode == 2:
        import zstandard

        return saved(zstandard.ZstdCompressor(level=3).compress(data), 2)
    return saved(data, 0)


@functools.cache
def raw_zeros() -> bytes:
    """A raw deflate segment of ``RAW_SEGMENT`` zeros ending on a full flush: repeatable."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(bytes(RAW_SEGMENT)) + c.flush(zlib.Z_FULL_FLUSH)


def zlib_bomb(prefix: bytes, zeros: int) -> bytes:
    """A zlib stream of ``prefix``, then ``zeros`` zero bytes (its checksum is never reached)."""
    c = zlib.compressobj(9)
    head = c.compress(prefix) + c.flush(zlib.Z_FULL_FLUSH)
    return head + raw_zeros() * (zeros // RAW_SEGMENT) + b"\x03\x00" + bytes(4)


def zstd_bomb(prefix: bytes, zeros: int) -> bytes:
    """A zstd frame of raw blocks holding ``prefix`` and RLE blocks of ``zeros`` zero bytes."""
    block = 1 << 17
    out = bytearray(b"\x28\xb5\x2f\xfd\x00\x38")  # magic, no content size, a 128 KiB window
    blocks = [(0, prefix[i : i + block]) for i in range(0, len(prefix), block)]
    blocks += [(1, b"\x00")] * (zeros // block)
    for k, (kind, content) in enumerate(blocks):
        size = len(content) if kind == 0 else block
        out += (int(k == len(blocks) - 1) | kind << 1 | size << 3).to_bytes(3, "little")
        out += content
    return bytes(out)


BOMBERS = {"zlib": (1, zlib_bomb), "zstd": (2, zstd_bomb)}


def first_nested(body: bytes, kind: str) -> tuple[int, int]:
    """Where the first nested object (a DynArray, or a key) lies in ``kind``'s members."""
    if kind in ("Ciphertext", "PublicKey"):
        return 73, len(body)
    if kind in ("Plaintext", "SecretKey"):
        return 48, len(body)
    at = 40
    while struct.unpack_from("<Q", body, at)[0] == 0:  # entries without keys
        at += 8
    start = at + 8
    return start, start + struct.unpack_from("<Q", body, start + 8)[0]


@functools.cache
def seal_params() -> Any:
    from ren.interop import seal

    m = seal_manifest()
    return seal.SealParams(m["n"], tuple(m["coeff_modulus"]))


def seal_read(blob: bytes, kind: str, with_params: bool = False, **kw: Any) -> Any:
    """Ren's reader, with SEAL's parameters (an older reader: read, then ``seal.check``)."""
    from ren.interop import seal, seal_format

    if not with_params:
        return seal_format.read(blob, kind, **kw)
    if "params" in inspect.signature(seal_format.read).parameters:
        return seal_format.read(blob, kind, seal_params(), **kw)
    value = seal_format.read(blob, kind)
    seal.check(value, seal_params())
    return value


def words_of(original: bytes) -> Callable[[Any], str | None]:
    """A check that a value read holds the words of ``original``'s members (inflated here)."""
    body = members(original)

    def check(value: Any) -> str | None:
        datas = [value.data] if hasattr(value, "data") else [k.data for e in value.keys for k in e]
        for data in datas:
            if data.astype("<u8").tobytes() not in body:
                return f"words shaped {data.shape} that are not the file's"
        return None

    return check


# ---------------------------------------------------------------------------------------------
# SEAL: bombs


def seal_bomb_cases() -> list[Case]:
    cases: list[Case] = []
    for name, kind in SEAL_FILES.items():
        if name in ("ab.seal", "ab_rescaled.seal"):
            continue
        body = members(seal_blob(name))
        start, end = first_nested(body, kind)
        nested_body = members(body[start:end])

        def add(label: str, make: Callable[[], bytes], n: str = name, k: str = kind) -> None:
            def run(make: Callable[[], bytes] = make) -> Any:
                return refuse(bounded(lambda: seal_read(make(), k)), BOMB)

            cases.append(Case(f"SEAL {n}: {label}", run))

        for comp, (mode, bomb) in BOMBERS.items():
            for gib in (1, 4):
                add(
                    f"{comp} stream, {gib} GiB of zeros after the members",
                    lambda b=body, m=mode, f=bomb, g=gib: saved(f(b, g * GIB), m),
                )
            for outer in ("none", "zlib", "zstd"):
                add(
                    f"nested object {comp}, 1 GiB after its members, outer {outer}",
                    lambda b=body, s=start, e=end, nb=nested_body, m=mode, f=bomb, o=outer: (
                        compress(b[:s] + saved(f(nb, GIB), m) + b[e:], MODES[o])
                    ),
                )
        add(
            "nested object declares 2^63 bytes, outer zlib",
            lambda b=body, s=start: compress(b[:s] + header(0, 1 << 63) + b[s + 16 :], 1),
        )
        if kind in ("Ciphertext", "Plaintext"):
            zero_words = nested_body[:8] + bytes(len(nested_body) - 8)

            def issue(b: bytes = body, s: int = start, z: bytes = zero_words) -> bytes:
                nested = saved(zlib_bomb(z, 4 * GIB), 1)  # zero words, then 4 GiB
                return saved(zlib.compress(b[:s] + nested, 9), 1)

            add("the issue's blob: zlib in zlib, 4 GiB", issue)
        cases.append(
            Case(
                f"SEAL {name}: uncompressed() of a zlib bomb",
                lambda b=body: refuse(
                    bounded(lambda: _uncompressed(saved(zlib_bomb(b, GIB), 1))), BOMB
                ),
            )
        )
    return cases


def _uncompressed(blob: bytes) -> bytes:
    from ren.interop import seal_format

    return seal_format.uncompressed(blob)


# ---------------------------------------------------------------------------------------------
# SEAL: metadata

#: a ciphertext's fields in its members: name -> (offset, struct format)
CT_FIELDS = {
    "is_ntt_form": (32, "<B"),
    "size": (33, "<Q"),
    "poly_modulus_degree": (41, "<Q"),
    "coeff_modulus_size": (49, "<Q"),
    "scale": (57, "<d"),
    "correction_factor": (65, "<Q"),
}
PT_FIELDS = {"coeff_count": (32, "<Q"), "scale": (40, "<d")}
KS_FIELDS = {"entries": (32, "<Q")}
U64 = 2**64 - 1
#: field -> values SEAL refuses in every context, and those a CKKS context refuses
SEAL_BAD: dict[str, tuple[list[Any], list[Any]]] = {
    "is_ntt_form": ([2, 255], [0]),
    "size": ([1, 17, 2**63, U64], [3]),
    "poly_modulus_degree": ([0, 1, 1000, 3 << 10, 1 << 18, U64], [2048]),
    "coeff_modulus_size": ([0, 65, 2**40, U64], [2, 4]),
    "scale": ([5e-324, 0.0, -0.0, -1.0, math.nan, math.inf, -math.inf], [2.0**200, 2.0**1000]),
    "correction_factor": ([0], [2, U64]),
    "coeff_count": ([2**24, U64], [0, 1, 3071, 4096]),
    "entries": ([U64, 2**17 + 1], [15]),
}
#: what the refusal of each field must name
SEAL_NAMES = {
    "is_ntt_form": "is_ntt_form|NTT form",
    "size": r"\bsize\b|parts",
    "poly_modulus_degree": "poly_modulus_degree",
    "coeff_modulus_size": "coeff_modulus_size",
    "scale": "scale",
    "correction_factor": "correction_factor",
    "coeff_count": "coeff_count",
    "entries": "entries",
}


def patched(body: bytes, offset: int, fmt: str, value: Any) -> bytes:
    out = bytearray(body)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def seal_meta_cases() -> list[Case]:
    cases: list[Case] = []
    for name, kind in SEAL_FILES.items():
        blob = seal_blob(name)
        mode, body = blob[5], members(blob)

        def add(
            label: str,
            make: Callable[[], bytes],
            match: str,
            params: bool = False,
            n: str = name,
            k: str = kind,
        ) -> None:
            def run() -> Any:
                return refuse(bounded(lambda: seal_read(make(), k, params)), match)

            where = " (with SEAL's parameters)" if params else ""
            cases.append(Case(f"SEAL {n}{where}: {label}", run))

        for params in (False, True):
            cases.append(
                Case(
                    f"SEAL {name}{' (with parameters)' if params else ''}: unchanged (reads)",
                    lambda b=blob, k=kind, p=params: succeed(
                        lambda: seal_read(b, k, p), words_of(b)
                    ),
                )
            )
        fields = CT_FIELDS if kind in ("Ciphertext", "PublicKey") else PT_FIELDS
        fields = KS_FIELDS if kind in ("RelinKeys", "GaloisKeys") else fields
        for field, (offset, fmt) in fields.items():
            anywhere, in_context = SEAL_BAD[field]
            if kind == "GaloisKeys" and field == "entries":
                in_context = [seal_params().n + 1]  # 15 entries are a GaloisKeys' right
            current = struct.unpack_from(fmt, body, offset)[0]
            for params, values in ((False, anywhere), (True, in_context)):
                for v in values:
                    if v == current:
                        continue
                    add(
                        f"{field} = {v!r}",
                        lambda b=body, o=offset, f=fmt, v=v, m=mode: compress(
                            patched(b, o, f, v), m
                        ),
                        SEAL_NAMES[field],
                        params,
                    )
        # the parms_id: SEAL's own hash of another level, or none
        p = seal_params()
        for label, pid in (
            ("parms_id of the key level", p.parms_id()),
            ("parms_id of level 1", p.parms_id(1)),
            ("parms_id zero", (0, 0, 0, 0)),
            ("parms_id random", (1, 2, 3, 4)),
        ):
            good = body[:32] == struct.pack("<4Q", *pid)
            if not good:
                add(
                    label,
                    lambda b=body, pid=pid, m=mode: compress(struct.pack("<4Q", *pid) + b[32:], m),
                    r"parms_id|level",
                    True,
                )
        # the SEALHeader, and the first nested object's
        start, _ = first_nested(body, kind)
        for label, offset, fmt, value, match in (
            ("magic 0xA15F", 0, "<H", 0xA15F, "magic"),
            ("header size 17", 2, "<B", 17, "header size"),
            ("version 3.4", 3, "<B", 3, "version"),
            ("version 4.9", 4, "<B", 9, "version"),
            ("compression mode 3", 5, "<B", 3, "compression mode"),
            ("size + 1", 8, "<Q", len(blob) + 1, "truncated|size"),
            ("size - 1", 8, "<Q", len(blob) - 1, "size disagrees|truncated"),
            ("size 0", 8, "<Q", 0, "size"),
            ("size 2^64 - 1", 8, "<Q", U64, "truncated|size"),
        ):
            add(
                f"header {label}",
                lambda b=blob, o=offset, f=fmt, v=value: patched(b, o, f, v),
                match,
            )
        for label, offset, fmt, value, match in (
            ("magic", 0, "<H", 0, "magic"),
            ("compression mode 7", 5, "<B", 7, "compression mode"),
            ("size 15", 8, "<Q", 15, "size"),
            ("size + 8", 8, "<Q", None, "truncated|size"),
            ("size 2^63", 8, "<Q", 1 << 63, r"size|can take"),
        ):

            def make(b=body, s=start, o=offset, f=fmt, v=value, m=mode) -> bytes:
                if v is None:
                    v = struct.unpack_from("<Q", b, s + 8)[0] + 8
                return compress(patched(b, s + o, f, v), m)

            add(f"nested object's header {label}", make, match)
        if kind in ("Ciphertext", "Plaintext", "PublicKey", "SecretKey"):
            for label, delta in (("count + 1", 1), ("count - 1", -1), ("count 2^63", None)):

                def count(b=body, s=start, d=delta, m=mode) -> bytes:
                    old = struct.unpack_from("<Q", b, s + 16)[0]
                    return compress(patched(b, s + 16, "<Q", 1 << 63 if d is None else old + d), m)

                add(f"DynArray {label}", count, "DynArray|size disagrees|words")
        add(
            "8 bytes more in the members",
            lambda b=body, m=mode: compress(b + bytes(8), m),
            "follow|size",
        )
        add("8 bytes fewer in the members", lambda b=body, m=mode: compress(b[:-8], m), "truncated")
    return cases


# ---------------------------------------------------------------------------------------------
# NumPy files


def _npy(shape: tuple[int, ...], descr: str, data: bytes) -> bytes:
    import numpy as np

    out = io.BytesIO()
    fields = {"descr": descr, "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_1_0(out, fields)
    return out.getvalue() + data


def _zip(members: dict[str, tuple[bytes, int, int]]) -> bytes:
    """A zip of ``name: (raw deflate data, declared size, crc)``, written by hand."""
    local, central = bytearray(), bytearray()
    for name, (data, size, crc) in members.items():
        offset = len(local)
        fname = name.encode()
        local += struct.pack(
            "<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, len(data), size, len(fname), 0
        )
        local += fname + data
        central += struct.pack(
            "<IHHHHHHIIIHHHHHII",
            0x02014B50,
            20,
            20,
            0,
            8,
            0,
            0,
            crc,
            len(data),
            size,
            len(fname),
            0,
            0,
            0,
            0,
            0,
            offset,
        )
        central += fname
    end = struct.pack(
        "<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central), len(local), 0
    )
    return bytes(local + central + end)


def _member(npy: bytes, crc: int | None = None) -> tuple[bytes, int, int]:
    """An .npz member: its raw deflate data, its size, its CRC (``crc`` to give a wrong one)."""
    return zlib.compress(npy)[2:-4], len(npy), zlib.crc32(npy) if crc is None else crc


def _zeros_member(npy_header: bytes, zeros: int) -> tuple[bytes, int, int]:
    """A member of ``npy_header`` and ``zeros`` zero bytes, deflated (its CRC left wrong)."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    start = c.compress(npy_header) + c.flush(zlib.Z_FULL_FLUSH)
    data = start + raw_zeros() * (zeros // RAW_SEGMENT) + b"\x03\x00"
    return data, len(npy_header) + zeros, 0


def numpy_files() -> dict[str, tuple[str, Callable[[], bytes], str]]:
    """name -> (suffix, the file's bytes, what the refusal names)."""
    words = 1 << 27  # 1 GiB of uint64
    big = _npy((words,), "<u8", b"")
    small = _npy((4,), "<u8", bytes(32))
    pickle = _npy((2,), "|O", b"\x80\x04N.")
    return {
        "npz member of 1 GiB of zeros": (
            ".npz",
            lambda: _zip({"words.npy": _zeros_member(big, 8 * words)}),
            BOMB + "|declares",
        ),
        "npz moduli member of 1 GiB": (
            ".npz",
            lambda: _zip(
                {"words.npy": _member(small), "moduli.npy": _zeros_member(big, 8 * words)}
            ),
            BOMB + "|declares",
        ),
        "npz member declaring 2^40 words": (
            ".npz",
            lambda: _zip({"w.npy": _member(_npy((1 << 40,), "<u8", b""))}),
            "declares",
        ),
        "npy declaring 2^40 words": (
            ".npy",
            lambda: _npy((1 << 40,), "<u8", bytes(64)),
            "declares",
        ),
        "npy declaring 2^28 words, holding 8": (
            ".npy",
            lambda: _npy((1 << 28,), "<u8", bytes(64)),
            "declares|size disagrees",
        ),
        "npy truncated": (".npy", lambda: _npy((64,), "<u8", bytes(64)), "size disagrees|trunc"),
        "npy of Python objects": (".npy", lambda: pickle, "object|pickle"),
        "npz of Python objects": (
            ".npz",
            lambda: _zip({"w.npy": _member(pickle)}),
            "object|pickle",
        ),
        "npy of structured records": (
            ".npy",
            lambda: _npy((2,), [("a", "<u8")], bytes(16)),  # type: ignore[arg-type]
            "integers|holds",
        ),
        "npy of 5 dimensions": (".npy", lambda: _npy((1, 1, 1, 1, 2), "<u8", bytes(16)), "shape"),
        "npy header garbage": (
            ".npy",
            lambda: b"\x93NUMPY\x01\x00\x10\x00{'descr': 1,  }\n",
            "header|npy",
        ),
        "npz that is no zip": (".npz", lambda: b"PK\x03\x04" + bytes(40), "zip|npz"),
        "npz with a bad crc": (
            ".npz",
            lambda: _zip({"w.npy": _member(small, 1234)}),
            "crc|zip|npz",
        ),
    }


# ---------------------------------------------------------------------------------------------
# OpenFHE


def _ofdata(doc: dict) -> dict:
    return doc["value0"]["ptr_wrapper"]["data"]


def _layer(node: dict, key: str) -> dict:
    while key not in node:
        node = node["value0"]
    return node


#: field -> (wrong values, what the refusal names); None marks a value the writer could choose
OF_CIPHERTEXT = {
    "sl": ([-1, 0, 3, 33, 64, 2**40, True, "32", 1.5, None], r"\(sl\)|slots|sl"),
    "l": ([-1, 1, 5, 2**40, "0", None], r"\(l\)|level|'l'"),
    "d": ([-1, 0, 2, 5, True, "1", None], r"\(d\)|noise scale|'d'"),
    "s": ([-1.0, 0.0, 0.5, 1e308, "2^30", None, True, [1]], r"\(s\)|scaling factor|'s'"),
    "e": ([0, 2, -1, "4", None], r"encoding|'e'"),
}
OF_PARAMS = {
    "dnum": ([0, 4, -1, "2", 1.5, None, True], "dnum|digits"),
    "dp": (["nan", 0.0, -3.19, None, True, [3.19]], r"sigma|\(dp\)|'dp'"),
    "muld": ([-1, "2", None, 1.5], r"depth|muld"),
    "rs": ([7, -1, "0", None, True], r"scaling technique|\(rs\)"),
    "ks": ([3, -1, None], r"key switching|\(ks\)"),
    "mo": ([4, -1, None], r"distribution|\(mo\)"),
    "cdt": ([2, None], r"data type|\(cdt\)"),
    "slv": ([7, -1, None], r"security level|\(slv\)"),
}
OF_ENCODING = {
    "m": ([0, -1, "30", None, True], r"scaling modulus size|\(m\)|'m'"),
    "bs": ([3, 64, -1, "32", None], r"batch size|\(bs\)|'bs'"),
}
OF_TOWER = {  # the parameters of tower 1 of the context
    "ru": ([3, 0, -1, None], r"root|\bru\b|'ru'"),
    "cm": ([1073741825, 2**64 + 1, 0, None], r"modulus|\bcm\b|'cm'|prime"),
    "rd": ([63, 128, 0, None], r"ring dimension|cyclotomic|'rd'"),
    "co": ([64, 0, None], r"cyclotomic|'co'"),
}


def openfhe_doc(name: str) -> dict:
    return json.loads((VECTORS / "openfhe" / name).read_text())


def openfhe_read(text: str) -> Any:
    from ren.interop import openfhe_format

    return openfhe_format.read(text)


def _set_field(doc: dict, path: Callable[[dict], dict], key: str, value: Any) -> dict:
    doc = copy.deepcopy(doc)
    node = path(doc)
    if value is ...:
        del node[key]
    else:
        node[key] = value
    return doc


def _named(match: str, key: str) -> str:
    """``match``, or the field's key as a message quotes it (``'sl'``, ``ciphertext.sl``)."""
    return rf"{match}|'{key}'|\.{key}\b"


def openfhe_cases() -> list[Case]:
    cases: list[Case] = []

    def add(label: str, doc: dict, match: str) -> None:
        text = json.dumps(doc)
        cases.append(
            Case(f"OpenFHE {label}", lambda: refuse(bounded(lambda: openfhe_read(text)), match))
        )

    def value_label(v: Any) -> str:
        return "missing" if v is None else "= " + short(repr(v), 30)

    for name in ("a.json", "ab.json", "ab_rescaled.json", "ab_tensor.json"):
        doc = openfhe_doc(name)
        reads = lambda d=doc: succeed(lambda: openfhe_read(json.dumps(d)), _same_words(d))  # noqa: E731
        cases.append(Case(f"OpenFHE {name}: unchanged (reads)", reads))
        for key, (values, match) in OF_CIPHERTEXT.items():
            for v in values:
                if v == _ofdata(doc)[key] and type(v) is type(_ofdata(doc)[key]):
                    continue
                bad = _set_field(doc, _ofdata, key, ... if v is None else v)
                add(f"{name}: {key} {value_label(v)}", bad, _named(match, key))
        one = _set_field(doc, _ofdata, "v", _ofdata(doc)["v"][:1])
        add(f"{name}: one part", one, "polynomial|part")
        tag = _set_field(doc, lambda d: _ofdata(d)["value0"], "kt", 7)
        add(f"{name}: key tag 7", tag, r"key tag|\(kt\)|'kt'")
    for name in ("context.json", "a.json"):
        doc = openfhe_doc(name)

        def params_of(d: dict, n: str = name) -> dict:
            return _crypto_params(d, n)

        def enp(d: dict, p: Callable = params_of) -> dict:
            return _layer(p(d), "enp")["enp"]["ptr_wrapper"]["data"]

        def tower(d: dict, k: str, p: Callable = params_of) -> dict:
            elp = _layer(p(d), "elp")["elp"]["ptr_wrapper"]["data"]
            node = elp["p"][1]["ptr_wrapper"]["data"]["value0"]
            return node if k in ("rd", "co") else node[k]

        for key, (values, match) in OF_PARAMS.items():
            for v in values:
                bad = _set_field(
                    doc, lambda d, k=key: _layer(params_of(d), k), key, ... if v is None else v
                )
                add(f"{name}: context's {key} {value_label(v)}", bad, _named(match, key))
        for key, (values, match) in OF_ENCODING.items():
            for v in values:
                bad = _set_field(doc, enp, key, ... if v is None else v)
                add(f"{name}: context's {key} {value_label(v)}", bad, _named(match, key))
        for key, (values, match) in OF_TOWER.items():
            for v in values:
                nested = key in ("ru", "cm") and v is not None  # {"v": q}: the value inside
                path = (lambda d, k=key: tower(d, k)) if nested else (lambda d: tower(d, "rd"))
                bad = _set_field(doc, path, "v" if nested else key, ... if v is None else v)
                add(f"{name}: tower 1's {key} {value_label(v)}", bad, _named(match, key))
    for name, kind in (("public_key.json", "h"), ("secret_key.json", "s")):
        doc = openfhe_doc(name)
        reads = lambda d=doc: succeed(lambda: openfhe_read(json.dumps(d)), _same_words(d))  # noqa: E731
        cases.append(Case(f"OpenFHE {name}: unchanged (reads)", reads))

        def polys(d: dict, k: str = kind) -> list:
            return _ofdata(d)[k] if k == "h" else [_ofdata(d)[k]]

        dropped = copy.deepcopy(doc)
        for poly in polys(dropped):
            poly["v"].pop()
        add(f"{name}: its last tower dropped", dropped, r"towers|tower")
        word = copy.deepcopy(doc)
        polys(word)[0]["v"][0]["v"]["ptr_wrapper"]["data"]["v"][3] = 2**64 + 5
        add(f"{name}: a word of 2^64 + 5", word, r"word|index")
    one = openfhe_doc("eval_mult_key.json")
    key = one["value0"][0]["value"][0]["ptr_wrapper"]["data"]
    key["ak"].pop()
    key["bk"].pop()
    add("eval_mult_key.json: one digit of dnum 2", one, "digits|dnum")
    deep = '{"value0": ' + "[" * 100_000 + "]" * 100_000 + "}"
    cases.append(
        Case(
            "OpenFHE JSON nested 100000 deep",
            lambda: refuse(bounded(lambda: openfhe_read(deep)), "JSON"),
        )
    )
    return cases


def _crypto_params(doc: dict, name: str) -> dict:
    """The crypto parameters of a context file, or of the context a ciphertext carries."""
    d = _ofdata(doc)
    if name == "context.json":
        return d["cc"]["ptr_wrapper"]["data"]
    return d["value0"]["cc"]["ptr_wrapper"]["data"]["cc"]["ptr_wrapper"]["data"]


def _same_words(doc: dict) -> Callable[[Any], str | None]:
    """A check that a value read holds the words of the JSON's first tower (read here)."""
    d = _ofdata(doc)
    poly = d["v"][0] if "v" in d else d["h"][0] if "h" in d else d["s"]
    first = poly["v"][0]["v"]["ptr_wrapper"]["data"]["v"]

    def check(value: Any) -> str | None:
        got = [int(x) for x in value.words[0, 0]]
        return None if got == first else "the first tower's words are not the file's"

    return check


# ---------------------------------------------------------------------------------------------
# compare


def run_compare(argv: list[str]) -> tuple[int, str, str]:
    """``python -m ren.testing compare ARGV`` in this process: its status, stdout and stderr."""
    from ren.testing.compare_files import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def compare_case(argv: list[str], status: int, match: str, where: str = "out") -> Any:
    """A case: ``compare`` ends with ``status`` and its output (or one stderr line) matches."""
    import re

    def run() -> tuple[str, str]:
        words = _words_module()
        with _max_words(words, 1 << 24):
            try:
                got, out, err = bounded(lambda: run_compare(argv))()
            except MemoryError:
                return CRASH, "MemoryError: past the case's memory budget"
            except Exception as e:
                return CRASH, short(f"{type(e).__name__}: {e}")
        if "Traceback" in err:
            return CRASH, "a traceback on stderr"
        text = err if where == "err" else out
        if got == 2 and err.count("\n") != 1:
            return CRASH, short(f"status 2 with {err.count(chr(10))} lines on stderr: {err}")
        if got != status:
            return SILENT, short(f"status {got}, want {status}: {err or out}")
        if not re.search(match, text, re.IGNORECASE):
            kind = CRASH if got == 2 else SILENT
            return kind, short(f"status {got} but the output does not say /{match}/: {text}")
        return CLEAR, short(text.splitlines()[-1] if text else "")

    return run


def _words_module() -> Any:
    from ren.interop import words

    return words


@contextlib.contextmanager
def _max_words(words: Any, limit: int) -> Any:
    """A smaller default limit on the words compare reads (where the Ren under test has one)."""
    if not hasattr(words, "MAX_WORDS"):
        yield
        return
    old, words.MAX_WORDS = words.MAX_WORDS, limit
    try:
        yield
    finally:
        words.MAX_WORDS = old


@functools.cache
def scratch() -> Path:
    base = os.environ.get("TRIAL_TMP", tempfile.gettempdir())
    path = Path(tempfile.mkdtemp(prefix="interop-", dir=base))
    return path


def file_of(label: str, suffix: str, make: Callable[[], bytes]) -> str:
    """A path holding ``make()``, written when a case first needs it."""
    import re

    path = scratch() / (re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-") + suffix)
    if not path.exists():
        path.write_bytes(make())
    return str(path)


Q = (1152921504606844417, 1099511623297)  # two NTT primes (n = 8)


def _arrays() -> dict[str, Any]:
    import numpy as np

    rng = np.random.default_rng(7)
    a = np.stack([[rng.integers(0, q, 8, dtype=np.uint64) for q in Q] for _ in range(2)])

    def times(factor: Callable[[int], int]) -> Any:
        out = a.astype(object)
        for limb, q in enumerate(Q):
            out[:, limb, :] = out[:, limb, :] * (factor(q) % q) % q
        return out.astype(np.uint64)

    return {
        "mont64": times(lambda q: 2**64),
        "mont32": times(lambda q: 2**32),
        "unmont64": times(lambda q: pow(2, -64, q)),
        "negate": times(lambda q: -1),
        "times-n": times(lambda q: 8),
        "bitrev": a[..., [0, 4, 2, 6, 1, 5, 3, 7]],
        "a": a,
    }


def _npy_bytes(array: Any) -> bytes:
    import numpy as np

    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


def _npz_bytes(**arrays: Any) -> bytes:
    import numpy as np

    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


def compare_cases() -> list[Case]:
    import numpy as np

    cases: list[Case] = []
    seal = lambda n: str(VECTORS / "seal" / n)  # noqa: E731
    ofhe = lambda n: str(VECTORS / "openfhe" / n)  # noqa: E731
    moduli = ",".join(map(str, seal_manifest()["coeff_modulus"][:-1]))

    def add(label: str, argv: list[str], status: int, match: str, where: str = "out") -> None:
        cases.append(Case(f"compare {label}", compare_case(argv, status, match, where)))

    add(
        "two SEAL plaintexts (a_decrypted, a_plain)",
        [seal("a_decrypted.seal"), seal("a_plain.seal")],
        1,
        r"limbs.*unknown|--moduli",
    )
    add(
        "two SEAL plaintexts, --moduli",
        [seal("a_decrypted.seal"), seal("a_plain.seal"), "--moduli", moduli],
        1,
        r"3 limb\(s\) x 1024",
    )
    add(
        "two SEAL plaintexts, 2 of the 3 moduli",
        [seal("a_decrypted.seal"), seal("a_plain.seal"), "--moduli", moduli.rsplit(",", 1)[0]],
        2,
        "moduli",
        "err",
    )
    add("a SEAL plaintext against itself", [seal("a_plain.seal"), seal("a_plain.seal")], 0, "equal")
    add(
        "a SEAL plaintext, bitrev applied, no moduli",
        [seal("a_plain.seal"), seal("a_plain.seal"), "--apply-a", "bitrev"],
        2,
        "moduli|limb",
        "err",
    )
    add(
        "a SEAL ciphertext against a plaintext",
        [seal("a.seal"), seal("a_plain.seal")],
        1,
        "shapes differ",
    )
    add(
        "a SEAL ciphertext against its rescale",
        [seal("ab_relin.seal"), seal("ab_rescaled.seal")],
        1,
        "shapes differ",
    )
    add("two SEAL ciphertexts", [seal("a.seal"), seal("b.seal")], 1, "differ")
    add("a SEAL ciphertext against itself", [seal("a.seal"), seal("a.seal")], 0, "equal")
    add("SEAL's keys (not compared)", [seal("galois_keys.seal"), seal("a.seal")], 2, "SEAL", "err")
    add("SEAL against OpenFHE", [seal("a.seal"), ofhe("a.json")], 1, "shapes differ|differ")
    add(
        "OpenFHE ciphertext against its secret key",
        [ofhe("a.json"), ofhe("secret_key.json")],
        1,
        "shapes differ",
    )
    add("OpenFHE ciphertext against itself", [ofhe("a.json"), ofhe("a.json")], 0, "equal")
    add(
        "OpenFHE's context (not compared)",
        [ofhe("context.json"), ofhe("a.json")],
        2,
        "context",
        "err",
    )
    add(
        "OpenFHE's eval keys (not compared)",
        [ofhe("eval_mult_key.json"), ofhe("a.json")],
        2,
        "eval mult keys",
        "err",
    )
    arrays = _arrays()
    a_npy = file_of("a", ".npy", lambda: _npy_bytes(arrays["a"]))
    a_npz = file_of(
        "a", ".npz", lambda: _npz_bytes(words=arrays["a"], moduli=np.array(Q, np.uint64))
    )
    given = ",".join(map(str, Q))
    for name, array in arrays.items():
        if name == "a":
            continue
        b = file_of(name, ".npy", lambda x=array: _npy_bytes(x))
        option = "--apply-a" if name != "unmont64" else "--apply-(a|b)"
        add(f"a {name} difference, --moduli", [a_npy, b, "--moduli", given], 1, f"{option} ")
        add(f"a {name} difference, moduli in the .npz", [f"{a_npz}:words", b], 1, f"{option} ")
        if name != "bitrev":  # bitrev needs no moduli
            add(f"a {name} difference, no moduli", [a_npy, b], 1, r"--moduli")
        else:
            add(f"a {name} difference, no moduli", [a_npy, b], 1, r"--apply-a bitrev")
    odd = file_of(
        "odd", ".npy", lambda: _npy_bytes(np.arange(1, 13, dtype=np.uint64).reshape(1, 12))
    )
    odd2 = file_of(
        "odd2", ".npy", lambda: _npy_bytes(np.arange(2, 14, dtype=np.uint64).reshape(1, 12))
    )
    add("12 words a limb (no NTT)", [odd, odd2], 1, "no known convention")
    for transform in ("bitrev", "ntt", "intt", "ren-to-lattigo-ntt"):
        add(
            f"--apply-a {transform} on 12 words a limb",
            [odd, odd2, "--moduli", "13", "--apply-a", transform],
            2,
            "power of two|modul|NTT",
            "err",
        )
    z3 = file_of("z3", ".npy", lambda: _npy_bytes(np.arange(3) + 1j))
    z5 = file_of("z5", ".npy", lambda: _npy_bytes(np.arange(3) + 2j))
    add("3 slot values", [z3, z5], 1, "no known convention|slot")
    add(
        "--apply-a seal-to-ren-slots on 3 slots",
        [z3, z5, "--apply-a", "seal-to-ren-slots"],
        2,
        "power of two",
        "err",
    )
    for bad, match in (
        ("abc", "integers"),
        ("0", "modulus 0"),
        ("1", "modulus 1"),
        ("-5", "modulus -5"),
        (str(2**64), r"2\^64"),
        ("3,5,7", "moduli"),
    ):
        add(f"--moduli {bad}", [a_npy, a_npy, "--moduli", bad], 2, match, "err")
    for label, mod in (("0", 0), ("1", 1), ("2^64 - 1 (not prime)", 2**64 - 1)):
        moduli_of = lambda m=mod: np.array([m, 3], np.uint64)  # noqa: E731
        path = file_of(
            f"moduli {label}", ".npz", lambda m=moduli_of: _npz_bytes(words=arrays["a"], moduli=m())
        )
        if mod < 2:
            add(f"an .npz whose moduli hold {label}", [f"{path}:words", a_npy], 2, "modulus", "err")
        else:
            add(f"an .npz whose moduli hold {label}", [f"{path}:words", a_npy], 0, "equal")
    # every hostile file: one line, status 2
    for label, (suffix, make, match) in numpy_files().items():
        path = file_of(label, suffix, make)
        spec = f"{path}:words" if suffix == ".npz" and "moduli" in label else path
        add(label, [spec, a_npy], 2, match, "err")
    a_body = members(seal_blob("a.seal"))
    plain_body = members(seal_blob("a_plain.seal"))
    nested = lambda: saved(zlib_bomb(members(a_body[73:]), GIB), 1)  # noqa: E731
    for label, make, match in (
        ("SEAL zlib bomb, 4 GiB", lambda: saved(zlib_bomb(a_body, 4 * GIB), 1), BOMB),
        ("SEAL zstd bomb, 4 GiB", lambda: saved(zstd_bomb(a_body, 4 * GIB), 2), BOMB),
        ("SEAL plaintext zstd bomb, 1 GiB", lambda: saved(zstd_bomb(plain_body, GIB), 2), BOMB),
        ("SEAL nested zlib bomb", lambda: compress(a_body[:73] + nested(), 1), BOMB),
        ("SEAL n of 2^17", lambda: compress(patched(a_body, 41, "<Q", 1 << 17), 0), "DynArray"),
        ("SEAL scale 5e-324", lambda: compress(patched(a_body, 57, "<d", 5e-324), 0), "scale"),
        ("SEAL is_ntt_form 7", lambda: compress(patched(a_body, 32, "<B", 7), 0), "is_ntt_form"),
        ("SEAL header size 2^64 - 1", lambda: patched(seal_blob("a.seal"), 8, "<Q", U64), "size"),
    ):
        path = file_of(label, ".seal", make)
        add(label, [path, seal("a.seal")], 2, match, "err")
    a_doc = openfhe_doc("a.json")
    for label, text, match in (
        (
            "OpenFHE JSON nested 100000 deep",
            b'{"value0": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
            "JSON",
        ),
        (
            "OpenFHE JSON with a 5000-digit integer",
            b'{"value0": ' + b"9" * 5000 + b"}",
            "JSON|digits",
        ),
        ("OpenFHE slots -1", json.dumps(_set_field(a_doc, _ofdata, "sl", -1)).encode(), "slots"),
        (
            "OpenFHE scale NaN",
            json.dumps(_set_field(a_doc, _ofdata, "s", math.nan)).encode(),
            "scaling",
        ),
    ):
        path = file_of(label, ".json", lambda t=text: t)
        add(label, [path, ofhe("a.json")], 2, match, "err")
    return cases


# ---------------------------------------------------------------------------------------------


def numpy_cases() -> list[Case]:
    """The NumPy files given to ``load_words`` directly (each must be a refusal)."""
    cases: list[Case] = []
    for label, (suffix, make, match) in numpy_files().items():

        def run(
            label: str = label, suffix: str = suffix, make: Callable = make, match: str = match
        ) -> Any:
            path = file_of(label, suffix, make)
            words = _words_module()
            key = "words" if "moduli" in label else None

            def read() -> Any:
                with _max_words(words, 1 << 24):
                    return words.load_words(path, key)

            return refuse(bounded(read), match)

        cases.append(Case(f"load_words {label}", run))
    return cases


def cases() -> list[Case]:
    """Every case of the category, in a fixed order."""
    return seal_bomb_cases() + seal_meta_cases() + numpy_cases() + openfhe_cases() + compare_cases()
