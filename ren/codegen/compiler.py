"""``compile_cached``: build rendered C once, keep the shared library, load it next time.

The key is a SHA-256 of the source, the compiler's path and version line, the flags and
``RENDERER_VERSION``. A build is kept in memory (per process) and on disk under the user cache dir:
``$REN_CACHE_DIR``, else ``$XDG_CACHE_HOME/ren``, else ``~/.cache/ren``. ``REN_CCACHE=0`` turns the
disk cache off (every process builds again).

Entries are written atomically (the library is built in a temporary directory, then renamed into
place), so concurrent processes never see half a file; next to each library a small ``.sum`` file
holds its size and SHA-256, so a corrupt or truncated entry is detected and rebuilt.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ren.engine import debug_level
from ren.errors import RenError

__all__ = ["RENDERER_VERSION", "CompileError", "cache_dir", "compile_cached", "find_compiler"]

#: Bump when rendering changes in a way the source text alone would not show.
RENDERER_VERSION = 1

_memory: dict[str, Path] = {}


class CompileError(RenError):
    """The C compiler is missing or rejected a rendered source."""


def cache_dir() -> Path:
    """Where built libraries are kept."""
    env = os.environ.get("REN_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ren"


@functools.cache
def find_compiler(name: str | None = None) -> tuple[str, str]:
    """The C compiler to use (``$CC``, else ``cc``, ``gcc``, ``clang``): ``(path, version line)``.

    Raises:
        CompileError: when none is installed, saying what to install.
    """
    names = [name] if name else [os.environ.get("CC") or "", "cc", "gcc", "clang"]
    for candidate in names:
        path = shutil.which(candidate) if candidate else None
        if path:
            out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False)
            version = (
                (out.stdout or out.stderr).splitlines()[0] if (out.stdout or out.stderr) else ""
            )
            return path, version
    raise CompileError(
        "no C compiler found (looked for $CC, cc, gcc, clang): the cpu device needs one; "
        "install gcc (Debian: apt-get install gcc) or set CC"
    )


@functools.cache
def supports_flag(compiler: str, flag: str) -> bool:
    """Whether ``compiler`` builds and links a tiny shared library with ``flag``."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "probe.c"
        src.write_text("int ren_probe(void) { return 0; }\n")
        cmd = [compiler, "-shared", "-fPIC", flag, "-o", str(Path(tmp) / "probe.so"), str(src)]
        return subprocess.run(cmd, capture_output=True, check=False).returncode == 0


@functools.cache
def native_target(compiler: str) -> str:
    """What ``-march=native`` means on this machine for ``compiler``: its resolved target options.

    They go into the cache key, so a cache shared between machines never loads a library built
    for another CPU.
    """
    cmd = [compiler, "-march=native", "-Q", "--help=target"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
    return hashlib.sha256(out.encode()).hexdigest() if out else platform.processor()


def _key(source: str, compiler: str, version: str, flags: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    target = native_target(compiler) if "-march=native" in flags else ""
    for part in (source, compiler, version, " ".join(flags), target, str(RENDERER_VERSION)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _checksum(path: Path) -> str:
    data = path.read_bytes()
    return f"{len(data)} {hashlib.sha256(data).hexdigest()}"


def _valid(lib: Path) -> bool:
    summ = lib.with_suffix(".sum")
    try:
        return lib.is_file() and summ.read_text().strip() == _checksum(lib)
    except OSError:
        return False


def compile_cached(
    source: str, flags: tuple[str, ...] = (), compiler: str | None = None, name: str = "kernel"
) -> Path:
    """The path of a shared library built from ``source`` with ``flags`` (built once).

    Raises:
        CompileError: no compiler, or the compiler rejected the source (the message has the
            compiler's output and the path of the source file it was given).
    """
    cc, version = find_compiler(compiler)
    key = _key(source, cc, version, tuple(flags))
    hit = _memory.get(f"{name}-{key}")
    if hit is not None and hit.is_file():
        return hit
    use_disk = os.environ.get("REN_CCACHE", "1") != "0"
    directory = cache_dir() if use_disk else _scratch_dir()
    directory.mkdir(parents=True, exist_ok=True)
    lib = directory / f"{name}-{key[:24]}.so"
    if use_disk and _valid(lib):
        _memory[f"{name}-{key}"] = lib
        return lib
    if debug_level() >= 4:
        print(f"// {name} ({cc} {' '.join(flags)})\n{source}", file=sys.stderr)
    with tempfile.TemporaryDirectory(dir=directory, prefix=".build-") as tmp:
        src = Path(tmp) / f"{name}.c"
        src.write_text(source)
        out = Path(tmp) / f"{name}.so"
        cmd = [cc, *flags, "-o", str(out), str(src)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            kept = directory / f"{name}-{key[:24]}.failed.c"
            kept.write_text(source)
            raise CompileError(
                f"{Path(cc).name} failed on {name} (source kept at {kept}):\n"
                f"{' '.join(cmd)}\n{proc.stderr.strip() or proc.stdout.strip()}"
            )
        summ = Path(tmp) / "lib.sum"
        summ.write_text(_checksum(out))
        os.replace(out, lib)  # atomic: readers see the old entry or the whole new one
        os.replace(summ, lib.with_suffix(".sum"))
    _memory[f"{name}-{key}"] = lib
    return lib


@functools.cache
def _scratch_dir() -> Path:
    """With ``REN_CCACHE=0``: one folder for this process's builds, removed when it exits."""
    path = Path(tempfile.mkdtemp(prefix="ren-build-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path
