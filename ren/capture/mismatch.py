"""What differs between a value's spec and a plan's, in words, and the one step that fixes it.

``ren.load`` refuses a stored input, and a loaded plan's call refuses an input, whose spec (ring,
size, word type, device, domain, limb window: ``ren.capture.arguments.spec``) is not the plan's.
The refusal names only the fields that differ, with both values, and the fix when it is one step
(a device: ``Poly.to``, or ``device=`` of the ``from_bytes`` that read the value).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from ren.capture.planfile import PlanFileError, decode

__all__ = ["fix_for", "spec_difference", "stored_mismatch"]


def _spec_text(code: Any) -> str:
    """A spec code as text, every field (``"a constant"`` for a constant)."""
    if code is None:
        return "a constant"
    try:
        value = decode(code)
    except PlanFileError:
        return str(code)
    return ", ".join(str(v) for v in value)


#: The fields of a stored value's spec (``ren.capture.arguments.spec``, its path left out).
_SPEC_FIELDS = ("kind", "ring", "size", "dtype", "device", "domain", "view")


def _fields(code: Any) -> dict[str, Any] | None:
    """A buffer's spec code as ``{field: value}``; ``None`` for a constant or an odd code."""
    if code is None:
        return None
    try:
        value = decode(code)
    except PlanFileError:
        return None
    if not isinstance(value, tuple) or len(value) != len(_SPEC_FIELDS) or value[0] != "buffer":
        return None
    return dict(zip(_SPEC_FIELDS, value, strict=True))


def _field_text(field: str, value: Any, verb: bool = False) -> str:
    """One field of a spec: ``device 'cpu'``; with ``verb``, as said after "is" (``on device``)."""
    if field == "view":
        text = "a whole buffer" if value is None else f"a limb view (offset, size) {value}"
        return text if verb else f"view: {text}"
    if field == "size":
        return f"{value} words" if verb else f"size {value} words"
    value = getattr(value, "value", value) if field == "domain" else value
    prefix = {"ring": "in ", "device": "on ", "domain": "in ", "dtype": "of "}.get(field, "")
    return f"{prefix if verb else ''}{field} {value!r}"


def spec_difference(got: Any, want: Any) -> tuple[str, str, list[str]]:
    """Only the fields of two specs that differ, as text for each side, and their names.

    Every field when one side is a constant (or a code that does not decode as a buffer's).
    """
    have, saved = _fields(got), _fields(want)
    if have is None or saved is None:
        return _spec_text(got), _spec_text(want), []
    fields = [f for f in _SPEC_FIELDS if have[f] != saved[f]]
    return (
        ", ".join(_field_text(f, have[f], verb=True) for f in fields),
        ", ".join(_field_text(f, saved[f]) for f in fields),
        fields,
    )


def fix_for(fields: list[str], want: Any, owner: object) -> str:
    """What makes a value of spec ``want`` out of one differing in ``fields``, when it is one step.

    ``owner`` is the object given in ``stored=`` that holds the value (keys read from bytes), or
    ``None``.
    """
    saved = _fields(want)
    if saved is None or fields != ["device"]:
        return ""
    device = saved["device"]
    reader = getattr(type(owner), "from_bytes", None)
    if (
        owner is not None
        and reader is not None
        and "device" in inspect.signature(reader).parameters
    ):
        kind = type(owner).__name__
        return (
            f"pass device={device!r} to {kind}.from_bytes (its default is $REN_DEVICE), or give "
            f"{kind} made by a context on {device!r}"
        )
    return f"give it on device {device!r} (Poly.to({device!r}), or a context made on {device!r})"


def stored_mismatch(
    wrong: list[str],
    got: dict[str, Any],
    want: dict[str, Any],
    stored: Mapping[str, object],
    plan: str = "the plan was saved with",
) -> str:
    """The refusal of stored inputs unlike the plan's: the first, its differing fields, the fix.

    The others of the same ``stored=`` entry that differ in the same way are counted, not listed.
    ``plan`` says how the plan came to its specs (``"the plan was saved with"``).
    """
    name = wrong[0]
    have, saved, fields = spec_difference(got[name], want[name])
    root = max(
        (k for k in stored if name == k or name.startswith((f"{k}.", f"{k}["))),
        key=len,
        default=None,
    )
    same = [
        n
        for n in wrong[1:]
        if root is not None
        and n.startswith((f"{root}.", f"{root}["))
        and spec_difference(got[n], want[n]) == (have, saved, fields)
    ]
    also = f" (so are {len(same)} more stored inputs of {root})" if same else ""
    fix = fix_for(fields, want[name], stored.get(root) if root is not None else None)
    return f"stored input {name} is {have}{also}; {plan} {saved}" + (f": {fix}" if fix else "")
