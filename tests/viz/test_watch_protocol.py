"""The debugger's watch protocol: its screens work through it alone.

A tiny watchable (``parts`` and ``__ren_watch__``) stands in for a scheme's value type. Oracles:
the view's own ``decrypt`` (here: the parts' coefficients, computed by ``Poly.tolist`` of a
normal realization of the same program) and the view's ``precision_bits`` (a fixed number), so a
screen showing them can only come from the protocol. That ``ren.viz`` imports no scheme is
``tests/test_layers.py``'s to check.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

import numpy as np
import pytest

from ren.poly import Poly
from ren.ring import RingSpec, ntt_primes
from ren.viz.debug import Stepper, watch

dbg = sys.modules["ren.viz.debug.watching"]  # where the watched values live
RING = RingSpec(16, ntt_primes(16, 30, 2))


@pytest.fixture(autouse=True)
def no_stale_watches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dbg, "_WATCHED", [])


class Key:
    """The fake scheme's context: it can decrypt or not."""

    def __init__(self, secret: bool = True) -> None:
        self.secret = secret


@dataclasses.dataclass
class View:
    value: Fake
    key: Key

    @property
    def summary(self) -> str:
        return f"fake value of {len(self.value.parts)} parts"

    def decrypt(self, parts: tuple[Poly, ...]) -> np.ndarray:
        if not self.key.secret:
            raise ValueError("this fake context holds no secret key, so it cannot decrypt")
        self.value.seen.append(parts)
        return np.asarray(parts[0].tolist(), dtype=complex).reshape(-1)[:4]

    def precision_bits(self, got: Any, expected: Any) -> float:
        return 12.5


@dataclasses.dataclass(eq=False)
class Fake:
    parts: tuple[Poly, ...]
    key: Key = dataclasses.field(default_factory=Key)
    seen: list = dataclasses.field(default_factory=list)

    def __ren_watch__(self, context: Any = None) -> View:
        if context is not None and not isinstance(context, Key):
            raise TypeError(f"context must be a Key, got {type(context).__name__}")
        return View(self, self.key if context is None else context)


def fake(seed: int = 3) -> Fake:
    rng = np.random.default_rng(seed)
    a, b = Poly.uniform(RING, rng), Poly.uniform(RING, rng)
    return Fake((a * b, a + b))


def test_slots_use_only_the_watch_protocol():
    v = fake()
    st = Stepper(v)  # a watchable: its parts are stepped through
    st.watch(v, None, [1, 2])
    assert "part c0 is not written yet" in st.slots()
    st.finish()
    screen = st.slots(limit=3)
    assert "ct0: fake value of 2 parts" in screen
    assert "precision: 12.50 bits (vs expected; over 4 slots)" in screen  # no label: none said
    assert v.seen and all(isinstance(p, Poly) for p in v.seen[-1])
    w = fake()  # the same program, realized normally
    got = st.decrypt(v)
    np.testing.assert_array_equal(
        got, np.asarray(w.parts[0].tolist(), dtype=complex).reshape(-1)[:4]
    )


def test_no_key_and_bad_input_stay_clear_errors():
    v = fake()
    st = Stepper(v).watch(v, Key(secret=False))
    st.finish()
    assert "holds no secret key" in st.slots()
    with pytest.raises(TypeError, match=r"a value with __ren_watch__\), got ndarray"):
        watch(np.zeros(3))
    with pytest.raises(TypeError, match="context must be a Key, got int"):
        watch(v, 3)
    with pytest.raises(TypeError, match=r"Poly values or ciphertexts"):
        Stepper(object())
