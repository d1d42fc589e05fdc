"""The typed ``arg`` of each op family: one small frozen dataclass each, checked when it is made.

Every argument checks its fields in ``__post_init__``, whoever builds it (the front end, a pass,
a plan file read back): an int field holds a real ``int`` (not a ``bool``, a string or a float)
in its range, a device is a known device name, a layout is ``"all"`` or ``"first"``. So no
argument can carry text where a number belongs, and a renderer that formats one writes only what
Ren would write. A wrong field raises ``TypeError`` (wrong type) or ``ValueError`` (out of range)
naming the class, the field and the value.

The checks are a few type tests each: arguments are made on every eager operation.
``ren.ir.node`` re-exports every class here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ren.device import DEVICES, Buffer, registered_backend
from ren.errors import describe
from ren.ring import Domain, RingSpec

__all__ = [
    "LAYOUTS",
    "BufferArg",
    "ConstArg",
    "ConstRowArg",
    "CopyArg",
    "GaloisArg",
    "ImmArg",
    "IndexArg",
    "RescaleArg",
    "RingArg",
    "SlotArg",
    "ToRingArg",
    "ViewArg",
    "check_device",
    "check_domain",
    "check_int",
    "check_ring",
]

#: Which words of a limb hold a lowered constant: every word, or coefficient 0 only.
LAYOUTS = ("all", "first")


def check_int(where: str, value: object, low: int | None = 0, high: int | None = None) -> int:
    """``value`` if it is an ``int`` (not a bool) in ``[low, high)`` (``None``: no bound).

    Raises:
        TypeError: for anything but an ``int`` (a bool, a string, a float, ``None``).
        ValueError: for an int out of range. Both name ``where`` (``"IndexArg.limb_offset"``).
    """
    if type(value) is not int and (not isinstance(value, int) or isinstance(value, bool)):
        raise TypeError(f"{where} must be an int, got {describe(value)}")
    if (low is not None and value < low) or (high is not None and value >= high):
        bound = f">= {low}" if high is None else f"in [{low}, {high})"
        raise ValueError(f"{where} must be {bound}, got {value}")
    return value


def check_device(where: str, value: object) -> str:
    """``value`` if it is a device name Ren knows (its own, or a registered one).

    Raises:
        TypeError: for a non-string. ValueError: for an unknown name. Both name ``where``.
    """
    if type(value) is not str:
        raise TypeError(f"{where} must be a device name (a str), got {describe(value)}")
    if value not in DEVICES and registered_backend(value) is None:
        raise ValueError(f"{where} {value!r} is not a known device ({', '.join(DEVICES)}, ...)")
    return value


def check_ring(where: str, value: object) -> RingSpec:
    """``value`` if it is a ``RingSpec``; else ``TypeError`` naming ``where``."""
    if not isinstance(value, RingSpec):
        raise TypeError(f"{where} must be a RingSpec, got {describe(value)}")
    return value


def check_domain(where: str, value: object) -> Domain:
    """``value`` if it is a ``Domain``; else ``TypeError`` naming ``where``."""
    if not isinstance(value, Domain):
        raise TypeError(f"{where} must be a Domain, got {describe(value)}")
    return value


def _check_layout(where: str, value: object) -> None:
    if type(value) is not str or value not in LAYOUTS:
        raise ValueError(f"{where} must be 'all' or 'first', got {describe(value)}")


def _check_galois(where: str, value: object, n: int | None) -> None:
    """An odd Galois element, at least 1 (and below ``2n`` when the ring is known)."""
    value = check_int(where, value, 1, None if n is None else 2 * n)
    if not value & 1:
        raise ValueError(f"{where} {value} must be odd")


# --------------------------------------------------------------------------------------------
# the front end's and the storage ops' args


@dataclass(frozen=True)
class RingArg:
    """``AS_RING`` metadata: the ring and the domain of the data below it."""

    ring: RingSpec
    domain: Domain

    def __post_init__(self) -> None:
        if type(self.ring) is not RingSpec or type(self.domain) is not Domain:  # the fast path
            check_ring("RingArg.ring", self.ring)
            check_domain("RingArg.domain", self.domain)

    def __hash__(self) -> int:
        # computed once: the node cache hashes the arg of every AS_RING it looks up
        h = self.__dict__.get("_hash")
        if h is None:
            h = self.__dict__["_hash"] = hash((self.ring, self.domain))
        return h

    def __getstate__(self) -> dict[str, object]:
        # the hash is this process's (strings and enums hash differently in another)
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    def __repr__(self) -> str:
        return f"n={self.ring.n} q={self.ring.moduli} {self.domain.value}"


@dataclass(frozen=True)
class ToRingArg:
    """``TO_RING`` target: the ring whose moduli the value is carried to."""

    ring: RingSpec

    def __post_init__(self) -> None:
        if type(self.ring) is not RingSpec:
            check_ring("ToRingArg.ring", self.ring)

    def __repr__(self) -> str:
        return f"-> n={self.ring.n} q={self.ring.moduli}"


@dataclass(frozen=True)
class RescaleArg:
    """``RESCALE``: divide by the product of ``moduli`` (which are dropped), rounding.

    ``moduli`` is a non-empty tuple of distinct ints, each at least 2.
    """

    moduli: tuple[int, ...]

    def __post_init__(self) -> None:
        if type(self.moduli) is not tuple or not self.moduli:
            got = describe(self.moduli)
            raise TypeError(f"RescaleArg.moduli must be a non-empty tuple, got {got}")
        for q in self.moduli:
            if type(q) is not int or q < 2:
                check_int("RescaleArg.moduli", q, 2)
        if len(self.moduli) > 1 and len(set(self.moduli)) != len(self.moduli):
            raise ValueError(f"RescaleArg.moduli {self.moduli} repeat a modulus")

    def __repr__(self) -> str:
        return f"/ {'*'.join(map(str, self.moduli))}"


@dataclass(frozen=True)
class GaloisArg:
    """``ROTATE``/``AUTOMORPHISM``: ``X -> X^galois``; ``steps`` records a slot rotation.

    ``galois`` is odd and positive (the verifier checks it is below ``2n`` of the ring it acts
    on); ``steps`` is ``None`` or a non-negative int.
    """

    galois: int
    steps: int | None = None

    def __post_init__(self) -> None:
        _check_galois("GaloisArg.galois", self.galois, None)
        if self.steps is not None:
            check_int("GaloisArg.steps", self.steps)

    def __repr__(self) -> str:
        return f"g={self.galois}" + (f" (rot {self.steps})" if self.steps is not None else "")


@dataclass(frozen=True)
class CopyArg:
    """``COPY`` destination device (a known device name)."""

    device: str

    def __post_init__(self) -> None:
        if self.device not in DEVICES:
            check_device("CopyArg.device", self.device)

    def __repr__(self) -> str:
        return f"-> {self.device}"


@dataclass(frozen=True)
class ConstArg:
    """``CONST``: the integer ``value`` (any size; reduced per modulus when lowered).

    ``input`` is ``None`` for every constant but a ``Poly.const`` argument of a ``ren.jit``
    capture, which ``ren.capture.constants.as_inputs`` numbers (an int ``>= 0``, one per input
    and capture): a node of its own, never the node of an equal constant of the function's body.
    """

    value: int
    device: str
    input: int | None = None

    def __post_init__(self) -> None:
        if type(self.value) is not int or self.device not in DEVICES:
            check_int("ConstArg.value", self.value, None)
            check_device("ConstArg.device", self.device)
        if self.input is not None:
            check_int("ConstArg.input", self.input)

    def __repr__(self) -> str:
        return f"{self.value} {self.device}" + ("" if self.input is None else " (input)")


@dataclass(frozen=True, eq=False)
class BufferArg:
    """``BUFFER``: a device buffer, compared by identity (two buffers are never equal)."""

    buffer: Buffer

    def __post_init__(self) -> None:
        if not isinstance(self.buffer, Buffer):
            raise TypeError(f"BufferArg.buffer must be a Buffer, got {describe(self.buffer)}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BufferArg) and other.buffer is self.buffer

    def __hash__(self) -> int:
        return id(self.buffer)

    def __repr__(self) -> str:
        return f"{self.buffer.device} {self.buffer.size} words"


@dataclass(frozen=True)
class ViewArg:
    """``BUFFER_VIEW``: ``size`` words starting ``offset`` words into the source buffer."""

    offset: int
    size: int

    def __post_init__(self) -> None:
        check_int("ViewArg.offset", self.offset)
        check_int("ViewArg.size", self.size)

    def __repr__(self) -> str:
        return f"@{self.offset} {self.size} words"


# --------------------------------------------------------------------------------------------
# args of the scheduler's and kernels' ops


@dataclass(frozen=True)
class ImmArg:
    """``IMM``: the constant polynomial ``value`` of ``ring`` (on ``device``), lowered.

    ``layout`` says which words hold it: ``"all"`` (every word: a constant in NTT form, or a scalar
    factor in either form) or ``"first"`` (coefficient 0 of each limb, zeros elsewhere: a constant
    added in coefficient form). The value is the same ring element either way.
    """

    value: int
    ring: RingSpec
    device: str
    layout: str = "all"

    def __post_init__(self) -> None:
        check_int("ImmArg.value", self.value, None)
        check_ring("ImmArg.ring", self.ring)
        check_device("ImmArg.device", self.device)
        _check_layout("ImmArg.layout", self.layout)

    def __repr__(self) -> str:
        return f"{self.value} {self.layout} n={self.ring.n} q={self.ring.moduli}"


@dataclass(frozen=True)
class ConstRowArg:
    """``IMM`` in a kernel body: the constant's words are a row of the kernel's constants.

    Row ``row`` of the constants argument (the ``SLOT`` the ``IMM`` reads) holds the words per
    limb; they are not literals in the body.
    ``kernelize`` moves every constant's value out of the body into ``KernelArg.consts``, so
    kernels that differ only in constant values have one body (one compiled library). ``layout``
    is ``ImmArg``'s: ``"all"`` or ``"first"`` (coefficient 0 of each limb, zeros elsewhere).
    """

    row: int
    ring: RingSpec
    device: str
    layout: str = "all"

    def __post_init__(self) -> None:
        check_int("ConstRowArg.row", self.row)
        check_ring("ConstRowArg.ring", self.ring)
        check_device("ConstRowArg.device", self.device)
        _check_layout("ConstRowArg.layout", self.layout)

    def __repr__(self) -> str:
        return f"row {self.row} {self.layout} n={self.ring.n} q={self.ring.moduli}"


@dataclass(frozen=True)
class IndexArg:
    """``INDEX``/``LOAD``: read a value of ``ring`` in ``domain`` from a buffer.

    Output word ``(limb i, slot k)`` reads buffer word ``(i + limb_offset) * n + j``: ``j = k``,
    or ``j = perm_g[k]`` (the NTT-form automorphism gather) when ``galois`` is set.
    ``limb_offset`` is a non-negative int; ``galois`` is ``None`` or odd in ``(0, 2n)``.
    """

    ring: RingSpec
    domain: Domain
    limb_offset: int = 0
    galois: int | None = None

    def __post_init__(self) -> None:
        check_ring("IndexArg.ring", self.ring)
        check_domain("IndexArg.domain", self.domain)
        check_int("IndexArg.limb_offset", self.limb_offset)
        if self.galois is not None:
            _check_galois("IndexArg.galois", self.galois, self.ring.n)

    def __repr__(self) -> str:
        out = f"n={self.ring.n} q={self.ring.moduli} {self.domain.value}"
        if self.limb_offset:
            out += f" +{self.limb_offset} limbs"
        return out + (f" gather g={self.galois}" if self.galois is not None else "")


@dataclass(frozen=True)
class SlotArg:
    """``SLOT``: the kernel's ``index``-th buffer parameter (0 is the output)."""

    index: int

    def __post_init__(self) -> None:
        if type(self.index) is not int or self.index < 0:
            check_int("SlotArg.index", self.index)

    def __repr__(self) -> str:
        return f"#{self.index}"
