"""The CUDA programs of ``ren.codegen.cuda_templates`` against the NumPy ring kernels, word by word.

Oracle: :mod:`ren.ring.arith`. Without a GPU the programs run on
:mod:`ren.codegen.cuda_host`, which builds the CUDA C as C++ for the host and runs every thread of
every launch one after another (also in reverse order, which a kernel whose threads depended on
each other would not survive); their words must equal the reference's exactly on rings of both word
sizes, ``n`` from 2 to 1024, one and three limbs, with the edge words ``0`` and ``q - 1`` in every
limb. The ``nvcc`` test compiles one program of every family and shape to PTX for ``sm_90``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from ren.codegen import cuda_templates as ct
from ren.codegen import templates as tp
from ren.codegen.cuda_host import HostModule
from ren.ring import RingSpec, ntt_primes
from ren.ring import arith as rk
from tests.codegen.test_templates import ring_of, words

# --------------------------------------------------------------------------------------------
# running a program on the emulator

_MODULES: dict[tuple[str, bool], HostModule] = {}


def run_program(
    prog: ct.CUDAProgram, out: np.ndarray, inp: np.ndarray, reverse: bool = False
) -> np.ndarray:
    """Run every launch of ``prog`` in order on the host emulator; return ``out``.

    ``"out"`` and ``"in"`` name ``out`` and ``inp``, every other name a table of the program; each
    thread of each launch runs serially (block by block, or all in reverse with ``reverse``).
    """
    key = (prog.source, reverse)
    if key not in _MODULES:
        _MODULES[key] = HostModule(prog.source, reverse=reverse)
    mod = _MODULES[key]
    buffers = {"out": out, "in": inp, **prog.tables}
    for launch in prog.launches:
        args = [buffers[a] if isinstance(a, str) else a for a in launch.args]
        mod.get_function(launch.entry)(*args, block=(launch.block, 1, 1), grid=(launch.grid, 1))
    return out


def run(prog: ct.CUDAProgram, a: np.ndarray, out_ring: RingSpec, reverse: bool = False):
    """``prog`` on ``a``, into a fresh ``out_ring`` array of garbage that must be overwritten."""
    out = np.full((out_ring.L, out_ring.n), 0xAB, dtype=out_ring.np_dtype)
    return run_program(prog, out, np.ascontiguousarray(a), reverse)


def ring_id(ring: RingSpec) -> str:
    return f"N={ring.n}/limbs={ring.L}/{ring.dtype}"


_BITS = {"u32": (30, 29, 30), "u64": (62, 60, 61)}

#: every n in {2, 4, 8, 64, 1024} with 1 and 3 limbs, in both word sizes.
RINGS = [
    ring_of(n, _BITS[dtype][:limbs], dtype)
    for dtype in ("u32", "u64")
    for n in (2, 4, 8, 64, 1024)
    for limbs in (1, 3)
]


# --------------------------------------------------------------------------------------------
# NTT


@pytest.mark.cc
@pytest.mark.parametrize("ring", RINGS, ids=ring_id)
def test_ntt_and_intt_match_ring_kernels(ring):
    a = words(ring, ring.n + ring.L)
    fwd = run(ct.ntt_program(ring), a, ring)
    np.testing.assert_array_equal(fwd, rk.ntt(ring, a))
    np.testing.assert_array_equal(run(ct.intt_program(ring), a, ring), rk.intt(ring, a))
    np.testing.assert_array_equal(run(ct.intt_program(ring), fwd, ring), a)  # intt(ntt(a)) == a


@pytest.mark.cc
@pytest.mark.parametrize("ring", [RINGS[7], RINGS[17]], ids=ring_id)
def test_ntt_threads_are_independent(ring):
    """Every thread and block run in reverse order: the same words, so no thread of a launch
    reads what another thread of it writes."""
    a = words(ring, 3)
    np.testing.assert_array_equal(run(ct.ntt_program(ring), a, ring, reverse=True), rk.ntt(ring, a))
    got = run(ct.intt_program(ring), a, ring, reverse=True)
    np.testing.assert_array_equal(got, rk.intt(ring, a))


@pytest.mark.cc
@pytest.mark.parametrize("ring", [RINGS[9], RINGS[19]], ids=ring_id)
def test_ntt_extreme_words(ring):
    """All-zero and all-(q-1) limbs: the lazy bounds are at their widest."""
    for fill in (0, -1):
        a = np.array([[q + fill if fill else 0] * ring.n for q in ring.moduli], ring.np_dtype)
        np.testing.assert_array_equal(run(ct.ntt_program(ring), a, ring), rk.ntt(ring, a))
        np.testing.assert_array_equal(run(ct.intt_program(ring), a, ring), rk.intt(ring, a))


def test_ntt_launches_one_stage_each():
    for ring in RINGS:
        for prog, inverse in ((ct.ntt_program(ring), False), (ct.intt_program(ring), True)):
            assert len(prog.launches) == ring.n.bit_length() - 1  # log2(n) stages
            assert prog.launches[0].args[:2] == ("out", "in")  # the first reads `in`
            assert all("in" not in launch.args for launch in prog.launches[1:])
            stages = [(int(x.args[-2]), int(x.args[-1])) for x in prog.launches[1:-1]]
            want = ct._stages(ring.n, inverse)[1:-1]
            assert stages == want and all(m * t * 2 == ring.n for m, t in want)
            assert all(isinstance(x.args[-1], np.int32) for x in prog.launches[1:-1])
            assert set(prog.tables) == {"tw", "tw_shoup"}
        tw, tw_shoup = ct.ntt_program(ring).tables.values()
        assert tw is tp.ntt_tables(ring)[0] and tw_shoup is tp.ntt_tables(ring)[1]


# --------------------------------------------------------------------------------------------
# rescale


RESCALE_CASES = [
    (ring_of(8, (30, 29), "u32"), (1,)),
    (ring_of(64, (62, 60, 61), "u64"), (2,)),
    (ring_of(64, (62, 60, 61), "u64"), (0,)),  # drop the first modulus
    (ring_of(64, (30, 30, 30, 25), "u32"), (3, 2)),
    (ring_of(64, (30, 30, 30, 25), "u32"), (0, 3)),
    (ring_of(1024, (60, 40, 62, 50), "u64"), (2, 3)),
    (ring_of(2, (31, 60, 36), "u64"), (1, 0)),
]


@pytest.mark.cc
@pytest.mark.parametrize(
    ("ring", "rows"), RESCALE_CASES, ids=[f"{ring_id(r)}/drop={d}" for r, d in RESCALE_CASES]
)
def test_rescale_matches_ring_kernels(ring, rows):
    drop = tuple(ring.moduli[i] for i in rows)
    prog = ct.rescale_program(ring, drop if len(drop) > 1 else drop[0])
    out_ring = ring.with_moduli(tuple(q for q in ring.moduli if q not in drop))
    for seed in (0, 1):
        a = words(ring, seed)
        np.testing.assert_array_equal(run(prog, a, out_ring), rk.rescale(ring, a, drop))


@pytest.mark.cc
def test_rescale_rounds_edge_coefficients():
    """Coefficients at and next to 0, +-Q/2 and +-P/2, where rounding is decided."""
    ring = ring_of(64, (62, 61, 60), "u64")
    drop = (ring.moduli[2], ring.moduli[0])
    Q, P = ring.Q, drop[0] * drop[1]
    edges = [0, 1, -1, Q // 2, Q // 2 + 1, -(Q // 2), P // 2, P // 2 + 1, -(P // 2), -(P // 2) - 1]
    a = rk.encode_coeffs(ring, [edges[i % len(edges)] * (1 + i // len(edges)) for i in range(64)])
    out_ring = ring.with_moduli((ring.moduli[1],))
    got = run(ct.rescale_program(ring, drop), a, out_ring)
    np.testing.assert_array_equal(got, rk.rescale(ring, a, drop))


# --------------------------------------------------------------------------------------------
# base conversion


def _targets() -> list[tuple[RingSpec, RingSpec]]:
    src32 = ring_of(64, (30, 30, 29), "u32")
    src64 = ring_of(1024, (60, 60, 50, 40), "u64")
    fresh32 = ntt_primes(64, 28, 2)
    fresh64 = ntt_primes(1024, 61, 3)
    mixed = ring_of(64, (60, 29), "u64")  # a small modulus in 64-bit words
    return [
        (src32, RingSpec(64, (fresh32[0],), "u32")),  # one new modulus
        (src32, RingSpec(64, (src32.moduli[1], fresh32[1], src32.moduli[0]), "u32")),  # mixed
        (src32, RingSpec(64, (src32.moduli[2], src32.moduli[0]), "u32")),  # shared only
        (src32, RingSpec(64, (*src32.moduli[:2], ntt_primes(64, 55, 1)[0]), "u64")),  # to u64
        (src64, RingSpec(1024, (*fresh64, src64.moduli[3]), "u64")),
        (src64, RingSpec(1024, (ntt_primes(1024, 30, 1)[0],), "u32")),  # u64 to u32
        (mixed, RingSpec(64, (ntt_primes(64, 30, 1)[0], mixed.moduli[1]), "u32")),  # shared too
        (ring_of(2, (30,), "u32"), RingSpec(2, (ntt_primes(2, 20, 2)[1],), "u32")),
    ]


BASE_CONVERT_CASES = _targets()
MIXED_CASE = BASE_CONVERT_CASES[6]  # u64 -> u32 with a shared and a fresh modulus


@pytest.mark.cc
@pytest.mark.parametrize(
    ("ring", "target"),
    BASE_CONVERT_CASES,
    ids=[f"{ring_id(s)}->{ring_id(t)}" for s, t in BASE_CONVERT_CASES],
)
def test_base_convert_matches_ring_kernels(ring, target):
    prog = ct.base_convert_program(ring, target)
    for seed in (0, 1):
        a = words(ring, seed)
        np.testing.assert_array_equal(run(prog, a, target), rk.base_convert(ring, a, target))


@pytest.mark.cc
@pytest.mark.parametrize("limbs", [3, 12], ids=["limbs=3", "limbs=12"])
def test_base_convert_matches_near_half_q(limbs):
    """Coefficients at and next to +-Q/2, where the float correction may be off by one, and
    twelve limbs (more than NumPy's pairwise-summation block): the words still match, because v
    is the same float64 operations in the same order."""
    ring = RingSpec(64, ntt_primes(64, 60, limbs))
    target = RingSpec(64, (*ntt_primes(64, 40, 2), ring.moduli[0]))
    rng = np.random.default_rng(limbs)
    Q, h = ring.Q, ring.Q // 2
    coeffs = [int(x) * Q // (1 << 62) for x in rng.integers(0, 1 << 62, 64)]
    coeffs[:8] = [h, h + 1, -h, h - 1, -h - 1, h + 2, Q - 1, 0]
    a = rk.encode_coeffs(ring, coeffs)
    got = run(ct.base_convert_program(ring, target), a, target)
    np.testing.assert_array_equal(got, rk.base_convert(ring, a, target))


# --------------------------------------------------------------------------------------------
# the sources themselves


def family(ring: RingSpec) -> list[ct.CUDAProgram]:
    """One program of every family for ``ring``."""
    other = RingSpec(ring.n, ntt_primes(ring.n, 40, 1))
    progs = [
        ct.ntt_program(ring),
        ct.intt_program(ring),
        ct.base_convert_program(ring, other),
    ]
    if ring.L > 1:
        progs += [
            ct.rescale_program(ring, ring.moduli[-1]),
            ct.rescale_program(ring, ring.moduli[:2]),
        ]
    return progs


def every_program() -> list[ct.CUDAProgram]:
    """Every family on a ring of each word size, the NTTs of n = 2 (whose launches differ), and
    the base conversions that mix shared and fresh moduli in and across word sizes."""
    progs = [p for ring in (RINGS[7], RINGS[17]) for p in family(ring)]  # n = 64, limbs = 3
    progs += [f(r) for r in (RINGS[1], RINGS[11]) for f in (ct.ntt_program, ct.intt_program)]
    progs += [ct.base_convert_program(r, t) for r, t in [*BASE_CONVERT_CASES[1:3], MIXED_CASE]]
    return list({p.source: p for p in progs}.values())


_FORBIDDEN = re.compile(r"__syncthreads|__shared__|atomic\w*\(|__shfl|__ballot|__int128|\bsize_t\b")


def test_programs_are_cached_deterministic_and_valid():
    ring = RINGS[7]
    progs = family(ring)
    twin = RingSpec(ring.n, ring.moduli, ring.dtype)  # an equal ring: the same programs
    assert [p.source for p in progs] == [p.source for p in family(twin)]
    assert ct.ntt_program(ring) is ct.ntt_program(ring)
    assert ct.rescale_program(ring, ring.moduli[2]) is ct.rescale_program(ring, (ring.moduli[2],))
    assert progs[0].name.startswith(f"ren_cuda_ntt_n{ring.n}_L{ring.L}_{ring.dtype}_")
    every = every_program()
    assert len({p.name for p in every}) == len(every)
    for prog in every:
        src = prog.source
        assert src.startswith("/*\n * " + prog.name)  # the comment block says what it computes
        assert not re.search(r"\{[A-Za-z_]\w*\}", src), "an unfilled placeholder"
        assert re.findall(r"#include\s*<(\w+\.h)>", src) == ["stdint.h"]
        assert not _FORBIDDEN.search(src)
        assert ("double" in src) == ("base_convert" in prog.name)
        entries = re.findall(r'extern "C" __global__ void __launch_bounds__\(256\) (\w+)\(', src)
        assert len(entries) == src.count("__global__")
        assert src.count("if (gidx >= ") == len(entries)  # every thread guards its index
        for launch in prog.launches:
            assert launch.entry in entries and launch.entry.startswith(prog.name)
            assert 1 <= launch.block <= 256 and launch.grid >= 1
            for arg in launch.args:
                if isinstance(arg, str):
                    assert arg in {"out", "in", *prog.tables}
                else:
                    assert isinstance(arg, np.int32 | np.uint32 | np.int64 | np.uint64)
        for table in prog.tables.values():
            assert not table.flags.writeable


def test_launch_geometry_covers_every_thread():
    """Each launch has at least one thread per butterfly / word / coefficient, and less than one
    block more (the surplus threads return at the guard)."""
    ring = RINGS[9]  # n = 1024, L = 3
    counts = [
        (ct.ntt_program(ring), ring.L * ring.n // 2),
        (ct.intt_program(ring), ring.L * ring.n // 2),
        (ct.rescale_program(ring, ring.moduli[0]), ring.n),
    ]
    for prog, threads in counts:
        for launch in prog.launches:
            assert threads <= launch.grid * launch.block < threads + launch.block
            assert re.search(rf"if \(gidx >= {threads}\) return;", prog.source)


@pytest.mark.nvcc
def test_every_program_compiles_to_ptx(tmp_path):
    """Every program with ``nvcc --ptx -arch=sm_90 --fmad=false``, warnings as errors, in one
    nvcc call per CPU; every entry a launch names is an ``.entry`` of the PTX."""
    progs = every_program()
    paths = []
    for i, prog in enumerate(progs):
        path = tmp_path / f"p{i}.cu"
        path.write_text(prog.source, encoding="utf-8")
        paths.append(path.name)
    cmd = [shutil.which("nvcc"), "--ptx", "-arch=sm_90", "--fmad=false", "-Werror=all-warnings"]
    jobs = max(1, min(os.cpu_count() or 1, 8))
    procs = [
        subprocess.Popen(
            [*cmd, *paths[k::jobs]], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for k in range(jobs)
    ]
    for proc in procs:
        _, err = proc.communicate()
        assert proc.returncode == 0, err.decode()
    for i, prog in enumerate(progs):
        ptx = (tmp_path / f"p{i}.ptx").read_text()
        for launch in prog.launches:
            assert re.search(rf"\.entry {launch.entry}\(", ptx), (prog.name, launch.entry)


# --------------------------------------------------------------------------------------------
# bad input


def test_bad_arguments_raise_as_the_c_templates_do():
    ring = RINGS[5]
    with pytest.raises(TypeError, match="RingSpec"):
        ct.base_convert_program(ring, (12289,))
    with pytest.raises(ValueError, match="degrees n differ"):
        ct.base_convert_program(ring, RingSpec(32, ntt_primes(32, 30, 1)))
    with pytest.raises(ValueError, match="no modulus"):
        ct.rescale_program(ring, ring.moduli)
    with pytest.raises(ValueError, match="not a modulus"):
        ct.rescale_program(ring, 12289)
    with pytest.raises(ValueError, match="repeat"):
        ct.rescale_program(ring, (ring.moduli[0], ring.moduli[0]))
