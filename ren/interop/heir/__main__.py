"""``python -m ren.interop.heir``: run a HEIR program on Ren, or find where it departs.

``run PROGRAM.mlir``: the program (a source, lowered with ``--scheme``, or a module HEIR already
lowered) on random arguments (or ``--args FILE.npz``), encrypted and in cleartext, both results
printed. ``diverge PROGRAM.mlir``: the first op whose decrypted value departs from the cleartext
by more than ``--threshold``, with both values; ``--lowered FILE`` runs that lowered module
encrypted against the cleartext of PROGRAM.mlir lowered again. Exit status: 0 when the runs
agree, 1 at a divergence, 2 for a program Ren refuses (the reason on standard error).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

from ren.errors import RenError
from ren.interop.heir.api import SCHEMES, compile, load, text_of
from ren.interop.heir.diverge import DEFAULT_THRESHOLD, diverge, sample_args
from ren.interop.heir.ir import MlirError
from ren.interop.heir.program import Program
from ren.interop.heir.tools import HeirMissing


def _program(path: str, scheme: str, seed: int, insecure: bool) -> Program:
    """``path`` as a program: loaded when it holds a lowered module (its chain), else compiled."""
    if "schemeParam" in text_of(path):
        return load(path, seed=seed, insecure=insecure)
    return compile(path, scheme, seed=seed, insecure=insecure)


def _args(program: Program, given: str | None, seed: int) -> list[Any]:
    if given is None:
        return sample_args(program, seed)
    with np.load(given, allow_pickle=False) as data:  # never unpickles: a file is never code
        names = [n for n in program.arg_names if n in data.files]
        if len(names) != program.arity:
            raise ValueError(f"{given} holds {sorted(data.files)}; the program takes "
                             f"{program.arg_names}")  # fmt: skip
        return [data[n] for n in program.arg_names]


def main(argv: list[str] | None = None) -> int:
    """The command line (``argv``: its arguments); the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m ren.interop.heir",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("run", "diverge"):
        p = sub.add_parser(name)
        p.add_argument("program", help="an MLIR source or a module HEIR lowered")
        p.add_argument("--scheme", default="ckks", choices=sorted(SCHEMES))
        p.add_argument("--args", help="the arguments: an .npz file, one array per argument name")
        p.add_argument("--seed", type=int, default=0, help="keys' and random arguments' seed")
        p.add_argument("--insecure", action="store_true", help="accept a chain past the standard")
        if name == "diverge":
            p.add_argument(
                "--lowered", help="a lowered module to check against PROGRAM's cleartext"
            )
            p.add_argument(
                "--threshold",
                type=float,
                default=DEFAULT_THRESHOLD,
                help=f"the error accepted (CKKS; default {DEFAULT_THRESHOLD:g})",
            )
    opts = parser.parse_args(argv)
    try:
        program = _program(opts.program, opts.scheme, opts.seed, opts.insecure)
        args = _args(program, opts.args, opts.seed)
        if opts.command == "run":
            print(f"{program}: arguments {program.arg_names}")
            print(f"encrypted: {program(*args)}")
            print(f"cleartext: {program.cleartext(*args)}")
            return 0
        checked = program
        if opts.lowered:
            checked = load(opts.lowered, seed=opts.seed, insecure=opts.insecure)
        found = diverge(checked, args, reference=program, threshold=opts.threshold)
    except (HeirMissing, MlirError, RenError, ValueError, TypeError, OSError) as e:
        print(f"python -m ren.interop.heir: {e}", file=sys.stderr)
        return 2
    if found is None:
        print(f"{checked}: every op within {opts.threshold:g} of the cleartext")
        return 0
    print(found)
    return 1


if __name__ == "__main__":
    sys.exit(main())
