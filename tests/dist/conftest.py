"""Fixtures of the ren.dist tests: saved plans on ``cpu`` and on the test devices."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dist import devices, plans


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("dist")


@pytest.fixture(scope="module")
def cpu(folder: Path) -> plans.Setup:
    """The multiply and three rotations, saved on ``cpu``."""
    return plans.make(folder, "cpu")


@pytest.fixture(scope="module")
def faulty(folder: Path) -> plans.Setup:
    """The same plan on the ``faulty`` device: every elementwise kernel is one word off."""
    devices.register()
    return plans.make(folder, "faulty")


@pytest.fixture(scope="module")
def dying(folder: Path) -> plans.Setup:
    """The same plan on the ``dying`` device: a worker dies on a ``poison`` item."""
    devices.register()
    return plans.make(folder, "dying")
