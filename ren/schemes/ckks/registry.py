"""Where the circuits meet CKKS: names the floor above registers here, never imported from here.

CKKS names a few things it does not hold. ``ckks.rotate_many``, ``ckks.LinearTransform``,
``ckks.evaluate_polynomial``, ``ckks.bootstrap``, ``ckks.BootstrapConfig`` and the rest are
circuits (``ren.circuits.ckks``, the floor above), and three methods are bootstrapping's:
``Params.preset`` (its parameter sets), ``Ciphertext.bootstrap`` and ``Context.bootstrap_keys``.
This floor never imports the circuits, not even inside a function: ``ren.circuits.ckks``
registers them here when it loads (``register``), and a scheme module looks one up by name
(``circuit``). ``import ren``, which runs before any module of Ren, loads the circuits (the app
floor may import every floor), so ``from ren.schemes import ckks; ckks.rotate_many`` works in a
fresh process while the imports still run one way: circuits to schemes, never back.
"""

from __future__ import annotations

from typing import Any

__all__ = ["circuit", "register", "registered"]

_CIRCUITS: dict[str, Any] = {}


def register(**names: object) -> None:
    """Make each of ``names`` what ``circuit(name)`` gives (the circuits' package calls this)."""
    _CIRCUITS.update(names)


def registered() -> frozenset[str]:
    """The names registered so far."""
    return frozenset(_CIRCUITS)


def circuit(name: str) -> Any:
    """What the circuits registered as ``name``.

    Raises:
        AttributeError: when nothing is registered under ``name`` (``ren.circuits.ckks`` registers
            every circuit as it loads, and ``import ren`` loads it).
    """
    try:
        return _CIRCUITS[name]
    except KeyError:
        raise AttributeError(
            f"ckks.{name} is a circuit of ren.circuits.ckks, which registers it as it loads; "
            "it has not loaded (import ren.circuits.ckks)"
        ) from None
