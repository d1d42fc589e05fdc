"""Ren: a lazy polynomial execution engine for lattice cryptography.

``Poly`` values over RNS rings build a graph; realizing them schedules the graph into kernels
that a backend runs. See ``docs/`` for the conventions and the pipeline.

``ren.__version__`` is the version of the installed distribution. The package is typed: it ships
a ``py.typed`` marker (PEP 561), so a type checker reads its annotations.
"""

from typing import TYPE_CHECKING

from ren.capture.function import clear_jit, jit
from ren.capture.loaded import load
from ren.errors import JitError
from ren.ir.region import region
from ren.poly import Poly, realize
from ren.ring import Domain, RingSpec, ntt_primes
from ren.version import version as _version

__all__ = [
    "Domain",
    "JitError",
    "Poly",
    "RingSpec",
    "clear_jit",
    "jit",
    "load",
    "ntt_primes",
    "realize",
    "region",
]


if TYPE_CHECKING:
    __version__: str
else:  # hidden from type checkers, which would take it to give every other name too

    def __getattr__(name: str) -> str:
        """``ren.__version__``, read from the metadata when first asked for (PEP 562)."""
        if name == "__version__":
            return _version()
        raise AttributeError(f"module 'ren' has no attribute {name!r}")


# The app floor loads the circuits, which register themselves with the schemes they extend
# (ren.schemes.ckks.registry: ckks.rotate_many, ckks.bootstrap, Params.preset, ...): importing any
# module of Ren runs this first, so a scheme names its circuits without importing them.
from ren.circuits import ckks as _circuits  # noqa: F401

# BFV and BGV register themselves with the integer core (ren.schemes.integer.params), which reads
# their blobs and pickles by the scheme's name without importing them.
from ren.schemes import bfv as _bfv  # noqa: F401
from ren.schemes import bgv as _bgv  # noqa: F401


def _memory_picture(plan: object, kernels: list[str], title: str) -> str:
    """The memory plan's picture for the displays (``ren.display.LENT``), ``ren.viz`` on first use.

    The app floor lends it: ``ren.display`` sits below ``ren.viz`` and cannot import it, and
    importing ``ren.viz`` with ``ren`` would slow every start. It is the compact picture, which
    keeps a ``boot-toy`` bootstrap's arena (1267 buffers) within what a display shows.
    """
    from ren.viz.memory import plan_svg

    return plan_svg(plan, kernels, title, compact=True)  # type: ignore[arg-type]  # a DevicePlan


from ren import display as _display  # noqa: E402

_display.LENT["memory_plan"] = _memory_picture
