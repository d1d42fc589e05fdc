"""CKKS circuits: hoisted rotations, slot sums, linear transforms and polynomial evaluation.

Each circuit is written only with the public CKKS and ``Poly`` API, so it builds one lazy graph:
the scheduler fuses it, the planner packs it and ``ren.jit`` captures it whole. Each names its
region (``ren.region``), so the report and the debugger show which kernels it made. They are also
reachable from the scheme: ``ckks.rotate_many``, ``ckks.LinearTransform``,
``ckks.evaluate_polynomial`` and so on.
"""

from ren.circuits.ckks import functions, linear, polyeval, rotations
from ren.circuits.ckks.linear import LinearTransform
from ren.circuits.ckks.polyeval import chebyshev, evaluate_polynomial
from ren.circuits.ckks.rotations import inner_product, rotate_many, sum_slots, sum_slots_rotations

__all__ = [
    "LinearTransform",
    "chebyshev",
    "evaluate_polynomial",
    "functions",
    "inner_product",
    "linear",
    "polyeval",
    "rotate_many",
    "rotations",
    "sum_slots",
    "sum_slots_rotations",
]
