"""Microsoft SEAL's saved objects, read and written with the standard library and NumPy.

SEAL 4.x saves every object as a ``SEALHeader`` followed by the object's members. This module
reads and writes ``Ciphertext``, ``PublicKey``, ``Plaintext``, ``SecretKey``, ``RelinKeys`` and
``GaloisKeys`` as plain data: the words as NumPy ``uint64`` arrays, the ``parms_id``, the NTT flag,
the scale (``ren.interop.seal`` turns them into Ren values). The layout, from SEAL 4.4's
``serialization.h``, ``dynarray.h``, ``ciphertext.cpp``, ``plaintext.cpp`` and
``kswitchkeys.cpp`` (every integer little-endian):

* **SEALHeader**, 16 bytes: ``magic`` u16 ``0xA15E``, ``header_size`` u8 (16), the version's
  major and minor u8, ``compr_mode`` u8 (0 none, 1 zlib, 2 zstd), 2 reserved bytes (0), and
  ``size`` u64: the whole object's bytes as stored, header included.
* **Compression.** With zlib the members after the header are one zlib stream (``deflateInit`` at
  ``Z_DEFAULT_COMPRESSION``: zlib's wrapper, not raw deflate); with zstd one zstd frame. Only the
  outer object is compressed: the objects nested in it are saved uncompressed.
* **DynArray** (the words of a ciphertext or plaintext): a saved object of its own, header
  included, whose members are ``count`` u64 and ``count`` words.
* **Ciphertext**: ``parms_id`` (4 u64), ``is_ntt_form`` u8, ``size`` u64 (parts),
  ``poly_modulus_degree`` u64, ``coeff_modulus_size`` u64, ``scale`` f64, ``correction_factor``
  u64 (since 4.0), a DynArray of ``size * L * n`` words: part, then limb, then coefficient. A
  *seeded* ciphertext (SEAL's compact symmetric encryption) holds one part and a PRNG seed
  instead; it is refused here, for the other part is SEAL's PRNG output.
* **Plaintext**: ``parms_id``, ``coeff_count`` u64, ``scale`` f64, a DynArray of ``coeff_count``
  words. A CKKS plaintext is in NTT form over the ``L`` moduli of its ``parms_id``
  (``coeff_count = L * n``, limb after limb); a zero ``parms_id`` means coefficient form (BFV).
* **SecretKey**: a Plaintext in NTT form over every modulus, the special prime included.
  **PublicKey**: a Ciphertext of two parts over every modulus.
* **KSwitchKeys**: ``parms_id``, the number of entries u64, then per entry its length u64 and
  that many PublicKeys (one per RNS digit), each a saved object. ``RelinKeys`` holds the key of
  ``s^2`` at entry 0; ``GaloisKeys`` the key of ``X -> X^g`` at entry ``(g - 1) / 2`` of ``n``
  entries, most of them empty.
"""

from __future__ import annotations

import dataclasses
import struct
import zlib
from typing import Any

import numpy as np

MAGIC = 0xA15E  #: the first two bytes of every SEAL object
HEADER_SIZE = 16  #: bytes of a SEALHeader
VERSION = (4, 4)  #: the version written (SEAL 4.4); 4.0 to 4.4 are read
COMPRESSION = {"none": 0, "zlib": 1, "zstd": 2}  #: SEAL's ``compr_mode_type``
PARMS_ID_ZERO = (0, 0, 0, 0)  #: the parms_id of a coefficient-form plaintext
ParmsId = tuple[int, int, int, int]


@dataclasses.dataclass(frozen=True)
class Header:
    """A SEALHeader: the version that wrote the object, its compression, its stored size."""

    version: tuple[int, int]
    compression: str
    size: int


def _words(data: Any, ndim: int) -> np.ndarray:
    arr = np.array(data, copy=True)
    if arr.dtype != np.uint64 or arr.ndim != ndim:
        raise ValueError(f"data must be a {ndim}-D uint64 array, got {arr.dtype} {arr.shape}")
    arr.flags.writeable = False
    return arr


def _parms_id(value: Any) -> ParmsId:
    words = tuple(int(w) for w in value)
    if len(words) != 4 or not all(0 <= w < 1 << 64 for w in words):
        raise ValueError(f"parms_id must be 4 words below 2**64, got {value!r}")
    return words


@dataclasses.dataclass(frozen=True, eq=False)
class SealCiphertext:
    """A SEAL ``Ciphertext`` or ``PublicKey``: ``data[part, limb, i]`` plain words (read-only).

    ``ntt_form`` says whether row ``i`` holds NTT slots (in CKKS, always) or coefficients.
    """

    parms_id: ParmsId
    data: np.ndarray
    ntt_form: bool = True
    scale: float = 1.0
    correction_factor: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "parms_id", _parms_id(self.parms_id))
        object.__setattr__(self, "data", _words(self.data, 3))
        if self.size != 0 and not 2 <= self.size <= 16:
            raise ValueError(f"a SEAL ciphertext has 2 to 16 parts (or none), got {self.size}")

    @property
    def size(self) -> int:
        """The number of parts: 2, or 3 after a multiply."""
        return int(self.data.shape[0])


@dataclasses.dataclass(frozen=True, eq=False)
class SealPlaintext:
    """A SEAL ``Plaintext`` or ``SecretKey``: its words as SEAL holds them (read-only).

    In NTT form (a nonzero ``parms_id``) they are ``L`` limbs of ``n`` words, one after the other:
    ``data.reshape(L, n)``.
    """

    parms_id: ParmsId
    data: np.ndarray
    scale: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "parms_id", _parms_id(self.parms_id))
        object.__setattr__(self, "data", _words(self.data, 1))

    @property
    def ntt_form(self) -> bool:
        """SEAL's rule: a plaintext with a nonzero ``parms_id`` is in NTT form."""
        return self.parms_id != PARMS_ID_ZERO


@dataclasses.dataclass(frozen=True, eq=False)
class SealKSwitchKeys:
    """SEAL's ``KSwitchKeys`` (``RelinKeys``, ``GaloisKeys``): ``keys[entry][digit]``.

    Each key is a :class:`SealCiphertext` of two parts over every modulus, in NTT form; an entry
    is empty where no key was made.
    """

    parms_id: ParmsId
    keys: tuple[tuple[SealCiphertext, ...], ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "parms_id", _parms_id(self.parms_id))
        object.__setattr__(self, "keys", tuple(tuple(e) for e in self.keys))

    @property
    def entries(self) -> tuple[int, ...]:
        """The entries that hold keys (``(g - 1) / 2`` for a Galois element ``g``)."""
        return tuple(i for i, e in enumerate(self.keys) if e)


# --- the header and compression ------------------------------------------------------------


def read_header(blob: bytes, what: str = "object") -> Header:
    """The SEALHeader at the start of ``blob``, checked; ``what`` names the object in errors.

    Raises:
        TypeError: if ``blob`` is not bytes-like.
        ValueError: for fewer than 16 bytes, a bad magic or header size, a version other than
            SEAL 4.0 to 4.4, an unknown compression mode, or a size smaller than the header.
    """
    if not isinstance(blob, bytes | bytearray | memoryview):
        raise TypeError(f"blob must be bytes (a saved SEAL {what}), got {type(blob).__name__}")
    if len(blob) < HEADER_SIZE:
        raise ValueError(f"truncated SEAL {what}: {len(blob)} bytes, less than a SEALHeader (16)")
    magic, hsize, major, minor, mode, _, size = struct.unpack_from("<HBBBBHQ", blob)
    if magic != MAGIC:
        raise ValueError(f"not a SEAL {what}: bad magic 0x{magic:04X} (SEAL's is 0xA15E)")
    if hsize != HEADER_SIZE:
        raise ValueError(f"bad SEALHeader of a SEAL {what}: header size {hsize}, not 16")
    if major != 4 or minor > VERSION[1]:
        raise ValueError(
            f"unsupported version: SEAL {major}.{minor} wrote this {what}; SEAL 4.0 to 4.4 are "
            "read (SEAL 3 lays out ciphertexts differently)"
        )
    modes = {v: k for k, v in COMPRESSION.items()}
    if mode not in modes:
        raise ValueError(
            f"unknown compression mode {mode} in a SEAL {what}: 0 (none), 1 (zlib) or 2 (zstd)"
        )
    if size < HEADER_SIZE:
        raise ValueError(f"bad size of a SEAL {what}: {size} bytes, less than its own header")
    return Header((major, minor), modes[mode], size)


def _zstandard() -> Any:
    try:
        import zstandard
    except ImportError:
        raise ValueError(
            "zstd compression needs the zstandard package: install zstandard (pip install "
            "zstandard)"
        ) from None
    return zstandard


def _inflate(body: bytes, mode: str, what: str) -> bytes:
    if mode == "none":
        return body
    d: Any = zlib.decompressobj() if mode == "zlib" else _zstandard().ZstdDecompressor()
    try:
        d = d if mode == "zlib" else d.decompressobj()
        out = d.decompress(body)
    except Exception as e:  # zlib.error, zstandard.ZstdError
        raise ValueError(f"corrupt {mode} data in a SEAL {what}: {e}") from None
    if not d.eof:
        raise ValueError(f"truncated SEAL {what}: its {mode} stream stops before its end")
    if d.unused_data:
        raise ValueError(f"size disagrees: {len(d.unused_data)} bytes follow a {mode} stream")
    return out


def _save(members: bytes, compression: str, version: tuple[int, int] = VERSION) -> bytes:
    """A saved object: header and ``members``, compressed as SEAL's ``Serialization::Save``."""
    if compression not in COMPRESSION:
        raise ValueError(f"compression={compression!r}: 'none', 'zlib' or 'zstd'")
    body = members
    if compression == "zlib":
        body = zlib.compress(members, zlib.Z_DEFAULT_COMPRESSION)
    elif compression == "zstd":
        body = _zstandard().ZstdCompressor(level=3).compress(members)
    mode, size = COMPRESSION[compression], HEADER_SIZE + len(body)
    return struct.pack("<HBBBBHQ", MAGIC, HEADER_SIZE, *version, mode, 0, size) + body


class _In:
    """A cursor over one object's members; its errors name the object and the field."""

    def __init__(self, data: bytes, what: str):
        self.data, self.pos, self.what = data, 0, what

    def take(self, count: int, field: str) -> bytes:
        if self.pos + count > len(self.data):
            raise ValueError(
                f"truncated SEAL {self.what}: {field} needs {count} bytes at offset {self.pos}, "
                f"{len(self.data) - self.pos} are left"
            )
        self.pos += count
        return self.data[self.pos - count : self.pos]

    def unpack(self, fmt: str, field: str) -> tuple[Any, ...]:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), field))

    def nested(self, what: str, members: Any) -> Any:
        """The saved object at the cursor (its header read, inflated if need be), read whole."""
        header = read_header(self.data[self.pos :], what)
        return _whole(self.take(header.size, what)[HEADER_SIZE:], header, what, members)

    def words(self, count: int) -> np.ndarray:
        return self.nested(f"{self.what}'s DynArray", lambda r: r.dynarray(count))

    def dynarray(self, count: int) -> np.ndarray:
        (got,) = self.unpack("<Q", "the count")
        if got != count:
            seeded = " (a seeded ciphertext: not supported)" if 2 * got == count else ""
            raise ValueError(
                f"size disagrees in a SEAL {self.what}: the metadata calls for {count} words, "
                f"the DynArray holds {got}{seeded}"
            )
        return np.frombuffer(self.take(8 * count, "the words"), dtype="<u8").astype(np.uint64)


def _whole(body: bytes, header: Header, what: str, members: Any) -> Any:
    r = _In(_inflate(body, header.compression, what), what)
    value = members(r)
    if r.pos != len(r.data):
        raise ValueError(
            f"size disagrees: {len(r.data) - r.pos} bytes follow the members of a SEAL {what}"
        )
    return value


def _open(blob: bytes, what: str, members: Any) -> Any:
    header = read_header(blob, what)
    if len(blob) != header.size:
        fault = "truncated" if len(blob) < header.size else "size disagrees"
        raise ValueError(
            f"{fault}: the SEAL {what} is {len(blob)} bytes, its header says {header.size}"
        )
    return _whole(bytes(blob[HEADER_SIZE:]), header, what, members)


def uncompressed(blob: bytes) -> bytes:
    """The same saved object with ``compr_mode`` none: what SEAL saves without compression.

    Raises:
        ValueError: as :func:`read` does, for a blob that is not a whole saved object.
    """

    def everything(r: _In) -> bytes:
        return r.take(len(r.data), "members")

    return _save(_open(blob, "object", everything), "none", read_header(blob).version)


# --- the objects ---------------------------------------------------------------------------


def _ciphertext(r: _In) -> SealCiphertext:
    *pid, ntt, size, n, limbs, scale, factor = r.unpack("<4QB3QdQ", "metadata")
    if size > 16 or limbs > 64 or n > 1 << 17:
        raise ValueError(f"bad metadata in a SEAL {r.what}: {size} parts of {limbs} x {n} words")
    data = r.words(size * limbs * n).reshape(size, limbs, n)
    return SealCiphertext(_parms_id(pid), data, bool(ntt), scale, factor)


def _ciphertext_members(ct: SealCiphertext) -> bytes:
    size, limbs, n = ct.data.shape
    meta = (*ct.parms_id, ct.ntt_form, size, n, limbs, ct.scale, ct.correction_factor)
    return struct.pack("<4QB3QdQ", *meta) + _dynarray(ct.data)


def _dynarray(data: np.ndarray) -> bytes:
    return _save(struct.pack("<Q", data.size) + data.astype("<u8").tobytes(), "none")


def _plaintext(r: _In) -> SealPlaintext:
    *pid, count, scale = r.unpack("<4QQd", "metadata")
    if count > 1 << 24:
        raise ValueError(f"bad metadata in a SEAL {r.what}: coeff_count {count}")
    return SealPlaintext(_parms_id(pid), r.words(count), scale)


def _plaintext_members(pt: SealPlaintext) -> bytes:
    return struct.pack("<4QQd", *pt.parms_id, pt.data.size, pt.scale) + _dynarray(pt.data)


def _kswitch(r: _In) -> SealKSwitchKeys:
    *pid, count = r.unpack("<4QQ", "metadata")
    keys = []
    for i in range(min(count, 1 << 17)):
        (digits,) = r.unpack("<Q", f"the length of entry {i}")
        if digits > 64:
            raise ValueError(f"bad metadata in a SEAL {r.what}: entry {i} has {digits} keys")
        keys.append(tuple(r.nested(f"{r.what}'s key {i}.{j}", _ciphertext) for j in range(digits)))
    if count > len(keys):
        raise ValueError(f"bad metadata in a SEAL {r.what}: {count} entries")
    return SealKSwitchKeys(_parms_id(pid), tuple(keys))


def _kswitch_members(keys: SealKSwitchKeys) -> bytes:
    out = [struct.pack("<4QQ", *keys.parms_id, len(keys.keys))]
    for entry in keys.keys:
        out += [
            struct.pack("<Q", len(entry)),
            *(_save(_ciphertext_members(k), "none") for k in entry),
        ]
    return b"".join(out)


#: each kind of object: its type, the reader and the writer of its members
KINDS: dict[str, tuple[type, Any, Any]] = {
    "Ciphertext": (SealCiphertext, _ciphertext, _ciphertext_members),
    "PublicKey": (SealCiphertext, _ciphertext, _ciphertext_members),
    "Plaintext": (SealPlaintext, _plaintext, _plaintext_members),
    "SecretKey": (SealPlaintext, _plaintext, _plaintext_members),
    "RelinKeys": (SealKSwitchKeys, _kswitch, _kswitch_members),
    "GaloisKeys": (SealKSwitchKeys, _kswitch, _kswitch_members),
}


def _kind(kind: Any) -> tuple[type, Any, Any]:
    if kind not in KINDS:
        raise ValueError(f"kind={kind!r}: one of {', '.join(KINDS)}")
    return KINDS[kind]


def read(blob: bytes, kind: str) -> Any:
    """The saved SEAL object ``blob`` of ``kind`` (a key of :data:`KINDS`), as plain data.

    Raises:
        TypeError: if ``blob`` is not bytes-like.
        ValueError: for an unknown ``kind``, or a blob that is not one whole saved object of that
            kind; the message says what is wrong (bad magic, unsupported version, unknown
            compression mode, truncated, a size that disagrees, a missing ``zstandard``).
    """
    return _open(blob, kind, _kind(kind)[1])


def write(value: Any, kind: str, compression: str = "none") -> bytes:
    """``value`` saved as SEAL 4.4 saves a ``kind`` object, with ``compression``.

    Uncompressed, the bytes are SEAL's own, byte for byte; compressed, they inflate to them.

    Raises:
        TypeError: if ``value`` is not of the type of ``kind`` (:data:`KINDS`).
        ValueError: for an unknown ``kind`` or ``compression`` ('none', 'zlib' or 'zstd'), or
            zstd without ``zstandard``.
    """
    cls, _, members = _kind(kind)
    if not isinstance(value, cls):
        raise TypeError(f"a SEAL {kind} is written from a {cls.__name__}, got {type(value)}")
    return _save(members(value), compression)
