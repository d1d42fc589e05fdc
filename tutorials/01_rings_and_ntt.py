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
# # Rings and the NTT by hand
#
# Every value in Ren is a polynomial in the ring `Z_Q[X]/(X^n + 1)`. This notebook computes in
# that ring twice: once by hand, with nothing but Python integers, and once with Ren, and checks
# at every step that the two agree:
#
# 1. the ring, and `Q` as a product of small primes (the RNS moduli);
# 2. a product by hand: the schoolbook negacyclic convolution;
# 3. the residues of a polynomial, one row per modulus;
# 4. the root of unity `psi` that the NTT uses, found as Ren finds it;
# 5. the NTT as evaluation at the odd powers of `psi`, in Ren's slot order, then the same with
#    butterflies;
# 6. products in the NTT domain, slot by slot, and the inverse NTT;
# 7. Montgomery form: the words Ren keeps in memory;
# 8. the Chinese remainder theorem, which turns the rows back into one integer per coefficient.
#
# The ring has degree `n = 8`, so every number fits on a line. `docs/rings.md` states the
# conventions used here.

# %%
import random

import numpy as np

from ren import Domain, Poly, RingSpec, ntt_primes
from ren.ring import primitive_root_2n

# %% [markdown]
# ## 1. The ring
#
# `RingSpec(n, moduli)` describes `Z_Q[X]/(X^n + 1)` with `Q` the product of the moduli. Each
# modulus is a prime `q` with `q = 1 (mod 2n)`: then the roots of `X^n + 1` exist modulo `q`,
# and the NTT below can be computed. All three moduli here are below `2^30`, so Ren stores every
# residue in a 32-bit word (`dtype="u32"`).

# %%
n = 8
moduli = (17, 97, 113)
ring = RingSpec(n=n, moduli=moduli)
Q = 17 * 97 * 113
print(ring)
print("Q =", ring.Q, "| limbs L =", ring.L, "| words per polynomial:", ring.size)
assert ring.Q == Q
for q in moduli:
    print(f"  {q} = {(q - 1) // (2 * n)} * {2 * n} + 1")

# %% [markdown]
# A modulus that breaks a rule is refused with a message naming it. `ntt_primes(n, bits, count)`
# finds suitable moduli: the largest primes below `2^bits` that are `1 (mod 2n)`.

# %%
try:
    RingSpec(n=8, moduli=(17, 19))
except ValueError as e:
    print("ValueError:", e)
print("ntt_primes(8, 10, 3) =", ntt_primes(8, 10, 3))

# %% [markdown]
# ## 2. A product by hand
#
# In `Z[X]/(X^n + 1)` the rule `X^n = -1` folds the top half of a product back onto the bottom
# half with a minus sign: the term `a_i b_j X^(i+j)` lands on coefficient `i + j` when
# `i + j < n`, and on `i + j - n`, negated, otherwise. This is the *negacyclic convolution*.


# %%
def negacyclic_mul(a: list[int], b: list[int]) -> list[int]:
    """Schoolbook product in Z[X]/(X^n + 1), over the integers."""
    size = len(a)
    c = [0] * size
    for i in range(size):
        for j in range(size):
            if i + j < size:
                c[i + j] += a[i] * b[j]
            else:
                c[i + j - size] -= a[i] * b[j]  # X^n = -1
    return c


a = [1, 2, 3, 4, 5, 6, 7, 8]
b = [2, 7, -1, 8, -2, 8, 1, -8]
c = negacyclic_mul(a, b)
print("a * b by hand:", c)

# %% [markdown]
# Ren's `Poly` takes the same coefficients (any Python ints). The product is lazy: `pa * pb`
# only builds a graph, and `tolist()` runs it. `tolist(centered=True)` gives each coefficient in
# `(-Q/2, Q/2]`, which is the integer product itself as long as it is smaller than `Q/2`.

# %%
pa, pb = Poly(a, ring), Poly(b, ring)
pc = pa * pb
print(pc)  # nothing has run yet
print("a * b by Ren: ", pc.tolist(centered=True))
assert pc.tolist(centered=True) == c

# %% [markdown]
# ## 3. Residues: one row per modulus
#
# Ren never works with `Q` directly. A polynomial is held as `L` rows: row `i` is the
# polynomial with every coefficient reduced modulo `q_i`. `limbs()` returns those rows as an
# `(L, n)` array. Negative coefficients become `q - |x|`.

# %%
rows_b = [[x % q for x in b] for q in moduli]
print(pb.limbs())
assert pb.limbs().tolist() == rows_b

# %% [markdown]
# In a notebook, a `Poly` on the last line of a cell shows itself: its ring, its domain, whether
# it is stored or still a graph, and its first residues as a table, one row per limb.

# %%
pb

# %% [markdown]
# ## 4. The root of unity `psi`
#
# Modulo a prime `q = 1 (mod 2n)`, the polynomial `X^n + 1` has `n` roots. They are the
# *primitive `2n`-th roots of unity*: the `x` with `x^n = -1 (mod q)`, whose powers `x, x^2,
# ..., x^(2n)` run through `2n` different values before coming back to 1. Ren's convention is to
# take the **smallest** of them as `psi`. With a prime this small we can simply try every `x`.

# %%
psi = {}
for q in moduli:
    roots = [x for x in range(1, q) if pow(x, n, q) == q - 1]  # x^n = -1: the roots of X^n + 1
    psi[q] = min(roots)
    print(f"q = {q:3}: roots of X^8 + 1 = {roots}, psi = {psi[q]}")

# %% [markdown]
# Ren finds `psi` with a generator of the multiplicative group instead of a search (the same
# answer, fast for 60-bit primes), and keeps it with the other per-modulus constants in
# `ring.tables()`:

# %%
for i, q in enumerate(moduli):
    assert primitive_root_2n(q, n) == psi[q] == ring.tables().mods[i].psi
print("psi per modulus, from Ren:", [m.psi for m in ring.tables().mods])

# %% [markdown]
# ## 5. The NTT as evaluation
#
# The roots of `X^n + 1` are the odd powers `psi^1, psi^3, ..., psi^(2n-1)`. The NTT of a
# polynomial is its values at those `n` points. The order matters when comparing words: Ren puts
# in **slot `k`** the value at `psi^(2*brv(k) + 1)`, where `brv(k)` reverses the `log2(n)` bits
# of `k`. That is the order a Cooley-Tukey NTT produces without a reordering step (section 5b).

# %%
bits = n.bit_length() - 1  # 3


def brv(k: int) -> int:
    """Reverse the low `bits` bits of k."""
    return int(format(k, f"0{bits}b")[::-1], 2)


print("slot k        :", list(range(n)))
print("brv(k)        :", [brv(k) for k in range(n)])
print("2*brv(k) + 1  :", [2 * brv(k) + 1 for k in range(n)])
for q in moduli:
    print(f"point mod {q:3}:", [pow(psi[q], 2 * brv(k) + 1, q) for k in range(n)])

# %% [markdown]
# The NTT by its definition: evaluate with Horner's rule at each point, for each modulus.


# %%
def ntt_by_definition(coeffs: list[int], q: int) -> list[int]:
    """Slot k = a(psi^(2*brv(k) + 1)) mod q."""
    slots = []
    for k in range(n):
        x = pow(psi[q], 2 * brv(k) + 1, q)
        acc = 0
        for coeff in reversed(coeffs):
            acc = (acc * x + coeff) % q
        slots.append(acc)
    return slots


slots_a = [ntt_by_definition(a, q) for q in moduli]
slots_b = [ntt_by_definition(b, q) for q in moduli]
print("NTT of a by hand:")
print(np.array(slots_a))

# %% [markdown]
# In Ren, `pa.ntt()` is the same value in NTT form. Its `limbs()` are the slots, plain residues
# in Ren's order:

# %%
A = pa.ntt()
print(A.domain)
print(A.limbs())
assert A.limbs().tolist() == slots_a

# %% [markdown]
# A value not computed yet shows the graph it will run instead of words (nothing runs to show
# it): here the slot-by-slot product of the two NTTs.

# %%
pa.ntt() * pb.ntt()

# %% [markdown]
# ### 5b. The same with butterflies
#
# Evaluating at `n` points one by one costs `n^2` multiplications. The Cooley-Tukey NTT does it
# in `n log2(n)`. Stage `m = 1, 2, 4, ...` splits the array into `m` blocks; each block is a
# pair of halves `U`, `V`, and with one twiddle `w = psi^brv(m + i)` per block the butterfly is
# `(U, V) -> (U + w V, U - w V)`. Folding the powers of `psi` into the twiddles ("merged
# twiddles") is what turns the cyclic FFT into the negacyclic one, and the result comes out in
# bit-reversed order: exactly the slot order above. Ren's NumPy kernel does these same stages on
# all limbs at once.


# %%
def ntt_butterflies(coeffs: list[int], q: int, stages: list | None = None) -> list[int]:
    """Cooley-Tukey negacyclic NTT with merged twiddles; output in Ren's slot order.

    ``stages``, when given, gets ``(m, twiddles, array)`` after each stage.
    """
    x = [coeff % q for coeff in coeffs]
    m, t = 1, n
    while m < n:
        t //= 2
        twiddles = []
        for i in range(m):
            w = pow(psi[q], brv(m + i), q)
            twiddles.append(w)
            for j in range(2 * i * t, 2 * i * t + t):
                u, v = x[j], x[j + t] * w % q
                x[j], x[j + t] = (u + v) % q, (u - v) % q
        if stages is not None:
            stages.append((m, twiddles, list(x)))
        m *= 2
    return x


for q, row in zip(moduli, slots_a, strict=True):
    assert ntt_butterflies(a, q) == row
print("butterflies == definition for every modulus")

# %% [markdown]
# The stages one under another, for the first modulus: each row is the array after a stage, with
# the stage's twiddles. `ren.display` makes the same small tables Ren's own displays are made
# of; `Display(html, text)` shows the HTML in a notebook and the text in a script.

# %%
from ren.display import Display, box, table

q = moduli[0]
stages: list = []
ntt_butterflies(a, q, stages)
rows = [["input", "", *[x % q for x in a]]]
rows += [[f"m = {m}", " ".join(map(str, ws)), *x] for m, ws, x in stages]
assert stages[-1][2] == slots_a[0]
Display(
    box(f"the butterflies of a, mod {q}", table(["stage", "twiddles", *range(n)], rows)),
    "\n".join(f"{r[0]:>8}: {r[2:]}" for r in rows),
)

# %% [markdown]
# ## 6. Products slot by slot, and the inverse
#
# Each slot is a value `a(r)` at a root `r` of `X^n + 1`, and `(a*b)(r) = a(r) * b(r)` there
# (the `X^n + 1` part of the product vanishes at `r`). So the negacyclic product becomes `n`
# independent multiplications in the NTT domain.

# %%
slot_products = [
    [x * y % q for x, y in zip(ra, rb, strict=True)]
    for q, ra, rb in zip(moduli, slots_a, slots_b, strict=True)
]
assert slot_products == [ntt_by_definition(c, q) for q in moduli]  # = the NTT of a * b
C = pa.ntt() * pb.ntt()
print(C.limbs())
assert C.limbs().tolist() == slot_products

# %% [markdown]
# Ren computes every product of two polynomials this way, even when you write `pa * pb` on
# coefficient-form values: the scheduler inserts the NTTs for you, and the result is in NTT form.

# %%
print("domain of pa * pb:", (pa * pb).domain)

# %% [markdown]
# The inverse NTT recovers the coefficients from the slots. Writing `w_k` for the point of slot
# `k`, the sum `sum_k w_k^(i-j)` is `n` when `i = j` and `0` otherwise (the points are the odd
# powers of `psi`), so `a_i = n^-1 * sum_k slot_k * w_k^-i (mod q)`. (Ren's kernel undoes the
# butterflies stage by stage instead, Gentleman-Sande style, then multiplies by `n^-1`.)


# %%
def intt_by_definition(slots: list[int], q: int) -> list[int]:
    """Coefficient i = n^-1 * sum_k slots[k] * w_k^-i mod q."""
    n_inv = pow(n, -1, q)
    inv_points = [pow(psi[q], -(2 * brv(k) + 1), q) for k in range(n)]
    return [
        n_inv * sum(s * pow(w, i, q) for s, w in zip(slots, inv_points, strict=True)) % q
        for i in range(n)
    ]


rows_c = [intt_by_definition(row, q) for q, row in zip(moduli, slot_products, strict=True)]
print(np.array(rows_c))
assert rows_c == [[x % q for x in c] for q in moduli]

# %% [markdown]
# Ren can take our hand-made slots as a value (`Poly.from_limbs` with `Domain.NTT`) and invert
# them itself with `.intt()`:

# %%
ours = Poly.from_limbs(np.array(slot_products), ring, domain=Domain.NTT)
assert ours.intt().limbs().tolist() == rows_c
assert C.intt().limbs().tolist() == rows_c
print("Ren's INTT of the hand-made slots:", ours.intt().tolist(centered=True))

# %% [markdown]
# ## 7. Montgomery form: the words in memory
#
# `limbs()` shows plain residues, but that is not what Ren stores. Every word in a buffer is in
# *Montgomery form* `x * R mod q` with `R = 2^32` for `u32` rings. The reason is the product: for
# stored words `xR` and `yR`, the Montgomery reduction `REDC(T) = T * R^-1 mod q` of `T = xR * yR`
# is `xyR`, the stored form of the product, and it needs only multiplications modulo `R` (free on
# a 32-bit machine) and a shift, never a division by `q`. `tobytes()` gives the raw buffer,
# little-endian, limb-major.

# %%
R = 2**32


def to_mont(rows: list[list[int]]) -> list[list[int]]:
    """Stored words of plain residues: x * R mod q."""
    return [[x * R % q for x in row] for q, row in zip(moduli, rows, strict=True)]


words_a = np.frombuffer(pa.tobytes(), dtype="<u4").reshape(ring.L, n)
print("residues of a:\n", pa.limbs())
print("words of a in memory:\n", words_a)
assert words_a.tolist() == to_mont([[x % q for x in a] for q in moduli])
print("R mod q:", [R % q for q in moduli])

# %% [markdown]
# Modulo 17 the words equal the residues: `2^8 = 256 = 1 (mod 17)`, so `R = 2^32 = 1 (mod 17)`.
# Modulo 97 and 113 they differ. Now `REDC` by hand, on the NTT words of `a` and `b`. With
# `q' = q^-1 mod R`, `m = T * q' mod R` makes `T - m*q` divisible by `R`, and `(T - m*q) / R` is
# `T * R^-1 mod q` up to one correction by `q`:


# %%
def redc(T: int, q: int) -> int:
    """T * R^-1 mod q for 0 <= T < q*R: multiplications mod R and a shift, no division."""
    q_inv = pow(q, -1, R)  # Ren keeps it in ring.tables().mods[i].q_inv
    m = (T % R) * q_inv % R
    t = (T - m * q) >> 32  # exact: T - m*q = 0 (mod R), and -q < t < q
    return t + q if t < 0 else t


def words(p: Poly) -> np.ndarray:
    """The stored words of a poly, as an (L, n) array."""
    return np.frombuffer(p.tobytes(), dtype="<u4").reshape(ring.L, n)


wa, wb = words(pa.ntt()), words(pb.ntt())
assert wa.tolist() == to_mont(slots_a) and wb.tolist() == to_mont(slots_b)
mont_products = [
    [redc(int(x) * int(y), q) for x, y in zip(ra, rb, strict=True)]
    for q, ra, rb in zip(moduli, wa, wb, strict=True)
]
print("REDC of the word products:\n", np.array(mont_products))
print("words of pa.ntt() * pb.ntt():\n", words(C))
assert words(C).tolist() == mont_products == to_mont(slot_products)
for i, q in enumerate(moduli):
    mods = ring.tables().mods[i]
    assert (mods.q_inv, mods.r_mod_q, mods.r2_mod_q) == (pow(q, -1, R), R % q, R * R % q)

# %% [markdown]
# ## 8. The Chinese remainder theorem: back to one integer
#
# The rows are residues of one integer per coefficient modulo `Q`. The CRT rebuilds it: with
# `Q_i = Q / q_i`, `x = sum_i r_i * (Q_i^-1 mod q_i) * Q_i (mod Q)`. Each term is `r_i` modulo
# `q_i` and `0` modulo every other modulus. This is what `tolist()` does after decoding the
# Montgomery words (and after an inverse NTT for NTT-form values).


# %%
def crt(rows: list[list[int]]) -> list[int]:
    """One integer in [0, Q) per coefficient from its residues."""
    out = [0] * n
    for q, row in zip(moduli, rows, strict=True):
        Qi = Q // q
        factor = Qi * pow(Qi, -1, q)
        for j, r in enumerate(row):
            out[j] += r * factor
    return [x % Q for x in out]


def centered(x: int) -> int:
    """The representative of x mod Q in (-Q/2, Q/2]."""
    return x - Q if x > Q // 2 else x


whole = crt(rows_c)
print("CRT of the rows of a * b:", whole)
print("centered                :", [centered(x) for x in whole])
print("Ren tolist()            :", pc.tolist())
assert pc.tolist() == whole and [centered(x) for x in whole] == c

# %% [markdown]
# ## Check
#
# The same steps once more, on a random pair with coefficients far larger than `Q` (each is
# reduced modulo every `q_i` on the way in), checked word for word: the residues, the NTT slots
# (by definition and by butterflies), the stored Montgomery words, the product's slots and
# words, the inverse NTT, and the coefficients by CRT against the integer product reduced
# modulo `Q`.

# %%
rnd = random.Random(2024)
x = [rnd.randrange(-(10**12), 10**12) for _ in range(n)]
y = [rnd.randrange(-(10**12), 10**12) for _ in range(n)]
px, py = Poly(x, ring), Poly(y, ring)
prod = px.ntt() * py.ntt()

rows_x = [[v % q for v in x] for q in moduli]
slots_x = [ntt_by_definition(x, q) for q in moduli]
slots_y = [ntt_by_definition(y, q) for q in moduli]
want_slots = [
    [u * v % q for u, v in zip(sx, sy, strict=True)]
    for q, sx, sy in zip(moduli, slots_x, slots_y, strict=True)
]
want_coeffs = [v % Q for v in negacyclic_mul(x, y)]

assert px.limbs().tolist() == rows_x
assert words(px).tolist() == to_mont(rows_x)
assert px.ntt().limbs().tolist() == slots_x
assert [ntt_butterflies(x, q) for q in moduli] == slots_x
assert words(px.ntt()).tolist() == to_mont(slots_x)
assert prod.limbs().tolist() == want_slots
assert words(prod).tolist() == to_mont(want_slots)
want_rows = [intt_by_definition(s, q) for q, s in zip(moduli, want_slots, strict=True)]
assert want_rows == [[v % q for v in want_coeffs] for q in moduli]
assert prod.intt().limbs().tolist() == want_rows
assert crt(want_rows) == want_coeffs
assert prod.tolist() == want_coeffs
assert (px * py).tolist(centered=True) == [centered(v) for v in want_coeffs]
print("all checks passed")
