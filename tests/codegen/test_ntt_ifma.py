"""The NTT's AVX-512 IFMA butterflies (``ren.codegen.ntt_ifma``) against the NumPy ring kernels.

Oracle: :func:`ren.ring.arith.ntt` and :func:`ren.ring.arith.intt`, word for word. Each source is
compiled as the ``cpu`` backend compiles it (``-march=native``) and again with
``-U__AVX512IFMA__``, which leaves only the template's loops: both must give the reference's
words, on limbs just below and just above the fast path's bound ``q < 2**50`` and beside limbs
that never take it. Where the compiler targets IFMA, a probe also checks that the fast path is
the one that ran.
"""

from __future__ import annotations

import ctypes
import subprocess

import numpy as np
import pytest

from ren.codegen import ntt_ifma
from ren.codegen import templates as tp
from ren.ring import RingSpec, ntt_primes
from ren.ring import arith as rk
from tests.codegen.test_templates import call, ring_of, words

pytestmark = pytest.mark.cc


def _native_defines() -> str:
    done = subprocess.run(
        ["cc", "-march=native", "-dM", "-E", "-"], input="", capture_output=True, text=True
    )
    return done.stdout


HAS_IFMA = "__AVX512IFMA__" in _native_defines()

#: Rings around the bound: 49-bit limbs (4q just below 2^51), 50-bit ones (the largest that take
#: the path), 51-bit ones (the first that do not), SEAL's 43/44-bit sizes, a 60-bit limb beside
#: fast ones, and n = 16 (the smallest n the path takes) and n = 8 (below it).
RINGS = [
    ring_of(8, (44,), "u64"),
    ring_of(16, (49, 44), "u64"),
    ring_of(32, (50,), "u64"),
    ring_of(64, (51, 49), "u64"),
    ring_of(256, (43, 60, 44), "u64"),
    ring_of(1024, (50, 50, 40), "u64"),
    ring_of(8192, (44,), "u64"),
]


def _id(ring: RingSpec) -> str:
    return f"n={ring.n}/bits={'-'.join(str(q.bit_length()) for q in ring.moduli)}"


@pytest.mark.parametrize("ring", RINGS, ids=_id)
@pytest.mark.parametrize("path", ["native", "template loops"])
def test_both_paths_give_the_reference_words(build, ring, path):
    extra = ("-U__AVX512IFMA__",) if path == "template loops" else ()
    a = words(ring, ring.n + 1)
    fwd = call(build, tp.ntt_source(ring), tp.ntt_tables(ring), a, extra=extra)
    np.testing.assert_array_equal(fwd, rk.ntt(ring, a))
    inv = call(build, tp.intt_source(ring), tp.intt_tables(ring), a, extra=extra)
    np.testing.assert_array_equal(inv, rk.intt(ring, a))
    back = call(build, tp.intt_source(ring), tp.intt_tables(ring), fwd, extra=extra)
    np.testing.assert_array_equal(back, a)


@pytest.mark.parametrize("fill", [0, 1, -1])
def test_extreme_words_at_the_bound(build, fill):
    """Limbs of all 0, all 1 or all q - 1 with the largest moduli below 2^50: the lazy values reach
    their widest (just under 4q < 2^52), where a lane past 52 bits would lose its top bits."""
    ring = RingSpec(4096, tuple(ntt_primes(4096, 50, 3)))
    assert all(q < 2**ntt_ifma.FAST_LIMIT_BITS for q in ring.moduli)
    a = np.array([[fill % q] * ring.n for q in ring.moduli], ring.np_dtype)
    for src, tables, ref in (
        (tp.ntt_source, tp.ntt_tables, rk.ntt),
        (tp.intt_source, tp.intt_tables, rk.intt),
    ):
        np.testing.assert_array_equal(call(build, src(ring), tables(ring), a), ref(ring, a))


PROBE = """
int ren_probe_fast(uint64_t q, int n, int inverse)
{
    static uint64_t a[64], src[64], w[64], ws[64];
    for (int k = 0; k < 64; ++k)
        w[k] = ws[k] = src[k] = 0;
    return inverse ? intt_limb_fast(a, src, (size_t)n, w, ws, q)
                   : ntt_limb_fast(a, src, (size_t)n, w, ws, q);
}
"""


@pytest.mark.skipif(not HAS_IFMA, reason="this machine's compiler does not target AVX-512 IFMA")
def test_the_fast_path_is_the_one_that_runs(build):
    """Where the compiler targets IFMA, ``ntt_limb_fast`` computes the limbs with q < 2^50 and
    n >= 16 (it returns 1), and leaves the others to the template's loops (it returns 0)."""
    ring = ring_of(64, (44,), "u64")
    kernel = tp.ntt_source(ring)
    probe = build(tp.CKernel(kernel.source + PROBE, "ren_probe_fast", ()))
    probe.restype = ctypes.c_int
    probe.argtypes = (ctypes.c_uint64, ctypes.c_int, ctypes.c_int)
    for inverse in (0, 1):
        assert probe(2**50 - 1, 64, inverse) == 1
        assert probe(2**44 + 1, 16, inverse) == 1
        assert probe(2**50 + 1, 64, inverse) == 0
        assert probe(2**44 + 1, 8, inverse) == 0


def test_u32_rings_get_only_the_stubs():
    ring = ring_of(64, (30,), "u32")
    assert ntt_ifma.fast_source(ring) == ntt_ifma.STUBS
    assert "__AVX512IFMA__" in ntt_ifma.fast_source(ring_of(64, (44,), "u64"))
    assert "ntt_limb_fast" in tp.ntt_source(ring).source
