"""Regions: names for the parts of a program, carried by its nodes into its kernels.

``with ren.region("relinearize"):`` names what the block builds. Regions nest: inside
``with ren.region("multiply"):`` a ``with ren.region("relinearize"):`` block builds nodes of the
region path ``("multiply", "relinearize")``, printed ``multiply/relinearize``. The path is held per
thread (and per asyncio task) in a context variable, as ``ren.settings.override`` holds settings.

Each node made while a region is active takes that region's path, once: nodes are interned, so a
node first made in one region keeps that region wherever it is made again (the ModUp that several
rotations share belongs to the first rotation that made it). A pass that rewrites a node builds
its replacement in the node's region (``graph_rewrite`` runs the rule inside it), so every kernel
of a schedule knows the region of the value it computes (``ScheduledKernel.region``): the report,
the text report and the debugger print it beside the kernel's name. Regions are part of the
schedule cache's key, so a cached schedule never reports the regions of another program.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

__all__ = ["current_region", "region", "region_name", "region_of"]

_PATH: ContextVar[tuple[str, ...]] = ContextVar("ren_region", default=())


@contextlib.contextmanager
def region(name: str) -> Iterator[tuple[str, ...]]:
    """Name the nodes built inside the block ``name`` (nested: the path of the enclosing names).

    Yields the region's path. The name is any non-empty text without ``/`` (the separator of a
    printed path).

    Raises:
        TypeError: a name that is not a ``str``.
        ValueError: an empty name or one holding ``/``.
    """
    if not isinstance(name, str):
        raise TypeError(f"a region name must be a str, got {type(name).__name__} {name!r}")
    if not name.strip() or "/" in name:
        raise ValueError(f"a region name must be non-empty text without '/', got {name!r}")
    path = (*_PATH.get(), name)
    token = _PATH.set(path)
    try:
        yield path
    finally:
        _PATH.reset(token)


def current_region() -> tuple[str, ...]:
    """The path of the innermost active region of this thread (``()`` outside every region)."""
    return _PATH.get()


def region_of(node: Any) -> tuple[str, ...]:
    """The region path ``node`` was first made in (``()``: none)."""
    return node.__dict__.get("_region", ())


def region_name(path: tuple[str, ...]) -> str:
    """A path as text: ``multiply/relinearize`` (``""`` for no region)."""
    return "/".join(path)


def tag(node: Any) -> None:
    """Give a new node the current region's path (nothing outside every region)."""
    path = _PATH.get()
    if path:
        node.__dict__["_region"] = path


def within(node: Any) -> contextlib.AbstractContextManager[Any]:
    """A block that builds in ``node``'s region (a pass's replacement of ``node``)."""
    path = region_of(node)
    return inside(path) if path else contextlib.nullcontext()


@contextlib.contextmanager
def inside(path: tuple[str, ...]) -> Iterator[None]:
    """Make ``path`` the current region (the rewriter builds a replacement in its node's region)."""
    token = _PATH.set(path)
    try:
        yield
    finally:
        _PATH.reset(token)
