"""Seeing inside Ren (design section 7).

* ``dump_to(dir)``: the graph after every scheduler pass as Graphviz files (``docs/viz.md``);
* ``record()``: a ``Trace`` of every realization and jit call in a block (graphs after each pass,
  rules fired, kernels, memory plan, exec units, timings), which the report and the debugger read.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from ren.engine.dump import DUMP_DIR
from ren.viz.trace import Trace, kernel_source, record

__all__ = ["Trace", "dump_to", "kernel_source", "record"]


@contextlib.contextmanager
def dump_to(directory: str | os.PathLike[str]) -> Iterator[Path]:
    """Dump the graph after every pass into ``directory`` while the block runs.

    Takes precedence over ``$REN_DUMP``; blocks nest, and leaving one restores the outer
    directory. The directory is created on the first dump. Yields it as a ``Path``.
    """
    path = Path(directory)
    token = DUMP_DIR.set(path)
    try:
        yield path
    finally:
        DUMP_DIR.reset(token)
