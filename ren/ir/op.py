"""The op set of Ren's IR, in groups. Read this file as the table of contents of the graph.

Every node carries one ``Op``. The groups mirror the stages of realization: the front end builds
ring-level ops, the scheduler adds storage and scheduling ops, and kernelization lowers to the
kernel ops that backends render. ``docs/ir.md`` has a line on each.
"""

from __future__ import annotations

import enum


class Op(enum.Enum):
    """One IR operation. The value is a short lower-case name used in printing."""

    # members are singletons compared by identity: hash them so too, in C (the default hashes the
    # name in Python, and every interned node's key hashes its op and dtype)
    __hash__ = object.__hash__

    # --- front end: what ``Poly`` methods build ------------------------------------------
    ADD = "add"  # a + b in the ring
    SUB = "sub"  # a - b
    NEG = "neg"  # -a
    MUL = "mul"  # a * b (negacyclic product; pointwise in NTT form)
    NTT = "ntt"  # same value, NTT (evaluation) representation
    INTT = "intt"  # same value, coefficient representation
    TO_RING = "to_ring"  # a_c mod Q' in another RNS basis (view or basis extension)
    RESCALE = "rescale"  # round(a_c / P), dropping the moduli of P
    ROTATE = "rotate"  # a(X^g): slot rotation / conjugation, lowered to AUTOMORPHISM
    COPY = "copy"  # same value on another device
    CONTIGUOUS = "contiguous"  # same value, asked to be materialized in its own buffer
    CONST = "const"  # the constant polynomial c (allocation-free)

    # --- storage: where values live --------------------------------------------------------
    BUFFER = "buffer"  # a device buffer of words
    BUFFER_VIEW = "buffer_view"  # a window of a buffer (limb offset)
    AS_RING = "as_ring"  # ring and domain metadata on storage or a constant

    # --- scheduling: materialization and ordering ------------------------------------------
    SINK = "sink"  # the one root gathering every requested output
    BUFFERIZE = "bufferize"  # "materialize this value here"
    STORE = "store"  # write a value into a buffer
    AFTER = "after"  # a buffer, ordered after the stores into it
    AUTOMORPHISM = "automorphism"  # a(X^g) in a fixed domain (a permutation in NTT form)

    # --- kernel: the body of a scheduled kernel --------------------------------------------
    KERNEL = "kernel"  # a kernel root with its parameters
    SLOT = "slot"  # the i-th buffer parameter of a kernel
    GIDX = "gidx"  # the global index of the word being computed
    INDEX = "index"  # address arithmetic: buffer + offset
    LOAD = "load"  # read a word
    IMM = "imm"  # a lowered constant: its words per limb, in every slot or coefficient 0 only


class DType(enum.Enum):
    """Value types of nodes: ring words, index arithmetic, or nothing (roots, stores)."""

    # members are singletons compared by identity: hash them so too, in C (the default hashes the
    # name in Python, and every interned node's key hashes its op and dtype)
    __hash__ = object.__hash__

    U32 = "u32"
    U64 = "u64"
    INDEX = "index"
    VOID = "void"

    @classmethod
    def of_ring(cls, ring_dtype: str) -> DType:
        """The word dtype of a ring's ``dtype`` string (``"u32"``/``"u64"``)."""
        return cls(ring_dtype)

    def __repr__(self) -> str:
        return f"DType.{self.name}"


# The op groups the graph pictures color by (ren.ir.dot); a kernel's family is ren.ir.kernels.
FRONTEND = frozenset(
    {
        Op.ADD,
        Op.SUB,
        Op.NEG,
        Op.MUL,
        Op.NTT,
        Op.INTT,
        Op.TO_RING,
        Op.RESCALE,
        Op.ROTATE,
        Op.COPY,
        Op.CONTIGUOUS,
        Op.CONST,
    }
)
STORAGE = frozenset({Op.BUFFER, Op.BUFFER_VIEW, Op.AS_RING})
SCHEDULING = frozenset({Op.SINK, Op.BUFFERIZE, Op.STORE, Op.AFTER, Op.AUTOMORPHISM})
KERNEL = frozenset({Op.KERNEL, Op.SLOT, Op.GIDX, Op.INDEX, Op.LOAD, Op.IMM})
