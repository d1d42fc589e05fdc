"""The fast interpreter of HEIR's plain ops (``ren.interop.heir.vector``): in place and on arrays.

The oracle is the interpreter run op by op (``Interpreter(module, fast=False)``: each insert a
copy), on the same arguments, and for some modules a Python loop. The modules, hand-written in
MLIR's generic form, repeat indices, nest loops whose inner bounds follow the outer one, map
indices with ``divsi`` / ``remsi`` / ``floordivsi``, select, branch, read what a loop carries (it
must run op by op) and use tensors after an insert or a loop (they must not change). With
``heir-opt``, the client functions of a few of HEIR's examples run both ways on random inputs.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ren.interop.heir import ir, vector
from ren.interop.heir.cleartext import Interpreter
from ren.interop.heir.reader import parse
from ren.interop.heir.tools import find_heir_opt, run_heir_opt

# -- a few ops in MLIR's generic form


def const(name: str, value: object, t: str = "index") -> str:
    return f'{name} = "arith.constant"() <{{value = {value} : {t}}}> : () -> {t}'


def dense(name: str, value: int, t: str) -> str:
    return f'{name} = "arith.constant"() <{{value = dense<{value}> : {t}}}> : () -> {t}'


def binary(name: str, op: str, a: str, b: str, t: str = "index") -> str:
    return f'{name} = "arith.{op}"({a}, {b}) : ({t}, {t}) -> {t}'


def cmpi(name: str, predicate: int, a: str, b: str) -> str:
    props = f"<{{predicate = {predicate} : i64}}>"
    return f'{name} = "arith.cmpi"({a}, {b}) {props} : (index, index) -> i1'


def cast(name: str, x: str) -> str:
    return f'{name} = "arith.index_cast"({x}) : (index) -> i64'


def select(name: str, cond: str, a: str, b: str) -> str:
    return f'{name} = "arith.select"({cond}, {a}, {b}) : (i1, i64, i64) -> i64'


def extract(name: str, src: str, idx: list[str], t: str) -> str:
    types = ", ".join([t] + ["index"] * len(idx))
    return f'{name} = "tensor.extract"({", ".join([src, *idx])}) : ({types}) -> i64'


def insert(name: str, value: str, dest: str, idx: list[str], t: str) -> str:
    types = ", ".join(["i64", t] + ["index"] * len(idx))
    return f'{name} = "tensor.insert"({", ".join([value, dest, *idx])}) : ({types}) -> {t}'


SEGMENTS = "operandSegmentSizes = array<i32: 0, 0, 1>"


def loop(
    name: str, bounds: str, init: str, args: str, t: str, body: list[str], out: str
) -> list[str]:
    """``scf.for`` over ``bounds`` ("lb ub step"), or ``affine.for`` ("affine lb ub")."""
    iv, acc = args.split()
    match bounds.split():
        case ["affine", lb, ub]:
            maps = f"lowerBoundMap = affine_map<() -> ({lb})>, step = 1 : index"
            props = f"<{{{maps}, upperBoundMap = affine_map<() -> ({ub})>, {SEGMENTS}}}>"
            head, tail = f'{name} = "affine.for"({init}) {props} ({{', "affine.yield"
            end = f"}}) : ({t}) -> {t}"
        case parts:
            head, tail = f'{name} = "scf.for"({", ".join([*parts, init])}) ({{', "scf.yield"
            end = f"}}) : (index, index, index, {t}) -> {t}"
    block = f"^bb0({iv}: index, {acc}: {t}):"
    return [head, block, *body, f'"{tail}"({out}) : ({t}) -> ()', end]


def if_(name: str, cond: str, then: list[str], yes: str, no: str, t: str) -> list[str]:
    """``scf.if``: ``then`` and yield ``yes``, else yield ``no``."""
    yes, no = (f'"scf.yield"({x}) : ({t}) -> ()' for x in (yes, no))
    return [f'{name} = "scf.if"({cond}) ({{', *then, yes, "}, {", no, f"}}) : (i1) -> {t}"]


def module(args: list[tuple[str, str]], body: list[str], results: list[tuple[str, str]]) -> str:
    """A module of one function ``f``: ``args`` and ``results`` as ``(name, type)``."""
    ins, outs = ", ".join(t for _, t in args), ", ".join(t for _, t in results)
    head = f'"func.func"() <{{function_type = ({ins}) -> ({outs}), sym_name = "f"}}> ({{'
    block = f"^bb0({', '.join(f'{n}: {t}' for n, t in args)}):"
    ret = f'"func.return"({", ".join(n for n, _ in results)}) : ({outs}) -> ()'
    return "\n".join(
        ['"builtin.module"() ({', head, block, *body, ret, "}) : () -> ()", "}) : () -> ()"]
    )


@contextlib.contextmanager
def spying():
    """Whether each call of ``vector.Lanes.run`` ran its loop on arrays (``False``: op by op)."""
    seen: list[bool] = []
    run = vector.Lanes.run

    def spy(self, *args):
        out = run(self, *args)
        seen.append(out is not None)
        return out

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vector.Lanes, "run", spy)
        yield seen


@pytest.fixture
def ran():
    with spying() as seen:
        yield seen


def same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    return type(a) is type(b) and a == b


def both(text: str, *args):
    """The function ``f`` run fast and op by op: its results, checked equal; the args unchanged."""
    module_ = parse(text)
    kept = [np.copy(a) for a in args]
    fast = Interpreter(module_).call("f", list(args))
    assert all(np.array_equal(a, k) for a, k in zip(args, kept, strict=True)), "args written"
    slow = Interpreter(module_, fast=False).call("f", [np.copy(a) for a in args])
    assert all(same(x, y) for x, y in zip(fast, slow, strict=True)), (fast, slow)
    return fast


T3, T4, X = "tensor<3xi64>", "tensor<4xi64>", "tensor<12xi64>"
CONSTANTS = [const(f"%c{k}", k) for k in range(6)] + [const("%m5", -5), const("%two", 2, "i64")]


def test_repeated_indices_keep_the_last_write_in_program_order(ran):
    body = [binary("%k", "remsi", "%i", "%c3"), extract("%v", "%x", ["%i"], X)]
    body += [insert("%a", "%v", "%acc", ["%k"], T3), binary("%i1", "addi", "%i", "%c1")]
    body += [binary("%k2", "remsi", "%i1", "%c3"), binary("%w", "muli", "%v", "%two", "i64")]
    body += [insert("%b", "%w", "%a", ["%k2"], T3)]  # the second write of an iteration wins
    nest = loop("%r", "%c0 %c5 %c1", "%z", "%i %acc", T3, body, "%b")
    text = module([("%x", X)], [*CONSTANTS, dense("%z", 0, T3), *nest], [("%r", T3)])
    x = np.arange(12, dtype=np.int64) * 7 + 1
    (got,) = both(text, x)
    want = np.zeros(3, dtype=np.int64)
    for i in range(5):
        want[i % 3], want[(i + 1) % 3] = x[i], 2 * x[i]
    assert np.array_equal(got, want) and ran == [True]


def test_writes_of_nested_loops_keep_their_order_across_levels(ran):
    inner = [binary("%s", "muli", "%i", "%c4"), binary("%n", "addi", "%s", "%j")]
    inner += [extract("%v", "%x", ["%n"], X), insert("%w", "%v", "%u", ["%j"], T4)]
    body = [
        cast("%ii", "%i"),
        insert("%t1", "%ii", "%acc", ["%c3"], T4),  # before the inner loop: overwritten
        *loop("%t2", "affine 0 4", "%t1", "%j %u", T4, inner, "%w"),
        insert("%t3", "%ii", "%t2", ["%c0"], T4),  # after it: kept
    ]
    nest = loop("%r", "%c0 %c3 %c1", "%z", "%i %acc", T4, body, "%t3")
    text = module([("%x", X)], [*CONSTANTS, dense("%z", 0, T4), *nest], [("%r", T4)])
    (got,) = both(text, np.arange(12) + 10)
    assert got.tolist() == [2, 19, 20, 21] and ran == [True]


def test_a_nest_whose_inner_bounds_follow_the_outer_loop(ran):
    """HEIR's layouts: ``for j in [i, 12) step 4``, C division of negatives, select and if."""
    t = "tensor<4x12xi64>"
    inner = [binary("%d", "subi", "%i", "%j"), binary("%e", "addi", "%d", "%m5")]
    inner += [binary("%q", "divsi", "%e", "%c3"), binary("%rm", "remsi", "%e", "%c3")]
    inner += [binary("%f", "floordivsi", "%e", "%c4"), binary("%fm", "muli", "%f", "%c4")]
    inner += [binary("%row", "subi", "%e", "%fm"), extract("%v", "%x", ["%j"], X)]
    inner += [cast("%qq", "%q"), binary("%w", "addi", "%v", "%qq", "i64"), cast("%rr", "%rm")]
    inner += [cmpi("%neg", 2, "%rm", "%c0"), select("%s", "%neg", "%w", "%rr")]
    put = [insert("%y", "%s", "%u", ["%row", "%j"], t)]
    inner += [cmpi("%odd", 1, "%rm", "%c0"), *if_("%t3", "%odd", put, "%y", "%u", t)]
    body = loop("%t2", "%i %c12 %c4", "%t1", "%j %u", t, inner, "%t3")
    nest = loop("%r", "%c0 %c4 %c1", "%z", "%i %t1", t, body, "%t2")
    body = [*CONSTANTS, const("%c12", 12), dense("%z", -1, t), *nest]
    text = module([("%x", X)], body, [("%r", t)])
    x = np.arange(12, dtype=np.int64) ** 2
    (got,) = both(text, x)
    want = np.full((4, 12), -1, dtype=np.int64)
    for i in range(4):
        for j in range(i, 12, 4):
            e = i - j - 5
            q, rm = int(e / 3), e - 3 * int(e / 3)  # C: toward zero
            if rm != 0:
                want[e % 4, j] = x[j] + q if rm < 0 else rm
    assert np.array_equal(got, want) and ran == [True]


def test_a_loop_that_reads_what_it_carries_runs_op_by_op(ran):
    body = [binary("%p", "subi", "%i", "%c1"), extract("%prev", "%acc", ["%p"], T4)]
    body += [extract("%v", "%acc", ["%i"], T4), binary("%s", "addi", "%prev", "%v", "i64")]
    body += [insert("%w", "%s", "%acc", ["%i"], T4)]
    nest = loop("%r", "%c1 %c4 %c1", "%x", "%i %acc", T4, body, "%w")
    (got,) = both(module([("%x", T4)], [*CONSTANTS, *nest], [("%r", T4)]), np.array([1, 2, 3, 4]))
    assert got.tolist() == [1, 3, 6, 10] and ran == [False]  # a prefix sum


def fill(name: str, init: str, dest: str | None = None, value: str | None = None) -> list[str]:
    """``for i in [0, 4)``: ``value`` (else ``x[i]``) into the carried tensor (or ``dest``) at i."""
    get = [] if value else [extract(f"{name}v", "%x", [f"{name}i"], T4)]
    put = insert(f"{name}b", value or f"{name}v", dest or f"{name}a", [f"{name}i"], T4)
    return loop(name, "%c0 %c4 %c1", init, f"{name}i {name}a", T4, [*get, put], f"{name}b")


def test_tensors_used_after_an_insert_or_a_loop_keep_their_values(ran):
    body = [
        *CONSTANTS,
        dense("%z", 0, T4),
        *fill("%r", "%z"),  # %z is used again below: the loop copies it
        *fill("%s", "%x", value="%two"),  # the caller's tensor: copied
        *fill("%o", "%z", dest="%z"),  # into %z each time, not what it carries: op by op
        insert("%p", "%two", "%z", ["%c0"], T4),
        insert("%q", "%two", "%p", ["%c1"], T4),
    ]
    outs = [("%r", T4), ("%s", T4), ("%o", T4), ("%z", T4), ("%q", T4)]
    r, s, o, z, q = both(module([("%x", T4)], body, outs), np.array([5, 6, 7, 8]))
    assert r.tolist() == [5, 6, 7, 8] and s.tolist() == [2, 2, 2, 2]
    assert o.tolist() == [0, 0, 0, 8]  # each iteration writes into the same %z: the last stays
    assert z.tolist() == [0, 0, 0, 0] and q.tolist() == [2, 2, 0, 0]
    assert ran == [True, True, False]


def test_which_operands_are_taken_over():
    body = [*CONSTANTS, dense("%z", 0, T4), *fill("%r", "%z", value="%two")]
    body += [insert("%p", "%two", "%z", ["%c0"], T4), insert("%q", "%two", "%x", ["%c0"], T4)]
    body += [insert("%y", "%two", "%r", ["%c0"], T4)]
    text = module([("%x", T4)], body, [("%p", T4), ("%q", T4), ("%y", T4)])
    function = parse(text).functions()["f"]
    taken = vector.moves(function)
    ops = {op.results[0]: op for op in function.walk() if op.results}
    assert id(ops["%r"]) not in taken  # %z is used after the loop: the loop copies it
    assert taken[id(ops["%rb"])] == {1}  # the carried tensor, dead after the insert
    assert taken[id(ops["%p"])] == {1}  # the constant, at its last use
    assert id(ops["%q"]) not in taken  # the caller's tensor is never written
    assert taken[id(ops["%y"])] == {1}  # the loop's result: the loop owns it


def test_an_if_hands_over_what_its_branches_own():
    """HEIR's ``scf.if``: an insert where a lane is kept, else the carried tensor as it is."""
    then = [insert("%y", "%two", "%a", ["%i"], T4)]
    body = [cmpi("%odd", 1, "%i", "%c2"), *if_("%t", "%odd", then, "%y", "%a", T4)]
    nest = loop("%r", "%c0 %c4 %c1", "%z", "%i %a", T4, body, "%t")
    late = [*if_("%u", "%c1b", [], "%z", "%r", T4), insert("%w", "%two", "%z", ["%c0"], T4)]
    body = [*CONSTANTS, dense("%z", 0, T4), *nest, *late]
    text = module([("%c1b", "i1")], body, [("%w", T4), ("%u", T4)])
    function = parse(text).functions()["f"]
    taken, ops = vector.moves(function), {op.results[0]: op for op in function.walk() if op.results}
    assert taken[id(ops["%y"])] == {1} and taken[id(ops["%r"].regions[0][0].ops[-1])] == {0}
    assert taken[id(ops["%w"])] == {1} and id(ops["%u"].regions[0][0].ops[-1]) not in taken
    w, z = both(text, True)  # %u is %z, copied as the if yields it: %z's last use writes in place
    assert w.tolist() == [2, 0, 0, 0] and z.tolist() == [0, 0, 0, 0]


def divide(guard: bool) -> str:
    """``r[i] = 5 / (i - 2)`` for i in [0, 4), where ``i != 2`` if ``guard``."""
    work = [binary("%d", "subi", "%i", "%c2"), binary("%q", "divsi", "%c5", "%d")]
    work += [cast("%qq", "%q"), insert("%y", "%qq", "%a", ["%i"], T4)]
    if guard:
        work = [cmpi("%ok", 1, "%i", "%c2"), *if_("%b", "%ok", work, "%y", "%a", T4)]
    nest = loop("%r", "%c0 %c4 %c1", "%x", "%i %a", T4, work, "%b" if guard else "%y")
    return module([("%x", T4)], [*CONSTANTS, *nest], [("%r", T4)])


def test_errors_are_the_op_by_op_errors(ran):
    (got,) = both(divide(True), np.zeros(4, dtype=np.int64))
    assert got.tolist() == [-2, -5, 0, 5] and ran == [True]  # C's 5 / -2; i = 2 skipped
    beyond = module([("%x", T4)], [*CONSTANTS, *fill("%r", "%x", value="%two")], [("%r", T4)])
    beyond = beyond.replace('insert"(%two, %ra, %ri)', 'insert"(%two, %ra, %c4)')
    for fast in (True, False):
        with pytest.raises(ir.MlirError, match="division by zero"):
            Interpreter(parse(divide(False)), fast=fast).call("f", [np.zeros(4, np.int64)])
        with pytest.raises(IndexError):
            Interpreter(parse(beyond), fast=fast).call("f", [np.zeros(4, np.int64)])


def test_integer_division_is_exact_past_doubles():
    body = [binary("%q", "divsi", "%a", "%b", "i64"), binary("%r", "remsi", "%a", "%b", "i64")]
    text = module([("%a", "i64"), ("%b", "i64")], body, [("%q", "i64"), ("%r", "i64")])
    a = -(2**62) - 1
    assert Interpreter(parse(text)).call("f", [a, 3]) == [-((2**62 + 1) // 3), -((2**62 + 1) % 3)]


@given(
    sizes=st.tuples(st.integers(1, 4), st.integers(1, 6), st.integers(1, 3), st.integers(1, 5)),
    follows=st.booleans(),
    ab=st.tuples(st.integers(-3, 3), st.integers(-3, 3)),
    op=st.sampled_from(["divsi", "remsi", "floordivsi"]),
    m=st.sampled_from([-3, -2, 2, 5]),
)
def test_random_index_maps_run_as_op_by_op(sizes, follows, ab, op, m):
    """``k = OP(a*i + b*j - 2, m)`` wrapped into ``size``; the value a select of two."""
    size, t = sizes[3], f"tensor<{sizes[3]}xi64>"
    work = [binary("%ai", "muli", "%i", "%ca"), binary("%bj", "muli", "%j", "%cb")]
    work += [binary("%s0", "addi", "%ai", "%bj"), binary("%s", "subi", "%s0", "%c2")]
    work += [binary("%q", op, "%s", "%cm"), binary("%f", "floordivsi", "%q", "%cs")]
    work += [binary("%fs", "muli", "%f", "%cs"), binary("%k", "subi", "%q", "%fs")]
    work += [extract("%v", "%x", ["%j"], X), cast("%qq", "%q"), cmpi("%lt", 2, "%q", "%c0")]
    work += [select("%w", "%lt", "%v", "%qq"), insert("%y", "%w", "%u", ["%k"], t)]
    bounds = f"{'%i' if follows else '%c0'} %ni %st"
    body = loop("%t2", bounds, "%acc", "%j %u", t, work, "%y")
    nest = loop("%r", "%c0 %no %c1", "%z", "%i %acc", t, body, "%t2")
    names = ["%ca", "%cb", "%cm", "%cs", "%no", "%ni", "%st"]
    numbers = [const(n, v) for n, v in zip(names, [*ab, m, size, *sizes[:3]], strict=True)]
    text = module([("%x", X)], [*CONSTANTS, *numbers, dense("%z", 0, t), *nest], [("%r", t)])
    with spying() as ran:
        both(text, np.arange(12, dtype=np.int64) * 3 - 5)
    assert ran == [True]


# -- HEIR's examples, lowered by heir-opt

needs_heir = pytest.mark.skipif(
    find_heir_opt() is None, reason="heir-opt not installed (pip install -e .[heir])"
)
DOT_8F = (  # tests/Examples/common/dot_product_8f.mlir
    "func.func @dot_product(%arg0: tensor<8xf32> {secret.secret}, %arg1: tensor<8xf32>"
    " {secret.secret}) -> f32 {\n  %cst = arith.constant dense<1.000000e-01> : tensor<f32>\n"
    "  %0 = linalg.dot ins(%arg0, %arg1 : tensor<8xf32>, tensor<8xf32>) outs(%cst : tensor<f32>)"
    " -> tensor<f32>\n  %1 = tensor.extract %0[] : tensor<f32>\n  return %1 : f32\n}\n"
)
DOT_8 = DOT_8F.replace("f32", "i16").replace("1.000000e-01", "0")  # dot_product_8.mlir
CONV1D = (  # tests/Examples/common/conv1d_ncw.mlir
    "func.func @conv1d_ncw(%arg0 : tensor<1x1x4xf32> {secret.secret}) -> tensor<1x8x2xf32> {\n"
    "  %filter = arith.constant dense<1.0> : tensor<8x1x2xf32>\n"
    "  %out = arith.constant dense<0.0> : tensor<1x8x2xf32>\n"
    "  %0 = linalg.conv_1d_ncw_fcw {dilations = dense<1> : vector<1xi64>, strides = dense<2> :"
    " vector<1xi64>} ins(%arg0, %filter : tensor<1x1x4xf32>, tensor<8x1x2xf32>) outs(%out :"
    " tensor<1x8x2xf32>) -> tensor<1x8x2xf32>\n  return %0 : tensor<1x8x2xf32>\n}\n"
)
MATVEC = (  # matvec_512x784.mlir's shape of program, 32 x 20
    "func.func @matvec(%arg0 : tensor<20xf32> {secret.secret}) -> tensor<32xf32> {\n"
    "  %matrix = arith.constant dense<1.0> : tensor<32x20xf32>\n"
    "  %out = arith.constant dense<0.0> : tensor<32xf32>\n"
    "  %0 = linalg.matvec ins(%matrix, %arg0 : tensor<32x20xf32>, tensor<20xf32>) outs(%out :"
    " tensor<32xf32>) -> tensor<32xf32>\n  return %0 : tensor<32xf32>\n}\n"
)
BGV = ("--annotate-module=backend=lattigo scheme=bgv", "--mlir-to-bgv")
#: The scheme's ops, passing their values through: the packing is what is compared.
STUB = {
    "lwe.rlwe_encode": lambda i, op, v: [np.asarray(v[0])],
    "lwe.rlwe_encrypt": lambda i, op, v: [v[0]],
    "lwe.rlwe_decrypt": lambda i, op, v: [v[0]],
    "lwe.rlwe_decode": lambda i, op, v: [np.resize(v[0], ir.tensor_type(op.result_types[0]).shape)],
}
ROLES = {"client.pack", "client.encrypt", "client.encrypt_zero", "client.decrypt"}


def argument(type_text: str, rng: np.random.Generator) -> object:
    """A random value of ``type_text``: numbers, or slots where the type is ciphertexts."""
    t = ir.tensor_type(type_text)
    if t is None:
        return "key"
    if not t.element.startswith("!"):
        return rng.normal(size=t.shape) if "f" in t.element else rng.integers(-9, 9, t.shape)
    out = np.empty(t.shape, dtype=object)
    for where in np.ndindex(t.shape):
        out[where] = rng.normal(size=64)
    return out


def equal(a, b) -> bool:
    if isinstance(a, np.ndarray) and a.dtype == object:
        return a.shape == b.shape and all(map(equal, a.flat, b.flat))
    return same(a, b) if isinstance(a, np.ndarray) and a.dtype != object else np.array_equal(a, b)


@needs_heir
@pytest.mark.parametrize(
    ("source", "flags"),
    [(DOT_8F, ("--mlir-to-ckks",)), (DOT_8, BGV), (CONV1D, ("--mlir-to-ckks",)),
     (MATVEC, ("--mlir-to-ckks",))],
    ids=["dot_product_8f/ckks", "dot_product_8/bgv", "conv1d_ncw/ckks", "matvec_32x20/ckks"],
)  # fmt: skip
def test_heirs_client_functions_run_as_op_by_op(source, flags, ran):
    module_ = parse(run_heir_opt(source, *flags))
    fast, slow = Interpreter(module_, STUB), Interpreter(module_, STUB, fast=False)
    rng = np.random.default_rng(5)
    for name, f in fast.functions.items():
        if not ROLES & set((f.attr("heir.interface") or {}).get("roles", [])):
            continue
        args = [argument(t, rng) for _, t in f.regions[0][0].args]
        got, want = fast.call(name, list(args)), slow.call(name, list(args))
        assert all(map(equal, got, want)), name
    assert True in ran
