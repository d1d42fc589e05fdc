#!/usr/bin/env bash
# Build and realize an example program, print its graph and its result. Arguments go to ren.demo.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
exec .venv/bin/python -m ren.demo "$@"
