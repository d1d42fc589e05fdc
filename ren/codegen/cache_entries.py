"""The files of the compile cache: entries read without blocking, checked, touched and evicted.

An entry is ``<name>-<24 hex digits of its key>.so`` with a ``.sum`` beside it (the library's
size and SHA-256). Only regular files are ever opened: a FIFO, a device, a directory or a symlink
named like an entry is never read (so it cannot hang the process) and counts as no entry. An entry
is ``valid`` when its sum matches and, on Linux, its ELF segments lie inside the file (a truncated
library would end the process when mapped). The modification time is the least-recently-used
clock: ``touch`` at each load, ``evict`` the oldest beyond a size bound.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import struct
import sys
from pathlib import Path

__all__ = [
    "ENTRY",
    "checksum",
    "evict",
    "is_dir",
    "loadable",
    "read_regular",
    "regular",
    "sum_of",
    "touch",
    "valid",
]

#: the name of a cache entry: ``<name>-<24 hex digits of the key>.so``.
ENTRY = re.compile(r".+-[0-9a-f]{24}\.so")


# opening an entry never follows a symlink nor waits for a FIFO's writer (where the OS has them)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def regular(path: Path) -> bool:
    """Whether ``path`` itself (not a symlink's target) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def read_regular(path: Path, limit: int = -1) -> bytes | None:
    """The bytes of ``path`` when it is a regular file (at most ``limit``), else ``None``.

    A FIFO, device, directory or symlink is never read: ``lstat`` first, then an open that
    neither follows a link nor waits for a writer, checked again with ``fstat``.
    """
    if not regular(path):
        return None
    mode = os.O_RDONLY | _O_NONBLOCK | _O_NOFOLLOW | _O_CLOEXEC
    try:
        fd = os.open(path, mode)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def sum_of(data: bytes) -> str:
    """What an entry's ``.sum`` holds for the library ``data``: its size and SHA-256."""
    return f"{len(data)} {hashlib.sha256(data).hexdigest()}"


def checksum(path: Path) -> str:
    """``sum_of`` the bytes of ``path``, a regular file (``FileNotFoundError`` otherwise)."""
    data = read_regular(path)
    if data is None:
        raise FileNotFoundError(f"{path} is not a regular file")
    return sum_of(data)


def valid(lib: Path) -> bool:
    """Whether ``lib`` and its ``.sum`` are regular files and the sum matches."""
    data = read_regular(lib)
    summ = read_regular(lib.with_suffix(".sum"), limit=256)
    if data is None or summ is None:
        return False
    return summ.decode("ascii", errors="replace").strip() == sum_of(data) and loadable(data)


def loadable(data: bytes) -> bool:
    """Whether an ELF library's headers and loadable segments lie inside its bytes.

    The loader maps segments straight from the file, so a truncated library (with a ``.sum``
    that matches it: a forged or damaged entry) would end the process with ``SIGBUS`` instead of
    failing to load. Such an entry is built again. On Linux a library must be ELF; other
    systems' formats are left to the loader.
    """
    if data[:4] != b"\x7fELF":
        return not sys.platform.startswith("linux")
    if len(data) < 64 or data[4] != 2 or data[5] not in (1, 2):  # 64-bit, either byte order
        return False
    end = "<" if data[5] == 1 else ">"
    phoff, shoff = struct.unpack_from(end + "QQ", data, 32)
    phentsize, phnum, shentsize, shnum = struct.unpack_from(end + "HHHH", data, 54)
    if phoff + phnum * phentsize > len(data) or shoff + shnum * shentsize > len(data):
        return False
    for i in range(phnum):
        p_type, _, p_offset = struct.unpack_from(end + "IIQ", data, phoff + i * phentsize)
        p_filesz = struct.unpack_from(end + "Q", data, phoff + i * phentsize + 32)[0]
        if p_type == 1 and p_offset + p_filesz > len(data):  # PT_LOAD past the end of the file
            return False
    return True


def touch(lib: Path) -> None:
    """Mark ``lib`` as just used (its modification time is the least-recently-used clock)."""
    for path in (lib, lib.with_suffix(".sum")):
        with contextlib.suppress(OSError):  # gone: the entry is then simply older
            os.utime(path, follow_symlinks=False)


def is_dir(path: Path) -> bool:
    """Whether ``path`` itself (not a symlink's target) is a directory."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def evict(directory: Path, limit: int, protected: set[Path]) -> list[Path]:
    """Remove least recently used entries of ``directory`` until they take at most ``limit`` bytes.

    An entry is a ``.so`` and its ``.sum``, removed together; the entries in ``protected`` stay.
    Another process may remove the same entries at the same time: a missing file is skipped.

    Returns:
        The libraries removed.
    """
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    entries, total = [], 0
    for entry in names:
        if not ENTRY.fullmatch(entry):
            continue
        lib = directory / entry
        size, used = 0, 0
        for path in (lib, lib.with_suffix(".sum")):
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                size += st.st_size
                used = max(used, st.st_mtime_ns)
        entries.append((used, entry, lib, size))
        total += size
    removed = []
    for _, _, lib, size in sorted(entries):
        if total <= limit:
            break
        if lib in protected:
            continue
        for path in (lib, lib.with_suffix(".sum")):
            with contextlib.suppress(OSError):  # gone already, or a directory: left alone
                os.unlink(path)
        total -= size
        removed.append(lib)
    return removed
