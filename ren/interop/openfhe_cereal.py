"""cereal's JSON archive as OpenFHE writes it: shared pointers, nested base classes, checked fields.

OpenFHE serializes with cereal (``SERJSON``). Three traits of cereal's JSON archive matter to a
reader, and :class:`Archive` handles them so that ``ren.interop.openfhe_format`` reads OpenFHE's
objects by their field names alone:

* **Shared pointers.** A ``std::shared_ptr``'s first occurrence holds its object: ``{"ptr_wrapper":
  {"id": 2^31 + k, "data": ...}}``; every later one only ``{"ptr_wrapper": {"id": k}}``. A
  polymorphic pointer also names its class, once (``"polymorphic_name"``); a ``unique_ptr`` is
  ``{"ptr_wrapper": {"valid": 1, "data": ...}}``. :meth:`Archive.deref` follows either.
* **Base classes** are saved as a nested object named ``value0`` (a class's first unnamed
  member), so a field of a base class sits one ``value0`` deeper: :meth:`Archive.field` looks
  through the chain.
* **Versions.** ``cereal_class_version`` appears at a class's first occurrence; it is ignored.

Every lookup names where it looked, and a failure is a ``ValueError`` that names the file, the
place and what is accepted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TypeAlias, cast

__all__ = ["NEW_POINTER", "Archive", "Json", "Source", "load"]

NEW_POINTER = 1 << 31  # cereal's flag on a shared pointer's first occurrence
Source = str | Path | bytes
#: A value of parsed JSON, not checked yet: what ``Archive`` hands its reader to check.
Json: TypeAlias = "dict[str, Json] | list[Json] | str | int | float | bool | None"


class Archive:
    """One JSON document, its shared pointers by number, and its name for error messages.

    Args:
        doc: the parsed JSON.
        name: the file's name (or ``"the JSON text"``), quoted by every error.
        accepted: what the reader accepts, in words, quoted by every error.
    """

    def __init__(self, doc: Json, name: str, accepted: str) -> None:
        self.doc, self.name, self.accepted = doc, name, accepted
        self.objects: dict[int, Json] = {}
        stack = [doc]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                pw = node.get("ptr_wrapper")
                if (
                    isinstance(pw, dict)
                    and isinstance(number := pw.get("id"), int)
                    and "data" in pw
                ):
                    self.objects[number & ~NEW_POINTER] = pw["data"]
                stack.extend(node.values())
            elif isinstance(node, list) and node and not isinstance(node[0], int):
                stack.extend(node)  # a list of words holds no pointer

    def fail(self, what: str) -> ValueError:
        """The error for ``what`` is wrong, naming the file and what is accepted."""
        return ValueError(f"{self.name}: {what}; accepted: {self.accepted}")

    def get(self, node: Json, key: str, where: str) -> Json:
        """``node[key]``, or an error saying that ``where`` has no ``key``."""
        if not isinstance(node, dict) or key not in node:
            raise self.fail(f"no {key!r} in {where}")
        return node[key]

    def deref(self, pointer: Json, where: str) -> Json:
        """The object a (shared or unique) pointer holds or refers to."""
        # a wrapper that is not an object fails at ``in`` or ``[]`` as Python says
        pw = cast(dict[str, Json], self.get(pointer, "ptr_wrapper", where))
        if "data" in pw:
            return pw["data"]
        number = self.get(pw, "id", where)
        if not isinstance(number, int) or (number & ~NEW_POINTER) not in self.objects:
            raise self.fail(f"{where} refers to object {number!r}, which the file never holds")
        return self.objects[number & ~NEW_POINTER]

    def int_(self, node: Json, key: str, where: str) -> int:
        """``node[key]``, checked to be an integer."""
        return self.integer(self.get(node, key, where), f"{where}.{key}")

    def integer(self, value: object, what: str) -> int:
        """``value``, checked to be an integer (not a bool); ``what`` names it in the error."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(f"{what} is {value!r}, not an integer")
        return value

    def number(self, value: object, what: str, most: float = 1e308) -> int | float:
        """``value``, checked to be an int or a float (not a bool) of magnitude at most ``most``."""
        if isinstance(value, bool) or not isinstance(value, int | float) or abs(value) > most:
            raise self.fail(f"{what} is {value!r}, not a number")
        return value

    def field(self, node: Json, key: str, where: str) -> Json:
        """The field ``key`` of ``node`` or of one of its base classes (nested ``value0``)."""
        for layer in layers(node):
            if key in layer:
                return layer[key]
        raise self.fail(f"no {key!r} in {where} or its base classes")

    def enum(self, names: tuple[str, ...], value: object, what: str) -> str:
        """The name of an enum's ``value`` (``names`` in the order of their values)."""
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
            return names[value]
        raise self.fail(f"{what} is {value!r}; known: 0..{len(names) - 1} ({', '.join(names)})")


def layers(node: Json) -> Iterator[dict[str, Json]]:
    """``node`` and the base-class objects cereal nests in it as ``value0``, outermost first."""
    while isinstance(node, dict):
        yield node
        node = node.get("value0")


def load(source: Source, accepted: str) -> Archive:
    """The archive of a JSON file: a path, or the JSON itself (``bytes``, a ``str`` from ``{``).

    Raises:
        FileNotFoundError: no such file.
        TypeError: a source of another type.
        ValueError: not JSON (the message says what is ``accepted``, and that a binary
            serialization is not read), or JSON nested too deeply or with an integer of too many
            digits for Python to read.
    """
    if isinstance(source, bytes):
        text, name = source.decode("utf-8", errors="replace"), "the JSON bytes"
    elif isinstance(source, str) and source.lstrip().startswith("{"):
        text, name = source, "the JSON text"
    elif isinstance(source, str | Path):
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"no such file: {path}")
        text, name = path.read_bytes().decode("utf-8", errors="replace"), path.name
    else:
        raise TypeError(f"source must be a path, JSON text or bytes, got {type(source).__name__}")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(
            f"{name} is not JSON ({e.msg}, line {e.lineno}); accepted: {accepted}. A binary "
            "serialization (SERBINARY) is not read: save the object again with SERJSON"
        ) from None
    except (ValueError, RecursionError) as e:  # an integer of too many digits, a deep nest
        raise ValueError(f"{name}: JSON that cannot be read ({e}); accepted: {accepted}") from None
    return Archive(doc, name, accepted)
