"""Building many kernels together: few compiler runs, several at once, one entry per kernel.

A realization (or a loaded plan, or ``python -m ren.codegen warm``) knows every kernel it will
run before the first one runs. ``build_all`` takes their sources, keeps those the compile cache
lacks, and builds them in ``jobs`` libraries at once, one compiler process each, instead of one
process per kernel:

* sources that share a head (the text before ``UNIT_MARK``: the includes and modular helpers of
  an elementwise kernel) are joined into one translation unit, the head once; the others (the
  whole-polynomial templates, each with file-scope constants of its own) are more files of the
  same compiler run;
* each kernel's cache entry is then a hard link to its batch's library (one file on disk; a
  copy where the file system has no hard links), with the usual ``.sum``, so the compile cache
  stays one entry per source: a later program that needs one kernel of the batch finds it, and a
  corrupt entry is rebuilt alone.

When the batch's compiler run fails, its kernels are built one by one, so the error names the
source at fault. When the build will take more than about ``SLOW_SECONDS`` a line on standard
error says what is compiled (``ren.progress``; ``REN_PROGRESS=0`` silences it), and
``REN_DEBUG=1`` prints each compiler run with its time.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ren import settings
from ren.codegen import compiler
from ren.codegen.cache_entries import checksum
from ren.codegen.toolchain import find_compiler
from ren.progress import Progress

__all__ = ["SLOW_SECONDS", "UNIT_MARK", "build_all", "estimate"]

#: The line that ends a source's shareable head (the C renderer writes it after its helpers).
UNIT_MARK = "/* ---- one kernel from here on ---- */\n"

#: Builds expected to take longer than this many seconds are announced on standard error.
SLOW_SECONDS = 2.0

#: Seconds one kernel costs the compiler on a 2-core x86 machine at -O3 (measured), by kind: a
#: kernel in a shared unit, a template (NTT, rescale, base conversion) in a file of its own.
UNIT_SECONDS, FILE_SECONDS = 0.03, 0.25


def estimate(sources: list[str], jobs: int = 1) -> float:
    """About how many seconds building ``sources`` takes with ``jobs`` compiler processes."""
    total = sum(UNIT_SECONDS if UNIT_MARK in s else FILE_SECONDS for s in sources)
    return 0.2 + total / max(1, min(jobs, len(sources)))


def build_all(
    kernels: list[tuple[str, str]],
    flags: tuple[str, ...],
    jobs: int = 1,
    what: str = "the cpu device",
    background: bool = False,
) -> int:
    """Build every ``(name, source)`` the compile cache lacks, together; how many were built.

    ``jobs`` compiler processes run at once (``REN_COMPILE_JOBS`` overrides it). Afterwards
    ``compiler.load_cached(source, flags, name=name)`` finds each one built. ``background``: the
    program goes on meanwhile (``ren.backends.cpu_tiers``), and the progress line says so. The
    compiler still runs at the program's priority: the program runs those kernels without their
    libraries until the build ends, so a build slowed down to spare it slows it down more
    (measured on 2 cores: a first CKKS multiply at ``n=16384`` took 0.14 to 0.59 s with the
    compiler at ``nice 10``, 0.10 to 0.13 s without).

    Raises:
        CompileError: the compiler rejected a source (built alone, so the message names it).
    """
    todo = {src: name for name, src in kernels if not compiler.cached(src, flags, name=name)}
    if not todo:
        return 0
    items = [(name, src) for src, name in todo.items()]
    jobs = settings.COMPILE_JOBS.get() or jobs
    if len(items) == 1:
        compiler.compile_cached(items[0][1], flags, name=items[0][0])
        return 1
    jobs = max(1, min(jobs, len(items)))
    seconds = estimate([src for _, src in items], jobs)
    show = settings.PROGRESS.get() and seconds > SLOW_SECONDS
    where = " in the background" if background else ""
    bar = Progress(f"ren: compiling {len(items)} kernels for {what}{where}", jobs, show)
    meanwhile = "; the first calls run without them meanwhile" if background else ""
    bar.say(
        f"about {seconds:.0f} s with {jobs} compiler process{'es' if jobs > 1 else ''}{meanwhile};"
        f" they are kept in {compiler.build_directory()} for the next run "
        "(python -m ren.codegen warm fills it ahead of time)"
    )
    placed: set[str] = set()
    with contextlib.suppress(OSError):  # the cache deleted under the batch: each alone, below
        _build_chunks(_balanced(items, jobs), flags, bar, placed)
    for name, src in items:  # what no batch placed: alone, so that a CompileError names it
        if src not in placed:
            compiler.compile_cached(src, flags, name=name)
    compiler.trim()
    bar.finish(f"{len(items)} kernels compiled")
    return len(items)


def _build_chunks(
    chunks: list[list[tuple[str, str]]], flags: tuple[str, ...], bar: Progress, placed: set[str]
) -> None:
    """Build each chunk as one library, all at once; each kernel of a good one goes in ``placed``.

    Raises:
        OSError: the directory of the batch cannot be made, written or read.
    """
    with tempfile.TemporaryDirectory(
        dir=compiler.build_directory(), prefix=".batch-", ignore_cleanup_errors=True
    ) as tmp:
        runs = [_start(Path(tmp), i, chunk, flags) for i, chunk in enumerate(chunks)]
        for done, (chunk, (proc, lib, started)) in enumerate(zip(chunks, runs, strict=True), 1):
            err = proc.communicate()[1]
            if settings.DEBUG.get() >= 1:
                took = time.perf_counter() - started
                names = ", ".join(name for name, _ in chunk)
                print(f"ren: built {len(chunk)} kernels in {took:.2f} s: {names}", file=sys.stderr)
            if proc.returncode != 0 or not lib.is_file():
                continue  # built alone by the caller
            summ = checksum(lib)
            for name, src in chunk:
                compiler.compile_cached(src, flags, name=name, prebuilt=(lib, summ))
                placed.add(src)
            bar.step(done, f"{len(chunk)} kernels" + (f", {err.strip()[:60]}" if err else ""))


def _balanced(items: list[tuple[str, str]], jobs: int) -> list[list[tuple[str, str]]]:
    """``items`` in ``jobs`` groups of about equal estimated cost (largest first, to the least)."""
    cost = {src: estimate([src]) for _, src in items}
    groups: list[list[tuple[str, str]]] = [[] for _ in range(jobs)]
    load = [0.0] * jobs
    for item in sorted(items, key=lambda it: -cost[it[1]]):
        i = load.index(min(load))
        groups[i].append(item)
        load[i] += cost[item[1]]
    return [g for g in groups if g]


def _start(
    tmp: Path, index: int, chunk: list[tuple[str, str]], flags: tuple[str, ...]
) -> tuple[subprocess.Popen[str], Path, float]:
    """Write ``chunk``'s files and start the compiler on them: ``(process, library, start)``."""
    cc, _ = find_compiler()
    files: list[Path] = []
    units: dict[str, list[str]] = {}  # a shared head -> the kernels after it
    for name, src in chunk:
        head, mark, unit = src.partition(UNIT_MARK)
        if mark:
            units.setdefault(head + mark, []).append(unit)
        else:
            files.append(tmp / f"{index}-{len(files)}-{name}.c")
            files[-1].write_text(src)
    for head, parts in units.items():
        files.append(tmp / f"{index}-{len(files)}-units.c")
        files[-1].write_text(head + "\n".join(parts))
    lib = tmp / f"batch-{index}.so"
    cmd = [cc, *flags, "-o", str(lib), *map(str, files)]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return proc, lib, started
