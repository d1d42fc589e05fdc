"""The pass list is the one place that orders the passes; each pass declares what it establishes.

Oracle: the verifier's ``domains`` switch, recorded at each pass of a real schedule, against the
passes' own ``ESTABLISHES`` declarations (not an index written down here).
"""

from __future__ import annotations

import re

import pytest

from ren import Poly, RingSpec
from ren.engine import schedule as sched
from ren.passes import VERIFIABLE


def test_every_pass_declares_what_it_establishes():
    for module, _why in sched.PASSES:
        assert isinstance(module.ESTABLISHES, frozenset), module.__name__
        assert module.ESTABLISHES.issubset(VERIFIABLE), module.__name__
    assert any("domains" in m.ESTABLISHES for m, _ in sched.PASSES)


def test_no_pass_numbers_itself():
    """A docstring names passes, never their place in the list."""
    for module, _why in sched.PASSES:
        doc = module.__doc__ or ""
        assert not re.search(r"\b[Pp]ass \d+\b|\(pass \d+\)", doc), module.__name__


def test_the_verifier_checks_domains_from_the_pass_that_establishes_them(monkeypatch):
    flags: list[bool] = []
    real = sched.verify

    def verify(sink, domains=False):
        flags.append(domains)
        return real(sink, domains=domains)

    monkeypatch.setattr(sched, "verify", verify)
    monkeypatch.setenv("REN_CHECK", "1")
    ring = RingSpec(8, (17, 97))
    x = Poly(list(range(8)), ring, device="python")
    sched.schedule(((x * x).ntt() + x.ntt()).intt().node)
    established, want = frozenset(), [False]  # the input, before any pass
    for module, _why in sched.PASSES:
        established |= module.ESTABLISHES
        want.append("domains" in established)
    assert flags == want
    assert flags.count(False) > 1 and flags[-1]  # off at first, on by the end


def test_verifiable_properties_are_described():
    for name, meaning in VERIFIABLE.items():
        assert name.isidentifier() and len(meaning) > 20, name


@pytest.mark.parametrize("module", [m for m, _ in sched.PASSES], ids=lambda m: m.__name__)
def test_a_pass_docstring_starts_with_its_name(module):
    name = module.__name__.rsplit(".", 1)[-1]
    assert (module.__doc__ or "").startswith(f"``{name}``: "), name
