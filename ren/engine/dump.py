"""The dump hook: the graph after every pass, as Graphviz files in a directory.

The scheduler calls ``dump_input(sink)`` before the first pass and ``dump_pass(step, name, sink,
previous)`` after each one. Both do nothing unless a dump directory is active: the innermost
``ren.viz.dump_to(dir)`` block, else ``$REN_DUMP``. Then they write ``00_input.dot`` and
``NN_<pass>.dot`` (``to_dot`` text; a pass's new nodes highlighted) and, when graphviz's ``dot`` is
on ``PATH``, the matching ``.svg``. A missing or failing ``dot`` costs one warning, never an error:
the ``.dot`` file is written first and stays. A directory that cannot be made or written (a path
under a regular file, a read-only place) is a ``ValueError`` naming ``REN_DUMP`` or the ``dump_to``
directory and the reason, raised before the first pass runs.
"""

from __future__ import annotations

import shutil
import subprocess
import warnings
from contextvars import ContextVar
from pathlib import Path

from ren import settings
from ren.ir.dot import to_dot
from ren.ir.node import Node, toposort

__all__ = [
    "DUMP_DIR",
    "SVG_TIMEOUT_S",
    "dot_error",
    "draw_svg",
    "dump_dir",
    "dump_input",
    "dump_pass",
]

#: the directory set by the innermost ``ren.viz.dump_to`` block (``None`` outside any).
DUMP_DIR: ContextVar[Path | None] = ContextVar("ren_dump_dir", default=None)

#: seconds ``dot -Tsvg`` may take on one graph before the picture is given up.
SVG_TIMEOUT_S = 60

_warned = False  # a failing ``dot`` warns once per process, not once per pass


def dump_dir() -> Path | None:
    """The active dump directory: the innermost ``dump_to`` block, else ``$REN_DUMP``, else None.

    Raises:
        ValueError: ``REN_DUMP`` is read and holds a bad value (see ``ren.settings``).
    """
    directory = DUMP_DIR.get()
    if directory is not None:
        return directory
    return settings.DUMP.get()


def dump_input(sink: Node) -> None:
    """Write ``00_input.dot`` (and ``.svg``): the graph before any pass, nothing highlighted.

    Raises:
        ValueError: the dump directory cannot be made or written (the message names
            ``REN_DUMP`` or the ``dump_to`` directory, and the reason).
    """
    directory = dump_dir()
    if directory is not None:
        _write(directory, "00_input", to_dot(sink, title="input"))


def dump_pass(step: int, name: str, sink: Node, previous: Node | None) -> None:
    """Write ``{step:02d}_{name}.dot`` (and ``.svg``): the graph after pass ``name``.

    Nodes of ``sink``'s graph that are not in ``previous``'s (the graph the pass was given) are
    highlighted; with no ``previous`` nothing is. Passes count from 1; 0 is the input.

    Raises:
        ValueError: the dump directory cannot be made or written, as for ``dump_input``.
    """
    directory = dump_dir()
    if directory is None:
        return
    created: frozenset[Node] = frozenset()
    if previous is not None:
        created = frozenset(toposort(sink)).difference(toposort(previous))
    _write(directory, f"{step:02d}_{name}", to_dot(sink, created=created, title=name))


def _where(directory: Path) -> str:
    """How the user named ``directory``: the ``dump_to`` block or ``REN_DUMP``."""
    if DUMP_DIR.get() is not None:
        return f"the dump_to directory {str(directory)!r}"
    return f"REN_DUMP={str(directory)!r}"


def _write(directory: Path, stem: str, text: str) -> None:
    dot_path = directory / f"{stem}.dot"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        dot_path.write_text(text, encoding="utf-8")
    except OSError as e:
        if isinstance(e, FileExistsError) and e.filename == str(directory):
            reason = "it exists and is not a directory"
        else:
            reason = f"{type(e).__name__}: {e.strerror or e}"
            if e.filename is not None:
                reason += f": {e.filename}"
        raise ValueError(
            f"{_where(directory)} cannot hold the graph dumps ({reason}); "
            "give a directory that can be created and written"
        ) from None
    dot = shutil.which("dot")
    if dot is None:
        return
    svg_path = directory / f"{stem}.svg"
    try:
        svg_path.write_text(draw_svg(text, dot), encoding="utf-8")
    except (OSError, subprocess.SubprocessError) as e:
        svg_path.unlink(missing_ok=True)  # no half-written picture next to the good .dot
        _warn_once(f"graphviz could not draw {dot_path} ({dot_error(e)}); only the .dot is written")


def draw_svg(text: str, program: str = "dot") -> str:
    """``program -Tsvg`` of the DOT ``text`` (at most ``SVG_TIMEOUT_S`` seconds).

    Raises:
        OSError, subprocess.SubprocessError: ``dot`` is missing, fails or takes too long
            (``dot_error`` says which in a line).
    """
    done = subprocess.run(
        [program, "-Tsvg"],
        input=text.encode(),
        capture_output=True,
        check=True,
        timeout=SVG_TIMEOUT_S,
    )
    return done.stdout.decode("utf-8", errors="replace")


def dot_error(e: Exception) -> str:
    """Why ``draw_svg`` failed, in one line."""
    if isinstance(e, subprocess.CalledProcessError):
        stderr = e.stderr.decode(errors="replace").strip() if e.stderr else ""
        return f"dot exited with {e.returncode}" + (f": {stderr}" if stderr else "")
    if isinstance(e, subprocess.TimeoutExpired):
        return f"dot took over {e.timeout} s"
    return f"{type(e).__name__}: {e}"


def _warn_once(message: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        # stacklevel 4 points at the scheduler line that called dump_pass/dump_input
        warnings.warn(message, RuntimeWarning, stacklevel=4)
