"""Where the compile cache lives, and what Ren does when it cannot live there.

``cache_dir`` is the configured place; ``disk_dir`` the one builds go to after a check (once per
directory and process): the configured one, or, when it cannot be made or written, a private
temporary directory of this process (``scratch_dir``, removed at exit), with one warning.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
import warnings
from pathlib import Path

from ren import settings
from ren.errors import RenError

__all__ = [
    "cache_dir",
    "disk_dir",
    "give_up_on",
    "probe",
    "reason",
    "scratch_dir",
    "scratch_made",
    "warn_once",
]

_lock = threading.Lock()  # guards every table below
_checked: dict[Path, str | None] = {}  # cache directory -> None when usable, else why not
_warned: set[str] = set()  # what has been warned about (each fault warns once)
_scratch: Path | None = None  # this process's private build directory, made on first use


def cache_dir() -> Path:
    """Where built libraries are kept, as configured.

    ``$REN_CACHE_DIR``, else ``$XDG_CACHE_HOME/ren``, else ``~/.cache/ren``. When it cannot be made
    or written, ``compile_cached`` warns once and builds in a private temporary directory instead.
    """
    configured = settings.CACHE_DIR.get()
    if configured is not None:
        return configured
    base = settings.XDG_CACHE_HOME.get() or Path.home() / ".cache"
    return base / "ren"


def reason(e: OSError) -> str:
    """An ``OSError`` as a short text: its kind, its reason and the file it names."""
    text = f"{type(e).__name__}: {e.strerror or e}"
    return text + (f": {e.filename}" if e.filename is not None else "")


def probe(directory: Path) -> str | None:
    """Why ``directory`` cannot hold the cache (it is made when missing), or ``None``."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        return "it exists and is not a directory"
    except OSError as e:
        return f"it cannot be created ({reason(e)})"
    if not os.access(directory, os.W_OK | os.X_OK):
        return "it is not writable"
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        return f"it cannot be written ({reason(e)})"
    return None


def warn_once(what: str, message: str) -> None:
    """A ``RuntimeWarning`` of ``message``, the first time ``what`` goes wrong in this process."""
    with _lock:
        if what in _warned:
            return
        _warned.add(what)
    warnings.warn(message, RuntimeWarning, stacklevel=2)


def _configured_name(directory: Path | None) -> str:
    if directory is None:
        return "the default compile cache directory (set REN_CACHE_DIR to choose one)"
    if settings.CACHE_DIR.get() is not None:
        return f"REN_CACHE_DIR={str(directory)!r}"
    return f"the compile cache directory {str(directory)!r} (set REN_CACHE_DIR to choose another)"


def disk_dir() -> Path:
    """The cache directory when usable (checked once per directory), else the private one."""
    try:
        directory = cache_dir()
    except RuntimeError as e:  # Path.home() with no home directory
        return give_up_on(None, str(e))
    with _lock:
        if directory not in _checked:
            _checked[directory] = probe(directory)
        why = _checked[directory]
    return directory if why is None else give_up_on(directory, why)


def give_up_on(directory: Path | None, why: str) -> Path:
    """Mark ``directory`` unusable, warn once, and return the private directory."""
    if directory is not None:
        with _lock:
            _checked[directory] = why
    warn_once(
        f"dir:{directory}",
        f"{_configured_name(directory)} cannot hold Ren's compile cache: {why}; compiled kernels "
        "go to a private temporary directory for this process (removed at exit)",
    )
    return scratch_dir()


def scratch_dir() -> Path:
    """One private folder for this process's builds (made once, removed when the process exits).

    Raises:
        RenError: not even a temporary directory can be made.
    """
    global _scratch
    with _lock:
        if _scratch is None:
            try:
                _scratch = Path(tempfile.mkdtemp(prefix="ren-build-"))
            except OSError as e:
                raise RenError(
                    f"Ren has nowhere to build kernels: the temporary directory cannot be written "
                    f"({reason(e)}); set TMPDIR or REN_CACHE_DIR to a writable directory"
                ) from None
            atexit.register(shutil.rmtree, _scratch, ignore_errors=True)
        return _scratch


def scratch_made() -> Path | None:
    """This process's private build directory, if it has been made."""
    return _scratch
