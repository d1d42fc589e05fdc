"""Ren's byte format: the framing, the checksum, and the checks of every header field.

A blob is, in order (integers little-endian)::

    MAGIC "RENCKKS" NUL | version u16 | kind length u8 | kind | header length u32 | header JSON
    | payload count u32 | payloads (each: length u64 | bytes) | SHA-256 of everything before

Each payload holds the residues of one polynomial in its own domain, as ``u64`` words, limb-major,
plain (not Montgomery). ``ren.schemes.ckks`` writes and reads its values under the kinds
``params``, ``plaintext``, ``ciphertext``, ``evaluation-keys`` and ``secret-key``; BFV and BGV
(``ren.schemes.integer``) write theirs with the same framing under kinds that name the scheme
(``bfv-ciphertext``, ``bgv-params``, ...), so no reader takes another scheme's blob. This module
holds what every kind shares.

*Requires*: nothing of the blob; it may be anything a file or a socket gives.
*Establishes*: a blob that is not exactly what Ren writes is a ``ValueError`` (a ``TypeError``
only for an argument that is not bytes at all), never a ``KeyError``, ``TypeError``,
``RecursionError`` or ``OverflowError`` from deep inside: every field is checked for its type and
range before it is used.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from ren.engine.realize import uncaptured
from ren.errors import describe as describe  # re-exported: the readers call it _fmt.describe
from ren.poly import Poly, is_int
from ren.ring import Domain, RingSpec

#: Version of the byte format written by ``to_bytes``; ``from_bytes`` reads only this version.
FORMAT_VERSION = 2
MAGIC = b"RENCKKS\0"

#: A key fingerprint: the first 16 hexadecimal digits of the SHA-256 of the public key's words.
FINGERPRINT = re.compile(r"[0-9a-f]{16}")
_DIGITS = re.compile(r"[1-9][0-9]{0,40}")

#: The most moduli a blob's ring may have (a bound for the reader, far above any real chain).
MAX_MODULI = 256


# ---------------------------------------------------------------------------------------------
# framing


def pack(kind: str, header: dict[str, Any], payloads: list[bytes]) -> bytes:
    """The blob of ``kind`` with ``header`` (JSON, sorted keys) and ``payloads``, checksummed."""
    k = kind.encode()
    h = json.dumps(header, sort_keys=True).encode()
    parts = [MAGIC, struct.pack("<HB", FORMAT_VERSION, len(k)), k, struct.pack("<I", len(h)), h]
    parts.append(struct.pack("<I", len(payloads)))
    for p in payloads:
        parts += [struct.pack("<Q", len(p)), p]
    body = b"".join(parts)
    return body + hashlib.sha256(body).digest()


def unpack(blob: object, kind: str, scheme: str = "CKKS") -> tuple[Any, list[bytes]]:
    """The header (parsed JSON, not yet checked) and the payloads of a blob of ``kind``.

    Args:
        blob: the bytes.
        kind: the kind the blob must hold (``"ciphertext"``, ``"bfv-ciphertext"``).
        scheme: how messages name the scheme (``"CKKS"``, ``"BFV"``); a kind that starts with
            the scheme's name and a dash is named without it (``a Ren BFV ciphertext blob``).

    Raises:
        TypeError: when ``blob`` is not bytes.
        ValueError: a truncated, altered or foreign blob, another kind, another version, or a
            framing that does not add up.
    """
    if not isinstance(blob, bytes | bytearray | memoryview):
        raise TypeError(f"expected bytes, got {type(blob).__name__}")
    blob = bytes(blob)
    what = f"a Ren {scheme} {kind.removeprefix(scheme.lower() + '-')} blob"
    if len(blob) < len(MAGIC) + 3 + 32 or not blob.startswith(MAGIC):
        where = "Ren's CKKS header" if scheme == "CKKS" else "Ren's header (RENCKKS)"
        raise ValueError(f"not {what}: it does not start with {where}")
    body, digest = blob[:-32], blob[-32:]
    (version, klen) = struct.unpack_from("<HB", body, len(MAGIC))
    if version != FORMAT_VERSION:
        raise ValueError(
            f"{what} of format version {version}; this Ren reads version {FORMAT_VERSION} only "
            "(write the value again with this Ren)"
        )
    if hashlib.sha256(body).digest() != digest:
        raise ValueError(f"{what} is truncated or altered: its checksum does not match")
    pos = len(MAGIC) + 3
    found = body[pos : pos + klen].decode(errors="replace")
    if found != kind:
        raise ValueError(f"expected {what}, got one holding a {found!r}")
    pos += klen
    try:
        (hlen,) = struct.unpack_from("<I", body, pos)
        if pos + 4 + hlen > len(body):
            raise ValueError("the header runs past the end")
        header = json.loads(body[pos + 4 : pos + 4 + hlen])
        pos += 4 + hlen
        (count,) = struct.unpack_from("<I", body, pos)
        pos += 4
        payloads = []
        for _ in range(count):
            (size,) = struct.unpack_from("<Q", body, pos)
            pos += 8
            if pos + size > len(body):
                raise ValueError("a payload runs past the end")
            payloads.append(body[pos : pos + size])
            pos += size
    except (struct.error, ValueError, UnicodeDecodeError) as e:  # JSONDecodeError is a ValueError
        raise ValueError(f"{what} is malformed: {e}") from None
    except RecursionError:
        raise ValueError(f"{what} is malformed: its header nests too deeply") from None
    if pos != len(body):
        raise ValueError(f"{what} is malformed: {len(body) - pos} bytes after the last payload")
    return header, payloads


def kind_of(blob: object) -> str | None:
    """The kind a blob says it holds, read before any check; ``None`` when it is not framed.

    For a reader that takes the blobs of several kinds (BFV's or BGV's) and must pick one before
    ``unpack`` checks the rest.

    Raises:
        TypeError: when ``blob`` is not bytes.
    """
    if not isinstance(blob, bytes | bytearray | memoryview):
        raise TypeError(f"expected bytes, got {type(blob).__name__}")
    head = bytes(blob[: len(MAGIC) + 3 + 255])
    if len(head) < len(MAGIC) + 3 or not head.startswith(MAGIC):
        return None
    klen = head[len(MAGIC) + 2]
    return head[len(MAGIC) + 3 : len(MAGIC) + 3 + klen].decode(errors="replace")


# ---------------------------------------------------------------------------------------------
# header fields


class Header:
    """A header object whose fields are read with their types and ranges checked.

    Args:
        value: the parsed JSON; it must be an object with exactly the keys ``fields``.
        what: how messages name it (``"the ciphertext blob's header"``).
        fields: the keys it must have (no more, no fewer).
        optional: keys it may have besides (a field added later, written only when it is not
            its default, so that older blobs and the default's bytes stay the same).

    Raises:
        ValueError: for anything but an object with exactly those keys.
    """

    def __init__(
        self, value: object, what: str, fields: Sequence[str], optional: Sequence[str] = ()
    ) -> None:
        if not isinstance(value, dict):
            raise ValueError(f"{what} is not a JSON object but a {describe(value)}")
        missing = sorted(set(fields) - set(value))
        if missing:
            raise ValueError(f"{what} lacks the field(s) {', '.join(missing)}")
        extra = sorted(set(value) - set(fields) - set(optional))
        if extra:
            raise ValueError(f"{what} has unknown field(s) {', '.join(map(repr, extra))[:200]}")
        self.value = value
        self.what = what

    def _bad(self, key: str, want: str) -> ValueError:
        return ValueError(f"{self.what}: {key} must be {want}, got {describe(self.value[key])}")

    def raw(self, key: str) -> Any:
        """The field as parsed (checked by the caller)."""
        return self.value[key]

    def integer(self, key: str, low: int, high: int) -> int:
        """An int (not a bool) in ``[low, high]``."""
        v = self.value[key]
        if not is_int(v) or not low <= v <= high:
            raise self._bad(key, f"an int in [{low}, {high}]")
        return int(v)

    def optional_int(self, key: str, low: int, high: int) -> int | None:
        """``None`` or an int in ``[low, high]``."""
        return None if self.value[key] is None else self.integer(key, low, high)

    def choice(self, key: str, options: Sequence[str], default: str) -> str:
        """One of ``options`` (``default`` where the optional field is absent)."""
        v = self.value.get(key, default)
        if not isinstance(v, str) or v not in options:
            raise self._bad(key, "one of " + ", ".join(map(repr, options)))
        return v

    def flag(self, key: str) -> bool:
        """``true`` or ``false``."""
        v = self.value[key]
        if not isinstance(v, bool):
            raise self._bad(key, "true or false")
        return v

    def number(self, key: str, low: float, high: float) -> float:
        """A finite number (int or float, not a bool) in ``[low, high]``."""
        v = self.value[key]
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise self._bad(key, "a number")
        try:
            f = float(v)
        except OverflowError:
            raise self._bad(key, f"a number in [{low}, {high}]") from None
        if not (math.isfinite(f) and low <= f <= high):
            raise self._bad(key, f"a finite number in [{low}, {high}]")
        return f

    def hex_float(self, key: str) -> float:
        """A finite, positive float written by ``float.hex``."""
        v = self.value[key]
        if not isinstance(v, str) or len(v) > 40:
            raise self._bad(key, "a float written in hexadecimal (float.hex)")
        try:
            f = float.fromhex(v)
        except (ValueError, OverflowError):
            raise self._bad(key, "a float written in hexadecimal (float.hex)") from None
        if not (math.isfinite(f) and f > 0):
            raise self._bad(key, "a finite positive float")
        if f.hex() != v:
            raise self._bad(key, "a float as float.hex writes it")
        return f

    def fingerprint(self, key: str) -> str:
        """A key fingerprint: 16 lowercase hexadecimal digits."""
        v = self.value[key]
        if not isinstance(v, str) or not FINGERPRINT.fullmatch(v):
            raise self._bad(key, "a key fingerprint (16 hexadecimal digits)")
        return v

    def entries(self, key: str, low: int, high: int) -> list[Any]:
        """A list with ``low`` to ``high`` entries (entries not checked)."""
        v = self.value[key]
        if not isinstance(v, list) or not low <= len(v) <= high:
            raise self._bad(key, f"a list of {low} to {high} entries")
        return v

    def int_list(
        self, key: str, low: int, high: int, most: int = MAX_MODULI, least: int = 1
    ) -> tuple[int, ...]:
        """A list of ``least`` (1 unless told) to ``most`` ints, each in ``[low, high]``."""
        items = self.entries(key, least, most)
        for v in items:
            if not is_int(v) or not low <= v <= high:
                raise self._bad(key, f"a list of ints in [{low}, {high}]")
        return tuple(int(v) for v in items)

    def moduli(self, key: str) -> tuple[int, ...]:
        """A list of 1 to ``MAX_MODULI`` moduli, each a decimal string."""
        items = self.entries(key, 1, MAX_MODULI)
        for v in items:
            if not isinstance(v, str) or not _DIGITS.fullmatch(v):
                raise self._bad(key, "a list of moduli written as decimal strings")
        return tuple(int(v) for v in items)


def same_json(a: object, b: object) -> bool:
    """Whether ``a`` and ``b`` are the same JSON value (``1`` and ``true`` differ, as in JSON)."""
    try:
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return False


# ---------------------------------------------------------------------------------------------
# polynomials


def poly_record(p: Poly) -> tuple[dict[str, Any], bytes]:
    """The header entry and the payload of ``p``: its plain residues in its own domain."""
    with uncaptured():
        limbs = p.limbs().astype("<u8")
    return {"domain": p.domain.value, "L": p.ring.L}, limbs.tobytes()


def read_polys(
    h: Header, datas: list[bytes], rings: Sequence[RingSpec], device: str | None
) -> list[Poly]:
    """The polynomials of a blob: ``h``'s ``polys`` entries and ``datas``, over ``rings``.

    Raises:
        ValueError: when the entries, the payloads and the rings do not match one for one, for
            an entry that is not ``{"domain": "coeff" | "ntt", "L": <limbs>}``, a payload of the
            wrong size, or a residue outside ``[0, q_i)``.
    """
    heads = h.raw("polys")
    if not isinstance(heads, list) or len(heads) != len(datas) or len(rings) != len(datas):
        raise ValueError(
            f"{h.what}: its polynomial list does not match its {len(datas)} payloads (it must "
            f"list {len(rings)})"
        )
    out = []
    for i, (head, data, ring) in enumerate(zip(heads, datas, rings, strict=True)):
        entry = Header(head, f"{h.what}: polynomial {i}", ("domain", "L"))
        if entry.raw("domain") not in ("coeff", "ntt"):
            raise entry._bad("domain", "'coeff' or 'ntt'")
        if entry.integer("L", 1, MAX_MODULI) != ring.L:
            raise ValueError(
                f"{h.what}: polynomial {i} has {entry.raw('L')} limbs; {ring!r} has {ring.L}"
            )
        if len(data) != 8 * ring.size:
            raise ValueError(
                f"{h.what}: polynomial {i} has {len(data)} bytes; {ring!r} needs {8 * ring.size}"
            )
        limbs = np.frombuffer(data, dtype="<u8").reshape(ring.L, ring.n)
        domain = Domain.NTT if entry.raw("domain") == "ntt" else Domain.COEFF
        try:
            out.append(Poly.from_limbs(limbs, ring, domain, device))
        except ValueError as e:
            raise ValueError(f"{h.what}: polynomial {i}: {e}") from None
    return out


def fingerprint(public: Sequence[Poly]) -> str:
    """The key fingerprint of a public key ``(b, a)``: 16 hexadecimal digits.

    The first 16 hexadecimal digits of the SHA-256 of both parts' plain residues in NTT form
    (little-endian ``u64``, limb-major, ``b`` then ``a``). Two key sets share it only if they
    share the public key.
    """
    digest = hashlib.sha256()
    with uncaptured():
        for p in public:
            digest.update(p.ntt().limbs().astype("<u8").tobytes())
    return digest.hexdigest()[:16]


def centered_limbs(p: Poly) -> np.ndarray:
    """The coefficients of ``p`` as ``(L, n)`` int64 residues centered modulo each ``q_i``.

    A small coefficient (below every ``q_i / 2``) gives the same value in every row, so a caller
    checks a polynomial for small coefficients without the CRT.
    """
    with uncaptured():
        limbs = p.intt().limbs().astype(np.int64)
    q = np.array(p.ring.moduli, dtype=np.int64)[:, None]
    return np.where(limbs > q // 2, limbs - q, limbs)
