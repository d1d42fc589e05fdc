"""``python -m ren.viz debug SCRIPT.py``: run a script and stop at its realizations."""

from __future__ import annotations

import os
import runpy
import sys
import traceback
from types import FrameType
from typing import TextIO

from ren.engine.observe import observing
from ren.engine.realize import Realization
from ren.ir.node import Node
from ren.passes import ScheduleContext
from ren.viz.debug.commands import Debugger
from ren.viz.debug.regions import region_arg, region_matches, region_names_text
from ren.viz.debug.stepper import Stepper
from ren.viz.trace import Trace

# --------------------------------------------------------------------------------------------
# python -m ren.viz debug SCRIPT.py

_USAGE = """\
usage: python -m ren.viz debug [--all] [--skip N] [--region NAME] SCRIPT.py [ARGS ...]

Run SCRIPT.py and stop at its first realization with a (ren) prompt (help lists the commands).
  --skip N       let N realizations run first
  --region NAME  run on to the first realization with a kernel in region NAME (a name such as
                 bootstrap or eval_mod, or a path such as bootstrap/eval_mod), run its units
                 before that kernel, and stop there
  --all          stop at every realization (with --region: every one with such a kernel);
                 'quit' stops no more
Arguments after the script (or after '--') are the script's own sys.argv[1:]."""


class _Session:
    """The observer ``main`` runs a script under.

    It records each realization's passes and opens the prompt in ``on_run`` for the realizations
    it stops at.
    """

    def __init__(
        self,
        stop_all: bool,
        skip: int,
        stdin: TextIO | None,
        stdout: TextIO,
        region: str | None = None,
    ) -> None:
        self.stop_all, self.skip, self.region = stop_all, skip, region
        self.stdin, self.stdout = stdin, stdout
        self.seen = 0  # realizations about to run (on_run)
        self.stops = 0
        self.quit = False
        self.trace: Trace | None = None
        self.regions_seen: list[tuple[str, ...]] = []  # the distinct region paths (--region)

    def _may_stop(self) -> bool:
        return not self.quit and (self.stop_all or self.stops == 0)

    def on_input(self, sink: Node) -> None:
        self.trace = Trace() if self._may_stop() else None
        if self.trace is not None:
            self.trace.on_input(sink)

    def on_pass(
        self, step: int, name: str, sink: Node, previous: Node, ctx: ScheduleContext
    ) -> None:
        if self.trace is not None:
            self.trace.on_pass(step, name, sink, previous, ctx)

    def on_prepared(self, realization: Realization) -> None:
        if self.trace is not None:
            self.trace.on_prepared(realization)

    def on_run(self, realization: Realization) -> None:
        index = self.seen
        self.seen += 1
        trace, self.trace = self.trace, None
        if index < self.skip or not self._may_stop() or trace is None:
            return
        if self.region is not None and not self._has_region(realization, self.region):
            return
        rec = next(
            (r for r in reversed(trace.realizations) if r.kernels == realization.kernels), None
        )
        if rec is None:
            return
        self.stops += 1
        title = f"stop {self.stops}: realization {index} of the program, {_where()}"
        stepper = Stepper.attach(realization, rec, title)
        if self.region is not None:  # run to the region's first kernel; the banner says so
            stepper.title = f"{title}\n{stepper.run_to_region(self.region)}"
        loop = Debugger(stepper, self.stdin, self.stdout, "the program goes on")
        try:
            loop.loop()
        finally:
            if loop.quit_all:
                self.quit = True

    def _has_region(self, realization: Realization, region: str) -> bool:
        """Whether a kernel of ``realization`` is in a region ``region`` names.

        When none is, its region paths are kept for the closing message.
        """
        paths = list(dict.fromkeys(tuple(getattr(k, "region", ())) for k in realization.kernels))
        if any(region_matches(path, region) for path in paths):
            return True
        known = set(self.regions_seen)
        self.regions_seen.extend(p for p in paths if p and p not in known)
        return False


def _where() -> str:
    """Where the program asked for the realization.

    That is the innermost frame outside Ren, and the Ren function it called.
    """
    # the ren package: three folders up from ren/viz/debug/session.py
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
    frame: FrameType | None = sys._getframe(1)
    entry = None
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(root):
            module = frame.f_globals.get("__name__", "")
            name = f"{os.path.basename(path)}:{frame.f_lineno}"
            if entry is not None:
                return f"at {name} (in {_entry_name(entry)})"
            return f"at {name} ({module})"
        entry = frame
        frame = frame.f_back
    return "outside any script"


def _entry_name(entry: FrameType) -> str:
    """The Ren function a program called, named as the program called it.

    A method is named by its object's own class, where a base class defines it: the program
    called ``ckks.Context.rotation_key``, even though the code is a shared context's.
    """
    code = entry.f_code
    if code.co_varnames[:1] == ("self",) and "." in code.co_qualname:
        owner = type(entry.f_locals["self"])
        if getattr(owner, code.co_name, None) is not None:
            return _public_name(owner.__module__, f"{owner.__qualname__}.{code.co_name}")
    return _public_name(entry.f_globals.get("__name__", "?"), code.co_qualname)


def _public_name(module: str, qualname: str) -> str:
    """``module.qualname``, by the package that exports it when one does.

    ``ren.schemes.ckks.context.Context.__enter__`` is ``ren.schemes.ckks.Context.__enter__``: the
    name users write. Packages below ``ren`` itself only (``ren.poly.Poly`` stays as it is).
    """
    head = qualname.split(".")[0]
    obj = getattr(sys.modules.get(module), head, None)
    parts = module.split(".")
    while obj is not None and len(parts) > 2:
        parent = getattr(sys.modules.get(".".join(parts[:-1])), head, None)
        if parent is not obj:
            break
        parts = parts[:-1]
    return f"{'.'.join(parts)}.{qualname}"


def _parse(argv: list[str]) -> tuple[bool, int, str | None, list[str]]:
    stop_all, skip, region, i = False, 0, None, 0
    while i < len(argv):
        a = argv[i]
        if a == "--all":
            stop_all = True
        elif a == "--region" or a.startswith("--region="):
            if a == "--region":
                i += 1
                if i >= len(argv):
                    raise ValueError("--region needs a region name (such as bootstrap)")
                value = argv[i]
            else:
                value = a.split("=", 1)[1]
            region = region_arg(value)
        elif a == "--skip" or a.startswith("--skip="):
            if a == "--skip":
                i += 1
                if i >= len(argv):
                    raise ValueError("--skip needs a number")
                value = argv[i]
            else:
                value = a.split("=", 1)[1]
            if not value.isdigit():
                raise ValueError(f"--skip needs a number of realizations, got {value!r}")
            skip = int(value)
        elif a == "--":
            i += 1
            break
        elif a.startswith("-"):
            raise ValueError(f"unknown option {a!r}")
        else:
            break
        i += 1
    return stop_all, skip, region, argv[i:]


def main(
    script_path: str,
    argv: list[str],
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
) -> int:
    """Run ``script_path`` as ``__main__`` and stop at its realizations with a ``(ren)`` prompt.

    Args:
        script_path: the Python script.
        argv: the debugger's options (``--all``, ``--skip N``, ``--region NAME``), then the
            script's own arguments (after ``--`` when they start with ``-``). ``--region NAME``
            stops at the first realization with a kernel in a region ``NAME`` names (a name such
            as ``bootstrap``, or a path such as ``bootstrap/eval_mod``), its units before that
            kernel run.
        stdin: where commands come from (default: the terminal).
        stdout: where screens go (default: the terminal).

    Returns:
        0 when the script ran to its end, 1 when it raised (the traceback is on stderr), 2 for a
        bad option or a missing script.
    """
    out = stdout if stdout is not None else sys.stdout
    if script_path in ("-h", "--help") or any(a in ("-h", "--help") for a in argv[:1]):
        out.write(_USAGE + "\n")
        return 0
    try:
        stop_all, skip, region, script_args = _parse(list(argv))
    except ValueError as e:
        out.write(f"error: {e}\n{_USAGE}\n")
        return 2
    if not os.path.isfile(script_path):
        out.write(f"error: no script {script_path!r}\n")
        return 2
    session = _Session(stop_all, skip, stdin, out, region)
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [script_path, *script_args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script_path)))
    code = 0
    try:
        with observing(session):
            runpy.run_path(script_path, run_name="__main__")
    except SystemExit as e:
        if e.code not in (None, 0):
            out.write(f"the script exited with {e.code!r}\n")
            code = e.code if isinstance(e.code, int) else 1
    except Exception as e:
        traceback.print_exc(file=sys.stderr)
        out.write(f"error: {script_path} raised {type(e).__name__}: {e}\n")
        code = 1
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
    if session.stops == 0 and code == 0:
        why = f" (--skip {skip})" if skip else ""
        if region is not None:
            out.write(
                f"the script ran {session.seen} realizations{why} and none had a kernel in a "
                f"region matching {region!r}; the region names seen: "
                f"{region_names_text(session.regions_seen)}\n"
            )
        else:
            out.write(f"the script ran {session.seen} realizations and none stopped{why}\n")
    out.flush()
    return code
