"""CKKS regions and plaintext shadows: what the report groups by and measures precision against.

Oracles: the program's own operations (which regions each one must build in), each ciphertext's
own level and scale (what a region notes), and plaintext NumPy on the values encrypted (what a
shadow must hold: the same operations without noise).
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from ren.engine.realize import prepare
from ren.ir.region import keeping
from ren.schemes import ckks

N = 64
PARAMS = ckks.Params(n=N, q_bits=(60, 40, 40, 40), p_bits=(60,), scale_bits=40, insecure=True)
KEY_SWITCH = {("key_switch", step) for step in ("mod_up", "products", "mod_down")}


@pytest.fixture
def ctx():
    with ckks.Context(PARAMS, seed=3) as c:
        c.rotation_key(3)
        yield c


def values(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, N // 2) + 1j * rng.uniform(-1, 1, N // 2)


def kernel_regions(*cts) -> set[tuple[str, ...]]:
    prepared = prepare(tuple(p.node for ct in cts for p in ct.parts))
    prepared.run()
    return {tuple(k.region) for k in prepared.kernels}


def test_each_operation_builds_in_its_region(ctx):
    a, b = ckks.encrypt(values(1)).realize(), ckks.encrypt(values(2)).realize()
    got = kernel_regions(a * b)
    assert {("multiply", "relinearize", *s) for s in KEY_SWITCH} <= got
    assert ("multiply", "rescale") in got
    assert ("multiply",) in got  # the tensor product, the multiply's own kernels
    got = kernel_regions(a.rotate(3), a.conjugate())
    assert {("rotate", *s) for s in KEY_SWITCH} <= got
    assert {("conjugate", *s) for s in KEY_SWITCH} | {("rotate", *s) for s in KEY_SWITCH} >= {
        r for r in got if "key_switch" in r
    }
    assert ("encrypt",) in kernel_regions(ckks.encrypt(values(3)))


def test_a_region_notes_level_and_scale_in_and_out(ctx):
    a, b = ckks.encrypt(values(1)), ckks.encrypt(values(2))
    out = a * b
    path = out.parts[0].node.__dict__["_region"]  # the rescale's node, inside the multiply
    multiply, rescale = path.instances[0], path.instances[-1]
    assert (multiply.name, rescale.name) == ("multiply", "rescale")
    assert multiply.notes == {
        "level_in": a.level,
        "scale_in": a.scale,
        "level_out": out.level,
        "scale_out": out.scale,
    }
    assert rescale.notes["level_in"] == a.level and rescale.notes["level_out"] == out.level
    assert "output" not in multiply.notes  # kept only under keeping() (ren.viz.record)


def expected_of(ct) -> np.ndarray:
    return ct.shadow.value() / ct.scale


def test_shadows_follow_every_operation(ctx):
    x, y = values(1), values(2)
    with keeping():
        a, b = ckks.encrypt(x), ckks.encrypt(y)
        pt = ctx.encode(y, a.level, a.scale)
        cases = {
            "add": (a + b, x + y),
            "sub": (a - b, x - y),
            "neg": (-a, -x),
            "multiply": (a * b, x * y),
            "no rescale": (ckks.multiply(a, b, rescale=False), x * y),
            "plain": (ckks.multiply(a, pt), x * y),
            "add plain": (a + pt, x + y),
            "number": (a * 2.5, 2.5 * x),
            "int": (a * 3, 3 * x),
            "add number": (a + 1.5, x + 1.5),
            "rotate": (a.rotate(3), np.roll(x, -3)),
            "conjugate": (a.conjugate(), np.conj(x)),
            "at level": (a.at_level(1), x),
            "mixed levels": ((a * b) + a, x * y + x),
            "chain": ((a * b * a).rotate(3) - b, np.roll(x * y * x, -3) - y),
        }
        for name, (ct, want) in cases.items():
            assert ct.shadow is not None, name
            # the shadow is the plaintext computation: its error is the encoding's (2^-40 scale)
            assert ckks.precision_bits(expected_of(ct), want) > 30, name
            # and the ciphertext decrypts near it
            assert ckks.precision_bits(ctx.decrypt(ct), expected_of(ct)) > 20, name


def test_shadows_only_while_kept_and_never_leave(ctx):
    assert ckks.encrypt(values(1)).shadow is None  # not recording: no shadow is made
    with keeping():
        ct = ckks.encrypt(values(1)).realize()
    assert ct.shadow is not None
    assert pickle.loads(pickle.dumps(ct)).shadow is None  # pickled as its bytes
    bare = ckks.Ciphertext.from_bytes(ct.to_bytes())
    assert bare.shadow is None
    assert "shadow" not in repr(ct)
    public = ckks.Context(PARAMS, keys=ctx.evaluation_keys())  # no secret key: no shadow
    with public, keeping():
        assert public.encrypt(values(1)).shadow is None


def test_modraise_shadow_is_the_exact_decryption(ctx):
    from ren.circuits.ckks.modraise import mod_raise

    with keeping():
        ct = ckks.encrypt(values(1)).at_level(0)
        raised = mod_raise(ct)
    exact = ctx.decrypt_poly(raised).intt().tolist(centered=True)
    assert raised.level == PARAMS.max_level
    want = ckks.embed(np.array(exact, dtype=float), N)  # t + q_0 I, slots times the scale
    assert np.allclose(raised.shadow.value(), want, rtol=0, atol=1e-3)
