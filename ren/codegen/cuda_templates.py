"""Readable CUDA C templates for Ren's whole-polynomial kernels, one program per ring.

The CUDA twins of :mod:`ren.codegen.templates`. Each ``*_program`` function is a pure, cached
function of its arguments and returns a :class:`CUDAProgram`: one CUDA C translation unit, a
unique name, the launches (:class:`Launch`) to run in order on one stream, and the read-only host
tables (the twiddles) the runtime uploads once::

    prog = ntt_program(ring)                         # CUDAProgram(source, name, launches, tables)
    mod = SourceModule(prog.source, no_extern_c=True, options=["--fmad=false"])
    buffers = {"out": out_gpu, "in": in_gpu, **uploaded(prog.tables)}
    for launch in prog.launches:
        args = [buffers[a] if isinstance(a, str) else a for a in launch.args]
        mod.get_function(launch.entry)(*args, block=(launch.block, 1, 1), grid=(launch.grid, 1))

``"out"`` is the ``(L_out, n)`` output word array, ``"in"`` the ``(L, n)`` input; they never
overlap. Every other name in ``Launch.args`` is a key of ``CUDAProgram.tables``; every other
argument is a NumPy scalar passed by value (``np.int32`` for ``int`` parameters).

Conventions are those of :mod:`ren.ring.arith` (``docs/rings.md``) and every program
returns exactly its words: Montgomery words ``x * R mod q`` in ``[0, q)``, ``R = 2**32`` (``u32``,
moduli below ``2**30``) or ``2**64`` (``u64``, moduli below ``2**62``). The arithmetic is that of
the C templates (Shoup twiddles with Harvey's lazy butterflies for the NTT, Montgomery products
for rescale and base conversion); the high word of a product is the ``__umulhi`` /
``__umul64hi`` intrinsic, so there is no 128-bit type.

Every thread is independent of every other thread of its launch: no ``__syncthreads``, shared
memory, atomics or warp intrinsics. A launch may only depend on the writes of the launches before
it, which is what one CUDA stream guarantees. So the NTT is one launch per butterfly stage (one
thread per butterfly, over all limbs), and :mod:`ren.codegen.cuda_host` can check every kernel on
a machine without a GPU by running its threads one after another. Rescale and base conversion are
one thread per coefficient (the loop over limbs inside), with their constants in ``__constant__``
arrays. (Automorphisms have no template: they lower to gathered loads inside elementwise kernels.)

Compile with ``nvcc --fmad=false`` (base conversion's float path has only divisions and
additions, so contraction could not change it today; the flag keeps it that way).
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ren.codegen import helpers, templates
from ren.codegen.cuda import BLOCK, device_helpers
from ren.codegen.helpers import CValues, c_array, fill, limbs, tag
from ren.codegen.templates import intt_tables, ntt_tables
from ren.ring import RingSpec
from ren.ring.arith import check_drop

__all__ = [
    "CUDAProgram",
    "Launch",
    "base_convert_program",
    "intt_program",
    "ntt_program",
    "rescale_program",
]


@dataclass(frozen=True)
class Launch:
    """One kernel launch of a :class:`CUDAProgram`.

    ``entry`` is a ``__global__`` function of the program's source, run on a 1-D ``grid`` of
    blocks of ``block`` threads (at most 256, the launch bound every entry declares). ``args``
    are its arguments in order: a ``str`` names a buffer (``"out"``, ``"in"`` or a key of
    :attr:`CUDAProgram.tables`), anything else is a NumPy scalar passed by value.
    """

    entry: str
    grid: int
    block: int
    args: tuple[str | np.integer, ...]

    def __repr__(self) -> str:
        args = ", ".join(a if isinstance(a, str) else repr(a) for a in self.args)
        return f"{self.entry}<<<{self.grid}, {self.block}>>>({args})"


class CUDAProgram(NamedTuple):
    """A generated CUDA program: its source, name, launches and tables.

    One ``source`` holds every entry; ``name`` is unique; the ``launches`` run in order on one
    stream and read the read-only host ``tables``.
    """

    source: str
    name: str
    launches: tuple[Launch, ...]
    tables: dict[str, np.ndarray]


# --------------------------------------------------------------------------------------------
# shared CUDA C: the header, the constants and the word helpers


_WORD = {"u32": "uint32_t", "u64": "uint64_t"}

#: The opening of every entry: the global thread index and the guard.
_GIDX = "const long long gidx = (long long)blockIdx.x * blockDim.x + threadIdx.x;"


def _header(title: str, ring: RingSpec, doc: str) -> str:
    """The C templates' header, naming this module and including only ``<stdint.h>``."""
    return helpers.header(title, ring, doc, "ren.codegen.cuda_templates", ("stdint.h",))


def _constant(name: str, ctype: str, values: CValues, per_line: int = 4) -> str:
    """``__constant__ const <ctype> NAME[len] = {...};``, a C array in constant memory.

    It is :func:`ren.codegen.helpers.c_array` with ``__constant__`` for ``static``; the literals are
    exact, and an empty list becomes one unused ``0``.
    """
    return c_array(name, ctype, values, per_line).replace("static const ", "__constant__ const ", 1)


def _helpers(dtype: str) -> str:
    """The modular helpers as ``__device__`` functions (``ren.codegen.cuda.device_helpers``)."""
    return device_helpers(dtype)


def _launch(entry: str, threads: int, *args: str | np.integer) -> Launch:
    """``entry`` on ``threads`` threads: blocks of ``min(256, threads)``, enough of them."""
    block = min(BLOCK, threads)
    return Launch(entry, -(-threads // block), block, tuple(args))


def _entry(name: str, params: str) -> str:
    """The signature of a ``__global__`` entry, its parameters on lines of at most 100 columns."""
    lines = [""]
    for param in params.split(", "):
        if lines[-1] and len(lines[-1]) + len(param) + 6 > 100:
            lines.append("")
        lines[-1] += f"{param}, " if lines[-1] or param else param
    body = ",\n    ".join(line.rstrip(", ") for line in lines)
    return f'extern "C" __global__ void __launch_bounds__({BLOCK}) {name}(\n    {body})'


_NTT_PARAMS = "const word *__restrict__ tw, const word *__restrict__ tw_shoup"
_OUT = "word *__restrict__ out"
_IN = "const word *__restrict__ in"


# --------------------------------------------------------------------------------------------
# NTT


NTT_DOC = """\
Forward negacyclic NTT of each of the L = {L} limbs (n = {n}): Cooley-Tukey with the psi powers
merged into the twiddles, bit-reversed output. Slot k of limb i is a(psi_i^(2 brv(k) + 1)) mod
q_i, psi_i the smallest primitive 2n-th root of unity mod q_i (the order SEAL uses). Words are
Montgomery form in [0, q) on entry and exit; the twiddles are plain (the NTT is linear).

  out  (L, n) words, NTT form. Must not overlap `in`.
  in   (L, n) words, coefficient form, in [0, q).
  tw, tw_shoup  (L, n) words: tw[i][k] = psi_i^brv(k) mod q_i (k = 0 unused) and
       floor(tw * R / q_i); ren.codegen.templates.ntt_tables(ring).

One launch per stage m = 1, 2, ..., n/2 (t = n / 2m), one thread per butterfly over all limbs
(L n / 2 = {threads} threads): thread g is limb g / (n/2), block i = b / t, offset j = b % t
(b = g % (n/2)), and maps (x, y) = (a[2it + j], a[2it + t + j]) to (x + y w, x - y w),
w = tw[m + i]. The butterflies of a stage touch disjoint pairs, so its threads are independent;
each stage sees the previous one's writes (one stream).

  {name}_first  stage m = 1: reads `in`, writes `out`.
  {name}_stage  stage (m, t), in place on `out` (m = 2, ..., n/4).
  {name}_last   stage m = n/2 (t = 1), in place, corrects to [0, q).
Bounds (Harvey 2014): every word stays in [0, 4q) between stages, 4q < R because q < R / 4; the
last stage (the first when n = 2) corrects its outputs to [0, q)."""

NTT = """
typedef {word} word;

enum { FIRST_IS_LAST = {last} };  /* 1 when n = 2: stage m = 1 is also the last stage */

{moduli}

/* [0, 4q) -> [0, q) */
__device__ __forceinline__ word correct(word x, word q)
{
    x = x >= 2 * q ? x - 2 * q : x;                                /* [0, 2q) */
    return x >= q ? x - q : x;
}

/*
 * The lazy butterfly (U, V) -> (U + V w, U - V w) on a[x], a[y], in place: both in [0, 4q) on
 * entry and exit (Harvey 2014), corrected to [0, q) when `last`.
 */
__device__ __forceinline__ void butterfly(word *__restrict__ a, long long x, long long y,
                                          word w, word w_shoup, word q, int last)
{
    const word two_q = 2 * q;
    word u = a[x] >= two_q ? a[x] - two_q : a[x];                  /* u in [0, 2q) */
    word v = mul_shoup_{w}(a[y], w, w_shoup, q);                   /* v = V w, [0, 2q) */
    word s = u + v, d = u - v + two_q;                             /* [0, 4q), (0, 4q) */
    a[x] = last ? correct(s, q) : s;
    a[y] = last ? correct(d, q) : d;
}

/* Stage m = 1 (t = n/2): in[x], in[y] in [0, q); writes out in [0, 3q) (in [0, q) when n = 2,
   where this is also the last stage). */
{first_entry}
{
    {gidx}
    if (gidx >= {threads}) return;
    const int limb = (int)(gidx / {half}), j = (int)(gidx % {half});
    const word q = MODULI[limb], two_q = 2 * q;
    const long long x = (long long)limb * {n} + j, y = x + {half}, k = (long long)limb * {n} + 1;
    const word v = mul_shoup_{w}(in[y], tw[k], tw_shoup[k], q);    /* [0, 2q) */
    const word s = in[x] + v, d = in[x] - v + two_q;               /* [0, 3q), (0, 3q) */
    out[x] = FIRST_IS_LAST ? correct(s, q) : s;
    out[y] = FIRST_IS_LAST ? correct(d, q) : d;
}

/* Stage (m, t), 1 < m < n/2: in place on out, [0, 4q) -> [0, 4q). */
{stage_entry}
{
    {gidx}
    if (gidx >= {threads}) return;
    const int m = stage_m, t = stage_t;                             /* t = n / 2m */
    const int limb = (int)(gidx / {half}), b = (int)(gidx % {half});
    const int i = b / t, j = b % t;                                /* block i < m, j < t */
    const long long base = (long long)limb * {n}, x = base + 2LL * i * t + j;
    butterfly(out, x, x + t, tw[base + m + i], tw_shoup[base + m + i], MODULI[limb], 0);
}

/* Stage m = n/2 (t = 1): in place on out, [0, 4q) -> [0, q). */
{last_entry}
{
    {gidx}
    if (gidx >= {threads}) return;
    const int limb = (int)(gidx / {half}), i = (int)(gidx % {half});
    const long long base = (long long)limb * {n}, x = base + 2LL * i;
    butterfly(out, x, x + 1, tw[base + {half} + i], tw_shoup[base + {half} + i], MODULI[limb], 1);
}
"""


def _stages(n: int, inverse: bool) -> list[tuple[int, int]]:
    """``(m, t)`` of each stage of the NTT, in the order they run.

    ``m = 1, 2, ..., n/2`` (forward) or ``n/2, ..., 1`` (inverse), and ``t = n / 2m``.
    """
    ms = [1 << e for e in range(n.bit_length() - 1)]
    return [(m, n // (2 * m)) for m in (ms[::-1] if inverse else ms)]


@functools.cache
def ntt_program(ring: RingSpec) -> CUDAProgram:
    """The forward NTT of every limb as CUDA; see ``NTT_DOC`` (the source's own comment).

    ``log2(n)`` launches, one per stage: ``<name>_first(out, in, tw, tw_shoup)``, then
    ``<name>_stage(out, tw, tw_shoup, m, t)`` for the middle stages, then ``<name>_last(out, tw,
    tw_shoup)`` (``n >= 4``). Tables ``tw`` and ``tw_shoup`` are
    :func:`ren.codegen.templates.ntt_tables`. Matches :func:`ren.ring.arith.ntt` word
    for word.
    """
    name = f"ren_cuda_ntt_{tag(ring)}"
    threads, half = ring.L * ring.n // 2, ring.n // 2
    body = fill(
        NTT,
        word=_WORD[ring.dtype],
        w=ring.dtype,
        n=ring.n,
        half=half,
        threads=threads,
        last=int(ring.n == 2),
        moduli=_constant("MODULI", "word", list(ring.moduli)),
        gidx=_GIDX,
        first_entry=_entry(f"{name}_first", f"{_OUT}, {_IN}, {_NTT_PARAMS}"),
        stage_entry=_entry(f"{name}_stage", f"{_OUT}, {_NTT_PARAMS}, int stage_m, int stage_t"),
        last_entry=_entry(f"{name}_last", f"{_OUT}, {_NTT_PARAMS}"),
    )
    doc = fill(NTT_DOC, L=ring.L, n=ring.n, threads=threads, name=name)
    source = _header(f"{name}: forward negacyclic NTT", ring, doc) + _helpers(ring.dtype) + body
    stages = _stages(ring.n, inverse=False)
    launches = [_launch(f"{name}_first", threads, "out", "in", "tw", "tw_shoup")]
    for m, t in stages[1:-1]:
        tables = ("tw", "tw_shoup", np.int32(m), np.int32(t))
        launches.append(_launch(f"{name}_stage", threads, "out", *tables))
    if ring.n >= 4:
        launches.append(_launch(f"{name}_last", threads, "out", "tw", "tw_shoup"))
    tw, tw_shoup, _ = ntt_tables(ring)
    return CUDAProgram(source, name, tuple(launches), {"tw": tw, "tw_shoup": tw_shoup})


INTT_DOC = """\
Inverse negacyclic NTT of each of the L = {L} limbs (n = {n}): Gentleman-Sande with the psi^-1
powers merged into the twiddles, times n^-1; undoes the forward NTT exactly. Words are Montgomery
form in [0, q) on entry and exit; the twiddles are plain (the transform is linear).

  out  (L, n) words, coefficient form. Must not overlap `in`.
  in   (L, n) words, NTT form (slot order of the forward NTT), in [0, q).
  tw, tw_shoup  (L, n) words and floor(tw * R / q_i); ren.codegen.templates.intt_tables(ring):
       tw[i][k] = psi_i^-brv(k) mod q_i for k >= 2, tw[i][1] = psi_i^-brv(1) * n^-1 (the last
       stage's twiddle with n^-1 merged in), tw[i][0] = n^-1 mod q_i.

One launch per stage m = n/2, ..., 2, 1 (t = n / 2m), one thread per butterfly over all limbs
(L n / 2 = {threads} threads, indexed as in the forward NTT), mapping (x, y) = (a[2it + j],
a[2it + t + j]) to (x + y, (x - y) w), w = tw[m + i].

  {name}_first  stage m = n/2 (t = 1): reads `in`, writes `out` (n >= 4).
  {name}_stage  stage (m, t), in place on `out` (m = n/4, ..., 2).
  {name}_last   stage m = 1 (t = n/2), times n^-1, corrected to [0, q); in place on `out`, or
                reading `in` when n = 2 (then it is the only stage).
Bounds (Harvey 2014): every word stays in [0, 2q) between stages; the last stage multiplies both
outputs by n^-1 (Shoup, [0, 2q)) and corrects them to [0, q)."""

INTT = """
typedef {word} word;

{moduli}

/*
 * The lazy butterfly (U, V) -> (U + V, (U - V) w) on a[x], a[y], in place: both in [0, 2q) on
 * entry and exit (Harvey 2014).
 */
__device__ __forceinline__ void butterfly(word *__restrict__ a, long long x, long long y,
                                          word w, word w_shoup, word q)
{
    const word two_q = 2 * q;
    word s = a[x] + a[y];                                          /* [0, 4q) */
    word d = a[x] - a[y] + two_q;                                  /* (0, 4q) */
    a[x] = s >= two_q ? s - two_q : s;                             /* [0, 2q) */
    a[y] = mul_shoup_{w}(d, w, w_shoup, q);                        /* [0, 2q) */
}
{first}
/* Stage (m, t), 1 < m < n/2: in place on out, [0, 2q) -> [0, 2q). */
{stage_entry}
{
    {gidx}
    if (gidx >= {threads}) return;
    const int m = stage_m, t = stage_t;                             /* t = n / 2m */
    const int limb = (int)(gidx / {half}), b = (int)(gidx % {half});
    const int i = b / t, j = b % t;                                /* block i < m, j < t */
    const long long base = (long long)limb * {n}, x = base + 2LL * i * t + j;
    butterfly(out, x, x + t, tw[base + m + i], tw_shoup[base + m + i], MODULI[limb]);
}

/* Stage m = 1 (t = n/2), times n^-1: {last_src}[x], {last_src}[y] in [0, 2q) -> out in [0, q). */
{last_entry}
{
    {gidx}
    if (gidx >= {threads}) return;
    const int limb = (int)(gidx / {half}), j = (int)(gidx % {half});
    const word q = MODULI[limb], two_q = 2 * q;
    const long long base = (long long)limb * {n}, x = base + j, y = x + {half};
    const word a = {last_src}[x], b = {last_src}[y];
    /* tw[0] = n^-1, tw[1] = psi^-brv(1) n^-1 */
    const word s = mul_shoup_{w}(a + b, tw[base], tw_shoup[base], q);                 /* [0, 2q) */
    const word d = mul_shoup_{w}(a - b + two_q, tw[base + 1], tw_shoup[base + 1], q); /* [0, 2q) */
    out[x] = s >= q ? s - q : s;                                                     /* [0, q) */
    out[y] = d >= q ? d - q : d;                                                     /* [0, q) */
}
"""

INTT_FIRST = """
/* Stage m = n/2 (t = 1): in[x], in[y] in [0, q); writes out in [0, 2q). */
{first_entry}
{
    {gidx}
    if (gidx >= {threads}) return;
    const int limb = (int)(gidx / {half}), i = (int)(gidx % {half});
    const word q = MODULI[limb];
    const long long base = (long long)limb * {n}, x = base + 2LL * i, k = base + {half} + i;
    const word a = in[x], b = in[x + 1];
    out[x] = a + b;                                                /* [0, 2q) */
    out[x + 1] = mul_shoup_{w}(a - b + q, tw[k], tw_shoup[k], q);  /* [0, 2q) */
}
"""


@functools.cache
def intt_program(ring: RingSpec) -> CUDAProgram:
    """The inverse NTT (times ``n^-1``) of every limb as CUDA; see ``INTT_DOC``.

    ``log2(n)`` launches: ``<name>_first(out, in, tw, tw_shoup)`` (``n >= 4``), then
    ``<name>_stage(out, tw, tw_shoup, m, t)`` for the middle stages, then ``<name>_last(out,
    tw, tw_shoup)`` (``<name>_last(out, in, tw, tw_shoup)`` when ``n = 2``). Tables from
    :func:`ren.codegen.templates.intt_tables`. Matches :func:`ren.ring.arith.intt` word
    for word.
    """
    name = f"ren_cuda_intt_{tag(ring)}"
    threads, half = ring.L * ring.n // 2, ring.n // 2
    common = dict(w=ring.dtype, n=ring.n, half=half, threads=threads, gidx=_GIDX)
    first = ""
    if ring.n >= 4:
        first_entry = _entry(f"{name}_first", f"{_OUT}, {_IN}, {_NTT_PARAMS}")
        first = fill(INTT_FIRST, first_entry=first_entry, **common)
    only = ring.n == 2  # the last stage is the only one: it reads `in`
    last_params = f"{_OUT}, {_IN}, {_NTT_PARAMS}" if only else f"{_OUT}, {_NTT_PARAMS}"
    body = fill(
        INTT,
        word=_WORD[ring.dtype],
        moduli=_constant("MODULI", "word", list(ring.moduli)),
        first=first,
        stage_entry=_entry(f"{name}_stage", f"{_OUT}, {_NTT_PARAMS}, int stage_m, int stage_t"),
        last_entry=_entry(f"{name}_last", last_params),
        last_src="in" if only else "out",
        **common,
    )
    doc = fill(INTT_DOC, L=ring.L, n=ring.n, threads=threads, name=name)
    source = _header(f"{name}: inverse negacyclic NTT", ring, doc) + _helpers(ring.dtype) + body
    stages = _stages(ring.n, inverse=True)
    launches = []
    if ring.n >= 4:
        launches.append(_launch(f"{name}_first", threads, "out", "in", "tw", "tw_shoup"))
    for m, t in stages[1:-1]:
        tables = ("tw", "tw_shoup", np.int32(m), np.int32(t))
        launches.append(_launch(f"{name}_stage", threads, "out", *tables))
    src = ("out", "in") if only else ("out",)
    launches.append(_launch(f"{name}_last", threads, *src, "tw", "tw_shoup"))
    tw, tw_shoup, _ = intt_tables(ring)
    return CUDAProgram(source, name, tuple(launches), {"tw": tw, "tw_shoup": tw_shoup})


# --------------------------------------------------------------------------------------------
# rescale


RESCALE = """
typedef {word} word;

{consts}

{entry}
{
    {gidx}
    if (gidx >= {n}) return;
    const int k = (int)gidx;                                           /* coefficient k */
    word x[{L}];
    for (int i = 0; i < {L}; ++i)                                      /* a + h, [0, q_i) */
        x[i] = add_mod_{w}(in[i * {n}LL + k], HALF[i], MODULI[i]);
    for (int d = 0; d < {D}; ++d) {
        const int j = DROP_ROWS[d];
        /* x mod p, decoded: r in [0, p) */
        const word r = mont_mul_{w}(x[j], 1, MODULI[j], Q_INV[j]);
        for (int i = 0; i < {L}; ++i) {
            /* r < p < R, so r * R2[i] < q_i R: one product gives r R mod q_i */
            const word r_i = mont_mul_{w}(r, R2[i], MODULI[i], Q_INV[i]);
            const word diff = sub_mod_{w}(x[i], r_i, MODULI[i]);            /* x - r, [0, q_i) */
            x[i] = mont_mul_{w}(diff, P_INV[d][i], MODULI[i], Q_INV[i]);    /* (x - r) / p */
        }
    }
    for (int o = 0; o < {L_out}; ++o)
        out[o * {n}LL + k] = x[KEEP_ROWS[o]];
}
"""


@functools.cache
def _rescale_cached(ring: RingSpec, drop: tuple[int, ...]) -> CUDAProgram:
    keep = [i for i, q in enumerate(ring.moduli) if q not in drop]
    consts = "\n".join(
        (
            _constant("MODULI", "word", list(ring.moduli)),
            *(_constant(*c) for c in templates.rescale_constants(ring, drop)),
        )
    )
    digest = hashlib.sha256(repr(drop).encode()).hexdigest()[:8]
    name = f"ren_cuda_rescale_d{len(drop)}_{digest}_{tag(ring)}"
    doc = fill(
        templates.RESCALE_DOC,
        launch=f"One launch, one thread per coefficient ({ring.n} threads), each looping over "
        "the limbs.\n",
        constants="__constant__",
        p_list=", ".join(map(str, drop)),
        D=len(drop),
        L=ring.L,
        L_out=len(keep),
        n=ring.n,
        words="",
    )
    body = fill(
        RESCALE,
        word=_WORD[ring.dtype],
        w=ring.dtype,
        L=ring.L,
        n=ring.n,
        entry=_entry(name, f"{_OUT}, {_IN}"),
        gidx=_GIDX,
        D=len(drop),
        L_out=len(keep),
        consts=consts,
    )
    source = _header(f"{name}: rescale by {len(drop)} moduli", ring, doc)
    source += _helpers(ring.dtype) + body
    return CUDAProgram(source, name, (_launch(name, ring.n, "out", "in"),), {})


def rescale_program(ring: RingSpec, drop: int | tuple[int, ...]) -> CUDAProgram:
    """Rescale by the moduli ``drop`` as CUDA: one launch of ``ren_cuda_rescale_<...>(out, in)``.

    ``drop`` is a modulus or a tuple of distinct moduli of ``ring`` (divided in that order, as
    :func:`ren.ring.arith.rescale` does); ``out`` is ``(L - len(drop), n)`` over the
    kept moduli in ring order. Every constant is in ``__constant__`` memory (no tables). Matches
    ``ren.ring.arith.rescale`` word for word. Cached per ``(ring, drop)``.

    Raises:
        ValueError: if a modulus of ``drop`` is not in ``ring``, repeats, or none would remain.
    """
    return _rescale_cached(ring, check_drop(ring, drop))


# --------------------------------------------------------------------------------------------
# base conversion


BASE_CONVERT = """
typedef {s_word} src_word;
typedef {t_word} dst_word;

enum {
    N_SHARED = {n_shared},   /* target moduli that are source moduli */
    N_FRESH = {n_fresh},    /* target moduli that are not */
    RECODE = {recode},     /* 1 when the source and target R differ ({s} -> {t}) */
    NARROW = {narrow},     /* 1 when a source word may not fit a target word */
};

{consts}

{entry}
{
    {gidx}
    if (gidx >= {n}) return;
    const int k = (int)gidx;                                           /* coefficient k */

    /* target moduli that are source moduli: copy the word, re-encoded if R differs */
    for (int s = 0; s < N_SHARED; ++s) {
        const int row = SHARED_SRC[s];
        const src_word x = in[row * {n}LL + k];
        dst_word y = (dst_word)x;
        if (RECODE) {
            /* decode with the source R, encode with the target R (plain < q < R_t) */
            const src_word plain = mont_mul_{s}(x, 1, MODULI[row], Q_INV[row]);
            y = mont_mul_{t}((dst_word)plain, SHARED_R2[s], (dst_word)MODULI[row],
                             SHARED_Q_INV[s]);
        }
        out[SHARED_DST[s] * {n}LL + k] = y;
    }
    if (N_FRESH == 0)
        return;

    /* fresh target moduli: fast base conversion */
    uint64_t y[{L}];
    double sum = 0.0;
    for (int i = 0; i < {L}; ++i) {
        y[i] = mont_mul_{s}(in[i * {n}LL + k], Q_HAT_INV[i], MODULI[i], Q_INV[i]);
        sum += (double)y[i] / Q_FLOAT[i];                              /* in order, like NumPy */
    }
    const uint64_t v = (uint64_t)(sum + 0.5);                          /* floor: sum >= 0 */
    for (int f = 0; f < N_FRESH; ++f) {
        const dst_word p = P[f], p_inv = P_INV[f];
        dst_word acc = 0;
        for (int i = 0; i < {L}; ++i) {
            /* y_i itself when it fits a target word: y_i C < R_t p, all REDC needs */
            const dst_word y_i = NARROW ? (dst_word)(y[i] % p) : (dst_word)y[i];
            acc = add_mod_{t}(acc, mont_mul_{t}(y_i, C[i][f], p, p_inv), p);
        }
        const dst_word vq = mont_mul_{t}((dst_word)v, Q_MOD_P[f], p, p_inv);   /* v <= L < p */
        out[FRESH_ROWS[f] * {n}LL + k] = sub_mod_{t}(acc, vq, p);
    }
}
"""


@functools.cache
def base_convert_program(ring: RingSpec, target: RingSpec) -> CUDAProgram:
    """Fast base conversion from ``ring`` to ``target`` as CUDA.

    The program is one launch of ``ren_cuda_base_convert_<...>(out, in)``, with every constant
    in ``__constant__`` memory.

    Matches :func:`ren.ring.arith.base_convert` word for word, including where the
    floating-point correction ``v`` is off by one (within rounding error of ``+-Q/2``): ``v`` is
    computed with the same float64 operations in the same order.

    Raises:
        TypeError: if ``target`` is not a ``RingSpec``.
        ValueError: if ``target.n != ring.n``.
    """
    if not isinstance(target, RingSpec):
        raise TypeError(f"target must be a RingSpec, got {type(target).__name__}")
    if target.n != ring.n:
        raise ValueError(f"cannot convert {ring!r} to {target!r}: the degrees n differ")
    shared = [(k, ring.moduli.index(p)) for k, p in enumerate(target.moduli) if p in ring.moduli]
    fresh = [k for k, p in enumerate(target.moduli) if p not in ring.moduli]
    consts = "\n".join(
        (
            _constant("MODULI", "src_word", list(ring.moduli)),
            *(_constant(*c) for c in templates.base_convert_constants(ring, target)),
        )
    )
    digest = hashlib.sha256(repr(target).encode()).hexdigest()[:8]
    name = f"ren_cuda_base_convert_to{target.L}_{digest}_{tag(ring)}"
    doc = fill(
        templates.BASE_CONVERT_DOC,
        rounding=" CUDA's double division and uint64 -> double conversion round to nearest, "
        "as the host's do.",
        launch=f"One launch, one thread per coefficient ({ring.n} threads), each writing every "
        "target limb.\n",
        constants="__constant__",
        fma=" (and it is compiled with --fmad=false)",
        targets=limbs(target),
        t_dtype=target.dtype,
        L=ring.L,
        L_out=target.L,
        n=ring.n,
        words="",
    )
    body = fill(
        BASE_CONVERT,
        s_word=_WORD[ring.dtype],
        t_word=_WORD[target.dtype],
        s=ring.dtype,
        t=target.dtype,
        L=ring.L,
        n=ring.n,
        entry=_entry(name, "dst_word *__restrict__ out, const src_word *__restrict__ in"),
        gidx=_GIDX,
        consts=consts,
        n_shared=len(shared),
        n_fresh=len(fresh),
        recode=int(ring.dtype != target.dtype),
        narrow=int(ring.word_bits > target.word_bits),
    )
    helpers = "".join(_helpers(d) for d in sorted({ring.dtype, target.dtype}))
    source = _header(f"{name}: fast base conversion", ring, doc) + helpers + body
    return CUDAProgram(source, name, (_launch(name, ring.n, "out", "in"),), {})
