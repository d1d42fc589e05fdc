"""An adversarial trial of Ren: several thousand hostile cases in ten categories, each classified.

Run from the repository root::

    .venv/bin/python scripts/trial.py                      # the full trial (a few minutes)
    .venv/bin/python scripts/trial.py --quick              # a subset (under a minute)
    .venv/bin/python scripts/trial.py --only threads       # one category ("bad input", ...)
    .venv/bin/python scripts/trial.py --ren /tmp/old-tree  # try another checkout of Ren
    .venv/bin/python scripts/trial.py --out benchmarks/figures/trial-after.json

It writes a JSON file (every case: category, name, outcome, a short detail; totals per category)
and a Markdown table next to it (``.md``): category | cases | clear | silent | crashes. A progress
line per category goes to stderr. Every case is deterministic (fixed seeds), but the thread cases
depend on how the threads happen to interleave, so their counts vary from run to run (a race that
shows in 1 of 6 runs is still a race).

The categories, as a hostile new user would try Ren:

* **bad input**: wrong types and values (bools, ``None``, strings, floats, NaN, huge and negative
  ints) for every argument of ``Poly``, ``RingSpec``, the samplers and ``ckks`` (``Params``,
  ``Context``, encode, encrypt, rotate, multiply, ...), NumPy operands, ``Poly == Poly``,
  environment variables with bad values (each in its own process);
* **crafted blobs**: valid CKKS blobs of every kind, taken apart, their JSON header and payloads
  mutated (wrong types for every field, missing keys, huge ints, deep nests, NaN, wrong payload
  counts and sizes, bad secret keys, insecure parameters) and checksummed again; the mutations are
  made from whatever blob the Ren under test writes, so a new format version or header key is
  mutated too;
* **cache faults**: an unusable ``REN_CACHE_DIR``, FIFOs, directories and garbage where the compile
  cache keeps libraries, the cache deleted during a build, the ``REN_CACHE_MAX_MB`` bound;
* **threads**: independent programs, one jitted function, a capture beside other work, and two
  ``ckks.Context`` blocks, from several threads (``sys.setswitchinterval(1e-6)``), each run in its
  own process and checked against answers computed afterwards on one thread;
* **jit misuse**: freed inputs and closed-over values, nested captures, no ``Poly`` in or out,
  unhashable leaves, outputs fed back, other rings and devices, on the python and cpu devices;
* **security**: weak parameters (``sigma``), the ``s = -b/a`` key recovery, secret keys in
  pickles and copies, values loaded under other keys, bad secret keys.
* **crafted plans** (``scripts/trial_plans.py``): saved plans (a ``Poly`` program, one with a
  constant input and a returned input, a CKKS product and rotation under evaluation keys; python
  and cpu) with every field of their kernel bodies, infos, buffers, units, manifest and result
  changed (C text in integer fields, sizes, offsets, names, nesting), hashes and fingerprint
  recomputed; injected C that runs (a constructor making a marker file) is ``silent``;
* **jit oracle** (``scripts/trial_jit.py``): random programs whose ``Poly.const`` arguments
  collide with their bodies' constants, replayed and reloaded against the eager answer in Python
  integers; loaded CKKS, BFV and BGV plans called with another scale, level, correction factor,
  keys or stored keys (refused) and with the metadata they were saved for (right answers);
* **interop files** (``scripts/trial_interop.py``): SEAL and OpenFHE files and NumPy arrays made
  hostile (decompression bombs, every metadata field out of the producing library's range,
  checksums recomputed) for the readers and ``python -m ren.testing compare``, each case under a
  memory budget;
* **ckks ranges** (``scripts/trial_ranges.py``): bootstrap settings out of range, function
  intervals, bootstrap and function inputs past their range or at a scale far from the chain's
  (right, or reported with a ``RuntimeWarning``, never silently wrong), and every precision
  figure labelled with what it is measured against.

**How an outcome is classified.** Each case says what the right behaviour is: a refusal, a success
with a right answer (checked against an oracle: Python big integers, NumPy, or the python backend
computed afterwards), or either.

* ``clear``: the expected refusal, or the expected success with the right answer. A refusal counts
  when the exception is a ``TypeError``, ``ValueError`` or ``ren.errors.RenError`` (``JitError``,
  ``CompileError``, ...) *and* its message matches the case's pattern (the argument, variable or
  value it should name). Which of ``TypeError`` and ``ValueError`` does not matter: a clear message
  under either is ``clear``. Blob cases need a ``ValueError`` (the format promises one). A few
  cases list another accepted exception (``RuntimeError`` for ``ckks.encrypt`` in a capture, as
  documented). Cache cases need the right answer, and a warning where the fault must be reported.
* ``silent``: bad input accepted, a wrong answer, a secret key found in a pickle, a fault swallowed
  without a word where a warning is required.
* ``crash``: any other exception: ``KeyError``, ``AttributeError``, ``IndexError``,
  ``OverflowError``, ``RecursionError``, ``OSError``, ``UnicodeDecodeError``, a JSON or NumPy
  error; also a ``TypeError``/``ValueError`` whose message does not name what it should (a NumPy
  broadcasting error is a ``ValueError`` that names nothing of the user's); an exception where a
  right answer was required (valid input refused); a segfault or other death of the process; a
  hang (the case's time limit).

Judgement calls, so the counts can be read: a ``bool`` is not accepted where a number is asked
for (``sigma=True``), nor a string or an int other than 0/1 for a flag (``relinearize="no"``,
``centered=2``); a float with an integral value is not an int (``rescale(97.0)``, ``"L": 3.0`` in
a blob header); NumPy integer scalars are ints. A header field is not given a value that might be
legitimate (``real: true``, ``dnum: null``, another odd Galois element): only the writer could know.
An accepted header with an extra unknown key is ``clear`` (either answer is right). In a thread
run, every thread's answers are checked; one record per run and check gives the worst of them.

**Isolation.** Cheap cases run in batches, in-process, in a worker subprocess (``--worker``) that
reports each case as it starts and ends. When a worker dies or hangs, the case it was running is
run again alone in a fresh process to get its own outcome, and the batch goes on after it in a new
worker. Cases that need their own environment or may hang (environment variables, threads, cache
FIFOs) run alone, with a time limit; cache cases run their programs in child processes.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import dataclasses
import datetime
import functools
import hashlib
import inspect
import json
import math
import os
import pickle
import queue
import random
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import types
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

CATEGORIES = (
    "bad input",
    "crafted blobs",
    "cache faults",
    "threads",
    "jit misuse",
    "security",
    "crafted plans",
    "jit oracle",
    "interop files",
    "ckks ranges",
)
CLEAR, SILENT, CRASH = "clear", "silent", "crash"
ROOT = Path(__file__).resolve().parent.parent

#: One outcome: ``(outcome, detail)``.
Result = tuple[str, str]


@dataclasses.dataclass
class Case:
    """One case: ``run()`` returns ``(outcome, detail)``, or a dict of them when ``checks`` is set.

    ``solo`` cases run alone in their own process, with ``env`` added to its environment.
    """

    name: str
    run: Callable[[], Any]
    solo: bool = False
    env: dict[str, str] | None = None
    timeout: float = 60.0
    checks: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------------
# classifying what happened


def short(text: Any, limit: int = 160) -> str:
    """``text`` on one line, at most ``limit`` characters."""
    try:
        text = str(text)
    except Exception:  # a huge int, a broken __str__
        text = "<unprintable>"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(value: Any) -> str:
    try:
        return short(f"{type(value).__name__} {value!r}", 100)
    except Exception:
        return type(value).__name__


@functools.cache
def _refusal_kinds() -> tuple[type, ...]:
    from ren.errors import RenError

    return (TypeError, ValueError, RenError)


#: exceptions that subclass ValueError but come from deep inside, never a deliberate refusal
_RAW_VALUE_ERRORS = (UnicodeError, json.JSONDecodeError)


def classify_error(e: BaseException, match: str, kinds: tuple[type, ...] = ()) -> Result:
    """The outcome of a refusal: ``clear`` for an accepted kind whose message matches ``match``."""
    kinds = kinds or _refusal_kinds()
    text = f"{type(e).__name__}: {short(e, 300)}"
    if isinstance(e, kinds) and not isinstance(e, _RAW_VALUE_ERRORS):
        if re.search(match, str(e), re.IGNORECASE):
            return CLEAR, short(text)
        return CRASH, short(f"unclear message: {text}")
    return CRASH, short(text)


def refuse(fn: Callable[[], Any], match: str, kinds: tuple[type, ...] = ()) -> Result:
    """A case whose right behaviour is a refusal naming ``match``."""
    try:
        value = fn()
    except RecursionError as e:
        return CRASH, f"RecursionError: {short(e)}"
    except Exception as e:
        return classify_error(e, match, kinds)
    return SILENT, f"accepted, gave {_describe(value)}"


def succeed(fn: Callable[[], Any], check: Callable[[Any], str | None]) -> Result:
    """A case whose right behaviour is success; ``check(result)`` returns what is wrong, or None."""
    try:
        value = fn()
    except Exception as e:
        return CRASH, short(f"refused valid input: {type(e).__name__}: {e}")
    try:
        wrong = check(value)
    except Exception as e:
        return SILENT, short(f"unusable result {_describe(value)}: {type(e).__name__}: {e}")
    return (SILENT, short(f"wrong answer: {wrong}")) if wrong else (CLEAR, "right answer")


def either(fn: Callable[[], Any], match: str, check: Callable[[Any], str | None]) -> Result:
    """A case where a clear refusal and a right answer are both right."""
    try:
        value = fn()
    except Exception as e:
        return classify_error(e, match)
    try:
        wrong = check(value)
    except Exception as e:
        return SILENT, short(f"unusable result {_describe(value)}: {type(e).__name__}: {e}")
    return (SILENT, short(f"wrong answer: {wrong}")) if wrong else (CLEAR, "right answer")


def equal(want: Any) -> Callable[[Any], str | None]:
    """A check that the result equals ``want``."""

    def check(got: Any) -> str | None:
        return None if got == want else f"got {short(got, 60)}, want {short(want, 60)}"

    return check


def slot_bits(got: Any, want: Any) -> float:
    """``-log2`` of the largest slot error (the oracle's, not Ren's ``precision_bits``)."""
    import numpy as np

    got, want = np.asarray(got, dtype=complex), np.asarray(want, dtype=complex)
    err = float(np.max(np.abs(got[: len(want)] - want)))
    return math.inf if err == 0 else -math.log2(err)


# ---------------------------------------------------------------------------------------------
# oracles on Python big integers


def ring_mod(coeffs: list[int], Q: int) -> list[int]:
    """Coefficients modulo ``Q`` in ``[0, Q)``."""
    return [int(c) % Q for c in coeffs]


def negacyclic(a: list[int], b: list[int], Q: int) -> list[int]:
    """``a * b mod (X^n + 1, Q)`` by the schoolbook product."""
    n = len(a)
    out = [0] * n
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            k, v = i + j, x * y
            if k >= n:
                out[k - n] -= v
            else:
                out[k] += v
    return [c % Q for c in out]


def automorph(a: list[int], g: int, Q: int) -> list[int]:
    """``a(X^g) mod (X^n + 1, Q)``."""
    n = len(a)
    out = [0] * n
    for i, c in enumerate(a):
        k = (i * g) % (2 * n)
        if k >= n:
            out[k - n] -= c
        else:
            out[k] += c
    return [c % Q for c in out]


def centered(x: int, Q: int) -> int:
    """The representative of ``x mod Q`` in ``(-Q/2, Q/2]``."""
    x %= Q
    return x - Q if x > Q // 2 else x


# ---------------------------------------------------------------------------------------------
# the values most in-process cases share (made once per worker)


@functools.cache
def fx() -> types.SimpleNamespace:
    """Rings, CKKS parameters, a context with keys, a plaintext and a ciphertext."""
    import numpy as np

    import ren
    from ren import Poly, RingSpec, ntt_primes
    from ren.schemes import ckks

    ns = types.SimpleNamespace(np=np, ren=ren, Poly=Poly, RingSpec=RingSpec, ckks=ckks)
    ns.ntt_primes = ntt_primes
    ns.r8 = RingSpec(8, (17, 97, 113))
    ns.a_coeffs = [1000 * i + 7 * i * i - 3 for i in range(8)]
    ns.params = ckks.Params(n=32, q_bits=(40, 30, 30), p_bits=(45,), scale_bits=30, insecure=True)
    ns.ctx = ckks.Context(ns.params, seed=11)
    ns.ctx.keygen()
    rng = np.random.default_rng(5)
    ns.vals = rng.uniform(-1, 1, 16) + 1j * rng.uniform(-1, 1, 16)
    ns.rvals = rng.uniform(-1, 1, 16)
    ns.ct = ns.ctx.encrypt(ns.vals)
    ns.rct = ns.ctx.encrypt(ns.rvals)
    ns.pt = ns.ctx.encode(ns.vals)
    return ns


def poly_a(device: str = "python") -> Any:
    """A fresh ``Poly`` over ``fx().r8`` with known coefficients."""
    f = fx()
    return f.Poly(f.a_coeffs, f.r8, device)


def decrypts_to(want: Any, bits: float = 15.0) -> Callable[[Any], str | None]:
    """A check that a result is a ciphertext of ``fx().ctx`` decrypting to ``want``."""

    def check(ct: Any) -> str | None:
        f = fx()
        if not isinstance(ct, f.ckks.Ciphertext):
            return f"a {type(ct).__name__}, not a Ciphertext"
        got = f.ctx.decrypt(ct)
        b = slot_bits(got, want)
        return None if b > bits else f"{b:.1f} bits against NumPy"

    return check


def poly_is(want: list[int]) -> Callable[[Any], str | None]:
    """A check that a result is a ``Poly`` whose coefficients are ``want`` (in ``[0, Q)``)."""

    def check(p: Any) -> str | None:
        if not isinstance(p, fx().Poly):
            return f"a {type(p).__name__}, not a Poly"
        got = p.tolist()
        return None if got == want else f"coefficients {short(got, 50)}, want {short(want, 50)}"

    return check


# ---------------------------------------------------------------------------------------------
# bad input


def _bad_args(
    cases: list[Case],
    what: str,
    call: Callable[[Any], Any],
    bad: list[tuple[str, Any]],
    match: str,
) -> None:
    """One refusal case for each ``(label, value)`` in ``bad``: ``call(value)`` must refuse."""
    for label, value in bad:
        cases.append(
            Case(f"{what}={label}", functools.partial(refuse, lambda v=value: call(v), match))
        )


def _good_args(
    cases: list[Case],
    what: str,
    call: Callable[[Any], Any],
    good: list[tuple[str, Any, Callable[[], Callable[[Any], str | None]]]],
) -> None:
    """One success case for each ``(label, value, make_check)``: ``call(value)`` must be right."""
    for label, value, make_check in good:
        cases.append(
            Case(
                f"{what}={label} (valid)",
                lambda v=value, m=make_check: succeed(lambda: call(v), m()),
            )
        )


NAN, INF = float("nan"), float("inf")

#: values that are wrong for almost every int argument
BAD_INT = [
    ("True", True),
    ("None", None),
    ("'3'", "3"),
    ("2.5", 2.5),
    ("3.0", 3.0),
    ("nan", NAN),
    ("inf", INF),
    ("[3]", [3]),
    ("b'3'", b"3"),
    ("1j", 1j),
]


def bad_input_cases() -> list[Case]:
    """Wrong types and values for every argument of the public API, and bad environments."""
    cases: list[Case] = []
    cases += _poly_cases()
    cases += _ring_and_sampling_cases()
    cases += _params_and_context_cases()
    cases += _ckks_value_cases()
    cases += _environment_cases()
    return cases


def _poly_cases() -> list[Case]:
    cases: list[Case] = []

    def P(coeffs: Any, ring: Any = None, device: Any = None) -> Any:
        f = fx()
        return f.Poly(coeffs, f.r8 if ring is None else ring, device).tolist()

    def Q() -> int:
        return fx().r8.Q

    bad_coeffs = [
        ("None", None),
        ("'3'", "3"),
        ("2.5", 2.5),
        ("b'abcdefgh'", b"abcdefgh"),
        ("'abcdefgh'", "abcdefgh"),
        ("[1.5]*8", [1.5] * 8),
        ("[True]*8", [True] * 8),
        ("[None]*8", [None] * 8),
        ("[nan]*8", [NAN] * 8),
        ("7 values", list(range(7))),
        ("9 values", list(range(9))),
        ("float array", "np:zeros8f"),
        ("2-D array", "np:ones24"),
        ("complex list", [1j] * 8),
        ("bool array", "np:bool8"),
        ("dict", {i: i for i in range(8)}),
        ("set", set(range(8))),
    ]

    def coeffs_of(v: Any) -> Any:
        np = fx().np
        table = {
            "np:zeros8f": lambda: np.zeros(8),
            "np:ones24": lambda: np.ones((2, 4), dtype=np.int64),
            "np:bool8": lambda: np.ones(8, dtype=bool),
            "np:int8": lambda: np.arange(8, dtype=np.int8),
            "np:u64max": lambda: np.full(8, 2**64 - 1, dtype=np.uint64),
            "np:obj": lambda: np.array([2**100 + i for i in range(8)], dtype=object),
        }
        return table[v]() if isinstance(v, str) and v.startswith("np:") else v

    _bad_args(cases, "Poly(coeffs)", lambda v: P(coeffs_of(v)), bad_coeffs, r"coeff")
    good_coeffs = [
        ("[2**200]*8", [2**200] * 8, lambda: equal(ring_mod([2**200] * 8, Q()))),
        ("[-5]*8", [-5] * 8, lambda: equal(ring_mod([-5] * 8, Q()))),
        ("int8 array", "np:int8", lambda: equal(list(range(8)))),
        ("uint64 max", "np:u64max", lambda: equal(ring_mod([2**64 - 1] * 8, Q()))),
        ("object array", "np:obj", lambda: equal(ring_mod([2**100 + i for i in range(8)], Q()))),
        ("tuple", tuple(range(8)), lambda: equal(list(range(8)))),
    ]
    _good_args(cases, "Poly(coeffs)", lambda v: P(coeffs_of(v)), good_coeffs)
    bad_ring = [("None", None), ("8", 8), ("'ring'", "ring"), ("(8, (17,))", (8, (17,)))]
    _bad_args(cases, "Poly(ring)", lambda v: fx().Poly([0] * 8, v).tolist(), bad_ring, r"ring")
    bad_device = [("1", 1), ("True", True), ("'gpu'", "gpu"), ("''", ""), ("b'cpu'", b"cpu")]
    _bad_args(cases, "Poly(device)", lambda v: P([1] * 8, None, v), bad_device, r"device")
    _good_args(
        cases, "Poly(device)", lambda v: P(list(range(8)), None, v),
        [("'CPU'", "CPU", lambda: equal(list(range(8))))],
    )  # fmt: skip

    # constants
    def const(v: Any) -> Any:
        return fx().Poly.const(v, fx().r8).tolist()

    _bad_args(cases, "Poly.const(value)", const, BAD_INT, r"value|constant|int")
    for label, v in [("2**300", 2**300), ("-7", -7), ("np.int64(5)", "i64"), ("np.uint8(3)", "u8")]:

        def good_const(v: Any = v) -> Result:
            np = fx().np
            value = {"i64": np.int64(5), "u8": np.uint8(3)}.get(v, v) if isinstance(v, str) else v
            return succeed(lambda: const(value), equal([int(value) % Q()] + [0] * 7))

        cases.append(Case(f"Poly.const(value={label}) (valid)", good_const))

    # from_limbs / from_words
    def limbs(kind: str) -> Any:
        np = fx().np
        return {
            "float": np.zeros((3, 8)),
            "shape": np.zeros((2, 8), dtype=np.int64),
            "big": np.full((3, 8), 200, dtype=np.int64),
            "neg": np.full((3, 8), -1, dtype=np.int64),
            "none": None,
            "str": "limbs",
        }[kind]

    for method in ("from_limbs", "from_words"):
        for kind in ("float", "shape", "big", "neg", "none", "str"):
            cases.append(
                Case(
                    f"Poly.{method}({kind} array)",
                    functools.partial(
                        refuse,
                        lambda m=method, k=kind: getattr(fx().Poly, m)(limbs(k), fx().r8).tolist(),
                        r"limb|word|residue|integer|shape|array",
                    ),
                )
            )
        for label, dom in [("'ntt'", "ntt"), ("None", None), ("1", 1)]:
            cases.append(
                Case(
                    f"Poly.{method}(domain={label})",
                    functools.partial(
                        refuse,
                        lambda m=method, d=dom: getattr(fx().Poly, m)(
                            fx().np.zeros((3, 8), dtype=fx().np.int64), fx().r8, d
                        ).tolist(),
                        r"domain",
                    ),
                )
            )

    # samplers on Poly
    bad_rng = [("-1", -1), ("2.5", 2.5), ("'seed'", "seed"), ("True", True), ("[1]", [1])]
    for method in ("uniform", "ternary"):
        _bad_args(
            cases,
            f"Poly.{method}(rng)",
            lambda v, m=method: getattr(fx().Poly, m)(fx().r8, v).tolist(),
            bad_rng,
            r"rng|seed",
        )
    _bad_args(
        cases,
        "Poly.uniform_on_interval(low)",
        lambda v: fx().Poly.uniform_on_interval(fx().r8, v, 5, 1).tolist(),
        [*BAD_INT[:6], ("low > high", 9)],
        r"low|high|interval",
    )
    cases.append(
        Case(
            "Poly.uniform_on_interval(-2**100, 2**100) (valid)",
            lambda: succeed(
                lambda: fx().Poly.uniform_on_interval(fx().r8, -(2**100), 2**100, 3).tolist(),
                lambda got: None if len(got) == 8 and all(0 <= c < Q() for c in got) else "range",
            ),
        )
    )
    _bad_args(
        cases,
        "Poly.sparse_ternary(hamming_weight)",
        lambda v: fx().Poly.sparse_ternary(fx().r8, v, 1).tolist(),
        [
            ("2.0", 2.0),
            ("True", True),
            ("-1", -1),
            ("9 > n", 9),
            ("'2'", "2"),
            ("None", None),
            ("nan", NAN),
        ],
        r"hamming",
    )
    for label, hw in [("0", 0), ("3", 3), ("8", 8)]:

        def sparse(hw: int = hw) -> Result:
            def check(got: list[int]) -> str | None:
                c = [centered(x, Q()) for x in got]
                ok = all(x in (-1, 0, 1) for x in c) and sum(x != 0 for x in c) == hw
                return None if ok else f"{c}"

            return succeed(lambda: fx().Poly.sparse_ternary(fx().r8, hw, 2).tolist(), check)

        cases.append(Case(f"Poly.sparse_ternary(hamming_weight={label}) (valid)", sparse))
    _bad_args(
        cases,
        "Poly.gaussian(sigma)",
        lambda v: fx().Poly.gaussian(fx().r8, v, 1).tolist(),
        [
            ("1e30", 1e30),
            ("nan", NAN),
            ("inf", INF),
            ("-1", -1.0),
            ("0", 0),
            ("True", True),
            ("'3'", "3"),
            ("None", None),
            ("1j", 1j),
            ("1e300", 1e300),
        ],
        r"sigma",
    )
    for label, s in [("3.2", 3.2), ("5", 5), ("1e3", 1e3)]:

        def gauss(s: float = s) -> Result:
            def check(got: list[int]) -> str | None:
                c = [centered(x, Q()) for x in got]
                return None if all(abs(x) <= 6 * s for x in c) else f"{c} beyond 6 sigma"

            return succeed(lambda: fx().Poly.gaussian(fx().r8, s, 4).tolist(), check)

        cases.append(Case(f"Poly.gaussian(sigma={label}) (valid)", gauss))

    # arithmetic operands
    def a_plus(v: Any) -> Any:
        return (poly_a() + v).tolist()

    def a_times(v: Any) -> Any:
        return (poly_a() * v).tolist()

    bad_operand = [
        ("2.5", 2.5),
        ("nan", NAN),
        ("'x'", "x"),
        ("None", None),
        ("True", True),
        ("[1]*8", [1] * 8),
        ("1j", 1j),
    ]
    _bad_args(cases, "poly + x", a_plus, bad_operand, r"Poly|operand|\+")
    _bad_args(cases, "poly * x", a_times, bad_operand, r"Poly|operand|\*")
    for label, v in [("7", 7), ("-2**100", -(2**100)), ("np.int64(9)", "i64")]:

        def add_int(v: Any = v) -> Result:
            value = fx().np.int64(9) if v == "i64" else v
            want = list(fx().a_coeffs)
            want[0] += int(value)
            return succeed(lambda: a_plus(value), equal(ring_mod(want, Q())))

        def mul_int(v: Any = v) -> Result:
            value = fx().np.int64(9) if v == "i64" else v
            want = [c * int(value) for c in fx().a_coeffs]
            return succeed(lambda: a_times(value), equal(ring_mod(want, Q())))

        cases.append(Case(f"poly + {label} (valid)", add_int))
        cases.append(Case(f"poly * {label} (valid)", mul_int))

    def reflected(v: str) -> Result:
        np = fx().np
        want = ring_mod([3 * c for c in fx().a_coeffs], Q())
        return either(lambda: {"i64": np.int64(3)}[v] * poly_a(), r"Poly|operand", poly_is(want))

    cases.append(Case("np.int64(3) * poly", functools.partial(reflected, "i64")))

    def with_array(op: str) -> Result:
        np = fx().np
        arr = np.arange(8)
        a = poly_a()
        out = {"a+arr": lambda: a + arr, "arr+a": lambda: arr + a, "a*arr": lambda: a * arr}[op]
        coef = [c + i for i, c in enumerate(fx().a_coeffs)]
        want = ring_mod(coef, Q()) if "+" in op else negacyclic(fx().a_coeffs, list(range(8)), Q())

        def check(got: Any) -> str | None:
            if isinstance(got, np.ndarray):
                return f"broadcast into a {got.dtype} array of shape {got.shape}"
            return poly_is(want)(got)

        return either(out, r"Poly|ndarray|array|operand", check)

    for op in ("a+arr", "arr+a", "a*arr"):
        cases.append(Case(f"poly and np.arange(n): {op}", functools.partial(with_array, op)))
    cases.append(
        Case(
            "poly + poly of another ring",
            functools.partial(
                refuse,
                lambda: poly_a() + fx().Poly([1] * 8, fx().RingSpec(8, (17, 97))),
                r"ring",
            ),
        )
    )
    cases.append(
        Case(
            "poly + poly on another device",
            functools.partial(refuse, lambda: poly_a() + poly_a("cpu"), r"device"),
        )
    )

    # equality
    def eq_case(kind: str) -> Result:
        f = fx()
        np = f.np
        a, b = poly_a(), poly_a()
        c = f.Poly([1] * 8, f.r8)
        call, want = {
            "equal values": (lambda: a == b, True),
            "equal values, one lazy": (lambda: (a + 0) == (b * 1), True),
            "equal values, coeff and ntt": (lambda: a == b.ntt(), True),
            "different values": (lambda: a == c, False),
            "different values !=": (lambda: a != c, True),
            "same object": (lambda: a == a, True),
        }[kind]

        def check(got: Any) -> str | None:
            if not isinstance(got, bool | np.bool_):
                return f"a {type(got).__name__}, not a bool"
            return None if bool(got) is want else f"{got}, want {want}"

        return either(call, r"==|compar|equal", check)

    for kind in (
        "equal values",
        "equal values, one lazy",
        "equal values, coeff and ntt",
        "different values",
        "different values !=",
        "same object",
    ):
        cases.append(Case(f"Poly == Poly: {kind}", functools.partial(eq_case, kind)))

    # methods
    def rescale(v: Any) -> Any:
        return poly_a().rescale(v).tolist()

    _bad_args(
        cases,
        "poly.rescale(moduli)",
        rescale,
        [
            ("97.0", 97.0),
            ("'97'", "97"),
            ("(97.9,)", (97.9,)),
            ("True", True),
            ("(97, 97)", (97, 97)),
            ("5", 5),
            ("all moduli", (17, 97, 113)),
            ("()", ()),
            ("nan", NAN),
            ("[113.0]", [113.0]),
        ],
        r"modul|rescale|97",
    )

    def rescale_want(P_: int, keep: tuple[int, ...]) -> list[int]:
        Qa, Qk = Q(), math.prod(keep)
        return [((2 * centered(c, Qa) + P_) // (2 * P_)) % Qk for c in fx().a_coeffs]

    for label, v, P_, keep in [
        ("None", None, 113, (17, 97)),
        ("113", 113, 113, (17, 97)),
        ("np.int64(97)", "i64", 97, (17, 113)),
        ("[113, 17]", [113, 17], 113 * 17, (97,)),
    ]:

        def good_rescale(v: Any = v, P_: int = P_, keep: tuple[int, ...] = keep) -> Result:
            value = fx().np.int64(97) if v == "i64" else v
            return succeed(lambda: rescale(value), equal(rescale_want(P_, keep)))

        cases.append(Case(f"poly.rescale({label}) (valid)", good_rescale))

    _bad_args(
        cases,
        "poly.rotate(steps)",
        lambda v: poly_a().rotate(v).tolist(),
        [("1.5", 1.5), ("'1'", "1"), ("True", True), ("None", None), ("nan", NAN), ("2.0", 2.0)],
        r"step|rotat",
    )
    for label, steps in [("1", 1), ("-1", -1), ("2**100", 2**100), ("np.int64(3)", 3)]:

        def rot(steps: int = steps, label: str = label) -> Result:
            value = fx().np.int64(steps) if label.startswith("np") else steps
            g = pow(5, steps % 4, 16)  # 5 has order n/2 = 4 modulo 2n = 16
            want = automorph(fx().a_coeffs, g, Q())
            return succeed(lambda: poly_a().rotate(value).tolist(), equal(want))

        cases.append(Case(f"poly.rotate({label}) (valid)", rot))
    _bad_args(
        cases,
        "poly.automorphism(g)",
        lambda v: poly_a().automorphism(v).tolist(),
        [
            ("3.0", 3.0),
            ("'3'", "3"),
            ("True", True),
            ("2 (even)", 2),
            ("None", None),
            ("nan", NAN),
            ("0", 0),
        ],
        r"galois|\bg\b|odd|element",
    )
    for label, g in [("3", 3), ("-1", -1), ("np.int64(5)", 5), ("2**64+1", 2**64 + 1)]:

        def auto(g: int = g, label: str = label) -> Result:
            value = fx().np.int64(g) if label.startswith("np") else g
            want = automorph(fx().a_coeffs, g % 16, Q())
            return succeed(lambda: poly_a().automorphism(value).tolist(), equal(want))

        cases.append(Case(f"poly.automorphism({label}) (valid)", auto))
    _bad_args(
        cases,
        "poly.to_ring(ring)",
        lambda v: poly_a().to_ring(v).tolist(),
        [("None", None), ("8", 8), ("'ring'", "ring"), ("n=16 ring", "r16")],
        r"ring|degree|\bn\b",
    )
    cases[-1].run = functools.partial(
        refuse,
        lambda: poly_a().to_ring(fx().RingSpec(16, (97, 113))).tolist(),
        r"ring|degree|\bn\b",
    )
    for label, moduli in [("limb view (97,)", (97,)), ("extension (17, 97, 113, 193)", None)]:

        def to_ring(moduli: Any = moduli) -> Result:
            f = fx()
            target = f.RingSpec(8, moduli or (17, 97, 113, 193))
            want = [centered(c, Q()) % target.Q for c in f.a_coeffs]
            return succeed(lambda: poly_a().to_ring(target).tolist(), equal(want))

        cases.append(Case(f"poly.to_ring({label}) (valid)", to_ring))

    def limb_view_copy(device: str) -> Result:
        f = fx()
        p = f.Poly(list(range(8)), f.RingSpec(8, (17, 97, 113)))
        return succeed(
            lambda: p.to_ring(f.RingSpec(8, (97,))).to(device).tolist(), equal(list(range(8)))
        )

    cases.append(Case("limb view .to('cpu') (valid)", functools.partial(limb_view_copy, "cpu")))
    cases.append(
        Case(
            "limb view .to('cuda') with REN_CUDA_EMULATE=1 (valid)",
            functools.partial(limb_view_copy, "cuda"),
            solo=True,
            env={"REN_CUDA_EMULATE": "1"},
        )
    )
    _bad_args(
        cases,
        "poly.to(device)",
        lambda v: poly_a().to(v).tolist(),
        [("'gpu'", "gpu"), ("1", 1), ("''", ""), ("b'cpu'", b"cpu")],
        r"device",
    )
    _bad_args(
        cases,
        "poly.tolist(centered)",
        lambda v: poly_a().tolist(centered=v),
        [("'no'", "no"), ("2", 2), ("'False'", "False")],
        r"centered",
    )
    _bad_args(
        cases,
        "ren.realize(x)",
        lambda v: fx().ren.realize(v),
        [("3", 3), ("None", None), ("[poly]", "list")],
        r"Poly|realize",
    )
    cases[-1].run = functools.partial(refuse, lambda: fx().ren.realize([poly_a()]), r"Poly")
    return cases


def _ring_and_sampling_cases() -> list[Case]:
    cases: list[Case] = []

    def ring(n: Any = 8, moduli: Any = (17, 97), dtype: Any = None) -> Any:
        return fx().RingSpec(n, moduli, dtype)

    _bad_args(
        cases,
        "RingSpec(n)",
        lambda v: ring(n=v),
        [*BAD_INT, ("6", 6), ("0", 0), ("-8", -8), ("2**70", 2**70), ("8.0", 8.0)],
        r"\bn\b|power|degree",
    )
    _bad_args(
        cases,
        "RingSpec(moduli)",
        lambda v: ring(moduli=v),
        [
            ("17", 17),
            ("(17.0,)", (17.0,)),
            ("(16,)", (16,)),
            ("(17, 17)", (17, 17)),
            ("()", ()),
            ("None", None),
            ("('17',)", ("17",)),
            ("(True,)", (True,)),
            ("(-17,)", (-17,)),
            ("(97, 18)", (97, 18)),
            ("(2**61-1,)", (2**61 - 1,)),
            ("'17'", "17"),
            ("(nan,)", (NAN,)),
        ],
        r"modul|prime",
    )
    _bad_args(
        cases,
        "RingSpec(dtype)",
        lambda v: ring(dtype=v),
        [
            ("'u16'", "u16"),
            ("32", 32),
            ("'U32'", "U32"),
            ("True", True),
            ("'u32' for a 62-bit q", 0),
        ],
        r"dtype",
    )
    cases[-1].run = functools.partial(
        refuse, lambda: fx().RingSpec(8, fx().ntt_primes(8, 61, 1), "u32"), r"dtype|u32"
    )
    for label, moduli in [("list", [17, 97]), ("np.array", "np")]:

        def good_ring(moduli: Any = moduli) -> Result:
            m = fx().np.array([17, 97]) if moduli == "np" else moduli
            return succeed(lambda: ring(moduli=m).Q, equal(17 * 97))

        cases.append(Case(f"RingSpec(moduli={label}) (valid)", good_ring))
    _bad_args(
        cases,
        "ntt_primes(n, bits, count)",
        lambda v: fx().ntt_primes(*v),
        [
            ("n=6", (6, 20, 1)),
            ("bits=1.5", (16, 1.5, 1)),
            ("bits=63", (16, 63, 1)),
            ("count=0", (16, 20, 0)),
            ("bits=True", (16, True, 1)),
            ("count=-1", (16, 20, -1)),
            ("bits='20'", (16, "20", 1)),
            ("count=2.0", (16, 20, 2.0)),
            ("count=10**5", (16, 20, 10**5)),
            ("n=None", (None, 20, 1)),
            ("bits=nan", (16, NAN, 1)),
        ],
        r"\bn\b|bits|count|prime",
    )

    def sampling() -> Any:
        import ren.ring.sampling

        return ren.ring.sampling

    _bad_args(
        cases,
        "sampling.as_rng(rng)",
        lambda v: sampling().as_rng(v),
        [("-1", -1), ("1.5", 1.5), ("'1'", "1"), ("True", True), ("[1]", [1])],
        r"rng|seed",
    )
    _bad_args(
        cases,
        "sampling.uniform_below(bound, size)",
        lambda v: sampling().uniform_below(1, *v),
        [
            ("bound=0", (0, 4)),
            ("bound=2**64", (2**64, 4)),
            ("bound=1.5", (1.5, 4)),
            ("size=-1", (10, -1)),
            ("size=2.5", (10, 2.5)),
            ("bound='9'", ("9", 4)),
            ("bound=None", (None, 4)),
            ("size=None", (10, None)),
        ],
        r"bound|size",
    )
    _bad_args(
        cases,
        "sampling.integers(low, high, size)",
        lambda v: sampling().integers(1, *v),
        [
            ("low=1.5", (1.5, 9, 4)),
            ("low='0'", ("0", 5, 4)),
            ("high=True", (0, True, 4)),
            ("high=nan", (0, NAN, 4)),
            ("size=-2", (0, 5, -2)),
            ("low=None", (None, 5, 4)),
        ],
        r"low|high|size|interval",
    )
    _bad_args(
        cases,
        "sampling.ternary(size)",
        lambda v: sampling().ternary(1, v),
        [("-1", -1), ("2.5", 2.5), ("None", None), ("'8'", "8")],
        r"size",
    )
    _bad_args(
        cases,
        "sampling.sparse_ternary(hamming_weight)",
        lambda v: sampling().sparse_ternary(1, 8, v),
        [("2.0", 2.0), ("9", 9), ("True", True), ("'2'", "2"), ("None", None)],
        r"hamming",
    )
    _bad_args(
        cases,
        "sampling.gaussian(sigma)",
        lambda v: sampling().gaussian(1, 8, v),
        [("1e30", 1e30), ("'3'", "3"), ("True", True), ("nan", NAN), ("-3", -3.0), ("None", None)],
        r"sigma",
    )
    return cases


def _params_and_context_cases() -> list[Case]:
    cases: list[Case] = []
    base = dict(n=32, q_bits=(40, 30, 30), p_bits=(45,), scale_bits=30, insecure=True)

    def params(**kw: Any) -> Any:
        return fx().ckks.Params(**{**base, **kw})

    per_arg: dict[str, list[tuple[str, Any]]] = {
        "n": [*BAD_INT, ("33", 33), ("2", 2), ("0", 0), ("-32", -32), ("2**70", 2**70)],
        "q_bits": [
            ("40", 40),
            ("(40.0, 30, 30)", (40.0, 30, 30)),
            ("(9,)", (9,)),
            ("(63,)", (63,)),
            ("()", ()),
            ("None", None),
            ("'40'", "40"),
            ("(True, 30)", (True, 30)),
            ("((40,),)", ((40,),)),
            ("(nan,)", (NAN,)),
            ("(40, '30')", (40, "30")),
            ("{40, 30} (a set)", {40, 30}),
        ],
        "p_bits": [
            ("45", 45),
            ("(45.5,)", (45.5,)),
            ("()", ()),
            ("None", None),
            ("(9,)", (9,)),
            ("(True,)", (True,)),
            ("'45'", "45"),
        ],
        "scale_bits": [*BAD_INT, ("0", 0), ("-1", -1), ("40 (= q_bits[0])", 40), ("2**70", 2**70)],
        "dnum": [(lbl, v) for lbl, v in BAD_INT if v is not None]
        + [("0", 0), ("4", 4), ("-1", -1)],
        "insecure": [
            ("1", 1),
            ("'yes'", "yes"),
            ("None", None),
            ("nan", NAN),
            ("'False'", "False"),
        ],
        "hamming_weight": [(lbl, v) for lbl, v in BAD_INT if v is not None]
        + [("0", 0), ("-1", -1), ("33", 33)],
        "sigma": [
            ("True", True),
            ("nan", NAN),
            ("inf", INF),
            ("-1", -1.0),
            ("0", 0),
            ("'3.2'", "3.2"),
            ("None", None),
            ("1j", 1j),
            ("1e300", 1e300),
            ("2**2000", 2**2000),
        ],
    }
    for arg, bad in per_arg.items():
        _bad_args(cases, f"ckks.Params({arg})", lambda v, a=arg: params(**{a: v}), bad, arg)

    def good_params(kw: dict) -> Result:
        np = fx().np
        kw = {k: (np.int64(32) if v == "i64" else v) for k, v in kw.items()}
        kw = {k: (np.float64(3.2) if v == "f64" else v) for k, v in kw.items()}
        return succeed(lambda: params(**kw).slots, equal(16))

    for label, kw in [
        ("n=np.int64(32)", {"n": "i64"}),
        ("q_bits=[40, 30, 30]", {"q_bits": [40, 30, 30]}),
        ("sigma=np.float64(3.2)", {"sigma": "f64"}),
        ("sigma=4", {"sigma": 4}),
        ("dnum=3", {"dnum": 3}),
    ]:
        cases.append(Case(f"ckks.Params({label}) (valid)", functools.partial(good_params, kw)))
    cases.append(
        Case(
            "ckks.Params() without q_bits",
            functools.partial(refuse, lambda: fx().ckks.Params(n=32), r"q_bits"),
        )
    )

    def context(**kw: Any) -> Any:
        f = fx()
        ctx = f.ckks.Context(kw.pop("params", f.params), **kw)
        ctx.encrypt([1.0])  # make keys and use them
        return ctx

    _bad_args(
        cases,
        "ckks.Context(params)",
        lambda v: context(params=v),
        [("None", None), ("{}", {}), ("'params'", "params"), ("its bytes", "bytes")],
        r"params",
    )
    cases[-1].run = functools.partial(
        refuse, lambda: context(params=fx().params.to_bytes()), r"params|Params"
    )
    _bad_args(
        cases,
        "ckks.Context(seed)",
        lambda v: context(seed=v),
        [("-1", -1), ("1.5", 1.5), ("'1'", "1"), ("True", True), ("nan", NAN)],
        r"seed|rng",
    )
    _bad_args(
        cases,
        "ckks.Context(device)",
        lambda v: context(device=v),
        [("'gpu'", "gpu"), ("3", 3), ("''", "")],
        r"device",
    )

    def keys_arg(kind: str) -> Any:
        f = fx()
        if kind == "bytes":
            return f.ctx.evaluation_keys().to_bytes()
        if kind == "other params":
            other = f.ckks.Params(n=64, q_bits=(40, 30), p_bits=(45,), scale_bits=30, insecure=True)
            c = f.ckks.Context(other, seed=3)
            c.keygen()
            return c.evaluation_keys()
        return {"str": "keys", "ctx": f.ctx}[kind]

    for kind in ("str", "bytes", "ctx", "other params"):
        cases.append(
            Case(
                f"ckks.Context(keys={kind})",
                lambda k=kind: refuse(lambda: context(keys=keys_arg(k)), r"keys|param"),
            )
        )

    def secret_arg(kind: str) -> Any:
        f = fx()
        if kind == "other params":
            other = f.ckks.Params(n=64, q_bits=(40, 30), p_bits=(45,), scale_bits=30, insecure=True)
            c = f.ckks.Context(other, seed=3)
            c.keygen()
            return c.export_secret_key()
        return {"str": "secret", "int": 123, "garbage bytes": b"\x00" * 64, "poly": poly_a()}[kind]

    for kind in ("str", "int", "garbage bytes", "poly", "other params"):
        cases.append(
            Case(
                f"ckks.Context(secret_key={kind})",
                lambda k=kind: refuse(
                    lambda: context(secret_key=secret_arg(k)), r"secret|blob|bytes|param"
                ),
            )
        )
    cases.append(
        Case(
            "ckks.Context(keys=..., secret_key=...)",
            lambda: refuse(
                lambda: context(
                    keys=fx().ctx.evaluation_keys(), secret_key=fx().ctx.export_secret_key()
                ),
                r"keys|secret",
            ),
        )
    )
    return cases


def _ckks_value_cases() -> list[Case]:
    cases: list[Case] = []

    def ctx() -> Any:
        return fx().ctx

    # encode / encrypt: values, level, scale
    def values_of(v: Any) -> Any:
        np = fx().np
        table = {
            "17 values": lambda: np.ones(17),
            "2-D": lambda: [[1, 2], [3, 4]],
            "set": lambda: {1, 2},
            "dict": lambda: {"a": 1},
            "object array": lambda: np.array([1, "a"], dtype=object),
        }
        return table[v]() if isinstance(v, str) and v in table else v

    bad_values = [
        ("'abc'", "abc"),
        ("None", None),
        ("[1, 'a']", [1, "a"]),
        ("2-D", "2-D"),
        ("17 values", "17 values"),
        ("[nan]", [NAN]),
        ("[inf]", [INF]),
        ("set", "set"),
        ("dict", "dict"),
        ("True", True),
        ("[True, False]", [True, False]),
        ("b'abc'", b"abc"),
        ("[1e300]", [1e300]),
        ("nan", NAN),
        ("complex(1, nan)", complex(1, NAN)),
        ("object array", "object array"),
    ]
    match_values = r"value|slot|nan|finite|infinit|number|large|fit|dimension|dtype"
    for method in ("encode", "encrypt"):
        _bad_args(
            cases,
            f"ctx.{method}(values)",
            lambda v, m=method: getattr(ctx(), m)(values_of(v)),
            bad_values,
            match_values,
        )
        _bad_args(
            cases,
            f"ctx.{method}(level)",
            lambda v, m=method: getattr(ctx(), m)([0.5], level=v),
            [
                ("-1", -1),
                ("3", 3),
                ("1.5", 1.5),
                ("True", True),
                ("'1'", "1"),
                ("2**70", 2**70),
                ("nan", NAN),
            ],
            r"level",
        )
        _bad_args(
            cases,
            f"ctx.{method}(scale)",
            lambda v, m=method: getattr(ctx(), m)([0.5], scale=v),
            [
                ("0", 0),
                ("-1", -1.0),
                ("nan", NAN),
                ("inf", INF),
                ("True", True),
                ("'2'", "2"),
                ("0.5", 0.5),
                ("1e308", 1e308),
                ("None-like []", []),
            ],
            r"scale|large|fit",
        )

    def roundtrip(kind: str) -> Result:
        f = fx()
        np = f.np
        v = {
            "float32 array": np.float32(f.rvals),
            "list of complex": list(f.vals),
            "scalar 0.5": 0.5,
            "tuple": tuple(f.rvals),
            "int array": np.arange(4),
            "level=np.int64(1)": f.vals,
        }[kind]
        want = np.full(16, 0.5) if kind == "scalar 0.5" else np.asarray(v, dtype=complex)
        level = np.int64(1) if kind.startswith("level") else None
        return succeed(
            lambda: f.ctx.decode(f.ctx.encode(v, level=level)),
            lambda got: None if slot_bits(got, want) > 20 else f"{slot_bits(got, want):.1f} bits",
        )

    for kind in (
        "float32 array",
        "list of complex",
        "scalar 0.5",
        "tuple",
        "int array",
        "level=np.int64(1)",
    ):
        cases.append(Case(f"encode/decode {kind} (valid)", functools.partial(roundtrip, kind)))

    def big_q() -> Result:
        f = fx()
        params = f.ckks.Params(n=16, q_bits=(60,) * 18, p_bits=(60,), scale_bits=40, insecure=True)
        c = f.ckks.Context(params, seed=1)
        want = f.rvals[:8]
        return succeed(
            lambda: c.decode(c.encode(want)),
            lambda got: None if slot_bits(got, want) > 20 else f"{slot_bits(got, want):.1f} bits",
        )

    cases.append(Case("encode at a level whose Q exceeds 2^1024 (valid)", big_q))

    def other_pt(kind: str) -> Any:
        f = fx()
        if kind == "other n":
            p = f.ckks.Params(n=64, q_bits=(40, 30, 30), p_bits=(45,), scale_bits=30, insecure=True)
        else:
            p = f.ckks.Params(n=32, q_bits=(40, 35, 35), p_bits=(45,), scale_bits=30, insecure=True)
        c = f.ckks.Context(p, seed=2)
        return c.encode([0.5] * 4), c

    for kind in ("other n", "other moduli"):
        for op in ("ct + pt", "ct * pt", "encrypt(pt)"):

            def use_other(kind: str = kind, op: str = op) -> Result:
                f = fx()
                pt, _ = other_pt(kind)
                call = {
                    "ct + pt": lambda: f.ctx.decrypt(f.ct + pt),
                    "ct * pt": lambda: f.ctx.decrypt(f.ct * pt),
                    "encrypt(pt)": lambda: f.ctx.decrypt(f.ctx.encrypt(pt)),
                }[op]
                return refuse(call, r"param|ring|context|\bn\b|moduli")

            cases.append(Case(f"plaintext of {kind}: {op}", use_other))

    def decrypt_other() -> Result:
        f = fx()
        _, c = other_pt("other moduli")
        return refuse(lambda: f.ctx.decrypt(c.encrypt([0.5])), r"context|param|key")

    cases.append(Case("ctx.decrypt(ciphertext of other params)", decrypt_other))

    for label, call in [
        ("ckks.decode(3)", lambda: fx().ckks.decode(3)),
        ("ckks.decrypt(3)", lambda: fx().ckks.decrypt(3)),
        ("ckks.decrypt(None)", lambda: fx().ckks.decrypt(None)),
        ("ckks.decode(ct)", lambda: fx().ckks.decode(fx().ct)),
        ("ctx.decode(ct)", lambda: ctx().decode(fx().ct)),
        ("ctx.decrypt(pt)", lambda: ctx().decrypt(fx().pt)),
        ("ckks.decrypt('ct')", lambda: fx().ckks.decrypt("ct")),
    ]:
        cases.append(
            Case(label, functools.partial(refuse, call, r"Plaintext|Ciphertext|decode|decrypt"))
        )

    # rotations and keys
    _bad_args(
        cases,
        "ctx.rotate(ct, steps)",
        lambda v: ctx().decrypt(ctx().rotate(fx().ct, v)),
        [("1.5", 1.5), ("'1'", "1"), ("True", True), ("None", None), ("nan", NAN), ("1.0", 1.0)],
        r"step|rotat",
    )
    for label, steps in [("1", 1), ("-1", -1), ("np.int64(2)", 2), ("17 (wraps)", 17)]:

        def rot(steps: int = steps, label: str = label) -> Result:
            f = fx()
            value = f.np.int64(steps) if label.startswith("np") else steps
            want = f.np.roll(f.vals, -steps)
            return succeed(lambda: f.ctx.rotate(f.ct, value), decrypts_to(want))

        cases.append(Case(f"ctx.rotate(ct, {label}) (valid)", rot))
    _bad_args(
        cases,
        "ctx.rotation_key(steps)",
        lambda v: ctx().rotation_key(v),
        [("1.7", 1.7), ("'1'", "1"), ("True", True), ("None", None), ("nan", NAN), ("2.0", 2.0)],
        r"step|rotat",
    )
    _bad_args(
        cases,
        "ctx.galois_key(g)",
        lambda v: ctx().galois_key(v),
        [("5.0", 5.0), ("'5'", "5"), ("True", True), ("4 (even)", 4), ("None", None), ("0", 0)],
        r"galois|\bg\b|odd|element",
    )

    # arithmetic with numbers and arrays
    def ct_op(op: str, v: Any) -> Any:
        f = fx()
        ct = f.ct
        out = {"+": lambda: ct + v, "*": lambda: ct * v, "-": lambda: ct - v}[op]()
        return f.ctx.decrypt(out)

    bad_numbers = [
        ("nan", NAN),
        ("inf", INF),
        ("-inf", -INF),
        ("1e300", 1e300),
        ("'x'", "x"),
        ("None", None),
        ("[1, nan]", [1, NAN]),
        ("17 values", "17"),
        ("complex(1, nan)", complex(1, NAN)),
        ("b'x'", b"x"),
        ("{1: 2}", {1: 2}),
    ]
    for op in ("+", "*", "-"):
        _bad_args(
            cases,
            f"ct {op} x",
            lambda v, op=op: ct_op(op, fx().np.ones(17) if v == "17" else v),
            bad_numbers,
            r"nan|finite|infinit|large|fit|value|number|slot|Ciphertext|operand|1e\+?300|scale",
        )
    for label, v in [("True", True), ("False", False)]:
        cases.append(
            Case(
                f"ct * {label}",
                functools.partial(refuse, lambda v=v: ct_op("*", v), r"bool|Ciphertext|True|False"),
            )
        )

    def ct_good(kind: str) -> Result:
        f = fx()
        np = f.np
        ct, vals = f.ct, f.vals
        call, want = {
            "np.ones(16) * ct": (lambda: np.ones(16) * ct, vals),
            "np.arange(16) * ct": (lambda: np.arange(16) * ct, vals * np.arange(16)),
            "ct * np.ones(16)": (lambda: ct * np.ones(16), vals),
            "np.ones(16) + ct": (lambda: np.ones(16) + ct, vals + 1),
            "ct + np.ones(4)": (lambda: ct + np.ones(4), vals + np.r_[np.ones(4), np.zeros(12)]),
            "2 * ct": (lambda: 2 * ct, 2 * vals),
            "0.5 * ct": (lambda: 0.5 * ct, 0.5 * vals),
            "[1, 2] * ct": (lambda: [1, 2] * ct, vals * np.r_[[1, 2], np.zeros(14)]),
            "np.float64(2) * ct": (lambda: np.float64(2) * ct, 2 * vals),
            "np.int64(3) * ct": (lambda: np.int64(3) * ct, 3 * vals),
            "ct + 1j": (lambda: ct + 1j, vals + 1j),
            "ct - 0.25": (lambda: ct - 0.25, vals - 0.25),
            "1 - ct": (lambda: 1 - ct, 1 - vals),
        }[kind]
        return either(call, r"Ciphertext|ndarray|operand", decrypts_to(want, bits=12))

    for kind in (
        "np.ones(16) * ct",
        "np.arange(16) * ct",
        "ct * np.ones(16)",
        "np.ones(16) + ct",
        "ct + np.ones(4)",
        "2 * ct",
        "0.5 * ct",
        "[1, 2] * ct",
        "np.float64(2) * ct",
        "np.int64(3) * ct",
        "ct + 1j",
        "ct - 0.25",
        "1 - ct",
    ):
        cases.append(Case(f"{kind} (Ciphertext expected)", functools.partial(ct_good, kind)))

    # ckks.multiply flags and operands
    def mult(**kw: Any) -> Any:
        f = fx()
        b = kw.pop("b", f.ct)
        return f.ctx.decrypt(f.ckks.multiply(f.ct, b, **kw))

    for flag in ("relinearize", "rescale"):
        _bad_args(
            cases,
            f"ckks.multiply({flag})",
            lambda v, fl=flag: mult(**{fl: v}),
            [("'no'", "no"), ("2", 2), ("'False'", "False")],
            flag,
        )
    _bad_args(
        cases,
        "ckks.multiply(a)",
        lambda v: fx().ckks.multiply(v, fx().ct),
        [("3", 3), ("None", None), ("pt", "pt")],
        r"Ciphertext|multiply",
    )
    cases[-1].run = functools.partial(
        refuse, lambda: fx().ckks.multiply(fx().pt, fx().ct), r"Ciphertext|multiply"
    )

    # at_level and hand-made values
    _bad_args(
        cases,
        "ct.at_level(level)",
        lambda v: fx().ctx.decrypt(fx().ct.at_level(v)),
        [("-1", -1), ("1.5", 1.5), ("'0'", "0"), ("True", True), ("5", 5), ("None", None)],
        r"level",
    )

    def hand_made(kind: str) -> Any:
        f = fx()
        ct, ckks = f.ct, f.ckks
        p0, p1 = ct.parts
        other = f.ckks.Params(n=64, q_bits=(40, 30, 30), p_bits=(45,), scale_bits=30, insecure=True)
        made = {
            "one part": lambda: ckks.Ciphertext((p0,), ct.scale, ct.level, False, f.ctx),
            "four parts": lambda: ckks.Ciphertext(
                (p0, p1, p0, p1), ct.scale, ct.level, False, f.ctx
            ),
            "a str part": lambda: ckks.Ciphertext((p0, "x"), ct.scale, ct.level, False, f.ctx),
            "scale 'x'": lambda: ckks.Ciphertext((p0, p1), "x", ct.level, False, f.ctx),
            "scale nan": lambda: ckks.Ciphertext((p0, p1), NAN, ct.level, False, f.ctx),
            "level -1": lambda: ckks.Ciphertext((p0, p1), ct.scale, -1, False, f.ctx),
            "level 9": lambda: ckks.Ciphertext((p0, p1), ct.scale, 9, False, f.ctx),
            "parts of another ring": lambda: ckks.Ciphertext(
                (poly_a(), poly_a()), ct.scale, ct.level, False, f.ctx
            ),
            "context 'ctx'": lambda: ckks.Ciphertext((p0, p1), ct.scale, ct.level, False, "ctx"),
            "params of n=64 context": lambda: ckks.Ciphertext(
                (p0, p1), ct.scale, ct.level, False, ckks.Context(other, seed=1)
            ),
        }[kind]
        return f.ctx.decrypt(made())

    for kind in (
        "one part",
        "four parts",
        "a str part",
        "scale 'x'",
        "scale nan",
        "level -1",
        "level 9",
        "parts of another ring",
        "context 'ctx'",
        "params of n=64 context",
    ):
        cases.append(
            Case(
                f"Ciphertext(...) with {kind}, decrypted",
                functools.partial(
                    refuse,
                    functools.partial(hand_made, kind),
                    r"part|scale|level|ring|context|Poly|Ciphertext|param",
                ),
            )
        )

    def pt_made(kind: str) -> Any:
        f = fx()
        pt, ckks = f.pt, f.ckks
        made = {
            "poly 'x'": lambda: ckks.Plaintext("x", pt.scale, pt.level, False, f.ctx),
            "poly of another ring": lambda: ckks.Plaintext(
                poly_a(), pt.scale, pt.level, False, f.ctx
            ),
            "scale -1": lambda: ckks.Plaintext(pt.poly, -1.0, pt.level, False, f.ctx),
            "level 7": lambda: ckks.Plaintext(pt.poly, pt.scale, 7, False, f.ctx),
        }[kind]
        return f.ctx.decode(made())

    for kind in ("poly 'x'", "poly of another ring", "scale -1", "level 7"):
        cases.append(
            Case(
                f"Plaintext(...) with {kind}, decoded",
                functools.partial(
                    refuse, functools.partial(pt_made, kind), r"poly|scale|level|ring|Plaintext"
                ),
            )
        )

    # precision_bits
    for label, got, want in [
        ("(3,) and (2,)", [1, 2, 3], [1, 2]),
        ("(2,) and (1,)", [1, 2], [1]),
        ("(1, 2) and (2,)", [[1, 2]], [1, 2]),
        ("(4,) and (2, 2)", [1, 2, 3, 4], [[1, 2], [3, 4]]),
        ("empty", [], []),
        ("strings", "ab", "cd"),
        ("None", None, [1]),
    ]:
        cases.append(
            Case(
                f"precision_bits shapes {label}",
                functools.partial(
                    refuse,
                    lambda g=got, w=want: fx().ckks.precision_bits(g, w),
                    r"got|expected|precision_bits|shape",
                ),
            )
        )
    # with NumPy's own message "operands could not be broadcast together with shapes", the
    # pattern above would pass; require the argument names instead
    for c in cases[-7:]:
        c.run = functools.partial(_precision_named, c.run)
    return cases


def _precision_named(run: Callable[[], Result]) -> Result:
    outcome, detail = run()
    if outcome == CLEAR and not re.search(r"\bgot\b|\bexpected\b|precision_bits", detail):
        return CRASH, f"unclear message: {detail}"
    return outcome, detail


# --- environment variables (each in its own process) ------------------------------------------


def env_probe(var: str, honored: str | None = None) -> Result:
    """Import Ren, realize a small cpu program and replay a jitted one under a bad value of ``var``.

    Right: a ``ValueError`` naming ``var`` (at import or at first use), or, for a value that means
    something, the behaviour it means (``honored``: ``"ccache off"``, ``"check on"``).
    """
    calls = {"verify": 0}
    try:
        import ren
        from ren import Poly, RingSpec, ntt_primes

        if honored == "check on":
            import ren.engine.schedule as sched

            if hasattr(sched, "verify"):
                real = sched.verify

                def spy(*a: Any, **k: Any) -> Any:
                    calls["verify"] += 1
                    return real(*a, **k)

                sched.verify = spy
        R = RingSpec(16, ntt_primes(16, 28, 2))
        coeffs = [3 * i + 1 for i in range(16)]
        a = Poly(coeffs, R, "cpu")
        got = (a * a + a).tolist()
        Poly(coeffs, R).tolist()  # on the default device ($REN_DEVICE)
        step = ren.jit(lambda x: x * x + x)
        step(a)
        replayed = step(Poly(coeffs, R, "cpu")).tolist()
    except Exception as e:
        return classify_error(e, re.escape(var))
    want = [(x + y) % R.Q for x, y in zip(negacyclic(coeffs, coeffs, R.Q), coeffs, strict=True)]
    if got != want or replayed != want:
        return SILENT, f"{var}={os.environ.get(var)!r} accepted and the answer is wrong"
    if honored == "ccache off":
        cache = Path(os.environ["REN_CACHE_DIR"])
        kept = list(cache.glob("*.so")) if cache.is_dir() else []
        if not kept:
            return CLEAR, "honored: nothing kept in REN_CACHE_DIR"
        return SILENT, f"{var}={os.environ[var]!r} accepted as 'on': {len(kept)} libraries kept"
    if honored == "check on" and calls["verify"]:
        return CLEAR, f"honored: the verifier ran {calls['verify']} times"
    return SILENT, f"{var}={os.environ.get(var)!r} accepted without a word"


def dump_probe() -> Result:
    """``REN_DUMP`` at an unusable path: a ``ValueError`` or one warning naming it."""
    Path(os.environ["TRIAL_TMP"], "a-regular-file").write_text("not a directory\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = env_probe("REN_DUMP")
    named = [w for w in caught if "REN_DUMP" in str(w.message)]
    if result[0] == SILENT and named:
        return CLEAR, f"warned: {short(named[0].message)}"
    if result[0] == SILENT:
        return SILENT, "an unusable REN_DUMP path is ignored without a word"
    return result


def _environment_cases() -> list[Case]:
    cases: list[Case] = []
    tmp = os.environ.get("TRIAL_TMP", tempfile.gettempdir())
    afile = os.path.join(tmp, "a-regular-file")
    plain = [
        ("REN_THREADS", "abc", None),
        ("REN_THREADS", "0", None),
        ("REN_THREADS", "-4", None),
        ("REN_THREADS", "2.5", None),
        ("REN_DEBUG", "abc", None),
        ("REN_DEBUG", "1.5", None),
        ("REN_CHECK", "2", None),
        ("REN_VALIDATE", "maybe", None),
        ("REN_NO_PLAN", "maybe", None),
        ("REN_POISON", "maybe", None),
        ("REN_JIT_GRAPH", "maybe", None),
        ("REN_DEVICE", "gpu", None),
        ("REN_CCACHE", "false", "ccache off"),
        ("REN_CCACHE", "off", "ccache off"),
        ("REN_CHECK", "yes", "check on"),
        ("REN_CHECK", "true", "check on"),
    ]
    for var, value, honored in plain:
        env = {var: value}
        if var == "REN_CCACHE":  # a cache of its own, to see whether anything is kept in it
            env["REN_CACHE_DIR"] = os.path.join(tmp, f"ccache-{value}")
        cases.append(
            Case(
                f"{var}={value!r}",
                functools.partial(env_probe, var, honored),
                solo=True,
                env=env,
            )
        )
    for label, path in [
        ("under a regular file", os.path.join(afile, "dump")),
        ("a regular file", afile),
        ("/proc/self/ren-dump", "/proc/self/ren-dump"),
    ]:
        cases.append(Case(f"REN_DUMP {label}", dump_probe, solo=True, env={"REN_DUMP": path}))
    return cases


# ---------------------------------------------------------------------------------------------
# crafted blobs


@dataclasses.dataclass
class Blob:
    """A Ren CKKS blob taken apart (see ``pack`` in ``ren/schemes/rlwe/bytes.py``)."""

    magic: bytes
    version: int
    kind: bytes
    header: bytes
    payloads: list[bytes]

    @classmethod
    def parse(cls, blob: bytes) -> Blob:
        """Take a valid blob apart."""
        version, klen = struct.unpack_from("<HB", blob, 8)
        pos = 11
        kind = blob[pos : pos + klen]
        pos += klen
        (hlen,) = struct.unpack_from("<I", blob, pos)
        header = blob[pos + 4 : pos + 4 + hlen]
        pos += 4 + hlen
        (count,) = struct.unpack_from("<I", blob, pos)
        pos += 4
        payloads = []
        for _ in range(count):
            (size,) = struct.unpack_from("<Q", blob, pos)
            payloads.append(blob[pos + 8 : pos + 8 + size])
            pos += 8 + size
        assert pos == len(blob) - 32, "the blob format changed: trial.py cannot take it apart"
        return cls(blob[:8], version, kind, header, payloads)

    def pack(
        self,
        header: bytes | None = None,
        payloads: list[bytes] | None = None,
        version: int | None = None,
        kind: bytes | None = None,
        count: int | None = None,
    ) -> bytes:
        """The blob with the given parts replaced, checksummed again."""
        header = self.header if header is None else header
        payloads = self.payloads if payloads is None else payloads
        kind = self.kind if kind is None else kind
        version = self.version if version is None else version
        count = len(payloads) if count is None else count
        parts = [self.magic, struct.pack("<HB", version, len(kind)), kind]
        parts += [struct.pack("<I", len(header)), header, struct.pack("<I", count)]
        for p in payloads:
            parts += [struct.pack("<Q", len(p)), p]
        body = b"".join(parts)
        return body + hashlib.sha256(body).digest()


class Raw(str):
    """JSON text put into a header as it is (a deep nest, 5000 digits, NaN)."""


def dump_header(header: Any) -> bytes:
    """``header`` as Ren writes it (sorted keys), with ``Raw`` values spliced in as text."""
    raws: list[str] = []

    def mark(obj: Any) -> Any:
        if isinstance(obj, Raw):
            raws.append(str(obj))
            return f"\x00RAW{len(raws) - 1}\x00"
        if isinstance(obj, dict):
            return {k: mark(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [mark(v) for v in obj]
        return obj

    text = json.dumps(mark(header), sort_keys=True)
    for i, raw in enumerate(raws):
        text = text.replace(json.dumps(f"\x00RAW{i}\x00"), raw)
    return text.encode()


@functools.cache
def valid_blobs() -> dict[str, bytes]:
    """One valid blob of each kind, written by the Ren under test (deterministic seeds)."""
    f = fx()
    ckks = f.ckks
    ctx = blob_ctx()
    ct = ctx.encrypt(f.vals)
    ctx.rotation_key(1)
    ctx.galois_key(2 * ctx.params.n - 1)
    secure = ckks.Params(n=8192, q_bits=(60, 40, 40), p_bits=(60,))
    return {
        "params": ctx.params.to_bytes(),
        "params (secure)": secure.to_bytes(),
        "plaintext": ctx.encode(f.vals).to_bytes(),
        "ciphertext": ct.to_bytes(),
        "ciphertext (3 parts)": ckks.multiply(ct, ct, relinearize=False, rescale=False).to_bytes(),
        "evaluation keys": ctx.evaluation_keys().to_bytes(),
        "secret key": ctx.export_secret_key(),
    }


@functools.cache
def blob_ctx() -> Any:
    """The context the value blobs are written and read in (the same keys in every worker)."""
    f = fx()
    ctx = f.ckks.Context(f.params, seed=5)
    ctx.keygen()
    return ctx


def opt_in(reader: Callable[..., Any]) -> dict[str, bool]:
    """``{"insecure": True}`` when ``reader`` takes the opt-in to insecure parameters, else ``{}``.

    The value blobs are made with insecure (tiny) parameters, so a reader that asks for the opt-in
    gets it, as a user of such parameters would give it.
    """
    return {"insecure": True} if "insecure" in inspect.signature(reader).parameters else {}


def load_blob(label: str, blob: bytes) -> Any:
    """Read ``blob`` as the user would for its kind; returns what was loaded."""
    ckks, ctx = fx().ckks, blob_ctx()
    if label == "params (secure)":
        return ckks.Params.from_bytes(blob)
    if label == "params":
        return ckks.Params.from_bytes(blob, **opt_in(ckks.Params.from_bytes))
    if label == "plaintext":
        return ckks.Plaintext.from_bytes(blob, ctx).decode()
    if label.startswith("ciphertext"):
        return ctx.decrypt(ckks.Ciphertext.from_bytes(blob, ctx))
    if label == "evaluation keys":
        keys = ckks.EvaluationKeys.from_bytes(blob, **opt_in(ckks.EvaluationKeys.from_bytes))
        server = ckks.Context(keys.params, keys=keys)
        return server
    if label == "secret key":
        return ckks.Context(ctx.params, secret_key=blob)
    raise AssertionError(label)


BLOB_MATCH = (
    r"blob|header|param|key|level|scale|polynom|moduli|sigma|version|checksum|kind|galois|"
    r"fingerprint|payload|secret|\bn\b|q_bits|p_bits|dnum|real|domain|insecure|hamming|ternary|"
    r"secur|malformed|field|limb|residue|words|bytes"
)


def blob_refused(label: str, blob: bytes, benign: bool = False) -> Result:
    """A mutated blob must be a ``ValueError`` (``benign``: accepting it is right too)."""
    try:
        loaded = load_blob(label, blob)
    except RecursionError as e:
        return CRASH, f"RecursionError: {short(e)}"
    except Exception as e:
        return classify_error(e, BLOB_MATCH, (ValueError,))
    if benign:
        return CLEAR, "accepted (a harmless change)"
    return SILENT, f"accepted: {_describe(loaded)}"


def blob_loads(label: str) -> Result:
    """The unchanged blob must load."""
    return succeed(lambda: load_blob(label, valid_blobs()[label]), lambda _: None)


#: the kinds whose nested ``params`` fields are mutated one by one (every kind reads them with
#: the same code, so the others get only the whole ``params`` mutated)
NESTED_PARAMS_IN = ("params", "params (secure)", "ciphertext")

#: values that fail in the JSON parser itself, whatever the field: tried at the top level only
PARSE_LEVEL = ("5000 digits", "a list nested 50000 deep", "an object nested 50000 deep")

#: wrong JSON values for a header field: (label, value); a callable makes it from the original
BAD_JSON: list[tuple[str, Any]] = [
    ("null", None),
    ("true", True),
    ("false", False),
    ("0", 0),
    ("-1", -1),
    ("0.5", 0.5),
    ("as a float", lambda o: float(o) if isinstance(o, int) and not isinstance(o, bool) else ...),
    ("as a string", lambda o: json.dumps(o) if not isinstance(o, str) else ...),
    ("'x'", "x"),
    ("''", ""),
    ("[]", []),
    ("[1]", [1]),
    ("{}", {}),
    ("2^70", 2**70),
    ("10^400", 10**400),
    ("5000 digits", Raw("9" * 5000)),
    ("NaN", Raw("NaN")),
    ("Infinity", Raw("Infinity")),
    ("-Infinity", Raw("-Infinity")),
    ("1e400", Raw("1e400")),
    ("a list nested 50000 deep", Raw("[" * 50000 + "]" * 50000)),
    ("an object nested 50000 deep", Raw('{"a":' * 50000 + "1" + "}" * 50000)),
]


def maybe_valid(key: Any, value: Any, original: Any, secure: bool) -> bool:
    """Whether ``value`` for header field ``key`` might be a legitimate value (then not tried)."""
    if isinstance(value, Raw):
        return False
    if value == original and type(value) is type(original):
        return True
    if key in ("real", "insecure") and isinstance(value, bool):
        return True
    if key in ("dnum", "hamming_weight") and value is None:
        return True
    if key == "domain" and value in ("coeff", "ntt"):
        return True
    if (
        key == "sigma"
        and not secure
        and isinstance(value, int | float)
        and not isinstance(value, bool)
    ):
        return 0 < value < 1e6  # insecure parameters may take any positive sigma
    return key == "galois element" and isinstance(value, int) and value % 2 == 1


def header_paths(header: Any) -> list[tuple[tuple, Any, Any]]:
    """``(path, key name, original value)`` for every field worth mutating, in a fixed order."""
    out: list[tuple[tuple, Any, Any]] = []

    def walk(obj: Any, path: tuple) -> None:
        if isinstance(obj, dict):
            for k in sorted(obj):
                out.append(((*path, k), k, obj[k]))
                walk(obj[k], (*path, k))
        elif isinstance(obj, list) and obj:
            key = path[-1] if path else None
            picks = sorted({0, len(obj) - 1})
            for i in picks:
                name = "galois element" if key == "galois" else f"{key}[]"
                out.append(((*path, i), name, obj[i]))
                if isinstance(obj[i], dict):
                    walk(obj[i], (*path, i))

    walk(header, ())
    return out


def _set(header: Any, path: tuple, value: Any, delete: bool = False) -> Any:
    out = copy.deepcopy(header)
    obj = out
    for p in path[:-1]:
        obj = obj[p]
    if delete:
        del obj[path[-1]]
    else:
        obj[path[-1]] = value
    return out


def _show_path(path: tuple) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)[1:] or "header"


def blob_cases() -> list[Case]:
    """Every valid blob loads; every mutation of one is a ``ValueError``."""
    cases: list[Case] = []
    blobs = valid_blobs()
    for label, blob in blobs.items():
        cases.append(Case(f"{label}: unchanged (loads)", functools.partial(blob_loads, label)))
        parts = Blob.parse(blob)
        header = json.loads(parts.header)
        secure = label == "params (secure)"

        def add(
            name: str, make: Callable[[], bytes], benign: bool = False, lb: str = label
        ) -> None:
            cases.append(
                Case(f"{lb}: {name}", lambda: blob_refused(lb, make(), benign), timeout=60)
            )

        # every field: deleted, or given a wrong value
        for path, key, original in header_paths(header):
            if path[0] == "params" and len(path) > 1 and label not in NESTED_PARAMS_IN:
                continue
            where = _show_path(path)
            if not isinstance(path[-1], int):
                add(
                    f"{where} missing",
                    lambda p=path, b=parts, h=header: b.pack(dump_header(_set(h, p, None, True))),
                )
            for vlabel, value in BAD_JSON:
                if vlabel in PARSE_LEVEL and len(path) > 1:
                    continue
                v = value(original) if callable(value) else value
                if v is ... or maybe_valid(key, v, original, secure):
                    continue
                add(
                    f"{where} = {vlabel}",
                    lambda p=path, v=v, b=parts, h=header: b.pack(dump_header(_set(h, p, v))),
                )
        # the header as a whole
        for hlabel, text in [
            ("header is a list", b"[]"),
            ("header is a number", b"1"),
            ("header is a string", b'"x"'),
            ("header is null", b"null"),
            ("header is {}", b"{}"),
            ("header is not JSON", b"{"),
            ("header is not UTF-8", b'{"\xff\xfe": 1}'),
            ("header nested 100000 deep", b"[" * 100000 + b"]" * 100000),
        ]:
            add(hlabel, lambda t=text, b=parts: b.pack(t))
        add(
            "an extra key",
            lambda b=parts, h=header: b.pack(dump_header({**h, "zz_extra": 1})),
            benign=True,
        )
        # framing and payloads
        add("version 0", lambda b=parts: b.pack(version=0))
        add("version + 1", lambda b=parts: b.pack(version=b.version + 1))
        add("version 65535", lambda b=parts: b.pack(version=65535))
        add("kind 'plaintext!'", lambda b=parts: b.pack(kind=b"plaintext!"))
        add("count says one more payload", lambda b=parts: b.pack(count=len(b.payloads) + 1))
        if parts.payloads:
            add("count says one payload fewer", lambda b=parts: b.pack(count=len(b.payloads) - 1))
            add("last payload dropped", lambda b=parts: b.pack(payloads=b.payloads[:-1]))
            add("no payloads", lambda b=parts: b.pack(payloads=[]))
            add("a payload added", lambda b=parts: b.pack(payloads=[*b.payloads, b.payloads[0]]))
            add(
                "first payload 8 bytes short",
                lambda b=parts: b.pack(payloads=[b.payloads[0][:-8], *b.payloads[1:]]),
            )
            add(
                "first payload 8 bytes long",
                lambda b=parts: b.pack(payloads=[b.payloads[0] + bytes(8), *b.payloads[1:]]),
            )
            add(
                "first payload 3 bytes long",
                lambda b=parts: b.pack(payloads=[b.payloads[0] + bytes(3), *b.payloads[1:]]),
            )
            add(
                "words >= q (all 0xFF)",
                lambda b=parts: b.pack(payloads=[b"\xff" * len(b.payloads[0]), *b.payloads[1:]]),
            )
        # random damage without a new checksum (must fail the checksum or the framing)
        rng = random.Random(f"blob-damage-{label}")
        for i in range(12):
            pos = rng.randrange(len(blob))
            bit = 1 << rng.randrange(8)
            add(
                f"bit flip {i} at byte {pos}",
                lambda p=pos, x=bit, b=blob: b[:p] + bytes([b[p] ^ x]) + b[p + 1 :],
            )
        for cut in (rng.randrange(len(blob)) for _ in range(4)):
            add(f"truncated to {cut} bytes", lambda c=cut, b=blob: b[:c])
        add("32 bytes appended", lambda b=blob: b + bytes(32))
    cases += _secret_key_blob_cases()
    cases += _semantic_blob_cases()
    return cases


def _poly_payload(kind: str) -> bytes:
    """A secret-key payload (NTT form, plain residues, ``<u8``) for a crafted key."""
    f = fx()
    ring = blob_ctx().params.key_ring
    n = ring.n
    coeffs = {
        "all 2": [2] * n,
        "zero": [0] * n,
        "one coefficient 2": [2] + [1, 0, -1] * (n // 3) + [0] * (n - 1 - 3 * (n // 3)),
        "coefficients up to q/2": [ring.moduli[0] // 2 - i for i in range(n)],
    }[kind]
    limbs = f.Poly(coeffs, ring).ntt().limbs()
    return f.np.asarray(limbs, dtype="<u8").tobytes()


def _secret_key_blob_cases() -> list[Case]:
    cases = []
    for kind in ("all 2", "zero", "one coefficient 2", "coefficients up to q/2"):

        def make(kind: str = kind) -> bytes:
            parts = Blob.parse(valid_blobs()["secret key"])
            return parts.pack(payloads=[_poly_payload(kind)])

        cases.append(
            Case(
                f"secret key: a key with {kind} (not ternary or zero)",
                lambda m=make: blob_refused("secret key", m()),
            )
        )
    return cases


def edited_blob(label: str, field: str, value: Any) -> bytes:
    """The valid blob ``label`` with ``field`` set to ``value`` (a parameter, or ``galois``)."""
    parts = Blob.parse(valid_blobs()[label])
    header = json.loads(parts.header)
    if field == "galois":  # the first entries of the list replaced, its length kept
        old = header["galois"]
        header["galois"] = (value + old[len(value) :])[: len(old)]
    else:
        header.get("params", header)[field] = value
    return parts.pack(dump_header(header))


def _semantic_blob_cases() -> list[Case]:
    """Headers that are well formed but say something Ren must not accept."""
    edits = [
        ("params (secure)", "sigma 1e-9 (no opt-in)", "sigma", 1e-9),
        ("params (secure)", "sigma 0.5 (no opt-in)", "sigma", 0.5),
        ("params (secure)", "sigma 3.0 (no opt-in)", "sigma", 3.0),
        ("params (secure)", "hamming_weight 64 (no opt-in)", "hamming_weight", 64),
        ("evaluation keys", "an even Galois element", "galois", [None, 4]),
        ("evaluation keys", "a float Galois element", "galois", [None, 5.0]),
        ("evaluation keys", "a str Galois element", "galois", [None, "5"]),
        ("evaluation keys", "a huge Galois element", "galois", [None, 2**70 + 1]),
        ("evaluation keys", "no relinearization key first", "galois", [5, None]),
        ("evaluation keys", "a repeated Galois element", "galois", [None, 5, 5]),
    ]
    for label in ("params", "ciphertext", "secret key", "evaluation keys"):
        edits.append((label, "insecure false on insecure parameters", "insecure", False))
    return [
        Case(
            f"{label}: {name}",
            lambda lb=label, f=field, v=value: blob_refused(lb, edited_blob(lb, f, v)),
        )
        for label, name, field, value in edits
    ]


# ---------------------------------------------------------------------------------------------
# cache faults (each runs its programs in child processes)

#: A child process: build a few cpu programs and check them against the python backend.
CACHE_CHILD = r"""
import json, os, shutil, sys, threading, time, warnings
if sys.argv[1]:
    sys.path.insert(0, sys.argv[1])
specs = json.loads(sys.argv[2])
saboteur = sys.argv[3] if len(sys.argv) > 3 else ""
out = {"ok": False, "warnings": [], "error": None, "wrong": None}
stop = threading.Event()
def sabotage():
    while not stop.is_set():
        shutil.rmtree(saboteur, ignore_errors=True)
        time.sleep(0.001)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        from ren import Poly, RingSpec, ntt_primes
        if saboteur:
            threading.Thread(target=sabotage, daemon=True).start()
        for n, bits, L, k in specs:
            R = RingSpec(n, ntt_primes(n, bits, L))
            xs = [(7 * i + k) % 1000 for i in range(n)]
            def prog(dev):
                a = Poly(xs, R, dev)
                return ((a * (k + 2) + a) * a).tolist()
            got, want = prog("cpu"), prog("python")
            if got != want:
                out["wrong"] = f"n={n} L={L}: cpu and python differ"
        out["ok"] = out["wrong"] is None
    except BaseException as e:
        out["error"] = f"{type(e).__name__}: {e}"[:300]
    stop.set()
out["warnings"] = [f"{w.category.__name__}: {w.message}"[:200] for w in caught]
print("RESULT " + json.dumps(out), flush=True)
"""

#: ring specs ``(n, bits, L, k)`` of a few distinct programs (each builds its own kernels)
SPECS_SMALL = [(16, 28, 2, 1)]
SPECS_MANY = [
    (n, bits, L, k)
    for k, (n, bits, L) in enumerate(
        (n, bits, L) for bits in (28, 50) for n in (16, 32, 64) for L in (1, 2)
    )
]


def run_child(
    cache: str | None, specs: list, env: dict | None = None, saboteur: str = "", timeout: float = 60
) -> dict:
    """Run ``CACHE_CHILD`` with ``REN_CACHE_DIR=cache``; its result, or a hang or a death."""
    child_env = {**os.environ, **(env or {})}
    if cache is not None:
        child_env["REN_CACHE_DIR"] = cache
    argv = [sys.executable, "-c", CACHE_CHILD, os.environ.get("TRIAL_REN", ""), json.dumps(specs)]
    if saboteur:
        argv.append(saboteur)
    try:
        proc = subprocess.run(
            argv,
            env=child_env,
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=_limit_memory,
        )
    except subprocess.TimeoutExpired:
        return {"hang": True}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"died": proc.returncode, "stderr": short(proc.stderr[-300:])}


def judge_child(out: dict, need_warning: bool) -> Result:
    """The outcome of a cache child: right answer (and a warning where one is needed)."""
    if out.get("hang"):
        return CRASH, "hang (the child did not finish in its time limit)"
    if "died" in out:
        code = out["died"]
        how = f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
        return CRASH, f"the child died ({how})"
    warned = [w for w in out["warnings"] if re.search(r"cache|REN_CACHE", w, re.IGNORECASE)]
    if out["error"]:
        return classify_error_text(out["error"], r"REN_CACHE|cache")
    if out["wrong"]:
        return SILENT, f"wrong answer: {out['wrong']}"
    if need_warning and not warned:
        return SILENT, "right answer, but the fault was not reported (no warning)"
    what = f"{len(warned)} warning(s): {short(warned[0], 100)}" if warned else "no warning"
    return CLEAR, f"right answer, {what}"


def classify_error_text(text: str, match: str) -> Result:
    """``classify_error`` for an exception reported as ``"Type: message"`` by a child."""
    kind, _, message = text.partition(": ")
    if kind in ("TypeError", "ValueError", "RenError", "CompileError", "JitError", "SpecError"):
        if re.search(match, message, re.IGNORECASE):
            return CLEAR, short(text)
        return CRASH, short(f"unclear message: {text}")
    return CRASH, short(text)


def _limit_memory() -> None:
    """Children get 4 GiB of address space: a runaway read fails instead of eating the machine."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def _case_dir(name: str) -> str:
    base = os.environ.get("TRIAL_TMP", tempfile.gettempdir())
    path = os.path.join(base, "cache-" + re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-"))
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def unusable_dir(name: str, kind: str) -> Result:
    """``REN_CACHE_DIR`` that cannot be used: one warning and a right answer."""
    d = _case_dir(name)
    afile = os.path.join(d, "file")
    Path(afile).write_text("not a directory\n")
    path = {
        "under a regular file": os.path.join(afile, "cache"),
        "a regular file": afile,
        "missing parents under a file": os.path.join(afile, "x", "y", "cache"),
        "/proc/self/ren-cache": "/proc/self/ren-cache",
        "/dev/null/cache": "/dev/null/cache",
        "a symlink to a regular file": os.path.join(d, "link"),
        "a dangling symlink loop": os.path.join(d, "loop"),
    }[kind]
    if kind == "a symlink to a regular file":
        os.symlink(afile, path)
    if kind == "a dangling symlink loop":
        os.symlink(path, path)
    return judge_child(run_child(path, SPECS_SMALL), need_warning=True)


def _entries(d: str, suffix: str) -> list[Path]:
    return sorted(p for p in Path(d).iterdir() if p.name.endswith(suffix))


def corrupt_entry(name: str, kind: str) -> Result:
    """Fill a cache, damage its entries, build again in a new process: right answer, no hang."""
    d = _case_dir(name)
    first = run_child(d, SPECS_SMALL)
    if not first.get("ok"):
        return CRASH, f"could not fill the cache: {short(first)}"
    sos, sums = _entries(d, ".so"), _entries(d, ".sum")
    if not sos or not sums:
        return CRASH, "harness: the cache holds no .so/.sum entries to damage"
    for so, summ in zip(sos, sums, strict=False):
        if kind == "a FIFO named like a .sum":
            summ.unlink()
            os.mkfifo(summ)
        elif kind == "a FIFO named like a .so":
            so.unlink()
            os.mkfifo(so)
        elif kind == "a directory named like a .sum":
            summ.unlink()
            summ.mkdir()
        elif kind == "a directory named like a .so":
            so.unlink()
            so.mkdir()
        elif kind == "a .sum linked to /dev/zero":
            summ.unlink()
            summ.symlink_to("/dev/zero")
        elif kind == "a .so linked to /dev/zero":
            so.unlink()
            so.symlink_to("/dev/zero")
        elif kind == "a .sum of invalid UTF-8":
            summ.write_bytes(b"\xff\xfe\xfd garbage")
        elif kind == "garbage .so, stale .sum":
            so.write_bytes(os.urandom(4096))
        elif kind == "forged: garbage .so, matching .sum":
            data = os.urandom(4096)
            so.write_bytes(data)
            summ.write_text(f"{len(data)} {hashlib.sha256(data).hexdigest()}")
        elif kind == "forged: truncated .so, matching .sum":
            data = so.read_bytes()[:1000]
            so.write_bytes(data)
            summ.write_text(f"{len(data)} {hashlib.sha256(data).hexdigest()}")
        elif kind == "forged: empty .so, matching .sum":
            so.write_bytes(b"")
            summ.write_text(f"0 {hashlib.sha256(b'').hexdigest()}")
        elif kind == "a dangling .so symlink":
            so.unlink()
            so.symlink_to(os.path.join(d, "nowhere.so"))
        elif kind == "leftover build folders and failed sources":
            (Path(d) / f".build-{so.stem}").mkdir()
            (Path(d) / f".build-{so.stem}" / "kernel.c").write_text("int x;\n")
            (Path(d) / (so.stem + ".failed.c")).write_text("not C\n")
    return judge_child(run_child(d, SPECS_SMALL, timeout=45), need_warning=False)


def deleted_during_build(name: str, seed: int) -> Result:
    """A thread deletes the cache again and again while kernels build: right answers, no error."""
    d = _case_dir(name)
    specs = [(n, bits, L, k + 100 * seed) for n, bits, L, k in SPECS_MANY[: 4 + seed]]
    return judge_child(run_child(d, specs, saboteur=d, timeout=120), need_warning=False)


def size_bound(name: str, mb: str) -> Result:
    """After many kernels, the cache holds at most ``REN_CACHE_MAX_MB`` (plus one entry)."""
    d = _case_dir(name)
    out = run_child(d, SPECS_MANY, env={"REN_CACHE_MAX_MB": mb}, timeout=180)
    outcome, detail = judge_child(out, need_warning=False)
    if outcome != CLEAR:
        return outcome, detail
    files = [p for p in Path(d).rglob("*") if p.is_file()]
    total = sum(p.stat().st_size for p in files)
    largest = max((p.stat().st_size for p in files), default=0)
    bound = float(mb) * 2**20
    if total <= bound + 2 * largest:
        return CLEAR, f"{total} bytes kept, bound {bound:.0f}"
    return SILENT, f"{total} bytes kept in {len(files)} files, over the bound of {bound:.0f} bytes"


def bad_max_mb(name: str, value: str) -> Result:
    """``REN_CACHE_MAX_MB`` with a bad value: a ``ValueError`` naming it."""
    d = _case_dir(name)
    out = run_child(d, SPECS_SMALL, env={"REN_CACHE_MAX_MB": value})
    if out.get("error"):
        return classify_error_text(out["error"], r"REN_CACHE_MAX_MB")
    outcome, detail = judge_child(out, need_warning=False)
    if outcome == CLEAR:
        return SILENT, f"REN_CACHE_MAX_MB={value!r} accepted without a word"
    return outcome, detail


def two_processes(name: str) -> Result:
    """Two processes fill one fresh cache with the same kernels at the same time."""
    d = _case_dir(name)
    results: list[dict] = [{}, {}]

    def go(i: int) -> None:
        results[i] = run_child(d, SPECS_MANY[:6])

    threads = [threading.Thread(target=go, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for out in results:
        outcome, detail = judge_child(out, need_warning=False)
        if outcome != CLEAR:
            return outcome, detail
    return CLEAR, "both right"


def cache_cases() -> list[Case]:
    """Faults in the compile cache."""
    cases: list[Case] = []
    for kind in (
        "under a regular file",
        "a regular file",
        "missing parents under a file",
        "/proc/self/ren-cache",
        "/dev/null/cache",
        "a symlink to a regular file",
        "a dangling symlink loop",
    ):
        name = f"REN_CACHE_DIR {kind}"
        cases.append(Case(name, functools.partial(unusable_dir, name, kind), timeout=120))
    for kind in (
        "a FIFO named like a .sum",
        "a FIFO named like a .so",
        "a directory named like a .sum",
        "a directory named like a .so",
        "a .sum linked to /dev/zero",
        "a .so linked to /dev/zero",
        "a .sum of invalid UTF-8",
        "garbage .so, stale .sum",
        "forged: garbage .so, matching .sum",
        "forged: truncated .so, matching .sum",
        "forged: empty .so, matching .sum",
        "a dangling .so symlink",
        "leftover build folders and failed sources",
    ):
        name = f"cache entry: {kind}"
        cases.append(Case(name, functools.partial(corrupt_entry, name, kind), timeout=150))
    for seed in range(4):
        name = f"cache deleted during a build (run {seed})"
        cases.append(Case(name, functools.partial(deleted_during_build, name, seed), timeout=180))
    for mb in ("0.1", "0.05"):
        name = f"REN_CACHE_MAX_MB={mb} after {len(SPECS_MANY)} programs"
        cases.append(Case(name, functools.partial(size_bound, name, mb), timeout=240))
    for value in ("abc", "-1", "0", "nan", "inf", "1e"):
        name = f"REN_CACHE_MAX_MB={value!r}"
        cases.append(Case(name, functools.partial(bad_max_mb, name, value), timeout=120))
    name = "two processes fill one cache at once"
    cases.append(Case(name, functools.partial(two_processes, name), timeout=240))

    def ccache_off() -> Result:
        d = _case_dir("ccache off")
        return judge_child(run_child(d, SPECS_SMALL, env={"REN_CCACHE": "0"}), False)

    cases.append(Case("REN_CCACHE=0 builds in a scratch folder", ccache_off, timeout=120))
    return cases


# ---------------------------------------------------------------------------------------------
# threads (each run in its own process)


def _threads(count: int, target: Callable[[int], None]) -> list[BaseException | None]:
    """Run ``target(i)`` on ``count`` threads started together; each one's exception or None."""
    errors: list[BaseException | None] = [None] * count
    barrier = threading.Barrier(count)

    def body(i: int) -> None:
        try:
            barrier.wait()
            target(i)
        except BaseException as e:
            errors[i] = e

    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def _judge_threads(errors: list, wrong: list, what: str) -> Result:
    bad = [f"{type(e).__name__}: {short(e, 80)}" for e in errors if e is not None]
    if bad:
        return CRASH, f"{len(bad)} of {len(errors)} threads failed: {bad[0]}"
    n_wrong = sum(1 for w in wrong if w)
    if n_wrong:
        return SILENT, f"{n_wrong} of {len(wrong)} {what} wrong"
    return CLEAR, f"all {len(wrong)} {what} right"


def _program(seed: int, device: str) -> Any:
    """A small ring program with inputs drawn from ``seed``; returns its (lazy) result."""
    import numpy as np

    from ren import Poly, RingSpec, ntt_primes

    R = RingSpec(64, ntt_primes(64, 30, 3))
    rng = np.random.default_rng(seed)
    a = Poly(rng.integers(-1000, 1000, 64), R, device)
    b = Poly(rng.integers(-1000, 1000, 64), R, device)
    return ((a * b + a).ntt() * b - a.rotate(seed % 7 + 1)).rescale() + 3


def threads_realize(device: str, run: int) -> Result:
    """Eight threads realize independent programs; answers against the python backend afterwards."""
    sys.setswitchinterval(1e-6)
    got: dict[tuple[int, int], list[int]] = {}

    def work(i: int) -> None:
        for k in range(4):
            got[(i, k)] = _program(1000 * run + 10 * i + k, device).tolist()

    errors = _threads(8, work)
    sys.setswitchinterval(0.005)
    wrong = [got.get(key) != _program(1000 * run + 10 * key[0] + key[1], "python").tolist()
             for key in sorted(got)]  # fmt: skip
    return _judge_threads(errors, wrong, "results")


def _jit_fn() -> Any:
    import ren

    def step(x: Any, y: Any) -> Any:
        return (x * y + x).ntt() * y - x

    return ren.jit(step)


def _jit_inputs(seed: int, device: str) -> tuple[Any, Any]:
    import numpy as np

    from ren import Poly, RingSpec, ntt_primes

    R = RingSpec(64, ntt_primes(64, 30, 2))
    rng = np.random.default_rng(seed)
    return (
        Poly(rng.integers(-(2**20), 2**20, 64), R, device).realize(),
        Poly(rng.integers(-(2**20), 2**20, 64), R, device).realize(),
    )


def threads_jit(device: str, run: int) -> Result:
    """One jitted function called from eight threads, each reading its own answer at once."""
    sys.setswitchinterval(1e-6)
    f = _jit_fn()
    f(*_jit_inputs(0, device))  # captured before the threads start
    got: dict[tuple[int, int], list[int]] = {}

    def work(i: int) -> None:
        for k in range(20):
            got[(i, k)] = f(*_jit_inputs(1000 * run + 20 * i + k, device)).tolist()

    errors = _threads(8, work)
    sys.setswitchinterval(0.005)
    wrong = []
    for (i, k), value in sorted(got.items()):
        x, y = _jit_inputs(1000 * run + 20 * i + k, "python")
        wrong.append(value != ((x * y + x).ntt() * y - x).tolist())
    return _judge_threads(errors, wrong, "calls")


def threads_capture(device: str, run: int) -> dict[str, Result]:
    """Thread A captures a slow jitted function while thread B computes, jits and encrypts."""
    import numpy as np

    import ren
    from ren.schemes import ckks

    sys.setswitchinterval(1e-6)

    def slow(x: Any) -> Any:
        y = (x * x).realize()
        time.sleep(0.05)
        z = (y + x).ntt() * x
        z.realize()
        time.sleep(0.05)
        return z - y

    g = ren.jit(slow)
    x0, _ = _jit_inputs(run, device)
    params = ckks.Params(n=32, q_bits=(40, 30), p_bits=(45,), scale_bits=30, insecure=True)
    ctx = ckks.Context(params, seed=run)
    ctx.keygen()
    done = threading.Event()
    b_errors: list[str] = []
    b_wrong: list[str] = []

    def other() -> None:
        h = ren.jit(lambda p: p * p + p)
        k = 0
        while not done.is_set() or k < 3:
            k += 1
            p, q = _jit_inputs(500 + 10 * run + k % 5, device)
            try:
                r = (p * q + p).tolist()
                pp, qq = _jit_inputs(500 + 10 * run + k % 5, "python")
                if r != (pp * qq + pp).tolist():
                    b_wrong.append("a realized program")
                r2 = h(p).tolist()
                if r2 != (pp * pp + pp).tolist():
                    b_wrong.append("its own jitted function")
                v = np.linspace(-1, 1, 16)
                if slot_bits(ctx.decrypt(ctx.encrypt(v)), v) < 15:
                    b_wrong.append("an encryption")
            except Exception as e:
                b_errors.append(f"{type(e).__name__}: {short(e, 100)}")
                return

    a_error: list[str] = []

    def capture() -> None:
        try:
            g(x0)
        except Exception as e:
            a_error.append(f"{type(e).__name__}: {short(e, 100)}")
        finally:
            done.set()

    tb = threading.Thread(target=other)
    ta = threading.Thread(target=capture)
    tb.start()
    ta.start()
    ta.join()
    tb.join()
    sys.setswitchinterval(0.005)
    out: dict[str, Result] = {}
    if a_error:
        out["capture"] = (CRASH, f"the capture failed: {a_error[0]}")
    else:
        x1, _ = _jit_inputs(77 + run, device)
        xp, _ = _jit_inputs(77 + run, "python")
        want = slow(xp).tolist()
        try:
            got = g(x1).tolist()
        except Exception as e:
            got = f"{type(e).__name__}: {short(e, 100)}"
        solo = ren.jit(slow)
        solo(_jit_inputs(run, device)[0])
        units = [len(getattr(getattr(fn, "last", None), "units", ())) for fn in (g, solo)]
        if isinstance(got, str):
            out["capture"] = (CRASH, f"the replay failed: {got}")
        elif got != want:
            out["capture"] = (SILENT, "the replay on new inputs is wrong")
        elif units[0] != units[1]:
            out["capture"] = (
                SILENT,
                f"the plan holds the other thread's kernels ({units[0]} units, {units[1]} alone)",
            )
        else:
            out["capture"] = (CLEAR, f"the replay is right; {units[0]} units, as alone")
    if b_errors:
        out["other thread"] = (CRASH, f"the other thread failed: {b_errors[0]}")
    elif b_wrong:
        out["other thread"] = (SILENT, f"the other thread got wrong {b_wrong[0]}")
    else:
        out["other thread"] = (CLEAR, "the other thread was right and undisturbed")
    return out


def threads_contexts(run: int) -> Result:
    """Two threads, each in its own ``with ckks.Context(...)``, encrypt and decrypt their values."""
    import numpy as np

    from ren.schemes import ckks

    sys.setswitchinterval(1e-6)
    params = ckks.Params(n=32, q_bits=(40, 30), p_bits=(45,), scale_bits=30, insecure=True)
    wrong: list[str] = []

    def work(i: int) -> None:
        rng = np.random.default_rng(100 * run + i)
        with ckks.Context(params, seed=100 * run + i) as ctx:
            for _ in range(15):
                v = rng.uniform(-1, 1, 16)
                ct = ckks.encrypt(v)
                if getattr(ct, "context", ctx) is not ctx:
                    wrong.append(f"thread {i} encrypted under the other thread's context")
                    continue
                bits = slot_bits(ctx.decrypt(ct), v)
                if bits < 15:
                    wrong.append(f"thread {i} decrypted {bits:.1f} bits")

    errors = _threads(2, work)
    sys.setswitchinterval(0.005)
    bad = [f"{type(e).__name__}: {short(e, 100)}" for e in errors if e is not None]
    if bad:
        return CRASH, f"{len(bad)} of 2 threads failed: {bad[0]}"
    if wrong:
        return SILENT, f"{len(wrong)} of 30 encryptions wrong: {wrong[0]}"
    return CLEAR, "each thread decrypted its own 15 values to > 15 bits"


def thread_cases() -> list[Case]:
    """Runs of each thread scenario, each in its own process."""
    cases: list[Case] = []
    for device in ("python", "cpu"):
        for run in range(6):
            cases.append(
                Case(
                    f"8 threads realize independent programs on {device} (run {run})",
                    functools.partial(threads_realize, device, run),
                    solo=True,
                    timeout=150,
                )
            )
            cases.append(
                Case(
                    f"one jitted function from 8 threads on {device} (run {run})",
                    functools.partial(threads_jit, device, run),
                    solo=True,
                    timeout=150,
                )
            )
        for run in range(3):
            cases.append(
                Case(
                    f"capture beside another thread on {device} (run {run})",
                    functools.partial(threads_capture, device, run),
                    solo=True,
                    timeout=150,
                    checks=("capture", "other thread"),
                )
            )
    for run in range(6):
        cases.append(
            Case(
                f"two threads with their own ckks.Context (run {run})",
                functools.partial(threads_contexts, run),
                solo=True,
                timeout=150,
            )
        )
    return cases


# ---------------------------------------------------------------------------------------------
# jit misuse


def buffer_of(p: Any) -> Any:
    """The buffer a realized ``Poly`` is stored in (``AS_RING`` over a buffer or a view of one)."""
    try:
        from ren.repoint import stored
    except ImportError:  # an older Ren kept the lookup in ren.poly
        try:
            from ren.poly import stored
        except ImportError:
            store = p.node.src[0]
            return (store if store.op.name == "BUFFER" else store.src[0]).arg.buffer
    return stored(p.node)[0]


def _ring() -> Any:
    f = fx()
    return f.RingSpec(16, f.ntt_primes(16, 28, 2))


def _val(seed: int, device: str, ring: Any = None) -> Any:
    f = fx()
    ring = ring or _ring()
    rng = f.np.random.default_rng(seed)
    return f.Poly(rng.integers(-500, 500, ring.n), ring, device).realize()


def _same(got: Any, want: Any) -> str | None:
    return None if got == want else "values differ from the python backend"


def jit_case(kind: str, device: str) -> Result:
    """One misuse of ``ren.jit`` (see ``jit_cases`` for the list)."""
    f = fx()
    ren, Poly = f.ren, f.Poly

    def py(p: Any) -> Any:  # the same value on the python backend
        return Poly.from_limbs(p.limbs(), p.ring, p.domain, "python")

    x, y = _val(1, device), _val(2, device)
    if kind == "freed input":
        fn = ren.jit(lambda a: a * a)
        fn(x)
        x2 = _val(3, device)
        buffer_of(x2).deallocate()
        return refuse(lambda: fn(x2).tolist(), r"\ba\b|input|freed")
    if kind == "freed input in a list":
        fn = ren.jit(lambda xs: xs[0] * xs[1])
        fn([x, y])
        x2, y2 = _val(3, device), _val(4, device)
        buffer_of(y2).deallocate()
        return refuse(lambda: fn([x2, y2]).tolist(), r"xs\[1\]")
    if kind == "freed closed-over value":
        weights = _val(9, device)
        fn = ren.jit(lambda a: a * weights + a)
        fn(x)
        buffer_of(weights).deallocate()
        return refuse(lambda: fn(_val(3, device)).tolist(), r"freed|dealloc|no data|weights")
    if kind == "freed closed-over value, pruned":
        weights = _val(9, device)
        fn = ren.jit(lambda a: a * (weights * weights) + a, prune=True)
        fn(x)
        buffer_of(weights).deallocate()
        x3, w = _val(3, device), py(_val(9, device))
        want = (py(x3) * (w * w) + py(x3)).tolist()
        return either(lambda: fn(x3).tolist(), r"freed|dealloc|no data|weights", equal(want))
    if kind == "freed previous output":
        fn = ren.jit(lambda a, b: a * b)
        out = fn(x, y)
        buffer_of(out).deallocate()
        x3, y3 = _val(5, device), _val(6, device)
        want = (py(x3) * py(y3)).tolist()
        return either(lambda: fn(x3, y3).tolist(), r"freed|dealloc|output", equal(want))
    if kind == "nested capture":
        inner = ren.jit(lambda a: a + a)
        outer = ren.jit(lambda a: inner(a) * a)
        return refuse(lambda: outer(x), r"nested|inner|outer|<lambda>")
    if kind == "no Poly input":
        fn = ren.jit(lambda k: Poly([k] * 16, _ring(), device))
        return refuse(lambda: fn(3), r"Poly|input")
    if kind == "no Poly output":
        fn = ren.jit(lambda a: 3)
        return refuse(lambda: fn(x), r"Poly|result|return")
    if kind == "None output":
        fn = ren.jit(lambda a: None)
        return refuse(lambda: fn(x), r"Poly|result|return")
    if kind.startswith("unhashable leaf"):
        leaf = {"array": f.np.arange(3), "set": {1, 2}, "bytearray": bytearray(b"ab")}[
            kind.split(": ")[1]
        ]
        fn = ren.jit(lambda a, extra: a * a)
        return refuse(lambda: fn(x, leaf), r"extra|hash")
    if kind == "encrypt inside a capture":
        ctx = f.ctx
        fn = ren.jit(lambda a: (ctx.encrypt([0.5]), a * a)[1])
        return refuse(lambda: fn(x), r"encrypt", (RuntimeError, *_refusal_kinds()))
    if kind == "output fed back":
        fn = ren.jit(lambda a, b: a * b + a)
        cur, cur_py = x, py(x)
        for _ in range(5):
            cur = fn(cur, y)
            cur_py = (cur_py * py(y) + cur_py).realize()
        return succeed(lambda: cur.tolist(), lambda got: _same(got, cur_py.tolist()))
    if kind == "another ring on the second call":
        fn = ren.jit(lambda a, b: a * b + b)
        fn(x, y)
        R2 = f.RingSpec(32, f.ntt_primes(32, 28, 3))
        x2, y2 = _val(7, device, R2), _val(8, device, R2)
        want = (py(x2) * py(y2) + py(y2)).tolist()
        return succeed(lambda: fn(x2, y2).tolist(), lambda got: _same(got, want))
    if kind == "another device on the second call":
        fn = ren.jit(lambda a, b: a * b + b)
        fn(_val(1, "python"), _val(2, "python"))
        x2, y2 = _val(7, device), _val(8, device)
        want = (py(x2) * py(y2) + py(y2)).tolist()
        return succeed(lambda: fn(x2, y2).tolist(), lambda got: _same(got, want))
    if kind == "keyword then positional":
        fn = ren.jit(lambda a, b: a - b * b)
        fn(a=x, b=y)
        x2, y2 = _val(7, device), _val(8, device)
        want = (py(x2) - py(y2) * py(y2)).tolist()
        return succeed(lambda: fn(x2, y2).tolist(), lambda got: _same(got, want))
    if kind == "same value twice":
        fn = ren.jit(lambda a, b: a * b + a)
        fn(x, y)
        x2 = _val(7, device)
        want = (py(x2) * py(x2) + py(x2)).tolist()
        return succeed(lambda: fn(x2, x2).tolist(), lambda got: _same(got, want))
    if kind == "lazy input":
        fn = ren.jit(lambda a: a * a)
        fn(x)
        lazy = _val(7, device) + 5
        want = ((py(_val(7, device)) + 5) * (py(_val(7, device)) + 5)).tolist()
        return succeed(lambda: fn(lazy).tolist(), lambda got: _same(got, want))
    if kind == "input returned as it is":
        fn = ren.jit(lambda a, b: (a, a * b))
        fn(x, y)
        x2, y2 = _val(7, device), _val(8, device)
        want = [py(x2).tolist(), (py(x2) * py(y2)).tolist()]
        return succeed(lambda: [p.tolist() for p in fn(x2, y2)], lambda got: _same(got, want))
    if kind == "closed-over value returned":
        c = _val(9, device)
        fn = ren.jit(lambda a: (c, a * c))
        fn(x)
        x2 = _val(7, device)
        want = [py(c).tolist(), (py(x2) * py(c)).tolist()]
        return succeed(lambda: [p.tolist() for p in fn(x2)], lambda got: _same(got, want))
    if kind == "exception during capture, then another call":

        def fails(a: Any) -> Any:
            (a * a).realize()
            raise ZeroDivisionError("the function's own error")

        bad = ren.jit(fails)
        try:
            bad(x)
        except ZeroDivisionError:
            pass
        except Exception as e:
            return CRASH, f"the function's own error was replaced: {type(e).__name__}: {e}"
        good = ren.jit(lambda a: a + a)
        want = (py(x) + py(x)).tolist()
        return succeed(lambda: good(x).tolist(), lambda got: _same(got, want))
    if kind == "result in a dict":
        fn = ren.jit(lambda a, b: {"sum": a + b, "prod": a * b})
        fn(x, y)
        x2, y2 = _val(7, device), _val(8, device)
        want = {"sum": (py(x2) + py(y2)).tolist(), "prod": (py(x2) * py(y2)).tolist()}
        return succeed(
            lambda: {k: v.tolist() for k, v in fn(x2, y2).items()}, lambda got: _same(got, want)
        )
    if kind == "max_plans=1 with three rings":
        fn = ren.jit(lambda a: a * a + 1, max_plans=1)
        results, wants = [], []
        for i, n in enumerate((16, 32, 16, 64)):
            R = f.RingSpec(n, f.ntt_primes(n, 28, 2))
            v = _val(20 + i, device, R)
            results.append(fn(v).tolist())
            wants.append((py(v) * py(v) + 1).tolist())
        return succeed(lambda: results, lambda got: _same(got, wants))
    if kind == "limb view input":
        fn = ren.jit(lambda a: a * a)
        R3 = f.RingSpec(16, f.ntt_primes(16, 28, 3))
        full = _val(30, device, R3)
        view = full.to_ring(f.RingSpec(16, R3.moduli[:2]))
        want = (py(view) * py(view)).tolist()
        return succeed(lambda: fn(view).tolist(), lambda got: _same(got, want))
    if kind == "constant input, then another constant":
        fn = ren.jit(lambda a, k: a * k)
        fn(x, Poly.const(3, _ring(), device))
        want = (py(x) * 5).tolist()
        return succeed(
            lambda: fn(x, Poly.const(5, _ring(), device)).tolist(), lambda g: _same(g, want)
        )
    if kind == "int leaf changes the program":
        fn = ren.jit(lambda a, k: a.rotate(k))
        fn(x, 1)
        want = py(x).rotate(2).tolist()
        return succeed(lambda: fn(x, 2).tolist(), lambda got: _same(got, want))
    if kind == "jitted method":

        class Model:
            def __init__(self) -> None:
                self.w = _val(9, device)

            @ren.jit
            def apply(self, a: Any) -> Any:
                return a * self.w

        m = Model()
        m.apply(x)
        x2 = _val(7, device)
        want = (py(x2) * py(_val(9, device))).tolist()
        return succeed(lambda: m.apply(x2).tolist(), lambda got: _same(got, want))
    if kind == "realize of an unrelated value inside":
        other = _val(11, device) * _val(12, device)

        def fn_(a: Any) -> Any:
            other.realize()
            return a * a

        fn = ren.jit(fn_)
        fn(x)
        x2 = _val(7, device)
        want = (py(x2) * py(x2)).tolist()
        return succeed(lambda: fn(x2).tolist(), lambda got: _same(got, want))
    if kind == "ciphertexts through jit":
        ctx = f.ctx
        fn = ren.jit(lambda c: c * c + c)
        fn(ctx.encrypt(f.rvals))
        v = f.np.linspace(-1, 1, 16)
        return succeed(lambda: fn(ctx.encrypt(v)), decrypts_to(v * v + v, bits=12))
    if kind.startswith("jit("):
        arg = kind[4:-1]
        call = {
            "3": lambda: ren.jit(3),
            "prune='yes'": lambda: ren.jit(lambda a: a, prune="yes"),
            "max_plans=0": lambda: ren.jit(lambda a: a, max_plans=0),
            "max_plans=True": lambda: ren.jit(lambda a: a, max_plans=True),
            "max_plans=2.5": lambda: ren.jit(lambda a: a, max_plans=2.5),
        }[arg]
        return refuse(call, r"jit|function|prune|max_plans|callable")
    raise AssertionError(kind)


JIT_KINDS = (
    "freed input",
    "freed input in a list",
    "freed closed-over value",
    "freed closed-over value, pruned",
    "freed previous output",
    "nested capture",
    "no Poly input",
    "no Poly output",
    "None output",
    "unhashable leaf: array",
    "unhashable leaf: set",
    "unhashable leaf: bytearray",
    "encrypt inside a capture",
    "output fed back",
    "another ring on the second call",
    "another device on the second call",
    "keyword then positional",
    "same value twice",
    "lazy input",
    "input returned as it is",
    "closed-over value returned",
    "exception during capture, then another call",
    "result in a dict",
    "max_plans=1 with three rings",
    "limb view input",
    "constant input, then another constant",
    "int leaf changes the program",
    "jitted method",
    "realize of an unrelated value inside",
    "ciphertexts through jit",
)


def jit_cases() -> list[Case]:
    """Each misuse on the python and cpu devices."""
    cases = []
    for device in ("python", "cpu"):
        for kind in JIT_KINDS:
            cases.append(Case(f"{kind} ({device})", functools.partial(jit_case, kind, device)))
    for arg in ("3", "prune='yes'", "max_plans=0", "max_plans=True", "max_plans=2.5"):
        cases.append(Case(f"jit({arg})", functools.partial(jit_case, f"jit({arg})", "python")))
    return cases


# ---------------------------------------------------------------------------------------------
# security


def recover_key(ctx: Any) -> bool:
    """The attack on a tiny error: ``s = -b / a`` slot by slot (NTT form); is it the secret key?"""
    b, a = ctx.evaluation_keys().public
    B, A = b.limbs(), a.limbs()
    ring = b.ring
    rec = []
    for i, q in enumerate(ring.moduli):
        try:
            rec.append(
                [(-int(x) * pow(int(y), -1, q)) % q for x, y in zip(B[i], A[i], strict=True)]
            )
        except ValueError:  # a slot of a is 0 mod q: no inverse, the attack needs another key
            return False
    return rec == secret_limbs(ctx)


def secret_limbs(ctx: Any) -> list[list[int]]:
    """The secret key's NTT-form residues, read from ``export_secret_key()``."""
    parts = Blob.parse(ctx.export_secret_key())
    header = json.loads(parts.header)
    ring = ctx.params.key_ring
    np = fx().np
    words = np.frombuffer(parts.payloads[0], dtype="<u8").reshape(ring.L, ring.n)
    domain = header["polys"][0].get("domain", "ntt")
    if domain != "ntt":
        p = fx().Poly.from_limbs(words, ring, fx().ren.Domain.COEFF).ntt()
        words = p.limbs()
    return [[int(v) for v in row] for row in words]


def weak_sigma(sigma: Any, n: int = 8192) -> Result:
    """``Params`` with a weak ``sigma`` and no opt-in must be refused; the attack shows why."""
    ckks = fx().ckks
    try:
        params = ckks.Params(n=n, q_bits=(60, 40, 40), p_bits=(60,), sigma=sigma)
    except Exception as e:
        return classify_error(e, r"sigma")
    ctx = ckks.Context(params, seed=1)
    ctx.keygen()
    if recover_key(ctx):
        return SILENT, f"accepted as secure; s = -b/a recovered the whole secret key (n={n})"
    return SILENT, "accepted as secure (the error is far below the HE standard's 3.19)"


def secret_patterns(ctx: Any) -> list[bytes]:
    """Byte strings of the secret key in every form memory or a pickle could hold."""
    f = fx()
    np = f.np
    ring = ctx.params.key_ring
    ntt = np.array(secret_limbs(ctx), dtype=np.uint64)
    s = f.Poly.from_limbs(ntt, ring, f.ren.Domain.NTT)
    forms = [ntt, s.words(), s.intt().limbs(), s.intt().words()]
    dtypes = {"<u8", np.dtype(ring.np_dtype).newbyteorder("<").str}
    out = []
    for arr in forms:
        for dtype in sorted(dtypes):
            a = np.asarray(arr).astype(dtype)
            for row in (0, ring.L // 2, ring.L - 1):
                data = a[row].tobytes()
                for start in (0, len(data) // 2):
                    out.append(data[start : start + 32])
    return [p for p in out if len(p) == 32 and len(set(p)) > 4]


def no_secret_in(make: Callable[[], Any], what: str) -> Result:
    """``pickle.dumps(make())`` must work and hold no word of the secret key."""
    ctx = fx().ctx
    try:
        data = pickle.dumps(make())
    except Exception as e:
        return CRASH, short(f"{what} cannot be pickled: {type(e).__name__}: {e}")
    found = [p for p in secret_patterns(ctx) if p in data]
    if found:
        return SILENT, f"the pickle of {what} ({len(data)} bytes) holds the secret key"
    return CLEAR, f"{len(data)} bytes, no secret key words"


def foreign_load(kind: str) -> Result:
    """A ciphertext loaded into a context with other (or no) keys must be refused."""
    f = fx()
    ckks, np = f.ckks, f.np
    client = ckks.Context(f.params, seed=21)
    client.keygen()
    v = np.linspace(-0.9, 0.9, 16)
    blob = client.encrypt(v).to_bytes()
    if kind == "server without keys=":
        server = ckks.Context(f.params)
    elif kind == "server with fresh keys":
        server = ckks.Context(f.params, seed=99)
        server.keygen()
    else:  # evaluation keys of another client
        other = ckks.Context(f.params, seed=98)
        other.keygen()
        server = ckks.Context(f.params, keys=other.evaluation_keys())
    try:
        ct = ckks.Ciphertext.from_bytes(blob, server)
    except Exception as e:
        return classify_error(e, r"fingerprint|key")
    try:
        back = ckks.Ciphertext.from_bytes((ct * ct).to_bytes(), client)
        bits = slot_bits(client.decrypt(back), v * v)
    except Exception as e:
        return CRASH, short(f"loaded, then {type(e).__name__}: {e}")
    return SILENT, f"loaded without a word; the client decrypts the product to {bits:.1f} bits"


def server_decrypts() -> Result:
    """A context with no keys given must not make keys to 'decrypt' a client's ciphertext."""
    f = fx()
    ckks = f.ckks
    client = ckks.Context(f.params, seed=22)
    client.keygen()
    blob = client.encrypt(f.rvals).to_bytes()
    server = ckks.Context(f.params)
    try:
        ct = ckks.Ciphertext.from_bytes(blob, server)
        got = server.decrypt(ct)
    except Exception as e:
        return classify_error(e, r"fingerprint|key")
    return SILENT, f"made keys and 'decrypted' to garbage ({slot_bits(got, f.rvals):.1f} bits)"


def pickle_worker_roundtrip() -> Result:
    """A worker process with the evaluation keys computes on an unpickled ciphertext."""
    f = fx()
    ckks, np = f.ckks, f.np
    v = np.linspace(-0.9, 0.9, 16)
    try:
        data = pickle.dumps(f.ctx.encrypt(v))
    except Exception as e:
        return CRASH, short(f"a ciphertext cannot be pickled: {type(e).__name__}: {e}")
    keys = f.ctx.evaluation_keys().to_bytes()
    script = (
        "import pickle, sys\n"
        "if sys.argv[1]: sys.path.insert(0, sys.argv[1])\n"
        "import inspect\n"
        "from ren.schemes import ckks\n"
        "keys, data = pickle.loads(sys.stdin.buffer.read())\n"
        "read = ckks.EvaluationKeys.from_bytes\n"
        "opt_in = {'insecure': True} if 'insecure' in inspect.signature(read).parameters else {}\n"
        "k = read(keys, **opt_in)\n"
        "with ckks.Context(k.params, keys=k) as server:\n"
        "    ct = pickle.loads(data)\n"
        "    out = ct * ct + ct\n"
        "    sys.stdout.buffer.write(out.to_bytes())\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, os.environ.get("TRIAL_REN", "")],
        input=pickle.dumps((keys, data)),
        capture_output=True,
        timeout=120,
    )
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["?"]
        return CRASH, short(f"the worker failed: {err[0]}")
    try:
        back = ckks.Ciphertext.from_bytes(proc.stdout, f.ctx)
        bits = slot_bits(f.ctx.decrypt(back), v * v + v)
    except Exception as e:
        return CRASH, short(f"the worker's answer: {type(e).__name__}: {e}")
    return (CLEAR, f"{bits:.1f} bits") if bits > 12 else (SILENT, f"{bits:.1f} bits")


def security_cases() -> list[Case]:
    """Weak parameters, secret keys in pickles, values under other keys, bad secret keys."""
    cases: list[Case] = []
    for label, sigma in [("1e-9", 1e-9), ("0.5", 0.5), ("1.0", 1.0), ("3.0", 3.0), ("3.18", 3.18)]:
        cases.append(
            Case(
                f"ckks.Params(n=8192, (60, 40, 40), (60,), sigma={label}) refused",
                functools.partial(weak_sigma, sigma),
            )
        )
    for label, sigma in [("True", True), ("nan", NAN), ("inf", INF), ("-inf", -INF)]:
        cases.append(
            Case(
                f"ckks.Params(n=8192, ..., sigma={label}) refused",
                functools.partial(
                    refuse,
                    lambda s=sigma: fx().ckks.Params(
                        n=8192, q_bits=(60, 40, 40), p_bits=(60,), sigma=s
                    ),
                    r"sigma",
                ),
            )
        )
    for label, sigma in [("3.2", 3.2), ("3.5", 3.5), ("4", 4)]:
        cases.append(
            Case(
                f"ckks.Params(n=8192, ..., sigma={label}) accepted (valid)",
                lambda s=sigma: succeed(
                    lambda: fx().ckks.Params(n=8192, q_bits=(60, 40, 40), p_bits=(60,), sigma=s),
                    lambda p: None if p.sigma == s else f"sigma {p.sigma}",
                ),
            )
        )
    cases.append(
        Case(
            "ckks.Params(n=8192, ..., hamming_weight=64) refused without insecure=True",
            functools.partial(
                refuse,
                lambda: fx().ckks.Params(
                    n=8192, q_bits=(60, 40, 40), p_bits=(60,), hamming_weight=64
                ),
                r"hamming|sparse|insecure",
            ),
        )
    )

    def attack_opt_in() -> Result:
        ckks = fx().ckks
        try:
            p = ckks.Params(
                n=64, q_bits=(40, 30), p_bits=(45,), scale_bits=30, sigma=1e-9, insecure=True
            )
        except Exception as e:
            return classify_error(e, r"sigma")
        ctx = ckks.Context(p, seed=3)
        ctx.keygen()
        if recover_key(ctx):
            return (
                CLEAR,
                "insecure=True is honoured, and s = -b/a recovers the key (the attack works)",
            )
        return CRASH, "harness: the attack did not recover the key"

    cases.append(Case("the attack, with insecure=True asked for (harness check)", attack_opt_in))

    def from_bytes_insecure(kind: str) -> Result:
        ckks = fx().ckks
        if kind == "sigma 1e-9":
            blob = Blob.parse(ckks.Params(n=8192, q_bits=(60, 40, 40), p_bits=(60,)).to_bytes())
            header = json.loads(blob.header)
            header.get("params", header)["sigma"] = 1e-9
        else:
            p = ckks.Params(n=1024, q_bits=(60, 40, 40), p_bits=(60,), insecure=True)
            blob = Blob.parse(p.to_bytes())
            header = json.loads(blob.header)
            header.get("params", header)["insecure"] = False
        return refuse(
            lambda: ckks.Params.from_bytes(blob.pack(dump_header(header))),
            r"sigma|secur|insecure|bound",
        )

    for kind in ("sigma 1e-9", "n=1024 with 200 bits of moduli"):
        cases.append(
            Case(
                f"Params.from_bytes of insecure parameters ({kind}) without opt-in",
                functools.partial(from_bytes_insecure, kind),
            )
        )

    # pickles and copies
    def lazy(ctx: Any) -> Any:
        return ctx.encrypt([0.5]).parts[0] * 3

    for what, make in [
        ("a Ciphertext", lambda: fx().ctx.encrypt(fx().vals)),
        ("a Plaintext", lambda: fx().ctx.encode(fx().vals)),
        ("EvaluationKeys", lambda: fx().ctx.evaluation_keys()),
        ("a Poly part of a ciphertext", lambda: fx().ctx.encrypt(fx().vals).parts[0]),
        ("a lazy Poly from a ciphertext", lambda: lazy(fx().ctx)),
        ("a list of ciphertexts", lambda: [fx().ctx.encrypt(fx().vals), fx().ct]),
        ("a dict holding a plaintext", lambda: {"pt": fx().pt}),
        (
            "a product ciphertext (3 parts)",
            lambda: fx().ckks.multiply(fx().ct, fx().ct, False, False),
        ),
        ("a rotated ciphertext", lambda: fx().ct.rotate(1)),
        ("Params", lambda: fx().params),
    ]:
        cases.append(
            Case(
                f"pickle.dumps({what}) holds no secret key",
                functools.partial(no_secret_in, make, what),
            )
        )

    def ctx_refuses(how: str) -> Result:
        ctx = fx().ctx
        call = {
            "pickle.dumps": lambda: pickle.dumps(ctx),
            "copy.copy": lambda: copy.copy(ctx),
            "copy.deepcopy": lambda: copy.deepcopy(ctx),
        }[how]
        return refuse(call, r"export_secret_key")

    for how in ("pickle.dumps", "copy.copy", "copy.deepcopy"):
        cases.append(
            Case(
                f"{how}(Context with a secret key) refused",
                functools.partial(ctx_refuses, how),
            )
        )

    def lazy_poly_roundtrip() -> Result:
        f = fx()
        a = poly_a()
        expr = a * a + 1
        want = [(x + (1 if i == 0 else 0)) % f.r8.Q
                for i, x in enumerate(negacyclic(f.a_coeffs, f.a_coeffs, f.r8.Q))]  # fmt: skip
        return succeed(lambda: pickle.loads(pickle.dumps(expr)).tolist(), equal(want))

    cases.append(Case("an unpickled lazy Poly gives its value", lazy_poly_roundtrip))
    cases.append(
        Case(
            "a worker with the evaluation keys computes on a pickled ciphertext",
            pickle_worker_roundtrip,
            timeout=180,
        )
    )
    for kind in (
        "server without keys=",
        "server with fresh keys",
        "server with another client's keys",
    ):
        cases.append(
            Case(f"a client's ciphertext loaded by a {kind}", functools.partial(foreign_load, kind))
        )
    cases.append(Case("a server without keys decrypts a client's ciphertext", server_decrypts))

    def bad_secret(kind: str) -> Result:
        parts = Blob.parse(blob_ctx().export_secret_key())
        blob = parts.pack(payloads=[_poly_payload(kind)])
        return refuse(
            lambda: fx().ckks.Context(blob_ctx().params, secret_key=blob), r"ternary|zero|secret"
        )

    for kind in ("all 2", "zero"):
        cases.append(
            Case(f"a loaded secret key that is {kind} refused", functools.partial(bad_secret, kind))
        )

    def bytes_clean(what: str) -> Result:
        ctx = fx().ctx
        data = {
            "ciphertext": lambda: fx().ct.to_bytes(),
            "keys": lambda: ctx.evaluation_keys().to_bytes(),
        }[what]()
        found = [p for p in secret_patterns(ctx) if p in data]
        return (SILENT, "holds the secret key") if found else (CLEAR, "no secret key words")

    for what in ("ciphertext", "keys"):
        cases.append(
            Case(f"{what} to_bytes() holds no secret key", functools.partial(bytes_clean, what))
        )
    return cases


# ---------------------------------------------------------------------------------------------
# running: workers, batches, the report


def module_cases(module: str) -> Callable[[], list[Case]]:
    """The builder of a category kept in its own module beside this one (``scripts/MODULE.py``).

    Such a module imports what it needs from ``trial`` (``Case``, ``refuse``, ``succeed``, ...)
    and defines ``cases() -> list[Case]``.
    """

    def build() -> list[Case]:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import importlib

        return importlib.import_module(module).cases()

    return build


BUILDERS: dict[str, Callable[[], list[Case]]] = {
    "bad input": bad_input_cases,
    "crafted blobs": blob_cases,
    "cache faults": cache_cases,
    "threads": thread_cases,
    "jit misuse": jit_cases,
    "security": security_cases,
    "crafted plans": module_cases("trial_plans"),
    "jit oracle": module_cases("trial_jit"),
    "interop files": module_cases("trial_interop"),
    "ckks ranges": module_cases("trial_ranges"),
}
BATCH = {
    "bad input": 60,
    "crafted blobs": 200,
    "cache faults": 4,
    "threads": 1,
    "jit misuse": 12,
    "security": 10,
    "crafted plans": 100,
    "jit oracle": 20,
    "interop files": 50,
    "ckks ranges": 10,
}
QUICK = {
    "bad input": 40,
    "crafted blobs": 60,
    "cache faults": 5,
    "threads": 4,
    "jit misuse": 10,
    "security": 12,
    "crafted plans": 60,
    "jit oracle": 20,
    "interop files": 30,
    "ckks ranges": 10,
}


def worker(category: str, indices: list[int]) -> None:
    """Run cases of ``category`` in this process, reporting each start and end on stdout."""
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever Ren prints goes to stderr, not into the protocol
    warnings.simplefilter("ignore")
    cases = BUILDERS[category]()
    for i in indices:
        case = cases[i]
        proto.write(json.dumps({"start": i}) + "\n")
        start = time.perf_counter()
        try:
            result = case.run()
        except BaseException as e:  # the harness itself, or something Ren let through
            result = (CRASH, short(f"{type(e).__name__}: {e}"))
        if not case.checks:
            result = {"": result}
        records = {k: list(v) for k, v in result.items()}
        elapsed = time.perf_counter() - start
        proto.write(json.dumps({"done": i, "results": records, "s": round(elapsed, 3)}) + "\n")
    proto.close()


class Runner:
    """Runs cases in worker processes and collects their records."""

    def __init__(self, ren: str | None, tmp: str, jobs: int) -> None:
        self.ren, self.tmp, self.jobs = ren, tmp, jobs
        self.records: list[dict] = []
        self.batch_crashes: list[str] = []  # batches a case killed (each then run alone)
        self.lock = threading.Lock()

    def env(self, extra: dict[str, str] | None) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            TRIAL_TMP=self.tmp,
            TRIAL_REN=self.ren or "",
            REN_CACHE_DIR=os.path.join(self.tmp, "cache"),
            XDG_CACHE_HOME=os.path.join(self.tmp, "xdg"),
            PYTHONFAULTHANDLER="1",
        )
        if self.ren:
            env["PYTHONPATH"] = self.ren + os.pathsep + env.get("PYTHONPATH", "")
        env.update(extra or {})
        return env

    def record(self, category: str, case: Case, results: dict, seconds: float) -> None:
        with self.lock:
            for check, (outcome, detail) in results.items():
                name = f"{case.name}: {check}" if check else case.name
                self.records.append(
                    {
                        "category": category,
                        "name": name,
                        "outcome": outcome,
                        "detail": detail,
                        "s": seconds,
                    }
                )

    def crash_results(self, case: Case, detail: str) -> dict:
        return {c: (CRASH, detail) for c in (case.checks or ("",))}

    def launch(
        self, category: str, indices: list[int], env: dict | None
    ) -> tuple[subprocess.Popen, str]:
        """A worker for ``indices``, and the file that receives its stderr."""
        argv = [sys.executable, str(Path(__file__).resolve()), "--worker", category]
        argv += ["--indices", ",".join(map(str, indices))]
        if self.ren:
            argv += ["--ren", self.ren]
        fd, log = tempfile.mkstemp(prefix="worker-", suffix=".log", dir=self.tmp)
        with os.fdopen(fd, "wb") as stderr:
            proc = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=self.env(env),
                start_new_session=True,
                preexec_fn=_limit_memory,
            )
        return proc, log

    def run_unit(self, category: str, cases: list[Case], indices: list[int]) -> None:
        """Run ``indices`` in one worker; after a death or a hang, go on in a new one."""
        todo = list(indices)
        env = cases[todo[0]].env if len(todo) == 1 else None
        while todo:
            proc, log = self.launch(category, todo, env)
            current, started = None, time.monotonic()
            buf = b""
            limit = 120.0  # start-up
            finished: set[int] = set()
            reason = ""
            while True:
                wait = limit - (time.monotonic() - started)
                if wait <= 0:
                    reason = "hang (no answer within its time limit)"
                    break
                ready, _, _ = select.select([proc.stdout], [], [], min(wait, 5.0))
                if not ready:
                    continue
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    proc.wait()
                    code = proc.returncode
                    if code < 0:
                        reason = f"killed by {signal.Signals(-code).name}{where_in_ren(log)}"
                    elif code:
                        reason = f"the process exited with status {code}"
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    msg = json.loads(line)
                    if "start" in msg:
                        current, started = msg["start"], time.monotonic()
                        limit = cases[current].timeout
                    else:
                        i = msg["done"]
                        self.record(category, cases[i], msg["results"], msg["s"])
                        finished.add(i)
                        current = None
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            proc.stdout.close()
            todo = [i for i in todo if i not in finished]
            if not todo:
                return
            culprit = current if current is not None else todo[0]
            if current is None and not reason:
                reason = "the worker stopped before its first case"
            if len(todo) > 1 or len(indices) > 1:
                # run the culprit alone, to get its own outcome
                note = f"{category}: {cases[culprit].name}: {reason} in a batch; run again alone"
                print(f"trial: {note}", file=sys.stderr)
                with self.lock:
                    self.batch_crashes.append(note)
                self.run_unit(category, cases, [culprit])
                todo.remove(culprit)
                continue
            self.record(category, cases[culprit], self.crash_results(cases[culprit], reason), 0.0)
            todo.remove(culprit)

    def run_category(self, category: str, cases: list[Case], picked: list[int]) -> None:
        units: queue.Queue = queue.Queue()
        batch: list[int] = []
        for i in picked:
            if cases[i].solo:
                units.put([i])
                continue
            batch.append(i)
            if len(batch) >= BATCH[category]:
                units.put(batch)
                batch = []
        if batch:
            units.put(batch)

        def drain() -> None:
            while True:
                try:
                    unit = units.get_nowait()
                except queue.Empty:
                    return
                self.run_unit(category, cases, unit)

        threads = [threading.Thread(target=drain) for _ in range(self.jobs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


def where_in_ren(log: str) -> str:
    """`` in FUNCTION (FILE:LINE)``: the innermost Ren frame of a faulthandler dump, or ``""``."""
    try:
        text = Path(log).read_text(errors="replace")
    except OSError:
        return ""
    current = re.search(r"Current thread [^\n]*\n((?:  File [^\n]*\n)+)", text)
    frames = re.findall(
        r'File "([^"]*/ren/[^"]*)", line (\d+) in (\S+)', current[1] if current else ""
    )
    if not frames:
        return ""
    path, line, func = frames[0]  # faulthandler lists the innermost frame first
    return f" in {func} ({path.split('/ren/', 1)[1]}:{line})"


def totals(records: list[dict]) -> dict[str, dict[str, int]]:
    """Per category: cases, clear, silent, crash."""
    out = {}
    for cat in CATEGORIES:
        rs = [r for r in records if r["category"] == cat]
        if rs:
            out[cat] = {"cases": len(rs)} | {
                k: sum(r["outcome"] == k for r in rs) for k in (CLEAR, SILENT, CRASH)
            }
    return out


def markdown(meta: dict, table: dict[str, dict[str, int]], records: list[dict]) -> str:
    """The table, and the silent and crashing cases, as Markdown."""
    lines = [
        f"# Adversarial trial of Ren ({meta['label']})",
        "",
        f"Ren from `{meta['ren_file']}` (commit {meta['commit']}), {meta['date']}, "
        f"{'quick subset' if meta['quick'] else 'full set'}, {meta['seconds']:.0f} s.",
        "",
        "| category | cases | clear | silent | crashes |",
        "|---|---:|---:|---:|---:|",
    ]
    for cat, t in table.items():
        lines.append(f"| {cat} | {t['cases']} | {t[CLEAR]} | {t[SILENT]} | {t[CRASH]} |")
    all_ = {k: sum(t[k] for t in table.values()) for k in ("cases", CLEAR, SILENT, CRASH)}
    lines.append(
        f"| **total** | {all_['cases']} | {all_[CLEAR]} | {all_[SILENT]} | {all_[CRASH]} |"
    )
    for outcome in (SILENT, CRASH):
        rows = [r for r in records if r["outcome"] == outcome]
        if not rows:
            continue
        lines += ["", f"## {outcome} ({len(rows)})", ""]
        # cases of one function (or of any blob) that failed the same way (the same detail up to
        # numbers and quoted names) are one line: "NAME (and N more cases like it)"
        groups: dict[tuple[str, str, str], list[dict]] = {}
        for r in rows:
            shape = re.sub(r"'[^']*'|\d+", "#", r["detail"])
            stem = "" if r["category"] == "crafted blobs" else re.split(r"=| \(|: ", r["name"])[0]
            groups.setdefault((r["category"], stem, shape), []).append(r)
        for (category, _, _), group in groups.items():
            r = group[0]
            detail = r["detail"].replace("|", "\\|")
            more = len(group) - 1
            many = f" (and {more} more case{'s' * (more > 1)} like it)" if more else ""
            lines.append(f"- {category}: {r['name']}{many}: {detail}")
    return "\n".join(lines) + "\n"


def git_commit(path: Path) -> str:
    """The commit of the checkout at ``path``, with ``+dirty`` when it has changes."""
    try:
        head = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(path), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def main() -> None:
    """Parse the arguments; run as the parent (the trial) or as a worker."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="the JSON file (default benchmarks/figures/trial-DATE.json)")
    parser.add_argument("--quick", action="store_true", help="a small subset (about a minute)")
    parser.add_argument("--only", action="append", choices=CATEGORIES, help="run one category")
    parser.add_argument("--ren", help="put this checkout of Ren first on sys.path")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes at once")
    parser.add_argument("--label", default="", help="a label for the report (before, after)")
    parser.add_argument("--worker", choices=CATEGORIES, help=argparse.SUPPRESS)
    parser.add_argument("--indices", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.ren:
        args.ren = str(Path(args.ren).resolve())
        sys.path.insert(0, args.ren)
    if args.worker:
        worker(args.worker, [int(i) for i in args.indices.split(",")])
        return

    tmp = tempfile.mkdtemp(prefix="ren-trial-")
    os.environ["TRIAL_TMP"] = tmp
    os.environ["TRIAL_REN"] = args.ren or ""
    os.environ["REN_CACHE_DIR"] = os.path.join(tmp, "cache")
    warnings.simplefilter("ignore")
    import ren

    ren_file = ren.__file__
    print(f"trial: Ren from {ren_file}", file=sys.stderr)
    date = datetime.date.today().isoformat()
    out = Path(args.out or ROOT / "benchmarks" / "figures" / f"trial-{date}.json")
    runner = Runner(args.ren, tmp, args.jobs)
    begin = time.perf_counter()
    for category in args.only or CATEGORIES:
        start = time.perf_counter()
        cases = BUILDERS[category]()
        picked = list(range(len(cases)))
        if args.quick and len(cases) > QUICK[category]:
            step = len(cases) / QUICK[category]
            picked = sorted({int(k * step) for k in range(QUICK[category])})
        runner.run_category(category, cases, picked)
        t = totals(runner.records).get(category, {"cases": 0, CLEAR: 0, SILENT: 0, CRASH: 0})
        print(
            f"trial: {category:<14} {t['cases']:5d} cases {t[CLEAR]:5d} clear {t[SILENT]:5d} "
            f"silent {t[CRASH]:5d} crashes  ({time.perf_counter() - start:.0f} s)",
            file=sys.stderr,
        )
    order = {c: i for i, c in enumerate(CATEGORIES)}
    records = sorted(runner.records, key=lambda r: (order[r["category"]], r["name"]))
    table = totals(records)
    meta = {
        "label": args.label or out.stem,
        "date": date,
        "ren_file": ren_file,
        "commit": git_commit(Path(ren_file).resolve().parent.parent),
        "python": sys.version.split()[0],
        "quick": args.quick,
        "seconds": round(time.perf_counter() - begin, 1),
        "batch_crashes": runner.batch_crashes,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"meta": meta, "totals": table, "cases": records}, indent=1) + "\n")
    out.with_suffix(".md").write_text(markdown(meta, table, records))
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"trial: wrote {out} and {out.with_suffix('.md')}", file=sys.stderr)


if __name__ == "__main__":
    main()
