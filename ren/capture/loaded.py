"""``ren.load``: a saved plan, read back and replayed without the scheduler or the memory planner.

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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ren.capture.arguments import storage_of, walk
from ren.capture.constants import const_node, own_constants
from ren.capture.metadata import Metadata
from ren.capture.plan import CapturedPlan
from ren.capture.plancheck import check as check_plan
from ren.capture.planfile import PlanFileError, decode, decode_body
from ren.capture.planfile import read as read_file
from ren.capture.planresult import check_fields, node_parts
from ren.capture.saved import kernel_source, source_hash, spec_code, stored_values
from ren.device import Buffer
from ren.engine.memory import MemoryPlan
from ren.engine.realize import ExecUnit, backend, unit_buffers
from ren.engine.schedule import ScheduledKernel
from ren.errors import RenError
from ren.ir.facts import is_const
from ren.ir.node import BufferArg, KernelInfo, Node
from ren.ir.op import Op
from ren.poly import Poly, realize
from ren.version import version

__all__ = ["LoadedPlan", "load"]


def load(path: str | os.PathLike[str], stored: Mapping[str, Any] | None = None) -> LoadedPlan:
    """Read the plan file at ``path``: a callable that replays it.

    Args:
        path: a file written by ``JitFunction.save`` or ``export``.
        stored: the stored inputs the plan reads, by the names it was saved with (the evaluation
            keys of a CKKS plan: ``stored={"keys": ctx.evaluation_keys()}``).

    Raises:
        FileNotFoundError: no such file.
        PlanFileError: a damaged file, another format version, or kernels this Ren renders
            differently (the message names the kernel and both Ren versions).
        RenError: a device of the plan that is not available here.
        ValueError: a stored input missing, or of another spec than the plan's, stored keys
            that are not the keys the plan was saved with them under, or a result that the
            context active at load would put under other keys than the stored keys.
    """
    return LoadedPlan(path, read_file(path), stored)


class LoadedPlan:
    """A plan read from a file. Call it as the jitted function it was saved from.

    ``plan`` is the ``CapturedPlan`` it replays (units, memory plan); ``data`` the file's fields.
    Safe to call from several threads at once, as a jitted function is.
    """

    def __init__(self, path: Any, data: dict[str, Any], stored: Mapping[str, Any] | None):
        self.path, self.data = str(path), data
        self.name = f"{data.get('function', '?')} (loaded from {Path(self.path).name})"
        manifest = data["manifest"]
        self._params = manifest.get("params")
        named = stored_values(stored)
        realize(*(p for p in named.values() if not is_const(p.node)))  # stored inputs hold data
        missing = sorted(set(manifest["stored"]) - set(named))
        if missing:
            raise ValueError(
                f"the plan {self.path} reads the stored inputs {missing}: give them as "
                "ren.load(path, stored={...}) under the names they were saved with"
            )
        for name, want in manifest["stored"].items():
            got = spec_code(name, named[name]) if not is_const(named[name].node) else None
            if got != want:
                raise ValueError(
                    f"stored input {name} is {_spec_text(got)}; the plan was saved with "
                    f"{_spec_text(want)}"
                )
        self._metadata = Metadata(manifest.get("metadata"), self.name)
        self._metadata.check_stored(stored)  # the stored keys fix their key group
        self.plan = self._build(data, named)
        self._metadata.check_result(self.plan.result)  # as rebuilt in the active context

    # --- building ---------------------------------------------------------------------------
    def _build(self, data: dict[str, Any], named: dict[str, Poly]) -> CapturedPlan:
        decoded = []  # every kernel decoded and every size checked before anything is allocated
        for k in data["kernels"]:
            ast, info = decode_body(k["body"]), decode(k["info"])
            if not isinstance(info, KernelInfo):
                raise PlanFileError(f"a kernel's info in {self.path} is not a KernelInfo")
            _check_device(info.device, self.path)
            decoded.append((ast, info))
        check_plan(data, decoded, named)
        for i, (k, (ast, info)) in enumerate(zip(data["kernels"], decoded, strict=True)):
            if source_hash(kernel_source(ast, info)) != k["source_sha256"]:
                raise PlanFileError(
                    f"kernel {i} ({info.name}) of {self.path} renders differently in this Ren "
                    f"({version()}) than in the Ren that saved the plan ({data['ren']}): "
                    "capture and save the plan again with this Ren"
                )
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
                return views[where]
            if kind == "own":
                return own[where]
            if kind == "stored":
                return storage_of(named[where])[0]
            raise PlanFileError(f"unknown buffer {ref!r} in the plan file")

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
        passthrough: list[Any] = []
        for src, dst in data["passthrough"]:
            source: Any = (src[1], (src[2], src[3])) if src[0] == "input" else named[src[1]]
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
    def _named(self, args: tuple, kwargs: dict) -> list[tuple[str, Any]]:
        if self._params is None:
            return [(f"args[{i}]", a) for i, a in enumerate(args)] + list(kwargs.items())
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        sig = inspect.Signature([inspect.Parameter(n, kind) for n in self._params])
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.name} takes ({', '.join(self._params)}): {e}") from None
        return list(bound.arguments.items())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Replay the plan on these arguments; returns its result (the same structure each call).

        Raises:
            ValueError: an input at another path, or of another spec (ring, dtype, device, domain,
                size, limb window), than the plan's, inputs that share a buffer where the
                plan's did not, or an argument whose metadata is not the plan's (a scale, level,
                correction, int argument, or keys other than the stored keys'; each named).
        """
        polys: list[tuple[str, Poly]] = []
        leaves: list[tuple] = []
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
                raise ValueError(
                    f"input {path} of {self.name} is {_spec_text(got)}; the plan was saved for "
                    f"{_spec_text(w['spec'])}"
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
        return self.plan.replay(self, polys)  # type: ignore[arg-type]

    @property
    def memory(self) -> MemoryPlan:
        """The plan's arena layout, as saved (read from the file on first use)."""
        if not self.plan.memory.devices and self.data["memory"]["devices"]:
            memory = decode(self.data["memory"])
            assert isinstance(memory, MemoryPlan)
            self.plan.memory = memory
        return self.plan.memory

    def __repr__(self) -> str:
        units = len(self.plan.units)
        return f"<LoadedPlan {self.name}: {units} units, runner={self.plan.runner_kind}>"


def _check_device(device: str, path: str) -> None:
    try:
        backend(device)
    except (RenError, ImportError, ValueError) as e:
        raise RenError(
            f"the plan {path} runs kernels on device {device!r}, which is not available here: {e}"
        ) from None


def _spec_text(code: Any) -> str:
    if code is None:
        return "a constant"
    try:
        value = decode(code)
    except PlanFileError:
        return str(code)
    return ", ".join(str(v) for v in value)


def _rebuild(code: dict[str, Any], buffer: Any, path: str = "result") -> Any:
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


def _node(code: list[Any], buffer: Any, path: str) -> Node:
    """A result value's node: ``AS_RING`` over a buffer of the plan, or over a view of one."""
    dtype, arg, view, ref = node_parts(path, code)
    node = Node(Op.BUFFER, dtype, (), BufferArg(buffer(ref)))
    if view is not None:
        node = Node(Op.BUFFER_VIEW, dtype, (node,), view)
    return Node(Op.AS_RING, dtype, (node,), arg)
