"""Every ``__ren_*__`` hook is declared once, in ``ren.hooks``, and the schemes' values keep to it.

Oracles: the names Ren's own source uses (a scan of ``ren/``), and ``isinstance`` against each
protocol for the values that must provide it (the consumers look the hooks up by name: a value
that lost one would be passed over silently).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ren import hooks
from ren.ring import RingSpec
from ren.schemes import bfv, bgv, ckks
from tests.schemes.integer_cases import small

REN = Path(__file__).resolve().parents[1] / "ren"


def test_every_hook_ren_uses_is_declared_in_ren_hooks():
    used = set()
    for path in REN.rglob("*.py"):
        used |= set(re.findall(r"__ren_[a-z_]+__", path.read_text(encoding="utf-8")))
    assert used == hooks.HOOK_NAMES


def test_no_module_but_ren_hooks_declares_a_hook_protocol():
    pattern = re.compile(r"^class (Watchable|WatchView|\w*Observ\w*)\(Protocol\)", re.M)
    declared = [p for p in REN.rglob("*.py") if pattern.search(p.read_text(encoding="utf-8"))]
    assert declared == [REN / "hooks.py"]


@pytest.mark.parametrize("scheme", [ckks, bfv, bgv], ids=lambda m: m.__name__.split(".")[-1])
def test_the_schemes_values_provide_their_hooks(scheme):
    if scheme is ckks:
        params = ckks.Params(n=16, q_bits=(40, 30), p_bits=(45,), scale_bits=30, insecure=True)
    else:
        params = small(scheme)
    with scheme.Context(params, seed=1) as ctx:
        ct = ctx.encrypt(np.arange(4))
        keys = ctx.evaluation_keys()
    for protocol in (hooks.Watchable, hooks.RegionNoted, hooks.Observable, hooks.PlanValue):
        assert isinstance(ct, protocol), protocol.__name__
    assert isinstance(keys, hooks.StoredInputs) and isinstance(keys, hooks.KeyFingerprinted)
    assert isinstance(params, hooks.JitLeaf) and params.__ren_jit_leaf__ is True
    assert isinstance(RingSpec(16, params.q_moduli), hooks.JitLeaf)
    assert not isinstance(keys, hooks.Watchable) and not isinstance(ct, hooks.StoredInputs)
    view = ct.__ren_watch__(ctx)
    assert isinstance(view.summary, str)
