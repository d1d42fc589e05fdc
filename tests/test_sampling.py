"""``ren.ring.sampling``: ranges, exact counts and loose statistics, on the seeded and the OS paths.

The statistical bounds are many standard deviations wide (a false alarm is rarer than one in
10**6 per check on the OS path, and the seeded path is deterministic), so these tests do not flake.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ren.ring.sampling import (
    OsRandom,
    as_rng,
    check_sigma,
    gaussian,
    integers,
    sparse_ternary,
    ternary,
    uniform_below,
)

# both paths: a seed (NumPy PCG64) and None (os.urandom)
PATHS = [pytest.param(1234, id="seeded"), pytest.param(None, id="os")]


def chi_square(counts: np.ndarray, expected: float) -> float:
    return float(((counts - expected) ** 2 / expected).sum())


# chi-square tail bounds, far out: P(chi2_k > bound) < 1e-6 for these k
CHI2_BOUND = {1: 25.0, 2: 28.0, 6: 40.0, 7: 42.0, 15: 60.0}


# --------------------------------------------------------------------------------------------
# as_rng


def test_as_rng_none_is_os_random():
    gen = as_rng(None)
    assert isinstance(gen, OsRandom) and not isinstance(gen, np.random.Generator)
    a, b = gen.words(4), as_rng(None).words(4)
    assert a.dtype == np.uint64 and a.shape == (4,)
    assert not np.array_equal(a, b)  # 256 random bits twice: equal with probability 2**-256


def test_as_rng_seed_is_reproducible():
    a = as_rng(42).integers(0, 2**62, 16)
    b = as_rng(42).integers(0, 2**62, 16)
    c = as_rng(43).integers(0, 2**62, 16)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert isinstance(as_rng(42), np.random.Generator)
    assert isinstance(as_rng(42).bit_generator, np.random.PCG64)
    assert np.array_equal(as_rng(np.int64(42)).integers(0, 2**62, 16), a)
    assert as_rng(0) is not as_rng(0)  # a fresh generator each time
    # seeded samplers reproduce
    assert np.array_equal(uniform_below(7, 1000, 50), uniform_below(7, 1000, 50))
    assert np.array_equal(gaussian(7, 50), gaussian(7, 50))
    assert np.array_equal(sparse_ternary(7, 64, 10), sparse_ternary(7, 64, 10))
    assert integers(7, 0, 2**100, 5) == integers(7, 0, 2**100, 5)


def test_as_rng_generator_used_as_is():
    g = np.random.default_rng(5)
    assert as_rng(g) is g
    os_rng = OsRandom()
    assert as_rng(os_rng) is os_rng
    # a shared generator advances: two draws differ
    assert not np.array_equal(uniform_below(g, 2**40, 8), uniform_below(g, 2**40, 8))


@pytest.mark.parametrize(
    "bad",
    [1.5, "3", True, False, [1], np.random.RandomState(0), b"x"],
    ids=lambda v: type(v).__name__ if isinstance(v, np.random.RandomState) else repr(v),
)
def test_as_rng_bad_types(bad):
    with pytest.raises(TypeError, match="rng"):
        as_rng(bad)


@pytest.mark.parametrize("seed", [-1, -(2**70)])
def test_as_rng_negative_seed(seed):
    with pytest.raises(ValueError, match=str(seed)):
        as_rng(seed)


# --------------------------------------------------------------------------------------------
# uniform_below


@pytest.mark.parametrize("rng", PATHS)
@pytest.mark.parametrize("bound", [1, 2, 3, 7, 17, 2**32 + 1, 2**62 + 7, 3 * 2**61, 2**63])
def test_uniform_below_range(rng, bound):
    x = uniform_below(rng, bound, 2000)
    assert x.dtype == np.uint64 and x.shape == (2000,)
    assert int(x.max()) < bound
    if bound == 1:
        assert not x.any()


@pytest.mark.parametrize("rng", PATHS)
def test_uniform_below_sizes(rng):
    assert uniform_below(rng, 10, 0).shape == (0,)
    assert uniform_below(rng, 10, 1).shape == (1,)


@pytest.mark.parametrize("rng", PATHS)
@pytest.mark.parametrize("bound", [2, 7, 16])
def test_uniform_below_is_uniform(rng, bound):
    draws = 1000 * bound
    counts = np.bincount(uniform_below(rng, bound, draws).astype(np.int64), minlength=bound)
    assert counts.shape == (bound,) and counts.sum() == draws
    assert chi_square(counts, 1000) < CHI2_BOUND[bound - 1]


@pytest.mark.parametrize("rng", PATHS)
def test_uniform_below_high_bits(rng):
    # near 2**63 the top bits must be used: P(x >= 2**62) is 1/2 for 2**63 and 1/3 for 3*2**61
    for bound, p in ((2**63, 1 / 2), (3 * 2**61, 1 / 3)):
        x = uniform_below(rng, bound, 4000)
        frac = float(np.mean(x >= np.uint64(2**62)))
        assert abs(frac - p) < 0.05  # ~6 standard deviations


@pytest.mark.parametrize("bound", [0, -1, 2**63 + 1, 2**64])
def test_uniform_below_bad_bound(bound):
    with pytest.raises(ValueError, match=rf"bound {bound}\b"):
        uniform_below(1, bound, 4)


# --------------------------------------------------------------------------------------------
# integers


@pytest.mark.parametrize("rng", PATHS)
def test_integers_small_inclusive(rng):
    x = integers(rng, -3, 3, 7000)
    assert isinstance(x, np.ndarray) and x.dtype == np.int64
    counts = np.bincount(np.asarray(x) + 3, minlength=7)
    assert counts.shape == (7,)  # nothing outside [-3, 3]
    assert counts.min() > 0  # both ends included
    assert chi_square(counts, 1000) < CHI2_BOUND[6]
    assert list(integers(rng, 5, 5, 4)) == [5, 5, 5, 5]
    assert list(integers(rng, -(2**63), -(2**63), 2)) == [-(2**63)] * 2


@pytest.mark.parametrize("rng", PATHS)
@pytest.mark.parametrize(
    ("low", "high"),
    [
        (0, 2**62),  # span just above 2**62
        (-(2**63), -1),  # span exactly 2**63
        (2**62, 2**63 - 1),
        (-(2**62), 2**62 - 1),
    ],
    ids=["0..2^62", "-2^63..-1", "2^62..2^63-1", "-2^62..2^62-1"],
)
def test_integers_int64_edges(rng, low, high):
    x = integers(rng, low, high, 500)
    assert isinstance(x, np.ndarray) and x.dtype == np.int64  # they fit, so int64
    values = [int(v) for v in x]
    assert all(low <= v <= high for v in values)
    mid = low + (high - low) // 2
    assert any(v < mid for v in values) and any(v > mid for v in values)


@pytest.mark.parametrize("rng", PATHS)
@pytest.mark.parametrize(
    ("low", "high"),
    [
        (-(2**100), 2**100),
        (0, 2**64),  # just beyond 64 bits
        (-(2**63), 2**63 - 1),  # the full int64 range: span 2**64
        (-(2**200), -(2**199)),
        (3**90, 3**90 + 2**70),
    ],
    ids=["+-2^100", "0..2^64", "int64", "-2^200..-2^199", "3^90+"],
)
def test_integers_huge(rng, low, high):
    x = integers(rng, low, high, 400)
    assert len(x) == 400
    assert all(type(v) is int for v in x)
    assert all(low <= v <= high for v in x)
    # spread: the mean of (v - low) / span is 1/2 within ~10 standard deviations
    span = high - low
    mean = sum((v - low) / span for v in x) / len(x)
    assert abs(mean - 0.5) < 0.15
    # the top quarter and the bottom quarter both appear
    assert any(v - low > 3 * span // 4 for v in x) and any(v - low < span // 4 for v in x)


@pytest.mark.parametrize("rng", PATHS)
def test_integers_huge_inclusive_ends(rng):
    # a tiny span far beyond int64 goes through the Python int path: both ends appear
    for low in (2**70, -(2**64) - 5):
        x = integers(rng, low, low + 2, 300)
        assert set(x) == {low, low + 1, low + 2}


def test_integers_empty_interval():
    with pytest.raises(ValueError, match=r"low=5 > high=4"):
        integers(1, 5, 4, 3)


# --------------------------------------------------------------------------------------------
# ternary and sparse ternary


@pytest.mark.parametrize("rng", PATHS)
def test_ternary(rng):
    x = ternary(rng, 3000)
    assert x.dtype == np.int64 and x.shape == (3000,)
    assert set(np.unique(x).tolist()) == {-1, 0, 1}
    counts = np.array([(x == v).sum() for v in (-1, 0, 1)])
    assert chi_square(counts, 1000) < CHI2_BOUND[2]


@pytest.mark.parametrize("rng", PATHS)
@pytest.mark.parametrize(
    ("size", "h"), [(64, 0), (64, 1), (64, 32), (64, 64), (1024, 192), (1, 1), (0, 0)]
)
def test_sparse_ternary_exact_weight(rng, size, h):
    x = sparse_ternary(rng, size, h)
    assert x.dtype == np.int64 and x.shape == (size,)
    assert set(np.unique(x).tolist()) <= {-1, 0, 1}
    assert int(np.count_nonzero(x)) == h


@pytest.mark.parametrize("rng", PATHS)
def test_sparse_ternary_signs_and_positions(rng):
    gen = as_rng(rng)  # one generator for all trials (a seed would repeat one draw)
    size, h, trials = 16, 4, 800
    hits = np.zeros(size, dtype=np.int64)
    plus = minus = 0
    for _ in range(trials):
        x = sparse_ternary(gen, size, h)
        hits += x != 0
        plus += int((x == 1).sum())
        minus += int((x == -1).sum())
    assert plus + minus == h * trials
    # each sign has probability 1/2: 3200 draws, sd ~ 28
    assert abs(plus - minus) < 400
    # each position is chosen with probability h/size = 1/4: 200 expected per position
    assert hits.sum() == h * trials
    assert chi_square(hits, h * trials / size) < CHI2_BOUND[15] * 2  # (draws are not independent)


@pytest.mark.parametrize("rng", PATHS)
@pytest.mark.parametrize(("size", "h"), [(8, -1), (8, 9), (0, 1)])
def test_sparse_ternary_bad_weight(rng, size, h):
    with pytest.raises(ValueError, match=rf"hamming_weight={h}\b"):
        sparse_ternary(rng, size, h)


# --------------------------------------------------------------------------------------------
# gaussian


@pytest.mark.parametrize("rng", PATHS)
@pytest.mark.parametrize("sigma", [0.5, 3.2, 10.0, 100.0])
def test_gaussian(rng, sigma):
    x = gaussian(rng, 20000, sigma)
    assert x.dtype == np.int64 and x.shape == (20000,)
    assert int(np.abs(x).max()) <= 6 * sigma
    # rounding adds the variance 1/12 of a uniform on [-1/2, 1/2]
    expected_sd = math.sqrt(sigma**2 + 1 / 12)
    assert abs(float(x.std()) / expected_sd - 1) < 0.05  # sd of the estimate ~0.5%
    assert abs(float(x.mean())) < 0.05 * expected_sd + 0.05  # sd of the mean ~0.7% of sigma
    # about 68% within one sigma (loose; rounding shifts it a little for small sigma)
    if sigma >= 3:
        inside = float(np.mean(np.abs(x) <= sigma))
        assert 0.6 < inside < 0.76


def test_gaussian_default_sigma():
    x = gaussian(3, 20000)
    assert int(np.abs(x).max()) <= 19  # 6 * 3.2 = 19.2
    assert abs(float(x.std()) - 3.2) < 0.2


class _OutlierFirst(OsRandom):
    """OS randomness, except that the first Box-Muller pair is forced to a 8.6-sigma outlier."""

    def __init__(self) -> None:
        self.calls = 0

    def words(self, count: int) -> np.ndarray:
        self.calls += 1
        w = super().words(count)
        if self.calls == 1:
            # u1 = 2**-53 (the smallest): radius sqrt(-2 ln u1) ~ 8.57; u2 ~ 0: cos ~ 1
            w[0] = np.uint64(0)
            w[count // 2] = np.uint64(0)
        return w


def test_gaussian_redraws_beyond_six_sigma():
    gen = _OutlierFirst()
    x = gaussian(gen, 4, sigma=10.0)
    assert gen.calls >= 2  # the outlier was redrawn
    assert int(np.abs(x).max()) <= 60
    assert x.dtype == np.int64 and x.shape == (4,)


@pytest.mark.parametrize("sigma", [0, -1.0, float("nan"), float("inf"), -float("inf")])
def test_gaussian_bad_sigma(sigma):
    with pytest.raises(ValueError, match="sigma"):
        gaussian(1, 8, sigma)


def test_gaussian_large_sigma_is_refused_before_int64_overflow():
    # 6 * sigma past 2**53: a float no longer holds every integer (and 1e30 overflows int64)
    for sigma in (1e30, 2.0**53 / 6):
        with pytest.raises(ValueError, match=r"sigma=.* too large.*2\*\*53"):
            gaussian(1, 8, sigma)
    x = gaussian(1, 2000, 2.0**49)  # the largest power of two below the bound: exact samples
    assert x.dtype == np.int64 and int(np.abs(x).max()) <= 6 * 2**49
    assert len(set(x.tolist())) > 1900  # not collapsed onto a few values


@pytest.mark.parametrize("sigma", ["3.2", True, np.bool_(True), 1j, None, [3.2]], ids=repr)
def test_gaussian_sigma_must_be_a_real_number(sigma):
    with pytest.raises(TypeError, match="sigma must be a real number"):
        gaussian(1, 8, sigma)


def test_gaussian_sigma_of_any_real_type():
    from fractions import Fraction

    for sigma in (3, np.float32(3.0), np.int64(3), Fraction(3)):
        assert np.array_equal(gaussian(4, 64, sigma), gaussian(4, 64, 3.0))


# every count, bound and weight is an int: 2.0 or True would be silently taken as 2 or 1
BAD_INTS = [2.0, 2.5, True, "2", None]


@pytest.mark.parametrize("bad", BAD_INTS, ids=repr)
def test_counts_bounds_and_weights_must_be_ints(bad):
    with pytest.raises(TypeError, match="hamming_weight must be an int"):
        sparse_ternary(1, 8, bad)
    with pytest.raises(TypeError, match="size must be an int"):
        sparse_ternary(1, bad, 1)
    with pytest.raises(TypeError, match="size must be an int"):
        ternary(1, bad)
    with pytest.raises(TypeError, match="size must be an int"):
        gaussian(1, bad)
    with pytest.raises(TypeError, match="bound must be an int"):
        uniform_below(1, bad, 4)
    with pytest.raises(TypeError, match="low must be an int"):
        integers(1, bad, 5, 4)
    with pytest.raises(TypeError, match="high must be an int"):
        integers(1, 0, bad, 4)


def test_negative_size():
    for draw in (lambda: ternary(1, -1), lambda: uniform_below(1, 5, -1)):
        with pytest.raises(ValueError, match="size=-1 is out of range"):
            draw()


def test_numpy_ints_are_counts():
    assert sparse_ternary(3, np.int64(8), np.uint8(2)).tolist() == sparse_ternary(3, 8, 2).tolist()
    assert integers(3, np.int32(-2), np.int64(2), 5).tolist() == integers(3, -2, 2, 5).tolist()


def test_an_int_sigma_beyond_a_float_is_a_value_error():
    with pytest.raises(ValueError, match=r"sigma=1000+ must be a finite number"):
        check_sigma(10**400)
