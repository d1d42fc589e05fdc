"""Ren's version: what ``ren.__version__`` says, and what a saved plan records.

On the ground floor, so that every floor can name the version without importing the ``ren``
package itself.
"""

from __future__ import annotations

import functools

__all__ = ["version"]


@functools.cache
def version() -> str:
    """The installed distribution's version, else the one ``pyproject.toml`` declares.

    The version is written once, in ``pyproject.toml``; an install records it in the metadata.
    """
    from importlib import metadata  # here, not at import: it takes a sixth of Ren's import time

    try:
        return metadata.version("ren")
    except metadata.PackageNotFoundError:
        import tomllib
        from pathlib import Path

        pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
        try:
            with pyproject.open("rb") as f:
                return str(tomllib.load(f)["project"]["version"])
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "0+unknown"  # neither installed nor in its source tree
