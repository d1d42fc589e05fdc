"""Shared by every script in ``benchmarks/``: what the figures were measured on, how a call is
timed, and how results are written."""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

#: checking, debug printing, dumps, validation, poisoning and plan switches: not what is measured.
DEBUG_VARS = (
    "REN_CHECK",
    "REN_DEBUG",
    "REN_DUMP",
    "REN_VALIDATE",
    "REN_POISON",
    "REN_NO_PLAN",
    "REN_JIT_GRAPH",
)


#: The CKKS sets the thread benchmarks share (``contention.py``, ``threads.py``): ``ckks.Params``
#: keywords (scale ``2^40`` added by the caller), and how a row names the set.
THREAD_SETS = {
    "a": ({"n": 8192, "q_bits": (60, 40, 40), "p_bits": (60,)}, "set a n=8192"),
    "b": ({"n": 16384, "q_bits": (60, *[40] * 6), "p_bits": (60,)}, "set b n=16384"),
}


def switch_off(variables: tuple[str, ...] = DEBUG_VARS) -> dict[str, str | None]:
    """Unset ``variables`` (call it before Ren reads them); returns what the caller had set."""
    return {var: os.environ.pop(var, None) for var in variables}


def settle() -> None:
    """Wait for the kernels Ren still builds in the background (a timing is of built ones)."""
    try:
        from ren.backends import cpu_tiers
    except ImportError:  # a Ren that builds every kernel before it runs
        return
    cpu_tiers.wait()


RUN_SECONDS = 0.02  # the length of one timed run (a loop of calls)


def time_calls(call: Callable[[], object], repeat: int) -> dict[str, object]:
    """Median per-call time of ``call()`` over ``repeat`` runs of a calibrated loop (a run being
    as many calls as take about ``RUN_SECONDS``, one at least)."""
    call()  # warm: page faults, caches, OpenMP thread start
    settle()  # the kernels built, not run while they build
    call()
    start = time.perf_counter()
    call()
    once = time.perf_counter() - start
    number = max(1, int(RUN_SECONDS / max(once, 1e-9)))
    times = []
    for _ in range(repeat):
        gc.collect()  # the previous run's garbage is not this one's cost
        start = time.perf_counter()
        for _ in range(number):
            call()
        times.append((time.perf_counter() - start) / number)
    return {
        "number": number,
        "median_s": statistics.median(times),
        "min_s": min(times),
        "first_s": times[0],
        "times_s": times,
    }


def jit_replays(
    fn: Callable[[Any], Any], ct: Any, other: Any, repeat: int
) -> tuple[float, list[float], Any, Any]:
    """``fn`` under ``ren.jit``: captured on ``other``, then replayed ``repeat`` times on ``ct``.

    Each replay is realized and timed alone (seconds). Returns the capture's seconds, the
    replays' seconds, the last output and the jitted function (``.last`` holds its plan).
    """
    import ren  # the caller sets REN_* first

    jitted = ren.jit(fn)
    start = time.perf_counter()
    jitted(other)
    capture = time.perf_counter() - start
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = jitted(ct)
        ren.realize(*out.parts)
        times.append(time.perf_counter() - start)
    return capture, times, out, jitted


def peer(name: str, package: str) -> dict[str, object]:
    """Whether the peer library ``name`` (the PyPI ``package``) imports here, and its versions.

    ``{"name", "available": True, "version", "package"}`` (the module's ``__version__`` and the
    installed distribution's version, either maybe ``None``), or ``{"name", "available": False,
    "reason"}``.
    """
    try:
        module = __import__(name)
    except ImportError as e:
        return {"name": name, "available": False, "reason": f"import {name}: {e}"}
    from importlib.metadata import PackageNotFoundError, version

    try:
        dist = version(package)
    except PackageNotFoundError:  # another distribution of the bindings
        dist = None
    return {
        "name": name,
        "available": True,
        "version": getattr(module, "__version__", None),
        "package": dist,
    }


def write_results(results: dict[str, object], out: Path) -> None:
    """Write ``results`` as indented JSON to ``out`` (folders made as needed) and say so."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out}")


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


def cpu_missing() -> str | None:
    """Why the cpu device cannot run here, or ``None``."""
    from ren.codegen.compiler import find_compiler
    from ren.errors import RenError

    try:
        find_compiler()
    except RenError as e:
        return str(e)
    return None


def measure(call: Callable[[], Any], repeat: int) -> tuple[dict[str, Any], Any]:
    """``time_calls(call, repeat)`` and the value of the last call (to check)."""
    last: list[Any] = [None]

    def run() -> None:
        last[0] = call()

    stats = time_calls(run, repeat)
    return stats, last[0]


def names(text: str, allowed: tuple[str, ...], what: str) -> list[str]:
    """A comma-separated option (``--sets a,b``) as its names, each one of ``allowed``."""
    chosen = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in chosen if t not in allowed]
    if bad or not chosen:
        raise argparse.ArgumentTypeError(
            f"{what} must be a comma-separated list of {', '.join(allowed)}; got {text!r}"
        )
    return list(dict.fromkeys(chosen))


def machine_line(m: dict[str, Any]) -> str:
    """The last line of a benchmark's table: the Python, NumPy and machine of the figures."""
    return f"python {m['python']}, numpy {m['numpy']}, {m['cpu_count']} CPUs, {m['platform']}"
