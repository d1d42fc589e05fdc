"""The test oracles checked against a second, independent derivation.

``automorphism`` moves each coefficient; here ``a(X**g)`` is built the long way, by multiplying out
``(X**g)**i`` with the schoolbook product and summing, so the two must agree.
"""

import random

import pytest

from tests.oracles import automorphism, negacyclic


def substitute(a: list[int], g: int) -> list[int]:
    """``sum_i a_i * (X**g)**i`` in ``Z[X]/(X^n + 1)``, by repeated negacyclic products."""
    n = len(a)
    one, x = [1] + [0] * (n - 1), [0, 1] + [0] * (n - 2)
    x_to_g = one
    for _ in range(g):  # X**g by g products with X
        x_to_g = negacyclic(x_to_g, x)
    out, term = [0] * n, one
    for c in a:  # term = (X**g)**i
        out = [o + c * t for o, t in zip(out, term, strict=True)]
        term = negacyclic(term, x_to_g)
    return out


@pytest.mark.parametrize("n", [2, 4, 8, 16])
def test_automorphism_oracle_is_substitution(n):
    rnd = random.Random(n)
    a = [rnd.randrange(-50, 51) for _ in range(n)]
    for g in range(1, 2 * n, 2):
        assert automorphism(a, g) == substitute(a, g), f"g={g}"
