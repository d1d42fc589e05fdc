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
* **Sharing.** The secret key leaves a ``Context`` only through ``export_secret_key()``: values
  pickle and copy as their bytes, a context holding a secret key refuses to be pickled or copied,
  and every value made under keys carries the fingerprint of the public key, checked wherever it
  is used. ``with ckks.Context(...)`` sets the current context of the current thread only.
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import math
import numbers
import threading
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from ren.device import canonical_device
from ren.engine.jit import capturing
from ren.engine.realize import uncaptured
from ren.poly import Poly, is_int, realize
from ren.ring import Domain, RingSpec, galois_for_rotation, ntt_primes, sampling
from ren.schemes import ckks_bytes as _fmt
from ren.schemes.ckks_bytes import FORMAT_VERSION as FORMAT_VERSION

__all__ = [
    "MIN_SIGMA",
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

#: The smallest error deviation the table holds for: ``8 / sqrt(2 pi) = 3.19...``, the HE
#: standard's. A smaller error gives the secret key away (with none, ``s = -b/a`` slot by slot).
MIN_SIGMA: float = 8 / math.sqrt(2 * math.pi)


def _bits(x: float) -> str:
    """A modulus or coefficient size as ``2^k`` (exact for an int of any size)."""
    if isinstance(x, float) and not math.isfinite(x):
        return "more than 2^1024"
    return f"2^{math.log2(x):.6f}" if x > 0 else str(x)


def _scale(x: float) -> str:
    """A scale, exactly: ``2^k`` and the float itself (two scales may agree to many digits)."""
    return f"2^{math.log2(x):.6f} ({x!r})" if x > 0 else repr(x)


def _need_int(name: str, value: Any) -> int:
    """``value`` as an int; a bool, a float or anything else is a ``TypeError`` naming ``name``."""
    if not is_int(value):
        raise TypeError(f"{name} must be an int, got {_fmt.describe(value)}")
    return int(value)


# ---------------------------------------------------------------------------------------------
# parameters


def _bits_tuple(name: str, value: Any) -> tuple[int, ...]:
    if is_int(value):
        raise TypeError(f"{name} must be a sequence of bit sizes, got the int {value}")
    if isinstance(value, str | bytes | dict) or not isinstance(value, Sequence | np.ndarray):
        raise TypeError(f"{name} must be a sequence of ints, got {_fmt.describe(value)}")
    items = tuple(value)
    if not items:
        raise ValueError(f"{name} is empty: it needs at least one bit size")
    for b in items:
        if not is_int(b):
            raise TypeError(f"{name} holds {b!r}; bit sizes must be ints")
        if not 10 <= b <= 62:
            raise ValueError(f"{name} holds {b}: moduli must have 10 to 62 bits")
    return tuple(int(b) for b in items)


_PARAM_FIELDS = (
    "dnum",
    "hamming_weight",
    "insecure",
    "moduli",
    "n",
    "p_bits",
    "q_bits",
    "scale_bits",
    "sigma",
)


@dataclasses.dataclass(frozen=True)
class Params:
    """CKKS parameters: the moduli are found at construction, then the parameters are checked.

    The moduli are the largest NTT-friendly primes of each bit size, the special moduli taking the
    largest. Unless ``insecure=True``, the whole key distribution is checked against the HE
    standard for 128-bit security: ``log2(QP)`` at most ``SECURITY_BOUNDS[n]``, a uniform ternary
    secret (no ``hamming_weight``), and ``sigma`` at least ``MIN_SIGMA`` (3.19).

    A ``Params`` is a value: equal arguments give equal parameters; it pickles as its arguments
    (unpickling checks them again) and copies as itself.

    Args:
        n: ring degree, a power of two >= 4; ``n/2`` slots.
        q_bits: bit sizes (ints, 10 to 62) of the ciphertext moduli ``q_0, ..., q_{L-1}``.
            ``q_0`` holds the result at the last level, the others are divided out one per
            rescale (size them like the scale).
        p_bits: bit sizes of the special moduli used by key switching.
        scale_bits: the default scale is ``2**scale_bits``; an int from 1 to ``q_bits[0] - 1``.
        dnum: number of key-switching digits, an int from 1 to ``L`` (default: one per ciphertext
            modulus, the least noise). The product of the special moduli must have at least as
            many bits as the largest digit.
        insecure: ``True`` or ``False``: allow parameters beyond the HE-standard bound for 128-bit
            security (tests and teaching on tiny rings).
        hamming_weight: ``None`` for a uniform ternary secret, or the exact number of nonzero
            coefficients of a sparse one, an int in ``[1, n]`` (needs ``insecure=True``: the
            security table does not cover sparse secrets).
        sigma: standard deviation of the error distribution, a finite real number in
            ``(0, 10^6)``; at least ``MIN_SIGMA`` (3.19) unless ``insecure=True``.

    Raises:
        TypeError: for an argument of the wrong type (a bool where a number is expected
            included), naming the argument.
        ValueError: for a value out of range, naming the argument and the rule it breaks; a
            security error gives ``log2(QP)`` and the bound, or ``sigma`` and 3.19.
    """

    #: ``ren.jit`` takes it as one part of a plan's key (a hashable value, holding no Poly).
    __ren_jit_leaf__: ClassVar[bool] = True

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
        n = _need_int("n", self.n)
        if n < 4 or n & (n - 1):
            raise ValueError(f"n={n} must be a power of two >= 4")
        set_("n", n)
        set_("q_bits", _bits_tuple("q_bits", self.q_bits))
        set_("p_bits", _bits_tuple("p_bits", self.p_bits))
        set_("scale_bits", _need_int("scale_bits", self.scale_bits))
        if not 1 <= self.scale_bits < self.q_bits[0]:
            raise ValueError(
                f"scale_bits={self.scale_bits} must be at least 1 and below q_bits[0]="
                f"{self.q_bits[0]}: the first modulus holds the values at the scale at level 0"
            )
        L = len(self.q_bits)
        dnum = L if self.dnum is None else _need_int("dnum", self.dnum)
        if not 1 <= dnum <= L:
            raise ValueError(f"dnum={dnum} must be an int from 1 to len(q_bits)={L}")
        set_("dnum", dnum)
        if not isinstance(self.insecure, bool):
            raise TypeError(f"insecure must be True or False, got {_fmt.describe(self.insecure)}")
        if self.hamming_weight is not None:
            weight = _need_int("hamming_weight", self.hamming_weight)
            if not 1 <= weight <= n:
                raise ValueError(f"hamming_weight={weight} must be None or in [1, n={n}]")
            set_("hamming_weight", weight)
        set_("sigma", _check_sigma(self.sigma))

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
        if not self.insecure:
            self._check_security()

    def _check_security(self) -> None:
        """The HE standard's rule for 128-bit security: ternary secret, table bound, sigma."""
        if self.hamming_weight is not None:
            raise ValueError(
                f"hamming_weight={self.hamming_weight}: the HE-standard table covers uniform "
                "ternary secrets only, and a sparse secret is easier to attack; pass "
                "insecure=True to use one (for tests, teaching and experiments)"
            )
        bound = SECURITY_BOUNDS.get(self.n)
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
        if self.sigma < MIN_SIGMA:
            raise ValueError(
                f"sigma={self.sigma!r} is below 3.19 (8/sqrt(2*pi) = {MIN_SIGMA:.4f}), the "
                "HE standard's smallest error deviation: with a smaller error the public key "
                "gives the secret key away (with no error, s = -b/a slot by slot); use sigma >= "
                "3.19 (the default is 3.2), or insecure=True (for tests and teaching only)"
            )

    def __reduce__(self) -> tuple:
        # a value: pickled as its arguments, so unpickling runs every check again
        args = (self.n, self.q_bits, self.p_bits, self.scale_bits, self.dnum, self.insecure)
        return (Params, (*args, self.hamming_weight, self.sigma))

    def __copy__(self) -> Params:
        return self

    def __deepcopy__(self, memo: dict) -> Params:
        return self

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
        size = -(-L // (self.dnum or L))  # dnum is set by now; None would mean L
        return tuple(tuple(range(i, min(i + size, L))) for i in range(0, L, size))

    @functools.cached_property
    def key_ring(self) -> RingSpec:
        """The ring of the keys: the special moduli, then every ciphertext modulus."""
        return RingSpec(self.n, self.p_moduli + self.q_moduli)

    @functools.cached_property
    def _rings(self) -> tuple[tuple[RingSpec, RingSpec], ...]:
        """For each level: its ring and the key ring cut to it.

        Made once: a ring checks its moduli for primality when made.
        """
        return tuple(
            (
                self.key_ring.with_moduli(self.q_moduli[: level + 1]),
                self.key_ring.with_moduli(self.p_moduli + self.q_moduli[: level + 1]),
            )
            for level in range(self.L)
        )

    def ring(self, level: int) -> RingSpec:
        """The ring of a value at ``level``: moduli ``q_0 .. q_level``."""
        self._check_level(level)
        return self._rings[level][0]

    def key_ring_at(self, level: int) -> RingSpec:
        """The key ring cut to ``level``: the special moduli, then ``q_0 .. q_level``.

        It is a prefix of ``key_ring``, so a view.
        """
        self._check_level(level)
        return self._rings[level][1]

    def _check_level(self, level: int) -> None:
        if not is_int(level):
            raise TypeError(f"level must be an int, got {_fmt.describe(level)}")
        if not 0 <= level <= self.max_level:
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
    def _from_header(cls, value: Any, *, insecure: bool, reader: str) -> Params:
        """The parameters a blob's header gives, every field checked.

        Args:
            value: the header's ``params`` entry, as parsed.
            insecure: whether the reader accepts parameters marked ``insecure=True``.
            reader: the function the reader called, for the message that says how to opt in.

        Raises:
            ValueError: for any field of the wrong type or out of range, parameters the
                constructor refuses, moduli other than the ones these parameters give, or
                parameters marked insecure that the reader did not opt in to.
        """
        h = _fmt.Header(value, "the blob's parameters", _PARAM_FIELDS)
        n = h.integer("n", 4, 2**30)
        q_bits, p_bits = h.int_list("q_bits", 10, 62), h.int_list("p_bits", 10, 62)
        scale_bits = h.integer("scale_bits", 1, 61)
        dnum = h.integer("dnum", 1, _fmt.MAX_MODULI)
        marked_insecure = h.flag("insecure")
        hamming_weight = h.optional_int("hamming_weight", 1, n)
        sigma = h.number("sigma", 0.0, 1e6)
        moduli = h.moduli("moduli")
        if marked_insecure and not insecure:
            raise ValueError(
                "the blob's parameters are marked insecure=True (beyond the HE-standard table, "
                f"for tests and teaching); {reader} refuses them unless its reader opts in: "
                f"pass insecure=True to {reader}"
            )
        try:
            params = cls(
                n, q_bits, p_bits, scale_bits, dnum, marked_insecure, hamming_weight, sigma
            )
        except (TypeError, ValueError, OverflowError) as e:
            raise ValueError(f"the blob's CKKS parameters are not valid: {e}") from None
        if moduli != params.p_moduli + params.q_moduli:
            raise ValueError(
                "the blob's moduli differ from the ones these parameters give (written by a Ren "
                "that chose primes differently)"
            )
        return params

    def to_bytes(self) -> bytes:
        """The parameters in Ren's versioned, checksummed CKKS format."""
        return _fmt.pack("params", {"params": self._header()}, [])

    @classmethod
    def from_bytes(cls, blob: bytes, *, insecure: bool = False) -> Params:
        """Read parameters written by ``to_bytes``, checked as the constructor checks them.

        Args:
            blob: the bytes.
            insecure: accept parameters marked ``insecure=True`` (tiny rings for tests and
                teaching). Without it such a blob is refused: the reader opts in, not the blob.

        Raises:
            TypeError: when ``blob`` is not bytes or ``insecure`` not a bool.
            ValueError: a truncated, altered or foreign blob, a version this Ren cannot read,
                parameters the constructor refuses, or insecure parameters without the opt-in.
        """
        if not isinstance(insecure, bool):
            raise TypeError(f"insecure must be True or False, got {_fmt.describe(insecure)}")
        header, payloads = _fmt.unpack(blob, "params")
        h = _fmt.Header(header, "the params blob's header", ("params",))
        if payloads:
            raise ValueError(f"a params blob holds no payloads, this one {len(payloads)}")
        return cls._from_header(h.raw("params"), insecure=insecure, reader="Params.from_bytes")


def _check_sigma(sigma: Any) -> float:
    """``sigma`` as a finite float in ``(0, 10^6)`` (the samplers' check, then CKKS's bound)."""
    value = sampling.check_sigma(sigma)
    if not value < 1e6:
        raise ValueError(f"sigma={value!r} must be a positive number below 10^6")
    return value


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


def _check_fields(value: Plaintext | Ciphertext, ring: RingSpec, what: str) -> None:
    """Check and normalize the fields a plaintext and a ciphertext share.

    ``context`` and ``params`` (filled from the context when not given), ``level`` (its ring must
    be the polynomials' ring), ``scale`` (finite, positive, below ``Q/2``) and ``real``.
    """
    set_ = functools.partial(object.__setattr__, value)
    ctx = value.context
    if ctx is not None and not isinstance(ctx, Context):
        raise TypeError(f"context must be a ckks.Context or None, got {_fmt.describe(ctx)}")
    params = value.params
    if params is not None and not isinstance(params, Params):
        raise TypeError(f"params must be a ckks.Params or None, got {_fmt.describe(params)}")
    if ctx is not None:
        if params is None:
            params = ctx.params
            set_("params", params)
        elif params != ctx.params:
            raise ValueError(f"the {what}'s params {params} are not its context's {ctx.params}")
    level = _need_int("level", value.level)
    if level < 0:
        raise ValueError(f"level={level} is negative: levels are 0 .. L-1")
    set_("level", level)
    if params is not None:
        params._check_level(level)
        if ring != params.ring(level):
            raise ValueError(
                f"a {what} at level {level} lives in {params.ring(level)!r}, but its polynomials "
                f"are over {ring!r}"
            )
    elif level + 1 != ring.L:
        raise ValueError(
            f"a {what} at level {level} needs {level + 1} limbs (q_0 .. q_{level}), but its "
            f"polynomials are over {ring!r}"
        )
    scale = value.scale
    if isinstance(scale, bool | np.bool_) or not isinstance(scale, numbers.Real):
        raise TypeError(f"scale must be a number, got {_fmt.describe(scale)}")
    try:
        scale = float(scale)
    except OverflowError:
        scale = math.inf
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale={scale!r} must be a finite positive number")
    Q = ring.Q
    if 2 * scale >= Q:
        raise ValueError(
            f"the scale {_bits(scale)} outgrows the modulus Q={_bits(Q)} at level {level} (a "
            "scale must stay below Q/2): rescale before multiplying again"
        )
    set_("scale", scale)
    if not isinstance(value.real, bool | np.bool_):
        raise TypeError(f"real must be True or False, got {_fmt.describe(value.real)}")
    set_("real", bool(value.real))


def _copy_poly(p: Poly) -> Poly:
    """A new stored poly with the value of ``p`` (its own buffer; computed first if lazy)."""
    return Poly.from_words(p.words(), p.ring, p.domain, p.device)


@dataclasses.dataclass(frozen=True, eq=False)
class Plaintext:
    """An encoded vector: one ``Poly`` (NTT form) at ``level`` whose slots hold ``values * scale``.

    The constructor checks the fields (``TypeError`` for a wrong type, ``ValueError`` for a level
    whose ring is not the poly's, or a scale that is not finite, positive and below ``Q/2``).
    ``==`` is identity, as for every CKKS value: compare the decoded slots. ``pickle`` and
    ``copy.deepcopy`` copy the value (pickle through ``to_bytes``); ``copy.copy`` and
    ``copy.deepcopy`` keep the same ``context``.

    Attributes:
        poly: the polynomial, in the ring of ``level``.
        scale: the exact scale the values were multiplied by.
        level: ``0 .. L-1``.
        real: whether the values are real (decoding then returns imaginary parts of exactly 0).
        context: the ``Context`` it was made in (``None`` once unpickled: the current one).
        params: the ``Params`` it was made for (the context's; kept through pickle).
    """

    poly: Poly
    scale: float
    level: int
    real: bool = False
    context: Context | None = dataclasses.field(default=None, repr=False)
    params: Params | None = dataclasses.field(default=None, repr=False, kw_only=True)

    __array_ufunc__ = None  # NumPy defers to the operators instead of broadcasting over them

    def __post_init__(self) -> None:
        if not isinstance(self.poly, Poly):
            raise TypeError(f"poly must be a Poly, got {_fmt.describe(self.poly)}")
        _check_fields(self, self.poly.ring, "plaintext")

    def _ctx(self) -> Context:
        return self.context if self.context is not None else current()

    def _params(self) -> Params:
        return self.params if self.params is not None else self._ctx().params

    def __copy__(self) -> Plaintext:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    def __deepcopy__(self, memo: dict) -> Plaintext:
        new = dataclasses.replace(self, poly=_copy_poly(self.poly))
        memo[id(self)] = new
        return new

    def __reduce__(self) -> tuple:
        return (_plaintext_from_pickle, (self.to_bytes(), self.poly.device))

    def at_level(self, level: int) -> Plaintext:
        """The same plaintext at a lower ``level`` (a limb view)."""
        if level == self.level:
            return self
        _check_down(self.level, level, "plaintext")
        ring = self._params().ring(level)
        return dataclasses.replace(self, poly=self.poly.to_ring(ring), level=level)

    def decode(self) -> np.ndarray:
        """The slots (``numpy.complex128``, ``n/2`` of them)."""
        return self._ctx().decode(self)

    def to_bytes(self) -> bytes:
        """This plaintext in Ren's versioned, checksummed CKKS format."""
        head, data = _fmt.poly_record(self.poly)
        header = {
            "params": self._params()._header(),
            "scale": self.scale.hex(),
            "level": self.level,
            "real": self.real,
            "polys": [head],
        }
        return _fmt.pack("plaintext", header, [data])

    @classmethod
    def from_bytes(cls, blob: bytes, context: Context | None = None) -> Plaintext:
        """Read a plaintext into ``context`` (default: the current one).

        The blob must have been written with the context's parameters.

        Raises:
            TypeError: when ``blob`` is not bytes or ``context`` not a ``Context``.
            ValueError: a truncated, altered, malformed or foreign blob, or other parameters.
        """
        ctx = _context_arg(context)
        _, h, polys = _read_value(blob, "plaintext", ctx.params, ctx.device)
        return cls(polys[0], h.hex_float("scale"), h.raw("level"), h.raw("real"), ctx)


@dataclasses.dataclass(frozen=True, eq=False)
class Ciphertext:
    """An encryption: polys ``c_0, c_1`` (and ``c_2`` before relinearization) in NTT form.

    The polys are at ``level``, with ``c_0 + c_1 s (+ c_2 s^2) = m + e`` for the encoded message
    ``m`` at ``scale``.

    Operators: ``+``, ``-`` and unary ``-`` with ciphertexts, plaintexts, numbers and arrays;
    ``*`` relinearizes and rescales (see ``multiply`` for control). Operands at different levels
    are brought to the lower one. A NumPy array on the left (``np.ones(k) * ct``) is encoded as
    slot values, as on the right. ``==`` is identity: decrypt to compare values.

    The constructor checks the fields: 2 or 3 ``Poly`` parts over one ring and device
    (``TypeError``/``ValueError``), a level whose ring is theirs, a finite positive scale below
    ``Q/2``. A ciphertext made in a context takes the context's ``params`` and ``key_fingerprint``.
    ``pickle`` sends its bytes (never a key); the unpickled ciphertext has no ``context`` and keeps
    its ``params`` and ``key_fingerprint``, which the context that computes on it checks.
    ``copy.copy`` and ``copy.deepcopy`` keep the same ``context`` (``deepcopy`` copies the parts'
    values).

    Attributes:
        parts: the polys ``(c_0, c_1)`` or ``(c_0, c_1, c_2)``.
        scale: the exact scale of the message.
        level: ``0 .. L-1``.
        real: whether the message is real.
        context: the ``Context`` whose keys it is under (``None`` once unpickled: the current
            one, checked against ``params`` and ``key_fingerprint``).
        params: the ``Params`` it was made for.
        key_fingerprint: the fingerprint of the public key it was made under (16 hexadecimal
            digits), or ``None`` for one built by hand outside a context holding keys.
    """

    parts: tuple[Poly, ...]
    scale: float
    level: int
    real: bool = False
    context: Context | None = dataclasses.field(default=None, repr=False)
    params: Params | None = dataclasses.field(default=None, repr=False, kw_only=True)
    key_fingerprint: str | None = dataclasses.field(default=None, repr=False, kw_only=True)

    __array_ufunc__ = None  # NumPy defers to __radd__/__rmul__: an array becomes slot values

    def __post_init__(self) -> None:
        parts = self.parts
        if isinstance(parts, Poly) or not isinstance(parts, tuple | list):
            raise TypeError(
                f"parts must be a tuple of 2 or 3 Poly values, got {_fmt.describe(parts)}"
            )
        parts = tuple(parts)
        for i, p in enumerate(parts):
            if not isinstance(p, Poly):
                raise TypeError(f"parts[{i}] is a {type(p).__name__}; the parts are Poly values")
        if len(parts) not in (2, 3):
            raise ValueError(
                f"a ciphertext has 2 parts (c_0, c_1), or 3 (c_0, c_1, c_2) before "
                f"relinearization; got {len(parts)}"
            )
        ring, device = parts[0].ring, parts[0].device
        for i, p in enumerate(parts[1:], 1):
            if p.ring != ring:
                raise ValueError(
                    f"parts[{i}] is over {p.ring!r} and parts[0] over {ring!r}: the parts of a "
                    "ciphertext share one ring"
                )
            if p.device != device:
                raise ValueError(
                    f"parts[{i}] is on {p.device!r} and parts[0] on {device!r}: the parts of a "
                    "ciphertext live on one device"
                )
        object.__setattr__(self, "parts", parts)
        _check_fields(self, ring, "ciphertext")
        fp = self.key_fingerprint
        if fp is not None and (not isinstance(fp, str) or not _fmt.FINGERPRINT.fullmatch(fp)):
            raise ValueError(f"key_fingerprint must be 16 hexadecimal digits, got {fp!r}")
        if self.context is not None:
            mine = self.context.key_fingerprint
            if fp is None:
                object.__setattr__(self, "key_fingerprint", mine)
            elif mine is not None and fp != mine:
                raise ValueError(
                    f"the ciphertext's key fingerprint {fp} is not its context's {mine}: it was "
                    "made under other keys"
                )

    # --- facts ----------------------------------------------------------------------------------
    def _ctx(self) -> Context:
        return self.context if self.context is not None else current()

    def _params(self) -> Params:
        return self.params if self.params is not None else self._ctx().params

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

    # --- copies ---------------------------------------------------------------------------------
    def __copy__(self) -> Ciphertext:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    def __deepcopy__(self, memo: dict) -> Ciphertext:
        new = dataclasses.replace(self, parts=tuple(_copy_poly(p) for p in self.parts))
        memo[id(self)] = new
        return new

    def __reduce__(self) -> tuple:
        return (_ciphertext_from_pickle, (self.to_bytes(), self.parts[0].device))

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
        ring = self._params().ring(level)
        return dataclasses.replace(
            self, parts=tuple(p.to_ring(ring) for p in self.parts), level=level
        )

    def decrypt(self) -> np.ndarray:
        """Decrypt and decode (needs the secret key): ``n/2`` complex slots."""
        return self._ctx().decrypt(self)

    # --- bytes ------------------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """This ciphertext in Ren's versioned, checksummed CKKS format, with its key fingerprint.

        Raises:
            ValueError: for a ciphertext with no key fingerprint (built by hand, outside a context
                holding keys): a reader could not tell which keys it is under.
        """
        fp = self.key_fingerprint
        if fp is None:
            fp = self._ctx().key_fingerprint
        if fp is None:
            raise ValueError(
                "this ciphertext has no key fingerprint (it was built outside a context holding "
                "keys), so its bytes could not say which keys it is under; make it in a context "
                "with keys"
            )
        heads, datas = zip(*(_fmt.poly_record(p) for p in self.parts), strict=True)
        header = {
            "params": self._params()._header(),
            "scale": self.scale.hex(),
            "level": self.level,
            "real": self.real,
            "key_fingerprint": fp,
            "polys": list(heads),
        }
        return _fmt.pack("ciphertext", header, list(datas))

    @classmethod
    def from_bytes(cls, blob: bytes, context: Context | None = None) -> Ciphertext:
        """Read a ciphertext into ``context`` (default: the current one).

        The blob must have been written with the context's parameters and under its keys: the
        blob's key fingerprint must be the context's (a context made with ``keys=`` the client's
        evaluation keys, or ``secret_key=`` the client's exported secret key, has it).

        Raises:
            TypeError: when ``blob`` is not bytes or ``context`` not a ``Context``.
            ValueError: a truncated, altered, malformed or foreign blob, other parameters, a
                context holding no keys, or a context holding other keys (naming both
                fingerprints).
        """
        ctx = _context_arg(context)
        _, h, polys = _read_value(blob, "ciphertext", ctx.params, ctx.device)
        fp = h.fingerprint("key_fingerprint")
        ctx._check_fingerprint(fp, "ciphertext")
        return cls(tuple(polys), h.hex_float("scale"), h.raw("level"), h.raw("real"), ctx)


def _check_down(level: int, target: int, what: str) -> None:
    if not is_int(target):
        raise TypeError(f"level must be an int, got {_fmt.describe(target)}")
    if not 0 <= target <= level:
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
    ciphertext moduli. It is public: it pickles as its words.

    Attributes:
        galois: the Galois element ``g`` of a rotation or conjugation key (``s' = s(X^g)``), or
            ``None`` for the relinearization key (``s' = s^2``).
        parts: the ``(b_j, a_j)`` pairs.
    """

    __slots__ = ("galois", "parts")

    def __init__(self, galois: int | None, parts: tuple[tuple[Poly, Poly], ...]):
        if galois is not None and not is_int(galois):
            raise TypeError(f"galois must be an int or None, got {_fmt.describe(galois)}")
        pairs = tuple(tuple(pair) for pair in parts)
        if not pairs or any(len(pair) != 2 for pair in pairs):
            raise ValueError("a key-switching key has one (b, a) pair per digit")
        for pair in pairs:
            for p in pair:
                if not isinstance(p, Poly):
                    raise TypeError(f"the key's parts are Poly values, got {_fmt.describe(p)}")
        self.galois = None if galois is None else int(galois)
        self.parts: tuple[tuple[Poly, Poly], ...] = tuple((b, a) for b, a in pairs)

    def __repr__(self) -> str:
        what = "relinearization" if self.galois is None else f"galois g={self.galois}"
        return f"<KeySwitchKey {what}, {len(self.parts)} digits>"

    def _to_bytes(self) -> bytes:
        ring = self.parts[0][0].ring
        heads, datas = zip(*(_fmt.poly_record(p) for pair in self.parts for p in pair), strict=True)
        header = {
            "n": ring.n,
            "moduli": [str(q) for q in ring.moduli],
            "galois": self.galois,
            "polys": list(heads),
        }
        return _fmt.pack("switch-key", header, list(datas))

    @classmethod
    def _from_bytes(cls, blob: bytes, device: str | None) -> KeySwitchKey:
        header, datas = _fmt.unpack(blob, "switch-key")
        h = _fmt.Header(header, "the switch-key blob's header", ("galois", "moduli", "n", "polys"))
        n = h.integer("n", 4, 2**30)
        try:
            ring = RingSpec(n, h.moduli("moduli"))
        except (TypeError, ValueError) as e:
            raise ValueError(f"the switch-key blob's ring is not valid: {e}") from None
        galois = h.optional_int("galois", 1, 2 * n - 1)
        if galois is not None and galois % 2 == 0:
            raise ValueError(f"the switch-key blob's Galois element {galois} is even")
        if not datas or len(datas) % 2:
            raise ValueError("the switch-key blob holds no pairs of polynomials")
        polys = _fmt.read_polys(h, datas, [ring] * len(datas), device)
        return cls(galois, tuple(zip(polys[::2], polys[1::2], strict=True)))

    def __reduce__(self) -> tuple:
        return (KeySwitchKey._from_bytes, (self._to_bytes(), self.parts[0][0].device))

    def __copy__(self) -> KeySwitchKey:
        return KeySwitchKey(self.galois, self.parts)

    def __deepcopy__(self, memo: dict) -> KeySwitchKey:
        return KeySwitchKey._from_bytes(self._to_bytes(), self.parts[0][0].device)


class EvaluationKeys:
    """The public keys a server needs.

    They are the public key, the relinearization key, and the rotation and conjugation keys made
    so far. ``Context(params, keys=...)`` evaluates with them (no secret key: it cannot decrypt or
    make new rotation keys). They pickle as their bytes (``to_bytes``).

    Args:
        params: the ``Params``.
        public: the public key ``(b, a)``.
        relin: the relinearization key.
        galois: the rotation and conjugation keys by Galois element.
    """

    __slots__ = ("_fingerprint", "galois", "params", "public", "relin")

    def __init__(
        self,
        params: Params,
        public: tuple[Poly, Poly],
        relin: KeySwitchKey,
        galois: dict[int, KeySwitchKey],
    ):
        if not isinstance(params, Params):
            raise TypeError(f"params must be a ckks.Params, got {_fmt.describe(params)}")
        pair = tuple(public)
        if len(pair) != 2 or not all(isinstance(p, Poly) for p in pair):
            raise TypeError("public must be the pair (b, a) of Poly values")
        if not isinstance(relin, KeySwitchKey):
            raise TypeError(f"relin must be a KeySwitchKey, got {_fmt.describe(relin)}")
        if not isinstance(galois, dict) or not all(
            is_int(g) and isinstance(k, KeySwitchKey) for g, k in galois.items()
        ):
            raise TypeError("galois must be a dict from Galois elements (ints) to KeySwitchKeys")
        self.params = params
        self.public: tuple[Poly, Poly] = (pair[0], pair[1])
        self.relin = relin
        self.galois = dict(galois)
        self._fingerprint: str | None = None

    def __repr__(self) -> str:
        return f"<EvaluationKeys n={self.params.n}, galois={sorted(self.galois)}>"

    @property
    def fingerprint(self) -> str:
        """The key fingerprint: 16 hexadecimal digits of the SHA-256 of the public key's words.

        Every ciphertext made under these keys carries it; it is computed once.
        """
        if self._fingerprint is None:
            self._fingerprint = _fmt.fingerprint(self.public)
        return self._fingerprint

    def __reduce__(self) -> tuple:
        return (_evaluation_keys_from_pickle, (self.to_bytes(), self.public[0].device))

    def to_bytes(self) -> bytes:
        """The keys in Ren's versioned, checksummed CKKS format (never the secret key)."""
        keys = [self.relin, *(self.galois[g] for g in sorted(self.galois))]
        polys = [*self.public] + [p for k in keys for pair in k.parts for p in pair]
        heads, datas = zip(*(_fmt.poly_record(p) for p in polys), strict=True)
        header = {
            "params": self.params._header(),
            "galois": [k.galois for k in keys],
            "key_fingerprint": self.fingerprint,
            "polys": list(heads),
        }
        return _fmt.pack("evaluation-keys", header, list(datas))

    @classmethod
    def from_bytes(
        cls, blob: bytes, device: str | None = None, *, insecure: bool = False
    ) -> EvaluationKeys:
        """Read keys written by ``to_bytes`` (onto ``device``).

        Args:
            blob: the bytes.
            device: where the keys live (default ``$REN_DEVICE``).
            insecure: accept keys for parameters marked ``insecure=True`` (the reader's opt-in,
                as for ``Params.from_bytes``).

        Raises:
            TypeError: when ``blob`` is not bytes or ``insecure`` not a bool.
            ValueError: a truncated, altered, malformed or foreign blob, insecure parameters
                without the opt-in, or a public key whose fingerprint is not the header's.
        """
        if not isinstance(insecure, bool):
            raise TypeError(f"insecure must be True or False, got {_fmt.describe(insecure)}")
        header, datas = _fmt.unpack(blob, "evaluation-keys")
        fields = ("galois", "key_fingerprint", "params", "polys")
        h = _fmt.Header(header, "the evaluation-key blob's header", fields)
        reader = "EvaluationKeys.from_bytes"
        params = Params._from_header(h.raw("params"), insecure=insecure, reader=reader)
        fp = h.fingerprint("key_fingerprint")
        galois = h.entries("galois", 1, 1 + params.n)
        if galois[0] is not None:
            raise ValueError("the evaluation-key blob's first key is not the relinearization key")
        two_n = 2 * params.n
        for g in galois[1:]:
            if not is_int(g) or not 1 <= g < two_n or g % 2 == 0:
                raise ValueError(
                    f"the evaluation-key blob names the Galois element {_fmt.describe(g)}; "
                    f"Galois elements are odd ints in [1, 2n={two_n})"
                )
        if len(set(galois[1:])) != len(galois) - 1:
            raise ValueError("the evaluation-key blob names a Galois element twice")
        digits = len(params.digits)
        count = 2 + 2 * digits * len(galois)
        polys = _fmt.read_polys(h, datas, [params.key_ring] * count, device)
        keys = []
        for i, g in enumerate(galois):
            base = 2 + 2 * digits * i
            pairs = tuple((polys[base + 2 * j], polys[base + 2 * j + 1]) for j in range(digits))
            keys.append(KeySwitchKey(g, pairs))
        rotations = {int(g): k for g, k in zip(galois[1:], keys[1:], strict=True)}
        out = cls(params, (polys[0], polys[1]), keys[0], rotations)
        if out.fingerprint != fp:
            raise ValueError(
                f"the evaluation-key blob's public key has the fingerprint {out.fingerprint}, "
                f"and its header says {fp}: the blob was altered"
            )
        return out


# ---------------------------------------------------------------------------------------------
# the context

#: The active contexts of this thread (or asyncio task), innermost last.
_ACTIVE: contextvars.ContextVar[tuple[Context, ...]] = contextvars.ContextVar(
    "ren_ckks_active", default=()
)


def current() -> Context:
    """The innermost active ``Context`` of this thread (``with ckks.Context(...)``).

    Each thread has its own: a ``with`` block in one thread is not seen by another, and a new
    thread starts with none.

    Raises:
        RuntimeError: outside every ``with ckks.Context(...)`` block of this thread.
    """
    stack = _ACTIVE.get()
    if not stack:
        raise RuntimeError(
            "no CKKS context is active in this thread: use `with ckks.Context(params) as ctx:` "
            "(in each thread) or call the context's methods (ctx.encrypt, ctx.decrypt, ...)"
        )
    return stack[-1]


def _context_arg(context: Any) -> Context:
    if context is None:
        return current()
    if not isinstance(context, Context):
        raise TypeError(f"context must be a ckks.Context, got {_fmt.describe(context)}")
    return context


class Context:
    """Keys and the evaluator for one parameter set.

    Keys (secret, public, relinearization) are made on entering the ``with`` block, or at the
    first operation of this context's own that needs them; rotation and conjugation keys are made
    on first use and kept. A context never makes keys for a ciphertext made elsewhere: a
    ciphertext under other keys (another key fingerprint) is a ``ValueError``.

    Threads: ``with ctx:`` makes it the current context of this thread only. One context may be
    shared by threads: key generation and the keys made on first use are behind a lock, so two
    threads asking for the same rotation key get the same key.

    Copies: a context holding a secret key refuses ``pickle``, ``copy`` and ``deepcopy``
    (``TypeError``): the secret key leaves it only through ``export_secret_key()``. A context
    holding evaluation keys (or none) pickles as its parameters, device and evaluation keys.

    Args:
        params: the ``Params``.
        seed: an int makes every random draw reproducible (NumPy's PCG64: for tests and teaching,
            not for real secrets); ``None`` draws from the operating system.
        device: where every value lives (``"python"``, ``"cpu"``, ``"cuda"``; default
            ``$REN_DEVICE``).
        keys: ``EvaluationKeys`` to evaluate with instead of making keys (no secret key).
        secret_key: a secret key written by ``export_secret_key``, with its public key; the
            relinearization key is made from it (the rotation keys on first use).
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
        self._lock = threading.RLock()
        self._secret: Poly | None = None
        self._public: tuple[Poly, Poly] | None = None
        self._fingerprint: str | None = None
        self._relin: KeySwitchKey | None = None
        self._galois: dict[int, KeySwitchKey] = {}
        if keys is not None and secret_key is not None:
            raise ValueError("pass keys= or secret_key=, not both")
        if keys is not None:
            if not isinstance(keys, EvaluationKeys):
                raise TypeError(f"keys must be ckks.EvaluationKeys, got {type(keys).__name__}")
            if keys.params != params:
                raise ValueError(f"the keys are for {keys.params}, not {params}")
            b, a = keys.public
            self._public = (b.to(self.device), a.to(self.device))
            self._fingerprint = keys.fingerprint
            self._relin = self._keys_to_device(keys.relin)
            self._galois = {g: self._keys_to_device(k) for g, k in keys.galois.items()}
        if secret_key is not None:
            self._load_secret(secret_key)

    def __repr__(self) -> str:
        have = "secret" if self._secret is not None else "evaluation" if self._public else "no"
        return f"<ckks.Context n={self.params.n} L={self.params.L} {self.device}, {have} keys>"

    def __enter__(self) -> Context:
        self._require_public()
        _ACTIVE.set((*_ACTIVE.get(), self))
        return self

    def __exit__(self, *exc: object) -> None:
        stack = _ACTIVE.get()
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is self:
                _ACTIVE.set(stack[:i] + stack[i + 1 :])
                break

    # --- copies -----------------------------------------------------------------------------------
    def _refuse_copy(self, what: str) -> None:
        if self._secret is not None:
            raise TypeError(
                f"a ckks.Context holding a secret key cannot be {what}: the secret key leaves a "
                "context only through export_secret_key() (keep those bytes secret); to share "
                "what a server needs, send ctx.evaluation_keys() (or its to_bytes()) and the "
                "ciphertexts"
            )

    def __reduce__(self) -> tuple:
        self._refuse_copy("pickled")
        keys = None if self._public is None else self.evaluation_keys().to_bytes()
        return (_context_from_pickle, (self.params, self.device, keys))

    def __copy__(self) -> Context:
        self._refuse_copy("copied")
        keys = None if self._public is None else self.evaluation_keys()
        return Context(self.params, device=self.device, keys=keys)

    def __deepcopy__(self, memo: dict) -> Context:
        self._refuse_copy("copied")
        return _context_from_pickle(*self.__reduce__()[1])

    # --- keys -------------------------------------------------------------------------------------
    @property
    def has_secret_key(self) -> bool:
        """Whether this context can decrypt (and make new rotation keys)."""
        return self._secret is not None

    @property
    def key_fingerprint(self) -> str | None:
        """The fingerprint of this context's public key (16 hexadecimal digits), or ``None``.

        ``None`` while the context holds no keys. Computed once per key set; every ciphertext
        made under the keys carries it, and loading or using one here checks it.
        """
        fp = self._fingerprint
        if fp is None and self._public is not None:
            with self._lock:
                if self._fingerprint is None and self._public is not None:
                    self._fingerprint = _fmt.fingerprint(self._public)
                fp = self._fingerprint
        return fp

    def keygen(self) -> None:
        """Make a new secret key, public key and relinearization key (dropping rotation keys).

        Ciphertexts made under the old keys are refused afterwards (their fingerprint differs).
        """
        with self._lock:
            prm, K = self.params, self.params.key_ring
            if prm.hamming_weight is None:
                s = Poly.ternary(K, self._rng, self.device)
            else:
                s = Poly.sparse_ternary(K, prm.hamming_weight, self._rng, self.device)
            with uncaptured():
                secret = s.ntt().realize()
            a = self._uniform_ntt(K)
            e = Poly.gaussian(K, prm.sigma, self._rng, self.device)
            b = -(a * secret) + e
            with uncaptured():
                public = (b.ntt(), a)
                realize(*public)
            self._install(secret, public)

    def _install(self, secret: Poly, public: tuple[Poly, Poly]) -> None:
        """Take ``secret`` and ``public`` as this context's keys; a new relinearization key."""
        relin = self._make_switch_key(secret, secret * secret, None)
        self._secret, self._public, self._fingerprint = secret, public, None
        self._galois = {}
        self._relin = relin

    def _uniform_ntt(self, ring: RingSpec) -> Poly:
        """A uniform poly drawn directly in NTT form (uniform in either form)."""
        limbs = np.stack([sampling.uniform_below(self._rng, q, ring.n) for q in ring.moduli])
        return Poly.from_limbs(limbs, ring, Domain.NTT, self.device)

    def _make_switch_key(self, secret: Poly, s_new: Poly, galois: int | None) -> KeySwitchKey:
        prm, K = self.params, self.params.key_ring
        Q = math.prod(prm.q_moduli)
        P = math.prod(prm.p_moduli)
        pairs = []
        for digit in prm.digits:
            D = math.prod(prm.q_moduli[i] for i in digit)
            T = (Q // D) * pow(Q // D, -1, D)  # 1 mod the digit's moduli, 0 mod the others
            a = self._uniform_ntt(K)
            e = Poly.gaussian(K, prm.sigma, self._rng, self.device)
            b = -(a * secret) + e + s_new * (P * T % K.Q)
            pairs.append((b.ntt(), a))
        with uncaptured():
            realize(*(p for pair in pairs for p in pair))
        return KeySwitchKey(galois, tuple(pairs))

    def _require_secret(self, what: str) -> Poly:
        with self._lock:
            if self._secret is None:
                if self._public is None:
                    self.keygen()
                else:
                    raise ValueError(f"this context holds no secret key, so it cannot {what}")
            secret = self._secret
            assert secret is not None  # keygen made one
            return secret

    def _require_public(self) -> tuple[tuple[Poly, Poly], KeySwitchKey]:
        """The public key and the relinearization key (made now if the context has none)."""
        public, relin = self._public, self._relin
        if public is None or relin is None:
            with self._lock:  # a keygen in another thread holds it until both are set
                if self._public is None:
                    self.keygen()
                public, relin = self._public, self._relin
        assert public is not None and relin is not None  # keys=, secret_key= and keygen set both
        return public, relin

    def galois_key(self, g: int) -> KeySwitchKey:
        """The key switching ``s(X^g)`` to ``s``, made on first use (outside any jit capture).

        Args:
            g: the Galois element, an odd int (taken modulo ``2n``).

        Raises:
            TypeError: when ``g`` is not an int.
            ValueError: for an even ``g``; without a secret key, when the key was not given with
                the context.
        """
        if not is_int(g):
            raise TypeError(f"the Galois element must be an int, got {_fmt.describe(g)}")
        two_n = 2 * self.params.n
        if int(g) % 2 == 0:
            raise ValueError(
                f"Galois element {g} (mod 2n={two_n}) is even; it must be odd (5^r mod 2n for a "
                "rotation by r, 2n - 1 for conjugation)"
            )
        g = int(g) % two_n
        key = self._galois.get(g)
        if key is None:
            with self._lock:
                key = self._galois.get(g)
                if key is None:
                    self._require_public()
                    secret = self._secret
                    if secret is None:
                        raise ValueError(
                            f"no key for the Galois element {g} (rotation or conjugation) was "
                            "given to this context, and it holds no secret key to make one"
                        )
                    key = self._make_switch_key(secret, secret.automorphism(g), g)
                    self._galois = {**self._galois, g: key}  # readers never see a half-made dict
        return key

    def rotation_key(self, steps: int) -> KeySwitchKey:
        """The key for ``rotate(steps)`` (made on first use).

        Raises:
            TypeError: when ``steps`` is not an int.
        """
        if not is_int(steps):
            raise TypeError(f"rotation steps must be an int, got {_fmt.describe(steps)}")
        return self.galois_key(galois_for_rotation(self.params.n, int(steps) % self.params.slots))

    def evaluation_keys(self) -> EvaluationKeys:
        """The public key, relinearization key and the rotation keys made so far."""
        with self._lock:
            public, relin = self._require_public()
            keys = EvaluationKeys(self.params, public, relin, self._galois)
            keys._fingerprint = self.key_fingerprint
        return keys

    def export_secret_key(self) -> bytes:
        """The secret key and its public key, in Ren's CKKS format. Keep it secret.

        ``Context(params, secret_key=blob)`` reads it back: the same secret key, public key and
        key fingerprint, so that context takes this one's ciphertexts.
        """
        with self._lock:
            s = self._require_secret("export a secret key")
            public, _ = self._require_public()
            records = [_fmt.poly_record(p) for p in (s, *public)]
            header = {
                "params": self.params._header(),
                "key_fingerprint": self.key_fingerprint,
                "polys": [head for head, _ in records],
            }
        return _fmt.pack("secret-key", header, [data for _, data in records])

    def _load_secret(self, blob: bytes) -> None:
        """Take the secret and public key of ``blob``, each checked; nothing changes on error."""
        header, datas = _fmt.unpack(blob, "secret-key")
        fields = ("key_fingerprint", "params", "polys")
        h = _fmt.Header(header, "the secret-key blob's header", fields)
        params = _params_of(h, self.params, "secret key")
        fp = h.fingerprint("key_fingerprint")
        K = params.key_ring
        s, b, a = _fmt.read_polys(h, datas, [K] * 3, self.device)
        coeffs = _fmt.centered_limbs(s)
        if not (coeffs == coeffs[0]).all() or np.abs(coeffs[0]).max() > 1:
            raise ValueError(
                "the blob's secret key is not ternary: its coefficients must be -1, 0, 1"
            )
        weight = int(np.count_nonzero(coeffs[0]))
        if weight == 0:
            raise ValueError("the blob's secret key is zero")
        if params.hamming_weight is not None and weight != params.hamming_weight:
            raise ValueError(
                f"the blob's secret key has {weight} nonzero coefficients; these parameters ask "
                f"for hamming_weight={params.hamming_weight}"
            )
        s, b, a = s.ntt(), b.ntt(), a.ntt()
        e = _fmt.centered_limbs(b + a * s)
        if not (e == e[0]).all() or np.abs(e[0]).max() > math.floor(6 * params.sigma):
            raise ValueError(
                "the blob's public key does not belong to its secret key: b + a s is not a small "
                "error"
            )
        with uncaptured():
            realize(s, b, a)
        found = _fmt.fingerprint((b, a))
        if found != fp:
            raise ValueError(
                f"the blob's public key has the fingerprint {found}, and its header says {fp}: "
                "the blob was altered"
            )
        with self._lock:
            self._install(s, (b, a))
            self._fingerprint = fp

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
            TypeError: for values that are not numbers, or a level that is not an int.
            ValueError: for too many values, NaN or infinity, or values too large for the modulus
                at ``level`` at this scale.
        """
        prm = self.params
        level = prm.max_level if level is None else level
        ring = prm.ring(level)
        scale = prm.scale if scale is None else _check_scale(scale)
        slots, real = _slots(values, prm.slots)
        with np.errstate(over="ignore", invalid="ignore"):  # too large: refused just below
            coeffs = np.rint(embed_inverse(slots, prm.n) * scale)
        finite = bool(np.all(np.isfinite(coeffs)))
        biggest = float(np.max(np.abs(coeffs))) if finite and coeffs.size else 0.0
        if not finite or 2 * biggest >= ring.Q:  # exact: an int and a float compare exactly
            size = _bits(biggest) if finite else "more than 2^1024"
            raise ValueError(
                f"the values are too large for scale {_bits(scale)} at level {level}: a "
                f"coefficient of {size} does not fit the modulus Q={_bits(ring.Q)}"
            )
        if biggest < 2.0**62:
            ints = coeffs.astype(np.int64)
        else:
            ints = np.array([int(c) for c in coeffs], dtype=object)
        poly = Poly(ints, ring, self.device).ntt()
        return Plaintext(poly, float(scale), level, real, self)

    def decode(self, pt: Plaintext) -> np.ndarray:
        """The ``n/2`` slots of a plaintext (``numpy.complex128``).

        Raises:
            TypeError: for anything but a ``Plaintext``.
            ValueError: for a plaintext of other parameters.
        """
        pt = self._plain(pt, "decode")
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
        jitted = capturing()
        if jitted is not None:
            raise RuntimeError(
                f"ckks.encrypt was called inside the jitted function {jitted.name}: a "
                "replay would reuse the same randomness; encrypt outside the jitted function and "
                "pass the ciphertext in"
            )
        public, _ = self._require_public()
        if isinstance(values, Plaintext):
            if level is not None or scale is not None:
                raise ValueError("level and scale are the plaintext's own; pass neither")
            pt = self._plain(values, "encrypt")
        else:
            pt = self.encode(values, level, scale)
        prm, l = self.params, pt.level
        Kl = prm.key_ring_at(l)
        v = Poly.ternary(Kl, self._rng, self.device).ntt()
        e0 = Poly.gaussian(Kl, prm.sigma, self._rng, self.device)
        e1 = Poly.gaussian(Kl, prm.sigma, self._rng, self.device)
        b, a = (k.to_ring(Kl) for k in public)
        c0 = (b * v + e0).rescale(prm.p_moduli) + pt.poly
        c1 = (a * v + e1).rescale(prm.p_moduli)
        return Ciphertext((c0.ntt(), c1.ntt()), pt.scale, l, pt.real, self)

    def decrypt(self, ct: Ciphertext) -> np.ndarray:
        """Decrypt and decode: the ``n/2`` slots, as ``numpy.complex128``.

        For a real message the imaginary parts are exactly 0.

        Raises:
            ValueError: when this context holds no secret key, or the ciphertext is under other
                keys.
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

    # --- what may be used here -------------------------------------------------------------------
    def _check_fingerprint(self, fp: str | None, what: str) -> None:
        """``fp`` (a value's key fingerprint) is this context's, or ``None`` (built by hand)."""
        if fp is None:
            return
        mine = self.key_fingerprint
        if mine is None:
            raise ValueError(
                f"the {what} was made under the keys with fingerprint {fp}, and this context "
                "holds no keys: make it with the keys the value was made under (keys= the "
                "evaluation keys, or secret_key= the exported secret key); a context never makes "
                "keys for a value made elsewhere"
            )
        if fp != mine:
            raise ValueError(
                f"the {what} was made under the keys with fingerprint {fp}, and this context "
                f"holds the keys with fingerprint {mine}: decrypt it where it was made, or use a "
                "context made with its keys (keys= or secret_key=)"
            )

    def _check_params_of(
        self, params: Params | None, ring: RingSpec, level: int, what: str
    ) -> None:
        if params is not None:
            if params != self.params:
                raise ValueError(
                    f"the {what} is for {params}, and this context for {self.params}: values of "
                    "other parameters cannot be combined"
                )
        elif ring != self.params.ring(level):
            raise ValueError(
                f"the {what} at level {level} is over {ring!r}; this context's ring at level "
                f"{level} is {self.params.ring(level)!r}"
            )

    def _own(self, ct: Any) -> Ciphertext:
        """``ct``, checked to be under this context's parameters and keys, and bound to it."""
        if not isinstance(ct, Ciphertext):
            raise TypeError(f"expected a ckks.Ciphertext, got {type(ct).__name__}")
        fp = ct.key_fingerprint
        if ct.context is self and fp is not None and fp == self._fingerprint:
            return ct  # the common case: made here, under the keys held now
        self._check_params_of(ct.params, ct.ring, ct.level, "ciphertext")
        self._check_fingerprint(ct.key_fingerprint, "ciphertext")
        if ct.context is not self:
            parts = ct.parts
            if ct.parts[0].device != self.device:
                parts = tuple(p.to(self.device) for p in parts)
            ct = dataclasses.replace(ct, parts=parts, context=self, params=self.params)
        return ct

    def _plain(self, pt: Any, what: str) -> Plaintext:
        if not isinstance(pt, Plaintext):
            raise TypeError(f"{what} takes a ckks.Plaintext, got {type(pt).__name__}")
        self._check_params_of(pt.params, pt.poly.ring, pt.level, "plaintext")
        return pt

    # --- evaluation -------------------------------------------------------------------------------
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
            b = self._plain(b, what)
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
            phrase = f"subtract {b!r} from a ciphertext" if sub else f"add {b!r} to a ciphertext"
            c = _finite(b, phrase)
            ring = self.params.ring(a.level)
            const = _constant_poly(-c if sub else c, a.scale, ring, self.device, phrase, a.level)
            c0 = a.parts[0] + const
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
            b: a ciphertext, plaintext, finite number, or array of slot values.
            relinearize: key switch a three-part product back to two parts.
            rescale: divide by the last modulus afterwards (one level down). A number or array
                ``b`` is then encoded at the scale ``q_level``, so the result keeps ``a``'s scale
                exactly; an ``int`` is multiplied exactly with no scale and no rescale.

        Raises:
            TypeError: when ``relinearize`` or ``rescale`` is not a bool.
            ValueError: at level 0 when rescaling, for a scale that outgrows the modulus, a
                ciphertext of three parts, a value of other parameters or keys, or a number that
                is not finite or too large for the modulus at this scale.
        """
        for flag, value in (("relinearize", relinearize), ("rescale", rescale)):
            if not isinstance(value, bool | np.bool_):
                raise TypeError(f"{flag} must be True or False, got {value!r}")
        a = self._own(a)
        if isinstance(b, Ciphertext):
            b = self._own(b)
        elif isinstance(b, Plaintext):
            b = self._plain(b, "multiply")
        if rescale and isinstance(b, Ciphertext | Plaintext) and min(a.level, b.level) == 0:
            raise ValueError(_level0("multiply and rescale"))
        if isinstance(b, Ciphertext):
            if a.size != 2 or b.size != 2:
                raise ValueError("multiply needs two-part ciphertexts: relinearize first")
            level = min(a.level, b.level)
            a, b = a.at_level(level), b.at_level(level)
            (a0, a1), (b0, b1) = a.parts, b.parts
            parts: tuple[Poly, ...] = (a0 * b0, a0 * b1 + a1 * b0, a1 * b1)
            out = Ciphertext(parts, a.scale * b.scale, level, a.real and b.real, self)
            if relinearize:
                out = self.relinearize(out)
        elif is_int(b):
            Q = self.params.ring(a.level).Q
            if 2 * abs(int(b)) >= Q:
                raise ValueError(
                    f"cannot multiply a ciphertext by the int {_fmt.describe(b)}: it is not below "
                    f"Q/2 at level {a.level} (Q={_bits(Q)}), so it would wrap around the modulus"
                )
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
                phrase = f"multiply a ciphertext by {b!r}"
                c = _finite(b, phrase)
                ring = self.params.ring(a.level)
                pc = _constant_poly(c, factor, ring, self.device, phrase, a.level)
                parts = tuple(p * pc for p in a.parts)
                real = a.real and c.imag == 0
                out = Ciphertext(parts, a.scale * factor, a.level, real, self)
            else:
                return self.multiply(a, self.encode(b, a.level, factor), relinearize, rescale)
        else:
            return NotImplemented
        if rescale:
            out = self.rescale(out)
        return out

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
        _, relin = self._require_public()
        k0, k1 = self.key_switch(ct.parts[2], relin, ct.level)
        parts = (ct.parts[0] + k0, ct.parts[1] + k1)
        return dataclasses.replace(ct, parts=parts)

    def rotate(self, ct: Ciphertext, steps: int) -> Ciphertext:
        """Slots moved left by ``steps`` (slot ``j + steps`` to slot ``j``).

        Raises:
            TypeError: when ``steps`` is not an int.
        """
        ct = self._own(ct)
        if not is_int(steps):
            raise TypeError(f"rotation steps must be an int, got {_fmt.describe(steps)}")
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
        acc0: Poly | None = None
        acc1: Poly | None = None
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
        assert acc0 is not None and acc1 is not None  # the first digit holds q_0, at every level
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


def _finite(value: Any, what: str) -> complex:
    """``value`` as a complex number with finite parts, or a ``ValueError`` saying why not."""
    try:
        c = complex(value)
    except OverflowError:
        raise ValueError(
            f"cannot {what}: it is too large for the modulus at this scale (beyond a float)"
        ) from None
    if not (math.isfinite(c.real) and math.isfinite(c.imag)):
        raise ValueError(
            f"cannot {what}: {value!r} is not a finite number (a NaN or an infinity has no "
            "encoding)"
        )
    return c


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


def _constant_poly(
    c: complex, scale: float, ring: RingSpec, device: str, what: str, level: int
) -> Poly:
    """The encoding of ``c`` in every slot at ``scale`` (for the operation ``what``).

    That is ``round(Re c * scale)`` as a constant, plus ``round(Im c * scale) X^(n/2)``
    (``X^(n/2)`` is ``i`` in every slot). Each must be below ``Q/2``, compared exactly.

    Raises:
        ValueError: naming the operation and the number when it is too large for the modulus at
            this scale.
    """
    re_f, im_f = c.real * scale, c.imag * scale
    Q = ring.Q
    if not (math.isfinite(re_f) and math.isfinite(im_f)) or 2 * max(abs(re_f), abs(im_f)) >= Q:
        size = math.log2(max(abs(c.real), abs(c.imag))) + math.log2(scale)
        raise ValueError(
            f"cannot {what}: it is too large for the modulus at this scale: times the scale "
            f"{_bits(scale)} it is about 2^{size:.1f}, and a constant must stay below Q/2 at "
            f"level {level} (Q={_bits(Q)})"
        )
    re, im = round(re_f), round(im_f)
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
    """The slots of ``pt`` (in its own context).

    Raises:
        TypeError: for anything but a ``Plaintext``.
    """
    if not isinstance(pt, Plaintext):
        raise TypeError(f"decode takes a Plaintext, got {type(pt).__name__}")
    return pt._ctx().decode(pt)


def encrypt(values: Any, level: int | None = None, scale: float | None = None) -> Ciphertext:
    """``current().encrypt(values, level, scale)``: encrypt a plaintext or values."""
    return current().encrypt(values, level, scale)


def decrypt(ct: Ciphertext) -> np.ndarray:
    """Decrypt and decode ``ct`` (in its own context).

    Raises:
        TypeError: for anything but a ``Ciphertext``.
    """
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

    Args:
        got: numbers (an array, a sequence or one number).
        expected: numbers of the same shape, or one number compared with each.

    Raises:
        TypeError: for values that are not numbers (decrypt a ciphertext first).
        ValueError: for arrays of different shapes (naming both) or no numbers at all.
    """
    arrays = []
    for name, value in (("got", got), ("expected", expected)):
        try:
            arr = np.asarray(value)
        except (TypeError, ValueError):
            arr = np.asarray(None)
        if arr.dtype.kind not in "biufc":
            raise TypeError(f"{name} must hold numbers, got {_fmt.describe(value)}")
        arrays.append(arr)
    g, e = arrays
    if g.shape != e.shape and g.ndim and e.ndim:
        raise ValueError(
            f"got has shape {g.shape} and expected {e.shape}: compare arrays of one shape (or "
            "with one number)"
        )
    if g.size == 0 or e.size == 0:
        raise ValueError("precision_bits needs at least one number to compare")
    err = float(np.max(np.abs(g - e)))
    return math.inf if err == 0 else -math.log2(err)


# ---------------------------------------------------------------------------------------------
# reading values (the format itself is ren.schemes.ckks_bytes)


def _params_of(h: _fmt.Header, params: Params, what: str) -> Params:
    """The parameters of a blob read into a context with ``params``: they must be equal.

    The context's parameters were accepted already, so the blob's are read with the insecure
    opt-in, then compared.
    """
    value = h.raw("params")
    if _fmt.same_json(value, params._header()):  # 1 == True in Python; not in JSON
        return params
    found = Params._from_header(value, insecure=True, reader="")
    if found != params:
        raise ValueError(f"the {what} was written for {found}, not this context's {params}")
    return found


def _read_value(
    blob: bytes, kind: str, params: Params | None, device: str | None
) -> tuple[Params, _fmt.Header, list[Poly]]:
    """The parameters, the checked header and the polys of a plaintext or ciphertext blob.

    With ``params`` (a context's), the blob's must be equal; without (unpickling), they are read
    with the insecure opt-in: a pickle is trusted data, as it must be.
    """
    header, datas = _fmt.unpack(blob, kind)
    fields = ["level", "params", "polys", "real", "scale"]
    if kind == "ciphertext":
        fields.append("key_fingerprint")
    h = _fmt.Header(header, f"the {kind} blob's header", fields)
    if params is None:
        params = Params._from_header(h.raw("params"), insecure=True, reader="")
    else:
        params = _params_of(h, params, kind)
    level = h.integer("level", 0, params.max_level)
    h.hex_float("scale")
    h.flag("real")
    counts = (2, 3) if kind == "ciphertext" else (1,)
    if len(datas) not in counts:
        raise ValueError(
            f"a {kind} blob holds {' or '.join(map(str, counts))} polynomials, this one "
            f"{len(datas)}"
        )
    polys = _fmt.read_polys(h, datas, [params.ring(level)] * len(datas), device)
    return params, h, polys


def _plaintext_from_pickle(blob: bytes, device: str) -> Plaintext:
    params, h, polys = _read_value(blob, "plaintext", None, device)
    level, real = h.raw("level"), h.raw("real")
    return Plaintext(polys[0], h.hex_float("scale"), level, real, params=params)


def _ciphertext_from_pickle(blob: bytes, device: str) -> Ciphertext:
    params, h, polys = _read_value(blob, "ciphertext", None, device)
    fp = h.fingerprint("key_fingerprint")
    level, real = h.raw("level"), h.raw("real")
    return Ciphertext(
        tuple(polys), h.hex_float("scale"), level, real, params=params, key_fingerprint=fp
    )


def _evaluation_keys_from_pickle(blob: bytes, device: str) -> EvaluationKeys:
    return EvaluationKeys.from_bytes(blob, device, insecure=True)


def _context_from_pickle(params: Params, device: str, keys: bytes | None) -> Context:
    evk = None if keys is None else EvaluationKeys.from_bytes(keys, device, insecure=True)
    return Context(params, device=device, keys=evk)
