"""The plan file: a captured plan as canonical JSON, with a SHA-256 fingerprint over all of it.

A plan file is one JSON object, UTF-8, keys sorted, no spaces (the *canonical* form, the same
bytes in every process and on every machine). Its fields:

* ``format`` (``"ren-plan"``), ``version`` (``FORMAT_VERSION``), ``ren`` (the Ren version that
  wrote it) and ``function`` (the jitted function's name);
* ``manifest``: ``params`` (the function's parameter names), ``inputs`` and ``stored`` (every
  value the plan reads, each with its path in the arguments or its name among the stored values,
  and its spec: ring, word type, device, domain, size, limb window) and ``outputs`` (each by its
  path in the result);
* ``buffers``: the arenas (device, bytes), the views of them (arena, dtype, size, byte offset) and
  the plan's own buffers (device, dtype, size);
* ``kernels``: each distinct kernel once, its body (nodes in topological order), its
  ``KernelInfo`` (family, rings, parameters) and the SHA-256 of its source; ``sources`` holds each
  source text once, by hash;
* ``units``: per exec unit in order, its kernel (an index), its constants and where each of its
  buffers comes from;
* ``passthrough``, ``result`` and ``memory`` (the arena layout, ``MemoryPlan``, for the tools);
* ``fingerprint``: SHA-256 of the canonical encoding of every other field.

Values are encoded by ``encode``: rings as ``{"n", "moduli", "dtype"}``, enums by name, the IR's
frozen argument dataclasses as ``{"@": class name, field: value}`` (only Ren's own classes are
read back), tuples as lists. Nothing is pickled: reading a plan file runs no code from it.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import json
import os
import uuid
from pathlib import Path
from typing import Any

from ren.engine.memory import DevicePlan, Event, MemoryPlan, PlannedBuffer
from ren.ir import kernels as _kernels
from ren.ir import node as _node
from ren.ir.kernels import Family
from ren.ir.node import Node
from ren.ir.op import DType, Op
from ren.ring import Domain, RingSpec

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "PlanFileError",
    "decode",
    "decode_body",
    "encode",
    "encode_body",
    "fingerprint",
    "read",
    "write",
]

FORMAT = "ren-plan"
FORMAT_VERSION = 1

#: The classes a plan file may name, by name: the IR's arguments, kernel info, the memory plan.
_CLASSES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        _node.BufferArg,
        _node.ConstArg,
        _node.ConstRowArg,
        _node.CopyArg,
        _node.GaloisArg,
        _node.ImmArg,
        _node.IndexArg,
        _node.RescaleArg,
        _node.RingArg,
        _node.SlotArg,
        _node.ToRingArg,
        _node.ViewArg,
        _kernels.KernelInfo,
        _kernels.TemplateParams,
        MemoryPlan,
        DevicePlan,
        PlannedBuffer,
        Event,
    )
}
_ENUMS: dict[str, type[enum.Enum]] = {
    "Op": Op,
    "DType": DType,
    "Family": Family,
    "Domain": Domain,
}


class PlanFileError(ValueError):
    """A plan file that cannot be used: damaged, of another format, or not matching this Ren."""


def encode(value: Any) -> Any:
    """``value`` as JSON-ready data (see the module's docstring)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return {"float": value.hex()}  # exact, and JSON has no inf or nan
    if isinstance(value, RingSpec):
        return {"ring": [value.n, list(value.moduli), value.dtype]}
    if isinstance(value, enum.Enum):
        return {"enum": [type(value).__name__, value.name]}
    if isinstance(value, tuple | list):
        return [encode(v) for v in value]
    if dataclasses.is_dataclass(value) and type(value).__name__ in _CLASSES:
        out = {"@": type(value).__name__}
        for f in dataclasses.fields(value):
            out[f.name] = encode(getattr(value, f.name))
        return out
    raise TypeError(f"a plan file cannot hold a {type(value).__name__}: {value!r}")


def decode(data: Any) -> Any:
    """The value ``encode`` gave ``data`` for (lists come back as tuples).

    Raises:
        PlanFileError: for anything ``encode`` does not write.
    """
    if data is None or isinstance(data, bool | int | str):
        return data
    if isinstance(data, list):
        return tuple(decode(v) for v in data)
    if isinstance(data, dict):
        if "@" in data:
            cls = _CLASSES.get(data["@"])
            if cls is None:
                raise PlanFileError(f"the plan file names {data['@']!r}, not a class of Ren's IR")
            fields = {k: decode(v) for k, v in data.items() if k != "@"}
            try:
                return cls(**fields)
            except (TypeError, ValueError) as e:
                raise PlanFileError(
                    f"a {cls.__name__} in the plan file is malformed: {e}"
                ) from None
        if "float" in data:
            return float.fromhex(data["float"])
        if "ring" in data:
            n, moduli, dtype = data["ring"]
            return _ring(n, tuple(moduli), dtype)
        if "enum" in data:
            kind, name = data["enum"]
            if kind not in _ENUMS or name not in _ENUMS[kind].__members__:
                raise PlanFileError(f"unknown value {kind}.{name} in the plan file")
            return _ENUMS[kind][name]
    raise PlanFileError(f"the plan file holds something Ren does not write: {str(data)[:80]}")


@functools.lru_cache(maxsize=1024)
def _ring(n: int, moduli: tuple[int, ...], dtype: str) -> RingSpec:
    return RingSpec(n, moduli, dtype)  # checked once per ring, not once per mention


def encode_body(ast: Node) -> list[list[Any]]:
    """A kernel body as its nodes in topological order: ``[op, dtype, arg, [source indices]]``."""
    index: dict[Node, int] = {}
    out = []
    for i, node in enumerate(ast.toposort()):
        index[node] = i
        src = [index[s] for s in node.src]
        out.append([node.op.name, node.dtype.name, encode(node.arg), src])
    return out


def decode_body(nodes: list[list[Any]]) -> Node:
    """The kernel body ``encode_body`` wrote (the same interned node).

    Raises:
        PlanFileError: for a malformed body.
    """
    made: list[Node] = []
    try:
        for op, dtype, arg, src in nodes:
            made.append(Node(Op[op], DType[dtype], tuple(made[i] for i in src), decode(arg)))
    except (KeyError, IndexError, TypeError, ValueError) as e:
        raise PlanFileError(f"a kernel body in the plan file is malformed: {e}") from None
    if not made:
        raise PlanFileError("a kernel body in the plan file is empty")
    return made[-1]


def canonical(data: Any) -> bytes:
    """The canonical bytes of JSON data: keys sorted, no spaces, UTF-8."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def fingerprint(data: dict[str, Any]) -> str:
    """SHA-256 (hexadecimal) of the canonical encoding of every field but ``fingerprint``."""
    body = {k: v for k, v in data.items() if k != "fingerprint"}
    return hashlib.sha256(canonical(body)).hexdigest()


def write(path: str | os.PathLike[str], data: dict[str, Any]) -> Path:
    """Write ``data`` with its fingerprint to ``path``, atomically.

    The file is written beside ``path`` under a temporary name and renamed over it, so a reader
    never sees half a plan, and of two writers of one path the last rename wins whole.
    """
    target = Path(path)
    data = {**data, "fingerprint": fingerprint(data)}
    directory = target.parent if str(target.parent) else Path(".")
    tmp = directory / f".{target.name}.{uuid.uuid4().hex}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(canonical(data))
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def read(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The plan in ``path``, checked: its format, version and fingerprint.

    Raises:
        FileNotFoundError: no such file.
        PlanFileError: not a plan file, another format version, or a fingerprint that does not
            match its contents (a changed byte).
    """
    raw = Path(path).read_bytes()
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise PlanFileError(f"{path} is not a Ren plan file (not JSON: {e})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise PlanFileError(f"{path} is not a Ren plan file (no 'format': {FORMAT!r})")
    if data.get("version") != FORMAT_VERSION:
        raise PlanFileError(
            f"{path} is a plan file of format version {data.get('version')!r}; this Ren reads "
            f"version {FORMAT_VERSION}: save the plan again with this Ren"
        )
    want = data.get("fingerprint")
    got = fingerprint(data)
    if want != got:
        raise PlanFileError(
            f"{path} does not match its fingerprint (stored {str(want)[:16]}..., contents "
            f"{got[:16]}...): the file was changed after it was written"
        )
    return data
