"""The data of a parsed MLIR module: ops, blocks, attributes and the tensor types HEIR uses.

``ren.interop.heir.reader`` makes them from MLIR's generic form; the interpreter
(``ren.interop.heir.interpreter``) gives them meaning. Nothing here runs text.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = [
    "LIMITS",
    "Attr",
    "Block",
    "Dense",
    "MlirError",
    "Module",
    "Op",
    "Raw",
    "Symbol",
    "TensorType",
    "Typed",
    "tensor_type",
]

#: Bounds on what a text may make: characters, nesting of regions, attributes and types, ops,
#: and the elements of one dense tensor.
LIMITS = {"chars": 256 * 2**20, "depth": 200, "ops": 2_000_000, "elements": 2**26}


class MlirError(ValueError):
    """Text outside the grammar or the limits, with the line and column where it was found."""


@dataclasses.dataclass(frozen=True)
class Raw:
    """An attribute or type the reader keeps as its text (``#lwe.ring<...>``, ``affine_map``)."""

    text: str


@dataclasses.dataclass(frozen=True)
class Dense:
    """``dense<...> : tensor<...>``: its values as an array of the tensor's shape."""

    values: np.ndarray
    type: str


#: An attribute's value: an int (with its type in ``typed`` where given), a float, a bool, a
#: string, a symbol (``@name``: its name, in ``Symbol``), a list, a dict, a dense tensor, a type
#: (its text) or the text of anything else.
Attr = Any


@dataclasses.dataclass(frozen=True)
class Symbol:
    """``@name``: a reference to a function (``callee``)."""

    name: str


@dataclasses.dataclass(frozen=True)
class Typed:
    """A number with its type: ``4 : index``, ``1.0 : f32`` (``value``, ``type``)."""

    value: int | float
    type: str


@dataclasses.dataclass
class Block:
    """A block: its arguments ``(name, type)`` and its ops."""

    args: list[tuple[str, str]]
    ops: list[Op]


@dataclasses.dataclass
class Op:
    """One op: ``results = "name"(operands) <{properties}> (regions) {attributes} : types``."""

    name: str
    results: list[str]
    operands: list[str]
    properties: dict[str, Attr]
    attributes: dict[str, Attr]
    regions: list[list[Block]]
    operand_types: list[str]
    result_types: list[str]
    loc: str | None
    line: int

    def attr(self, key: str, default: Attr = None) -> Attr:
        """A property or attribute (properties first), ``default`` when neither has it."""
        if key in self.properties:
            return self.properties[key]
        return self.attributes.get(key, default)

    def walk(self) -> Iterator[Op]:
        """This op and every op inside its regions, depth first."""
        yield self
        for region in self.regions:
            for block in region:
                for op in block.ops:
                    yield from op.walk()


@dataclasses.dataclass
class Module:
    """A parsed module: its top op (``builtin.module``) and the aliases it defined."""

    op: Op
    aliases: dict[str, str]

    def functions(self) -> dict[str, Op]:
        """The ``func.func`` ops inside, by their ``sym_name``."""
        out = {}
        for block in self.op.regions[0] if self.op.regions else []:
            for op in block.ops:
                if op.name == "func.func":
                    out[op.attr("sym_name")] = op
        return out


@dataclasses.dataclass(frozen=True)
class TensorType:
    """``tensor<4x8xf32>``: the shape and the element type (its text)."""

    shape: tuple[int, ...]
    element: str


_TENSOR = re.compile(r"tensor<((?:(?:\d+|\?)x)*)(.+)>\Z", re.S)


def tensor_type(text: str) -> TensorType | None:
    """The shape (``-1``: a dynamic size, ``?``) and element type of a ranked tensor type.

    ``None`` for any other type.
    """
    m = _TENSOR.match(text.strip())
    if not m:
        return None
    dims = tuple(-1 if d == "?" else int(d) for d in m.group(1).split("x") if d)
    if math.prod(d for d in dims if d > 0) > LIMITS["elements"]:
        raise MlirError(f"{text[:80]}: more than {LIMITS['elements']} elements")
    return TensorType(dims, m.group(2))
