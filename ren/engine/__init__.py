"""Ren's engine: the scheduler driver, memory planning, realization and the JIT."""

import os


def debug_level() -> int:
    """``REN_DEBUG`` as a number, 0 when unset or not a number.

    Level 1 prints pass names and times, 2 exec unit times, 3 the graph after each pass.
    """
    try:
        return int(os.environ.get("REN_DEBUG", "0") or 0)
    except ValueError:
        return 0
