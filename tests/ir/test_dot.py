"""``to_dot``: golden DOT text, stable bytes, highlighting, escaping, colours, deep graphs."""

import shutil
import subprocess
import textwrap
from dataclasses import dataclass

import pytest

from ren.ir import DType, Node, Op
from ren.ir import dot as dotmod
from ren.ir.dot import to_dot
from ren.poly import Poly
from ren.ring import RingSpec

RING = RingSpec(8, (17, 97))


def program() -> Poly:
    a = Poly([1, 2, 3, 4, 5, 6, 7, 8], RING)
    b = Poly([8, 7, 6, 5, 4, 3, 2, 1], RING)
    return (a + b) * (a - 1)


# Worked out by hand from the rules in ren/ir/dot.py: toposort puts a's buffer and AS_RING first
# (n0, n1), then b's (n2, n3), then ADD; then SUB's constant 1 (n5, n6), SUB, and MUL last. `a`'s
# AS_RING is shared by ADD and SUB, so it is drawn once (n1) with two out-edges. Front-end ops are
# orange, storage green; AS_RING states its ring, MUL of two non-constants is in NTT form.
GOLDEN = textwrap.dedent(
    """\
    digraph ren {
      rankdir=BT;
      node [shape=box, style=filled, fontsize=10];
      edge [fontsize=8];
      n0 [label="BUFFER\\nb0 python 16 words", fillcolor="#c8e6c9"];
      n1 [label="AS_RING\\nn=8 L=2 coeff\\nn=8 q=(17, 97) coeff", fillcolor="#c8e6c9"];
      n2 [label="BUFFER\\nb1 python 16 words", fillcolor="#c8e6c9"];
      n3 [label="AS_RING\\nn=8 L=2 coeff\\nn=8 q=(17, 97) coeff", fillcolor="#c8e6c9"];
      n4 [label="ADD\\nn=8 L=2 coeff", fillcolor="#ffe0b2"];
      n5 [label="CONST\\n1 python", fillcolor="#ffe0b2"];
      n6 [label="AS_RING\\nn=8 L=2 coeff\\nn=8 q=(17, 97) coeff", fillcolor="#c8e6c9"];
      n7 [label="SUB\\nn=8 L=2 coeff", fillcolor="#ffe0b2"];
      n8 [label="MUL\\nn=8 L=2 ntt", fillcolor="#ffe0b2"];
      n0 -> n1;
      n2 -> n3;
      n1 -> n4 [label="0"];
      n3 -> n4 [label="1"];
      n5 -> n6;
      n1 -> n7 [label="0"];
      n6 -> n7 [label="1"];
      n4 -> n8 [label="0"];
      n7 -> n8 [label="1"];
    }
    """
)


def test_golden_dot_text():
    assert to_dot(program().node) == GOLDEN


def test_same_program_built_twice_gives_the_same_bytes():
    p, q = program(), program()
    assert p.node is not q.node  # new buffers, so new nodes with other ids
    assert to_dot(p.node, title="x").encode() == to_dot(q.node, title="x").encode()


def test_title_is_a_graph_label():
    text = to_dot(program().node, title='pass "one"')
    assert text.splitlines()[2] == '  label="pass \\"one\\""; labelloc=t;'
    assert "labelloc" not in to_dot(program().node)


def test_created_nodes_are_highlighted():
    a = Poly([1] * 8, RING)
    before = a + a
    after = before * 3
    new = {after.node, after.node.src[1], after.node.src[1].src[0]}  # MUL, AS_RING, CONST
    lines = to_dot(after.node, created=new).splitlines()
    bold = [line.split(" [")[0].strip() for line in lines if "penwidth=3" in line]
    assert bold == ["n3", "n4", "n5"]  # BUFFER n0, AS_RING n1, ADD n2 are old
    assert 'n5 [label="MUL\\nn=8 L=2 coeff", fillcolor="#ffe0b2", color="#d32f2f"' in "\n".join(
        lines
    )
    # a node outside the graph is ignored
    assert to_dot(before.node, created=new) == to_dot(before.node)


@dataclass(frozen=True)
class Awkward:
    text: str

    def __repr__(self) -> str:
        return self.text


AWKWARD = 'say "hi" <b> \\n & {x|y}'


def test_special_characters_are_escaped():
    leaf = Node(Op.SLOT, DType.INDEX, (), Awkward(AWKWARD))  # a leaf with no facts
    line = to_dot(leaf).splitlines()[4]
    assert line == '  n0 [label="SLOT\\nsay \\"hi\\" <b> \\\\n & {x|y}", fillcolor="#e1bee7"];'


def test_a_newline_in_an_arg_is_a_line_break_and_long_args_are_cut():
    leaf = Node(Op.SLOT, DType.INDEX, (), Awkward("one\ntwo"))
    assert 'label="SLOT\\none\\ntwo"' in to_dot(leaf)
    long = Node(Op.SLOT, DType.INDEX, (), Awkward("x" * 100))
    assert f'label="SLOT\\n{"x" * 37}..."' in to_dot(long)


def test_a_node_whose_facts_fail_is_drawn_without_them():
    # CONST's facts read arg.device; a broken graph from a buggy pass must still dump
    bad = Node(Op.NEG, DType.U32, (Node(Op.CONST, DType.U32, (), Awkward("no device")),))
    assert 'label="CONST\\nno device"' in to_dot(bad)
    assert 'label="NEG"' in to_dot(bad)


@pytest.mark.graphviz
def test_dot_reads_the_escaped_text_back():
    leaf = Node(Op.SLOT, DType.INDEX, (), Awkward(AWKWARD))
    svg = subprocess.run(
        [shutil.which("dot"), "-Tsvg"],
        input=to_dot(leaf, title="<t>"),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert "say &quot;hi&quot; &lt;b&gt; \\n &amp; {x|y}" in svg
    assert "&lt;t&gt;" in svg


def test_colours_follow_op_groups_with_a_fallback(monkeypatch):
    assert dotmod._color(Op.ADD) == "#ffe0b2"
    assert dotmod._color(Op.BUFFER) == "#c8e6c9"
    assert dotmod._color(Op.SINK) == "#bbdefb"
    assert dotmod._color(Op.LOAD) == "#e1bee7"
    # an op in no group (as a new op is until it is filed) gets the grey fallback
    no_kernel = tuple(g for g in dotmod.GROUP_COLORS if g[0] != "kernel")
    monkeypatch.setattr(dotmod, "GROUP_COLORS", no_kernel)
    assert dotmod._color(Op.LOAD) == "#eeeeee"


def test_deep_graphs_need_no_recursion():
    x = Poly([1] * 8, RING).node
    for _ in range(20000):
        x = Node(Op.NEG, DType.U32, (x,))
    lines = to_dot(x).splitlines()
    assert sum(" [label=" in line for line in lines) == 20002
    assert sum(" -> " in line for line in lines) == 20001
    assert lines[-2] == "  n20000 -> n20001;"
