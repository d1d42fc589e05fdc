#!/usr/bin/env bash
# The one set-up path for Ren on a Debian machine with Python 3.11. Idempotent and quick when done:
#   1. create .venv (python3 -m venv) if it is missing or has no pip;
#   2. pip install -e .[dev,viz,docs] when pyproject.toml changed since the last install
#      (the stamp .venv/.ren-installed holds its hash); a failure here is fatal;
#   3. apt-get install graphviz when `dot` is missing; optional: on failure say so and go on
#      (the graphviz tests skip), and don't try again until .venv/.ren-no-graphviz is removed;
#   4. pip install -e .[cuda] (PyCUDA, built from source) only where an NVIDIA driver is present
#      (nvidia-smi runs) and nvcc is on PATH; optional: on failure say so and go on (the cuda
#      device then runs only emulated, REN_CUDA_EMULATE=1, and the gpu tests skip);
#   5. pip install -e .[heir] (heir-py: HEIR's compiler, heir-opt); optional: on failure say so
#      and go on (the tests that run heir-opt skip), not again until .venv/.ren-no-heir is removed;
#   6. with REN_SETUP_BROWSER=1 (scripts/test.sh sets it), apt-get install chromium when it is
#      missing, for the report's screenshot test; optional like graphviz (the test then skips),
#      not retried until .venv/.ren-no-chromium is removed.
# Messages go to stderr, so `scripts/demo.sh` keeps a clean stdout.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { echo "setup: $*" >&2; }

# install_optional EXTRA MARKER NAME WHAT NOTE WITHOUT: pip install -e .[EXTRA], an optional part;
# on failure .venv/MARKER keeps later runs from trying again, and the set-up goes on without it
install_optional() {
    say "pip install -e .[$1] ($4; log: .venv/pip-$1.log)"
    if .venv/bin/python -m pip install --quiet -e ".[$1]" >".venv/pip-$1.log" 2>&1; then
        say "$3 installed"
    else
        touch ".venv/$2"
        tail -n 15 ".venv/pip-$1.log" >&2
        say "could not install $3 (see .venv/pip-$1.log$5); going on without it: $6"
    fi
}
PYTHON=${PYTHON:-python3}
EXTRAS="dev,viz,docs"

# Run a command as root: directly, with sudo (non-interactive unless on a terminal), or not at all.
as_root() {
    if [ "$(id -u)" = 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        if [ -t 0 ]; then sudo "$@"; else sudo -n "$@"; fi
    else
        say "not root and no sudo: cannot run $1"
        return 1
    fi
}

# apt-get install the given Debian packages quietly; on failure show the end of apt's output.
apt_install() {
    command -v apt-get >/dev/null 2>&1 || { say "apt-get not found"; return 1; }
    local log status=0
    log=$(mktemp)
    {
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
            as_root env DEBIAN_FRONTEND=noninteractive \
                apt-get install -y -qq --no-install-recommends "$@"
    } >"$log" 2>&1 || status=$?
    [ "$status" = 0 ] || tail -n 15 "$log" >&2
    rm -f "$log"
    return "$status"
}

# 1. the virtual environment
if ! .venv/bin/python -m pip --version >/dev/null 2>&1; then
    say "creating .venv with $PYTHON"
    if ! "$PYTHON" -m venv .venv; then
        say "python3 -m venv failed; installing Debian's python3-venv and trying again"
        apt_install python3-venv || { say "FAILED: could not install python3-venv"; exit 1; }
        "$PYTHON" -m venv .venv
    fi
fi

# 2. the package and its extras
stamp=.venv/.ren-installed
want="$(sha256sum pyproject.toml | cut -d' ' -f1) $EXTRAS"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    say "pip install -e .[$EXTRAS] (log: .venv/pip-install.log)"
    if ! .venv/bin/python -m pip install --quiet -e ".[$EXTRAS]" >.venv/pip-install.log 2>&1; then
        tail -n 30 .venv/pip-install.log >&2
        say "FAILED: pip install -e .[$EXTRAS]; see .venv/pip-install.log"
        exit 1
    fi
    echo "$want" >"$stamp"
fi

# An optional Debian package: apt-get install PACKAGE when COMMAND is missing; on failure say so,
# leave the marker .venv/.ren-no-PACKAGE (no retry until it is removed) and go on: WHICH skip.
optional_apt() {
    local package=$1 command=$2 which=$3
    command -v "$command" >/dev/null 2>&1 && return 0
    if [ -e ".venv/.ren-no-$package" ]; then
        say "$package is missing (install skipped: it failed before; remove" \
            ".venv/.ren-no-$package to retry); $which will skip"
    else
        say "installing $package with apt-get ($command is missing)"
        if apt_install "$package" && command -v "$command" >/dev/null 2>&1; then
            say "$package installed"
        else
            touch ".venv/.ren-no-$package"
            say "could not install $package (try: sudo apt-get install $package);" \
                "going on without it: $which will skip"
        fi
    fi
}

# 3. graphviz's dot, optional
optional_apt graphviz dot "the graphviz tests"

# 4. PyCUDA, optional: only useful (and only importable) with an NVIDIA driver
if .venv/bin/python -c "import pycuda" >/dev/null 2>&1; then
    :
elif ! nvidia-smi >/dev/null 2>&1; then
    say "no NVIDIA driver (nvidia-smi): skipping PyCUDA; the cuda device runs emulated on the" \
        "host with REN_CUDA_EMULATE=1, and the gpu tests skip"
elif ! command -v nvcc >/dev/null 2>&1; then
    say "an NVIDIA driver but no nvcc on PATH: skipping PyCUDA (install the CUDA toolkit);" \
        "the gpu tests will skip"
elif [ -e .venv/.ren-no-pycuda ]; then
    say "PyCUDA is missing (install skipped: it failed before; remove .venv/.ren-no-pycuda to" \
        "retry); the gpu tests will skip"
else
    install_optional cuda .ren-no-pycuda PyCUDA "PyCUDA" "" "the gpu tests will skip"
fi

# 5. heir-py, optional: HEIR's compiler (heir-opt), for the tests of ren.interop.heir
if .venv/bin/python -c "import heir" >/dev/null 2>&1; then
    :
elif [ -e .venv/.ren-no-heir ]; then
    say "heir-py is missing (install skipped: it failed before; remove .venv/.ren-no-heir to" \
        "retry); the tests that run heir-opt will skip"
else
    install_optional heir .ren-no-heir heir-py "heir-py, HEIR's compiler" \
        "; its wheels are for x86-64 Linux" "the tests that run heir-opt will skip"
fi

# 6. chromium, optional, for the tests only (the screenshot of a report)
if [ "${REN_SETUP_BROWSER:-0}" = 1 ] && ! command -v chromium-browser >/dev/null 2>&1; then
    optional_apt chromium chromium "the screenshot test"
fi
