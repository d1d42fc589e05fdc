"""``python -m ren.viz``: run a program under ``ren.viz.record()`` and write its report.

Run ``python -m ren.viz --help`` for the usage; ``ren.viz.report`` describes the report.
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import sys
import traceback
import webbrowser
from collections.abc import Sequence
from pathlib import Path

from ren.viz.examples import EXAMPLES, Outcome, run_example
from ren.viz.memory import plan_svg, plan_text
from ren.viz.precision import measure_precision
from ren.viz.report import text_report, write_report
from ren.viz.report.compare import main as compare_main
from ren.viz.report.compare import run_summary
from ren.viz.trace import Trace, record

USAGE = """\
python -m ren.viz [options] SCRIPT.py [script args ...]
       python -m ren.viz [options] --example NAME
       python -m ren.viz --list
       python -m ren.viz memory [--out DIR] [--text] (SCRIPT.py [script args ...] | --example NAME)
       python -m ren.viz debug [--all] [--skip N] [--region NAME] SCRIPT.py [script args ...]
       python -m ren.viz compare RUN_A RUN_B [--out DIR]
       python -m ren.viz PLAN_FILE.renplan [--out DIR]"""

DESCRIPTION = """\
Run a program (a Python script, or a built-in example) while recording everything Ren does, and
write one self-contained HTML report: the program's regions as boxes (kernels, time, bytes, and for
CKKS level, scale and precision: absolute, against a plaintext shadow, and any range a value
breaks), the lazy graph, the graph after each pass with the rules that
fired, the kernels with their source for each backend, the memory plan, the exec units in order,
the ren.jit captures and replays, and the time of each pass.

'memory' writes only the memory plan pictures (one SVG per realization and device) and prints
them as text; 'debug' steps through a script's realizations (ren.viz.debug; '--region bootstrap'
starts at the first bootstrap, 'debug --help' lists its options); 'compare' puts two
runs side by side (each report directory holds report.json: kernels, times, memory and precision
per region); a saved plan file (ren.jit's save) is shown as its manifest, kernels and memory
picture.

Options come before SCRIPT.py: everything after it is passed to the script (as sys.argv[1:])."""

EPILOG = "examples:\n" + "\n".join(f"  {name:<12} {desc}" for name, (desc, _) in EXAMPLES.items())

DEFAULT_OUT = "ren-viz-report"

#: Options of ours that take a value (so the value is not mistaken for the script).
_VALUED = ("--out", "--example")


def _parser(memory: bool = False) -> argparse.ArgumentParser:
    prog = "python -m ren.viz" + (" memory" if memory else "")
    parser = argparse.ArgumentParser(
        prog=prog,
        usage=USAGE,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--example", metavar="NAME", help="run a built-in example (see below)")
    parser.add_argument(
        "--out",
        metavar="DIR",
        default=DEFAULT_OUT,
        help=f"directory to write into (default: ./{DEFAULT_OUT}/)",
    )
    parser.add_argument(
        "--text", action="store_true", help="print the report in the terminal; write no file"
    )
    if not memory:
        parser.add_argument("--list", action="store_true", help="list the examples and exit")
        parser.add_argument(
            "--open", action="store_true", help="open the report in a web browser when one exists"
        )
        parser.add_argument(
            "--all-graphs",
            action="store_true",
            help="draw the graph after every pass of every realization (default: of the "
            "focused ones only)",
        )
        parser.add_argument(
            "--no-times",
            action="store_true",
            help="write a dash for every time, so two reports can be compared with diff",
        )
    return parser


def _split(argv: Sequence[str]) -> tuple[list[str], str | None, list[str]]:
    """Split ``argv`` into ``(our options, script, script args)``.

    The script is the first word that is neither an option nor an option's value; everything
    after it belongs to the script.
    """
    ours: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return ours, (argv[i + 1] if i + 1 < len(argv) else None), list(argv[i + 2 :])
        if not word.startswith("-"):
            return ours, word, list(argv[i + 1 :])
        ours.append(word)
        if word in _VALUED and i + 1 < len(argv):
            ours.append(argv[i + 1])
            i += 1
        i += 1
    return ours, None, []


def _fail(message: str, code: int = 2) -> int:
    print(f"ren.viz: {message}", file=sys.stderr)
    return code


class _Run:
    """What running a program gave: its trace, a title, a summary, labels, and how it ended."""

    def __init__(self, trace: Trace, title: str, outcome: Outcome, error: str = "") -> None:
        self.trace, self.title, self.outcome, self.error = trace, title, outcome, error

    @property
    def failed(self) -> bool:
        return bool(self.error) or not self.outcome.ok


def _run_example(name: str) -> _Run:
    desc, _ = EXAMPLES[name]
    trace, outcome = run_example(name)
    _precision(trace)
    return _Run(trace, f"ren.viz --example {name}: {desc}", outcome)


def _precision(trace: Trace) -> None:
    """The observing pass (``ren.viz.precision``); a failure costs the precisions only."""
    try:
        measure_precision(trace)
    except Exception as e:
        print(f"ren.viz: the regions' precision could not be measured: {e}", file=sys.stderr)


def _run_script(path: Path, args: list[str]) -> _Run:
    """Run ``path`` as ``__main__`` with ``sys.argv = [path, *args]``, recording.

    An exception (or a non-zero ``sys.exit``) ends the run but keeps what was recorded.
    """
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [str(path), *args]
    sys.path.insert(0, str(path.resolve().parent))
    error = ""
    try:
        with record() as trace:
            try:
                runpy.run_path(str(path), run_name="__main__")
            except SystemExit as e:
                if e.code not in (None, 0):
                    error = f"the script exited with status {e.code}"
            except Exception as e:
                error = _traceback(e, path)
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    _precision(trace)
    command = " ".join([str(path), *args])
    summary = f"script: {command}\n" + ("raised an error (below)" if error else "ran to the end")
    return _Run(trace, f"ren.viz: {command}", Outcome(summary, ok=not error), error)


def _traceback(e: BaseException, path: Path) -> str:
    """The traceback from the script's own frames on (runpy's and ours left out)."""
    script = str(path.resolve())
    tb = e.__traceback__
    while tb is not None and str(Path(tb.tb_frame.f_code.co_filename).resolve()) != script:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(e), e, tb or e.__traceback__))


def _run(example: str | None, script: str | None, args: list[str]) -> _Run | int:
    """Run what was asked; an exit status for a usage error."""
    if example is not None and script is not None:
        return _fail("give a script or --example NAME, not both")
    if example is not None:
        if example not in EXAMPLES:
            return _fail(
                f"no example named {example!r}; the examples are: {', '.join(EXAMPLES)} "
                "(python -m ren.viz --list)"
            )
        return _run_example(example)
    if script is None:
        return _fail("nothing to run: give SCRIPT.py or --example NAME (python -m ren.viz --help)")
    path = Path(script)
    if not path.is_file():
        return _fail(f"no such script: {script}")
    return _run_script(path, args)


def _finish(run: _Run) -> int:
    if run.error:
        print(
            "ren.viz: the program raised an error; the report shows what was recorded up to it:",
            file=sys.stderr,
        )
        print(run.error.rstrip(), file=sys.stderr)
        return 1
    if not run.outcome.ok:
        return _fail("the example's result does not match its oracle (see the summary)", 1)
    return 0


def _open(path: Path) -> None:
    try:
        browser = webbrowser.get()
    except webbrowser.Error:
        print(f"no web browser found: open {path} yourself")
        return
    if not browser.open(path.resolve().as_uri()):
        print(f"the browser did not start: open {path} yourself")


def main_report(argv: Sequence[str]) -> int:
    """``python -m ren.viz [options] (SCRIPT.py [args] | --example NAME)``."""
    ours, script, args = _split(argv)
    opts = _parser().parse_args(ours)
    if opts.list:
        for name, (desc, _) in EXAMPLES.items():
            print(f"{name:<12} {desc}")
        return 0
    run = _run(opts.example, script, args)
    if isinstance(run, int):
        return run
    o = run.outcome
    if opts.text:
        times = not opts.no_times
        text = text_report(
            run.trace,
            run.title,
            o.summary,
            labels=o.labels,
            focus=o.focus or None,
            times=times,
            error=run.error,
        )
        print(text, end="")
        return _finish(run)
    path = write_report(
        run.trace,
        opts.out,
        run.title,
        o.summary,
        labels=o.labels,
        focus=o.focus or None,
        graphs="all" if opts.all_graphs else "focus",
        times=not opts.no_times,
        error=run.error,
    )
    summary = path.with_name("report.json")
    summary.write_text(json.dumps(run_summary(run.trace, run.title), indent=1), encoding="utf-8")
    if o.summary:
        print(o.summary.rstrip())
    recorded = run.trace
    print(
        f"recorded {len(recorded.realizations)} realizations, "
        f"{sum(len(r.kernels) for r in recorded.realizations)} kernels, "
        f"{len(recorded.jit)} ren.jit calls"
    )
    print(f"report: {path.resolve()} ({path.stat().st_size / 1024:.0f} KiB)")
    if opts.open:
        _open(path)
    return _finish(run)


def main_memory(argv: Sequence[str]) -> int:
    """``python -m ren.viz memory [--out DIR] [--text] (SCRIPT.py [args] | --example NAME)``."""
    ours, script, args = _split(argv)
    opts = _parser(memory=True).parse_args(ours)
    run = _run(opts.example, script, args)
    if isinstance(run, int):
        return run
    out_dir = Path(opts.out)
    written = []
    for rec in run.trace.realizations:
        label = run.outcome.labels.get(rec.index, "")
        head = f"realization {rec.index}" + (f": {label}" if label else "")
        if not rec.plan.devices:
            print(f"{head}: nothing planned\n")
            continue
        names = [k.info.name for k in rec.kernels]
        for d in rec.plan.devices:
            print(f"{head} ({d.device})")
            print(plan_text(d))
            if not opts.text:
                out_dir.mkdir(parents=True, exist_ok=True)
                path = out_dir / f"memory-r{rec.index:02d}-{d.device}.svg"
                path.write_text(plan_svg(d, names, title=f"{head}: {d.device}"), encoding="utf-8")
                written.append(path)
    if written:
        print(f"wrote {len(written)} SVG file{'s' * (len(written) != 1)} to {out_dir.resolve()}")
    return _finish(run)


def main_debug(argv: Sequence[str]) -> int:
    """``python -m ren.viz debug [options] SCRIPT.py [args]``: the step-through debugger.

    That is ``ren.viz.debug.main``, with its options first, then ``--`` and the script's args.
    """
    try:
        from ren.viz.debug import main as debug_main
    except ImportError as e:
        return _fail(f"the step-through debugger is not available: {e}")
    options, i = [], 0
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "--":
        if argv[i] in ("-h", "--help"):
            return debug_main("--help", [])
        options.append(argv[i])
        if argv[i] in ("--skip", "--region") and i + 1 < len(argv):
            options.append(argv[i + 1])
            i += 1
        i += 1
    if i < len(argv) and argv[i] == "--":
        i += 1
    if i >= len(argv):
        return _fail(
            "usage: python -m ren.viz debug [--all] [--skip N] [--region NAME] SCRIPT.py [ARGS ...]"
        )
    return debug_main(argv[i], [*options, "--", *argv[i + 1 :]])


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit status (0 ok, 1 the program failed, 2 a usage error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "memory":
        return main_memory(argv[1:])
    if argv and argv[0] == "debug":
        return main_debug(argv[1:])
    if argv and argv[0] == "compare":
        return compare_main(argv[1:])
    if argv and argv[0].endswith(PLAN_SUFFIX):
        return main_plan(argv)
    return main_report(argv)


#: The suffix of the plan files ``python -m ren.viz PLAN_FILE`` shows.
PLAN_SUFFIX = ".renplan"


def main_plan(argv: Sequence[str]) -> int:
    """``python -m ren.viz PLAN_FILE [--out DIR]``: a saved plan's manifest, kernels and arena."""
    from ren.capture.planfile import PlanFileError
    from ren.viz.planfile import plan_file_text, write_plan_pictures

    parser = argparse.ArgumentParser(prog="python -m ren.viz PLAN_FILE")
    parser.add_argument("plan", help="a plan file written by a jitted function's save()")
    parser.add_argument("--out", type=Path, default=Path("ren-viz-plan"), help="SVG folder")
    opts = parser.parse_args(argv)
    try:
        print(plan_file_text(opts.plan), end="")
        for picture in write_plan_pictures(opts.plan, opts.out):
            print(f"memory picture: {picture.resolve()}")
    except (OSError, PlanFileError) as e:
        return _fail(str(e), 1)
    return 0


if __name__ == "__main__":
    try:
        status = main()
    except BrokenPipeError:  # the reader went away (``| head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = 1
    raise SystemExit(status)
