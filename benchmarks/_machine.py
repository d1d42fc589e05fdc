"""What a benchmark's figures were measured on: shared by every script in ``benchmarks/``."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def machine() -> dict[str, object]:
    """Python, NumPy and Ren versions, the commit, and the machine."""
    import ren  # imported here: the scripts set REN_* before Ren is first imported

    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "numpy": np.__version__,
        "ren": getattr(ren, "__version__", None) or _package_version(),
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor(),
        "cpu_count": os.cpu_count(),
    }


def _package_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ren")
    except PackageNotFoundError:
        return None


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()
