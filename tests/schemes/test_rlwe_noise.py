"""The RLWE noise variances (``ren.schemes.rlwe.noise``) against the noise a decryption shows.

The oracle: the secret key's decryption of an encryption (and of its rotation) minus the exact
message, as Python integers (``Poly.tolist``), whose sample variance over ``n`` coefficients
must be within 15% of the formula (a sample of 4096 draws of a variance errs by about
``sqrt(2 / 4096)``, 2%: the margin is the model's, not the sample's).
"""

from __future__ import annotations

import numpy as np
import pytest

from ren.schemes import ckks
from ren.schemes.ckks.encoding import embed_inverse
from ren.schemes.rlwe import noise

CHAINS = {
    "hybrid": dict(n=4096, q_bits=(36, 30), p_bits=(36,)),
    "hybrid-dnum": dict(n=4096, q_bits=(28, 25, 25), p_bits=(30,), dnum=3),
    "bv": dict(n=4096, q_bits=(40, 30, 30), key_switching="bv"),
    "bv-digits": dict(n=4096, q_bits=(36, 30, 30), key_switching="bv", digit_bits=20),
    "sparse": dict(n=4096, q_bits=(36, 30), p_bits=(36,), hamming_weight=64, insecure=True),
}


def _noise(ctx: ckks.Context, ct: ckks.Ciphertext, slots: np.ndarray) -> np.ndarray:
    """The decryption's coefficients minus the encoded message's (exact), as floats."""
    words = ctx.decrypt_poly(ct).intt().tolist(centered=True)
    got = np.array(words, dtype=object).astype(np.float64)
    return got - embed_inverse(slots * ct.scale, ctx.params.n)


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_fresh_and_key_switch_variances_match_a_decryption(name: str) -> None:
    params = ckks.Params(**CHAINS[name], scale_bits=20)
    ctx = ckks.Context(params, seed=3, device="cpu")
    ctx.keygen()
    values = np.random.default_rng(4).uniform(-1, 1, params.slots)
    ct = ctx.encrypt(values)
    fresh = noise.fresh_variance(params) + 1 / 12  # and the encoding's rounding
    assert _noise(ctx, ct, values).var() == pytest.approx(fresh, rel=0.15)
    rotated = _noise(ctx, ct.rotate(1), np.roll(values, -1)).var()
    assert rotated == pytest.approx(fresh + noise.key_switch_variance(params, ct.level), rel=0.15)


def test_digit_sizes_follow_the_technique() -> None:
    hybrid = ckks.Params(**CHAINS["hybrid-dnum"], scale_bits=20)
    assert noise.digit_sizes(hybrid, 1) == hybrid.q_moduli[:2]
    bv = ckks.Params(**CHAINS["bv-digits"], scale_bits=20)
    sizes = noise.digit_sizes(bv, 0)
    assert len(sizes) == max(1, len(bv.bv_digits[0]))
    assert np.prod([float(s) for s in sizes]) >= bv.q_moduli[0]  # the digits cover the residue
    assert noise.secret_weight(ckks.Params(**CHAINS["sparse"], scale_bits=20)) == 64
    assert noise.secret_weight(hybrid) == pytest.approx(2 * 4096 / 3)
