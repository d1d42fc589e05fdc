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
# # How much precision will I get?
#
# CKKS computes approximately: every encoding rounds, every encryption adds noise, every product,
# rescale and key switch adds more. Ren measures what a program keeps against a plaintext shadow
# (`python -m ren.viz`); this notebook is about knowing it *before* running, choosing parameters
# from it, and going past what one bootstrap keeps:
#
# 1. one encrypted step of logistic regression, and its predicted precision, before anything runs;
# 2. the parameters chosen for that program (`ckks.Params.for_program`), and why;
# 3. the check: run it on them, measure against NumPy;
# 4. what a depth and a precision need (`ckks.Params.choose`), and what no secure chain holds;
# 5. bootstrapping twice for 40 bits (`ckks.bootstrap(ct, iterations=2)`).

# %%
import warnings

import numpy as np

from ren.schemes import ckks

rng = np.random.default_rng(10)
FEATURES = 256
features = rng.uniform(0, 1, FEATURES)  # one sample (intensities in [0, 1]), encrypted by its owner
label = 1.0
weights = rng.uniform(0, 1, FEATURES) / 64  # the model, in the clear on the server
RATE = 0.5


def sigmoid3(z):
    """The sigmoid's least-squares cubic on [-8, 8], a common stand-in in encrypted training."""
    return 0.5 + 0.197 * z - 0.004 * z * z * z


def step(x):
    """One gradient step's correction for the sample ``x``: ``RATE (sigmoid(w . x) - y) x``."""
    z = ckks.inner_product(x, weights)  # w . x in every slot
    cube = (z * (RATE * 0.004)) * (z * z)  # the constants folded in: one level fewer
    return (RATE * (0.5 - label) + z * (RATE * 0.197) - cube) * x


def step_exact(v):
    z = float(np.dot(weights, v))
    return (sigmoid3(z) - label) * v * RATE


# %% [markdown]
# ## 1. Predicted, then measured
#
# Every operation of the evaluator carries an estimate of its error beside the lazy graph (a few
# floats: the variance of each slot's error and a bound on the values), so the precision of the
# result is known before a single kernel runs. The figure is absolute, as `ckks.precision_bits`
# measures it: $-\log_2$ of the largest slot error.

# %%
params = ckks.Params(n=16384, q_bits=(50, 40, 40, 40, 40, 40), p_bits=(50, 50), dnum=3)
ctx = ckks.Context(params, seed=1)
ctx.keygen()
x = ctx.encrypt(features)
update = step(x)
predicted = ckks.predicted_precision(update)
print(f"predicted {predicted:.1f} bits, {params.max_level - update.level} levels")
got = ctx.decrypt(update, real=True)[:FEATURES]
measured = ckks.precision_bits(got, step_exact(features))
print(f"measured  {measured:.1f} bits")
assert abs(predicted - measured) <= 2

# %% [markdown]
# The result's display shows the prediction beside its level and scale, before anything runs
# and without the secret key; here `update` has run, and the display reads the same.

# %%
update

# %% [markdown]
# The prediction sits a little below the measure: it takes the values at their largest for what
# products add. It follows how large a sum of slots can be from the sizes encoded (the
# features' and weights' sums), so with features and weights of one sign, as here, the bound is
# the value itself; with signs that cancel, the inner product is smaller than its bound and the
# prediction is that much more cautious.
#
# ## 2. Parameters for the program
#
# `for_program` builds the program on encryptions of example inputs (nothing is computed) to find
# the levels it takes, chooses the smallest secure chain for that depth, then builds it again on
# the choice and reads the predicted precision of what it returns.

# %%
chosen = ckks.Params.for_program(step, features, precision_bits=20)
print(chosen.explain())

# %% [markdown]
# The chosen parameters, as a notebook shows them: the chain as a table.

# %%
chosen

# %% [markdown]
# ## 3. The check
#
# On the chosen parameters the step measures at least the 20 bits asked for, against NumPy.

# %%
with ckks.Context(chosen, seed=2) as small:
    update = step(small.encrypt(features))
    got = small.decrypt(update, real=True)[:FEATURES]
measured = ckks.precision_bits(got, step_exact(features))
print(f"n={chosen.n}: predicted {ckks.predicted_precision(update):.1f}, measured {measured:.1f}")
assert measured >= 20 and chosen.log2_qp <= ckks.SECURITY_BOUNDS[chosen.n]

# %% [markdown]
# ## 4. A depth and a precision
#
# `Params.choose` answers the question users ask most (OpenFHE's `SetMultiplicativeDepth`, with
# the precision too): the least ring, the smallest scale predicted to keep the bits after that
# many products, the fewest key-switching digits within the 128-bit bound. A request no secure
# chain holds is refused with what would fit.

# %%
for depth in (1, 5, 10, 20):
    p = ckks.Params.choose(depth=depth, precision_bits=30)
    print(f"depth {depth:2d}: n={p.n:5d}, scale 2^{p.scale_bits}, dnum={p.dnum}, "
          f"log2(QP)={p.log2_qp:.0f} <= {ckks.SECURITY_BOUNDS[p.n]}")  # fmt: skip
try:
    ckks.Params.choose(depth=3, precision_bits=45)
except ValueError as e:
    print(str(e)[:260], "...")

# %% [markdown]
# ## 5. Bootstrapping twice
#
# One bootstrap keeps about 27 bits at `n = 4096`: its error is fixed next to $q_0$, however
# finely the input holds its message. Bootstrapping the error too (Bae, Cheon, Cho, Kim and Kim's
# meta-bootstrapping) takes it away: `y = bootstrap(x)`, then `(x - y) 2^p` bootstrapped and
# brought back by `2^-p`. The preset `boot-n12-precise` holds the input at the scale $2^{53}$
# for it (insecure: `n = 4096` cannot hold a bootstrap within the bound; `boot-n16-precise` is the
# secure one, at `n = 65536`).

# %%
warnings.simplefilter("ignore", ckks.RangeWarning)
boot = ckks.Params.preset("boot-n12-precise")
bctx = ckks.Context(boot, seed=3)
bctx.keygen()
bctx.bootstrap_keys(progress=False)
values = np.random.default_rng(11).uniform(-1, 1, boot.slots)
low = bctx.encrypt(values, level=0)
for iterations in (1, 2):
    out = ckks.bootstrap(low, iterations=iterations)
    bits = ckks.precision_bits(bctx.decrypt(out, real=True), values)
    predicted = ckks.predicted_precision(out)
    print(f"{iterations} iteration{'s' * (iterations > 1)}: measured {bits:.1f} bits, "
          f"predicted {predicted:.1f}, level {out.level}")  # fmt: skip
    assert abs(predicted - bits) <= 2
assert bits >= 40

# %% [markdown]
# The message matters too. EvalMod reads each coefficient of the message near an integer, and its
# sine identity errs as the coefficient's fifth power. Random slots make small coefficients; slots
# all 1 make one coefficient of 1, at the edge of the range, and one bootstrap keeps 25 bits of
# it. The encoder notes the message's largest coefficient, so the prediction says so before
# anything runs.

# %%
ones = ckks.bootstrap(bctx.encrypt(np.ones(boot.slots), level=0))
bits = ckks.precision_bits(bctx.decrypt(ones, real=True), np.ones(boot.slots))
print(f"slots all 1: measured {bits:.1f} bits, predicted {ckks.predicted_precision(ones):.1f}")
assert abs(ckks.predicted_precision(ones) - bits) <= 2 and bits < 27

# %% [markdown]
# Each iteration is a region of the bootstrap: the report of `python -m ren.viz` shows
# `iteration 1` and `iteration 2`, each with its four stages, measured and predicted. The guide
# *How much precision will I get?* writes the model out.
