"""Realization end to end: values, kernel counts (fusion), shared outputs, repointing, errors.

Oracles: Python-integer math (tests/oracles.py) and the reference evaluator.
"""

import numpy as np
import pytest

import ren
from ren.device import Buffer
from ren.engine import realize as realize_mod
from ren.engine import schedule_cache
from ren.engine.schedule import schedule
from ren.errors import RenError
from ren.ir import DType, Node, Op
from ren.poly import Poly
from ren.reference import evaluate, expected_limbs
from ren.ring import Domain, RingSpec, ntt_primes, primitive_root_2n
from ren.viz import dump_to
from tests.oracles import automorphism, centered, negacyclic, ntt_slots

RING = RingSpec(n=8, moduli=(17, 97))
A = [1, 2, 3, 4, 5, 6, 7, 8]
B = [8, 7, 6, 5, 4, 3, 2, 1]


def kernels(*polys: Poly) -> list:
    sink = Node(Op.SINK, DType.VOID, tuple(p.node for p in polys))
    return schedule(sink)[0]


def test_the_seed_example_runs_as_written():
    ring = RingSpec(n=8, moduli=(17, 97))
    a = Poly([1, 2, 3, 4, 5, 6, 7, 8], ring)
    b = Poly([8, 7, 6, 5, 4, 3, 2, 1], ring)
    expr = (a + b) * (a - 1)
    assert "MUL" in str(expr.node)
    assert expr.realize() is expr
    s = [x + y for x, y in zip(A, B, strict=True)]
    assert expr.tolist() == negacyclic(s, [A[0] - 1, *A[1:]], ring.Q)
    assert expr.tolist(centered=True) == [centered(x, ring.Q) for x in expr.tolist()]


def test_tolist_is_coefficients_whatever_the_domain():
    a = Poly(A, RING)
    assert a.ntt().tolist() == a.tolist() == [x % RING.Q for x in A]
    assert a.ntt().intt().tolist() == a.tolist()


def test_limbs_of_an_ntt_form_poly_are_the_slots_in_design_order():
    a = Poly(A, RING).ntt()
    got = a.limbs()
    assert got.shape == (2, 8)
    for row, q in zip(got, RING.moduli, strict=True):
        assert [int(x) for x in row] == ntt_slots(A, q, primitive_root_2n(q, 8))
    assert np.array_equal(
        Poly(A, RING).limbs(), np.array([[x % q for x in A] for q in RING.moduli])
    )


def test_tobytes_is_the_stored_montgomery_words():
    a = Poly(A, RING)
    raw = np.frombuffer(a.tobytes(), dtype="<u4").reshape(2, 8)
    R = 1 << 32
    assert [[int(w) for w in row] for row in raw] == [[x * R % q for x in A] for q in RING.moduli]
    ring64 = RingSpec(8, ntt_primes(8, 50, 2))
    b = Poly(A, ring64)
    assert len(b.tobytes()) == 2 * 8 * 8


def test_constants_realize_in_their_domain():
    c = Poly.const(5, RING).realize()
    assert c.tolist() == [5, 0, 0, 0, 0, 0, 0, 0]
    assert c.limbs().tolist() == [[5, 0, 0, 0, 0, 0, 0, 0]] * 2
    d = Poly.const(5, RING).ntt()
    assert d.limbs().tolist() == [[5] * 8] * 2 and d.tolist() == [5] + [0] * 7


def test_elementwise_chains_fuse_into_one_kernel():
    a, b, c, d = (Poly.uniform(RING, rng=i).ntt().realize() for i in range(4))
    expr = ((a + b) * (c - 1)).rotate(3) + d
    ks = kernels(expr)
    assert len(ks) == 1 and ks[0].info.kind == "elementwise"
    assert expr.tolist() == evaluate(expr.node)


def test_domain_changes_are_their_own_kernels():
    a, b = Poly(A, RING), Poly(B, RING)
    kinds = sorted(k.info.kind for k in kernels(a * b))
    assert kinds == ["elementwise", "ntt", "ntt"]  # ntt(a), ntt(b), the pointwise product
    assert [k.info.kind for k in kernels(a * 3 + 1)] == ["elementwise"]  # constants force nothing
    assert sorted(k.info.kind for k in kernels((a * b).rescale())) == [
        "elementwise",
        "intt",
        "ntt",
        "ntt",
        "rescale",
    ]


def test_a_view_of_a_realized_buffer_is_no_kernel():
    ring = RingSpec(8, (17, 97, 113))
    a = Poly(A * 1, ring).realize()
    view = a.to_ring(RingSpec(8, (97, 113)))
    assert kernels(view) == []
    view.realize()
    assert view.node.src[0].op is Op.BUFFER_VIEW
    assert view.tolist() == [x % (97 * 113) for x in A]
    # a view feeding work is fused into the loads
    assert len(kernels(view + 1)) == 1


def test_outputs_realized_together_share_work():
    a, b = Poly(A, RING).ntt(), Poly(B, RING).ntt()
    x = a * b
    y, z = x + 1, x * 2
    ks = kernels(y, z)
    # ntt(a), ntt(b), x (shared, stored once), y, z
    assert len(ks) == 5
    ren.realize(y, z)
    assert y.realized and z.realized
    prod = negacyclic(A, B, RING.Q)
    assert y.tolist() == [(prod[0] + 1) % RING.Q, *prod[1:]]
    assert z.tolist() == [2 * v % RING.Q for v in prod]


def test_realized_values_are_not_computed_again(monkeypatch):
    a, b = Poly(A, RING), Poly(B, RING)
    x = a * b
    later = x + 5  # built before x is realized: its graph holds x's
    x.realize()
    calls = []
    real = realize_mod.prepare
    monkeypatch.setattr(ren.poly, "prepare", lambda nodes, f: calls.append(nodes) or real(nodes, f))
    first = x.tolist()
    assert x.tolist() == first and calls == []  # no schedule for a realized poly
    # the other poly was repointed: its graph reads x's buffer, one fused kernel remains
    assert any(n.op is Op.BUFFER and n.arg.buffer.allocated for n in later.node.toposort())
    assert len(kernels(later)) == 1
    assert later.tolist() == [(first[0] + 5) % RING.Q, *first[1:]]


def test_rotation_and_rescale_values():
    ring = RingSpec(16, ntt_primes(16, 30, 3))
    coeffs = list(range(-8, 8))
    a = Poly(coeffs, ring)
    assert a.rotate(3).tolist() == automorphism(coeffs, pow(5, 3, 32), ring.Q)
    assert a.rescale().tolist() == evaluate(a.rescale().node)


def test_realize_takes_polys_only():
    with pytest.raises(TypeError, match="Poly"):
        ren.realize(Poly(A, RING), 3)


def test_realizing_a_graph_whose_inputs_were_freed_is_an_error():
    a = Poly(A, RING)
    expr = a * 2 + 1
    a.node.src[0].arg.buffer.deallocate()
    with pytest.raises(RenError, match="holds no data: it was freed"):
        expr.realize()


def test_a_device_without_a_backend_is_a_clear_error():
    from ren.engine.realize import backend

    with pytest.raises(RenError, match="device 'tpu' has no backend"):
        backend("tpu")


def test_registering_a_device_checks_the_name_and_the_backend():
    from ren.backends import python
    from ren.device import devices, register_device

    with pytest.raises(ValueError, match="'cpu' is one of Ren's own devices"):
        register_device("cpu", python)
    with pytest.raises(ValueError, match="lowercase identifier, got 'My-Dev'"):
        register_device("My-Dev", python)
    with pytest.raises(TypeError, match="must have a callable compile"):
        register_device("mydev", object())
    assert "mydev" not in devices()
    register_device("mydev", python)
    assert devices()[-1] == "mydev"
    assert Poly(A, RING, device="mydev").realize().tolist() == Poly(A, RING).tolist()
    from ren.device import unregister_device

    unregister_device("mydev")
    assert "mydev" not in devices()
    with pytest.raises(ValueError, match="no device 'mydev' was registered"):
        unregister_device("mydev")
    with pytest.raises(ValueError, match="cannot be unregistered"):
        unregister_device("python")


def test_mismatched_inputs_are_clear_errors():
    a = Poly(A, RING)
    with pytest.raises(ValueError, match="device mismatch"):
        a + Poly(A, RING, device="cpu")
    with pytest.raises(ValueError, match="ring mismatch"):
        a + Poly(A, RingSpec(8, (17,)))
    with pytest.raises(ValueError, match="no modulus"):
        a.rescale().rescale()


def test_dumps_leave_one_graph_per_pass(tmp_path):
    a, b = Poly(A, RING), Poly(B, RING)
    with dump_to(tmp_path):
        ((a + b) * (a - 1)).realize()
    names = sorted(p.name for p in tmp_path.glob("*.dot"))
    assert names[0] == "00_input.dot" and len(names) == 13
    assert names[1:] == sorted(names[1:]) and names[-1] == "12_kernelize.dot"


def test_expected_limbs_agree_for_a_u64_ring():
    ring = RingSpec(16, ntt_primes(16, 60, 2))
    a = Poly(list(range(16)), ring)
    prod = (a * a).realize()
    assert np.array_equal(prod.limbs(), expected_limbs(evaluate((a * a).node), ring, Domain.NTT))


def test_buffers_allocate_lazily():
    buf = Buffer("python", "u32", 16)
    assert not buf.allocated
    buf.ensure_allocated()
    assert buf.allocated and buf.array.sum() == 0


def test_exec_units_are_consumed_and_recorded():
    a, b = Poly(A, RING), Poly(B, RING)
    expr = a * b
    sched = kernels(expr)
    units = realize_mod.make_exec_units(sched)
    assert [u.kernel for u in units] == sched and all(u.device == "python" for u in units)
    seen = []
    outputs = [k.bufs[0] for k in sched]
    assert not any(buf.allocated for buf in outputs)  # nothing allocated before it runs
    realize_mod.run_exec_units(units, recorder=seen.append)
    assert units == [] and [u.kernel for u in seen] == sched
    words = outputs[-1].array.reshape(2, 8)
    r_inv = [pow(1 << 32, -1, q) for q in RING.moduli]
    plain = [
        [int(w) * ri % q for w in row] for row, q, ri in zip(words, RING.moduli, r_inv, strict=True)
    ]
    slots = [ntt_slots(negacyclic(A, B, q), q, primitive_root_2n(q, 8)) for q in RING.moduli]
    assert plain == slots


def test_debug_output(monkeypatch, capsys):
    monkeypatch.setenv("REN_DEBUG", "2")
    schedule_cache.clear()
    (Poly(A, RING) * 3).realize()
    err = capsys.readouterr().err
    assert "schedule cache miss" in err
    assert "pass  1 simplify" in err and "pass 12 kernelize" in err
    assert "elementwise_n8_L2_u32" in err
    (Poly(B, RING) * 4).realize()  # the same graph over other values: no pass runs
    err = capsys.readouterr().err
    assert "schedule cache hit (1 kernels)" in err and "pass" not in err
    assert "elementwise_n8_L2_u32" in err
    monkeypatch.setenv("REN_DEBUG", "yes")  # not a level: a clear error, not silently off
    with pytest.raises(ValueError, match=r"REN_DEBUG='yes' is not accepted.*0 to 4"):
        (Poly(A, RING) * 5).realize()


def test_stepping_one_unit_at_a_time_poisons_only_what_is_done(monkeypatch):
    """``Realization.run(1)`` to the end gives what one ``run()`` gives, under ``REN_POISON=1``
    (a view is poisoned after its last use over the whole realization, not the batch)."""
    monkeypatch.setenv("REN_POISON", "1")
    ring = RingSpec(16, ntt_primes(16, 30, 3))
    a, b = Poly(list(range(16)), ring), Poly([5 - i for i in range(16)], ring)
    want = ((a * b).rescale() * 3 + 1).tolist()
    out = (a * b).rescale() * 3 + 1
    prepared = ren.poly.prepare_realize(out)
    assert len(prepared.units) > 3
    while prepared.units:
        prepared.run(1)
    assert prepared.done and out.realized and out.tolist() == want
