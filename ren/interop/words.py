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
  ``SecretKey`` (its limbs one after the other: one row, which ``--moduli`` splits);
* an OpenFHE JSON ``Ciphertext``, public key or secret key (``ren.interop.openfhe_format``): its
  parts, towers and moduli. Evaluation-form words are put in Ren's NTT order
  (``ren.interop.openfhe.to_ren_ntt``), so they compare directly with Ren's NTT words;
* Ren's own bytes: a ciphertext's or plaintext's ``to_bytes()``.

``python -m ren.testing compare A B`` (``ren.testing.compare_files``) compares two of them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Words", "load_words"]

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
    """

    words: np.ndarray
    moduli: tuple[int, ...] | None = None
    form: str | None = None
    source: str = ""

    @property
    def slots(self) -> bool:
        """Whether these are complex slot values rather than residues."""
        return bool(np.iscomplexobj(self.words))


def as_words(array: Any, moduli: Any = None, form: str | None = None, source: str = "") -> Words:
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
    mods = None if moduli is None else tuple(int(q) for q in np.asarray(moduli).reshape(-1))
    if mods is not None and len(mods) != a.shape[1]:
        raise ValueError(f"{len(mods)} moduli for {a.shape[1]} limbs in {source or 'the array'}")
    return Words(a, mods, form, source)


def load_words(path: str | Path, key: str | None = None) -> Words:
    """The words of the file at ``path`` (see the module docstring for what it reads).

    Raises:
        FileNotFoundError: no such file.
        ValueError: a file of none of these kinds, or an ``.npz`` with several arrays and no
            ``key`` (the message names them).
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no such file: {p}")
    if p.suffix == ".npy":
        return as_words(np.load(p, allow_pickle=False), source=p.name)
    if p.suffix == ".npz":
        with np.load(p, allow_pickle=False) as data:
            names = [k for k in data.files if k != "moduli"]
            if key is None and len(names) != 1:
                raise ValueError(
                    f"{p.name} holds the arrays {', '.join(data.files)}: name one "
                    f"({p.name}:NAME on the command line)"
                )
            name = key if key is not None else names[0]
            if name not in data.files:
                raise ValueError(f"{p.name} has no array {name!r}; it has {', '.join(data.files)}")
            moduli = data["moduli"] if "moduli" in data.files else None
            return as_words(data[name], moduli, source=f"{p.name}:{name}")
    blob = p.read_bytes()
    if blob.startswith(REN_MAGIC):
        return _ren_words(blob, p.name)
    if blob.startswith(SEAL_MAGIC):
        return _seal_words(blob, p.name)
    if blob.lstrip()[:1] == b"{":
        return _openfhe_words(p)
    raise ValueError(
        f"{p.name} is none of the files Ren compares: .npy, .npz, a SEAL or OpenFHE JSON "
        "ciphertext or key, or Ren's bytes (a ciphertext's or plaintext's to_bytes)"
    )


def _seal_words(blob: bytes, source: str) -> Words:
    """A SEAL ciphertext's, public key's, plaintext's or secret key's words."""
    from ren.interop import seal_format

    errors = []
    for kind in ("Ciphertext", "Plaintext"):
        try:
            value = seal_format.read(blob, kind)
        except ValueError as e:
            errors.append(f"as a {kind}: {e}")
            continue
        form = "ntt" if value.ntt_form else "coeff"
        words = value.data if kind == "Ciphertext" else value.data.reshape(1, 1, -1)
        return Words(np.asarray(words, dtype=np.uint64), None, form, f"{source} (SEAL {kind})")
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
    from ren.schemes.ckks.params import _read_value

    at = len(REN_MAGIC) + 2  # after the magic and the format version: the kind's length, the kind
    kind = blob[at + 1 : at + 1 + blob[at]].decode(errors="replace") if len(blob) > at else "?"
    if kind not in ("ciphertext", "plaintext"):
        raise ValueError(f"{source} holds Ren's {kind} bytes: a ciphertext's or plaintext's")
    _, _, polys = _read_value(blob, kind, None, "python")
    ring = polys[0].ring
    form = "ntt" if polys[0].domain is Domain.NTT else "coeff"
    words = np.stack([p.limbs() for p in polys]).astype(np.uint64)
    return Words(words, tuple(ring.moduli), form, f"{source} (Ren {kind})")
