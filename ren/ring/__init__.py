"""Rings, domains, NTT-friendly primes, Montgomery constants and the per-ring tables.

A ring is ``Z_Q[X]/(X^n + 1)`` held in RNS form: ``Q = q_0 * q_1 * ... * q_{L-1}``, each ``q_i`` a
distinct prime with ``q_i = 1 (mod 2n)`` so that a negacyclic NTT of length ``n`` exists modulo it.

Conventions fixed here (see ``docs/rings.md``):

* Stored words are in Montgomery form ``x * R mod q`` with ``R = 2**32`` (``u32``) or ``2**64``
  (``u64``), and lie in ``[0, q)``.
* ``psi`` is the *smallest* primitive ``2n``-th root of unity modulo ``q``. In NTT form slot ``k``
  holds ``a(psi**(2*brv(k) + 1)) mod q`` where ``brv`` reverses ``log2(n)`` bits (the order of a
  Cooley-Tukey negacyclic NTT with merged twiddles, and the order Microsoft SEAL uses).
* The automorphism ``sigma_g`` maps ``a(X)`` to ``a(X**g)`` for odd ``g``.

The ring floor holds no graph: ``spec`` (``RingSpec``, ``Domain``), ``primes`` (number theory),
``tables`` (twiddles, Montgomery constants, automorphism permutations), ``arith`` (the NumPy
reference of every ring kernel) and ``sampling`` (random polynomials). Every floor above builds
on it.
"""

from ren.ring.primes import generator_root_2n, is_prime, ntt_primes, primitive_root_2n
from ren.ring.spec import DTYPE_LIMIT_BITS, DTYPE_WORD_BITS, NUMPY_DTYPES, Domain, RingSpec
from ren.ring.tables import (
    ModulusTables,
    RingTables,
    automorphism_coeff_table,
    automorphism_ntt_table,
    bit_reverse,
    galois_for_rotation,
)

__all__ = [
    "DTYPE_LIMIT_BITS",
    "DTYPE_WORD_BITS",
    "NUMPY_DTYPES",
    "Domain",
    "ModulusTables",
    "RingSpec",
    "RingTables",
    "automorphism_coeff_table",
    "automorphism_ntt_table",
    "bit_reverse",
    "galois_for_rotation",
    "generator_root_2n",
    "is_prime",
    "ntt_primes",
    "primitive_root_2n",
]
