"""Kernel families as data: what a kernel is, and what a backend needs to run it.

The ``kernelize`` pass cuts the graph into kernels and describes each with a ``KernelInfo``: its
``Family``, the ring and domain it writes, its device, and for the polynomial families the
parameters a template needs (the ring and limb window it reads, the moduli a rescale drops, the
ring a basis extension writes). A backend dispatches on ``info.family`` and reads those fields;
it never digs the parameters out of the kernel body by position.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

import numpy as np

from ren.ir.args import check_device, check_domain, check_int, check_ring
from ren.ir.op import Op
from ren.ring import Domain, RingSpec

__all__ = ["FAMILY_OF_OP", "Family", "KernelInfo", "TemplateParams", "const_words"]


class Family(enum.Enum):
    """A kernel family: how a backend runs kernels of it.

    ``ELEMENTWISE`` kernels are rendered from their body (a renderer); ``COPY`` kernels copy a
    window of limbs; the others are *template* families, whose code is written once per family
    (NumPy, C or CUDA) and specialized to the ring.
    """

    __hash__ = object.__hash__  # members compare by identity: hash them so, in C

    ELEMENTWISE = "elementwise"
    COPY = "copy"
    NTT = "ntt"
    INTT = "intt"
    RESCALE = "rescale"
    BASE_CONVERT = "base_convert"

    @property
    def templated(self) -> bool:
        """Whether kernels of the family run a template (NTT, INTT, rescale, basis extension)."""
        return self not in (Family.ELEMENTWISE, Family.COPY)

    def __repr__(self) -> str:
        return f"Family.{self.name}"


#: The family of a kernel whose stored value is this op (anything else is elementwise).
FAMILY_OF_OP = {
    Op.NTT: Family.NTT,
    Op.INTT: Family.INTT,
    Op.RESCALE: Family.RESCALE,
    Op.TO_RING: Family.BASE_CONVERT,
    Op.COPY: Family.COPY,
}


#: What a kernel's name may hold (tools print it; no source ever holds it).
_NAME = re.compile(r"[A-Za-z0-9_]{1,100}")


@dataclass(frozen=True)
class TemplateParams:
    """What a template (or a copy) reads and how: set by ``kernelize`` for those families.

    Attributes:
        source: the ring the input is read in (a window of limbs of the stored input).
        limb_offset: the first limb of that window in the stored input.
        drop: the moduli a rescale divides by (``RESCALE``; else empty).
        target: the ring a basis extension writes (``BASE_CONVERT``; else ``None``).
    """

    source: RingSpec
    limb_offset: int = 0
    drop: tuple[int, ...] = ()
    target: RingSpec | None = None

    def __post_init__(self) -> None:
        source = check_ring("TemplateParams.source", self.source)
        check_int("TemplateParams.limb_offset", self.limb_offset)
        if type(self.drop) is not tuple:
            raise TypeError(f"TemplateParams.drop must be a tuple, got {type(self.drop).__name__}")
        for q in self.drop:
            check_int("TemplateParams.drop", q, 2)
            if q not in source.moduli:
                raise ValueError(f"TemplateParams.drop: {q} is not a modulus of {source}")
        if len(set(self.drop)) != len(self.drop) or len(self.drop) >= source.L:
            raise ValueError(
                f"TemplateParams.drop {self.drop} must be distinct moduli leaving one of {source}"
            )
        if self.target is not None:
            check_ring("TemplateParams.target", self.target)
            if self.target.n != source.n:
                raise ValueError(
                    f"TemplateParams.target {self.target} has another degree than {source}"
                )


@dataclass(frozen=True)
class KernelInfo:
    """What a kernel is: its family, the ring and domain it writes, its device, a short name.

    ``params`` holds what a template family (and a copy) needs, ``None`` for an elementwise
    kernel, whose body says everything.
    """

    family: Family
    ring: RingSpec
    domain: Domain
    device: str
    name: str
    params: TemplateParams | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.family, Family):
            raise TypeError(f"KernelInfo.family must be a Family, got {self.family!r}")
        check_ring("KernelInfo.ring", self.ring)
        check_domain("KernelInfo.domain", self.domain)
        check_device("KernelInfo.device", self.device)
        if type(self.name) is not str or not _NAME.fullmatch(self.name):
            raise ValueError(
                f"KernelInfo.name must be letters, digits and '_' (at most 100), got "
                f"{str(self.name)[:60]!r}"
            )
        if self.family is Family.ELEMENTWISE:
            if self.params is not None:
                raise ValueError("KernelInfo.params of an elementwise kernel must be None")
        elif not isinstance(self.params, TemplateParams):
            raise TypeError(
                f"KernelInfo.params of a {self.family.value} kernel must be TemplateParams, "
                f"got {type(self.params).__name__}"
            )

    @property
    def kind(self) -> str:
        """The family's name, as the tools print it: ``"ntt"``, ``"elementwise"``, ..."""
        return self.family.value

    def need_params(self) -> TemplateParams:
        """``params``, for a template or copy kernel.

        Raises:
            ValueError: for an elementwise kernel (it has none).
        """
        if self.params is None:
            raise ValueError(f"{self.name}: a {self.kind} kernel has no template parameters")
        return self.params

    def __repr__(self) -> str:
        return f"{self.name} [{self.kind}] {self.device} n={self.ring.n} L={self.ring.L}"


def const_words(ring: RingSpec, consts: tuple[int, ...]) -> np.ndarray:
    """A kernel's constants argument: row ``j`` holds ``consts[j] * R mod q_i`` for each limb.

    The words are in Montgomery form (``R = 2^word_bits``), ``len(consts) * L`` of them, row by
    row, in the ring's word type: what an ``IMM`` with a ``ConstRowArg`` reads.
    """
    R = 1 << ring.word_bits
    words = [c % q * R % q for c in consts for q in ring.moduli]
    return np.array(words, dtype=ring.np_dtype)
