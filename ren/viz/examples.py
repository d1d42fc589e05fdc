"""Built-in programs for ``python -m ren.viz --example NAME``: small, checked, and fast.

Each example runs one program on the ``python`` device (under the caller's ``ren.viz.record()``)
and returns an ``Outcome``: a short text summary (the result against its oracle: the reference
evaluator, or NumPy with a precision in bits), a label for each realization it ran (``"encrypt
x"``, ``"multiply ..."``) and the ones worth opening first in the report (``focus``).

=============== ==================================================================================
``seed``        the seed program of ``ren.demo``: ``(a + b) * (a - 1)`` in ``Z_Q[X]/(X^8 + 1)``,
                ``Q = 17 * 97``, checked against the reference evaluator
``ckks-mul``    one CKKS multiply of two encrypted vectors, relinearized and rescaled, on a tiny
                **insecure** ring (``n = 64``), decrypted and checked against NumPy
``ckks-rotate`` one CKKS rotation by one slot (a key switch with a Galois key), checked likewise
``jit``         a ``ren.jit`` function on ciphertexts, ``(x * y + x).rotate(1)``: captured on the
                first call, replayed on the next two, each result checked against NumPy
``bootstrap``   one CKKS bootstrap (``boot-toy``, **insecure**) stepped region by region with the
                debugger, each stage's output against its NumPy shadow, the result against NumPy
``bfv-mul``     one BFV multiply of integers mod 65537 at SEAL's n = 8192 parameters, checked
                against NumPy, each region's noise budget in the report
=============== ==================================================================================

``run_example(name)`` records one and returns ``(trace, outcome)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, TypedDict

import numpy as np

from ren.engine.observe import observing
from ren.viz.examples_bfv import bfv_mul
from ren.viz.phases import Outcome, Phases
from ren.viz.trace import Trace, record

if TYPE_CHECKING:
    from ren.schemes import ckks

__all__ = ["CKKS_PARAMS", "EXAMPLES", "Outcome", "run_example"]


class CkksParams(TypedDict):
    """The arguments of ``ckks.Params`` that ``CKKS_PARAMS`` gives."""

    n: int
    q_bits: tuple[int, ...]
    p_bits: tuple[int, ...]
    scale_bits: int
    insecure: bool


#: The ring of the CKKS examples: the one of ``docs/ckks.md`` ("One multiply as the compiler sees
#: it"), whose multiply schedules 24 kernels. Far too small to be secure: for reading only.
CKKS_PARAMS: CkksParams = dict(
    n=64, q_bits=(50, 30, 30), p_bits=(50,), scale_bits=30, insecure=True
)

#: A CKKS result is accepted when it is at least this precise (it measures about 24 bits).
MIN_BITS = 20.0


def _fmt(values: np.ndarray, count: int = 4) -> str:
    return "[" + ", ".join(f"{v:+.6f}" for v in np.real(values[:count])) + ", ...]"


# ---------------------------------------------------------------------------------------------
# the examples


def seed() -> Outcome:
    """``(a + b) * (a - 1)`` in ``Z_Q[X]/(X^8 + 1)``, ``Q = 17 * 97``: the program of ``ren.demo``.

    It is realized on the python device and checked against the reference evaluator.
    """
    from ren.poly import Poly
    from ren.reference import evaluate
    from ren.ring import RingSpec

    phases = Phases()
    with observing(phases):
        ring = RingSpec(n=8, moduli=(17, 97))
        a = Poly(list(range(1, ring.n + 1)), ring, "python")
        b = Poly(list(range(ring.n, 0, -1)), ring, "python")
        expr = (a + b) * (a - 1)
        reference = evaluate(expr.node)  # Python integers, the definition of every op
        with phases("realize (a + b) * (a - 1)", focus=True):
            expr.realize()
        with phases("read back: tolist() takes an inverse NTT of a copy"):
            got = expr.tolist()
    ok = got == list(reference)
    summary = "\n".join(
        [
            f"program: (a + b) * (a - 1) in Z_Q[X]/(X^{ring.n} + 1), Q = 17 * 97 = {ring.Q}",
            "a = [1, 2, ..., 8], b = [8, 7, ..., 1] (the seed example of python -m ren.demo)",
            f"realized:  {got}",
            f"reference: {list(reference)} (the reference evaluator, Python integers)",
            f"agree: {ok}",
        ]
    )
    return phases.outcome(summary, ok)


def _ckks_context(phases: Phases) -> ckks.Context:
    from ren.schemes import ckks

    params = ckks.Params(**CKKS_PARAMS)
    ctx = ckks.Context(params, seed=1, device="python")
    keys = ("secret key s (NTT form)", "public key (b, a)", "relinearization key (s^2 to s)")
    with phases("key generation", names=keys):
        ctx.keygen()
    return ctx


def _insecure(params: ckks.Params) -> str:
    moduli = " + ".join(str(b) for b in params.q_bits)
    return (
        f"ring: n={params.n} ({params.slots} slots), q = {moduli} bits, p = "
        f"{' + '.join(str(b) for b in params.p_bits)} bits, scale 2^{params.scale_bits}\n"
        f"INSECURE: log2(QP) = {params.log2_qp:.0f} bits at n = {params.n}, a ring far too "
        "small for any security (the HE standard starts at n = 1024); chosen so the graphs stay "
        "small and the example runs in seconds. For reading the compiler's work only."
    )


def _check(
    name: str, got: np.ndarray, expected: np.ndarray, need: float = MIN_BITS
) -> tuple[str, bool]:
    from ren.schemes import ckks

    bits = ckks.precision_bits(got, expected)
    err = float(np.max(np.abs(got - expected)))
    ok = bits >= need
    verdict = "ok" if ok else "TOO IMPRECISE"
    return (
        f"{name}: decrypted vs NumPy: max error {err:.2e}, precision {bits:.1f} bits "
        f"(needs {need:.0f}: {verdict})\n"
        f"  got      {_fmt(got)}\n  expected {_fmt(expected)}",
        ok,
    )


def ckks_mul() -> Outcome:
    """One CKKS multiply ``Enc(x) * Enc(y)``, relinearized and rescaled, checked against NumPy."""
    phases = Phases()
    with observing(phases):
        ctx = _ckks_context(phases)
        params = ctx.params
        x, y = np.random.default_rng(0).uniform(-1, 1, (2, params.slots))
        with phases("encrypt x"):
            a = ctx.encrypt(x).realize()
        with phases("encrypt y"):
            b = ctx.encrypt(y).realize()
        with phases("multiply: x * y, relinearized and rescaled", focus=True):
            c = (a * b).realize()
        with phases("decrypt"):
            got = ctx.decrypt(c)
    check, ok = _check("x * y", got, x * y)
    summary = "\n".join(
        [
            "program: ct = Enc(x) * Enc(y) in CKKS: the tensor product, relinearization "
            "(a key switch of c2 from s^2 to s) and a rescale (level "
            f"{a.level} -> {c.level}), as one lazy graph",
            f"x, y: {params.slots} random reals in [-1, 1) (NumPy seed 0)",
            _insecure(params),
            check,
        ]
    )
    return phases.outcome(summary, ok)


def ckks_rotate() -> Outcome:
    """One CKKS rotation by one slot, checked against ``numpy.roll``."""
    from ren.ring import galois_for_rotation

    phases = Phases()
    with observing(phases):
        ctx = _ckks_context(phases)
        params = ctx.params
        g = galois_for_rotation(params.n, 1)
        with phases(f"rotation key for rotate(1) (Galois element {g})"):
            ctx.rotation_key(1)
        x = np.random.default_rng(0).uniform(-1, 1, params.slots)
        with phases("encrypt x"):
            a = ctx.encrypt(x).realize()
        with phases("rotate(1): automorphism X -> X^5 and a key switch", focus=True):
            r = a.rotate(1).realize()
        with phases("decrypt"):
            got = ctx.decrypt(r)
    check, ok = _check("rotate(x, 1)", got, np.roll(x, -1))
    summary = "\n".join(
        [
            "program: Enc(x).rotate(1) in CKKS: slot j + 1 moves to slot j; the automorphism "
            f"X -> X^{g} of both parts, then a key switch of c1 from s(X^{g}) to s",
            f"x: {params.slots} random reals in [-1, 1) (NumPy seed 0)",
            _insecure(params),
            check,
        ]
    )
    return phases.outcome(summary, ok)


def jit() -> Outcome:
    """``ren.jit`` on ciphertexts: ``step(x, y) = (x * y + x).rotate(1)``, captured and replayed.

    The function is captured on the first call and replayed on the next two, each result
    decrypted and checked against NumPy.
    """
    import ren

    phases = Phases()
    with observing(phases):
        ctx = _ckks_context(phases)
        params = ctx.params
        with phases("rotation key for rotate(1)"):
            ctx.rotation_key(1)  # made outside: the capture then holds only the computation

        @ren.jit
        def step(x: ckks.Ciphertext, y: ckks.Ciphertext) -> ckks.Ciphertext:
            return (x * y + x).rotate(1)

        lines, ok = [], True
        for call in range(3):
            a, b = np.random.default_rng(call).uniform(-1, 1, (2, params.slots))
            with phases(f"call {call + 1}: encrypt x"):
                x = ctx.encrypt(a).realize()
            with phases(f"call {call + 1}: encrypt y"):
                y = ctx.encrypt(b).realize()
            kind = "capture" if call == 0 else "replay"
            with phases(f"call {call + 1}: step(x, y), {kind}", focus=call == 0):
                out = step(x, y)
            with phases(f"call {call + 1}: decrypt"):
                got = ctx.decrypt(out)  # before the next call: a replay reuses the output
            line, good = _check(f"call {call + 1} ({kind})", got, np.roll(a * b + a, -1))
            lines.append(line)
            ok = ok and good
        info = step.cache_info()
    summary = "\n".join(
        [
            "program: @ren.jit step(x, y) = (x * y + x).rotate(1) on CKKS ciphertexts, called "
            "three times with fresh encryptions (NumPy seeds 0, 1, 2)",
            f"jit: {info.misses} capture, {info.hits} replays; plan {step.last!r}",
            _insecure(params),
            *lines,
        ]
    )
    return phases.outcome(summary, ok)


def bootstrap() -> Outcome:
    """One CKKS bootstrap of ``boot-toy``, stepped region by region against NumPy shadows.

    Each stage's output (``ckks.bootstrap(..., stages=)``) is watched: ModRaise's and
    CoeffToSlot's shadows come from the exact decryption ``t + q_0 I`` of the raised input (``I``
    is not known otherwise), EvalMod's is ``2 pi`` times the message's coefficients, SlotToCoeff's
    the message. The stages the realization fuses away are computed apart (``ren.viz.debug``).
    """
    from ren.circuits.ckks.bootstrap import EVAL_SCALE
    from ren.poly import Poly
    from ren.schemes import ckks
    from ren.viz.debug import Stepper

    phases = Phases()
    with observing(phases):
        params = ckks.Params.preset("boot-toy")
        n, half, q0 = params.n, params.slots, params.q_moduli[0]
        ctx = ckks.Context(params, seed=1, device="python")
        with phases("key generation, then the bootstrap's keys and transforms"):
            ctx.keygen()
            ctx.bootstrap_keys(progress=False)
        z = np.random.default_rng(0).uniform(-1, 1, half)
        with phases("encrypt z at level 0"):
            ct = ctx.encrypt(z, level=0).realize()
        with phases("the shadow: the exact decryption t + q_0 I of the raised input"):
            top = params.ring(params.max_level)
            lifted = tuple(Poly(p.tolist(centered=True), top, "python").ntt() for p in ct.parts)
            raised = dataclasses.replace(ct, parts=lifted, level=params.max_level)
            exact = np.array(ctx.decrypt_poly(raised).tolist(centered=True), dtype=float)
        rev = [int(f"{j:0{half.bit_length() - 1}b}"[::-1], 2) for j in range(half)]
        m, K1 = ckks.embed_inverse(z, n), ckks.BootstrapConfig.for_params(params).K + 1
        shadows = {  # what each stage's slots hold (CoeffToSlot's and EvalMod's bit-reversed)
            "mod_raise": ckks.embed(exact, n).real / EVAL_SCALE,
            "coeff_to_slot": ((exact[:half] + 1j * exact[half:]) / q0 / (2 * K1))[rev],
            "eval_mod": (2 * np.pi * (m[:half] + 1j * m[half:]))[rev],
            "slot_to_coeff": z,
        }
        stages: dict[str, ckks.Ciphertext] = {}
        lines: list[str] = []
        left, stops = list(shadows), 0
        with phases("bootstrap, stepped region by region", focus=True):
            out = ckks.bootstrap(ct, stages=stages)
            stepper = Stepper(out)
            for name, shadow in shadows.items():
                stepper.watch(stages[name], ctx, shadow, label=name)
            while not stepper.done:
                stepper.next_region()
                stops += 1
                for name in list(left):
                    try:
                        bits = ckks.precision_bits(stepper.decrypt(stages[name]), shadows[name])
                    except ValueError:  # its kernels have not all run yet
                        continue
                    left.remove(name)
                    decrypted = name in ("mod_raise", "coeff_to_slot")
                    how = "the exact decryption" if decrypted else "NumPy"
                    how += "; computed apart" if name != "slot_to_coeff" else "; an output"
                    shown = "exact" if bits == np.inf else f"{bits:.1f} bits"
                    lines.append(f"  {name:<14}{shown:>10} after kernel {stepper.ran - 1:4d}")
                    lines[-1] += f" (shadow from {how})"
        with phases("decrypt"):
            got = ctx.decrypt(out)
    check, ok = _check("bootstrap(z)", got, z, need=25.0)
    head = (
        f"program: ckks.bootstrap of z, {half} random reals in [-1, 1) (NumPy seed 0) at level "
        f"0, to level {out.level} (preset boot-toy), stepped with next_region in {stops} stops; "
        "each stage's precision (absolute: -log2 of the largest slot error, as "
        "ckks.precision_bits) against its shadow once the kernels working toward it ran:"
    )
    return phases.outcome("\n".join([head, *lines, _insecure(params), check]), ok)


#: name -> (one-line description, the function running it).
EXAMPLES: dict[str, tuple[str, Callable[[], Outcome]]] = {
    "seed": ("(a + b) * (a - 1) over n=8, Q=17*97: the program of ren.demo", seed),
    "ckks-mul": ("one CKKS multiply, relinearized and rescaled (tiny insecure ring)", ckks_mul),
    "ckks-rotate": ("one CKKS rotation by one slot (tiny insecure ring)", ckks_rotate),
    "jit": ("ren.jit on ciphertexts: one capture, two replays", jit),
    "bootstrap": ("one CKKS bootstrap stepped region by region (boot-toy, insecure)", bootstrap),
    "bfv-mul": ("one BFV multiply of integers mod t, with its noise budget", bfv_mul),
}


def run_example(name: str) -> tuple[Trace, Outcome]:
    """Run example ``name`` under a new ``record()``; returns the trace and its outcome.

    Raises:
        ValueError: for a name that is not in ``EXAMPLES`` (the message lists them).
    """
    if name not in EXAMPLES:
        raise ValueError(f"no example named {name!r}; the examples are: {', '.join(EXAMPLES)}")
    _, fn = EXAMPLES[name]
    with record() as trace:
        base = len(trace.realizations)
        outcome = fn()
    return trace, outcome.shifted(base)
