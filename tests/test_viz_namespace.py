"""``dir(ren.viz)`` reads as its API: the public names and its submodules, none of its imports.

The oracle is where each name comes from: a module listed must be one of ``ren.viz``'s own
submodules, and every other name must be in ``ren.viz.__all__``; ``os``, ``Path`` and the other
names the package imports for its own use still resolve, but are not listed.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest

import ren.viz

IMPORTED = ("os", "sys", "Path", "contextlib", "Iterator", "ModuleType", "annotations", "DUMP_DIR")


def test_dir_lists_no_module_from_outside_ren():
    listed = dir(ren.viz)
    for name in listed:
        value = getattr(ren.viz, name)
        if isinstance(value, ModuleType):
            assert value.__name__ == f"ren.viz.{name}", f"dir(ren.viz) lists {value.__name__}"
    assert [name for name in IMPORTED if name in listed] == []


def test_dir_lists_only_public_names_and_submodules():
    for name in dir(ren.viz):
        value = getattr(ren.viz, name)
        assert name in ren.viz.__all__ or isinstance(value, ModuleType), name
    assert set(ren.viz.__all__) <= set(dir(ren.viz))
    assert dir(ren.viz) == sorted(dir(ren.viz))  # stable output


@pytest.mark.parametrize("name", ren.viz.__all__)
def test_every_public_name_resolves(name: str):
    value = getattr(ren.viz, name)
    assert value is not None
    assert getattr(value, "__module__", "").startswith("ren.viz"), (name, value)


@pytest.mark.parametrize(
    "path",
    [
        "trace",
        "memory",
        "report",
        "debug",
        "precision",
        "examples",
        "browser",
        "phases",
        "planfile",
    ],
)
def test_submodule_import_paths_still_work(path: str):
    module = importlib.import_module(f"ren.viz.{path}")
    assert module.__name__ == f"ren.viz.{path}"
    assert path in dir(ren.viz)  # a loaded submodule is listed (``debug`` as the function)


def test_from_imports_still_work():
    from ren.viz import dump_to, record

    assert callable(dump_to) and callable(record)
