"""The bytes around a SEAL object: its SEALHeader, its compression, and a cursor over its members.

A saved SEAL object is a 16-byte ``SEALHeader`` (``ren.interop.seal_format`` gives the layout)
followed by its members, stored as they are or as one zlib stream or zstd frame. A hostile file
can hold a few kilobytes that inflate to gigabytes, nested objects included (a compressed
``DynArray`` inside a compressed ciphertext). So nothing here inflates a stream whole: the
:class:`Reader` inflates on demand, as the member readers ask for bytes, as SEAL's own loader
does. A reader asks only for sizes it has checked (its metadata's bounds, the parameters', the
caller's ``max_words``), so what is inflated is at most what the metadata declares plus one
chunk; a stream that holds more than its members is refused with both sizes, after inflating one
byte past them. A nested object's declared size is checked against what its contents can take
before it is read.
"""

from __future__ import annotations

import dataclasses
import struct
import zlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from zstandard import ZstdDecompressionReader

MAGIC = 0xA15E  #: the first two bytes of every SEAL object
HEADER_SIZE = 16  #: bytes of a SEALHeader
VERSION = (4, 4)  #: the version written (SEAL 4.4); 4.0 to 4.4 are read
COMPRESSION = {"none": 0, "zlib": 1, "zstd": 2}  #: SEAL's ``compr_mode_type``
CHUNK = 1 << 16  #: compressed bytes fed to a decompressor at a time
T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class Header:
    """A SEALHeader: the version that wrote the object, its compression, its stored size."""

    version: tuple[int, int]
    compression: str
    size: int


def read_header(blob: bytes | bytearray | memoryview, what: str = "object") -> Header:
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


def zstandard() -> ModuleType:
    """The ``zstandard`` module, or a ``ValueError`` saying how to install it.

    An optional package, imported when a stream is zstd: its names are read from the module.
    """
    try:
        import zstandard
    except ImportError:
        raise ValueError(
            "zstd compression needs the zstandard package: install zstandard (pip install "
            "zstandard)"
        ) from None
    return zstandard


def save(members: bytes, compression: str, version: tuple[int, int] = VERSION) -> bytes:
    """A saved object: header and ``members``, compressed as SEAL's ``Serialization::Save``."""
    if compression not in COMPRESSION:
        raise ValueError(f"compression={compression!r}: 'none', 'zlib' or 'zstd'")
    body = members
    if compression == "zlib":
        body = zlib.compress(members, zlib.Z_DEFAULT_COMPRESSION)
    elif compression == "zstd":
        body = zstandard().ZstdCompressor(level=3).compress(members)
    mode, size = COMPRESSION[compression], HEADER_SIZE + len(body)
    return struct.pack("<HBBBBHQ", MAGIC, HEADER_SIZE, *version, mode, 0, size) + body


def compressed_bound(size: int) -> int:
    """At least the bytes zlib or zstd may take to store ``size`` bytes (their worst case)."""
    return size + size // 8 + 1024


# --- the sources of members: stored, zlib, zstd ----------------------------------------------


class _Stored:
    """Members stored as they are: slices of the blob, never copied whole."""

    name = "stored"  # never in a message: what is left of a stored blob is known

    def __init__(self, body: memoryview) -> None:
        self.body, self.at = body, 0

    def left(self) -> int | None:
        return len(self.body) - self.at

    def read(self, count: int) -> memoryview:
        out = self.body[self.at : self.at + count]
        self.at += len(out)
        return out

    def end(self, what: str) -> None:
        return None  # what is left is counted by the reader


class _Inflating(ABC):
    """A compressed stream inflated on demand: :meth:`read` gathers what :meth:`step` gives.

    A subclass names its compression (``name``), its decompressor's error (``error``) and how
    it inflates one step.
    """

    name: str
    error: type[Exception]
    what: str

    def left(self) -> int | None:
        return None  # unknown until inflated

    @abstractmethod
    def step(self, most: int) -> bytes:
        """At most ``most`` more bytes, and none only where the stream or its input ends."""

    def read(self, count: int) -> bytearray:
        out = bytearray()
        try:
            while len(out) < count and (got := self.step(count - len(out))):
                out += got
        except self.error as e:
            raise ValueError(f"corrupt {self.name} data in a SEAL {self.what}: {e}") from None
        return out


class _Zlib(_Inflating):
    """A zlib stream, inflated ``most`` bytes at a time from chunks of its input."""

    name, error = "zlib", zlib.error

    def __init__(self, body: memoryview, what: str) -> None:
        self.body, self.at, self.what = body, 0, what
        self.d = zlib.decompressobj()
        self.tail: bytes = b""

    def step(self, most: int) -> bytes:
        while not self.d.eof:
            if not self.tail and self.at < len(self.body):
                self.tail = bytes(self.body[self.at : self.at + CHUNK])
                self.at += len(self.tail)
            got = self.d.decompress(self.tail, most)
            self.tail = self.d.unconsumed_tail
            if got or (not self.tail and self.at >= len(self.body)):
                return got  # b"": the input ends before the stream does
        return b""

    def end(self, what: str) -> None:
        if not self.d.eof:
            raise ValueError(f"truncated SEAL {what}: its zlib stream stops before its end")
        extra = len(self.d.unused_data) + len(self.body) - self.at
        if extra:
            raise ValueError(f"size disagrees: {extra} bytes follow a zlib stream")


def _zstd_frame_size(body: memoryview, what: str) -> int:
    """The bytes of the zstd frame at the start of ``body``, from its block headers."""
    z = zstandard()
    try:
        at: int = z.frame_header_size(bytes(body[:18]))
        checksum = z.get_frame_parameters(bytes(body[:18])).has_checksum
    except z.ZstdError as e:
        raise ValueError(f"corrupt zstd data in a SEAL {what}: {e}") from None
    while True:
        if at + 3 > len(body):
            raise ValueError(f"truncated SEAL {what}: its zstd stream stops before its end")
        header = int.from_bytes(body[at : at + 3], "little")
        kind, size = (header >> 1) & 3, header >> 3
        if kind == 3:
            raise ValueError(f"corrupt zstd data in a SEAL {what}: a reserved block type")
        at += 3 + (1 if kind == 1 else size)
        if header & 1:  # the last block
            break
    at += 4 if checksum else 0
    if at > len(body):
        raise ValueError(f"truncated SEAL {what}: its zstd stream stops before its end")
    return at


class _Zstd(_Inflating):
    """One zstd frame, read ``most`` bytes at a time by zstandard's bounded stream reader."""

    name = "zstd"

    def __init__(self, body: memoryview, what: str) -> None:
        self.what = what
        self.frame = _zstd_frame_size(body, what)
        self.extra = len(body) - self.frame
        z = zstandard()
        self.error = z.ZstdError
        self.reader: ZstdDecompressionReader = z.ZstdDecompressor().stream_reader(
            bytes(body[: self.frame]), read_size=CHUNK, read_across_frames=False
        )

    def step(self, most: int) -> bytes:
        return self.reader.read(min(most, 1 << 20))

    def end(self, what: str) -> None:
        if self.extra:
            raise ValueError(f"size disagrees: {self.extra} bytes follow a zstd stream")


def _source(body: memoryview, compression: str, what: str) -> _Stored | _Zlib | _Zstd:
    if compression == "zlib":
        return _Zlib(body, what)
    if compression == "zstd":
        return _Zstd(body, what)
    return _Stored(body)


# --- the cursor --------------------------------------------------------------------------------


class Budget:
    """The words a read may still give out in all (``None``: no limit but each object's own)."""

    def __init__(self, max_words: int | None) -> None:
        if isinstance(max_words, bool) or not isinstance(max_words, int | None):
            raise TypeError(f"max_words must be an int or None, got {max_words!r}")
        if max_words is not None and max_words < 0:
            raise ValueError(f"max_words={max_words}: a count of words, 0 or more")
        self.max, self.left = max_words, max_words

    def spend(self, count: int, what: str) -> None:
        """Give out ``count`` words of the SEAL ``what``, or refuse past the budget."""
        if self.left is None:
            return
        if count > self.left:
            raise ValueError(
                f"the SEAL {what} declares {count} words, more than this read allows: "
                f"max_words={self.max}, {self.left} of them left"
            )
        self.left -= count


class Reader:
    """A cursor over one object's members; its errors name the object and the field.

    Args:
        source: where the members come from (stored, or inflated on demand).
        what: the object's name for errors ("Ciphertext", "GaloisKeys's key 3.0").
        budget: the words the whole read may still give out.
    """

    def __init__(self, source: _Stored | _Zlib | _Zstd, what: str, budget: Budget) -> None:
        self.source, self.what, self.budget, self.pos = source, what, budget, 0

    def take(self, count: int, field: str) -> bytes | bytearray | memoryview:
        """The next ``count`` bytes (checked to be there before a stored blob is sliced)."""
        left = self.source.left()
        data = b"" if left is not None and count > left else self.source.read(count)
        if len(data) < count:
            if left is None:  # an inflated stream
                raise ValueError(
                    f"truncated SEAL {self.what}: its {self.source.name} stream stops before its "
                    f"end ({field} needs {count} bytes at offset {self.pos}, it gives {len(data)})"
                )
            raise ValueError(
                f"truncated SEAL {self.what}: {field} needs {count} bytes at offset {self.pos}, "
                f"{left} are left"
            )
        self.pos += count
        return data

    def unpack(self, fmt: str, field: str) -> tuple[Any, ...]:  # Any: as fmt says (struct's)
        """The fields of the struct format ``fmt`` at the cursor."""
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), field))

    def nested(self, what: str, members: Callable[[Reader], T], max_size: int) -> T:
        """The saved object at the cursor, header included, of at most ``max_size`` bytes."""
        header = read_header(self.take(HEADER_SIZE, what), what)
        if header.size > max_size:
            raise ValueError(
                f"size disagrees: the SEAL {what} declares {header.size} bytes, more than its "
                f"contents can take ({max_size} bytes at most)"
            )
        body = memoryview(self.take(header.size - HEADER_SIZE, what))
        return read_members(body, header, what, members, self.budget)

    def finish(self) -> None:
        """Check that nothing follows the members (inflating one byte past them at most)."""
        left = self.source.left()
        extra = left if left is not None else len(self.source.read(1))
        if extra:
            more = (
                f"{extra} bytes follow them"
                if left is not None
                else f"its {self.source.name} stream inflates past them (to {self.pos + 1} bytes "
                "at least; the rest is not inflated)"
            )
            raise ValueError(
                f"size disagrees: the members of a SEAL {self.what} take {self.pos} bytes, {more}"
            )
        self.source.end(self.what)


def read_members(
    body: memoryview, header: Header, what: str, members: Callable[[Reader], T], budget: Budget
) -> T:
    """``members`` read from an object's ``body`` (after its header), and nothing after them."""
    reader = Reader(_source(body, header.compression, what), what, budget)
    value = members(reader)
    reader.finish()
    return value


def open_object(
    blob: bytes, what: str, members: Callable[[Reader], T], max_words: int | None = None
) -> T:
    """The object saved in ``blob`` whole: its header checked, its members read by ``members``.

    Raises:
        TypeError: if ``blob`` is not bytes-like.
        ValueError: for a bad header, a blob of another size than its header says, or members
            that break a rule (the message names the object and what is wrong).
    """
    header = read_header(blob, what)
    if len(blob) != header.size:
        fault = "truncated" if len(blob) < header.size else "size disagrees"
        raise ValueError(
            f"{fault}: the SEAL {what} is {len(blob)} bytes, its header says {header.size}"
        )
    body = memoryview(blob)[HEADER_SIZE:]
    return read_members(body, header, what, members, Budget(max_words))
