"""The conformance kit's suite: its families, in order, and every case of a run."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ren.ring import RingSpec
from ren.testing.families import (
    automorphism_cases,
    basis_cases,
    copy_cases,
    elementwise_cases,
    intt_cases,
    ntt_cases,
    rescale_cases,
)
from ren.testing.programs import edge_cases, edge_rings, random_cases
from ren.testing.rings import Case, conformance_rings

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
        "elementwise": lambda r: elementwise_cases(r, seed),
        "ntt": lambda r: ntt_cases(r, seed),
        "intt": lambda r: intt_cases(r, seed),
        "automorphism": lambda r: automorphism_cases(r, seed),
        "rescale": lambda r: rescale_cases(r, seed),
        "basis": lambda r: basis_cases(r, seed),
        "copy": lambda r: copy_cases(r, seed),
        "random": lambda r: random_cases(r, seed, count, max_ops),
        "edge": lambda r: edge_cases(r, seed),
    }
    out: list[Case] = []
    for family in (f for f in FAMILIES if f in chosen):
        for ring in edge_rings(rings) if family == "edge" else rings:
            out += makers[family](ring)
    return out
