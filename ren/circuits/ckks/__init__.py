"""CKKS circuits: hoisted rotations, slot sums, linear transforms and polynomial evaluation.

Each circuit is written only with the public CKKS and ``Poly`` API, so it builds one lazy graph:
the scheduler fuses it, the planner packs it and ``ren.jit`` captures it whole. Each names its
region (``ren.region``), so the report and the debugger show which kernels it made.

They are also reachable from the scheme, ``ckks.rotate_many``, ``ckks.LinearTransform``,
``ckks.evaluate_polynomial``, ``ckks.BootstrapConfig`` and so on, and bootstrapping backs three
of its methods (``Params.preset``, ``Ciphertext.bootstrap``, ``Context.bootstrap_keys``): this
package registers each with ``ren.schemes.ckks.registry`` as it loads, so the scheme floor never
imports this one. ``import ren`` loads it.

``chebyshev`` here is the fit, ``chebyshev.chebyshev``; the module of that name (the fit, the map
of an interval, the division by ``T_m``) is imported by its path:
``from ren.circuits.ckks.chebyshev import divide``. Likewise ``bootstrap`` is the function; its
module (``plan``, the stages) is ``importlib.import_module("ren.circuits.ckks.bootstrap")``.
"""

from ren.circuits.ckks import functions, linear, polynomial, rotations
from ren.circuits.ckks.bootconfig import PRESETS, BootstrapConfig, preset
from ren.circuits.ckks.bootstrap import bootstrap, bootstrap_keys
from ren.circuits.ckks.chebyshev import chebyshev
from ren.circuits.ckks.functions import evaluate_function
from ren.circuits.ckks.linear import LinearTransform
from ren.circuits.ckks.polynomial import evaluate_polynomial
from ren.circuits.ckks.rotations import inner_product, rotate_many, sum_slots, sum_slots_rotations
from ren.schemes.ckks.registry import register

__all__ = [
    "BootstrapConfig",
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

register(
    BootstrapConfig=BootstrapConfig,
    LinearTransform=LinearTransform,
    PRESETS=PRESETS,
    bootstrap=bootstrap,
    bootstrap_keys=bootstrap_keys,
    chebyshev=chebyshev,
    evaluate_function=evaluate_function,
    evaluate_polynomial=evaluate_polynomial,
    functions=functions,
    inner_product=inner_product,
    preset=preset,
    rotate_many=rotate_many,
    sum_slots=sum_slots,
    sum_slots_rotations=sum_slots_rotations,
)
