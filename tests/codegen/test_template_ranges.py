"""The C templates run in parts, as a threaded graph runner's tasks run them, against the reference.

Oracle: :mod:`ren.ring.arith` for the rescale and the basis changes (a kernel run as ranges of
coefficients, each call with its own ``words`` table, must give the reference's words), and the
forward and inverse NTT of ``ren.ring`` for the NTT run limb by limb (pointers moved to the limb,
a ring table of that limb alone, ``ren.backends.cpu_tasks.ring_window``).
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from ren.backends import cpu_tasks
from ren.codegen import lift
from ren.codegen import templates as tp
from ren.codegen.ckernel import word_range
from ren.ring import RingSpec, ntt_primes
from ren.ring import arith as rk
from tests.codegen.test_templates import words

pytestmark = pytest.mark.cc

N = 256
SOURCE = RingSpec(N, ntt_primes(N, 50, 4))
TARGET = RingSpec(N, (*SOURCE.moduli[:2], *ntt_primes(N, 55, 2)))
NARROW = RingSpec(N, ntt_primes(N, 28, 3), dtype="u32")


def run_in_parts(build, kernel, tables, ranges, *inputs):
    """``kernel`` called once per coefficient range ``[lo, hi)``, each with its own ``words``."""
    out_arg = kernel.args[0]
    out = np.full(out_arg.shape, 0xAB, dtype=out_arg.dtype)
    fn = build(kernel)
    *fixed, whole = tables
    assert whole.tolist() == [0, N]  # the tables' own range: every coefficient
    for lo, hi in ranges:
        arrays = [out, *inputs, *fixed, word_range(N, lo, hi)]
        fn(*(ctypes.c_void_p(a.ctypes.data) for a in arrays))
    return out


RANGES = [[(0, N)], [(0, 64), (64, 128), (128, 192), (192, 256)], [(128, 256), (0, 128)]]


@pytest.mark.parametrize("ranges", RANGES, ids=["whole", "quarters", "backwards"])
def test_rescale_by_ranges_of_coefficients(build, ranges):
    a = words(SOURCE, 1)
    drop = SOURCE.moduli[-1:]
    got = run_in_parts(
        build, tp.rescale_source(SOURCE, drop), tp.rescale_tables(SOURCE, drop), ranges, a
    )
    assert np.array_equal(got, rk.rescale(SOURCE, a, drop))


@pytest.mark.parametrize("ranges", RANGES, ids=["whole", "quarters", "backwards"])
@pytest.mark.parametrize("target", [TARGET, NARROW], ids=["u64", "u32"])
def test_base_convert_by_ranges_of_coefficients(build, ranges, target):
    a = words(SOURCE, 2)
    kernel, tables = tp.base_convert_source(SOURCE, target), tp.base_convert_tables(SOURCE, target)
    got = run_in_parts(build, kernel, tables, ranges, a)
    assert np.array_equal(got, rk.base_convert(SOURCE, a, target))


@pytest.mark.parametrize("ranges", RANGES, ids=["whole", "quarters", "backwards"])
def test_lift_by_ranges_of_coefficients(build, ranges):
    one = RingSpec(N, SOURCE.moduli[1:2])
    a = words(one, 3)
    kernel, tables = lift.lift_source(one, TARGET), lift.lift_tables(one, TARGET)
    got = run_in_parts(build, kernel, tables, ranges, a)
    assert np.array_equal(got, rk.base_convert(one, a, TARGET))


@pytest.mark.parametrize("inverse", [False, True], ids=["ntt", "intt"])
def test_the_ntt_limb_by_limb_with_a_ring_window(build, inverse):
    kernel = tp.intt_source(SOURCE) if inverse else tp.ntt_source(SOURCE)
    tw, tw_shoup, ring = tp.intt_tables(SOURCE) if inverse else tp.ntt_tables(SOURCE)
    a = words(SOURCE, 4)
    out = np.full(a.shape, 0xAB, dtype=a.dtype)
    fn = build(kernel)
    for lo, hi in [(2, 4), (0, 1), (1, 2)]:  # any order, any width
        window = cpu_tasks.ring_window(ring, lo, hi)
        arrays = [out[lo:], a[lo:], tw[lo:], tw_shoup[lo:], window]
        fn(*(ctypes.c_void_p(x.ctypes.data) for x in arrays))
    want = rk.intt(SOURCE, a) if inverse else rk.ntt(SOURCE, a)
    assert np.array_equal(out, want)


def test_a_ring_window_holds_its_limbs_moduli_and_inverses():
    ring = tp.ring_table(SOURCE)
    window = cpu_tasks.ring_window(ring, 1, 3)
    L = SOURCE.L
    assert window.tolist() == [2, *ring[2:4].tolist(), *ring[1 + L + 1 : 1 + L + 3].tolist()]
    assert not window.flags.writeable
    with pytest.raises(ValueError, match="not a window"):
        cpu_tasks.ring_window(ring, 3, 5)
