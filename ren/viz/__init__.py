"""Seeing inside Ren (design section 7).

For now this is ``dump_to``, which writes the graph after every scheduler pass as Graphviz files
(``docs/viz.md``). The package grows later into the program reports (``python -m ren.viz``), the
step-through debugger and the TLSF memory-plan visualizer.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from ren.engine.dump import DUMP_DIR

__all__ = ["dump_to"]


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
