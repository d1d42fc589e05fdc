"""OpenFHE 1.x's CKKS in Ren: its saved ciphertexts and keys as Ren values, its decryption exactly.

``ren.interop.openfhe_format`` reads OpenFHE's JSON files (``read``, ``read_ciphertext``, ...,
re-exported here) into plain words. This module maps them to Ren: :func:`to_ren_ntt` (OpenFHE's
evaluation form to Ren's NTT order), :func:`to_polys`, :func:`to_ckks`, :func:`decrypt` (``c_0 +
c_1 s``, every word OpenFHE's), :func:`decode`, and the errors of the keys
(:func:`public_key_error`, :func:`eval_key_errors`). ``tests/interop/test_openfhe.py`` checks
each convention below against OpenFHE's own output (``tests/vectors/openfhe``).

**OpenFHE's conventions, and Ren's:**

* *NTT root.* Each tower's root of unity is saved with it (``ru``). OpenFHE's ``RootOfUnity``
  takes the smallest primitive ``2n``-th root, Ren's ``psi`` (``primitive_root_2n``); the P
  towers of the keys too.
* *NTT order and scaling.* EVALUATION slot ``k`` holds ``a(ru^(2 brv(k) + 1))``: bit-reversed,
  Ren's order; the forward transform is unscaled, the inverse divides by ``n``. So with OpenFHE's
  roots its EVALUATION words *are* Ren's ``Domain.NTT`` limbs. A file naming another root ``ru =
  psi^e`` (``e`` odd; OpenFHE builds its tables from the root it reads) puts ``a(psi^(e(2 brv(k) +
  1)))`` in slot ``k``, which is Ren's slot ``brv((e (2 brv(k) + 1) mod 2n - 1) / 2)``: the
  permutation :func:`to_ren_ntt` applies (``from_ren_ntt`` undoes it), tower by tower.
* *Storage.* Plain residues in ``[0, q)``, not Montgomery words (Ren stores Montgomery words and
  ``Poly.limbs()`` gives plain ones).
* *Moduli.* ``q_0`` (``FirstModSize`` bits) first, then the scaling primes, alternately above
  and below ``2^ScalingModSize``; a rescale drops the last tower. The special primes ``P``
  (``HYBRID`` key switching) appear only in the keys, *after* ``Q``'s towers (Ren puts them
  first in its key ring), about 60 bits each.
* *Digits.* ``dnum`` digits of ``ceil(L / dnum)`` consecutive towers; digit ``j``'s key is
  ``b_j = -a_j s + e_j + P s^2`` on its towers, ``-a_j s + e_j`` on the others, ``s`` extended
  to ``P`` centred. :func:`digit_towers`.
* *BV digits* (``KeySwitchTechnique.BV``): no ``P``; one digit per tower ``i`` of ``Q`` (digit
  size 0), or per window ``k`` of tower ``i`` (digit size ``B``: ``ceil(bits(q_i) / B)``
  windows), with ``b = -a s - e + 2^(k B) s^2`` on tower ``i``, ``-a s - e`` on the others.
  :func:`gadget` gives each digit's ``P`` or ``2^(k B)`` tower by tower;
  ``tests/interop/test_openfhe_bv.py`` states the switch and checks it word for word.
* *Rescale* (``FIXEDMANUAL``'s ``Rescale``): ``(x - r) / q_l`` with ``r`` the centred residue of
  ``x`` modulo the last tower: ``round(x / q_l)``, Ren's ``Poly.rescale()`` word for word.
* *Scale.* In the FIXED modes decoding divides by ``2^(ScalingModSize * d)``, ``d`` the noise
  scale degree (the ciphertext's scaling factor holds the same number); in the FLEXIBLE and
  COMPOSITE modes by the ciphertext's scaling factor. :func:`decode_scale`.
* *Key errors.* In the wheel's keys (1.6.1) the relinearization key's errors have a deviation
  near 1, the public key's near ``sigma`` (3.19). From OpenFHE's source, a likely cause:
  ``KeySwitchGenInternal`` samples them in ``#pragma omp parallel for ... private(dug, dgg)``,
  and OpenMP gives each thread a default-constructed generator, whose deviation is 1.0.
  :func:`eval_key_errors` shows them.
* *Slots.* Slot ``j`` is ``m(zeta^(5^j)) / scale``, ``zeta = e^(i pi / n)``: Ren's order. With
  the data type ``REAL`` (OpenFHE's default) its decoding also adds a Gaussian draw to each slot
  and drops the imaginary parts; with ``COMPLEX`` it adds nothing, as :func:`decode`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from ren.interop.openfhe_format import (
    OpenFHECiphertext,
    OpenFHEEvalKey,
    OpenFHEParams,
    OpenFHEPublicKey,
    OpenFHESecretKey,
    OpenFHEValue,
    read,
    read_ciphertext,
    read_context,
    read_eval_mult_keys,
    read_public_key,
    read_secret_key,
)
from ren.interop.openfhe_values import bv_windows
from ren.poly import Poly
from ren.ring import Domain, RingSpec, primitive_root_2n
from ren.schemes import ckks

__all__ = [
    "OpenFHECiphertext",
    "OpenFHEEvalKey",
    "OpenFHEParams",
    "OpenFHEPublicKey",
    "OpenFHESecretKey",
    "OpenFHEValue",
    "decode",
    "decode_scale",
    "decrypt",
    "digit_towers",
    "eval_key_errors",
    "from_ren_ntt",
    "gadget",
    "key_pairs",
    "public_key_error",
    "read",
    "read_ciphertext",
    "read_context",
    "read_eval_mult_keys",
    "read_public_key",
    "read_secret_key",
    "ring",
    "root_power",
    "to_ckks",
    "to_poly",
    "to_polys",
    "to_ren_ntt",
]

#: The scaling techniques whose decoding divides by the ciphertext's own scaling factor.
EXACT_SCALE = ("FLEXIBLEAUTO", "FLEXIBLEAUTOEXT", "COMPOSITESCALINGAUTO", "COMPOSITESCALINGMANUAL")


# --- the NTT: OpenFHE's evaluation form and Ren's -------------------------------------------


@functools.cache
def root_power(root: int, q: int, n: int) -> int:
    """The odd ``e`` in ``[1, 2n)`` with ``root = psi^e mod q``, ``psi`` Ren's root of ``q``.

    1 when ``root`` is Ren's own (the smallest primitive ``2n``-th root of unity).

    Raises:
        ValueError: ``root`` is not a primitive ``2n``-th root of unity modulo ``q``.
    """
    psi = primitive_root_2n(q, n)
    x, step = psi, psi * psi % q
    for e in range(1, 2 * n, 2):
        if x == root % q:
            return e
        x = x * step % q
    raise ValueError(
        f"root {root} is not a primitive {2 * n}-th root of unity modulo {q} (root^{n} must be "
        f"-1): an NTT of size {n} needs one"
    )


@functools.cache
def _destination(n: int, e: int) -> np.ndarray:
    """Ren's slot of each slot of the NTT whose root is ``psi^e``."""
    bits = n.bit_length() - 1
    k = np.arange(n, dtype=np.int64)
    brv = np.zeros(n, dtype=np.int64)
    for b in range(bits):
        brv |= ((k >> b) & 1) << (bits - 1 - b)
    odd = (e * (2 * brv + 1)) % (2 * n)  # slot k holds a(psi^odd)
    dest = brv[(odd - 1) // 2]
    dest.flags.writeable = False
    return dest


def _check_words(words: np.ndarray, moduli: Sequence[int], roots: Sequence[int]) -> np.ndarray:
    w = np.asarray(words)
    if w.ndim < 2 or w.shape[-2] != len(moduli) or len(roots) != len(moduli):
        raise ValueError(
            f"words shaped {w.shape} with {len(moduli)} moduli and {len(roots)} roots: the "
            "words are (..., limbs, n), one modulus and one root per limb"
        )
    return w


def to_ren_ntt(words: np.ndarray, moduli: Sequence[int], roots: Sequence[int]) -> np.ndarray:
    """OpenFHE's EVALUATION words (``(..., limbs, n)``) in Ren's NTT order, a copy.

    Limb ``i`` is OpenFHE's NTT with ``roots[i]``; the result's rows are ``Domain.NTT`` limbs
    (``Poly.from_limbs(result[k], ring, Domain.NTT)``). The identity when every root is Ren's
    (OpenFHE's default).

    Raises:
        ValueError: shapes that disagree, or a root that is no primitive ``2n``-th root.
    """
    w = _check_words(words, moduli, roots)
    out = np.empty_like(w)
    for i, (q, root) in enumerate(zip(moduli, roots, strict=True)):
        out[..., i, _destination(w.shape[-1], root_power(root, q, w.shape[-1]))] = w[..., i, :]
    return out


def from_ren_ntt(words: np.ndarray, moduli: Sequence[int], roots: Sequence[int]) -> np.ndarray:
    """Ren's NTT limbs (``(..., limbs, n)``) as OpenFHE's EVALUATION words for ``roots``.

    The inverse of :func:`to_ren_ntt`.

    Raises:
        ValueError: shapes that disagree, or a root that is no primitive ``2n``-th root.
    """
    w = _check_words(words, moduli, roots)
    out = np.empty_like(w)
    for i, (q, root) in enumerate(zip(moduli, roots, strict=True)):
        out[..., i, :] = w[..., i, _destination(w.shape[-1], root_power(root, q, w.shape[-1]))]
    return out


# --- Ren values ------------------------------------------------------------------------------


def ring(value: OpenFHEValue) -> RingSpec:
    """The ``RingSpec`` of a value's towers, in OpenFHE's order."""
    return RingSpec(value.params.n, value.moduli)


def to_polys(value: OpenFHEValue) -> tuple[Poly, ...]:
    """The parts of a ciphertext or key as Ren polys over :func:`ring`.

    OpenFHE's EVALUATION form becomes ``Domain.NTT`` (in Ren's order: :func:`to_ren_ntt`),
    COEFFICIENT ``Domain.COEFF``.
    """
    r = ring(value)
    if value.form == "coeff":
        return tuple(Poly.from_limbs(part, r) for part in value.words)
    words = to_ren_ntt(value.words, value.moduli, value.roots)
    return tuple(Poly.from_limbs(part, r, Domain.NTT) for part in words)


def to_poly(secret_key: OpenFHESecretKey) -> Poly:
    """The secret key ``s`` as a Ren poly over every tower of ``Q``."""
    (s,) = to_polys(secret_key)
    return s


def decode_scale(ct: OpenFHECiphertext) -> float:
    """What OpenFHE's decoding divides by.

    ``2^(scaling_mod_size * d)`` in the FIXED modes, the ciphertext's scaling factor in the
    FLEXIBLE and COMPOSITE ones.
    """
    if ct.params.scaling_technique in EXACT_SCALE:
        return ct.scale
    return 2.0 ** (ct.params.scaling_mod_size * ct.noise_scale_degree)


def to_ckks(ct: OpenFHECiphertext) -> ckks.Ciphertext:
    """The ciphertext as a Ren ``ckks.Ciphertext``.

    At level ``towers - 1``, with :func:`decode_scale` as its scale, and no ``Params`` (OpenFHE's
    moduli are not the ones Ren's ``Params`` would choose).
    """
    parts = to_polys(ct)
    return ckks.Ciphertext(parts, decode_scale(ct), parts[0].ring.L - 1)


def _secret_for(value: OpenFHEValue, secret_key: OpenFHESecretKey) -> Poly:
    """``s`` over the value's towers (a prefix of ``Q``'s), in NTT form."""
    if value.key_tag != secret_key.key_tag:
        raise ValueError(
            f"{value.source} was made under key tag {value.key_tag}, the secret key "
            f"({secret_key.source}) is {secret_key.key_tag}: another key pair"
        )
    count = len(value.moduli)
    if value.moduli != secret_key.moduli[:count]:
        raise ValueError(
            f"{value.source} is over the towers {value.moduli}, which do not begin the secret "
            f"key's {secret_key.moduli}"
        )
    return to_poly(secret_key).to_ring(ring(value))


def decrypt(ct: OpenFHECiphertext, secret_key: OpenFHESecretKey) -> Poly:
    """OpenFHE's decryption before decoding: ``c_0 + c_1 s (+ c_2 s^2)``, in NTT form.

    Over the ciphertext's towers; ``.tolist(centered=True)`` gives the coefficients OpenFHE
    interpolates.

    Raises:
        ValueError: a secret key of another key pair, or over other towers.
    """
    s = _secret_for(ct, secret_key)
    parts = to_polys(ct)
    m, power = parts[0], s
    for c in parts[1:]:
        m, power = m + c * power, power * s
    return m


def decode(plain: Poly, ct: OpenFHECiphertext) -> np.ndarray:
    """The ``ct.slots`` complex slots of a decryption, as OpenFHE's ``COMPLEX`` decoding gives.

    Slot ``j`` is ``m'(zeta^(5^j)) / decode_scale(ct)``, ``zeta = e^(i pi / n)``, where ``m'``
    keeps the coefficients OpenFHE reads: every ``n / (2 slots)``-th (all of them when the slots
    fill the ring).
    """
    n = plain.ring.n
    coeffs = np.array([float(c) for c in plain.tolist(centered=True)], dtype=np.float64)
    gap = n // (2 * ct.slots)
    keep = np.zeros(n, dtype=bool)
    keep[::gap] = True
    slots = ckks.embed(np.where(keep, coeffs, 0.0) / decode_scale(ct), n)
    return np.asarray(slots[: ct.slots])


# --- keys ------------------------------------------------------------------------------------


def public_key_error(public_key: OpenFHEPublicKey, secret_key: OpenFHESecretKey) -> Poly:
    """``b + a s``: the public key's error ``e`` (small) when ``(b, a)`` is ``s``'s key."""
    b, a = to_polys(public_key)
    return b + a * _secret_for(public_key, secret_key)


def digit_towers(key: OpenFHEEvalKey) -> tuple[range, ...]:
    """The towers of ``Q`` in each digit.

    HYBRID: ``ceil(L / dnum)`` consecutive ones a digit. BV: the one tower of each digit (a
    tower's windows, with a digit size, are digits of their own).
    """
    if key.params.key_switching == "BV":
        return tuple(range(i, i + 1) for i, _ in bv_windows(key.params))
    count, digits = len(key.params.moduli), len(key.words) // 2
    size = math.ceil(count / digits)
    return tuple(range(j * size, min((j + 1) * size, count)) for j in range(digits))


def gadget(key: OpenFHEEvalKey) -> tuple[tuple[int, ...], ...]:
    """What multiplies ``s^power`` in each digit's ``b_j``, one residue per tower of the key.

    HYBRID: ``P mod q_i`` on the digit's towers, 0 on the others (and on ``P``'s). BV: ``2^(k
    B) mod q_i`` on the digit's tower ``i`` (window ``k``, digit size ``B``; 1 when ``B`` is 0),
    0 on the others.
    """
    moduli, size = key.moduli, key.params.digit_size
    if key.params.key_switching == "BV":
        return tuple(
            tuple(pow(2, k * size, q) if t == i else 0 for t, q in enumerate(moduli))
            for i, k in bv_windows(key.params)
        )
    p = math.prod(key.p_moduli)
    return tuple(
        tuple(p % q if t in towers else 0 for t, q in enumerate(moduli))
        for towers in digit_towers(key)
    )


def key_pairs(key: OpenFHEEvalKey) -> tuple[tuple[Poly, Poly], ...]:
    """The ``(b_j, a_j)`` of each digit, over ``Q``'s towers then ``P``'s, in NTT form."""
    polys = to_polys(key)
    return tuple((polys[2 * j], polys[2 * j + 1]) for j in range(len(polys) // 2))


def eval_key_errors(key: OpenFHEEvalKey, secret_key: OpenFHESecretKey) -> tuple[Poly, ...]:
    """``b_j + a_j s - g_j s^power``, for each digit ``j``, ``g_j`` its :func:`gadget`.

    HYBRID: ``g_j`` is ``P`` on the towers of digit ``j``; BV: ``2^(k B)`` on digit ``j``'s
    tower. These are the errors (small) when the key switches ``s^power`` to ``s`` as OpenFHE's
    ``KeySwitchGen`` makes it. ``s`` is extended from ``Q``'s towers to ``P``'s centred
    (``Poly.to_ring``).

    Raises:
        ValueError: a secret key of another key pair.
    """
    if key.key_tag != secret_key.key_tag:
        raise ValueError(f"the key's tag {key.key_tag} is not the secret key's")
    r = ring(key)
    s = to_poly(secret_key).intt().to_ring(r).ntt()
    s_power = s
    for _ in range(key.power - 1):
        s_power = s_power * s
    errors = []
    for (b, a), mask in zip(key_pairs(key), gadget(key), strict=True):
        g = np.array([[m] * r.n for m in mask], dtype=np.uint64)  # a constant, NTT form
        errors.append(b + a * s - s_power * Poly.from_limbs(g, r, Domain.NTT))
    return tuple(errors)
