"""The verifier accepts what the front end builds and names the bad node in a malformed graph."""

import types

import pytest

from ren.device import Buffer, register_device, unregister_device
from ren.errors import SpecError
from ren.ir import (
    BufferArg,
    CopyArg,
    DType,
    GaloisArg,
    Node,
    Op,
    RescaleArg,
    RingArg,
    ToRingArg,
    ViewArg,
    verify,
)
from ren.ir.kernels import Family, KernelInfo
from ren.ir.node import IndexArg, KernelArg, SlotArg
from ren.poly import Poly
from ren.ring import Domain, RingSpec, ntt_primes

RING = RingSpec(8, (17, 97, 113))
U = DType.U32


def poly() -> Poly:
    return Poly(list(range(8)), RING)


def test_front_end_graphs_verify():
    a, b = poly(), poly()
    progs = [
        (a + b) * (a - 1),
        -a.ntt() + b,
        a.rescale().to_ring(RingSpec(8, (17,))),
        a.rotate(2).conjugate().automorphism(3),
        a.to("cpu").contiguous() * 2,
        a.to_ring(RingSpec(8, (17, 193))),
        a.to_ring(RingSpec(8, (ntt_primes(8, 40, 1)[0],))),  # a u64 target
    ]
    for p in progs:
        assert verify(p.node) is p.node
    assert verify(Node(Op.SINK, DType.VOID, tuple(p.node for p in progs)))


def bad(node: Node, message: str) -> None:
    with pytest.raises(SpecError, match=message) as e:
        verify(node)
    assert node.op.name in str(e.value)


def _copy_to_a_device_since_unregistered() -> CopyArg:
    """A ``CopyArg`` to a device that was registered when it was made, and is no longer."""
    register_device("gone", types.SimpleNamespace(compile=lambda ast, info: None))
    try:
        return CopyArg("gone")
    finally:
        unregister_device("gone")


def test_malformed_graphs_name_the_node_and_rule():
    a = poly()
    other = Poly(list(range(8)), RingSpec(8, (17, 97)))
    bad(Node(Op.ADD, U, (a.node, other.node)), "different rings")
    bad(Node(Op.ADD, U, (a.node, a.to("cpu").node)), "different devices")
    bad(Node(Op.ADD, U, (a.node,)), "takes 2 source")
    bad(Node(Op.NEG, DType.U64, (a.node,)), "dtype u64 differs")
    bad(Node(Op.RESCALE, U, (a.node,), RescaleArg((193,))), "193 is not in the ring")
    bad(Node(Op.RESCALE, U, (a.node,), RescaleArg((17, 97, 113))), "leaves no modulus")
    bad(Node(Op.RESCALE, U, (a.node,), None), "RescaleArg")
    bad(Node(Op.ROTATE, U, (a.node,), GaloisArg(17)), "must be odd and in \\(0, 2n=16\\)")
    bad(Node(Op.TO_RING, U, (a.node,), ToRingArg(RingSpec(16, (97,)))), "degree")
    bad(Node(Op.COPY, U, (a.node,), _copy_to_a_device_since_unregistered()), "unknown device")
    bad(Node(Op.SINK, U, (a.node,)), "void")
    bad(Node(Op.AS_RING, U, (a.node,), RingArg(RING, Domain.COEFF)), "only BUFFER")
    buf = a.node.src[0]
    small = RingSpec(8, (17,))
    bad(Node(Op.AS_RING, U, (buf,), RingArg(small, Domain.COEFF)), "needs 8 words")
    bad(Node(Op.BUFFER_VIEW, U, (buf,), ViewArg(16, 16)), "outside")
    bad(Node(Op.BUFFER, DType.U64, (), BufferArg(buf.arg.buffer)), "differs from its buffer")
    bad(Node(Op.KERNEL, DType.VOID, ()), "KernelArg")


def test_every_op_has_a_rule():
    from ren.ir.spec import SPEC

    assert set(SPEC) == set(Op)


def test_nested_bad_node_is_found():
    a = poly()
    broken = Node(Op.ROTATE, U, (a.node,), GaloisArg(17))
    with pytest.raises(SpecError, match="bad ROTATE"):
        verify(Node(Op.ADD, U, (a.node, broken)))


def test_a_kernel_body_is_verified_node_by_node_before_its_shape():
    # a LOAD with no source inside a kernel: named as a bad node, never an IndexError
    ring = RingSpec(8, (17, 97))
    load = Node(Op.LOAD, U, (), IndexArg(ring, Domain.NTT))
    out = Node(Op.SLOT, U, (), SlotArg(0))
    ast = Node(Op.STORE, DType.VOID, (out, Node(Op.NEG, U, (load,))))
    info = KernelInfo(Family.ELEMENTWISE, ring, Domain.NTT, "python", "elementwise_n8_L2_u32")
    buf = Node(Op.BUFFER, U, (), BufferArg(Buffer("python", "u32", 16)))
    with pytest.raises(SpecError, match=r"bad LOAD .* takes 1 source\(s\), has 0"):
        verify(Node(Op.KERNEL, DType.VOID, (buf,), KernelArg(ast, info)))
