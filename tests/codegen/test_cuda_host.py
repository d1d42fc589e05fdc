"""The host emulator of CUDA C (``ren.codegen.cuda_host``): entry points, launches, refusals.

Oracle: plain NumPy for the toy kernels; the python backend for Ren's own kernels (in
``tests/backends``).
"""

from __future__ import annotations

import numpy as np
import pytest

from ren.codegen.compiler import CompileError
from ren.codegen.cuda_host import HostModule, entry_points
from tests.threads import in_threads

pytestmark = pytest.mark.cc

SOURCE = """\
#include <stdint.h>
__constant__ uint64_t K[2] = {3, 5};
__device__ __forceinline__ uint64_t f(uint64_t x) { return x * K[0] + K[1]; }
extern "C" __global__ void __launch_bounds__(256) affine(
    uint64_t *__restrict__ out, const uint64_t *__restrict__ in, int count)
{
    const long long gidx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (gidx >= count) return;
    out[gidx] = f(in[gidx]) + gridDim.x;
}
extern "C" __global__ void hi(uint64_t *out, const uint64_t *a, const uint64_t *b,
                              uint32_t *out32, unsigned long long n)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = __umul64hi(a[i], b[i]);
    out32[i] = __umulhi((uint32_t)a[i], (uint32_t)b[i]);
}
"""


def test_entry_points_are_parsed_with_their_parameters():
    entries = entry_points(SOURCE)
    assert list(entries) == ["affine", "hi"]
    assert entries["affine"] == [
        ("uint64_t *__restrict__", "out"),
        ("const uint64_t *__restrict__", "in"),
        ("int", "count"),
    ]
    assert entries["hi"][-1] == ("unsigned long long", "n")


@pytest.mark.parametrize("reverse", [False, True], ids=["in-order", "reversed"])
def test_every_thread_of_the_grid_runs_once(reverse):
    mod = HostModule(SOURCE, reverse=reverse)
    x = np.arange(1000, dtype=np.uint64)
    out = np.full(1024, 7, dtype=np.uint64)
    mod.get_function("affine")(out, x, np.int32(1000), block=(256, 1, 1), grid=(4, 1))
    np.testing.assert_array_equal(out[:1000], 3 * x + 5 + 4)
    assert (out[1000:] == 7).all()  # the guard kept the extra threads out


def test_launches_from_many_threads_at_once_each_run_their_own_grid():
    """Each host thread has its own blockIdx/threadIdx: concurrent launches do not mix."""
    fn = HostModule(SOURCE).get_function("affine")

    def launch(i: int) -> bool:
        x = np.arange(i, i + 4096, dtype=np.uint64)
        out = np.zeros(4096, dtype=np.uint64)
        grid = 16 + i  # a different grid per thread: gridDim.x enters every word
        for _ in range(20):
            fn(out, x, np.int32(4096), block=(256, 1, 1), grid=(grid, 1))
            if not np.array_equal(out, 3 * x + 5 + grid):
                return False
        return True

    assert in_threads(launch, 8) == [True] * 8


def test_high_words_of_products_match_python_integers():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2**64, 300, dtype=np.uint64)
    b = rng.integers(0, 2**64, 300, dtype=np.uint64)
    out, out32 = np.zeros(300, np.uint64), np.zeros(300, np.uint32)
    HostModule(SOURCE).get_function("hi")(
        out, a, b, out32, np.uint64(300), block=(128, 1, 1), grid=(3, 1)
    )
    assert out.tolist() == [int(x) * int(y) >> 64 for x, y in zip(a, b, strict=True)]
    lo = [(int(x) % 2**32) * (int(y) % 2**32) >> 32 for x, y in zip(a, b, strict=True)]
    assert out32.tolist() == lo


def test_bad_calls_are_clear_errors():
    mod = HostModule(SOURCE)
    with pytest.raises(KeyError, match="no __global__ entry 'nope'; the source has"):
        mod.get_function("nope")
    fn = mod.get_function("affine")
    with pytest.raises(TypeError, match="affine takes 3 arguments, got 2"):
        fn(np.zeros(1, np.uint64), np.zeros(1, np.uint64), block=(1, 1, 1), grid=(1, 1))
    with pytest.raises(ValueError, match="only 1-D grids"):
        fn(0, 0, np.int32(0), block=(1, 2, 1), grid=(1, 1))


@pytest.mark.parametrize(
    "body, name",
    [
        ("__shared__ uint64_t s[32]; s[0] = 1; __syncthreads();", "shared_memory"),
        ("__syncthreads();", "syncthreads"),
    ],
)
def test_kernels_that_need_real_parallel_threads_are_refused(body, name):
    src = f'#include <stdint.h>\nextern "C" __global__ void k(uint64_t *o) {{ {body} }}\n'
    with pytest.raises(CompileError, match=name):
        HostModule(src)


def test_a_source_without_entry_points_is_refused():
    with pytest.raises(CompileError, match="no extern"):
        HostModule("__device__ int f(int x) { return x; }")
