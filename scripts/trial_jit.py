"""The trial's "jit oracle" category: ``ren.jit`` and ``ren.load`` against an oracle.

Loaded by ``scripts/trial.py`` (``module_cases("trial_jit")``), which runs each ``Case`` of
``cases()`` in a worker and classifies it. Three kinds of generated case:

* **constant arguments**: seeded random programs of a ``Poly`` and one to three ``Poly.const``
  arguments, whose bodies hold literals drawn to collide with the arguments' values (0, 1, -1,
  ``Q - 1``, ``q - 1``, equal values, arguments the body never reads). Each program is called
  three or four times (a capture, replays and captures again), in process or through its plans
  saved and loaded again (``f.save``, ``ren.load``), on the python and cpu devices. The oracle is
  the same program run eagerly, evaluated with Python big integers (``ren.reference``); a loaded
  plan may instead refuse a value it was not saved for, naming it.
* **mismatched metadata**: CKKS and BGV plans saved and loaded, called with a value whose metadata
  is not the plan's (a CKKS scale or level, a BGV correction, a ciphertext under other keys,
  evaluation keys of another context given as ``stored=``, an int or str argument): the right
  behaviour is a refusal naming it (in-process ``ren.jit`` would capture another plan).
* **matching metadata**: the same plans called with values whose metadata is the plan's, under the
  keys given at load (a third party's included): the right answer (plaintext NumPy with a
  precision in bits for CKKS, exact slots mod ``t`` for BGV and BFV).

Works against any checkout of Ren that has ``ren.jit``, ``save`` and ``ren.load``.
"""

from __future__ import annotations

import functools
import os
import random
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from trial import (
    CLEAR,
    CRASH,
    SILENT,
    Case,
    classify_error,
    either,
    refuse,
    short,
    slot_bits,
    succeed,
)

#: Random programs per device: (in process, saved and loaded).
PROGRAMS = {"python": 90, "cpu": 30}
#: What a loaded plan's refusal of a value it was not saved for names.
NAMES_IT = r"constant|saved for|input|argument"


# ---------------------------------------------------------------------------------------------
# random programs with colliding constant arguments


@functools.cache
def _rings() -> list[Any]:
    from ren import RingSpec, ntt_primes

    return [
        RingSpec(8, (17, 97)),
        RingSpec(16, ntt_primes(16, 30, 2)),
        RingSpec(8, ntt_primes(8, 50, 2), "u64"),
    ]


def program(seed: int) -> dict[str, Any]:
    """The seeded program: ring, body literals, each call's constants, steps and outputs."""
    rng = random.Random(seed)
    ring = rng.choice(_rings())
    Q, q = ring.Q, ring.moduli[0]
    edges = [0, 1, -1, Q - 1, q - 1, q, 2, 3, -3]
    body = [rng.choice(edges) if rng.random() < 0.6 else rng.randint(-99, 99)]
    body += [rng.choice(edges + body) for _ in range(rng.randint(0, 2))]
    n = rng.randint(1, 3)

    def value() -> int:
        kind = rng.random()
        if kind < 0.5:
            return rng.choice(body)
        return rng.choice(edges) if kind < 0.8 else rng.randint(-(2**40), 2**40)

    calls = [[value() for _ in range(n)] for _ in range(rng.randint(3, 4))]
    steps, size = [], 1 + n
    for _ in range(rng.randint(1, 6)):
        kind = rng.choice(["add", "sub", "mul", "add_lit", "mul_lit", "lit_sub"])
        width = size if kind in ("add", "sub", "mul") else len(body)
        steps.append((kind, rng.randrange(size), rng.randrange(width)))
        size += 1
    outs = list(dict.fromkeys([size - 1, *rng.sample(range(size), rng.randint(0, 2))]))
    return {"ring": ring, "body": body, "calls": calls, "steps": steps, "outs": outs}


def run_program(prog: dict[str, Any], x: Any, cs: list[Any]) -> list[Any]:
    """The program over the pool ``[x, *cs]``; returns the pool values it outputs."""
    body, pool = prog["body"], [x, *cs]
    for kind, i, j in prog["steps"]:
        a = pool[i]
        if kind == "add":
            v = a + pool[j]
        elif kind == "sub":
            v = a - pool[j]
        elif kind == "mul":
            v = a * pool[j]
        elif kind == "add_lit":
            v = a + body[j]
        elif kind == "mul_lit":
            v = a * body[j]
        else:
            v = body[j] - a
        pool.append(v)
    return [pool[k] for k in prog["outs"]]


def _arguments(prog: dict[str, Any], values: list[int], device: str, k: int) -> tuple:
    """A fresh ``x``, the constants ``values`` on ``device``, and the oracle's words."""
    from ren import Poly
    from ren.reference import evaluate

    ring = prog["ring"]
    rng = random.Random(k)
    xs = [rng.randrange(-1000, 1000) for _ in range(ring.n)]
    eager = run_program(prog, Poly(xs, ring), [Poly.const(v, ring) for v in values])
    want = [list(evaluate(p.node)) for p in eager]
    return Poly(xs, ring, device=device), [Poly.const(v, ring, device) for v in values], want


def _folder() -> Path:
    root = Path(os.environ.get("TRIAL_TMP") or tempfile.gettempdir())
    return Path(tempfile.mkdtemp(prefix="jit-oracle-", dir=root))


def constants_case(seed: int, device: str, loaded: bool) -> tuple[str, str]:
    """Every call of a random program (in process, or each saved plan loaded) against the oracle."""
    import ren

    prog = program(seed)

    def f_(x: Any, cs: list[Any]) -> list[Any]:
        return run_program(prog, x, cs)

    f = ren.jit(f_)
    folder, saved = _folder(), []
    for k, values in enumerate(prog["calls"]):
        x, cs, want = _arguments(prog, values, device, k)
        try:
            got = [p.tolist() for p in f(x, cs)]
        except Exception as e:
            return CRASH, short(f"call {k} with {values}: {type(e).__name__}: {e}")
        if got != want:
            return SILENT, short(f"call {k} with {values} (body {prog['body']}): wrong words")
        if loaded:
            saved.append((f.save(folder / f"{k}.renplan"), values))
    checked = 0
    for path, own in saved:
        plan = ren.load(path)
        for k, values in enumerate([own, *prog["calls"]]):
            x, cs, want = _arguments(prog, values, device, 100 + k)
            try:
                got = [p.tolist() for p in plan(x, cs)]
            except Exception as e:
                outcome, detail = classify_error(e, NAMES_IT)
                if values == own or outcome != CLEAR:  # its own values must replay
                    return CRASH, short(f"{path.name} with {values}: {detail}")
                continue
            if got != want:
                return SILENT, short(f"{path.name} saved for {own}, called with {values}: wrong")
            checked += 1
    what = f"{len(prog['calls'])} calls" + (f", {checked} loaded calls" if loaded else "")
    return CLEAR, f"right words: {what}"


# ---------------------------------------------------------------------------------------------
# CKKS and BGV plans with the metadata of their values


@functools.cache
def ckks_fx() -> Any:
    """Parameters, three contexts with keys (seeds 1, 2, 3) and slot values."""
    from ren.schemes import ckks

    params = ckks.Params(n=16, q_bits=(30, 25, 25), p_bits=(30,), scale_bits=25, insecure=True)
    ctxs = {s: ckks.Context(params, seed=s) for s in (1, 2, 3)}
    for c in ctxs.values():
        c.rotation_key(1)
    v = np.linspace(-1, 1, params.slots)
    return ckks, params, ctxs, v


CKKS_PROGRAMS = {
    "mul": (lambda a, b: a * b, lambda u, w: u * w),
    "add": (lambda a, b: a + b, lambda u, w: u + w),
    "mul, rotate": (
        lambda a, b: (a * b).rotate(1),
        lambda u, w: np.roll(u * w, -1),
    ),
}


@functools.cache
def ckks_plan(name: str) -> Path:
    """The plan of CKKS program ``name``, captured in context 1 and saved with its keys."""
    import ren

    ckks, _, ctxs, v = ckks_fx()
    with ctxs[1] as ctx:
        f = ren.jit(CKKS_PROGRAMS[name][0])
        path = _folder() / f"{name.replace(', ', '-')}.renplan"
        return f.export(
            path, ckks.encrypt(v), ckks.encrypt(v), stored={"keys": ctx.evaluation_keys()}
        )


def ckks_case(name: str, change: str, value: Any) -> tuple[str, str]:
    """CKKS plan ``name`` called with one thing changed (``change`` to ``value``), or as saved.

    ``none``: as saved; ``third party``: keys, ciphertexts and active context all of context
    ``value`` (the plan file holds no key: right answer); else one value's metadata differs:
    ``scale``, ``level``, ``input keys`` (``a`` under context ``value``'s keys), ``input keys
    second`` (``b``), ``stored keys`` (context ``value``'s keys given at load, no context active),
    ``stored keys at load`` (the same, with context 1 active at load).
    """
    import ren

    ckks, _, ctxs, v = ckks_fx()
    want = CKKS_PROGRAMS[name][1](v, 0.5 * v)
    path = ckks_plan(name)
    given = ctxs[value] if change.startswith("stored keys") or change == "third party" else ctxs[1]
    owner = ctxs[value] if change == "third party" else ctxs[1]

    def call() -> Any:
        if change == "stored keys at load":
            with ctxs[1]:  # the results would be context 1's, the keys are another's
                plan = ren.load(path, stored={"keys": given.evaluation_keys()})
        else:
            plan = ren.load(path, stored={"keys": given.evaluation_keys()})
        with owner:
            a = ckks.encrypt(v, scale=value) if change == "scale" else ckks.encrypt(v)
            b = ckks.encrypt(0.5 * v)
        if change == "level":
            a = a.at_level(value)
        elif change == "input keys":
            with ctxs[value]:
                a = ckks.encrypt(v)
        elif change == "input keys second":
            with ctxs[value]:
                b = ckks.encrypt(0.5 * v)
        with owner:
            return plan(a, b)

    def check(out: Any) -> str | None:
        bits = slot_bits(owner.decrypt(out), want)
        return None if bits > 12 else f"{bits:.1f} bits against NumPy"

    if change in ("none", "third party"):
        return succeed(call, check)
    if name == "add" and change.startswith("stored keys"):  # a sum reads no key: either is right
        return either(call, r"key.?fingerprint", check)
    return refuse(
        call, {"scale": r"scale", "level": r"level|input a"}.get(change, r"key.?fingerpr")
    )


@functools.cache
def int_fx(scheme_name: str) -> Any:
    """A BGV or BFV context (``n = 64``, ``t = 257``), another one, and slot values."""
    from ren.schemes import bfv, bgv

    scheme = {"bgv": bgv, "bfv": bfv}[scheme_name]
    params = scheme.Params(n=64, q_bits=(50, 50, 50), p_bits=(55, 55), t=257, insecure=True)
    ctx = scheme.Context(params, seed=4)
    other = scheme.Context(params, seed=5)
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 257, 64), rng.integers(0, 257, 64)
    return scheme, ctx, other, a, b


@functools.cache
def bgv_plan(op: str) -> tuple[Path, int]:
    """``u + w`` or ``u * w`` on BGV ciphertexts at level 1 (correction f), saved with keys."""
    import ren

    scheme, ctx, _, a, b = int_fx("bgv")
    with ctx:
        x, y = scheme.mod_switch(ctx.encrypt(a)), scheme.mod_switch(ctx.encrypt(b))
        f = ren.jit((lambda u, w: u + w) if op == "add" else (lambda u, w: u * w))
        path = f.export(
            _folder() / f"bgv-{op}.renplan", x, y, stored={"keys": ctx.evaluation_keys()}
        )
    return path, x.correction


def bgv_case(op: str, powers: tuple[int, int]) -> tuple[str, str]:
    """BGV plan ``op`` called with corrections ``f^powers[i]`` (saved for ``(f, f)``)."""
    import ren

    scheme, ctx, _, a, b = int_fx("bgv")
    path, f = bgv_plan(op)
    t = 257

    def at(values: Any, power: int) -> Any:
        ct = scheme.mod_switch(ctx.encrypt(values))  # correction f
        one = scheme.mod_switch(ctx.encrypt(np.ones(64, dtype=np.int64)))
        for _ in range(power - 1):
            ct = ct * one  # the same values, correction f^power
        return ct

    def call() -> Any:
        with ctx:
            plan = ren.load(path, stored={"keys": ctx.evaluation_keys()})
            return plan(at(a, powers[0]), at(b, powers[1]))

    want = (a + b) % t if op == "add" else (a * b) % t
    if powers == (1, 1):

        def check(out: Any) -> str | None:
            correction = f if op == "add" else f * f % t
            if out.correction != correction:
                return f"correction {out.correction}, want {correction}"
            got = ctx.decrypt(out)
            return None if np.array_equal(got, want) else "wrong slots"

        return succeed(call, check)
    return refuse(call, r"correction")


def keys_case(scheme_name: str, where: str) -> tuple[str, str]:
    """A BGV/BFV multiply plan and another context's keys: as an input's, as the stored ones, or
    all of them (a third party: keys, ciphertexts and context, which must work)."""
    import ren

    _, ctx, other, a, b = int_fx(scheme_name)
    path = int_plan(scheme_name)
    owner = other if where == "third party" else ctx

    def call() -> Any:
        keys = other if where in ("stored", "third party") else ctx
        plan = ren.load(path, stored={"keys": keys.evaluation_keys()})
        x, y = owner.encrypt(a), (other if where == "input" else owner).encrypt(b)
        with owner:
            return plan(x, y)

    if where == "third party":

        def check(out: Any) -> str | None:
            return None if np.array_equal(owner.decrypt(out), (a * b) % 257) else "wrong slots"

        return succeed(call, check)
    return refuse(call, r"key.?fingerprint")


@functools.cache
def int_plan(scheme_name: str) -> Path:
    import ren

    _, ctx, _, a, b = int_fx(scheme_name)
    with ctx:
        f = ren.jit(lambda u, w: u * w)
        path = _folder() / f"{scheme_name}-mul.renplan"
        return f.export(
            path, ctx.encrypt(a), ctx.encrypt(b), stored={"keys": ctx.evaluation_keys()}
        )


def leaf_case(kind: str, value: Any) -> tuple[str, str]:
    """A plan of ``x`` and an int or str argument, saved for 1 / "double", called with ``value``."""
    import ren
    from ren import Poly, RingSpec
    from ren.reference import evaluate

    ring = RingSpec(8, (17, 97))
    x = Poly([1, 2, 3, 4, 5, 6, 7, 8], ring)
    if kind == "int":

        def turn(x: Any, steps: int) -> Any:
            return x.rotate(steps)

        path = _folder() / "turn.renplan"
        plan = ren.load(ren.jit(turn).export(path, x, 1))
        want = list(evaluate(x.rotate(1).node))
    else:

        def scaled(x: Any, mode: str) -> Any:
            return x * (2 if mode == "double" else 3)

        path = _folder() / "scaled.renplan"
        plan = ren.load(ren.jit(scaled).export(path, x, "double"))
        want = list(evaluate((x * 2).node))
    if value in (1, "double") and type(value) in (int, str):
        return succeed(
            lambda: plan(x, value).tolist(), lambda got: None if got == want else "wrong"
        )
    return refuse(lambda: plan(x, value), r"argument (steps|mode)")


# ---------------------------------------------------------------------------------------------
# the cases


def cases() -> list[Case]:
    """Every case of the category, interleaved so that ``--quick`` picks some of each kind."""
    programs: list[Case] = []
    for device, count in PROGRAMS.items():
        for seed in range(count):
            for loaded in (False, True):
                how = "saved and loaded" if loaded else "in process"
                programs.append(
                    Case(
                        f"constant arguments, program {seed} ({device}, {how})",
                        functools.partial(constants_case, seed, device, loaded),
                        timeout=120.0,
                    )
                )
    meta: list[Case] = []
    for name in CKKS_PROGRAMS:
        variants = [("none", None)]
        variants += [("scale", s) for s in (2.0**20, 2.0**24, 2.0**26, 2.0**25 + 1, 2.0**25 * 1.5)]
        variants += [("level", lvl) for lvl in (0, 1)]
        variants += [("input keys", 2), ("input keys", 3), ("input keys second", 2)]
        variants += [("stored keys", 2), ("stored keys", 3), ("stored keys at load", 2)]
        variants += [("third party", 2), ("third party", 3)]
        for change, value in variants:
            label = change if value is None else f"{change} {value!r}"
            meta.append(
                Case(
                    f"CKKS plan {name}: {label}",
                    functools.partial(ckks_case, name, change, value),
                )
            )
    for op in ("add", "mul"):
        for powers in ((1, 1), (2, 1), (1, 2), (2, 2), (3, 1)):
            meta.append(
                Case(
                    f"BGV plan {op}: corrections f^{powers[0]}, f^{powers[1]}",
                    functools.partial(bgv_case, op, powers),
                )
            )
    for scheme_name in ("bgv", "bfv"):
        for where in ("input", "stored", "third party"):
            meta.append(
                Case(
                    f"{scheme_name.upper()} plan mul: keys of another context ({where})",
                    functools.partial(keys_case, scheme_name, where),
                )
            )
    for kind, values in (("int", (1, 0, 2, 3, -1, True, 1.0)), ("str", ("double", "triple", ""))):
        for value in values:
            meta.append(
                Case(f"{kind} argument {value!r}", functools.partial(leaf_case, kind, value))
            )
    # interleaved evenly, so that --quick (every k-th case) picks some of each kind
    placed = [((i + 0.5) / len(programs), c) for i, c in enumerate(programs)]
    placed += [((j + 0.25) / len(meta), c) for j, c in enumerate(meta)]
    return [c for _, c in sorted(placed, key=lambda pc: pc[0])]
