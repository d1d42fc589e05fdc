"""The current CKKS context of each thread (``with ckks.Context(...)`` sets it)."""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING, Any

from ren.schemes.rlwe import bytes as _fmt
from ren.schemes.rlwe.active import active_contexts

if TYPE_CHECKING:
    from ren.schemes.ckks.context import Context


# ---------------------------------------------------------------------------------------------
# the context

#: The active contexts of this thread (or asyncio task), innermost last.
ACTIVE: contextvars.ContextVar[tuple[Context, ...]] = active_contexts("ckks")


def current() -> Context:
    """The innermost active ``Context`` of this thread (``with ckks.Context(...)``).

    Each thread has its own: a ``with`` block in one thread is not seen by another, and a new
    thread starts with none.

    Raises:
        RuntimeError: outside every ``with ckks.Context(...)`` block of this thread.
    """
    stack = ACTIVE.get()
    if not stack:
        raise RuntimeError(
            "no CKKS context is active in this thread: use `with ckks.Context(params) as ctx:` "
            "(in each thread) or call the context's methods (ctx.encrypt, ctx.decrypt, ...)"
        )
    return stack[-1]


def context_arg(context: object) -> Context:
    """The context a ``context=`` argument names: the current one for ``None``, else checked."""
    if context is None:
        return current()
    from ren.schemes.ckks.context import Context  # it imports this module

    if not isinstance(context, Context):
        raise TypeError(f"context must be a ckks.Context, got {_fmt.describe(context)}")
    return context


def plan_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """A loaded plan's result fields for a ciphertext or plaintext, with the active context."""
    stack = ACTIVE.get()
    return {
        "scale": float(fields["scale"]),
        "level": int(fields["level"]),
        "real": bool(fields["real"]),
        "context": stack[-1] if stack else None,
    }
