"""Ren's engine errors.

Bad user input raises ``ValueError``/``TypeError``; the engine raises these.
"""

from __future__ import annotations

__all__ = ["JitError", "RenError", "SpecError"]


class RenError(Exception):
    """The root of Ren's engine errors (a malformed graph, a rule loop, a failed realization)."""


class SpecError(RenError):
    """A graph is not well formed; the message names the bad node and the rule it breaks."""


class JitError(RenError):
    """``ren.jit`` cannot capture or replay a call; the message names the function or argument."""
