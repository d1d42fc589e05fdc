"""``bfv.Params.choose`` and ``bgv.Params.choose``: parameters from a depth, checked by running.

The oracles: the HE standard's bound (``SECURITY_BOUNDS``, the table itself), the product tree
actually run at the chosen parameters (its decryption against NumPy mod ``t``, its budget
measured with the secret key), and the predicted budget of the chains refused and chosen.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from ren.schemes import bfv, bgv
from ren.schemes.integer.choose import tree_budgets
from ren.schemes.rlwe.security import SECURITY_BOUNDS


@pytest.mark.parametrize("depth", range(1, 9))
@pytest.mark.parametrize("scheme", [bfv, bgv], ids=["bfv", "bgv"])
def test_chosen_parameters_are_secure_and_hold_the_depth(scheme, depth: int) -> None:
    params = scheme.Params.choose(depth=depth)
    assert not params.insecure and params.log2_qp <= SECURITY_BOUNDS[params.n]
    assert params.batching and params.t == 65537
    budgets = tree_budgets(params, depth)
    assert budgets[-1][1] >= 10  # the margin, predicted (run below for the shallow ones)
    if scheme is bgv:
        assert [level for level, _ in budgets] == list(range(depth, -1, -1))
    smaller = [n for n in SECURITY_BOUNDS if n < params.n]
    # the smallest ring: every smaller one is refused by its bound (no chain fits under it)
    assert all(f"n={n}: refused" in params.explain() for n in smaller)
    assert f"n={params.n}: chosen" in params.explain()


def _tree(ctx, leaves: list[np.ndarray], switch) -> tuple[object, np.ndarray]:
    """The product tree of the leaves' encryptions (relinearized, switched), and NumPy's."""
    t = ctx.params.t
    level = [(ctx.encrypt(m), m % t) for m in leaves]
    while len(level) > 1:
        level = [
            (switch(a * b), ma * mb % t)
            for (a, ma), (b, mb) in zip(level[::2], level[1::2], strict=True)
        ]
    return level[0]


@pytest.mark.parametrize(
    ("scheme", "depth"),
    [(bfv, 1), (bfv, 3), (bgv, 2), (bgv, 3)],
    ids=["bfv-1", "bfv-3", "bgv-2", "bgv-3"],
)
def test_a_product_tree_at_the_chosen_parameters_decrypts(scheme, depth: int) -> None:
    params = scheme.Params.choose(depth=depth)
    rng = np.random.default_rng(depth)
    leaves = list(rng.integers(0, params.t, (2**depth, params.n)))
    switch = bgv.mod_switch if scheme is bgv else (lambda c: c)
    with scheme.Context(params, seed=depth, device="cpu") as ctx:
        ct, want = _tree(ctx, leaves, switch)
        measured = ctx.noise_budget(ct)
        assert measured > 0 and np.array_equal(ctx.decrypt(ct), want)
        assert abs(measured - ctx.predicted_noise_budget(ct)) <= 3
        assert abs(ctx.predicted_noise_budget(ct) - tree_budgets(params, depth)[-1][1]) <= 1


def test_a_deeper_chain_holds_its_squares() -> None:
    """Depth 6 (n = 16384): six squares, which grow faster than the tree, still decrypt."""
    params = bfv.Params.choose(depth=6)
    m = np.random.default_rng(6).integers(0, params.t, params.n)
    with bfv.Context(params, seed=6, device="cpu") as ctx:
        ct, want = ctx.encrypt(m), m
        for _ in range(6):
            ct, want = (ct * ct).realize(), want * want % params.t
        measured = ctx.noise_budget(ct)
        assert measured > 0 and np.array_equal(ctx.decrypt(ct), want)
        assert abs(measured - ctx.predicted_noise_budget(ct)) <= 3


def test_bv_and_a_larger_t() -> None:
    for scheme in (bfv, bgv):
        params = scheme.Params.choose(depth=2, t=786433, key_switching="bv")
        assert params.key_switching == "bv" and params.p_bits == () and params.t == 786433
        assert params.log2_qp <= SECURITY_BOUNDS[params.n]
        assert tree_budgets(params, 2)[-1][1] >= 10


def test_bad_requirements_are_named() -> None:
    with pytest.raises(ValueError) as e:
        bfv.Params.choose(depth=30)
    text = str(e.value)
    assert "n=32768: refused, the chain needs log2(QP) = " in text
    assert "the largest depth that fits at 128-bit security is 26 (n=32768)" in text
    assert "n=65536 (bound 1747) would hold with a t = 1 mod 131072" in text
    with pytest.raises(ValueError, match=r"a ring of n=131072 or more would hold"):
        bfv.Params.choose(depth=60, t=786433, n=65536)
    with pytest.raises(ValueError, match="not a prime"):
        bfv.Params.choose(depth=1, t=65536)
    with pytest.raises(ValueError, match="not 1 mod 2n"):
        bfv.Params.choose(depth=1, t=65537, n=65536)
    with pytest.raises(TypeError, match="depth must be an int"):
        bgv.Params.choose(depth=1.5)
    with pytest.raises(ValueError, match="at least 0"):
        bgv.Params.choose(depth=-1)


def test_insecure_allows_beyond_the_bound() -> None:
    """``secure=False``: the smallest ring that holds the depth, marked insecure."""
    secure = bfv.Params.choose(depth=3)
    loose = bfv.Params.choose(depth=3, secure=False)
    assert loose.insecure and loose.n < secure.n and loose.log2_qp > SECURITY_BOUNDS[loose.n]
    small = bfv.Params.choose(depth=2, t=256, batching=False, secure=False, n=64)
    assert small.n == 64 and not small.batching
    x = np.arange(64) % 256
    with bfv.Context(small, seed=1) as ctx:
        c = ctx.encrypt(ctx.encode_coefficients(x))
        y = ((c * c) * (c * c)).realize()
        assert ctx.noise_budget(y) > 0


def test_chosen_parameters_are_plain_parameters() -> None:
    """What choose found is for ``explain`` only: not in equality, bytes or pickles."""
    chosen = bgv.Params.choose(depth=2)
    plain = bgv.Params(n=chosen.n, q_bits=chosen.q_bits, p_bits=chosen.p_bits, t=chosen.t)
    assert chosen == plain and hash(chosen) == hash(plain) and repr(chosen) == repr(plain)
    assert chosen.to_bytes() == plain.to_bytes() and pickle.dumps(chosen) == pickle.dumps(plain)
    assert plain.reasoning is None and chosen.reasoning is not None
    text = plain.explain()
    assert "depth  0" in text and "chosen" not in text
