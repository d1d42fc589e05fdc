"""The examples in ``docs/ckks.md`` run and print what the page shows.

As for ``docs/jit.md``: the page's ```` ```python ```` blocks run in order in one namespace (as a
reader would type them), and each ```` ```text ```` block is the output of the python block just
before it. The examples fix their seeds (``seed=`` for keys and encryptions, NumPy generators for
the messages), so what they print is deterministic and compared character for character; they
print their own oracle (the same computation in NumPy, as a precision in bits).

The figures the page states in prose and tables are checked against the code too: the security
table, the moduli, the noise estimates, the columns of the key-switching table that follow from
the parameters, and two of its rows measured again exactly as the page says they were measured.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import ren
from ren.engine.schedule import schedule
from ren.ir.node import Node
from ren.ir.op import DType, Op
from ren.ring import ntt_primes
from ren.schemes import ckks
from tests import pages

PAGE = Path(__file__).resolve().parents[1] / "docs" / "ckks.md"
TEXT = PAGE.read_text(encoding="utf-8")
ENV = ("REN_DEBUG", "REN_VALIDATE", "REN_JIT_GRAPH", "REN_NO_PLAN", "REN_DEVICE", "REN_POISON")

#: the key-switching table's common parameters (the page's "Measured" paragraph)
KS_N, KS_Q_BITS = 8192, (60, 40, 40, 40, 40)


def blocks() -> list[tuple[str, str]]:
    return pages.blocks(PAGE)


@pytest.fixture(autouse=True)
def plain_env(monkeypatch: pytest.MonkeyPatch):
    """The page shows the defaults (python device, no debug output), whatever the shell set."""
    for var in ENV:
        monkeypatch.delenv(var, raising=False)
    ren.clear_jit()
    yield
    ren.clear_jit()


def run_page() -> tuple[dict[str, object], int]:
    """Run the page's python blocks, comparing outputs; the namespace and the blocks compared."""
    return pages.run_page(PAGE)


def table(heading: str) -> list[list[str]]:
    """The rows (cells stripped, header and rule dropped) of the first table after ``heading``."""
    section = TEXT[TEXT.index(heading) :]
    lines = []
    for line in section.splitlines():
        if line.startswith("|"):
            lines.append(line)
        elif lines:
            break
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:]]


# --------------------------------------------------------------------------------------------
# the examples


def test_every_example_prints_what_the_page_shows():
    _, checked = run_page()
    assert checked >= 22  # every example with an output block was compared


def test_the_examples_use_small_insecure_rings_only():
    # The executed blocks encrypt on tiny rings only; n=8192 appears only in Params (cheap).
    for lang, body in blocks():
        if lang == "python":
            for n in re.findall(r"n=(\d+)", body):
                assert int(n) <= 256 or "encrypt" not in body, body


def test_the_page_names_every_public_name():
    for name in ckks.__all__:
        assert f"ckks.{name}" in TEXT, name
    for method in ("rotate", "conjugate", "rescale", "relinearize", "at_level", "to_bytes"):
        assert f"ct.{method}(" in TEXT, method
    for name in ("evaluation_keys()", "export_secret_key()", "rotation_key(", "galois_key("):
        assert f"ctx.{name}" in TEXT, name


# --------------------------------------------------------------------------------------------
# the figures in prose and tables


def test_the_security_table_is_the_module_s():
    header = next(line for line in TEXT.splitlines() if line.startswith("| `n` | 1024 |"))
    (bounds,) = table("| `n` | 1024 |")
    ns = [int(c) for c in header.strip("|").split("|")[1:]]
    assert bounds[0] == "largest `log2(QP)`"
    assert dict(zip(ns, map(int, bounds[1:]), strict=True)) == ckks.SECURITY_BOUNDS


def test_the_moduli_sentence():
    # "p_0 = ... is the largest 60-bit prime = 1 (mod 16384) and q_0 the next one"
    p0, q0 = ntt_primes(8192, 60, 2)
    assert f"`p_0 = {p0}` is the largest 60-bit prime `= 1 (mod 16384)`" in TEXT
    params = ckks.Params(n=8192, q_bits=(60, 40, 40), p_bits=(60,))
    assert params.p_moduli == (p0,) and params.q_moduli[0] == q0
    # set a of the precision table is secure, with the log2(QP) the page gives
    assert "`log2(QP) = 200`" in TEXT and round(params.log2_qp) == 200
    p62 = ckks.Params(n=8192, q_bits=(60, 40, 40), p_bits=(62,))
    assert "`log2(QP) = 202`" in TEXT and round(p62.log2_qp) == 202


def test_the_noise_estimates():
    n, sigma = 8192, 3.2
    rounding = math.sqrt(n / 18)  # r_0 + r_1 s: 2n/3 nonzero coefficients times variance 1/12
    key_term = sigma * math.sqrt(n / 12)  # a digit as large as P times a Gaussian
    unrounded = sigma * math.sqrt(4 * n / 3)  # e v + e_1 s without the division by P
    assert round(rounding) == 21 and "`sqrt(n/18)`" in TEXT and "21 at `n = 8192`" in TEXT
    assert round(key_term) == 84 and "`(D_j / P) * sigma * sqrt(n / 12)`" in TEXT
    assert "84 at `n = 8192`" in TEXT
    assert round(unrounded / rounding) == 16 and "16 times (4 bits)" in TEXT
    assert round(math.log2(key_term / rounding)) == 2 and "lose about 2\nbits" in TEXT


def ks_rows() -> list[dict[str, object]]:
    rows = []
    for cells in table("| `p_bits` | `dnum` |"):
        ntts, limbs = re.fullmatch(r"(\d+) \((\d+)\)", cells[8]).groups()
        rows.append(
            {
                "p_bits": tuple(int(b) for b in re.findall(r"\d+", cells[0])),
                "dnum": int(cells[1]),
                "log2_p": int(cells[2]),
                "digit": int(cells[3]),
                "fresh": float(cells[4]),
                "rotate": float(cells[5]),
                "rotate0": float(cells[6]),
                "key_mib": float(cells[7]),
                "ntts": int(ntts),
                "limbs": int(limbs),
                "extensions": int(cells[9]),
            }
        )
    return rows


def test_the_key_switching_table_follows_from_the_parameters():
    rows = ks_rows()
    assert len(rows) >= 8
    for row in rows:
        params = ckks.Params(
            n=KS_N, q_bits=KS_Q_BITS, p_bits=row["p_bits"], dnum=row["dnum"], insecure=True
        )
        assert params.log2_qp > ckks.SECURITY_BOUNDS[KS_N]  # "insecure=True ... in every row"
        assert round(sum(math.log2(p) for p in params.p_moduli)) == row["log2_p"]
        digit = max(sum(math.log2(params.q_moduli[i]) for i in d) for d in params.digits)
        assert round(digit) == row["digit"]
        words = row["dnum"] * 2 * params.key_ring.L * KS_N
        assert f"{8 * words / 2**20:.1f}" == f"{row['key_mib']:.1f}"
        # the page's text reads the table: a digit as large as P loses about 2 bits, a gap of
        # two bits or more leaves the rotation within a few tenths of a fresh encryption
        loss = row["fresh"] - row["rotate"]
        if row["log2_p"] == row["digit"]:
            assert 1.5 < loss < 2.5, row
        else:
            assert loss < 0.5, row
        assert row["fresh"] - row["rotate0"] < (2.5 if row["log2_p"] == 60 else 0.5), row


def test_the_key_switching_table_kernel_counts():
    """The kernels of one rotation at the top level depend on the limb counts, not on ``n``: the
    schedule on a ring of degree 64 with the same bit sizes has the counts the page gives."""
    for row in ks_rows():
        params = ckks.Params(
            n=64, q_bits=KS_Q_BITS, p_bits=row["p_bits"], dnum=row["dnum"], insecure=True
        )
        ctx = ckks.Context(params, seed=1)
        x = ctx.encrypt([1.0]).realize()
        ctx.rotation_key(1)
        kernels, _ = schedule(Node(Op.SINK, DType.VOID, tuple(p.node for p in x.rotate(1).parts)))
        kinds = Counter(k.info.kind for k in kernels)
        limbs = sum(k.info.ring.L for k in kernels if k.info.kind in ("ntt", "intt"))
        assert (kinds["ntt"] + kinds["intt"], limbs) == (row["ntts"], row["limbs"]), row
        assert kinds["base_convert"] == row["extensions"], row


def test_the_rotation_listing_the_page_describes():
    # "The same listing for a.rotate(1) has 22 kernels: ModUp of c_1 as above, then the
    # automorphism of each extended digit (a gathered load, LOAD ... gather g=5 in its body; one
    # kernel per digit ...), and no RESCALE kernel at all"
    assert "`a.rotate(1)` has 22 kernels" in TEXT and "`LOAD ... gather g=5`" in TEXT
    assert "no `RESCALE` kernel at all" in TEXT
    small = ckks.Params(n=64, q_bits=(50, 30, 30), p_bits=(50,), scale_bits=30, insecure=True)
    ctx = ckks.Context(small, seed=1)
    a = ctx.encrypt([0.5, 0.25j, -1.0]).realize()
    kernels, _ = schedule(Node(Op.SINK, DType.VOID, tuple(p.node for p in a.rotate(1).parts)))
    assert len(kernels) == 22
    assert not [k for k in kernels if k.info.kind == "rescale"]
    digits = len(small.digits)
    # ModUp first: c_1's inverse NTT, then per digit a basis extension to the key ring and an NTT
    assert kernels[0].info.kind == "intt" and kernels[0].info.ring.L == 3
    gathers = [k for k in kernels if "gather g=5" in str(k.ast)]
    # the automorphism of each extended digit (4 limbs), and of c_0 fused into the last sum
    assert len([k for k in gathers if k.info.ring.L == 4]) == digits
    steps = [(k.info.kind, k.info.ring.L) for k in kernels]
    assert steps.count(("base_convert", 4)) == digits
    # ModDown twice: the special limb alone back to coefficients, extended to the level's 3 limbs
    assert steps.count(("intt", 1)) == 2 and steps.count(("base_convert", 3)) == 2


def _unit_disk(rng: np.random.Generator, k: int) -> np.ndarray:
    return np.sqrt(rng.uniform(0, 1, k)) * np.exp(1j * rng.uniform(0, 2 * np.pi, k))


def measure_ks_row(p_bits: tuple[int, ...], dnum: int) -> tuple[float, float, float]:
    """The page's measurement: 6 trials, context seed = trial, message seed = 100 + trial; fresh,
    rotate at the top level, rotate at level 0 (means). The backends agree word for word, so the
    python device gives the figures the cpu device gave."""
    params = ckks.Params(n=KS_N, q_bits=KS_Q_BITS, p_bits=p_bits, dnum=dnum, insecure=True)
    fresh, rot, rot0 = [], [], []
    for trial in range(6):
        rng = np.random.default_rng(100 + trial)
        with ckks.Context(params, seed=trial) as ctx:
            v = _unit_disk(rng, params.slots)
            x = ckks.encrypt(v).realize()
            fresh.append(ckks.precision_bits(ckks.decrypt(x), v))
            ctx.rotation_key(1)
            rot.append(ckks.precision_bits(ckks.decrypt(x.rotate(1)), np.roll(v, -1)))
            x0 = ckks.encrypt(v, level=0).realize()
            rot0.append(ckks.precision_bits(ckks.decrypt(x0.rotate(1)), np.roll(v, -1)))
    return statistics.mean(fresh), statistics.mean(rot), statistics.mean(rot0)


@pytest.mark.slow
@pytest.mark.parametrize("p_bits", [(60,), (62,)], ids=["P=60", "P=62"])
def test_two_key_switching_rows_measured_again(p_bits: tuple[int, ...]):
    (row,) = [r for r in ks_rows() if r["p_bits"] == p_bits and r["dnum"] == 5]
    fresh, rot, rot0 = measure_ks_row(p_bits, 5)
    assert (f"{fresh:.2f}", f"{rot:.2f}", f"{rot0:.2f}") == (
        f"{row['fresh']:.2f}",
        f"{row['rotate']:.2f}",
        f"{row['rotate0']:.2f}",
    )


def test_the_precision_table():
    rows = {cells[0]: cells[1:] for cells in table("| operation | Microsoft SEAL 4.4 | Ren |")}
    assert list(rows) == [
        "fresh",
        "add",
        "multiply",
        "plaintext multiply",
        "scalar multiply",
        "rotate by one",
        "conjugate",
    ]
    # both columns are figures of one benchmark run: two decimals each
    assert all(re.fullmatch(r"\d\d\.\d\d", v) for cells in rows.values() for v in cells)
