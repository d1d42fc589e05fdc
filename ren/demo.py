"""Ren's demo: build a lazy polynomial program, print its graph and kernels, realize it.

Run it with ``bash scripts/demo.sh`` (or ``python -m ren.demo``). The program is
``(a + b) * (a - 1)`` in ``Z_Q[X]/(X^8 + 1)`` with ``Q = 17 * 97``. Building it runs nothing; the
demo prints the lazy graph, the kernels the scheduler makes of it, then realizes it on the NumPy
backend and checks the coefficients against the reference evaluator (Python integers, the
definition of every op).
"""

from __future__ import annotations

import argparse

from ren.engine.schedule import schedule
from ren.ir import DType, Node, Op
from ren.poly import Poly
from ren.reference import evaluate
from ren.ring import RingSpec


def main(argv: list[str] | None = None) -> int:
    """Run the demo with the command-line arguments ``argv`` (default: ``sys.argv[1:]``).

    Returns:
        The exit status: 0 when the realized coefficients agree with the reference evaluator,
        1 when they do not.
    """
    parser = argparse.ArgumentParser(prog="python -m ren.demo", description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=8, help="ring degree (a power of two)")
    parser.add_argument("--moduli", type=int, nargs="+", default=[17, 97], help="RNS moduli")
    args = parser.parse_args(argv)

    ring = RingSpec(n=args.n, moduli=tuple(args.moduli))
    a = Poly(list(range(1, ring.n + 1)), ring)
    b = Poly(list(range(ring.n, 0, -1)), ring)
    expr = (a + b) * (a - 1)
    print(f"ring: {ring}  (Q = {ring.Q})")
    print("program: (a + b) * (a - 1)")
    print(f"result: {expr!r}\n")
    print("lazy graph (nothing has run yet):")
    print(expr.node)

    kernels, _ = schedule(Node(Op.SINK, DType.VOID, (expr.node,)))
    print(f"\nscheduled kernels ({len(kernels)}):")
    for k in kernels:
        print(f"  {k.info.name:<28} {k.info.kind:<12} writes {k.info.domain.value} form")

    reference = evaluate(expr.node)
    expr.realize()
    print(f"\nrealized: {expr!r}")
    print(f"  coefficients: {expr.tolist()}")
    print(f"  centered:     {expr.tolist(centered=True)}")
    print(f"  limbs (NTT slots mod {ring.moduli}): {expr.limbs().tolist()}")
    print(f"reference evaluator (Python integers): {reference}")
    same = expr.tolist() == reference
    print(f"\nagree: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
