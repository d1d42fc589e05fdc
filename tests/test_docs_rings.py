"""The worked example in ``docs/rings.md``, recomputed from the definitions.

Every number the example shows is recomputed here with Python integers straight from the
conventions (NTT slots by direct evaluation at the odd powers of ``psi``, products by the schoolbook
negacyclic rule, rescale by exact rational rounding), rendered the way the page renders it, and
looked up in the page line by line, so the page cannot drift from the conventions. A second test
checks that ``ren.ring`` agrees with the same numbers, and the last ones that ``Poly`` programs
compute them (through the reference evaluator, and through ``tolist()`` once the engine exists).

``python -m tests.test_docs_rings`` (from the repository root) prints the rendered lines, to paste
into the page after a change.
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

from ren import ring as ren_ring
from tests.oracles import (
    automorphism,
    brv,
    centered,
    negacyclic,
    ntt_slots,
    rounded_div,
    slot_point,
)

PAGE = Path(__file__).resolve().parents[1] / "docs" / "rings.md"

N = 8
MODULI = (17, 97)
Q = math.prod(MODULI)
BITS = 3  # log2(N)
R = 2**32  # every modulus < 2**30, so the ring is u32
A = [1, 2, 3, 4, 5, 6, 7, 8]
B = [8, 7, 6, 5, 4, 3, 2, 1]
G = 5  # the Galois element of rotate(1): 5**1 mod 2n
C = [0, 48, 49, -48, -49, 500, -500, 824]  # the rescale input, user integers
MONT_X, MONT_Y = 2, 7  # the Montgomery product example


# --------------------------------------------------------------------------------------------
# the definitions, with Python ints only (the shared ones come from tests/oracles.py)


def primitive_roots(q: int) -> list[int]:
    """Every primitive ``2n``-th root of unity mod ``q``: since ``2n`` is a power of two, ``x``
    has order exactly ``2n`` iff ``x**n = -1 (mod q)``."""
    return [x for x in range(1, q) if pow(x, N, q) == q - 1]


def psi(q: int) -> int:
    """The smallest primitive ``2n``-th root of unity mod ``q``."""
    return min(primitive_roots(q))


def ntt_permutation(g: int) -> list[int]:
    """``out[k] = in[perm[k]]`` with ``perm[k] = brv(((g*(2*brv(k)+1)) mod 2n - 1) / 2)``."""
    return [brv((g * (2 * brv(k, BITS) + 1) % (2 * N) - 1) // 2, BITS) for k in range(N)]


def mont(x: int, q: int) -> int:
    """Montgomery form ``x * R mod q``."""
    return x * R % q


def mod(a: list[int], q: int) -> list[int]:
    return [x % q for x in a]


# --------------------------------------------------------------------------------------------
# the page's lines, rendered from the definitions


def row(label: str, values) -> str:
    """One markdown table row: ``| label | v0 | v1 | ... |``."""
    return "| " + " | ".join([label, *(str(v) for v in values)]) + " |"


def rendered_lines() -> list[str]:
    """Every line of the worked example that carries a computed number."""
    q0, q1 = MODULI
    lines = [
        f"`Q = 17 * 97 = {Q}`",
        row("primitive 16th roots", [", ".join(map(str, primitive_roots(q))) for q in MODULI]),
        row("`psi` (the smallest)", [psi(q) for q in MODULI]),
        row("`psi^-1 mod q`", [pow(psi(q), -1, q) for q in MODULI]),
        row("`n^-1 mod q`", [pow(N, -1, q) for q in MODULI]),
        row("`R mod q` (one, in Montgomery form)", [R % q for q in MODULI]),
        row("`R^2 mod q`", [R * R % q for q in MODULI]),
        row("`R^-1 mod q`", [pow(R, -1, q) for q in MODULI]),
        row("`q^-1 mod R`", [pow(q, -1, R) for q in MODULI]),
        row("`brv(k)`", [brv(k, BITS) for k in range(N)]),
        row("exponent `2*brv(k)+1`", [2 * brv(k, BITS) + 1 for k in range(N)]),
        row(f"point mod {q0}", [slot_point(k, N, q0, psi(q0)) for k in range(N)]),
        row(f"point mod {q1}", [slot_point(k, N, q1, psi(q1)) for k in range(N)]),
    ]
    for name, poly in (("a", A), ("b", B)):
        for q in MODULI:
            lines += [
                row(f"`{name}` mod {q}", mod(poly, q)),
                row(f"`{name}` words mod {q}", [mont(x, q) for x in mod(poly, q)]),
                row(f"`{name}` slots mod {q}", ntt_slots(poly, q, psi(q))),
                row(
                    f"`{name}` NTT words mod {q}", [mont(x, q) for x in ntt_slots(poly, q, psi(q))]
                ),
            ]
    words = [mont(x, q) for q in MODULI for x in mod(A, q)]  # limb-major: row 0, then row 1
    lines.append(f"the 16 `u32` words `{' '.join(map(str, words))}`, row 0 then row 1")
    ab = negacyclic(A, B)
    lines.append(row("`a*b` in `Z[X]/(X^8+1)`", ab))
    for q in MODULI:
        sa, sb = ntt_slots(A, q, psi(q)), ntt_slots(B, q, psi(q))
        lines += [
            row(f"`a*b` mod {q}", mod(ab, q)),
            row(f"slot products mod {q}", [x * y % q for x, y in zip(sa, sb, strict=True)]),
            row(f"`a*b` slots mod {q}", ntt_slots(ab, q, psi(q))),
        ]
    lines += [
        row("`tolist()`", [x % Q for x in ab]),
        row("`tolist(centered=True)`", [centered(x, Q) for x in ab]),
    ]
    for q in MODULI:
        x, y = mont(MONT_X, q), mont(MONT_Y, q)
        lines.append(row(f"q = {q}", [x, y, x * y * pow(R, -1, q) % q, mont(MONT_X * MONT_Y, q)]))
    a_plus_b = [x + y for x, y in zip(A, B, strict=True)]
    a_minus_1 = [A[0] - 1, *A[1:]]
    expr = negacyclic(a_plus_b, a_minus_1)
    lines += [
        row("`a + b`", a_plus_b),
        row("`a - 1`", a_minus_1),
        row("`(a + b) * (a - 1)` in `Z[X]/(X^8+1)`", expr),
        row("`expr.tolist()`", [x % Q for x in expr]),
    ]
    sigma = automorphism(A, G)
    lines += [
        row("`i*5 mod 16`", [i * G % (2 * N) for i in range(N)]),
        row("`sigma_5(a)`", sigma),
        *(row(f"`sigma_5(a)` mod {q}", mod(sigma, q)) for q in MODULI),
        row("`perm[k]`", ntt_permutation(G)),
    ]
    for q in MODULI:
        sa = ntt_slots(A, q, psi(q))
        lines += [
            row(f"`a` slots at `perm` mod {q}", [sa[p] for p in ntt_permutation(G)]),
            row(f"`sigma_5(a)` slots mod {q}", ntt_slots(sigma, q, psi(q))),
        ]
    lines.append(row("`sigma_15(a)` (conjugation)", automorphism(A, 2 * N - 1)))
    lines += [
        row("`c` (given)", C),
        *(row(f"`c` mod {q}", mod(C, q)) for q in MODULI),
        row("`c_c` (centered mod 1649)", [centered(x, Q) for x in C]),
        row("`c_c / 97`", [str(Fraction(centered(x, Q), q1)) for x in C]),
        row("`floor(c_c/97 + 1/2)`", [rounded_div(centered(x, Q), q1) for x in C]),
        row(
            f"`c.rescale()` mod {q0}",
            [rounded_div(centered(x, Q), q1) % q0 for x in C],
        ),
    ]
    return lines


# --------------------------------------------------------------------------------------------
# the tests


def test_worked_example_numbers_are_on_the_page():
    text = PAGE.read_text(encoding="utf-8")
    page_lines = {line.strip() for line in text.splitlines()}
    # A table row must be a whole line of the page; an inline formula may sit anywhere in it.
    missing = [
        line
        for line in rendered_lines()
        if (line not in page_lines if line.startswith("|") else line not in text)
    ]
    assert not missing, "docs/rings.md disagrees with the definitions:\n" + "\n".join(missing)


def test_definitions_hold_on_the_example():
    # psi is a primitive 2n-th root, the slot-wise product is the negacyclic product, and the NTT
    # permutation is the automorphism: the example's numbers are consistent with each other.
    for q in MODULI:
        p = psi(q)
        assert pow(p, 2 * N, q) == 1 and pow(p, N, q) == q - 1
        ab = negacyclic(A, B)
        sa, sb = ntt_slots(A, q, p), ntt_slots(B, q, p)
        assert ntt_slots(ab, q, p) == [x * y % q for x, y in zip(sa, sb, strict=True)]
        perm = ntt_permutation(G)
        assert ntt_slots(automorphism(A, G), q, p) == [sa[k] for k in perm]
    assert sorted(brv(k, BITS) for k in range(N)) == list(range(N))


def test_ren_ring_agrees_with_the_example():
    spec = ren_ring.RingSpec(n=N, moduli=MODULI)
    assert spec.dtype == "u32" and spec.word_bits == 32 and spec.Q == Q
    for q in MODULI:
        assert ren_ring.primitive_root_2n(q, N) == psi(q)
        t = ren_ring.ModulusTables.make(q, N, 32)
        assert (t.psi, t.psi_inv, t.n_inv) == (psi(q), pow(psi(q), -1, q), pow(N, -1, q))
        assert (t.r_mod_q, t.r2_mod_q, t.q_inv) == (R % q, R * R % q, pow(q, -1, R))
    assert [ren_ring.bit_reverse(k, BITS) for k in range(N)] == [brv(k, BITS) for k in range(N)]
    assert ren_ring.galois_for_rotation(N, 1) == G
    dest, negate = ren_ring.automorphism_coeff_table(N, G)
    assert [int(d) for d in dest] == [i * G % (2 * N) % N for i in range(N)]
    assert [bool(x) for x in negate] == [i * G % (2 * N) >= N for i in range(N)]
    assert [int(p) for p in ren_ring.automorphism_ntt_table(N, G)] == ntt_permutation(G)


def test_reference_evaluator_computes_the_example():
    from ren import reference
    from ren.poly import Poly

    spec = ren_ring.RingSpec(n=N, moduli=MODULI)
    a, b = Poly(A, spec), Poly(B, spec)
    expr = negacyclic([x + y for x, y in zip(A, B, strict=True)], [A[0] - 1, *A[1:]])
    assert reference.evaluate((a * b).node) == [x % Q for x in negacyclic(A, B)]
    assert reference.evaluate(((a + b) * (a - 1)).node) == [x % Q for x in expr]
    assert reference.evaluate(a.rotate(1).node) == [x % Q for x in automorphism(A, G)]
    assert reference.evaluate(a.conjugate().node) == [x % Q for x in automorphism(A, 2 * N - 1)]
    rescaled = [rounded_div(centered(x, Q), MODULI[1]) % 17 for x in C]
    assert reference.evaluate(Poly(C, spec).rescale().node) == rescaled


if __name__ == "__main__":
    print("\n".join(rendered_lines()))
