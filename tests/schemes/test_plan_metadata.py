"""A loaded plan checks its values' metadata as ``ren.jit`` keys it: scale, level, correction, keys.

In-process, a ciphertext at another scale, with another correction or under other keys captures
another plan; a loaded plan cannot, so it refuses such a value, naming it. Oracles: plaintext
NumPy with a precision in bits (CKKS), the exact slots mod ``t`` (BGV), and the in-process
jitted function's result (its scale, level and correction).
"""

from __future__ import annotations

import numpy as np
import pytest

import ren
from ren.schemes import bgv, ckks
from tests.schemes.integer_cases import T, small, values

PARAMS = ckks.Params(n=16, q_bits=(30, 25, 25), p_bits=(30,), scale_bits=25, insecure=True)
V = np.linspace(-1, 1, PARAMS.slots)


def mul(a, b):
    return a * b


@pytest.fixture
def ckks_plan(tmp_path):
    """A CKKS multiply saved in the context of seed 1, that context and the in-process result."""
    with ckks.Context(PARAMS, seed=1) as ctx:
        f = ren.jit(mul)
        x, y = ckks.encrypt(V), ckks.encrypt(V)
        path = f.export(tmp_path / "mul.renplan", x, y, stored={"keys": ctx.evaluation_keys()})
        mine = f(x, y)
    return path, ctx, mine


def test_a_ckks_input_at_another_scale_is_refused(ckks_plan):
    path, ctx, mine = ckks_plan
    with ctx:
        loaded = ren.load(path, stored={"keys": ctx.evaluation_keys()})
        out = loaded(ckks.encrypt(V), ckks.encrypt(0.5 * V))  # the scale it was saved for
        assert (out.scale, out.level, out.real) == (mine.scale, mine.level, mine.real)
        assert ckks.precision_bits(ckks.decrypt(out), 0.5 * V * V) > 12
        other = ckks.encrypt(V, scale=2.0**20)
        with pytest.raises(ValueError, match=r"input a of mul .* has scale 1048576\.0 \(float\); "):
            loaded(other, ckks.encrypt(V))
        with pytest.raises(ValueError, match=r"saved for scale 33554432\.0 \(float\)"):
            loaded(other, ckks.encrypt(V))


def test_foreign_evaluation_keys_given_as_stored_are_refused(ckks_plan):
    path, ctx, _ = ckks_plan
    other = ckks.Context(PARAMS, seed=2)
    with ctx, pytest.raises(ValueError, match=r"result\.key_fingerprint .* stored input keys"):
        ren.load(path, stored={"keys": other.evaluation_keys()})  # results would claim ctx's
    loaded = ren.load(path, stored={"keys": other.evaluation_keys()})  # no context active
    with ctx:
        x, y = ckks.encrypt(V), ckks.encrypt(V)
    fp = ctx.key_fingerprint
    pattern = rf"input a\.key_fingerprint of mul .* is {fp}; .* stored input keys, which is "
    with pytest.raises(ValueError, match=pattern + other.key_fingerprint):
        loaded(x, y)
    with other:  # the keys' own context: the same plan file, their ciphertexts
        loaded = ren.load(path, stored={"keys": other.evaluation_keys()})
        out = loaded(ckks.encrypt(V), ckks.encrypt(V))
        assert out.key_fingerprint == other.key_fingerprint
        assert ckks.precision_bits(ckks.decrypt(out), V * V) > 12
        with pytest.raises(ValueError, match=r"input b\.key_fingerprint"):
            loaded(ckks.encrypt(V), y)


def test_two_inputs_under_other_keys_are_refused_without_stored_keys(tmp_path):
    with ckks.Context(PARAMS, seed=1) as ctx:
        f = ren.jit(lambda a, b: a + b)
        path = f.export(tmp_path / "add.renplan", ckks.encrypt(V), ckks.encrypt(V))
        x, x2 = ckks.encrypt(V), ckks.encrypt(V)
    loaded = ren.load(path)  # no stored keys, no context: each call's first input fixes them
    with ckks.Context(PARAMS, seed=2):
        y, y2 = ckks.encrypt(V), ckks.encrypt(V)
        assert ckks.precision_bits(ckks.decrypt(loaded(y, y2)), 2 * V) > 12
    with pytest.raises(ValueError, match=r"input b\.key_fingerprint .* input a\.key_fingerprint"):
        loaded(x, y)
    assert ckks.precision_bits(ctx.decrypt(loaded(x, x2)), 2 * V) > 12


def test_a_bgv_input_with_another_correction_is_refused(tmp_path):
    a, b = values(3), values(4)
    with bgv.Context(small(bgv), seed=4) as ctx:
        xs, ys = bgv.mod_switch(ctx.encrypt(a)), bgv.mod_switch(ctx.encrypt(b))
        f = ren.jit(lambda u, w: u + w)
        path = f.export(tmp_path / "add.renplan", xs, ys, stored={"keys": ctx.evaluation_keys()})
        mine = f(xs, ys)
        loaded = ren.load(path, stored={"keys": ctx.evaluation_keys()})
        out = loaded(xs, ys)  # the correction it was saved for
        assert (out.level, out.correction) == (mine.level, mine.correction) == (1, xs.correction)
        assert np.array_equal(ctx.decrypt(out), (a + b) % T)
        z = xs * ys  # level 1 as well, correction f^2
        assert z.level == 1 and z.correction != xs.correction
        with pytest.raises(
            ValueError,
            match=rf"input u of .*<lambda> .* has correction {z.correction} \(int\); the plan was "
            rf"saved for correction {xs.correction} \(int\)",
        ):
            loaded(z, ys)
        assert np.array_equal(ctx.decrypt(f(z, ys)), (a * b + b) % T)  # in-process: captures


def test_a_loaded_result_carries_the_metadata_it_was_saved_with(tmp_path):
    with ckks.Context(PARAMS, seed=1) as ctx:
        f = ren.jit(lambda a, b: (a * b).rotate(1))
        x, y = ckks.encrypt(V), ckks.encrypt(V)
        ctx.rotation_key(1)
        path = f.export(tmp_path / "r.renplan", x, y, stored={"keys": ctx.evaluation_keys()})
        mine = f(x, y)
        out = ren.load(path, stored={"keys": ctx.evaluation_keys()})(x, y)
        assert (out.scale, out.level, out.real) == (mine.scale, mine.level, mine.real)
        assert out.key_fingerprint == mine.key_fingerprint == ctx.key_fingerprint
        assert ckks.precision_bits(ckks.decrypt(out), np.roll(V * V, -1)) > 12


@pytest.mark.parametrize("kw", [{}, {"digit_bits": 20}], ids=["rns-digits", "digit_bits=20"])
def test_a_saved_bgv_plan_keeps_bv_key_switching(tmp_path, kw):
    """A plan saved under BV parameters loads with them, refuses hybrid keys, replays exactly."""
    params = small(bgv, key_switching="bv", p_bits=(), **kw)
    a, b = values(71), values(72)
    with bgv.Context(params, seed=71) as ctx:
        f = ren.jit(lambda u, v: (u * v).rotate_rows(1))
        x, y = ctx.encrypt(a), ctx.encrypt(b)
        ctx.galois_key(3)
        keys = ctx.evaluation_keys()
        path = f.export(tmp_path / "bv.renplan", x, y, stored={"keys": keys})
        plan = ren.load(path, stored={"keys": keys})
        want = np.roll((a * b % T).reshape(2, -1), -1, axis=1).reshape(-1)
        assert np.array_equal(ctx.decrypt(plan(x, y)), want)
    with bgv.Context(small(bgv), seed=71) as hybrid:  # hybrid keys live over P Q: refused
        hybrid.galois_key(3)
        # with digits, BV's keys have more pairs than hybrid's: those are missing, named
        refused = r"keys\.galois\[3\]\[0\]\.a is in ring .* the plan|reads the stored inputs"
        with pytest.raises(ValueError, match=refused):
            ren.load(path, stored={"keys": hybrid.evaluation_keys()})
