r"""``to_dot``: a graph as Graphviz DOT text, stable byte for byte.

One node statement per graph node (a shared subgraph is drawn once), named ``n0, n1, ...`` in
``toposort`` order, and one edge from each source to its user, labelled with the source's position
when the user has more than one source. Data flows upward (``rankdir=BT``): buffers and constants
at the bottom, the root at the top. Each label reads::

    ADD                 the op
    n=8 L=2 ntt         ring degree, number of moduli, domain (from ``facts``, when it has them)
    n=8 q=(17, 97) ...  the argument, cut to 40 characters; buffers are b0, b1, ... as in str(node)

Fill colours follow the op groups of ``ren/ir/op.py`` (front end, storage, scheduling, kernel,
anything else); nodes in ``created`` get a thick red border. Nothing depends on ``id()`` or set
order, so the same program built twice gives the same bytes. Labels are DOT quoted strings (not
HTML labels), where only ``"`` and ``\`` are special: ``<`` and ``>`` are literal there, and
``shape=box`` (not ``record``) keeps ``{ | }`` literal too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ren.ir import op as ops
from ren.ir.facts import Facts, facts
from ren.ir.node import Node, fmt_arg, toposort

__all__ = ["GROUP_COLORS", "part_to_dot", "to_dot"]

#: fill colour per op group, in the order the groups appear in ``op.py``; the last is the fallback.
GROUP_COLORS: tuple[tuple[str, frozenset[ops.Op] | None, str], ...] = (
    ("front end", ops.FRONTEND, "#ffe0b2"),  # orange
    ("storage", ops.STORAGE, "#c8e6c9"),  # green
    ("scheduling", ops.SCHEDULING, "#bbdefb"),  # blue
    ("kernel", ops.KERNEL, "#e1bee7"),  # purple
    ("other", None, "#eeeeee"),  # grey: an op in no group yet
)

_ARG_WIDTH = 40
_CREATED = 'color="#d32f2f", penwidth=3, style="filled,bold"'


def _color(op: ops.Op) -> str:
    for _, group, color in GROUP_COLORS:
        if group is None or op in group:
            return color
    raise AssertionError("unreachable: the last group is the fallback")


def _quote(text: str) -> str:
    """``text`` as a DOT quoted string; a newline in ``text`` becomes a centred line break."""
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n") + '"'


def _facts_or_none(node: Node) -> Facts | None:
    # A dump is most wanted when a pass left a broken graph, so a node whose facts cannot be
    # derived is drawn without them instead of failing the dump.
    try:
        return facts(node)
    except Exception:
        return None


def _label(node: Node, buffers: dict[int, str]) -> str:
    lines = [node.op.name]
    f = _facts_or_none(node)
    if f is not None and (f.ring is not None or f.domain is not None):
        ring = [] if f.ring is None else [f"n={f.ring.n}", f"L={len(f.ring.moduli)}"]
        domain = [] if f.domain is None else [f.domain.value]
        lines.append(" ".join(ring + domain))
    arg = fmt_arg(node, buffers).strip()  # "b0 python 16 words" for buffers, else repr(arg)
    if arg:
        lines.append(arg if len(arg) <= _ARG_WIDTH else arg[: _ARG_WIDTH - 3] + "...")
    return "\n".join(lines)


def to_dot(root: Node, created: Iterable[Node] = frozenset(), title: str = "") -> str:
    """DOT text of the graph below ``root``; nodes in ``created`` are drawn with a thick border.

    Args:
        root: the graph's root (usually a ``SINK``).
        created: nodes to highlight, typically the ones a pass made (nodes outside the graph are
            ignored).
        title: a label drawn at the top of the picture; none when empty.

    Returns:
        The text of a ``digraph``, ending in a newline; identical for identical graphs.
    """
    return _dot(toposort(root), frozenset(created), title, frozenset())


def part_to_dot(nodes: Sequence[Node], title: str = "") -> str:
    """DOT text of some nodes of a graph (a region's), sources before users as ``toposort`` gives.

    Each source from outside them is drawn as a white node with a dashed border: where a value
    comes in.
    """
    inside = frozenset(nodes)
    outside: dict[Node, None] = {}
    for n in nodes:
        for s in n.src:
            if s not in inside:
                outside[s] = None
    return _dot([*outside, *nodes], frozenset(), title, frozenset(outside))


def _dot(order: list[Node], created: frozenset[Node], title: str, outside: frozenset[Node]) -> str:
    name = {node: f"n{i}" for i, node in enumerate(order)}
    buffers: dict[int, str] = {}
    lines = ["digraph ren {", "  rankdir=BT;"]
    if title:
        lines.append(f"  label={_quote(title)}; labelloc=t;")
    lines.append("  node [shape=box, style=filled, fontsize=10];")
    lines.append("  edge [fontsize=8];")
    for node in order:
        label = _quote(_label(node, buffers))
        if node in outside:
            lines.append(f'  {name[node]} [label={label}, fillcolor="#ffffff", style=dashed];')
            continue
        attrs = f"label={label}, fillcolor={_quote(_color(node.op))}"
        if node in created:
            attrs += ", " + _CREATED
        lines.append(f"  {name[node]} [{attrs}];")
    for node in order:
        if node in outside:
            continue
        many = len(node.src) > 1
        for i, s in enumerate(node.src):
            position = f' [label="{i}"]' if many else ""
            lines.append(f"  {name[s]} -> {name[node]}{position};")
    lines.append("}")
    return "\n".join(lines) + "\n"
