"""``ren.load``: a saved plan, read back and replayed without the scheduler or the memory planner.

The plan is read from a file or from its bytes (``ren.capture.planfile.read_bytes``), and with
``device=`` moved to another device before anything else is checked (``ren.capture.retarget``).

Loading checks everything before anything runs, and each check is a clear error naming what
differs: the file's size, format version, fingerprint (a changed byte) and the type of each field
(``ren.capture.planfile.read``); the stored inputs (each named value given, with the spec the
plan was saved with, evaluation keys under one set of keys as at save); each kernel's body and
info, decoded and checked as values Ren writes, and its device (available here?); every kernel's
reads and writes against the buffers the plan declares, and the memory it asks for
(``ren.capture.plancheck``), before any buffer is allocated; each kernel's source (rendered again
by this Ren from its checked body, it must hash as the file says: a Ren whose kernels differ
refuses the plan); the result, rebuilt only as one of Ren's own types (``ren.capture.planresult``)
in the active context (under those keys). A plan file is hostile until checked: nothing in it is
run, imported or compiled. Each call then checks its inputs' specs and metadata
(``ren.capture.metadata``: scale, level, correction, other arguments, keys).
"""

from __future__ import annotations

import importlib
import inspect
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from ren.capture.arguments import Leaf, storage_of, walk
from ren.capture.constants import const_node, own_constants
from ren.capture.metadata import Metadata
from ren.capture.mismatch import fix_for, spec_difference, stored_mismatch
from ren.capture.plan import CapturedPlan
from ren.capture.plancheck import check as check_plan
from ren.capture.planfile import BYTES, PlanFileError, decode, read_bytes
from ren.capture.planfile import read as read_file
from ren.capture.plankernels import decoded_kernels
from ren.capture.planresult import check_fields, node_parts
from ren.capture.retarget import devices, moved
from ren.capture.saved import spec_code, stored_values
from ren.device import Buffer
from ren.engine.memory import MemoryPlan
from ren.engine.realize import ExecUnit, backend, prepare_all, unit_buffers
from ren.engine.schedule import ScheduledKernel
from ren.errors import describe
from ren.ir.facts import is_const
from ren.ir.node import BufferArg, Node
from ren.ir.op import Op
from ren.poly import Poly, realize

__all__ = ["LoadedPlan", "load"]

#: The buffer a reference of the file names (``["view", 2]``; checked before it is used).
BufferOf = Callable[[list[Any]], Buffer]


def load(
    source: str | os.PathLike[str] | bytes | bytearray | memoryview,
    stored: Mapping[str, object] | None = None,
    *,
    device: str | None = None,
) -> LoadedPlan:
    """Read a saved plan: a callable that replays it.

    Args:
        source: the path of a file written by ``JitFunction.save`` or ``export``, or that file's
            bytes (``Path(p).read_bytes()``, sent to another machine).
        stored: the stored inputs the plan reads, by the names it was saved with (the evaluation
            keys of a CKKS plan: ``stored={"keys": ctx.evaluation_keys()}``).
        device: replay the plan on this device rather than the one it was saved on (every kernel
            rendered and built again for it, ``ren.capture.retarget``); its stored inputs and
            call inputs must then be on it. ``"python"`` replays it on NumPy, the reference.

    Raises:
        TypeError: a ``source`` that is neither a path nor bytes, or a ``device`` not a str.
        FileNotFoundError: no such file.
        PlanFileError: a damaged file, another format version, or kernels this Ren renders
            differently (the message names the kernel and both Ren versions).
        RenError: a device of the plan (or ``device``) that is not available here.
        ValueError: a stored input missing, or of another spec than the plan's, stored keys
            that are not the keys the plan was saved with them under, a result that the
            context active at load would put under other keys than the stored keys, or a
            ``device`` for a plan that runs on more than one device.
    """
    if isinstance(source, bytes | bytearray | memoryview):
        return LoadedPlan(None, read_bytes(source), stored, device=device)
    if not isinstance(source, str | os.PathLike):
        raise TypeError(
            "ren.load's source must be a plan file's path (str or os.PathLike) or its bytes "
            f"(bytes, bytearray or memoryview), got {describe(source)}"
        )
    if isinstance(source, str) and source.lstrip().startswith("{"):
        raise TypeError("ren.load's source is a path; give a plan's text as bytes (.encode())")
    return LoadedPlan(source, read_file(source), stored, device=device)


class LoadedPlan:
    """A plan read from a file or its bytes. Call it as the jitted function it was saved from.

    ``plan`` is the ``CapturedPlan`` it replays (units, memory plan); ``data`` the file's fields
    (moved to ``device``, if given: ``ren.capture.retarget.moved``); ``path`` the file's path, or
    ``planfile.BYTES`` for a plan read from bytes (``path=None``); ``moved_from`` the device the
    plan was saved on when it was moved, else ``None``. Safe to call from several threads at
    once, as a jitted function is.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None,
        data: dict[str, Any],
        stored: Mapping[str, object] | None,
        device: str | None = None,
    ) -> None:
        self.path = BYTES if path is None else str(path)
        where = "bytes" if path is None else Path(self.path).name
        self.name = f"{data.get('function', '?')} (loaded from {where})"
        self.moved_from: str | None = None  # and how messages say where its specs are from:
        self._with, self._for = "the plan was saved with", "the plan was saved for"
        if device is not None and (new := moved(data, device, self.path)) is not data:
            self.moved_from, data = devices(data)[0], new
            self._with = self._for = f"the plan (saved on {self.moved_from!r}, moved) is for"
        self.data = data
        manifest = data["manifest"]
        self._params = manifest.get("params")
        named = stored_values(stored)
        realize(*(p for p in named.values() if not is_const(p.node)))  # stored inputs hold data
        missing = sorted(set(manifest["stored"]) - set(named))
        if missing:
            raise ValueError(
                f"{self.path} reads the stored inputs {missing}: give them as "
                "ren.load(path, stored={...}) under the names they were saved with"
            )
        got = {
            name: spec_code(name, named[name]) if not is_const(named[name].node) else None
            for name in manifest["stored"]
        }
        wrong = [name for name, want in manifest["stored"].items() if got[name] != want]
        if wrong:
            raise ValueError(
                stored_mismatch(wrong, got, manifest["stored"], stored or {}, self._with)
            )
        self._metadata = Metadata(manifest.get("metadata"), self.name, manifest["stored"])
        self._metadata.check_stored(stored)  # the stored keys fix their key group
        self.plan = self._build(data, named)
        self._metadata.check_result(self.plan.result)  # as rebuilt in the active context

    # --- building ---------------------------------------------------------------------------
    def _build(self, data: dict[str, Any], named: dict[str, Poly]) -> CapturedPlan:
        # every kernel decoded and every size checked before anything is allocated
        decoded = decoded_kernels(data, self.path, lambda kernels: check_plan(data, kernels, named))
        bufs = data["buffers"]
        arenas = [Buffer(d, "u8", n, no_opt=True).ensure_allocated() for d, n in bufs["arenas"]]
        views = [
            Buffer(arenas[a].device, dt, size, base=arenas[a], offset=off).ensure_allocated()
            for a, dt, size, off in bufs["views"]
        ]
        own = [Buffer(d, dt, size).ensure_allocated() for d, dt, size in bufs["own"]]

        def buffer(ref: list[Any]) -> Buffer:
            kind, where = ref[0], ref[1]
            if kind == "view":
                return cast(Buffer, views[where])  # where: an index, checked with the file
            if kind == "own":
                return cast(Buffer, own[where])
            if kind == "stored":
                return storage_of(named[where])[0]
            raise PlanFileError(f"unknown buffer {ref!r} in the plan file")

        prepare_all([(backend(info.device), ast, info) for ast, info in decoded])
        kernels = [(ast, info, backend(info.device).compile(ast, info)) for ast, info in decoded]
        units, bindings = [], []
        for i, u in enumerate(data["units"]):
            ast, info, fn = kernels[u["kernel"]]
            slots: list[Buffer | None] = []
            for j, ref in enumerate(u["bufs"]):
                if ref[0] == "input":
                    bindings.append((i, j, ref[1]))
                    slots.append(None)
                else:
                    slots.append(buffer(ref))
            consts = tuple(int(c) for c in u["consts"])
            kernel = ScheduledKernel(ast, tuple(slots), info, consts)  # type: ignore[arg-type]
            units.append(ExecUnit(info.name, info.device, unit_buffers(kernel), fn, kernel))
        const_rows = [(ui, j, i) for ui, j, i in data["const_rows"]]
        units = own_constants(units, const_rows)  # as a capture does: rows a call writes
        passthrough: list[tuple[tuple[int, tuple[int, int]] | Poly, Buffer]] = []
        for src, dst in data["passthrough"]:
            source = (src[1], (src[2], src[3])) if src[0] == "input" else named[src[1]]
            passthrough.append((source, buffer(dst)))
        inputs = data["manifest"]["inputs"]
        plan = CapturedPlan(
            key=("loaded", data["fingerprint"]),
            units=units,
            inputs=[entry["buffer"] for entry in inputs],
            paths=[entry["path"] for entry in inputs],
            bindings=bindings,
            written={id(b) for b in arenas} | {id(b) for b in own},
            passthrough=passthrough,
            result=_rebuild(data["result"], buffer),
            const_rows=const_rows,
            fixed_consts={int(i): int(v) for i, v in data["fixed_consts"].items()},
        )  # the memory plan is read when a tool asks for it (``LoadedPlan.memory``)
        plan.seal({id(storage_of(p)[0]): f"the stored input {n}" for n, p in named.items()})
        return plan

    # --- calling ----------------------------------------------------------------------------
    def _named(
        self, args: tuple[object, ...], kwargs: dict[str, object]
    ) -> list[tuple[str, object]]:
        if self._params is None:
            return [(f"args[{i}]", a) for i, a in enumerate(args)] + list(kwargs.items())
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        sig = inspect.Signature([inspect.Parameter(n, kind) for n in self._params])
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.name} takes ({', '.join(self._params)}): {e}") from None
        return list(bound.arguments.items())

    def __call__(self, *args: object, **kwargs: object) -> Any:  # Any: the saved result's shape
        """Replay the plan on these arguments; returns its result (the same structure each call).

        Raises:
            ValueError: an input at another path, or of another spec (ring, dtype, device, domain,
                size, limb window), than the plan's, inputs that share a buffer where the
                plan's did not, or an argument whose metadata is not the plan's (a scale, level,
                correction, int argument, or keys other than the stored keys'; each named).
        """
        polys: list[tuple[str, Poly]] = []
        leaves: list[Leaf] = []
        for name, value in self._named(args, kwargs):
            walk(value, name, polys, leaves)
        want = self.data["manifest"]["inputs"]
        paths = [p for p, _ in polys]
        if paths != [w["path"] for w in want]:
            raise ValueError(
                f"{self.name} takes Poly inputs at {[w['path'] for w in want]}, got {paths}"
            )
        self._metadata.check_inputs(leaves)  # scale, level, correction, keys: as saved
        realize(*(p for _, p in polys if not is_const(p.node)))
        for (path, p), w in zip(polys, want, strict=True):
            got = spec_code(path, p)
            if got != w["spec"]:
                have, saved, fields = spec_difference(got, w["spec"])
                fix = fix_for(fields, w["spec"], None)
                raise ValueError(
                    f"input {path} of {self.name} is {have}; {self._for} {saved}"
                    + (f": {fix}" if fix else "")
                )
        for i, value in self.plan.fixed_consts.items():
            node = const_node(polys[i][1])
            if node is None or node.arg.value != value:
                raise ValueError(
                    f"input {polys[i][0]} of {self.name} must be the constant {value}: the plan "
                    "was saved for that value only (ren.capture.constants)"
                )
        first: dict[int, int] = {}
        alias = [
            None if is_const(p.node) else first.setdefault(id(storage_of(p)[0]), i)
            for i, (_, p) in enumerate(polys)
        ]
        if alias != self.data["manifest"]["alias"]:
            raise ValueError(
                f"inputs of {self.name} share buffers as {alias} (each input's first position); "
                f"the plan was saved for {self.data['manifest']['alias']}: pass copies"
            )
        return self.plan.replay(self, polys)

    @property
    def memory(self) -> MemoryPlan:
        """The plan's arena layout, as saved (read from the file on first use)."""
        if not self.plan.memory.devices and self.data["memory"]["devices"]:
            memory = decode(self.data["memory"])
            assert isinstance(memory, MemoryPlan)
            self.plan.memory = memory
        return self.plan.memory

    def _repr_html_(self) -> str:
        """The notebook's display (``ren.display.loaded_html``): fingerprint, manifest, memory."""
        from ren.display import loaded_html

        return loaded_html(self)

    def __repr__(self) -> str:
        units = len(self.plan.units)
        return f"<LoadedPlan {self.name}: {units} units, runner={self.plan.runner_kind}>"


def _rebuild(code: dict[str, Any], buffer: BufferOf, path: str = "result") -> object:
    """The result structure of a plan file, over the loaded plan's buffers.

    Its structure was checked (``ren.capture.planresult.walk``); an object is rebuilt only by a
    type of the fixed table ``REBUILDABLE``, its fields checked first.
    """
    kind = next(iter(code))
    if kind == "poly":
        return Poly._wrap(_node(code["poly"], buffer, path))
    if kind in ("list", "tuple"):
        items = [_rebuild(v, buffer, f"{path}[{i}]") for i, v in enumerate(code[kind])]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        return {k: _rebuild(v, buffer, f"{path}[{k!r}]") for k, v in code["dict"].items()}
    if kind == "value":
        return decode(code["value"])
    name = code["object"]
    fields = {k: _rebuild(v, buffer, f"{path}.{k}") for k, v in code["fields"].items()}
    check_fields(name, fields, lambda p: isinstance(p, Poly))
    module, _, attr = name.partition(":")  # a name of REBUILDABLE: one of Ren's own types
    return getattr(importlib.import_module(module), attr).__ren_plan_rebuild__(fields)


def _node(code: list[Any], buffer: BufferOf, path: str) -> Node:
    """A result value's node: ``AS_RING`` over a buffer of the plan, or over a view of one."""
    dtype, arg, view, ref = node_parts(path, code)
    node = Node(Op.BUFFER, dtype, (), BufferArg(buffer(ref)))
    if view is not None:
        node = Node(Op.BUFFER_VIEW, dtype, (node,), view)
    return Node(Op.AS_RING, dtype, (node,), arg)
