#!/usr/bin/env bash
# Ren's main job: look inside one encrypted multiply. Runs `python -m ren.viz --example ckks-mul`
# (arguments go to it: e.g. --text, --open, --out DIR, or --example seed) and writes
# ren-viz-report/report.html: the lazy graph, the graph after each pass, the kernels with their
# source, the memory plan, the exec units. The older graph-and-result demo is `python -m ren.demo`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
exec .venv/bin/python -m ren.viz --example ckks-mul "$@"
