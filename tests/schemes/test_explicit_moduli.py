"""Parameters of explicit moduli: another compiler's chain (HEIR's), or SEAL's primes in its order.

The oracles: NumPy for CKKS values, Python's integers for BFV's, and the moduli as given (each
checked prime and ``1 (mod 2n)`` by trial division here, not by Ren's test).
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from ren.schemes import bfv, ckks
from tests.schemes import ckks_blobs

# the chain heir-opt --mlir-to-ckks gives a small program: logN 14, these Q and P, scale 2^45
HEIR_Q = (36028797017456641, 35184371138561, 35184372121601)
HEIR_P = (1152921504607338497, 1152921504608747521)


def _prime_by_trial(q: int) -> bool:
    """Trial division by 6k +- 1 up to sqrt(q): slow, plain, independent of Ren's test."""
    if q % 2 == 0 or q % 3 == 0:
        return False
    k = 5
    while k * k <= q:
        if q % k == 0 or q % (k + 2) == 0:
            return False
        k += 6
    return True


def test_the_oracle_knows_heirs_moduli_for_primes():
    for q in HEIR_Q[1:]:  # ~2^45: trial division to 2^22.5 is quick
        assert _prime_by_trial(q) and q % (2 * 16384) == 1


def heir_params() -> ckks.Params:
    return ckks.Params(n=16384, q_moduli=HEIR_Q, p_moduli=HEIR_P, scale_bits=45)


def test_the_moduli_are_kept_as_given_and_the_sizes_follow():
    p = heir_params()
    assert p.q_moduli == HEIR_Q and p.p_moduli == HEIR_P
    assert p.q_bits == tuple(q.bit_length() for q in HEIR_Q) == (55, 45, 46)
    assert p.p_bits == (61, 61) and p.dnum == 3
    assert p.log2_qp == pytest.approx(sum(np.log2(float(q)) for q in HEIR_Q + HEIR_P))
    assert "q_moduli=(36028797017456641, 35184371138561, 35184372121601)" in repr(p)
    # only the ciphertext moduli given: the special ones found for their sizes, none taken twice
    q_only = ckks.Params(n=16384, q_moduli=HEIR_Q, p_bits=(60,), scale_bits=45)
    assert q_only.q_moduli == HEIR_Q and len(q_only.p_moduli) == 1
    assert q_only.p_moduli[0] not in HEIR_Q and q_only.p_moduli[0].bit_length() == 60


def test_moduli_the_sizes_would_give_are_the_same_parameters():
    found = ckks.Params(n=16384, q_bits=(55, 45, 46), p_bits=(61, 61), scale_bits=45)
    again = ckks.Params(n=16384, q_moduli=found.q_moduli, p_moduli=found.p_moduli, scale_bits=45)
    assert again == found and hash(again) == hash(found) and repr(again) == repr(found)
    assert "q_moduli" not in repr(found)
    assert heir_params() != found  # other primes of the same sizes: another chain
    assert pickle.loads(pickle.dumps(found)) == found
    assert found.__reduce__()[0] is ckks.Params  # its pickle as before: the class and arguments


def test_pickle_and_bytes_keep_explicit_moduli():
    p = heir_params()
    assert pickle.loads(pickle.dumps(p)) == p
    back = ckks.Params.from_bytes(p.to_bytes())
    assert back == p and back.q_moduli == HEIR_Q and back.p_moduli == HEIR_P
    _, _, header, _ = ckks_blobs.split(p.to_bytes())
    assert header["params"]["explicit_moduli"] is True
    found = ckks.Params(n=1024, q_bits=(40,), p_bits=(40,), scale_bits=30, insecure=True)
    _, _, plain, _ = ckks_blobs.split(found.to_bytes())
    assert "explicit_moduli" not in plain["params"]  # the bytes of found moduli unchanged


def test_a_blob_s_explicit_moduli_are_checked_as_the_constructor_checks_them():
    version, kind, header, _ = ckks_blobs.split(heir_params().to_bytes())

    def read(params: dict) -> None:
        text = ckks_blobs._text({"params": params})
        ckks.Params.from_bytes(ckks_blobs.frame(version, kind, text, []))

    moduli = header["params"]["moduli"]
    with pytest.raises(ValueError, match="not a prime 1 mod 2n"):  # a composite in its place
        read({**header["params"], "moduli": [*moduli[:-1], str(HEIR_Q[2] + 2 * 16384 * 3)]})
    with pytest.raises(ValueError, match="moduli differ"):  # the flag dropped: sizes decide
        read({k: v for k, v in header["params"].items() if k != "explicit_moduli"})
    with pytest.raises(ValueError, match="explicit_moduli must be true"):
        read({**header["params"], "explicit_moduli": 1})
    for description, blob in ckks_blobs.crafted(heir_params().to_bytes()):
        with pytest.raises(ValueError):
            ckks.Params.from_bytes(blob)
            pytest.fail(f"accepted: {description}")


def test_ckks_runs_on_heirs_chain():
    p = heir_params()
    rng = np.random.default_rng(1)
    x, y = rng.uniform(-1, 1, p.slots), rng.uniform(-1, 1, p.slots)
    with ckks.Context(p, seed=2) as ctx:
        a, b = ctx.encrypt(x), ctx.encrypt(y)
        out = (a * b + a).rotate(3)
        want = np.roll(x * y + x, -3)
        got = ctx.decrypt(out).real
        assert out.level == p.max_level - 1
        measured = ckks.precision_bits(got, want)
        assert abs(measured - ckks.predicted_precision(out)) <= 2
        assert measured > 20
        back = ckks.Ciphertext.from_bytes(out.to_bytes(), ctx)
        assert np.array_equal(ctx.decrypt(back), ctx.decrypt(out))


def test_seal_s_equal_sizes_in_its_own_order():
    # three 40-bit primes in ascending order, where the sizes alone give them descending
    found = ckks.Params(n=1024, q_bits=(40, 40, 40), p_bits=(40,), scale_bits=30, insecure=True)
    mine = tuple(sorted(found.q_moduli))
    p = ckks.Params(n=1024, q_moduli=mine, p_moduli=found.p_moduli, scale_bits=30, insecure=True)
    assert p.q_moduli == mine != found.q_moduli and p != found
    with ckks.Context(p, seed=3) as ctx:
        x = np.linspace(-1, 1, p.slots)
        assert ckks.precision_bits(ctx.decrypt(ctx.encrypt(x) * 0.5).real, x / 2) > 15


def test_bfv_with_explicit_moduli_multiplies_exactly():
    found = bfv.Params(n=64, q_bits=(50, 50), p_bits=(60,), t=257, insecure=True)
    p = bfv.Params(
        n=64, q_moduli=found.q_moduli[::-1], p_moduli=found.p_moduli, t=257, insecure=True
    )
    assert p.q_moduli == found.q_moduli[::-1]
    rng = np.random.default_rng(4)
    a, b = rng.integers(0, 257, 64), rng.integers(0, 257, 64)
    with bfv.Context(p, seed=5) as ctx:
        got = ctx.decrypt(ctx.encrypt(a) * ctx.encrypt(b))
    # the oracle: the negacyclic product mod t in Python's integers (batched slots: elementwise)
    assert [int(v) for v in got] == [int(x) * int(y) % 257 for x, y in zip(a, b, strict=True)]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({}, TypeError, r"pass q_bits \(the moduli's bit sizes\) or q_moduli"),
        ({"q_moduli": ()}, ValueError, "q_moduli is empty"),
        ({"q_moduli": 5}, TypeError, "q_moduli must be a sequence of primes"),
        ({"q_moduli": "123"}, TypeError, "q_moduli must be a sequence of primes"),
        ({"q_moduli": [1.5]}, TypeError, "moduli must be ints"),
        ({"q_moduli": [7]}, ValueError, "moduli have 10 to 62"),
        ({"q_moduli": [HEIR_Q[0] + 2 * 16384]}, ValueError, "not a prime 1 mod 2n=32768"),
        ({"q_moduli": [12289]}, ValueError, "not a prime 1 mod 2n=32768"),
        ({"q_moduli": HEIR_Q, "q_bits": (55, 45, 45)}, ValueError, "bit sizes given are"),
        ({"q_moduli": (HEIR_Q[0], HEIR_Q[0])}, ValueError, "must be distinct"),
        ({"q_moduli": HEIR_Q, "p_moduli": (HEIR_Q[1],)}, ValueError, "must be distinct"),
        ({"q_moduli": HEIR_Q, "p_moduli": HEIR_P, "p_bits": (60, 61)}, ValueError, "bit sizes"),
        ({"q_moduli": HEIR_Q, "p_moduli": HEIR_P, "key_switching": "bv"}, ValueError, "BV"),
    ],
)
def test_bad_moduli_are_refused_by_name(kwargs, error, match):
    with pytest.raises(error, match=match):
        ckks.Params(n=16384, scale_bits=45, **kwargs)


def test_the_security_bound_holds_for_explicit_moduli():
    # 60-bit primes at n=1024: four of them pass the bound of 27 bits many times over
    big = ckks.Params(n=1024, q_bits=(60, 60, 60), p_bits=(60,), insecure=True)
    with pytest.raises(ValueError, match=r"log2\(QP\)"):
        ckks.Params(n=1024, q_moduli=big.q_moduli[::-1], p_moduli=big.p_moduli)
    ckks.Params(n=1024, q_moduli=big.q_moduli[::-1], p_moduli=big.p_moduli, insecure=True)
