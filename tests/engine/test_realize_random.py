"""Random programs over every front-end op, realized on the python backend, equal the reference.

A hypothesis-drawn program builds a DAG of ``Poly`` values over a random ring (``tests.strategies``'
``rings``: 1-4 moduli, ``u32`` or ``u64``) and the rings its rescales and basis changes lead to:

* leaves: coefficient lists with edge values (``coeff_lists``), small coefficients, coefficients
  next to a rescale's rounding boundaries, ring constants (``0``, ``+-1``, ``+-Q/2``, huge), some
  converted to NTT form, some realized up front;
* every front-end op: ``+ - *`` between polys and with ints (on either side), unary ``-``,
  ``ntt``, ``intt``, ``rotate`` (any steps), ``automorphism`` (any odd ``g``), ``conjugate``,
  ``rescale`` (the last modulus or a set of them), ``to_ring`` onto a contiguous run (a view) and
  onto another basis (a reordering, a subset, new primes, the other dtype: a basis extension),
  ``contiguous``;
* operands drawn from the pool of earlier values of the same ring, so subexpressions are shared;
* realizations in the middle of the program (``realize(a, b)``, ``a.realize(b)``, or a read such
  as ``a.tolist()``), and at the end 1-3 values realized together, then every value still lazy.

Oracle: ``ren.reference.evaluate`` of every value's graph, taken once, *before* the value is
realized (realization repoints ``Poly.node`` to the buffers). After each realization:

* each realized value gives that value from ``tolist()`` and ``tolist(centered=True)``; its
  ``tobytes()`` words lie in ``[0, q_i)`` and, for small rings, read back to it; ``limbs()`` equals
  ``expected_limbs`` in the value's domain; a value made by ``contiguous()`` is its own buffer;
* every kernel that ran wrote words in ``[0, q_i)`` (``docs/rings.md``: after *every* kernel);
* the realization ran once, and reading the values again runs nothing;
* every value of the program keeps its ring and domain; no graph still holds a replaced node; a
  graph that used a realized value now reads its buffer; and (rings up to ``NTT_READ_MAX_N``)
  every graph, as it now is, still evaluates to its value.

Basis extension is exact except for values within float rounding of ``+-Q/2`` (see
``docs/rings.md``): the generator extends only values whose every centered coefficient is at
least ``Q / 2**40`` away from ``+-Q/2`` (checked with the reference), so the oracle stays exact;
others skip that step.

On failure hypothesis prints the program as plain ``Poly`` code (its ``note`` lines).
"""

from __future__ import annotations

import math
import operator
import random
from collections.abc import Callable
from unittest import mock

import numpy as np
import pytest
from hypothesis import Phase, event, given, note, settings
from hypothesis import strategies as st

import ren
import ren.poly
from ren import Poly, RingSpec
from ren.engine.realize import ExecUnit
from ren.ir import DType, Node, Op
from ren.ir.facts import is_const
from ren.reference import evaluate, expected_limbs, read_words
from ren.ring import DTYPE_LIMIT_BITS, ntt_primes
from tests.oracles import centered
from tests.strategies import coeff_lists, rings

#: Degrees of the small programs (every check) and of the large ones (shorter, fewer checks).
SMALL_N = (2, 4, 8, 16, 32, 64)
LARGE_N = (128, 256, 1024)

#: ``limbs()`` is checked against the slots by definition up to this degree (it is O(n**2)).
LIMBS_MAX_N = 64
#: The reference reads an NTT-form buffer by solving for its coefficients, O(n**2) pow calls:
#: beyond this degree no NTT-form value is realized before the end, and graphs that read realized
#: buffers are not evaluated again (each value's reference value is still taken once, before).
NTT_READ_MAX_N = 256

#: Hypothesis's phases without ``explain`` (on these programs it takes minutes; the printed program
#: says more).
PHASES = tuple(p for p in Phase if p is not Phase.explain)

#: The step kinds, first the ones a failing program shrinks toward.
STEPS = (
    "add",
    "sub",
    "mul",
    "neg",
    "ntt",
    "intt",
    "leaf",
    "rotate",
    "automorphism",
    "conjugate",
    "rescale",
    "view",
    "extend",
    "contiguous",
    "realize",
)
BINARY: dict[str, tuple[str, Callable]] = {
    "add": ("+", operator.add),
    "sub": ("-", operator.sub),
    "mul": ("*", operator.mul),
}


class Value:
    """One value of the program: its name in the printed program, its ``Poly``, and whether it was
    made by ``contiguous()`` (then, realized, it must be a buffer of its own, not a view)."""

    __slots__ = ("contiguous", "name", "poly")

    def __init__(self, name: str, poly: Poly, contiguous: bool = False):
        self.name, self.poly, self.contiguous = name, poly, contiguous

    def __repr__(self) -> str:
        return self.name


def _lit(c: int) -> str:
    return f"({c})" if c < 0 else str(c)


def _is_stored(node: Node) -> bool:
    return node.op is Op.AS_RING and node.src[0].op in (Op.BUFFER, Op.BUFFER_VIEW)


def _run_and_check_words(unit: ExecUnit) -> None:
    """Run one exec unit, then check the words it wrote lie in ``[0, q_i)``.

    ``docs/rings.md``: after every kernel, not only the last.
    """
    unit.fn(unit.bufs)
    ring = unit.kernel.info.ring
    words = unit.bufs[0].array.reshape(-1, ring.n)[: ring.L].astype(object)
    q = np.array(ring.moduli, dtype=object).reshape(-1, 1)
    assert (words < q).all(), f"{unit.name} wrote a word >= its modulus"


class Program:
    """Draws a random program step by step, runs its realizations, and checks them.

    Each step is printed (``note``) as the line of ``Poly`` code that makes it.
    """

    def __init__(self, data: st.DataObject, ring: RingSpec):
        self.data = data
        self.pools: dict[RingSpec, list[Value]] = {}
        self.ring_names: dict[RingSpec, str] = {}
        self.values: list[Value] = []
        self.known: dict[Value, list[int]] = {}  # reference values, once evaluated
        self.ntt_reads = ring.n <= NTT_READ_MAX_N
        note("from ren import Poly, RingSpec, realize")
        self.ring_name(ring)

    # --- drawing -----------------------------------------------------------------------------
    def draw(self, strategy: st.SearchStrategy, label: str | None = None):
        return self.data.draw(strategy, label=label)

    def ring_name(self, ring: RingSpec) -> str:
        if ring not in self.ring_names:
            name = f"r{len(self.ring_names)}"
            self.ring_names[ring] = name
            note(f"{name} = RingSpec({ring.n}, {ring.moduli}, {ring.dtype!r})")
        return self.ring_names[ring]

    def add(self, poly: Poly, code: str, ring: RingSpec, contiguous: bool = False) -> Value:
        """Name ``poly`` (made by ``code``), check its ring, and put it in its ring's pool."""
        value = Value(f"p{len(self.values)}", poly, contiguous)
        note(f"{value.name} = {code}")
        assert poly.ring == ring, f"{value.name}: ring {poly.ring}, expected {ring}"
        self.values.append(value)
        self.pools.setdefault(ring, []).append(value)
        return value

    def pick_ring(self) -> RingSpec:
        return self.draw(st.sampled_from(list(self.pools)), label="ring")

    def pick(self, ring: RingSpec | None = None) -> Value:
        ring = ring or self.pick_ring()
        return self.draw(st.sampled_from(self.pools[ring]), label="operand")

    def ints(self, ring: RingSpec) -> st.SearchStrategy[int]:
        """Ints to combine with a poly, or to make a constant: small, edge and huge."""
        Q, h = ring.Q, ring.Q // 2
        edges = [0, 1, -1, 2, -2, 3, Q - 1, Q, Q + 1, h, h + 1, -h, -h - 1, 2**64 - 1, -(2**63)]
        edges += [*ring.moduli, *(q - 1 for q in ring.moduli)]
        return st.one_of(
            st.sampled_from(edges),
            st.integers(-1000, 1000),
            st.integers(-(Q << 70), Q << 70),
        )

    # --- steps -------------------------------------------------------------------------------
    def step(self) -> None:
        kind = self.draw(st.sampled_from(STEPS), label="step")
        event(f"step {kind}")
        if kind in BINARY:
            self.binary(kind)
        else:
            getattr(self, f"step_{kind}")()

    def leaf(self, ring: RingSpec) -> Value:
        rn = self.ring_name(ring)
        kinds = ("coeffs", "away", "small", "ties", "const")
        kind = self.draw(st.sampled_from(kinds), label="leaf")
        if kind == "const":
            c = self.draw(self.ints(ring), label="const")
            poly, code = Poly.const(c, ring), f"Poly.const({c}, {rn})"
        else:
            rnd = random.Random(self.draw(st.integers(0, 2**32), label="seed"))
            if kind == "small":
                bound = self.draw(st.sampled_from((1, 1000, 2**40)), label="bound")
                coeffs = [rnd.randint(-bound, bound) for _ in range(ring.n)]
            elif kind == "ties":
                coeffs = self.near_ties(ring, rnd)
            else:
                coeffs = self.draw(coeff_lists(ring, away_from_half=kind == "away"), label="coeffs")
            poly, code = Poly(coeffs, ring), f"Poly({coeffs}, {rn})"
        if self.draw(st.booleans(), label="ntt leaf"):
            poly, code = poly.ntt(), f"{code}.ntt()"
        value = self.add(poly, code, ring)
        if self.draw(st.booleans(), label="realize leaf") and self.may_realize(value):
            self.realize([value])
        return value

    def near_ties(self, ring: RingSpec, rnd: random.Random) -> list[int]:
        """Coefficients next to a rounding boundary of a rescale by ``P`` (the last modulus, or a
        product of some): ``k*P +- (P-1)/2`` and ``k*P +- (P+1)/2``, with ``|k*P| < Q/2``."""
        if ring.L == 1:
            P = ring.moduli[0]
        else:
            count = self.draw(st.integers(1, ring.L - 1), label="P moduli")
            P = math.prod(self.draw(st.permutations(ring.moduli), label="P")[:count])
        h = (P - 1) // 2
        k_max = max((ring.Q // 2 - P) // P, 0)
        return [
            rnd.randint(-k_max, k_max) * P + rnd.choice((-h - 1, -h, h, h + 1, 0))
            for _ in range(ring.n)
        ]

    def step_leaf(self) -> None:
        self.leaf(self.pick_ring())

    def binary(self, kind: str) -> None:
        sym, fn = BINARY[kind]
        ring = self.pick_ring()
        a = self.pick(ring)
        form = self.draw(st.sampled_from(("poly", "int right", "int left")), label="form")
        if form == "poly":
            b = self.pick(ring)
            self.add(fn(a.poly, b.poly), f"{a.name} {sym} {b.name}", ring)
        elif form == "int right":
            c = self.draw(self.ints(ring), label="int")
            self.add(fn(a.poly, c), f"{a.name} {sym} {_lit(c)}", ring)
        else:
            c = self.draw(self.ints(ring), label="int")
            self.add(fn(c, a.poly), f"{_lit(c)} {sym} {a.name}", ring)

    def step_neg(self) -> None:
        a = self.pick()
        self.add(-a.poly, f"-{a.name}", a.poly.ring)

    def step_ntt(self) -> None:
        a = self.pick()
        self.add(a.poly.ntt(), f"{a.name}.ntt()", a.poly.ring)

    def step_intt(self) -> None:
        a = self.pick()
        self.add(a.poly.intt(), f"{a.name}.intt()", a.poly.ring)

    def step_contiguous(self) -> None:
        a = self.pick()
        self.add(a.poly.contiguous(), f"{a.name}.contiguous()", a.poly.ring, contiguous=True)

    def step_conjugate(self) -> None:
        a = self.pick()
        self.add(a.poly.conjugate(), f"{a.name}.conjugate()", a.poly.ring)

    def step_rotate(self) -> None:
        a = self.pick()
        n = a.poly.ring.n
        steps = self.draw(
            st.one_of(st.integers(-2 * n, 2 * n), st.sampled_from((2**40 + 1, -(2**61)))),
            label="steps",
        )
        self.add(a.poly.rotate(steps), f"{a.name}.rotate({steps})", a.poly.ring)

    def step_automorphism(self) -> None:
        a = self.pick()
        n = a.poly.ring.n
        k = self.draw(
            st.one_of(st.integers(-2 * n, 2 * n), st.sampled_from((2**40, -(2**61)))), label="g"
        )
        g = 2 * k + 1
        self.add(a.poly.automorphism(g), f"{a.name}.automorphism({g})", a.poly.ring)

    def step_rescale(self) -> None:
        rings_ = [r for r in self.pools if r.L > 1]
        if not rings_:
            return
        ring = self.draw(st.sampled_from(rings_), label="ring")
        a = self.pick(ring)
        form = self.draw(st.sampled_from(("last", "int", "tuple")), label="rescale")
        if form == "last":
            moduli, arg = None, ""
        elif form == "int":
            moduli = self.draw(st.sampled_from(ring.moduli), label="modulus")
            arg = str(moduli)
        else:
            count = self.draw(st.integers(1, ring.L - 1), label="count")
            moduli = tuple(self.draw(st.permutations(ring.moduli), label="moduli")[:count])
            arg = str(moduli)
        drop = (ring.moduli[-1],) if moduli is None else moduli
        drop = (drop,) if isinstance(drop, int) else drop
        out = ring.with_moduli(tuple(q for q in ring.moduli if q not in drop))
        self.ring_name(out)
        self.add(a.poly.rescale(moduli), f"{a.name}.rescale({arg})", out)

    def step_view(self) -> None:
        ring = self.pick_ring()
        a = self.pick(ring)
        count = self.draw(st.integers(1, ring.L), label="count")
        start = self.draw(st.integers(0, ring.L - count), label="start")
        target = RingSpec(ring.n, ring.moduli[start : start + count], ring.dtype)
        rn = self.ring_name(target)
        self.add(a.poly.to_ring(target), f"{a.name}.to_ring({rn})", target)

    def step_extend(self) -> None:
        ring = self.pick_ring()
        a = self.pick(ring)
        target = self.draw(extension_targets(ring), label="target")
        if not is_const(a.poly.node) and not self.extension_is_exact(a):
            event("extension skipped: a value near +-Q/2")
            note(f"# skipped {a.name}.to_ring({target}): a value is near +-Q/2")
            return
        rn = self.ring_name(target)
        self.add(a.poly.to_ring(target), f"{a.name}.to_ring({rn})", target)

    def step_realize(self) -> None:
        count = self.draw(st.integers(1, 2), label="count")
        values = [self.draw(st.sampled_from(self.values), label="realize") for _ in range(count)]
        if all(self.may_realize(v) for v in values):
            self.realize(values)

    # --- checks ------------------------------------------------------------------------------
    def extension_is_exact(self, a: Value) -> bool:
        """Every centered coefficient at least ``Q / 2**40`` away from ``+-Q/2``."""
        Q = a.poly.ring.Q
        limit = Q // 2 - (Q >> 40)
        if a not in self.known:
            self.known[a] = evaluate(a.poly.node)
        return all(abs(centered(x, Q)) <= limit for x in self.known[a])

    def may_realize(self, value: Value) -> bool:
        """Whether realizing ``value`` now keeps the reference cheap (no large NTT-form buffer)."""
        return self.ntt_reads or value.poly.domain is ren.Domain.COEFF

    def expected(self) -> list[list[int]]:
        """The reference value of every value of the program, each evaluated once, from the graph
        it had then (a value never changes; later its graph may read realized buffers)."""
        todo = [v for v in self.values if v not in self.known]
        if todo:
            sink = Node(Op.SINK, DType.VOID, tuple(v.poly.node for v in todo))
            self.known.update(zip(todo, evaluate(sink), strict=True))
        return [self.known[v] for v in self.values]

    def evaluate_now(self) -> list[list[int]]:
        """The reference value of every value of the program, from its graph as it is now."""
        sink = Node(Op.SINK, DType.VOID, tuple(v.poly.node for v in self.values))
        return list(evaluate(sink))

    def realize(self, values: list[Value], how: str | None = None) -> None:
        """Realize ``values`` together and check them, and every other value of the program."""
        ways = ("function", "method", "read") if len(values) == 1 else ("function", "method")
        how = how or self.draw(st.sampled_from(ways), label="how")
        names = ", ".join(v.name for v in values)
        if how == "function":
            note(f"realize({names})")
        elif how == "method":
            rest = ", ".join(v.name for v in values[1:])
            note(f"{values[0].name}.realize({rest})")
        else:
            note(f"{names}.tolist()  # realizes it")
        before = self.expected()
        kinds = [(v.poly.ring, v.poly.domain) for v in self.values]
        # the nodes realization replaces (a stored value or a constant is no work to replace)
        replaced = {
            v.poly.node for v in values if not (_is_stored(v.poly.node) or is_const(v.poly.node))
        }
        users = [v for v in self.values if replaced.intersection(v.poly.node.toposort())]
        lazy = any(not v.poly.realized for v in values)
        real = ren.poly.prepare
        with (
            mock.patch.object(ren.poly, "prepare", wraps=real) as spy,
            mock.patch.object(ExecUnit, "__call__", _run_and_check_words),
        ):
            polys = [v.poly for v in values]
            if how == "function":
                assert ren.realize(*polys) == tuple(polys)
            elif how == "method":
                assert polys[0].realize(*polys[1:]) is polys[0]
            else:
                polys[0].tolist()
            assert spy.call_count == int(lazy), "one realization for all the outputs"
            for v in values:
                self.check_realized(v, before[self.values.index(v)])
            assert spy.call_count == int(lazy), "reading a realized value realized it again"
        for v, (ring, domain) in zip(self.values, kinds, strict=True):
            assert (v.poly.ring, v.poly.domain) == (ring, domain), (
                f"{v.name} was {ring.short()} {domain}, after realize({names}) it is "
                f"{v.poly.ring.short()} {v.poly.domain}"
            )
            left = replaced.intersection(v.poly.node.toposort())
            assert not left, f"{v.name} still holds nodes realize({names}) replaced: {left}"
        realized = {v.poly.node for v in values}
        for v in users:
            assert realized.intersection(v.poly.node.toposort()), (
                f"{v.name} used a value of realize({names}) but does not read its buffer"
            )
        if self.ntt_reads:
            after = self.evaluate_now()
            for v, want, got in zip(self.values, before, after, strict=True):
                assert got == want, f"{v.name}'s graph changed value after realize({names})"

    def check_realized(self, v: Value, want: list[int]) -> None:
        p = v.poly
        ring, domain = p.ring, p.domain
        assert p.realized, f"{v.name} is not realized"
        assert _is_stored(p.node), f"{v.name} is {p.node.op.name}, not a stored value"
        if v.contiguous:
            assert p.node.src[0].op is Op.BUFFER, f"{v.name} is contiguous, yet a view"
        got = p.tolist()
        assert got == want, f"{v.name}: tolist() differs from the reference"
        Q = ring.Q
        assert p.tolist(centered=True) == [centered(x, Q) for x in want], v.name
        words = np.frombuffer(p.tobytes(), dtype=np.dtype(ring.np_dtype).newbyteorder("<"))
        words = words.reshape(ring.L, ring.n)
        q = np.array(ring.moduli, dtype=object).reshape(-1, 1)
        assert (words.astype(object) < q).all(), f"{v.name}: a stored word is >= its modulus"
        if ring.n <= LIMBS_MAX_N:
            np.testing.assert_array_equal(
                p.limbs(), expected_limbs(want, ring, domain), err_msg=v.name
            )
            assert read_words(words, ring, domain) == want, f"{v.name}: tobytes() disagrees"

    def finish(self) -> None:
        """Realize 1-3 values together, then everything still lazy, checking all of them."""
        count = self.draw(st.integers(1, 3), label="outputs")
        outs = [self.draw(st.sampled_from(self.values), label="output") for _ in range(count)]
        self.realize(outs)
        rest = [v for v in self.values if not v.poly.realized]
        if rest:
            self.realize(rest, how="function")


@st.composite
def extension_targets(draw: st.DrawFn, ring: RingSpec) -> RingSpec:
    """Another basis for ``ring``'s values: a reordering or subset of its moduli, new primes
    (with or without some of the old ones), or the same moduli in the other dtype."""
    n, moduli = ring.n, ring.moduli
    kinds = ["reorder", "new"]
    other = "u32" if ring.dtype == "u64" else "u64"
    if max(moduli) < 1 << DTYPE_LIMIT_BITS[other]:
        kinds.append("dtype")
    kind = draw(st.sampled_from(kinds))
    if kind == "dtype":
        return RingSpec(n, moduli, other)
    if kind == "reorder":
        count = draw(st.integers(1, ring.L))
        return RingSpec(n, tuple(draw(st.permutations(moduli))[:count]), ring.dtype)
    dtype = draw(st.sampled_from(("u32", "u64")))
    low = max(n.bit_length() + 8, 31 if dtype == "u64" else 0)
    bits = draw(st.integers(low, DTYPE_LIMIT_BITS[dtype]))
    fresh = [p for p in ntt_primes(n, bits, ring.L + 2) if p not in moduli][:3]
    keep = [q for q in moduli if q < 1 << DTYPE_LIMIT_BITS[dtype]]
    kept = draw(st.permutations(keep))[: draw(st.integers(0, len(keep)))]
    new = draw(st.permutations(fresh))[: draw(st.integers(1, len(fresh)))]
    chosen = draw(st.permutations(kept + new))
    return RingSpec(n, tuple(chosen), dtype)


def run_program(data: st.DataObject, ns: tuple[int, ...], dtype: str, max_steps: int) -> None:
    n = data.draw(st.sampled_from(ns), label="n")
    ring = data.draw(rings(min_n=n, max_n=n, max_limbs=4, dtypes=(dtype,)), label="ring")
    prog = Program(data, ring)
    for _ in range(data.draw(st.integers(1, 3), label="leaves")):
        prog.leaf(ring)
    for _ in range(data.draw(st.integers(0, max_steps), label="steps")):
        prog.step()
    prog.finish()


@pytest.mark.parametrize("dtype", ["u32", "u64"], ids=lambda d: f"dtype={d}")
@settings(max_examples=250, phases=PHASES)
@given(data=st.data())
def test_small_random_programs_realize_to_the_reference(dtype, data):
    run_program(data, SMALL_N, dtype, max_steps=40)


@pytest.mark.parametrize("dtype", ["u32", "u64"], ids=lambda d: f"dtype={d}")
@settings(max_examples=10, phases=PHASES)
@given(data=st.data())
def test_large_random_programs_realize_to_the_reference(dtype, data):
    run_program(data, LARGE_N, dtype, max_steps=8)
