"""HEIR's programs on Ren: the MLIR that Google's HEIR compiler emits, read as plain data.

HEIR (``heir-py``, with its ``heir-opt`` binary) lowers a function to a CKKS, BGV or BFV program in
MLIR. This package reads such a module in MLIR's generic form (``reader.parse``: what
``heir-opt --mlir-print-op-generic`` prints) into ops, blocks and attributes (``ir``), checking
the text as hostile input. Running the program on Ren's schemes is built on it.
"""

from __future__ import annotations

from ren.interop.heir.ir import MlirError, Module, Op
from ren.interop.heir.reader import parse

__all__ = ["MlirError", "Module", "Op", "parse"]
