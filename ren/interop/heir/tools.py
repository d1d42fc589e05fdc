"""HEIR's own tools, from the ``heir-py`` package: where ``heir-opt`` is, and running it.

``heir-py`` (the ``heir`` extra, ``pip install -e .[heir]``) ships ``heir-opt``, HEIR's compiler
driver, inside its package. Ren runs it as a program, never in this process: the arguments as a
list (no shell), the text on standard input, a time limit, and its output bounded before it is
read as a module.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ren import settings
from ren.interop.heir.ir import LIMITS, MlirError

__all__ = ["HeirMissing", "find_heir_opt", "run_heir_opt"]


class HeirMissing(RuntimeError):
    """``heir-opt`` is not installed: the message says how to install it."""


def find_heir_opt() -> Path | None:
    """``heir-opt``: ``REN_HEIR_OPT`` if set, else heir-py's own, else one on ``PATH``."""
    given = settings.HEIR_OPT.get()
    if given is not None:
        return given if given.is_file() else None
    spec = importlib.util.find_spec("heir")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(folder) / "heir-opt"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("heir-opt")
    return Path(found) if found else None


def run_heir_opt(text: str, *flags: str, timeout: float = 600.0, name: str | None = None) -> str:
    """``heir-opt FLAGS`` on ``text``: its output, the module in MLIR's generic form.

    ``--mlir-print-op-generic`` and ``--mlir-print-debuginfo`` are added, so that the reader
    (``ren.interop.heir.reader``) reads the result and each op keeps its source location: in the
    file ``name`` (a bare file name: the text is written under it in a fresh temporary folder and
    heir-opt reads it there), else ``<stdin>``.

    Raises:
        TypeError: ``text`` or a flag not a string.
        HeirMissing: no ``heir-opt`` (install the ``heir`` extra, or set ``REN_HEIR_OPT``).
        MlirError: ``heir-opt`` refused the text (its message), ran past ``timeout`` seconds,
            or printed more than the reader's limit.
    """
    if not isinstance(text, str) or not all(isinstance(f, str) for f in flags):
        raise TypeError("heir-opt takes the module as text (str) and its flags as strings")
    tool = find_heir_opt()
    if tool is None:
        raise HeirMissing(
            "heir-opt is not installed: pip install -e .[heir] (heir-py, x86-64 Linux wheels), "
            "or set REN_HEIR_OPT to a heir-opt binary"
        )
    if name is not None and (not name or Path(name).name != name or name.startswith(".")):
        raise ValueError(f"name must be a bare file name, got {name!r}")
    args = [str(tool), *flags, "--mlir-print-op-generic", "--mlir-print-debuginfo"]
    with tempfile.TemporaryDirectory(prefix="ren-heir-") as folder:
        if name is not None:
            (Path(folder) / name).write_text(text, encoding="utf-8")
            args.append(name)
        try:
            done = subprocess.run(
                args, input=None if name else text, capture_output=True, text=True,
                timeout=timeout, check=False, cwd=folder,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            raise MlirError(f"heir-opt {' '.join(flags)} ran past {timeout:g} s") from None
    if done.returncode != 0:
        message = done.stderr.strip()[-2000:] or f"exit status {done.returncode}"
        raise MlirError(f"heir-opt {' '.join(flags)} refused the module: {message}")
    if len(done.stdout) > LIMITS["chars"]:
        raise MlirError(f"heir-opt printed {len(done.stdout)} characters, past the limit")
    return done.stdout
