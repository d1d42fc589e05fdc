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
# # Integers with BFV and BGV
#
# BFV and BGV encrypt vectors of integers modulo a plaintext modulus `t` and compute on them
# exactly: every result equals what NumPy gives modulo `t`, as long as the *noise budget* lasts.
# This notebook computes with Ren's `ren.schemes.bfv` and `ren.schemes.bgv`, checks every value
# it decrypts against NumPy, and watches the noise budget:
#
# 1. parameters, and a batch of `n` integers mod `t` in one ciphertext (two rows of `n/2`);
# 2. the polynomial `p(x) = 3x^3 - 5x + 7` over the whole batch with Horner's rule, watching the
#    noise budget after each multiplication;
# 3. the dot product of two encrypted vectors: a product, then rotations that sum the slots;
# 4. the same polynomial in BGV, with a modulus switch after each multiplication, and the two
#    schemes' noise side by side;
# 5. what happens when the budget runs out.
#
# The parameters are Microsoft SEAL's default for `n = 8192`: 128-bit secure by the Homomorphic
# Encryption Standard, and still only seconds on the `python` backend. The guide
# `docs/guides/bfv-bgv.md` describes the schemes themselves.

# %%
import math

import numpy as np

from ren.schemes import bfv, bgv

# %% [markdown]
# ## 1. Parameters and encryption
#
# Ciphertexts are pairs of polynomials in `Z_Q[X]/(X^n + 1)`, and `Q` is a product of four primes
# (`q_bits`); the special prime `p_0` (`p_bits`) is used only inside key switching. `t = 65537`
# is a prime `= 1 (mod 2n)`, so `Z_t[X]/(X^n + 1)` splits into `n` copies of `Z_t`: a plaintext
# holds `n` integers mod `t` in its *slots* (*batching*). Together the moduli have 218 bits, the
# most the HE standard allows at `n = 8192` for 128-bit security, so `Params` accepts them
# without `insecure=True`.

# %%
params = bfv.Params(n=8192, q_bits=(43, 43, 44, 44), p_bits=(44,), t=65537)
n, t = params.n, params.t
Q = math.prod(params.q_moduli)
print(params)
print("batching:", params.batching, f"| log2(QP) = {params.log2_qp:.1f}")
print("Q has", Q.bit_length(), "bits; t has", t.bit_length())

assert params.batching and t % (2 * n) == 1 and pow(3, t - 1, t) == 1  # t: prime, 1 mod 2n
assert [q.bit_length() for q in params.q_moduli + params.p_moduli] == [43, 43, 44, 44, 44]
assert round(math.log2(math.prod(params.q_moduli + params.p_moduli)), 1) == 218.0
assert Q.bit_length() == 174 and t.bit_length() == 17

# %% [markdown]
# In a notebook the parameters show the chain, `log2 QP` against the standard's bound at this
# `n`, and `t`:

# %%
params

# %% [markdown]
# Encrypting takes `n` integers (fewer: the rest are 0) and reduces them mod `t`. `decrypt`
# gives them back in `[0, t)`, so a negative value `v` comes back as `t + v`; reading the values
# above `t/2` as negative (`signed` below) undoes that while `|v| < t/2`.
#
# The context makes the keys when the `with` block is entered: a secret key, a public key and a
# relinearization key. `seed=1` makes every random draw reproducible. Ren is lazy: `a * b`
# builds a graph and nothing runs until a value is needed. `.realize()` computes a ciphertext
# now; the cells below call it on each intermediate value they look at twice (its noise budget
# and its decryption), so that neither recomputes it.


# %%
def signed(values: np.ndarray) -> np.ndarray:
    """Values mod t read in (-t/2, t/2]."""
    return np.where(values > t // 2, values - t, values)


rng = np.random.default_rng(2024)
x = rng.integers(-20, 21, n)  # n integers in [-20, 20]

ctx = bfv.Context(params, seed=1)
with ctx:
    ct = bfv.encrypt(x).realize()
    back = bfv.decrypt(ct)
print(ct)
print("x        :", x[:8])
print("decrypted:", back[:8])
print("signed   :", signed(back)[:8])
assert (ct.level, ct.size) == (params.max_level, 2) == (3, 2)
assert np.array_equal(back, x % t) and np.array_equal(signed(back), x)

# %% [markdown]
# The `n` slots form a matrix of two rows of `n/2`, as in SEAL's `BatchEncoder`: slot `r n/2 + j`
# is row `r`, column `j`. `ct.rotate_rows(k)` moves every column `k` steps to the left, in both
# rows at once (the automorphism `X -> X^(3^k)`), and `ct.rotate_columns()` swaps the two rows
# (`X -> X^(2n - 1)`). Each is a key switch with a Galois key, made on first use.

# %%
with ctx:
    left = bfv.decrypt(ct.rotate_rows(1)).reshape(2, n // 2)
    swapped = bfv.decrypt(ct.rotate_columns()).reshape(2, n // 2)
matrix = signed(back).reshape(2, n // 2)
print("slots       :", matrix[:, :6].tolist())
print("rotate_rows :", signed(left)[:, :6].tolist())
print("rotate_cols :", signed(swapped)[:, :6].tolist())
assert np.array_equal(signed(left), np.roll(matrix, -1, axis=1))
assert np.array_equal(signed(swapped), matrix[::-1])

# %% [markdown]
# ## 2. A polynomial, and the noise budget
#
# A BFV ciphertext decrypts as `c_0 + c_1 s = round(Q m / t) + e`: the message `m` in the high
# bits, a small noise `e` in the low ones. Decryption rounds the noise away while it is small
# enough, and `ctx.noise_budget(ct)` says how many bits it has left to grow (as SEAL's
# `invariant_noise_budget`; it needs the secret key). A fresh ciphertext has about
# `log2(Q / t)` bits less the noise of encryption.
#
# Horner's rule writes `p(x) = 3x^3 - 5x + 7` as `((3x) x - 5) x + 7`: two products of
# ciphertexts, one after the other (*depth 2*). Multiplying by the integer 3 and adding or
# subtracting integers are cheap: they act on every slot at once, without a second ciphertext.
# (With powers, `x2 = x * x`, `x3 = x2 * x`, then `3 x3 - 5 x + 7`, the depth is also 2.)

# %%
want = (3 * x**3 - 5 * x + 7) % t  # NumPy, on int64: |3 x^3| <= 24000, no overflow
steps = {}
with ctx:
    steps["x"] = ct
    steps["3x"] = y = 3 * ct
    steps["3x * x"] = y = (y * ct).realize()
    steps["3x^2 - 5"] = y = y - 5
    steps["(3x^2 - 5) * x"] = y = (y * ct).realize()
    steps["3x^3 - 5x + 7"] = y = (y + 7).realize()
    bfv_budget = {name: ctx.noise_budget(c) for name, c in steps.items()}
    got = bfv.decrypt(y)

for name, bits in bfv_budget.items():
    print(f"{name:16} {bits:4d} bits")
print("p(x) decrypted:", signed(got)[:8])
print("p(x) by NumPy :", (3 * x**3 - 5 * x + 7)[:8])
assert np.array_equal(got, want)
# |p(x)| <= 24107 < t/2 for |x| <= 20: the signed values are p(x) itself, not just mod t
assert np.array_equal(signed(got), 3 * x**3 - 5 * x + 7)

# %% [markdown]
# The last step before it was realized is still a graph. Its display gives what the noise model
# predicts for it without running it or decrypting: its level, `t`, and the noise budget it
# will have left (`bfv.predicted_noise_budget`, a bound: a little below what `noise_budget`
# measures with the secret key).

# %%
with ctx:
    lazy = steps["(3x^2 - 5) * x"] + 7
lazy

# %% [markdown]
# Each product of two ciphertexts costs about `log2(n t)` bits (here 13 + 17 = 30, a little less
# in practice): the product's noise is the inputs' noise times about `n t`. The scalar 3
# multiplies the noise by 3 (about 2 bits), and adding an integer adds no noise at all.

# %%
cost = {
    "3x": bfv_budget["x"] - bfv_budget["3x"],
    "first product": bfv_budget["3x"] - bfv_budget["3x * x"],
    "second product": bfv_budget["3x^2 - 5"] - bfv_budget["(3x^2 - 5) * x"],
    "+ 7": bfv_budget["(3x^2 - 5) * x"] - bfv_budget["3x^3 - 5x + 7"],
}
print("bits used:", cost)
assert 140 <= bfv_budget["x"] <= Q.bit_length() - t.bit_length()
assert 0 <= cost["3x"] <= 2 and cost["+ 7"] == 0
assert 20 <= cost["first product"] <= 32 and 20 <= cost["second product"] <= 32

# %% [markdown]
# ## 3. A dot product
#
# The dot product of two encrypted vectors `u` and `w` is one product, `u * w` slot by slot,
# then the sum of its `n` slots. Rotations add the slots together: after
# `s = s + s.rotate_rows(k)` for `k = 1, 2, 4, ..., n/4`, every column of a row holds the sum of
# that row (each step doubles the number of slots summed, `log2(n/2) = 12` steps), and one
# `s + s.rotate_columns()` adds the two rows. Every slot then holds the whole sum.
#
# The entries are in `[0, 3)`, so the dot product is at most `4n = 32768 < t`: the result is the
# integer itself. With larger entries it would be the dot product mod `t`.

# %%
u = rng.integers(0, 3, n)
w = rng.integers(0, 3, n)
with ctx:
    s = (bfv.encrypt(u) * bfv.encrypt(w)).realize()
    budget_product = ctx.noise_budget(s)
    assert np.array_equal(bfv.decrypt(s), u * w % t)
    k = 1
    while k < n // 2:
        s = (s + s.rotate_rows(k)).realize()
        k *= 2
    rows = bfv.decrypt(s).reshape(2, n // 2)
    budget_rows = ctx.noise_budget(s)
    total = (s + s.rotate_columns()).realize()
    got = bfv.decrypt(total)
    budget_total = ctx.noise_budget(total)

row_sums = (u * w).reshape(2, n // 2).sum(axis=1)
dot = int(np.dot(u, w))
print("row sums (every column):", rows[:, 0].tolist(), "| NumPy:", row_sums.tolist())
print("every slot:", got[:4], "... | NumPy's u . w =", dot)
print(f"budget: {budget_product} bits after u * w, {budget_rows} after the row rotations,")
print(f"        {budget_total} after rotate_columns")
assert np.array_equal(rows, np.repeat(row_sums[:, None] % t, n // 2, axis=1))
assert dot < t and np.array_equal(got, np.full(n, dot))
assert 0 < budget_product - budget_rows <= 12 and abs(budget_total - budget_rows) <= 3

# %% [markdown]
# The thirteen rotations cost about 10 bits between them, less than one product: each adds the
# noise of its key switch, which is small, and a sum of two ciphertexts at most doubles the noise
# (one bit).
#
# A vector whose slots all hold the same value is the constant polynomial: the coefficients of
# the decrypted message are the dot product and `n - 1` zeros.

# %%
with ctx:
    coefficients = bfv.decrypt(total, coefficients=True)
print("message coefficients:", coefficients[:6], "...")
assert coefficients[0] == dot and not coefficients[1:].any()

# %% [markdown]
# ## 4. The same polynomial in BGV
#
# BGV puts the message in the *low* bits: `c_0 + c_1 s = m + t e (mod Q)`, decrypted as
# `[c_0 + c_1 s]_Q mod t`. Its product is the plain tensor product, and the noise grows with the
# product of the inputs' noises. `bgv.mod_switch(ct)` divides the ciphertext by the last prime
# of `Q`, and the noise with it; the ciphertext goes one *level* down, its `Q` one prime smaller.
# The division multiplies the message by `q^-1 mod t`; the ciphertext keeps the factor as its
# `correction`, and decryption divides it out.
#
# BGV takes the same parameters (and its context makes its own keys). Each multiplication is
# followed by a switch. Ren brings the plain `-5` and `+ 7` to the product's level and
# correction, and the second factor `x` too: it is switched down from the top level and takes the
# product's correction `q_3^-1`, so the second product carries `q_3^-2`, and its switch adds
# `q_2^-1`.

# %%
bgv_params = bgv.Params(n=8192, q_bits=(43, 43, 44, 44), p_bits=(44,), t=65537)
bgv_ctx = bgv.Context(bgv_params, seed=1)
bgv_steps, plain_steps = {}, {}
with bgv_ctx:
    c = bgv.encrypt(x).realize()
    bgv_steps["x"] = plain_steps["x"] = c
    bgv_steps["3x"] = y = 3 * c
    bgv_steps["3x * x"] = y = bgv.mod_switch(y * c).realize()
    bgv_steps["3x^2 - 5"] = y = y - 5
    bgv_steps["(3x^2 - 5) * x"] = y = bgv.mod_switch(y * c).realize()
    bgv_steps["3x^3 - 5x + 7"] = y = (y + 7).realize()
    # the same without mod_switch: the noise only grows
    plain_steps["3x"] = z = 3 * c
    plain_steps["3x * x"] = z = (z * c).realize()
    plain_steps["3x^2 - 5"] = z = z - 5
    plain_steps["(3x^2 - 5) * x"] = z = (z * c).realize()
    plain_steps["3x^3 - 5x + 7"] = z = (z + 7).realize()
    bgv_budget = {name: bgv_ctx.noise_budget(v) for name, v in bgv_steps.items()}
    plain_budget = {name: bgv_ctx.noise_budget(v) for name, v in plain_steps.items()}
    got_bgv, got_plain = bgv.decrypt(y), bgv.decrypt(z)

q = bgv_params.q_moduli
print("levels:", {name: v.level for name, v in bgv_steps.items()})
print("correction of the result:", y.correction, "= q_3^-2 q_2^-1 mod t")
assert np.array_equal(got_bgv, want) and np.array_equal(got_plain, want)
assert [v.level for v in bgv_steps.values()] == [3, 3, 2, 2, 1, 1]
assert y.correction == pow(q[3] * q[3] * q[2], -1, t)

# %% [markdown]
# The budget counts the bits between the noise and `Q` at the ciphertext's own level, so beside
# each budget is the size of the noise itself, in bits: `bits(Q_l) - budget - 1` (the bits of
# the largest coefficient of `v`, the value the budget measures: BGV's `[c_0 + c_1 s]_Q`, BFV's
# `[t (c_0 + c_1 s)]_Q`, `t` times the noise `e`).
#
# - BFV: the noise grows by about 28 bits a product, and `Q` stays.
# - BGV without a switch: a product's noise is about the product of the two noises, times `n`,
#   so their bits add up. Each product here takes the fresh `x` (23 bits), so the noise grows
#   about as fast as BFV's; a square of a square would double its bits instead.
# - BGV with `mod_switch`: the switch brings the noise back to about its fresh size, and `Q`
#   loses the 44 bits of the prime dropped.


# %%
def q_bits_at(level: int) -> int:
    return math.prod(q[: level + 1]).bit_length()


def noise_bits(budget: int, level: int) -> int:
    return q_bits_at(level) - budget - 1


header = f"{'':16} | {'BFV':^17} | {'BGV, mod_switch':^24} | {'BGV, no switch':^17}"
print(header)
print(f"{'':16} | budget noise bits | level budget noise bits | budget noise bits")
print("-" * len(header))
for name in steps:
    level = bgv_steps[name].level
    print(
        f"{name:16} | {bfv_budget[name]:6d} {noise_bits(bfv_budget[name], 3):10d} |"
        f" {level:5d} {bgv_budget[name]:6d} {noise_bits(bgv_budget[name], level):10d} |"
        f" {plain_budget[name]:6d} {noise_bits(plain_budget[name], 3):10d}"
    )

assert [q_bits_at(level) for level in (3, 2, 1, 0)] == [174, 130, 86, 43]
bfv_noise = [noise_bits(b, 3) for b in bfv_budget.values()]
bgv_noise = [noise_bits(bgv_budget[k], v.level) for k, v in bgv_steps.items()]
plain_noise = [noise_bits(b, 3) for b in plain_budget.values()]
assert bfv_noise[-1] - bfv_noise[0] >= 40  # BFV: grows with each product
assert max(bgv_noise) - min(bgv_noise) <= 4  # BGV with mod_switch: stays
assert plain_noise[-1] - plain_noise[0] >= 50  # BGV without: grows
assert bgv_budget["3x^3 - 5x + 7"] < bfv_budget["3x^3 - 5x + 7"]

# %% [markdown]
# With this chain BFV ends with more budget: each switch costs BGV a 44-bit prime where a BFV
# product costs about 28 bits. BGV's chain is usually made of primes about as large as a
# product's growth, and a switched ciphertext is smaller (fewer limbs), so everything after it
# is cheaper. In BGV the *levels* are the resource: four primes, three switches.
#
# ## 5. When the budget runs out
#
# Squaring again and again, `x, x^2, x^4, ...`, spends one product's worth of budget a step.
# When none is left, the noise has reached the message and decryption would give wrong values:
# Ren's `decrypt` refuses, with `NoiseBudgetExhausted` (a `ValueError`), and `noise_budget`
# says 0.

# %%
power, want_power = ct, x % t
exponent = 1
with ctx:
    while True:
        budget = ctx.noise_budget(power)
        try:
            got = bfv.decrypt(power)
        except bfv.NoiseBudgetExhausted as e:
            print(f"x^{exponent:<3} {budget:4d} bits -> {type(e).__name__}: {e}")
            break
        assert budget > 0 and np.array_equal(got, want_power)
        print(f"x^{exponent:<3} {budget:4d} bits, decrypts to x^{exponent} mod t")
        power = (power * power).realize()
        want_power = want_power * want_power % t  # (t - 1)^2 < 2^63: int64 is enough
        exponent *= 2
assert budget == 0 and exponent == 64 and issubclass(bfv.NoiseBudgetExhausted, ValueError)

# %% [markdown]
# BGV with a switch after each product runs out of levels instead: after three squarings the
# ciphertext is at level 0, one prime left. It still decrypts, but there is no prime left to
# drop (`mod_switch` raises a `ValueError`), and one more product without a switch exhausts the
# budget.

# %%
with bgv_ctx:
    power, want_power = c, x % t
    for _ in range(3):
        power = bgv.mod_switch(power * power).realize()
        want_power = want_power * want_power % t
    budget_level0 = bgv_ctx.noise_budget(power)
    assert power.level == 0 and np.array_equal(bgv.decrypt(power), want_power)
    print(f"x^8 at level {power.level}: {budget_level0} bits left of {q_bits_at(0)}")
    try:
        bgv.mod_switch(power)
    except ValueError as e:
        print("mod_switch:", e)
    last = (power * power).realize()
    print("x^16 at level 0:", bgv_ctx.noise_budget(last), "bits")
    try:
        bgv.decrypt(last)
        raise AssertionError("decrypted past the budget")
    except bgv.NoiseBudgetExhausted as e:
        print(type(e).__name__)
assert 0 < budget_level0 < q_bits_at(0) and bgv_ctx.noise_budget(last) == 0
print("all checks passed")
