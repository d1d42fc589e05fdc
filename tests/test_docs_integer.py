"""The BFV/BGV guide (``docs/guides/bfv-bgv.md``) runs, prints what it shows, and is true.

The page's blocks run in order (``tests.pages.run_page``, strict). The values it prints are
recomputed here with NumPy mod ``t``, ``np.roll`` on the 2 x n/2 matrix and Python integers.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from tests import pages

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "guides" / "bfv-bgv.md"


def outputs() -> list[str]:
    return [body.strip() for lang, body in pages.blocks(PAGE) if lang == "text"]


def ints(s: str) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", s)]


def test_every_example_runs_and_prints_what_the_page_shows():
    namespace, checked = pages.run_page(PAGE)
    assert namespace and checked == len(outputs()) == 7


def test_the_printed_values_are_integer_arithmetic_mod_t():
    first, slots, bgv_out, *_ = outputs()
    a, b = np.array([3, 1, 4, 1, 5, 9, 2, 6]), np.array([2, 7, 1, 8, 2, 8, 1, 8])
    assert ints(first.splitlines()[1]) == list((a * b + 1000) % 65537)
    m = np.arange(16).reshape(2, 8)
    want = np.concatenate([m, np.roll(m, -1, axis=1), m[::-1]])
    assert ints(slots) == want.reshape(-1).tolist()
    from ren.schemes import bgv

    q3 = bgv.Params(n=8192, q_bits=(43, 43, 44, 44), p_bits=(44,), t=65537).q_moduli[3]
    assert "from 51 bits to 23" in PAGE.read_text()
    level, f, *values = ints(bgv_out.splitlines()[1])
    assert (level, f, values) == (2, pow(q3, -1, 65537), [9, 1, 16])
    fresh, product, switched = ints(bgv_out.splitlines()[0])
    params = bgv.Params(n=8192, q_bits=(43, 43, 44, 44), p_bits=(44,), t=65537)
    top, below = (params.ring(level).Q.bit_length() for level in (3, 2))
    assert (top - product - 1, below - switched - 1) == (51, 23)  # the noise's bits, as said
    text = PAGE.read_text()
    assert f"= {f}" in text and "28 bits here" in text and fresh - product == 28


def test_the_kernels_of_one_multiply_follow_from_the_algorithm():
    """Per region, the kernels the page counts: what the HPS product and a key switch need.

    Two ciphertexts of 2 parts; a product of 3; L = 4 digits of one modulus; P of one modulus.
    """
    kernels = outputs()[3]
    rows = {line[:41].strip(): line[41:] for line in kernels.splitlines()[:-1]}
    count = {
        path: {kind: int(n) for n, kind in re.findall(r"(\d+) (\w+)", text)}
        for path, text in rows.items()
    }
    parts_in, parts_out, digits = 4, 3, 4
    tensor, scale = count["multiply/tensor"], count["multiply/scale"]
    assert (tensor["intt"], tensor["base_convert"], tensor["ntt"]) == (parts_in,) * 3
    assert (scale["intt"], scale["base_convert"]) == (2 * parts_out, 2 * parts_out)
    assert scale["ntt"] == parts_out - 1  # c_2 goes to the key switch in coefficient form
    up = count["multiply/relinearize/key_switch/mod_up"]
    assert up == {"base_convert": digits, "ntt": digits}
    down = count["multiply/relinearize/key_switch/mod_down"]
    assert (down["intt"], down["base_convert"], down["ntt"]) == (2, 2, 2)
    total = sum(sum(int(n) for n in c.values()) for c in count.values())
    assert kernels.splitlines()[-1].startswith(f"{total} kernels; [3 8]")


def test_the_predicted_budgets_are_within_3_bits_of_the_measured():
    """The prediction section's figures, and the chosen chain's product tree."""
    predicted_vs_measured, chosen = outputs()[4:6]
    pairs = re.findall(r"predicted +([\d.]+) bits, measured (\d+)", predicted_vs_measured + chosen)
    assert len(pairs) == 6
    assert all(abs(float(p) - int(m)) <= 3 for p, m in pairs)
    assert "n=8192: chosen" in chosen and chosen.splitlines()[-2] == "True"


def test_the_server_computes_what_numpy_does():
    *_, server = outputs()
    v = np.array([3, 1, 4, 1, 5, 0, 0, 0])  # the rest of row 0 is 0: rotation brings a 0 in
    assert ints(server.splitlines()[2])[:4] == list(np.roll(v * v, -1)[:4] % 65537)
    assert "cannot decrypt" in server.splitlines()[1]
