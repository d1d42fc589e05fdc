"""Observers: tools that watch realizations and JIT calls without changing them.

``ren.viz`` records programs this way (the report, the step-through debugger). An observer is any
object; the engine calls the methods it has, in this order, for every realization in an
``observing(obs)`` block:

* ``on_input(sink)``: the graph handed to the scheduler;
* ``on_pass(step, name, sink, previous, ctx)``: after each pass (``previous`` is its input; the
  rules it fired are ``ctx.record[name]``, its time ``ctx.timings[name]``);
* ``on_prepared(realization)``: the scheduled kernels, the memory plan and the exec units, before
  any unit runs (a ``ren.engine.realize.Realization``);
* ``on_run(realization)``: when ``Poly.realize`` is about to run it; an observer may run some
  units itself first (``realization.run(1)``: the step-through debugger), the rest run after;
* ``on_unit(unit, seconds)``: after each exec unit ran;
* ``on_jit_start(fn)`` before a capture, then ``on_jit_capture(fn, plan, seconds)``, and
  ``on_jit_replay(fn, plan, seconds)`` after a replay: for ``ren.jit``.

With no observer, ``notify`` costs one context-variable read.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TypeVar

__all__ = ["OBSERVERS", "active", "notify", "observing"]

O = TypeVar("O")

#: the observers of the innermost ``observing`` blocks, outermost first.
OBSERVERS: ContextVar[tuple[object, ...]] = ContextVar("ren_observers", default=())


@contextlib.contextmanager
def observing(observer: O) -> Iterator[O]:
    """Call ``observer``'s methods for every realization and JIT call in the block; yields it."""
    token = OBSERVERS.set((*OBSERVERS.get(), observer))
    try:
        yield observer
    finally:
        OBSERVERS.reset(token)


def active() -> bool:
    """Whether any observer is watching."""
    return bool(OBSERVERS.get())


def notify(event: str, *args: object) -> None:
    """Call ``event(*args)`` on every observer that has such a method."""
    for observer in OBSERVERS.get():
        method = getattr(observer, event, None)
        if method is not None:
            method(*args)
