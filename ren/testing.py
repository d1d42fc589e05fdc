"""The backend conformance kit: check any device against the python reference.

``python -m ren.testing --device NAME`` runs every kernel family on rings of several sizes and
both word types, random fused programs, and edge values, on ``NAME`` and on ``"python"``, and
prints a table of what passed. ``run_conformance`` does the same from Python and returns a
``Report``. See the "Writing a backend" page of the docs.

Each *case* is one small program built twice from the same seeded inputs: once on the device under
test, once on ``"python"`` (the NumPy reference). Both are realized, and every output's stored
words (Montgomery form, limb-major) are compared word by word; a mismatch names the output, the
first differing limb and slot, the two words, and, found by re-running the case with
``REN_VALIDATE=1``, the first kernel that went wrong. A case that raises is a failure that keeps
the error message and where it was raised; the suite goes on.

Inputs are made on ``"python"`` in the domain a case needs (an NTT-form input is transformed
there) and copied to the device, so a case runs on the device only the kernels of its family and
the copy: a broken NTT fails the ``ntt`` family and the cases whose programs run an NTT, not the
rest. Each ``CaseResult`` lists the kernel kinds its program ran on the device.

Families (``FAMILIES``): ``elementwise``, ``ntt``, ``intt``, ``automorphism``, ``rescale``,
``basis``, ``copy``, ``random``, ``edge``. Rings: ``n`` in 2, 8, 64, 1024, 4096, ``u32`` words
(30-bit moduli) and ``u64`` words (60-bit moduli; the edge family adds 62-bit ones, the largest
``u64`` allows), 1 to 4 moduli; ``quick=True`` uses two small rings.

Exit status of the command: 0 when every case passed, 1 when one failed, 2 when the device cannot
be used at all (an unknown name, or a ``RenError`` or ``ImportError`` the first time it runs a
kernel, such as PyCUDA missing).
"""

from __future__ import annotations

import argparse
import faulthandler
import importlib
import json
import random
import sys
import time
import traceback
import zlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ren import settings
from ren.device import canonical_device, devices
from ren.engine.schedule import schedule
from ren.errors import RenError
from ren.ir.node import Node
from ren.ir.op import DType, Op
from ren.poly import Poly, realize
from ren.ring import RingSpec, ntt_primes
from ren.ring import arith as rk

__all__ = [
    "FAMILIES",
    "Case",
    "CaseResult",
    "DeviceUnavailable",
    "FamilyStats",
    "Report",
    "cases",
    "check_device",
    "compare",
    "conformance_rings",
    "edge_patterns",
    "main",
    "random_program",
    "ring_label",
    "run_case",
    "run_conformance",
    "stored_words",
]

#: The families of cases, in the order they run, with what each covers.
FAMILIES: dict[str, str] = {
    "elementwise": "add, sub, neg, Montgomery mul (NTT form), constants, fused chains, shared work",
    "ntt": "the forward NTT, alone, after elementwise work, and inside a product",
    "intt": "the inverse NTT, alone and after elementwise work",
    "automorphism": "rotate, conjugate and other Galois elements, from NTT and coefficient form",
    "rescale": "divide and round by the last modulus, another one, and two moduli",
    "basis": "to_ring: a view of some moduli, a basis extension, a reordering, the other dtype",
    "copy": "python -> device, device -> python, work on both sides of a copy in one program",
    "random": "seeded random fused programs of 5 to 30 ops, several outputs realized together",
    "edge": "0, 1, q-1, q//2, (q+1)/2, +-Q/2, the largest Montgomery word, through every op",
}

#: Ring degrees of the full suite.
SIZES = (2, 8, 64, 1024, 4096)
#: Bits of the moduli per word type (the largest ``u32`` allows, and SEAL-like ``u64`` ones).
BITS = {"u32": 30, "u64": 60}
#: ``(n, dtype, L)`` of the quick suite.
QUICK_RINGS = ((8, "u32", 3), (64, "u64", 3))


class DeviceUnavailable(RenError):
    """The device cannot run a kernel at all (its backend is missing a driver or a library)."""


# --------------------------------------------------------------------------------------------
# rings


def ring_label(ring: RingSpec) -> str:
    """A short label naming the ring's size, word type and modulus size: ``n=8 L=3 u32 30-bit``."""
    return f"{ring.short()} {max(ring.moduli).bit_length()}-bit"


def _ring(n: int, dtype: str, limbs: int, bits: int | None = None) -> RingSpec:
    return RingSpec(n, ntt_primes(n, bits or BITS[dtype], limbs), dtype)


def conformance_rings(quick: bool = False) -> list[RingSpec]:
    """The rings the suite runs on.

    Full: every ``n`` in ``SIZES`` with both word types, each with two numbers of moduli so that
    every ``L`` in 1..4 meets both word types. Quick: ``QUICK_RINGS``.
    """
    if quick:
        return [_ring(n, dtype, limbs) for n, dtype, limbs in QUICK_RINGS]
    out = []
    for i, n in enumerate(SIZES):
        for dtype, limbs in (
            ("u32", (1, 3) if i % 2 else (2, 4)),
            ("u64", (2, 4) if i % 2 else (1, 3)),
        ):
            out += [_ring(n, dtype, L) for L in limbs]
    return out


# --------------------------------------------------------------------------------------------
# inputs: made on python, copied to the device


def _crt_ints(ring: RingSpec, residues: np.ndarray) -> list[int]:
    """The integers in ``[0, Q)`` whose residues modulo each ``q_i`` are row ``i``."""
    words = rk.to_mont(ring, np.asarray(residues, dtype=np.uint64).astype(ring.np_dtype))
    return rk.crt(ring, words)


class _Inputs:
    """Seeded inputs for one case, made on python and copied to ``device``.

    ``coeff(k)`` and ``ntt(k)`` are uniform; ``from_residues`` and ``from_slots`` give an exact
    pattern of residues (``(L, n)``) in coefficient or NTT form. The same seed gives the same
    values on every device.
    """

    def __init__(self, ring: RingSpec, seed: int, device: str) -> None:
        self.ring, self.seed, self.device = ring, seed, device

    def _put(self, p: Poly) -> Poly:
        return p.realize().to(self.device)

    def coeff(self, k: int) -> Poly:
        return self._put(Poly.uniform(self.ring, rng=self.seed + k, device="python"))

    def ntt(self, k: int) -> Poly:
        return self._put(Poly.uniform(self.ring, rng=self.seed + k, device="python").ntt())

    def python(self, k: int) -> Poly:
        """A uniform input left on python (for the copy cases)."""
        return Poly.uniform(self.ring, rng=self.seed + k, device="python").realize()

    def from_residues(self, residues: np.ndarray) -> Poly:
        return self._put(Poly(_crt_ints(self.ring, residues), self.ring, "python"))

    def from_slots(self, residues: np.ndarray) -> Poly:
        """The NTT-form input whose slots modulo ``q_i`` are row ``i`` of ``residues``."""
        words = rk.to_mont(
            self.ring, np.asarray(residues, dtype=np.uint64).astype(self.ring.np_dtype)
        )
        coeffs = rk.crt(self.ring, rk.intt(self.ring, words))
        return self._put(Poly(coeffs, self.ring, "python").ntt())


# --------------------------------------------------------------------------------------------
# cases

#: A case's program: the device -> labelled outputs (``Poly`` values on that device or python).
Build = Callable[[str], list[tuple[str, Poly]]]


@dataclass(frozen=True)
class Case:
    """One program of the suite: ``build(device)`` returns its labelled outputs.

    Attributes:
        family: the family it belongs to (a key of ``FAMILIES``).
        name: a short name, unique within the family and ring.
        ring: the ring of its inputs.
        build: builds the program on a device from seeded inputs (the same values every call).
        detail: a longer description (the text of a random program), shown with a failure.
    """

    family: str
    name: str
    ring: RingSpec
    build: Build
    detail: str = ""


def _seed(seed: int, *parts: object) -> int:
    return zlib.crc32("/".join(map(str, (seed, *parts))).encode())


def _case(
    family: str,
    name: str,
    ring: RingSpec,
    seed: int,
    program: Callable[[_Inputs], list[tuple[str, Poly]]],
    detail: str = "",
) -> Case:
    """A case whose ``program(inputs)`` builds the outputs from an ``_Inputs``."""
    s = _seed(seed, family, name, ring)

    def build(device: str) -> list[tuple[str, Poly]]:
        return program(_Inputs(ring, s, device))

    return Case(family, name, ring, build, detail)


def _elementwise(ring: RingSpec, seed: int) -> list[Case]:
    Q = ring.Q
    programs = {
        "a+b": lambda i: [("a+b", i.coeff(0) + i.coeff(1))],
        "a-b": lambda i: [("a-b", i.coeff(0) - i.coeff(1)), ("b-a", i.coeff(1) - i.coeff(0))],
        "-a": lambda i: [("-a", -i.coeff(0))],
        "a*c": lambda i: [("a*3", i.coeff(0) * 3), ("a*(Q-2)", i.coeff(0) * (Q - 2))],
        "a+c,c-a": lambda i: [("a+5", i.coeff(0) + 5), ("7-a", 7 - i.coeff(0))],
        "A*B": lambda i: [("A*B", i.ntt(0) * i.ntt(1))],
        "A*A": lambda i: [("A*A", i.ntt(0) * i.ntt(0))],
        "ntt chain": lambda i: [
            ("(A*B+A)*3-B+5", (i.ntt(0) * i.ntt(1) + i.ntt(0)) * 3 - i.ntt(1) + 5)
        ],
        "coeff chain": lambda i: [
            (
                "((a+b)*7-a)+(-(b-3))*(Q-1)",
                ((i.coeff(0) + i.coeff(1)) * 7 - i.coeff(0)) + (-(i.coeff(1) - 3)) * (Q - 1),
            )
        ],
        "shared": lambda i: _shared(i),
    }
    return [_case("elementwise", name, ring, seed, p) for name, p in programs.items()]


def _shared(i: _Inputs) -> list[tuple[str, Poly]]:
    a, b = i.coeff(0), i.coeff(1)
    s = a + b
    return [("a+b", s), ("(a+b)*3", s * 3), ("a-b", a - b)]


def _ntt(ring: RingSpec, seed: int) -> list[Case]:
    programs = {
        "forward": lambda i: [("a.ntt()", i.coeff(0).ntt())],
        "after elementwise": lambda i: [("(a+b).ntt()", (i.coeff(0) + i.coeff(1)).ntt())],
        "two": lambda i: [("a.ntt()", i.coeff(0).ntt()), ("b.ntt()", i.coeff(1).ntt())],
        "product": lambda i: [("a*b", i.coeff(0) * i.coeff(1))],
    }
    return [_case("ntt", name, ring, seed, p) for name, p in programs.items()]


def _intt(ring: RingSpec, seed: int) -> list[Case]:
    programs = {
        "inverse": lambda i: [("A.intt()", i.ntt(0).intt())],
        "after elementwise": lambda i: [("(A*B).intt()", (i.ntt(0) * i.ntt(1)).intt())],
        "then elementwise": lambda i: [("A.intt()+b", i.ntt(0).intt() + i.coeff(1))],
    }
    return [_case("intt", name, ring, seed, p) for name, p in programs.items()]


def _automorphism(ring: RingSpec, seed: int) -> list[Case]:
    n = ring.n
    programs = {
        "rotate ntt": lambda i: [
            ("A.rotate(1)", i.ntt(0).rotate(1)),
            ("A.rotate(-1)", i.ntt(0).rotate(-1)),
        ],
        "conjugate ntt": lambda i: [("A.conjugate()", i.ntt(0).conjugate())],
        "galois ntt": lambda i: [(f"A.automorphism({n + 1})", i.ntt(0).automorphism(n + 1))],
        "rotate fused": lambda i: [("A.rotate(3)*B-A", i.ntt(0).rotate(3) * i.ntt(1) - i.ntt(0))],
        "rotate coeff": lambda i: [("a.rotate(2)", i.coeff(0).rotate(2))],
        "conjugate coeff": lambda i: [("a.conjugate()", i.coeff(0).conjugate())],
    }
    return [_case("automorphism", name, ring, seed, p) for name, p in programs.items()]


def _rescale(ring: RingSpec, seed: int) -> list[Case]:
    if ring.L < 2:
        return []
    m = ring.moduli
    programs = {
        "last": lambda i: [("a.rescale()", i.coeff(0).rescale())],
        "first": lambda i: [(f"a.rescale({m[0]})", i.coeff(0).rescale(m[0]))],
        "from ntt": lambda i: [("A.rescale()", i.ntt(0).rescale())],
        "fused": lambda i: [("(a+b*3).rescale()", (i.coeff(0) + i.coeff(1) * 3).rescale())],
    }
    if ring.L >= 3:
        programs["two"] = lambda i: [("a.rescale(last two)", i.coeff(0).rescale(m[-2:]))]
        programs["twice"] = lambda i: [("a.rescale().rescale()", i.coeff(0).rescale().rescale())]
    return [_case("rescale", name, ring, seed, p) for name, p in programs.items()]


def _basis_targets(ring: RingSpec) -> dict[str, RingSpec]:
    """The rings the basis family converts ``ring`` to."""
    n, bits = ring.n, max(ring.moduli).bit_length()
    extra = tuple(q for q in ntt_primes(n, bits - 1, ring.L + 2) if q not in ring.moduli)[:2]
    other = "u64" if ring.dtype == "u32" else "u32"
    out = {
        "extend": RingSpec(n, ring.moduli + extra, ring.dtype),
        "other dtype": _ring(n, other, 2),
        "fresh": RingSpec(n, extra, ring.dtype),
    }
    if ring.L >= 2:
        out["view"] = RingSpec(n, ring.moduli[1:], ring.dtype)
        out["reorder"] = RingSpec(n, ring.moduli[::-1], ring.dtype)
    return out


def _converts_to(t: RingSpec) -> Callable[[_Inputs], list[tuple[str, Poly]]]:
    return lambda i: [(f"a.to_ring({t.short()})", i.coeff(0).to_ring(t))]


def _basis(ring: RingSpec, seed: int) -> list[Case]:
    out = []
    for name, target in _basis_targets(ring).items():
        out.append(_case("basis", name, ring, seed, _converts_to(target)))
    if ring.L >= 2:
        view = RingSpec(ring.n, ring.moduli[:-1], ring.dtype)
        out.append(
            _case(
                "basis",
                "view ntt",
                ring,
                seed,
                lambda i: [("(A*B).to_ring(view)*3", (i.ntt(0) * i.ntt(1)).to_ring(view) * 3)],
            )
        )
    return out


def _copy(ring: RingSpec, seed: int) -> list[Case]:
    """Copies both ways.

    A device value copied back is realized on the device first: a lazy
    ``x.to(device).to("python")`` simplifies to ``x`` and would copy nothing.
    """

    def there(i: _Inputs) -> list[tuple[str, Poly]]:
        return [
            ("a.to(device)", i.python(0).to(i.device)),
            ("A.to(device)", i.python(1).ntt().realize().to(i.device)),
        ]

    def back(i: _Inputs) -> list[tuple[str, Poly]]:
        a, A = i.coeff(0).realize(), i.ntt(1).realize()
        return [("a.to(python)", a.to("python")), ("A.to(python)", A.to("python"))]

    def work_then_back(i: _Inputs) -> list[tuple[str, Poly]]:
        a, b = i.coeff(0), i.coeff(1)
        return [("(a+b*3).to(python)", (a + b * 3).to("python")), ("a-b", a - b)]

    def both_sides(i: _Inputs) -> list[tuple[str, Poly]]:
        a, b = i.python(0), i.coeff(1)
        here = ((a + 1).to(i.device) * 5 + b).to("python") - a
        return [("((a+1).to(device)*5+b).to(python)-a", here)]

    programs = {
        "to device": there,
        "to python": back,
        "work then back": work_then_back,
        "both sides": both_sides,
    }
    return [_case("copy", name, ring, seed, p) for name, p in programs.items()]


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
    inputs = _Inputs(ring, seed, device)
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


def _random(ring: RingSpec, seed: int, count: int, max_ops: int) -> list[Case]:
    out = []
    for k in range(count):
        s = _seed(seed, "random", k, ring)
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
    full = lambda col: np.broadcast_to(col, (L, n))  # noqa: E731
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
) -> Callable:
    Q = ring.Q
    big = RingSpec(ring.n, ring.moduli + _basis_targets(ring)["fresh"].moduli, ring.dtype)

    def program(i: _Inputs) -> list[tuple[str, Poly]]:
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


def _edge(ring: RingSpec, seed: int) -> list[Case]:
    patterns = edge_patterns(ring, _seed(seed, "edge", ring))
    partner = patterns["mixed"]
    out = [
        _case("edge", name, ring, seed, _edge_program(ring, name, residues, partner))
        for name, residues in patterns.items()
    ]
    out.append(_case("edge", "+-Q/2", ring, seed, _edge_program(ring, "+-Q/2", partner, partner)))
    return out


def _edge_rings(rings: Sequence[RingSpec]) -> list[RingSpec]:
    """``rings``, and for each ``u64`` ring a twin over 62-bit moduli (the largest allowed)."""
    out = list(rings)
    for r in rings:
        if r.dtype == "u64":
            twin = _ring(r.n, "u64", r.L, 62)
            if twin not in out:
                out.append(twin)
    return out


def cases(
    families: Sequence[str] | None = None,
    *,
    quick: bool = False,
    seed: int = 0,
    rings: Sequence[RingSpec] | None = None,
) -> list[Case]:
    """Every case of the suite, grouped by family in ``FAMILIES`` order.

    Args:
        families: the families to include (default: all).
        quick: the quick suite (``QUICK_RINGS``, two short random programs per ring).
        seed: the seed of every input and random program.
        rings: the rings to use instead of ``conformance_rings(quick)``.

    Raises:
        ValueError: for an unknown family name.
    """
    chosen = list(FAMILIES) if families is None else list(dict.fromkeys(families))
    for f in chosen:
        if f not in FAMILIES:
            raise ValueError(f"unknown family {f!r}; the families are {', '.join(FAMILIES)}")
    rings = list(rings) if rings is not None else conformance_rings(quick)
    count, max_ops = (2, 12) if quick else (4, 30)
    makers: dict[str, Callable[[RingSpec], list[Case]]] = {
        "elementwise": lambda r: _elementwise(r, seed),
        "ntt": lambda r: _ntt(r, seed),
        "intt": lambda r: _intt(r, seed),
        "automorphism": lambda r: _automorphism(r, seed),
        "rescale": lambda r: _rescale(r, seed),
        "basis": lambda r: _basis(r, seed),
        "copy": lambda r: _copy(r, seed),
        "random": lambda r: _random(r, seed, count, max_ops),
        "edge": lambda r: _edge(r, seed),
    }
    out: list[Case] = []
    for family in (f for f in FAMILIES if f in chosen):
        for ring in _edge_rings(rings) if family == "edge" else rings:
            out += makers[family](ring)
    return out


# --------------------------------------------------------------------------------------------
# running and comparing


@dataclass
class CaseResult:
    """The outcome of one case.

    Attributes:
        family: the case's family.
        name: the case's name.
        ring: the ring's label (``n=8 L=3 u32 30-bit``, see ``ring_label``).
        passed: whether every output matched the reference word for word.
        seconds: the time the case took (both devices, the comparison).
        message: why it failed (empty when it passed).
        kernels: the kinds of the kernels the program ran on the device, sorted.
    """

    family: str
    name: str
    ring: str
    passed: bool
    seconds: float
    message: str = ""
    kernels: tuple[str, ...] = ()


@dataclass
class FamilyStats:
    """Counts for one family: cases passed, failed, in all, and the seconds they took."""

    passed: int = 0
    failed: int = 0
    total: int = 0
    seconds: float = 0.0


def stored_words(p: Poly) -> np.ndarray:
    """``p``'s stored words (Montgomery form) as an ``(L, n)`` array, realizing it if needed."""
    return p.words()


def compare(label: str, got: Poly, want: Poly) -> str | None:
    """``None`` when ``got`` stores the same words as ``want``; else what differs first.

    The message names the output, the first differing word's limb and slot (the coefficient, in
    coefficient form), both words, and how many words differ.
    """
    if got.ring != want.ring:
        return f"{label}: ring {got.ring} but the reference has {want.ring}"
    if got.domain is not want.domain:
        return f"{label}: {got.domain.value} form but the reference is in {want.domain.value} form"
    g, w = stored_words(got), stored_words(want)
    bad = np.argwhere(g != w)
    if not bad.size:
        return None
    limb, slot = (int(x) for x in bad[0])
    return (
        f"{label}: limb {limb}, slot {slot} ({got.domain.value} form, q={got.ring.moduli[limb]}): "
        f"got word {int(g[limb, slot])}, expected {int(w[limb, slot])}; "
        f"{len(bad)} of {g.size} words differ"
    )


def _describe(e: BaseException) -> str:
    """``Type: message (raised at file:line in function)``."""
    text = f"{type(e).__name__}: {e}"
    frames = traceback.extract_tb(e.__traceback__)
    if frames:
        f = frames[-1]
        text += f" (raised at {f.filename}:{f.lineno} in {f.name})"
    return text


def _device_kernels(outputs: list[tuple[str, Poly]], device: str) -> tuple[str, ...]:
    """The kinds of kernels realizing ``outputs`` runs on ``device`` (schedules, runs nothing)."""
    todo = tuple(p.node for _, p in outputs if not p.realized)
    if not todo:
        return ()
    kernels, _ = schedule(Node(Op.SINK, DType.VOID, todo))
    return tuple(sorted({k.info.kind for k in kernels if k.info.device == device}))


def _pinpoint(case: Case, device: str) -> str:
    """Run ``case`` again with ``REN_VALIDATE=1``: the first kernel that differs, or ``""``."""
    try:
        with settings.override(REN_VALIDATE=True):  # this thread only
            realize(*(p for _, p in case.build(device)))
    except RenError as e:
        text = str(e)
        if text.startswith("REN_VALIDATE:"):
            return text.split(" Source:")[0]
    except Exception:
        pass
    return ""


def run_case(case: Case, device: str) -> CaseResult:
    """Run ``case`` on ``device`` and on python and compare every output word by word.

    Never raises for an error inside the case: an exception becomes a failed result with its
    message.
    """
    device = canonical_device(device)
    start = time.perf_counter()
    kernels: tuple[str, ...] = ()
    message = ""
    try:
        want = case.build("python")
        realize(*(p for _, p in want))
    except Exception as e:
        message = f"the python reference raised {_describe(e)} (a bug in Ren, not in the device)"
    else:
        try:
            got = case.build(device)
            kernels = _device_kernels(got, device)
            realize(*(p for _, p in got))
            for (label, g), (_, w) in zip(got, want, strict=True):
                if (message := compare(label, g, w) or "") != "":
                    break
        except Exception as e:
            message = _describe(e)
        else:
            if message and device != "python":
                where = _pinpoint(case, device)
                message += f"\n{where}" if where else ""
        if message and case.detail:
            message += f"\n{case.detail}"
    seconds = time.perf_counter() - start
    return CaseResult(
        case.family, case.name, ring_label(case.ring), not message, seconds, message, kernels
    )


def check_device(device: str) -> str:
    """The canonical name of ``device``, after running one tiny program on it.

    Raises:
        ValueError: for a name that is not a device (the message lists the devices).
        DeviceUnavailable: when the first kernel on the device raises ``RenError`` or
            ``ImportError`` (a missing driver or library). Other errors are left for the cases
            to report.
    """
    name = canonical_device(device)
    try:
        ring = RingSpec(2, (17,))
        p = Poly([1, 2], ring, "python").realize().to(name) + 1
        stored_words(p.realize())
    except (RenError, ImportError) as e:
        raise DeviceUnavailable(
            f"device {name!r} cannot run kernels: {type(e).__name__}: {e}"
        ) from e
    except Exception:
        pass
    return name


@dataclass
class Report:
    """The outcome of a conformance run.

    Attributes:
        device: the device checked.
        seed: the seed of the run.
        quick: whether it was the quick suite.
        results: one ``CaseResult`` per case, in the order they ran.
    """

    device: str
    seed: int = 0
    quick: bool = False
    results: list[CaseResult] = field(default_factory=list)

    @property
    def families(self) -> dict[str, FamilyStats]:
        """Counts per family that ran, in ``FAMILIES`` order."""
        out: dict[str, FamilyStats] = {}
        for f in FAMILIES:
            for r in self.results:
                if r.family == f:
                    s = out.setdefault(f, FamilyStats())
                    s.total += 1
                    s.passed += r.passed
                    s.failed += not r.passed
                    s.seconds += r.seconds
        return out

    @property
    def failures(self) -> list[CaseResult]:
        """The failed cases."""
        return [r for r in self.results if not r.passed]

    @property
    def ok(self) -> bool:
        """Whether every case passed (and at least one ran)."""
        return bool(self.results) and not self.failures

    def table(self) -> str:
        """A plain text table: one row per family, a total, then every failure."""
        mode = "quick" if self.quick else "full"
        rings = len({r.ring for r in self.results})
        lines = [
            f"Ren conformance: device {self.device!r} against 'python' "
            f"({mode}: {rings} rings, seed {self.seed})",
            "",
            f"{'family':<14}{'passed':>8}{'failed':>8}{'total':>8}{'seconds':>10}  "
            "kernels run on the device",
        ]
        stats = self.families
        for name, s in stats.items():
            kinds = sorted({k for r in self.results if r.family == name for k in r.kernels})
            counts = f"{s.passed:>8}{s.failed:>8}{s.total:>8}{s.seconds:>10.2f}"
            lines.append(f"{name:<14}{counts}  {', '.join(kinds)}")
        total = FamilyStats(
            sum(s.passed for s in stats.values()),
            sum(s.failed for s in stats.values()),
            sum(s.total for s in stats.values()),
            sum(s.seconds for s in stats.values()),
        )
        lines.append(
            f"{'all':<14}{total.passed:>8}{total.failed:>8}{total.total:>8}{total.seconds:>10.2f}"
        )
        lines.append("")
        if self.ok:
            lines.append(f"OK: all {total.total} cases match the python backend word for word.")
        elif not self.results:
            lines.append("No case ran.")
        else:
            lines.append(f"FAILED: {total.failed} of {total.total} cases.")
            for r in self.failures:
                lines.append("")
                lines.append(f"[{r.family}] {r.name} ({r.ring})")
                body = r.message.splitlines() or [""]
                lines += ["  " + (ln if len(ln) <= 400 else ln[:400] + " ...") for ln in body[:8]]
        return "\n".join(lines)

    def to_json(self) -> dict:
        """The report as plain JSON data: the run, counts per family, and every case."""
        return {
            "device": self.device,
            "seed": self.seed,
            "quick": self.quick,
            "ok": self.ok,
            "families": {k: asdict(v) for k, v in self.families.items()},
            "cases": [asdict(r) for r in self.results],
        }


def run_conformance(
    device: str,
    *,
    quick: bool = False,
    seed: int = 0,
    families: Sequence[str] | None = None,
    rings: Sequence[RingSpec] | None = None,
    progress: Callable[[Case, CaseResult | None], None] | None = None,
) -> Report:
    """Run the conformance suite on ``device`` against the python backend.

    Args:
        device: a device name (Ren's own or one given to ``ren.device.register_device``).
        quick: run the quick suite (two small rings).
        seed: the seed of every input and random program; the same seed runs the same cases.
        families: the families to run (default: all of ``FAMILIES``).
        rings: rings to use instead of the suite's own.
        progress: called as ``progress(case, None)`` before each case runs and
            ``progress(case, result)`` after.

    Returns:
        The ``Report``; ``report.ok`` tells whether every case passed.

    Raises:
        ValueError: for an unknown device or family.
        DeviceUnavailable: when the device cannot run a kernel at all (see ``check_device``).
    """
    todo = cases(families, quick=quick, seed=seed, rings=rings)
    device = check_device(device)
    report = Report(device, seed, quick)
    for case in todo:
        if progress is not None:
            progress(case, None)
        result = run_case(case, device)
        report.results.append(result)
        if progress is not None:
            progress(case, result)
    return report


# --------------------------------------------------------------------------------------------
# the command


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m ren.testing",
        description="Check a Ren device against the python (NumPy) reference, kernel family by "
        "kernel family. Exit status: 0 all passed, 1 a case failed, 2 the device cannot be used.",
    )
    p.add_argument("--device", help="the device to check (Ren's own or a registered one)")
    p.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE first, to register its device (repeatable)",
    )
    p.add_argument("--quick", action="store_true", help="two small rings, short random programs")
    p.add_argument("--seed", type=int, default=0, help="seed of inputs and random programs")
    p.add_argument(
        "--family",
        nargs="+",
        choices=list(FAMILIES),
        metavar="F",
        help="only these families (see --list)",
    )
    p.add_argument(
        "--json", type=Path, metavar="PATH", help="also write the report as JSON to PATH"
    )
    p.add_argument("--list", action="store_true", help="print the families and exit")
    p.add_argument("-v", "--verbose", action="store_true", help="print every case as it runs")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """The command ``python -m ren.testing``; returns the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, or a bad argument (argparse printed why)
        return int(e.code or 0)
    if args.list:
        for name, what in FAMILIES.items():
            print(f"{name:<14}{what}")
        return 0
    for module in args.imports:
        try:
            importlib.import_module(module)
        except Exception as e:
            print(f"ren.testing: --import {module} failed: {_describe(e)}", file=sys.stderr)
            return 2
    if not args.device:
        parser.print_usage(sys.stderr)
        print(
            f"ren.testing: --device is required; the devices are {', '.join(devices())}",
            file=sys.stderr,
        )
        return 2

    def verbose(case: Case, r: CaseResult | None) -> None:
        if r is None:  # before the case: a crash (a segfault in a C kernel) shows where it was
            print(
                f"{case.family:<13}{case.name:<20}{ring_label(case.ring):<24}",
                end="",
                file=sys.stderr,
                flush=True,
            )
        else:
            print(f"{'ok' if r.passed else 'FAIL':<6}{r.seconds:7.3f} s", file=sys.stderr)

    try:
        report = run_conformance(
            args.device,
            quick=args.quick,
            seed=args.seed,
            families=args.family,
            progress=verbose if args.verbose else None,
        )
    except (ValueError, DeviceUnavailable) as e:
        print(f"ren.testing: {e}", file=sys.stderr)
        return 2
    print(report.table())
    if args.json:
        args.json.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
    return 0 if report.ok else 1


if __name__ == "__main__":
    faulthandler.enable()  # a crash inside a kernel prints the Python stack
    sys.exit(main())
