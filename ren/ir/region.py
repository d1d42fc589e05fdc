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

Each entry into a ``with ren.region(name):`` block is an *instance* (:class:`Instance`): two
multiplies in one program share the path ``multiply`` but not the instance, so the report can draw
them as two boxes. A path is a :class:`RegionPath`: a tuple of names (it compares and hashes as
one) that also holds the instance of each name. An instance carries *notes*: what the code that
entered it says about it (``note(level_in=5)``; CKKS notes levels and scales), read by the report.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
from collections.abc import Callable, Iterator
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

if TYPE_CHECKING:
    from ren.ir.node import Node

__all__ = [
    "Instance",
    "Numbering",
    "RegionPath",
    "current_region",
    "in_region",
    "instances_of",
    "is_keeping",
    "keeping",
    "note",
    "noted",
    "ranks_in",
    "region",
    "region_name",
    "region_of",
]

P = ParamSpec("P")
R = TypeVar("R")

_SERIALS = itertools.count()  # next() on it is atomic: threads never share a serial


class Instance:
    """One entry into a region: a ``with ren.region(name):`` block as it ran.

    ``serial`` tells instances apart (distinct in a process); ``notes`` is what the code inside
    said about it with :func:`note`. Pickling keeps the name and serial and drops the notes (they
    may hold values of a program: nothing of one leaves with a saved schedule).
    """

    __slots__ = ("name", "notes", "serial")

    def __init__(self, name: str, serial: int | None = None) -> None:
        self.name = name
        self.serial = next(_SERIALS) if serial is None else serial
        # Any: notes are whatever code says of a region (levels, scales, a kept output value),
        # and the report reads each by its name
        self.notes: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"Instance({self.name!r}, {self.serial})"

    def __reduce__(self) -> tuple[type[Instance], tuple[str, int]]:
        return (Instance, (self.name, self.serial))


class RegionPath(tuple[str, ...]):
    """A region path: the tuple of names, with the :class:`Instance` of each (``.instances``).

    It is equal to, and hashes as, the plain tuple of its names, so code that compares paths
    compares names; ``.instances`` tells two entries of one path apart.
    """

    instances: tuple[Instance, ...]

    def __new__(cls, instances: tuple[Instance, ...]) -> RegionPath:  # noqa: D102
        path = super().__new__(cls, tuple(i.name for i in instances))
        path.instances = tuple(instances)
        return path

    def __reduce__(self) -> tuple[type[RegionPath], tuple[tuple[Instance, ...]]]:
        return (RegionPath, (self.instances,))


_PATH: ContextVar[tuple[str, ...]] = ContextVar("ren_region", default=())


@contextlib.contextmanager
def region(name: str) -> Iterator[RegionPath]:
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
    path = RegionPath((*instances_of(_PATH.get()), Instance(name)))
    token = _PATH.set(path)
    try:
        yield path
    finally:
        _PATH.reset(token)


def current_region() -> tuple[str, ...]:
    """The path of the innermost active region of this thread (``()`` outside every region)."""
    return _PATH.get()


def region_of(node: Node) -> tuple[str, ...]:
    """The region path ``node`` was first made in (``()``: none)."""
    path: tuple[str, ...] = node.__dict__.get("_region", ())
    return path


def instances_of(path: tuple[str, ...]) -> tuple[Instance, ...]:
    """The instance of each name of ``path`` (new ones for a plain tuple of names)."""
    if isinstance(path, RegionPath):
        return path.instances
    return tuple(Instance(name) for name in path)


def note(**values: object) -> None:
    """Say something about the innermost active region's instance (nothing outside every one).

    CKKS notes each operation's level and scale, in and out; the report shows them.
    """
    path = _PATH.get()
    if isinstance(path, RegionPath) and path.instances:
        path.instances[-1].notes.update(values)


KEEP: ContextVar[bool] = ContextVar("ren_region_keep", default=False)


@contextlib.contextmanager
def keeping() -> Iterator[None]:
    """Inside: regions entered with :func:`in_region` keep their output value in their notes.

    ``ren.viz.record()`` keeps them, so that the report can decrypt each region's output after the
    program (a separate realization: the recorded schedule is not changed). Outside, no value is
    kept, and a region's instance holds only names and small notes.
    """
    token = KEEP.set(True)
    try:
        yield
    finally:
        KEEP.reset(token)


def is_keeping() -> bool:
    """Whether this thread keeps region outputs (:func:`keeping`)."""
    return KEEP.get()


def _notes_of(value: object, side: str) -> dict[str, object]:
    """What ``value`` says of itself as a region's input (``side="in"``) or output."""
    describe = getattr(type(value), "__ren_region_notes__", None)
    return describe(value, side) if describe is not None else {}


def noted(side: str, value: object) -> bool:
    """Note what ``value`` says of itself as the innermost region's input or output.

    ``side`` is ``"in"`` or ``"out"``. A value whose type defines ``__ren_region_notes__(self,
    side)`` (CKKS ciphertexts: level and scale) is noted, and under :func:`keeping` an output is
    kept as ``output``. Returns whether ``value`` said anything.
    """
    got = _notes_of(value, side)
    if got:
        note(**got)
        if side == "out" and KEEP.get():
            note(output=value)
    return bool(got)


def in_region(name: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate an operation: it builds its graph inside ``region(name)`` (in the caller's).

    Its instance notes what the first argument and the result say of themselves: a value whose
    type defines ``__ren_region_notes__(self, side)`` (CKKS ciphertexts: level and scale) gives
    ``level_in``/``scale_in`` and ``level_out``/``scale_out``; under :func:`keeping` the result
    itself is kept as ``output``.
    """

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            with region(name):
                out = fn(*args, **kwargs)
                for value in args[:2]:  # a method's self, then its first argument
                    if noted("in", value):
                        break
                noted("out", out)
            return out

        return run

    return decorate


class Numbering:
    """Region instances numbered by first appearance: how the schedule cache keys regions.

    ``key(path)`` is the path's names with the number of each of its instances. Two programs
    whose regions have the same names but other instances (one ``multiply`` block building two
    products, or two blocks building one each) get different keys; the same program built again
    gets the same key. ``instances`` lists them in that order.
    """

    def __init__(self) -> None:
        self.rank: dict[int, int] = {}
        self.instances: list[Instance] = []

    def key(self, path: tuple[str, ...]) -> tuple[()] | tuple[tuple[str, ...], tuple[int, ...]]:
        """``(names, numbers)`` of ``path``; ``()`` for no region."""
        if not path:
            return ()
        order = []
        for instance in instances_of(path):
            rank = self.rank.setdefault(instance.serial, len(self.rank))
            if rank == len(self.instances):
                self.instances.append(instance)
            order.append(rank)
        return (tuple(path), tuple(order))


def ranks_in(path: tuple[str, ...], rank: dict[int, int]) -> tuple[int, ...] | None:
    """What ``rank`` (serial -> number) gives ``path``'s instances; ``None`` if one is not in it."""
    found = [rank.get(i.serial) for i in instances_of(path)]
    return None if None in found else tuple(r for r in found if r is not None)


def region_name(path: tuple[str, ...]) -> str:
    """A path as text: ``multiply/relinearize`` (``""`` for no region)."""
    return "/".join(path)


def tag(node: Node) -> None:
    """Give a new node the current region's path (nothing outside every region)."""
    path = _PATH.get()
    if path:
        node.__dict__["_region"] = path


def within(node: Node) -> contextlib.AbstractContextManager[None]:
    """A block that builds in ``node``'s region (a pass's replacement of ``node``)."""
    path = region_of(node)
    return inside(path) if path else contextlib.nullcontext()


def enter(path: tuple[str, ...]) -> Token[tuple[str, ...]]:
    """Make ``path`` the current region until ``leave(token)`` (a hot loop's ``inside``)."""
    return _PATH.set(path)


def leave(token: Token[tuple[str, ...]]) -> None:
    """Undo the :func:`enter` that returned ``token``."""
    _PATH.reset(token)


@contextlib.contextmanager
def inside(path: tuple[str, ...]) -> Iterator[None]:
    """Make ``path`` the current region (the rewriter builds a replacement in its node's region)."""
    token = _PATH.set(path)
    try:
        yield
    finally:
        _PATH.reset(token)
