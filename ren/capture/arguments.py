"""Finding the ``Poly`` values in a jitted function's arguments and results.

``walk`` visits lists, tuples, dicts and dataclasses in a fixed order and collects each ``Poly``
with its path (``x``, ``ys[1]``, ``ct.parts[0]``) and every other leaf (a key part of the plan);
``rebuild`` puts other polys in their places; ``spec`` is what a ``Poly`` input adds to the key.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import TypeAlias, TypeVar, cast

from ren.device import Buffer
from ren.errors import JitError
from ren.ir.facts import is_const
from ren.ir.op import Op
from ren.poly import Poly
from ren.repoint import stored

__all__ = ["Leaf", "PlanKey", "rebuild", "spec", "storage_of", "walk"]

T = TypeVar("T")

#: A leaf of a call that is not a ``Poly``: ``(path, type name, value)``, a part of a plan's key.
Leaf: TypeAlias = tuple[str, str, object]
#: The key a plan is captured for: each ``Poly`` input's ``spec``, which input's buffer each
#: shares (``None``: a constant), and the call's other leaves.
PlanKey: TypeAlias = tuple[tuple[tuple[object, ...], ...], tuple[int | None, ...], tuple[Leaf, ...]]

_SCALARS = frozenset({int, float, complex, bool, str, bytes, type(None)})


def walk(obj: object, path: str, polys: list[tuple[str, Poly]], leaves: list[Leaf] | None) -> None:
    """Collect ``(path, Poly)`` in a fixed order, and a key part for every other leaf.

    The key part is the leaf itself: the key keeps it alive, so an ``id`` is never reused while a
    plan holds it. A class that sets ``__ren_jit_leaf__ = True`` (a hashable value that holds no
    ``Poly``, such as ``RingSpec`` or ``ckks.Params``) is one leaf even when it is a dataclass.
    A dataclass field whose metadata has ``ren_transient`` (a CKKS ciphertext's plaintext shadow)
    is not part of the value: it is skipped, and ``rebuild`` sets it to ``None``. A field whose
    metadata has ``ren_leaf`` is one leaf whatever it holds, its type given as ``"@"`` and that
    role, which a saved plan reads (``ren.capture.metadata``): ``"key"``, the fingerprint of
    the keys a value is under, or ``"local"``, an object of this process (a context).
    """
    if isinstance(obj, Poly):
        polys.append((path, obj))
    elif type(obj) in _SCALARS:  # the common leaves, hashable by construction
        if leaves is not None:
            leaves.append((path, type(obj).__qualname__, obj))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            walk(v, f"{path}[{k!r}]", polys, leaves)
    elif isinstance(obj, list | tuple):
        for i, v in enumerate(obj):
            walk(v, f"{path}[{i}]", polys, leaves)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        if getattr(obj, "__ren_jit_leaf__", False):
            if leaves is not None:
                leaves.append((path, type(obj).__qualname__, obj))
            return
        for f in dataclasses.fields(obj):
            meta = f.metadata
            if not meta:
                walk(getattr(obj, f.name), f"{path}.{f.name}", polys, leaves)
            elif meta.get("ren_transient"):
                continue
            elif "ren_leaf" in meta:
                if leaves is not None:
                    leaves.append(
                        (f"{path}.{f.name}", f"@{meta['ren_leaf']}", getattr(obj, f.name))
                    )
            else:
                walk(getattr(obj, f.name), f"{path}.{f.name}", polys, leaves)
    elif leaves is not None:
        try:
            hash(obj)
        except TypeError:
            raise JitError(
                f"argument {path} is a {type(obj).__name__}, which cannot be part of a jit cache "
                "key (it is not hashable, and its contents may change between calls); pass an "
                "int, a float, a tuple or a Poly instead"
            ) from None
        leaves.append((path, type(obj).__qualname__, obj))


def rebuild(obj: T, swap: dict[int, Poly], *, arguments: bool = False) -> T:
    """``obj`` with the polys whose ``id`` is in ``swap`` replaced.

    For a plan's result (the default) every container is copied and a ``ren_transient`` field
    is set to ``None``. For a call's ``arguments`` a container is copied only where something in
    it changes, and jit leaves and transient fields are kept as they are.
    """
    return cast(T, _rebuilt(obj, swap, arguments))  # the same structure, of the same types


def _rebuilt(obj: object, swap: dict[int, Poly], arguments: bool) -> object:
    if isinstance(obj, Poly):
        return swap.get(id(obj), obj)
    if isinstance(obj, dict):
        items = {k: _rebuilt(v, swap, arguments) for k, v in obj.items()}
        if arguments and all(items[k] is v for k, v in obj.items()):
            return obj
        return type(obj)(items)
    if isinstance(obj, list | tuple):
        made = [_rebuilt(v, swap, arguments) for v in obj]
        if arguments and all(a is b for a, b in zip(made, obj, strict=True)):
            return obj
        if isinstance(obj, list):
            return type(obj)(made) if arguments else made
        if hasattr(obj, "_fields"):  # a named tuple: made from its fields
            named_tuple: Callable[..., object] = type(obj)
            return named_tuple(*made)
        return type(obj)(made)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        if arguments and getattr(obj, "__ren_jit_leaf__", False):
            return obj
        fields = {}
        for f in dataclasses.fields(obj):
            old = getattr(obj, f.name)
            if not arguments:
                fields[f.name] = (
                    None if f.metadata.get("ren_transient") else _rebuilt(old, swap, False)
                )
            elif (value := _rebuilt(old, swap, True)) is not old:
                fields[f.name] = value
        if arguments and not fields:
            return obj
        new = copy.copy(obj)
        for name, value in fields.items():
            object.__setattr__(new, name, value)
        return new
    return obj


def spec(path: str, p: Poly) -> tuple[object, ...]:
    """The key part of the input at ``path``: its ring, device, domain and storage.

    A ``Poly.const`` input's value is ``"any"`` unless it is 0, 1 or -1 modulo ``Q`` (values the
    scheduler rewrites by): a plan that cannot take another value keys it again (``JitFunction``).
    """
    if is_const(p.node):
        value = p.node.src[0].arg.value if p.node.op is Op.AS_RING else p.node.arg.value
        if p.node.op is Op.AS_RING and p.node.src[0].op is Op.CONST:
            Q = p.ring.Q  # a Poly.const: a plan may take another value (ren.capture.constants)
            value = value if value % Q in (0, 1, Q - 1) else "any"
        return (path, "const", p.ring, value, p.device, p.domain)
    buf, view = storage_of(p)
    return (path, "buffer", p.ring, buf.size, buf.dtype, p.device, p.domain, view)


def storage_of(p: Poly) -> tuple[Buffer, tuple[int, int] | None]:
    """Where a realized value is stored: its buffer, and ``(offset, size)`` for a limb view.

    Raises:
        JitError: when ``p`` is not a stored value (a constant, or a value not realized).
    """
    where = stored(p.node)
    if where is None:
        raise JitError(f"a Poly in {p.ring} was expected to be stored in a buffer, and is not")
    return where
