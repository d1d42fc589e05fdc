"""Shared set-up for the per-pass tests: graphs in the state a pass requires, and their values.

``prepare(*polys, upto="name")`` gathers the polys under one ``SINK`` and runs every pass of
``ren.engine.schedule.PASSES`` that comes before ``name`` (checking each result with the
verifier, as the driver does under ``REN_CHECK=1``), so a test hands its pass exactly the graph the
pipeline would. ``apply(name, sink, ctx)`` then runs the pass itself.

Values come from two oracles that share no code with the passes:

* ``value(sink)``: the reference evaluator (``ren.reference.evaluate``), Python integers; it reads
  every graph up to ``indexify`` (stores, views, ``IMM``, loads).
* ``realized(sink, ctx, after)``: finish the pipeline from the graph after pass ``after``, run
  the kernels on the python backend, and read every output's words back by their definition
  (``ren.reference.read_words``).

``random_program(seed)`` builds a small random front-end program over ``RING3`` (inputs in both
domains, every front-end op but ``COPY``, constants, ring changes), the same for a given seed.
"""

from __future__ import annotations

import random

import numpy as np

from ren import reference
from ren.engine.realize import make_exec_units, run_exec_units
from ren.engine.schedule import PASSES, kernels_of
from ren.ir.node import Node, toposort
from ren.ir.op import DType, Op
from ren.ir.spec import verify
from ren.passes import ScheduleContext
from ren.poly import Poly, buffer_node
from ren.ring import Domain, RingSpec
from ren.ring import arith as rk

#: The rings of the golden tests: ``Q = 17 * 97`` (the worked example of ``docs/rings.md``), and
#: one more modulus for rescale and limb views.
RING = RingSpec(8, (17, 97))
RING3 = RingSpec(8, (17, 97, 113))

#: Pass names in pipeline order, and the modules by name.
NAMES = tuple(m.__name__.rsplit(".", 1)[-1] for m, _ in PASSES)
MODULES = {name: m for name, (m, _) in zip(NAMES, PASSES, strict=True)}


def step_of(name: str) -> int:
    """The pass's position in the pipeline, counting from 1 (as the driver does)."""
    return NAMES.index(name) + 1


def sink_of(*polys: Poly | Node) -> Node:
    """``SINK`` over the polys' nodes (or nodes), in order."""
    nodes = tuple(p if isinstance(p, Node) else p.node for p in polys)
    return Node(Op.SINK, DType.VOID, nodes)


def apply(name: str, sink: Node, ctx: ScheduleContext) -> Node:
    """Run pass ``name`` on ``sink`` and verify the result as the driver does."""
    out = MODULES[name].run(sink, ctx)
    verify(out, domains=step_of(name) >= 4)
    return out


def prepare(*polys: Poly | Node, upto: str) -> tuple[Node, ScheduleContext]:
    """The ``SINK`` of ``polys`` after every pass before ``upto``, and the context they filled."""
    sink = sink_of(*polys)
    ctx = ScheduleContext(outputs=sink.src)
    verify(sink)
    for name in NAMES[: NAMES.index(upto)]:
        sink = apply(name, sink, ctx)
    return sink, ctx


def rules_fired(ctx: ScheduleContext, name: str) -> list[str]:
    """The names of the rules pass ``name`` fired, in order."""
    return [r.rule for r in ctx.record.get(name, [])]


def ops(sink: Node) -> list[Op]:
    """Every op in the graph (kernel bodies included), in a stable order."""
    out = []
    for node in toposort(sink):
        out.append(node.op)
        if node.op is Op.KERNEL:
            out.extend(n.op for n in toposort(node.arg.ast))
    return out


# --------------------------------------------------------------------------------------------
# inputs


def coeff_input(coeffs: list[int], ring: RingSpec = RING) -> Poly:
    """A stored coefficient-form poly."""
    return Poly(coeffs, ring)


def ntt_input(coeffs: list[int], ring: RingSpec = RING) -> Poly:
    """A stored NTT-form poly of value ``coeffs``: its words from the NTT's definition (slot
    ``k`` = ``a(psi^(2 brv(k) + 1))``, ``reference.expected_limbs``), Montgomery-encoded."""
    plain = reference.expected_limbs(coeffs, ring, Domain.NTT)
    node = buffer_node(rk.to_mont(ring, plain), ring, Domain.NTT, "python")
    return Poly._wrap(node)


def coeffs(rnd: random.Random, ring: RingSpec = RING) -> list[int]:
    """``n`` random coefficients in ``[0, Q)``."""
    return [rnd.randrange(ring.Q) for _ in range(ring.n)]


# --------------------------------------------------------------------------------------------
# values


def value(sink: Node) -> tuple[list[int], ...]:
    """The reference value of every output of ``sink`` (graphs up to ``indexify``)."""
    return reference.evaluate(sink)


def realized(sink: Node, ctx: ScheduleContext, after: str) -> list[list[int]]:
    """Finish the pipeline from the graph after pass ``after``, run it, and read the outputs.

    Each output is read from the buffer ``ctx.becomes_map`` names, by the definition of stored
    words (``reference.read_words``).
    """
    for name in NAMES[NAMES.index(after) + 1 :]:
        sink = apply(name, sink, ctx)
    run_exec_units(make_exec_units(kernels_of(sink)))
    out = []
    for node in ctx.outputs:
        done = ctx.becomes_map[node]
        ring, domain = done.arg.ring, done.arg.domain
        store = done.src[0]
        if store.op is Op.BUFFER:
            words = store.arg.buffer.array
        elif store.op is Op.BUFFER_VIEW:
            base = store.src[0].arg.buffer.array
            words = base[store.arg.offset : store.arg.offset + store.arg.size]
        else:
            raise AssertionError(f"output {node!r} became {done!r}, not a stored value")
        out.append(reference.read_words(np.asarray(words), ring, domain))
    return out


# --------------------------------------------------------------------------------------------
# random programs

#: Rings a random program moves between: views of RING3 and its rescales.
SUBRINGS = {
    RING3: (RingSpec(8, (17, 97)), RingSpec(8, (97, 113)), RingSpec(8, (113,))),
    RingSpec(8, (17, 97)): (RingSpec(8, (17,)), RingSpec(8, (97,))),
    RingSpec(8, (97, 113)): (RingSpec(8, (97,)),),
}


def random_program(seed: int, size: int = 8) -> list[Poly]:
    """A few outputs of a random front-end program over ``RING3`` and the rings below it."""
    rnd = random.Random(seed)
    pools: dict[RingSpec, list[Poly]] = {RING3: []}
    for _ in range(3):
        make = coeff_input if rnd.random() < 0.5 else ntt_input
        pools[RING3].append(make(coeffs(rnd, RING3), RING3))
    made: list[Poly] = []
    for _ in range(size):
        ring = rnd.choice(sorted(pools, key=lambda r: r.moduli))
        pool = pools[ring]
        a, b = rnd.choice(pool), rnd.choice(pool)
        c = rnd.choice([0, 1, -1, 2, 5, ring.Q - 3, rnd.randrange(ring.Q)])
        kind = rnd.randrange(16)
        if kind == 0:
            p = a + b
        elif kind == 1:
            p = a - b
        elif kind == 2:
            p = -a
        elif kind == 3:
            p = a * b
        elif kind == 4:
            p = a * c if rnd.random() < 0.5 else c * a
        elif kind == 5:
            p = a + c if rnd.random() < 0.5 else c - a
        elif kind == 6:
            p = a.ntt()
        elif kind == 7:
            p = a.intt()
        elif kind == 8:
            p = a.rotate(rnd.randrange(1, 4))
        elif kind == 9:
            p = a.conjugate()
        elif kind == 10:
            p = a.contiguous()
        elif kind == 11:
            p = Poly.const(c, ring) + a
        elif kind == 12 and ring.L > 1:
            p = a.rescale()
        elif kind == 13 and ring in SUBRINGS:
            p = a.to_ring(rnd.choice(SUBRINGS[ring]))
        elif kind == 14:
            p = (a - b) * (b + c)
        else:
            p = a.rotate(1) + b.rotate(2)
        pools.setdefault(p.ring, []).append(p)
        made.append(p)
    outputs = rnd.sample(made, k=min(3, len(made)))
    last_is_output = any(p is made[-1] for p in outputs)  # identity: `in` would compare values
    return outputs if last_is_output else [*outputs, made[-1]]


# --------------------------------------------------------------------------------------------
# the two value checks every pass test runs


def front_value(polys: list[Poly]) -> tuple[list[int], ...]:
    """The reference value of the outputs, from the front-end graph."""
    return reference.evaluate(sink_of(*polys))


def check_value_unchanged(name: str, seed: int) -> None:
    """The reference value of the graph before and after pass ``name`` equals the program's."""
    polys = random_program(seed)
    want = front_value(polys)
    before, ctx = prepare(*polys, upto=name)
    after = apply(name, before, ctx)
    assert value(before) == want
    assert value(after) == want


def check_realizes(name: str, seed: int) -> None:
    """The pipeline finished from pass ``name``'s output computes the program's value."""
    polys = random_program(seed)
    want = front_value(polys)
    before, ctx = prepare(*polys, upto=name)
    after = apply(name, before, ctx)
    assert tuple(realized(after, ctx, name)) == want


def graph_after(name: str, seed: int) -> tuple[Node, Node, ScheduleContext]:
    """A random program's graph before and after pass ``name``, and the context."""
    before, ctx = prepare(*random_program(seed), upto=name)
    return before, apply(name, before, ctx), ctx
