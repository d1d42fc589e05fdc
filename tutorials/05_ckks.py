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
# # CKKS from scratch
#
# CKKS encrypts a vector of complex numbers and lets you add, multiply and rotate it while it is
# encrypted, with a small error. This notebook builds each piece by hand with NumPy next to
# Ren's `ren.schemes.ckks`, and checks that the two agree:
#
# 1. parameters: a ring and a chain of moduli;
# 2. encoding: from numbers to a polynomial with the canonical embedding (by linear algebra, then
#    with one FFT), and back;
# 3. rotations and conjugation as automorphisms of the polynomial;
# 4. encryption, a small polynomial `0.5 x^2 + x + 0.25`, a rotation and a conjugation;
# 5. decryption, checked against NumPy with a precision in bits.
#
# The ring here has degree 16: **insecure**, for teaching only. It keeps every number small
# enough to print; a real parameter set has `n = 8192` or more (see `docs/ckks.md`).

# %%
import numpy as np

from ren.schemes import ckks

# %% [markdown]
# ## 1. Parameters
#
# Polynomials live in `Z_Q[X]/(X^n + 1)`. A vector has `n/2` complex *slots*. The ciphertext
# modulus `Q` is a product of primes `q_0 q_1 q_2` (`q_bits`): each multiplication is followed by
# a *rescale* that divides by the last prime, so three primes allow two multiplications in a
# row. The special modulus `p_0` (`p_bits`) is used only inside key switching. Values are stored
# multiplied by the *scale* `Delta = 2^30`.
#
# `insecure=True` is required: a ring this small is far below the sizes of the Homomorphic
# Encryption Standard, and `Params` refuses it otherwise.

# %%
params = ckks.Params(n=16, q_bits=(50, 30, 30), p_bits=(50,), scale_bits=30, insecure=True)
n, slots, scale = params.n, params.slots, params.scale
print(params)
print("q:", params.q_moduli, "p:", params.p_moduli)

# Every modulus is 1 (mod 2n), so the negacyclic NTT of size n exists modulo it; the Fermat test
# is a quick check that it is prime.
for q in params.q_moduli + params.p_moduli:
    assert q % (2 * n) == 1 and pow(3, q - 1, q) == 1

# %% [markdown]
# In a notebook the parameters show their chain as a table: each modulus, its bits and its role,
# with `log2 QP` beside the HE standard's bound for `n` (far above it here: insecure).

# %%
params

# %% [markdown]
# ## 2. Encoding by hand
#
# A plaintext is a polynomial `m` with integer coefficients. Slot `j` is the value of `m / Delta`
# at the root of unity `zeta^(5^j)`, `zeta = exp(i pi / n)`, for `j = 0 .. n/2 - 1`. The other
# odd powers of `zeta` are the conjugates `zeta^(-5^j)`, where a polynomial with real coefficients
# takes the conjugate values: the `n/2` slots fix all `n` values, hence one real polynomial.
#
# First the direct way: write the `n` evaluations as a Vandermonde system and solve it.

# %%
zeta = np.exp(1j * np.pi / n)
powers = [pow(5, j, 2 * n) for j in range(slots)]  # 1, 5, 25 mod 32, ...
points = np.array([zeta**e for e in powers] + [zeta ** (-e) for e in powers])
vandermonde = points[:, None] ** np.arange(n)[None, :]

rng = np.random.default_rng(2024)
z = rng.uniform(-1, 1, slots) + 1j * rng.uniform(-1, 1, slots)  # the message

values = np.concatenate([z, np.conj(z)])
coeffs = np.linalg.solve(vandermonde, values)
print("imaginary part of the solution:", np.abs(coeffs.imag).max())  # real up to rounding
m_by_hand = np.rint(coeffs.real * scale).astype(np.int64)
print("m =", m_by_hand)

# %% [markdown]
# `ckks.encode` computes the same integers. (The `Plaintext` holds `m` in NTT form;
# `tolist(centered=True)` gives its coefficients in `(-Q/2, Q/2]`.)

# %%
with ckks.Context(params, seed=11) as ctx:
    pt = ckks.encode(z)
m_ren = np.array(pt.poly.tolist(centered=True))
print("m (Ren) =", m_ren)
assert np.array_equal(m_ren, m_by_hand)

# %% [markdown]
# ### The same with one FFT
#
# Evaluating `m` at all the odd powers `zeta^(2t+1)`, `t = 0 .. n-1`, is a discrete Fourier
# transform of the *twisted* coefficients `m_i zeta^i`: `v[t] = sum_i m_i zeta^i e^(2 pi i t i/n)
# = n * ifft(m * zeta^i)[t]`. Slot `j` sits at `t_j = (5^j - 1)/2` and its conjugate at
# `(2n - 5^j - 1)/2`. So decoding is one FFT and a gather, and encoding is a scatter and one FFT:
# this is what `ckks.embed` and `ckks.embed_inverse` do.

# %%
twist = zeta ** np.arange(n)
t = np.array([(e - 1) // 2 for e in powers])
t_conj = np.array([(2 * n - e - 1) // 2 for e in powers])


def encode_fft(values: np.ndarray, delta: float) -> np.ndarray:
    v = np.empty(n, dtype=np.complex128)
    v[t], v[t_conj] = values, np.conj(values)
    return np.rint((np.fft.fft(v) / n / twist).real * delta).astype(np.int64)


def decode_fft(m: np.ndarray, delta: float) -> np.ndarray:
    return (n * np.fft.ifft(m / delta * twist))[t]


assert np.array_equal(encode_fft(z, scale), m_by_hand)
decoded = decode_fft(m_by_hand, scale)
assert np.allclose(decoded, ctx.decode(pt), atol=1e-12)
print(f"encode then decode: {ckks.precision_bits(decoded, z):.1f} bits (scale 2^30)")

# %% [markdown]
# The only error so far is the rounding of `m` to integers: about `sqrt(n) / Delta` per slot.
#
# ## 3. Rotations and conjugation are automorphisms
#
# Substituting `X -> X^5` in `m` evaluates it at `zeta^(5^(j+1))` where it was evaluated at
# `zeta^(5^j)`: slot `j + 1` moves to slot `j`. On coefficients, `X^i -> X^(5i)`, and since
# `X^n = -1`, the exponent is taken mod `2n` with a sign flip past `n`. `X -> X^(2n-1)` sends each
# root to its conjugate: it conjugates every slot.


# %%
def automorphism(m: np.ndarray, g: int) -> np.ndarray:
    out = np.zeros_like(m)
    for i, c in enumerate(m):
        k = i * g % (2 * n)
        if k < n:
            out[k] += c
        else:
            out[k - n] -= c
    return out


rotated = decode_fft(automorphism(m_by_hand, 5), scale)
conjugated = decode_fft(automorphism(m_by_hand, 2 * n - 1), scale)
assert ckks.precision_bits(rotated, np.roll(z, -1)) > 20
assert ckks.precision_bits(conjugated, np.conj(z)) > 20
print("rotate(1) by hand:", np.round(rotated[:3], 4))
print("z[1:4]           :", np.round(z[1:4], 4))

# %% [markdown]
# ## 4. Encrypt and compute
#
# The context made a secret key `s` (ternary: coefficients in {-1, 0, 1}), a public key, and a
# relinearization key. A ciphertext is a pair `(c_0, c_1)` with `c_0 + c_1 s = m + e` for a
# small error `e`. Rotation and conjugation keys are made on first use.
#
# `0.5 * x * x + x + 0.25` uses two levels: `x * x` is rescaled once, and `* 0.5` (a float) is
# encoded at the scale `q_l` and rescaled once more. Adding `x` (still at the top level, with
# another scale) brings it down to the result's level and scale first.

# %%
with ctx:
    x = ckks.encrypt(z)
    y = 0.5 * x * x + x + 0.25
    r = y.rotate(1)
    c = y.conjugate()
print("levels:", x.level, "->", y.level, f"| scale of y: 2^{np.log2(y.scale):.6f}")

# %% [markdown]
# `y` is still a graph: nothing has run. Its display says what it is without running it: its
# level, its scale, the slots, the precision the noise model predicts for it, and the region it
# was made in. It shows no slot: that takes the secret key, which `decrypt` asks for.

# %%
y

# %% [markdown]
# ## 5. Decrypt and check
#
# `ctx.decrypt_poly(ct)` is `c_0 + c_1 s`, still encoded: decoding it by hand with
# `decode_fft` gives what `ckks.decrypt` gives.

# %%
want_y = 0.5 * z * z + z + 0.25
got_y = ckks.decrypt(y)
m_y = np.array(ctx.decrypt_poly(y).tolist(centered=True), dtype=np.float64)
assert np.allclose(decode_fft(m_y, y.scale), got_y, atol=1e-12)

PRECISION = 20  # bits: with a 2^30 scale the results are right to about 25 bits
results = {
    "0.5 x^2 + x + 0.25": (got_y, want_y),
    "rotate(1)": (ckks.decrypt(r), np.roll(want_y, -1)),
    "conjugate": (ckks.decrypt(c), np.conj(want_y)),
}
for name, (got, want) in results.items():
    bits = ckks.precision_bits(got, want)
    print(f"{name:20} {bits:5.1f} bits")
    assert bits > PRECISION, (name, bits)
print("all checks passed")
