"""NumPy ring kernels: Montgomery arithmetic, negacyclic NTT, automorphisms, rescale, basis change.

Every kernel works on all limbs at once. A polynomial is an array shaped ``(L, n)``, row ``i`` its
residues modulo ``q_i`` (limb-major: ``docs/rings.md``). Stored words are in Montgomery form
``x * R mod q`` in ``[0, q)``, with ``R = 2**32`` for ``u32`` rings (moduli below ``2**30``) and
``R = 2**64`` for ``u64`` rings (moduli below ``2**62``). Kernels take and return arrays of the
storage dtype (``ring.np_dtype``), and never write into their inputs.

Inside, everything is ``uint64``. A product of two ``u32`` words is below ``2**60`` and fits; a
product of two ``u64`` words needs 128 bits, whose high word :func:`mul_hi` emulates with 32-bit
halves.

Montgomery reduction (P. Montgomery, "Modular multiplication without trial division", 1985): for
``T < q * R`` let ``m = (T mod R) * q^-1 mod R``. Then ``m * q = T (mod R)``, so the low words of
``T`` and ``m * q`` agree and ``(T - m*q) / R = hi(T) - hi(m*q)`` exactly. Both high words are
below ``q``, so the difference lies in ``(-q, q)``; adding ``q`` when it is negative gives
``T * R^-1 mod q`` in ``[0, q)``. Every kernel below keeps its values in ``[0, q)`` (no lazy
reduction), so every Montgomery product it forms has ``T < q * q < q * R``.

A product by a fixed word (an NTT twiddle, ``n^-1``) uses V. Shoup's precomputed quotient instead
(:func:`_shoup_mul`): one high product instead of Montgomery's two, the same words out. Modular
sums and differences pick the smaller of two unsigned candidates (``min(s, s - q)``), since the
wrong one has wrapped past ``2**63``.

The NTT follows T. Poeppelmann, N. Oder, T. Gueneysu (LATINCRYPT 2015) and P. Longa, M. Naehrig
("Speeding up the number theoretic transform for faster ideal lattice-based cryptography", CANS
2016): Cooley-Tukey forward and Gentleman-Sande inverse with the ``psi`` powers merged into the
twiddles, in the bit-reversed slot order Microsoft SEAL uses. Fast base conversion with the
floating-point correction follows Halevi, Polyakov, Shoup ("An improved RNS variant of the BFV
homomorphic encryption scheme", CT-RSA 2019).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence, Set
from typing import TypeAlias, cast

import numpy as np
import numpy.typing as npt

from ren.ring import Domain, RingSpec, automorphism_coeff_table, automorphism_ntt_table
from ren.ring.spec import IndexArray, U64Array, WordArray
from ren.ring.tables import shoup_powers

__all__ = [
    "add",
    "automorphism",
    "base_convert",
    "check_drop",
    "crt",
    "decode_limbs",
    "encode_coeffs",
    "from_mont",
    "intt",
    "mont_mul",
    "mul_hi_lo",
    "mul_scalar",
    "neg",
    "ntt",
    "rescale",
    "sub",
    "to_mont",
]

_LO32 = np.uint64(0xFFFF_FFFF)
_ONE = np.uint64(1)

#: Limbs of a ring: a slice, a list or an index array of rows.
Rows: TypeAlias = slice | list[int] | IndexArray
#: User coefficients: a sequence of ints, or a 1-D integer or object (big int) array.
Coeffs: TypeAlias = Sequence[int] | npt.NDArray[np.integer | np.object_]


# --------------------------------------------------------------------------------------------
# word-level primitives (uint64 arrays that broadcast; q and q_inv are columns). The casts restate
# what NumPy's stubs lose: a uint64 array shifted by an int, or np.minimum of two, is uint64.


def mul_hi(a: U64Array, b: U64Array | np.uint64) -> U64Array:
    """The high word of the 128-bit product of two ``uint64`` arrays: ``a*b // 2**64``.

    Split each factor into 32-bit halves, ``a = a1*2**32 + a0`` and ``b = b1*2**32 + b0``::

        a*b = a1*b1 * 2**64 + (a0*b1 + a1*b0) * 2**32 + a0*b0

    Each partial product is below ``2**64``. The middle column collects the bits that land in
    ``[2**32, 2**96)``: ``mid = hi32(a0*b0) + lo32(a0*b1) + lo32(a1*b0) < 3 * 2**32``. Then::

        hi = a1*b1 + hi32(a0*b1) + hi32(a1*b0) + hi32(mid)

    and ``hi < 2**64`` because the true product is below ``2**128``. The low word is ``a * b``
    itself, wrapping modulo ``2**64``.
    """
    a0, a1 = a & _LO32, a >> 32
    b0, b1 = b & _LO32, b >> 32
    p01 = a0 * b1
    p10 = a1 * b0
    mid = ((a0 * b0) >> 32) + (p01 & _LO32) + (p10 & _LO32)  # < 3 * 2**32: no overflow
    return cast(U64Array, a1 * b1 + (p01 >> 32) + (p10 >> 32) + (mid >> 32))


def mul_hi_lo(a: npt.ArrayLike, b: npt.ArrayLike) -> tuple[U64Array, U64Array]:
    """The 128-bit product of two ``uint64`` arrays as ``(hi, lo)``, ``a*b = hi * 2**64 + lo``.

    Args:
        a: ``uint64`` array.
        b: ``uint64`` array broadcastable with ``a``.

    Returns:
        ``(hi, lo)``: :func:`mul_hi`, and the product wrapped modulo ``2**64``.
    """
    a = np.asarray(a, dtype=np.uint64)
    b = np.asarray(b, dtype=np.uint64)
    return mul_hi(a, b), a * b


def _redc_mul(
    a: U64Array, b: U64Array | np.uint64, q: U64Array, q_inv: U64Array, bits: int
) -> U64Array:
    """``a * b * R^-1 mod q`` in ``[0, q)`` for ``a * b < q * R`` (see the module docstring)."""
    if bits == 32:
        t = a * b  # < q * 2**32 < 2**62
        m = ((t & _LO32) * q_inv) & _LO32  # both factors < 2**32: no overflow
        t_hi, mq_hi = cast(U64Array, t >> 32), cast(U64Array, (m * q) >> 32)
    else:
        t_hi = mul_hi(a, b)
        m = a * b * q_inv  # the low word of a*b, times q^-1, both wrapping mod 2**64, as wanted
        mq_hi = mul_hi(m, q)
    # (T - m*q) / R in (-q, q): t_hi - mq_hi wraps to a huge word when negative, and adding q
    # then gives the small one, so the smaller of the two is the answer (words < 2**63)
    u = t_hi - mq_hi
    return cast(U64Array, np.minimum(u, u + q))


def _shoup_mul(v: U64Array, w: U64Array, w_shoup: U64Array, q: U64Array, bits: int) -> U64Array:
    """``v * w mod q`` in ``[0, q)`` for a fixed ``w < q``, ``w_shoup = floor(w * 2**bits / q)``.

    V. Shoup's method (as in NTL and Microsoft SEAL): ``qhat = hi(v * w_shoup)`` is the quotient
    ``v*w // q`` or one less, so ``v*w - qhat*q``, computed modulo ``2**64``, lies in ``[0, 2q)``;
    one conditional subtraction ends in ``[0, q)``. With ``w`` the plain value of a Montgomery
    twiddle this equals :func:`_redc_mul` of ``v`` and the twiddle, word for word, at one high
    product instead of two.
    """
    qhat = cast(U64Array, (v * w_shoup) >> 32) if bits == 32 else mul_hi(v, w_shoup)
    r = v * w - qhat * q  # exact in [0, 2q), the products wrapping mod 2**64
    return cast(U64Array, np.minimum(r, r - q))


def _add_mod(a: U64Array, b: U64Array, q: U64Array) -> U64Array:
    """``a + b mod q`` in ``[0, q)`` for ``a, b`` in ``[0, q)`` (``a + b < 2**63``).

    ``s - q`` wraps to a word above ``s`` exactly when ``s < q``, so the smaller one is reduced.
    """
    s = a + b
    return cast(U64Array, np.minimum(s, s - q))


def _sub_mod(a: U64Array, b: U64Array, q: U64Array) -> U64Array:
    """``a - b mod q`` in ``[0, q)`` for ``a, b`` in ``[0, q)``.

    ``a - b`` wraps to a huge word when ``a < b``, and adding ``q`` brings it back below ``q``;
    otherwise adding ``q`` makes it larger: the smaller of the two is the answer.
    """
    d = a - b
    return cast(U64Array, np.minimum(d, d + q))


def _neg_mod(a: U64Array, q: U64Array) -> U64Array:
    """``-a mod q`` in ``[0, q)`` for ``a`` in ``[0, q)``."""
    return np.where(a == 0, a, q - a)


def _words(ring: RingSpec, a: WordArray, name: str = "a") -> U64Array:
    """``a`` as a ``uint64`` array shaped ``(L, n)`` (a view when it already is one)."""
    arr = np.asarray(a)
    if arr.shape != (ring.L, ring.n):
        raise ValueError(
            f"{name} has shape {arr.shape}, but {ring!r} stores (L, n) = ({ring.L}, {ring.n}) words"
        )
    if arr.dtype.kind not in "ui":
        raise TypeError(f"{name} must hold integer words, got dtype {arr.dtype}")
    return arr.astype(np.uint64, copy=False)


def _store(ring: RingSpec, x: U64Array) -> WordArray:
    return x.astype(ring.np_dtype, copy=False)


def _mont_column(ring: RingSpec, values: Sequence[int]) -> U64Array:
    """``(L, 1)`` column of ``values[i] * R mod q_i`` (Montgomery form) for Python ints."""
    R = 1 << ring.word_bits
    return np.array(
        [[v % q * R % q] for v, q in zip(values, ring.moduli, strict=True)], dtype=np.uint64
    )


def _frozen(*arrays: npt.NDArray[np.generic]) -> None:
    """Make cached constant arrays read-only, so no caller can corrupt the cache."""
    for arr in arrays:
        arr.flags.writeable = False


def _plain_to_mont(ring: RingSpec, plain: U64Array, rows: Rows = slice(None)) -> U64Array:
    """Montgomery-encode plain residues (below ``R``) of the limbs ``rows`` of ``ring``."""
    tab = ring.tables()
    return _redc_mul(plain, tab.r2[rows], tab.q[rows], tab.q_inv[rows], ring.word_bits)


def _mont_to_plain(ring: RingSpec, words: U64Array, rows: Rows = slice(None)) -> U64Array:
    """Decode Montgomery words of the limbs ``rows`` of ``ring`` to plain residues."""
    tab = ring.tables()
    return _redc_mul(words, _ONE, tab.q[rows], tab.q_inv[rows], ring.word_bits)


# --------------------------------------------------------------------------------------------
# Montgomery arithmetic, limb-wise


def mont_mul(ring: RingSpec, a: WordArray, b: WordArray) -> WordArray:
    """Montgomery product of two polynomials' words, limb by limb and slot by slot.

    Args:
        ring: the ring of both operands.
        a: ``(L, n)`` words in ``[0, q_i)``.
        b: ``(L, n)`` words in ``[0, q_i)``.

    Returns:
        ``a * b * R^-1 mod q_i`` in ``[0, q_i)``: the Montgomery form of the product when both
        are in Montgomery form.
    """
    tab = ring.tables()
    x, y = _words(ring, a), _words(ring, b, "b")
    return _store(ring, _redc_mul(x, y, tab.q, tab.q_inv, ring.word_bits))


def to_mont(ring: RingSpec, x: WordArray) -> WordArray:
    """Encode plain residues into Montgomery form.

    Args:
        ring: the ring.
        x: ``(L, n)`` plain residues in ``[0, q_i)``.

    Returns:
        ``x * R mod q_i`` in ``[0, q_i)`` (one Montgomery product with ``R**2 mod q_i``).
    """
    return _store(ring, _plain_to_mont(ring, _words(ring, x, "x")))


def from_mont(ring: RingSpec, x: WordArray) -> WordArray:
    """Decode Montgomery words into plain residues.

    Args:
        ring: the ring.
        x: ``(L, n)`` Montgomery words in ``[0, q_i)``.

    Returns:
        ``x * R^-1 mod q_i`` in ``[0, q_i)`` (one Montgomery product with ``1``).
    """
    return _store(ring, _mont_to_plain(ring, _words(ring, x, "x")))


def decode_limbs(ring: RingSpec, words: WordArray) -> WordArray:
    """Returns the plain residues ``words * R^-1 mod q_i`` in ``[0, q_i)``; :func:`from_mont`."""
    return from_mont(ring, words)


def add(ring: RingSpec, a: WordArray, b: WordArray) -> WordArray:
    """Returns ``a + b mod q_i`` in ``[0, q_i)`` (the same in Montgomery or plain form)."""
    q = ring.tables().q
    return _store(ring, _add_mod(_words(ring, a), _words(ring, b, "b"), q))


def sub(ring: RingSpec, a: WordArray, b: WordArray) -> WordArray:
    """Returns ``a - b mod q_i`` in ``[0, q_i)`` (the same in Montgomery or plain form)."""
    q = ring.tables().q
    return _store(ring, _sub_mod(_words(ring, a), _words(ring, b, "b"), q))


def neg(ring: RingSpec, a: WordArray) -> WordArray:
    """Returns ``-a mod q_i`` in ``[0, q_i)`` (``0`` stays ``0``)."""
    return _store(ring, _neg_mod(_words(ring, a), ring.tables().q))


def _check_int(c: object, name: str) -> int:
    if isinstance(c, bool | np.bool_) or not isinstance(c, int | np.integer):
        raise TypeError(f"{name} must be an int, got {type(c).__name__}")
    return int(c)


def mul_scalar(ring: RingSpec, a: WordArray, c: int) -> WordArray:
    """Multiply every coefficient (or slot) by the integer constant ``c``.

    Args:
        ring: the ring.
        a: ``(L, n)`` Montgomery words.
        c: a Python int of any sign and size; it is reduced modulo each ``q_i``.

    Returns:
        ``a * c mod q_i`` in ``[0, q_i)``, as one Montgomery product with ``c * R mod q_i``.
    """
    c = _check_int(c, "the scalar c")
    tab = ring.tables()
    col = _mont_column(ring, [c] * ring.L)
    return _store(ring, _redc_mul(_words(ring, a), col, tab.q, tab.q_inv, ring.word_bits))


# --------------------------------------------------------------------------------------------
# encoding user coefficients


def _coeff_array(ring: RingSpec, coeffs: Coeffs) -> npt.NDArray[np.integer | np.object_]:
    """``coeffs`` as a 1-D integer or object array of length ``n``, or the named error."""
    if isinstance(coeffs, np.ndarray):
        arr = coeffs
    elif isinstance(coeffs, str | bytes | bytearray | memoryview | Set | Mapping):
        # text and bytes iterate as characters or small ints; a set or dict has no order
        raise TypeError(
            f"coefficients must be a sequence of {ring.n} ints (a list, a tuple or a 1-D integer "
            f"array), got {type(coeffs).__name__}"
        )
    else:
        try:
            seq = list(coeffs)
        except TypeError:
            raise TypeError(
                f"coefficients must be a sequence of {ring.n} ints, got {type(coeffs).__name__}"
            ) from None
        arr = np.empty(len(seq), dtype=object)  # no dtype guessing: [2**63, -1] would be float
        arr[:] = seq
    if arr.dtype.kind not in "iuO":
        raise TypeError(f"coefficients must be integers, got an array of dtype {arr.dtype}")
    if arr.ndim != 1 or arr.shape[0] != ring.n:
        raise ValueError(
            f"expected {ring.n} coefficients for {ring!r}, got an array of shape {arr.shape}"
        )
    if arr.dtype.kind == "O":
        for t in set(map(type, arr)):
            if issubclass(t, bool | np.bool_) or not issubclass(t, int | np.integer):
                raise TypeError(
                    f"coefficients must be integers, got an element of type {t.__name__}"
                )
    return arr


def encode_coeffs(ring: RingSpec, coeffs: Coeffs) -> WordArray:
    """Reduce integer coefficients modulo every ``q_i`` and Montgomery-encode them.

    Args:
        ring: the ring.
        coeffs (Sequence[int] | np.ndarray): ``n`` integers of any sign and size: a list or tuple
            of Python or NumPy ints, or a 1-D NumPy array of a signed, unsigned or object (big
            Python int) dtype.

    Returns:
        ``(L, n)`` words ``(c mod q_i) * R mod q_i`` in ``[0, q_i)``.

    Raises:
        TypeError: for float, complex, bool or other non-integer coefficients, naming the dtype;
            for a str, bytes, a set or a dict (not a sequence of coefficients).
        ValueError: when there are not exactly ``n`` coefficients, naming the ring.
    """
    arr = _coeff_array(ring, coeffs)
    q = ring.tables().q
    if arr.dtype.kind == "O":
        q_obj = np.array([[int(m)] for m in ring.moduli], dtype=object)
        plain = (arr[None, :] % q_obj).astype(np.uint64)  # Python ints, floor mod: [0, q)
    elif arr.dtype.kind == "u":
        plain = arr.astype(np.uint64)[None, :] % q
    else:  # signed: NumPy's % takes the sign of the divisor, so the result is in [0, q)
        plain = (arr.astype(np.int64)[None, :] % q.astype(np.int64)).astype(np.uint64)
    return _store(ring, _plain_to_mont(ring, plain))


# --------------------------------------------------------------------------------------------
# NTT


@functools.lru_cache(maxsize=64)
def _shoup_twiddles(ring: RingSpec) -> tuple[U64Array, U64Array, U64Array, U64Array]:
    """The NTT twiddles as plain values with their Shoup companions, for :func:`_shoup_mul`.

    Returns ``(psi_rev, psi_rev_shoup, psi_inv_rev, psi_inv_rev_shoup)``, each ``(L, n)``
    ``uint64``: ``w = twiddle * R^-1 mod q`` (the plain value of the Montgomery-form table) and
    ``floor(w * 2**bits / q)``, ``bits`` the ring's word size. Stacked from the rows of
    :func:`ren.ring.tables.shoup_powers`, which are made once per modulus.
    """
    out = []
    for inverse in (False, True):
        rows = [shoup_powers(q, ring.n, ring.word_bits, inverse) for q in ring.moduli]
        for k in (0, 1):
            table = np.stack([r[k] for r in rows])
            table.flags.writeable = False
            out.append(table)
    return out[0], out[1], out[2], out[3]


@functools.lru_cache(maxsize=64)
def _shoup_n_inv(ring: RingSpec) -> tuple[U64Array, U64Array]:
    """``n^-1 mod q_i`` and its Shoup companion, as ``(L, 1)`` ``uint64`` columns."""
    bits = ring.word_bits
    n_inv = [pow(ring.n, -1, q) for q in ring.moduli]
    plain = np.array(n_inv, dtype=np.uint64).reshape(-1, 1)
    shoup = np.array([(w << bits) // q for w, q in zip(n_inv, ring.moduli, strict=True)])
    return plain, shoup.astype(np.uint64).reshape(-1, 1)


def ntt(ring: RingSpec, a: WordArray) -> WordArray:
    """Forward negacyclic NTT of every limb (Cooley-Tukey, merged twiddles, bit-reversed output).

    For ``m = 1, 2, 4, ..., n/2`` and ``t = n / (2m)``, block ``i < m`` of each limb is the pair of
    halves ``a[2it : 2it+t]`` and ``a[2it+t : 2it+2t]``; with ``w = psi_rev[m + i]`` each butterfly
    is ``(U, V) -> (U + V*w, U - V*w)``. A stage is one vectorized step on the limbs reshaped to
    ``(L, m, 2, t)``.

    Args:
        ring: the ring.
        a: ``(L, n)`` coefficient-form words in ``[0, q_i)``.

    Returns:
        ``(L, n)`` words in ``[0, q_i)``; slot ``k`` of limb ``i`` is ``a(psi_i**(2*brv(k)+1)) mod
        q_i`` with ``psi_i`` the smallest primitive ``2n``-th root. The twiddles are in Montgomery
        form, so the NTT of Montgomery words is the Montgomery form of the NTT.
    """
    tab, (w_all, ws_all, _, _) = ring.tables(), _shoup_twiddles(ring)
    bits, (L, n) = ring.word_bits, (ring.L, ring.n)
    q = tab.q[:, :, None]  # (L, 1, 1) against (L, m, t)
    x = _words(ring, a)
    m = 1
    while m < n:
        t = n // (2 * m)
        x = x.reshape(L, m, 2, t)
        w, ws = w_all[:, m : 2 * m, None], ws_all[:, m : 2 * m, None]  # (L, m, 1), plain
        u = x[:, :, 0, :]
        v = _shoup_mul(x[:, :, 1, :], w, ws, q, bits)  # V*w in [0, q): V, w < q
        # bound: U, V*w in [0, q) -> both outputs reduced back to [0, q) (no lazy reduction)
        x = np.stack((_add_mod(u, v, q), _sub_mod(u, v, q)), axis=2).reshape(L, n)
        m *= 2
    return _store(ring, x)


def intt(ring: RingSpec, a: WordArray) -> WordArray:
    """Inverse negacyclic NTT of every limb (Gentleman-Sande, merged twiddles), then times ``n^-1``.

    For ``m = n/2, ..., 2, 1`` and ``t = n / (2m)``, with ``w = psi_inv_rev[m + i]`` each
    butterfly of block ``i`` is ``(U, V) -> (U + V, (U - V)*w)``; the stages undo :func:`ntt`'s
    in reverse order, leaving ``n * a``, and a last Montgomery product with ``n^-1 * R`` removes
    the ``n``.

    Args:
        ring: the ring.
        a: ``(L, n)`` NTT-form words in ``[0, q_i)`` (slot order of :func:`ntt`).

    Returns:
        ``(L, n)`` coefficient-form words in ``[0, q_i)`` with ``intt(ntt(a)) == a``.
    """
    tab, (_, _, w_all, ws_all) = ring.tables(), _shoup_twiddles(ring)
    bits, (L, n) = ring.word_bits, (ring.L, ring.n)
    q = tab.q[:, :, None]
    x = _words(ring, a)
    m = n // 2
    while m >= 1:
        t = n // (2 * m)
        x = x.reshape(L, m, 2, t)
        w, ws = w_all[:, m : 2 * m, None], ws_all[:, m : 2 * m, None]
        u, v = x[:, :, 0, :], x[:, :, 1, :]
        # bound: U, V in [0, q) -> U+V and U-V reduced to [0, q), and (U-V)*w in [0, q)
        diff = _shoup_mul(_sub_mod(u, v, q), w, ws, q, bits)
        x = np.stack((_add_mod(u, v, q), diff), axis=2).reshape(L, n)
        m //= 2
    n_inv, n_inv_shoup = _shoup_n_inv(ring)  # times n^-1, as one Shoup product per word
    return _store(ring, _shoup_mul(x, n_inv, n_inv_shoup, tab.q, bits))


# --------------------------------------------------------------------------------------------
# automorphisms


def automorphism(ring: RingSpec, a: WordArray, g: int, domain: Domain) -> WordArray:
    """Apply ``sigma_g: a(X) -> a(X**g)`` for an odd Galois element ``g``.

    Args:
        ring: the ring.
        a: ``(L, n)`` words in ``domain``.
        g: odd integer (taken mod ``2n``).
        domain: ``Domain.COEFF``: coefficient ``i`` moves to ``i*g mod 2n``, negated when that is
            ``>= n`` (since ``X**n = -1``). ``Domain.NTT``: a pure gather ``out[k] = a[perm[k]]``
            with ``perm`` from :func:`ren.ring.automorphism_ntt_table`.

    Returns:
        ``(L, n)`` words of ``sigma_g(a)`` in the same domain, in ``[0, q_i)``.
    """
    x = _words(ring, a)
    if domain is Domain.COEFF:
        dest, negate = automorphism_coeff_table(ring.n, g)
        out = np.empty_like(x)
        out[:, dest] = np.where(negate, _neg_mod(x, ring.tables().q), x)
    elif domain is Domain.NTT:
        out = x[:, automorphism_ntt_table(ring.n, g)]
    else:
        raise TypeError(f"domain must be Domain.COEFF or Domain.NTT, got {domain!r}")
    return _store(ring, out)


# --------------------------------------------------------------------------------------------
# rescale and basis change


def _recode(
    src: RingSpec, words: U64Array, src_rows: Rows, dst: RingSpec, dst_rows: Rows
) -> U64Array:
    """Montgomery words of ``src``'s limbs ``src_rows`` re-encoded as ``dst``'s limbs ``dst_rows``.

    The limbs have the same moduli. The words are unchanged when the dtypes agree, else decoded
    and encoded with the new R.
    """
    if src.dtype == dst.dtype:
        return words
    return _plain_to_mont(dst, _mont_to_plain(src, words, src_rows), dst_rows)


def check_drop(
    ring: RingSpec, drop: int | np.integer | Iterable[int | np.integer]
) -> tuple[int, ...]:
    """``drop`` (a modulus or moduli of ``ring``) as a checked tuple: present, distinct, some left.

    Raises:
        ValueError: naming the index and the ring.
    """
    if isinstance(drop, int | np.integer):
        drop = (drop,)
    drop = tuple(int(p) for p in drop)
    for p in drop:
        if p not in ring.moduli:
            raise ValueError(f"cannot rescale by {p}: it is not a modulus of {ring!r}")
    if len(set(drop)) != len(drop):
        raise ValueError(f"rescale moduli {drop} repeat a modulus")
    if not drop:
        raise ValueError("rescale needs at least one modulus to divide by")
    if len(drop) >= ring.L:
        raise ValueError(f"rescaling {ring!r} by {drop} would leave no modulus")
    return drop


@functools.cache
def _rescale_consts(ring: RingSpec, drop: tuple[int, ...]) -> tuple[U64Array, ...]:
    """``h * R mod q_i`` (``h = (P-1)/2``) and, per dropped ``p``, ``p^-1 * R mod q_i`` (0 at p)."""
    h = (math.prod(drop) - 1) // 2
    half = _mont_column(ring, [h] * ring.L)
    inv = [_mont_column(ring, [pow(p, -1, q) if q != p else 0 for q in ring.moduli]) for p in drop]
    _frozen(half, *inv)
    return half, *inv


def rescale(ring: RingSpec, a: WordArray, drop: tuple[int, ...]) -> WordArray:
    """Divide by ``P``, the product of the moduli ``drop``, rounding, and drop those limbs.

    The result is ``round(a_c / P) = floor(a_c/P + 1/2)`` (ties up), ``a_c`` the centered
    representative of ``a`` in ``(-Q/2, Q/2]``. ``P`` is odd, so ``floor(a_c/P + 1/2) =
    floor((a_c + h)/P)`` with ``h = (P-1)/2``: add ``h`` to every limb, then divide exactly by
    each dropped ``p`` in turn (``floor(floor(x/p1)/p2) = floor(x/(p1*p2))``)::

        y_i = (x_i - [x mod p]_{q_i}) * p^-1 mod q_i

    where ``x mod p`` is the (decoded) ``p`` limb, reduced modulo ``q_i`` and Montgomery-encoded by
    one Montgomery product with ``R**2 mod q_i`` (valid because ``x mod p < p < R``).

    Centering does not matter: the limbs only know ``x' = x + k*Q`` for some integer ``k``, and
    ``floor(x'/P) = floor(x/P) + k*(Q/P)`` with ``Q/P = Q'`` the product of the remaining moduli,
    which is ``0 mod Q'``. So the remaining limbs are exact.

    Args:
        ring: the ring of ``a``.
        a: ``(L, n)`` Montgomery words in **coefficient** form.
        drop: the moduli to divide by (an int or a tuple of distinct moduli of ``ring``); at
            least one modulus must remain.

    Returns:
        Words over ``ring.with_moduli(remaining moduli in ring order)``, in ``[0, q_i)``, equal to
        ``floor(a_c/P + 1/2) mod q_i``.

    Raises:
        ValueError: if a modulus of ``drop`` is not in ``ring``, repeats, or none would remain.
    """
    drop = check_drop(ring, drop)
    keep = [i for i, q in enumerate(ring.moduli) if q not in drop]
    out_ring = ring.with_moduli(tuple(ring.moduli[i] for i in keep))
    tab, bits = ring.tables(), ring.word_bits
    half, *p_invs = _rescale_consts(ring, drop)
    x = _add_mod(_words(ring, a), half, tab.q)  # a + h, a new array
    alive = list(range(ring.L))
    for p, p_inv in zip(drop, p_invs, strict=True):
        j = ring.moduli.index(p)
        alive.remove(j)
        rows = np.array(alive)
        q, q_inv = tab.q[rows], tab.q_inv[rows]
        r = _mont_to_plain(ring, x[j : j + 1], slice(j, j + 1))  # x mod p in [0, p), (1, n)
        # r < p < R, so r * (R**2 mod q_i) < q_i * R and one Montgomery product gives
        # [x mod p]_{q_i} * R mod q_i: no separate reduction of r modulo q_i is needed.
        r_mont = _plain_to_mont(ring, r, rows)
        x[rows] = _redc_mul(_sub_mod(x[rows], r_mont, q), p_inv[rows], q, q_inv, bits)
    return _store(out_ring, _recode(ring, x[keep], keep, out_ring, slice(None)))


@functools.cache
def _base_convert_consts(
    ring: RingSpec, target: RingSpec
) -> tuple[npt.NDArray[np.float64], U64Array, U64Array, U64Array, tuple[int, ...]]:
    """Constants of fast base conversion from ``ring`` to the target moduli not in ``ring``.

    Returns ``(q_float, p, c, q_mod_p, fresh)``: the ``q_i`` as floats ``(L, 1)``, the fresh
    target moduli ``p`` ``(F, 1)``, ``c[i] = (Q/q_i mod p) * R_t**2 mod p`` ``(L, F, 1)``,
    ``(Q mod p) * R_t**2 mod p`` ``(F, 1)`` (``R_t`` the target's radix) and the fresh rows.
    """
    Q = ring.Q
    q_float = np.array([[float(q)] for q in ring.moduli])
    fresh = [k for k, p in enumerate(target.moduli) if p not in ring.moduli]
    ps = [target.moduli[k] for k in fresh]
    R2 = 1 << (2 * target.word_bits)
    c = np.array([[[(Q // q) % p * R2 % p] for p in ps] for q in ring.moduli], dtype=np.uint64)
    q_mod_p = np.array([[Q % p * R2 % p] for p in ps], dtype=np.uint64)
    p_col = np.array([[p] for p in ps], dtype=np.uint64)
    _frozen(q_float, c, q_mod_p, p_col)
    return q_float, p_col, c, q_mod_p, tuple(fresh)


def base_convert(ring: RingSpec, a: WordArray, target: RingSpec) -> WordArray:
    """Change the RNS basis: the centered ``a_c`` in ``(-Q/2, Q/2]`` modulo each target modulus.

    A target modulus that is also a modulus of ``ring`` gets a copy of that limb (re-encoded when
    the dtypes differ), which is exact. Every other target modulus ``p`` gets the fast base
    conversion with the floating-point correction::

        y_i = [a_i * (Q/q_i)^-1]_{q_i}                     (so sum_i y_i * Q/q_i = a + k*Q)
        v   = floor(sum_i y_i / q_i + 1/2)                 (in float64)
        out = sum_i y_i * (Q/q_i mod p) - v * (Q mod p)    mod p

    ``sum_i y_i / q_i = k + x/Q`` with ``x = a mod Q`` in ``[0, Q)``, so ``v = k`` when
    ``x < Q/2`` and ``k + 1`` otherwise, and ``out = a_c mod p``. The float sum is off by at most
    about ``L * 2**-52``, so the result is exact except when ``a_c`` lies within about
    ``L * 2**-52 * Q`` of ``+-Q/2``; there ``v`` may be off by one and ``out`` off by ``Q mod p``.

    Args:
        ring: the ring of ``a``.
        a: ``(L, n)`` Montgomery words in **coefficient** form.
        target: the ring to convert to, of the same ``n`` (any moduli, either dtype).

    Returns:
        ``(L', n)`` words over ``target`` (its dtype and Montgomery radix) in ``[0, p)``.

    Raises:
        ValueError: if ``target.n != ring.n``.
    """
    if target.n != ring.n:
        raise ValueError(f"cannot convert {ring!r} to {target!r}: the degrees n differ")
    x, tab, bits = _words(ring, a), ring.tables(), ring.word_bits
    out = np.empty((target.L, ring.n), dtype=np.uint64)
    for k, modulus in enumerate(target.moduli):
        if modulus in ring.moduli:
            i = ring.moduli.index(modulus)
            out[k : k + 1] = _recode(ring, x[i : i + 1], slice(i, i + 1), target, slice(k, k + 1))
    q_float, p, c, q_mod_p, fresh_rows = _base_convert_consts(ring, target)
    if fresh_rows:
        fresh = list(fresh_rows)  # a list indexes rows (a tuple would index axes)
        q_hat_inv, _ = _crt_consts(ring)
        ttab, tbits = target.tables(), target.word_bits
        p_inv = ttab.q_inv[fresh]
        y = _redc_mul(x, q_hat_inv, tab.q, tab.q_inv, bits)  # plain y_i in [0, q_i)
        v = np.floor((y / q_float).sum(axis=0) + 0.5).astype(np.uint64)  # in [0, L]
        acc = np.zeros((len(fresh), ring.n), dtype=np.uint64)
        for i in range(ring.L):  # loop over source moduli; y_i mod p < p, c < p: product < p*R
            acc = _add_mod(acc, _redc_mul(y[i] % p, c[i], p, p_inv, tbits), p)
        out[fresh] = _sub_mod(acc, _redc_mul(v, q_mod_p, p, p_inv, tbits), p)  # v*c < L*p < p*R
    return _store(target, out)


# --------------------------------------------------------------------------------------------
# CRT


@functools.cache
def _crt_consts(ring: RingSpec) -> tuple[U64Array, npt.NDArray[np.object_]]:
    """``(Q/q_i)^-1 mod q_i`` (plain, ``uint64``) and ``Q/q_i`` (object) columns."""
    Q = ring.Q
    inv = np.array([[pow(Q // q, -1, q)] for q in ring.moduli], dtype=np.uint64)
    q_hat = np.array([[Q // q] for q in ring.moduli], dtype=object)
    _frozen(inv, q_hat)
    return inv, q_hat


def crt(ring: RingSpec, words: WordArray, centered: bool = False) -> list[int]:
    """Reconstruct the coefficients as Python ints by the Chinese remainder theorem.

    ``x = sum_i [w_i * (Q/q_i)^-1]_{q_i} * (Q/q_i) mod Q``, with ``w_i`` the plain residues; the
    bracket is one Montgomery product of the stored word ``w_i * R`` with the plain
    ``(Q/q_i)^-1``, and the sum is done on NumPy object arrays of Python ints.

    Args:
        ring: the ring.
        words: ``(L, n)`` Montgomery words.
        centered: return the representative in ``(-Q/2, Q/2]`` instead of ``[0, Q)``.

    Returns:
        ``n`` Python ints in ``[0, Q)``, or in ``(-Q/2, Q/2]`` when ``centered``.
    """
    tab = ring.tables()
    inv, q_hat = _crt_consts(ring)
    y = _redc_mul(_words(ring, words, "words"), inv, tab.q, tab.q_inv, ring.word_bits)
    Q = ring.Q
    x = (y.astype(object) * q_hat).sum(axis=0) % Q
    if centered:
        x = np.where(x > Q // 2, x - Q, x)  # Q is odd: (-Q/2, Q/2] is [-(Q//2), Q//2]
    return cast("list[int]", x.tolist())  # an object array of Python ints
