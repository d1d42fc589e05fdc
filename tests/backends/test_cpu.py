"""The compiled backends (cpu, and cuda on a GPU or the host emulator): rendered kernels equal the
python backend and the reference evaluator.

Programs here schedule only to elementwise and copy kernels (the whole-polynomial kernels come from
``ren.codegen.templates``): coefficient-form sums, differences, negations and products with ints;
and, on NTT-form inputs made on the python device and copied over with ``.to(device)``, products of
polynomials and automorphisms (an NTT-form automorphism is a gather inside the elementwise kernel).
Every program's schedule is checked to be only such kernels before it runs.

Oracles: the same program on the python device (``limbs()`` and ``tolist()``), the reference
evaluator (``ren.reference.evaluate`` and ``expected_limbs``), and the stored words read as they
are (each in ``[0, q_i)``). ``REN_VALIDATE=1`` is checked to catch a sabotaged renderer.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import event, given, note, settings
from hypothesis import strategies as st

import ren.codegen.c
import ren.codegen.helpers
from ren import Poly, RingSpec
from ren.backends import cpu, cpu_threads
from ren.codegen.c import CRenderer
from ren.codegen.toolchain import find_compiler, native_defines, supports_flag
from ren.engine.schedule import ScheduledKernel, schedule
from ren.errors import RenError
from ren.ir import DType, Node, Op
from ren.poly import realize
from ren.reference import evaluate, expected_limbs
from ren.ring import Domain, ntt_primes
from tests.backends.test_cpu_threads import omp_max_threads
from tests.devices import COMPILED
from tests.strategies import coeff_lists, rings

pytestmark = pytest.mark.cc


@pytest.fixture(scope="module", autouse=True)
def cache_dir(tmp_path_factory):
    """Build into a cache of this module's own, with validation and thread settings unset."""
    with pytest.MonkeyPatch.context() as m:
        m.setenv("REN_CACHE_DIR", str(tmp_path_factory.mktemp("ren-cache")))
        m.delenv("REN_VALIDATE", raising=False)
        m.delenv("REN_THREADS", raising=False)
        yield


def kernels(*polys: Poly) -> list[ScheduledKernel]:
    return schedule(Node(Op.SINK, DType.VOID, tuple(p.node for p in polys)))[0]


def check_elementwise_only(device: str, *polys: Poly) -> list[ScheduledKernel]:
    """The schedule of ``polys`` is copies and elementwise kernels, all on ``device`` (maybe
    none: ``a * 1`` of a stored ``a`` simplifies to it)."""
    sched = kernels(*polys)
    for k in sched:
        assert k.info.kind in ("elementwise", "copy"), k.info
        assert k.info.device == device, k.info
    return sched


def stored_words(p: Poly) -> np.ndarray:
    """The buffer's words as they are, ``(L, n)``, checked to lie in ``[0, q_i)``."""
    words = np.frombuffer(p.tobytes(), dtype=p.ring.np_dtype).reshape(p.ring.L, p.ring.n)
    for row, q in zip(words.tolist(), p.ring.moduli, strict=True):
        assert max(row) < q, f"a word of {p} is not reduced modulo {q}"
    return words


def check_same(got: Poly, want: Poly, value: list[int] | None = None) -> None:
    """``got`` (a compiled device) equals ``want`` (python) word for word, and the reference
    value."""
    assert got.device != "python" and want.device == "python"
    assert got.ring == want.ring and got.domain == want.domain
    np.testing.assert_array_equal(stored_words(got), stored_words(want))
    np.testing.assert_array_equal(got.limbs(), want.limbs())
    if value is not None:
        np.testing.assert_array_equal(got.limbs(), expected_limbs(value, got.ring, got.domain))
        assert got.tolist() == value


# --------------------------------------------------------------------------------------------
# random programs


def constants(ring: RingSpec) -> st.SearchStrategy[int]:
    """Ints a kernel must reduce right: small, +-q_i, +-Q, +-Q/2, past 2^64, huge, negative."""
    Q = ring.Q
    edges = [0, 1, -1, 2, Q, -Q, Q - 1, Q // 2, -(Q // 2), Q // 2 + 1, 2**64 - 1, -(2**63)]
    for q in ring.moduli:
        edges += [q - 1, q, -q, q + 1]
    return st.one_of(
        st.integers(-5, 5),
        st.sampled_from(edges),
        st.integers(-(2**200), 2**200),
    )


#: Steps both domains allow; NTT form adds products of polynomials and automorphisms.
STEPS = ("add", "sub", "neg", "mul_int", "int_mul", "add_int", "int_sub", "sub_int", "const")
NTT_STEPS = ("mul", "mul", "automorphism", "rotate", "conjugate")


@st.composite
def programs(draw: st.DrawFn, domain: Domain) -> tuple:
    """A ring, leaf coefficients, steps over a growing pool of values (so values are shared), and
    the pool indices to realize together (the last value and up to two more)."""
    ntt = domain is Domain.NTT
    # NTT-form reads in the reference are O(n^2): keep those rings small
    ring = draw(rings(max_n=64 if ntt else 256, max_limbs=4))
    leaves = [draw(coeff_lists(ring)) for _ in range(draw(st.integers(1, 3)))]
    kinds = STEPS + NTT_STEPS if ntt else STEPS
    steps, size = [], len(leaves)
    for _ in range(draw(st.integers(1, 10))):
        kind = draw(st.sampled_from(kinds))
        i = draw(st.integers(0, size - 1))
        if kind in ("add", "sub", "mul"):
            steps.append((kind, i, draw(st.integers(0, size - 1))))
        elif kind in ("neg", "conjugate"):
            steps.append((kind, i))
        elif kind == "automorphism":
            steps.append((kind, i, draw(st.integers(0, ring.n - 1)) * 2 + 1))
        elif kind == "rotate":
            steps.append((kind, i, draw(st.integers(-2 * ring.n, 2 * ring.n))))
        else:
            steps.append((kind, i, draw(constants(ring))))
        size += 1
    outs = [size - 1, *draw(st.lists(st.integers(0, size - 1), max_size=2))]
    return ring, leaves, steps, outs


def build(ring: RingSpec, leaves: list[Poly], steps: list[tuple], device: str) -> list[Poly]:
    """Run ``steps`` over the pool that starts with ``leaves``; returns the whole pool."""
    pool = list(leaves)
    for kind, i, *rest in steps:
        a = pool[i]
        x = rest[0] if rest else None
        if kind == "add":
            v = a + pool[x]
        elif kind == "sub":
            v = a - pool[x]
        elif kind == "mul":
            v = a * pool[x]
        elif kind == "neg":
            v = -a
        elif kind == "mul_int":
            v = a * x
        elif kind == "int_mul":
            v = x * a
        elif kind == "add_int":
            v = a + x
        elif kind == "int_sub":
            v = x - a
        elif kind == "sub_int":
            v = a - x
        elif kind == "const":
            v = Poly.const(x, ring, device=device) + a
        elif kind == "automorphism":
            v = a.automorphism(x)
        elif kind == "rotate":
            v = a.rotate(x)
        else:
            v = a.conjugate()
        pool.append(v)
    return pool


def run_on_both(device, ring, leaves_cpu, leaves_py, steps, outs) -> None:
    """Build the program on ``device`` and python, check the schedule, realize, compare."""
    note(f"ring={ring!r} steps={steps} outs={outs}")
    pool_cpu = build(ring, leaves_cpu, steps, device)
    pool_py = build(ring, leaves_py, steps, "python")
    got = [pool_cpu[i] for i in dict.fromkeys(outs)]
    want = [pool_py[i] for i in dict.fromkeys(outs)]
    values = evaluate(Node(Op.SINK, DType.VOID, tuple(p.node for p in got)))
    lazy = [p for p in got if not p.realized]
    sched = check_elementwise_only(device, *lazy) if lazy else []
    event(f"{ring.dtype}, {sum(k.info.kind == 'elementwise' for k in sched)} elementwise kernels")
    realize(*got)
    realize(*want)
    for g, w, value in zip(got, want, values, strict=True):
        check_same(g, w, list(value))


@pytest.mark.parametrize("device", COMPILED, indirect=True)
@settings(max_examples=40)
@given(prog=programs(Domain.COEFF))
def test_random_coefficient_form_programs_equal_python_and_the_reference(device, prog):
    ring, coeffs, steps, outs = prog
    leaves_dev = [Poly(c, ring, device=device) for c in coeffs]
    leaves_py = [Poly(c, ring) for c in coeffs]
    run_on_both(device, ring, leaves_dev, leaves_py, steps, outs)


@pytest.mark.parametrize("device", COMPILED, indirect=True)
@settings(max_examples=40)
@given(prog=programs(Domain.NTT))
def test_random_ntt_form_programs_on_copied_inputs_equal_python_and_the_reference(device, prog):
    ring, coeffs, steps, outs = prog
    leaves_py = [Poly(c, ring).ntt().realize() for c in coeffs]
    leaves_dev = [p.to(device) for p in leaves_py]
    run_on_both(device, ring, leaves_dev, leaves_py, steps, outs)


# --------------------------------------------------------------------------------------------
# examples

RING = RingSpec(64, ntt_primes(64, 30, 3))
RING64 = RingSpec(64, ntt_primes(64, 62, 2), "u64")


def ntt_pair(ring: RingSpec, seed: int, device: str = "cpu") -> tuple[Poly, Poly]:
    """A uniform NTT-form poly on python, and its copy on ``device`` (lazy)."""
    p = Poly.uniform(ring, rng=seed).ntt().realize()
    return p.to(device), p


@pytest.mark.parametrize("device", COMPILED, indirect=True)
@pytest.mark.parametrize("ring", [RING, RING64], ids=["N=64/limbs=3/u32", "N=64/limbs=2/u64"])
def test_products_and_gathers_of_copied_ntt_inputs(ring, device):
    (a, pa), (b, pb), (c, pc) = (ntt_pair(ring, s, device) for s in range(3))
    x = ((a + b) * (c - 1)).rotate(3) + a.conjugate() * b - c.automorphism(5) * 7
    y = ((pa + pb) * (pc - 1)).rotate(3) + pa.conjugate() * pb - pc.automorphism(5) * 7
    sched = check_elementwise_only(device, x)
    assert sorted(k.info.kind for k in sched) == ["copy"] * 3 + ["elementwise"]
    value = evaluate(x.node)
    check_same(x.realize(), y.realize(), value)


@pytest.mark.parametrize("device", COMPILED, indirect=True)
def test_a_limb_view_of_a_copied_input(device):
    a, pa = ntt_pair(RING, 7, device)
    tail = RING.with_moduli(RING.moduli[1:])
    x = a.to_ring(tail) * a.to_ring(tail) + 3
    y = pa.to_ring(tail) * pa.to_ring(tail) + 3
    assert [k.info.kind for k in check_elementwise_only(device, x)] == ["copy", "elementwise"]
    check_same(x.realize(), y.realize(), evaluate(y.node))


@pytest.mark.parametrize("device", COMPILED, indirect=True)
def test_a_value_used_by_two_kernels_and_outputs_realized_together(device):
    ring = RING64
    a, b = Poly.uniform(ring, rng=1, device=device), Poly.uniform(ring, rng=2, device=device)
    pa, pb = (Poly(p.tolist(), ring) for p in (a, b))
    s, ps = a * 3 - b, pa * 3 - pb
    outs = [s + a, s - b, -s]
    want = [ps + pa, ps - pb, -ps]
    assert len(check_elementwise_only(device, *outs)) >= 2
    realize(*outs)
    for g, w in zip(outs, want, strict=True):
        check_same(g, w.realize(), evaluate(w.node))


# --------------------------------------------------------------------------------------------
# REN_VALIDATE: the python backend as an oracle at run time

_CORRECTION = "return t_hi >= mq_hi ? t_hi - mq_hi : t_hi - mq_hi + q;"
_SABOTAGED = "return t_hi - mq_hi + q;"


@pytest.fixture
def fresh_kernels(monkeypatch):
    """Kernels rendered from now on: an empty kernel cache and a new renderer (reset after)."""
    cpu.forget_kernels()
    monkeypatch.setattr(cpu, "RENDERER", CRenderer())
    yield
    cpu.forget_kernels()


def test_ren_validate_passes_correct_kernels(monkeypatch, fresh_kernels):
    monkeypatch.setenv("REN_VALIDATE", "1")
    (a, pa), (b, pb) = ntt_pair(RING, 1), ntt_pair(RING, 2)
    x = (a * b).rotate(1) + a * 5 - b
    y = (pa * pb).rotate(1) + pa * 5 - pb
    check_same(x.realize(), y.realize(), evaluate(y.node))


def test_ren_validate_catches_a_sabotaged_renderer(monkeypatch, fresh_kernels):
    assert RING.dtype == "u32"
    mont_mul = ren.codegen.helpers.MONT_MUL_HI  # the Montgomery product the renderer includes
    assert _CORRECTION in mont_mul
    # drop mont_mul's final correction: results land in [q, 2q) where they should be reduced
    sabotaged = mont_mul.replace(_CORRECTION, _SABOTAGED)
    monkeypatch.setattr(ren.codegen.helpers, "MONT_MUL_HI", sabotaged)
    (a, pa), (b, pb) = ntt_pair(RING, 3), ntt_pair(RING, 4)
    # without validation the wrong words go unnoticed by the engine ...
    wrong = (a * b).realize()
    assert wrong.tobytes() != (pa * pb).realize().tobytes()
    with pytest.raises(AssertionError, match="not reduced"):
        stored_words(wrong)
    # ... with it, the first kernel run names itself and shows its source
    monkeypatch.setenv("REN_VALIDATE", "1")
    (c, _), (d, _) = ntt_pair(RING, 5), ntt_pair(RING, 6)
    x = c * d + c
    (k,) = [k for k in check_elementwise_only("cpu", x) if k.info.kind == "elementwise"]
    with pytest.raises(RenError) as info:
        x.realize()
    msg = str(info.value)
    assert msg.startswith(f"REN_VALIDATE: kernel {k.info.name} on cpu differs from the python")
    assert "Source:\n" in msg and "void ren_ew_n64_u32_" in msg
    assert _SABOTAGED in msg and _CORRECTION not in msg  # the sabotaged source


# --------------------------------------------------------------------------------------------
# flags


def test_ren_threads_1_builds_without_openmp(monkeypatch, fresh_kernels):
    built: list[tuple[str, ...]] = []
    real = cpu.load_cached

    def spy(source, flags=(), *args, **kwargs):
        built.append(tuple(flags))
        return real(source, flags, *args, **kwargs)

    monkeypatch.setattr(cpu, "load_cached", spy)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    openmp = supports_flag(find_compiler()[0], "-fopenmp")
    cpu.flags.cache_clear()
    try:
        monkeypatch.setenv("REN_THREADS", "1")
        cc = find_compiler()[0]
        wide = ("-mprefer-vector-width=512",) if native_defines(cc, "__AVX512F__") else ()
        assert cpu.flags() == ("-O3", "-march=native", "-shared", "-fPIC", *wide)
        a, pa = ntt_pair(RING, 8)
        check_same((a * a + 1).realize(), (pa * pa + 1).realize())
        assert built == [cpu.flags()]
        cpu.flags.cache_clear()
        monkeypatch.setenv("REN_THREADS", "2")
        assert ("-fopenmp" in cpu.flags()) == openmp
        if openmp:  # each call sets its thread's team size; the environment is left alone
            monkeypatch.setattr(cpu_threads, "_until", 0.0)
            monkeypatch.setattr(cpu_threads, "free_cores", lambda now=None: 2)  # an idle machine
            b, pb = ntt_pair(RING, 9)
            check_same((b * b + 2).realize(), (pb * pb + 2).realize())
            assert omp_max_threads() == 2
            assert "OMP_NUM_THREADS" not in os.environ
        cpu.flags.cache_clear()
        monkeypatch.delenv("REN_THREADS")
        assert ("-fopenmp" in cpu.flags()) == openmp
    finally:
        cpu.flags.cache_clear()


# --------------------------------------------------------------------------------------------
# bad input


def test_unknown_device_names_are_value_errors(monkeypatch):
    with pytest.raises(ValueError, match="unknown device 'tpu'; the devices are python, cpu"):
        Poly([1, 2], RingSpec(2, (17,)), device="tpu")
    p = Poly([1, 2], RingSpec(2, (17,)), device="cpu")
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        p.to("tpu")
    monkeypatch.setenv("REN_DEVICE", "tpu")
    with pytest.raises(ValueError, match=r"unknown device 'tpu' \(from REN_DEVICE\)"):
        Poly([1, 2], RingSpec(2, (17,)))
