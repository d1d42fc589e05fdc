"""Hostile plan files: ``ren.load`` runs no code from a file, and stays inside its buffers.

Every file here is changed as an attacker would change it, then given back both checks a file
carries: each kernel's source hash and the plan's fingerprint are recomputed with Ren's own
functions, so what refuses it is the deeper checks. Oracles: a marker file a constructor in the
file would make (it must not exist), the message of the refusal (it names the field, the unit,
the buffer and both sizes), that nothing was allocated or compiled before it, the text Ren
renders for the checked IR, and the values the plan computes against the eager ones.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import random
import re
import sys
from pathlib import Path

import pytest

import ren
from ren import Poly, RingSpec
from ren.capture import loaded as loaded_module
from ren.capture.planfile import (
    PlanFileError,
    decode,
    decode_body,
    encode,
    encode_body,
    fingerprint,
)
from ren.capture.saved import kernel_source, source_hash
from ren.codegen.batch import UNIT_MARK
from ren.engine import memory as memory_module

RING = RingSpec(n=8, moduli=(17, 97))
X = [1, 2, 3, 4, 5, 6, 7, 8]
Y = [8, 7, 6, 5, 4, 3, 2, 1]
DEVICES = ["python", pytest.param("cpu", marks=pytest.mark.cc)]


def step(x: Poly, y: Poly) -> Poly:
    return (x + y) * (x - 1)


@pytest.fixture(autouse=True)
def _one_layout(monkeypatch):
    """Plans saved here are laid out as on one thread, whatever the device: the crafted offsets
    and sizes below name that layout (a threaded cpu plan reuses arena blocks later)."""
    monkeypatch.setattr(memory_module, "reuse_delay", lambda device: 0)


def saved(tmp_path: Path, device: str = "python") -> tuple[Path, dict]:
    x, y = Poly(X, RING, device=device), Poly(Y, RING, device=device)
    path = ren.jit(step).export(tmp_path / f"step-{device}.renplan", x, y)
    return path, json.loads(path.read_text())


def write(path: Path, data: dict) -> Path:
    """Write ``data`` with every kernel's source hash and the fingerprint recomputed, as an
    attacker with Ren's own functions would (where a changed kernel can still be rendered)."""
    for k in data["kernels"]:
        with contextlib.suppress(TypeError, ValueError):
            k["source_sha256"] = source_hash(
                kernel_source(decode_body(k["body"]), decode(k["info"]))
            )
    data["fingerprint"] = fingerprint(data)
    path.write_text(json.dumps(data))
    return path


def loads_of(body: list, slot: int) -> list[list]:
    """The INDEX and LOAD nodes of a body that read ``slot``."""
    slot_at = next(i for i, n in enumerate(body) if n[0] == "SLOT" and n[2]["index"] == slot)
    index = [n for n in body if n[0] == "INDEX" and n[3][0] == slot_at]
    return index + [n for n in body if n[0] == "LOAD" and body[n[3][0]] in index]


# ---------------------------------------------------------------------------------------------
# reading a plan runs no code from it


def constructor_in_limb_offset(data: dict, marker: Path) -> None:
    """The issue's exploit: kernel 0's load of slot 1 gets a limb offset that closes the kernel,
    defines a constructor making ``marker``, and opens a function the rest completes; the kernel's
    source hash is that of the source Ren would render with it (a string replacement of Ren's
    own text, so it is computed the same way whatever Ren checks)."""
    from ren.codegen.c import CRenderer
    from ren.codegen.linearize import linearize

    body = data["kernels"][0]["body"]
    draft = CRenderer().render(linearize(decode_body(body)), "REN_KERNEL")
    start = draft.index("REN_KERNEL(") + len("REN_KERNEL(")
    params = draft[start : draft.index(") {", start)]
    text = (
        "0)*0]; } } }\n#include <stdio.h>\n__attribute__((constructor)) static void pwn(void) "
        f'{{ FILE *f = fopen("{marker}", "w"); if (f) fclose(f); }}\n'
        f"void ren_tail({params}) {{ for (int i = 0; i < 1; i++) {{ for (int k = 0; k < 1; k++) "
        "{ const word_t q = Q[i], qinv = QINV[i]; const word_t v0 = b1[(i + 0"
    )
    for node in loads_of(body, 1):
        node[2]["limb_offset"] = text
    evil = draft.replace("b1[i * 8 + k]", f"b1[(i + {text}) * 8 + k]", 1)
    name = f"ren_ew_n8_L2_u32_{hashlib.sha256(evil.encode()).hexdigest()[:10]}"
    data["kernels"][0]["source_sha256"] = source_hash(evil.replace("REN_KERNEL", name))
    data["fingerprint"] = fingerprint(data)


@pytest.mark.cc
def test_a_constructor_in_a_kernel_field_never_runs(tmp_path):
    _, data = saved(tmp_path, "cpu")
    marker = tmp_path / "the-constructor-ran"
    constructor_in_limb_offset(data, marker)
    path = tmp_path / "evil.renplan"
    path.write_text(json.dumps(data))
    with pytest.raises(PlanFileError, match=r"IndexArg\.limb_offset must be an int, got str"):
        ren.load(path)
    assert not marker.exists()


#: (label, change of kernel 0's body or info, what the refusal names)
FIELDS = [
    (
        "limb_offset '0'",
        lambda b, i: [n[2].update(limb_offset="0") for n in loads_of(b, 1)],
        "limb_offset",
    ),
    (
        "limb_offset True",
        lambda b, i: [n[2].update(limb_offset=True) for n in loads_of(b, 1)],
        "limb_offset",
    ),
    (
        "limb_offset -1",
        lambda b, i: [n[2].update(limb_offset=-1) for n in loads_of(b, 1)],
        "limb_offset",
    ),
    (
        "galois 4",
        lambda b, i: [n[2].update(galois=4) for n in loads_of(b, 1)],
        "galois 4 must be odd",
    ),
    ("slot index '1'", lambda b, i: b[1][2].update(index="1"), r"SlotArg\.index"),
    ("slot index 2**70", lambda b, i: b[1][2].update(index=2**70), "buffer slots"),
    ("an arg with another field", lambda b, i: b[1][2].update(extra=1), "fields"),
    ("a BufferArg", lambda b, i: b[1].__setitem__(2, {"@": "BufferArg", "buffer": 1}), "BufferArg"),
    ("info.name C", lambda b, i: i.update(name="x */ int y; /*"), r"KernelInfo\.name"),
    ("info.device gpu", lambda b, i: i.update(device="gpu"), r"KernelInfo\.device 'gpu'"),
    (
        "info.ring not a ring",
        lambda b, i: i.update(ring={"ring": [8, [18, 97], "u32"]}),
        "not prime",
    ),
    (
        "info.ring n=2^20",
        lambda b, i: i.update(ring={"ring": [1 << 20, [7340033], "u32"]}),
        "2 <= n",
    ),
    ("op FOO", lambda b, i: b[-2].__setitem__(0, "FOO"), "op 'FOO'"),
    ("op NTT on two sources", lambda b, i: b[-2].__setitem__(0, "NTT"), "takes 1 source"),
    ("a source not before", lambda b, i: b[-1].__setitem__(3, [0, len(b)]), "earlier nodes"),
    ("a SLOT of u64 words", lambda b, i: b[1].__setitem__(1, "U64"), "LOAD of u32 words"),
    (
        "a GIDX with an arg",
        lambda b, i: b[2].__setitem__(2, {"@": "SlotArg", "index": 0}),
        "no arg",
    ),
    ("a LOAD of the output", lambda b, i: b[1][2].update(index=0), "other than 0"),
    (
        "an unused node",
        lambda b, i: b.insert(len(b) - 1, ["GIDX", "INDEX", None, []]),
        "does not use",
    ),
    (
        "info of another family",
        lambda b, i: i.update(family={"enum": ["Family", "COPY"]}),
        "params",
    ),
    ("info of another name", lambda b, i: i.update(name="elementwise_n8_L3_u32"), "described as"),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("label", "change", "names"), FIELDS, ids=[f[0] for f in FIELDS])
def test_a_kernel_field_is_checked_where_it_is_read(tmp_path, device, label, change, names):
    path, data = saved(tmp_path, device)
    change(data["kernels"][0]["body"], data["kernels"][0]["info"])
    with pytest.raises(PlanFileError, match=names):
        ren.load(write(path, data))


# ---------------------------------------------------------------------------------------------
# kernels stay inside the buffers the plan declares, checked before anything is allocated


class Untouchable:
    """Stands for ``Buffer`` in ``ren.capture.loaded``: any allocation fails the test."""

    def __init__(self, *args, **kwargs):
        raise AssertionError("the loaded plan allocated a buffer before refusing the file")


#: (label, change of the plan, what the refusal says)
SIZES = [
    (
        "a 1-word output buffer",
        lambda d: d["buffers"]["own"][0].__setitem__(2, 1),
        r"unit 4 \(kernel 3, elementwise_n8_L2_u32\) writes 16 u32 words into own buffer 0, "
        r"which holds 1 u32 words",
    ),
    (
        "a 17-word output buffer",
        lambda d: d["buffers"]["own"][0].__setitem__(2, 17),
        "writes 16 u32 words into own buffer 0, which holds 17",
    ),
    (
        "a load past its input",
        lambda d: [n[2].update(limb_offset=1) for n in loads_of(d["kernels"][0]["body"], 1)],
        r"unit 0 \(kernel 0, elementwise_n8_L2_u32\) reads 24 u32 words of input 0 \(x\), "
        "which holds 16 u32 words",
    ),
    (
        "a view past its arena",
        lambda d: d["buffers"]["views"][3].__setitem__(3, 160),
        r"view 3 holds bytes \[160, 224\) of the 192-byte arena 0",
    ),
    (
        "a view off a word boundary",
        lambda d: d["buffers"]["views"][0].__setitem__(3, 2),
        r"view 0 holds bytes \[2, 66\)",
    ),
    ("u64 words in a u32 view", lambda d: d["buffers"]["views"][0].__setitem__(1, "u64"), "u64"),
    (
        "an arena larger than its views",
        lambda d: d["buffers"]["arenas"][0].__setitem__(1, 1 << 40),
        "arena 0 holds 1099511627776 bytes; its views reach 192 bytes",
    ),
    (
        "an own buffer of 2^40 words",
        lambda d: d["buffers"]["own"].append(["python", "u32", 1 << 40]),
        r"its buffers take 4398046511360 bytes; Ren loads plans of at most 17179869184",
    ),
    ("an unused view", lambda d: d["buffers"]["views"].append([0, "u32", 16, 0]), "view 4"),
    (
        "a unit that writes an input",
        lambda d: d["units"][0]["bufs"].__setitem__(0, ["input", 1]),
        r"unit 0 .* writes input 1 \(y\), which is not a buffer of the plan's own",
    ),
    (
        "a unit that writes what it reads",
        lambda d: d["units"][1]["bufs"].__setitem__(0, ["view", 0]),
        "writes view 0, which overlaps view 0, which it reads",
    ),
    (
        "a unit with a buffer too few",
        lambda d: d["units"][0]["bufs"].pop(),
        r"unit 0 .* has 2 buffers; its body has 3 slots",
    ),
    ("a unit of kernel 9", lambda d: d["units"][0].update(kernel=9), "the plan has 4 kernels"),
    (
        "a stored input nobody gave",
        lambda d: d["units"][0]["bufs"].__setitem__(1, ["stored", "k"]),
        "'k'",
    ),
    (
        "a constant too many",
        lambda d: d["units"][0]["consts"].append("5"),
        "has 1 constants; its body reads 0 rows",
    ),
    (
        "an input spec of 1 word",
        lambda d: d["manifest"]["inputs"][0]["spec"].__setitem__(2, 1),
        r"input 0 \(x\) has the spec",
    ),
    (
        "a result over a view past its buffer",
        lambda d: d["result"]["poly"][3].__setitem__(
            0,
            [
                "BUFFER_VIEW",
                "U32",
                {"@": "ViewArg", "offset": 8, "size": 16},
                copy.deepcopy(d["result"]["poly"][3]),
            ],
        ),
        r"result at result is 16 u32 words at word 8 of own buffer 0, which holds 16",
    ),
    (
        "a memory plan of a negative arena",
        lambda d: d["memory"]["devices"][0].update(arena_bytes=-1),
        r"DevicePlan\.arena_bytes",
    ),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("label", "change", "says"), SIZES, ids=[s[0] for s in SIZES])
def test_reads_and_writes_outside_the_plan_are_refused_before_allocating(
    tmp_path, monkeypatch, device, label, change, says
):
    path, data = saved(tmp_path, device)
    change(data)
    data = json.loads(json.dumps(data).replace('"python"', f'"{device}"'))
    write(path, data)
    monkeypatch.setattr(loaded_module, "Buffer", Untouchable)
    with pytest.raises(PlanFileError, match=says):
        ren.load(path)


def test_a_file_nested_deeply_is_refused(tmp_path):
    path, data = saved(tmp_path)
    text = json.dumps(data)[:-1] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}"
    path.write_text(text)
    with pytest.raises(PlanFileError, match="nested too deeply"):
        ren.load(path)
    data["result"] = {"list": [data["result"]]}
    for _ in range(40):
        data["result"] = {"list": [data["result"]]}
    with pytest.raises(PlanFileError, match="nests deeper than 32 levels"):
        ren.load(write(path, data))


@pytest.mark.parametrize(
    "name", ["ren.demo:main", "os:system", "ren.capture.loaded:LoadedPlan", "builtins:eval"]
)
def test_a_result_type_is_one_of_rens_and_nothing_is_imported(tmp_path, name):
    path, data = saved(tmp_path)
    data["result"] = {"object": name, "fields": {"parts": {"tuple": [data["result"]]}}}
    before = set(sys.modules)
    with pytest.raises(PlanFileError, match="not a type Ren rebuilds"):
        ren.load(write(path, data))
    assert set(sys.modules) == before


def test_a_result_field_is_checked_before_its_type_rebuilds_it(tmp_path):
    import numpy as np

    from ren.schemes import ckks

    params = ckks.Params(n=16, q_bits=(30, 25), p_bits=(30,), scale_bits=25, insecure=True)
    with ckks.Context(params, seed=1) as ctx:
        x = ckks.encrypt(np.linspace(-1, 1, params.slots))
        path = ren.jit(lambda a: a + a).export(tmp_path / "double.renplan", x)
        data = json.loads(path.read_text())
        for field, value, says in [
            ("scale", {"value": "2"}, r"Ciphertext\.scale.*not a scale"),
            ("level", {"value": -1}, r"Ciphertext\.level.*not a level"),
            ("real", {"value": 1}, r"Ciphertext\.real.*not a bool"),
        ]:
            bad = copy.deepcopy(data)
            bad["result"]["fields"][field] = value
            with pytest.raises(PlanFileError, match=says):
                ren.load(write(tmp_path / f"{field}.renplan", bad))
        assert ckks.precision_bits(ckks.decrypt(ren.load(path)(x)), 2 * ckks.decrypt(x)) > 15
        del ctx


# ---------------------------------------------------------------------------------------------
# what a loaded kernel runs is what Ren renders for the checked IR

#: The names an elementwise kernel's own C text may hold (its helpers are Ren's fixed text).
VOCABULARY = {"static", "const", "uint32_t", "uint64_t", "int64_t", "void", "for", "int",
              "restrict", "i", "k", "q", "qinv", "Q", "QINV", "add_mod", "sub_mod", "neg_mod",
              "mont_mul", "ring", "L", "word_t", "long", "pragma", "omp", "parallel",
              "if"}  # fmt: skip
NAMES = re.compile(r"[bv][0-9]+|perm_g[0-9]+|ren_ew_n[0-9]+_u(32|64)_[0-9a-f]{10}")
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+(?:ull|u)?|[-+*/=<>?:;,{}()\[\]]|==|\S")


def words_of_kernel(source: str, ring: RingSpec) -> list[str]:
    """The tokens of an elementwise kernel's C after Ren's fixed prelude and helpers."""
    return TOKEN.findall(source[source.index(UNIT_MARK) + len(UNIT_MARK) :])


def fuzzed(data: dict, rng: random.Random) -> dict:
    """A copy of ``data`` with one field of one IR argument of one kernel set at random."""
    data = copy.deepcopy(data)
    k = rng.randrange(len(data["kernels"]))
    body = data["kernels"][k]["body"]
    args = [n[2] for n in body if isinstance(n[2], dict)]
    arg = rng.choice(args)
    field = rng.choice([f for f in arg if f != "@"])
    arg[field] = rng.choice(
        [0, 1, 2, 3, 5, 7, -1, 2**40, True, "0", "1 */", None, 1.0, [1], "all", "first", "cpu"]
    )
    return data


@pytest.mark.cc
def test_every_kernel_of_a_fuzzed_plan_renders_as_ren_renders_its_checked_ir(tmp_path):
    _, data = saved(tmp_path, "cpu")
    x, y = Poly(X, RING, device="cpu"), Poly(Y, RING, device="cpu")
    captured = ren.jit(step)
    captured(x, y)
    in_process = {kernel_source(u.kernel.ast, u.kernel.info) for u in captured.last.units}
    rng = random.Random(35)
    accepted = refused = 0
    for i in range(120):
        plan = fuzzed(data, rng) if i else copy.deepcopy(data)
        target = write(tmp_path / f"fuzz{i}.renplan", plan)
        try:
            loaded = ren.load(target)
        except PlanFileError as e:
            refused += 1
            assert str(e).strip()
            continue
        accepted += 1
        for k in plan["kernels"]:
            ast, info = decode_body(k["body"]), decode(k["info"])
            text = kernel_source(ast, info)
            # the text is Ren's for the checked IR: encoding the IR again gives the same text,
            # and a kernel the fuzzing left alone is the kernel captured in this process
            again = kernel_source(decode_body(encode_body(ast)), decode(encode(info)))
            assert text == again and source_hash(text) == k["source_sha256"]
            if k in data["kernels"]:
                assert text in in_process
            if info.kind == "elementwise":
                for token in words_of_kernel(text, info.ring):
                    ok = token in VOCABULARY or NAMES.fullmatch(token) or not token.isidentifier()
                    assert ok and not token.startswith('"'), token
        for unit in loaded.plan.units:
            assert unit.fn.source in {
                kernel_source(u.kernel.ast, u.kernel.info) for u in loaded.plan.units
            }
        got = loaded(x, y).tolist()
        if plan["kernels"] == data["kernels"]:
            assert got == step(x, y).tolist()
    assert accepted and refused  # both kinds were tried


def test_an_ir_arg_made_without_its_checks_cannot_put_text_into_c():
    from ren.codegen.c import CRenderer
    from ren.codegen.linearize import linearize
    from ren.ir.args import IndexArg

    x, y = Poly(X, RING), Poly(Y, RING)
    captured = ren.jit(step)
    captured(x, y)
    ast = captured.last.units[0].kernel.ast
    load = next(n for n in ast.toposort() if n.op.name == "LOAD")
    forged = object.__new__(IndexArg)  # no __post_init__: what a bug elsewhere could make
    forged.__dict__.update(load.arg.__dict__, limb_offset="0) + system(0")
    prog = linearize(ast)
    ins = next(i for i in prog.instrs if i.arg is load.arg)
    forged_ins = copy.copy(ins)
    object.__setattr__(forged_ins, "arg", forged)
    with pytest.raises(TypeError, match="ints only"):
        CRenderer().expr(forged_ins, prog)
    assert "system" not in CRenderer().render(prog, "k")
