"""Seeing inside Ren (design section 7; ``docs/viz.md``).

* ``dump_to(dir)``: the graph after every scheduler pass as Graphviz files;
* ``record()``: a ``Trace`` of every realization and jit call in a block (graphs after each pass,
  rules fired, kernels, memory plan, exec units, timings), which the report and the debugger read;
* ``write_report`` / ``build_report`` / ``text_report``: the report ``python -m ren.viz`` writes;
* ``debug(poly)`` and ``Stepper``: the step-through realization debugger (``watch`` registers a
  CKKS ciphertext and its plaintext shadow);
* ``plan_svg`` / ``plans_svg`` / ``plan_text``: the memory plan as a picture.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from ren.engine.dump import DUMP_DIR

# a Trace's notebook displays and its page draw with the report, which reads traces: the module
# that draws them lends them to Trace (ren.viz.trace.LENT) as it loads
from ren.viz import shown  # noqa: F401
from ren.viz.debug import Stepper, debug, watch
from ren.viz.memory import plan_svg, plan_text, plans_svg
from ren.viz.report import build_report, text_report, write_report
from ren.viz.trace import Trace, kernel_source, record

__all__ = [
    "Stepper",
    "Trace",
    "build_report",
    "debug",
    "dump_to",
    "kernel_source",
    "plan_svg",
    "plan_text",
    "plans_svg",
    "record",
    "text_report",
    "watch",
    "write_report",
]


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


def __dir__() -> list[str]:
    """The public names (``__all__``) and the submodules loaded so far, sorted.

    The names this module imports for its own use (``os``, ``Path``, ``DUMP_DIR``, ...) still
    resolve as attributes but are not listed, so ``dir(ren.viz)`` reads as its API.
    """
    loaded = (
        n
        for n, v in globals().items()
        if isinstance(v, ModuleType) and v.__name__ == f"{__name__}.{n}"
    )
    return sorted({*__all__, *loaded})
