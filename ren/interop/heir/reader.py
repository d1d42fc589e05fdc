"""A reader of MLIR's generic form: the modules HEIR's ``heir-opt`` prints, as plain data.

``heir-opt --mlir-print-op-generic`` prints every op the same way, whatever its dialect::

    %3 = "ckks.rotate"(%1, %2) <{props}> ({regions}) {attrs} : (!ct, index) -> !ct loc(#loc4)

so one small parser reads them all, and the ops' meaning lives elsewhere (the interpreter). A
module is a list of ``Op`` (``ren.interop.heir.ir``), each with its result names, operand names,
properties and attributes (ints, floats, strings, lists, dicts, dense tensors, or the text of an
attribute the reader does not take apart), its regions and its types (as text, aliases resolved).

The text is hostile until read: nothing in it is run, every size is bounded (``ir.LIMITS``: the
text's length, the nesting depth, the ops, a dense tensor's elements), and anything outside the
grammar is a ``MlirError`` naming the line and column.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from ren.interop.heir.ir import (
    LIMITS,
    Attr,
    Block,
    Dense,
    MlirError,
    Module,
    Op,
    Raw,
    Symbol,
    Typed,
    tensor_type,
)
from ren.interop.heir.lexer import BARE, NUMBER, Cursor

__all__ = ["parse"]

_ALIAS = re.compile(r"!([A-Za-z_][A-Za-z_0-9$.]*)")
_FLOAT_TYPES = {"f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64}


class _Reader(Cursor):
    """The grammar: types, attributes, ops, regions and the aliases before the module."""

    # -- types

    def type_(self) -> str:
        """A type's text (aliases resolved), up to a top-level ``,``, ``)`` or the line's end."""
        self.skip()
        start = self.pos
        text = self.balanced(",)={}\n")
        if " loc(" in text:  # a location after the type: left for location()
            self.pos = start + self.text[start:].index(" loc(")
            text = text[: text.index(" loc(")].strip()
        if not text:
            raise self.error("expected a type")
        return self.resolve(text)

    def resolve(self, text: str) -> str:
        """``text`` with its ``!alias`` names replaced by what they stand for."""
        if "!" not in text:
            return text
        return _ALIAS.sub(lambda m: self.aliases.get(m.group(1), m.group(0)), text)

    def type_list(self) -> list[str]:
        self.expect("(")
        return self.items(")", self.type_)

    def function_type(self) -> tuple[list[str], list[str]]:
        ins = self.type_list()
        self.expect("->")
        if self.peek("("):
            return ins, self.type_list()
        return ins, [self.type_()]

    # -- attributes

    def attr_dict(self, close: str) -> dict[str, Attr]:
        out: dict[str, Attr] = {}
        self.enter()
        if self.take(close):
            self.depth -= 1
            return out
        while True:
            self.skip()
            if self.peek('"'):
                key = self.string()
            else:
                m = BARE.match(self.text, self.pos)
                if not m:
                    raise self.error("expected an attribute name")
                key = m.group(0)
                self.pos = m.end()
            out[key] = self.attribute() if self.take("=") else True
            if self.take(close):
                self.depth -= 1
                return out
            self.expect(",")

    def attribute(self) -> Attr:
        self.enter()
        try:
            return self._attribute()
        finally:
            self.depth -= 1

    def _attribute(self) -> Attr:
        self.skip()
        text = self.text
        if self.peek('"'):
            return self.string()
        if self.take("["):
            return self.items("]", self.attribute)
        if self.take("{"):
            self.pos -= 1
            self.pos += 1
            return self.attr_dict("}")
        if self.peek("@"):
            self.pos += 1
            if self.peek('"'):
                return Symbol(self.string())
            m = BARE.match(text, self.pos)
            if not m:
                raise self.error("expected a symbol name after @")
            self.pos = m.end()
            return Symbol(m.group(0))
        for word, value in (("true", True), ("false", False), ("unit", True)):
            if text.startswith(word, self.pos) and not BARE.match(text, self.pos + len(word)):
                self.pos += len(word)
                return value
        if text.startswith("dense<", self.pos):
            return self.dense()
        if text.startswith("array<", self.pos):
            return self.array()
        m = NUMBER.match(text, self.pos)
        if m and (m.end() >= len(text) or not text[m.end()].isalpha() or text[m.end()] == "e"):
            self.pos = m.end()
            number = self.number(m.group(0))
            if self.take(":"):
                return Typed(number, self.type_())
            return number
        if text.startswith("#", self.pos):
            m = BARE.match(text, self.pos + 1)
            if m and not text.startswith("<", m.end()) and m.group(0) in self.aliases:
                self.pos = m.end()
                return Raw(self.aliases[m.group(0)])
        return Raw(self.resolve(self.balanced(",}]>\n")))

    @staticmethod
    def number(s: str) -> int | float:
        t = s.lstrip("+-")
        if t.startswith("0x"):
            return int(s, 16)
        if re.fullmatch(r"\d+", t):
            return int(s)
        return float(s)

    def array(self) -> np.ndarray:
        """``array<i64: 1, 2>`` (``array<i64>``: none)."""
        self.expect("array<")
        m = BARE.match(self.text, self.pos)
        if not m:
            raise self.error("expected an element type in array<...>")
        kind = m.group(0)
        self.pos = m.end()
        values: list[int | float] = []
        if self.take(":"):
            while True:
                self.skip()
                n = NUMBER.match(self.text, self.pos)
                if not n:
                    raise self.error("expected a number in array<...>")
                self.pos = n.end()
                values.append(self.number(n.group(0)))
                if len(values) > LIMITS["elements"]:
                    raise self.error("an array of too many elements")
                if not self.take(","):
                    break
        self.expect(">")
        return np.array(values, dtype=np.float64 if kind.startswith("f") else object)

    def dense(self) -> Dense:
        """``dense<...> : tensor<...>``: a splat, nested lists, or a hex string of the bytes."""
        self.expect("dense<")
        start = self.pos
        body = self.balanced(">")
        self.expect(">")
        self.expect(":")
        type_text = self.type_()
        t = tensor_type(type_text)
        if t is None:
            self.pos = start
            raise self.error(f"dense<...> of a type that is not a ranked tensor: {type_text[:60]}")
        count = math.prod(t.shape)
        floating = t.element in _FLOAT_TYPES
        if body.startswith('"0x'):
            data = (
                bytes.fromhex(body[3:-1])
                if re.fullmatch(r'"0x(?:[0-9A-Fa-f]{2})*"', body)
                else None
            )
            width = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "f16": 2, "f32": 4, "f64": 8}
            size = width.get(t.element)
            if data is None or size is None or len(data) not in (size, size * count):
                self.pos = start
                raise self.error("a dense hex string of the wrong length or element type")
            kind = ("<f" if floating else "<i") + str(size)
            flat = np.frombuffer(data, dtype=kind).astype(np.float64 if floating else np.int64)
            values = np.broadcast_to(flat, (count,)) if len(flat) == 1 else flat
            return Dense(np.array(values).reshape(t.shape), type_text)
        items = [s for s in re.split(r"[\[\],\s]+", body) if s]
        if len(items) not in (1, count) or count > LIMITS["elements"]:
            self.pos = start
            raise self.error(f"dense<...> with {len(items)} values for {count} elements")
        parsed: list[Any] = []
        for s in items:
            if s in ("true", "false"):
                parsed.append(int(s == "true"))
            elif NUMBER.fullmatch(s):
                parsed.append(self.number(s))
            else:
                self.pos = start
                raise self.error(f"dense<...> holds {s[:20]!r}, not a number")
        arr = np.array(parsed, dtype=np.float64 if floating else object)
        if len(parsed) == 1:
            arr = np.full(count, parsed[0], dtype=arr.dtype)
        return Dense(arr.reshape(t.shape), type_text)

    # -- ops

    def location(self) -> str | None:
        if not self.take("loc("):
            return None
        inner = self.balanced(")")
        self.expect(")")
        return self.resolve_loc(f"({inner})")

    def resolve_loc(self, text: str) -> str:
        """``(#loc3)`` or ``("f.mlir":3:8)`` as ``f.mlir:3:8`` (``unknown`` kept)."""
        inner = text.strip()[1:-1].strip() if text.strip().startswith("(") else text
        if inner.startswith("#"):
            inner = self.aliases.get(inner[1:], inner)
            if inner.startswith("loc("):
                inner = inner[4:-1]
        m = re.match(r'"([^"]*)":(\d+):(\d+)', inner)
        return f"{m.group(1)}:{m.group(2)}:{m.group(3)}" if m else inner

    def op(self) -> Op:
        self.ops += 1
        if self.ops > LIMITS["ops"]:
            raise self.error(f"more than {LIMITS['ops']} ops")
        self.skip()
        line = self.where()[0]
        results: list[str] = []
        if self.peek("%"):
            while True:
                name = self.value_name()
                if self.take(":"):  # %x:2, several results under one name
                    self.skip()
                    m = re.match(r"\d+", self.text[self.pos :])
                    if not m or int(m.group(0)) > 4096:
                        raise self.error("expected a result count")
                    self.pos += m.end()
                    results += [f"{name}#{i}" for i in range(int(m.group(0)))]
                else:
                    results.append(name)
                if not self.take(","):
                    break
            self.expect("=")
        name = self.string()
        self.expect("(")
        operands = self.items(")", self.value_name)
        if self.peek("["):
            raise self.error("ops with successors (branches) are outside the subset")
        properties = self.attr_dict("}>") if self.take("<{") else {}
        regions: list[list[Block]] = []
        if self.take("("):
            while True:
                regions.append(self.region())
                if self.take(")"):
                    break
                self.expect(",")
        attributes = self.attr_dict("}") if self.take("{") else {}
        self.expect(":")
        ins, outs = self.function_type()
        loc = self.location()
        if len(ins) != len(operands) or (outs != [] and len(outs) != len(results)):
            raise self.error(
                f"{name}: {len(operands)} operands and {len(results)} results for the types given"
            )
        return Op(name, results, operands, properties, attributes, regions, ins, outs, loc, line)

    def region(self) -> list[Block]:
        self.enter()
        self.expect("{")
        blocks: list[Block] = []
        while not self.take("}"):
            args: list[tuple[str, str]] = []
            if self.take("^"):
                m = BARE.match(self.text, self.pos)
                if not m:
                    raise self.error("expected a block label")
                self.pos = m.end()
                if self.take("("):
                    while not self.take(")"):
                        arg = self.value_name()
                        self.expect(":")
                        args.append((arg, self.type_()))
                        self.location()
                        self.take(",")
                self.expect(":")
            elif blocks:
                raise self.error("a second block without a label")
            block = Block(args, [])
            while not self.peek("}") and not self.peek("^"):
                if self.pos >= len(self.text):
                    raise self.error("a region without its closing brace")
                block.ops.append(self.op())
            blocks.append(block)
        self.depth -= 1
        return blocks

    def aliases_(self) -> None:
        """``#name = ...`` and ``!name = ...`` lines before the module."""
        while True:
            self.skip()
            m = re.compile(r"([#!])([A-Za-z_][A-Za-z_0-9$.]*)\s*=").match(self.text, self.pos)
            if not m:
                return
            self.pos = m.end()
            value = self.balanced("\n")
            self.aliases[m.group(2)] = self.resolve(value)


def parse(text: str) -> Module:
    """The module in ``text``, MLIR's generic form (``heir-opt --mlir-print-op-generic``).

    Raises:
        TypeError: ``text`` not a string.
        MlirError: text outside the grammar or past ``LIMITS``, naming the line and column.
    """
    if not isinstance(text, str):
        raise TypeError(f"the module must be text (str), got {type(text).__name__}")
    if len(text) > LIMITS["chars"]:
        raise MlirError(f"the module is {len(text)} characters, past the limit {LIMITS['chars']}")
    reader = _Reader(text)
    reader.aliases_()
    if not reader.peek('"'):
        raise reader.error(
            'expected an op in MLIR\'s generic form ("builtin.module"() ...): print the module '
            "with heir-opt --mlir-print-op-generic"
        )
    top = reader.op()
    reader.aliases_()  # the locations' aliases follow the module
    reader.skip()
    if reader.pos != len(text):
        raise reader.error("text after the module")
    if top.name != "builtin.module":
        raise MlirError(f"the top op is {top.name!r}, not a builtin.module")
    _resolve_locations(top, reader)
    return Module(top, reader.aliases)


def _resolve_locations(top: Op, reader: _Reader) -> None:
    """Locations that named an alias defined after the module, resolved now that it is read."""
    for op in top.walk():
        if op.loc is not None and op.loc.startswith("#"):
            op.loc = reader.resolve_loc(f"({op.loc})")
