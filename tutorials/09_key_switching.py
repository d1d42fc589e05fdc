# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Adding a key-switching technique
#
# Every relinearization and every rotation ends in a **key switch**: a ciphertext part `c` that
# decrypts under a secret `s'` (`s^2` after a product, `s(X^g)` after an automorphism) becomes a
# pair `(d_0, d_1)` with `d_0 + d_1 s = c s' + e`, `e` small. How `e` is kept small is the
# *technique*, and in Ren it is a part a context holds (`ctx.key_switcher`), chosen by the
# parameters (`key_switching="hybrid"` or `"bv"`). This notebook is the sibling of *Writing a
# backend*: it writes a technique from nothing and plugs it in, with Brakerski and
# Vaikuntanathan's switch (BV) as the worked example, and checks it step by step:
#
# 1. what a context holds: hybrid key switching, its digits and special moduli;
# 2. BV by hand: a key per ciphertext modulus, the residues of `c` as digits;
# 3. plugged into a BFV context: products and rotations exact against NumPy;
# 4. its noise, with Python integers: `d_0 + d_1 s - c s'`, against the bound;
# 5. Ren's own BV (`key_switching="bv"`) makes the same words;
# 6. smaller digits (`digit_bits`), in mixed radix;
# 7. what BV costs CKKS: precision beside hybrid's, and the report's key-switch box.

# %%
import html
import math
import re

import numpy as np

from ren import Poly
from ren.schemes import bfv, ckks
from ren.schemes.rlwe.keys import KeySwitchKey
from ren.schemes.rlwe.keyswitch import BV, Hybrid, KeySwitchMethod, products
from ren.viz.report import build_report
from ren.viz.trace import record

T = 257  # the plaintext modulus: a prime 1 mod 2n, so the slots batch
hybrid_params = bfv.Params(n=64, q_bits=(50, 50, 50), p_bits=(55, 55), t=T, insecure=True)
print(hybrid_params)

# %% [markdown]
# ## 1. What a context holds
#
# The default is hybrid key switching: `c`'s residues are cut into `dnum` digits (runs of
# ciphertext moduli), each extended to the special moduli `P` (ModUp), multiplied by the key's
# pair for that digit, and the sums are divided by `P` (ModDown), which divides the noise too. Its
# keys live over `P Q`, one pair per digit.

# %%
ctx = bfv.Context(hybrid_params, seed=1)
relin = ctx.evaluation_keys().relin
print(ctx.key_switcher)
print("pairs:", len(relin.parts), " digits:", hybrid_params.digits)
print("key ring:", [q.bit_length() for q in relin.parts[0][0].ring.moduli], "bits")
assert isinstance(ctx.key_switcher, Hybrid) and len(relin.parts) == hybrid_params.dnum == 3
assert relin.parts[0][0].ring == hybrid_params.key_ring  # P, then Q

# %% [markdown]
# In a notebook the context shows what it holds by name (the secret key, the relinearization
# key, the Galois elements of the rotation keys made so far) with their fingerprint, and its
# parameters; never a word of a key.

# %%
ctx

# %% [markdown]
# ## 2. BV by hand
#
# BV keeps no special modulus. With `T_i = (Q/q_i) [(Q/q_i)^-1]_{q_i}` (1 modulo `q_i`, 0
# modulo the others), its key holds one pair per ciphertext modulus,
# `(b_i, a_i) = (-a_i s + e_i + T_i s', a_i)`. A switch takes `c`'s residue modulo each `q_i`
# (a basis change from that modulus alone: its centered value, below `q_i / 2`) as digit `i`,
# and sums the digits times the pairs. Since `sum_i [c]_{q_i} T_i = c` modulo `Q`,
# `d_0 + d_1 s = c s' + sum_i [c]_{q_i} e_i`: nothing divides that noise.
#
# A technique is a subclass of `KeySwitchMethod` with three methods that only build graphs:
# `make_key`, `decompose` (the part that depends on `c` alone, which rotations of one ciphertext
# share: hoisting comes from interning) and `switch`. `products` is the sum both of Ren's
# techniques share.


# %%
class MyBV(KeySwitchMethod):
    """BV key switching, one digit per ciphertext modulus."""

    name = "my-bv"

    def make_key(self, secret, s_new, galois, uniform, error):
        prm = self.params
        K, Q = prm.key_ring, math.prod(prm.q_moduli)
        pairs = []
        for q in prm.q_moduli:
            T_i = (Q // q) * pow(Q // q, -1, q)
            a = uniform(K)
            e = error(K)
            b = -(a * secret) + e + s_new * T_i
            pairs.append((b.ntt(), a))
        return KeySwitchKey(galois, tuple(pairs))

    def decompose(self, c, level):
        ring = self.params.ring(level)
        c = c.intt()
        return [c.to_ring(ring.with_moduli((q,))).to_ring(ring).ntt() for q in ring.moduli]

    def switch(self, c, key, level, galois=None):
        return products(self.decompose(c, level), key, self.params.ring(level), galois)


# %% [markdown]
# ## 3. Plugged into a context
#
# BV's parameters have no special moduli: `key_switching="bv"` says so (and lets `p_bits` be
# empty). A context takes a technique before it makes its keys; here the context's own is
# replaced by `MyBV`, and a product, a product of three, and both kinds of rotation must decrypt
# to NumPy's integers mod `t` exactly.

# %%
bv_params = bfv.Params(n=64, q_bits=(50, 50, 50), t=T, insecure=True, key_switching="bv")
print(bv_params.p_bits, bv_params.key_ring == bv_params.ring(bv_params.max_level))

rng = np.random.default_rng(9)
x, y = rng.integers(0, T, 64), rng.integers(0, T, 64)
mine = bfv.Context(bv_params, seed=2)
mine.key_switcher = MyBV(bv_params)
with mine:
    cx, cy = bfv.encrypt(x), bfv.encrypt(y)
    product = bfv.decrypt(cx * cy)
    cube = bfv.decrypt(cx * cy * cx)
    rows = bfv.decrypt((cx * cy).rotate_rows(3)).reshape(2, 32)
    swapped = bfv.decrypt(cx.rotate_columns()).reshape(2, 32)
    budget = mine.noise_budget(cx * cy * cx)
print("x y     :", product[:8], "=", (x * y % T)[:8])
print("budget after x y x:", budget, "bits")
assert np.array_equal(product, x * y % T) and np.array_equal(cube, x * y % T * x % T)
assert np.array_equal(rows, np.roll((x * y % T).reshape(2, 32), -3, axis=1))
assert np.array_equal(swapped, x.reshape(2, 32)[::-1])
assert len(mine.evaluation_keys().relin.parts) == bv_params.L  # one pair per modulus

# %% [markdown]
# ## 4. The noise, with Python integers
#
# Switch a uniformly random `c` with the Galois key of `g = 5` at each level, and compute
# `d_0 + d_1 s - c(X^g) s(X^g)` as integers (centered modulo `Q_level`). It must be below the
# bound its digits give: each coefficient is a sum of `n (level + 1)` products of a digit (below
# `q_i / 2`) and a key error (a Gaussian of deviation 3.2, below `6 sigma` with overwhelming
# probability), so about `sqrt(n (level + 1)) 3.2 q_i / 2` in size, and at most
# `n (level + 1) 6 sigma q_i / 2`.

# %%
g = 5
key = mine.galois_key(g)
s = mine.keychain.require_secret("the noise check")
for level in range(bv_params.max_level, -1, -1):
    ring = bv_params.ring(level)
    c = Poly.uniform(ring, 7)
    d0, d1 = mine.key_switcher.switch(c, key, level, galois=g)
    sl = s.to_ring(ring)
    noise = (d0 + d1 * sl - c.automorphism(g) * sl.automorphism(g)).tolist(centered=True)
    worst = max(abs(v) for v in noise)
    typical = math.sqrt(64 * (level + 1)) * 3.2 * max(ring.moduli) / 2
    print(f"level {level}: |e| < 2^{math.log2(worst):.1f}, typical 2^{math.log2(typical):.1f}")
    assert worst < 64 * (level + 1) * 6 * 3.2 * max(ring.moduli) / 2
    assert worst > max(ring.moduli) / 4  # and it is q_i-sized: nothing divided it

# %% [markdown]
# ## 5. Ren's own BV makes the same words
#
# `key_switching="bv"` gives `ren.schemes.rlwe.keyswitch.BV`, which draws its keys in the same
# order as `MyBV`: a context of the same seed makes the same key, word for word, and the same
# switch.

# %%
theirs = bfv.Context(bv_params, seed=2)
assert type(theirs.key_switcher) is BV
ours_key, their_key = mine.evaluation_keys().relin, theirs.evaluation_keys().relin
for (b1, a1), (b2, a2) in zip(ours_key.parts, their_key.parts, strict=True):
    assert np.array_equal(b1.limbs(), b2.limbs()) and np.array_equal(a1.limbs(), a2.limbs())
c = Poly.uniform(bv_params.ring(2), 11)
for u, v in zip(
    mine.key_switcher.switch(c, ours_key, 2),
    theirs.key_switcher.switch(c, their_key, 2),
    strict=True,
):
    assert np.array_equal(u.limbs(), v.limbs())
print("same key words, same switch:", True)

# %% [markdown]
# ## 6. Smaller digits
#
# The noise grows with the digits' size. `digit_bits` writes a residue `r` of a larger modulus
# in mixed radix over primes `p_0, p_1, ...` below `2^digit_bits` (each `1 mod 2n`, so a ring of
# its own): `d_0 = [r]_{p_0}` centered (a basis change), `r_1 = round(r / p_0)` (a rescale,
# exact: `r = d_0 + p_0 r_1`), and so on. A digit of weight `p_0 ... p_{k-1}` gets that weight
# in its key. More digits, more key pairs, less noise; every backend runs them with the kernels
# it has.

# %%
small = bfv.Params(n=64, q_bits=(50, 50, 50), t=T, insecure=True, key_switching="bv", digit_bits=20)
primes = small.bv_digits[0]
print("digit primes of q_0:", primes, " key pairs:", small.key_parts)
r = -123456789012345  # a centered residue modulo q_0
digits, rest = [], r
for p in primes[:-1]:
    d = (rest + p // 2) % p - p // 2  # centered residue
    digits.append(d)
    rest = (rest - d) // p  # exact: round(rest / p)
digits.append(rest)
weights = [math.prod(primes[:k]) for k in range(len(primes))]
print("digits:", digits)
assert sum(d * w for d, w in zip(digits, weights, strict=True)) == r
assert all(abs(d) <= p // 2 + 1 for d, p in zip(digits, primes, strict=True))
with bfv.Context(small, seed=3) as ctx3:
    assert np.array_equal(bfv.decrypt(bfv.encrypt(x) * bfv.encrypt(y)), x * y % T)

# %% [markdown]
# ## 7. What BV costs CKKS
#
# A CKKS product is relinearized before its rescale, which divides the switch's noise by the
# last modulus: with 40-bit digits BV keeps the product's precision. A rotation has no rescale
# after it: the switch's noise stays against the scale `2^40`. And with no `P`, encryption's own
# noise is not divided either. Set a (`n = 8192`, `q` of 60, 40, 40 bits), values in the unit
# disk, bits of precision against NumPy:

# %%
z = np.exp(2j * np.pi * np.linspace(0, 1, 4096)) * np.linspace(0, 1, 4096)
w = np.conj(z[::-1])
bits = {}
for name, kw in (("hybrid", {}), ("bv", {"key_switching": "bv", "digit_bits": 40})):
    with ckks.Context(ckks.Params(n=8192, q_bits=(60, 40, 40), **kw), seed=5) as cctx:
        cctx.rotation_key(1)
        a, b = ckks.encrypt(z), ckks.encrypt(w)
        bits[name] = {
            "fresh": ckks.precision_bits(ckks.decrypt(a), z),
            "multiply": ckks.precision_bits(ckks.decrypt(a * b), z * w),
            "rotate": ckks.precision_bits(ckks.decrypt(a.rotate(1)), np.roll(z, -1)),
        }
for name, row in bits.items():
    print(f"{name:>6}: " + ", ".join(f"{k} {v:5.1f}" for k, v in row.items()))
assert bits["hybrid"]["multiply"] > 24 and bits["bv"]["multiply"] > bits["bv"]["fresh"] - 1.5
assert bits["bv"]["fresh"] < bits["hybrid"]["fresh"] - 2  # no P to divide encryption's noise
assert bits["bv"]["rotate"] < 0  # the rotation's noise is above the scale: the slots are lost

# %% [markdown]
# The report's `key_switch` box names the technique and its digits, so two runs of one program
# under two techniques can be told apart (`python -m ren.viz` writes the same page).

# %%
tiny = ckks.Params(n=64, q_bits=(60, 40, 40), scale_bits=40, insecure=True, key_switching="bv")
with ckks.Context(tiny, seed=6), record() as trace:
    (ckks.encrypt([0.5]) * ckks.encrypt([0.25])).realize()
page = html.unescape(build_report(trace, "a BV product", times=False))
lines = re.findall(r"\w+ key switching \u00b7 \d+ digits?", page)
print(lines)
assert lines == ["bv key switching \u00b7 3 digits"]  # one relinearization, 3 moduli
