"""Trial category "ckks ranges": bootstrapping and the worked functions outside their ranges.

``scripts/trial.py`` imports this module and calls ``cases()`` (``--only "ckks ranges"``). The
cases, as a careful user would try them:

* **bootstrap settings**: every field of ``ckks.BootstrapConfig`` given wrong types and values
  (bools, ``None``, strings, floats, NaN, infinities, huge and negative ints), and values of the
  right type out of the range the bootstrap's approximation holds on (an EvalMod degree too
  small for ``K``, a ``K`` too small for the secret's Hamming weight, too many double angles):
  each must be refused naming the field; the presets' settings and a few valid ones must pass;
* **function intervals**: ``evaluate_function`` and ``inverse`` given bad intervals must refuse
  them naming the interval; ``inverse`` on an interval of one's own must be right;
* **bootstrap inputs**: slots past the range (recorded by ``ren.viz.record()`` and measured by
  the observing pass, as ``python -m ren.viz`` does) and scales far from the chain's (a plain
  run): each must come back right (to 25 bits against NumPy) or be reported with a
  ``RuntimeWarning``, never silently wrong; in-range slots must come back right without a word
  (a warning there is a false alarm, counted as a crash);
* **function inputs** outside their interval, recorded: right, or reported;
* **labels**: each precision Ren shows (the report's boxes and table, the text report, the
  debugger, the comparison page, ``ckks.precision_bits``'s docstring) must say what it is
  measured against, and the figure must be what its label says (reproduced with
  ``ckks.precision_bits`` against the same plaintext values).

Every case's oracle is NumPy on the plaintext slots. Bootstrapping is slow on the ``python``
device (a few seconds for the first one in a process, under one after): one ``boot-toy`` context
with its keys is made per worker (``toy()``) and shared, and the cases that bootstrap are few.
The module runs against older checkouts of Ren too (``--ren``): it names nothing that is new
(a warning is any ``RuntimeWarning``, whatever its class).
"""

from __future__ import annotations

import functools
import html as _html
import math
import re
import types
import warnings
from collections.abc import Callable
from typing import Any

from trial import BAD_INT, CLEAR, CRASH, INF, NAN, SILENT, Case, refuse, short, slot_bits, succeed

#: The precision a boot-toy bootstrap keeps (about 32 bits measured; 25 is its tests' floor).
FLOOR = 25.0
#: A function's answer counts as right past this many bits against NumPy.
FUNCTION_FLOOR = 15.0
#: The cases that bootstrap or record may take a while (the first bootstrap of a worker compiles).
SLOW = 300.0


@functools.cache
def toy() -> types.SimpleNamespace:
    """The ``boot-toy`` preset, its configuration and a context with its bootstrap keys."""
    import numpy as np

    from ren.schemes import ckks

    ns = types.SimpleNamespace(np=np, ckks=ckks)
    ns.params = ckks.Params.preset("boot-toy")
    ns.config = ckks.BootstrapConfig.for_params(ns.params)
    ns.ctx = ckks.Context(ns.params, seed=31)
    ns.ctx.bootstrap_keys(progress=False)
    return ns


@functools.cache
def deep() -> types.SimpleNamespace:
    """A tiny ring deep enough for every worked function (15 levels), with its context."""
    import numpy as np

    from ren.schemes import ckks

    ns = types.SimpleNamespace(np=np, ckks=ckks)
    ns.params = ckks.Params(
        n=64, q_bits=(60,) + (40,) * 15, p_bits=(60,), scale_bits=40, insecure=True
    )
    ns.ctx = ckks.Context(ns.params, seed=32)
    ns.ctx.keygen()
    return ns


def _with_warnings(fn: Callable[[], Any]) -> tuple[Any, list[str]]:
    """``fn()``, and the range warnings it raised (workers ignore warnings: caught here)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = fn()
    said = [(w.category, str(w.message)) for w in caught]
    # a report about a range (RangeWarning, or any RuntimeWarning naming a range); not NumPy's
    # own "overflow encountered" and the like
    return value, [
        m
        for c, m in said
        if issubclass(c, RuntimeWarning) and re.search(r"range", f"{c.__name__} {m}", re.I)
    ]


def _judge(bits: float, warned: list[str], floor: float, in_range: bool) -> tuple[str, str]:
    """Right (past ``floor`` bits) or reported: clear; wrong and silent: silent."""
    said = short(warned[0], 120) if warned else ""
    if in_range:
        if warned:
            return CRASH, short(f"false alarm at {bits:.1f} bits: {said}")
        if bits < floor:
            return SILENT, f"in range, but {bits:.1f} bits against NumPy"
        return CLEAR, f"{bits:.1f} bits, no warning"
    if warned:
        return CLEAR, short(f"{bits:.1f} bits, reported: {said}")
    if bits >= floor:
        return CLEAR, f"{bits:.1f} bits: right, nothing to report"
    return SILENT, f"{bits:.1f} bits against NumPy and not a word"


# ---------------------------------------------------------------------------------------------
# bootstrap settings


def _config(**kwargs: Any) -> Any:
    """A configuration made and checked against boot-toy (``check`` returns it)."""
    from ren.schemes import ckks

    return ckks.BootstrapConfig(**kwargs).check(ckks.Params.preset("boot-toy"))


#: A valid base for the range cases: boot-toy's own settings.
BASE = {"level_budget": (2, 2), "K": 12, "degree": 47, "double_angle": 2, "arcsine": True}


def config_cases() -> list[Case]:
    cases: list[Case] = []
    bad_int = [(label, v) for label, v in BAD_INT]
    huge = [("2**64", 2**64), ("10**400", 10**400), ("-1", -1), ("0", 0)]
    fields: dict[str, list[tuple[str, Any]]] = {
        "K": bad_int + huge,
        "degree": [*bad_int, ("1", 1), ("1024", 1024), ("10**6", 10**6), ("10**400", 10**400)],
        "double_angle": [*bad_int, ("-1", -1), ("15", 15), ("100", 100), ("10**400", 10**400)],
        "level_budget": [
            ("3", 3),
            ("None", None),
            ("'ab'", "ab"),
            ("(1,)", (1,)),
            ("(1, 2, 3)", (1, 2, 3)),
            ("(0, 2)", (0, 2)),
            ("(2, -1)", (2, -1)),
            ("(1.5, 2)", (1.5, 2)),
            ("(True, 2)", (True, 2)),
            ("(2, None)", (2, None)),
            ("(6, 1)", (6, 1)),
            ("{1, 2}", {1, 2}),
        ],
        "arcsine": [("1", 1), ("0", 0), ("'yes'", "yes"), ("None", None), ("1.0", 1.0)],
        "slots": [
            ("0", 0),
            ("3", 3),
            ("12", 12),
            ("-8", -8),
            ("8.0", 8.0),
            ("'8'", "8"),
            ("True", True),
            ("64 > n/2", 64),
            ("2**400", 2**400),
        ],
        "sparse_secret": [
            ("0", 0),
            ("-3", -3),
            ("8.0", 8.0),
            ("'8'", "8"),
            ("True", True),
            ("65 > n", 65),
            ("2**64", 2**64),
        ],
        "bsgs_ratio": [
            ("0", 0),
            ("-1", -1),
            ("nan", NAN),
            ("inf", INF),
            ("'2'", "2"),
            ("True", True),
            ("None", None),
            ("1j", 1j),
            ("10**400", 10**400),
        ],
    }
    for field, values in fields.items():
        for label, value in values:
            kwargs = {**BASE, field: value}
            cases.append(
                Case(
                    f"BootstrapConfig({field}={label})",
                    functools.partial(refuse, functools.partial(_config, **kwargs), field),
                )
            )
    # the right type, out of the range the approximation holds on
    out_of_range = [
        ("degree=3 (K=12)", {"degree": 3}, r"degree"),
        ("degree=15 (K=12)", {"degree": 15}, r"degree"),
        ("degree=31 (K=12)", {"degree": 31}, r"degree"),
        ("degree=39 (K=12)", {"degree": 39}, r"degree"),
        ("degree=31, K=16", {"degree": 31, "K": 16}, r"degree"),
        ("K=1 (dense secret, n=64)", {"K": 1}, r"\bK\b"),
        ("K=2 (dense secret, n=64)", {"K": 2}, r"\bK\b"),
        ("K=4 (dense secret, n=64)", {"K": 4}, r"\bK\b"),
        ("K=2, sparse_secret=8", {"K": 2, "sparse_secret": 8}, r"\bK\b"),
        ("K=3, sparse_secret=32", {"K": 3, "sparse_secret": 32}, r"\bK\b"),
        ("K=5, sparse_secret=64", {"K": 5, "sparse_secret": 64}, r"\bK\b|sparse_secret"),
        ("double_angle=15 (arcsine)", {"double_angle": 15}, r"double_angle"),
        ("double_angle=12, no arcsine", {"double_angle": 12, "arcsine": False}, r"double_angle"),
        ("K=2**30", {"K": 2**30}, r"\bK\b"),
    ]
    for label, change, match in out_of_range:
        kwargs = {**BASE, **change}
        cases.append(
            Case(
                f"BootstrapConfig({label}) out of range",
                functools.partial(refuse, functools.partial(_config, **kwargs), match),
            )
        )
    valid = [
        ("boot-toy's own", BASE),
        ("slots=8", {**BASE, "slots": 8}),
        ("sparse_secret=8, K=6", {**BASE, "sparse_secret": 8, "K": 6}),
        ("level_budget=(1, 1)", {**BASE, "level_budget": (1, 1)}),
        ("degree=63", {**BASE, "degree": 63}),
        ("bsgs_ratio=3.5", {**BASE, "bsgs_ratio": 3.5}),
    ]
    for label, kwargs in valid:
        cases.append(
            Case(
                f"BootstrapConfig({label}) (valid)",
                functools.partial(succeed, functools.partial(_config, **kwargs), _is_config),
            )
        )
    return cases


def _is_config(got: Any) -> str | None:
    from ren.schemes import ckks

    return None if isinstance(got, ckks.BootstrapConfig) else f"a {type(got).__name__}"


# ---------------------------------------------------------------------------------------------
# function intervals


def _evaluate(interval: Any) -> Any:
    from ren.circuits.ckks import functions

    d = deep()
    return functions.evaluate_function(d.ctx.encrypt(d.np.ones(32)), d.np.exp, interval, 15)


def _inverse(interval: Any, x: Any = None) -> Any:
    from ren.circuits.ckks import functions

    d = deep()
    ct = d.ctx.encrypt(d.np.ones(32) if x is None else x)
    return functions.inverse(ct, 31, 1, interval=interval)


def interval_cases() -> list[Case]:
    cases: list[Case] = []
    bad = [
        ("(1, 1)", (1, 1)),
        ("(2, 1)", (2, 1)),
        ("(nan, 1)", (NAN, 1)),
        ("(-inf, 1)", (-INF, 1)),
        ("(0, inf)", (0, INF)),
        ("'ab'", "ab"),
        ("None", None),
        ("(1, 2, 3)", (1, 2, 3)),
        ("(True, 2)", (True, 2)),
        ("('0', 1)", ("0", 1)),
        ("1.5", 1.5),
    ]
    for label, value in bad:
        cases.append(
            Case(
                f"evaluate_function(interval={label})",
                functools.partial(refuse, functools.partial(_evaluate, value), r"interval"),
            )
        )
    # inverse's interval: the argument is what is named (an unknown keyword is no answer)
    for label, value in [*bad[:6], ("(-1, 16): holds 0", (-1, 16)), ("(0, 1)", (0.0, 1.0))]:
        cases.append(
            Case(
                f"functions.inverse(interval={label})",
                functools.partial(
                    refuse, functools.partial(_inverse, value), r"interval (must|\(|\[|'|holds)"
                ),
            )
        )
    for label, (a, b) in [("(-4, -0.5)", (-4.0, -0.5)), ("(0.5, 2)", (0.5, 2.0))]:

        def run(a: float = a, b: float = b) -> Any:
            d = deep()
            x = d.np.linspace(a, b, 32)
            return d.ctx.decrypt(_inverse((a, b), x)).real, 1 / x

        cases.append(
            Case(
                f"functions.inverse(interval={label}) (valid)",
                functools.partial(succeed, run, _close(FUNCTION_FLOOR)),
                timeout=SLOW,
            )
        )
    return cases


def _close(floor: float) -> Callable[[Any], str | None]:
    def check(pair: Any) -> str | None:
        got, want = pair
        bits = slot_bits(got, want)
        return None if bits >= floor else f"{bits:.1f} bits against NumPy"

    return check


# ---------------------------------------------------------------------------------------------
# bootstrap inputs and function inputs: right, or reported


def _recorded(run: Callable[[], Any]) -> tuple[Any, list[str]]:
    """``run()`` under ``ren.viz.record()``, then the observing pass; its result and warnings."""
    from ren.viz.precision import measure_precision
    from ren.viz.trace import record

    def program() -> Any:
        with record() as trace:
            value = run()
        measure_precision(trace, progress=False)
        return value

    return _with_warnings(program)


def _bootstrap_values(amplitude: float, complex_slots: bool, in_range: bool) -> tuple[str, str]:
    t = toy()
    np, ckks = t.np, t.ckks
    rng = np.random.default_rng(int(amplitude * 10) + complex_slots)
    z = rng.uniform(-amplitude, amplitude, t.params.slots)
    if complex_slots:
        z = z + 1j * rng.uniform(-amplitude, amplitude, t.params.slots)

    def run() -> Any:
        with t.ctx:
            return t.ctx.decrypt(ckks.bootstrap(ckks.encrypt(z, level=0)).realize())

    got, warned = _recorded(run)
    return _judge(slot_bits(got, z), warned, FLOOR, in_range)


def _bootstrap_scale(bits: int, in_range: bool) -> tuple[str, str]:
    t = toy()
    np, ckks = t.np, t.ckks
    z = np.random.default_rng(bits).uniform(-1, 1, t.params.slots)

    def run() -> Any:
        ct = t.ctx.encrypt(z, level=0, scale=2.0**bits)
        return t.ctx.decrypt(ckks.bootstrap(ct, t.config))

    got, warned = _with_warnings(run)  # a plain run: metadata is all there is
    return _judge(slot_bits(got, z), warned, FLOOR, in_range)


def _function_values(name: str, low: float, high: float, in_range: bool) -> tuple[str, str]:
    from ren.circuits.ckks import functions

    d = deep()
    np = d.np
    x = np.linspace(low, high, 32)
    fn, ref = {
        "inverse": (functions.inverse, lambda v: 1 / v),
        "sigmoid": (functions.sigmoid, lambda v: 1 / (1 + np.exp(-v))),
        "exp": (functions.exp, np.exp),
        "sqrt": (functions.sqrt, np.sqrt),
        "sign": (functions.sign, np.sign),
    }[name]

    def run() -> Any:
        with d.ctx:
            return d.ctx.decrypt(fn(d.ckks.encrypt(x)).realize()).real

    got, warned = _recorded(run)
    want = ref(x)
    if name == "sign":  # the sign is right outside a gap around 0 only
        keep = np.abs(x) >= 0.01
        got, want = got[keep], want[keep]
    # relative to the values' size: 1/x near 0.5 and e^3 are not small
    bits = slot_bits(
        got / max(1.0, float(np.max(np.abs(want)))), want / max(1.0, np.max(np.abs(want)))
    )
    return _judge(bits, warned, FUNCTION_FLOOR, in_range)


def value_cases() -> list[Case]:
    cases: list[Case] = []
    for amplitude, complex_slots, in_range in [
        (1.0, False, True),
        (1.0, True, True),
        (4.0, False, False),
        (100.0, False, False),
        (100.0, True, False),
    ]:
        kind = "complex" if complex_slots else "real"
        cases.append(
            Case(
                f"bootstrap of {kind} slots up to {amplitude:g} (recorded)"
                + (" (in range)" if in_range else ""),
                functools.partial(_bootstrap_values, amplitude, complex_slots, in_range),
                timeout=SLOW,
            )
        )
    for bits, in_range in [(10, False), (20, False), (30, False), (40, True), (45, False)]:
        cases.append(
            Case(
                f"bootstrap at scale 2^{bits}" + (" (in range)" if in_range else ""),
                functools.partial(_bootstrap_scale, bits, in_range),
                timeout=SLOW,
            )
        )
    for name, low, high, in_range in [
        ("inverse", 0.5, 100.0, False),
        ("inverse", 1.0, 16.0, True),
        ("sigmoid", -20.0, 20.0, False),
        ("exp", -3.0, 3.0, False),
        ("sqrt", 0.01, 4.0, False),
        ("sign", -2.0, 2.0, False),
    ]:
        cases.append(
            Case(
                f"functions.{name} of [{low:g}, {high:g}] (recorded)"
                + (" (in range)" if in_range else ""),
                functools.partial(_function_values, name, low, high, in_range),
                timeout=SLOW,
            )
        )
    return cases


# ---------------------------------------------------------------------------------------------
# labels: each precision says what it is measured against, and is that


@functools.cache
def _slot_sum() -> types.SimpleNamespace:
    """A slot sum of 32 values in (0, 1) (slots about 16), recorded and measured."""
    from ren.circuits.ckks.rotations import sum_slots
    from ren.viz.precision import measure_precision
    from ren.viz.trace import record

    d = deep()
    np, ckks = d.np, d.ckks
    params = ckks.Params(n=64, q_bits=(50, 30, 30), p_bits=(50,), scale_bits=30, insecure=True)
    x = np.random.default_rng(33).uniform(0, 1, 32)
    with ckks.Context(params, seed=34) as ctx:
        with record() as trace:
            out = sum_slots(ckks.encrypt(x)).realize()
        got = ctx.decrypt(out).real
        plain = ctx.decode(ctx.encode(x)).real  # the shadow's leaf: the plaintext's decoding
    _with_warnings(lambda: measure_precision(trace, progress=False))
    want = np.full(32, plain.sum())
    return types.SimpleNamespace(trace=trace, got=got, want=want, np=np, ckks=ckks)


_FIGURE = re.compile(r"(\d+\.\d+) bits(?: \(([^)]*)\))?(?:; (\d+\.\d+) relative to max)?")


def _figure_is_labelled(
    text: str, got: Any, want: Any, label: str | None = None
) -> tuple[str, str]:
    """A precision shown in ``text``: labelled (there, or by ``label``: a table's heading) with
    what it is measured against, and equal to that."""
    np = deep().np
    m = _FIGURE.search(text)
    if m is None:
        return CRASH, short(f"no precision found in {text!r}")
    shown, relative = float(m[1]), m[3]
    label = (m[2] or "") if label is None else label
    err = float(np.max(np.abs(got - want)))
    absolute_bits = -math.log2(err)
    relative_bits = -math.log2(err / float(np.max(np.abs(want))))
    if "absolute" in label:
        ok = abs(shown - absolute_bits) < 0.06
        if relative is not None:
            ok = ok and abs(float(relative) - relative_bits) < 0.06
    elif "relative" in label:
        ok = abs(shown - relative_bits) < 0.06
    else:
        return SILENT, short(
            f"{shown} bits shown with no word of what it is measured against (absolute "
            f"{absolute_bits:.1f}, relative {relative_bits:.1f})"
        )
    if not ok:
        return SILENT, short(
            f"shows {m[0]!r}; ckks.precision_bits gives {absolute_bits:.2f} (absolute), "
            f"{relative_bits:.2f} (relative)"
        )
    return CLEAR, short(f"shows {m[0]!r}: reproduced")


def _label_box() -> tuple[str, str]:
    from ren.viz.report import build_report

    s = _slot_sum()
    page = build_report(s.trace, "slot sum", times=False)
    boxes = re.findall(r'<b>sum_slots</b>.*?<span class="bits">([^<]*)</span>', page, re.S)
    if not boxes:
        return CRASH, "no precision in the sum_slots box"
    return _figure_is_labelled(_html.unescape(boxes[0]), s.got, s.want)


def _label_table() -> tuple[str, str]:
    from ren.viz.report import build_report

    s = _slot_sum()
    page = build_report(s.trace, "slot sum", times=False)
    heads = re.findall(r"<th[^>]*>(precision[^<]*)</th>", page)
    if not heads:
        return CRASH, "no precision column in the region table"
    if not re.search(r"absolute|relative", heads[0]):
        return SILENT, f"the table's heading {heads[0]!r} says not what it is measured against"
    return CLEAR, short(f"heading {heads[0]!r}")


def _label_text() -> tuple[str, str]:
    from ren.viz.report import text_report

    s = _slot_sum()
    text = text_report(s.trace, "slot sum", times=False)
    rows = [line for line in text.splitlines() if line.startswith("  sum_slots ")]
    if not rows:
        return CLEAR, "the text report shows no region precision (nothing to label)"
    heads = [line for line in text.splitlines() if line.startswith("regions")]
    if not heads or not re.search(r"absolute|relative", heads[0]):
        return SILENT, "the text report's region precision is not labelled"
    return _figure_is_labelled(rows[0].split("  ")[-1], s.got, s.want, label=heads[0])


def _label_compare() -> tuple[str, str]:
    from ren.viz.report.compare import compare_report, run_summary

    s = _slot_sum()
    summary = run_summary(s.trace, "slot sum")
    page = compare_report(summary, summary)
    heads = re.findall(r"<th[^>]*>(bits[^<]*)</th>", page)
    if not heads:
        return CRASH, "no bits column in the comparison"
    if not re.search(r"absolute|relative", heads[0]) and "absolute" not in page:
        return SILENT, f"the comparison's {heads[0]!r} says not what it is measured against"
    shown = summary["regions"]["sum_slots"]["bits"]
    return _figure_is_labelled(f"{shown:.2f} bits (absolute)", s.got, s.want)


def _label_debugger() -> tuple[str, str]:
    from ren.viz.debug import Stepper

    d = deep()
    np, ckks = d.np, d.ckks
    x = np.random.default_rng(35).uniform(0, 4, 32)
    with d.ctx:
        ct = ckks.encrypt(x).realize()
        out = ct * ct
    st = Stepper(out)
    st.watch(out, d.ctx, x * x)
    st.finish()
    line = [row for row in st.slots().splitlines() if "precision:" in row]
    if not line:
        return CRASH, "no precision line in the debugger's slots"
    got = d.ctx.decrypt(out)
    return _figure_is_labelled(line[0], got, x * x)


def _label_docstring() -> tuple[str, str]:
    from ren.schemes import ckks

    doc = ckks.precision_bits.__doc__ or ""
    if "absolute" in doc.lower():
        return CLEAR, "ckks.precision_bits says it is absolute"
    return SILENT, "ckks.precision_bits's docstring does not say whether it is absolute"


def label_cases() -> list[Case]:
    return [
        Case("report: a region box's precision", _label_box, timeout=SLOW),
        Case("report: the region table's precision heading", _label_table, timeout=SLOW),
        Case("report --text: the regions' precision", _label_text, timeout=SLOW),
        Case("report compare: the bits columns", _label_compare, timeout=SLOW),
        Case("debugger: the slots' precision", _label_debugger, timeout=SLOW),
        Case("ckks.precision_bits: its docstring", _label_docstring),
    ]


def cases() -> list[Case]:
    """Every case of the category, cheap ones first."""
    return config_cases() + interval_cases() + label_cases() + value_cases()
