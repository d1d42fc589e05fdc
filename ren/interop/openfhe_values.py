"""OpenFHE's CKKS objects as plain data, and the rules OpenFHE holds them to.

The values ``ren.interop.openfhe_format`` reads from OpenFHE's JSON files: the crypto context's
parameters (:class:`OpenFHEParams`), ciphertexts and keys (:class:`OpenFHEValue` and its kinds),
with OpenFHE's enums as stored. The rules are what OpenFHE itself checks of such an object when it
loads or uses one (``PrecomputeCRTTables`` on loading a context, ``GetDefaultSlotSize``,
``MakeCKKSPackedPlaintext``, the CKKS parameter generation and its validation, decoding):
:func:`params_fault` and :func:`ciphertext_fault` say what breaks one, or ``None``;
:func:`key_digits` and :func:`bv_windows` say how many key pairs OpenFHE's ``KeySwitchGen`` makes.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

from ren.ring import RingSpec

__all__ = [
    "CKKS_PACKED",
    "FORMATS",
    "OpenFHECiphertext",
    "OpenFHEEvalKey",
    "OpenFHEParams",
    "OpenFHEPublicKey",
    "OpenFHESecretKey",
    "OpenFHEValue",
    "Read",
    "bv_windows",
    "ciphertext_fault",
    "key_digits",
    "params_fault",
]

#: OpenFHE's ``Format`` as stored (``f``), and this module's name for it.
FORMATS = {0: "ntt", 1: "coeff"}
#: OpenFHE's enums as stored, by value (``ScalingTechnique``, ``KeySwitchTechnique``, ...).
SCALING: tuple[str, ...] = ("FIXEDMANUAL", "FIXEDAUTO", "FLEXIBLEAUTO", "FLEXIBLEAUTOEXT")
SCALING += ("COMPOSITESCALINGAUTO", "COMPOSITESCALINGMANUAL", "NORESCALE")
KEY_SWITCHING = ("INVALID", "BV", "HYBRID")
SECRET_DIST = ("GAUSSIAN", "UNIFORM_TERNARY", "SPARSE_TERNARY", "SPARSE_ENCAPSULATED")
SECURITY: tuple[str, ...] = tuple(
    f"HEStd_{b}_{k}" for k in ("classic", "quantum") for b in (128, 192, 256)
)
SECURITY += ("HEStd_NotSet",)
CKKS_PACKED = 4  # PlaintextEncodings::CKKS_PACKED_ENCODING
#: BV's largest digit size: ``MAX_MODULUS_SIZE / 2`` (60 / 2 with 64-bit native integers).
MAX_DIGIT_SIZE = 30


@dataclasses.dataclass(frozen=True)
class OpenFHEParams:
    """A CKKS crypto context's parameters, as saved (names as OpenFHE's setters and enums).

    Attributes:
        n: the ring dimension.
        moduli: the towers of ``Q``, ``q_0, q_1, ...``, in OpenFHE's order.
        roots: each tower's primitive ``2n``-th root of unity (its NTT's), in the same order.
        scaling_technique: ``"FIXEDMANUAL"``, ``"FLEXIBLEAUTO"``, ...
        scaling_mod_size: the bits of the nominal scale ``2^scaling_mod_size``.
        batch_size: the slots a plaintext fills.
        key_switching: ``"HYBRID"`` or ``"BV"``.
        dnum: the number of HYBRID's key-switching digits (OpenFHE's ``numPartQ``).
        digit_size: BV's digit size in bits (OpenFHE's ``digitSize``, saved as ``rw``): 0 for
            one digit per tower, else ``ceil(bits(q_i) / digit_size)`` digits of tower ``i``.
        secret_key_dist: ``"UNIFORM_TERNARY"``, ``"SPARSE_TERNARY"``, ...
        data_type: ``"REAL"`` or ``"COMPLEX"``.
        security_level: ``"HEStd_128_classic"``, ..., ``"HEStd_NotSet"``.
        sigma: the standard deviation of the errors.
        multiplicative_depth: the depth the context was made for.
    """

    n: int
    moduli: tuple[int, ...]
    roots: tuple[int, ...]
    scaling_technique: str
    scaling_mod_size: int
    batch_size: int
    key_switching: str
    dnum: int
    digit_size: int
    secret_key_dist: str
    data_type: str
    security_level: str
    sigma: float
    multiplicative_depth: int


@dataclasses.dataclass(frozen=True)
class OpenFHEValue:
    """Words read from an OpenFHE file, and what the file says of them.

    Attributes:
        words: ``(parts, limbs, n)`` plain residues (``uint64``), limb ``i`` modulo ``moduli[i]``.
        moduli: the towers' moduli, in the file's order.
        roots: each tower's root of unity: in NTT form its words are values at its powers.
        form: ``"ntt"`` (OpenFHE's EVALUATION format) or ``"coeff"`` (COEFFICIENT).
        params: the crypto context's parameters.
        key_tag: the tag of the key pair it belongs to.
        source: where it was read from, in words.
    """

    words: np.ndarray
    moduli: tuple[int, ...]
    roots: tuple[int, ...]
    form: str
    params: OpenFHEParams
    key_tag: str
    source: str


@dataclasses.dataclass(frozen=True)
class OpenFHECiphertext(OpenFHEValue):
    """A CKKS ciphertext: ``words[k]`` is ``c_k``, with ``c_0 + c_1 s (+ c_2 s^2) = m + e``.

    Attributes:
        scale: OpenFHE's scaling factor (``2^(scaling_mod_size * d)`` in the FIXED modes).
        noise_scale_degree: ``d``: 1 fresh or rescaled, 2 after a product before rescaling.
        level: the towers dropped since encryption.
        slots: the slots the message fills.
    """

    scale: float
    noise_scale_degree: int
    level: int
    slots: int


@dataclasses.dataclass(frozen=True)
class OpenFHEPublicKey(OpenFHEValue):
    """A public key ``(b, a)``, ``b = -a s + e``: ``words`` is ``(b, a)``."""


@dataclasses.dataclass(frozen=True)
class OpenFHESecretKey(OpenFHEValue):
    """A secret key ``s``: ``words`` is ``(s,)``, over every tower of ``Q``."""


@dataclasses.dataclass(frozen=True)
class OpenFHEEvalKey(OpenFHEValue):
    """A relinearization key: ``words`` is ``(b_0, a_0, b_1, a_1, ...)``, a pair per digit.

    HYBRID: ``b_j = -a_j s + e_j + P s^power`` on the towers of digit ``j`` (no ``P s^power`` on
    the others), over the towers of ``Q`` then of ``P``. BV: over ``Q``'s towers alone, digit
    ``j`` of :func:`bv_windows` (tower ``i``, window ``k``) has ``b_j = -a_j s - e_j + 2^(k B)
    s^power`` on tower ``i`` and ``-a_j s - e_j`` on the others (``B`` the digit size; ``k = 0``
    when it is 0).
    """

    power: int

    @property
    def p_moduli(self) -> tuple[int, ...]:
        """The towers of the special modulus ``P``: those after ``Q``'s."""
        return self.moduli[len(self.params.moduli) :]


#: What :func:`read` returns.
Read = OpenFHEValue | OpenFHEParams | tuple[OpenFHEEvalKey, ...]


def _power_of_two(x: int) -> bool:
    return x >= 1 and not x & (x - 1)


@functools.lru_cache(maxsize=64)
def params_fault(p: OpenFHEParams) -> str | None:
    """What makes a crypto context one OpenFHE would not load or use, or ``None``.

    The ring dimension a power of two; the towers of ``Q`` distinct NTT primes for it, each with
    a primitive ``2n``-th root of unity; a batch size of 0 or a power of two up to ``n/2``; a
    scaling modulus size of 1 bit or more; ``dnum`` digits that HYBRID key switching can make of
    ``Q``'s towers; a BV digit size from 0 to 30 bits (``ValidateParameters``; an unsigned 32-bit
    field otherwise); a positive, finite ``sigma``; a depth of 0 or more.
    """
    n, count = p.n, len(p.moduli)
    if not _power_of_two(n) or n < 2:
        return f"the ring dimension (rd) is {n}: a power of two, 2 or more"
    try:
        RingSpec(n, p.moduli)
    except (ValueError, TypeError) as e:
        return f"the towers of Q {list(p.moduli)} are no RNS basis for n={n}: {e}"
    for i, (q, root) in enumerate(zip(p.moduli, p.roots, strict=True)):
        if pow(root, n, q) != q - 1:
            return (
                f"tower {i}'s root of unity (ru) {root} is not a primitive {2 * n}-th root "
                f"modulo {q}: root^{n} must be -1"
            )
    if p.batch_size != 0 and (not _power_of_two(p.batch_size) or p.batch_size > n // 2):
        return f"the batch size (bs) is {p.batch_size}: 0 or a power of two up to n/2 = {n // 2}"
    if p.scaling_mod_size < 1:
        return f"the scaling modulus size (m) is {p.scaling_mod_size}: 1 bit or more"
    digits = p.dnum
    if p.key_switching == "HYBRID" and (
        digits < 1 or digits > count or count <= math.ceil(count / digits) * (digits - 1)
    ):
        return (
            f"dnum is {digits}: HYBRID key switching cannot make {digits} digits of the "
            f"{count} towers of Q"
        )
    if not 0 <= p.digit_size < 1 << 32 or (
        p.key_switching == "BV" and p.digit_size > MAX_DIGIT_SIZE
    ):
        return (
            f"the digit size (rw) is {p.digit_size}: an unsigned 32-bit number, and with BV key "
            f"switching 0 (a digit per tower) to {MAX_DIGIT_SIZE} bits"
        )
    if not (math.isfinite(p.sigma) and p.sigma > 0):
        return f"sigma (dp) is {p.sigma!r}: a positive finite number"
    if p.multiplicative_depth < 0:
        return f"the multiplicative depth (muld) is {p.multiplicative_depth}: 0 or more"
    return None


def ciphertext_fault(
    params: OpenFHEParams,
    *,
    towers: int,
    scale: float,
    degree: int,
    level: int,
    slots: int,
) -> str | None:
    """What makes a CKKS ciphertext's metadata one OpenFHE would not make or decode, or ``None``.

    Its slots a power of two up to ``n/2`` (``GetDefaultSlotSize``); its level the towers it has
    dropped (``towers + level`` is the number of ``Q``'s towers, as ``ModReduce`` and
    ``LevelReduce`` keep it); a noise scale degree of 1 or more; a scaling factor that is finite
    and 1 or more, equal to ``2^(scaling_mod_size * d)`` in the FIXED modes, and below the
    modulus of its towers (else no message can be decoded).
    """
    n, count = params.n, len(params.moduli)
    if not _power_of_two(slots) or slots > n // 2:
        return f"the slots (sl) are {slots}: a power of two up to n/2 = {n // 2}"
    if level < 0 or towers + level != count:
        return (
            f"the level (l) is {level} with {towers} towers: the level is the number of towers "
            f"dropped from Q's {count}"
        )
    if degree < 1:
        return f"the noise scale degree (d) is {degree}: 1 or more"
    if not (math.isfinite(scale) and scale >= 1):
        return f"the scaling factor (s) is {scale!r}: a finite number, 1 or more"
    if params.scaling_technique in ("FIXEDMANUAL", "FIXEDAUTO"):
        want = params.scaling_mod_size * degree
        if scale != 2.0**want:
            return (
                f"the noise scale degree (d) {degree} disagrees with the scaling factor (s) "
                f"{scale!r}: with {params.scaling_technique} the factor is "
                f"2^(scaling mod size x d) = 2^{want}"
            )
    bits = math.prod(params.moduli[:towers]).bit_length()
    if math.log2(scale) >= bits - 1:
        return (
            f"the scaling factor (s) 2^{math.log2(scale):.1f} reaches the modulus of the "
            f"ciphertext's {towers} towers ({bits} bits): no message can be decoded"
        )
    return None


def bv_windows(p: OpenFHEParams) -> tuple[tuple[int, int], ...]:
    """The ``(tower i, window k)`` of each BV key pair, in OpenFHE's order.

    Digit size 0: ``(i, 0)`` for each tower of ``Q``. Digit size ``B``: tower ``i`` has
    ``ceil(bits(q_i) / B)`` windows (``KeySwitchGen``'s ``arrWindows``, ``CRTDecompose``'s
    count), towers in order, windows in order within a tower.
    """
    if p.digit_size == 0:
        return tuple((i, 0) for i in range(len(p.moduli)))
    size = p.digit_size
    return tuple((i, k) for i, q in enumerate(p.moduli) for k in range(-(-q.bit_length() // size)))


def key_digits(p: OpenFHEParams) -> int:
    """How many ``(b_j, a_j)`` pairs a key switching key of ``p`` holds.

    ``dnum`` for HYBRID; one per :func:`bv_windows` entry for BV.
    """
    return len(bv_windows(p)) if p.key_switching == "BV" else p.dnum
