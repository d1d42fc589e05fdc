"""The conformance kit's fixed families of cases, each a list of ``Case`` per ring.

elementwise, ntt, intt, automorphism, rescale, basis and copy (see ``ren.testing.FAMILIES``).
"""

from __future__ import annotations

from collections.abc import Callable

from ren.poly import Poly
from ren.ring import RingSpec, ntt_primes
from ren.testing.rings import Case, Inputs, case, make_ring


def elementwise_cases(ring: RingSpec, seed: int) -> list[Case]:
    """The elementwise family's cases over ``ring``: sums, differences, products, constants."""
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
    return [case("elementwise", name, ring, seed, p) for name, p in programs.items()]


def _shared(i: Inputs) -> list[tuple[str, Poly]]:
    a, b = i.coeff(0), i.coeff(1)
    s = a + b
    return [("a+b", s), ("(a+b)*3", s * 3), ("a-b", a - b)]


def ntt_cases(ring: RingSpec, seed: int) -> list[Case]:
    """The forward NTT family's cases over ``ring``."""
    programs = {
        "forward": lambda i: [("a.ntt()", i.coeff(0).ntt())],
        "after elementwise": lambda i: [("(a+b).ntt()", (i.coeff(0) + i.coeff(1)).ntt())],
        "two": lambda i: [("a.ntt()", i.coeff(0).ntt()), ("b.ntt()", i.coeff(1).ntt())],
        "product": lambda i: [("a*b", i.coeff(0) * i.coeff(1))],
    }
    return [case("ntt", name, ring, seed, p) for name, p in programs.items()]


def intt_cases(ring: RingSpec, seed: int) -> list[Case]:
    """The inverse NTT family's cases over ``ring``."""
    programs = {
        "inverse": lambda i: [("A.intt()", i.ntt(0).intt())],
        "after elementwise": lambda i: [("(A*B).intt()", (i.ntt(0) * i.ntt(1)).intt())],
        "then elementwise": lambda i: [("A.intt()+b", i.ntt(0).intt() + i.coeff(1))],
    }
    return [case("intt", name, ring, seed, p) for name, p in programs.items()]


def automorphism_cases(ring: RingSpec, seed: int) -> list[Case]:
    """The automorphism cases over ``ring``: rotations and conjugations, in both forms."""
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
    return [case("automorphism", name, ring, seed, p) for name, p in programs.items()]


def rescale_cases(ring: RingSpec, seed: int) -> list[Case]:
    """The rescale family's cases over ``ring`` (none for a ring of one modulus)."""
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
    return [case("rescale", name, ring, seed, p) for name, p in programs.items()]


def basis_targets(ring: RingSpec) -> dict[str, RingSpec]:
    """The rings the basis family converts ``ring`` to."""
    n, bits = ring.n, max(ring.moduli).bit_length()
    extra = tuple(q for q in ntt_primes(n, bits - 1, ring.L + 2) if q not in ring.moduli)[:2]
    other = "u64" if ring.dtype == "u32" else "u32"
    out = {
        "extend": RingSpec(n, ring.moduli + extra, ring.dtype),
        "other dtype": make_ring(n, other, 2),
        "fresh": RingSpec(n, extra, ring.dtype),
    }
    if ring.L >= 2:
        out["view"] = RingSpec(n, ring.moduli[1:], ring.dtype)
        out["reorder"] = RingSpec(n, ring.moduli[::-1], ring.dtype)
    return out


def _converts_to(t: RingSpec) -> Callable[[Inputs], list[tuple[str, Poly]]]:
    return lambda i: [(f"a.to_ring({t.short()})", i.coeff(0).to_ring(t))]


def basis_cases(ring: RingSpec, seed: int) -> list[Case]:
    """The basis-change family's cases over ``ring``: extensions to each target, and a view."""
    out = []
    for name, target in basis_targets(ring).items():
        out.append(case("basis", name, ring, seed, _converts_to(target)))
    if ring.L >= 2:
        view = RingSpec(ring.n, ring.moduli[:-1], ring.dtype)
        out.append(
            case(
                "basis",
                "view ntt",
                ring,
                seed,
                lambda i: [("(A*B).to_ring(view)*3", (i.ntt(0) * i.ntt(1)).to_ring(view) * 3)],
            )
        )
    return out


def copy_cases(ring: RingSpec, seed: int) -> list[Case]:
    """Copies both ways.

    A device value copied back is realized on the device first: a lazy
    ``x.to(device).to("python")`` simplifies to ``x`` and would copy nothing.
    """

    def there(i: Inputs) -> list[tuple[str, Poly]]:
        return [
            ("a.to(device)", i.python(0).to(i.device)),
            ("A.to(device)", i.python(1).ntt().realize().to(i.device)),
        ]

    def back(i: Inputs) -> list[tuple[str, Poly]]:
        a, A = i.coeff(0).realize(), i.ntt(1).realize()
        return [("a.to(python)", a.to("python")), ("A.to(python)", A.to("python"))]

    def work_then_back(i: Inputs) -> list[tuple[str, Poly]]:
        a, b = i.coeff(0), i.coeff(1)
        return [("(a+b*3).to(python)", (a + b * 3).to("python")), ("a-b", a - b)]

    def both_sides(i: Inputs) -> list[tuple[str, Poly]]:
        a, b = i.python(0), i.coeff(1)
        here = ((a + 1).to(i.device) * 5 + b).to("python") - a
        return [("((a+1).to(device)*5+b).to(python)-a", here)]

    programs = {
        "to device": there,
        "to python": back,
        "work then back": work_then_back,
        "both sides": both_sides,
    }
    return [case("copy", name, ring, seed, p) for name, p in programs.items()]
