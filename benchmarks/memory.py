"""Benchmark: how well the memory planner packs the temporaries of a ``Poly`` program.

Run from the repository root::

    .venv/bin/python benchmarks/memory.py [--out FILE.json] [--quick] [--check]

For each program below it schedules the graph and plans its memory (``schedule`` then
``plan_memory``, exactly as ``realize`` does; no kernel runs) and reports, per device arena:

* ``unshared_bytes``: what the planned buffers would take each in a buffer of its own;
* ``arena_bytes``: the arena TLSF packed them into;
* ``lower_bound_bytes``: the most bytes live at once, which no arena can go below;
* ``ratio``: ``arena_bytes / lower_bound_bytes`` (1.00 is a perfect packing);

plus the number of kernels, of planned buffers and of the buffers that keep their identity
(inputs and outputs). The programs:

* ``chain50``: 50 mixed operations at ``n=4096`` over four 30-bit primes, as a CKKS program mixes
  them: products and sums with fresh inputs and with earlier values, products and sums with
  constants, rotations, ``contiguous()`` materializations, explicit ``intt``/``ntt`` conversions,
  and three rescales that drop a modulus each (the program goes on in the smaller ring, with
  fresh inputs there). Seeded, so the same shape every run.
* ``keyswitch_n4096`` (and ``keyswitch_n8192`` unless ``--quick``): the shape of a hybrid key
  switch. ``c`` over ``Q`` (four 30-bit primes) in coefficient form is cut into one digit per
  modulus (a limb view), each digit is basis-extended to ``QP`` (``P``: two more primes), taken
  to NTT form and multiplied by two NTT-form key polynomials, the products are summed over the
  digits into two accumulators, and each accumulator goes back to coefficients and is divided by
  ``P`` (``rescale``, the ModDown) into ``Q``. Both outputs are realized together.
* ``mul_rescale``: ``(a * b).rescale() + c`` at ``n=4096`` over four 30-bit primes (``c`` one
  modulus down): multiply, rescale, add, the most common CKKS step.
* ``tensor_rescale``: the tensor product of two ciphertexts, ``(c0 d0, c0 d1 + c1 d0, c1 d1)``,
  each part rescaled, the three realized together (same ring).
* ``product_tree``: the product of 16 inputs as a balanced binary tree of products, each product
  rescaled by one modulus (``n=4096``, five 30-bit primes, so four levels fit).
* ``rotation_sum``: the log-step slot sum of CKKS at ``n=4096``: ``s = x``, then
  ``s = (s + s.rotate(k)).contiguous()`` for ``k = 1, 2, 4, ..., n/4`` (each partial sum is
  materialized, as it is before a key switch).

``--check`` also realizes each program twice, once with ``REN_NO_PLAN=1`` (a buffer per
temporary) and once planned with ``REN_POISON=1`` (freed regions overwritten), and exits non-zero
when the outputs differ. The last line printed is ``arena/lower_bound <worst ratio>`` over every
program and arena, with two decimals.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

# Off before Ren reads them: REN_NO_PLAN would leave nothing to measure, REN_POISON is only for
# --check, and the verifier, debug printing and dumps only slow the scheduling down.
#: the variables switched off here -> what the caller had set (None: unset).
SWITCHED_OFF = {
    var: os.environ.pop(var, None)
    for var in ("REN_CHECK", "REN_DEBUG", "REN_DUMP", "REN_NO_PLAN", "REN_POISON")
}

from _machine import machine, machine_line, write_results  # noqa: E402  (benchmarks/ is on sys.path)

import ren  # noqa: E402
from ren.engine.memory import MemoryPlan, plan_memory  # noqa: E402
from ren.engine.schedule import schedule  # noqa: E402
from ren.ir.node import Node, base_buffer  # noqa: E402
from ren.ir.op import DType, Op  # noqa: E402
from ren.poly import Poly  # noqa: E402
from ren.ring import Domain, RingSpec, ntt_primes  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "memory.json"
#: the ring of chain50, the product tree and the rotation sum: n=4096, four 30-bit primes.
RING = RingSpec(4096, ntt_primes(4096, 30, 4))
#: the ring of the product tree: one more prime, so the 16 leaves' four levels can each rescale.
TREE_RING = RingSpec(4096, ntt_primes(4096, 30, 5))
#: timed runs of plan_memory per program (it is pure: each run plans the same schedule afresh).
PLAN_REPEAT = 5


# --------------------------------------------------------------------------------------------
# the programs: each builds fresh inputs and returns the polys to realize together


def chain50(seed: int = 0, steps: int = 50) -> tuple[Poly, ...]:
    """``steps`` mixed operations on one running value ``x``, over fresh inputs (see the module
    docstring); returns ``(x,)``. The second operand of a product or sum is a fresh input half of
    the time, else an earlier value of the same ring (a few steps back, geometrically), so some
    temporaries live long and lifetimes interleave. At steps 12, 25 and 38 ``x`` is rescaled by
    its last modulus."""
    rng = np.random.default_rng(seed)
    x = Poly.uniform(RING, rng)
    history: list[Poly] = [x]  # the values of x's current ring, oldest first
    constants = iter(range(3, 1 << 20, 7919))  # each constant once (see schedule.py's program)

    def other() -> Poly:
        if len(history) < 2 or rng.random() < 0.5:
            return Poly.uniform(x.ring, rng)
        back = min(int(rng.geometric(0.3)), len(history) - 1)
        return history[len(history) - 1 - back]

    for step in range(steps):
        r = rng.random()
        if step in (12, 25, 38):
            x = x.rescale()
            history = []
        elif r < 0.25:
            x = x * other()
        elif r < 0.40:
            x = x + other()
        elif r < 0.52:
            x = x + next(constants)
        elif r < 0.58:
            x = x * next(constants)
        elif r < 0.73:
            x = x.rotate(int(rng.integers(1, RING.n // 2)))
        elif r < 0.85:
            x = x.contiguous()
        else:
            x = x.ntt() if x.domain is Domain.COEFF else x.intt()
        history.append(x)
    return (x,)


def keyswitch(n: int, seed: int = 0) -> tuple[Poly, ...]:
    """A hybrid key switch of ``c`` over ``Q`` with ``dnum = L`` digits (see the module docstring).
    The keys are realized in NTT form first: they are stored values, as a real key is."""
    primes = ntt_primes(n, 30, 6)
    q_moduli, p_moduli = primes[:4], primes[4:]
    Q, QP = RingSpec(n, q_moduli), RingSpec(n, q_moduli + p_moduli)
    rng = np.random.default_rng(seed)
    c = Poly.uniform(Q, rng)
    keys = [
        (Poly.uniform(QP, rng).ntt().realize(), Poly.uniform(QP, rng).ntt().realize())
        for _ in q_moduli
    ]
    acc0 = acc1 = None
    for q, (k0, k1) in zip(q_moduli, keys, strict=True):
        digit = c.to_ring(RingSpec(n, (q,)))  # a limb view of c
        up = digit.to_ring(QP).ntt()  # basis extension ModUp, then to NTT form
        acc0 = up * k0 if acc0 is None else acc0 + up * k0
        acc1 = up * k1 if acc1 is None else acc1 + up * k1
    return acc0.intt().rescale(p_moduli), acc1.intt().rescale(p_moduli)  # ModDown to Q


def product_tree(leaves: int = 16, seed: int = 0) -> tuple[Poly, ...]:
    """The product of ``leaves`` fresh inputs over ``TREE_RING``, multiplied pairwise level by
    level, each product rescaled by one modulus (as CKKS rescales after each multiplication)."""
    rng = np.random.default_rng(seed)
    level = [Poly.uniform(TREE_RING, rng) for _ in range(leaves)]
    while len(level) > 1:
        level = [(a * b).rescale() for a, b in zip(level[::2], level[1::2], strict=True)]
    return (level[0],)


def rotation_sum(seed: int = 0) -> tuple[Poly, ...]:
    """``s = x``, then ``s = (s + s.rotate(k)).contiguous()`` for ``k = 1, 2, 4, ..., n/4``."""
    rng = np.random.default_rng(seed)
    s = Poly.uniform(RING, rng)
    k = 1
    while k < RING.n // 2:
        s = (s + s.rotate(k)).contiguous()
        k *= 2
    return (s,)


def mul_rescale(seed: int = 0) -> tuple[Poly, ...]:
    """``(a * b).rescale() + c``: the most common CKKS step (multiply, rescale, add a value of the
    next level), at ``n=4096`` over four 30-bit primes."""
    rng = np.random.default_rng(seed)
    a, b = Poly.uniform(RING, rng), Poly.uniform(RING, rng)
    c = Poly.uniform(RING.with_moduli(RING.moduli[:-1]), rng)
    return ((a * b).rescale() + c,)


def tensor_rescale(seed: int = 0) -> tuple[Poly, ...]:
    """The tensor product of two ciphertexts ``(c0, c1)`` and ``(d0, d1)``:
    ``(c0 d0, c0 d1 + c1 d0, c1 d1)``, each part rescaled; the three realized together."""
    rng = np.random.default_rng(seed)
    c0, c1, d0, d1 = (Poly.uniform(RING, rng) for _ in range(4))
    parts = (c0 * d0, c0 * d1 + c1 * d0, c1 * d1)
    return tuple(p.rescale() for p in parts)


def programs(quick: bool) -> dict[str, Callable[[], tuple[Poly, ...]]]:
    """The programs to measure, by name."""
    out: dict[str, Callable[[], tuple[Poly, ...]]] = {
        "chain50": chain50,
        "keyswitch_n4096": lambda: keyswitch(4096),
    }
    if not quick:
        out["keyswitch_n8192"] = lambda: keyswitch(8192)
    out["mul_rescale"] = mul_rescale
    out["tensor_rescale"] = tensor_rescale
    out["product_tree"] = product_tree
    out["rotation_sum"] = rotation_sum
    return out


# --------------------------------------------------------------------------------------------
# measuring


def plan_of(polys: tuple[Poly, ...]) -> tuple[list, MemoryPlan, float]:
    """Schedule ``polys`` together and plan their memory, as ``realize`` does; nothing runs.

    Returns the schedule (before planning), the plan, and the median seconds of ``plan_memory``.
    """
    sink = Node(Op.SINK, DType.VOID, tuple(p.node for p in polys))
    sched, ctx = schedule(sink)
    outputs = tuple(base_buffer(n).arg.buffer for n in ctx.becomes_map.values())
    times, plan = [], MemoryPlan()
    for _ in range(PLAN_REPEAT):
        start = time.perf_counter()
        _planned, plan = plan_memory(sched, outputs)
        times.append(time.perf_counter() - start)
    return sched, plan, statistics.median(times)


def measure(build: Callable[[], tuple[Poly, ...]]) -> dict[str, object]:
    """The plan of one program: kernels, buffers and each device's arena."""
    polys = build()
    sched, plan, plan_s = plan_of(polys)
    buffers = {id(b): b for k in sched for b in k.bufs}
    planned = sum(len(d.buffers) for d in plan.devices)
    return {
        "outputs": len(polys),
        "rings": sorted({f"n={p.ring.n} L={p.ring.L}" for p in polys}),
        "kernels": len(sched),
        "buffers": len(buffers),
        "planned_buffers": planned,
        "kept_buffers": len(buffers) - planned,
        "plan_memory_median_s": plan_s,
        "devices": {
            d.device: {
                "unshared_bytes": d.unshared_bytes,
                "arena_bytes": d.arena_bytes,
                "lower_bound_bytes": d.lower_bound_bytes,
                "ratio": d.arena_bytes / d.lower_bound_bytes if d.lower_bound_bytes else 1.0,
                "planned_buffers": len(d.buffers),
                "events": len(d.events),
            }
            for d in plan.devices
        },
    }


def check(build: Callable[[], tuple[Poly, ...]]) -> bool:
    """Realize the program unplanned and planned (with poison); whether the outputs agree."""
    results = []
    for env in ({"REN_NO_PLAN": "1"}, {"REN_POISON": "1"}):
        os.environ.update(env)
        try:
            polys = ren.realize(*build())
            results.append([p.limbs() for p in polys])
        finally:
            for var in env:
                del os.environ[var]
    return all(np.array_equal(a, b) for a, b in zip(*results, strict=True))


# --------------------------------------------------------------------------------------------
# the report


def _kib(n: int) -> str:
    return f"{n / 1024:10.1f}"


def print_table(results: dict[str, object]) -> None:
    given = ", ".join(f"{k}={v}" for k, v in results["environment"]["given"].items() if v)
    print("Ren memory plans: bytes in KiB; ratio = arena / lower bound (1.00 is perfect)")
    print(f"{', '.join(SWITCHED_OFF)} off{f' (given: {given})' if given else ''}")
    print()
    print(
        f"{'program':<16} {'device':<7} {'kernels':>7} {'planned':>7} {'kept':>5} "
        f"{'unshared':>10} {'arena':>10} {'lower':>10} {'ratio':>6} {'plan ms':>8}"
        + ("  check" if results["check"] else "")
    )
    for name, row in results["programs"].items():
        for device, d in row["devices"].items():
            ok = {True: "  ok", False: "  DIFFERS", None: ""}[row.get("check")]
            print(
                f"{name:<16} {device:<7} {row['kernels']:>7} {d['planned_buffers']:>7} "
                f"{row['kept_buffers']:>5} {_kib(d['unshared_bytes'])} {_kib(d['arena_bytes'])} "
                f"{_kib(d['lower_bound_bytes'])} {d['ratio']:>6.2f} "
                f"{row['plan_memory_median_s'] * 1e3:>8.2f}{ok}"
            )
    print()
    m = results["machine"]
    print(machine_line(m))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks/memory.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    parser.add_argument(
        "--quick", action="store_true", help="leave out the n=8192 key switch (for tests)"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="also realize each program unplanned and planned (poisoned) and compare the outputs",
    )
    args = parser.parse_args(argv)

    progs = programs(args.quick)
    rows = {name: measure(build) for name, build in progs.items()}
    if args.check:
        for name, build in progs.items():
            rows[name]["check"] = check(build)
    ratios = [d["ratio"] for row in rows.values() for d in row["devices"].values()]
    results = {
        "benchmark": "memory",
        "quick": args.quick,
        "check": args.check,
        "environment": {"switched_off": list(SWITCHED_OFF), "given": SWITCHED_OFF},
        "machine": machine(),
        "programs": rows,
        "worst_ratio": max(ratios, default=1.0),
    }
    print_table(results)
    write_results(results, args.out)
    print(f"arena/lower_bound {results['worst_ratio']:.2f}")
    failed = [name for name, row in rows.items() if row.get("check") is False]
    if failed:
        print(f"planned and unplanned outputs differ: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
