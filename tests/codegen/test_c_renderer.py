"""``linearize`` and ``CRenderer``: golden C for an elementwise kernel, its constants, the order.

Oracles: literal expected source (read line by line: the modular helpers, the loop, one line per
instruction), and Python integers for every constant in it (``q * qinv = 1 mod 2^w``, an
immediate's word ``c * 2^w mod q``, the rotation's Galois element ``5^steps mod 2n``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ren.codegen.batch import UNIT_MARK
from ren.codegen.c import CRenderer
from ren.codegen.helpers import c_helpers
from ren.codegen.linearize import Program, Table, linearize
from ren.codegen.templates import ring_table
from ren.engine.schedule import ScheduledKernel, schedule
from ren.ir import DType, Node, Op
from ren.ir.kernels import const_words
from ren.poly import Poly
from ren.ring import RingSpec, galois_for_rotation, ntt_primes

REPO = Path(__file__).resolve().parents[2]
RING = RingSpec(8, (17, 97))


def kernels(*polys: Poly) -> list[ScheduledKernel]:
    return schedule(Node(Op.SINK, DType.VOID, tuple(p.node for p in polys)))[0]


def only_elementwise(*polys: Poly) -> Node:
    """The body of the one kernel ``polys`` schedule to (checked to be one elementwise kernel)."""
    (k,) = kernels(*polys)
    assert k.info.kind == "elementwise"
    return k.ast


def ntt_inputs(ring: RingSpec, count: int) -> list[Poly]:
    return [Poly([i + j for j in range(ring.n)], ring).ntt().realize() for i in range(count)]


def rotated_sum() -> Node:
    a, b, c, d = ntt_inputs(RING, 4)
    return only_elementwise(((a + b) * (c - 1)).rotate(3) + d)


# --------------------------------------------------------------------------------------------
# golden source

#: The prelude: the word type, then the modular helpers the C templates include too (one text for
#: both), under the plain names ``code_for_op`` writes.
PRELUDE_HEAD = """\
/* Ren elementwise kernel: words are Montgomery forms x*R mod q in [0, q). */
#include <stdint.h>
typedef uint32_t word_t;
"""
PRELUDE_NAMES = """\
#define add_mod add_mod_u32
#define sub_mod sub_mod_u32
#define neg_mod neg_mod_u32
#define mont_mul mont_mul_u32
"""

GOLDEN = """\

void k(uint32_t *restrict b0, const uint32_t *restrict b1, const uint32_t *restrict b2, \
const uint32_t *restrict b3, const uint32_t *restrict b4, const uint32_t *restrict b5, \
const int64_t *restrict perm_g13, const uint32_t *restrict ring) {
  const int L = (int)ring[0];
  #pragma omp parallel for if (L >= 2 && (long long)L * 8 >= 16384)
  for (int i = 0; i < L; i++) {
    for (int k = 0; k < 8; k++) {
      const word_t q = ring[1 + i], qinv = ring[1 + L + i];
      const uint32_t v0 = b1[i * 8 + perm_g13[k]];
      const uint32_t v1 = b2[i * 8 + perm_g13[k]];
      const uint32_t v2 = add_mod(v0, v1, q);
      const uint32_t v3 = b3[i * 8 + perm_g13[k]];
      const uint32_t v4 = b5[i];
      const uint32_t v5 = sub_mod(v3, v4, q);
      const uint32_t v6 = mont_mul(v2, v5, q, qinv);
      const uint32_t v7 = b4[i * 8 + k];
      const uint32_t v8 = add_mod(v6, v7, q);
      b0[i * 8 + k] = v8;
    }
  }
}
"""


def test_golden_source_of_a_rotated_product_plus_a_sum():
    # ((a + b) * (c - 1)).rotate(3) + d, all NTT form: the rotation is a gather of the three
    # loads under it (perm_g13), d is read in place, the constant 1 is one word per limb, read
    # from the constants argument b5 (after the buffers): no constant is in the source
    prog = linearize(rotated_sum())
    assert prog.slots == 6 and prog.out == 8
    assert prog.tables == (Table("perm", 8, 13),)
    prelude = PRELUDE_HEAD + c_helpers("u32") + PRELUDE_NAMES + UNIT_MARK
    assert CRenderer().render(prog, "k") == prelude + "\n" + GOLDEN
    for helper in ("add_mod_u32", "sub_mod_u32", "neg_mod_u32", "mont_mul_u32", "mul_hi_u32"):
        assert f"static inline uint32_t {helper}(" in prelude


def test_the_golden_constants_are_what_they_claim():
    # L, Q and QINV are the ring table's words (the last argument); the constant 1 is an
    # argument, its words c * R mod q
    w = 1 << 32
    assert "static const" not in GOLDEN  # no modulus in the source: one build serves every ring
    table = ring_table(RING).tolist()
    assert table[0] == RING.L and table[1 : 1 + RING.L] == list(RING.moduli)
    assert [q * qi % w for q, qi in zip(RING.moduli, table[1 + RING.L :], strict=True)] == [1, 1]
    a, b, c, d = ntt_inputs(RING, 4)
    (k,) = kernels(((a + b) * (c - 1)).rotate(3) + d)
    assert k.consts == (1,)  # the value of the constants argument's one row
    assert const_words(RING, k.consts).tolist() == [1 * w % q for q in RING.moduli]  # Montgomery
    assert galois_for_rotation(8, 3) == pow(5, 3, 16) == 13  # perm_g13 is rotate(3)


def test_coefficient_form_u64_constants_scalars_everywhere_a_constant_poly_at_k0():
    ring = RingSpec(4, ntt_primes(4, 62, 2), "u64")
    a = Poly([1, 2, 3, 4], ring)
    b = Poly([5, 6, 7, 8], ring)
    huge = -(2**100) - 12345
    (k,) = kernels(a * huge + 5 - (-b))
    src = CRenderer().render(linearize(k.ast), "k")
    w = 1 << 64
    assert "typedef uint64_t word_t;\n" in src
    # vectorizable with AVX-512: the one 128-bit product is the other machines' form
    assert src.count("__int128") == 1 and "#if defined(__AVX512F__)" in src
    assert c_helpers("u64") in src and "#define mont_mul mont_mul_u64" in src
    assert "static const" not in src  # the constants are not in the source, nor the moduli
    assert k.consts == (huge, 5)  # rows of the constants argument, b3
    assert const_words(ring, k.consts).tolist() == [
        *(huge % q * w % q for q in ring.moduli),  # c * R mod q, c < 0
        *(5 * w % q for q in ring.moduli),
    ]
    body = src[src.index("const word_t q = ring[1 + i]") :].splitlines()
    assert [line.strip() for line in body[:9]] == [
        "const word_t q = ring[1 + i], qinv = ring[1 + L + i];",
        "const uint64_t v0 = b1[i * 4 + k];",
        "const uint64_t v1 = b3[i];",  # a scalar: every slot, row 0
        "const uint64_t v2 = mont_mul(v0, v1, q, qinv);",
        # a constant poly: coefficient 0, row 1 (rows are L words apart)
        "const uint64_t v3 = (k == 0 ? b3[1 * L + i] : 0);",
        "const uint64_t v4 = add_mod(v2, v3, q);",
        "const uint64_t v5 = b2[i * 4 + k];",
        "const uint64_t v6 = neg_mod(v5, q);",
        "const uint64_t v7 = sub_mod(v4, v6, q);",
    ]


def test_a_limb_view_loads_at_its_row_offset():
    ring = RingSpec(8, (17, 97, 113))
    (x,) = ntt_inputs(ring, 1)
    tail = x.to_ring(ring.with_moduli((97, 113)))
    src = CRenderer().render(linearize(only_elementwise(tail * tail)), "k")
    assert "const uint32_t v0 = b1[(i + 1) * 8 + k];" in src
    assert "v1 = mont_mul(v0, v0, q, qinv);" in src  # one load, used twice
    assert "const word_t q = ring[1 + i]" in src  # the window's moduli come from the ring table


# --------------------------------------------------------------------------------------------
# linearize


def check_order(prog: Program) -> None:
    """Each instruction defines the next value, from values defined before it."""
    for i, ins in enumerate(prog.instrs):
        assert ins.dest == i
        assert all(s < i for s in ins.srcs)


def test_linearize_lists_each_shared_value_once_sources_first():
    a, b = ntt_inputs(RING, 2)
    prog = linearize(only_elementwise(a * b + a - b * b))
    check_order(prog)
    assert [(ins.op.name, ins.srcs, ins.slot) for ins in prog.instrs] == [
        ("LOAD", (), 1),
        ("LOAD", (), 2),
        ("MUL", (0, 1), None),
        ("ADD", (2, 0), None),  # a's load, used again
        ("MUL", (1, 1), None),
        ("SUB", (3, 4), None),
    ]
    assert prog.out == 5 and prog.slots == 3 and prog.tables == ()


def test_linearize_and_render_are_the_same_every_time():
    first = linearize(rotated_sum())
    second = linearize(rotated_sum())
    assert first == second
    assert CRenderer().render(first, "k") == CRenderer().render(second, "k")


_RENDER_IN_CHILD = """
from tests.codegen.test_c_renderer import sources
print("@@\\n".join(sources()))
"""


def sources() -> list[str]:
    """The source of every kernel of a program with shared values (each its own kernel, as
    bufferize decides), commutative operands in both orders, gathers and both constant layouts."""
    a, b, c = ntt_inputs(RING, 3)
    x = Poly(list(range(8)), RING)
    s, t = a * b, b * a + c
    y = (s + t) * (t - s) + (-s) * 3 + (t + 2) * (s - 5) + c.conjugate()
    sched = [k for k in kernels(y, -(x * 5) + 7 - x) if k.info.kind == "elementwise"]
    assert len(sched) >= 3
    bodies = [rotated_sum(), *(k.ast for k in sched)]
    return [CRenderer().render(linearize(ast), "k") for ast in bodies]


@pytest.mark.parametrize("seed", ["0", "12345"])
def test_rendered_source_does_not_depend_on_the_hash_seed(seed):
    env = {**os.environ, "PYTHONHASHSEED": seed}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH"))))
    out = subprocess.run(
        [sys.executable, "-c", _RENDER_IN_CHILD],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    here = sources()
    assert out.split("@@\n") == [*here[:-1], here[-1] + "\n"]
    assert here[0] == PRELUDE_HEAD + c_helpers("u32") + PRELUDE_NAMES + UNIT_MARK + "\n" + GOLDEN


def test_linearize_rejects_whole_polynomial_bodies():
    ring = RingSpec(8, (17, 97, 113))
    a = Poly(list(range(8)), ring)
    x = Poly(list(range(8)), ring).ntt().realize()
    progs = {
        "NTT": a.ntt(),
        "INTT": x.intt(),
        "RESCALE": a.rescale(),
        "TO_RING": a.to_ring(RingSpec(8, (17, 193))),
    }
    for op, p in progs.items():
        (k,) = kernels(p)
        assert k.info.kind != "elementwise"
        with pytest.raises(ValueError, match=f"{op} is not elementwise"):
            linearize(k.ast)


def test_linearize_rejects_a_body_that_is_not_a_store():
    ast = rotated_sum()
    with pytest.raises(ValueError, match="a kernel body is a STORE, got ADD"):
        linearize(ast.src[1])


def test_a_coefficient_form_gather_is_refused_not_rendered_wrong():
    import dataclasses

    from ren.ir.rewrite import Pat, graph_rewrite
    from ren.ring import Domain

    ring = RingSpec(8, (17, 97))
    a = Poly.uniform(ring, rng=1).ntt().realize()
    sink = Node(Op.SINK, DType.VOID, (a.rotate(1).node,))
    (ast,) = [k.ast for k in schedule(sink)[0] if k.info.kind == "elementwise"]
    linearize(ast)  # the NTT-form gather renders

    def to_coeff(node):
        return Node(
            node.op, node.dtype, node.src, dataclasses.replace(node.arg, domain=Domain.COEFF)
        )

    rule = [(Pat(Op.LOAD, name="node", where=lambda n: n.arg.galois is not None), to_coeff)]
    bad = graph_rewrite(ast, rule)
    with pytest.raises(ValueError, match="in COEFF form cannot be rendered as a gather"):
        linearize(bad)


def test_openmp_only_where_there_is_work_for_it():
    from ren.codegen.helpers import OMP_MIN_WORDS, omp_for
    from ren.codegen.templates import rescale_source

    big = RingSpec(4096, ntt_primes(4096, 50, 4))
    assert big.L * big.n >= OMP_MIN_WORDS
    assert omp_for(big) == "#pragma omp parallel for"
    assert omp_for(RingSpec(16384, ntt_primes(16384, 50, 1))) == "/* one limb: one thread */"
    assert omp_for(RingSpec(16384, ntt_primes(16384, 50, 1)), over_limbs=False).startswith("#")
    assert "too little work" in omp_for(RingSpec(8, (17, 97)))
    # the templates of every L decide when they run: threads only for L * n >= OMP_MIN_WORDS
    clause = f"#pragma omp parallel for if ((long long)L * 4096 >= {OMP_MIN_WORDS})"
    assert clause in rescale_source(big, big.moduli[-1]).source
