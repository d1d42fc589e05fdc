"""The hooks a value gives Ren's engine and tools: every ``__ren_*__`` name, declared once.

The floors below the schemes never import a scheme. A scheme's values (and any value a user
writes) tell them what they need through these methods and attributes, each a protocol here:

* :class:`JitLeaf`: ``__ren_jit_leaf__ = True`` on a class of hashable values that hold no
  ``Poly`` (parameters, rings): ``ren.jit`` keys a plan on the value itself;
* :class:`RegionNoted`: ``__ren_region_notes__(side)``, what a region notes of its input or output
  (a CKKS ciphertext's level and scale; ``ren.ir.region``);
* :class:`Observable`: ``__ren_observe__()``, how the report's observing pass measures a value's
  precision (the polys to realize, then a function giving the bits; ``ren.viz.precision``);
* :class:`PlanValue`: ``__ren_plan_fields__()`` and ``__ren_plan_rebuild__(fields)``, a value a
  saved plan takes or returns, written as checked fields and rebuilt from them (``ren.capture``);
* :class:`StoredInputs` and :class:`KeyFingerprinted`: ``__ren_stored__()`` and
  ``__ren_key_fingerprint__()``, evaluation keys a saved plan reads by name, under a fingerprint
  its inputs must carry (``ren.capture.saved``, ``ren.capture.metadata``);
* :class:`Watchable` (with :class:`WatchView`): ``parts`` and ``__ren_watch__(context)``, how the
  debugger shows and decrypts a value (``ren.viz.debug``).

A floor that calls a hook looks it up on the value's type (``getattr``), so a value without it is
passed over; ``isinstance(value, Observable)`` says the same where a check reads better.
``HOOK_NAMES`` lists every name; a test keeps it equal to the names Ren's code uses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Protocol, Self, TypeAlias, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from ren.poly import Poly

__all__ = [
    "HOOK_NAMES",
    "JitLeaf",
    "KeyFingerprinted",
    "Measure",
    "Observable",
    "PlanValue",
    "RegionNoted",
    "Slots",
    "StoredInputs",
    "WatchView",
    "Watchable",
]

#: What :meth:`Observable.__ren_observe__` gives back to measure: the bits, or notes by name.
Measure: TypeAlias = Callable[[], float | dict[str, object]]

#: A watched value's decrypted slots: complex (CKKS; float64 for its real values) or integers
#: (BFV, BGV).
Slots: TypeAlias = NDArray[np.complex128 | np.float64 | np.int64]


@runtime_checkable
class JitLeaf(Protocol):
    """A hashable value holding no ``Poly``, which ``ren.jit`` keys a plan on as it is."""

    __ren_jit_leaf__: ClassVar[bool]


@runtime_checkable
class RegionNoted(Protocol):
    """A value that says what a region notes of it as its input (``"in"``) or output."""

    def __ren_region_notes__(self, side: str) -> Mapping[str, object]:
        """Notes by name (``level_in``, ``scale_out``, ...) for the report and the debugger."""


@runtime_checkable
class Observable(Protocol):
    """A value whose precision the report's observing pass can measure."""

    def __ren_observe__(self) -> tuple[tuple[Poly, ...], Measure] | None:
        """The polys to realize and the function that measures them, or ``None`` (no oracle)."""


@runtime_checkable
class PlanValue(Protocol):
    """A value a saved plan takes or returns: written as fields, rebuilt from them at load."""

    def __ren_plan_fields__(self) -> dict[str, Any]:  # Any: each value's own checked fields
        """The fields a plan file records (``parts`` and the value's metadata)."""

    @classmethod
    def __ren_plan_rebuild__(cls, fields: dict[str, Any]) -> Self:
        """The value of ``fields`` (as :meth:`__ren_plan_fields__` wrote them, checked)."""


@runtime_checkable
class StoredInputs(Protocol):
    """Values a saved plan reads by name rather than as arguments (evaluation keys)."""

    def __ren_stored__(self) -> dict[str, Poly]:
        """The polys by the names a plan file gives them."""


@runtime_checkable
class KeyFingerprinted(Protocol):
    """Keys whose fingerprint the inputs of a plan saved under them must carry."""

    def __ren_key_fingerprint__(self) -> str:
        """The fingerprint (16 hexadecimal digits)."""


class WatchView(Protocol):
    """What a watched value's ``__ren_watch__(context)`` returns: how the debugger shows it.

    It may also have ``precision_label`` (what the bits measure) and ``notes(parts)`` (lines
    saying what ranges the value breaks), which the debugger looks up by name.
    """

    @property
    def summary(self) -> str:
        """A line after the value's label (``level L, scale 2^S``)."""

    def decrypt(self, parts: tuple[Poly, ...]) -> Slots:
        """The slots of a copy of the value holding ``parts``."""

    def precision_bits(self, got: Slots, expected: NDArray[np.complex128]) -> float:
        """How many bits of ``got`` are right, against the plaintext shadow ``expected``."""


@runtime_checkable
class Watchable(Protocol):
    """A value the debugger can watch: its ``parts`` and its ``__ren_watch__(context)``."""

    @property
    def parts(self) -> tuple[Poly, ...]:
        """The value's polynomials."""

    # Any: each scheme takes its own context type and refuses another with a TypeError; the
    # debugger passes on the one its user gave.
    def __ren_watch__(self, context: Any = None) -> WatchView:
        """How the debugger shows the value, decrypting with ``context``."""


#: Every hook name, as Ren's code spells it.
HOOK_NAMES: frozenset[str] = frozenset(
    {
        "__ren_jit_leaf__",
        "__ren_region_notes__",
        "__ren_observe__",
        "__ren_plan_fields__",
        "__ren_plan_rebuild__",
        "__ren_stored__",
        "__ren_key_fingerprint__",
        "__ren_watch__",
    }
)
