"""Words to compare, from the files an oracle engineer has: NumPy arrays, SEAL or Ren's bytes.

``load_words(path)`` reads a file into :class:`Words`: residues shaped ``(parts, limbs, n)``
(``uint64``, plain: not Montgomery, unless the file says otherwise), with the moduli and the
form (coefficients or NTT slots) where the file tells them. What it reads:

* ``.npy``: one array, of 1 (``n``), 2 (``limbs, n``) or 3 (``parts, limbs, n``) dimensions, of
  integers; complex arrays are slot values (``Words.slots``);
* ``.npz``: the array named by ``key`` (``path.npz:key`` on the command line), or the only
  array; a ``moduli`` array beside it gives the moduli;
* a SEAL ``Ciphertext`` or ``PublicKey`` (``ren.interop.seal_format``: parts, limbs and words,
  with no moduli: SEAL's file names its parameters only by their hash), or a ``Plaintext`` or
  ``SecretKey`` (its limbs one after the other: one row of ``L * n`` words whose split is unknown,
  ``Words.limbs_known`` false, until the moduli or another file's shape give it);
* an OpenFHE JSON ``Ciphertext``, public key or secret key (``ren.interop.openfhe_format``): its
  parts, towers and moduli. Evaluation-form words are put in Ren's NTT order
  (``ren.interop.openfhe.to_ren_ntt``), so they compare directly with Ren's NTT words;
* Ren's own bytes: a ciphertext's or plaintext's ``to_bytes()``.

``python -m ren.testing compare A B`` (``ren.testing.compare_files``) compares two of them.

**Limits.** A file is hostile until checked: at most ``max_words`` words are read from one file
(:data:`MAX_WORDS` by default), and the check comes before the memory is given. An ``.npy``
array's or ``.npz`` member's header (its shape and dtype) and a member's size in the zip directory
are checked first: object arrays are refused (nothing is unpickled), and so is an array of other
than integers or complex numbers, of more than 3 dimensions or ``max_words`` words, or a member
whose stored size is not its header's. A SEAL file is read with ``max_words`` (and inflated no
further than its members, see ``ren.interop.seal_stream``); no file of more than
``32 * max_words`` bytes is read at all. Every refusal is a ``ValueError`` that names the file.
"""

from __future__ import annotations

import dataclasses
import math
import zipfile
import zlib
from pathlib import Path
from typing import IO

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["MAX_WORDS", "Words", "load_words"]

#: The most words read from one file by default: 16 parts of 64 limbs of 2^17 words, the largest
#: ciphertext SEAL saves (1 GiB of 64-bit words).
MAX_WORDS = 1 << 27

#: SEAL's serialization header starts with the magic 0xA15E, little-endian.
SEAL_MAGIC = b"\x5e\xa1"
REN_MAGIC = b"RENCKKS\0"


@dataclasses.dataclass(frozen=True)
class Words:
    """Residues to compare, and what is known of them.

    Attributes:
        words: ``(parts, limbs, n)`` integers (``uint64``), or ``(count,)`` complex slots.
        moduli: the modulus of each limb, when the file says (``None``: unknown).
        form: ``"coeff"``, ``"ntt"`` or ``None`` (unknown).
        source: where they came from, in words (``"SEAL Ciphertext"``, ``"a.npy"``).
        limbs_known: false for the limbs of a SEAL plaintext, one row of ``L * n`` words whose
            split into limbs the file does not say.
    """

    words: np.ndarray
    moduli: tuple[int, ...] | None = None
    form: str | None = None
    source: str = ""
    limbs_known: bool = True

    @property
    def slots(self) -> bool:
        """Whether these are complex slot values rather than residues."""
        return bool(np.iscomplexobj(self.words))


def as_words(
    array: ArrayLike, moduli: ArrayLike | None = None, form: str | None = None, source: str = ""
) -> Words:
    """``array`` shaped ``(parts, limbs, n)`` (a 1-D or 2-D array gets the missing axes).

    Raises:
        TypeError: an array of neither integers nor complex numbers.
        ValueError: more than 3 dimensions, or moduli that are not one per limb.
    """
    a = np.asarray(array)
    if np.iscomplexobj(a):
        return Words(a.reshape(-1).astype(np.complex128), None, "slots", source)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{source or 'the array'} holds {a.dtype} values: integers or complex")
    if a.ndim > 3 or a.ndim == 0:
        raise ValueError(
            f"{source or 'the array'} has shape {a.shape}: (n,), (limbs, n) or (parts, limbs, n)"
        )
    if (a < 0).any():
        raise ValueError(f"{source or 'the array'} holds negative words: residues are in [0, q)")
    a = a.astype(np.uint64).reshape((1,) * (3 - a.ndim) + a.shape)
    mods = None if moduli is None else check_moduli(moduli, source or "the array")
    if mods is not None and len(mods) != a.shape[1]:
        raise ValueError(f"{len(mods)} moduli for {a.shape[1]} limbs in {source or 'the array'}")
    return Words(a, mods, form, source)


def check_moduli(moduli: ArrayLike, source: str) -> tuple[int, ...]:
    """``moduli`` as a tuple of ints, each at least 2 and below ``2^64``.

    Raises:
        TypeError: moduli that are not integers.
        ValueError: a modulus out of that range (the message names it and ``source``).
    """
    arr = np.asarray(moduli)
    if arr.dtype.kind not in "iuO" or arr.ndim > 1:
        raise TypeError(f"the moduli of {source} are {arr.dtype} {arr.shape}: a list of integers")
    mods = tuple(arr.reshape(-1).tolist())
    for q in mods:
        if isinstance(q, bool) or not isinstance(q, int) or not 2 <= q < 1 << 64:
            raise ValueError(f"modulus {q!r} of {source}: an integer from 2 to 2^64 - 1")
    return mods


def load_words(path: str | Path, key: str | None = None, max_words: int | None = None) -> Words:
    """The words of the file at ``path`` (see the module docstring for what it reads).

    Args:
        path: the file.
        key: the array of an ``.npz`` to read (``None``: its only array).
        max_words: the most words to read (``None``: :data:`MAX_WORDS`).

    Raises:
        FileNotFoundError: no such file.
        ValueError: a file of none of these kinds, an ``.npz`` with several arrays and no
            ``key`` (the message names them), or a file past the limits (the module docstring).
    """
    p = Path(path)
    limit = MAX_WORDS if max_words is None else max_words
    if not p.is_file():
        raise FileNotFoundError(f"no such file: {p}")
    size = p.stat().st_size
    if size > 32 * limit + (1 << 20):
        raise ValueError(
            f"{p.name} is {size} bytes: more than is read for {limit} words (max_words)"
        )
    if p.suffix == ".npy":
        with p.open("rb") as fp:
            return as_words(_npy(fp, size, limit, p.name, "iuc"), source=p.name)
    if p.suffix == ".npz":
        return _npz(p, key, limit)
    blob = p.read_bytes()
    if blob.startswith(REN_MAGIC):
        return _ren_words(blob, p.name)
    if blob.startswith(SEAL_MAGIC):
        return _seal_words(blob, p.name, limit)
    if blob.lstrip()[:1] == b"{":
        return _openfhe_words(p)
    raise ValueError(
        f"{p.name} is none of the files Ren compares: .npy, .npz, a SEAL or OpenFHE JSON "
        "ciphertext or key, or Ren's bytes (a ciphertext's or plaintext's to_bytes)"
    )


def _npy(fp: IO[bytes], size: int, limit: int, source: str, kinds: str) -> np.ndarray:
    """The array of an ``.npy`` stream of ``size`` bytes, its header checked before its data."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(fp)
        read_header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        shape, fortran, dtype = read_header(fp)
    except (ValueError, OSError, EOFError) as e:
        raise ValueError(f"{source} has no .npy header NumPy reads: {e}") from None
    if dtype.hasobject or dtype.kind not in kinds:
        what = "Python objects (a pickle)" if dtype.hasobject else f"{dtype} values"
        want = "integers or complex numbers" if "c" in kinds else "integers"
        raise ValueError(f"{source} holds {what}: it is not read; words are {want}")
    if not 1 <= len(shape) <= 3:
        raise ValueError(f"{source} has shape {shape}: (n,), (limbs, n) or (parts, limbs, n)")
    count = math.prod(shape)
    if count > limit:
        raise ValueError(
            f"{source} declares {count} words (shape {shape}), more than the {limit} read from "
            "one file (max_words)"
        )
    data_bytes = count * dtype.itemsize
    if fp.tell() + data_bytes != size:
        raise ValueError(
            f"size disagrees: {source}'s header declares {data_bytes} bytes of data (shape "
            f"{shape}, {dtype}), the file holds {size - fp.tell()}"
        )
    data = fp.read(data_bytes)
    if len(data) != data_bytes:
        raise ValueError(f"truncated {source}: {len(data)} of {data_bytes} bytes of data")
    array = np.frombuffer(data, dtype=dtype)
    return array.reshape(shape[::-1]).T if fortran else array.reshape(shape)


def _npz(p: Path, key: str | None, limit: int) -> Words:
    """The array ``key`` of an ``.npz`` (and its ``moduli``), each member checked before read."""
    try:
        with zipfile.ZipFile(p) as z:
            members = {i.filename.removesuffix(".npy"): i for i in z.infolist()}
            names = [k for k in members if k != "moduli"]
            if key is None and len(names) != 1:
                raise ValueError(
                    f"{p.name} holds the arrays {', '.join(members)}: name one "
                    f"({p.name}:NAME on the command line)"
                )
            name = key if key is not None else names[0]
            if name not in members:
                raise ValueError(f"{p.name} has no array {name!r}; it has {', '.join(members)}")

            def member(k: str, kinds: str) -> np.ndarray:
                info, source = members[k], f"{p.name}:{k}"
                if info.file_size > 8 * limit + 4096:
                    raise ValueError(
                        f"{source} is {info.file_size} bytes uncompressed (its zip directory "
                        f"says), more than {limit} words (max_words) take"
                    )
                with z.open(info) as fp:
                    return _npy(fp, info.file_size, limit, source, kinds)

            moduli = member("moduli", "iu") if "moduli" in members else None
            return as_words(member(name, "iuc"), moduli, source=f"{p.name}:{name}")
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as e:
        raise ValueError(f"{p.name} is not a .npz (zip) file Ren reads: {e}") from None


def _seal_words(blob: bytes, source: str, limit: int) -> Words:
    """A SEAL ciphertext's, public key's, plaintext's or secret key's words."""
    from ren.interop import seal_format

    errors = []
    for kind in ("Ciphertext", "Plaintext"):
        try:
            value = seal_format.read(blob, kind, max_words=limit)
        except ValueError as e:
            errors.append(f"as a {kind}: {e}")
            continue
        form = "ntt" if value.ntt_form else "coeff"
        flat = kind == "Plaintext" and value.ntt_form  # limbs one after the other
        words = value.data if kind == "Ciphertext" else value.data.reshape(1, 1, -1)
        words = np.asarray(words, dtype=np.uint64)
        return Words(words, None, form, f"{source} (SEAL {kind})", limbs_known=not flat)
    raise ValueError(f"{source} starts as a SEAL object but reads as none: " + "; ".join(errors))


def _openfhe_words(path: Path) -> Words:
    """An OpenFHE ciphertext's, public key's or secret key's words, NTT words in Ren's order."""
    from ren.interop import openfhe, openfhe_format

    source = path.name
    value = openfhe_format.read(path)
    if not isinstance(value, openfhe_format.OpenFHEValue):
        what = "eval mult keys" if isinstance(value, tuple) else "a crypto context"
        raise ValueError(
            f"{source} holds OpenFHE's {what}: compare reads an OpenFHE ciphertext, public key "
            "or secret key (eval keys: ren.interop.openfhe.key_pairs gives their polys)"
        )
    kind = type(value).__name__.removeprefix("OpenFHE")
    words = value.words
    if value.form == "ntt":
        words = openfhe.to_ren_ntt(words, value.moduli, value.roots)
        kind += ", evaluation form put in Ren's NTT order"
    words = np.asarray(words, dtype=np.uint64)
    return Words(words, tuple(value.moduli), value.form, f"{source} (OpenFHE {kind})")


def _ren_words(blob: bytes, source: str) -> Words:
    """A Ren ciphertext's or plaintext's bytes as words."""
    from ren.ring import Domain
    from ren.schemes.ckks.params import read_value

    at = len(REN_MAGIC) + 2  # after the magic and the format version: the kind's length, the kind
    kind = blob[at + 1 : at + 1 + blob[at]].decode(errors="replace") if len(blob) > at else "?"
    if kind not in ("ciphertext", "plaintext"):
        raise ValueError(f"{source} holds Ren's {kind} bytes: a ciphertext's or plaintext's")
    _, _, polys = read_value(blob, kind, None, "python")
    ring = polys[0].ring
    form = "ntt" if polys[0].domain is Domain.NTT else "coeff"
    words = np.stack([p.limbs() for p in polys]).astype(np.uint64)
    return Words(words, tuple(ring.moduli), form, f"{source} (Ren {kind})")
