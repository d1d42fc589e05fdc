"""The kernels of a plan file, decoded and checked as ``ren.load`` checks them, before any run.

``decoded_kernels`` is the first step of ``ren.load`` (every body and info decoded through Ren's
own classes, every device available, each kernel rendering to the text the file's hash names);
``plan_kernels`` is that step alone, for ``python -m ren.codegen warm --plan``, which builds a
plan's kernels ahead of time without its stored inputs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ren.capture.planfile import PlanFileError, decode, decode_body
from ren.capture.planfile import read as read_file
from ren.capture.saved import kernel_source, source_hash
from ren.engine.realize import backend
from ren.errors import RenError
from ren.ir.node import KernelInfo, Node
from ren.version import version

__all__ = ["check_device", "decoded_kernel", "decoded_kernels", "plan_kernels"]

Kernels = list[tuple[Node, KernelInfo]]


def plan_kernels(path: str | os.PathLike[str]) -> Kernels:
    """The kernels of the plan file at ``path``, checked as ``load`` checks them (nothing runs).

    What ``python -m ren.codegen warm --plan`` builds ahead of time.

    Raises:
        FileNotFoundError, PlanFileError, RenError: as ``load``.
    """
    return decoded_kernels(read_file(path), path, lambda kernels: None)


def decoded_kernels(
    data: dict[str, Any], path: str | os.PathLike[str], check: Callable[[Kernels], object]
) -> Kernels:
    """Each kernel of ``data`` decoded, ``check``-ed, and rendered as the file says it was."""
    decoded = [decoded_kernel(k, path) for k in data["kernels"]]
    check(decoded)
    for i, (k, (ast, info)) in enumerate(zip(data["kernels"], decoded, strict=True)):
        if source_hash(kernel_source(ast, info)) != k["source_sha256"]:
            raise PlanFileError(
                f"kernel {i} ({info.name}) of {path} renders differently in this Ren "
                f"({version()}) than in the Ren that saved the plan ({data['ren']}): "
                "capture and save the plan again with this Ren"
            )
    return decoded


def decoded_kernel(kernel: dict[str, Any], path: str | os.PathLike[str]) -> tuple[Node, KernelInfo]:
    """One kernel of a plan file (``data["kernels"][i]``): its body and info, decoded and checked.

    Raises:
        PlanFileError: a malformed body, or an info that is not a ``KernelInfo``.
        RenError: a device that is not available here.
    """
    ast, info = decode_body(kernel["body"]), decode(kernel["info"])
    if not isinstance(info, KernelInfo):
        raise PlanFileError(f"a kernel's info in {path} is not a KernelInfo")
    check_device(info.device, path)
    return ast, info


def check_device(device: str, path: str | os.PathLike[str], what: str = "") -> None:
    """Refuse a plan whose kernels run on a device this process cannot use.

    ``what`` says what was asked of the device (default: ``runs kernels on``).

    Raises:
        RenError: naming the device and why it is not available.
    """
    try:
        backend(device)
    except (RenError, ImportError, ValueError) as e:
        did = what or "runs kernels on"
        raise RenError(
            f"{path} {did} device {device!r}, which is not available here: {e}"
        ) from None
