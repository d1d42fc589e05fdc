"""What every RLWE scheme's parameters share: the chain, the digits and the security check.

``Chain`` is the part of a scheme's ``Params`` that is not the scheme's own: the checks of ``n``,
the bit sizes, ``dnum``, the secret and the error, the moduli found for the bit sizes, the digits,
the rings of each level and the security check. CKKS adds its scale, BFV and BGV their plaintext
modulus.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from typing import Any, ClassVar, Self, TypeVar

from ren.errors import describe
from ren.poly import is_int
from ren.ring import RingSpec, sampling
from ren.schemes.rlwe import bytes as _fmt
from ren.schemes.rlwe.keyswitch import TECHNIQUES, bv_digit_primes, check_bv
from ren.schemes.rlwe.moduli import bit_sizes, check_moduli, given_q_moduli, set_moduli
from ren.schemes.rlwe.security import MIN_SIGMA as MIN_SIGMA  # the chain's names for them
from ren.schemes.rlwe.security import SECURITY_BOUNDS as SECURITY_BOUNDS
from ren.schemes.rlwe.security import check_security

#: The key-switching techniques a chain can name (``ren.schemes.rlwe.keyswitch.TECHNIQUES``):
#: ``"hybrid"``, digits of the ciphertext moduli and special moduli ``P`` to divide by (the
#: default); ``"bv"``, one digit per ciphertext modulus and no special modulus.
KEY_SWITCHING: tuple[str, ...] = tuple(TECHNIQUES)

#: Fields added after the first parameters: shown and written only where not their defaults.
_LATER_FIELDS = ("key_switching", "digit_bits")
#: A header's optional fields: those, and ``explicit_moduli`` (written only when true).
_HEADER_LATER = (*_LATER_FIELDS, "explicit_moduli")


def bits(x: float) -> str:
    """A modulus or coefficient size as ``2^k`` (exact for an int of any size)."""
    if isinstance(x, float) and not math.isfinite(x):
        return "more than 2^1024"
    return f"2^{math.log2(x):.6f}" if x > 0 else str(x)


def need_int(name: str, value: object) -> int:
    """``value`` as an int; a bool, a float or anything else is a ``TypeError`` naming ``name``."""
    if not is_int(value):
        raise TypeError(f"{name} must be an int, got {describe(value)}")
    return int(value)


def _check_sigma(sigma: object) -> float:
    """``sigma`` as a finite float in ``(0, 10^6)`` (the samplers' check, then CKKS's bound)."""
    value = sampling.check_sigma(sigma)
    if not value < 1e6:
        raise ValueError(f"sigma={value!r} must be a positive number below 10^6")
    return value


class Chain:
    """The modulus chain of a frozen dataclass of parameters (a mixin).

    The dataclass declares ``n``, ``q_bits``, ``p_bits``, ``dnum``, ``insecure``,
    ``hamming_weight``, ``sigma``, ``key_switching`` and the derived ``q_moduli`` and
    ``p_moduli``, and calls :meth:`_check_chain` from ``__post_init__``.
    """

    n: int
    q_bits: tuple[int, ...]
    p_bits: tuple[int, ...]
    dnum: int | None
    insecure: bool
    hamming_weight: int | None
    sigma: float
    key_switching: str
    digit_bits: int | None
    q_moduli: tuple[int, ...]
    p_moduli: tuple[int, ...]

    #: The scheme's own argument, between ``p_bits`` and ``dnum`` (``scale_bits``, ``t``), and
    #: the range a blob's header may give it (the constructor checks it further).
    own_argument: ClassVar[str]
    own_range: ClassVar[tuple[int, int]]
    #: The scheme's name (``"ckks"``, ``"bfv"``, ...) and the fields its header always holds.
    scheme: ClassVar[str]
    header_fields: ClassVar[tuple[str, ...]]

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # a value: pickled as its arguments, so unpickling runs every check again (the same
        # arguments, in the same order, as before later fields existed: the same bytes)
        own = getattr(self, self.own_argument)
        first = (self.n, self.q_bits, self.p_bits, own, self.dnum, self.insecure)
        args: tuple[Any, ...] = (*first, self.hamming_weight, self.sigma, *self._chain_args())
        if not getattr(self, "_explicit", False):
            return (type(self), args)
        if len(args) < 10:  # the moduli are keywords: every field before them, in order
            args = (*args[:8], self.key_switching, self.digit_bits)
        given = {"q_moduli": self.q_moduli, "p_moduli": self.p_moduli}
        return (functools.partial(type(self), **given), args)

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> Self:
        return self

    def _header(self) -> dict[str, object]:
        """The header fields of these parameters: the chain's and the scheme's own argument."""
        return {**self._chain_header(), self.own_argument: getattr(self, self.own_argument)}

    @classmethod
    def _from_header(cls, value: object, *, insecure: bool, reader: str) -> Self:
        """The parameters a blob's header gives, every field checked.

        Args:
            value: the header's ``params`` entry, as parsed.
            insecure: whether the reader accepts parameters marked ``insecure=True``.
            reader: the function the reader called, for the message that says how to opt in.

        Raises:
            ValueError: for any field of the wrong type or out of range, parameters of another
                scheme or that the constructor refuses, moduli other than the ones these
                parameters give, or parameters marked insecure that the reader did not opt in to.
        """
        h = _fmt.Header(value, "the blob's parameters", cls.header_fields, _HEADER_LATER)
        cls._check_header(h)
        own = {cls.own_argument: h.integer(cls.own_argument, *cls.own_range)}
        return cls._chain_from_header(
            h, own, insecure=insecure, reader=reader, name=cls.scheme.upper()
        )

    @classmethod
    def _check_header(cls, h: _fmt.Header) -> None:
        """What a scheme checks of a header beyond its fields (the integer schemes: the name)."""

    def __repr__(self) -> str:
        """The arguments; ``key_switching`` and ``digit_bits`` only where not the defaults."""
        shown = []
        for f in dataclasses.fields(self):  # type: ignore[arg-type]  # a dataclass's mixin
            value = getattr(self, f.name)
            if f.repr and not (f.name in _LATER_FIELDS and value == f.default):
                shown.append(f"{f.name}={value!r}")
        if getattr(self, "_explicit", False):
            shown.append(f"q_moduli={self.q_moduli!r}, p_moduli={self.p_moduli!r}")
        return f"{type(self).__qualname__}({', '.join(shown)})"

    def _repr_html_(self) -> str:
        """The notebook's display: the arguments and the modulus chain (``rlwe.display``)."""
        from ren.schemes.rlwe.display import chain_html

        return chain_html(self)

    def _check_chain(self, avoid: tuple[int, ...] = ()) -> None:
        """Check the shared arguments, find the moduli, check the digits and the security.

        The moduli are the largest NTT-friendly primes of each bit size, the special moduli taking
        the largest, none of them in ``avoid``.
        """
        set_ = functools.partial(object.__setattr__, self)
        n = need_int("n", self.n)
        if n < 4 or n & (n - 1):
            raise ValueError(f"n={n} must be a power of two >= 4")
        set_("n", n)
        given_q, given_p = given_q_moduli(self), self.p_moduli
        technique = self.key_switching
        if not isinstance(technique, str) or technique not in KEY_SWITCHING:
            raise ValueError(
                f"key_switching must be one of {', '.join(map(repr, KEY_SWITCHING))}, got "
                f"{describe(technique)}"
            )
        L = len(self.q_bits)
        if technique == "bv":
            self._check_bv(L)
        elif self.digit_bits is not None:
            raise ValueError(
                f"digit_bits={self.digit_bits!r} is BV's digit size; hybrid key switching sizes "
                "its digits with dnum: leave digit_bits out, or use key_switching='bv'"
            )
        else:
            p_bits = TECHNIQUES[technique].default_p_bits if self.p_bits is None else self.p_bits
            if given_p is not None:
                given_p = check_moduli("p_moduli", given_p, n, self.p_bits)
                p_bits = tuple(q.bit_length() for q in given_p)
            if isinstance(p_bits, Sequence) and not isinstance(p_bits, str) and not p_bits:
                raise ValueError(
                    "p_bits is empty: hybrid key switching needs at least one special "
                    "modulus; key_switching='bv' uses none"
                )
            set_("p_bits", bit_sizes("p_bits", p_bits))
        dnum = L if self.dnum is None else need_int("dnum", self.dnum)
        if not 1 <= dnum <= L:
            raise ValueError(f"dnum={dnum} must be an int from 1 to len(q_bits)={L}")
        set_("dnum", dnum)
        if not isinstance(self.insecure, bool):
            raise TypeError(f"insecure must be True or False, got {describe(self.insecure)}")
        if self.hamming_weight is not None:
            weight = need_int("hamming_weight", self.hamming_weight)
            if not 1 <= weight <= n:
                raise ValueError(f"hamming_weight={weight} must be None or in [1, n={n}]")
            set_("hamming_weight", weight)
        set_("sigma", _check_sigma(self.sigma))
        set_moduli(self, given_q, given_p, avoid)
        P = math.prod(self.p_moduli)
        for digit in self.digits if self.p_moduli else ():  # BV divides by nothing
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

    def _check_bv(self, L: int) -> None:
        """BV key switching: no special moduli, one digit per modulus (``keyswitch.check_bv``)."""
        check_bv(self, L)

    def _check_security(self) -> None:
        """The HE standard's rule for 128-bit security (``ren.schemes.rlwe.security``)."""
        check_security(self.n, self.log2_qp, self.hamming_weight, self.sigma)

    def _chain_header(self) -> dict[str, object]:
        """The header fields every scheme's parameters write (its own are added to them)."""
        return {
            "n": self.n,
            "q_bits": list(self.q_bits),
            "p_bits": list(self.p_bits),
            "dnum": self.dnum,
            "insecure": self.insecure,
            "hamming_weight": self.hamming_weight,
            "sigma": self.sigma,
            "moduli": [str(q) for q in self.p_moduli + self.q_moduli],
            # written only when not the default: older blobs and hybrid's bytes stay the same
            **({} if self.key_switching == "hybrid" else {"key_switching": self.key_switching}),
            **({} if self.digit_bits is None else {"digit_bits": self.digit_bits}),
            # moduli other than the bit sizes give: the reader keeps them as they are
            **({"explicit_moduli": True} if getattr(self, "_explicit", False) else {}),
        }

    def _chain_args(self) -> tuple[str | int, ...]:
        """``key_switching`` as a last argument when it is not the default (``__reduce__``).

        A pickle of hybrid parameters holds the same arguments, so the same bytes, as before
        the field existed.
        """
        if self.key_switching == "hybrid":
            return ()
        return (self.key_switching,) + (() if self.digit_bits is None else (self.digit_bits,))

    @classmethod
    def _chain_from_header(
        cls, h: _fmt.Header, own: dict[str, int], *, insecure: bool, reader: str, name: str
    ) -> Self:
        """The parameters of a checked header ``h``: its chain's fields and the scheme's ``own``.

        Raises:
            ValueError: a field of the wrong type or out of range, parameters the constructor
                refuses, moduli other than the ones these parameters give, or parameters marked
                insecure that the reader did not opt in to.
        """
        n = h.integer("n", 4, 2**30)
        fields = {
            "n": n,
            "q_bits": h.int_list("q_bits", 10, 62),
            "p_bits": h.int_list("p_bits", 10, 62, least=0),  # none for BV; the class checks
            "dnum": h.integer("dnum", 1, _fmt.MAX_MODULI),
            "insecure": h.flag("insecure"),
            "hamming_weight": h.optional_int("hamming_weight", 1, n),
            "sigma": h.number("sigma", 0.0, 1e6),
            "key_switching": h.choice("key_switching", KEY_SWITCHING, "hybrid"),
            "digit_bits": h.integer("digit_bits", 2, 61) if "digit_bits" in h.value else None,
        }
        moduli = h.moduli("moduli")
        if "explicit_moduli" in h.value:
            if h.value["explicit_moduli"] is not True:
                raise ValueError("the blob's parameters: explicit_moduli must be true when given")
            split = len(moduli) - len(h.value["q_bits"])
            if split < 0:
                raise ValueError("the blob's parameters have fewer moduli than q_bits holds")
            fields["p_moduli"], fields["q_moduli"] = moduli[:split], moduli[split:]
        if fields["insecure"] and not insecure:
            raise ValueError(
                "the blob's parameters are marked insecure=True (beyond the HE-standard table, "
                f"for tests and teaching); {reader} refuses them unless its reader opts in: "
                f"pass insecure=True to {reader}"
            )
        try:
            params = cls(**fields, **own)
        except (TypeError, ValueError, OverflowError) as e:
            raise ValueError(f"the blob's {name} parameters are not valid: {e}") from None
        if moduli != params.p_moduli + params.q_moduli:
            raise ValueError(
                "the blob's moduli differ from the ones these parameters give (written by a Ren "
                "that chose primes differently)"
            )
        return params

    @property
    def L(self) -> int:
        """The number of ciphertext moduli."""
        return len(self.q_bits)

    @property
    def max_level(self) -> int:
        """The level of a fresh value: ``L - 1``."""
        return len(self.q_bits) - 1

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
    def bv_digits(self) -> tuple[tuple[int, ...], ...]:
        """BV's digit primes for each ciphertext modulus (``keyswitch.bv_digit_primes``)."""
        return bv_digit_primes(self)

    @property
    def key_parts(self) -> int:
        """The pairs of a key-switching key: one per digit (hybrid), per BV digit (BV)."""
        if self.key_switching == "bv":
            return sum(max(1, len(d)) for d in self.bv_digits)
        return len(self.digits)

    @functools.cached_property
    def key_ring(self) -> RingSpec:
        """The ring of the keys: the special moduli, then every ciphertext modulus.

        Without special moduli (BV key switching) it is the ring of the top level.
        """
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
            raise TypeError(f"level must be an int, got {describe(level)}")
        if not 0 <= level <= self.max_level:
            raise ValueError(f"level={level!r} is outside [0, {self.max_level}]")


P = TypeVar("P", bound=Chain)


def params_of(h: _fmt.Header, params: P, what: str) -> P:
    """The parameters of a blob read into a context with ``params``: they must be equal.

    The context's parameters were accepted already, so the blob's are read with the insecure
    opt-in, then compared.

    Raises:
        ValueError: parameters other than ``params``, naming both.
    """
    value = h.raw("params")
    if _fmt.same_json(value, params._header()):  # 1 == True in Python; not in JSON
        return params
    found = type(params)._from_header(value, insecure=True, reader="")
    if found != params:
        raise ValueError(f"the {what} was written for {found}, not this context's {params}")
    return found
