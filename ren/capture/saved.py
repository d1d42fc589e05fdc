"""Saved plans: a captured plan written to a file, and loaded in another process to replay.

``JitFunction.save(path)`` (or ``ren.jit(fn).export(path, *example_args)``) writes the plan of
the function's latest call as a plan file (``ren.capture.planfile``). ``ren.load(path)`` reads it
back as a ``LoadedPlan``, a callable that replays it without running the scheduler or the memory
planner: its kernels come from the compile cache, or are built from their sources when the cache
is cold (each source is rendered again from the kernel body and must hash as the file says).

What the file never holds: a value. Inputs are bound at each call; every other stored value the
plan reads (an evaluation key, a value the function closes over) is a *stored input*, named in
the manifest and given by the caller (``stored=``) at save and at load. So no secret key, and no
ciphertext, is ever in a plan file.

What the file does hold of the values is their metadata (``ren.capture.metadata``): every leaf of
the arguments that is not a ``Poly`` (a ciphertext's scale, level, correction, parameters; an int
argument), which values were under one set of keys (never a key fingerprint itself), and the
result's scale, level and correction. A loaded plan refuses a value whose metadata differs, as
``ren.jit`` would capture another plan for it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, cast

from ren.capture.arguments import PlanKey, spec, storage_of, walk
from ren.capture.metadata import record
from ren.capture.plan import CapturedPlan
from ren.capture.planfile import FORMAT, FORMAT_VERSION, encode, encode_body
from ren.capture.planfile import write as write_file
from ren.device import Buffer
from ren.engine.memory import MemoryPlan
from ren.engine.realize import backend
from ren.errors import JitError
from ren.ir.kernels import KernelInfo
from ren.ir.node import Node
from ren.ir.op import Op
from ren.poly import Poly
from ren.repoint import stored as stored_in
from ren.version import version

__all__ = [
    "Saving",
    "kernel_source",
    "plan_data",
    "save",
    "source_hash",
    "spec_code",
    "stored_values",
]


def stored_values(stored: Mapping[str, object] | None) -> dict[str, Poly]:
    """Every ``Poly`` in ``stored`` by name (``keys.relin[0].b`` for ``{"keys": ...}``).

    A value is a ``Poly``, a list, tuple, dict or dataclass of them, or an object with a
    ``__ren_stored__()`` method returning ``{name: Poly}`` (CKKS's ``EvaluationKeys``).
    """
    out: dict[str, Poly] = {}
    if stored is None:
        return out
    if not isinstance(stored, Mapping):
        raise TypeError(f"stored must be a dict of named values, got {type(stored).__name__}")
    for name, value in stored.items():
        if not isinstance(name, str):
            raise TypeError(f"stored names are strings, got {name!r}")
        provide = getattr(value, "__ren_stored__", None)
        if provide is not None:
            for sub, p in provide().items():
                out[f"{name}.{sub}"] = p
            continue
        polys: list[tuple[str, Poly]] = []
        walk(value, name, polys, None)
        out.update(polys)
    return out


def kernel_source(ast: Node, info: KernelInfo) -> str:
    """The source a kernel's device runs (the python device: the printed body)."""
    owner = backend(info.device)
    return owner.source(ast, info) if hasattr(owner, "source") else str(ast)


def source_hash(source: str) -> str:
    """SHA-256 of a kernel's source, as a plan file records it."""
    return hashlib.sha256(source.encode()).hexdigest()


def spec_code(path: str, p: Poly) -> Any:
    """The spec of ``p`` at ``path`` (``ren.capture.arguments.spec``), as a plan file has it."""
    return encode(spec(path, p)[1:])


# ---------------------------------------------------------------------------------------------
# save


def plan_data(
    plan: CapturedPlan, name: str, params: list[str] | None, stored: Mapping[str, object] | None
) -> dict[str, Any]:
    """The plan file's fields for ``plan`` (all but the fingerprint).

    Raises:
        JitError: the plan has pruned work (its results are values), or reads a stored value
            that is neither an input nor named in ``stored`` (named as the jit names it).
    """
    if plan.pruned:
        raise JitError(
            f"the plan of {name} ran {plan.pruned} units once at capture (prune=True) and reads "
            "their results, which are values: a plan file holds no value; capture it with "
            "prune=False to save it"
        )
    named = stored_values(stored)
    by_root = {id(storage_of(p)[0]): n for n, p in named.items() if stored_in(p.node)}
    bound = {(i, j): k for i, j, k in plan.bindings}
    arenas: dict[int, int] = {}
    refs: dict[int, list[Any]] = {}
    buffers: dict[str, list[Any]] = {"arenas": [], "views": [], "own": []}
    used_stored: dict[str, Poly] = {}
    written = plan.written

    def ref(buf: Buffer) -> list[Any]:
        if id(buf) in refs:
            return refs[id(buf)]
        root = buf.root
        if buf.base is not None and id(root) in written:
            if id(root) not in arenas:
                arenas[id(root)] = len(buffers["arenas"])
                buffers["arenas"].append([root.device, root.size])
            buffers["views"].append([arenas[id(root)], buf.dtype, buf.size, buf.offset])
            out = ["view", len(buffers["views"]) - 1]
        elif id(root) in written and buf.base is None:
            buffers["own"].append([buf.device, buf.dtype, buf.size])
            out = ["own", len(buffers["own"]) - 1]
        elif id(root) in by_root and buf.base is None:
            used_stored[by_root[id(root)]] = named[by_root[id(root)]]
            out = ["stored", by_root[id(root)]]
        else:
            what = next((w for b, _, w in plan.external if b is root), f"buffer #{root.id}")
            raise JitError(
                f"the plan of {name} reads {what}, which is neither an input nor named in "
                "stored=: pass it, or the object that holds it, as stored={'name': value} to "
                "save (and the same to ren.load)"
            )
        refs[id(buf)] = out
        return out

    units, sources = [], {}
    kernels: list[dict[str, Any]] = []
    kernel_index: dict[tuple[Node, KernelInfo], int] = {}
    for i, u in enumerate(plan.units):
        k = u.kernel
        slots = [
            ["input", bound[(i, j)]] if (i, j) in bound else ref(b) for j, b in enumerate(k.bufs)
        ]
        if (k.ast, k.info) not in kernel_index:  # each distinct kernel once
            kernel_index[(k.ast, k.info)] = len(kernels)
            text = kernel_source(k.ast, k.info)  # rendered once: hashed, and kept when compiled
            digest = source_hash(text)
            if hasattr(backend(k.info.device), "source"):
                sources[digest] = text
            kernels.append(
                {"body": encode_body(k.ast), "info": encode(k.info), "source_sha256": digest}
            )
        units.append(
            {
                "kernel": kernel_index[(k.ast, k.info)],
                "consts": [str(c) for c in k.consts],  # big ints, kept exact
                "bufs": slots,
            }
        )
    passthrough = []
    for src, dst in plan.passthrough:
        if isinstance(src, Poly):
            source: Any = ref(storage_of(src)[0])
        else:
            source = ["input", src[0], *src[1]]
        passthrough.append([source, ref(dst)])
    outs: list[tuple[str, Poly]] = []
    walk(plan.result, "result", outs, None)
    result = _template(plan.result, ref)
    specs, alias, leaves = cast(PlanKey, plan.key)  # a captured plan's (a loaded one is not saved)
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "ren": version(),
        "function": name,
        "manifest": {
            "params": params,
            "inputs": [
                {"path": path, "buffer": ok, "spec": encode(s[1:])}
                for path, ok, s in zip(plan.paths, plan.inputs, specs, strict=True)
            ],
            "alias": list(alias),  # which inputs share a buffer (the first position)
            "stored": {n: spec_code(n, p) for n, p in sorted(used_stored.items())},
            "outputs": [{"path": path, "spec": spec_code(path, p)} for path, p in outs],
            # what the values' other leaves must be: scale, level, correction, keys (by group)
            "metadata": record(leaves, stored, used_stored, plan.result),
        },
        "buffers": buffers,
        "kernels": kernels,
        "units": units,
        "sources": sources,
        "passthrough": passthrough,
        "const_rows": [list(r) for r in plan.const_rows],
        "fixed_consts": {str(i): str(v) for i, v in sorted(plan.fixed_consts.items())},
        "result": result,
        "memory": encode(_numbered(plan.memory)),
    }


def _numbered(memory: MemoryPlan) -> MemoryPlan:
    """``memory`` with buffers numbered 0, 1, ... (ids count per process: a file is the same)."""
    devices = []
    for d in memory.devices:
        ids = {b.buffer_id: i for i, b in enumerate(d.buffers)}
        buffers = tuple(dataclasses.replace(b, buffer_id=ids[b.buffer_id]) for b in d.buffers)
        events = tuple(dataclasses.replace(e, buffer_id=ids[e.buffer_id]) for e in d.events)
        devices.append(dataclasses.replace(d, buffers=buffers, events=events))
    return MemoryPlan(tuple(devices))


def _template(obj: object, ref: Callable[[Buffer], list[Any]]) -> dict[str, Any]:
    """The result structure with each ``Poly`` as its stored node over buffer refs."""
    if isinstance(obj, Poly):
        return {"poly": _node_code(obj.node, ref)}
    if isinstance(obj, list | tuple):
        return {"list" if isinstance(obj, list) else "tuple": [_template(v, ref) for v in obj]}
    if isinstance(obj, dict):
        if not all(isinstance(k, str) for k in obj):
            raise JitError("a saved plan's result may hold dicts with string keys only")
        return {"dict": {k: _template(v, ref) for k, v in obj.items()}}
    to_fields = getattr(obj, "__ren_plan_fields__", None)
    if to_fields is not None:
        cls = type(obj)
        fields = {k: _template(v, ref) for k, v in to_fields().items()}
        return {"object": f"{cls.__module__}:{cls.__qualname__}", "fields": fields}
    if obj is None or isinstance(obj, bool | int | float | str):
        return {"value": encode(obj)}
    raise JitError(
        f"a saved plan's result holds a {type(obj).__name__}: results of Poly values, lists, "
        "tuples, dicts and CKKS ciphertexts and plaintexts can be saved"
    )


def _node_code(node: Node, ref: Callable[[Buffer], list[Any]]) -> list[Any]:
    if node.op is Op.BUFFER:
        return ["buffer", node.dtype.name, ref(node.arg.buffer)]
    return [node.op.name, node.dtype.name, encode(node.arg), [_node_code(s, ref) for s in node.src]]


def save(
    plan: CapturedPlan,
    fn: _Jitted,
    path: str | os.PathLike[str],
    stored: Mapping[str, object] | None,
) -> Path:
    """Write ``plan``, captured by the jitted function ``fn``, to ``path`` (``Saving.save``)."""
    params = None
    if fn._signature is not None:
        params = list(fn._signature.parameters)
    return write_file(path, plan_data(plan, fn.name, params, stored))


class _Jitted(Protocol):
    """What ``Saving`` needs of the jitted function it is mixed into."""

    last: CapturedPlan | None
    _signature: inspect.Signature | None

    @property
    def name(self) -> str:
        """The function's name, as errors show it."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the function (capture or replay)."""


class Saving:
    """``save`` and ``export`` of a jitted function, and its display (``JitFunction`` inherits)."""

    def _repr_html_(self) -> str:
        """The notebook's display (``ren.display.jit_html``): calls, latest plan, its memory."""
        from ren.display import jit_html

        return jit_html(self)

    def save(
        self: _Jitted, path: str | os.PathLike[str], *, stored: Mapping[str, object] | None = None
    ) -> Path:
        """Write the plan of the latest call to ``path``, for ``ren.load`` in any process.

        Args:
            path: the plan file to write (replaced whole; concurrent writers never mix).
            stored: the values the plan reads that are not arguments, by name (for a CKKS
                plan, its evaluation keys: ``stored={"keys": ctx.evaluation_keys()}``). No value
                is written: ``ren.load`` takes the same names.

        Raises:
            JitError: nothing was captured yet, the plan pruned work, or it reads a stored value
                ``stored`` does not name.
        """
        plan = self.last
        if plan is None:
            raise JitError(
                f"jitted function {self.name} has no plan to save: call it once, or use "
                f"{self.name}.export(path, *example_args)"
            )
        return save(plan, self, path, stored)

    def export(
        self: _Jitted,
        path: str | os.PathLike[str],
        *args: object,
        stored: Mapping[str, object] | None = None,
        **kwargs: object,
    ) -> Path:
        """Call the function on example arguments (capturing it) and save its plan to ``path``."""
        self(*args, **kwargs)
        return Saving.save(self, path, stored=stored)
