"""Ren: a lazy polynomial execution engine for lattice cryptography.

``Poly`` values over RNS rings build a graph; realizing them schedules the graph into kernels
that a backend runs. See ``docs/`` for the conventions and the pipeline.
"""

from ren.poly import Poly, realize
from ren.ring import Domain, RingSpec, ntt_primes

__all__ = ["Domain", "Poly", "RingSpec", "ntt_primes", "realize"]
