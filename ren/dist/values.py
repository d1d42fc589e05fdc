"""What crosses the wire: evaluation keys, items and results, as Ren's value bytes.

A worker of ``ren.dist`` gets a plan, evaluation keys and items, all as bytes, and sends results
back as bytes. The kind a blob names (``ciphertext``, ``bfv-ciphertext``, ``evaluation-keys``,
...) picks its reader from a fixed table (``SCHEMES``): a blob never names code to run. Every
reader is the scheme's own ``from_bytes``, which checks the whole blob (framing, checksum,
parameters, key fingerprint) before it gives memory for it.

*Requires*: nothing of a blob: it is hostile until its reader has checked it.
*Establishes*: a value read here is a checked Ren value in the given context; a result written
here is its scheme's bytes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import ModuleType
from typing import Any

import numpy as np

from ren.errors import describe
from ren.schemes import bfv, bgv, ckks
from ren.schemes.rlwe import bytes as _fmt
from ren.schemes.rlwe.keyset import EvaluationKeys

__all__ = [
    "SCHEMES",
    "Scheme",
    "check_insecure",
    "difference",
    "keys_blobs",
    "read_item",
    "read_keys",
    "result_bytes",
]


@dataclasses.dataclass(frozen=True)
class Scheme:
    """One scheme's readers: its module and the kinds of its keys and of its values."""

    module: ModuleType
    keys: str
    values: tuple[str, ...]

    def reader(self, kind: str) -> Any:
        """The class whose ``from_bytes`` reads a blob of ``kind`` (a value kind of this scheme)."""
        what = kind.rpartition("-")[2]
        return getattr(self.module, what.capitalize())


#: The schemes whose values ``ren.dist`` reads, by the kind of their evaluation keys' blob.
SCHEMES: dict[str, Scheme] = {
    "evaluation-keys": Scheme(ckks, "evaluation-keys", ("ciphertext", "plaintext")),
    "bfv-evaluation-keys": Scheme(bfv, "bfv-evaluation-keys", ("bfv-ciphertext", "bfv-plaintext")),
    "bgv-evaluation-keys": Scheme(bgv, "bgv-evaluation-keys", ("bgv-ciphertext", "bgv-plaintext")),
}

_ACCEPTED = (
    "ckks.EvaluationKeys, bfv.EvaluationKeys or bgv.EvaluationKeys (ctx.evaluation_keys()), or "
    "their to_bytes()"
)


def keys_blobs(stored: Mapping[str, object] | None) -> tuple[dict[str, bytes], bool]:
    """The evaluation keys of ``stored`` as blobs by name, and whether they opted in to insecure.

    Keys made for ``insecure=True`` parameters carry that opt-in with them.

    Raises:
        TypeError: ``stored`` not a dict of named keys, or a value that is not evaluation keys.
        ValueError: no keys, or keys of two fingerprints (a plan's inputs are under one set).
    """
    if stored is None or (isinstance(stored, Mapping) and not stored):
        raise ValueError(
            "ren.dist needs the evaluation keys the plan was saved with: stored={'keys': "
            "ctx.evaluation_keys()} (the names ren.jit's save was given)"
        )
    if not isinstance(stored, Mapping):
        raise TypeError(f"stored must be a dict of named keys, got {describe(stored)}")
    blobs: dict[str, bytes] = {}
    insecure = False
    for name, value in stored.items():
        if not isinstance(name, str):
            raise TypeError(f"stored names are strings, got {describe(name)}")
        if isinstance(value, bytes | bytearray | memoryview):
            blob = bytes(value)
            if _fmt.kind_of(blob) not in SCHEMES:
                raise ValueError(
                    f"stored[{name!r}] is not the bytes of evaluation keys (its kind is "
                    f"{_fmt.kind_of(blob)!r}); give {_ACCEPTED}"
                )
        elif isinstance(value, EvaluationKeys):
            blob = value.to_bytes()
            insecure |= bool(getattr(value.params, "insecure", False))
        else:
            raise TypeError(f"stored[{name!r}] must be {_ACCEPTED}; got {describe(value)}")
        blobs[name] = blob
    return blobs, insecure


def check_insecure(blob: bytes, name: str, insecure: bool) -> None:
    """Refuse keys for parameters marked ``insecure=True`` without the opt-in.

    Before any worker starts: the blob's header is read, after its checksum; the keys are not.

    Raises:
        ValueError: a keys blob whose parameters are insecure, without ``insecure``; or a blob
            that is not a keys blob Ren writes.
    """
    scheme = SCHEMES.get(_fmt.kind_of(blob) or "")
    if scheme is None:
        raise ValueError(f"stored[{name!r}] is not the bytes of evaluation keys")
    title = scheme.module.__name__.rpartition(".")[2].upper()
    header, _ = _fmt.unpack(blob, scheme.keys, title)
    params = header.get("params") if isinstance(header, dict) else None
    if isinstance(params, dict) and params.get("insecure") is True and not insecure:
        raise ValueError(
            f"the keys stored[{name!r}] are for parameters marked insecure=True (beyond the HE "
            "standard's table, for tests and teaching): pass insecure=True to ren.dist.map or "
            "Pool (--insecure on the command line) to accept them"
        )


def read_keys(blob: bytes, device: str, insecure: bool) -> tuple[Scheme, Any]:
    """The scheme and the evaluation keys of a keys blob, read on ``device``.

    Raises:
        ValueError: a blob that is not evaluation keys of a scheme in ``SCHEMES``, or that its
            reader refuses (insecure parameters without the opt-in included).
    """
    kind = _fmt.kind_of(blob)
    scheme = SCHEMES.get(kind or "")
    if scheme is None:
        raise ValueError(
            f"the keys given are a blob of kind {kind!r}; ren.dist reads evaluation keys of kind "
            f"{', '.join(SCHEMES)}"
        )
    return scheme, scheme.module.EvaluationKeys.from_bytes(blob, device, insecure=insecure)


def read_item(scheme: Scheme, item: object, context: object) -> list[Any]:
    """The plan's arguments of one item: a blob, or a tuple of them, each read into ``context``.

    Raises:
        TypeError: an item that is not bytes or a tuple (or list) of bytes.
        ValueError: a blob of a kind this scheme does not run, or one its reader refuses (a
            corrupt blob, other parameters, another key fingerprint).
    """
    blobs = list(item) if isinstance(item, tuple | list) else [item]
    values = []
    for i, blob in enumerate(blobs):
        where = f"input {i} " if len(blobs) > 1 else ""
        if not isinstance(blob, bytes | bytearray):
            raise TypeError(
                f"{where}is {describe(blob)}; an item is a value's bytes or a tuple of them"
            )
        kind = _fmt.kind_of(bytes(blob))
        if kind not in scheme.values:
            said = "not Ren's value bytes" if kind is None else f"a blob of kind {kind!r}"
            raise ValueError(f"{where}is {said}; this plan reads {', '.join(scheme.values)}")
        values.append(scheme.reader(kind).from_bytes(bytes(blob), context))
    return values


def result_bytes(result: object) -> bytes | tuple[bytes, ...]:
    """A plan's result as bytes: a value's ``to_bytes()``, or a tuple of them for a tuple or list.

    Raises:
        TypeError: a result that is not a Ren value with bytes (a ``Poly``, a dict).
    """
    if isinstance(result, tuple | list):
        return tuple(_one_result(r) for r in result)
    return _one_result(result)


def _one_result(value: object) -> bytes:
    write = getattr(value, "to_bytes", None)
    if write is None or not hasattr(value, "parts"):
        raise TypeError(
            f"the plan returns {describe(value)}; ren.dist sends back values with bytes "
            "(ciphertexts, plaintexts, or a tuple of them)"
        )
    blob = write()
    assert isinstance(blob, bytes)
    return bytes(blob)


def difference(got: bytes | tuple[bytes, ...], want: bytes | tuple[bytes, ...]) -> str | None:
    """Where two results differ, word by word, as text; ``None`` when they are equal.

    Both are what ``result_bytes`` wrote: the first differing header field or word is named
    (``result part 1, limb 0, coefficient 17: got 5, reference 9 (3 of 16384 words differ)``).
    """
    if isinstance(got, tuple) != isinstance(want, tuple):
        return "the result's structure differs from the reference's"
    pairs: list[tuple[bytes, bytes]] = []
    if isinstance(got, tuple) and isinstance(want, tuple):
        if len(got) != len(want):
            return f"the result has {len(got)} values, the reference {len(want)}"
        pairs = list(zip(got, want, strict=True))
    elif isinstance(got, bytes) and isinstance(want, bytes):
        pairs = [(got, want)]
    for i, (a, b) in enumerate(pairs):
        where = f"result[{i}]" if isinstance(got, tuple) else "result"
        found = _blob_difference(a, b, where)
        if found is not None:
            return found
    return None


def _blob_difference(got: bytes, want: bytes, where: str) -> str | None:
    if got == want:
        return None
    kind = _fmt.kind_of(want) or ""
    scheme = kind[:3].upper() if kind.startswith(("bfv-", "bgv-")) else "CKKS"
    (h1, d1), (h2, d2) = _fmt.unpack(got, kind, scheme), _fmt.unpack(want, kind, scheme)
    for field in sorted(set(h1) | set(h2)):
        if field != "polys" and h1.get(field) != h2.get(field):
            return f"{where} {field}: got {h1.get(field)!r}, reference {h2.get(field)!r}"
    if len(d1) != len(d2):
        return f"{where} has {len(d1)} parts, the reference {len(d2)}"
    for j, (a, b) in enumerate(zip(d1, d2, strict=True)):
        x, y = np.frombuffer(a, "<u8"), np.frombuffer(b, "<u8")
        if x.shape != y.shape:
            return f"{where} part {j} holds {x.size} words, the reference {y.size}"
        bad = np.flatnonzero(x != y)
        if bad.size:
            i = int(bad[0])
            limbs = h2["polys"][j]["L"]
            n = max(1, y.size // limbs)
            return (
                f"{where} part {j}, limb {i // n}, coefficient {i % n} (word {i}): got "
                f"{int(x[i])}, reference {int(y[i])} ({bad.size} of {y.size} words differ)"
            )
    return f"{where}: the bytes differ outside the header and words"
