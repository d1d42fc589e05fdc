"""CKKS: encrypted approximate arithmetic on vectors of complex numbers, written with ``Poly``.

Every homomorphic operation here is a handful of ``Poly`` operations (products, sums, rotations,
basis extensions, rescales), so one encrypted multiply is one lazy graph that Ren's scheduler
fuses, plans and runs on any backend, and that ``ren.jit`` captures whole.

Use::

    from ren.schemes import ckks

    params = ckks.Params(n=8192, q_bits=(60, 40, 40), p_bits=(60,), scale_bits=40)
    with ckks.Context(params, seed=1) as ctx:  # keys are made here
        x = ckks.encrypt([0.5, 0.25j, -1.0])
        y = x * x + x  # relinearized and rescaled; x is brought to y's level and scale
        print(ckks.decrypt(y)[:3])

The conventions (``docs/ckks.md`` explains each):

* **Slots.** ``n/2`` complex slots; slot ``j`` is the plaintext polynomial evaluated at
  ``zeta^(5^j)``, ``zeta = exp(i*pi/n)``, so ``rotate(r)`` moves slot ``j + r`` to slot ``j`` and
  conjugation is the automorphism ``X -> X^(2n-1)``.
* **Moduli.** The ciphertext modulus chain is ``q_0, ..., q_{L-1}`` (``q_bits``); the special
  moduli ``p_0, ...`` (``p_bits``) are used only inside key switching. Keys live in the ring over
  ``p_0, ..., q_0, ..., q_{L-1}`` (special moduli *first*), so the key ring at every level is a
  contiguous run of it (a view, no copy).
* **Levels.** A value at level ``l`` lives in the ring over ``q_0, ..., q_l``; fresh values are at
  level ``L-1``; ``rescale`` divides by ``q_l`` and drops to level ``l-1``.
* **Scales** are tracked exactly, as Python floats: a product's scale is the product of the scales,
  a rescale divides it by the exact modulus.
* **Key switching** is hybrid: the ciphertext is cut into ``dnum`` digits of consecutive moduli,
  each digit is extended to the special moduli (ModUp, a basis extension), multiplied by the key,
  and the sum is divided by ``P`` (ModDown, a ``RESCALE`` by the special moduli).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import numbers
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from ren import sampling
from ren.device import canonical_device
from ren.engine import jit as _jit
from ren.engine.realize import uncaptured
from ren.poly import Poly, is_int, realize
from ren.ring import Domain, RingSpec, galois_for_rotation, ntt_primes

__all__ = [
    "SECURITY_BOUNDS",
    "Ciphertext",
    "Context",
    "EvaluationKeys",
    "KeySwitchKey",
    "Params",
    "Plaintext",
    "current",
    "decode",
    "decrypt",
    "embed",
    "embed_inverse",
    "encode",
    "encrypt",
    "multiply",
    "precision_bits",
]

#: The largest ``log2(QP)`` for 128-bit security with a uniform ternary secret, from the
#: Homomorphic Encryption Standard (Albrecht et al., 2018, table of classical attacks).
SECURITY_BOUNDS: dict[int, int] = {
    1024: 27,
    2048: 54,
    4096: 109,
    8192: 218,
    16384: 438,
    32768: 881,
}

#: Version of the byte format written by ``to_bytes``; ``from_bytes`` reads only this version.
FORMAT_VERSION = 1
_MAGIC = b"RENCKKS\0"


def _bits(x: float) -> str:
    """A modulus or coefficient size as ``2^k``."""
    return f"2^{math.log2(x):.6f}" if x > 0 else str(x)


def _scale(x: float) -> str:
    """A scale, exactly: ``2^k`` and the float itself (two scales may agree to many digits)."""
    return f"2^{math.log2(x):.6f} ({x!r})" if x > 0 else repr(x)


# ---------------------------------------------------------------------------------------------
# parameters


def _bits_tuple(name: str, value: Any) -> tuple[int, ...]:
    if is_int(value):
        raise TypeError(f"{name} must be a sequence of bit sizes, got the int {value}")
    try:
        items = tuple(value)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of ints, got {type(value).__name__}") from None
    if not items:
        raise ValueError(f"{name} is empty: it needs at least one bit size")
    for b in items:
        if not is_int(b):
            raise TypeError(f"{name} holds {b!r}; bit sizes must be ints")
        if not 10 <= b <= 62:
            raise ValueError(f"{name} holds {b}: moduli must have 10 to 62 bits")
    return tuple(int(b) for b in items)


@dataclasses.dataclass(frozen=True)
class Params:
    """CKKS parameters: the moduli are found at construction, then the parameters are checked.

    The moduli are the largest NTT-friendly primes of each bit size, the special moduli taking the
    largest.

    Args:
        n: ring degree, a power of two; ``n/2`` slots.
        q_bits: bit sizes of the ciphertext moduli ``q_0, ..., q_{L-1}``. ``q_0`` holds the result
            at the last level, the others are divided out one per rescale (size them like the
            scale).
        p_bits: bit sizes of the special moduli used by key switching.
        scale_bits: the default scale is ``2**scale_bits``.
        dnum: number of key-switching digits (default: one per ciphertext modulus, the least
            noise). The product of the special moduli must have at least as many bits as the
            largest digit.
        insecure: allow parameters beyond the HE-standard bound for 128-bit security (tests and
            teaching on tiny rings).
        hamming_weight: ``None`` for a uniform ternary secret, or the exact number of nonzero
            coefficients of a sparse one (needs ``insecure=True``: the security table does not
            cover sparse secrets).
        sigma: standard deviation of the error distribution.

    Raises:
        TypeError, ValueError: naming the argument and the rule it breaks; a security error
            gives ``log2(QP)`` and the bound.
    """

    n: int
    q_bits: tuple[int, ...]
    p_bits: tuple[int, ...] = (60,)
    scale_bits: int = 40
    dnum: int | None = None
    insecure: bool = False
    hamming_weight: int | None = None
    sigma: float = 3.2
    q_moduli: tuple[int, ...] = dataclasses.field(init=False, repr=False, compare=False)
    p_moduli: tuple[int, ...] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = functools.partial(object.__setattr__, self)
        if not is_int(self.n) or self.n < 4 or self.n & (self.n - 1):
            raise ValueError(f"n={self.n!r} must be a power of two >= 4")
        set_("n", int(self.n))
        set_("q_bits", _bits_tuple("q_bits", self.q_bits))
        set_("p_bits", _bits_tuple("p_bits", self.p_bits))
        if not is_int(self.scale_bits):
            raise TypeError(f"scale_bits must be an int, got {self.scale_bits!r}")
        set_("scale_bits", int(self.scale_bits))
        if not 1 <= self.scale_bits < self.q_bits[0]:
            raise ValueError(
                f"scale_bits={self.scale_bits} must be at least 1 and below q_bits[0]="
                f"{self.q_bits[0]}: the first modulus holds the values at the scale at level 0"
            )
        L = len(self.q_bits)
        dnum = L if self.dnum is None else self.dnum
        if not is_int(dnum) or not 1 <= dnum <= L:
            raise ValueError(f"dnum={self.dnum!r} must be an int from 1 to len(q_bits)={L}")
        set_("dnum", int(dnum))
        if not isinstance(self.insecure, bool):
            raise TypeError(f"insecure must be True or False, got {self.insecure!r}")
        if self.hamming_weight is not None and (
            not is_int(self.hamming_weight) or not 1 <= self.hamming_weight <= self.n
        ):
            raise ValueError(f"hamming_weight={self.hamming_weight!r} must be None or in [1, n]")
        if not isinstance(self.sigma, numbers.Real) or not 0 < float(self.sigma) < 1e6:
            raise ValueError(f"sigma={self.sigma!r} must be a positive number")
        set_("sigma", float(self.sigma))

        # the moduli: for each bit size, the largest primes, special moduli first
        need: dict[int, int] = {}
        for b in self.p_bits + self.q_bits:
            need[b] = need.get(b, 0) + 1
        pool = {b: list(ntt_primes(self.n, b, c)) for b, c in need.items()}
        set_("p_moduli", tuple(pool[b].pop(0) for b in self.p_bits))
        set_("q_moduli", tuple(pool[b].pop(0) for b in self.q_bits))

        P = math.prod(self.p_moduli)
        for digit in self.digits:
            D = math.prod(self.q_moduli[i] for i in digit)
            if P.bit_length() < D.bit_length():
                raise ValueError(
                    f"the special moduli (P of {P.bit_length()} bits) are too small for "
                    f"dnum={self.dnum}: a digit holds moduli of {D.bit_length()} bits, and key "
                    "switching multiplies the key's error by the digit over P; raise dnum or add "
                    "special moduli (p_bits)"
                )
        bound = SECURITY_BOUNDS.get(self.n)
        if not self.insecure and self.hamming_weight is not None:
            raise ValueError(
                f"hamming_weight={self.hamming_weight}: the HE-standard table covers uniform "
                "ternary secrets only, and a sparse secret is easier to attack; pass "
                "insecure=True to use one (for tests, teaching and experiments)"
            )
        if not self.insecure:
            if bound is None:
                raise ValueError(
                    f"n={self.n} has no entry in the HE-standard table (n = 1024 ... 32768); pass "
                    "insecure=True to use it anyway (for tests and teaching only)"
                )
            if self.log2_qp > bound:
                raise ValueError(
                    f"log2(QP)={self.log2_qp:.1f} exceeds {bound}, the HE-standard bound for "
                    f"128-bit security at n={self.n} with a ternary secret; use fewer or smaller "
                    "moduli, a larger n, or insecure=True (for tests and teaching only)"
                )

    # --- derived ------------------------------------------------------------------------------
    @property
    def L(self) -> int:
        """The number of ciphertext moduli."""
        return len(self.q_bits)

    @property
    def max_level(self) -> int:
        """The level of a fresh value: ``L - 1``."""
        return len(self.q_bits) - 1

    @property
    def slots(self) -> int:
        """The number of complex slots: ``n / 2``."""
        return self.n // 2

    @property
    def scale(self) -> float:
        """The default scale, ``2**scale_bits``."""
        return float(2**self.scale_bits)

    @property
    def log2_qp(self) -> float:
        """``log2`` of the product of every modulus (what the security bound limits)."""
        return sum(math.log2(q) for q in self.q_moduli + self.p_moduli)

    @functools.cached_property
    def digits(self) -> tuple[tuple[int, ...], ...]:
        """The key-switching digits: ``dnum`` runs of consecutive ciphertext-modulus indices.

        Each run has ``ceil(L / dnum)`` moduli (the last may be shorter).
        """
        L = len(self.q_bits)
        size = -(-L // self.dnum)
        return tuple(tuple(range(i, min(i + size, L))) for i in range(0, L, size))

    @functools.cached_property
    def key_ring(self) -> RingSpec:
        """The ring of the keys: the special moduli, then every ciphertext modulus."""
        return RingSpec(self.n, self.p_moduli + self.q_moduli)

    def ring(self, level: int) -> RingSpec:
        """The ring of a value at ``level``: moduli ``q_0 .. q_level``."""
        self._check_level(level)
        return self.key_ring.with_moduli(self.q_moduli[: level + 1])

    def key_ring_at(self, level: int) -> RingSpec:
        """The key ring cut to ``level``: the special moduli, then ``q_0 .. q_level``.

        It is a prefix of ``key_ring``, so a view.
        """
        self._check_level(level)
        return self.key_ring.with_moduli(self.p_moduli + self.q_moduli[: level + 1])

    def _check_level(self, level: int) -> None:
        if not is_int(level) or not 0 <= level <= self.max_level:
            raise ValueError(f"level={level!r} is outside [0, {self.max_level}]")

    # --- serialization ------------------------------------------------------------------------
    def _header(self) -> dict:
        return {
            "n": self.n,
            "q_bits": list(self.q_bits),
            "p_bits": list(self.p_bits),
            "scale_bits": self.scale_bits,
            "dnum": self.dnum,
            "insecure": self.insecure,
            "hamming_weight": self.hamming_weight,
            "sigma": self.sigma,
            "moduli": [str(q) for q in self.p_moduli + self.q_moduli],
        }

    @classmethod
    def _from_header(cls, h: dict) -> Params:
        try:
            params = cls(
                n=h["n"],
                q_bits=tuple(h["q_bits"]),
                p_bits=tuple(h["p_bits"]),
                scale_bits=h["scale_bits"],
                dnum=h["dnum"],
                insecure=h["insecure"],
                hamming_weight=h["hamming_weight"],
                sigma=h["sigma"],
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"the blob's CKKS parameters are not valid: {e}") from None
        if h.get("moduli") != [str(q) for q in params.p_moduli + params.q_moduli]:
            raise ValueError(
                "the blob's moduli differ from the ones these parameters give (written by a Ren "
                "that chose primes differently)"
            )
        return params

    def to_bytes(self) -> bytes:
        """The parameters in Ren's versioned, checksummed CKKS format."""
        return _pack("params", {"params": self._header()}, [])

    @classmethod
    def from_bytes(cls, blob: bytes) -> Params:
        """Read parameters written by ``to_bytes``.

        Raises:
            ValueError: a truncated, altered or foreign blob, or a version this Ren cannot read.
        """
        header, _ = _unpack(blob, "params")
        return cls._from_header(header["params"])


# ---------------------------------------------------------------------------------------------
# the canonical embedding


@functools.cache
def _embedding(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For slot ``j``: the index of its root, the index of the conjugate root, and the twist.

    The root the slot is evaluated at has index ``t_j`` with ``2 t_j + 1 = 5^j mod 2n``; the twist
    is ``zeta^i``, ``zeta = e^(i pi/n)``.
    """
    e = np.array([pow(5, j, 2 * n) for j in range(n // 2)], dtype=np.int64)
    t = (e - 1) // 2
    tc = (2 * n - e - 1) // 2
    zeta = np.exp(1j * np.pi * np.arange(n) / n)
    return t, tc, zeta


def embed_inverse(slots: np.ndarray, n: int) -> np.ndarray:
    """The real polynomial (``n`` float coefficients) whose canonical embedding is ``slots``.

    With ``v[t] = m(zeta^(2t+1))`` for all ``n`` odd powers, ``v = n * ifft(m * zeta^i)``; the
    slots fill ``v`` at ``5^j`` and their conjugates at ``-5^j``, then ``m = fft(v) / n / zeta^i``.
    """
    t, tc, zeta = _embedding(n)
    v = np.empty(n, dtype=np.complex128)
    v[t] = slots
    v[tc] = np.conj(slots)
    return (np.fft.fft(v) / n / zeta).real


def embed(coeffs: np.ndarray, n: int) -> np.ndarray:
    """The ``n/2`` slots of the real polynomial ``coeffs``: ``m(zeta^(5^j))`` by one FFT."""
    t, _, zeta = _embedding(n)
    return (n * np.fft.ifft(np.asarray(coeffs, dtype=np.float64) * zeta))[t]


# ---------------------------------------------------------------------------------------------
# values


def _poly_bytes(p: Poly) -> tuple[dict, bytes]:
    limbs = p.limbs().astype("<u8")
    return {"domain": p.domain.value, "L": p.ring.L}, limbs.tobytes()


@dataclasses.dataclass(frozen=True, eq=False)
class Plaintext:
    """An encoded vector: one ``Poly`` (NTT form) at ``level`` whose slots hold ``values * scale``.

    Attributes:
        poly: the polynomial, in the ring of ``level``.
        scale: the exact scale the values were multiplied by.
        level: ``0 .. L-1``.
        real: whether the values are real (decoding then returns imaginary parts of exactly 0).
        context: the ``Context`` it was made in.
    """

    poly: Poly
    scale: float
    level: int
    real: bool = False
    context: Context | None = dataclasses.field(default=None, repr=False)

    def _ctx(self) -> Context:
        return self.context if self.context is not None else current()

    def at_level(self, level: int) -> Plaintext:
        """The same plaintext at a lower ``level`` (a limb view)."""
        if level == self.level:
            return self
        ctx = self._ctx()
        _check_down(self.level, level, "plaintext")
        return dataclasses.replace(
            self, poly=self.poly.to_ring(ctx.params.ring(level)), level=level
        )

    def decode(self) -> np.ndarray:
        """The slots (``numpy.complex128``, ``n/2`` of them)."""
        return self._ctx().decode(self)

    def to_bytes(self) -> bytes:
        """This plaintext in Ren's versioned, checksummed CKKS format."""
        ctx = self._ctx()
        head, data = _poly_bytes(self.poly)
        header = {
            "params": ctx.params._header(),
            "scale": self.scale.hex(),
            "level": self.level,
            "real": self.real,
            "polys": [head],
        }
        return _pack("plaintext", header, [data])

    @classmethod
    def from_bytes(cls, blob: bytes, context: Context | None = None) -> Plaintext:
        """Read a plaintext into ``context`` (default: the current one).

        The blob must have been written with the context's parameters.

        Raises:
            ValueError: a truncated, altered or foreign blob, or other parameters.
        """
        ctx = context if context is not None else current()
        header, polys = _read_values(blob, "plaintext", ctx)
        if len(polys) != 1:
            raise ValueError(f"a plaintext blob holds one polynomial, this one {len(polys)}")
        return cls(polys[0], header["scale"], header["level"], header["real"], ctx)


@dataclasses.dataclass(frozen=True, eq=False)
class Ciphertext:
    """An encryption: polys ``c_0, c_1`` (and ``c_2`` before relinearization) in NTT form.

    The polys are at ``level``, with ``c_0 + c_1 s (+ c_2 s^2) = m + e`` for the encoded message
    ``m`` at ``scale``.

    Operators: ``+``, ``-`` and unary ``-`` with ciphertexts, plaintexts, numbers and arrays;
    ``*`` relinearizes and rescales (see ``multiply`` for control). Operands at different levels
    are brought to the lower one.

    Attributes:
        parts: the polys ``(c_0, c_1)`` or ``(c_0, c_1, c_2)``.
        scale: the exact scale of the message.
        level: ``0 .. L-1``.
        real: whether the message is real.
        context: the ``Context`` whose keys it is under.
    """

    parts: tuple[Poly, ...]
    scale: float
    level: int
    real: bool = False
    context: Context | None = dataclasses.field(default=None, repr=False)

    # --- facts ----------------------------------------------------------------------------------
    def _ctx(self) -> Context:
        return self.context if self.context is not None else current()

    @property
    def size(self) -> int:
        """The number of parts: 2, or 3 before relinearization."""
        return len(self.parts)

    @property
    def ring(self) -> RingSpec:
        """The ring of the parts."""
        return self.parts[0].ring

    def realize(self) -> Ciphertext:
        """Compute every part now (together); returns ``self``."""
        realize(*self.parts)
        return self

    # --- operators ------------------------------------------------------------------------------
    def __add__(self, other: Any) -> Ciphertext:
        return self._ctx()._add(self, other, sub=False)

    def __radd__(self, other: Any) -> Ciphertext:
        return self._ctx()._add(self, other, sub=False)

    def __sub__(self, other: Any) -> Ciphertext:
        return self._ctx()._add(self, other, sub=True)

    def __rsub__(self, other: Any) -> Ciphertext:
        return self._ctx()._add(-self, other, sub=False)

    def __neg__(self) -> Ciphertext:
        return dataclasses.replace(self, parts=tuple(-p for p in self.parts))

    def __mul__(self, other: Any) -> Ciphertext:
        return self._ctx().multiply(self, other)

    def __rmul__(self, other: Any) -> Ciphertext:
        return self._ctx().multiply(self, other)

    # --- methods ----------------------------------------------------------------------------------
    def rotate(self, steps: int) -> Ciphertext:
        """Slots moved left by ``steps``: slot ``j + steps`` lands in slot ``j`` (key switched)."""
        return self._ctx().rotate(self, steps)

    def conjugate(self) -> Ciphertext:
        """Every slot complex-conjugated (key switched)."""
        return self._ctx().conjugate(self)

    def rescale(self) -> Ciphertext:
        """Divide by the last modulus ``q_level``: one level down, scale divided by it."""
        return self._ctx().rescale(self)

    def relinearize(self) -> Ciphertext:
        """A three-part ciphertext as two parts under ``s`` (key switching ``c_2`` from ``s^2``)."""
        return self._ctx().relinearize(self)

    def at_level(self, level: int) -> Ciphertext:
        """The same ciphertext at a lower ``level``: a limb view, scale unchanged."""
        if level == self.level:
            return self
        _check_down(self.level, level, "ciphertext")
        ring = self._ctx().params.ring(level)
        return dataclasses.replace(
            self, parts=tuple(p.to_ring(ring) for p in self.parts), level=level
        )

    def decrypt(self) -> np.ndarray:
        """Decrypt and decode (needs the secret key): ``n/2`` complex slots."""
        return self._ctx().decrypt(self)

    # --- bytes ------------------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """This ciphertext in Ren's versioned, checksummed CKKS format."""
        ctx = self._ctx()
        heads, datas = zip(*(_poly_bytes(p) for p in self.parts), strict=True)
        header = {
            "params": ctx.params._header(),
            "scale": self.scale.hex(),
            "level": self.level,
            "real": self.real,
            "polys": list(heads),
        }
        return _pack("ciphertext", header, list(datas))

    @classmethod
    def from_bytes(cls, blob: bytes, context: Context | None = None) -> Ciphertext:
        """Read a ciphertext into ``context`` (default: the current one).

        The blob must have been written with the context's parameters.

        Raises:
            ValueError: a truncated, altered or foreign blob, or other parameters.
        """
        ctx = context if context is not None else current()
        header, polys = _read_values(blob, "ciphertext", ctx)
        if len(polys) not in (2, 3):
            raise ValueError(f"a ciphertext blob holds 2 or 3 polynomials, this one {len(polys)}")
        return cls(tuple(polys), header["scale"], header["level"], header["real"], ctx)


def _check_down(level: int, target: int, what: str) -> None:
    if not is_int(target) or not 0 <= target <= level:
        raise ValueError(
            f"cannot bring a {what} at level {level} to level {target!r}: levels only go down, "
            "to 0 at the least"
        )


# ---------------------------------------------------------------------------------------------
# keys


class KeySwitchKey:
    """A key-switching key from ``s'`` to ``s``: one pair of polys for each digit.

    For digit ``j`` the pair is ``(b_j, a_j) = (-a_j s + e_j + P T_j s', a_j)`` over the key ring,
    in NTT form, where ``T_j`` is ``1`` modulo the digit's moduli and ``0`` modulo the other
    ciphertext moduli.

    Attributes:
        galois: the Galois element ``g`` of a rotation or conjugation key (``s' = s(X^g)``), or
            ``None`` for the relinearization key (``s' = s^2``).
        parts: the ``(b_j, a_j)`` pairs.
    """

    __slots__ = ("galois", "parts")

    def __init__(self, galois: int | None, parts: tuple[tuple[Poly, Poly], ...]):
        self.galois = galois
        self.parts = parts

    def __repr__(self) -> str:
        what = "relinearization" if self.galois is None else f"galois g={self.galois}"
        return f"<KeySwitchKey {what}, {len(self.parts)} digits>"


class EvaluationKeys:
    """The public keys a server needs.

    They are the public key, the relinearization key, and the rotation and conjugation keys made
    so far. ``Context(params, keys=...)`` evaluates with them (no secret key: it cannot decrypt or
    make new rotation keys).
    """

    __slots__ = ("galois", "params", "public", "relin")

    def __init__(
        self,
        params: Params,
        public: tuple[Poly, Poly],
        relin: KeySwitchKey,
        galois: dict[int, KeySwitchKey],
    ):
        self.params = params
        self.public = public
        self.relin = relin
        self.galois = dict(galois)

    def __repr__(self) -> str:
        return f"<EvaluationKeys n={self.params.n}, galois={sorted(self.galois)}>"

    def to_bytes(self) -> bytes:
        """The keys in Ren's versioned, checksummed CKKS format (never the secret key)."""
        keys = [self.relin, *(self.galois[g] for g in sorted(self.galois))]
        polys = [*self.public] + [p for k in keys for pair in k.parts for p in pair]
        heads, datas = zip(*(_poly_bytes(p) for p in polys), strict=True)
        header = {
            "params": self.params._header(),
            "galois": [None if k.galois is None else k.galois for k in keys],
            "polys": list(heads),
        }
        return _pack("evaluation-keys", header, list(datas))

    @classmethod
    def from_bytes(cls, blob: bytes, device: str | None = None) -> EvaluationKeys:
        """Read keys written by ``to_bytes`` (onto ``device``).

        Raises:
            ValueError: a truncated, altered or foreign blob.
        """
        header, datas = _unpack(blob, "evaluation-keys")
        params = Params._from_header(header["params"])
        ring = params.key_ring
        polys = _polys_from(header, datas, [ring] * len(header["polys"]), device)
        digits = len(params.digits)
        galois = header["galois"]
        if not galois or galois[0] is not None or len(polys) != 2 + 2 * digits * len(galois):
            raise ValueError("the evaluation-key blob's key list does not match its polynomials")
        public = (polys[0], polys[1])
        keys = []
        for i, g in enumerate(galois):
            base = 2 + 2 * digits * i
            pairs = tuple((polys[base + 2 * j], polys[base + 2 * j + 1]) for j in range(digits))
            keys.append(KeySwitchKey(g, pairs))
        if any(not is_int(k.galois) for k in keys[1:]):
            raise ValueError("the evaluation-key blob names a Galois element that is not an int")
        return cls(params, public, keys[0], {k.galois: k for k in keys[1:]})


# ---------------------------------------------------------------------------------------------
# the context

_STACK: list[Context] = []


def current() -> Context:
    """The innermost active ``Context`` (``with ckks.Context(...)``).

    Raises:
        RuntimeError: outside every ``with ckks.Context(...)`` block.
    """
    if not _STACK:
        raise RuntimeError(
            "no CKKS context is active: use `with ckks.Context(params) as ctx:` or call the "
            "context's methods (ctx.encrypt, ctx.decrypt, ...)"
        )
    return _STACK[-1]


class Context:
    """Keys and the evaluator for one parameter set.

    Keys (secret, public, relinearization) are made on entering the ``with`` block, or at the
    first operation that needs them; rotation and conjugation keys are made on first use and kept.

    Args:
        params: the ``Params``.
        seed: an int makes every random draw reproducible (NumPy's PCG64: for tests and teaching,
            not for real secrets); ``None`` draws from the operating system.
        device: where every value lives (``"python"``, ``"cpu"``, ``"cuda"``; default
            ``$REN_DEVICE``).
        keys: ``EvaluationKeys`` to evaluate with instead of making keys (no secret key).
        secret_key: a secret key written by ``export_secret_key``; the public and
            relinearization keys are made from it.
    """

    def __init__(
        self,
        params: Params,
        seed: int | None = None,
        device: str | None = None,
        *,
        keys: EvaluationKeys | None = None,
        secret_key: bytes | None = None,
    ):
        if not isinstance(params, Params):
            raise TypeError(f"params must be a ckks.Params, got {type(params).__name__}")
        self.params = params
        self.device = canonical_device(device)
        self._rng = sampling.as_rng(seed)
        self._secret: Poly | None = None
        self._public: tuple[Poly, Poly] | None = None
        self._relin: KeySwitchKey | None = None
        self._galois: dict[int, KeySwitchKey] = {}
        if keys is not None and secret_key is not None:
            raise ValueError("pass keys= or secret_key=, not both")
        if keys is not None:
            if not isinstance(keys, EvaluationKeys):
                raise TypeError(f"keys must be ckks.EvaluationKeys, got {type(keys).__name__}")
            if keys.params != params:
                raise ValueError(f"the keys are for {keys.params}, not {params}")
            self._public = tuple(p.to(self.device) for p in keys.public)
            self._relin = self._keys_to_device(keys.relin)
            self._galois = {g: self._keys_to_device(k) for g, k in keys.galois.items()}
        if secret_key is not None:
            self._load_secret(secret_key)

    def __repr__(self) -> str:
        have = "secret" if self._secret is not None else "evaluation" if self._public else "no"
        return f"<ckks.Context n={self.params.n} L={self.params.L} {self.device}, {have} keys>"

    def __enter__(self) -> Context:
        if self._public is None:
            self.keygen()
        _STACK.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        for i in range(len(_STACK) - 1, -1, -1):
            if _STACK[i] is self:
                del _STACK[i]
                break

    # --- keys -------------------------------------------------------------------------------------
    @property
    def has_secret_key(self) -> bool:
        """Whether this context can decrypt (and make new rotation keys)."""
        return self._secret is not None

    def keygen(self) -> None:
        """Make a new secret key, public key and relinearization key (dropping rotation keys)."""
        prm, K = self.params, self.params.key_ring
        if prm.hamming_weight is None:
            s = Poly.ternary(K, self._rng, self.device)
        else:
            s = Poly.sparse_ternary(K, prm.hamming_weight, self._rng, self.device)
        with uncaptured():
            self._secret = s.ntt().realize()
        self._after_secret()

    def _after_secret(self) -> None:
        K = self.params.key_ring
        a = self._uniform_ntt(K)
        e = Poly.gaussian(K, self.params.sigma, self._rng, self.device)
        b = -(a * self._secret) + e
        with uncaptured():
            self._public = (b.ntt(), a)
            realize(*self._public)
        self._galois = {}
        self._relin = self._make_switch_key(self._secret * self._secret, None)

    def _uniform_ntt(self, ring: RingSpec) -> Poly:
        """A uniform poly drawn directly in NTT form (uniform in either form)."""
        limbs = np.stack([sampling.uniform_below(self._rng, q, ring.n) for q in ring.moduli])
        return Poly.from_limbs(limbs, ring, Domain.NTT, self.device)

    def _make_switch_key(self, s_new: Poly, galois: int | None) -> KeySwitchKey:
        prm, K = self.params, self.params.key_ring
        Q = math.prod(prm.q_moduli)
        P = math.prod(prm.p_moduli)
        pairs = []
        for digit in prm.digits:
            D = math.prod(prm.q_moduli[i] for i in digit)
            T = (Q // D) * pow(Q // D, -1, D)  # 1 mod the digit's moduli, 0 mod the others
            a = self._uniform_ntt(K)
            e = Poly.gaussian(K, prm.sigma, self._rng, self.device)
            b = -(a * self._secret) + e + s_new * (P * T % K.Q)
            pairs.append((b.ntt(), a))
        with uncaptured():
            realize(*(p for pair in pairs for p in pair))
        return KeySwitchKey(galois, tuple(pairs))

    def _require_secret(self, what: str) -> Poly:
        if self._secret is None:
            if self._public is None:
                self.keygen()
            else:
                raise ValueError(f"this context holds no secret key, so it cannot {what}")
        return self._secret

    def _require_public(self) -> None:
        if self._public is None:
            self.keygen()

    def galois_key(self, g: int) -> KeySwitchKey:
        """The key switching ``s(X^g)`` to ``s``, made on first use (outside any jit capture).

        Raises:
            ValueError: without a secret key, when the key was not given with the context.
        """
        two_n = 2 * self.params.n
        g = int(g) % two_n
        key = self._galois.get(g)
        if key is None:
            self._require_public()
            if self._secret is None:
                raise ValueError(
                    f"no key for the Galois element {g} (rotation or conjugation) was given to "
                    "this context, and it holds no secret key to make one"
                )
            key = self._make_switch_key(self._secret.automorphism(g), g)
            self._galois[g] = key
        return key

    def rotation_key(self, steps: int) -> KeySwitchKey:
        """The key for ``rotate(steps)`` (made on first use)."""
        return self.galois_key(galois_for_rotation(self.params.n, int(steps) % self.params.slots))

    def evaluation_keys(self) -> EvaluationKeys:
        """The public key, relinearization key and the rotation keys made so far."""
        self._require_public()
        return EvaluationKeys(self.params, self._public, self._relin, self._galois)

    def export_secret_key(self) -> bytes:
        """The secret key, in Ren's versioned, checksummed CKKS format. Keep it secret."""
        s = self._require_secret("export a secret key")
        head, data = _poly_bytes(s)
        return _pack("secret-key", {"params": self.params._header(), "polys": [head]}, [data])

    def _load_secret(self, blob: bytes) -> None:
        header, datas = _unpack(blob, "secret-key")
        params = Params._from_header(header["params"])
        if params != self.params:
            raise ValueError(f"the secret key is for {params}, not {self.params}")
        (s,) = _polys_from(header, datas, [params.key_ring], self.device)
        self._secret = s.ntt()
        with uncaptured():
            self._secret.realize()
        self._after_secret()

    def _keys_to_device(self, key: KeySwitchKey) -> KeySwitchKey:
        return KeySwitchKey(
            key.galois, tuple((b.to(self.device), a.to(self.device)) for b, a in key.parts)
        )

    # --- encoding ---------------------------------------------------------------------------------
    def encode(
        self, values: Any, level: int | None = None, scale: float | None = None
    ) -> Plaintext:
        """Encode up to ``n/2`` complex or real numbers (a scalar fills every slot).

        Args:
            values: numbers, a sequence or a 1-D array; missing slots are zero.
            level: the level of the plaintext (default: the top, ``L - 1``).
            scale: the scale (default: ``2**scale_bits``).

        Raises:
            TypeError: for values that are not numbers.
            ValueError: for too many values, NaN or infinity, or values too large for the modulus
                at ``level`` at this scale.
        """
        prm = self.params
        level = prm.max_level if level is None else level
        ring = prm.ring(level)
        scale = prm.scale if scale is None else _check_scale(scale)
        slots, real = _slots(values, prm.slots)
        coeffs = np.rint(embed_inverse(slots, prm.n) * scale)
        biggest = float(np.max(np.abs(coeffs))) if coeffs.size else 0.0
        if biggest >= ring.Q / 2:
            raise ValueError(
                f"the values are too large for scale {_bits(scale)} at level {level}: a "
                f"coefficient of {_bits(biggest)} does not fit the modulus Q={_bits(ring.Q)}"
            )
        if biggest < 2.0**62:
            ints = coeffs.astype(np.int64)
        else:
            ints = np.array([int(c) for c in coeffs], dtype=object)
        poly = Poly(ints, ring, self.device).ntt()
        return Plaintext(poly, float(scale), level, real, self)

    def decode(self, pt: Plaintext) -> np.ndarray:
        """The ``n/2`` slots of a plaintext (``numpy.complex128``)."""
        if not isinstance(pt, Plaintext):
            raise TypeError(f"decode takes a Plaintext, got {type(pt).__name__}")
        return self._decode_poly(pt.poly, pt.scale, pt.real)

    def _decode_poly(self, poly: Poly, scale: float, real: bool) -> np.ndarray:
        coeffs = np.array(poly.intt().tolist(centered=True), dtype=object).astype(np.float64)
        z = embed(coeffs / scale, self.params.n)
        if real:
            z = z.real.astype(np.complex128)
        return z

    # --- encryption -------------------------------------------------------------------------------
    def encrypt(
        self, values: Any, level: int | None = None, scale: float | None = None
    ) -> Ciphertext:
        """Encrypt a ``Plaintext``, or encode ``values`` (at ``level`` and ``scale``) and encrypt.

        The zero encryption is made over the key ring and divided by ``P``, so its noise is
        mostly the rounding of that division.

        Raises:
            RuntimeError: inside a ``ren.jit`` capture (a replay would reuse the randomness).
        """
        if _jit._capturing is not None:
            raise RuntimeError(
                f"ckks.encrypt was called inside the jitted function {_jit._capturing.name}: a "
                "replay would reuse the same randomness; encrypt outside the jitted function and "
                "pass the ciphertext in"
            )
        self._require_public()
        if isinstance(values, Plaintext):
            if level is not None or scale is not None:
                raise ValueError("level and scale are the plaintext's own; pass neither")
            pt = values
        else:
            pt = self.encode(values, level, scale)
        prm, l = self.params, pt.level
        Kl = prm.key_ring_at(l)
        v = Poly.ternary(Kl, self._rng, self.device).ntt()
        e0 = Poly.gaussian(Kl, prm.sigma, self._rng, self.device)
        e1 = Poly.gaussian(Kl, prm.sigma, self._rng, self.device)
        b, a = (k.to_ring(Kl) for k in self._public)
        c0 = (b * v + e0).rescale(prm.p_moduli) + pt.poly
        c1 = (a * v + e1).rescale(prm.p_moduli)
        return Ciphertext((c0.ntt(), c1.ntt()), pt.scale, l, pt.real, self)

    def decrypt(self, ct: Ciphertext) -> np.ndarray:
        """Decrypt and decode: the ``n/2`` slots, as ``numpy.complex128``.

        For a real message the imaginary parts are exactly 0.

        Raises:
            ValueError: when this context holds no secret key.
        """
        return self._decode_poly(self.decrypt_poly(ct), ct.scale, ct.real)

    def decrypt_poly(self, ct: Ciphertext) -> Poly:
        """The decrypted (still encoded) polynomial ``c_0 + c_1 s (+ c_2 s^2)``, lazily."""
        ct = self._own(ct)
        s = self._require_secret("decrypt").to_ring(self.params.ring(ct.level))
        m = ct.parts[0] + ct.parts[1] * s
        if ct.size == 3:
            m = m + ct.parts[2] * (s * s)
        return m

    # --- evaluation -------------------------------------------------------------------------------
    def _own(self, ct: Any) -> Ciphertext:
        if not isinstance(ct, Ciphertext):
            raise TypeError(f"expected a ckks.Ciphertext, got {type(ct).__name__}")
        other = ct.context
        if other is not None and other is not self and not self._same_keys(other):
            raise ValueError(
                "the ciphertext belongs to another CKKS context with other keys; decrypt it "
                "there, or send it here with to_bytes/from_bytes if the keys are the same"
            )
        return ct

    def _same_keys(self, other: Context) -> bool:
        if other.params != self.params:
            return False
        if self._secret is not None and other._secret is not None:
            return bool(np.array_equal(self._secret.limbs(), other._secret.limbs()))
        if self._public is None or other._public is None:
            return False
        return all(a.node is b.node for a, b in zip(self._public, other._public, strict=True))

    def _match(self, a: Ciphertext, level: int, scale: float, what: str) -> Ciphertext:
        """``a`` (above ``level``) at ``level`` with ``scale``.

        A view when the scales agree, else a scalar multiply by
        ``round(scale * q_(level+1) / a.scale)`` and a rescale from ``level + 1``.
        """
        if _same_scale(a.scale, scale):
            return a.at_level(level)
        a = a.at_level(level + 1)
        q = self.params.q_moduli[level + 1]
        k = round(scale * q / a.scale)
        if k < 2**20:
            raise ValueError(
                f"cannot {what} values at scales {_scale(a.scale)} and {_scale(scale)}: adjusting "
                f"the first needs a factor of {k}, too small to keep the precision"
            )
        out = dataclasses.replace(a, parts=tuple(p * k for p in a.parts)).rescale()
        return dataclasses.replace(out, scale=float(scale))

    def _add(self, a: Ciphertext, b: Any, sub: bool) -> Ciphertext:
        a = self._own(a)
        what = "subtract" if sub else "add"
        if isinstance(b, Ciphertext):
            b = self._own(b)
            if a.level > b.level:
                a = self._match(a, b.level, b.scale, what)
            elif b.level > a.level:
                b = self._match(b, a.level, a.scale, what)
            elif not _same_scale(a.scale, b.scale):
                raise ValueError(
                    f"cannot {what} ciphertexts at scales {_scale(a.scale)} and {_scale(b.scale)} "
                    f"(both at level {a.level}): encode or encrypt with scale= the other's scale"
                )
            n = max(a.size, b.size)
            pa = a.parts + (None,) * (n - a.size)
            pb = b.parts + (None,) * (n - b.size)
            parts = tuple(
                x if y is None else (-y if sub else y) if x is None else (x - y if sub else x + y)
                for x, y in zip(pa, pb, strict=True)
            )
            return Ciphertext(parts, a.scale, a.level, a.real and b.real, self)
        if isinstance(b, Plaintext):
            if b.level < a.level:
                a = a.at_level(b.level)
            b = b.at_level(a.level)
            if not _same_scale(a.scale, b.scale):
                raise ValueError(
                    f"cannot {what} a ciphertext at scale {_scale(a.scale)} and a plaintext at "
                    f"scale {_scale(b.scale)}: encode with scale=ct.scale"
                )
            c0 = a.parts[0] - b.poly if sub else a.parts[0] + b.poly
            return dataclasses.replace(a, parts=(c0, *a.parts[1:]), real=a.real and b.real)
        if _is_number(b):
            c = complex(b)
            if sub:
                c = -c
            ring = self.params.ring(a.level)
            c0 = a.parts[0] + _constant_poly(c, a.scale, ring, self.device)
            return dataclasses.replace(a, parts=(c0, *a.parts[1:]), real=a.real and c.imag == 0)
        if _is_values(b):
            pt = self.encode(b, a.level, a.scale)
            return self._add(a, pt, sub)
        return NotImplemented

    def multiply(
        self, a: Ciphertext, b: Any, relinearize: bool = True, rescale: bool = True
    ) -> Ciphertext:
        """``a * b`` for a ciphertext ``a`` and a ciphertext, plaintext, number or array ``b``.

        Args:
            a: the ciphertext.
            b: a ciphertext, plaintext, number, or array of slot values.
            relinearize: key switch a three-part product back to two parts.
            rescale: divide by the last modulus afterwards (one level down). A number or array
                ``b`` is then encoded at the scale ``q_level``, so the result keeps ``a``'s scale
                exactly; an ``int`` is multiplied exactly with no scale and no rescale.

        Raises:
            ValueError: at level 0 when rescaling, for a scale that outgrows the modulus, or for a
                ciphertext of three parts.
        """
        a = self._own(a)
        if rescale and isinstance(b, Ciphertext | Plaintext) and min(a.level, b.level) == 0:
            raise ValueError(_level0("multiply and rescale"))
        if isinstance(b, Ciphertext):
            b = self._own(b)
            if a.size != 2 or b.size != 2:
                raise ValueError("multiply needs two-part ciphertexts: relinearize first")
            level = min(a.level, b.level)
            a, b = a.at_level(level), b.at_level(level)
            (a0, a1), (b0, b1) = a.parts, b.parts
            parts = (a0 * b0, a0 * b1 + a1 * b0, a1 * b1)
            out = Ciphertext(parts, a.scale * b.scale, level, a.real and b.real, self)
            if relinearize:
                out = self.relinearize(out)
        elif is_int(b):
            return dataclasses.replace(a, parts=tuple(p * int(b) for p in a.parts))
        elif isinstance(b, Plaintext):
            level = min(a.level, b.level)
            a, b = a.at_level(level), b.at_level(level)
            parts = tuple(p * b.poly for p in a.parts)
            out = Ciphertext(parts, a.scale * b.scale, level, a.real and b.real, self)
        elif _is_number(b) or _is_values(b):
            if rescale and a.level == 0:
                raise ValueError(_level0("multiply by a number"))
            factor = float(self.params.q_moduli[a.level]) if rescale else self.params.scale
            if _is_number(b):
                c = complex(b)
                pc = _constant_poly(c, factor, self.params.ring(a.level), self.device)
                parts = tuple(p * pc for p in a.parts)
                real = a.real and c.imag == 0
                out = Ciphertext(parts, a.scale * factor, a.level, real, self)
            else:
                return self.multiply(a, self.encode(b, a.level, factor), relinearize, rescale)
        else:
            return NotImplemented
        self._check_scale_fits(out.scale, out.level)
        if rescale:
            out = self.rescale(out)
        return out

    def _check_scale_fits(self, scale: float, level: int) -> None:
        Q = self.params.ring(level).Q
        if scale >= Q / 2:
            raise ValueError(
                f"the scale {_bits(scale)} outgrows the modulus Q={_bits(Q)} at level {level}: "
                "rescale before multiplying again"
            )

    def rescale(self, ct: Ciphertext) -> Ciphertext:
        """Divide by ``q_level`` (rounding): one level down, the scale divided by the modulus.

        Raises:
            ValueError: at level 0.
        """
        ct = self._own(ct)
        if ct.level == 0:
            raise ValueError(_level0("rescale"))
        q = self.params.q_moduli[ct.level]
        parts = tuple(p.rescale(q).ntt() for p in ct.parts)
        out = dataclasses.replace(ct, parts=parts, level=ct.level - 1, scale=ct.scale / q)
        return out

    def relinearize(self, ct: Ciphertext) -> Ciphertext:
        """Two parts from three: ``c_2`` key switched from ``s^2`` to ``s`` (two parts: as is)."""
        ct = self._own(ct)
        if ct.size == 2:
            return ct
        self._require_public()
        k0, k1 = self.key_switch(ct.parts[2], self._relin, ct.level)
        parts = (ct.parts[0] + k0, ct.parts[1] + k1)
        return dataclasses.replace(ct, parts=parts)

    def rotate(self, ct: Ciphertext, steps: int) -> Ciphertext:
        """Slots moved left by ``steps`` (slot ``j + steps`` to slot ``j``)."""
        ct = self._own(ct)
        if not is_int(steps):
            raise TypeError(f"rotation steps must be an int, got {type(steps).__name__}")
        steps = int(steps) % self.params.slots
        if steps == 0:
            return ct
        return self._galois_apply(ct, galois_for_rotation(self.params.n, steps), f"rotate({steps})")

    def conjugate(self, ct: Ciphertext) -> Ciphertext:
        """Every slot complex-conjugated."""
        ct = self._own(ct)
        return self._galois_apply(ct, 2 * self.params.n - 1, "conjugate")

    def _galois_apply(self, ct: Ciphertext, g: int, what: str) -> Ciphertext:
        if ct.size != 2:
            raise ValueError(f"{what} needs a two-part ciphertext: relinearize first")
        with uncaptured():
            key = self.galois_key(g)
        c0, c1 = (p.automorphism(g) for p in ct.parts)
        k0, k1 = self.key_switch(c1, key, ct.level)
        return dataclasses.replace(ct, parts=(c0 + k0, k1))

    def key_switch(self, c: Poly, key: KeySwitchKey, level: int) -> tuple[Poly, Poly]:
        """``(d_0, d_1)`` with ``d_0 + d_1 s = c s' + e`` at ``level``, for the key from ``s'``.

        Each digit of ``c`` (its residues modulo the digit's moduli) is extended to the special
        moduli and the rest of the level (ModUp), multiplied by the key's pair, summed, and divided
        by ``P`` (ModDown, :meth:`mod_down`). The result is in NTT form.
        """
        prm = self.params
        Kl = prm.key_ring_at(level)
        c = c.intt()
        acc0 = acc1 = None
        for j, digit in enumerate(prm.digits):
            mods = tuple(prm.q_moduli[i] for i in digit if i <= level)
            if not mods:
                break
            part = c.to_ring(Kl.with_moduli(mods))
            up = part.to_ring(Kl).ntt()
            b, a = (k.to_ring(Kl) for k in key.parts[j])
            t0, t1 = up * b, up * a
            acc0 = t0 if acc0 is None else acc0 + t0
            acc1 = t1 if acc1 is None else acc1 + t1
        return self.mod_down(acc0, level), self.mod_down(acc1, level)

    def mod_down(self, x: Poly, level: int) -> Poly:
        """``round(x / P)`` at ``level``, in NTT form, for ``x`` over the key ring at ``level``.

        The special moduli's limbs alone go back to coefficients: ``r = x mod P`` (centered) is
        extended to ``Q_level`` and brought back to NTT form, and ``(x - r) P^-1`` is taken slot by
        slot over the ciphertext moduli. ``x - r`` is the multiple of ``P`` nearest to ``x``
        (``P`` is odd: there are no ties), so the words are those of ``x.rescale(p_moduli)``,
        but where the extension's float correction misjudges a value within about ``2^-50 P`` of
        a tie (the result is then one more or one less). It costs one inverse NTT of
        ``len(p_moduli)`` limbs where the rescale needs one of every limb, and an NTT.

        Raises:
            ValueError: if ``x`` is not over the key ring at ``level``.
        """
        prm = self.params
        Kl = prm.key_ring_at(level)
        if x.ring != Kl:
            raise ValueError(f"mod_down at level {level} needs a value over {Kl}, got {x.ring}")
        ring = prm.ring(level)
        x = x.ntt()
        special = Kl.with_moduli(prm.p_moduli)
        r = x.to_ring(special).intt().to_ring(ring).ntt()
        P = math.prod(prm.p_moduli)
        return (x.to_ring(ring) - r) * Poly.const(pow(P, -1, ring.Q), ring, x.device)


# ---------------------------------------------------------------------------------------------
# helpers of the evaluator


def _level0(what: str) -> str:
    return (
        f"cannot {what} at level 0: rescaling would drop below the last modulus q_0; use fewer "
        "multiplications or more moduli (q_bits)"
    )


def _same_scale(a: float, b: float) -> bool:
    return abs(a - b) <= 2.0**-40 * max(abs(a), abs(b))


def _check_scale(scale: Any) -> float:
    if not isinstance(scale, numbers.Real) or isinstance(scale, bool):
        raise TypeError(f"scale must be a number, got {scale!r}")
    scale = float(scale)
    if not 1.0 <= scale < 2.0**1000:
        raise ValueError(f"scale={scale} must be at least 1")
    return scale


def _is_number(x: Any) -> bool:
    return isinstance(x, numbers.Number) and not isinstance(x, bool | np.bool_)


def _is_values(x: Any) -> bool:
    return isinstance(x, list | tuple | np.ndarray)


def _slots(values: Any, slots: int) -> tuple[np.ndarray, bool]:
    """``values`` as ``slots`` complex numbers (zero-padded), and whether they are all real."""
    if _is_number(values):
        arr = np.full(slots, complex(values))
        real = complex(values).imag == 0
    else:
        try:
            raw = np.asarray(values)
        except (TypeError, ValueError):
            raise TypeError(f"values must be numbers, got {type(values).__name__}") from None
        if raw.dtype.kind not in "biufc" or raw.dtype.kind == "b":
            raise TypeError(f"values must be real or complex numbers, got dtype {raw.dtype}")
        if raw.ndim != 1:
            raise ValueError(f"values must be one-dimensional, got shape {raw.shape}")
        if raw.shape[0] > slots:
            raise ValueError(f"{raw.shape[0]} values do not fit the {slots} slots (n/2)")
        arr = np.zeros(slots, dtype=np.complex128)
        arr[: raw.shape[0]] = raw
        real = raw.dtype.kind != "c" or not np.any(raw.imag)
    if not np.all(np.isfinite(arr)):
        raise ValueError("values hold NaN or infinity")
    return arr, bool(real)


def _constant_poly(c: complex, scale: float, ring: RingSpec, device: str) -> Poly:
    """The encoding of ``c`` in every slot at ``scale``.

    That is ``round(Re c * scale)`` as a constant, plus ``round(Im c * scale) X^(n/2)``
    (``X^(n/2)`` is ``i`` in every slot).
    """
    re, im = round(c.real * scale), round(c.imag * scale)
    if im == 0:
        return Poly.const(re, ring, device)
    coeffs = [0] * ring.n
    coeffs[0], coeffs[ring.n // 2] = re, im
    return Poly(coeffs, ring, device)


# ---------------------------------------------------------------------------------------------
# the module-level API (the current context)


def encode(values: Any, level: int | None = None, scale: float | None = None) -> Plaintext:
    """``current().encode(values, level, scale)``."""
    return current().encode(values, level, scale)


def decode(pt: Plaintext) -> np.ndarray:
    """The slots of ``pt`` (in its own context)."""
    return pt._ctx().decode(pt)


def encrypt(values: Any, level: int | None = None, scale: float | None = None) -> Ciphertext:
    """``current().encrypt(values, level, scale)``: encrypt a plaintext or values."""
    return current().encrypt(values, level, scale)


def decrypt(ct: Ciphertext) -> np.ndarray:
    """Decrypt and decode ``ct`` (in its own context)."""
    if not isinstance(ct, Ciphertext):
        raise TypeError(f"decrypt takes a Ciphertext, got {type(ct).__name__}")
    return ct._ctx().decrypt(ct)


def multiply(a: Ciphertext, b: Any, relinearize: bool = True, rescale: bool = True) -> Ciphertext:
    """``a * b`` with explicit control; see ``Context.multiply``."""
    if not isinstance(a, Ciphertext):
        raise TypeError(f"multiply takes a Ciphertext first, got {type(a).__name__}")
    out = a._ctx().multiply(a, b, relinearize, rescale)
    if out is NotImplemented:
        raise TypeError(f"cannot multiply a ciphertext by a {type(b).__name__}")
    return out


def precision_bits(got: Any, expected: Any) -> float:
    """``-log2`` of the largest slot error ``|got - expected|``; ``inf`` for an exact match.

    This is the usual "bits of precision" of approximate homomorphic encryption.
    """
    err = float(np.max(np.abs(np.asarray(got) - np.asarray(expected))))
    return math.inf if err == 0 else -math.log2(err)


# ---------------------------------------------------------------------------------------------
# bytes: MAGIC | version u16 | kind length u8 | kind | header length u32 | header JSON
#        | payloads (each: length u64 | bytes) | SHA-256 of everything before


def _pack(kind: str, header: dict, payloads: list[bytes]) -> bytes:
    k = kind.encode()
    h = json.dumps(header, sort_keys=True).encode()
    parts = [_MAGIC, struct.pack("<HB", FORMAT_VERSION, len(k)), k, struct.pack("<I", len(h)), h]
    parts.append(struct.pack("<I", len(payloads)))
    for p in payloads:
        parts += [struct.pack("<Q", len(p)), p]
    body = b"".join(parts)
    return body + hashlib.sha256(body).digest()


def _unpack(blob: Any, kind: str) -> tuple[dict, list[bytes]]:
    if not isinstance(blob, bytes | bytearray | memoryview):
        raise TypeError(f"expected bytes, got {type(blob).__name__}")
    blob = bytes(blob)
    what = f"a Ren CKKS {kind} blob"
    if len(blob) < len(_MAGIC) + 3 + 32 or not blob.startswith(_MAGIC):
        raise ValueError(f"not {what}: it does not start with Ren's CKKS header")
    body, digest = blob[:-32], blob[-32:]
    (version, klen) = struct.unpack_from("<HB", body, len(_MAGIC))
    if version != FORMAT_VERSION:
        raise ValueError(
            f"{what} of format version {version}; this Ren reads version {FORMAT_VERSION}"
        )
    if hashlib.sha256(body).digest() != digest:
        raise ValueError(f"{what} is truncated or altered: its checksum does not match")
    pos = len(_MAGIC) + 3
    found = body[pos : pos + klen].decode(errors="replace")
    if found != kind:
        raise ValueError(f"expected {what}, got one holding a {found!r}")
    pos += klen
    try:
        (hlen,) = struct.unpack_from("<I", body, pos)
        header = json.loads(body[pos + 4 : pos + 4 + hlen])
        pos += 4 + hlen
        (count,) = struct.unpack_from("<I", body, pos)
        pos += 4
        payloads = []
        for _ in range(count):
            (size,) = struct.unpack_from("<Q", body, pos)
            pos += 8
            if pos + size > len(body):
                raise ValueError("a payload runs past the end")
            payloads.append(body[pos : pos + size])
            pos += size
    except (struct.error, ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"{what} is malformed: {e}") from None
    if pos != len(body):
        raise ValueError(f"{what} is malformed: {len(body) - pos} bytes after the last payload")
    return header, payloads


def _polys_from(
    header: dict, datas: list[bytes], rings: Sequence[RingSpec], device: str | None
) -> list[Poly]:
    heads = header.get("polys")
    if not isinstance(heads, list) or len(heads) != len(datas) or len(rings) != len(datas):
        raise ValueError("the blob's polynomial list does not match its payloads")
    out = []
    for i, (head, data, ring) in enumerate(zip(heads, datas, rings, strict=True)):
        if head.get("L") != ring.L or head.get("domain") not in ("coeff", "ntt"):
            raise ValueError(f"polynomial {i} of the blob does not match {ring!r}")
        if len(data) != 8 * ring.size:
            raise ValueError(
                f"polynomial {i} of the blob has {len(data)} bytes; {ring!r} needs {8 * ring.size}"
            )
        limbs = np.frombuffer(data, dtype="<u8").reshape(ring.L, ring.n)
        domain = Domain.NTT if head["domain"] == "ntt" else Domain.COEFF
        out.append(Poly.from_limbs(limbs, ring, domain, device))
    return out


def _read_values(blob: bytes, kind: str, ctx: Context) -> tuple[dict, list[Poly]]:
    header, datas = _unpack(blob, kind)
    params = Params._from_header(header["params"])
    if params != ctx.params:
        raise ValueError(f"the {kind} was written for {params}, not this context's {ctx.params}")
    level = header.get("level")
    if not is_int(level) or not 0 <= level <= params.max_level:
        raise ValueError(f"the {kind}'s level {level!r} is outside [0, {params.max_level}]")
    try:
        header["scale"] = float.fromhex(header["scale"])
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"the {kind}'s scale is not readable") from None
    if not 1.0 <= header["scale"] < 2.0**1000:
        raise ValueError(f"the {kind}'s scale {header['scale']} is out of range")
    if not isinstance(header.get("real"), bool):
        raise ValueError(f"the {kind}'s real flag is not readable")
    ring = params.ring(level)
    polys = _polys_from(header, datas, [ring] * len(datas), ctx.device)
    return header, polys
