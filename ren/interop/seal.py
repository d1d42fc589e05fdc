"""Microsoft SEAL 4.4's CKKS in Ren: its saved objects as Ren values, its operations word for word.

``ren.interop.seal_format`` reads and writes SEAL's bytes (``read``, ``write``, ``uncompressed``,
re-exported here), ``ren.interop.seal_values`` holds the values, the parameters
(:class:`SealParams`) and SEAL's checks of one against the other (:func:`check`, which every
function here applies to its inputs: a CKKS ciphertext in NTT form, a scale within SEAL's bounds,
every word below its modulus). This module puts them in Ren's terms (:func:`to_polys`,
:func:`to_ckks`, ...) and recomputes SEAL's decryption, multiply, relinearization, rescale and
rotation with ``Poly`` operations, every word equal to SEAL's: ``tests/interop/test_seal.py``
checks each convention below against SEAL's own output (``tests/vectors/seal``).

**SEAL's conventions, Ren's defaults, and how this module follows SEAL:**

* *Special prime.* SEAL has one, the last of ``coeff_modulus``: the key level holds every modulus,
  the first data level drops the special prime, each level below one more modulus. Ren keeps
  special moduli apart (``Params.p_moduli``), *first* in its key ring. Here rings are in SEAL's
  order (:meth:`SealParams.ring`), and at a lower level a key's limbs are the ones SEAL reads: the
  level's moduli and the last.
* *Primes.* ``CoeffModulus::Create`` takes the largest primes ``= 1 (mod 2n)`` of each bit size,
  as Ren does, but gives equal sizes out smallest first, the largest to the last (for ``[60, 40,
  40, 60]`` the special prime is the largest 60-bit prime, ``q_0`` the next, and ``q_1 < q_2``);
  Ren's ``Params`` serves the special moduli first, then each size largest first.
  :func:`ren_params` gives a Ren ``Params`` only where the two agree.
* *NTT.* Ren's root (the smallest primitive ``2n``-th root) and bit-reversed order: SEAL's
  NTT-form words are Ren's ``Domain.NTT`` limbs. SEAL stores plain residues, Ren Montgomery
  words (``Poly.limbs()`` gives plain ones). A SEAL plaintext has no NTT flag: a nonzero
  ``parms_id`` means NTT form.
* *Slots.* SEAL's slot ``j`` is ``m(zeta^(3^j))`` and ``rotate_vector(steps)`` applies ``X ->
  X^(3^steps mod 2n)`` (``steps < 0``: ``3^(n/2 + steps)``); Ren orders slots by powers of 5.
  :func:`galois_element` and :func:`decode` use 3 (``generator=3`` of
  ``ren.ring.galois_for_rotation`` and ``ckks.embed``).
* *Digits.* One digit per RNS limb (``dnum = L``, Ren's default too); SEAL extends digit ``j``,
  its residues in ``[0, q_j)``, to the other moduli *without centring* (``modulo_poly_coeffs``),
  where Ren's ``mod_up`` extends the centred value (which changes every word of a key switch).
  Here the digit is ``z - q_j floor(z / q_j)`` for a lift ``z`` of the ciphertext, the floor an
  exact ``Poly.rescale`` (:func:`mod_up`).
* *Keys.* SEAL's key for digit ``j`` is ``(b_j, a_j)``, ``b_j = -a_j s + e + p s'`` on limb ``j``
  only (Ren's gadget ``P T_j`` for one modulus per digit), in NTT form over every modulus;
  ``RelinKeys`` holds ``s' = s^2`` at entry 0, ``GaloisKeys`` ``s' = s(X^g)`` at ``(g - 1) / 2``.
* *ModDown.* SEAL adds ``(p - 1) / 2`` to the special limb and divides exactly: ``round(x / p)``,
  which is ``Poly.rescale(p)`` word for word (Ren's own ``mod_down`` extends ``x mod p`` with a
  float correction: the same words but within about ``2^-50 p`` of a tie). Here:
  ``Poly.rescale(p)``. SEAL's ``rescale_to_next`` is ``round(x / q_last)`` the same way:
  ``Poly.rescale()``; the scale, a double, is divided by ``q_last`` (and multiplied by a
  multiply), as in Ren.
* *Rotation.* SEAL applies the automorphism to ``c_0`` and ``c_1`` first, then key-switches
  ``sigma(c_1)``: ``(sigma(c_0) + d_0, d_1)``. With uncentred digits the order matters (the
  digit of ``-u`` is ``q - u``, not ``-u``), so here too the automorphism comes first.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence

import numpy as np

from ren.interop.seal_format import read, read_header, uncompressed, write
from ren.interop.seal_values import (
    SealCiphertext,
    SealKSwitchKeys,
    SealParams,
    SealPlaintext,
    check,
)
from ren.poly import Poly, realize
from ren.ring import Domain, RingSpec, galois_for_rotation
from ren.schemes import ckks

__all__ = [
    "SealCiphertext",
    "SealKSwitchKeys",
    "SealParams",
    "SealPlaintext",
    "apply_galois",
    "check",
    "decode",
    "decrypt",
    "from_polys",
    "galois_element",
    "key_polys",
    "key_switch",
    "mod_up",
    "multiply",
    "read",
    "read_header",
    "relinearize",
    "ren_params",
    "rescale",
    "rotate",
    "to_ckks",
    "to_poly",
    "to_polys",
    "uncompressed",
    "write",
]


# --- Ren values -----------------------------------------------------------------------------


def to_polys(ct: SealCiphertext, params: SealParams) -> tuple[Poly, ...]:
    """The parts of a SEAL ciphertext (or public key) as Ren polys over its level's ring.

    Raises:
        ValueError: for a value :func:`check` refuses (a ciphertext not in NTT form among them).
    """
    check(ct, params)
    return tuple(Poly.from_limbs(part, params.ring(ct.parms_id), Domain.NTT) for part in ct.data)


def to_poly(pt: SealPlaintext, params: SealParams) -> Poly:
    """A SEAL plaintext (or secret key, over every modulus) as a Ren poly in NTT form."""
    check(pt, params)
    ring = params.ring(pt.parms_id)
    return Poly.from_limbs(pt.data.reshape(ring.L, ring.n), ring, Domain.NTT)


def key_polys(
    keys: SealKSwitchKeys, entry: int, params: SealParams, level: Sequence[int] | None = None
) -> tuple[tuple[Poly, ...], ...]:
    """Entry ``entry`` of SEAL's keys: one ``(b_j, a_j)`` pair per digit, in NTT form.

    The pairs are over the key ring, or for a level's ``parms_id`` over that level's moduli and
    the special prime, with the digits of that level: the limbs SEAL's key switching reads.

    Raises:
        ValueError: for an empty ``entry`` (naming the entries there are) or bad keys.
    """
    check(keys, params)
    if not 0 <= entry < len(keys.keys) or not keys.keys[entry]:
        raise ValueError(f"entry={entry} holds no key; the entries with keys: {keys.entries}")
    count = len(params.coeff_modulus) - 1 if level is None else len(params.moduli(level))
    rows = [*range(count), len(params.coeff_modulus) - 1]
    ring = RingSpec(params.n, tuple(params.coeff_modulus[r] for r in rows))
    pairs = keys.keys[entry][:count]
    return tuple(tuple(Poly.from_limbs(w[rows], ring, Domain.NTT) for w in k.data) for k in pairs)


def from_polys(
    parts: Sequence[Poly], params: SealParams, scale: float, correction_factor: int = 1
) -> SealCiphertext:
    """A SEAL ciphertext of Ren polys over a level's ring (SEAL's order), in NTT form.

    Raises:
        ValueError: if the polys are not over one of ``params``' levels.
    """
    ring = parts[0].ring
    count = len(ring.moduli)
    if ring.moduli != params.coeff_modulus[:count] or ring.n != params.n:
        raise ValueError(f"the polys are over {ring}, no level of {params}")
    ntt = tuple(p.ntt() for p in parts)
    realize(*ntt)
    data = np.stack([p.limbs().astype(np.uint64) for p in ntt])
    return SealCiphertext(params.parms_id(count), data, True, float(scale), correction_factor)


def to_ckks(
    ct: SealCiphertext, params: SealParams, ren: ckks.Params | None = None
) -> ckks.Ciphertext:
    """A SEAL ciphertext as a Ren ``ckks.Ciphertext`` at the level of its moduli.

    ``ren``, if given, must have SEAL's moduli (:func:`ren_params`); without it the ciphertext
    carries no ``Params``. Back: ``from_polys(ct.parts, params, ct.scale)``.

    Raises:
        ValueError: for a ciphertext at the key level, or a ``ren`` whose moduli differ.
    """
    if tuple(ct.parms_id) == params.parms_id():
        raise ValueError("the ciphertext is at the key level (every modulus): not CKKS data")
    parts = to_polys(ct, params)
    level = parts[0].ring.L - 1
    if ren is not None and ren.ring(level) != parts[0].ring:
        raise ValueError(f"ren={ren} has other moduli than SEAL's {params.coeff_modulus}")
    return ckks.Ciphertext(parts, ct.scale, level, params=ren)


def ren_params(params: SealParams, scale_bits: int = 40) -> ckks.Params:
    """Ren's ``ckks.Params`` with SEAL's moduli: ``q_bits`` and ``p_bits`` from their sizes.

    Raises:
        ValueError: when Ren's choice of primes for those sizes is not SEAL's (repeated sizes:
            SEAL gives them out smallest first, Ren largest first), naming both.
    """
    bits = [q.bit_length() for q in params.coeff_modulus]
    ren = ckks.Params(params.n, tuple(bits[:-1]), (bits[-1],), scale_bits, insecure=True)
    if ren.q_moduli + ren.p_moduli != params.coeff_modulus:
        raise ValueError(
            f"Ren's primes of sizes {bits} are {ren.q_moduli + ren.p_moduli}, SEAL's "
            f"{params.coeff_modulus}: no Ren Params holds SEAL's moduli"
        )
    return ren


def decode(pt: SealPlaintext, params: SealParams) -> np.ndarray:
    """The ``n/2`` slot values of a SEAL CKKS plaintext, in SEAL's order (powers of 3)."""
    coeffs = np.array(to_poly(pt, params).intt().tolist(centered=True), dtype=np.float64)
    return ckks.embed(coeffs / pt.scale, params.n, generator=3)


def galois_element(n: int, steps: int) -> int:
    """SEAL's Galois element of ``rotate_vector(steps)``: ``3^steps mod 2n``."""
    return galois_for_rotation(n, steps, generator=3)


# --- SEAL's operations with Poly ------------------------------------------------------------


def mod_up(c: Poly, ring: RingSpec) -> list[Poly]:
    """SEAL's digits of ``c``: limb ``j``'s residues in ``[0, q_j)`` over every modulus of ``ring``.

    With ``z`` any integer whose residues modulo the ``q_j`` are ``c``'s, digit ``j`` (uncentred)
    is ``u_j = z - q_j floor(z / q_j)``, ``floor(z / q_j) = round((z - h_j) / q_j)`` for ``h_j =
    (q_j - 1) / 2``: an exact ``Poly.rescale``. In NTT form.
    """
    z = c.intt().to_ring(ring)  # only z mod q_j is used: any extension does
    digits = []
    for q in c.ring.moduli:
        floor = (z - Poly([(q - 1) // 2] * ring.n, ring)).rescale(q)  # floor(z / q)
        digits.append((z - floor.to_ring(ring) * q).ntt())  # its q limb is multiplied by q
    return digits


def key_switch(c: Poly, key: Sequence[Sequence[Poly]]) -> tuple[Poly, Poly]:
    """SEAL's ``switch_key_inplace``: ``(d_0, d_1)`` with ``d_0 + d_1 s = c s' + e``, NTT form.

    ``c`` is over a level's ring ``(q_0, ..., q_l)``; ``key`` holds a pair per digit over
    ``(q_0, ..., q_l, p)`` (:func:`key_polys`). ``d = round(sum_j u_j (b_j, a_j) / p)`` for
    SEAL's digits ``u_j`` (:func:`mod_up`).
    """
    K = key[0][0].ring
    terms = [(u * b, u * a) for u, (b, a) in zip(mod_up(c, K), key, strict=True)]
    d0, d1 = (functools.reduce(operator.add, t) for t in zip(*terms, strict=True))
    return d0.rescale(K.moduli[-1]).ntt(), d1.rescale(K.moduli[-1]).ntt()


def decrypt(ct: SealCiphertext, secret_key: SealPlaintext, params: SealParams) -> SealPlaintext:
    """SEAL's ``Decryptor::decrypt``: ``c_0 + c_1 s (+ c_2 s^2)`` at the ciphertext's level."""
    parts = to_polys(ct, params)
    s = to_poly(secret_key, params).to_ring(parts[0].ring)  # the level's moduli: a prefix
    m, power = parts[0], s
    for c in parts[1:]:
        m, power = m + c * power, power * s
    (m,) = realize(m)
    return SealPlaintext(ct.parms_id, m.limbs().astype(np.uint64).reshape(-1), ct.scale)


def multiply(a: SealCiphertext, b: SealCiphertext, params: SealParams) -> SealCiphertext:
    """SEAL's ``multiply`` of two 2-part ciphertexts: ``(a_0 b_0, a_0 b_1 + a_1 b_0, a_1 b_1)``.

    Raises:
        ValueError: for parts other than 2, operands at different levels, or a product whose
            scale is out of SEAL's bounds for the level (SEAL's "scale out of bounds").
    """
    if a.size != 2 or b.size != 2 or a.parms_id != b.parms_id:
        raise ValueError("multiply takes two ciphertexts of 2 parts at one level")
    (a0, a1), (b0, b1) = to_polys(a, params), to_polys(b, params)
    params.scale_in_bounds(a.scale * b.scale, a0.ring.moduli, "product")
    return from_polys((a0 * b0, a0 * b1 + a1 * b0, a1 * b1), params, a.scale * b.scale)


def relinearize(ct: SealCiphertext, keys: SealKSwitchKeys, params: SealParams) -> SealCiphertext:
    """SEAL's ``relinearize`` of 3 parts: ``(c_0 + d_0, c_1 + d_1)``, ``d`` from ``c_2``.

    Raises:
        ValueError: for a ciphertext of other than 3 parts.
    """
    if ct.size != 3:
        raise ValueError(f"relinearize takes a ciphertext of 3 parts, got {ct.size}")
    c0, c1, c2 = to_polys(ct, params)
    d0, d1 = key_switch(c2, key_polys(keys, 0, params, ct.parms_id))
    return from_polys((c0 + d0, c1 + d1), params, ct.scale, ct.correction_factor)


def rescale(ct: SealCiphertext, params: SealParams) -> SealCiphertext:
    """SEAL's ``rescale_to_next``: every part ``round(c / q_last)``, the scale over ``q_last``.

    Raises:
        ValueError: at the last level (one modulus left), or for a new scale out of SEAL's
            bounds for the level below.
    """
    parts = to_polys(ct, params)
    if parts[0].ring.L < 2:
        raise ValueError("rescale needs two moduli at least: the ciphertext is at the last level")
    q = parts[0].ring.moduli[-1]
    params.scale_in_bounds(ct.scale / q, parts[0].ring.moduli[:-1], "rescaled ciphertext")
    return from_polys([p.rescale() for p in parts], params, ct.scale / q, ct.correction_factor)


def apply_galois(
    ct: SealCiphertext, galois: int, keys: SealKSwitchKeys, params: SealParams
) -> SealCiphertext:
    """SEAL's ``apply_galois``: ``(sigma(c_0) + d_0, d_1)``, ``d`` from ``sigma(c_1)``.

    ``sigma`` is ``X -> X^galois``; the key is the one at entry ``(galois - 1) / 2``.

    Raises:
        ValueError: for a ciphertext of other than 2 parts, or no key for ``galois``.
    """
    if ct.size != 2:
        raise ValueError(f"apply_galois takes a ciphertext of 2 parts, got {ct.size}")
    c0, c1 = (p.automorphism(galois) for p in to_polys(ct, params))
    key = key_polys(keys, (galois % (2 * params.n)) // 2, params, ct.parms_id)
    d0, d1 = key_switch(c1, key)
    return from_polys((c0 + d0, d1), params, ct.scale, ct.correction_factor)


def rotate(
    ct: SealCiphertext, steps: int, keys: SealKSwitchKeys, params: SealParams
) -> SealCiphertext:
    """SEAL's ``rotate_vector``: slot ``j + steps`` to slot ``j`` (SEAL's order); 0 is a no-op."""
    if steps % (params.n // 2) == 0:
        return ct
    return apply_galois(ct, galois_element(params.n, steps), keys, params)
