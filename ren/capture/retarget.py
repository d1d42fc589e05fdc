"""A saved plan moved to another device: ``ren.load(source, device="python")``.

A plan file names its device in fixed places, and only there: the device of each arena and of
each of the plan's own buffers (``buffers``), each kernel's ``KernelInfo.device`` and the device
of every IR argument of its body that has one (a constants row, ``ConstRowArg``; a copy,
``CopyArg``), the spec of each input, output and stored input (``manifest``), and each arena of
the memory plan (``memory``). ``moved`` changes exactly those fields, and nothing else: not the
function's other arguments (``manifest.metadata``: a str argument ``"cpu"`` stays ``"cpu"``),
not a stored input's name, not a value of the result. The result and the pass-through copies name
buffers by reference, so they move with the buffers.

The moved kernels are rendered again for the new device, so their source hashes (and the sources
kept for reading) are computed again: the file's hashes name the sources of the saved device,
which need not be available here (a ``cuda`` plan audited on a machine without a GPU). That
trusts nothing new: ``read_bytes`` has checked the file's fingerprint (a changed byte), and a
moved plan goes through every other check of ``ren.load`` (each body decoded and checked, every
read and write against its buffers). The fingerprint stays the file's: the identity of the plan
that was read. ``planfile.write`` writes a moved plan as a plan file of the new device.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from ren.capture.plankernels import check_device, decoded_kernel
from ren.capture.saved import kernel_source, source_hash
from ren.engine.realize import backend
from ren.errors import describe

__all__ = ["devices", "moved"]

#: Where a device name is in a plan's fields: the list or dict that holds it, and its index or key.
Place = tuple[Any, Any]

#: A spec code's kind, its length and the position of its device (``ren.capture.arguments.spec``).
_SPEC_DEVICE = {"buffer": (7, 4), "const": (5, 3)}


def devices(data: dict[str, Any]) -> list[str]:
    """Every device the fields of a plan (as ``read_bytes`` gives it) name, sorted."""
    return sorted({holder[key] for holder, key in _places(data)})


def moved(data: dict[str, Any], device: str, name: str = "the plan") -> dict[str, Any]:
    """The plan ``data`` (as ``read_bytes`` gives it) with every device field set to ``device``.

    ``data`` itself when the plan is already on ``device`` (or names no device); else a copy, its
    kernels' source hashes and sources those ``device`` renders (see the module's docstring).

    Args:
        data: a plan file's fields, checked by ``read_bytes``.
        device: the device to replay the plan on (``"python"``: NumPy, the reference backend).
        name: what messages call the plan (its path, or ``planfile.BYTES``).

    Raises:
        TypeError: ``device`` is not a str.
        ValueError: the plan runs on more than one device (the message names them).
        RenError: ``device`` is not available here.
        PlanFileError: a kernel's body or info that does not decode (as ``ren.load`` refuses it).
    """
    if type(device) is not str:
        raise TypeError(
            f"device must be a device name (a str such as 'python'), got {describe(device)}"
        )
    names = devices(data)
    if names in ([], [device]):
        return data
    if len(names) > 1:
        raise ValueError(
            f"{name} runs on the devices {names}: only a plan of one device can be moved to "
            f"device {device!r}"
        )
    check_device(device, name, "cannot be moved to")
    new = copy.deepcopy(data)
    for holder, key in _places(new):
        holder[key] = device
    keeps_source = hasattr(backend(device), "source")  # as ``JitFunction.save`` keeps them
    new["sources"] = {}
    for kernel in new["kernels"]:
        text = kernel_source(*decoded_kernel(kernel, name))
        kernel["source_sha256"] = source_hash(text)
        if keeps_source:
            new["sources"][kernel["source_sha256"]] = text
    return new


def _places(data: dict[str, Any]) -> Iterator[Place]:
    """Each device field of a plan (see the module's docstring), in the order of the file."""
    buffers = data["buffers"]
    for entry in (*buffers["arenas"], *buffers["own"]):  # [device, bytes], [device, dtype, size]
        yield entry, 0
    for kernel in data["kernels"]:
        yield from _field(kernel["info"])
        for node in kernel["body"]:  # [op, dtype, arg, sources]
            if type(node) is list and len(node) == 4:
                yield from _field(node[2])
    manifest = data["manifest"]
    specs = [entry["spec"] for entry in (*manifest["inputs"], *manifest["outputs"])]
    for spec in (*specs, *manifest["stored"].values()):
        kind = spec[0] if type(spec) is list and spec else None
        size, at = _SPEC_DEVICE.get(kind, (0, 0)) if type(kind) is str else (0, 0)
        if size and len(spec) == size and type(spec[at]) is str:
            yield spec, at
    arenas = data["memory"].get("devices")
    for arena in arenas if type(arenas) is list else ():
        yield from _field(arena)


def _field(value: object) -> Iterator[Place]:
    """The ``device`` field of an encoded IR value (``{"@": class, "device": ...}``), if any."""
    if type(value) is dict and "@" in value and type(value.get("device")) is str:
        yield value, "device"
