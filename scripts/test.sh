#!/usr/bin/env bash
# The whole test suite: set-up, lint, format check, type check, strict docs build, then pytest.
# Extra arguments go to pytest: `bash scripts/test.sh -k rings -x`. The tests run in one
# worker process a core (pytest-xdist); REN_TEST_WORKERS=1 runs them in this process.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

REN_SETUP_BROWSER=1 bash scripts/setup.sh

echo "== ruff check"
.venv/bin/ruff check .

echo "== ruff format --check"
.venv/bin/ruff format --check .

echo "== mypy"
.venv/bin/mypy ren

echo "== mkdocs build --strict"
site=$(mktemp -d)
trap 'rm -rf "$site"' EXIT
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet -d "$site"
.venv/bin/python scripts/check_site.py "$site"

echo "== pytest"
export REN_CHECK=1
# one worker a core (REN_TEST_WORKERS=1: in this process, one test after another)
workers="${REN_TEST_WORKERS:-auto}"
if [ "$workers" = 1 ]; then
    .venv/bin/pytest -q "$@"
else
    .venv/bin/pytest -q -n "$workers" --dist loadfile "$@"
fi
