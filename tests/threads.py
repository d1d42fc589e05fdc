"""Test work run in many threads at once, switching as often as CPython allows.

``in_threads(work, count)`` runs ``work(0) ... work(count - 1)``, each in its own thread, started
together at a barrier, with ``sys.setswitchinterval(1e-6)`` (restored afterwards) so that state
shared without a lock shows up as wrong answers rather than hiding behind long time slices. It
returns the results in order and re-raises the first error in the test's own thread.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: A thread still running after this many seconds counts as hung.
HANG_S = 300


def in_threads(work: Callable[[int], T], count: int) -> list[T]:
    """``[work(0), ..., work(count - 1)]``, each computed in its own thread, all at once."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    barrier = threading.Barrier(count)
    results: list = [None] * count
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = work(i)
        except BaseException as e:  # handed to the test's thread below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=HANG_S)
    finally:
        sys.setswitchinterval(interval)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    if errors:
        raise errors[0]
    return results
