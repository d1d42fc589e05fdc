"""Every IR argument checks its fields when it is made, whoever makes it.

Oracle: the field's documented type and range. A wrong type is a ``TypeError``, a value out of
range a ``ValueError``, each naming the class and the field; every value Ren itself builds is
accepted (the passes and the front end run on these classes in the rest of the suite).
"""

from __future__ import annotations

import types

import pytest

from ren.device import Buffer, register_device, unregister_device
from ren.engine.memory import DevicePlan, Event, MemoryPlan, PlannedBuffer
from ren.ir import node as node_module
from ren.ir.args import (
    BufferArg,
    ConstArg,
    ConstRowArg,
    CopyArg,
    GaloisArg,
    ImmArg,
    IndexArg,
    RescaleArg,
    RingArg,
    SlotArg,
    ToRingArg,
    ViewArg,
)
from ren.ir.kernels import Family, KernelInfo, TemplateParams
from ren.ir.node import KernelArg, Node
from ren.ir.op import DType, Op
from ren.ring import Domain, RingSpec

RING = RingSpec(8, (17, 97))
OTHER = RingSpec(16, (97, 193))
C = Domain.COEFF


def index(**kw):
    return IndexArg(**{"ring": RING, "domain": Domain.NTT, **kw})


def const_row(**kw):
    return ConstRowArg(**{"row": 0, "ring": RING, "device": "cpu", **kw})


def imm(**kw):
    return ImmArg(**{"value": 3, "ring": RING, "device": "python", **kw})


def params(**kw):
    return TemplateParams(**{"source": RING, **kw})


def info(**kw):
    fields = {
        "family": Family.NTT,
        "ring": RING,
        "domain": Domain.NTT,
        "device": "cpu",
        "name": "ntt_n8_L2_u32",
        "params": params(),
    }
    return KernelInfo(**{**fields, **kw})


#: (label, make, error type, what the message names)
BAD = [
    (
        "IndexArg.limb_offset='0'",
        lambda: index(limb_offset="0"),
        TypeError,
        r"IndexArg\.limb_offset",
    ),
    ("IndexArg.limb_offset=C", lambda: index(limb_offset="0) * 0]; }"), TypeError, "limb_offset"),
    ("IndexArg.limb_offset=True", lambda: index(limb_offset=True), TypeError, "limb_offset"),
    ("IndexArg.limb_offset=1.0", lambda: index(limb_offset=1.0), TypeError, "limb_offset"),
    ("IndexArg.limb_offset=-1", lambda: index(limb_offset=-1), ValueError, "limb_offset"),
    ("IndexArg.galois=4", lambda: index(galois=4), ValueError, r"IndexArg\.galois 4 must be odd"),
    ("IndexArg.galois=17 (2n=16)", lambda: index(galois=17), ValueError, r"galois.*\[1, 16\)"),
    ("IndexArg.galois='5'", lambda: index(galois="5"), TypeError, "galois"),
    ("IndexArg.ring='ring'", lambda: index(ring="ring"), TypeError, r"IndexArg\.ring"),
    ("IndexArg.domain='NTT'", lambda: index(domain="NTT"), TypeError, r"IndexArg\.domain"),
    ("ConstRowArg.row='0'", lambda: const_row(row="0"), TypeError, r"ConstRowArg\.row"),
    ("ConstRowArg.row=-2", lambda: const_row(row=-2), ValueError, "row"),
    ("ConstRowArg.layout='al'", lambda: const_row(layout="al"), ValueError, "layout"),
    ("ConstRowArg.layout=C", lambda: const_row(layout="all */"), ValueError, "layout"),
    ("ConstRowArg.device='gpu'", lambda: const_row(device="gpu"), ValueError, "device"),
    ("ConstRowArg.device=3", lambda: const_row(device=3), TypeError, "device"),
    ("ImmArg.value=True", lambda: imm(value=True), TypeError, r"ImmArg\.value"),
    ("ImmArg.value=2.0", lambda: imm(value=2.0), TypeError, "value"),
    ("ImmArg.layout=None", lambda: imm(layout=None), ValueError, "layout"),
    ("SlotArg.index=True", lambda: SlotArg(True), TypeError, r"SlotArg\.index"),
    ("SlotArg.index='1'", lambda: SlotArg("1"), TypeError, "index"),
    ("SlotArg.index=-1", lambda: SlotArg(-1), ValueError, "index"),
    ("ViewArg.offset=-8", lambda: ViewArg(-8, 8), ValueError, r"ViewArg\.offset"),
    ("ViewArg.size='8'", lambda: ViewArg(0, "8"), TypeError, r"ViewArg\.size"),
    ("GaloisArg.galois=4", lambda: GaloisArg(4), ValueError, r"GaloisArg\.galois 4 must be odd"),
    ("GaloisArg.galois=0", lambda: GaloisArg(0), ValueError, "galois"),
    ("GaloisArg.galois=5.0", lambda: GaloisArg(5.0), TypeError, "galois"),
    ("GaloisArg.steps=-1", lambda: GaloisArg(5, -1), ValueError, "steps"),
    ("CopyArg.device='tpu'", lambda: CopyArg("tpu"), ValueError, r"CopyArg\.device 'tpu'"),
    ("CopyArg.device=None", lambda: CopyArg(None), TypeError, "device"),
    ("ConstArg.value='3'", lambda: ConstArg("3", "python"), TypeError, r"ConstArg\.value"),
    ("ConstArg.device='gpu'", lambda: ConstArg(3, "gpu"), ValueError, "device"),
    ("RescaleArg.moduli=()", lambda: RescaleArg(()), TypeError, "moduli"),
    ("RescaleArg.moduli=[17]", lambda: RescaleArg([17]), TypeError, "moduli"),
    ("RescaleArg.moduli=('17',)", lambda: RescaleArg(("17",)), TypeError, "moduli"),
    ("RescaleArg.moduli=(17, 17)", lambda: RescaleArg((17, 17)), ValueError, "repeat"),
    ("RingArg.ring=(8, (17,))", lambda: RingArg((8, (17,)), C), TypeError, r"RingArg\.ring"),
    ("RingArg.domain='coeff'", lambda: RingArg(RING, "coeff"), TypeError, r"RingArg\.domain"),
    ("ToRingArg.ring=None", lambda: ToRingArg(None), TypeError, r"ToRingArg\.ring"),
    ("BufferArg.buffer=0", lambda: BufferArg(0), TypeError, r"BufferArg\.buffer"),
    ("KernelInfo.name=C", lambda: info(name="x */ int y;"), ValueError, r"KernelInfo\.name"),
    ("KernelInfo.name=''", lambda: info(name=""), ValueError, "name"),
    ("KernelInfo.device='gpu'", lambda: info(device="gpu"), ValueError, "device"),
    ("KernelInfo.family='ntt'", lambda: info(family="ntt"), TypeError, "family"),
    ("KernelInfo.params=None (ntt)", lambda: info(params=None), TypeError, "params"),
    (
        "KernelInfo.params (elementwise)",
        lambda: info(family=Family.ELEMENTWISE),
        ValueError,
        "params",
    ),
    ("TemplateParams.limb_offset='1'", lambda: params(limb_offset="1"), TypeError, "limb_offset"),
    ("TemplateParams.drop=[97]", lambda: params(drop=[97]), TypeError, "drop"),
    ("TemplateParams.drop=(193,)", lambda: params(drop=(193,)), ValueError, "193 is not"),
    ("TemplateParams.drop=all", lambda: params(drop=(17, 97)), ValueError, "drop"),
    ("TemplateParams.target other n", lambda: params(target=OTHER), ValueError, "target"),
    ("TemplateParams.source=3", lambda: params(source=3), TypeError, "source"),
    ("PlannedBuffer.size=-1", lambda: PlannedBuffer(0, "u32", -1, 4, 0, 0, 1), ValueError, "size"),
    ("PlannedBuffer.dtype", lambda: PlannedBuffer(0, "u3", 1, 4, 0, 0, 1), ValueError, "dtype"),
    ("Event.kind", lambda: Event("*/", 0, 0, 0, 4), ValueError, r"Event\.kind"),
    ("DevicePlan.device", lambda: DevicePlan("x", 0, 0, 0, (), ()), ValueError, "device"),
    ("MemoryPlan.devices", lambda: MemoryPlan((1,)), TypeError, r"MemoryPlan\.devices"),
]


@pytest.mark.parametrize(("label", "make", "kind", "names"), BAD, ids=[b[0] for b in BAD])
def test_a_wrong_field_is_refused_naming_it(label, make, kind, names):
    with pytest.raises(kind, match=names):
        make()


def test_the_values_ren_builds_are_accepted():
    buf = Buffer("python", "u32", 16)
    made = [
        index(limb_offset=1, galois=15),
        const_row(row=2, layout="first"),
        imm(value=-(2**200)),
        SlotArg(0),
        ViewArg(0, 16),
        GaloisArg(5, 1),
        CopyArg("cpu"),
        ConstArg(2**100, "python"),
        RescaleArg((97,)),
        RingArg(RING, C),
        ToRingArg(OTHER),
        BufferArg(buf),
        info(),
        info(family=Family.ELEMENTWISE, params=None),
        params(limb_offset=1, drop=(97,), target=RingSpec(8, (17, 97, 113))),
    ]
    for arg in made:  # frozen dataclasses: equal to a copy of themselves, hashable
        assert arg == arg.__class__(**arg.__dict__) or isinstance(arg, BufferArg)
        hash(arg)


def test_a_registered_device_is_a_known_device():
    register_device("mine", types.SimpleNamespace(compile=lambda ast, kernel_info: None))
    try:
        assert CopyArg("mine").device == "mine"
    finally:
        unregister_device("mine")
    with pytest.raises(ValueError, match="'mine' is not a known device"):
        CopyArg("mine")


def test_the_kernel_arg_checks_its_body_info_and_constants():
    slot = Node(Op.SLOT, DType.U32, (), SlotArg(0))
    with pytest.raises(TypeError, match=r"KernelArg\.ast must be a STORE"):
        KernelArg(slot, info())
    store = Node(Op.STORE, DType.VOID, (slot, slot))
    with pytest.raises(TypeError, match=r"KernelArg\.info"):
        KernelArg(store, "info")
    with pytest.raises(TypeError, match=r"KernelArg\.consts"):
        KernelArg(store, info(), ("5",))
    assert KernelArg(store, info(), (5, -(2**90))).consts == (5, -(2**90))


def test_every_arg_is_reexported_where_it_always_was():
    from ren.ir import args

    for name in args.__all__:
        if name[0].isupper() and name.endswith("Arg"):
            assert getattr(node_module, name) is getattr(args, name)
