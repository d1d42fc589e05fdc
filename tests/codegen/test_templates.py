"""The C templates of ``ren.codegen.templates`` against the NumPy ring kernels, word for word.

Oracle: :mod:`ren.ring.arith` (itself checked against Python big integers in
``tests/backends/test_ring_kernels.py``). Each kernel is compiled with the system C compiler
(``cc -O3 -march=native -shared -fPIC``), loaded with ctypes and run on NumPy arrays; its words
must equal the reference's exactly, on seeded and hypothesis-drawn rings of both word sizes with
the edge words ``0`` and ``q - 1`` in every limb.
"""

from __future__ import annotations

import ctypes
import re
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ren.codegen import helpers
from ren.codegen import templates as tp
from ren.ring import RingSpec, ntt_primes
from ren.ring import arith as rk
from tests.strategies import coeff_lists, edge_values, rings

pytestmark = pytest.mark.cc

# --------------------------------------------------------------------------------------------
# compiling and calling (ren.codegen.compiler will replace this)


def call(
    build,
    kernel: tp.CKernel,
    tables,
    *inputs: np.ndarray,
    openmp: bool = False,
    extra: tuple[str, ...] = (),
):
    """Run ``kernel`` on ``inputs`` and ``tables`` (checked against ``kernel.args``); return out."""
    out_arg, *rest = kernel.args
    arrays = [*inputs, *tables]
    assert len(arrays) == len(rest), (kernel.args, len(arrays))
    for arg, arr in zip(rest, arrays, strict=True):
        assert (arr.dtype.name, arr.shape) == (arg.dtype, arg.shape), arg
        assert arr.flags.c_contiguous
    out = np.full(out_arg.shape, 0xAB, dtype=out_arg.dtype)  # garbage that must be overwritten
    fn = build(kernel, openmp, extra)
    fn(*(ctypes.c_void_p(a.ctypes.data) for a in [out, *arrays]))
    return out


def words(ring: RingSpec, seed: int) -> np.ndarray:
    """Random ``(L, n)`` words in ``[0, q_i)``; every 5th slot (from 0) is ``0`` and every 7th
    (from the last) is ``q_i - 1``, so each limb has both edge words in both halves."""
    rng = np.random.default_rng(seed)
    rows = [rng.integers(0, q, size=ring.n, dtype=np.uint64) for q in ring.moduli]
    out = np.stack(rows)
    out[:, ::5] = 0
    out[:, ::-7] = (np.array(ring.moduli, dtype=np.uint64) - 1)[:, None]
    return out.astype(ring.np_dtype)


def ring_of(n: int, bits: tuple[int, ...], dtype: str) -> RingSpec:
    """A ring of ``n`` with one modulus per entry of ``bits`` (distinct primes of those sizes)."""
    moduli: list[int] = []
    for b in bits:
        moduli.append(next(p for p in ntt_primes(n, b, len(bits)) if p not in moduli))
    return RingSpec(n, tuple(moduli), dtype)


#: seeded rings: every n from 2 to 4096 somewhere, 1..4 limbs, both dtypes, mixed bit sizes.
RINGS = [
    ring_of(2, (30,), "u32"),
    ring_of(4, (20, 30), "u32"),
    ring_of(8, (62, 40, 31), "u64"),
    ring_of(16, (29,), "u64"),  # a small modulus in 64-bit words
    ring_of(32, (30, 30, 30, 30), "u32"),
    ring_of(64, (60,), "u64"),
    ring_of(128, (25, 30), "u32"),
    ring_of(256, (50, 62), "u64"),
    ring_of(512, (30, 28, 30), "u32"),
    ring_of(1024, (62, 62, 36, 60), "u64"),
    ring_of(2048, (30,), "u32"),
    ring_of(4096, (60, 60), "u64"),
    ring_of(4096, (30, 30, 30), "u32"),
]


def ring_id(ring: RingSpec) -> str:
    return f"N={ring.n}/limbs={ring.L}/{ring.dtype}"


# --------------------------------------------------------------------------------------------
# NTT


@pytest.mark.parametrize("ring", RINGS, ids=ring_id)
def test_ntt_and_intt_match_ring_kernels(build, ring):
    a = words(ring, ring.n)
    fwd = call(build, tp.ntt_source(ring), tp.ntt_tables(ring), a)
    np.testing.assert_array_equal(fwd, rk.ntt(ring, a))
    inv = call(build, tp.intt_source(ring), tp.intt_tables(ring), a)
    np.testing.assert_array_equal(inv, rk.intt(ring, a))
    back = call(build, tp.intt_source(ring), tp.intt_tables(ring), fwd)
    np.testing.assert_array_equal(back, a)  # intt(ntt(a)) == a


@settings(max_examples=12)
@given(ring=rings(max_n=4096, max_limbs=4), seed=st.integers(0, 2**32 - 1))
def test_ntt_and_intt_match_on_random_rings(build, ring, seed):
    a = words(ring, seed)
    np.testing.assert_array_equal(
        call(build, tp.ntt_source(ring), tp.ntt_tables(ring), a), rk.ntt(ring, a)
    )
    np.testing.assert_array_equal(
        call(build, tp.intt_source(ring), tp.intt_tables(ring), a), rk.intt(ring, a)
    )


@pytest.mark.parametrize("dtype", ["u32", "u64"])
def test_ntt_extreme_words(build, dtype):
    """All-zero and all-(q-1) limbs: the lazy bounds are at their widest."""
    ring = ring_of(1024, (30, 30) if dtype == "u32" else (62, 62), dtype)
    for fill in (0, -1):
        a = np.array([[q + fill if fill else 0] * ring.n for q in ring.moduli], ring.np_dtype)
        for src, tables, ref in (
            (tp.ntt_source, tp.ntt_tables, rk.ntt),
            (tp.intt_source, tp.intt_tables, rk.intt),
        ):
            np.testing.assert_array_equal(call(build, src(ring), tables(ring), a), ref(ring, a))


def test_ntt_with_openmp(build):
    ring = ring_of(2048, (60, 60, 50, 40), "u64")
    a = words(ring, 7)
    fwd = call(build, tp.ntt_source(ring), tp.ntt_tables(ring), a, openmp=True)
    np.testing.assert_array_equal(fwd, rk.ntt(ring, a))
    inv = call(build, tp.intt_source(ring), tp.intt_tables(ring), fwd, openmp=True)
    np.testing.assert_array_equal(inv, a)


def test_other_kernels_with_openmp(build):
    """The coefficient loops of rescale and base conversion keep their scratch per thread."""
    ring = ring_of(1024, (60, 60, 50, 40), "u64")
    target = RingSpec(1024, (*ntt_primes(1024, 58, 2), ring.moduli[1]))
    a = words(ring, 11)
    drop = ring.moduli[1:3]
    kernel, tables = tp.rescale_source(ring, drop), tp.rescale_tables(ring, drop)
    got = call(build, kernel, tables, a, openmp=True)
    np.testing.assert_array_equal(got, rk.rescale(ring, a, drop))
    got = call(
        build,
        tp.base_convert_source(ring, target),
        tp.base_convert_tables(ring, target),
        a,
        openmp=True,
    )
    np.testing.assert_array_equal(got, rk.base_convert(ring, a, target))


@pytest.mark.parametrize("ring", [RINGS[0], RINGS[2], RINGS[9]], ids=ring_id)
def test_ntt_tables_are_plain_powers_with_shoup_companions(ring):
    tw, tw_shoup, table = tp.ntt_tables(ring)
    itw, itw_shoup, itable = tp.intt_tables(ring)
    assert table is itable is tp.ring_table(ring)  # L, the moduli, q^-1 mod R
    R = 1 << ring.word_bits
    qinv = [pow(q, -1, R) for q in ring.moduli]
    assert table.tolist() == [ring.L, *ring.moduli, *qinv] and not table.flags.writeable
    assert tw.dtype == ring.np_dtype and tw.shape == (ring.L, ring.n)
    assert not tw.flags.writeable and not itw_shoup.flags.writeable
    assert tp.ntt_tables(ring) is tp.ntt_tables(ring)  # cached
    tab, R = ring.tables(), 1 << ring.word_bits
    for i, (q, m) in enumerate(zip(ring.moduli, tab.mods, strict=True)):
        brv = tab.brv.tolist()
        n_inv = pow(ring.n, -1, q)
        for k in range(ring.n):
            assert int(tw[i, k]) == pow(m.psi, brv[k], q)
            assert int(tw_shoup[i, k]) == int(tw[i, k]) * R // q
            want = pow(m.psi_inv, brv[k], q) * (n_inv if k == 1 else 1) % q
            assert int(itw[i, k]) == (n_inv if k == 0 else want)
            assert int(itw_shoup[i, k]) == int(itw[i, k]) * R // q


# --------------------------------------------------------------------------------------------
# rescale


RESCALE_CASES = [
    (ring_of(8, (30, 29), "u32"), (1,)),
    (ring_of(64, (62, 60, 61), "u64"), (2,)),
    (ring_of(64, (62, 60, 61), "u64"), (0,)),  # drop the first modulus
    (ring_of(256, (30, 30, 30, 25), "u32"), (3, 2)),
    (ring_of(256, (30, 30, 30, 25), "u32"), (0, 3)),
    (ring_of(2048, (60, 40, 62, 50), "u64"), (2, 3)),
    (ring_of(4096, (31, 60, 36), "u64"), (1, 0)),
]


@pytest.mark.parametrize(
    ("ring", "rows"), RESCALE_CASES, ids=[f"{ring_id(r)}/drop={d}" for r, d in RESCALE_CASES]
)
def test_rescale_matches_ring_kernels(build, ring, rows):
    drop = tuple(ring.moduli[i] for i in rows)
    kernel = tp.rescale_source(ring, drop if len(drop) > 1 else drop[0])
    for seed in (0, 1):
        a = words(ring, seed)
        got = call(build, kernel, tp.rescale_tables(ring, drop), a)
        np.testing.assert_array_equal(got, rk.rescale(ring, a, drop))


def test_rescale_rounds_edge_coefficients(build):
    """Every edge value of tests.strategies (0, +-1, q - 1, +-Q/2 and its neighbours, ...)."""
    ring = ring_of(512, (62, 61, 60), "u64")
    edges = edge_values(ring)
    a = rk.encode_coeffs(ring, [edges[i % len(edges)] * (1 + i // len(edges)) for i in range(512)])
    drop = (ring.moduli[2], ring.moduli[0])
    np.testing.assert_array_equal(
        call(build, tp.rescale_source(ring, drop), tp.rescale_tables(ring, drop), a),
        rk.rescale(ring, a, drop),
    )


# --------------------------------------------------------------------------------------------
# base conversion


def _targets() -> list[tuple[RingSpec, RingSpec]]:
    src32 = ring_of(256, (30, 30, 29), "u32")
    src64 = ring_of(1024, (60, 60, 50, 40), "u64")
    fresh32 = [p for p in ntt_primes(256, 28, 4)]
    fresh64 = [p for p in ntt_primes(1024, 61, 3)]
    return [
        (src32, RingSpec(256, (fresh32[0],), "u32")),  # one new modulus
        (src32, RingSpec(256, (src32.moduli[1], fresh32[1], src32.moduli[0]), "u32")),  # mixed
        (src32, RingSpec(256, (src32.moduli[2], src32.moduli[0]), "u32")),  # shared only
        (src32, RingSpec(256, (*src32.moduli[:2], ntt_primes(256, 55, 1)[0]), "u64")),  # to u64
        (src64, RingSpec(1024, (*fresh64, src64.moduli[3]), "u64")),
        (src64, RingSpec(1024, (ntt_primes(1024, 30, 1)[0],), "u32")),  # u64 to u32
        (ring_of(2, (30,), "u32"), RingSpec(2, (ntt_primes(2, 20, 2)[1],), "u32")),
        (ring_of(4096, (60, 60, 60, 60), "u64"), RingSpec(4096, ntt_primes(4096, 58, 2), "u64")),
    ]


BASE_CONVERT_CASES = _targets()


@pytest.mark.parametrize(
    ("ring", "target"),
    BASE_CONVERT_CASES,
    ids=[f"{ring_id(s)}->{ring_id(t)}" for s, t in BASE_CONVERT_CASES],
)
def test_base_convert_matches_ring_kernels(build, ring, target):
    kernel = tp.base_convert_source(ring, target)
    for seed in (0, 1):
        a = words(ring, seed)
        got = call(build, kernel, tp.base_convert_tables(ring, target), a)
        np.testing.assert_array_equal(got, rk.base_convert(ring, a, target))


@settings(max_examples=8)
@given(data=st.data())
def test_base_convert_matches_near_half_q(build, data):
    """Coefficients at and next to +-Q/2, where the float correction may be off by one: the words
    still match, because v is computed with the same float64 operations in the same order."""
    ring = data.draw(rings(max_n=64, max_limbs=6))
    extra = data.draw(st.sampled_from([20, 30, 50, 62]))
    fresh = [p for p in ntt_primes(ring.n, extra, 8) if p not in ring.moduli][:2]
    target = RingSpec(ring.n, (*fresh, ring.moduli[0]))
    Q, h = ring.Q, ring.Q // 2
    coeffs = data.draw(coeff_lists(ring))
    coeffs[: min(ring.n, 6)] = [h, h + 1, -h, h - 1, -h - 1, h + 2][: ring.n]
    a = rk.encode_coeffs(ring, [c % Q for c in coeffs])
    got = call(build, tp.base_convert_source(ring, target), tp.base_convert_tables(ring, target), a)
    np.testing.assert_array_equal(got, rk.base_convert(ring, a, target))


def test_base_convert_with_many_limbs_sums_in_numpy_order(build):
    """Twelve limbs: more than NumPy's pairwise-summation block, summed along axis 0 in order."""
    ring = RingSpec(64, ntt_primes(64, 60, 12))
    target = RingSpec(64, ntt_primes(64, 40, 2))
    rng = np.random.default_rng(5)
    Q = ring.Q
    coeffs = [int(x) * Q // (1 << 62) for x in rng.integers(0, 1 << 62, 64)]
    coeffs[:4] = [Q // 2, Q // 2 + 1, Q // 2 - 1, Q - 1]
    a = rk.encode_coeffs(ring, coeffs)
    got = call(build, tp.base_convert_source(ring, target), tp.base_convert_tables(ring, target), a)
    np.testing.assert_array_equal(got, rk.base_convert(ring, a, target))


def test_base_convert_folds_its_128_bit_sums(build):
    """Sixteen 62-bit limbs to 62-bit targets: more terms than 128 bits hold, so the sum is folded
    every FOLD terms. Every y_i is q_i - 1 (the largest term) and v is L - 1 or so."""
    ring = RingSpec(64, ntt_primes(64, 62, 16))
    target = RingSpec(64, ntt_primes(64, 62, 20)[16:])
    fold = int(tp.base_convert_tables(ring, target)[0][3])  # the table's FOLD
    assert fold < ring.L  # the folding path is the one tested
    Q = ring.Q
    biggest = sum((q - 1) * (Q // q) for q in ring.moduli) % Q  # y_i = q_i - 1 in every limb
    coeffs = [biggest, Q - 1, Q // 2, Q // 2 + 1] + [(biggest * k) % Q for k in range(60)]
    a = rk.encode_coeffs(ring, coeffs)
    got = call(build, tp.base_convert_source(ring, target), tp.base_convert_tables(ring, target), a)
    np.testing.assert_array_equal(got, rk.base_convert(ring, a, target))


def test_both_forms_of_the_u64_high_product_give_the_same_words(build):
    """mul_hi_u64 has two forms, picked by the preprocessor (four 32-bit products with AVX-512,
    one 128-bit product without); this machine compiles one by default, the other is forced by
    defining or undefining __AVX512F__ (the four-product form is plain C on any machine)."""
    native = subprocess.run(
        ["cc", "-march=native", "-dM", "-E", "-"], input="", capture_output=True, text=True
    ).stdout
    other = ("-U__AVX512F__",) if "__AVX512F__" in native else ("-D__AVX512F__",)
    ring = ring_of(1024, (62, 62, 36, 60), "u64")
    target = RingSpec(1024, ntt_primes(1024, 58, 2))
    a = words(ring, 3)
    for extra in ((), other):
        ntt = call(build, tp.ntt_source(ring), tp.ntt_tables(ring), a, extra=extra)
        np.testing.assert_array_equal(ntt, rk.ntt(ring, a))
        back = call(build, tp.intt_source(ring), tp.intt_tables(ring), ntt, extra=extra)
        np.testing.assert_array_equal(back, a)
        moved = call(
            build,
            tp.base_convert_source(ring, target),
            tp.base_convert_tables(ring, target),
            a,
            extra=extra,
        )
        np.testing.assert_array_equal(moved, rk.base_convert(ring, a, target))
        drop = ring.moduli[-1]
        tables = tp.rescale_tables(ring, drop)
        low = call(build, tp.rescale_source(ring, drop), tables, a, extra=extra)
        np.testing.assert_array_equal(low, rk.rescale(ring, a, drop))


# --------------------------------------------------------------------------------------------
# the sources themselves


def all_kernels(ring: RingSpec) -> list[tp.CKernel]:
    other = RingSpec(ring.n, ntt_primes(ring.n, 40, 1))
    return [
        tp.ntt_source(ring),
        tp.intt_source(ring),
        tp.rescale_source(ring, ring.moduli[-1]),
        tp.base_convert_source(ring, other),
    ]


def test_sources_are_cached_deterministic_and_documented():
    ring = RINGS[9]
    kernels = all_kernels(ring)
    twin = RingSpec(ring.n, ring.moduli, ring.dtype)  # an equal ring: the same sources
    assert [k.source for k in kernels] == [k.source for k in all_kernels(twin)]
    assert tp.ntt_source(ring) is tp.ntt_source(ring)
    assert len({k.name for k in kernels}) == len(kernels)
    assert kernels[0].name == f"ren_ntt_n{ring.n}_{ring.dtype}"  # every L and chain: one kernel
    for k in kernels:
        assert k.source.startswith("/*\n * " + k.name)  # the comment block says what it computes
        assert re.search(rf"\bvoid {k.name}\(", k.source)
        assert not re.search(r"\{[A-Za-z_]\w*\}", k.source), "an unfilled placeholder"
        assert [a.name for a in k.args[:2]] == ["out", "in"]
    # same shape, other moduli, fewer limbs: the same NTT source (the moduli are a table) ...
    other = ring_of(ring.n, (62, 62, 36, 61), "u64")
    assert tp.ntt_source(other).source == kernels[0].source
    assert tp.intt_source(other.with_moduli(other.moduli[:2])).source == kernels[1].source
    assert tp.rescale_source(other, other.moduli[0]).source == kernels[2].source
    # ... and the same basis extension (its constants are a table too)
    target = RingSpec(ring.n, ntt_primes(ring.n, 50, 2))
    assert tp.base_convert_source(other, target).source == kernels[3].source


def test_bad_arguments_raise():
    ring = RINGS[3]
    with pytest.raises(TypeError, match="RingSpec"):
        tp.base_convert_source(ring, (12289,))
    with pytest.raises(ValueError, match="no modulus"):
        tp.rescale_source(ring, ring.moduli)
    with pytest.raises(ValueError, match="not a modulus"):
        tp.rescale_source(ring, 12289)
    with pytest.raises(ValueError, match="degrees n differ"):
        tp.base_convert_source(ring, RingSpec(32, ntt_primes(32, 30, 1)))
    with pytest.raises(KeyError, match="placeholders"):
        helpers.fill("x = {a} + {b};", a=1)


def test_c_array_writes_exact_literals():
    text = helpers.c_array("F", "double", [float(2**61 - 1), 0.1])
    assert "0x1.0000000000000p+61" in text and float.hex(0.1) in text
    assert helpers.c_array("E", "int", []) == "static const int E[1] = {\n    0\n};"


def _lift_cases() -> list[tuple[RingSpec, RingSpec]]:
    n = 256
    q44, q60 = ntt_primes(n, 44, 1)[0], ntt_primes(n, 60, 1)[0]
    small, big = ntt_primes(n, 30, 1)[0], ntt_primes(n, 62, 1)[0]
    return [
        (RingSpec(n, (q44,)), RingSpec(n, (ntt_primes(n, 44, 2)[1], q44, q60))),  # p <, =, > q
        (RingSpec(n, (q60,)), RingSpec(n, (small, big, *ntt_primes(n, 58, 2)))),  # q >> p, q < p
        (RingSpec(n, (big,)), RingSpec(n, (q60, q44))),
        # q / p from about 1 to about 32
        (
            RingSpec(n, (ntt_primes(n, 48, 1)[0],)),
            RingSpec(
                n,
                (
                    *(ntt_primes(n, b, 1)[0] for b in (43, 44, 45, 46, 47, 48)),
                    ntt_primes(n, 48, 2)[1],
                ),
            ),
        ),
    ]


@pytest.mark.parametrize(("ring", "target"), _lift_cases(), ids=["44", "60", "62", "48"])
def test_the_one_limb_lift_gives_the_generic_words(build, ring, target):
    """The fast path for one source limb against the reference, near q/2 and at the ends.

    At 60 and 62 bits ``y / q`` rounds to 1/2 next to ``q/2``, so ``v`` is the float's, not the
    exact comparison's: both kernels must agree with ``ren.ring.arith.base_convert`` there too,
    on both sides of the lift's threshold.
    """
    from ren.codegen import lift
    from ren.ring.tables import lift_threshold

    assert lift.applies(ring, target)
    (q,) = ring.moduli
    h, t = q // 2, lift_threshold(q)
    coeffs = [0, 1, q - 1, h, h + 1, h - 1, h + 2, h - 2, t - 2, t - 1, t, t + 1]
    coeffs += [int(x) for x in np.random.default_rng(3).integers(0, q, ring.n - len(coeffs))]
    a = rk.encode_coeffs(ring, coeffs)
    want = rk.base_convert(ring, a, target)
    np.testing.assert_array_equal(
        call(build, lift.lift_source(ring, target), lift.lift_tables(ring, target), a), want
    )
    np.testing.assert_array_equal(
        call(build, tp.base_convert_source(ring, target), tp.base_convert_tables(ring, target), a),
        want,
    )


@pytest.mark.parametrize("bits", [30, 60])
def test_twiddle_tables_of_a_ring_of_the_chain_are_rows_of_the_chain_tables(bits: int):
    """The tables are stacked from rows made once per modulus: a ring that drops a modulus reads
    the same rows. Oracle: Python integers for the inverse table's first two words and every
    Shoup companion."""
    n = 16
    full = RingSpec(n, ntt_primes(n, bits, 3))
    sub = full.with_moduli(full.moduli[1:])
    for tables in (tp.ntt_tables, tp.intt_tables):
        (tw_f, sh_f, _), (tw_s, sh_s, _) = tables(full), tables(sub)
        assert tw_s.dtype == tw_f.dtype == full.np_dtype
        assert tw_s.tolist() == tw_f[1:].tolist() and sh_s.tolist() == sh_f[1:].tolist()
        assert not tw_s.flags.writeable and not sh_f.flags.writeable
    tw, shoup, _ = tp.intt_tables(full)
    for i, q in enumerate(full.moduli):
        n_inv = pow(n, -1, q)
        psi_inv = full.tables().mods[i].psi_inv
        assert int(tw[i, 0]) == n_inv
        assert int(tw[i, 1]) == pow(psi_inv, n // 2, q) * n_inv % q  # brv(1) = n/2
        bits_w = full.word_bits
        assert shoup[i].tolist() == [(int(w) << bits_w) // q for w in tw[i].tolist()]
