"""The post-quantum guide (``docs/guides/post-quantum.md``) runs, prints what it shows, and its
numbers are true.

The page's ```` ```python ```` blocks run in order in one namespace and each ```` ```text ````
block is compared with what the block before it printed (``tests.pages.run_page``, strict). That
only says the page agrees with Ren, so the numbers it prints are recomputed here from the
standards' definitions with Python integers and nothing from ``ren``: NTT entries by evaluating
at the roots ``zeta^(2 BitRev(i) + 1)``, products by the schoolbook rule, Montgomery words as
``x * R mod q``, key sizes from FIPS 203 and FIPS 204.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tests import pages
from tests.oracles import brv, centered, evaluate_at, negacyclic

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "guides" / "post-quantum.md"
KEM_Q, DSA_Q = 3329, 8380417
ENV = ("REN_DEBUG", "REN_VALIDATE", "REN_JIT_GRAPH", "REN_NO_PLAN", "REN_DEVICE", "REN_POISON")


@pytest.fixture(autouse=True)
def plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page shows the defaults and opens its files relative to the repository root."""
    for var in ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(ROOT)


def outputs() -> list[str]:
    return [body.strip() for lang, body in pages.blocks(PAGE) if lang == "text"]


def ints(s: str) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", s)]


def kem_ntt(f: list[int]) -> list[int]:
    """FIPS 203's NTT by its definition: pair i is f mod (X^2 - gamma_i)."""
    out = []
    for i in range(128):
        gamma = pow(17, 2 * brv(i, 7) + 1, KEM_Q)
        out += [evaluate_at(f[0::2], gamma, KEM_Q), evaluate_at(f[1::2], gamma, KEM_Q)]
    return out


def test_every_example_runs_and_prints_what_the_page_shows():
    namespace, checked = pages.run_page(PAGE)
    assert namespace and checked == len(outputs()) == 13


def test_the_printed_numbers_follow_from_the_definitions():
    out = outputs()
    assert "psi = 1753" in out[0] and "psi = 17" in out[2]
    f = [(5 * i + 3) % KEM_Q for i in range(256)]
    g = [(7 * i * i + 2) % KEM_Q for i in range(256)]
    f_hat, g_hat = kem_ntt(f), kem_ntt(g)
    assert ints(out[2].splitlines()[-1]) == f_hat[:6]
    gammas = [pow(17, 2 * brv(i, 7) + 1, KEM_Q) for i in range(4)]
    assert ints(out[3].splitlines()[0]) == gammas * 2
    a0, a1, b0, b1 = f_hat[0], f_hat[1], g_hat[0], g_hat[1]
    base = [(a0 * b0 + a1 * b1 * gammas[0]) % KEM_Q, (a0 * b1 + a1 * b0) % KEM_Q]
    assert ints(out[3].splitlines()[2]) == base * 2
    product = negacyclic(f, g, KEM_Q)
    assert ints(out[4].splitlines()[0]) == [centered(c * 2**16, KEM_Q) for c in product[:6]]
    assert re.findall(r"= (\d+)", out[4]) == [str(2**16 % KEM_Q), str(pow(2**16, -1, KEM_Q))]
    w = [(i * i + 7) % DSA_Q for i in range(256)]
    assert ints(out[5]) == [c * 2**32 % DSA_Q for c in w[:4]] * 2


def test_the_key_sizes_are_the_standards():
    kem = [(384 * k + 32, 768 * k + 96) for k in (2, 3, 4)]  # ek, dk sizes in FIPS 203
    assert [ints(line)[-2:] for line in outputs()[6].splitlines()] == [list(x) for x in kem]
    dsa = [
        (32 + 320 * k, 128 + 32 * ((l + k) * bits + 13 * k))
        for k, l, bits in ((4, 4, 3), (6, 5, 4), (8, 7, 3))
    ]  # pkEncode, skEncode
    assert [ints(line)[-2:] for line in outputs()[8].splitlines()] == [list(x) for x in dsa]
    assert all(line.endswith("True") for i in (6, 8) for line in outputs()[i].splitlines())


def test_the_stand_in_device_words_are_what_the_page_says():
    rng = np.random.default_rng(2024)
    a = [int(x) for x in rng.integers(0, DSA_Q, 256)]
    a[0], a[1], a[255] = 0, DSA_Q - 1, DSA_Q - 1
    entry = [evaluate_at(a, pow(1753, 2 * brv(k, 8) + 1, DSA_Q), DSA_Q) for k in (1, 77, 128)]
    lines = outputs()[10].splitlines()
    assert ints(lines[1])[:2] == [77, entry[1]]
    fixed = sum(brv(k, 8) == k for k in range(256))  # natural order leaves palindromes in place
    assert ints(lines[2]) == [1, entry[0], entry[2], 256 - fixed, 256]
