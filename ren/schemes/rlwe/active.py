"""Each scheme's current contexts, per thread: one context variable per scheme, made here.

``with ctx:`` pushes a context on its scheme's variable and pops it at the end; a new thread (or
asyncio task) starts with none, and a ``with`` block in one thread is not seen by another.
"""

from __future__ import annotations

import threading
from contextvars import ContextVar
from typing import Any

__all__ = ["active_contexts", "enter", "leave"]

_LOCK = threading.Lock()  # guards _VARS: two threads asking for a new scheme get one variable
_VARS: dict[str, ContextVar[tuple[Any, ...]]] = {}


def active_contexts(scheme: str) -> ContextVar[tuple[Any, ...]]:
    """The variable holding this thread's active contexts of ``scheme``, innermost last."""
    var = _VARS.get(scheme)
    if var is None:
        with _LOCK:
            var = _VARS.setdefault(scheme, ContextVar(f"ren_{scheme}_active", default=()))
    return var


def enter(var: ContextVar[tuple[Any, ...]], context: object) -> None:
    """Make ``context`` the innermost active context of ``var`` in this thread."""
    var.set((*var.get(), context))


def leave(var: ContextVar[tuple[Any, ...]], context: object) -> None:
    """Take the innermost occurrence of ``context`` off ``var`` in this thread (if it is there)."""
    stack = var.get()
    for i in range(len(stack) - 1, -1, -1):
        if stack[i] is context:
            var.set(stack[:i] + stack[i + 1 :])
            return
