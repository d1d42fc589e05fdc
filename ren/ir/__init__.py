"""Ren's IR: the op set, the interned ``Node``, derived facts, the rewriter and the verifier."""

from ren.ir.facts import Facts, device_of, domain_of, facts, is_const, ring_of
from ren.ir.node import (
    BufferArg,
    ConstArg,
    CopyArg,
    GaloisArg,
    Node,
    RescaleArg,
    RingArg,
    ToRingArg,
    ViewArg,
    toposort,
)
from ren.ir.op import DType, Op
from ren.ir.rewrite import Pat, Rewrite, RewriteLoopError, Rule, Rules, graph_rewrite
from ren.ir.spec import verify

__all__ = [
    "BufferArg",
    "ConstArg",
    "CopyArg",
    "DType",
    "Facts",
    "GaloisArg",
    "Node",
    "Op",
    "Pat",
    "RescaleArg",
    "Rewrite",
    "RewriteLoopError",
    "RingArg",
    "Rule",
    "Rules",
    "ToRingArg",
    "ViewArg",
    "device_of",
    "domain_of",
    "facts",
    "graph_rewrite",
    "is_const",
    "ring_of",
    "toposort",
    "verify",
]
