"""The pattern/rewrite engine: matching, bottom-up fixed points, records, and loop errors.

Oracle: the reference evaluator gives the graph the same value before and after a value-preserving
rule set, and the result has no place where a rule still matches.
"""

import pytest

from ren.ir import (
    ConstArg,
    DType,
    Node,
    Op,
    Pat,
    Rewrite,
    RewriteLoopError,
    Rules,
    graph_rewrite,
    toposort,
)
from ren.poly import Poly
from ren.reference import evaluate
from ren.ring import RingSpec

RING = RingSpec(8, (17, 97))
U = DType.U32


def c(v: int) -> Node:
    return Node(Op.CONST, U, (), ConstArg(v, "python"))


# ntt(intt(x)) -> x ; intt(ntt(x)) -> x ; -(-x) -> x
ROUND_TRIPS = Rules(
    [
        (Pat(Op.NTT, src=(Pat(Op.INTT, src=(Pat.var("x"),)),)), lambda x: x),  # ntt(intt(x)) -> x
        (Pat(Op.INTT, src=(Pat(Op.NTT, src=(Pat.var("x"),)),)), lambda x: x),  # intt(ntt(x)) -> x
        (Pat(Op.NEG, src=(Pat(Op.NEG, src=(Pat.var("x"),)),)), lambda x: x, "double_negation"),
    ]
)


def matches_anywhere(root: Node, rules: Rules) -> bool:
    return any(rules.rewrite_once(n) is not None for n in toposort(root))


def test_pattern_matching_and_captures():
    x = Node(Op.ADD, U, (c(1), c(2)))
    caps: dict = {}
    assert Pat(Op.ADD, src=(Pat.var("a"), Pat.var("b"))).match(x, caps)
    assert caps == {"a": c(1), "b": c(2)}
    assert not Pat(Op.MUL).match(x, {})
    assert Pat({Op.MUL, Op.ADD}).match(x, {})
    assert not Pat(Op.ADD, src=(Pat.var("a"),)).match(x, {})  # wrong source count
    assert Pat(Op.ADD, src=Pat(Op.CONST)).match(x, {})  # every source
    assert not Pat(Op.ADD, src=(Pat.var("a"), Pat.var("a"))).match(x, {})  # same name, other node
    y = Node(Op.ADD, U, (c(1), c(1)))
    assert Pat(Op.ADD, src=(Pat.var("a"), Pat.var("a"))).match(y, {})
    assert Pat(Op.CONST, arg=ConstArg(1, "python")).match(c(1), {})
    assert Pat(Op.CONST, arg_type=ConstArg, where=lambda n: n.arg.value > 1).match(c(2), {})
    assert not Pat(Op.CONST, where=lambda n: n.arg.value > 1).match(c(1), {})
    assert Pat(dtype=DType.U32).match(c(1), {}) and not Pat(dtype=DType.U64).match(c(1), {})


def test_fixed_point_and_value_preserved():
    a = Poly(list(range(8)), RING)
    b = Poly([3, 1, 4, 1, 5, 9, 2, 6], RING)
    # build round trips by hand (Poly.ntt() of an NTT-form poly returns itself)
    x = Node(Op.NTT, U, (Node(Op.INTT, U, (Node(Op.NTT, U, (a.node,)),)),))
    y = Node(Op.NEG, U, (Node(Op.NEG, U, (Node(Op.NEG, U, (Node(Op.NEG, U, (b.node,)),)),)),))
    root = Node(Op.ADD, U, (x, y))
    before = evaluate(root)
    record: list[Rewrite] = []
    out = graph_rewrite(root, ROUND_TRIPS, record=record)
    assert out is Node(Op.ADD, U, (Node(Op.NTT, U, (a.node,)), b.node))
    assert evaluate(out) == before
    assert not matches_anywhere(out, ROUND_TRIPS)
    assert [r.rule for r in record].count("double_negation") == 2
    assert all(isinstance(r.before, Node) and isinstance(r.after, Node) for r in record)
    assert record[0].rule.startswith("test_rewrite.py:")  # lambdas are named by file:line


def test_nodes_made_by_rules_are_rewritten_too():
    # a rule whose output exposes a new match below it: neg(neg(neg(neg(x)))) in one pass
    rules = Rules([(Pat(Op.NEG, src=(Pat(Op.NEG, src=(Pat.var("x"),)),)), lambda x: x)])
    x = c(5)
    for _ in range(7):
        x = Node(Op.NEG, U, (x,))
    assert graph_rewrite(x, rules) is Node(Op.NEG, U, (c(5),))


def test_shared_nodes_are_rewritten_once():
    calls = []

    def fold(x):
        calls.append(x)
        return x

    rules = Rules([(Pat(Op.NEG, src=(Pat(Op.NEG, src=(Pat.var("x"),)),)), fold)])
    shared = Node(Op.NEG, U, (Node(Op.NEG, U, (c(2),)),))
    root = Node(Op.ADD, U, (shared, Node(Op.MUL, U, (shared, shared))))
    out = graph_rewrite(root, rules)
    assert out is Node(Op.ADD, U, (c(2), Node(Op.MUL, U, (c(2), c(2)))))
    assert len(calls) == 1


def test_ctx_is_passed_to_rules_that_ask():
    seen = []

    def rule(x, ctx):
        seen.append(ctx)

    graph_rewrite(Node(Op.NEG, U, (c(1),)), [(Pat(Op.NEG, src=(Pat.var("x"),)), rule)], ctx="hi")
    assert seen == ["hi"]


def test_a_two_rule_cycle_is_a_clear_error():
    rules = Rules(
        [
            (Pat(Op.NTT, src=(Pat.var("x"),)), lambda x: Node(Op.INTT, U, (x,)), "ntt_to_intt"),
            (Pat(Op.INTT, src=(Pat.var("x"),)), lambda x: Node(Op.NTT, U, (x,)), "intt_to_ntt"),
        ]
    )
    with pytest.raises(RewriteLoopError, match="rule loop") as e:
        graph_rewrite(Node(Op.NTT, U, (c(1),)), rules)
    assert "ntt_to_intt" in str(e.value) or "intt_to_ntt" in str(e.value)


def test_a_rule_that_wraps_its_own_node_is_a_loop():
    rules = [(Pat(Op.CONST, name="x"), lambda x: Node(Op.CONTIGUOUS, U, (x,)), "wrap")]
    with pytest.raises(RewriteLoopError, match="wrap"):
        graph_rewrite(c(1), rules)


def test_an_endless_chain_is_a_clear_error():
    rules = [(Pat(Op.CONST, name="x"), lambda x: c(x.arg.value + 1), "count_up")]
    with pytest.raises(RewriteLoopError, match="count_up"):
        graph_rewrite(c(0), rules)


def test_deep_graph_rewrite_is_iterative():
    x = c(1)
    for _ in range(20000):
        x = Node(Op.NEG, U, (x,))
    rules = [(Pat(Op.NEG, src=(Pat(Op.NEG, src=(Pat.var("x"),)),)), lambda x: x)]
    assert graph_rewrite(x, rules) is c(1)


def test_bad_rules_are_rejected():
    with pytest.raises(TypeError, match="a rule is"):
        Rules([Pat(Op.ADD)])
    with pytest.raises(TypeError, match="not a Node"):
        graph_rewrite(c(1), [(Pat(Op.CONST), lambda: 3)])
