"""Before a loaded plan allocates or compiles anything: its kernels stay inside its buffers.

``check(data, kernels, stored)`` reads a plan file's fields (their shape already checked by
``ren.capture.planfile.read``) and its decoded kernels, and refuses, with a ``PlanFileError``
naming the unit, kernel, buffer and both sizes, any plan in which a kernel would read or write a
word outside the buffers and arena the plan declares, or which would make Ren allocate more
than ``MAX_BYTES``. In order:

1. each kernel's ``KernelInfo`` is the one ``kernelize`` gives its body (family, ring, domain,
   name, template parameters), and its device is the device of every constant it reads;
2. the buffers: arenas of at most ``MAX_BYTES`` in all (with the plan's own buffers), each no
   larger than its views reach (to the next ``ALIGN`` bytes); each view inside its arena, on a
   word boundary; each view and own buffer used;
3. the inputs' and stored inputs' specs: a buffer's size, word type and device;
4. each unit: its kernel, its constants (one per row its body reads), one buffer per slot of the
   body; it writes exactly its ring's ``L * n`` words into a view or own buffer of that word type
   on its device, overlapping none of the buffers it reads; each load reads
   ``(limb_offset + L) * n`` words of a buffer that holds them;
5. the constant inputs' rows, the passthrough copies (a window inside its input, as many words
   as the output) and the result's values (a ring over exactly the words of its buffer or view);
6. the memory plan the tools draw (its fields checked as they are decoded).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from ren.capture import planresult
from ren.capture.arguments import storage_of
from ren.capture.planfile import PlanFileError, decode
from ren.engine.memory import ALIGN, MemoryPlan
from ren.ir.args import ConstRowArg, CopyArg, check_device
from ren.ir.facts import is_const
from ren.ir.kernels import Family, KernelInfo
from ren.ir.node import Node
from ren.ir.op import Op
from ren.passes.kernelize import kernel_info
from ren.poly import Poly
from ren.ring import Domain, RingSpec

__all__ = ["MAX_BYTES", "check"]

#: The most memory a loaded plan may make Ren allocate: its arenas and own buffers, in bytes.
MAX_BYTES = 1 << 34
_ITEMSIZE = {"u32": 4, "u64": 8}


@dataclasses.dataclass(frozen=True)
class _Buf:
    """A buffer a unit may be given: what it is (``"view 3"``), its device, word type, words.

    ``root`` and ``start``/``end`` (bytes) say which memory it covers, to find overlaps.
    """

    name: str
    device: str
    dtype: str
    words: int
    root: str
    start: int = 0

    @property
    def end(self) -> int:
        return self.start + self.words * _ITEMSIZE[self.dtype]


def _fail(message: str) -> PlanFileError:
    return PlanFileError(f"the plan cannot be loaded: {message}")


#: How a check reads a buffer reference of the file (``[kind, index]`` or ``["stored", name]``).
Resolve = Callable[[Any, str], "_Buf"]


def check(
    data: dict[str, Any], kernels: list[tuple[Node, KernelInfo]], stored: Mapping[str, Poly]
) -> None:
    """Refuse the plan (``PlanFileError``) unless every kernel stays inside its buffers.

    ``kernels`` are the file's kernel bodies and infos, decoded; ``stored`` the stored inputs
    given to ``ren.load``, by name. See the module's docstring for what is checked, in order.
    """
    for i, (ast, info) in enumerate(kernels):
        _check_kernel(i, ast, info)
    views, own = _buffers(data["buffers"])
    inputs = _inputs(data["manifest"])
    used: set[str] = set()

    def resolve(ref: Any, where: str) -> _Buf:  # a reference whose shape is checked
        kind, at = ref
        if kind == "stored":
            return _stored(stored, at, where)
        tables: dict[str, list[_Buf | None]] = {"view": views, "own": own, "input": inputs}
        table = tables[kind]
        buf: _Buf | None = table[at] if at < len(table) else None
        if buf is None:
            raise _fail(f"{where} names {kind} {at}, which the plan does not declare as a buffer")
        used.add(buf.name)
        return buf

    units = data["units"]
    for u, unit in enumerate(units):
        _check_unit(u, unit, kernels, resolve)
    _check_constants(data, units, inputs)
    for j, (src, dst) in enumerate(data["passthrough"]):
        _check_copy(f"passthrough {j}", src, dst, stored, resolve)
    for path, code in planresult.walk(data["result"]):
        _check_result(path, code, resolve)
    unused = sorted(b.name for b in [*views, *own] if b is not None and b.name not in used)
    if unused:
        raise _fail(f"the plan declares {unused[0]}, which no unit, copy or result uses")
    if not isinstance(decode(data["memory"]), MemoryPlan):
        raise _fail("its memory plan is not a MemoryPlan")


# ---------------------------------------------------------------------------------------------
# kernels


def _check_kernel(i: int, ast: Node, info: KernelInfo) -> None:
    """``info`` is what ``kernelize`` writes for ``ast`` on ``info.device``."""
    want = kernel_info(ast.src[1], info.device)
    if info != want:
        raise _fail(
            f"kernel {i} is described as {info!r} {info.params}; its body is {want!r} {want.params}"
        )
    for node in ast.toposort():
        device = node.arg.device if isinstance(node.arg, ConstRowArg | CopyArg) else info.device
        if device != info.device:
            raise _fail(f"kernel {i} runs on {info.device} and names the device {device}")


def _reads(ast: Node) -> tuple[dict[int, tuple[int, str]], int]:
    """``({slot: (words its loads reach, word type)}, constant rows)`` of a kernel body."""
    reads: dict[int, tuple[int, str]] = {}
    rows: set[int] = set()
    for node in ast.toposort():
        if node.op is Op.LOAD:
            slot, arg = node.src[0].src[0].arg.index, node.arg
            words, dtype = reads.get(slot, (0, arg.ring.dtype))
            if dtype != arg.ring.dtype:
                raise _fail(
                    f"a kernel body reads slot {slot} as {dtype} and {arg.ring.dtype} words"
                )
            reads[slot] = (max(words, (arg.limb_offset + arg.ring.L) * arg.ring.n), dtype)
        elif isinstance(node.arg, ConstRowArg):
            rows.add(node.arg.row)
    if rows != set(range(len(rows))):
        raise _fail(f"a kernel body reads the constant rows {sorted(rows)}, not 0 .. k-1")
    return reads, len(rows)


def _check_unit(
    u: int, unit: dict[str, Any], kernels: list[tuple[Node, KernelInfo]], resolve: Resolve
) -> None:
    """Unit ``u`` writes its ring into a buffer of its own and reads inside its inputs."""
    k = unit["kernel"]
    if k >= len(kernels):
        raise _fail(f"unit {u} runs kernel {k}; the plan has {len(kernels)} kernels")
    ast, info = kernels[k]
    reads, rows = _reads(ast)
    where = f"unit {u} (kernel {k}, {info.name})"
    if len(unit["consts"]) != rows:
        raise _fail(f"{where} has {len(unit['consts'])} constants; its body reads {rows} rows")
    if len(unit["bufs"]) != len(reads) + 1:
        raise _fail(f"{where} has {len(unit['bufs'])} buffers; its body has {len(reads) + 1} slots")
    bufs = [resolve(ref, f"{where} slot {j}") for j, ref in enumerate(unit["bufs"])]
    out = bufs[0]
    if unit["bufs"][0][0] not in ("view", "own"):
        raise _fail(f"{where} writes {out.name}, which is not a buffer of the plan's own")
    _check_written(where, out, info.ring.dtype, info.ring.size, info.device)
    for slot, (need, dtype) in reads.items():
        buf = bufs[slot]
        if buf.dtype != dtype or buf.words < need:
            raise _fail(
                f"{where} reads {need} {dtype} words of {buf.name}, which holds {buf.words} "
                f"{buf.dtype} words"
            )
        if info.family is not Family.COPY and buf.device != info.device:
            raise _fail(f"{where} runs on {info.device} and reads {buf.name} on {buf.device}")
        if buf.root == out.root and buf.start < out.end and out.start < buf.end:
            raise _fail(f"{where} writes {out.name}, which overlaps {buf.name}, which it reads")


def _check_copy(
    where: str, src: list[Any], dst: list[Any], stored: Mapping[str, Poly], resolve: Resolve
) -> None:
    """A passthrough copies a window inside its input (or a stored value) of the output's size."""
    out = resolve(dst, f"{where} output")
    if dst[0] not in ("view", "own"):
        raise _fail(f"{where} writes {out.name}, which is not a buffer of the plan's own")
    if src[0] == "input":
        base = resolve(src[:2], f"{where} source")
        offset, words = src[2], src[3]
        if offset + words > base.words:
            raise _fail(
                f"{where} copies words [{offset}, {offset + words}) of {base.name}, "
                f"which holds {base.words}"
            )
    else:
        base = resolve(src, f"{where} source")
        if src[0] != "stored":
            raise _fail(f"{where} copies {base.name}: it copies an input or a stored input")
        words = stored[src[1]].ring.size
    _check_written(where, out, base.dtype, words, base.device)


def _check_written(where: str, out: _Buf, dtype: str, words: int, device: str) -> None:
    """``out`` holds exactly ``words`` words of ``dtype`` on ``device``."""
    if out.dtype != dtype or out.words != words:
        raise _fail(
            f"{where} writes {words} {dtype} words into {out.name}, which holds {out.words} "
            f"{out.dtype} words"
        )
    if out.device != device:
        raise _fail(f"{where} writes on {device} into {out.name} on {out.device}")


# ---------------------------------------------------------------------------------------------
# buffers and inputs


def _words(dtype: Any, where: str) -> int:
    """The bytes of a word of ``dtype``, a ring's word type."""
    if dtype not in _ITEMSIZE:
        raise _fail(f"{where} holds {str(dtype)[:20]!r} words, not u32 or u64")
    return _ITEMSIZE[dtype]


def _device(device: str, where: str) -> str:
    try:
        return check_device(where, device)
    except (TypeError, ValueError) as e:
        raise _fail(str(e)) from None


def _buffers(bufs: dict[str, Any]) -> tuple[list[_Buf | None], list[_Buf | None]]:
    """The views and own buffers, each inside its arena, all at most ``MAX_BYTES``."""
    arenas = bufs["arenas"]
    total = sum(nbytes for _, nbytes in arenas)
    reach = [0] * len(arenas)
    views: list[_Buf | None] = []
    for v, (a, dtype, size, offset) in enumerate(bufs["views"]):
        where = f"view {v}"
        if a >= len(arenas):
            raise _fail(f"{where} is in arena {a}; the plan has {len(arenas)} arenas")
        item = _words(dtype, where)
        end, nbytes = offset + size * item, arenas[a][1]
        if offset % item or end > nbytes:
            raise _fail(
                f"{where} holds bytes [{offset}, {end}) of the {nbytes}-byte arena {a} (they "
                f"must lie inside it, from a multiple of {item} bytes)"
            )
        reach[a] = max(reach[a], end)
        device = _device(arenas[a][0], f"arena {a} device")
        views.append(_Buf(where, device, dtype, size, f"arena {a}", offset))
    for a, (_, nbytes) in enumerate(arenas):
        if nbytes > -(-reach[a] // ALIGN) * ALIGN:
            raise _fail(f"arena {a} holds {nbytes} bytes; its views reach {reach[a]} bytes")
    own: list[_Buf | None] = []
    for o, (device, dtype, size) in enumerate(bufs["own"]):
        where = f"own buffer {o}"
        total += size * _words(dtype, where)
        own.append(_Buf(where, _device(device, f"{where} device"), dtype, size, where))
    if total > MAX_BYTES:
        raise _fail(f"its buffers take {total} bytes; Ren loads plans of at most {MAX_BYTES}")
    return views, own


def _inputs(manifest: dict[str, Any]) -> list[_Buf | None]:
    """Each input's buffer as its spec says (``None`` for a constant input)."""
    entries = manifest["inputs"]
    if len(manifest["alias"]) != len(entries):
        raise _fail(f"its manifest has {len(entries)} inputs and {len(manifest['alias'])} aliases")
    out: list[_Buf | None] = []
    for k, entry in enumerate(entries):
        where = f"input {k} ({str(entry['path'])[:40]})"
        spec = _spec(entry["spec"], where)
        if (spec[0] == "buffer") is not entry["buffer"]:
            raise _fail(f"{where} is a {spec[0]} and says buffer={entry['buffer']}")
        if spec[0] == "buffer":
            out.append(_Buf(where, spec[4], spec[3], spec[2], f"input {k}"))
        else:
            out.append(None)
    for name, code in manifest["stored"].items():
        if _spec(code, f"stored input {name[:40]}")[0] != "buffer":
            raise _fail(f"stored input {name[:40]} is not a buffer")
    return out


def _spec(code: list[Any], where: str) -> tuple[Any, ...]:
    """A decoded input spec, each field of its type.

    ``("buffer", ring, size, dtype, device, domain, window)`` or ``("const", ring, value,
    device, domain)``.
    """
    spec: tuple[Any, ...] = decode(code)  # Any: the decoded fields, each checked below
    kind = spec[0] if spec else None
    if kind == "buffer" and len(spec) == 7:
        _, ring, size, dtype, device, domain, window = spec
        ok = isinstance(ring, RingSpec) and type(size) is int and size >= ring.size
        ok = ok and dtype == ring.dtype and isinstance(domain, Domain)
        ok = ok and (window is None or _window(window, size, ring))
    elif kind == "const" and len(spec) == 5:
        _, ring, value, device, domain = spec
        ok = isinstance(ring, RingSpec) and isinstance(domain, Domain)
        ok = ok and (value == "any" or (type(value) is int))
    else:
        ok, device = False, None
    if not ok:
        raise _fail(f"{where} has the spec {str(code)[:80]}, not one Ren writes")
    _device(device, f"{where} device")
    return spec


def _window(window: Any, size: int, ring: RingSpec) -> bool:
    """A limb window ``(offset, words)`` of ``ring``'s words inside a ``size``-word buffer."""
    if not isinstance(window, tuple) or len(window) != 2:
        return False
    offset, words = window
    return type(offset) is int and words == ring.size and 0 <= offset <= size - words


def _stored(stored: Mapping[str, Poly], name: str, where: str) -> _Buf:
    p = stored.get(name)
    if p is None or is_const(p.node):
        raise _fail(f"{where} reads the stored input {name[:40]!r}, which is not a stored buffer")
    buf = storage_of(p)[0]
    return _Buf(f"stored input {name}", buf.device, buf.dtype, buf.size, f"stored {name}")


# ---------------------------------------------------------------------------------------------
# constants, result


def _check_constants(
    data: dict[str, Any], units: list[dict[str, Any]], inputs: list[_Buf | None]
) -> None:
    """Each rebound row is a row of its unit, each rebound or fixed input a constant input."""
    for ui, row, k in data["const_rows"]:
        if ui >= len(units) or row >= len(units[ui]["consts"]):
            raise _fail(f"a constant row names row {row} of unit {ui}, which it does not have")
        if k >= len(inputs) or inputs[k] is not None:
            raise _fail(f"a constant row of unit {ui} is given input {k}, not a constant input")
    for k in data["fixed_consts"]:
        if not 0 <= int(k) < len(inputs) or inputs[int(k)] is not None:
            raise _fail(f"fixed constant {k[:20]} is not a constant input")


def _check_result(path: str, code: Any, resolve: Resolve) -> None:
    """A result value is a ring over exactly the words of a buffer (or view) of the plan's."""
    _, arg, view, ref = planresult.node_parts(path, code)
    where = f"its result at {path}"
    buf = resolve(ref, where)
    if ref[0] == "input":
        raise _fail(f"{where} is an input's buffer")
    start, words = (0, buf.words) if view is None else (view.offset, view.size)
    if start + words > buf.words or words != arg.ring.size or buf.dtype != arg.ring.dtype:
        raise _fail(
            f"{where} is {arg.ring.size} {arg.ring.dtype} words at word {start} of {buf.name}, "
            f"which holds {buf.words} {buf.dtype} words"
        )
