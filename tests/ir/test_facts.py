"""Ring, domain and device derived from the graph (the front end's meaning of each op)."""

from ren.ir import domain_of, facts, is_const, ring_of
from ren.poly import Poly
from ren.ring import Domain, RingSpec

RING = RingSpec(8, (17, 97, 113))


def p(device="python"):
    return Poly(list(range(8)), RING, device)


def test_leaves():
    a = p()
    assert facts(a.node) == (RING, Domain.COEFF, "python")
    c = Poly.const(5, RING, "cpu")
    assert facts(c.node) == (RING, Domain.COEFF, "cpu") and is_const(c.node)
    assert facts(a.node.src[0]).device == "python" and facts(a.node.src[0]).ring is None


def test_domains_follow_where_ops_compute():
    a, b = p(), p()
    assert (
        domain_of((a * b).node) is Domain.NTT
    )  # a product of non-constants is computed in NTT form
    assert domain_of((a * 3).node) is Domain.COEFF  # by a constant: no domain change
    assert domain_of((a.ntt() * 3).node) is Domain.NTT
    assert domain_of((a + b).node) is Domain.COEFF
    assert domain_of((a + b.ntt()).node) is Domain.NTT  # mixed inputs are pushed toward NTT
    assert domain_of((a.ntt() + 1).node) is Domain.NTT
    assert domain_of(a.rotate(1).node) is Domain.NTT
    assert domain_of(Poly.const(2, RING).rotate(1).node) is Domain.COEFF
    assert domain_of(a.ntt().rescale().node) is Domain.COEFF
    assert domain_of((-a.ntt()).node) is Domain.NTT
    view = RingSpec(8, (97, 113))
    assert domain_of(a.ntt().to_ring(view).node) is Domain.NTT  # a view keeps the domain
    other = RingSpec(8, (17, 113))
    assert domain_of(a.ntt().to_ring(other).node) is Domain.COEFF  # basis extension


def test_rings_and_devices():
    a = p()
    assert ring_of(a.rescale().node) == RingSpec(8, (17, 97))
    assert ring_of(a.rescale((17, 113)).node) == RingSpec(8, (97,))
    assert facts(a.to("cpu").node).device == "cpu"
    assert facts((a.to("cpu") + 1).node).device == "cpu"


def test_facts_of_a_deep_graph_are_iterative():
    x = p()
    for _ in range(5000):
        x = x + 1
    assert facts(x.node).ring == RING
