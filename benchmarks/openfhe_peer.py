"""OpenFHE as a peer for Ren's CKKS circuits, run in a Python of its own.

OpenFHE's wheel (``pip install openfhe``) imports only on Python 3.10 and Ren runs on 3.11, so the
peer's script, ``benchmarks/peers/openfhe_circuits.py``, runs in a separate virtual environment,
in a subprocess, and hands back its JSON. ``find_python()`` finds that environment,
``skip_reason()`` says why the peer cannot run here, ``run(config)`` runs it. The set-up commands
and what is measured: ``benchmarks/peers/README.md``. Standard library only.

Run from the repository root (``CONFIG`` below, the parameters of the saved figures)::

    .venv/bin/python benchmarks/openfhe_peer.py --out /tmp/openfhe.json [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "peers" / "openfhe_circuits.py"
DEFAULT_PYTHON = ROOT / ".venv-openfhe" / "bin" / "python"
ENV_VAR = "REN_OPENFHE_PYTHON"  # an interpreter where ``import openfhe`` works
PROBE_TIMEOUT = 120.0  # seconds for ``python -c "import openfhe"``
TAIL = 2000  # characters of the peer's stderr quoted in an error

#: Ren's set a for rotations, linear transforms and sums; a deeper ring for Chebyshev evaluation
#: (depth 9: degree 127 on [-8, 8], by OpenFHE's table). The figures of 2026-11-24 used this.
CONFIG: dict[str, Any] = {
    "n": 8192,
    "q_bits": [60, 40, 40],
    "p_bits": [60],
    "scale_bits": 40,
    "repeats": 5,
    "seed": 1,
    "groups": {
        "rotations": {"counts": [1, 4, 16, 64]},
        "linear": {"diagonals": [0, 1, 2, 3, 4, 5, 6, 7], "dense_size": 4096},
        "sum": {},
        "chebyshev": {
            "n": 16384,
            "scale_bits": 40,
            "first_mod_bits": 60,
            "depth": 9,
            "degrees": [59, 63, 119, 127],
            "points": 4096,
            "functions": ["sigmoid", "exp", "inverse", "sqrt"],
            "scaling": ["FIXEDMANUAL", "FLEXIBLEAUTO"],
        },
    },
}


def _tail(text: str) -> str:
    """The last ``TAIL`` characters of ``text``, stripped."""
    return text.strip()[-TAIL:]


def _candidate() -> tuple[Path, str]:
    """The interpreter to try (``REN_OPENFHE_PYTHON`` when set, else ``.venv-openfhe``) and where
    the choice came from, in words."""
    chosen = os.environ.get(ENV_VAR)
    if chosen:
        return Path(chosen), f"{ENV_VAR}={chosen}"
    return DEFAULT_PYTHON, f"{DEFAULT_PYTHON} (set {ENV_VAR} to use another)"


def _probe(python: Path) -> str | None:
    """``None`` when ``python -c "import openfhe"`` works, else why it does not."""
    try:
        proc = subprocess.run(
            [str(python), "-c", "import openfhe"],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"cannot run {python}: {e}"
    if proc.returncode:
        return f"{python} cannot import openfhe: {_tail(proc.stderr)}"
    return None


def find_python() -> str | None:
    """The interpreter where ``import openfhe`` works: ``REN_OPENFHE_PYTHON`` when set (and only
    it), else ``.venv-openfhe/bin/python`` in the repository root; ``None`` when it does not import
    OpenFHE."""
    python, _ = _candidate()
    return None if _probe(python) else str(python)


def skip_reason() -> str | None:
    """Why the OpenFHE peer cannot run here, or ``None`` when it can."""
    python, where = _candidate()
    why = _probe(python)
    if why is None:
        return None
    return f"OpenFHE peer unavailable: {why} (tried {where}; set-up in benchmarks/peers/README.md)"


def run(config: dict[str, Any], quick: bool = False, timeout: float = 1800) -> dict[str, Any]:
    """Runs ``openfhe_circuits.py`` on ``config`` (its format is in that script's docstring) with
    ``OMP_NUM_THREADS=1`` and returns its JSON.

    Raises:
        RuntimeError: the peer is unavailable (the reason from ``skip_reason``), or the script
            failed or ran past ``timeout`` seconds (the message quotes the end of its stderr).
    """
    python = find_python()
    if python is None:
        raise RuntimeError(skip_reason() or "OpenFHE peer unavailable")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory(prefix="ren-openfhe-") as tmp:
        config_path, out_path = Path(tmp) / "config.json", Path(tmp) / "out.json"
        config_path.write_text(json.dumps(config), encoding="utf-8")
        cmd = [python, str(SCRIPT), str(config_path), str(out_path)]
        cmd += ["--quick"] if quick else []
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired as e:
            stderr = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else e.stderr
            raise RuntimeError(
                f"OpenFHE peer ran past {timeout:g} s; stderr ends:\n{_tail(stderr or '')}"
            ) from None
        if proc.returncode:
            raise RuntimeError(
                f"OpenFHE peer failed (exit {proc.returncode}); stderr ends:\n{_tail(proc.stderr)}"
            )
        try:
            return json.loads(out_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise RuntimeError(
                f"OpenFHE peer wrote no JSON ({e}); stderr ends:\n{_tail(proc.stderr)}"
            ) from None


def main(argv: list[str] | None = None) -> int:
    """Runs ``CONFIG`` (or ``--config``) on the peer and writes its JSON to ``--out``."""
    parser = argparse.ArgumentParser(description="Time OpenFHE's CKKS circuits (one thread).")
    parser.add_argument("--out", required=True, help="where the peer's JSON goes")
    parser.add_argument("--config", help="a CONFIG JSON file (default: CONFIG in this script)")
    parser.add_argument("--quick", action="store_true", help="few repeats, small cases")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds (default 1800)")
    args = parser.parse_args(argv)
    reason = skip_reason()
    if reason:
        print(reason, file=sys.stderr)
        return 2
    config = json.loads(Path(args.config).read_text(encoding="utf-8")) if args.config else CONFIG
    result = run(config, quick=args.quick, timeout=args.timeout)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    for row in result["rows"]:
        what = row.get("count") or row.get("size") or row.get("degree") or ""
        figures = f"{row['median_ms']:>10.3f} ms {row['bits']:>6.1f} bits"
        print(f"{row['bench']:<24} {what!s:>5} {figures}")
    for skipped in result["skipped"]:
        print(f"skipped {skipped['bench']}: {skipped['reason']}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
