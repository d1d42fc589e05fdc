"""Crafted CKKS blobs: valid framing and checksum, malformed header or framing.

The blobs are built from the format as ``docs/ckks.md`` describes it (magic, version, kind,
header, payloads, SHA-256), independently of Ren's writer, so a checksum never hides a bad field:
every blob here reaches the header checks. Each mutation is invalid by construction (a wrong type,
an out-of-range number, a missing or unknown field, a payload too many or too few, a nest too deep
for a parser), so a reader must refuse every one with a ``ValueError``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import struct
from collections.abc import Callable, Iterator
from typing import Any

MAGIC = b"RENCKKS\0"
NEST = "__NEST__"  # replaced by a JSON text nested 100,000 deep
_NEST_TEXT = "[" * 100_000 + "]" * 100_000

INT_BAD = [None, True, False, "1", 1.5, -1, 0, 2**70, 10**400, [], {}, float("nan"), NEST]
BOOL_BAD = [None, 0, 1, "true", 1.5, [], {}, NEST]
STR_BAD = [None, 1, True, 1.5, "", "x", "0x1p99999", "nan", "-0x1p40", "A" * 17, [], {}, NEST]
NUM_BAD = [None, True, "3.2", -1.0, 0, 1e308, float("nan"), float("inf"), 10**400, [], {}, NEST]
NONE_BAD = [1.5, "x", True, [], {}, -1, 0, 2**70, NEST]
DICT_BAD = [None, 1, "x", [], {}, NEST]
LIST_BAD = [None, 1, "x", {}, NEST]


def frame(version: int, kind: str, header_text: bytes, payloads: list[bytes]) -> bytes:
    """A blob with this header text and these payloads, checksummed as the format says."""
    k = kind.encode()
    body = [MAGIC, struct.pack("<HB", version, len(k)), k, struct.pack("<I", len(header_text))]
    body += [header_text, struct.pack("<I", len(payloads))]
    for p in payloads:
        body += [struct.pack("<Q", len(p)), p]
    raw = b"".join(body)
    return raw + hashlib.sha256(raw).digest()


def split(blob: bytes) -> tuple[int, str, Any, list[bytes]]:
    """The version, kind, parsed header and payloads of a well-formed blob."""
    pos = len(MAGIC)
    version, klen = struct.unpack_from("<HB", blob, pos)
    pos += 3
    kind = blob[pos : pos + klen].decode()
    pos += klen
    (hlen,) = struct.unpack_from("<I", blob, pos)
    header = json.loads(blob[pos + 4 : pos + 4 + hlen])
    pos += 4 + hlen
    (count,) = struct.unpack_from("<I", blob, pos)
    pos += 4
    payloads = []
    for _ in range(count):
        (size,) = struct.unpack_from("<Q", blob, pos)
        payloads.append(blob[pos + 8 : pos + 8 + size])
        pos += 8 + size
    return version, kind, header, payloads


def _text(header: Any) -> bytes:
    text = json.dumps(header, sort_keys=True)  # NaN and Infinity are written as JSON extensions
    return text.replace(json.dumps(NEST), _NEST_TEXT).encode()


def _paths(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """Every ``(path, value)`` inside a parsed header, containers before their entries."""
    yield path, value
    if isinstance(value, dict):
        for k in sorted(value):
            yield from _paths(value[k], (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*path, i))


def _set(header: Any, path: tuple, value: Any) -> Any:
    out = copy.deepcopy(header)
    if not path:
        return value
    target = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return out


def _bad_values(value: Any) -> list[Any]:
    if isinstance(value, bool):
        return BOOL_BAD
    if isinstance(value, int):
        return INT_BAD
    if isinstance(value, float):
        return NUM_BAD
    if isinstance(value, str):
        return STR_BAD
    if value is None:
        return NONE_BAD
    if isinstance(value, dict):
        return DICT_BAD
    bad = list(LIST_BAD)
    if value:  # one entry fewer, one more: the lengths no longer match
        bad += [value[:-1], [*value, value[-1]]]
    return bad


def crafted(blob: bytes) -> Iterator[tuple[str, bytes]]:
    """``(description, blob)`` for every malformed variant of the well-formed ``blob``."""
    version, kind, header, payloads = split(blob)

    def make(h: Any, p: list[bytes] = payloads) -> bytes:
        return frame(version, kind, _text(h), p)

    for path, value in _paths(header):
        where = "/".join(map(str, path)) or "header"
        for bad in _bad_values(value):
            if type(bad) is type(value) and bad == value:
                continue
            yield f"{where} = {str(bad)[:20]}", make(_set(header, path, bad))
        if isinstance(value, dict):
            for k in sorted(value):
                rest = {kk: vv for kk, vv in value.items() if kk != k}
                yield f"{where} without {k}", make(_set(header, path, rest))
            yield f"{where} with an unknown field", make(_set(header, path, {**value, "zzz": 1}))
    # the framing around a valid header
    good = _text(header)
    yield "an extra payload", make(header, [*payloads, b"\0" * 8])
    if payloads:
        yield "a payload fewer", make(header, payloads[:-1])
        yield "a payload a word short", make(header, [*payloads[:-1], payloads[-1][:-8]])
    yield "a header that is not JSON", frame(version, kind, b"{", payloads)
    yield "a header that is not UTF-8", frame(version, kind, b"\xff\xfe", payloads)
    yield "a header of NaN", frame(version, kind, b"NaN", payloads)
    yield "a header nested too deeply", frame(version, kind, _NEST_TEXT.encode(), payloads)
    body = frame(version, kind, good, payloads)[:-32]
    pos = len(MAGIC) + 3 + len(kind)
    for name, field, at in (
        ("a header length past the end", struct.pack("<I", 2**31), pos),
        ("a payload count past the end", struct.pack("<I", 2**31), pos + 4 + len(good)),
    ):
        raw = body[:at] + field + body[at + len(field) :]
        yield name, raw + hashlib.sha256(raw).digest()
    if payloads:
        at = pos + 4 + len(good) + 4
        raw = body[:at] + struct.pack("<Q", 2**63) + body[at + 8 :]
        yield "a payload length past the end", raw + hashlib.sha256(raw).digest()
    raw = body + b"\0"
    yield "a byte after the last payload", raw + hashlib.sha256(raw).digest()


def escapes(blob: bytes, read: Callable[[bytes], object]) -> tuple[int, list[str]]:
    """Read ``blob`` and every crafted variant of it with ``read``.

    The blob itself must read, and so must the same blob framed here (so the framing is the
    reader's). Returns how many variants there were, and each one that was accepted or raised
    something other than a ``ValueError`` (a line naming it and what escaped).
    """
    read(blob)  # the valid blob reads
    version, kind, header, payloads = split(blob)
    read(frame(version, kind, _text(header), payloads))  # framed here: reads
    cases = list(crafted(blob))
    escaped = []
    for name, bad in cases:
        try:
            read(bad)
        except ValueError:
            continue
        except Exception as e:  # the caller reports what escaped
            escaped.append(f"{name}: {type(e).__name__}: {e}"[:200])
        else:
            escaped.append(f"{name}: accepted")
    return len(cases), escaped
