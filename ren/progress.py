"""One line on standard error while Ren does something slow: keys being made, kernels compiled.

``Progress(label, total)`` prints ``label: i/total (what)`` (``label: i (what)`` for a total not
known, ``None``) as steps are done, in place on a
terminal; elsewhere (a log, a notebook's captured stream) only the lines said and the last one,
so a log gets a line or two, not one per step. ``show=None`` means: when standard error is a
terminal; a caller that must always say something (a build of many kernels) passes ``True``.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]


class Progress:
    """A progress line for ``total`` steps of ``label`` on ``stream`` (standard error)."""

    def __init__(
        self,
        label: str,
        total: int | None,
        show: bool | None = None,
        stream: TextIO | None = None,
    ) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.show = self.tty if show is None else bool(show)
        self.label, self.total, self.start = label, total, time.perf_counter()

    def say(self, text: str) -> None:
        """Print ``label: text`` (a line of its own)."""
        if self.show:
            print(f"{self.label}: {text}", file=self.stream, flush=True)

    def step(self, done: int, what: str = "") -> None:
        """``done`` of ``total`` steps are done; ``what`` is the one under way (on a terminal)."""
        if self.show and self.tty:
            more = f" ({what})" if what else ""
            of = "" if self.total is None else f"/{self.total}"
            line = f"\r{self.label}: {done}{of}{more}   "
            print(line, end="", file=self.stream, flush=True)

    def finish(self, text: str) -> None:
        """The last line: ``text``, with the seconds since the start."""
        if self.show:
            took = time.perf_counter() - self.start
            start = "\r" if self.tty else ""
            print(
                f"{start}{self.label}: {text} in {took:.1f} s      ", file=self.stream, flush=True
            )
