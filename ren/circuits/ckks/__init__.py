"""CKKS circuits: hoisted rotations, slot sums, linear transforms and polynomial evaluation.

Each circuit is written only with the public CKKS and ``Poly`` API, so it builds one lazy graph:
the scheduler fuses it, the planner packs it and ``ren.jit`` captures it whole. Each names its
region (``ren.region``), so the report and the debugger show which kernels it made. They are also
reachable from the scheme: ``ckks.rotate_many``, ``ckks.LinearTransform``,
``ckks.evaluate_polynomial`` and so on.

``chebyshev`` here is the fit, ``chebyshev.chebyshev``; the module of that name (the fit, the map
of an interval, the division by ``T_m``) is imported by its path:
``from ren.circuits.ckks.chebyshev import divide``. Likewise ``bootstrap`` is the function; its
module (``plan``, the stages) is ``importlib.import_module("ren.circuits.ckks.bootstrap")``.
"""

from ren.circuits.ckks import functions, linear, polynomial, rotations
from ren.circuits.ckks.bootstrap import bootstrap, bootstrap_keys
from ren.circuits.ckks.chebyshev import chebyshev
from ren.circuits.ckks.functions import evaluate_function
from ren.circuits.ckks.linear import LinearTransform
from ren.circuits.ckks.polynomial import evaluate_polynomial
from ren.circuits.ckks.rotations import inner_product, rotate_many, sum_slots, sum_slots_rotations

__all__ = [
    "LinearTransform",
    "bootstrap",
    "bootstrap_keys",
    "chebyshev",
    "evaluate_function",
    "evaluate_polynomial",
    "functions",
    "inner_product",
    "linear",
    "polynomial",
    "rotate_many",
    "rotations",
    "sum_slots",
    "sum_slots_rotations",
]
