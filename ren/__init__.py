"""Ren: a lazy polynomial execution engine for lattice cryptography.

``Poly`` values over RNS rings build a graph; realizing them schedules the graph into kernels
that a backend runs. See ``docs/`` for the conventions and the pipeline.
"""

from ren.engine.jit import clear_jit, jit
from ren.errors import JitError
from ren.poly import Poly, realize
from ren.ring import Domain, RingSpec, ntt_primes

__all__ = ["Domain", "JitError", "Poly", "RingSpec", "clear_jit", "jit", "ntt_primes", "realize"]
