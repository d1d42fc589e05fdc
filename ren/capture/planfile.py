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
read back), tuples as lists.

A plan file is hostile until checked: anyone can recompute its fingerprint (and each kernel's
source hash), which only catches an accidental change. Nothing is pickled, and reading a plan
file runs no code from it: ``read_bytes`` bounds the file and checks the JSON type of every field
(``ren.capture.planshape``); ``decode`` builds each value through its class, which checks its
fields' types and ranges (``ren.ir.args``), and bounds rings and nesting; ``decode_body`` checks
a kernel body node by node and as a whole (a body ``kernelize`` writes). What the kernels read
and write is checked against the plan's buffers by ``ren.capture.plancheck`` before ``ren.load``
allocates or compiles anything.
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
from typing import Any, NoReturn

from ren.capture import planshape
from ren.engine.memory import DevicePlan, Event, MemoryPlan, PlannedBuffer
from ren.errors import SpecError
from ren.ir import args as _args
from ren.ir import kernels as _kernels
from ren.ir.bodies import body_problem
from ren.ir.kernels import Family
from ren.ir.node import Node
from ren.ir.op import DType, Op
from ren.ir.spec import verify
from ren.ring import Domain, RingSpec

__all__ = [
    "BYTES",
    "FORMAT",
    "FORMAT_VERSION",
    "PlanFileError",
    "decode",
    "decode_body",
    "encode",
    "encode_body",
    "fingerprint",
    "read",
    "read_bytes",
    "write",
]

FORMAT = "ren-plan"
FORMAT_VERSION = 2
#: The largest ring a plan file may hold: its degree, its number of moduli.
MAX_DEGREE = 1 << 17
MAX_MODULI = 256
#: How deep a value may nest (a ``TemplateParams`` holds a ring, a ring its moduli), and how
#: many nodes a kernel body may hold.
MAX_DEPTH = 16
MAX_BODY = 1 << 16
#: The largest plan file Ren reads, in bytes.
MAX_FILE_BYTES = 1 << 28
#: What messages call a plan read from bytes (``read_bytes``) rather than from a file.
BYTES = "the plan given as bytes"

#: The classes a plan file may name, by name: the IR's arguments (never a buffer: a plan names
#: its buffers by reference), kernel info, the memory plan.
_CLASSES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        _args.ConstArg,
        _args.ConstRowArg,
        _args.CopyArg,
        _args.GaloisArg,
        _args.ImmArg,
        _args.IndexArg,
        _args.RescaleArg,
        _args.RingArg,
        _args.SlotArg,
        _args.ToRingArg,
        _args.ViewArg,
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


def encode(value: object) -> object:
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
        out: dict[str, object] = {"@": type(value).__name__}
        for f in dataclasses.fields(value):
            out[f.name] = encode(getattr(value, f.name))
        return out
    raise TypeError(f"a plan file cannot hold a {type(value).__name__}: {value!r}")


def decode(data: object, _depth: int = 0) -> Any:  # Any: a value of one of Ren's IR types
    """The value ``encode`` gave ``data`` for (lists come back as tuples).

    Every class is made through its constructor, which checks its fields (``ren.ir.args``);
    a class must be given exactly its fields; a ring is checked as ``RingSpec`` checks it, and
    bounded (``MAX_DEGREE``, ``MAX_MODULI``).

    Raises:
        PlanFileError: for anything ``encode`` does not write, naming the class and field.
    """
    if data is None or isinstance(data, bool | int | str):
        return data
    if _depth > MAX_DEPTH:
        raise PlanFileError(f"a value in the plan file nests deeper than {MAX_DEPTH} levels")
    if isinstance(data, list):
        return tuple(decode(v, _depth + 1) for v in data)
    if isinstance(data, dict):
        if "@" in data:
            return _instance(data, _depth)
        if len(data) == 1:
            ((kind, value),) = data.items()
            if kind == "float" and isinstance(value, str):
                try:
                    return float.fromhex(value)
                except ValueError:
                    pass
            elif kind == "ring":
                return _decode_ring(value)
            elif kind == "enum" and isinstance(value, list) and len(value) == 2:
                enum_kind, name = value
                members = _ENUMS.get(enum_kind) if isinstance(enum_kind, str) else None
                if members is None or not isinstance(name, str) or name not in members.__members__:
                    raise PlanFileError(f"unknown value {str(value)[:60]} in the plan file")
                return members[name]
    raise PlanFileError(f"the plan file holds something Ren does not write: {str(data)[:80]}")


def _instance(data: dict[str, Any], depth: int) -> object:
    """A class of ``_CLASSES`` from its fields, checked by its constructor."""
    name = data["@"]
    cls = _CLASSES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise PlanFileError(f"the plan file names {str(name)[:60]!r}, not a class of Ren's IR")
    names = {f.name for f in dataclasses.fields(cls)}
    given = set(data) - {"@"}
    if given != names:
        raise PlanFileError(
            f"a {name} in the plan file has the fields {sorted(given)[:8]}; a {name} has "
            f"{sorted(names)}"
        )
    fields = {k: decode(v, depth + 1) for k, v in data.items() if k != "@"}
    try:
        return cls(**fields)
    except (TypeError, ValueError) as e:
        raise PlanFileError(f"a {name} in the plan file is malformed: {e}") from None


def _decode_ring(value: Any) -> RingSpec:
    """``[n, [moduli...], dtype]``, each of its type, as a ring of at most the plan bounds."""
    ok = isinstance(value, list) and len(value) == 3 and isinstance(value[1], list)
    if not ok or type(value[0]) is not int or not isinstance(value[2], str):
        raise PlanFileError(
            f"a ring in the plan file is not [n, [moduli], dtype]: {str(value)[:80]}"
        )
    n, moduli, dtype = value
    if not 2 <= n <= MAX_DEGREE or not 1 <= len(moduli) <= MAX_MODULI:
        raise PlanFileError(
            f"a ring in the plan file has n={n} and {len(moduli)} moduli; Ren reads plans of "
            f"rings with 2 <= n <= {MAX_DEGREE} and 1 to {MAX_MODULI} moduli"
        )
    if any(type(q) is not int for q in moduli):
        raise PlanFileError(
            f"a ring's moduli in the plan file are not all ints: {str(moduli)[:80]}"
        )
    try:
        return _ring(n, tuple(moduli), dtype)
    except (TypeError, ValueError) as e:
        raise PlanFileError(f"a ring in the plan file is not a ring: {e}") from None


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


def decode_body(nodes: Any) -> Node:
    """The kernel body ``encode_body`` wrote (the same interned node), checked.

    Each node's op and dtype are names of Ren's, its sources are earlier nodes, its arg is
    decoded (and checked) by ``decode``. The body must pass the verifier and be a body
    ``kernelize`` writes (``ren.ir.bodies.body_problem``: the ops a body may hold, each over the
    sources it takes), and encoding it again must give the same nodes (nothing unused, nothing
    written another way).

    Raises:
        PlanFileError: for a malformed body, saying what is wrong.
    """
    if not isinstance(nodes, list) or not 1 <= len(nodes) <= MAX_BODY:
        raise PlanFileError(
            f"a kernel body in the plan file is not a list of 1 to {MAX_BODY} nodes"
        )
    made: list[Node] = []
    for i, entry in enumerate(nodes):
        if not isinstance(entry, list) or len(entry) != 4:
            raise PlanFileError(f"node {i} of a kernel body is not [op, dtype, arg, sources]")
        op, dtype, arg, src = entry
        if not isinstance(op, str) or op not in Op.__members__:
            raise PlanFileError(f"node {i} of a kernel body has the op {str(op)[:40]!r}")
        if not isinstance(dtype, str) or dtype not in DType.__members__:
            raise PlanFileError(f"node {i} of a kernel body has the dtype {str(dtype)[:40]!r}")
        if not isinstance(src, list) or any(type(s) is not int or not 0 <= s < i for s in src):
            raise PlanFileError(f"node {i} of a kernel body has sources that are not earlier nodes")
        made.append(Node(Op[op], DType[dtype], tuple(made[s] for s in src), decode(arg)))
    body = made[-1]
    try:
        verify(body, domains=True)
    except SpecError as e:
        raise PlanFileError(f"a kernel body in the plan file is malformed: {e}") from None
    if problem := body_problem(body):
        raise PlanFileError(f"a kernel body in the plan file is not one Ren writes: {problem}")
    if encode_body(body) != nodes:
        raise PlanFileError("a kernel body in the plan file holds nodes it does not use")
    return body


def canonical(data: object) -> bytes:
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
    """The plan in the file at ``path``, checked as ``read_bytes`` checks it (its size first).

    Raises:
        FileNotFoundError: no such file.
        PlanFileError: as ``read_bytes``, the message naming ``path``.
    """
    size = os.stat(path).st_size
    if size > MAX_FILE_BYTES:
        raise PlanFileError(
            f"{path} holds {size} bytes; Ren reads plan files of at most {MAX_FILE_BYTES} bytes"
        )
    return read_bytes(Path(path).read_bytes(), str(path))


def read_bytes(raw: bytes | bytearray | memoryview, name: str = BYTES) -> dict[str, Any]:
    """The plan in ``raw``, a plan file's bytes, checked: size, format, version, fingerprint, shape.

    Args:
        raw: the bytes of a file ``write`` wrote (``Path(p).read_bytes()``, sent elsewhere).
        name: what messages call it: the file's path, or ``BYTES``.

    Raises:
        PlanFileError: not a plan file (or one past ``MAX_FILE_BYTES``), another format version,
            a fingerprint that does not match its contents (a changed byte), or a field that is
            not of the JSON type Ren writes (``ren.capture.planshape``).
    """
    size = memoryview(raw).nbytes
    if size > MAX_FILE_BYTES:
        raise PlanFileError(
            f"{name} holds {size} bytes; Ren reads plan files of at most {MAX_FILE_BYTES} bytes"
        )
    try:
        data = json.loads(bytes(raw).decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError) as e:  # JSONDecodeError, an int of 4300 digits
        raise PlanFileError(f"{name} is not a Ren plan file (not JSON: {e})") from None
    except RecursionError:
        raise PlanFileError(f"{name} is not a Ren plan file (JSON nested too deeply)") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise PlanFileError(f"{name} is not a Ren plan file (no 'format': {FORMAT!r})")
    version = data.get("version")
    if type(version) is not int or version != FORMAT_VERSION:
        raise PlanFileError(
            f"{name} is a plan file of format version {str(version)[:20]}; this Ren reads "
            f"version {FORMAT_VERSION}: save the plan again with this Ren"
        )
    want = data.get("fingerprint")
    got = fingerprint(data)
    if want != got:
        raise PlanFileError(
            f"{name} does not match its fingerprint (stored {str(want)[:16]}..., contents "
            f"{got[:16]}...): the file was changed after it was written"
        )
    if wrong := planshape.problem(data):
        raise PlanFileError(f"{name} is not a plan file Ren writes: {wrong}")
    return data


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number")
