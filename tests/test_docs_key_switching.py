"""The key-switching guide (``docs/guides/key-switching.md``) runs, prints what it shows, is true.

The page's blocks run in order (``tests.pages.run_page``, strict). What they print is recomputed
here: the digit primes from their definition (primes ``1 mod 2n`` below ``2^digit_bits`` whose
product exceeds the modulus), and the page's figures from the committed benchmark JSON.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

from ren.ring import is_prime
from tests import pages

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "guides" / "key-switching.md"
FIGURES = ROOT / "benchmarks" / "figures" / "key-switching-2026-11-29.json"


def test_every_example_runs_and_prints_what_the_page_shows():
    namespace, checked = pages.run_page(PAGE)
    assert namespace and checked == 2


def test_the_digit_primes_are_the_largest_that_cover_each_modulus():
    from ren.schemes import ckks

    params = ckks.Params(n=8192, q_bits=(60, 40, 40), key_switching="bv", digit_bits=40)
    q0 = params.q_moduli[0]
    (p0, p1), *_ = params.bv_digits
    candidates = range(2**40 - 2 * 8192 + 1, 0, -2 * 8192)  # 1 mod 2n, largest first
    fresh = (p for p in candidates if is_prime(p) and p not in params.q_moduli)
    below = list(itertools.islice(fresh, 2))  # the chain's own 40-bit primes are not digits
    assert [p0, p1] == below and p0 < q0 < p0 * p1 and p0 % (2 * 8192) == 1
    assert all(q < 2**40 for q in params.q_moduli[1:])  # one digit each: no primes
    assert params.bv_digits[1:] == ((), ())
    assert params.key_parts == 4 == 2 + 1 + 1
    assert math.prod(params.bv_digits[0]) > q0


def test_the_page_shows_the_committed_figures():
    rows = json.loads(FIGURES.read_text())["results"]
    text = PAGE.read_text(encoding="utf-8")
    for row in rows:
        b = row["bits"]
        line = (
            f"| {row['set']} | {row['technique']} | {row['digit_bits'] or '-'} | "
            f"{row['key_parts']} | {b['fresh']:.1f} | {b['multiply']:.1f} | {b['rotate']:.1f} |"
        )
        assert line in text, line


def test_the_code_the_page_quotes_is_the_code_ren_runs():
    """Each line of the page's ``py`` excerpts is a line of ``ren.schemes.rlwe.keyswitch``."""
    source = {line.strip() for line in (ROOT / "ren/schemes/rlwe/keyswitch.py").open()}
    excerpts = [body for lang, body in pages.blocks(PAGE) if lang == "py"]
    assert excerpts
    for body in excerpts:
        for line in body.splitlines():
            assert line.strip() in source, line


def test_the_page_shows_openfhes_figures_from_the_same_run():
    peer = json.loads(FIGURES.read_text())["openfhe"]
    text = PAGE.read_text(encoding="utf-8")
    assert peer["rows"], peer.get("skipped")
    for row in peer["rows"]:
        line = (
            f"| {row['key_switching']} | {row['digit_size']} | {row['digits']} | "
            f"{row['fresh_bits']:.1f} | {row['mult_rescale_bits']:.1f} | {row['rotate_bits']:.1f} |"
        )
        assert line in text, line
