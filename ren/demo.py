"""Ren's demo: build a lazy polynomial program, print its graph, and compute its value twice.

Run it with ``bash scripts/demo.sh`` (or ``python -m ren.demo``). The program is
``(a + b) * (a - 1)`` in ``Z_Q[X]/(X^8 + 1)`` with ``Q = 17 * 97``. Building it runs nothing; the
demo then computes the value with the reference evaluator (Python integers, the definition of every
op) and with the NumPy ring kernels (Montgomery words, negacyclic NTT, pointwise product, inverse
NTT), and checks they agree.
"""

from __future__ import annotations

import argparse

import numpy as np

from ren.backends import ring_kernels as rk
from ren.poly import Poly
from ren.reference import evaluate, read_words
from ren.ring import Domain, RingSpec


def _words(p: Poly) -> np.ndarray:
    """The ``(L, n)`` Montgomery words of a poly built from coefficients."""
    buf = p.node.src[0].arg.buffer
    return buf.array.reshape(len(p.ring.moduli), p.ring.n)


def main(argv: list[str] | None = None) -> int:
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

    reference = evaluate(expr.node)
    print("\nreference evaluator (Python integers):")
    print(f"  {reference}")

    # The same value with the NumPy ring kernels, the way a fused NTT-form kernel computes it.
    one = rk.encode_coeffs(ring, [1] + [0] * (ring.n - 1))
    lhs = rk.ntt(ring, rk.add(ring, _words(a), _words(b)))
    rhs = rk.ntt(ring, rk.sub(ring, _words(a), one))
    words = rk.intt(ring, rk.mont_mul(ring, lhs, rhs))
    kernels = rk.crt(ring, words)
    print("NumPy ring kernels (Montgomery words, NTT, pointwise product, inverse NTT):")
    print(f"  {kernels}")
    print(f"  limbs mod {ring.moduli}: {rk.from_mont(ring, words).tolist()}")

    same = kernels == reference == read_words(words.reshape(-1), ring, Domain.COEFF)
    print(f"\nagree: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
