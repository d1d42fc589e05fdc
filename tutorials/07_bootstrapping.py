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
# # Bootstrapping by hand
#
# Every CKKS multiplication ends with a rescale that uses up one modulus of the chain; at level 0
# none is left. *Bootstrapping* turns a level-0 ciphertext into an encryption of the same slots at
# a high level, homomorphically, without the secret key. This notebook takes Ren's
# `ckks.bootstrap` apart and computes each of its stages by hand, with Python integers and NumPy,
# next to Ren's circuit:
#
# 1. the problem: a ciphertext at level 0, and the chain a bootstrap needs;
# 2. ModRaise: reading the ciphertext modulo a larger modulus, and why it decrypts to
#    `t + q_0 I`;
# 3. CoeffToSlot: the slots' DFT as a matrix, its factorization into sparse stages, and Ren's
#    linear transforms that move the coefficients into the slots;
# 4. EvalMod: `x mod 1` from `sin(2 pi x)`: a Chebyshev series of a cosine, double-angle steps,
#    and an arcsine correction;
# 5. SlotToCoeff, then the whole bootstrap, checked against the input values.
#
# It uses the preset `boot-toy` (`n = 64`, 32 slots): **insecure**, for teaching only, but laid
# out like the real presets, so each bootstrap takes a few seconds on the `python` backend.

# %%
import dataclasses
import importlib
import math

import numpy as np

import ren.viz
from ren import Poly
from ren.circuits.ckks import dft
from ren.circuits.ckks.modraise import mod_raise
from ren.schemes import ckks

# `ckks.bootstrap` is the function; its module holds the plan and the stages
boot = importlib.import_module("ren.circuits.ckks.bootstrap")

# %% [markdown]
# ## 1. The problem: level 0
#
# `Params.preset("boot-toy")` gives a chain laid out for bootstrapping, and
# `BootstrapConfig.for_params` the configuration made for it. From the bottom: `q_0` (48 bits),
# two 40-bit moduli (the user's levels), a 48-bit and a 40-bit one (SlotToCoeff's), then twelve
# 60-bit moduli (ten for EvalMod, two for CoeffToSlot): 17 moduli, levels 0 to 16. A bootstrap
# spends `config.depth` levels, so its output is at `config.levels_left(params)`: the levels
# above are the bootstrap's own.

# %%
params = ckks.Params.preset("boot-toy")
config = ckks.BootstrapConfig.for_params(params)
n, M, q0 = params.n, params.slots, params.q_moduli[0]
K1 = config.K + 1
print(config)
print(f"bits of q_0 .. q_{params.max_level}:", params.q_bits)
b_cts, b_stc = config.level_budget
stc_moduli = (48,) + (40,) * (b_stc - 1)  # the lowest SlotToCoeff modulus: 48 bits (section 5)
assert params.q_bits == (48, 40, 40, *stc_moduli) + (60,) * (config.eval_mod_depth + b_cts)
assert len(params.q_moduli) == 17 and params.max_level == 16
print(
    f"a bootstrap uses {config.depth} levels: CoeffToSlot {b_cts}, EvalMod "
    f"{config.eval_mod_depth}, SlotToCoeff {b_stc}; its output is at level "
    f"{config.levels_left(params)} of {params.max_level}"
)
assert config.depth == b_cts + config.eval_mod_depth + b_stc
assert config.levels_left(params) == params.max_level - config.depth
assert (config.depth, config.levels_left(params)) == (2 + 10 + 2, 2)

# %% [markdown]
# Encrypt 32 real values directly at level 0 (the same as encrypting at the top and multiplying
# down). At level 0 a ciphertext `(c_0, c_1)` is a pair of polynomials modulo `q_0` with
# `c_0 + c_1 s = t (mod q_0)`, `t = m + e`: the encoded message (the values times the scale
# `Delta = 2^40`) plus a small error. A product would have to rescale by a modulus below `q_0`,
# and there is none.

# %%
rng = np.random.default_rng(7)
z = rng.uniform(-1, 1, M)
ctx = ckks.Context(params, seed=7)
with ctx:
    ct = ckks.encrypt(z, level=0)
    print(f"level {ct.level} | scale 2^{math.log2(ct.scale):g}")
    try:
        ct * ct
    except ValueError as error:
        print("ct * ct:", error)

# %% [markdown]
# ## 2. ModRaise: `t` becomes `t + q_0 I`
#
# The first step reads `c_0` and `c_1` modulo a much larger `Q` (the whole chain): take their
# centered representatives, in `[-q_0/2, q_0/2)`, as plain integers. That is free and gives every
# level back, but `c_0 + c_1 s` computed over the integers is no longer reduced modulo `q_0`:
# it is `t + q_0 I` for an integer polynomial `I`. Where does `I` come from? Each coefficient of
# `c_1 s` is a sum of `||s||_1` terms `+-c_1[j]` (the secret is ternary), each of size up to
# `q_0 / 2`; with `c_0` that makes up to `(1 + ||s||_1) q_0 / 2`, so
# `|I| <= (1 + ||s||_1) / 2`. The terms look like uniform numbers, so `I_k` is in fact about a
# sum of `h + 1` uniform numbers in `[-1/2, 1/2]` (`h` the number of nonzero coefficients of `s`):
# standard deviation `sqrt((h + 1) / 12)`, much smaller than the worst case.
#
# First on a ring small enough to print: `n = 8`, `q = 97`, every number a Python integer.
# `X^n = -1`, so in a product a term `X^(i + j)` past `X^(n-1)` wraps around with a minus sign.


# %%
def negacyclic(a: list[int], b: list[int]) -> list[int]:
    """``a * b`` in ``Z[X]/(X^n + 1)``, exactly, with Python integers."""
    size = len(a)
    out = [0] * size
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            if i + j < size:
                out[i + j] += x * y
            else:
                out[i + j - size] -= x * y
    return out


def centered(x: int, q: int) -> int:
    """``x mod q`` in ``[-q/2, q/2)``."""
    return (x + q // 2) % q - q // 2


toy_rng = np.random.default_rng(1)
toy_n, toy_q = 8, 97
toy_s = [int(v) for v in toy_rng.integers(-1, 2, toy_n)]  # a ternary secret
toy_t = [3, -1, 0, 2, 0, -2, 1, 0]  # message plus error: small
toy_c1 = [int(v) for v in toy_rng.integers(0, toy_q, toy_n)]  # uniform mod q
toy_c0 = [(t - p) % toy_q for t, p in zip(toy_t, negacyclic(toy_c1, toy_s), strict=True)]

# decryption modulo q gives t back
toy_dec = [a + b for a, b in zip(toy_c0, negacyclic(toy_c1, toy_s), strict=True)]
assert [centered(w, toy_q) for w in toy_dec] == toy_t

# ModRaise: the centered representatives, as integers, and c_0 + c_1 s with no reduction
lift0 = [centered(c, toy_q) for c in toy_c0]
lift1 = [centered(c, toy_q) for c in toy_c1]
toy_raised = [a + b for a, b in zip(lift0, negacyclic(lift1, toy_s), strict=True)]
toy_I = [(w - t) // toy_q for w, t in zip(toy_raised, toy_t, strict=True)]
assert toy_raised == [t + toy_q * i for t, i in zip(toy_t, toy_I, strict=True)]
print("s       =", toy_s, "| ||s||_1 =", sum(map(abs, toy_s)))
print("c_0     =", lift0)
print("c_1     =", lift1)
print("c0+c1 s =", toy_raised)
print("I       =", toy_I)
assert max(map(abs, toy_I)) <= (1 + sum(map(abs, toy_s))) / 2

# read modulo a larger Q = 97 * 113 (|c_0 + c_1 s| < Q/2), the integers stay as they are
toy_Q = toy_q * 113
toy_dec_Q = [a + b for a, b in zip(lift0, negacyclic(lift1, toy_s), strict=True)]
assert [centered(w, toy_Q) for w in toy_dec_Q] == toy_raised != toy_t

# %% [markdown]
# Any modulus `Q` with `|t + q I| < Q/2` reads those integers as they are (the last assert), so
# the raised ciphertext decrypts to `t + q I` modulo `Q`, not to `t`.
#
# Now Ren's `mod_raise` on the level-0 ciphertext (one inverse NTT per part, the centered lift,
# one NTT at the top level). To compute `c_0 + c_1 s` by hand the notebook needs `s`; it holds
# the secret key, and `ctx.decrypt_poly` of the pair `(0, 1)` is `0 + 1 * s`.

# %%
with ctx:
    raised = mod_raise(ct)
    ring0 = params.ring(0)
    probe = dataclasses.replace(ct, parts=(Poly.const(0, ring0).ntt(), Poly.const(1, ring0).ntt()))
    s = ctx.decrypt_poly(probe).tolist(centered=True)
    assert set(s) <= {-1, 0, 1}  # ternary
    t = ctx.decrypt_poly(ct).tolist(centered=True)  # c_0 + c_1 s mod q_0: m + e
    t_raised = ctx.decrypt_poly(raised).tolist(centered=True)  # modulo Q, the whole chain
Q = params.ring(raised.level).Q
print(f"level {ct.level} -> {raised.level}; Q has {Q.bit_length()} bits")

# the parts are the same integers, read modulo Q
c0, c1 = (p.tolist(centered=True) for p in ct.parts)
assert [p.tolist(centered=True) for p in raised.parts] == [c0, c1]

# by hand: c_0 + c_1 s over the integers is what the raised ciphertext decrypts to
assert [a + b for a, b in zip(c0, negacyclic(c1, s), strict=True)] == t_raised

# t is the encoding of z (the values times Delta, up to the error)
assert ckks.precision_bits(np.array(t) / ct.scale, ckks.embed_inverse(z, n)) > 30

# t_raised = t + q_0 I, with I small integers
I = [(w - v) // q0 for w, v in zip(t_raised, t, strict=True)]
assert all(w == v + q0 * i for w, v, i in zip(t_raised, t, I, strict=True))
h = sum(map(abs, s))
print(f"I in [{min(I)}, {max(I)}]; h = ||s||_1 = {h}")
sigma = math.sqrt((h + 1) / 12)
print(f"worst case (1 + h)/2 = {(1 + h) / 2}; typical size sqrt((h + 1)/12) = {sigma:.2f}")
print(f"config.K = {config.K}")
assert max(map(abs, I)) <= config.K <= (1 + h) / 2

# %% [markdown]
# `config.K` is the bound the later stages rely on: about six standard deviations, so that a
# coefficient past it comes fewer than once in `10^9`. A quick simulation of `I_k` as a sum of
# `h + 1` uniform numbers shows the size:

# %%
sums = rng.uniform(-0.5, 0.5, (100_000, h + 1)).sum(axis=1)
print(f"simulated standard deviation {sums.std():.3f} vs sqrt((h + 1)/12) = {sigma:.3f}")
print(f"largest |I| in 100000 draws: {np.abs(np.rint(sums)).max():.0f} (K = {config.K})")
assert abs(sums.std() - sigma) < 0.05

# %% [markdown]
# Decrypting the raised ciphertext at its scale `Delta` reads `(t + q_0 I) / Delta`: the
# multiples of `q_0` are `q_0 / Delta = 2^8` times larger than the message, so the slots are
# garbage. Read at the scale `q_0` instead, coefficient `k` is `t_k / q_0 + I_k`: an integer plus
# a small number (`|t_k| / q_0` is `Delta / q_0 = 2^-8` times the message's coefficient, and
# those are below 1 here), and the message is that small number.
# What remains is to compute `x mod 1` on each *coefficient*; but homomorphic operations act on
# *slots*.

# %%
with ctx:
    garbage = ckks.decrypt(raised)
print(f"decrypt(raised) vs z: {ckks.precision_bits(garbage, z):.1f} bits")
print(f"log2(q_0 / Delta) = {math.log2(q0 / ct.scale):.4f}")
assert round(math.log2(q0 / ct.scale)) == 8
frac = np.array([w / q0 for w in t_raised])
print("t_raised / q_0, first coefficients:", [f"{f:.6f}" for f in frac[:6]])
message = np.array(t) / ct.scale  # the message's coefficients (with the error)
print(f"largest message coefficient {np.abs(message).max():.3f}")
assert np.allclose(frac - I, message * ct.scale / q0, rtol=0, atol=2.0**-40)
assert np.all(np.abs(frac - np.rint(frac)) < 2.0**-10)
assert np.array_equal(np.rint(frac).astype(int), I)

# %% [markdown]
# ## 3. CoeffToSlot: the DFT as matrices
#
# Slot `j` is the polynomial evaluated at `zeta^(5^j)`, `zeta = exp(i pi / n)`:
# `sum_k t_k zeta^(5^j k)`. Split the sum at `n/2`: `zeta^(5^j (k + n/2)) = zeta^(5^j k) i`
# (because `zeta^(n/2) = i` and `5^j = 1 mod 4`), so the slots of a real polynomial are
# `U (t_low + i t_high)`, with `U[j][k] = zeta^(5^j k)` an `M x M` matrix, `M = n/2`, and
# `t_low`, `t_high` the coefficients below and from `n/2`. CoeffToSlot must compute `U^-1`: it
# puts coefficients `k` and `k + n/2` into slot `k`, as real and imaginary parts.

# %%
zeta = np.exp(1j * np.pi / n)
U = np.array([[zeta ** (pow(5, j, 2 * n) * k) for k in range(M)] for j in range(M)])
assert np.allclose(U, dft.slots_matrix(M))

t_float = np.array(t, dtype=np.float64)
slots_by_matrix = U @ (t_float[:M] + 1j * t_float[M:])
assert np.allclose(slots_by_matrix, ckks.embed(t_float, n))  # the encoding's own FFT
with ctx:  # a real ciphertext decrypts to the real parts (the error's imaginary parts dropped)
    assert ckks.precision_bits(slots_by_matrix.real / ct.scale, ckks.decrypt(ct)) > 40
print("U (t_low + i t_high) / Delta:", np.round(slots_by_matrix[:3].real / ct.scale, 6))
print("z                           :", np.round(z[:3], 6))

# %% [markdown]
# A matrix acts on encrypted slots through its *generalized diagonals*
# `diag_k[i] = A[i][(i + k) % M]`: `A x = sum_k diag_k * rotate(x, k)`, one rotation (a key
# switch) per nonzero diagonal, and the whole product costs one level. `U^-1` is dense: 32
# diagonals. But `U` is a DFT, and it factors like one. Split `k` into even and odd: the first
# half of the slots is `A + w B` and the second `A - w B`, with `A`, `B` the half-size transforms
# of the even and the odd entries and `w_j = zeta^(5^j)`. Unrolled, `U = S_M ... S_4 S_2 R`, with
# `R` the bit-reversal permutation and `S_L` the butterflies of the size-`L` transforms: each
# `S_L` has only three nonzero diagonals, `0` and `+-L/2`.


# %%
def n_diagonals(A: np.ndarray) -> int:
    """How many generalized diagonals of ``A`` are not zero."""
    rows = np.arange(len(A))
    return sum(bool(np.any(np.abs(A[rows, (rows + k) % len(A)]) > 1e-12)) for k in rows)


bits = M.bit_length() - 1
R = np.eye(M)[[int(format(i, f"0{bits}b")[::-1], 2) for i in range(M)]]  # (R x)_i = x_(rev i)
print("diagonals of U^-1:", n_diagonals(np.linalg.inv(U)))

stages = {L: dft.dense(dft.stage(M, L), M) for L in (2, 4, 8, 16, 32)}
product = np.eye(M)
for L, S in stages.items():
    print(f"S_{L:<2}: diagonals {sorted(dft.stage(M, L))} (offsets mod {M}: 31 is -1)")
    assert n_diagonals(S) <= 3
    product = S @ product
assert np.allclose(product, U @ R)  # S_32 S_16 S_8 S_4 S_2 = U R (R is its own inverse)

# %% [markdown]
# Bootstrapping leaves `R` out: CoeffToSlot computes `R U^-1 = S_2^-1 ... S_32^-1`, so the
# coefficients land in bit-reversed slots. EvalMod works slot by slot and does not mind, and
# SlotToCoeff, `U R = S_32 ... S_2`, takes them back from that order.
#
# Five stages would cost five levels. The *level budget* merges consecutive stages into fewer
# transforms: `config.level_budget = (2, 2)` makes CoeffToSlot two transforms (three stages, then
# two), each with more diagonals (a group of `g` stages has at most `2^(g+1) - 1`), but two
# levels instead of five, and far fewer than the dense matrix's rotations.

# %%
groups = dft.coeff_to_slot_groups(M, b_cts, packed=False, constant=1.0)
print("CoeffToSlot diagonals per transform:", [len(g) for g in groups])
product = np.eye(M)
for g in groups:
    product = dft.dense(g, M) @ product
assert np.allclose(product, R @ np.linalg.inv(U))
assert all(len(g) <= 2 ** (size + 1) - 1 for g, size in zip(groups, (3, 2), strict=True))

# %% [markdown]
# Ren's bootstrap builds these transforms once per parameters, in `boot.plan(params)`, with a
# constant folded into the first. It reads the raised ciphertext at the scale `2^60`
# (`boot.EVAL_SCALE`: the slots are `embed(t) / 2^60`, a scale that suits the 60-bit moduli the
# transforms rescale by), and the first transform multiplies by `2^60 / q_0 / (2 (K + 1))`. So the
# output slots are the coefficients `(t_low + i t_high) / q_0`, in bit-reversed order, divided by
# `2 (K + 1)`: each real and imaginary part in `[-1/2, 1/2]`. (Before that, the ciphertext's
# words are multiplied by `2^boot.LIFT`, exactly: the rotations' noise is of a fixed size, so it
# becomes that much smaller next to the values; the last transform takes the factor back.)

# %%
plan = boot.plan(params)
print("CoeffToSlot runs at levels", [lt.level for lt in plan.coeff_to_slot])
y = np.array([w / q0 for w in t_raised])  # t_k / q_0 + I_k, from Python integers
want_cts = (y[:M] + 1j * y[M:]) @ R.T / (2 * K1)  # R applied: bit-reversed order
with ctx:
    x = ckks.multiply(raised, 2**boot.LIFT)  # the words times 2^LIFT, exactly, no level
    x = dataclasses.replace(x, scale=boot.EVAL_SCALE * 2**boot.LIFT)  # read as t / 2^60
    for lt in plan.coeff_to_slot:
        x = lt(x)
    got_cts = ckks.decrypt(x)
cts_bits = ckks.precision_bits(got_cts, want_cts)
print(f"CoeffToSlot: level {x.level}, scale 2^{math.log2(x.scale):.2f}, {cts_bits:.1f} bits")
assert cts_bits > 30

# %% [markdown]
# EvalMod's polynomial works on real numbers, so one conjugation splits each slot `v` into its
# real and imaginary parts: `v + conj(v) = 2 Re v` and `-i (v - conj(v)) = 2 Im v`. That is where
# the factor 2 went: both now hold `t_k / q_0 + I_k` divided by `K + 1`, in `[-1, 1]`.
# Multiplying by `-i` is exact: `-i` in every slot is the monomial `-X^(n/2)`, encoded at scale 1.

# %%
with ctx:
    xc = x.conjugate()
    re = x + xc
    im = ckks.multiply(x - xc, ctx.encode(-1j, x.level, 1.0), rescale=False)
    got_re, got_im = ckks.decrypt(re), ckks.decrypt(im)
want_re, want_im = y[:M] @ R.T / K1, y[M:] @ R.T / K1
assert ckks.precision_bits(got_re, want_re) > 30 and ckks.precision_bits(got_im, want_im) > 30
print("K+1 times the real parts (near integers):", np.round(K1 * got_re[:6].real, 6))

# %% [markdown]
# ## 4. EvalMod: `x mod 1` from a sine
#
# No polynomial computes `x mod 1` on `[-13, 13]`: it jumps at every half-integer. But the
# message is only near the integers, `x = I + eps` with `|eps|` at most about `2^-8`, and there
# `sin(2 pi x) = sin(2 pi eps)` is smooth. Divided by `2 pi` it is
# `eps - (2 pi)^2 eps^3 / 6 + ...`: it misses `eps` by about `(2 pi)^2 eps^3 / 6` (and never by
# more, as `|sin u - u| <= |u|^3 / 6`). That is `6.6 * 2^-24` at `eps = 2^-8`, and an error on
# `t_k / q_0` is `q_0 / Delta = 2^8` times larger on the message's coefficient: about `2^-13`
# for a coefficient of size 1, far more than the rest of the bootstrap's error. So the bootstrap
# corrects the sine, after the double angles below. For `|2 pi eps| <= pi / 2`,
# `arcsin(sin(2 pi eps)) = 2 pi eps`, and `arcsin(c) = c + c^3 / 6 + 3 c^5 / 40 + ...`: with
# `c = sin(2 pi eps)`, `c + c^3 / 6` misses `2 pi eps` by about the first term left out, and by at
# most `3 (2 pi eps)^5 / 40`. A table, in plain floats, at a few distances `eps` from a few
# integers, checks both bounds:

# %%
header = f"{'I':>3} {'eps':>11} {'sine misses':>12} {'(2pi)^2eps^3/6':>14}"
print(f"{header} {'c + c^3/6 misses':>17} {'3(2pi eps)^5/40':>16}")
for whole in (-5, 0, 12):
    for eps in (2.0**-10, -(2.0**-8), 2.0**-4, 0.2):
        xv = whole + eps
        reduced = xv - round(xv)  # x mod 1, in [-1/2, 1/2]
        u = 2 * math.pi * reduced
        sine = math.sin(2 * math.pi * xv)  # the same as sin(u)
        sine_bound = (2 * math.pi) ** 2 * abs(reduced) ** 3 / 6
        sine_miss = abs(sine / (2 * math.pi) - reduced)
        arcsine_miss = abs(sine + sine**3 / 6 - u)
        arcsine_bound = 3 * abs(u) ** 5 / 40
        print(
            f"{whole:3} {eps:11.4e} {sine_miss:12.1e} {sine_bound:14.1e} {arcsine_miss:17.1e} "
            f"{arcsine_bound:16.1e}"
        )
        assert sine_miss <= sine_bound + 1e-14 and arcsine_miss <= arcsine_bound + 1e-13
        if abs(eps) <= 2.0**-8:  # near the integers the sine misses by the bound, to 0.1 %
            assert math.isclose(sine_miss, sine_bound, rel_tol=1e-3)

# %% [markdown]
# Far from the integers both fail, which is why `Delta` is kept `2^8` times below `q_0`. At
# `eps = 2^-8`, in units of the message's coefficient (times `q_0 / Delta`), with the
# `1 / (2 pi)` that follows:

# %%
eps = 2.0**-8
u = 2 * math.pi * eps
sine_error = abs(math.sin(u) / (2 * math.pi) - eps) * q0 / ct.scale
arcsine_error = abs(math.sin(u) + math.sin(u) ** 3 / 6 - u) / (2 * math.pi) * q0 / ct.scale
print(
    f"(2 pi)^2 / 6 = {(2 * math.pi) ** 2 / 6:.2f}; q_0 / Delta = 2^{math.log2(q0 / ct.scale):.4f}"
)
print(f"on the message: sine alone 2^{math.log2(sine_error):.1f}", end=", ")
print(f"c + c^3/6 2^{math.log2(arcsine_error):.1f}")
assert round((2 * math.pi) ** 2 / 6, 1) == 6.6
assert -14 < math.log2(sine_error) < -13 and math.log2(arcsine_error) < -25

# %% [markdown]
# The slots hold `y = x / (K + 1)` in `[-1, 1]`, and `sin(2 pi (K + 1) y)` has `2 (K + 1) = 26`
# periods there: a polynomial fit would need a high degree, hence a deep circuit. Two tricks
# keep it shallow. `sin(a) = cos(a - pi/2)`, and a cosine of a smaller angle is easy: fit
# `cos(2 pi ((K + 1) y - 1/4) / 2^r)` (`26 / 2^r = 6.5` periods with `r = 2`) with a Chebyshev
# series of degree 47, then apply the double-angle formula `cos(2a) = 2 cos(a)^2 - 1` `r` times.
# The arcsine's `c + c^3 / 6` comes after, as `(c / 6) c^2 + c`: two levels. The series costs
# `ceil(log2(48)) = 6` levels, each squaring one more, so `config.eval_mod_depth` is
# `6 + 2 + 2 = 10`. First in plain NumPy:

# %%
r, degree = config.double_angle, config.degree


def cosine(y: np.ndarray) -> np.ndarray:
    return np.cos(2 * np.pi * (K1 * y - 0.25) / 2**r)


series = np.polynomial.Chebyshev.interpolate(cosine, degree)  # at the Chebyshev nodes
assert np.allclose(series.coef, plan.cosine, atol=1e-14)  # Ren's plan holds the same series
print(f"r = {r} ({2 * K1 / 2**r} periods), degree {degree}, arcsine {config.arcsine}")
assert (2 * K1, r, 2 * K1 / 2**r, degree, math.ceil(math.log2(degree + 1))) == (26, 2, 6.5, 47, 6)


def sine(y: np.ndarray, steps: int = r) -> np.ndarray:
    """The series, then ``steps`` double angles: ``sin(2 pi (K + 1) y)`` when ``steps == r``."""
    c = series(y)
    for _ in range(steps):
        c = 2 * c * c - 1  # each step doubles the angle and multiplies the error by up to 4
    return c


grid = np.linspace(-1, 1, 20_001)
print(f"series vs cosine:        {np.abs(sine(grid, 0) - cosine(grid)).max():.1e}")
for step in range(1, r + 1):
    exact = np.cos(2 * np.pi * (K1 * grid - 0.25) / 2 ** (r - step))
    print(f"after {step} double angle(s): {np.abs(sine(grid, step) - exact).max():.1e}")
assert np.abs(sine(grid) - np.sin(2 * np.pi * K1 * grid)).max() < 2.0**-35

# the correction, near every integer I in [-K, K]: c + c^3 / 6 against 2 pi eps
near_eps = np.linspace(-(2.0**-10), 2.0**-10, 101)
near_I = np.arange(-config.K, config.K + 1)[:, None]
c = sine((near_I + near_eps) / K1)
corrected_miss = np.abs(c + c**3 / 6 - 2 * np.pi * near_eps)
print(f"c + c^3/6 vs 2 pi eps, |eps| <= 2^-10: {corrected_miss.max():.1e}")
assert np.all(corrected_miss <= 3 * np.abs(2 * np.pi * near_eps) ** 5 / 40 + 2.0**-35)
assert config.eval_mod_depth == math.ceil(math.log2(degree + 1)) + r + 2 * config.arcsine == 10

# %% [markdown]
# Now Ren's stage `boot.eval_sine` (what `ckks.bootstrap` calls) on an encrypted vector of
# `(I + eps) / (K + 1)`, at the level and scale where the bootstrap runs it, with `eps` up to
# `2^-10`, against `2 pi eps`. The `1 / (2 pi)` is left for the next stage. The correction's
# constant `1/6` is encoded at the scale `plan.sixth`, chosen so that the output's scale is
# `q_0 2^8` exactly: read at `2^8` times the input's scale `Delta` instead (free), the slots are
# `2 pi t / Delta`, `2 pi` times the message's coefficients. The `2^8` keeps SlotToCoeff's noise
# small (section 5).

# %%
whole = rng.integers(-config.K, config.K + 1, M)
eps = rng.uniform(-(2.0**-10), 2.0**-10, M)
with ctx:
    level = params.max_level - b_cts
    e_ct = ckks.encrypt((whole + eps) / K1, level=level, scale=boot.EVAL_SCALE)
    e_out = boot.eval_sine(e_ct, plan)
    got_mod = ckks.decrypt(e_out).real
mod_bits = ckks.precision_bits(got_mod, 2 * np.pi * eps)
print(f"EvalMod: levels {e_ct.level} -> {e_out.level}, {mod_bits:.1f} bits against 2 pi eps")
lift = round(1 / plan.slot_to_coeff[-1].scale_factor)  # 2^8: SlotToCoeff's last takes it back
print(f"output scale / q_0 = {e_out.scale / q0!r}; 1/6 encoded at 2^{math.log2(plan.sixth):.2f}")
print("I + eps:             ", np.round((whole + eps)[:4], 6))
print("eval_sine / (2 pi):  ", np.round(got_mod[:4] / (2 * np.pi), 6))
assert e_ct.level - e_out.level == config.eval_mod_depth
assert lift == 2**8 and math.isclose(e_out.scale, q0 * lift, rel_tol=1e-12)
assert mod_bits > 35
assert np.all(
    np.abs(got_mod - 2 * np.pi * eps) <= 3 * (2 * np.pi * np.abs(eps)) ** 5 / 40 + 2.0**-30
)

# %% [markdown]
# ## 5. SlotToCoeff, and the whole bootstrap
#
# After EvalMod, bit-reversed slot `k` holds `2 pi t_k / q_0` in its real part and
# `2 pi t_(k + n/2) / q_0` in its imaginary part (EvalMod of each part, the second times `i`).
# SlotToCoeff applies `U R / (2 pi)`, the stages `S_2 ... S_32` in two groups: its slots become
# `U (t_low + i t_high) / q_0 = embed(t) / q_0`, the message's slots times `Delta / q_0`. A free
# step before it reads EvalMod's output at a scale `Delta / q_0` times the one it has, `q_0 2^8`:
# at `2^8 Delta`, so its slots are `2 pi t / Delta` and SlotToCoeff's result is the message again.
#
# Why `2^8`: each rotation's key switch adds rounding noise of a fixed size (it grows with `n` and
# the secret's weight), so at `2^8` times the scale it is `2^8` times smaller next to the values;
# at `n = 65536` that noise is what limits the bootstrap. The last transform takes the `2^8` back
# (scale factor `2^-8`: its diagonals encoded at `q_l / 2^8`), on the 48-bit modulus of its level,
# so they still have 40 bits; the others change no scale.
#
# SlotToCoeff alone, on an encryption of bit-reversed coefficients at `2^8 Delta`, against
# `ckks.embed`. Its first transform's scale factor, `q_0 2^8` over EvalMod's output scale as the
# plan computes it, is 1 up to rounding.

# %%
v = rng.uniform(-1, 1, M) + 1j * rng.uniform(-1, 1, M)  # bit-reversed t_low + i t_high
with ctx:
    s_ct = ckks.encrypt(v, level=plan.slot_to_coeff[0].level, scale=lift * params.scale)
    for lt in plan.slot_to_coeff:
        s_ct = lt(s_ct)
    got_stc = ckks.decrypt(s_ct)
natural = v @ R  # back in natural order (R is its own inverse)
coeffs = np.concatenate([natural.real, natural.imag])
stc_bits = ckks.precision_bits(got_stc, ckks.embed(coeffs, n) / (2 * np.pi))
print(f"SlotToCoeff: levels {plan.slot_to_coeff[0].level} -> {s_ct.level}, {stc_bits:.1f} bits")
print("scale factors:", [lt.scale_factor for lt in plan.slot_to_coeff])
*rest, last = plan.slot_to_coeff
assert all(math.isclose(lt.scale_factor, 1.0, rel_tol=1e-12) for lt in rest)
assert last.scale_factor == 2.0**-8 and math.isclose(s_ct.scale, params.scale, rel_tol=1e-12)
assert stc_bits > 30

# %% [markdown]
# `ckks.bootstrap(ct)` runs the stages in order: ModRaise, the lift, CoeffToSlot, the split,
# EvalMod on both parts, the change of scale and SlotToCoeff. `ctx.bootstrap_keys()` makes every
# key it needs first (a rotation key per rotation step of the transforms, and the conjugation
# key); `ct.bootstrap()` is the same call. The result is at `config.levels_left(params)` with the
# input's slots: two levels to multiply with, then bootstrap again.

# %%
with ctx:
    ctx.bootstrap_keys(progress=False)
    print("rotation steps:", plan.rotations)
    fresh = ckks.bootstrap(ct)
    with ren.viz.record() as trace:
        fresh.realize()
    got = ckks.decrypt(fresh)
    squared = fresh * fresh  # a level used, one left
    again = squared.bootstrap()
    got_again = ckks.decrypt(again)
print(f"bootstrap: level {ct.level} -> {fresh.level}, scale 2^{math.log2(fresh.scale):.4f}")
print(f"square: level {squared.level}; bootstrapped again: level {again.level}")

# %% [markdown]
# The bootstrap as it ran, from `ren.viz.record()`: its stages as nested boxes, in the order the
# report draws them (`bootstrap`, then `mod_raise`, `coeff_to_slot`, `eval_mod` and
# `slot_to_coeff` inside it), each with its kernels, time, the bytes it wrote and the key bytes
# it read, and for CKKS its level and scale. Click a box to open it.

# %%
trace

# %% [markdown]
# ## 6. Stepping through a bootstrap
#
# `ren.viz.debug.notebook` prepares the same realization without running it, then runs it one
# region at a time. `watch` gives it the slots the output should hold, so the last step shows
# the precision of the result against them (that decrypts it: the watch is the request). In
# Jupyter, with `ipywidgets` installed, the debugger shows buttons (*next region*, *next pass*,
# *run unit*, *finish*); `widgets=False` shows the plain steps, as this page does.

# %%
with ctx:
    stepped = ckks.bootstrap(ct)  # lazy: nothing has run
dbg = ren.viz.debug.notebook(stepped, widgets=False).watch(stepped, ctx, z, label="out")
dbg

# %% [markdown]
# The first step runs the first region, ModRaise, and shows what ran, region by region, as a table.

# %%
dbg.next_region()

# %% [markdown]
# `dbg.steps()` runs on region by region to the end, a step each (in a notebook, each is a box
# as above; here the first line of each). The last shows the watched output's slots against `z`.

# %%
for step in dbg.steps():
    print(step.text.splitlines()[0])
dbg.latest

# %% [markdown]
# The stepped realization is the one `realize` runs: its output decrypts as `fresh` did.

# %%
with ctx:
    stepped_bits = ckks.precision_bits(ckks.decrypt(stepped), z)
print(f"stepped bootstrap: {stepped_bits:.1f} bits")
assert stepped_bits > 25 and dbg.done

# %% [markdown]
# Options not used here: `BootstrapConfig(slots=...)` bootstraps a message of fewer slots (its
# real and imaginary parts then share one EvalMod), and `sparse_secret=h` switches to a sparse
# ephemeral secret around ModRaise so that `I` stays small whatever the secret (the `boot-n12`
# and `boot-n16` presets use it).
#
# ## Checks
#
# Every stage above was checked against Python integers or NumPy; the bootstrap itself against
# the input values. The toy parameters keep about 30 bits; 25 is the floor asserted.

# %%
PRECISION = 25  # bits
results = {
    "bootstrap(ct)": (got, z),
    "bootstrap(fresh * fresh)": (got_again, z * z),
}
for name, (g, w) in results.items():
    bits = ckks.precision_bits(g, w)
    print(f"{name:26} {bits:5.1f} bits")
    assert bits > PRECISION, (name, bits)
assert fresh.level == again.level == config.levels_left(params)
print(f"fresh.scale / ct.scale = {fresh.scale / ct.scale!r}")
assert math.isclose(fresh.scale, ct.scale, rel_tol=1e-12)  # the input's scale, rounding aside
assert np.all(got.imag == 0)  # a real input gives real slots
print("all checks passed")
