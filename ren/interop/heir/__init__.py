"""HEIR's programs on Ren: the MLIR that Google's HEIR compiler emits, read, run and shown.

HEIR (``heir-py``, with its ``heir-opt`` binary) lowers a function to a CKKS, BGV or BFV program in
MLIR. ``compile(source, scheme)`` runs its pipeline and ``load(lowered)`` takes a module it
already lowered; both give a ``Program`` that runs on Ren: HEIR's chain as Ren's ``Params`` of
explicit moduli, the client's packing loops on NumPy (``cleartext``), each scheme op on Ren's lazy
values in a region of its own (``program``), and the same module on plain slot vectors as the
reference (``clear``; ``diverge`` finds the first op an encrypted run departs from it at). The
reader (``reader.parse``, ``ir``) takes the text as hostile input; ``tools`` runs heir-opt.
"""

from __future__ import annotations

from ren.interop.heir.api import compile, load, lower
from ren.interop.heir.ir import MlirError, Module, Op
from ren.interop.heir.program import Encrypted, Program
from ren.interop.heir.reader import parse
from ren.interop.heir.tools import HeirMissing

__all__ = [
    "Encrypted",
    "HeirMissing",
    "MlirError",
    "Module",
    "Op",
    "Program",
    "compile",
    "load",
    "lower",
    "parse",
]
