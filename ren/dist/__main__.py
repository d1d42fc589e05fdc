"""``python -m ren.dist PLAN.renplan INPUT_DIR OUTPUT_DIR --keys KEYS``: a saved plan over files.

Each entry of ``INPUT_DIR`` (by name, hidden ones left out) is one item: a file holds a value's
bytes (``ct.to_bytes()``), a folder holds one file per input of a plan of several inputs (in the
order of their names). Each result is written to ``OUTPUT_DIR`` under the item's name (a folder
``0``, ``1``, ... for a tuple result), each file whole (written beside and renamed). Items that
fail are listed in ``OUTPUT_DIR/errors.json`` (name, kind, reason) and on standard error.

Exit status: 0 when every item went through, 1 when some failed, 2 when nothing could run (a bad
argument, a plan or keys refused, workers that could not start).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ren.capture.planfile import PlanFileError
from ren.dist.api import ENGINES, Pool, stored_root
from ren.dist.driver import ItemError
from ren.errors import RenError

__all__ = ["Inputs", "main"]


class Inputs:
    """The items of a folder, read one at a time as the run takes them, none past ``limit``."""

    def __init__(self, folder: Path, limit: int) -> None:
        if not folder.is_dir():
            raise ValueError(f"INPUT_DIR {folder} is not a folder")
        self.entries = sorted(p for p in folder.iterdir() if not p.name.startswith("."))
        self.limit = limit

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[Any]:
        for entry in self.entries:
            if entry.is_dir():
                files = sorted(p for p in entry.iterdir() if not p.name.startswith("."))
                yield tuple(self._read(p) for p in files)
            else:
                yield self._read(entry)

    def _read(self, path: Path) -> bytes:
        with path.open("rb") as f:  # past the limit, the item is refused by its size
            return f.read(self.limit + 1)


def _write(path: Path, blob: bytes) -> None:
    part = path.with_name(f".{path.name}.part")
    part.write_bytes(blob)
    os.replace(part, path)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; the exit status."""
    parser = argparse.ArgumentParser(prog="python -m ren.dist", description=__doc__.split("\n")[0])
    parser.add_argument("plan", type=Path, help="the saved plan (f.save(path))")
    parser.add_argument("inputs", type=Path, help="a folder: one item a file (or a folder)")
    parser.add_argument("outputs", type=Path, help="a folder for the results (made if missing)")
    parser.add_argument("--keys", type=Path, required=True, help="evaluation keys' bytes")
    parser.add_argument("--keys-name", help="the keys' stored name (default: the plan's one)")
    parser.add_argument("--engine", choices=ENGINES, default="ray")
    parser.add_argument("--workers", type=int, help="how many workers (default: one a CPU)")
    parser.add_argument("--batch-size", type=int, help="items a batch")
    parser.add_argument("--audit", type=int, default=0, help="items replayed also on NumPy")
    parser.add_argument("--address", help="the Ray cluster to join (default: RAY_ADDRESS)")
    parser.add_argument("--insecure", action="store_true", help="accept insecure parameters")
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    args = parser.parse_args(argv)
    try:
        name = args.keys_name or _stored_name(args.plan)
        pool = Pool(
            args.plan,
            stored={name: args.keys.read_bytes()},
            engine=args.engine,
            workers=args.workers,
            address=args.address,
            insecure=args.insecure,
        )
    except (OSError, ValueError, TypeError, RenError) as e:
        print(f"ren.dist: {e}", file=sys.stderr)
        return 2
    errors = []
    with pool:
        try:
            items = Inputs(args.inputs, pool.item_limit)
            args.outputs.mkdir(parents=True, exist_ok=True)
            (args.outputs / "errors.json").unlink(missing_ok=True)  # an earlier run's
            results = pool.imap(
                items, batch_size=args.batch_size, audit=args.audit, progress=not args.quiet
            )
            for entry, result in zip(items.entries, results, strict=True):
                if isinstance(result, ItemError):
                    errors.append(
                        {"item": entry.name, "kind": result.kind, "reason": result.reason}
                    )
                    print(
                        f"ren.dist: {entry.name}: {result.kind}: {result.reason}", file=sys.stderr
                    )
                elif isinstance(result, tuple):
                    (args.outputs / entry.name).mkdir(exist_ok=True)
                    for i, blob in enumerate(result):
                        _write(args.outputs / entry.name / str(i), blob)
                else:
                    _write(args.outputs / entry.name, result)
        except (OSError, ValueError, RenError) as e:
            print(f"ren.dist: {e}", file=sys.stderr)
            return 2
    if errors:
        _write(args.outputs / "errors.json", json.dumps(errors, indent=1).encode())
    print(f"ren.dist: {len(items) - len(errors)} of {len(items)} items written to {args.outputs}")
    return 1 if errors else 0


def _stored_name(plan: Path) -> str:
    """The one name the plan's stored inputs are given under (``keys``)."""
    from ren.capture.planfile import read

    names = {stored_root(n) for n in read(plan)["manifest"]["stored"]}
    if len(names) != 1:
        raise PlanFileError(
            f"the plan {plan} reads stored inputs under {sorted(names) or 'no name'}: "
            "say which the keys are with --keys-name"
        )
    return names.pop()


if __name__ == "__main__":
    raise SystemExit(main())
