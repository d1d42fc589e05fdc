"""``python -m ren.codegen warm``: fill the compile cache ahead of time.

The cpu device compiles each kernel the first time a program needs it and keeps the library in
the compile cache (``REN_CACHE_DIR``, default ``~/.cache/ren``), so only a first run pays for the
compiler. For a CI job or a teaching room, fill the cache once, before the first user waits::

    python -m ren.codegen warm --preset boot-n12      # keys, a bootstrap, multiply and rotate
    python -m ren.codegen warm --plan saved.renplan   # every kernel of a saved plan

A preset is run once on the ``cpu`` device (keys made, a multiply and a rotation at the top
level, a value encrypted at level 0 and bootstrapped); a plan's
kernels are read and checked as ``ren.load`` checks them and built, nothing run. Prints what it
built, how long it took, where the cache is and the compiler flags: they are part of each
kernel's key, so warm with the settings the users run with (``REN_THREADS=1`` builds without
OpenMP, another set of kernels).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

import numpy as np

import ren
from ren import settings
from ren.backends import cpu, cpu_threads
from ren.capture.plankernels import plan_kernels
from ren.codegen import compiler
from ren.engine.realize import backend, prepare_all
from ren.errors import RenError
from ren.schemes import ckks


def warm_preset(name: str) -> None:
    """Run ``name``'s programs once on the cpu device, so each kernel they need is built."""
    params = ckks.Params.preset(name)
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, params.slots)
    with ckks.Context(params, seed=0, device="cpu") as ctx:
        ctx.keygen()
        top = ckks.encrypt(x)
        ctx.rotation_key(1)
        ckks.decrypt(ckks.multiply(top, top).rotate(1))
        ckks.bootstrap_keys(ctx, progress=True)
        low = ckks.encrypt(x, level=0).realize()
        ckks.decrypt(ckks.bootstrap(low))


def warm_plan(path: str) -> int:
    """Build every kernel of the plan file at ``path``; how many were built.

    A plan that reads no stored input is loaded whole, so its graph runner is built too; one
    that does (a CKKS plan's keys) has its kernels built.
    """
    kernels = plan_kernels(path)
    before = len(_entries())
    prepare_all([(backend(info.device), ast, info) for ast, info in kernels])
    for ast, info in kernels:
        backend(info.device).compile(ast, info)  # the ones no batch built (a device of its own)
    with contextlib.suppress(ValueError):  # stored inputs it needs: the kernels are enough
        ren.load(path)
    if "-fopenmp" in cpu.flags():
        cpu_threads.apply()  # the helper that sets each call's threads, built once too
    return len(_entries()) - before


def _entries() -> list[Path]:
    directory = compiler.cache_dir()
    return list(directory.glob("*.so")) if directory.is_dir() else []


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status."""
    doc = (__doc__ or "").split("\n")[0]
    parser = argparse.ArgumentParser(prog="python -m ren.codegen", description=doc)
    sub = parser.add_subparsers(dest="command", required=True)
    warm = sub.add_parser("warm", help="fill the compile cache for a preset or a saved plan")
    what = warm.add_mutually_exclusive_group(required=True)
    what.add_argument("--preset", help="a ckks.Params preset (boot-toy, boot-n12, ...)")
    what.add_argument("--plan", help="a plan file written by a jitted function's save()")
    args = parser.parse_args(argv)
    if args.preset is not None:
        try:
            ckks.Params.preset(args.preset)
        except (TypeError, ValueError) as e:
            parser.error(str(e))
    start, before = time.perf_counter(), len(_entries())
    with settings.override(TIERED=False):  # build every kernel before it runs: what warm is for
        if args.plan is not None:
            try:
                warm_plan(args.plan)
            except (OSError, ValueError, RenError) as e:  # no such file, a damaged plan, no device
                print(f"python -m ren.codegen warm: {e}", file=sys.stderr)
                return 1
        else:
            warm_preset(args.preset)
    took = time.perf_counter() - start
    made = len(_entries()) - before
    print(f"ren: {made} kernels compiled in {took:.1f} s; the cache is {compiler.cache_dir()}")
    print(f"flags: {' '.join(cpu.flags())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
