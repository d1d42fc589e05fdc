"""The conformance kit's generated cases: seeded random fused programs and edge values."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import numpy as np

from ren.poly import Poly
from ren.ring import RingSpec, ntt_primes
from ren.testing.families import basis_targets
from ren.testing.rings import Case, Inputs, case, make_ring, sub_seed

# --- random programs ---------------------------------------------------------------------------


#: The ops of random programs, with their weights.
_RANDOM_OPS = {"binary": 8, "const": 4, "ntt": 2, "intt": 2, "rotate": 2, "neg": 1}
_RANDOM_OPS |= {"conjugate": 1, "rescale": 1, "to_ring": 1, "contiguous": 1}


def _constant(rnd: random.Random, ring: RingSpec) -> int:
    """A nonzero constant, often one that kernels get wrong."""
    Q = ring.Q
    edges = [1, 2, 3, -1, -2, Q - 1, Q // 2, ring.moduli[0] - 1]
    return rnd.choice([*edges, rnd.randrange(1, Q), rnd.randrange(1, 1 << 70)])


def random_program(
    ring: RingSpec, device: str, seed: int, max_ops: int = 30
) -> tuple[list[tuple[str, Poly]], str]:
    """A seeded random fused program on ``device``: its labelled outputs and its text.

    Three inputs (two in coefficient form, one in NTT form) go through 5 to ``max_ops`` ops drawn
    from ``+ - *`` (of two values of one ring), negation, constants, ``ntt``, ``intt``, rotations,
    conjugation, rescaling, ``to_ring`` (views and basis extensions) and ``contiguous``. The values
    no other op uses (at most six, the last value first) are the outputs, realized together. The
    same ``seed`` gives the same program, with the same input values, on every device.

    Returns:
        ``([(name, poly), ...], text)``, the text one line per value: ``v3 = v1 * v2``.
    """
    rnd = random.Random(seed)
    inputs = Inputs(ring, seed, device)
    vals: list[Poly] = [inputs.coeff(0), inputs.ntt(1), inputs.coeff(2)]
    lines = ["v0 = input (coeff)", "v1 = input (ntt)", "v2 = input (coeff)"]
    used: set[int] = set()

    def pick() -> int:
        k = len(vals)
        return k - 1 - rnd.randrange(min(k, 3)) if rnd.random() < 0.6 else rnd.randrange(k)

    def partner(i: int) -> int | None:
        same = [j for j, v in enumerate(vals) if v.ring == vals[i].ring and j != i]
        return rnd.choice(same) if same else None

    for _ in range(rnd.randint(5, max(5, max_ops))):
        i = pick()
        x, r = vals[i], vals[i].ring
        kind = rnd.choices(list(_RANDOM_OPS), weights=list(_RANDOM_OPS.values()))[0]
        if kind == "binary" and (j := partner(i)) is not None:
            op = rnd.choice("+-*")
            y = vals[j]
            used.add(j)
            v, text = {"+": x + y, "-": x - y, "*": x * y}[op], f"v{i} {op} v{j}"
        elif kind == "rescale" and r.L >= 2:
            if rnd.random() < 0.5:
                v, text = x.rescale(), f"v{i}.rescale()"
            else:
                q = rnd.choice(r.moduli)
                v, text = x.rescale(q), f"v{i}.rescale({q})"
        elif kind == "to_ring" and r.L >= 2 and rnd.random() < 0.7:
            a = rnd.randrange(r.L)
            b = rnd.randrange(a + 1, r.L + 1) if a else rnd.randrange(1, r.L)
            t = RingSpec(r.n, r.moduli[a:b], r.dtype)
            v, text = x.to_ring(t), f"v{i}.to_ring(moduli[{a}:{b}])"
        elif kind == "to_ring":
            extra = tuple(
                q
                for q in ntt_primes(r.n, max(r.moduli).bit_length() - 1, r.L + 1)
                if q not in r.moduli
            )[:1]
            v, text = (
                x.to_ring(RingSpec(r.n, r.moduli + extra, r.dtype)),
                f"v{i}.to_ring(moduli + ({extra[0]},))",
            )
        elif kind == "ntt":
            v, text = x.ntt(), f"v{i}.ntt()"
        elif kind == "intt":
            v, text = x.intt(), f"v{i}.intt()"
        elif kind == "rotate":
            s = rnd.randrange(1, max(2, r.n // 2))
            v, text = x.rotate(s), f"v{i}.rotate({s})"
        elif kind == "conjugate":
            v, text = x.conjugate(), f"v{i}.conjugate()"
        elif kind == "contiguous":
            v, text = x.contiguous(), f"v{i}.contiguous()"
        elif kind == "neg":
            v, text = -x, f"-v{i}"
        else:
            c = _constant(rnd, r)
            v, text = rnd.choice(
                [(x + c, f"v{i} + {c}"), (x * c, f"v{i} * {c}"), (c - x, f"{c} - v{i}")]
            )
        lines.append(f"v{len(vals)} = {text}")
        used.add(i)
        vals.append(v)
    # the outputs: the values nothing else uses (the last one first, at most six), so that every
    # op of the program runs
    sinks = [k for k in range(len(vals) - 1, 2, -1) if k not in used][:6]
    return [(f"v{k}", vals[k]) for k in sinks], "; ".join(lines)


def random_cases(ring: RingSpec, seed: int, count: int, max_ops: int) -> list[Case]:
    """``count`` random programs of up to ``max_ops`` ops over ``ring``, each a case."""
    out = []
    for k in range(count):
        s = sub_seed(seed, "random", k, ring)
        _, text = random_program(ring, "python", s, max_ops)

        def build(device: str, s: int = s) -> list[tuple[str, Poly]]:
            return random_program(ring, device, s, max_ops)[0]

        out.append(Case("random", f"program {k}", ring, build, f"program (seed {s}): {text}"))
    return out


# --- edge values -------------------------------------------------------------------------------


def edge_patterns(ring: RingSpec, seed: int = 0) -> dict[str, np.ndarray]:
    """Residues kernels get wrong: ``(L, n)`` arrays of plain residues, row ``i`` modulo ``q_i``.

    ``top words`` is the residue whose Montgomery word is ``q - 1``, the largest a word may hold.
    ``mixed`` draws every word from the other patterns.
    """
    L, n = ring.L, ring.n
    q = np.array([[m] for m in ring.moduli], dtype=object)
    R = 1 << ring.word_bits
    top = np.array([[(m - 1) * pow(R, -1, m) % m] for m in ring.moduli], dtype=object)

    def full(col: np.ndarray) -> np.ndarray:
        return np.broadcast_to(col, (L, n))

    out = {
        "zeros": full(q * 0),
        "ones": full(q * 0 + 1),
        "q-1": full(q - 1),
        "q//2": full(q // 2),
        "(q+1)/2": full((q + 1) // 2),
        "top words": full(top),
    }
    rnd = np.random.default_rng(seed)
    stack = np.stack([np.asarray(v) for v in out.values()])
    pick = rnd.integers(0, len(stack), size=(L, n))
    out["mixed"] = np.take_along_axis(stack, pick[None], axis=0)[0]
    return {k: np.asarray(v, dtype=object).astype(np.uint64) for k, v in out.items()}


def _edge_program(
    ring: RingSpec, pattern: str, residues: np.ndarray, partner: np.ndarray
) -> Callable[[Inputs], list[tuple[str, Poly]]]:
    Q = ring.Q
    big = RingSpec(ring.n, ring.moduli + basis_targets(ring)["fresh"].moduli, ring.dtype)

    def program(i: Inputs) -> list[tuple[str, Poly]]:
        if pattern == "+-Q/2":  # the centered boundary, and rounding ties of rescale
            h = Q // 2
            e = i._put(Poly([(h, -h, h + 1, -h - 1)[k % 4] for k in range(ring.n)], ring, "python"))
        else:
            e = i.from_residues(residues)
        f = i.from_residues(partner)
        E, F = i.from_slots(residues), i.from_slots(partner)
        outs = [
            ("e+f", e + f),
            ("e-f", e - f),
            ("f-e", f - e),
            ("-e", -e),
            ("e*(Q-1)", e * (Q - 1)),
            ("e+(Q-1)", e + (Q - 1)),
            ("e*(Q//2)", e * (Q // 2)),
            ("E*F", E * F),
            ("E*E", E * E),
            ("e.ntt()", e.ntt()),
            ("E.intt()", E.intt()),
            ("E.rotate(1)", E.rotate(1)),
            ("E.conjugate()", E.conjugate()),
        ]
        if ring.L >= 2:
            outs.append(("e.rescale()", e.rescale()))
        # near +-Q/2 a basis extension may be off by one Q by design (``docs/rings.md``): the
        # reference's words are still the expected ones, and Ren's templates reproduce them
        outs.append(("e.to_ring(more moduli)", e.to_ring(big)))
        return outs

    return program


def edge_cases(ring: RingSpec, seed: int) -> list[Case]:
    """Programs over ``ring``'s edge residues (0, 1, ``q-1``, near ``q/2``, ...), each a case."""
    patterns = edge_patterns(ring, sub_seed(seed, "edge", ring))
    partner = patterns["mixed"]
    out = [
        case("edge", name, ring, seed, _edge_program(ring, name, residues, partner))
        for name, residues in patterns.items()
    ]
    out.append(case("edge", "+-Q/2", ring, seed, _edge_program(ring, "+-Q/2", partner, partner)))
    return out


def edge_rings(rings: Sequence[RingSpec]) -> list[RingSpec]:
    """``rings``, and for each ``u64`` ring a twin over 62-bit moduli (the largest allowed)."""
    out = list(rings)
    for r in rings:
        if r.dtype == "u64":
            twin = make_ring(r.n, "u64", r.L, 62)
            if twin not in out:
                out.append(twin)
    return out
