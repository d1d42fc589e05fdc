"""BFV and BGV parameters: the modulus chain of every RLWE scheme and the plaintext modulus."""

from __future__ import annotations

import dataclasses
import functools
import math
from types import ModuleType
from typing import TYPE_CHECKING, ClassVar, Self

from ren.errors import describe
from ren.ring import RingSpec, is_prime, ntt_primes
from ren.schemes.rlwe import bytes as _fmt
from ren.schemes.rlwe.params import Chain, need_int

if TYPE_CHECKING:
    from ren.schemes.integer.choose import Reasoning

__all__ = ["SCHEMES", "IntParams", "register_scheme", "scheme_module"]

#: The bit size of the extra moduli of BFV's tensor product (``IntParams.tensor_moduli``).
TENSOR_BITS = 60

#: The integer schemes, each the module ``ren.schemes.<name>``.
SCHEMES = ("bfv", "bgv")

_PARAM_FIELDS = (
    "dnum",
    "hamming_weight",
    "insecure",
    "moduli",
    "n",
    "p_bits",
    "q_bits",
    "scheme",
    "sigma",
    "t",
)


#: ``ren.schemes.bfv`` and ``ren.schemes.bgv`` by name, each registered as it loads
#: (:func:`register_scheme`; ``import ren`` loads both): this package never imports them.
_MODULES: dict[str, ModuleType] = {}


def register_scheme(module: ModuleType) -> None:
    """Make ``module`` (``ren.schemes.bfv`` or ``ren.schemes.bgv``) the one its name names."""
    _MODULES[module.__name__.rsplit(".", 1)[-1]] = module


def scheme_module(name: str) -> ModuleType:
    """``ren.schemes.bfv`` or ``ren.schemes.bgv``, by name.

    A blob, a pickle or a saved plan names its scheme, and its reader finds the scheme's
    ``Params`` and ``Context`` here. The schemes register themselves as they load, and importing
    any module of Ren loads them first (``ren``'s own ``__init__``).

    Raises:
        ValueError: for a name that is not one of ``SCHEMES``.
    """
    if name not in SCHEMES:
        raise ValueError(f"{name!r} is not an integer scheme (they are {', '.join(SCHEMES)})")
    return _MODULES[name]


@dataclasses.dataclass(frozen=True, repr=False)
class IntParams(Chain):
    """Parameters of an integer scheme (``bfv.Params``, ``bgv.Params``).

    The moduli are the largest NTT-friendly primes of each bit size, the special moduli taking
    the largest. Unless ``insecure=True``, the key distribution is checked against the HE
    standard for 128-bit security, as for CKKS: ``log2(QP)`` at most ``SECURITY_BOUNDS[n]``
    (218 bits at ``n = 8192``), a uniform ternary secret, ``sigma`` at least 3.19.

    Args:
        n: ring degree, a power of two >= 4: ``n`` slots (two rows of ``n/2``) when batching.
        q_bits: bit sizes (ints, 10 to 62) of the ciphertext moduli ``q_0, ..., q_{L-1}``
            (``None``: those of ``q_moduli``).
        p_bits: bit sizes of the special moduli used by hybrid key switching (default
            ``(60,)``); BV key switching has none (leave it out, or ``()``).
        t: the plaintext modulus, an int from 2 to below every ciphertext modulus, coprime to
            them. A prime ``t = 1 (mod 2n)`` (such as 65537 up to ``n = 32768``) allows
            batching: ``n`` integers mod ``t`` in slots; any other ``t`` encodes a polynomial.
        dnum: number of key-switching digits, 1 to ``L`` (default ``L``).
        insecure: allow parameters beyond the HE-standard bound (tests and teaching).
        hamming_weight: ``None`` (uniform ternary secret) or the nonzeros of a sparse one
            (needs ``insecure=True``).
        sigma: the error's standard deviation (at least 3.19 unless ``insecure=True``).
        key_switching: ``"hybrid"`` (the default) or ``"bv"`` (one digit per ciphertext
            modulus, no special modulus), as for CKKS.
        q_moduli: keyword only, the ciphertext moduli themselves (``None``: found for the bit
            sizes), as for CKKS: primes ``1 (mod 2n)``, distinct, none equal to ``t``, kept in
            the order given; ``q_bits`` then follows from them.
        p_moduli: keyword only, the special moduli themselves, likewise (``p_bits`` follows).

    Raises:
        TypeError: an argument of the wrong type, named.
        ValueError: a value out of range, named with the rule it breaks.
    """

    __ren_jit_leaf__: ClassVar[bool] = True
    scheme: ClassVar[str] = "integer"
    own_argument: ClassVar[str] = "t"
    own_range: ClassVar[tuple[int, int]] = (2, 2**62)
    header_fields: ClassVar[tuple[str, ...]] = _PARAM_FIELDS

    n: int
    # None: the bit sizes of q_moduli, which must then be given
    q_bits: tuple[int, ...] = None  # type: ignore[assignment]
    # None: the technique's default, (60,) for hybrid and () for BV, set by __post_init__
    p_bits: tuple[int, ...] = None  # type: ignore[assignment]
    t: int = 65537
    dnum: int | None = None
    insecure: bool = False
    hamming_weight: int | None = None
    sigma: float = 3.2
    key_switching: str = "hybrid"
    digit_bits: int | None = None
    # None: found for the bit sizes (Chain._check_chain); given: checked and kept as they are
    q_moduli: tuple[int, ...] = dataclasses.field(default=None, repr=False, kw_only=True)  # type: ignore[arg-type]
    p_moduli: tuple[int, ...] = dataclasses.field(default=None, repr=False, kw_only=True)  # type: ignore[arg-type]
    # what choose() found, for explain(); never in the bytes, the pickle or the comparison
    reasoning: Reasoning | None = dataclasses.field(
        default=None, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        t = need_int("t", self.t)
        self._check_chain(avoid=(t,))
        object.__setattr__(self, "t", t)
        smallest = min(self.q_moduli)
        if not 2 <= t < smallest:
            raise ValueError(
                f"t={t} must be at least 2 and below every ciphertext modulus (the smallest, "
                f"q = {smallest}, has {smallest.bit_length()} bits)"
            )
        for q in self.q_moduli + self.p_moduli:
            if math.gcd(t, q) != 1:
                raise ValueError(
                    f"t={t} shares a factor with the modulus {q}: they must be coprime"
                )

    # --- derived ------------------------------------------------------------------------------
    @property
    def batching(self) -> bool:
        """Whether ``t`` is a prime ``1 (mod 2n)``: ``n`` slots of integers mod ``t``."""
        return self.t % (2 * self.n) == 1 and is_prime(self.t)

    @property
    def slots(self) -> int:
        """The number of integers a plaintext holds: ``n`` (two rows of ``n/2`` when batching)."""
        return self.n

    def _display_rows(self) -> list[tuple[str, object]]:
        """The display's rows (``rlwe.display``): the plaintext modulus and what it holds."""
        held = f"{self.n} slots (batching)" if self.batching else "a polynomial mod t"
        return [("t", f"{self.t} ({self.t.bit_length()} bits): {held}")]

    @functools.cached_property
    def plain_ring(self) -> RingSpec:
        """``Z_t[X]/(X^n + 1)``, whose NTT gives the slots (only when :attr:`batching`)."""
        if not self.batching:
            raise ValueError(
                f"t={self.t} does not allow batching (it must be a prime 1 mod 2n = {2 * self.n}"
                ", such as 65537): encode the message as a polynomial (encode_coefficients)"
            )
        return RingSpec(self.n, (self.t,))

    @functools.cached_property
    def tensor_moduli(self) -> tuple[int, ...]:
        """Extra moduli ``B`` for BFV's product: ``Q B`` holds ``t`` times any tensor exactly.

        A part of the tensor is below ``n Q^2 / 2`` in size and is multiplied by ``t`` before
        the division by ``Q``, so ``B`` has at least ``log2(Q) + log2(t) + log2(n) + 4`` bits.
        """
        Q = math.prod(self.q_moduli)
        need = Q.bit_length() + self.t.bit_length() + self.n.bit_length() + 4
        count = -(-need // (TENSOR_BITS - 1))
        taken = set(self.q_moduli + self.p_moduli)
        pool = [q for q in ntt_primes(self.n, TENSOR_BITS, count + len(taken)) if q not in taken]
        return tuple(pool[:count])

    @functools.cached_property
    def tensor_extra_ring(self) -> RingSpec:
        """The ring of :attr:`tensor_moduli` alone, where BFV's product is divided by ``Q``."""
        return RingSpec(self.n, self.tensor_moduli)

    @functools.cached_property
    def q_inverse_mod_extra(self) -> int:
        """``Q^-1`` modulo the product of :attr:`tensor_moduli`."""
        return pow(math.prod(self.q_moduli), -1, self.tensor_extra_ring.Q)

    # --- from requirements ----------------------------------------------------------------------
    @classmethod
    def choose(
        cls,
        depth: int,
        t: int = 65537,
        *,
        batching: bool = True,
        secure: bool = True,
        key_switching: str = "hybrid",
        margin: float = 10.0,
        n: int | None = None,
    ) -> Self:
        """The smallest parameters whose predicted noise budget holds a product tree of ``depth``.

        The ring degrees of the HE standard's table are tried from the smallest (``n=1024``),
        and at each the fewest moduli whose chain keeps ``margin`` bits of predicted budget
        (``ren.schemes.integer.noise``) after ``depth`` levels of products: ``2^depth`` fresh
        encryptions multiplied in pairs, each product relinearized (the usual multiplicative
        depth), BGV's each followed by a ``mod_switch``. The first ring whose chain is within
        the 128-bit bound is chosen. ``params.explain()`` lists every ring tried and why it was
        refused, and the budget at each depth. The default margin, 10 bits, covers the model's
        error (a bit or two), squares instead of independent products (half a bit a level),
        and a few additions or rotations besides.

        Args:
            depth: the multiplicative depth, an int >= 0.
            t: the plaintext modulus (default 65537), as ``Params`` takes it.
            batching: ``t`` must be a prime ``1 (mod 2n)`` (rings where it is not are refused).
            secure: keep within the HE standard's bound; ``False`` allows beyond it (the
                smallest ring that holds the depth, marked ``insecure=True``).
            key_switching: ``"hybrid"`` (one digit per modulus, one special modulus) or
                ``"bv"``.
            margin: the bits of predicted budget left after the depth.
            n: try this ring degree only.

        Raises:
            TypeError: a ``depth`` or ``t`` that is not an int.
            ValueError: a negative depth, a ``t`` that cannot batch, or a depth no ring holds:
                the message names every ring tried and why it was refused, the largest depth
                that fits at 128-bit security and a ring that would hold this one.
        """
        from ren.schemes.integer.choose import choose  # it builds Params

        return choose(
            cls,
            depth,
            t,
            batching=batching,
            secure=secure,
            key_switching=key_switching,
            margin=margin,
            n=n,
        )

    def explain(self, depth: int | None = None) -> str:
        """These parameters' predicted noise budget through a product tree, as text.

        For parameters from :meth:`choose`, also every ring tried and why it was refused.

        Args:
            depth: how deep to go (default: the depth chosen for, else until the budget is
                spent or, for BGV, no level is left).
        """
        from ren.schemes.integer.choose import explain  # it builds Params

        return explain(self, depth)

    # --- serialization ------------------------------------------------------------------------
    def _header(self) -> dict[str, object]:
        return {"scheme": self.scheme, **super()._header()}

    @classmethod
    def _check_header(cls, h: _fmt.Header) -> None:
        """A header of another scheme's parameters is refused, naming it."""
        scheme = h.raw("scheme")
        if scheme != cls.scheme:
            named = repr(scheme) if isinstance(scheme, str) else describe(scheme)
            raise ValueError(
                f"the blob's parameters name the scheme {named[:40]}; these are {cls.scheme!r}"
            )

    def to_bytes(self) -> bytes:
        """The parameters in Ren's versioned, checksummed format (kind ``bfv-params``, ...)."""
        if self.scheme not in SCHEMES:
            raise TypeError("write a scheme's parameters: bfv.Params or bgv.Params")
        return _fmt.pack(f"{self.scheme}-params", {"params": self._header()}, [])

    @classmethod
    def from_bytes(cls, blob: bytes, *, insecure: bool = False) -> IntParams:
        """Read parameters written by ``to_bytes``, checked as the constructor checks them.

        ``bfv.Params.from_bytes`` reads BFV's only, ``bgv.Params.from_bytes`` BGV's only (and
        neither reads CKKS's): the blob's kind and its header name the scheme.

        Args:
            blob: the bytes.
            insecure: accept parameters marked ``insecure=True`` (tiny rings for tests and
                teaching). Without it such a blob is refused: the reader opts in, not the blob.

        Raises:
            TypeError: when ``blob`` is not bytes or ``insecure`` not a bool.
            ValueError: a truncated, altered or foreign blob (another scheme's included), a
                version this Ren cannot read, parameters the constructor refuses, or insecure
                parameters without the opt-in.
        """
        if not isinstance(insecure, bool):
            raise TypeError(f"insecure must be True or False, got {describe(insecure)}")
        if cls.scheme not in SCHEMES:
            raise TypeError("read a scheme's parameters: bfv.Params.from_bytes or bgv.Params's")
        header, payloads = _fmt.unpack(blob, f"{cls.scheme}-params", cls.scheme.upper())
        h = _fmt.Header(header, "the params blob's header", ("params",))
        if payloads:
            raise ValueError(f"a params blob holds no payloads, this one {len(payloads)}")
        return cls._from_header(h.raw("params"), insecure=insecure, reader="Params.from_bytes")
