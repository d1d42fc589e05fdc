"""``compile_cached``: build rendered C once, keep the shared library, load it next time.

The key is a SHA-256 of the source, the compiler's path and version line, the flags and
``RENDERER_VERSION``. A build is kept in memory (per process) and on disk under the user cache dir:
``$REN_CACHE_DIR``, else ``$XDG_CACHE_HOME/ren``, else ``~/.cache/ren``. ``REN_CCACHE=0`` turns the
disk cache off (every process builds again).

Entries are written atomically (the library is built in a temporary directory, then renamed into
place), so concurrent processes never see half a file; next to each library a small ``.sum`` file
holds its size and SHA-256, so a corrupt or truncated entry is detected and rebuilt.

Faults are not errors:

* a cache directory that cannot be made or written (a regular file, a path under one, a read-only
  place) costs one ``RuntimeWarning`` naming it and why; the process then builds in a private
  temporary directory, removed when it exits;
* an entry that is not a regular file (a FIFO, a symlink, a directory) is never opened, only
  replaced by a good build (a directory, which a rename cannot replace, sends that build to the
  private directory, with a warning);
* the disk cache holds at most ``REN_CACHE_MAX_MB`` (default 1024) MB: after each build the least
  recently used entries (by modification time, refreshed at every load) go, never the new one;
* a build whose directory is deleted under it is built again (``BUILD_ATTEMPTS`` times, then in
  the private directory). Only the compiler rejecting the source is a ``CompileError``.

Threads: the shared tables are behind one lock, and builds of one source are serialized, so
several threads asking for the same kernel get one build and one loadable library. Processes: an
entry another process removes between a build and a load is built again by ``load_cached``.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from ren import settings
from ren.codegen.cache_dirs import (
    cache_dir,
    disk_dir,
    give_up_on,
    probe,
    reason,
    scratch_dir,
    scratch_made,
    warn_once,
)
from ren.codegen.cache_entries import checksum, evict, is_dir, regular, touch, valid
from ren.codegen.toolchain import CompileError, find_compiler, native_target
from ren.errors import RenError

__all__ = [
    "BUILD_ATTEMPTS",
    "RENDERER_VERSION",
    "CompileError",
    "after_fork",
    "build_directory",
    "cache_dir",
    "cached",
    "compile_cached",
    "find_compiler",
    "load_cached",
    "trim",
]

#: Bump when rendering changes in a way the source text alone would not show.
RENDERER_VERSION = 1

#: Builds tried in a directory that keeps vanishing (someone deletes the cache) before moving on.
BUILD_ATTEMPTS = 3

_lock = threading.Lock()  # guards every table below
_memory: dict[str, Path] = {}  # "name-key" -> library built or found by this process
_building: set[Path] = set()  # entries being built or checked now: never evicted
_key_locks = tuple(threading.Lock() for _ in range(64))  # builds of one key run one at a time


def after_fork() -> None:
    """New locks, in a forked child (a thread of the parent, not in the child, may hold one)."""
    global _lock, _key_locks
    _lock, _key_locks = threading.Lock(), tuple(threading.Lock() for _ in range(64))


class _Vanished(Exception):
    """The build directory disappeared under a build (the cache was deleted)."""


class _Refused(Exception):
    """The directory cannot take this build; ``args[0]`` says why."""


def _key(source: str, compiler: str, version: str, flags: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    target = native_target(compiler) if "-march=native" in flags else ""
    for part in (source, compiler, version, " ".join(flags), target, str(RENDERER_VERSION)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


# -- building ----------------------------------------------------------------------------------


def cached(
    source: str, flags: tuple[str, ...] = (), compiler: str | None = None, name: str = "kernel"
) -> bool:
    """Whether ``compile_cached`` would find ``source`` built (in this process or on disk).

    An entry found valid on disk is remembered (and touched), as ``compile_cached`` would, so
    the library is read and checked once, not again when it is loaded.
    """
    cc, version = find_compiler(compiler)
    key = _key(source, cc, version, tuple(flags))
    tag = f"{name}-{key}"
    if _remembered(tag) is not None:
        return True
    entry = disk_dir() / f"{name}-{key[:24]}.so"
    if not (settings.CCACHE.get() and valid(entry)):
        return False
    touch(entry)
    with _lock:
        _memory[tag] = entry
    return True


def _remembered(tag: str) -> Path | None:
    """The library this process built or found for ``tag``, while it is still there."""
    with _lock:
        hit = _memory.get(tag)
    return hit if hit is not None and regular(hit) else None


def build_directory() -> Path:
    """Where builds of this process go: the compile cache, or the private directory."""
    return disk_dir() if settings.CCACHE.get() else scratch_dir()


def compile_cached(
    source: str,
    flags: tuple[str, ...] = (),
    compiler: str | None = None,
    name: str = "kernel",
    prebuilt: tuple[Path, str] | None = None,
) -> Path:
    """The path of a shared library built from ``source`` with ``flags`` (built once).

    Safe to call from several threads at once; a cache fault (see the module docstring) never
    raises. ``prebuilt``: a library already built with ``source`` in it (and its ``.sum``), which
    becomes the entry (a hard link where the file system has them) instead of a compiler run;
    ``ren.codegen.batch`` builds many kernels in one library that way.

    Raises:
        CompileError: no compiler, or the compiler rejected the source (the message has the
            compiler's output and the path of the source file it was given).
        RenError: not even a private temporary directory can be made.
        ValueError: ``REN_CCACHE``, ``REN_CACHE_MAX_MB`` or ``REN_DEBUG`` holds a bad value.
    """
    cc, version = find_compiler(compiler)
    key = _key(source, cc, version, tuple(flags))
    tag = f"{name}-{key}"
    with _key_locks[int(key[:8], 16) % len(_key_locks)]:
        if (hit := _remembered(tag)) is not None:
            return hit
        keep = settings.CCACHE.get()
        directory = disk_dir() if keep else scratch_dir()
        shared = keep and directory != scratch_made()  # the user's cache, not the fallback
        entry = directory / f"{name}-{key[:24]}.so"
        with _lock:
            _building.add(entry)
        try:
            scratch = scratch_made()
            private = scratch / entry.name if scratch else None  # where a refused entry went
            if keep and valid(entry):
                touch(entry)
                lib = entry
            elif keep and private and private != entry and valid(private):
                lib = private
            else:
                lib = _build(source, cc, tuple(flags), name, entry, shared, prebuilt)
        finally:
            with _lock:
                _building.discard(entry)
        with _lock:
            _memory[tag] = lib
        return lib


def load_cached(
    source: str, flags: tuple[str, ...] = (), compiler: str | None = None, name: str = "kernel"
) -> ctypes.CDLL:  # fmt: skip
    """``ctypes.CDLL`` of ``compile_cached(source, flags, compiler, name)``.

    An entry removed between its build and the load (another process keeping the cache within
    ``REN_CACHE_MAX_MB``, someone clearing the cache) is built again.

    Raises:
        CompileError, RenError, ValueError: as ``compile_cached``; ``RenError`` also when a built
            library exists but does not load (the message has the loader's reason).
    """
    for _ in range(BUILD_ATTEMPTS):
        lib = compile_cached(source, flags, compiler, name)
        try:
            return ctypes.CDLL(str(lib))
        except OSError as e:
            if regular(lib):
                raise RenError(f"the built library {lib} does not load: {e}") from None
            with _lock:  # removed behind our back: forget it and build again
                for tag in [t for t, p in _memory.items() if p == lib]:
                    del _memory[tag]
    raise RenError(f"the built library for {name} kept disappearing before it could be loaded")


def _build(
    source: str,
    cc: str,
    flags: tuple[str, ...],
    name: str,
    entry: Path,
    use_disk: bool,
    prebuilt: tuple[Path, str] | None = None,
) -> Path:
    """Build ``entry``; when its directory keeps vanishing or refuses it, in the private one.

    ``use_disk``: ``entry`` is in the user's cache (bounded, checked); else in the private one.
    A ``prebuilt`` library is linked in place (its batch keeps the cache in bounds after).
    """
    limit = int(settings.CACHE_MAX_MB.get() * 2**20) if use_disk else 0  # bad values fail first
    debug = settings.DEBUG.get()
    if debug >= 4:
        print(f"// {name} ({cc} {' '.join(flags)})\n{source}", file=sys.stderr)
    stem = entry.name.removesuffix(".so")
    if use_disk:
        lib = _build_on_disk(entry.parent, stem, source, cc, flags, name, prebuilt)
        if lib is not None:
            if prebuilt is None:
                _evict(entry.parent, limit, keep=lib)
            return lib
    private = scratch_dir()
    for _ in range(BUILD_ATTEMPTS):
        try:
            return _build_in(private, stem, source, cc, flags, name, prebuilt)
        except _Vanished:
            continue
        except _Refused as e:
            raise RenError(f"cannot build {name} in {private}: {e.args[0]}") from None
    raise RenError(f"the private directory {private} kept disappearing while {name} was built")


def _build_on_disk(
    directory: Path,
    stem: str,
    source: str,
    cc: str,
    flags: tuple[str, ...],
    name: str,
    prebuilt: tuple[Path, str] | None,
) -> Path | None:
    """Build into the cache ``directory``, again when it vanishes; ``None``: use the private one."""
    for path in (directory / f"{stem}.so", directory / f"{stem}.sum"):
        if is_dir(path):  # a rename cannot replace it, and Ren does not delete directories
            _refused_entry(directory, stem, name, f"{path.name} is a directory")
            return None
    for _ in range(BUILD_ATTEMPTS):
        try:
            return _build_in(directory, stem, source, cc, flags, name, prebuilt)
        except _Vanished:
            continue  # the cache was deleted during the build: make it again and rebuild
        except _Refused as e:
            why = probe(directory)
            if why is not None:  # the directory itself went bad since it was checked
                give_up_on(directory, why)
                return None
            _refused_entry(directory, stem, name, e.args[0])
            return None
    warn_once(
        f"vanished:{directory}",
        f"the compile cache {directory} disappeared during {BUILD_ATTEMPTS} builds of {name} in a "
        "row; it is built in a private temporary directory instead",
    )
    return None


def _refused_entry(directory: Path, stem: str, name: str, why: str) -> None:
    """Warn (once) that the entry ``stem`` cannot be written in ``directory``."""
    warn_once(
        f"entry:{directory / stem}",
        f"the compile cache entry {directory / stem}.so cannot be written ({why}); {name} is "
        "built in a private temporary directory instead",
    )


def _build_in(
    directory: Path,
    stem: str,
    source: str,
    cc: str,
    flags: tuple[str, ...],
    name: str,
    prebuilt: tuple[Path, str] | None = None,
) -> Path:
    """Build ``source`` in a temporary folder of ``directory`` and rename it to ``stem.so``.

    With ``prebuilt``, its library is linked (or copied) there instead of running the compiler.

    Raises:
        _Vanished: the directory (or the build folder in it) disappeared during the build.
        _Refused: the directory, or the entry's place in it, cannot be written.
        CompileError: the compiler rejected the source.
    """
    try:
        directory.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=directory, prefix=".build-"))
    except FileNotFoundError:
        raise _Vanished from None  # deleted between the mkdir and the mkdtemp
    except OSError as e:
        raise _Refused(reason(e)) from None
    lib = directory / f"{stem}.so"
    try:
        src = tmp / f"{name}.c"
        src.write_text(source)
        out = tmp / f"{name}.so"
        if prebuilt is not None and _place(prebuilt[0], out):
            (tmp / "lib.sum").write_text(prebuilt[1])
            os.replace(out, lib)
            os.replace(tmp / "lib.sum", lib.with_suffix(".sum"))
            return lib
        cmd = [cc, *flags, "-o", str(out), str(src)]
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if settings.DEBUG.get() >= 1:
            took = time.perf_counter() - start
            print(f"ren: built {name} in {took:.2f} s ({Path(cc).name})", file=sys.stderr)
        if proc.returncode != 0 and not src.is_file():
            raise _Vanished  # the compiler failed because its input and output folder went away
        if proc.returncode != 0:
            kept = _keep_failed(directory / f"{stem}.failed.c", source)
            raise CompileError(
                f"{Path(cc).name} failed on {name} (source kept at {kept}):\n"
                f"{' '.join(cmd)}\n{proc.stderr.strip() or proc.stdout.strip()}"
            )
        summ = tmp / "lib.sum"
        summ.write_text(checksum(out))
        os.replace(out, lib)  # atomic: readers see the old entry or the whole new one
        os.replace(summ, lib.with_suffix(".sum"))
    except OSError as e:
        if not tmp.is_dir():
            raise _Vanished from None
        raise _Refused(reason(e)) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return lib


def _place(built: Path, out: Path) -> bool:
    """``out`` as a hard link of ``built`` (one file for a batch), else a copy; or ``False``.

    ``False`` when ``built`` is gone (its batch's directory deleted): then ``out`` is compiled.
    """
    try:
        os.link(built, out)
    except OSError:
        try:
            shutil.copyfile(built, out)
        except OSError:
            return False
    return True


def _keep_failed(path: Path, source: str) -> Path | str:
    """Keep a rejected source for the user to read: at ``path``, else in the private directory."""
    for place in (path, scratch_dir() / path.name):
        try:
            place.parent.mkdir(parents=True, exist_ok=True)
            place.write_text(source)
            return place
        except OSError:
            continue
    return "nowhere: no directory could be written"


def trim() -> None:
    """Keep the compile cache within ``REN_CACHE_MAX_MB`` (after a batch of builds)."""
    if settings.CCACHE.get():
        directory = disk_dir()
        if directory != scratch_made():
            _evict(directory, int(settings.CACHE_MAX_MB.get() * 2**20), keep=directory)


def _evict(directory: Path, limit: int, keep: Path) -> None:
    """Keep ``directory`` within ``limit`` bytes; ``keep`` and entries being built here stay."""
    with _lock:
        removed = evict(directory, limit, {keep, *_building})
        for tag in [t for t, p in _memory.items() if p in removed]:
            del _memory[tag]
