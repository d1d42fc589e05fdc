"""Microsoft SEAL's saved objects, read and written with the standard library and NumPy.

SEAL 4.x saves every object as a ``SEALHeader`` followed by the object's members. This module
reads and writes ``Ciphertext``, ``PublicKey``, ``Plaintext``, ``SecretKey``, ``RelinKeys`` and
``GaloisKeys`` as plain data: the words as NumPy ``uint64`` arrays, the ``parms_id``, the NTT flag,
the scale (``ren.interop.seal`` turns them into Ren values). The layout, from SEAL 4.4's
``serialization.h``, ``dynarray.h``, ``ciphertext.cpp``, ``plaintext.cpp`` and
``kswitchkeys.cpp`` (every integer little-endian):

* **SEALHeader**, 16 bytes (``ren.interop.seal_stream``): ``magic`` u16 ``0xA15E``,
  ``header_size`` u8 (16), the version's major and minor u8, ``compr_mode`` u8 (0 none, 1 zlib,
  2 zstd), 2 reserved bytes (0), and ``size`` u64: the whole object's bytes as stored, header
  included.
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

**What is refused.** Every read holds the metadata to SEAL's own limits before any word is read
(``ren.interop.seal_stream`` inflates no further than the members are read, so a decompression
bomb is refused one byte past them): a ``poly_modulus_degree`` that is a power of two up to
``2^17``, 1 to 64 moduli, 2 to 16 parts (or none), an ``is_ntt_form`` byte of 0 or 1, a scale
that is a positive normal double, a ``correction_factor`` of 1 or more, at most 14 ``RelinKeys``
entries, a ``DynArray`` of exactly the words the metadata calls for. Given ``params``
(:class:`~ren.interop.seal_values.SealParams`), :func:`read` also checks, before any word is read,
what SEAL's ``load`` checks against a CKKS context: the ``parms_id`` names a level (a data level
for a ``Ciphertext`` or ``Plaintext``, the key level for keys), ``n`` and the number of moduli are
that level's, ciphertexts and keys are in NTT form with a correction factor of 1 and a scale within
SEAL's bounds, a key-switching entry holds one key per data modulus, ``GaloisKeys`` at most ``n``
entries; then that every word is below its modulus (:func:`check`). ``max_words`` caps the words
of the whole read.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Sequence
from typing import Literal, Never, cast, overload

import numpy as np
from numpy.typing import NDArray

from ren.interop.seal_stream import (
    COMPRESSION,
    HEADER_SIZE,
    MAGIC,
    VERSION,
    Header,
    Reader,
    compressed_bound,
    open_object,
    read_header,
    save,
)
from ren.interop.seal_values import (
    MAX_LIMBS,
    MAX_N,
    MAX_PARTS,
    MAX_RELIN_ENTRIES,
    PARMS_ID_ZERO,
    ParmsId,
    SealCiphertext,
    SealKSwitchKeys,
    SealParams,
    SealPlaintext,
    SealValue,
    check,
    hex_id,
    scale_rule,
)

__all__ = [
    "COMPRESSION",
    "HEADER_SIZE",
    "KINDS",
    "MAGIC",
    "PARMS_ID_ZERO",
    "VERSION",
    "Header",
    "SealCiphertext",
    "SealKSwitchKeys",
    "SealPlaintext",
    "check",
    "read",
    "read_header",
    "uncompressed",
    "write",
]

# --- the checks, with and without parameters ---------------------------------------------


def _bad(r: Reader, what: str) -> ValueError:
    return ValueError(f"bad metadata in a SEAL {r.what}: {what}")


def _level(params: SealParams, parms_id: ParmsId, kind: str, what: str) -> tuple[int, ...]:
    """The moduli of the level a value of ``kind`` names, checked to be a level it may be at."""
    try:
        mods = params.moduli(parms_id)
    except ValueError as e:
        raise ValueError(f"the SEAL {what}'s {e}") from None
    key = len(mods) == len(params.coeff_modulus)
    if kind in ("PublicKey", "SecretKey", "key") and not key:
        raise ValueError(
            f"the SEAL {what} is at parms_id {hex_id(parms_id)} ({len(mods)} moduli), not the "
            "key level: SEAL loads keys over every modulus"
        )
    if kind in ("Ciphertext", "Plaintext") and key:
        raise ValueError(
            f"the SEAL {what} is at the key level (every modulus, the special prime too): SEAL "
            f"loads a {kind} at a data level only"
        )
    return mods


def _ciphertext_rules(
    r: Reader,
    kind: str,
    params: SealParams | None,
    meta: tuple[ParmsId, int, int, int, int, float, int],
) -> None:
    """SEAL's limits on a ciphertext's metadata, then (with ``params``) its context's."""
    pid, ntt, size, n, limbs, scale, factor = meta
    if ntt not in (0, 1):
        raise _bad(r, f"is_ntt_form byte {ntt}: SEAL writes 0 or 1")
    if n < 2 or n > MAX_N or n & (n - 1):
        raise _bad(r, f"poly_modulus_degree {n}: a power of two from 2 to {MAX_N}")
    if not 1 <= limbs <= MAX_LIMBS:
        raise _bad(r, f"coeff_modulus_size {limbs}: 1 to {MAX_LIMBS} moduli are read")
    if size == 1 or size > MAX_PARTS:
        raise _bad(r, f"size {size}: a ciphertext has 2 to {MAX_PARTS} parts (or none)")
    if wrong := scale_rule(scale):
        raise _bad(r, wrong)
    if factor == 0:
        raise _bad(r, "correction_factor 0: SEAL's is 1 (CKKS, BFV) or in [1, t) (BGV)")
    if kind in ("PublicKey", "key") and (size != 2 or not ntt):
        raise _bad(r, f"a public key of {size} parts, is_ntt_form {ntt}: SEAL's has 2, in NTT form")
    if params is None:
        return
    mods = _level(params, pid, kind, r.what)
    if (n, limbs) != (params.n, len(mods)):
        raise _bad(
            r,
            f"poly_modulus_degree {n} and coeff_modulus_size {limbs}: its level's are {params.n} "
            f"and {len(mods)}",
        )
    if not ntt:
        raise _bad(r, "is_ntt_form 0: SEAL's CKKS takes ciphertexts and keys in NTT form only")
    if factor != 1:
        raise _bad(r, f"correction_factor {factor}: a CKKS ciphertext's is 1")
    params.scale_in_bounds(scale, mods, f"SEAL {r.what}")


# --- the objects ---------------------------------------------------------------------------


def _parms(words: Sequence[int]) -> ParmsId:
    a, b, c, d = words
    return (a, b, c, d)


def _dynarray_size(count: int) -> int:
    """The most bytes a saved DynArray of ``count`` words can take, compressed or not."""
    return HEADER_SIZE + compressed_bound(8 + 8 * count)


def _dynarray(count: int) -> Callable[[Reader], NDArray[np.uint64]]:
    def members(r: Reader) -> NDArray[np.uint64]:
        (got,) = r.unpack("<Q", "the count")
        if got != count:
            seeded = " (a seeded ciphertext: not supported)" if 2 * got == count else ""
            raise ValueError(
                f"size disagrees in a SEAL {r.what}: the metadata calls for {count} words, "
                f"the DynArray holds {got}{seeded}"
            )
        r.budget.spend(count, r.what)
        return np.frombuffer(r.take(8 * count, "the words"), dtype="<u8")

    return members


def _words_of(r: Reader, count: int) -> NDArray[np.uint64]:
    return r.nested(f"{r.what}'s DynArray", _dynarray(count), _dynarray_size(count))


def _ciphertext(
    r: Reader, kind: str = "Ciphertext", params: SealParams | None = None
) -> SealCiphertext:
    *pid, ntt, size, n, limbs, scale, factor = r.unpack("<4QB3QdQ", "metadata")
    _ciphertext_rules(r, kind, params, (tuple(pid), ntt, size, n, limbs, scale, factor))
    data = _words_of(r, size * limbs * n).reshape(size, limbs, n)
    return SealCiphertext(_parms(pid), data, bool(ntt), scale, factor)


def _ciphertext_members(ct: SealCiphertext) -> bytes:
    size, limbs, n = ct.data.shape
    meta = (*ct.parms_id, ct.ntt_form, size, n, limbs, ct.scale, ct.correction_factor)
    return struct.pack("<4QB3QdQ", *meta) + _dynarray_bytes(ct.data)


def _dynarray_bytes(data: np.ndarray) -> bytes:
    return save(struct.pack("<Q", data.size) + data.astype("<u8").tobytes(), "none")


def _plaintext(
    r: Reader, kind: str = "Plaintext", params: SealParams | None = None
) -> SealPlaintext:
    *words, count, scale = r.unpack("<4QQd", "metadata")
    pid = _parms(words)
    most = MAX_N if pid == PARMS_ID_ZERO else MAX_LIMBS * MAX_N
    if count > most:
        raise _bad(r, f"coeff_count {count}: at most {most} words")
    if wrong := scale_rule(scale):
        raise _bad(r, wrong)
    if params is not None:
        if pid == PARMS_ID_ZERO:
            raise _bad(r, "parms_id zero: a plaintext in coefficient form is not CKKS data")
        mods = _level(params, pid, kind, r.what)
        if count != len(mods) * params.n:
            raise _bad(r, f"coeff_count {count}: its level's is {len(mods)} x {params.n}")
        params.scale_in_bounds(scale, mods, f"SEAL {r.what}")
    return SealPlaintext(pid, _words_of(r, count), scale)


def _plaintext_members(pt: SealPlaintext) -> bytes:
    return struct.pack("<4QQd", *pt.parms_id, pt.data.size, pt.scale) + _dynarray_bytes(pt.data)


def _key_size(params: SealParams | None) -> int:
    """The most bytes a key (a saved PublicKey) of a key-switching entry can take."""
    n, limbs = (MAX_N, MAX_LIMBS) if params is None else (params.n, len(params.coeff_modulus))
    return HEADER_SIZE + compressed_bound(73 + _dynarray_size(2 * limbs * n))


def _kswitch(
    r: Reader, kind: str = "RelinKeys", params: SealParams | None = None
) -> SealKSwitchKeys:
    *pid, count = r.unpack("<4QQ", "metadata")
    most = MAX_RELIN_ENTRIES if kind == "RelinKeys" else (params.n if params else MAX_N)
    if count > most:
        raise _bad(r, f"{count} entries: a SEAL {kind} holds at most {most}")
    digits_want = None
    if params is not None:
        if tuple(pid) != params.parms_id():
            raise _bad(r, f"parms_id {hex_id(pid)}: keys are at the key level")
        digits_want = len(params.coeff_modulus) - 1
    key = functools.partial(_ciphertext, kind="key", params=params)
    keys = []
    for i in range(count):
        (digits,) = r.unpack("<Q", f"the length of entry {i}")
        if digits > MAX_LIMBS or digits not in (0, digits_want or digits):
            want = f"0 or {digits_want}, one per data modulus" if digits_want else "64 at most"
            raise _bad(r, f"entry {i} has {digits} keys: {want}")
        what = f"{r.what}'s key {i}"
        keys.append(tuple(r.nested(f"{what}.{j}", key, _key_size(params)) for j in range(digits)))
    return SealKSwitchKeys(_parms(pid), tuple(keys))


def _kswitch_members(keys: SealKSwitchKeys) -> bytes:
    out = [struct.pack("<4QQ", *keys.parms_id, len(keys.keys))]
    for entry in keys.keys:
        out += [
            struct.pack("<Q", len(entry)),
            *(save(_ciphertext_members(k), "none") for k in entry),
        ]
    return b"".join(out)


#: A kind's reader of members: ``reader(r, kind=, params=)``.
_Reads = Callable[..., SealValue]
#: A kind's writer of members, which takes a value of the kind's type only (``write`` checks it).
_Writes = Callable[[Never], bytes]
_Kind = tuple[type[SealValue], _Reads, _Writes]

#: each kind of object: its type, the reader and the writer of its members
KINDS: dict[str, _Kind] = {
    "Ciphertext": (SealCiphertext, _ciphertext, _ciphertext_members),
    "PublicKey": (SealCiphertext, _ciphertext, _ciphertext_members),
    "Plaintext": (SealPlaintext, _plaintext, _plaintext_members),
    "SecretKey": (SealPlaintext, _plaintext, _plaintext_members),
    "RelinKeys": (SealKSwitchKeys, _kswitch, _kswitch_members),
    "GaloisKeys": (SealKSwitchKeys, _kswitch, _kswitch_members),
}


def _kind(kind: object) -> _Kind:
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"kind={kind!r}: one of {', '.join(KINDS)}")
    return KINDS[kind]


@overload
def read(
    blob: bytes,
    kind: Literal["Ciphertext", "PublicKey"],
    params: SealParams | None = None,
    max_words: int | None = None,
) -> SealCiphertext: ...
@overload
def read(
    blob: bytes,
    kind: Literal["Plaintext", "SecretKey"],
    params: SealParams | None = None,
    max_words: int | None = None,
) -> SealPlaintext: ...
@overload
def read(
    blob: bytes,
    kind: Literal["RelinKeys", "GaloisKeys"],
    params: SealParams | None = None,
    max_words: int | None = None,
) -> SealKSwitchKeys: ...
@overload
def read(
    blob: bytes, kind: str, params: SealParams | None = None, max_words: int | None = None
) -> SealValue: ...
def read(
    blob: bytes, kind: str, params: SealParams | None = None, max_words: int | None = None
) -> SealValue:
    """The saved SEAL object ``blob`` of ``kind`` (a key of :data:`KINDS`), as plain data.

    Args:
        blob: the bytes SEAL saved.
        kind: what they hold.
        params: the CKKS parameters to check the object against as SEAL's ``load`` does (see
            the module docstring), before any word is read; then :func:`check`.
        max_words: the most words the object may hold in all (``None``: SEAL's own limits).

    Raises:
        TypeError: if ``blob`` is not bytes-like.
        ValueError: for an unknown ``kind``, or a blob that is not one whole saved object of that
            kind; the message says what is wrong (bad magic, unsupported version, unknown
            compression mode, truncated, a size that disagrees, a stream that inflates past its
            members, metadata out of SEAL's bounds or ``params``', a missing ``zstandard``).
    """
    reader = _kind(kind)[1]
    value = open_object(blob, kind, functools.partial(reader, kind=kind, params=params), max_words)
    if params is not None:
        check(value, params)
    return value


def write(value: object, kind: str, compression: str = "none") -> bytes:
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
    return save(cast(Callable[[SealValue], bytes], members)(value), compression)  # checked


def uncompressed(blob: bytes, kind: str | None = None) -> bytes:
    """The same saved object with ``compr_mode`` none: what SEAL saves without compression.

    The object is read as ``kind`` (by default as each layout in turn: a ciphertext or public
    key, a plaintext or secret key, key-switching keys), so it inflates no further than its
    members, and written back (nested objects uncompressed, as SEAL saves them).

    Raises:
        ValueError: as :func:`read` does, for a blob that is not a whole saved object.
    """
    version = read_header(blob).version
    errors = []
    for k in (kind,) if kind is not None else ("Ciphertext", "Plaintext", "GaloisKeys"):
        _, reader, members = _kind(k)
        try:
            value = open_object(blob, k, functools.partial(reader, kind=k))
        except ValueError as e:
            errors.append(str(e))
            continue
        return save(cast(Callable[[SealValue], bytes], members)(value), "none", version)
    raise ValueError("; ".join(errors) if kind else "reads as no SEAL object: " + "; ".join(errors))
