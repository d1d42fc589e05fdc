"""A cursor over MLIR text: whitespace, strings, value names, balanced brackets, locations.

The pieces of the generic form every op shares; ``ren.interop.heir.reader`` builds the grammar
on them. Every loop moves forward or stops, nesting is bounded (``LIMITS["depth"]``), and a
problem is a ``MlirError`` with the line and column.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

from ren.interop.heir.ir import LIMITS, MlirError

T = TypeVar("T")

__all__ = ["BARE", "NAME", "NUMBER", "Cursor"]

NUMBER = re.compile(r"[-+]?(0x[0-9a-fA-F]+|\d+(\.\d*)?([eE][-+]?\d+)?|inf|nan)")
NAME = re.compile(r"[A-Za-z_$.\-0-9]+(#\d+)?")
BARE = re.compile(r"[A-Za-z_][A-Za-z_$.0-9]*")


class Cursor:
    """A cursor over the text, with the grammar's pieces as methods."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0
        self.ops = 0
        self.aliases: dict[str, str] = {}

    # -- where, and what is next

    def where(self, pos: int | None = None) -> tuple[int, int]:
        """The line and column (from 1) of ``pos`` (default: the cursor)."""
        pos = self.pos if pos is None else pos
        line = self.text.count("\n", 0, pos) + 1
        return line, pos - (self.text.rfind("\n", 0, pos) + 1) + 1

    def error(self, what: str) -> MlirError:
        """A ``MlirError`` saying ``what``, with the line, column and the text there."""
        line, col = self.where()
        near = self.text[self.pos : self.pos + 40].split("\n")[0]
        return MlirError(f"line {line}, column {col}: {what} (at {near!r})")

    def skip(self) -> None:
        """Past whitespace and ``//`` comments."""
        text, pos = self.text, self.pos
        while pos < len(text):
            c = text[pos]
            if c in " \t\r\n":
                pos += 1
            elif text.startswith("//", pos):
                end = text.find("\n", pos)
                pos = len(text) if end < 0 else end
            else:
                break
        self.pos = pos

    def peek(self, s: str) -> bool:
        """Whether ``s`` is next (after whitespace)."""
        self.skip()
        return self.text.startswith(s, self.pos)

    def take(self, s: str) -> bool:
        """Past ``s`` if it is next; whether it was."""
        if self.peek(s):
            self.pos += len(s)
            return True
        return False

    def expect(self, s: str) -> None:
        """Past ``s``, which must be next."""
        if not self.take(s):
            raise self.error(f"expected {s!r}")

    def items(self, close: str, item: Callable[[], T]) -> list[T]:
        """``item, item, ... close`` (the opening already past): the items, none for ``close``."""
        out: list[T] = []
        if self.take(close):
            return out
        while True:
            out.append(item())
            if self.take(close):
                return out
            self.expect(",")

    def enter(self) -> None:
        """One level deeper (a region or an attribute), at most ``LIMITS["depth"]``."""
        self.depth += 1
        if self.depth > LIMITS["depth"]:
            raise self.error(f"nested more than {LIMITS['depth']} deep")

    # -- lexemes

    def string(self) -> str:
        """A quoted string, its escapes decoded (a quote, a backslash, n, two hex digits)."""
        self.skip()
        if not self.text.startswith('"', self.pos):
            raise self.error("expected a string")
        out: list[str] = []
        pos = self.pos + 1
        while pos < len(self.text):
            c = self.text[pos]
            if c == '"':
                self.pos = pos + 1
                return "".join(out)
            if c == "\\":
                nxt = self.text[pos + 1 : pos + 3]
                if nxt[:1] in ('"', "\\"):
                    out.append(nxt[0])
                    pos += 2
                    continue
                if nxt[:1] == "n":
                    out.append("\n")
                    pos += 2
                    continue
                if re.fullmatch(r"[0-9a-fA-F]{2}", nxt):
                    out.append(chr(int(nxt, 16)))
                    pos += 3
                    continue
                raise self.error("a string with an unknown escape")
            if c == "\n":
                break
            out.append(c)
            pos += 1
        raise self.error("a string without its closing quote")

    def value_name(self) -> str:
        """A value's name: ``%0``, ``%arg3``, ``%x#1``."""
        self.skip()
        if not self.text.startswith("%", self.pos):
            raise self.error("expected a value (%name)")
        m = NAME.match(self.text, self.pos + 1)
        if not m:
            raise self.error("expected a value name after %")
        self.pos = m.end()
        return "%" + m.group(0)

    def balanced(self, stops: str) -> str:
        """Text up to a top-level character of ``stops``, brackets and strings balanced."""
        self.skip()
        start, pos = self.pos, self.pos
        stack: list[str] = []
        pairs = {"(": ")", "[": "]", "{": "}", "<": ">"}
        text = self.text
        while pos < len(text):
            c = text[pos]
            if not stack and c in stops:
                break
            if c == '"':
                self.pos = pos
                self.string()
                pos = self.pos
                continue
            if c == "-" and text.startswith("->", pos):
                pos += 2
                continue
            if c in pairs:
                stack.append(pairs[c])
                if len(stack) > LIMITS["depth"]:
                    self.pos = pos
                    raise self.error(f"nested more than {LIMITS['depth']} deep")
            elif c in ")]}>" and (not stack or stack.pop() != c):
                self.pos = pos
                raise self.error(f"an unbalanced {c!r}")
            pos += 1
        if stack:
            self.pos = pos
            raise self.error("an unclosed bracket")
        self.pos = pos
        return text[start:pos].strip()
