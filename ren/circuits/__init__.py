"""Circuits: programs written with a scheme's public API, each one lazy graph for the compiler.

Each circuit builds inside a region of its own name (``ren.region``), so the report, the text
report and the debugger show which kernels it made; its instance notes the level and scale of its
input and output (``ren.ir.region.in_region``).
"""

from __future__ import annotations

from ren.ir.region import in_region

__all__ = ["in_region"]
