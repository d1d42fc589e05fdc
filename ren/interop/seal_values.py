"""SEAL's values as plain data, its CKKS parameters, and what SEAL checks of one against the other.

The values (:class:`SealCiphertext`, :class:`SealPlaintext`, :class:`SealKSwitchKeys`) are what
``ren.interop.seal_format`` reads from SEAL's bytes: words as read-only NumPy arrays and their
metadata. :class:`SealParams` is what a SEAL CKKS context is made of here: ``n`` and
``coeff_modulus`` (the special prime last), and from them each level's ``parms_id`` (SEAL's hash)
and moduli. :func:`check` holds a value to them as SEAL's loader and evaluator do
(``is_metadata_valid_for``, ``is_data_valid_for`` and ``is_scale_within_bounds``);
``seal_format`` checks a saved object's metadata the same way before it reads any word, and
without parameters holds it to SEAL's own limits, the constants below (SEAL's ``defines.h``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import sys
from collections.abc import Iterable, Sequence
from typing import SupportsInt, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ren.ring import RingSpec

__all__ = [
    "MAX_LIMBS",
    "MAX_N",
    "MAX_PARTS",
    "PARMS_ID_ZERO",
    "ParmsId",
    "SealCiphertext",
    "SealKSwitchKeys",
    "SealParams",
    "SealPlaintext",
    "SealValue",
    "check",
    "scale_rule",
]

ParmsId = tuple[int, int, int, int]
PARMS_ID_ZERO = (0, 0, 0, 0)  #: the parms_id of a coefficient-form plaintext
MAX_N = 1 << 17  #: SEAL_POLY_MOD_DEGREE_MAX
MAX_PARTS = 16  #: SEAL_CIPHERTEXT_SIZE_MAX (a ciphertext has 2 to 16 parts, or none)
MAX_LIMBS = 64  #: the most moduli read here (SEAL's SEAL_COEFF_MOD_COUNT_MAX is 256)
MAX_RELIN_ENTRIES = MAX_PARTS - 2  #: RelinKeys: the keys of s^2 .. s^16


def hex_id(parms_id: Sequence[int]) -> str:
    """The start of a ``parms_id`` in hex, for messages."""
    return "".join(f"{int(w):016x}" for w in parms_id)[:16] + "..."


def scale_rule(scale: float) -> str | None:
    """What is wrong with a saved scale, or ``None``: SEAL loads only a positive normal double."""
    if not (math.isfinite(scale) and scale >= sys.float_info.min):
        return f"scale {scale!r} is not a positive normal number (SEAL loads no other)"
    return None


@dataclasses.dataclass(frozen=True)
class SealParams:
    """SEAL's CKKS parameters: ``n`` and ``coeff_modulus``: ``q_0, ..., q_{L-1}``, then ``p``.

    Raises:
        ValueError: for fewer than two moduli, or moduli Ren's ``RingSpec`` refuses (naming the
            modulus and the rule it breaks).
    """

    n: int
    coeff_modulus: tuple[int, ...]

    def __post_init__(self) -> None:
        mods = tuple(int(q) for q in self.coeff_modulus)
        if len(mods) < 2:
            raise ValueError(f"coeff_modulus={mods}: key switching needs at least two moduli")
        RingSpec(self.n, mods)  # checks n and the moduli
        object.__setattr__(self, "coeff_modulus", mods)

    def parms_id(self, count: int | None = None) -> ParmsId:
        """The ``parms_id`` of the level of the first ``count`` moduli (default: every one).

        SEAL's hash: BLAKE2b-256 of the u64 words ``(2, n, moduli..., 0)`` (CKKS, the degree, the
        moduli, a plain modulus of 0).
        """
        mods = self.coeff_modulus[: len(self.coeff_modulus) if count is None else count]
        data = np.array([2, self.n, *mods, 0], dtype="<u8").tobytes()
        words = np.frombuffer(hashlib.blake2b(data, digest_size=32).digest(), dtype="<u8")
        return cast(ParmsId, tuple(int(w) for w in words))  # 32 bytes: four words

    def moduli(self, parms_id: Sequence[int]) -> tuple[int, ...]:
        """The moduli of the level ``parms_id`` names (the key level holds all of them).

        Raises:
            ValueError: for a ``parms_id`` of none of these parameters' levels.
        """
        k = len(self.coeff_modulus)
        for count in range(k, 0, -1):
            if tuple(int(w) for w in parms_id) == self.parms_id(count):
                return self.coeff_modulus[:count]
        raise ValueError(
            f"parms_id {hex_id(parms_id)} is no level of {self}: the levels' are "
            + ", ".join(hex_id(self.parms_id(c)) for c in range(k, 0, -1))
        )

    def ring(self, parms_id: Sequence[int] | None = None) -> RingSpec:
        """The ``RingSpec`` of a level, its moduli in SEAL's order (default: the key level)."""
        mods = self.coeff_modulus if parms_id is None else self.moduli(parms_id)
        return RingSpec(self.n, mods)

    def scale_in_bounds(self, scale: float, moduli: Sequence[int], what: str) -> None:
        """SEAL's ``is_scale_within_bounds``: ``floor(log2(scale))`` below the moduli's bits.

        Raises:
            ValueError: for a scale that is not a positive normal double, or whose bits reach
                the level's modulus (SEAL's evaluator says "scale out of bounds").
        """
        wrong = scale_rule(scale)
        if wrong:
            raise ValueError(f"the {what}'s {wrong}")
        bits = math.prod(moduli).bit_length()  # SEAL's total_coeff_modulus_bit_count
        if int(math.log2(scale)) >= bits:
            raise ValueError(
                f"the {what}'s scale 2^{math.log2(scale):.1f} is out of bounds: SEAL keeps "
                f"log2(scale) below the {bits} bits of its level's {len(moduli)} moduli"
            )


def _words(data: ArrayLike, ndim: int) -> NDArray[np.uint64]:
    arr = np.array(data, copy=True)
    if arr.dtype != np.uint64 or arr.ndim != ndim:
        raise ValueError(f"data must be a {ndim}-D uint64 array, got {arr.dtype} {arr.shape}")
    arr.flags.writeable = False
    return arr


def _parms_id(value: Iterable[SupportsInt]) -> ParmsId:
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
        if self.size != 0 and not 2 <= self.size <= MAX_PARTS:
            raise ValueError(
                f"a SEAL ciphertext has 2 to {MAX_PARTS} parts (or none), got {self.size}"
            )

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


#: A SEAL object as Ren reads it: a ciphertext (or public key), a plaintext (or secret key), keys.
SealValue = SealCiphertext | SealPlaintext | SealKSwitchKeys


def check(value: SealValue, params: SealParams) -> None:
    """Check a SEAL value against CKKS ``params`` as SEAL's loader and evaluator do.

    The ``parms_id`` must name a level (the key level for keys), the shape must be that level's
    (``n`` words per limb, one limb per modulus), ciphertexts in NTT form with a correction factor
    of 1, the scale a positive normal double within SEAL's bounds for the level, and every word
    below its modulus.

    Raises:
        TypeError: for a value of another type.
        ValueError: naming what disagrees (the first word out of range with its place).
    """
    if isinstance(value, SealKSwitchKeys):
        if value.parms_id != params.parms_id():
            raise ValueError(f"keys at parms_id {hex_id(value.parms_id)}, not the key level")
        for key in (key for entry in value.keys for key in entry):
            check(key, params)
        return
    if not isinstance(value, SealCiphertext | SealPlaintext):
        raise TypeError(f"value must be a SEAL ciphertext, plaintext or keys, got {type(value)}")
    if value.parms_id == PARMS_ID_ZERO:
        raise ValueError("a plaintext in coefficient form (parms_id zero) is not CKKS data")
    mods = params.moduli(value.parms_id)
    cipher = isinstance(value, SealCiphertext)
    if isinstance(value, SealCiphertext) and not value.ntt_form:
        raise ValueError(
            "is_ntt_form is 0: SEAL's CKKS decrypts and computes on ciphertexts in NTT form only"
        )
    if isinstance(value, SealCiphertext) and value.correction_factor != 1:
        raise ValueError(f"correction_factor {value.correction_factor}: a CKKS ciphertext's is 1")
    params.scale_in_bounds(value.scale, mods, "SEAL ciphertext" if cipher else "SEAL plaintext")
    want = (len(mods), params.n) if cipher else (len(mods) * params.n,)
    got = value.data.shape[1:] if cipher else value.data.shape
    if got != want:
        raise ValueError(f"size disagrees: words shaped {got}, the level's are {want}")
    words = value.data.reshape(-1, len(mods), params.n)
    bad = np.argwhere(words >= np.array(mods, dtype=np.uint64)[None, :, None])
    if bad.size:
        part, limb, i = (int(x) for x in bad[0])
        raise ValueError(
            f"word {int(words[part, limb, i])} (part {part}, limb {limb}, index {i}) is not "
            f"below its modulus {mods[limb]}"
        )
