"""The trial's "crafted plans" category: hostile plan files given to ``ren.load``.

Each case takes a real plan saved by the Ren under test (a small ``Poly`` program, one with a
constant input and an output that is an input, and a CKKS product and rotation under evaluation
keys; on the python and cpu devices), changes it as an attacker would, recomputes every kernel's
source hash with Ren's own functions (where the changed kernel can still be rendered) and the
plan's fingerprint, so the file passes those two checks and the deeper ones are what is tried,
then loads it and calls it on the inputs it was saved with.

The changes: every field of every IR argument in a kernel body (wrong types, bools, strings,
C text, floats, negative and huge ints, other rings and enums), the kernels' info and template
parameters, the bodies' structure (ops, sources, dtypes, extra and missing nodes), buffer sizes,
offsets, word types and devices, units' kernels, constants and buffers, the manifest, the
passthrough copies, constant rows, the result (types named, fields, value nodes), names, deep
nesting, and C that a constructor would run at load (it creates a marker file).

**Classified** (``trial.py``'s outcomes): a case whose file is not one Ren writes must be refused
with a ``ValueError`` (or ``TypeError``/``RenError``) naming what is wrong; a change that keeps
the plan's meaning (a permutation of its views, an extra key) must load and give the eager
answer; where a change makes another valid plan (another constant, ``SUB`` for ``ADD``) the
right behaviour is a clear refusal or a replay that finishes, whatever it computes: a plan file
is a program, and its fingerprint says it was not changed by accident, not who wrote it. Any
marker file (injected C ran) is ``silent``; a segfault, an allocation that fails, an unclear
message or another exception is a ``crash``.

The module works against any Ren that writes plan files (``--ren`` an older checkout).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trial import CLEAR, CRASH, SILENT, Case, either, refuse, short, succeed

#: C that runs when the library holding it is loaded; ``@MARKER@`` becomes a file's path.
CONSTRUCTOR = (
    "#include <stdio.h>\n__attribute__((constructor)) static void ren_trial_pwn(void) { FILE *f "
    '= fopen("@MARKER@", "w"); if (f) fclose(f); }\n'
)
#: The same, for a field written inside a C comment.
IN_COMMENT = "0 */\n" + CONSTRUCTOR + "/* "

#: Values wrong for an int field of an IR argument.
BAD_INTS: list[tuple[str, Any]] = [
    ("True", True),
    ("'0'", "0"),
    ("C text", '0) + system("id") + (0'),
    ("comment C", IN_COMMENT),
    ("1.5", 1.5),
    ("-1", -1),
    ("[0]", [0]),
    ("an object", {"@": "SlotArg", "index": 0}),
    ("2**70", 2**70),
]
BAD_RINGS: list[tuple[str, Any]] = [
    ("'ring'", "ring"),
    ("3", 3),
    ("a non-prime", {"ring": [8, [18, 97], "u32"]}),
    ("n=True", {"ring": [True, [17, 97], "u32"]}),
    ("n=2**20", {"ring": [1 << 20, [7340033], "u32"]}),
    ("dtype C", {"ring": [8, [17, 97], "u32; int x"]}),
    ("moduli as text", {"ring": [8, "17,97", "u32"]}),
]
BAD_ENUMS: list[tuple[str, Any]] = [
    ("a bare name", "COEFF"),
    ("an unknown member", {"enum": ["Domain", "EVAL"]}),
    ("another enum", {"enum": ["Op", "ADD"]}),
    ("an int", 1),
    ("a list", {"enum": [["Domain"], "NTT"]}),
]
BAD_NAMES: list[tuple[str, Any]] = [
    ("''", ""),
    ("C text", "x */ int y; /*"),
    ("comment C", IN_COMMENT),
    ("3", 3),
    ("None", None),
    ("10k chars", "a" * 10_000),
    ("['cpu']", ["cpu"]),
]
#: The wrong values of each kind of field.
BAD = {"int": BAD_INTS, "ring": BAD_RINGS, "enum": BAD_ENUMS, "name": BAD_NAMES}
#: Each field of each IR argument class a body or an info holds, with its kind.
FIELDS = {
    "IndexArg": {"ring": "ring", "domain": "enum", "limb_offset": "int", "galois": "int"},
    "SlotArg": {"index": "int"},
    "ConstRowArg": {"row": "int", "ring": "ring", "device": "name", "layout": "name"},
    "CopyArg": {"device": "name"},
    "RescaleArg": {"moduli": "int"},
    "ToRingArg": {"ring": "ring"},
    "KernelInfo": {
        "family": "enum",
        "ring": "ring",
        "domain": "enum",
        "device": "name",
        "name": "name",
    },
    "TemplateParams": {"source": "ring", "limb_offset": "int", "drop": "int", "target": "ring"},
}
#: What a refusal of a body that is not one Ren writes may say.
STRUCTURE = (
    r"kernel|body|node|slot|source|ring|form|op |dtype|SpecError|reads|writes|words|not one Ren|"
    r"malformed|described|constant"
)

#: What a refusal of a unit, a passthrough or constant row, a result may say.
UNIT = r"unit|kernel|buffer|slot|constant|view|own|input|stored|reads|writes|words|plan"
ROWS = r"passthrough|constant|row|input|copies|words|buffer|plan|view|own|stored|holds"
RESULT = r"result|rebuild|type|field|ring|buffer|words|plan|scale|level|real|correction|parts"


# ---------------------------------------------------------------------------------------------
# the plans the cases start from


class Base:
    """A saved plan: its fields, how to load and call it, and what the call must give."""

    def __init__(self, name: str, data: dict, call: Callable[[str], Any], check: Callable) -> None:
        self.name, self.data, self.call, self.check = name, data, call, check


def _tmp() -> Path:
    path = Path(os.environ.get("TRIAL_TMP", tempfile.gettempdir()), "plans")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _poly_check(want: list) -> Callable[[Any], str | None]:
    def check(got: Any) -> str | None:
        got = [p.tolist() for p in got] if isinstance(got, list) else got.tolist()
        return None if got == want else f"{short(got, 60)}, want {short(want, 60)}"

    return check


@functools.cache
def bases() -> dict[str, Base]:
    """Every base plan, saved by the Ren under test, by name."""
    import numpy as np

    import ren
    from ren import Poly, RingSpec
    from ren.schemes import ckks

    out: dict[str, Base] = {}
    ring = RingSpec(8, (17, 97))
    for device in ("python", "cpu"):
        x = Poly([1000 * i + 7 * i * i - 3 for i in range(8)], ring, device)
        y = Poly([5 * i - 11 for i in range(8)], ring, device)

        def step(a: Any, b: Any) -> Any:
            return (a + b) * (a - 1)

        path = ren.jit(step).export(_tmp() / f"step-{device}.renplan", x, y)
        want = step(x, y).tolist()
        out[f"step/{device}"] = Base(
            f"step/{device}",
            json.loads(Path(path).read_text()),
            lambda p, x=x, y=y: ren.load(p)(x, y),
            _poly_check(want),
        )

        def affine(a: Any, c: Any) -> Any:
            return [a, a * c + 1]

        c5, c6 = Poly.const(5, ring, device), Poly.const(6, ring, device)
        path = ren.jit(affine).export(_tmp() / f"affine-{device}.renplan", x, c5)
        want = [p.tolist() for p in affine(x, c6)]
        out[f"affine/{device}"] = Base(
            f"affine/{device}",
            json.loads(Path(path).read_text()),
            lambda p, x=x, c6=c6: ren.load(p)(x, c6),
            _poly_check(want),
        )

        params = ckks.Params(n=32, q_bits=(40, 30, 30), p_bits=(45,), scale_bits=30, insecure=True)
        ctx = ckks.Context(params, seed=11, device=device)
        with ctx:
            ctx.rotation_key(1)
            va, vb = np.linspace(-1, 1, 16), np.linspace(0.5, -0.5, 16)
            a, b = ckks.encrypt(va), ckks.encrypt(vb)
            f = ren.jit(lambda u, v: (u * v).rotate(1))
            path = f.export(
                _tmp() / f"ckks-{device}.renplan", a, b, stored={"keys": ctx.evaluation_keys()}
            )
        want_slots = np.roll(va * vb, -1)

        def call_ckks(p: str, ctx: Any = ctx, a: Any = a, b: Any = b) -> Any:
            with ctx:
                return ren.load(p, stored={"keys": ctx.evaluation_keys()})(a, b)

        def check_ckks(got: Any, ctx: Any = ctx, want: Any = want_slots) -> str | None:
            if not isinstance(got, ckks.Ciphertext):
                return f"a {type(got).__name__}, not a Ciphertext"
            err = float(np.max(np.abs(ctx.decrypt(got)[:16] - want)))
            return None if err < 2**-15 else f"slot error {err:.3g}"

        out[f"ckks/{device}"] = Base(
            f"ckks/{device}", json.loads(Path(path).read_text()), call_ckks, check_ckks
        )
    return out


# ---------------------------------------------------------------------------------------------
# running one case


def _rehash(data: Any) -> None:
    """Each kernel's source hash recomputed with Ren's functions (where it renders), and the
    fingerprint: the file passes both checks, as a careful attacker's would."""
    from ren.capture.planfile import decode, decode_body, fingerprint
    from ren.capture.saved import kernel_source, source_hash

    if not isinstance(data, dict):
        return
    for k in data.get("kernels", []) if isinstance(data.get("kernels"), list) else []:
        with contextlib.suppress(Exception):  # a body this Ren will not render keeps its hash
            k["source_sha256"] = source_hash(
                kernel_source(decode_body(k["body"]), decode(k["info"]))
            )
    data["fingerprint"] = fingerprint(data)


def _safe(fn: Callable[[], Any], match: str) -> tuple[str, str]:
    """Another valid plan: a clear refusal, or a replay that finishes (whatever it computes)."""
    try:
        fn()
    except RecursionError as e:
        return CRASH, f"RecursionError: {short(e)}"
    except Exception as e:
        from trial import classify_error

        return classify_error(e, match)
    return CLEAR, "ran (another valid plan)"


def run_case(base: str, mutate: Callable[[dict], Any], expect: str, match: str) -> tuple[str, str]:
    """Change a copy of ``base``'s plan, rehash it, load and call it, and classify the outcome.

    ``mutate(data)`` changes the fields in place, or returns the file's text (for what JSON from
    ``json.dumps`` cannot hold, such as deep nesting).
    """
    b = bases()[base]
    data = copy.deepcopy(b.data)
    tag = hashlib.sha256(f"{base}{mutate.__qualname__}{os.getpid()}{id(data)}".encode()).hexdigest()
    path = _tmp() / f"case-{tag[:16]}.renplan"
    marker = _tmp() / f"marker-{tag[:16]}"
    marker.unlink(missing_ok=True)
    text = mutate(data)
    if not isinstance(text, str | bytes):  # changed in place (a returned value is not the file)
        data = json.loads(json.dumps(data).replace("@MARKER@", str(marker)))
        _rehash(data)
        text = json.dumps(data)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    try:
        fn = functools.partial(b.call, str(path))
        if expect == "refuse":
            out = refuse(fn, match)
        elif expect == "right":
            out = succeed(fn, b.check)
        elif expect == "either":
            out = either(fn, match, b.check)
        else:
            out = _safe(fn, match)
    finally:
        path.unlink(missing_ok=True)
    if marker.exists():
        marker.unlink()
        return SILENT, "C from the plan file ran at load (the marker file was made)"
    return out


def case(base: str, label: str, mutate: Callable[[dict], Any], expect: str, match: str) -> Case:
    """A case named ``base: label``."""
    return Case(f"{base}: {label}", functools.partial(run_case, base, mutate, expect, match))


# ---------------------------------------------------------------------------------------------
# where things are in a plan


def _args(node_list: list, cls: str) -> list[dict]:
    """The args of class ``cls`` in a body (each node's arg dict), in order."""
    return [n[2] for n in node_list if isinstance(n[2], dict) and n[2].get("@") == cls]


def _kernels_with(data: dict, cls: str) -> list[int]:
    return [i for i, k in enumerate(data["kernels"]) if _args(k["body"], cls)]


def _set_field(k: int, cls: str, field: str, value: Any, every: bool = True) -> Callable:
    """Set ``field`` of the first (or every equal) ``cls`` arg of kernel ``k``'s body."""

    def mutate(data: dict) -> None:
        args = _args(data["kernels"][k]["body"], cls)
        first = json.dumps(args[0], sort_keys=True)
        for arg in args if every else args[:1]:
            if json.dumps(arg, sort_keys=True) == first:
                arg[field] = copy.deepcopy(value)

    mutate.__qualname__ = f"{k}.{cls}.{field}={short(value, 30)}.{every}"
    return mutate


def _info_field(k: int, path: tuple[str, ...], value: Any) -> Callable:
    def mutate(data: dict) -> None:
        where = data["kernels"][k]["info"]
        for key in path[:-1]:
            where = where[key]
        where[path[-1]] = copy.deepcopy(value)

    mutate.__qualname__ = f"{k}.info.{'.'.join(path)}={short(value, 30)}"
    return mutate


def _edit(label: str, fn: Callable[[dict], Any]) -> Callable:
    fn.__qualname__ = label
    return fn


def _refs(data: dict) -> list[list]:
    """Every buffer reference of the plan (units, passthrough, result), to rewrite them."""
    out = [ref for u in data["units"] for ref in u["bufs"]]
    out += [
        ref
        for src, dst in data["passthrough"]
        for ref in (src, dst)
        if src[0] != "input" or ref is dst
    ]

    def walk(code: Any) -> None:
        if isinstance(code, list):
            if code[:1] == ["buffer"]:
                out.append(code[2])
            for v in code:
                walk(v)
        elif isinstance(code, dict):
            for v in code.values():
                walk(v)

    walk(data["result"])
    return out


# ---------------------------------------------------------------------------------------------
# the cases


def _arg_cases(base: str, data: dict) -> list[Case]:
    """Every field of every IR argument class in a body, set to each wrong value of its kind."""
    cases = []
    for cls, fields in FIELDS.items():
        if cls in ("KernelInfo", "TemplateParams"):
            continue
        ks = _kernels_with(data, cls)
        if not ks:
            continue
        k = ks[0]
        for field, kind in fields.items():
            for label, value in BAD[kind]:
                if field == "galois" and value is None:
                    continue
                match = (
                    rf"{field}|does not write|unknown value|not a ring|Ren reads plans|{STRUCTURE}"
                )
                if field == "moduli" and kind == "int":
                    value = [value]
                cases.append(
                    case(
                        base,
                        f"kernel {k} {cls}.{field}={label}",
                        _set_field(k, cls, field, value),
                        "refuse",
                        match,
                    )
                )
        # only one of a LOAD and its INDEX changed; a field the class does not have
        cases.append(
            case(
                base,
                f"kernel {k} {cls} with an extra field",
                _set_field(k, cls, "extra", 1),
                "refuse",
                r"field|extra",
            )
        )
        cases.append(
            case(
                base,
                f"kernel {k} {cls} without a field",
                _edit(
                    f"{k}.{cls}.missing",
                    lambda d, k=k, cls=cls: _args(d["kernels"][k]["body"], cls)[0].pop(
                        next(iter(FIELDS[cls]))
                    ),
                ),
                "refuse",
                r"field",
            )
        )
    ks = _kernels_with(data, "IndexArg")
    if ks:
        k = ks[0]
        cases.append(
            case(
                base,
                f"kernel {k} a LOAD and its INDEX disagree",
                _set_field(k, "IndexArg", "galois", 3, every=False),
                "refuse",
                STRUCTURE,
            )
        )
        cases.append(
            case(
                base,
                f"kernel {k} limb_offset past its input",
                _set_field(k, "IndexArg", "limb_offset", 1),
                "refuse",
                r"reads|words|limb_offset",
            )
        )
        cases.append(
            case(
                base,
                f"kernel {k} limb_offset 2**40",
                _set_field(k, "IndexArg", "limb_offset", 1 << 40),
                "refuse",
                r"reads|words|limb_offset",
            )
        )
        cases.append(
            case(
                base,
                f"kernel {k} an even galois",
                _set_field(k, "IndexArg", "galois", 4),
                "refuse",
                r"galois|odd",
            )
        )
        cases.append(
            case(
                base,
                f"kernel {k} galois of another ring",
                _set_field(k, "IndexArg", "galois", 1001),
                "refuse",
                r"galois",
            )
        )
    ks = _kernels_with(data, "SlotArg")
    for index in (7, 99, 1 << 40):
        cases.append(
            case(
                base,
                f"kernel {ks[0]} slot {index}",
                _edit(
                    f"slot{index}",
                    lambda d, k=ks[0], index=index: _args(d["kernels"][k]["body"], "SlotArg")[
                        -1
                    ].update(index=index),
                ),
                "refuse",
                STRUCTURE,
            )
        )
    cases.append(
        case(
            base,
            f"kernel {ks[0]} a LOAD of the output slot",
            _edit(
                "slot0",
                lambda d, k=ks[0]: _args(d["kernels"][k]["body"], "SlotArg")[1].update(index=0),
            ),
            "refuse",
            STRUCTURE,
        )
    )
    ks = _kernels_with(data, "ConstRowArg")
    if ks:
        k = ks[0]
        cases.append(
            case(
                base,
                f"kernel {k} constant row 1 of 1",
                _set_field(k, "ConstRowArg", "row", 1),
                "refuse",
                r"row|constant",
            )
        )
        cases.append(
            case(
                base,
                f"kernel {k} layout first",
                _set_field(k, "ConstRowArg", "layout", "first"),
                "safe",
                STRUCTURE,
            )
        )
    return cases


def _info_cases(base: str, data: dict) -> list[Case]:
    """The kernels' info: each field wrong, another family, ring, domain or device."""
    cases = []
    templated = [i for i, k in enumerate(data["kernels"]) if k["info"]["params"] is not None]
    for k in [0, *templated[:1]]:
        for field, kind in FIELDS["KernelInfo"].items():
            for label, value in BAD[kind]:
                match = (
                    rf"{field}|does not write|unknown value|not a ring|Ren reads plans|{STRUCTURE}"
                )
                cases.append(
                    case(
                        base,
                        f"kernel {k} info.{field}={label}",
                        _info_field(k, (field,), value),
                        "refuse",
                        match,
                    )
                )
        device = data["kernels"][k]["info"]["device"]
        other = "python" if device == "cpu" else "cpu"
        cases.append(
            case(
                base,
                f"kernel {k} info.device={other}",
                _info_field(k, ("device",), other),
                "refuse",
                r"device|runs on|on (cpu|python)|described",
            )
        )
        cases.append(
            case(
                base,
                f"kernel {k} info.device=cuda",
                _info_field(k, ("device",), "cuda"),
                "refuse",
                r"device|cuda|runs on|described",
            )
        )
        cases.append(
            case(
                base,
                f"kernel {k} info.name another name",
                _info_field(k, ("name",), "elementwise_n8_L9_u32"),
                "refuse",
                r"described|name",
            )
        )
        cases.append(
            case(
                base,
                f"kernel {k} info.family COPY",
                _info_field(k, ("family",), {"enum": ["Family", "COPY"]}),
                "refuse",
                r"described|params|family",
            )
        )
        cases.append(
            case(
                base,
                f"kernel {k} info.domain flipped",
                _info_field(
                    k,
                    ("domain",),
                    {
                        "enum": [
                            "Domain",
                            "NTT"
                            if "COEFF" in json.dumps(data["kernels"][k]["info"]["domain"])
                            else "COEFF",
                        ]
                    },
                ),
                "refuse",
                r"described|domain",
            )
        )
        cases.append(
            case(
                base,
                f"kernel {k} info is a SlotArg",
                _edit(
                    f"{k}.info=slot",
                    lambda d, k=k: d["kernels"][k].update(info={"@": "SlotArg", "index": 0}),
                ),
                "refuse",
                r"KernelInfo|info",
            )
        )
    for k in templated[:2]:
        for field, kind in FIELDS["TemplateParams"].items():
            for label, value in BAD[kind][:6]:
                if field == "target" and value is None:
                    continue
                if field == "drop" and kind == "int":
                    value = [value]
                match = (
                    rf"{field}|does not write|unknown value|not a ring|Ren reads plans|{STRUCTURE}"
                )
                cases.append(
                    case(
                        base,
                        f"kernel {k} params.{field}={label}",
                        _info_field(k, ("params", field), value),
                        "refuse",
                        match,
                    )
                )
        cases.append(
            case(
                base,
                f"kernel {k} params.limb_offset=1",
                _info_field(k, ("params", "limb_offset"), 1),
                "refuse",
                r"described|limb",
            )
        )
        cases.append(
            case(
                base,
                f"kernel {k} params dropped",
                _info_field(k, ("params",), None),
                "refuse",
                r"params|described",
            )
        )
    cases.append(
        case(
            base,
            "kernel 0 elementwise with params",
            _info_field(
                0,
                ("params",),
                {
                    "@": "TemplateParams",
                    "source": data["kernels"][0]["info"]["ring"],
                    "limb_offset": 0,
                    "drop": [],
                    "target": None,
                },
            ),
            "refuse",
            r"params|described",
        )
    )
    return cases


def _body_cases(base: str, data: dict) -> list[Case]:
    """The bodies' structure: ops, dtypes, sources, nodes added, dropped, nested."""
    cases = []
    k = 0
    body = data["kernels"][k]["body"]
    n = len(body)
    binary = next((i for i, node in enumerate(body) if node[0] in ("ADD", "SUB", "MUL")), None)

    def node_edit(label: str, i: int, pos: int, value: Any, expect: str = "refuse") -> None:
        cases.append(
            case(
                base,
                f"kernel {k} node {i} {label}",
                _edit(
                    f"node{i}.{pos}={short(value, 20)}",
                    lambda d, i=i, pos=pos, v=value: d["kernels"][k]["body"][i].__setitem__(
                        pos, copy.deepcopy(v)
                    ),
                ),
                expect,
                STRUCTURE + "|op|does not write|unknown",
            )
        )

    store = n - 1
    for label, value in [
        ("op FOO", "FOO"),
        ("op NTT (unary)", "NTT"),
        ("op BUFFER", "BUFFER"),
        ("op KERNEL", "KERNEL"),
        ("op SINK", "SINK"),
        ("op 3", 3),
        ("op C text", "ADD; system()"),
    ]:
        node_edit(label, binary if binary is not None else store, 0, value)
    flip = "U32" if body[1][1] == "U64" else "U64"
    for label, value in [
        (f"dtype {flip}", flip),
        ("dtype FOO", "FOO"),
        ("dtype None", None),
        ("dtype VOID", "VOID"),
    ]:
        node_edit(label, 1, 1, value)
    for label, value in [
        ("sources [n]", [n]),
        ("sources [-1]", [-1]),
        ("sources [True]", [True]),
        ("sources ['0']", ["0"]),
        ("sources itself", "self"),
        ("sources 3 of them", [0, 0, 0]),
        ("sources {}", {}),
    ]:
        i = store
        v = [i] if value == "self" else value
        node_edit(label, i, 3, v)
    node_edit(
        "arg on GIDX",
        next(i for i, node in enumerate(body) if node[0] == "GIDX"),
        2,
        {"@": "SlotArg", "index": 1},
    )
    node_edit("as 3 items", store, 3, None)
    cases.append(
        case(
            base,
            f"kernel {k} body empty",
            _edit("empty", lambda d: d["kernels"][k].update(body=[])),
            "refuse",
            STRUCTURE,
        )
    )
    cases.append(
        case(
            base,
            f"kernel {k} body an object",
            _edit("bodyobj", lambda d: d["kernels"][k].update(body={"x": 1})),
            "refuse",
            STRUCTURE + "|object|list",
        )
    )
    cases.append(
        case(
            base,
            f"kernel {k} body with an unused node",
            _edit(
                "unused",
                lambda d: (
                    d["kernels"][k]["body"].insert(0, ["GIDX", "INDEX", None, []])
                    or _shift(d["kernels"][k]["body"])
                ),
            ),
            "refuse",
            STRUCTURE + "|unused|does not use",
        )
    )
    cases.append(
        case(
            base,
            f"kernel {k} body without its STORE",
            _edit("nostore", lambda d: d["kernels"][k]["body"].pop()),
            "refuse",
            STRUCTURE,
        )
    )
    cases.append(
        case(
            base,
            f"kernel {k} STORE of a GIDX",
            _edit(
                "storegidx",
                lambda d: d["kernels"][k]["body"][-1].__setitem__(
                    3, [0, next(i for i, x in enumerate(d["kernels"][k]["body"]) if x[0] == "GIDX")]
                ),
            ),
            "refuse",
            STRUCTURE,
        )
    )
    cases.append(
        case(
            base,
            f"kernel {k} 100000 nodes",
            _edit(
                "huge",
                lambda d: d["kernels"][k].update(body=[["GIDX", "INDEX", None, []]] * 100_000),
            ),
            "refuse",
            STRUCTURE + "|nodes",
        )
    )
    deep: Any = 0
    for _ in range(200):
        deep = [deep]
    cases.append(
        case(
            base,
            f"kernel {k} an arg 200 lists deep",
            _edit("deeparg", lambda d: d["kernels"][k]["body"][0].__setitem__(2, deep)),
            "refuse",
            r"nest|deep|does not write|" + STRUCTURE,
        )
    )
    if binary is not None:
        cases.append(
            case(
                base,
                f"kernel {k} SUB for {body[binary][0]}",
                _edit(
                    "sub",
                    lambda d: d["kernels"][k]["body"][binary].__setitem__(
                        0, "SUB" if body[binary][0] != "SUB" else "ADD"
                    ),
                ),
                "safe",
                STRUCTURE,
            )
        )
    return cases


def _shift(body: list) -> None:
    """After a node is put first: every source index one more."""
    for node in body[1:]:
        node[3] = [s + 1 for s in node[3]]


def _buffer_cases(base: str, data: dict) -> list[Case]:
    """Arenas, views and own buffers: sizes, offsets, word types, devices."""
    cases = []
    bufs = data["buffers"]
    arena = bufs["arenas"][0][1] if bufs["arenas"] else 0
    device = data["kernels"][0]["info"]["device"]
    other = "python" if device == "cpu" else "cpu"

    def edit(
        label: str,
        fn: Callable[[dict], Any],
        expect: str = "refuse",
        match: str = r"arena|view|buffer|bytes|words|holds|device|own|plan",
    ) -> None:
        cases.append(case(base, label, _edit(label, fn), expect, match))

    if bufs["arenas"]:
        for label, value in [
            ("0", 0),
            ("1", 1),
            ("-1", -1),
            ("'64'", "64"),
            ("2**62", 1 << 62),
            ("2**40", 1 << 40),
            ("1.5", 1.5),
            ("True", True),
            ("+64", arena + 64),
            ("+4096", arena + 4096),
            ("-4", arena - 4),
        ]:
            edit(
                f"arena bytes {label}",
                lambda d, v=value: d["buffers"]["arenas"][0].__setitem__(1, v),
            )
        for label, value in [*BAD_NAMES, (other, other), ("cuda", "cuda")]:
            edit(
                f"arena device {label}",
                lambda d, v=value: d["buffers"]["arenas"][0].__setitem__(0, v),
            )
        edit("arena dropped", lambda d: d["buffers"]["arenas"].clear())
        edit(
            "arena duplicated",
            lambda d: d["buffers"]["arenas"].append(list(d["buffers"]["arenas"][0])),
        )
    if bufs["views"]:
        v0 = bufs["views"][0]
        for label, pos, value in [
            ("arena index 1", 0, 1),
            ("arena index -1", 0, -1),
            ("arena index '0'", 0, "0"),
            ("dtype u8", 1, "u8"),
            ("dtype u16", 1, "u16"),
            ("dtype C text", 1, "u32 x"),
            ("dtype u64", 1, "u64" if v0[1] == "u32" else "u32"),
            ("size 1", 2, 1),
            ("size 0", 2, 0),
            ("size +1", 2, v0[2] + 1),
            ("size 2**40", 2, 1 << 40),
            ("size -1", 2, -1),
            ("size True", 2, True),
            ("offset 2", 3, 2),
            ("offset -4", 3, -4),
            ("offset the arena's end", 3, arena),
            ("offset 2**50", 3, 1 << 50),
            ("offset 1.0", 3, 1.0),
        ]:
            edit(
                f"view 0 {label}",
                lambda d, pos=pos, v=value: d["buffers"]["views"][0].__setitem__(pos, v),
            )
        edit("view 0 as 3 items", lambda d: d["buffers"]["views"][0].pop())
        edit(
            "an unused view",
            lambda d: d["buffers"]["views"].append(list(d["buffers"]["views"][0])),
            "either",
        )
        edit("views dropped", lambda d: d["buffers"]["views"].clear())
        edit("views permuted", _permute_views, "right")
    if bufs["own"]:
        o0 = bufs["own"][0]
        for label, pos, value in [
            ("size 1", 2, 1),
            ("size 0", 2, 0),
            ("size +1", 2, o0[2] + 1),
            ("size 2**31", 2, 1 << 31),
            ("size 2**61", 2, 1 << 61),
            ("dtype u8", 1, "u8"),
            ("dtype u64", 1, "u64" if o0[1] == "u32" else "u32"),
            (f"device {other}", 0, other),
            ("device cuda", 0, "cuda"),
            ("device C text", 0, IN_COMMENT),
        ]:
            edit(
                f"own 0 {label}",
                lambda d, pos=pos, v=value: d["buffers"]["own"][0].__setitem__(pos, v),
            )
        edit(
            "an unused own buffer",
            lambda d: d["buffers"]["own"].append(list(d["buffers"]["own"][0])),
            "either",
        )
        edit(
            "a 2**40-word own buffer",
            lambda d: d["buffers"]["own"].append([device, "u32", 1 << 40]),
        )
    edit("buffers not an object", lambda d: d.update(buffers=[1, 2]))
    return cases


def _permute_views(d: dict) -> None:
    """Reverse the views and renumber every reference: the same plan."""
    count = len(d["buffers"]["views"])
    d["buffers"]["views"].reverse()
    for ref in _refs(d):
        if ref[0] == "view":
            ref[1] = count - 1 - ref[1]


def _unit_cases(base: str, data: dict) -> list[Case]:
    """Units: their kernel, constants and buffers."""
    cases = []
    units = data["units"]
    nk = len(data["kernels"])

    def edit(
        label: str,
        fn: Callable[[dict], Any],
        expect: str = "refuse",
        match: str = UNIT,
    ) -> None:
        cases.append(case(base, label, _edit(label, fn), expect, match))

    for label, value in [
        ("-1", -1),
        (str(nk), nk),
        ("'0'", "0"),
        ("True", True),
        ("2**70", 2**70),
        ("None", None),
    ]:
        edit(f"unit 0 kernel {label}", lambda d, v=value: d["units"][0].__setitem__("kernel", v))
    for label, value in [
        ("['x']", ["x"]),
        ("[1.5]", [1.5]),
        ("['1e3']", ["1e3"]),
        ("[5000 digits]", ["9" * 5000]),
        ("[3] (one too many)", ["3"]),
        ("[None]", [None]),
        ("'5'", "5"),
    ]:
        edit(f"unit 0 consts {label}", lambda d, v=value: d["units"][0].__setitem__("consts", v))
    with_consts = [i for i, u in enumerate(units) if u["consts"]]
    if with_consts:
        u = with_consts[0]
        edit(
            f"unit {u} another constant",
            lambda d, u=u: d["units"][u].__setitem__(
                "consts", ["7"] * len(d["units"][u]["consts"])
            ),
            "safe",
        )
        edit(f"unit {u} no constants", lambda d, u=u: d["units"][u].__setitem__("consts", []))
    for label, ref in [
        ("['input', 0]", ["input", 0]),
        ("['stored', 'nope']", ["stored", "nope"]),
        ("['view', 999]", ["view", 999]),
        ("['view', -1]", ["view", -1]),
        ("['own', 5]", ["own", 5]),
        ("['foo', 0]", ["foo", 0]),
        ("['view']", ["view"]),
        ("['view', '0']", ["view", "0"]),
        ("['view', True]", ["view", True]),
        ("'view'", "view"),
        ("['input', 99]", ["input", 99]),
    ]:
        edit(
            f"unit 0 writes {label}",
            lambda d, r=ref: d["units"][0]["bufs"].__setitem__(0, copy.deepcopy(r)),
        )
        edit(
            f"last unit reads {label}",
            lambda d, r=ref: d["units"][-1]["bufs"].__setitem__(1, copy.deepcopy(r)),
            "safe" if ref == ["input", 0] else "refuse",
        )
    edit("unit 0 a buffer dropped", lambda d: d["units"][0]["bufs"].pop())
    edit(
        "unit 0 a buffer added",
        lambda d: d["units"][0]["bufs"].append(list(d["units"][0]["bufs"][-1])),
    )
    edit(
        "last unit writes what it reads",
        lambda d: d["units"][-1]["bufs"].__setitem__(0, copy.deepcopy(d["units"][-1]["bufs"][1])),
    )
    edit("units empty", lambda d: d["units"].clear(), "safe", r"unit|result|plan|words")
    edit("unit 0 duplicated", lambda d: d["units"].insert(0, copy.deepcopy(d["units"][0])), "safe")
    edit("unit 0 an extra key", lambda d: d["units"][0].__setitem__("extra", "x */"), "right")
    edit("units an object", lambda d: d.update(units={"0": 1}))
    edit("kernels reversed, units renumbered", _reverse_kernels, "right")
    edit(
        "an unused kernel appended",
        lambda d: d["kernels"].append(copy.deepcopy(d["kernels"][0])),
        "either",
    )
    return cases


def _reverse_kernels(d: dict) -> None:
    count = len(d["kernels"])
    d["kernels"].reverse()
    for u in d["units"]:
        u["kernel"] = count - 1 - u["kernel"]


def _manifest_cases(base: str, data: dict) -> list[Case]:
    """The manifest: parameters, inputs' specs, aliases, stored inputs."""
    cases = []

    def edit(
        label: str,
        fn: Callable[[dict], Any],
        expect: str = "refuse",
        match: str = r"param|input|spec|alias|stored|takes|plan|buffer|manifest|saved",
    ) -> None:
        cases.append(case(base, label, _edit(label, fn), expect, match))

    m = data["manifest"]
    for label, value in [
        ("['a']", ["a"]),
        ("['a', 'a']", ["a", "a"]),
        ("['class', 'b']", ["class", "b"]),
        ("[1, 2]", [1, 2]),
        ("'ab'", "ab"),
        ("['a b', 'c']", ["a b", "c"]),
        ("['x); import os; (', 'y']", ["x); import os; (", "y"]),
    ]:
        edit(f"params {label}", lambda d, v=value: d["manifest"].__setitem__("params", v))
    edit("params None", lambda d: d["manifest"].__setitem__("params", None), "either")
    spec0 = m["inputs"][0]["spec"]
    for label, pos, value in [
        ("size 1", 2, 1),
        ("size 2**40", 2, 1 << 40),
        ("size '16'", 2, "16"),
        ("dtype u8", 3, "u8"),
        ("device gpu", 4, "gpu"),
        ("kind 'const'", 0, "const"),
        ("kind C", 0, "x */"),
        ("ring 3", 1, 3),
        ("window [0, 1]", 6, [0, 1]),
        ("window 5", 6, 5),
    ]:
        if pos < len(spec0):
            edit(
                f"input 0 spec {label}",
                lambda d, pos=pos, v=value: d["manifest"]["inputs"][0]["spec"].__setitem__(pos, v),
            )
    edit("input 0 spec empty", lambda d: d["manifest"]["inputs"][0].__setitem__("spec", []))
    edit("input 0 buffer false", lambda d: d["manifest"]["inputs"][0].__setitem__("buffer", False))
    edit("input 0 buffer 1", lambda d: d["manifest"]["inputs"][0].__setitem__("buffer", 1))
    edit("input 0 path 3", lambda d: d["manifest"]["inputs"][0].__setitem__("path", 3))
    edit("input 0 path other", lambda d: d["manifest"]["inputs"][0].__setitem__("path", "z"))
    edit("input 0 dropped", lambda d: d["manifest"]["inputs"].pop(0))
    edit("inputs not a list", lambda d: d["manifest"].__setitem__("inputs", {"a": 1}))
    for label, value in [
        ("[]", []),
        ("[5, 5]", [5, 5]),
        ("['0', 1]", ["0", 1]),
        ("[True, 1]", [True, 1]),
    ]:
        edit(f"alias {label}", lambda d, v=value: d["manifest"].__setitem__("alias", v))
    if m["stored"]:
        name = sorted(m["stored"])[0]
        edit(
            "stored renamed",
            lambda d, n=name: d["manifest"]["stored"].__setitem__(
                "zz", d["manifest"]["stored"].pop(n)
            ),
        )
        edit("stored spec size 1", lambda d, n=name: d["manifest"]["stored"][n].__setitem__(2, 1))
        edit(
            "stored spec a const",
            lambda d, n=name: d["manifest"]["stored"].__setitem__(
                n,
                ["const", d["manifest"]["stored"][n][1], 0, "python", {"enum": ["Domain", "NTT"]}],
            ),
        )
        edit(
            "stored name C text",
            lambda d, n=name: d["manifest"]["stored"].__setitem__(
                "k */ x", d["manifest"]["stored"][n]
            ),
        )
        edit("stored not an object", lambda d: d["manifest"].__setitem__("stored", [1]))
    edit("manifest not an object", lambda d: d.update(manifest=[]))
    edit("manifest without inputs", lambda d: d["manifest"].pop("inputs"))
    return cases


def _rows_cases(base: str, data: dict) -> list[Case]:
    """Passthrough copies, constant rows, fixed constants."""
    cases = []

    def edit(
        label: str,
        fn: Callable[[dict], Any],
        expect: str = "refuse",
        match: str = ROWS,
    ) -> None:
        cases.append(case(base, label, _edit(label, fn), expect, match))

    if data["passthrough"]:
        src = data["passthrough"][0][0]
        for label, pos, value in [
            ("offset 1", 2, 1),
            ("offset 2**40", 2, 1 << 40),
            ("size 1", 3, 1),
            ("size 2**40", 3, 1 << 40),
            ("size -1", 3, -1),
            ("input 5", 1, 5),
            ("input '0'", 1, "0"),
        ]:
            if src[0] == "input":
                edit(
                    f"passthrough source {label}",
                    lambda d, pos=pos, v=value: d["passthrough"][0][0].__setitem__(pos, v),
                )
        for label, ref in [
            ("['input', 0]", ["input", 0]),
            ("['stored', 'x']", ["stored", "x"]),
            ("['own', 9]", ["own", 9]),
            ("'own'", "own"),
        ]:
            edit(
                f"passthrough output {label}",
                lambda d, r=ref: d["passthrough"][0].__setitem__(1, copy.deepcopy(r)),
            )
        edit("passthrough source a view", lambda d: d["passthrough"][0].__setitem__(0, ["view", 0]))
        edit(
            "passthrough duplicated",
            lambda d: d["passthrough"].append(copy.deepcopy(d["passthrough"][0])),
            "either",
        )
    edit(
        "passthrough to own 0",
        lambda d: d["passthrough"].append([["input", 0, 0, 16], ["own", 0]]),
        "safe",
    )
    if data["const_rows"]:
        for label, pos, value in [
            ("unit 999", 0, 999),
            ("row 5", 1, 5),
            ("input 0 (a buffer)", 2, 0),
            ("input 9", 2, 9),
            ("unit -1", 0, -1),
            ("row '0'", 1, "0"),
        ]:
            edit(
                f"const row {label}",
                lambda d, pos=pos, v=value: d["const_rows"][0].__setitem__(pos, v),
            )
        bare = [i for i, u in enumerate(data["units"]) if not u["consts"]]
        if bare:
            edit(
                "const row on a unit without constants",
                lambda d, u=bare[0]: d["const_rows"][0].__setitem__(0, u),
            )
    edit("const rows [[0, 0]]", lambda d: d.update(const_rows=[[0, 0]]))
    edit("fixed const of input 0 (a buffer)", lambda d: d["fixed_consts"].__setitem__("0", "5"))
    edit("fixed const of input 99", lambda d: d["fixed_consts"].__setitem__("99", "5"))
    edit("fixed const 'x'", lambda d: d["fixed_consts"].__setitem__("x", "5"))
    edit("fixed const value 1.5", lambda d: d["fixed_consts"].__setitem__("1", 1.5))
    return cases


def _result_cases(base: str, data: dict) -> list[Case]:
    """The result: the types it names, its fields, its values' nodes, its nesting."""
    cases = []

    def edit(
        label: str,
        fn: Callable[[dict], Any],
        expect: str = "refuse",
        match: str = RESULT,
    ) -> None:
        cases.append(case(base, label, _edit(label, fn), expect, match))

    def first_poly(d: dict) -> list:
        stack = [d["result"]]
        while stack:
            code = stack.pop()
            if isinstance(code, dict):
                if "poly" in code:
                    return code["poly"]
                stack.extend(code.values())
            elif isinstance(code, list):
                stack.extend(code)
        raise LookupError("no poly")

    for label, name in [
        ("os:system", "os:system"),
        ("builtins:eval", "builtins:eval"),
        ("ren.capture.loaded:LoadedPlan", "ren.capture.loaded:LoadedPlan"),
        ("ren.schemes.ckks:Context", "ren.schemes.ckks:Context"),
        ("ren.poly:Poly", "ren.poly:Poly"),
        ("ren.schemes.ckks:Ciphertext", "ren.schemes.ckks:Ciphertext"),
        ("3", 3),
    ]:
        edit(
            f"result object {label}",
            lambda d, n=name: d.update(
                result={"object": n, "fields": {"parts": {"tuple": [{"poly": first_poly(d)}]}}}
            ),
        )
    if "object" in data["result"]:
        for field, value in [
            ("scale", {"value": "x"}),
            ("scale", {"value": -1.0}),
            ("scale", {"value": {"float": "inf"}}),
            ("scale", {"value": 0}),
            ("level", {"value": -1}),
            ("level", {"value": "1"}),
            ("level", {"value": True}),
            ("real", {"value": "yes"}),
            ("parts", {"tuple": []}),
            ("parts", {"value": 3}),
            ("real", {"value": {"@": "SlotArg", "index": 0}}),
        ]:
            edit(
                f"result {field}={short(value, 30)}",
                lambda d, f=field, v=value: d["result"]["fields"].__setitem__(f, v),
            )
        edit(
            "result an extra field",
            lambda d: d["result"]["fields"].__setitem__("context", {"value": 1}),
        )
        edit("result a field missing", lambda d: d["result"]["fields"].pop("level"))
    for label, value in [
        ("op NEG", "NEG"),
        ("op BUFFER_VIEW", "BUFFER_VIEW"),
        ("dtype U64", None),
        ("ring other", None),
    ]:

        def mutate(d: dict, label: str = label, value: Any = value) -> None:
            node = first_poly(d)
            if value is not None:
                node[0] = value
            elif label.startswith("dtype"):
                node[1] = "U64" if node[1] == "U32" else "U32"
            else:
                node[2]["ring"] = {"ring": [8, [17], "u32"]}

        edit(f"result value {label}", mutate)
    for label, ref in [
        ("['input', 0]", ["input", 0]),
        ("['view', 999]", ["view", 999]),
        ("['stored', 'x']", ["stored", "x"]),
        ("a view of another size", ["view", 0]),
        ("['own', '0']", ["own", "0"]),
    ]:
        edit(
            f"result buffer {label}",
            lambda d, r=ref: first_poly(d)[3][0].__setitem__(2, copy.deepcopy(r)),
            "safe" if label.startswith("a view") else "refuse",
        )
    edit(
        "result value nested",
        lambda d: first_poly(d)[3].__setitem__(
            0, ["AS_RING", "U32", first_poly(d)[2], copy.deepcopy(first_poly(d)[3])]
        ),
    )
    edit(
        "result value in a window past its buffer",
        lambda d: first_poly(d)[3].__setitem__(
            0,
            [
                "BUFFER_VIEW",
                first_poly(d)[1],
                {"@": "ViewArg", "offset": 8, "size": 10**6},
                copy.deepcopy(first_poly(d)[3]),
            ],
        ),
    )
    edit("result a Python value", lambda d: d.update(result={"value": {"@": "IndexArg"}}))
    edit("result a set", lambda d: d.update(result={"set": [1]}))
    edit("result two keys", lambda d: d.update(result={"list": [], "poly": first_poly(d)}))

    def nested(d: dict, depth: int) -> str:
        inner = json.dumps(d["result"], sort_keys=True, separators=(",", ":"))
        return _with_fingerprint(d, "result", '{"list":[' * depth + inner + "]}" * depth)

    for depth in (20, 40, 5000, 100_000):
        edit(
            f"result {depth} lists deep",
            lambda d, depth=depth: nested(d, depth),
            "safe" if depth < 32 else "refuse",
            r"deep|nest|result|not a Ren plan|JSON",
        )
    edit(
        "result a dict with a C key",
        lambda d: d.update(result={"dict": {"x */ y": {"poly": first_poly(d)}}}),
        "safe",
    )
    return cases


def _with_fingerprint(data: dict, key: str, raw: str) -> str:
    """The file's text with ``key`` set to the canonical JSON text ``raw`` (perhaps too deep
    for ``json`` to write), and the fingerprint Ren computes over that text."""
    data[key] = "@RAW@"
    _rehash(data)
    del data["fingerprint"]
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    text = canonical.replace('"@RAW@"', raw)
    digest = hashlib.sha256(text.encode()).hexdigest()
    return text[:-1] + f',"fingerprint":"{digest}"}}'


def _top_cases(base: str, data: dict) -> list[Case]:
    """Top-level fields: names, versions, sources, extra keys; plans that keep their meaning."""
    cases = []

    def edit(
        label: str,
        fn: Callable[[dict], Any],
        expect: str = "refuse",
        match: str = r"plan|function|format|version|ren|sources|memory|field|digest|string|object",
    ) -> None:
        cases.append(case(base, label, _edit(label, fn), expect, match))

    edit("unchanged (hashes recomputed)", lambda d: None, "right")
    edit("function renamed", lambda d: d.update(function="x */ int y; /*"), "right")
    edit("another ren version", lambda d: d.update(ren="0.0.0-evil"), "right")
    edit("an extra top-level key", lambda d: d.update(extra={"@": "BufferArg"}), "right")
    edit("sources emptied", lambda d: d.update(sources={}), "right")
    edit("sources hold C", lambda d: d.update(sources={"0" * 64: CONSTRUCTOR}), "right")
    edit("function 3", lambda d: d.update(function=3))
    edit("function 100k chars", lambda d: d.update(function="a" * 100_000))
    edit("version True", lambda d: d.update(version=True))
    edit("version '2'", lambda d: d.update(version=str(d["version"])))
    edit("source hash not hex", functools.partial(_wrong_hash, "x" * 64))
    edit("source hash wrong", functools.partial(_wrong_hash, "0" * 64))
    edit("memory a list", lambda d: d.update(memory=[]))
    edit("memory a SlotArg", lambda d: d.update(memory={"@": "SlotArg", "index": 0}))
    edit(
        "memory negative arena",
        lambda d: (
            d["memory"]["devices"][0].update(arena_bytes=-1)
            if d["memory"]["devices"]
            else d.update(memory=3)
        ),
    )
    edit(
        "memory event kind C",
        lambda d: (
            d["memory"]["devices"][0]["events"][0].update(kind="*/")
            if d["memory"]["devices"]
            else d.update(memory=3)
        ),
    )
    edit(
        "a BufferArg in a body",
        lambda d: d["kernels"][0]["body"][0].__setitem__(2, {"@": "BufferArg", "buffer": 0}),
    )
    edit(
        "a Buffer class named",
        lambda d: d["kernels"][0]["body"][0].__setitem__(2, {"@": "Buffer", "device": "cpu"}),
    )
    edit("a float NaN", lambda d: json.dumps(d).replace('"version":', '"nan": NaN, "version":', 1))
    edit(
        "JSON 1000 lists deep",
        lambda d: json.dumps(d)[:-1] + ', "deep": ' + "[" * 1000 + "]" * 1000 + "}",
    )
    edit(
        "JSON 100k lists deep",
        lambda d: json.dumps(d)[:-1] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}",
    )
    edit("an int of 5000 digits", lambda d: json.dumps(d)[:-1] + ', "big": ' + "9" * 5000 + "}")
    edit("not UTF-8", lambda d: json.dumps(d).encode()[:-1] + b', "x": "\xff\xfe"}')
    return cases


def _wrong_hash(digest: str, d: dict) -> str:
    """A kernel's hash changed after the rehash: the kernel renders otherwise in this Ren."""
    _rehash(d)
    d["kernels"][0]["source_sha256"] = digest
    from ren.capture.planfile import fingerprint

    d["fingerprint"] = fingerprint(d)
    return json.dumps(d)


def _injection_cases(base: str, data: dict) -> list[Case]:
    """C text that compiles where a field is written into a kernel's source, with a constructor
    that makes a marker file when the library is loaded."""
    cases = []
    device = data["kernels"][0]["info"]["device"]
    if device != "cpu":
        return cases
    targets = [
        i
        for i, k in enumerate(data["kernels"])
        if k["info"]["params"] is None and _args(k["body"], "IndexArg")
    ]
    for k in targets[:4]:
        cases.append(
            case(
                base,
                f"kernel {k} constructor in limb_offset (compiles as C)",
                _edit(f"inject{k}", functools.partial(_inject, k)),
                "refuse",
                r"limb_offset",
            )
        )
    for k in targets[:2]:
        for cls, field in [
            ("IndexArg", "galois"),
            ("SlotArg", "index"),
            ("ConstRowArg", "row"),
            ("ConstRowArg", "layout"),
        ]:
            if _args(data["kernels"][k]["body"], cls):
                cases.append(
                    case(
                        base,
                        f"kernel {k} constructor in {cls}.{field} (in a comment)",
                        _set_field(k, cls, field, IN_COMMENT),
                        "refuse",
                        field,
                    )
                )
    return cases


def _inject(k: int, data: dict) -> None:
    """The first load of kernel ``k`` gets a limb offset that closes the kernel, defines a
    constructor, and opens a function the rest of the source completes: C that compiles."""
    from ren.capture.planfile import decode_body
    from ren.codegen.c import CRenderer
    from ren.codegen.linearize import linearize

    body = data["kernels"][k]["body"]
    prog = linearize(decode_body(body))
    draft = CRenderer().render(prog, "REN_KERNEL")
    load = next(
        ins
        for ins in prog.instrs
        if ins.arg is not None and hasattr(ins.arg, "limb_offset") and not ins.arg.limb_offset
    )
    j, s = load.dest, load.slot
    start = draft.index("REN_KERNEL(") + len("REN_KERNEL(")
    params = draft[start : draft.index(") {", start)]
    zeros = "".join(f"const word_t v{t} = 0; (void)v{t}; " for t in range(j))
    payload = (
        "0)*0]; } } }\n"
        + CONSTRUCTOR
        + f"void ren_trial_tail({params}) {{ for (int i = 0; i < 1; i++) "
        f"{{ for (int k = 0; k < 1; k++) {{ const word_t q = Q[i], qinv = QINV[i]; {zeros}"
        f"const word_t v{j} = b{s}[(i + 0"
    )
    slot_node = next(i for i, x in enumerate(body) if x[0] == "SLOT" and x[2]["index"] == s)
    for node in body:
        index = node if node[0] == "INDEX" else body[node[3][0]] if node[0] == "LOAD" else None
        if index is not None and index[3][0] == slot_node:
            node[2]["limb_offset"] = payload


def cases() -> list[Case]:
    """Every crafted-plan case, over every base plan."""
    out: list[Case] = []
    for base, b in bases().items():
        data = b.data
        for make in (
            _top_cases,
            _injection_cases,
            _arg_cases,
            _info_cases,
            _body_cases,
            _buffer_cases,
            _unit_cases,
            _manifest_cases,
            _rows_cases,
            _result_cases,
        ):
            out += make(base, data)
    return out
