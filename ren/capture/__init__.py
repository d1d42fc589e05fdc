"""Capture and replay of whole plans: ``ren.jit`` over functions of ``Poly`` values.

``function`` holds the jitted function (its table of captured plans, keyed by the arguments'
structure), ``plan`` the captured plan and its replay, ``arguments`` the walk that finds the
``Poly`` values in arguments and results. This is the front floor: it builds on the engine's
realization (``ren.engine.realize`` records each exec unit a capture runs) and memory planner.
"""

from ren.capture.function import CacheInfo, JitFunction, capturing, clear_jit, jit
from ren.capture.plan import CapturedPlan

__all__ = ["CacheInfo", "CapturedPlan", "JitFunction", "capturing", "clear_jit", "jit"]
