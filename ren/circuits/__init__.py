"""Circuits: programs written with a scheme's public API, each one lazy graph for the compiler.

Each circuit builds inside a region of its own name (``ren.region``), so the report, the text
report and the debugger show which kernels it made.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from ren.ir.region import region

__all__ = ["in_region"]

F = TypeVar("F", bound=Callable[..., Any])


def in_region(name: str) -> Callable[[F], F]:
    """Decorate a circuit: it builds its graph inside ``ren.region(name)`` (in the caller's)."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            with region(name):
                return fn(*args, **kwargs)

        return run  # type: ignore[return-value]

    return decorate
