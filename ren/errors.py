"""Ren's engine errors, and how a message shows the value it refuses.

Bad user input raises ``ValueError``/``TypeError``; the engine raises these.
"""

from __future__ import annotations

__all__ = ["JitError", "RenError", "SpecError", "describe"]


def describe(value: object) -> str:
    """``value`` for an error message: its type and at most 60 characters of its repr."""
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # an int past Python's digit limit, a deep nest
        text = "..."
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


class RenError(Exception):
    """The root of Ren's engine errors (a malformed graph, a rule loop, a failed realization)."""


class SpecError(RenError):
    """A graph is not well formed; the message names the bad node and the rule it breaks."""


class JitError(RenError):
    """``ren.jit`` cannot capture or replay a call; the message names the function or argument."""
