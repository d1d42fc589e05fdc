"""Bootstrapping's settings by the path they had: ``BootstrapConfig``, ``PRESETS``, ``preset``.

They live with bootstrapping, a floor above (``ren.circuits.ckks.bootconfig``), which registers
them with ``ren.schemes.ckks.registry`` as it loads. This module names them without importing
that floor, so code that imports them from here still runs, and a pickled configuration, which
names ``ren.schemes.ckks.bootconfig.BootstrapConfig``, still loads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ren.schemes.ckks.registry import circuit

if TYPE_CHECKING:  # for type checkers only: at run time the names come from the registry
    from ren.circuits.ckks.bootconfig import PRESETS, BootstrapConfig, preset

__all__ = ["PRESETS", "BootstrapConfig", "preset"]


def __getattr__(name: str) -> Any:
    """``BootstrapConfig``, ``PRESETS`` and ``preset``, as bootstrapping registered them."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return circuit(name)
