"""What a saved plan checks of its values beyond their ``Poly`` specs: their metadata.

In-process, ``ren.jit`` keys a plan by every leaf of its arguments that is not a ``Poly`` (a
ciphertext's scale, level, correction, parameters and key fingerprint; an int rotation amount):
another value captures another plan. A loaded plan cannot capture, so the manifest records what
each leaf was (its ``metadata``) and the loaded plan refuses what differs:

* a *value* (``None``, a bool, int, float, complex, str or bytes, an enum, or a jit-leaf
  dataclass such as ``Params`` or ``RingSpec``, field by field) is recorded as it is, and must be
  equal, of the same type;
* a *key fingerprint* (a dataclass field marked ``ren_leaf="key"``, and the keys of a stored
  value with ``__ren_key_fingerprint__()``, such as ``EvaluationKeys``) is recorded as a *key
  group*: which values were under the same keys, never the fingerprint itself, so a plan file
  names no key and loads with any party's keys. At load, the stored keys fix their group's
  fingerprint, and so does a result rebuilt in the active context; at a call, every input of a
  group must carry its fingerprint (the first input of a group no one fixed fixes it for the
  call), and two groups never share one;
* a *local* object (a field marked ``ren_leaf="local"``: a ciphertext's context) is not
  recorded; any other object is recorded by its type, which must be the same.

The result's numbers (scale, level, correction, ``real``) and key groups are recorded too and
checked once the loaded plan has rebuilt its result (``__ren_plan_rebuild__``).

A plan file is hostile: ``Metadata`` checks the shape and type of every entry it reads, and only
compares them with what it encodes itself; nothing read is converted or run.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ren.capture.arguments import Leaf, walk
from ren.capture.planfile import PlanFileError

__all__ = ["Metadata", "record"]

#: How deep a recorded value may nest (a ``Params`` nests 3 deep: its tuples of ints).
_DEPTH = 8
#: How each scalar type is written (Any: each function takes the value of its own type). The JSON
#: a plan file holds is typed Any too until checked: its shape is tested where it is read.
_SCALARS: dict[type, Callable[[Any], list[Any]]] = {
    type(None): lambda v: ["none"],
    bool: lambda v: ["bool", v],
    int: lambda v: ["int", str(v)],
    float: lambda v: ["float", v.hex()],
    complex: lambda v: ["complex", v.real.hex(), v.imag.hex()],
    str: lambda v: ["str", v],
    bytes: lambda v: ["bytes", v.hex()],
}
_NUMBERS = (bool, int, float)


class _NotWritable(Exception):
    """A leaf Ren cannot write into a plan file as a value (it is recorded by its type)."""


def _value(obj: object, depth: int = 0) -> list[Any]:
    """``obj`` as tagged JSON data (``["int", "5"]``, ``["leaf", "mod:Params", [...]]``)."""
    make = _SCALARS.get(type(obj))
    if make is not None:
        return make(obj)
    if depth >= _DEPTH:
        raise _NotWritable
    if isinstance(obj, tuple | list):
        return ["tuple", [_value(v, depth + 1) for v in obj]]
    cls = type(obj)
    name = f"{cls.__module__}:{cls.__qualname__}"
    if isinstance(obj, enum.Enum):
        return ["enum", name, obj.name]
    if getattr(obj, "__ren_jit_leaf__", False) and dataclasses.is_dataclass(obj):
        fields = [f for f in dataclasses.fields(obj) if f.compare]
        return ["leaf", name, [[f.name, _value(getattr(obj, f.name), depth + 1)] for f in fields]]
    raise _NotWritable


def _code(kind: str, obj: object, group: Callable[[object], int | None]) -> list[Any] | None:
    """What a plan file records of one leaf; ``None`` for a local one (not recorded)."""
    if kind == "@local":
        return None
    if kind == "@key":
        return ["key", group(obj)]
    try:
        return _value(obj)
    except _NotWritable:
        return ["object", kind]


def _fingerprint(value: object, what: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{what} has a key fingerprint that is not a str: {type(value).__name__}")
    return value


def record(
    leaves: Iterable[Leaf],
    stored: Mapping[str, object] | None,
    used: Iterable[str],
    result: object,
) -> dict[str, Any]:
    """The manifest's ``metadata`` for a plan: its inputs', stored values' and result's leaves.

    Args:
        leaves: the capture's leaves, ``(path, type, value)`` (the third part of its key).
        stored: the stored values given at save, by name.
        used: the names of the stored polys the plan reads (``keys.relin[0].b``).
        result: the plan's result structure.
    """
    groups: dict[object, int] = {}  # a key fingerprint -> its group

    def group(fp: object) -> int | None:
        return None if fp is None else groups.setdefault(fp, len(groups))

    inputs = []
    for path, kind, obj in leaves:
        code = _code(kind, obj, group)
        if code is not None:
            inputs.append([path, code])
    used = list(used)
    keys = {}
    for name, value in sorted((stored or {}).items()):
        fingerprint_of = getattr(value, "__ren_key_fingerprint__", None)
        if fingerprint_of is not None and any(u.startswith(f"{name}.") for u in used):
            keys[name] = group(_fingerprint(fingerprint_of(), f"the stored value {name}"))
    out: list[Leaf] = []
    walk(result, "result", [], out)
    outputs = [
        [path, _code(kind, obj, group)]
        for path, kind, obj in out
        if kind == "@key" or type(obj) in _NUMBERS
    ]
    return {"inputs": inputs, "stored": keys, "result": outputs}


# ---------------------------------------------------------------------------------------------
# reading and checking


def _valid(code: Any, depth: int = 0) -> bool:
    """Whether ``code`` is tagged data ``_value`` or ``_code`` writes (types only)."""
    if not isinstance(code, list) or not code or not isinstance(code[0], str):
        return False
    tag, rest = code[0], code[1:]
    if tag == "none":
        return not rest
    if tag == "bool":
        return len(rest) == 1 and isinstance(rest[0], bool)
    if tag in ("int", "float", "str", "bytes", "object"):
        return len(rest) == 1 and isinstance(rest[0], str)
    if tag in ("complex", "enum"):
        return len(rest) == 2 and all(isinstance(v, str) for v in rest)
    if tag == "key":
        g = rest[0] if len(rest) == 1 else "?"
        return g is None or (type(g) is int and g >= 0)
    if depth >= _DEPTH or len(rest) != (1 if tag == "tuple" else 2):
        return False
    if tag == "tuple":
        return isinstance(rest[0], list) and all(_valid(v, depth + 1) for v in rest[0])
    if tag == "leaf":
        pairs = rest[1]
        return (
            isinstance(rest[0], str)
            and isinstance(pairs, list)
            and all(
                isinstance(p, list)
                and len(p) == 2
                and isinstance(p[0], str)
                and _valid(p[1], depth + 1)
                for p in pairs
            )
        )
    return False


def _entries(data: Any, field: str) -> list[tuple[str, list[Any]]]:
    if not isinstance(data, list) or not all(
        isinstance(e, list) and len(e) == 2 and isinstance(e[0], str) and _valid(e[1]) for e in data
    ):
        raise PlanFileError(f"the plan file's metadata.{field} is malformed")
    return [(path, code) for path, code in data]


def _float(text: str) -> str:
    try:
        return repr(float.fromhex(text))
    except (ValueError, OverflowError):  # a hostile file's text: shown as it is, cut
        return text[:40]


def _shown(code: list[Any]) -> str:
    """A recorded value as a message shows it: ``33554432.0 (float)``."""
    tag, rest = code[0], code[1:]
    if tag == "key":
        return "a key fingerprint" if rest[0] is not None else "no key fingerprint"
    if tag == "none":
        return "None"
    if tag == "object":
        return f"a {rest[0][:60]}"
    if tag in ("leaf", "enum"):
        name = rest[0].rpartition(":")[2][:60]
        return f"{name}.{rest[1][:40]}" if tag == "enum" else f"{name}(...)"
    if tag == "float":
        text = _float(rest[0])
    elif tag == "complex":
        text = f"({_float(rest[0])}, {_float(rest[1])})"
    elif tag == "str":
        text = repr(rest[0][:60])
    elif tag == "tuple":
        text = "(...)"
    else:  # bool, int, bytes (hexadecimal)
        text = str(rest[0])[:60]
    return f"{text} ({tag})"


def _differs(what: str, path: str, name: str, got: list[Any], saved: list[Any]) -> ValueError:
    """``input ct of f has scale 2.0 (float); the plan was saved for scale 4.0 (float)``."""
    owner, dot, field = path.rpartition(".")
    if not dot:
        return ValueError(
            f"{what} {path} of {name} is {_shown(got)}; the plan was saved for {_shown(saved)}"
        )
    return ValueError(
        f"{what} {owner} of {name} has {field} {_shown(got)}; the plan was saved for {field} "
        f"{_shown(saved)}"
    )


class Metadata:
    """A loaded plan's recorded metadata, checked at load (stored, result) and at each call.

    Args:
        data: the manifest's ``metadata`` (hostile: every entry is type-checked here).
        name: the plan as messages name it.
        read: the names of the stored polys the plan reads (``keys.relin[0].b``): a key group
            may only be recorded for a stored value they belong to.

    Raises:
        PlanFileError: malformed metadata.
    """

    def __init__(self, data: Any, name: str, read: Iterable[str] = ()) -> None:
        if not isinstance(data, dict) or set(data) != {"inputs", "stored", "result"}:
            raise PlanFileError(f"the plan file of {name} has no well-formed manifest.metadata")
        self.name = name
        self.inputs = _entries(data["inputs"], "inputs")
        self.result = _entries(data["result"], "result")
        stored = data["stored"]
        if not isinstance(stored, dict) or not all(
            type(g) is int and g >= 0 for g in stored.values()
        ):
            raise PlanFileError("the plan file's metadata.stored is malformed")
        read = list(read)
        unread = sorted(k for k in stored if not any(r.startswith(f"{k}.") for r in read))
        if unread:  # a save records keys only for the stored values whose polys the plan reads
            raise PlanFileError(
                f"the plan file's metadata.stored names {unread[:3]}, which the plan does not read"
            )
        self.stored: dict[str, int] = stored
        self.keys: dict[int, tuple[str, str]] = {}  # group -> (fingerprint, who fixed it)

    def check_stored(self, stored: Mapping[str, object] | None) -> None:
        """Fix each key group's fingerprint from the stored values given at load.

        Raises:
            ValueError: a stored value whose keys carry no fingerprint, or two values under one
                set of keys at save and under two now (both named).
        """
        for name, group in sorted(self.stored.items()):
            value = (stored or {}).get(name)
            fingerprint_of = getattr(value, "__ren_key_fingerprint__", None)
            fp = _fingerprint(fingerprint_of(), name) if fingerprint_of is not None else None
            if fp is None:
                raise ValueError(
                    f"stored input {name} of {self.name} carries no key fingerprint; the plan "
                    "was saved with evaluation keys there (give keys, e.g. ctx.evaluation_keys())"
                )
            self._fix(self.keys, group, fp, f"the key fingerprint of stored input {name}")

    def check_result(self, result: object) -> None:
        """Check the rebuilt result's metadata; a result under keys fixes their group.

        Raises:
            ValueError: a result value whose scale, level, correction or keys are not what the
                plan was saved with (the keys being those of the context active at load).
        """
        leaves: list[Leaf] = []
        walk(result, "result", [], leaves)
        given = {path: obj for path, _, obj in leaves}
        for path, code in self.result:
            if path not in given:
                raise ValueError(f"{self.name}: the rebuilt result has no {path}")
            obj = given[path]
            if code[0] != "key":
                got = _value(obj) if type(obj) in _NUMBERS else ["object", type(obj).__name__]
                if got != code:
                    raise _differs("the rebuilt", path, self.name, got, code)
            elif (fp := _fingerprint(obj, path)) is not None and code[1] is not None:
                who = f"{path} (the keys of the context active at load)"
                self._fix(self.keys, code[1], fp, who)

    def check_inputs(self, leaves: list[Leaf]) -> None:
        """Check a call's leaves: each value as saved, each key fingerprint its group's.

        Raises:
            ValueError: a leaf at another path, of another type or value than the plan was saved
                with, or an input under other keys than its group's (naming the input, the
                field, what was saved and what is given).
        """
        given = [(path, kind, obj) for path, kind, obj in leaves if kind != "@local"]
        if [p for p, _, _ in given] != [p for p, _ in self.inputs]:
            raise ValueError(
                f"{self.name} was saved for arguments with values (not Poly) at "
                f"{[p for p, _ in self.inputs]}; got {[p for p, _, _ in given]}"
            )
        keys = self.keys
        for (path, kind, obj), (_, code) in zip(given, self.inputs, strict=True):
            if code[0] != "key" or kind != "@key":
                try:
                    got = _value(obj) if kind != "@key" else ["key", obj]
                except _NotWritable:
                    got = ["object", kind]
                if got != code:
                    raise _differs(
                        "input" if "." in path else "argument", path, self.name, got, code
                    )
                continue
            fp, group = _fingerprint(obj, path), code[1]
            if (fp is None) != (group is None):
                saved = "a value under no keys (None)" if group is None else "a value under keys"
                raise ValueError(
                    f"input {path} of {self.name} is {fp}; the plan was saved for {saved}"
                )
            if fp is not None and group is not None:
                if keys is self.keys and group not in keys:
                    keys = dict(self.keys)  # this call's own: its first input fixes the group
                self._fix(keys, group, fp, f"input {path}")

    def _fix(self, keys: dict[int, tuple[str, str]], group: int, fp: str, who: str) -> None:
        """Give ``group`` the fingerprint ``fp`` (``who`` has it), or check it has that one."""
        known = keys.get(group)
        if known is None:
            other = next((w for f, w in keys.values() if f == fp), None)
            if other is not None:
                raise ValueError(
                    f"{who} of {self.name} is {fp}, equal to {other}; the plan was saved with "
                    "the two under different keys"
                )
            keys[group] = (fp, who)
        elif known[0] != fp:
            raise ValueError(
                f"{who} of {self.name} is {fp}; the plan was saved with it equal to {known[1]}, "
                f"which is {known[0]}"
            )
