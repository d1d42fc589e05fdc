"""Test-suite set-up: the one hypothesis profile, checking on, and skips for optional parts.

The optional parts are pytest markers registered in ``pyproject.toml`` (``--strict-markers``):
``cc`` (a C compiler), ``nvcc`` (the CUDA compiler), ``gpu`` (PyCUDA and a CUDA device) and
``graphviz`` (graphviz's ``dot``). A test that carries one is skipped, with a reason saying what
to install, when the part is missing. ``slow`` marks long tests and never skips.
"""

from __future__ import annotations

import functools
import os
import shutil

import pytest
from hypothesis import HealthCheck, settings

from tests.devices import gpu_missing, use_device

# Run the verifier after every pass in the whole suite (scripts/test.sh exports it too).
os.environ.setdefault("REN_CHECK", "1")
# The suite tests the compiled kernels themselves: each is built before it runs. The first calls
# that run while a kernel builds (REN_TIERED, on for users) have tests of their own, which turn it
# on (tests/backends/test_tiers.py).
os.environ.setdefault("REN_TIERED", "0")

settings.register_profile(
    "ren",
    deadline=None,
    max_examples=30,
    derandomize=bool(os.environ.get("CI")),
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
settings.load_profile("ren")


def _program_missing(names: tuple[str, ...], reason: str) -> str | None:
    return None if any(shutil.which(n) for n in names) else reason


#: marker name -> a function returning why the tests carrying it must skip, or None.
_CHECKS = {
    "cc": functools.partial(
        _program_missing, ("cc", "gcc"), "needs a C compiler: apt-get install gcc"
    ),
    "nvcc": functools.partial(
        _program_missing, ("nvcc",), "needs nvcc: install the CUDA toolkit and put nvcc on PATH"
    ),
    "graphviz": functools.partial(
        _program_missing, ("dot",), "needs graphviz's dot: apt-get install graphviz"
    ),
    "gpu": gpu_missing,
}


def pytest_runtest_setup(item: pytest.Item) -> None:
    for name in dict.fromkeys(m.name for m in item.iter_markers()):
        check = _CHECKS.get(name)
        reason = check() if check else None
        if reason:
            pytest.skip(f"[{name}] {reason}")


@pytest.fixture
def device(request: pytest.FixtureRequest):
    """The device a test runs on, from ``@pytest.mark.parametrize("device", COMPILED,
    indirect=True)`` (``tests.devices.COMPILED``): the name, with the cuda runtime set up (the
    GPU when there is one, else the host emulator)."""
    with use_device(request.param) as name:
        yield name
