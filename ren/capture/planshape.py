"""The shape of a plan file: the JSON type (and simple range) of every field, checked first.

``problem(data)`` says what is wrong with a parsed plan file's fields, or returns ``None``: each
field Ren reads has the JSON type it writes (an index is a non-negative int, never a bool or a
string; a name is a string; a list is a list), so nothing after this check meets a value of the
wrong kind. What the values mean (IR arguments, rings, kernel bodies, buffer sizes and whether
the kernels stay inside them) is checked where they are decoded (``ren.capture.planfile``) and
before anything is allocated or compiled (``ren.capture.plancheck``).

Fields Ren does not read are left alone.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable

from ren.errors import describe

__all__ = ["MAX_INDEX", "problem", "ref_problem"]

#: The largest count, size or index a plan file may hold (sizes are further bounded later).
MAX_INDEX = 1 << 62

#: A check: returns what is wrong with a value at a path, or ``None``.
Check = Callable[[object, str], str | None]

_HEX64 = re.compile(r"[0-9a-f]{64}")
_DECIMAL = re.compile(r"-?[0-9]{1,4000}")


def _int(value: object, where: str) -> str | None:
    if type(value) is not int or not 0 <= value < MAX_INDEX:
        return f"{where} must be an int in [0, 2^62), got {describe(value)}"
    return None


def _str(value: object, where: str) -> str | None:
    if type(value) is not str or len(value) > 4096:
        return f"{where} must be a string (at most 4096 characters), got {describe(value)}"
    return None


def _bool(value: object, where: str) -> str | None:
    return None if type(value) is bool else f"{where} must be true or false, got {describe(value)}"


def _list(value: object, where: str) -> str | None:
    return None if type(value) is list else f"{where} must be a list, got {describe(value)}"


def _dict(value: object, where: str) -> str | None:
    return None if type(value) is dict else f"{where} must be an object, got {describe(value)}"


def _decimal(value: object, where: str) -> str | None:
    if type(value) is not str or not _DECIMAL.fullmatch(value):
        return f"{where} must be a decimal integer as a string, got {describe(value)}"
    return None


def _list_of(check: Check) -> Check:
    def run(value: object, where: str) -> str | None:
        if type(value) is not list:
            return _list(value, where)
        for i, v in enumerate(value):
            if err := check(v, f"{where}[{i}]"):
                return err
        return None

    return run


def _tuple(*checks: Check) -> Check:
    """A list of exactly ``len(checks)`` items, each checked by its own check."""

    def run(value: object, where: str) -> str | None:
        if type(value) is not list or len(value) != len(checks):
            return f"{where} must be a list of {len(checks)} items, got {describe(value)}"
        for i, (check, v) in enumerate(zip(checks, value, strict=True)):
            if err := check(v, f"{where}[{i}]"):
                return err
        return None

    return run


def _fields(**checks: Check) -> Check:
    """An object holding (at least) these keys, each checked by its own check."""

    def run(value: object, where: str) -> str | None:
        if type(value) is not dict:
            return _dict(value, where)
        for key, check in checks.items():
            if key not in value:
                return f"{where} has no {key!r}"
            if err := check(value[key], f"{where}.{key}"):
                return err
        return None

    return run


def ref_problem(value: object, where: str) -> str | None:
    """Where a unit's buffer comes from: ``["view"|"own"|"input", i]`` or ``["stored", name]``."""
    if type(value) is not list or len(value) != 2 or value[0] not in _REF_KINDS:
        want = "['view'|'own'|'input', index] or ['stored', name]"
        return f"{where} must be {want}, got {describe(value)}"
    return (_str if value[0] == "stored" else _int)(value[1], f"{where}[1]")


_REF_KINDS = ("view", "own", "input", "stored")


def _source(value: object, where: str) -> str | None:
    """A passthrough's source: ``["input", position, offset, size]`` or a buffer reference."""
    if type(value) is list and value[:1] == ["input"]:
        return _tuple(_str, _int, _int, _int)(value, where)
    return ref_problem(value, where)


def _params(value: object, where: str) -> str | None:
    if value is None:
        return None
    if type(value) is not list:
        return _list(value, where)
    for name in value:
        if type(name) is not str or not name.isidentifier() or keyword.iskeyword(name):
            return f"{where} must be parameter names (identifiers), got {describe(name)}"
    if len(set(value)) != len(value):
        return f"{where} names a parameter twice: {value}"
    return None


def _alias(value: object, where: str) -> str | None:
    if type(value) is not list:
        return _list(value, where)
    for i, a in enumerate(value):
        if a is not None and (type(a) is not int or not 0 <= a <= i):
            return f"{where}[{i}] must be null or an input position in [0, {i}], got {describe(a)}"
    return None


def _named_specs(value: object, where: str) -> str | None:
    if type(value) is not dict:
        return _dict(value, where)
    for name, spec in value.items():
        if err := _str(name, f"{where} name") or _list(spec, f"{where}[{name!r}]"):
            return err
    return None


def _sources(value: object, where: str) -> str | None:
    if type(value) is not dict:
        return _dict(value, where)
    for digest, text in value.items():
        if not _HEX64.fullmatch(digest) or type(text) is not str:
            return f"{where} must map SHA-256 digests to source texts, got {describe(digest)}"
    return None


def _fixed(value: object, where: str) -> str | None:
    if type(value) is not dict:
        return _dict(value, where)
    for k, v in value.items():
        if err := _decimal(k, f"{where} key") or _decimal(v, f"{where}[{k!r}]"):
            return err
    return None


def _digest(value: object, where: str) -> str | None:
    if type(value) is not str or not _HEX64.fullmatch(value):
        return f"{where} must be a SHA-256 digest (64 hexadecimal digits), got {describe(value)}"
    return None


_PLAN = _fields(
    ren=_str,
    function=_str,
    manifest=_fields(
        params=_params,
        inputs=_list_of(_fields(path=_str, buffer=_bool, spec=_list)),
        alias=_alias,
        stored=_named_specs,
        outputs=_list_of(_fields(path=_str, spec=_list)),
    ),
    buffers=_fields(
        arenas=_list_of(_tuple(_str, _int)),
        views=_list_of(_tuple(_int, _str, _int, _int)),
        own=_list_of(_tuple(_str, _str, _int)),
    ),
    kernels=_list_of(_fields(body=_list, info=_dict, source_sha256=_digest)),
    units=_list_of(_fields(kernel=_int, consts=_list_of(_decimal), bufs=_list_of(ref_problem))),
    sources=_sources,
    passthrough=_list_of(_tuple(_source, ref_problem)),
    const_rows=_list_of(_tuple(_int, _int, _int)),
    fixed_consts=_fixed,
    result=_dict,
    memory=_dict,
)


def problem(data: object) -> str | None:
    """What is wrong with the shape of a parsed plan file, or ``None``.

    The answer names the field and what it holds (``"the plan.manifest.inputs[0].path must be
    a string (at most 4096 characters), got int 3"``).
    """
    return _PLAN(data, "the plan")
