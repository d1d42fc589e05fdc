"""The Concepts pages and the oracle guide run, print what they show, and show true facts.

Every page's ```` ```python ```` blocks run in order in one namespace and each ```` ```text ````
block is compared with what the block before it printed (``tests.pages.run_page``, strict). That
only says the page agrees with Ren. So the numbers the pages print and state are recomputed here
from the definitions, with Python integers and nothing from ``ren`` (``tests/oracles.py``): slots
by direct evaluation at the odd powers of the smallest ``psi``, products by the schoolbook
negacyclic rule, Montgomery words as ``x * R mod q``, rescale by exact rational rounding, primes
by trial division, and the SEAL vectors read from their files.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import ren
from tests import pages
from tests.oracles import (
    automorphism,
    brv,
    centered,
    crt,
    evaluate_at,
    negacyclic,
    ntt_slots,
    rounded_div,
    slot_point,
    smallest_root_brute,
)

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = {
    "rings-and-rns": DOCS / "concepts" / "rings-and-rns.md",
    "montgomery": DOCS / "concepts" / "montgomery.md",
    "domains": DOCS / "concepts" / "domains.md",
    "automorphisms": DOCS / "concepts" / "automorphisms.md",
    "rescale": DOCS / "concepts" / "rescale.md",
    "ckks-types": DOCS / "concepts" / "ckks-types.md",
    "oracle": DOCS / "guides" / "oracle.md",
}
ENV = ("REN_DEBUG", "REN_VALIDATE", "REN_JIT_GRAPH", "REN_NO_PLAN", "REN_DEVICE", "REN_POISON")
R32 = 2**32


@pytest.fixture(autouse=True)
def plain_env(monkeypatch: pytest.MonkeyPatch):
    """The pages show the defaults (python device, no debug output), whatever the shell set, and
    open their files relative to the repository root."""
    for var in ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(ROOT)
    ren.clear_jit()
    yield
    ren.clear_jit()


def text(name: str) -> str:
    return PAGES[name].read_text(encoding="utf-8")


def outputs(name: str) -> list[str]:
    """The page's ```` ```text ```` blocks (the outputs), stripped, in order."""
    return [body.strip() for lang, body in pages.blocks(PAGES[name]) if lang == "text"]


def ints(s: str) -> list[int]:
    """Every integer written in ``s``, in order (for NumPy arrays, whose spacing varies)."""
    return [int(x) for x in re.findall(r"-?\d+", s)]


def on_page(name: str, *phrases: str) -> None:
    body = " ".join(text(name).split())  # prose is wrapped: compare with single spaces
    missing = [p for p in phrases if p not in body]
    assert not missing, f"{name}: not on the page: {missing}"


# --------------------------------------------------------------------------------------------
# independent number theory


SIEVE = 2**20 + 1  # trial division covers every x < SIEVE**2, the pages' 40-bit primes included


@functools.cache
def small_primes() -> tuple[int, ...]:
    """The primes below ``SIEVE``, by the sieve of Eratosthenes."""
    sieve = bytearray([1]) * SIEVE
    sieve[:2] = b"\0\0"
    for p in range(2, math.isqrt(SIEVE - 1) + 1):
        if sieve[p]:
            sieve[p * p :: p] = bytearray(len(range(p * p, SIEVE, p)))
    return tuple(p for p in range(SIEVE) if sieve[p])


def is_prime(x: int) -> bool:
    """Trial division by every prime up to ``sqrt(x)``."""
    assert math.isqrt(x) < SIEVE
    return x > 1 and all(x % p for p in itertools.takewhile(lambda p: p * p <= x, small_primes()))


def largest_ntt_primes(n: int, bits: int, count: int) -> list[int]:
    """The ``count`` largest primes ``q < 2**bits`` with ``q = 1 (mod 2n)``, largest first."""
    out, q = [], (2**bits - 2) // (2 * n) * (2 * n) + 1
    while len(out) < count:
        if is_prime(q):
            out.append(q)
        q -= 2 * n
    return out


def smallest_psi(q: int, n: int) -> int:
    """The smallest primitive ``2n``-th root mod the prime ``q``: find one, ``w``, as a power
    ``x**((q-1)/2n)`` with ``w**n = -1``; the others are its odd powers."""
    x = 2
    while pow(pow(x, (q - 1) // (2 * n), q), n, q) != q - 1:
        x += 1
    w = pow(x, (q - 1) // (2 * n), q)
    return min(pow(w, e, q) for e in range(1, 2 * n, 2))


# --------------------------------------------------------------------------------------------
# every page runs


@pytest.mark.parametrize("name", list(PAGES))
def test_the_page_prints_what_it_shows(name: str):
    _, checked = pages.run_page(PAGES[name], strict=True)
    assert checked >= 1
    assert checked == len(outputs(name))  # every output block was compared


def test_the_pages_link_to_the_conventions_and_stay_narrow():
    for name in PAGES:
        lines = text(name).splitlines()
        assert "(../rings.md" in text(name) or "(../ckks.md" in text(name), name  # the details
        printed = "\n".join(outputs(name))  # an output line is as long as it is printed
        wide = [s for s in lines if len(s) > 100 and not s.startswith("|") and s not in printed]
        assert not wide, (name, wide)
        if name != "oracle":  # a concept page: the idea, the formula, an example, the links
            assert 80 <= len(lines) <= 200, (name, len(lines))


# --------------------------------------------------------------------------------------------
# rings and RNS


def test_rings_and_rns_facts():
    out = outputs("rings-and-rns")
    a, x, moduli = [500, -3, 0, 348], [0, 1, 0, 0], (17, 41)
    Q = math.prod(moduli)
    assert ints(out[0]) == [centered(c, Q) for c in a] + [centered(c, Q) for c in negacyclic(x, a)]
    limbs = [c % q for q in moduli for c in a]
    r0, r1 = 500 % 17, 500 % 41
    assert ints(out[1]) == limbs + [c % Q for c in a] + [r0, r1, crt([r0, r1], moduli)]
    assert out[2].splitlines()[0] == f"RingSpec(n=4, moduli=(17, 41), dtype='u32') {Q} 2 8"
    assert (41 - 1) % 8 == 0 and (41 - 1) % 16 != 0  # a ring of degree 4, not of degree 8
    primes = largest_ntt_primes(1024, 30, 3)
    assert out[3] == f"{tuple(primes)} [0, 0, 0]\nu32 u64"
    assert max(primes) < 2**30  # u32; a 60-bit prime needs u64
    form = range(primes[-1], 2**30, 2048)  # every q = 1 (mod 2048) from the smallest up
    assert len(form) == 24 and sorted(q for q in form if is_prime(q)) == sorted(primes)
    on_page("rings-and-rns", f"of the {len(form)} numbers `= 1 (mod 2048)` from `{primes[-1]}`")


# --------------------------------------------------------------------------------------------
# Montgomery form


def test_montgomery_facts():
    out = outputs("montgomery")
    moduli, a = (41, 73), [1, 2, 3, -1]
    plain = [c % q for q in moduli for c in a]
    words = [c % q * R32 % q for q in moduli for c in a]
    assert ints(out[0]) == plain + words + words[4:]
    on_page("montgomery", f"({R32 % 41} and {R32 % 73})")
    xs, ys = [5, 6, 7, 8], [9, 10, 11, 12]
    prod = [x * y % q for q in moduli for x, y in zip(xs, ys, strict=True)]
    prod_words = [p * R32 % q for q, p in zip([41] * 4 + [73] * 4, prod, strict=True)]
    q = 73
    xw, yw = 6 * R32 % q, 10 * R32 % q
    redc = xw * yw * pow(R32, -1, q) % q  # REDC(T) = T * R^-1 mod q, by its definition
    assert redc == 60 * R32 % q
    encode = 6 * (R32 * R32 % q) * pow(R32, -1, q) % q
    decode = xw * pow(R32, -1, q) % q
    assert ints(out[1]) == prod + prod_words + [xw, yw, redc, redc, encode, decode]
    assert decode == 6 and encode == xw


# --------------------------------------------------------------------------------------------
# domains


def test_domains_facts():
    out = outputs("domains")
    q, n, a, b = 17, 4, [1, 2, 3, 4], [5, 0, 0, 1]
    psi = smallest_root_brute(q, n)
    assert [x for x in range(q) if pow(x, n, q) == q - 1] == [2, 8, 9, 15]
    slots = ntt_slots(a, q, psi)
    points = [slot_point(k, n, q, psi) for k in range(n)]
    natural = [evaluate_at(a, pow(psi, 2 * j + 1, q), q) for j in range(n)]
    assert ints(out[0]) == [psi, *slots, *points, *slots, *natural]
    assert [brv(k, 2) for k in range(n)] == [0, 2, 1, 3]
    ab = negacyclic(a, b, q)
    assert ab == [3, 7, 11, 4]
    assert ints(out[1]) == ab + ntt_slots(ab, q, psi) * 2
    sa, sb = slots, ntt_slots(b, q, psi)
    assert ntt_slots(ab, q, psi) == [x * y % q for x, y in zip(sa, sb, strict=True)]
    on_page(
        "domains",
        f"Slot 1 is `a(psi^5) = a({pow(psi, 5, q)}) = a(-2) = 1 - 4 + 12 - 32 = -23 = "
        f"{-23 % q} (mod 17)`",
        f"`a(2) * b(2) = {sa[0]} * {sb[0]} = {sa[0] * sb[0]} = {sa[0] * sb[0] % q} (mod 17)`",
    )


# --------------------------------------------------------------------------------------------
# automorphisms


def test_automorphisms_facts():
    out = outputs("automorphisms")
    n, q, g = 16, 97, 5
    a = list(range(1, 17))
    dest = [i * g % (2 * n) % n for i in range(n)]
    negate = [int(i * g % (2 * n) >= n) for i in range(n)]
    sigma = automorphism(a, g)  # small integers: no reduction mod 97 needed
    assert all(abs(c) < q / 2 for c in sigma)
    assert ints(out[0]) == dest + negate + sigma
    exps = [2 * brv(j, 4) + 1 for j in range(n)]
    perm = [brv((g * e % (2 * n) - 1) // 2, 4) for e in exps]
    assert out[1].splitlines()[:2] == [str(perm), str(exps)]
    psi = smallest_psi(q, n)
    slots = ntt_slots(a, q, psi)
    assert ntt_slots(automorphism(a, g, q), q, psi) == [slots[p] for p in perm]
    assert sorted(pow(5, r, 2 * n) for r in range(n // 2)) == sorted(
        {pow(5, r, 2 * n) for r in range(n)}
    )  # 5 has order n/2 modulo 2n
    v = np.array([1 + 2j, 3 - 1j, 0.5j, -2, 0, 0, 0, 1])
    want = [np.round(w, 3) + 0 for w in (v, np.roll(v, -1), np.conj(v))]
    assert out[2].splitlines() == [str(w) for w in want]


# --------------------------------------------------------------------------------------------
# rescale and basis change


def test_rescale_facts():
    out = outputs("rescale")
    moduli, a = (17, 41, 73), [20000, -20000, 36, 37]
    Q = math.prod(moduli)
    by73 = [rounded_div(centered(c, Q), 73) for c in a]
    by2993 = [rounded_div(centered(c, Q), 41 * 73) for c in a]
    by17 = [rounded_div(centered(c, Q), 17) for c in a]
    assert out[0].splitlines() == [
        f"RingSpec(n=4, moduli=(17, 41), dtype='u32') Domain.COEFF {by73}",
        str(by2993),
        f"RingSpec(n=4, moduli=(41, 73), dtype='u32') {by17}",
    ]
    x = 20000 + 36
    assert out[1] == f"{x % 73} {[by73[0] % 17, by73[0] % 41]} {[by73[0] % 17, by73[0] % 41]}"
    assert (x - x % 73) // 73 == by73[0]
    view = [centered(c, 17 * 41) for c in a]
    big_Q = Q * 89
    ext = [centered(c % big_Q, big_Q) for c in a]
    assert ext == a
    assert out[2].splitlines()[:2] == [
        f"(17, 41) [] {view}",
        f"(17, 41, 73, 89) ['base_convert'] {ext}",
    ]
    assert ints(out[2].splitlines()[2]) == [c % 89 for c in a] * 2
    on_page(
        "rescale",
        f"`20000 / 73 = {20000 / 73:.2f}`",
        f"`36 / 73 = {36 / 73:.3f}`",
        f"`37 / 73 = {37 / 73:.3f}`",
        f"`20000 / 2993 = {20000 / 2993:.2f}`",
        f"`20000 mod 697 = {20000 % 697} = {centered(20000, 697)}`",
    )


# --------------------------------------------------------------------------------------------
# CKKS data types


def test_ckks_types_facts():
    out = outputs("ckks-types")
    n = 16
    p0, q0 = largest_ntt_primes(n, 40, 2)  # the special modulus takes the largest
    q1, q2 = largest_ntt_primes(n, 30, 2)
    assert out[0].splitlines() == [
        f"{(q0, q1, q2)} {(p0,)}",
        f"{n // 2} 3 2 True",
        f"{(q0, q1)} 4 ((0,), (1,), (2,))",
    ]
    assert out[1].splitlines()[2] == f"{float(2**30)} 2 False 2 True"
    fresh, product = 30.0, math.log2(Fraction(2**60, q2))
    rule = {  # name: (parts, level, log2 scale), from the table of the page
        "x": (2, 2, fresh),
        "x * 3": (2, 2, fresh),
        "x * 0.5": (2, 1, fresh),
        "x * pt": (2, 1, product),
        "tensor product": (3, 2, 60.0),
        "relinearized": (2, 2, 60.0),
        "rescaled": (2, 1, product),
        "x.rotate(1)": (2, 2, fresh),
        "x.at_level(0)": (2, 0, fresh),
    }
    lines = out[2].splitlines()
    want = [
        f"{name:15} parts={p} level={lv} log2(scale)={s:.7f}" for name, (p, lv, s) in rule.items()
    ]
    assert lines[: len(want)] == want
    assert lines[len(want)] == "True 1"
    assert 2**30 - q2 == 1215
    first_order = 30 + 1215 / (2**30 * math.log(2))
    assert f"{first_order:.7f}" == f"{product:.7f}" == "30.0000016"
    on_page("ckks-types", f"`q_2 = {q2}` is `2^30 - {2**30 - q2}`")


# --------------------------------------------------------------------------------------------
# the oracle guide


def _seal(name: str) -> dict[str, np.ndarray]:
    return dict(np.load(ROOT / "tests" / "vectors" / name))


def test_the_seal_vectors_follow_the_definitions():
    # SEAL's NTT form is Ren's convention by definition (n=16: direct evaluation is cheap), and
    # SEAL's products are slot-wise in every file: what the guide shows Ren agreeing with.
    d = _seal("seal_n16_30bit.npz")
    moduli = [int(q) for q in d["moduli"]]
    for name in ("a", "b"):
        for c in range(2):
            for i, q in enumerate(moduli):
                coef = [int(x) for x in d[f"{name}_coef"][c][i]]
                slots = ntt_slots(coef, q, smallest_psi(q, 16))
                assert slots == [int(x) for x in d[f"{name}_ntt"][c][i]]
    for file in ("seal_n16_30bit.npz", "seal_n1024_60_40.npz", "seal_n2048_50_40_40.npz"):
        d = _seal(file)
        q = np.array([[int(m)] for m in d["moduli"]], dtype=object)
        a, b = (d[k].astype(object) for k in ("a_ntt", "b_ntt"))
        want = (a[0] * b[0] % q, (a[0] * b[1] + a[1] * b[0]) % q, a[1] * b[1] % q)
        for c in range(3):
            assert (d["prod_ntt"][c].astype(object) == want[c]).all(), (file, c)


def test_oracle_guide_facts():
    out = outputs("oracle")
    d = _seal("seal_n16_30bit.npz")
    q0, q1 = (int(q) for q in d["moduli"])
    assert out[0].splitlines()[0] == f"RingSpec(n=16, moduli=({q0}, {q1}), dtype='u32')"
    assert max(q0, q1) < 2**30  # u32 words, R = 2^32
    word = int(d["prod_ntt"][1][1, 5])
    assert word + 1 < q1
    assert out[3] == (
        f"limb 1 (q={q1}), index 5: Ren {word}, theirs {word + 1}; 1 of 32 words differ"
    )
    got, expected = (word + 1) * R32 % q1, word * R32 % q1
    assert out[4].splitlines()[0].endswith(f"got word {got}, expected {expected}")
    assert (got - expected) % q1 == R32 % q1 == 4860
    on_page("oracle", f"`R mod q = 2^32 mod {q1} = {R32 % q1}`")
    fixed = [k for k in range(16) if brv(k, 4) == k]
    assert fixed == [0, 6, 9, 15]
    ren_a0 = [int(x) for x in d["a_ntt"][0][0]]
    natural0 = [ren_a0[brv(k, 4)] for k in range(16)]
    differ = 32 - 2 * len(fixed)
    assert out[6].splitlines()[0] == (
        f"limb 0 (q={q0}), index 1: Ren {ren_a0[1]}, theirs {natural0[1]}; "
        f"{differ} of 32 words differ"
    )
    psi = smallest_psi(q0, 16)
    coef = [int(x) for x in d["a_coef"][0][0]]
    assert natural0 == [evaluate_at(coef, pow(psi, 2 * j + 1, q0), q0) for j in range(16)]
