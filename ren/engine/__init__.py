"""Ren's engine: the scheduler driver, memory planning, realization and the JIT."""

from ren import settings


def debug_level() -> int:
    """``REN_DEBUG`` (``settings.DEBUG``): an integer from 0 (the default) to 4.

    Level 1 prints pass names and times, 2 exec unit times, 3 the graph after each pass, 4 the
    source of each kernel as it is compiled.

    Raises:
        ValueError: ``REN_DEBUG`` holds something else (the message names it and says what is
            accepted).
    """
    return settings.DEBUG.get()
