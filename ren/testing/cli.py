"""The conformance kit's command: ``python -m ren.testing --device NAME``.

And ``python -m ren.testing compare A B``: two files of words compared
(``ren.testing.compare_files``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ren.device import devices
from ren.testing.cases import FAMILIES
from ren.testing.rings import Case, ring_label
from ren.testing.run import CaseResult, DeviceUnavailable, describe, run_conformance

# --------------------------------------------------------------------------------------------
# the command


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m ren.testing",
        usage="python -m ren.testing [--device NAME] [options]\n"
        "       python -m ren.testing compare A B [options]",
        description="Check a Ren device against the python (NumPy) reference, kernel family by "
        "kernel family. Exit status: 0 all passed, 1 a case failed, 2 the device cannot be used.",
        epilog="commands: compare A B: compare two files of words (.npy, .npz:KEY, SEAL's or "
        "OpenFHE's files, Ren's bytes) word by word and name a known convention that explains "
        "a difference; python -m ren.testing compare --help lists its options.",
    )
    p.add_argument("--device", help="the device to check (Ren's own or a registered one)")
    p.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE first, to register its device (repeatable)",
    )
    p.add_argument("--quick", action="store_true", help="two small rings, short random programs")
    p.add_argument("--seed", type=int, default=0, help="seed of inputs and random programs")
    p.add_argument(
        "--family",
        nargs="+",
        choices=list(FAMILIES),
        metavar="F",
        help="only these families (see --list)",
    )
    p.add_argument(
        "--json", type=Path, metavar="PATH", help="also write the report as JSON to PATH"
    )
    p.add_argument("--list", action="store_true", help="print the families and exit")
    p.add_argument("-v", "--verbose", action="store_true", help="print every case as it runs")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """The command ``python -m ren.testing``; returns the exit status.

    ``python -m ren.testing compare A B`` compares two files word by word
    (``ren.testing.compare_files``).
    """
    args_ = list(sys.argv[1:] if argv is None else argv)
    if args_ and args_[0] == "compare":
        from ren.testing.compare_files import main as compare

        return compare(args_[1:])
    argv = args_
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, or a bad argument (argparse printed why)
        return int(e.code or 0)
    if args.list:
        for name, what in FAMILIES.items():
            print(f"{name:<14}{what}")
        return 0
    for module in args.imports:
        try:
            importlib.import_module(module)
        except Exception as e:
            print(f"ren.testing: --import {module} failed: {describe(e)}", file=sys.stderr)
            return 2
    if not args.device:
        parser.print_usage(sys.stderr)
        print(
            f"ren.testing: --device is required; the devices are {', '.join(devices())}",
            file=sys.stderr,
        )
        return 2

    def verbose(case: Case, r: CaseResult | None) -> None:
        if r is None:  # before the case: a crash (a segfault in a C kernel) shows where it was
            print(
                f"{case.family:<13}{case.name:<20}{ring_label(case.ring):<24}",
                end="",
                file=sys.stderr,
                flush=True,
            )
        else:
            print(f"{'ok' if r.passed else 'FAIL':<6}{r.seconds:7.3f} s", file=sys.stderr)

    try:
        report = run_conformance(
            args.device,
            quick=args.quick,
            seed=args.seed,
            families=args.family,
            progress=verbose if args.verbose else None,
        )
    except (ValueError, DeviceUnavailable) as e:
        print(f"ren.testing: {e}", file=sys.stderr)
        return 2
    print(report.table())
    if args.json:
        args.json.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
    return 0 if report.ok else 1
