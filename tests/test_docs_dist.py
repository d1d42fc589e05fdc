"""The ren.dist guide (``docs/guides/distributed.md``) runs, prints what it shows, and is true.

The page's blocks run in order (``tests.pages.run_page``, strict), on the local engine: that only
says the page agrees with ``ren.dist``. So its results are checked here against independent
oracles: word for word against the same plan file loaded with ``ren.load`` and replayed in this
process, and, decrypted, against NumPy's squares rotated by six slots. The sizes the page gives
at set a are measured here too. It needs a C compiler (the plan runs on the ``cpu`` device).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ren
from ren.schemes import ckks
from tests import pages

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "guides" / "distributed.md"

pytestmark = pytest.mark.cc


@pytest.fixture(scope="module")
def ran():
    return pages.run_page(PAGE)


def _replay(ns: dict, item: bytes) -> bytes:
    """The item's result by ``ren.load`` in this process, on a context of the keys alone."""
    keys = ckks.EvaluationKeys.from_bytes(ns["keys"].to_bytes(), "cpu", insecure=True)
    server = ckks.Context(ns["params"], keys=keys, device="cpu")
    with server:
        plan = ren.load(ns["path"], stored={"keys": keys})
        return plan(ckks.Ciphertext.from_bytes(item, server)).to_bytes()


def test_every_example_runs_and_prints_what_the_page_shows(ran):
    _, checked = ran
    assert checked == len([b for lang, b in pages.blocks(PAGE) if lang == "text"]) == 4


def test_the_results_are_an_in_process_replay_word_for_word(ran):
    ns, _ = ran
    assert len(ns["results"]) == len(ns["items"]) == 8
    for i, (item, result) in enumerate(zip(ns["items"], ns["results"], strict=True)):
        assert result == _replay(ns, item), i
    assert ns["got"][0] == ns["results"][0]  # the good item among the bad ones
    assert ns["checked"] == ns["results"]  # the audited run


def test_the_slots_are_numpy_s_squares_rotated_by_six(ran):
    ns, _ = ran
    ctx = ns["ctx"]
    for i, (v, blob) in enumerate(zip(ns["slots"], ns["results"], strict=True)):
        with ctx:
            got = ckks.decrypt(ckks.Ciphertext.from_bytes(blob, ctx))
        assert ckks.precision_bits(got, np.roll(v**2, -6)) > 12, i
    assert f"item 5 to {round(ns['bits'])} bits" in PAGE.read_text(encoding="utf-8")


def test_the_bad_items_are_refused_for_the_reasons_the_page_gives(ran):
    ns, _ = ran
    errors = ns["got"][1:]
    assert [e.index for e in errors] == [1, 2, 3]
    assert "checksum" in errors[0].reason
    assert "the plan was saved for" in errors[1].reason  # the rescaled value's scale
    assert "bytes" in errors[2].reason


def test_the_sizes_the_page_gives_at_set_a():
    params = ckks.Params(n=8192, q_bits=(60, 40, 40), p_bits=(60,), scale_bits=40)
    with ckks.Context(params, seed=1) as ctx:
        x = ckks.encrypt(np.zeros(params.slots))
        y = (x * x).rotate(1).rotate(2).rotate(3)
        sizes = len(x.to_bytes()), len(y.to_bytes()), len(ctx.evaluation_keys().to_bytes())
    assert len(x.parts[0].ring.moduli) == 3 and y.level == 1
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    assert f"about {round(sizes[0] / 1000)} KB in" in text
    assert f"about {round(sizes[1] / 1000)} KB out" in text
    assert f"about {sizes[2] / 1e6:.1f} MB of keys at set a" in text
