"""A saved plan's result: its structure, the types it may rebuild, and its values' nodes.

A plan file writes its result as nested codes: ``{"poly": node}`` for a ``Poly`` (an
``AS_RING`` over one of the plan's buffers, or over a view of one), ``{"list": [...]}``,
``{"tuple": [...]}``, ``{"dict": {...}}``, ``{"value": v}`` for a number, string or ``None``,
and ``{"object": "module:name", "fields": {...}}`` for a value of a scheme. Reading one back
runs no code from the file and imports nothing it names: an object's type must be one of
``REBUILDABLE`` (a fixed table of Ren's own result types, each with the kind of each field),
and each field is checked before the type rebuilds the value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any

from ren.capture.planfile import PlanFileError, decode
from ren.capture.planshape import ref_problem
from ren.ir.args import RingArg, ViewArg
from ren.ir.op import DType

__all__ = ["MAX_DEPTH", "REBUILDABLE", "check_fields", "node_parts", "walk"]

#: How deep a result may nest (lists, tuples, dicts, values of a scheme).
MAX_DEPTH = 32

#: The result types a plan may rebuild: ``"module:name"`` -> each field and what it holds.
REBUILDABLE: dict[str, dict[str, str]] = {
    "ren.schemes.ckks:Ciphertext": {
        "parts": "polys",
        "scale": "scale",
        "level": "level",
        "real": "bool",
    },
    "ren.schemes.ckks:Plaintext": {
        "poly": "poly",
        "scale": "scale",
        "level": "level",
        "real": "bool",
    },
    "ren.schemes.integer.types:Ciphertext": {
        "parts": "polys",
        "level": "level",
        "correction": "int",
        "scheme": "scheme",
    },
}

#: Each kind of field: whether a rebuilt value is of it (``poly`` is told by the caller).
_KINDS: dict[str, Callable[[object, Callable[[object], bool]], bool]] = {
    "polys": lambda v, poly: isinstance(v, tuple) and len(v) >= 1 and all(map(poly, v)),
    "poly": lambda v, poly: poly(v),
    "scale": lambda v, poly: type(v) is float and math.isfinite(v) and v > 0,
    "level": lambda v, poly: type(v) is int and v >= 0,
    "int": lambda v, poly: type(v) is int,
    "bool": lambda v, poly: type(v) is bool,
    "scheme": lambda v, poly: v in (None, "bfv", "bgv"),
}


def _fail(where: str, what: str) -> PlanFileError:
    return PlanFileError(f"the plan cannot be loaded: its result at {where} {what}")


def walk(code: Any, path: str = "result", depth: int = 0) -> Iterator[tuple[str, Any]]:
    """Each ``Poly`` of a result structure as ``(path, node code)``, the structure checked.

    Raises:
        PlanFileError: a structure Ren does not write, nested past ``MAX_DEPTH``, or an object
            of a type not in ``REBUILDABLE`` (or without exactly its fields).
    """
    if depth > MAX_DEPTH:
        raise _fail(path, f"nests deeper than {MAX_DEPTH} levels")
    kind = next(iter(code)) if isinstance(code, dict) and len(code) == 1 else None
    items = code[kind] if kind is not None else None
    if kind == "poly":
        yield path, items
    elif kind in ("list", "tuple") and isinstance(items, list):
        for i, v in enumerate(items):
            yield from walk(v, f"{path}[{i}]", depth + 1)
    elif kind == "dict" and isinstance(items, dict):
        for key, v in items.items():
            yield from walk(v, f"{path}[{key[:20]!r}]", depth + 1)
    elif kind == "value":
        if not isinstance(decode(items), type(None) | bool | int | float | str):
            raise _fail(path, "is a value Ren does not write")
    elif isinstance(code, dict) and set(code) == {"object", "fields"}:
        name, fields = code["object"], code["fields"]
        want = REBUILDABLE.get(name) if isinstance(name, str) else None
        if want is None:
            raise _fail(path, f"is a {str(name)[:60]}, not a type Ren rebuilds")
        if not isinstance(fields, dict) or set(fields) != set(want):
            raise _fail(path, f"has other fields than a {name}'s {sorted(want)}")
        for key, v in fields.items():
            yield from walk(v, f"{path}.{key}", depth + 1)
    else:
        raise _fail(path, f"is {str(code)[:60]}, not something Ren writes")


def check_fields(name: str, fields: dict[str, object], poly: Callable[[object], bool]) -> None:
    """Each rebuilt field of an object of type ``name`` holds what ``REBUILDABLE`` says.

    Raises:
        PlanFileError: naming the field and its value.
    """
    for key, kind in REBUILDABLE[name].items():
        if not _KINDS[kind](fields[key], poly):
            raise _fail(f"{name}.{key}", f"is {str(fields[key])[:40]}, not a {kind}")


def node_parts(path: str, code: Any) -> tuple[DType, RingArg, ViewArg | None, list[Any]]:
    """A result value's node code, checked: ``(dtype, ring arg, view arg or None, buffer ref)``.

    The value is ``AS_RING`` over ``["buffer", dtype, ref]``, or over a ``BUFFER_VIEW`` of
    one, every dtype the ring's word type, ``ref`` a buffer reference of a plan file
    (``ren.capture.planshape.ref_problem``). Whether the ring fits its buffer is the caller's.

    Raises:
        PlanFileError: for any other code.
    """
    try:
        op, dtype, arg, inner = _items(code, 4)
        inner, view = _items(inner, 1)[0], None
        if isinstance(inner, list) and inner[:1] == ["BUFFER_VIEW"]:
            _, view_dtype, view, below = _items(inner, 4)
            inner, view = _items(below, 1)[0], decode(view)
            if view_dtype != dtype or not isinstance(view, ViewArg):
                raise ValueError(view_dtype)
        kind, buffer_dtype, ref = _items(inner, 3)
        arg = decode(arg)
        if op != "AS_RING" or kind != "buffer" or not isinstance(arg, RingArg):
            raise ValueError(op)
        word = DType.of_ring(arg.ring.dtype)
        if dtype != word.name or buffer_dtype != word.name or ref_problem(ref, path):
            raise ValueError(dtype)
    except (TypeError, ValueError):
        raise _fail(path, "is not a ring over a buffer of the plan") from None
    return word, arg, view, ref


def _items(value: Any, count: int) -> list[Any]:
    """``value`` if it is a list of ``count`` items (else ``ValueError``)."""
    if not isinstance(value, list) or len(value) != count:
        raise ValueError(count)
    return value
