"""CKKS names its circuits without importing them: the circuits register as they load.

Oracles: a fresh Python process, where nothing was imported before the user's ``from ren.schemes
import ckks``, finds every circuit by its ``ckks.<name>``, the bootstrapping presets, and a
bootstrap (its slots against NumPy's); a pickled ``BootstrapConfig`` names the path it had on the
scheme floor, byte for byte; the import walk of ``tests/test_layers.py`` finds no import of
``ren.circuits`` anywhere in ``ren.schemes``, function-local ones and ``__getattr__`` included.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import ren.circuits.ckks as circuits
from ren.schemes import ckks
from ren.schemes.ckks import registry
from tests.test_layers import MODULES, imports_of

ROOT = Path(__file__).resolve().parents[2]

FRESH = """
import numpy as np
from ren.schemes import ckks

import ren.circuits.ckks as circuits
from ren.schemes.ckks.bootconfig import PRESETS, BootstrapConfig

for name in sorted(ckks._CIRCUITS):
    assert getattr(ckks, name) is getattr(circuits, name), name
assert ckks.BootstrapConfig is BootstrapConfig
assert ckks.Params.preset("boot-n12") == ckks.Params(**PRESETS["boot-n12"][0])
params = ckks.Params.preset("boot-toy")
z = np.random.default_rng(1).uniform(-0.5, 0.5, params.slots)
with ckks.Context(params, seed=1, device="python") as ctx:
    ctx.bootstrap_keys()
    out = ckks.encrypt(z, level=0).bootstrap()
    bits = ckks.precision_bits(ckks.decrypt(out, real=True), z)
    assert out.level == BootstrapConfig.for_params(params).levels_left(params), out.level
    assert bits > 15, bits
print("ok")
"""


def test_a_fresh_process_finds_the_circuits_presets_and_bootstrap_through_the_scheme():
    done = subprocess.run(
        [sys.executable, "-c", FRESH], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_every_name_the_package_gives_is_registered_by_the_circuits():
    assert registry.registered() >= ckks._CIRCUITS
    for name in ckks._CIRCUITS:
        assert getattr(ckks, name) is getattr(circuits, name), name
        assert name in dir(ckks)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_circuit'"):
        ckks.no_such_circuit  # noqa: B018
    with pytest.raises(AttributeError, match="registers it as it loads"):
        registry.circuit("no_such_circuit")


def test_a_bootstrap_config_pickles_by_the_path_it_had_on_the_scheme_floor():
    config = ckks.BootstrapConfig(level_budget=(2, 2), K=12, degree=47, double_angle=2)
    blob = pickle.dumps(config, protocol=4)
    assert b"\x8c\x1bren.schemes.ckks.bootconfig\x94\x8c\x0fBootstrapConfig" in blob
    assert b"ren.circuits" not in blob
    assert pickle.loads(blob) == config


def test_no_module_of_the_schemes_imports_a_circuit():
    schemes = [m for m in MODULES if m == "ren.schemes" or m.startswith("ren.schemes.")]
    found = [
        (m, line, target)
        for m in schemes
        for line, target in imports_of(m)
        if target == "ren.circuits" or target.startswith("ren.circuits.")
    ]
    assert found == []
