"""Key switching is a part a context holds: hybrid by default, and another technique plugs in.

Oracles: NumPy's integer arithmetic mod ``t`` for BFV and BGV products and rotations switched by
a technique written here (one digit per ciphertext modulus, no special modulus: BV key switching
without a digit size), and the big-integer identity ``d_0 + d_1 s = c s' + e`` with ``e`` small
for the switch itself.
"""

from __future__ import annotations

import math

import numpy as np

from ren.poly import Poly
from ren.schemes import bfv, bgv, ckks
from ren.schemes.rlwe.keys import KeySwitchKey
from ren.schemes.rlwe.keyswitch import Hybrid, KeySwitchMethod, key_switcher
from tests.schemes.integer_cases import N, T, rows, small, values


class OneLimbDigits(KeySwitchMethod):
    """BV key switching without a digit size: digit ``i`` is ``c mod q_i``, no special modulus.

    The key for modulus ``q_i`` is ``(-a_i s + e_i + T_i s', a_i)`` over the ciphertext ring,
    ``T_i`` being 1 modulo ``q_i`` and 0 modulo the others; a switch sums each digit, extended
    to the level's moduli, times its key. The noise is about ``q_i`` times the key's error, which
    BFV and BGV at these moduli leave far below ``Q / t``.
    """

    name = "one-limb-digits"

    def __init__(self, params) -> None:
        super().__init__(params)
        self.decomposed: list[int] = []  # the level of each decomposition built

    def make_key(self, secret, s_new, galois, uniform, error) -> KeySwitchKey:
        prm = self.params
        ring = prm.ring(prm.max_level)
        Q = ring.Q
        s, s2 = secret.to_ring(ring), s_new.to_ring(ring)
        pairs = []
        for q in ring.moduli:
            T_i = (Q // q) * pow(Q // q, -1, q)
            a = uniform(ring)
            b = -(a * s) + error(ring) + s2 * (T_i % Q)
            pairs.append((b.ntt(), a))
        return KeySwitchKey(galois, tuple(pairs))

    def decompose(self, c: Poly, level: int) -> list[Poly]:
        self.decomposed.append(level)
        ring = self.params.ring(level)
        c = c.intt()
        return [c.to_ring(ring.with_moduli((q,))).to_ring(ring).ntt() for q in ring.moduli]

    def switch(self, c, key, level, galois=None):
        ring = self.params.ring(level)
        acc0 = acc1 = None
        for up, (b, a) in zip(self.decompose(c, level), key.parts, strict=False):
            if galois is not None:
                up = up.automorphism(galois)
            t0, t1 = up * b.to_ring(ring), up * a.to_ring(ring)
            acc0 = t0 if acc0 is None else acc0 + t0
            acc1 = t1 if acc1 is None else acc1 + t1
        return acc0, acc1


def test_every_context_holds_hybrid_key_switching_as_a_member():
    params = {
        ckks: ckks.Params(n=16, q_bits=(40, 30), p_bits=(45,), scale_bits=30, insecure=True),
        bfv: small(bfv),
        bgv: small(bgv),
    }
    for scheme, prm in params.items():
        ctx = scheme.Context(prm, seed=1)
        assert isinstance(ctx.key_switcher, Hybrid) and ctx.key_switcher.name == "hybrid"
        assert ctx.key_switcher.params is prm
        assert not any(issubclass(base, KeySwitchMethod) for base in type(ctx).__mro__)
        assert type(key_switcher(prm)) is Hybrid


def test_another_technique_switches_relinearizations_and_rotations(scheme):
    """Installed before the keys are made, the technique makes every key and every switch."""
    ctx = scheme.Context(small(scheme), seed=21)
    ctx.key_switcher = OneLimbDigits(ctx.params)
    with ctx:
        relin = ctx._require_public()[1]
        assert len(relin.parts) == ctx.params.L  # one pair per modulus, no special modulus
        assert relin.parts[0][0].ring == ctx.params.ring(ctx.params.max_level)
        a, b = values(21), values(22)
        x, y = ctx.encrypt(a), ctx.encrypt(b)
        assert np.array_equal(ctx.decrypt(x * y), (a * b) % T)
        want = np.roll(rows(a * b % T), -3, axis=1).reshape(-1)
        assert np.array_equal(ctx.decrypt((x * y).rotate_rows(3)), want)
        assert np.array_equal(ctx.decrypt(x.rotate_columns()), rows(a)[::-1].reshape(-1))
        assert np.array_equal(ctx.decrypt(x * y * x), (a * b % T) * a % T)
    assert ctx.key_switcher.decomposed  # the products and rotations went through it


def test_the_switch_is_c_times_the_new_secret_as_big_integers():
    params = small(bfv)
    ctx = bfv.Context(params, seed=23)
    ctx.key_switcher = OneLimbDigits(params)
    with ctx:
        g = 3
        key = ctx.galois_key(g)
        s = ctx._secret
        for level in range(params.max_level, 0, -1):  # at level 0 the noise is about q_0 itself
            ring = params.ring(level)
            u = Poly.uniform(ring, 5)
            d0, d1 = ctx.key_switcher.switch(u, key, level)
            err = (d0 + d1 * s.to_ring(ring) - u * s.automorphism(g).to_ring(ring)).tolist(
                centered=True
            )
            bound = math.isqrt(N) * 8 * 4 * sum(ring.moduli)  # sqrt(n) 6 sigma q_i / 2 per digit
            assert bound < ring.Q // (2 * T)  # a bound that means something: BFV removes Q/2t
            assert max(abs(e) for e in err) < bound, level
