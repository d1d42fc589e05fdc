"""The examples in ``docs/poly.md`` run and print what the page shows.

The page's ```` ```python ```` blocks run in order in one namespace (as a reader would type them);
each ```` ```text ```` block right after one is the output that block must print. The page shows
the defaults, so the device and debug settings of the shell are cleared first.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import pages

PAGE = Path(__file__).resolve().parents[1] / "docs" / "poly.md"


def test_every_example_prints_what_the_page_shows(monkeypatch: pytest.MonkeyPatch):
    for var in ("REN_DEVICE", "REN_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    _, checked = pages.run_page(PAGE, strict=True)
    assert checked >= 5  # the graph, comparisons, hashing, NumPy operands, pickling


def test_the_pickle_example_holds_the_value():
    namespace, _ = pages.run_page(PAGE, strict=True)
    lazy, back, ring = namespace["lazy"], namespace["back"], namespace["ring"]
    # oracle: (a * b) rotated by one slot, plus 5, from Python integers
    from tests.oracles import automorphism, negacyclic

    a = [1, 2, 3, 4, 5, 6, 7, 8]
    b = [8, 7, 6, 5, 4, 3, 2, 1]
    want = automorphism(negacyclic(a, b), 5, ring.Q)
    want[0] = (want[0] + 5) % ring.Q
    assert back.tolist() == want == lazy.tolist()
