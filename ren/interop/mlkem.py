"""ML-KEM's ring arithmetic (FIPS 203) expressed with Ren, word for word.

ML-KEM computes in ``R_q = Z_q[X]/(X^256 + 1)`` with ``q = 3329``. Since ``q - 1 = 13 * 256``,
``Z_q`` has primitive 256th roots of unity but no 512th: ``X^256 + 1`` splits into 128
quadratics ``X^2 - gamma_i``, not into linear factors, and FIPS 203's NTT is *incomplete* (7
layers). With ``zeta = 17``:

* ``ZETAS[i] = zeta^BitRev7(i)``, the twiddles of FIPS 203's Algorithms 9 and 10;
* ``GAMMAS[i] = zeta^(2 BitRev7(i) + 1)``, the roots of the 128 quadratics (Algorithm 11).

**How Ren computes it.** Write ``f(X) = f_e(X^2) + X f_o(X^2)`` (even and odd coefficients).
Then ``f mod (X^2 - gamma) = f_e(gamma) + f_o(gamma) X``, and ``f_e``, ``f_o`` live in
``Z_q[Y]/(Y^128 + 1)``: Ren's ``RingSpec(128, (3329,))`` (``RING``), whose NTT root is the
smallest primitive 256th root modulo 3329, which is 17. Ren's slot ``k`` is the value at
``17^(2 brv(k) + 1) = GAMMAS[k]``, so FIPS 203's ``NTT(f)`` is Ren's NTT of ``f_e`` and of
``f_o``, interleaved: ``f_hat[2i] = f_e(GAMMAS[i])``, ``f_hat[2i + 1] = f_o(GAMMAS[i])``. The
base-case product (Algorithm 12) is then Ren slot-wise products of the halves, with ``Y`` (whose
NTT slots are ``GAMMAS``) folding ``f_o g_o`` back: ``h_e = f_e g_e + Y f_o g_o`` and
``h_o = f_e g_o + f_o g_e``, the product ``f g`` modulo ``Y^128 + 1`` with ``X^2 = Y``.

**Orders.** Coefficient form is natural order. NTT form is FIPS 203's order: pair ``i`` (entries
``2i`` and ``2i + 1``) is the residue modulo ``X^2 - GAMMAS[i]``, ``i`` in natural order (the
roots themselves come in bit-reversed order of their exponents).

**Plain and Montgomery.** Every function here takes and returns *plain* residues, FIPS 203's
elements of ``Z_q``, as Python ints in ``[0, q)``. Implementations (the pq-crystals reference
code and most optimized ones) hold some values in Montgomery form ``x * R mod q`` with
``R = 2^16`` (``MONT_R``), in signed 16-bit words: ``to_montgomery`` and ``from_montgomery``
convert. Ren's own stored words use ``R = 2^32`` (a ``u32`` ring), so compare an ML-KEM
implementation's Montgomery words with ``to_montgomery`` of Ren's plain residues, never with
``Poly.words()``.

``keygen_internal(d, z)`` is ML-KEM.KeyGen_internal (Algorithm 16, with K-PKE.KeyGen,
Algorithm 13) using ``hashlib``'s SHA3 and SHAKE, its polynomial arithmetic through Ren, so the
ACVP keyGen vectors check it end to end.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence

import numpy as np

from ren.interop.coefficients import coefficients
from ren.poly import Poly, realize
from ren.ring import Domain, RingSpec, bit_reverse

__all__ = [
    "GAMMAS",
    "MONT_R",
    "PARAMETER_SETS",
    "RING",
    "ZETA",
    "ZETAS",
    "N",
    "Q",
    "base_case_multiply",
    "byte_decode12",
    "byte_encode12",
    "from_montgomery",
    "intt",
    "k_pke_keygen",
    "keygen_internal",
    "multiply_ntts",
    "ntt",
    "to_montgomery",
]

Q = 3329  #: the modulus q
N = 256  #: the degree n of X^n + 1
ZETA = 17  #: FIPS 203's primitive 256th root of unity modulo q
MONT_R = 2**16  #: the Montgomery factor R of ML-KEM implementations (16-bit words)
RING = RingSpec(128, (Q,))  #: the ring of the even and odd halves, Z_q[Y]/(Y^128 + 1)

#: ``zeta^BitRev7(i) mod q``, ``i = 0..127``: the twiddles of NTT and NTT^-1 (Algorithms 9, 10).
ZETAS: tuple[int, ...] = tuple(pow(ZETA, bit_reverse(i, 7), Q) for i in range(128))
#: ``zeta^(2 BitRev7(i) + 1) mod q``: the root of the ``i``-th quadratic (Algorithm 11).
GAMMAS: tuple[int, ...] = tuple(pow(ZETA, 2 * bit_reverse(i, 7) + 1, Q) for i in range(128))

#: FIPS 203's parameter sets (Table 2) as far as key generation needs them: ``(k, eta_1)``.
PARAMETER_SETS: dict[str, tuple[int, int]] = {
    "ML-KEM-512": (2, 3),
    "ML-KEM-768": (3, 2),
    "ML-KEM-1024": (4, 2),
}

Coefficients = Sequence[int] | np.ndarray
Halves = tuple[Poly, Poly]


# --- checking what the user gives -------------------------------------------------------------
def _coefficients(value: object, name: str, reduce: bool = False) -> list[int]:
    """``value`` as {N} ints in ``[0, q)`` (``ren.interop.coefficients``)."""
    return coefficients(value, name, N, Q, "ML-KEM", reduce)


def _seed(value: object, name: str) -> bytes:
    """``value`` as 32 bytes (bytes or bytearray)."""
    if not isinstance(value, bytes | bytearray):
        hint = " (bytes.fromhex(...) reads a hex string)" if isinstance(value, str) else ""
        raise TypeError(f"{name} must be 32 bytes, got {type(value).__name__}{hint}")
    if len(value) != 32:
        raise ValueError(f"{name} must be 32 bytes, got {len(value)}")
    return bytes(value)


def _parameter_set(name: object) -> tuple[int, int]:
    if not isinstance(name, str):
        raise TypeError(f"parameter_set must be a str, got {type(name).__name__} {name!r}")
    if name not in PARAMETER_SETS:
        raise ValueError(f"unknown parameter_set {name!r}: one of {', '.join(PARAMETER_SETS)}")
    return PARAMETER_SETS[name]


# --- between FIPS 203's lists and Ren's halves ---------------------------------------------------
def _halves(values: list[int], domain: Domain) -> Halves:
    """The even and odd entries as two Ren polys of ``RING``, in ``domain``."""
    rows = np.array(values, dtype=np.uint32).reshape(128, 2).T
    return (
        Poly.from_limbs(rows[0:1], RING, domain),
        Poly.from_limbs(rows[1:2], RING, domain),
    )


def _interleave(even: Poly, odd: Poly) -> list[int]:
    """Entry ``2i`` from ``even``, ``2i + 1`` from ``odd`` (the limbs in their own domain)."""
    out = np.empty(N, dtype=np.int64)
    out[0::2], out[1::2] = even.limbs()[0], odd.limbs()[0]
    return [int(x) for x in out]


def _gammas() -> Poly:
    """``GAMMAS`` as NTT slots of ``RING``: the NTT form of ``Y`` (slot ``k`` is ``GAMMAS[k]``)."""
    return Poly.from_limbs(np.array([GAMMAS], dtype=np.uint32), RING, Domain.NTT)


def _multiply(a: Halves, b: Halves, gammas: Poly) -> Halves:
    """MultiplyNTTs on halves in NTT form: ``(a_e b_e + gamma a_o b_o, a_e b_o + a_o b_e)``."""
    (ae, ao), (be, bo) = a, b
    return ae * be + gammas * (ao * bo), ae * bo + ao * be


# --- FIPS 203's ring arithmetic ----------------------------------------------------------------
def ntt(f: Coefficients) -> list[int]:
    """FIPS 203 Algorithm 9, NTT(f): ``f_hat[2i + j] = f_j(GAMMAS[i])`` for the halves ``f_j``.

    Computed as Ren's 128-point NTT of the even and of the odd coefficients (``RING``),
    interleaved. Equal, word for word, to the 7-layer butterfly network of the standard.

    Args:
        f: 256 coefficients in natural order, plain residues in ``[0, q)``.

    Returns:
        256 plain residues in ``[0, q)``, in FIPS 203's NTT order.

    Raises:
        TypeError: ``f`` is not a list, tuple or 1-D integer array of ints.
        ValueError: not 256 coefficients, or one outside ``[0, q)`` (named by its index).
    """
    even, odd = _halves(_coefficients(f, "f"), Domain.COEFF)
    return _interleave(*realize(even.ntt(), odd.ntt()))


def intt(f_hat: Coefficients) -> list[int]:
    """FIPS 203 Algorithm 10, NTT^-1(f_hat), with its final scaling by ``128^-1 = 3303 mod q``.

    Ren's inverse NTT of each half (which includes the ``128^-1``), interleaved.

    Args:
        f_hat: 256 plain residues in ``[0, q)`` in FIPS 203's NTT order.

    Returns:
        The 256 coefficients of ``f`` in natural order, in ``[0, q)``.

    Raises:
        TypeError: ``f_hat`` is not a list, tuple or 1-D integer array of ints.
        ValueError: not 256 entries, or one outside ``[0, q)``.
    """
    even, odd = _halves(_coefficients(f_hat, "f_hat"), Domain.NTT)
    return _interleave(*realize(even.intt(), odd.intt()))


def multiply_ntts(f_hat: Coefficients, g_hat: Coefficients) -> list[int]:
    """FIPS 203 Algorithm 11, MultiplyNTTs: the NTT form of the product ``f g`` in ``R_q``.

    Pair ``i`` is BaseCaseMultiply(f_hat[2i], f_hat[2i+1], g_hat[2i], g_hat[2i+1], GAMMAS[i]);
    here all 128 at once as Ren slot-wise products of the halves (``_multiply``).

    Args:
        f_hat: 256 plain residues in ``[0, q)``, FIPS 203's NTT order.
        g_hat: the same for the other factor.

    Returns:
        256 plain residues in ``[0, q)``: ``NTT(f g)`` with ``f g`` taken modulo ``X^256 + 1``.

    Raises:
        TypeError: an argument is not a list, tuple or 1-D integer array of ints.
        ValueError: not 256 entries, or one outside ``[0, q)``.
    """
    a = _halves(_coefficients(f_hat, "f_hat"), Domain.NTT)
    b = _halves(_coefficients(g_hat, "g_hat"), Domain.NTT)
    return _interleave(*realize(*_multiply(a, b, _gammas())))


def base_case_multiply(a0: int, a1: int, b0: int, b1: int, gamma: int) -> tuple[int, int]:
    """FIPS 203 Algorithm 12: ``(a0 + a1 X)(b0 + b1 X) mod (X^2 - gamma)``, in plain Python.

    Returns:
        ``(a0 b0 + a1 b1 gamma, a0 b1 + a1 b0)``, each modulo q in ``[0, q)``.

    Raises:
        TypeError: an argument is not an int (a bool is not).
    """
    for name, x in (("a0", a0), ("a1", a1), ("b0", b0), ("b1", b1), ("gamma", gamma)):
        if isinstance(x, bool | np.bool_) or not isinstance(x, int | np.integer):
            raise TypeError(f"{name} must be an int, got {type(x).__name__} {x!r}")
    return (a0 * b0 + a1 * b1 * gamma) % Q, (a0 * b1 + a1 * b0) % Q


# --- plain and Montgomery ----------------------------------------------------------------------
def to_montgomery(f: Coefficients) -> list[int]:
    """The Montgomery form of each entry: ``x * 2^16 mod q`` in ``[0, q)``.

    Args:
        f: 256 ints of any sign and size (each is reduced modulo q first).

    Raises:
        TypeError: ``f`` is not a list, tuple or 1-D integer array of ints.
        ValueError: not 256 entries.
    """
    return [x * MONT_R % Q for x in _coefficients(f, "f", reduce=True)]


def from_montgomery(words: Coefficients) -> list[int]:
    """Plain residues from Montgomery words: ``w * 2^-16 mod q`` in ``[0, q)``.

    Args:
        words: 256 ints as an implementation holds them: signed (``int16``, in ``(-q, q)``
            after a Montgomery reduction) or not, reduced or not; each is read modulo q.

    Raises:
        TypeError: ``words`` is not a list, tuple or 1-D integer array of ints.
        ValueError: not 256 entries.
    """
    r_inv = pow(MONT_R, -1, Q)
    return [w * r_inv % Q for w in _coefficients(words, "words", reduce=True)]


# --- byte encoding and sampling (FIPS 203, 4.2 and 4.2.2) --------------------------------------
def byte_encode12(f: Coefficients) -> bytes:
    """ByteEncode_12 (Algorithm 5): 256 residues, 12 bits each, least significant bit first."""
    packed = 0
    for i, x in enumerate(_coefficients(f, "f")):
        packed |= x << (12 * i)
    return packed.to_bytes(384, "little")


def byte_decode12(b: bytes) -> list[int]:
    """ByteDecode_12 (Algorithm 6): 384 bytes to 256 integers modulo q (each 12-bit value mod q).

    Raises:
        TypeError: ``b`` is not bytes or bytearray.
        ValueError: ``b`` is not 384 bytes long.
    """
    if not isinstance(b, bytes | bytearray):
        raise TypeError(f"b must be bytes, got {type(b).__name__}")
    if len(b) != 384:
        raise ValueError(f"b must be 384 bytes (256 coefficients of 12 bits), got {len(b)}")
    packed = int.from_bytes(b, "little")
    return [((packed >> (12 * i)) & 0xFFF) % Q for i in range(N)]


def _xof_bytes(data: bytes) -> Iterator[int]:
    """SHAKE128(data), one byte at a time, for as long as the caller reads (a prefix-stable XOF)."""
    done, length = 0, 840
    while True:
        out = hashlib.shake_128(data).digest(length)
        yield from out[done:]
        done, length = length, 2 * length


def _sample_ntt(seed: bytes) -> list[int]:
    """SampleNTT (Algorithm 7): rejection sampling of an NTT-form polynomial from SHAKE128."""
    stream, a = _xof_bytes(seed), list[int]()
    while len(a) < N:
        c0, c1, c2 = next(stream), next(stream), next(stream)
        for d in (c0 + 256 * (c1 % 16), c1 // 16 + 16 * c2):
            if d < Q and len(a) < N:
                a.append(d)
    return a


def _sample_cbd(b: bytes, eta: int) -> list[int]:
    """SamplePolyCBD_eta (Algorithm 8): ``x - y mod q``, ``x``, ``y`` sums of ``eta`` bits each."""
    bits = int.from_bytes(b, "little")
    f = []
    for i in range(N):
        chunk = bits >> (2 * eta * i)
        x = (chunk & ((1 << eta) - 1)).bit_count()
        y = ((chunk >> eta) & ((1 << eta) - 1)).bit_count()
        f.append((x - y) % Q)
    return f


# --- key generation ----------------------------------------------------------------------------
def k_pke_keygen(d: bytes, parameter_set: str = "ML-KEM-768") -> tuple[bytes, bytes]:
    """K-PKE.KeyGen (FIPS 203 Algorithm 13) from the seed ``d``, its arithmetic through Ren.

    ``t_hat = A_hat o s_hat + e_hat``: NTTs, base-case products and sums are Ren graphs over
    ``RING``, realized together.

    Args:
        d: the 32-byte seed.
        parameter_set: ``"ML-KEM-512"``, ``"ML-KEM-768"`` or ``"ML-KEM-1024"``.

    Returns:
        ``(ek_pke, dk_pke)``: ``ByteEncode12(t_hat) || rho`` and ``ByteEncode12(s_hat)``.

    Raises:
        TypeError: ``d`` is not bytes, or ``parameter_set`` not a str.
        ValueError: ``d`` is not 32 bytes long, or ``parameter_set`` is unknown.
    """
    k, eta1 = _parameter_set(parameter_set)
    g = hashlib.sha3_512(_seed(d, "d") + bytes([k])).digest()
    rho, sigma = g[:32], g[32:]
    a_hat = [
        [_halves(_sample_ntt(rho + bytes([j, i])), Domain.NTT) for j in range(k)] for i in range(k)
    ]

    def cbd(counter: int) -> list[int]:
        return _sample_cbd(hashlib.shake_256(sigma + bytes([counter])).digest(64 * eta1), eta1)

    s = [_halves(cbd(i), Domain.COEFF) for i in range(k)]
    e = [_halves(cbd(k + i), Domain.COEFF) for i in range(k)]
    s_hat = [(se.ntt(), so.ntt()) for se, so in s]
    gammas = _gammas()
    t_hat = []
    for i in range(k):
        te, to = e[i][0].ntt(), e[i][1].ntt()
        for j in range(k):
            pe, po = _multiply(a_hat[i][j], s_hat[j], gammas)
            te, to = te + pe, to + po
        t_hat.append((te, to))
    realize(*(p for pair in t_hat + s_hat for p in pair))
    ek_pke = b"".join(byte_encode12(_interleave(*pair)) for pair in t_hat) + rho
    dk_pke = b"".join(byte_encode12(_interleave(*pair)) for pair in s_hat)
    return ek_pke, dk_pke


def keygen_internal(d: bytes, z: bytes, parameter_set: str = "ML-KEM-768") -> tuple[bytes, bytes]:
    """ML-KEM.KeyGen_internal (FIPS 203 Algorithm 16) from the seeds ``d`` and ``z``.

    Args:
        d: the 32-byte seed of K-PKE.KeyGen.
        z: the 32-byte implicit-rejection seed.
        parameter_set: ``"ML-KEM-512"``, ``"ML-KEM-768"`` or ``"ML-KEM-1024"``.

    Returns:
        ``(ek, dk)``: ``ek = ek_pke`` and ``dk = dk_pke || ek || H(ek) || z``, ``H`` SHA3-256,
        the bytes the ACVP keyGen vectors list.

    Raises:
        TypeError: a seed is not bytes, or ``parameter_set`` not a str.
        ValueError: a seed is not 32 bytes long, or ``parameter_set`` is unknown.
    """
    z = _seed(z, "z")
    ek, dk_pke = k_pke_keygen(d, parameter_set)
    return ek, dk_pke + ek + hashlib.sha3_256(ek).digest() + z
