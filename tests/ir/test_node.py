"""Node interning, identity, weak freeing, iterative toposort, and stable printing."""

import gc
import textwrap
import threading
import weakref

import pytest

from ren.ir import BufferArg, ConstArg, DType, Node, Op, RingArg, toposort
from ren.ir.node import live_nodes
from ren.poly import Poly
from ren.ring import Domain, RingSpec

RING = RingSpec(8, (17, 97))


def const(v: int) -> Node:
    return Node(Op.CONST, DType.U32, (), ConstArg(v, "python"))


def test_structurally_equal_nodes_are_the_same_object():
    a = Node(Op.NEG, DType.U32, (const(3),))
    b = Node(Op.NEG, DType.U32, (const(3),))
    assert a is b
    assert Node(Op.NEG, DType.U32, (const(4),)) is not a
    assert a.replace(src=(const(3),)) is a
    assert a.replace(op=Op.NTT) is Node(Op.NTT, DType.U32, (const(3),))


def test_args_compare_by_value_but_buffers_by_identity():
    p, q = Poly([1] * 8, RING), Poly([1] * 8, RING)  # same data, different buffers
    assert p.node is not q.node
    assert p.node.src[0].arg != q.node.src[0].arg
    assert RingArg(RING, Domain.COEFF) == RingArg(RingSpec(8, (17, 97)), Domain.COEFF)


def test_unhashable_arg_is_a_clear_error():
    with pytest.raises(TypeError, match="not hashable"):
        Node(Op.CONST, DType.U32, (), [1, 2])


def test_bad_fields_are_rejected():
    with pytest.raises(TypeError, match="op must be an Op"):
        Node("add", DType.U32, ())
    with pytest.raises(TypeError, match="dtype must be a DType"):
        Node(Op.ADD, "u32", ())
    with pytest.raises(TypeError, match="is not a Node"):
        Node(Op.NEG, DType.U32, (3,))


def test_nodes_are_frozen():
    n = const(1)
    with pytest.raises(AttributeError):
        n.op = Op.ADD


def test_the_cache_is_weak():
    """The intern table holds no node alive: each dies with its last user's reference.

    Watched through weak references to the nodes made here (a count of every live node would
    also see other tests' nodes dying meanwhile, in a worker shared with them)."""
    x = const(123456789)
    made = [weakref.ref(x)]
    for _ in range(50):
        x = Node(Op.NEG, DType.U32, (x,))
        made.append(weakref.ref(x))
    assert live_nodes() >= 51
    del x
    gc.collect()
    assert all(r() is None for r in made)


def test_a_node_made_again_after_it_died_is_cached_again():
    x = Node(Op.NEG, DType.U32, (const(424242),))
    gone = weakref.ref(x)
    del x
    gc.collect()
    assert gone() is None
    y = Node(Op.NEG, DType.U32, (const(424242),))
    assert Node(Op.NEG, DType.U32, (const(424242),)) is y
    assert Node(Op.NEG, DType.U32, (const(424243),)) is not y


def test_threads_making_the_same_nodes_get_one_object_each():
    barrier = threading.Barrier(8)
    chains: list[list[Node]] = []

    def build() -> None:
        barrier.wait()
        x, made = const(777), []
        for k in range(300):
            x = Node(Op.ADD, DType.U32, (x, const(k)))
            made.append(x)
        chains.append(made)

    threads = [threading.Thread(target=build) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(chains) == 8
    assert all(a is b for chain in chains[1:] for a, b in zip(chains[0], chain, strict=True))


def test_toposort_puts_sources_first_and_visits_shared_nodes_once():
    a = const(1)
    b = Node(Op.NEG, DType.U32, (a,))
    c = Node(Op.ADD, DType.U32, (a, b))
    order = toposort(c)
    assert order == [a, b, c]
    for i, n in enumerate(order):
        assert all(order.index(s) < i for s in n.src)


def test_deep_graphs_need_no_recursion():
    x = const(7)
    for _ in range(20000):
        x = Node(Op.NEG, DType.U32, (x,))
    assert len(toposort(x)) == 20001
    assert len(str(x).splitlines()) == 20001


def test_printing_is_golden_and_stable():
    a = Poly([1, 2, 3, 4, 5, 6, 7, 8], RING)
    b = Poly([8, 7, 6, 5, 4, 3, 2, 1], RING)
    expr = (a + b) * (a - 1)
    expected = textwrap.dedent(
        """\
        MUL u32
          ADD u32
            [0] AS_RING u32 n=8 q=(17, 97) coeff
              BUFFER u32 b0 python 16 words
            AS_RING u32 n=8 q=(17, 97) coeff
              BUFFER u32 b1 python 16 words
          SUB u32
            ^0 AS_RING
            AS_RING u32 n=8 q=(17, 97) coeff
              CONST u32 1 python"""
    )
    assert str(expr.node) == expected
    # the same program built again (new buffers, new ids) prints the same bytes
    a2 = Poly([1, 2, 3, 4, 5, 6, 7, 8], RING)
    b2 = Poly([8, 7, 6, 5, 4, 3, 2, 1], RING)
    assert str(((a2 + b2) * (a2 - 1)).node) == expected


def test_repr_is_one_line():
    n = Node(Op.BUFFER, DType.U32, (), BufferArg(Poly([0] * 8, RING).node.src[0].arg.buffer))
    assert "\n" not in repr(n) and "BUFFER" in repr(n)
