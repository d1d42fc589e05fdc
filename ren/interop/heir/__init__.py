"""HEIR's programs on Ren: the MLIR that Google's HEIR compiler emits, read and run.

HEIR (``heir-py``, with its ``heir-opt`` binary) lowers a function to a CKKS, BGV or BFV program in
MLIR. This package reads such a module in MLIR's generic form (``reader.parse``: what
``heir-opt --mlir-print-op-generic`` prints, ``tools.run_heir_opt`` runs it) into ops, blocks and
attributes (``ir``), checking the text as hostile input, and runs a CKKS program on Ren
(``program.Program``): HEIR's chain as ``ckks.Params`` of explicit moduli, the client's packing
loops on NumPy (``cleartext``), the scheme's ops on Ren's lazy CKKS values.
"""

from __future__ import annotations

from ren.interop.heir.ir import MlirError, Module, Op
from ren.interop.heir.program import Program
from ren.interop.heir.reader import parse

__all__ = ["MlirError", "Module", "Op", "Program", "parse"]
