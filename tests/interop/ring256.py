"""What the ML-KEM and ML-DSA tests share: inputs and the schoolbook oracle, for ``n = 256``."""

from __future__ import annotations

from hypothesis import strategies as st

N = 256


def polys(q: int) -> st.SearchStrategy[list[int]]:
    """Random polynomials: 256 residues in ``[0, q)``."""
    return st.lists(st.integers(0, q - 1), min_size=N, max_size=N)


def edges(q: int, step: int) -> dict[str, list[int]]:
    """Edge inputs: zero, all ``q - 1``, alternating, ``X^255``, and a ramp of ``step``."""
    return {
        "zero": [0] * N,
        "all_q-1": [q - 1] * N,
        "alternating": [0, q - 1] * (N // 2),
        "X^255": [0] * (N - 1) + [1],
        "ramp": [i * step % q for i in range(N)],
    }


def schoolbook(f: list[int], g: list[int], q: int) -> list[int]:
    """``f g mod (X^256 + 1, q)`` with Python integers."""
    h = [0] * (2 * N)
    for i, a in enumerate(f):
        for j, b in enumerate(g):
            h[i + j] += a * b
    return [(h[i] - h[i + N]) % q for i in range(N)]
