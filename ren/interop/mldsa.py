"""ML-DSA's ring arithmetic (FIPS 204) expressed with Ren, word for word.

ML-DSA computes in ``R_q = Z_q[X]/(X^256 + 1)`` with ``q = 8380417 = 2^23 - 2^13 + 1``. Since
``q - 1`` is a multiple of 512, ``X^256 + 1`` splits into 256 linear factors and FIPS 204's NTT is
*complete* (8 layers), with ``zeta = 1753``, a primitive 512th root of unity modulo q:

* ``ZETAS[i] = zeta^BitRev8(i)``, the twiddles of FIPS 204's Algorithms 41 and 42;
* NTT entry ``i`` is ``w(zeta^(2 BitRev8(i) + 1))``, the value at a root of ``X^256 + 1``.

**How Ren computes it.** 1753 is the *smallest* primitive 512th root modulo q, the root Ren picks
for ``RingSpec(256, (8380417,))`` (``RING``), and Ren's slot ``k`` holds the value at
``psi^(2 brv(k) + 1)``: FIPS 204's NTT *is* Ren's NTT, word for word, its inverse (with the
scaling by ``256^-1 = 8347681 mod q``) is Ren's ``intt``, and MultiplyNTT (Algorithm 45) is Ren's
slot-wise product.

**Orders.** Coefficient form is natural order; NTT form is bit-reversed order, as in Ren.

**Plain and Montgomery.** Every function here takes and returns *plain* residues, FIPS 204's
elements of ``Z_q``, as Python ints in ``[0, q)`` (coefficients that stand for small signed
numbers, such as ``s1``, are given as their residues or as signed ints to ``Poly``).
Implementations (the pq-crystals reference code and most optimized ones) hold some values in
Montgomery form ``x * R mod q`` with ``R = 2^32`` (``MONT_R``), in signed 32-bit words:
``to_montgomery`` and ``from_montgomery`` convert. That is also Ren's ``R`` for a ``u32`` ring,
so ``Poly.words()`` of a ``RING`` value are these Montgomery words, reduced to ``[0, q)``.

``keygen_internal(xi)`` is ML-DSA.KeyGen_internal (Algorithm 6) using ``hashlib``'s SHAKE, its
polynomial arithmetic through Ren, so the ACVP keyGen vectors check it end to end.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from ren.interop.coefficients import coefficients
from ren.poly import Poly, realize
from ren.ring import Domain, RingSpec, bit_reverse

__all__ = [
    "MONT_R",
    "PARAMETER_SETS",
    "RING",
    "ZETA",
    "ZETAS",
    "D",
    "N",
    "Q",
    "from_montgomery",
    "intt",
    "keygen_internal",
    "multiply_ntts",
    "ntt",
    "power2round",
    "to_montgomery",
]

Q = 8380417  #: the modulus q
N = 256  #: the degree n of X^n + 1
D = 13  #: the bits dropped from t (Power2Round)
ZETA = 1753  #: FIPS 204's primitive 512th root of unity modulo q
MONT_R = 2**32  #: the Montgomery factor R of ML-DSA implementations (32-bit words)
RING = RingSpec(N, (Q,))  #: Z_q[X]/(X^256 + 1) as a Ren ring: one limb

#: ``zeta^BitRev8(i) mod q``, ``i = 0..255``: the twiddles of NTT and NTT^-1 (Algorithms 41, 42).
ZETAS: tuple[int, ...] = tuple(pow(ZETA, bit_reverse(i, 8), Q) for i in range(N))

#: FIPS 204's parameter sets (Table 1) as far as key generation needs them: ``(k, l, eta)``.
PARAMETER_SETS: dict[str, tuple[int, int, int]] = {
    "ML-DSA-44": (4, 4, 2),
    "ML-DSA-65": (6, 5, 4),
    "ML-DSA-87": (8, 7, 2),
}

Coefficients = Sequence[int] | np.ndarray


# --- checking what the user gives -------------------------------------------------------------
def _coefficients(value: object, name: str, reduce: bool = False) -> list[int]:
    """``value`` as {N} ints in ``[0, q)`` (``ren.interop.coefficients``)."""
    return coefficients(value, name, N, Q, "ML-DSA", reduce)


def _poly(values: list[int], domain: Domain) -> Poly:
    return Poly.from_limbs(np.array([values], dtype=np.uint32), RING, domain)


def _list(p: Poly) -> list[int]:
    return [int(x) for x in p.limbs()[0]]


# --- FIPS 204's ring arithmetic ----------------------------------------------------------------
def ntt(w: Coefficients) -> list[int]:
    """FIPS 204 Algorithm 41, NTT(w): entry ``i`` is ``w(zeta^(2 BitRev8(i) + 1)) mod q``.

    Ren's NTT of ``RING``, unchanged.

    Args:
        w: 256 coefficients in natural order, plain residues in ``[0, q)``.

    Returns:
        256 plain residues in ``[0, q)``, in bit-reversed order.

    Raises:
        TypeError: ``w`` is not a list, tuple or 1-D integer array of ints.
        ValueError: not 256 coefficients, or one outside ``[0, q)`` (named by its index).
    """
    return _list(_poly(_coefficients(w, "w"), Domain.COEFF).ntt())


def intt(w_hat: Coefficients) -> list[int]:
    """FIPS 204 Algorithm 42, NTT^-1(w_hat), with its scaling by ``256^-1 = 8347681 mod q``.

    Ren's inverse NTT of ``RING``, unchanged.

    Args:
        w_hat: 256 plain residues in ``[0, q)``, in bit-reversed order.

    Returns:
        The 256 coefficients in natural order, in ``[0, q)``.

    Raises:
        TypeError: ``w_hat`` is not a list, tuple or 1-D integer array of ints.
        ValueError: not 256 entries, or one outside ``[0, q)``.
    """
    return _list(_poly(_coefficients(w_hat, "w_hat"), Domain.NTT).intt())


def multiply_ntts(a_hat: Coefficients, b_hat: Coefficients) -> list[int]:
    """FIPS 204 Algorithm 45, MultiplyNTT: ``a_hat[i] * b_hat[i] mod q``, a Ren slot-wise product.

    Args:
        a_hat: 256 plain residues in ``[0, q)``, in NTT form.
        b_hat: the same for the other factor.

    Returns:
        256 plain residues in ``[0, q)``: ``NTT(a b)``, ``a b`` taken modulo ``X^256 + 1``.

    Raises:
        TypeError: an argument is not a list, tuple or 1-D integer array of ints.
        ValueError: not 256 entries, or one outside ``[0, q)``.
    """
    a = _poly(_coefficients(a_hat, "a_hat"), Domain.NTT)
    return _list(a * _poly(_coefficients(b_hat, "b_hat"), Domain.NTT))


# --- plain and Montgomery ----------------------------------------------------------------------
def to_montgomery(w: Coefficients) -> list[int]:
    """The Montgomery form of each entry: ``x * 2^32 mod q`` in ``[0, q)``.

    Args:
        w: 256 ints of any sign and size (each is reduced modulo q first).

    Raises:
        TypeError: ``w`` is not a list, tuple or 1-D integer array of ints.
        ValueError: not 256 entries.
    """
    return [x * MONT_R % Q for x in _coefficients(w, "w", reduce=True)]


def from_montgomery(words: Coefficients) -> list[int]:
    """Plain residues from Montgomery words: ``w * 2^-32 mod q`` in ``[0, q)``.

    Args:
        words: 256 ints as an implementation holds them: signed (``int32``, in ``(-q, q)``
            after a Montgomery reduction) or not, reduced or not; each is read modulo q.

    Raises:
        TypeError: ``words`` is not a list, tuple or 1-D integer array of ints.
        ValueError: not 256 entries.
    """
    r_inv = pow(MONT_R, -1, Q)
    return [w * r_inv % Q for w in _coefficients(words, "words", reduce=True)]


# --- sampling, rounding and encoding (FIPS 204, 7.1 to 7.3) -------------------------------------
def _xof_bytes(digest: Callable[[int], bytes]) -> Iterator[int]:
    """An XOF's output (``digest(length)`` of SHAKE), one byte at a time, as long as one reads."""
    done, length = 0, 1024
    while True:
        out = digest(length)  # SHAKE's output of any length starts with its shorter outputs
        yield from out[done:]
        done, length = length, 2 * length


def _rej_ntt_poly(seed: bytes) -> list[int]:
    """RejNTTPoly (Algorithm 30): 23-bit values from SHAKE128, 3 bytes each, kept below q."""
    stream, a = _xof_bytes(hashlib.shake_128(seed).digest), list[int]()
    while len(a) < N:
        z = next(stream) | next(stream) << 8 | (next(stream) & 0x7F) << 16
        if z < Q:
            a.append(z)
    return a


def _rej_bounded_poly(seed: bytes, eta: int) -> list[int]:
    """RejBoundedPoly (Algorithm 31): coefficients in ``[-eta, eta]`` from SHAKE256 half-bytes."""
    stream, a = _xof_bytes(hashlib.shake_256(seed).digest), list[int]()
    while len(a) < N:
        byte = next(stream)
        for b in (byte & 15, byte >> 4):  # CoeffFromHalfByte (Algorithm 15)
            if len(a) < N and eta == 2 and b < 15:
                a.append(2 - b % 5)
            elif len(a) < N and eta == 4 and b < 9:
                a.append(4 - b)
    return a


def power2round(r: int) -> tuple[int, int]:
    """Power2Round (FIPS 204 Algorithm 35): ``(r1, r0)`` with ``r = r1 2^13 + r0 mod q``.

    Args:
        r: an int (read modulo q).

    Returns:
        ``r0 = r mod+- 2^13`` in ``(-2^12, 2^12]`` and ``r1 = (r mod q - r0) / 2^13``.
    """
    if isinstance(r, bool | np.bool_) or not isinstance(r, int | np.integer):
        raise TypeError(f"r must be an int, got {type(r).__name__} {r!r}")
    r_plus = int(r) % Q
    r0 = r_plus % (1 << D)
    r0 -= (1 << D) if r0 > 1 << (D - 1) else 0
    return (r_plus - r0) >> D, r0


def _simple_bit_pack(w: list[int], bits: int) -> bytes:
    """SimpleBitPack (Algorithm 16): each ``w_i`` in ``[0, 2^bits)`` in ``bits`` bits, LSB first."""
    packed = 0
    for i, x in enumerate(w):
        packed |= x << (bits * i)
    return packed.to_bytes(bits * N // 8, "little")


def _bit_pack(w: list[int], a: int, b: int) -> bytes:
    """BitPack (Algorithm 17): ``w_i`` in ``[-a, b]`` stored as ``b - w_i`` in ``bitlen(a + b)``."""
    return _simple_bit_pack([b - x for x in w], (a + b).bit_length())


# --- key generation ----------------------------------------------------------------------------
def keygen_internal(xi: bytes, parameter_set: str = "ML-DSA-65") -> tuple[bytes, bytes]:
    """ML-DSA.KeyGen_internal (FIPS 204 Algorithm 6) from the seed ``xi``, arithmetic in Ren.

    ``t = NTT^-1(A_hat o NTT(s1)) + s2``: NTTs, slot-wise products, sums and inverse NTTs are
    Ren graphs over ``RING``, realized together.

    Args:
        xi: the 32-byte seed.
        parameter_set: ``"ML-DSA-44"``, ``"ML-DSA-65"`` or ``"ML-DSA-87"``.

    Returns:
        ``(pk, sk)``: ``pkEncode(rho, t1)`` and ``skEncode(rho, K, tr, s1, s2, t0)``, the bytes
        the ACVP keyGen vectors list.

    Raises:
        TypeError: ``xi`` is not bytes, or ``parameter_set`` not a str.
        ValueError: ``xi`` is not 32 bytes long, or ``parameter_set`` is unknown.
    """
    if not isinstance(parameter_set, str):
        raise TypeError(f"parameter_set must be a str, got {type(parameter_set).__name__}")
    if parameter_set not in PARAMETER_SETS:
        raise ValueError(
            f"unknown parameter_set {parameter_set!r}: one of {', '.join(PARAMETER_SETS)}"
        )
    if not isinstance(xi, bytes | bytearray):
        hint = " (bytes.fromhex(...) reads a hex string)" if isinstance(xi, str) else ""
        raise TypeError(f"xi must be 32 bytes, got {type(xi).__name__}{hint}")
    if len(xi) != 32:
        raise ValueError(f"xi must be 32 bytes, got {len(xi)}")
    k, l, eta = PARAMETER_SETS[parameter_set]
    h = hashlib.shake_256(bytes(xi) + bytes([k, l])).digest(128)
    rho, rho_prime, key = h[:32], h[32:96], h[96:]
    s1 = [_rej_bounded_poly(rho_prime + r.to_bytes(2, "little"), eta) for r in range(l)]
    s2 = [_rej_bounded_poly(rho_prime + (l + r).to_bytes(2, "little"), eta) for r in range(k)]
    s1_hat = [Poly(s, RING).ntt() for s in s1]
    t = []
    for r in range(k):  # row r of A_hat o s1_hat: A_hat[r][s] = RejNTTPoly(rho || s || r)
        terms = [
            _poly(_rej_ntt_poly(rho + bytes([s, r])), Domain.NTT) * s1_hat[s] for s in range(l)
        ]
        row = terms[0]
        for term in terms[1:]:
            row = row + term
        t.append(row.intt() + Poly(s2[r], RING))
    realize(*t)
    t1, t0 = [], []
    for p in t:
        pairs = [power2round(c) for c in _list(p)]
        t1.append([r1 for r1, _ in pairs])
        t0.append([r0 for _, r0 in pairs])
    pk = rho + b"".join(_simple_bit_pack(w, 10) for w in t1)  # pkEncode: t1 has 23 - 13 bits
    tr = hashlib.shake_256(pk).digest(64)
    sk = rho + key + tr + b"".join(_bit_pack(w, eta, eta) for w in s1 + s2)
    sk += b"".join(_bit_pack(w, 2 ** (D - 1) - 1, 2 ** (D - 1)) for w in t0)
    return pk, sk
