"""The Homomorphic Encryption Standard's bounds for 128-bit security, and the check of a chain.

A chain is secure here when its secret is uniform ternary, ``log2(QP)`` is at most the table's
bound at its ``n``, and its error deviation is at least the table's. ``insecure=True`` (tests,
teaching, experiments) opts out of the check, never silently.
"""

from __future__ import annotations

import math

__all__ = ["MIN_SIGMA", "SECURITY_BOUNDS", "check_security"]

#: The largest ``log2(QP)`` for 128-bit security with a uniform ternary secret, from the
#: Homomorphic Encryption Standard (Albrecht et al., 2018, table of classical attacks); its table
#: stops at 32768, and 65536 takes the bound the same estimates give there (1747, as OpenFHE's
#: ``HEStd_128_classic`` table).
SECURITY_BOUNDS: dict[int, int] = {
    1024: 27,
    2048: 54,
    4096: 109,
    8192: 218,
    16384: 438,
    32768: 881,
    65536: 1747,
}

#: The smallest error deviation the table holds for: ``8 / sqrt(2 pi) = 3.19...``, the HE
#: standard's. A smaller error gives the secret key away (with none, ``s = -b/a`` slot by slot).
MIN_SIGMA: float = 8 / math.sqrt(2 * math.pi)


def check_security(n: int, log2_qp: float, hamming_weight: int | None, sigma: float) -> None:
    """The HE standard's rule for 128-bit security: ternary secret, table bound, sigma.

    Raises:
        ValueError: a sparse secret, an ``n`` outside the table, ``log2(QP)`` above the bound
            or ``sigma`` below 3.19, each naming the value, the rule and the opt-in.
    """
    if hamming_weight is not None:
        raise ValueError(
            f"hamming_weight={hamming_weight}: the HE-standard table covers uniform "
            "ternary secrets only, and a sparse secret is easier to attack; pass "
            "insecure=True to use one (for tests, teaching and experiments)"
        )
    bound = SECURITY_BOUNDS.get(n)
    if bound is None:
        raise ValueError(
            f"n={n} has no entry in the HE-standard table (n = 1024 ... 65536); pass "
            "insecure=True to use it anyway (for tests and teaching only)"
        )
    if log2_qp > bound:
        raise ValueError(
            f"log2(QP)={log2_qp:.1f} exceeds {bound}, the HE-standard bound for "
            f"128-bit security at n={n} with a ternary secret; use fewer or smaller "
            "moduli, a larger n, or insecure=True (for tests and teaching only)"
        )
    if sigma < MIN_SIGMA:
        raise ValueError(
            f"sigma={sigma!r} is below 3.19 (8/sqrt(2*pi) = {MIN_SIGMA:.4f}), the "
            "HE standard's smallest error deviation: with a smaller error the public key "
            "gives the secret key away (with no error, s = -b/a slot by slot); use sigma >= "
            "3.19 (the default is 3.2), or insecure=True (for tests and teaching only)"
        )
