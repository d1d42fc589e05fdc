"""The report's regions: a realization's kernels grouped by ``ren.region``, drawn as nested boxes.

``region_tree`` groups the kernels of a realization by region *instance* (two multiplies are two
boxes) into a tree of :class:`Box`: each box knows its kernels, their time, the bytes they write,
the key bytes they read and what the code that entered the region noted (CKKS: level and scale in
and out; the report's observing pass adds the precision of its output). Inside a box with
sub-regions, a run of kernels in none of them is a box of its own (``3 kernels``), so every
kernel is in exactly one leaf.

``ren.viz.report.boxes`` draws the tree.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from typing import TypedDict, cast

from ren.engine.schedule import ScheduledKernel
from ren.ir.dot import part_to_dot
from ren.ir.node import Node, toposort
from ren.ir.region import instances_of, region_of
from ren.viz.report.blocks import plural
from ren.viz.trace import RealizationRecord

__all__ = ["Box", "RegionNotes", "graph_dot", "realization_tree", "region_tree"]


class RegionNotes(TypedDict, total=False):
    """What code noted of a region instance (``ren.ir.region.note``) that the report reads.

    Code may note other names too; these are the ones the report shows.
    """

    level_in: int
    level_out: int
    scale_in: float
    scale_out: float
    bits: float  # the observing pass (ren.viz.precision): absolute, vs the plaintext shadow
    bits_relative: float
    magnitude: float
    warning: str
    noise_budget: int  # BFV and BGV, in bits
    bits_predicted: float  # the noise model's figure for ``bits`` (nothing run)
    noise_budget_predicted: float  # and for ``noise_budget``
    key_switching: str  # the technique (ren.schemes.rlwe.keyswitch)
    digits: int
    output: object  # the region's output value, kept under ren.ir.region.keeping


@dataclasses.dataclass(eq=False)
class Box:
    """One region instance of a realization (or a run of kernels in no sub-region).

    Attributes:
        name: the region's name; for a run of kernels in no sub-region, ``"3 kernels"``.
        path: the region path (the parent's for a run).
        rank: its order of first appearance in the realization (its anchor: ``g{rank}``).
        notes: what the code inside noted (``ren.ir.region.note``): ``level_in``, ``scale_in``,
            ``level_out``, ``scale_out``, ``bits`` (the report's observing pass), ``output``.
        kernels: the indices of every kernel inside, in execution order.
        children: its sub-regions and runs, by first kernel.
        loose: whether it is a run of kernels in no sub-region.
        seconds: the kernels' time (``None`` when none ran).
        bytes: the bytes its kernels write.
        key_bytes: the bytes of key-switching keys its kernels read (see ``region_tree``).
        nodes: the nodes of the realization's lazy graph made in it.
        sources: the indices, among its parent's children, of the boxes it reads from.
        row: its row among its parent's children (one below the lowest row it reads from).
        serial: its instance's serial (``ren.ir.region.Instance``; ``None`` for a run).
    """

    name: str
    path: tuple[str, ...]
    rank: int
    notes: RegionNotes
    kernels: list[int] = dataclasses.field(default_factory=list)
    children: list[Box] = dataclasses.field(default_factory=list)
    loose: bool = False
    seconds: float | None = None
    bytes: int = 0
    key_bytes: int = 0
    nodes: list[Node] = dataclasses.field(default_factory=list)
    sources: list[int] = dataclasses.field(default_factory=list)
    row: int = 0
    serial: int | None = None

    def walk(self) -> Iterable[Box]:
        """This box and every box inside it, depth first."""
        stack = [self]
        while stack:
            box = stack.pop()
            yield box
            stack.extend(reversed(box.children))


def region_tree(
    kernels: Sequence[ScheduledKernel],
    seconds: Sequence[float | None] = (),
    graph: Node | None = None,
) -> Box:
    """The kernels of a realization grouped by region instance: the root box holds them all.

    Args:
        kernels: the scheduled kernels, in execution order.
        seconds: each kernel's time (its exec unit's), where it ran.
        graph: the lazy graph, whose nodes each box lists (``Box.nodes``).

    The key bytes of a box are the bytes of the buffers that kernels of a ``products`` region
    (a key switch's products with its keys) read and no kernel of the realization writes: the
    key-switching keys.
    """
    root = Box("", (), 0, {})
    boxes: dict[int, Box] = {}
    own: dict[int, list[int]] = {id(root): []}
    for k, kernel in enumerate(kernels):
        box = root
        box.kernels.append(k)
        for instance in instances_of(kernel.region):
            child = boxes.get(instance.serial)
            if child is None:
                child = Box(instance.name, (*box.path, instance.name), len(boxes) + 1, {})
                child.notes = cast(RegionNotes, instance.notes)  # the same dict, typed by name
                child.serial = instance.serial
                boxes[instance.serial] = child
                box.children.append(child)
                own[id(child)] = []
            child.kernels.append(k)
            box = child
        own[id(box)].append(k)
    if graph is not None:
        _place_nodes(graph, boxes)
    _add_runs(root, own, len(boxes) + 1)
    _measure(root, kernels, seconds)
    _layout(root, kernels)
    return root


def realization_tree(
    rec: RealizationRecord, kernels: Sequence[ScheduledKernel], graph: Node | None = None
) -> Box | None:
    """``region_tree`` of ``rec``'s ``kernels`` (``None`` when no kernel is in a region).

    Each kernel is timed by its exec unit where the realization ran one unit a kernel.
    """
    if not any(k.region for k in kernels):
        return None
    seconds = [u.seconds for u in rec.units] if len(rec.units) == len(kernels) else []
    return region_tree(kernels, seconds, graph)


def _place_nodes(graph: Node, boxes: dict[int, Box]) -> None:
    """List each node of the lazy graph in the boxes of its region path.

    A node interned from an earlier program (a constant) keeps that program's region, whose
    instances this realization does not have: it is placed with its first user here, so the same
    program gives the same boxes however often it ran.
    """
    order = toposort(graph)
    home: dict[Node, tuple[Box, ...]] = {}
    for node in order:
        path = tuple(boxes[i.serial] for i in instances_of(region_of(node)) if i.serial in boxes)
        if path or not region_of(node):
            home[node] = path
    for node in reversed(order):  # users first: a stray node joins its first user's boxes
        for s in node.src:
            if s not in home:
                home[s] = home.get(node, ())
    for node in order:
        for box in home.get(node, ()):
            box.nodes.append(node)


def _add_runs(root: Box, own: dict[int, list[int]], rank: int) -> None:
    """Give every box with sub-regions a box per run of kernels in none of them."""
    for box in list(root.walk()):
        if not box.children or not own[id(box)]:
            continue
        mine = set(own[id(box)])
        parts: list[Box] = []
        run: list[int] = []
        for k in [*box.kernels, -1]:
            if k in mine:
                run.append(k)
                continue
            if run:
                parts.append(Box(plural(len(run), "kernel"), box.path, rank, {}, run, loose=True))
                rank += 1
                run = []
        box.children = sorted(box.children + parts, key=lambda b: b.kernels[0])


def _measure(
    root: Box, kernels: Sequence[ScheduledKernel], seconds: Sequence[float | None]
) -> None:
    written = {id(k.bufs[0]) for k in kernels if k.bufs}
    keys: dict[int, int] = {}  # kernel -> key bytes it reads (in a products region)
    for k, kernel in enumerate(kernels):
        if "products" in kernel.region:
            reads = {id(b): b.nbytes for b in kernel.bufs[1:] if id(b) not in written}
            keys[k] = sum(reads.values())
    for box in root.walk():
        times = [seconds[k] for k in box.kernels if k < len(seconds) and seconds[k] is not None]
        box.seconds = math.fsum(t for t in times if t is not None) if times else None
        box.bytes = sum(kernels[k].bufs[0].nbytes for k in box.kernels if kernels[k].bufs)
        box.key_bytes = sum(keys.get(k, 0) for k in box.kernels)


def _layout(root: Box, kernels: Sequence[ScheduledKernel]) -> None:
    """Each box's sources among its siblings and its row (one below the lowest it reads from)."""
    writer: dict[int, int] = {}
    deps: list[tuple[int, int]] = []
    for j, kernel in enumerate(kernels):
        for b in kernel.bufs[1:]:
            if id(b) in writer:
                deps.append((writer[id(b)], j))
        if kernel.bufs:
            writer[id(kernel.bufs[0])] = j
    for box in root.walk():
        if not box.children:
            continue
        part = {k: c for c, child in enumerate(box.children) for k in child.kernels}
        sources: dict[int, set[int]] = {}
        for i, j in deps:
            src, dst = part.get(i), part.get(j)
            if src is not None and dst is not None and src < dst:  # children by first kernel
                sources.setdefault(dst, set()).add(src)
        for c, child in enumerate(box.children):
            child.sources = sorted(sources.get(c, ()))
            child.row = max((box.children[a].row + 1 for a in child.sources), default=0)


def graph_dot(box: Box) -> str:
    """The DOT text of a box's nodes, with where their inputs come from."""
    return part_to_dot(box.nodes) if box.nodes else ""
