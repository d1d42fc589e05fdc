"""CKKS parameters from requirements: a depth, a precision and slots in, the smallest chain out.

``Params.choose(depth=..., precision_bits=...)`` tries the ring degrees from the least that holds
the slots, and at each the smallest scale whose *predicted* precision after a chain of ``depth``
products (``ren.schemes.ckks.noise``, no key made, nothing run) reaches the request with a bit to
spare; then the fewest key-switching digits whose chain fits the HE standard's bound for 128-bit
security. ``Params.explain()`` says what any parameters hold, and for chosen ones why each
smaller ring was refused.

**The chain.** ``q_0`` has ``HEADROOM`` bits above the scale (values up to ``2^9`` at level 0),
then ``depth`` moduli of the scale's size (one rescale each), and special moduli as large as the
largest digit (hybrid key switching). **The chain of products** the precision is predicted on:
``x_0 * x_1 * ... * x_depth`` of fresh encryptions (at the scale, each at the level it meets) of
complex values of magnitude at most 1, each product relinearized and rescaled, read at level 0.
"""

from __future__ import annotations

import dataclasses
import math
import types
import weakref
from typing import Any

from ren.schemes.ckks import noise
from ren.schemes.rlwe.security import SECURITY_BOUNDS

__all__ = [
    "HEADROOM",
    "MARGIN",
    "MAX_MODULUS_BITS",
    "chain_precision",
    "choose",
    "explain",
    "for_program",
    "measured_chain",
]

#: The bits of ``q_0`` above the scale: values of magnitude up to ``2^9`` decrypt at level 0.
HEADROOM = 10
#: The bits the prediction must clear the request by (it is within 2 bits of the measure, and on
#: average a little below it).
MARGIN = 1.0
#: The largest modulus chosen (Ren's NTT primes go to 62 bits; 61 leaves one for sums).
MAX_MODULUS_BITS = 61
#: A special modulus's largest size (the key ring's primes).
P_BITS = 60

_REASONS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def _bound(n: int) -> float:
    """The 128-bit bound on ``log2(QP)`` at ``n``: the HE standard's, doubled past its table."""
    if n in SECURITY_BOUNDS:
        return float(SECURITY_BOUNDS[n])
    top = max(SECURITY_BOUNDS)
    return SECURITY_BOUNDS[top] * n / top if n > top else 0.0


def chain_precision(params: Any, depth: int | None = None, every: bool = True) -> list[float]:
    """The predicted precision after ``0 .. depth`` products of the chain (module docstring).

    ``depth`` defaults to every level the parameters have (``max_level``); ``every=False``
    gives the last figure alone. Nothing is run and no key is made: the estimate is
    ``ren.schemes.ckks.noise``'s.
    """
    depth = params.max_level if depth is None else depth
    scale = params.scale
    values = types.SimpleNamespace(magnitude=1.0, scale=scale, rounding=None)  # a stand-in
    x = noise.fresh(params, values)
    level = params.max_level
    out = [noise.precision_bits(x, scale, params.slots, False)] if every or not depth else []
    for step in range(depth):
        y = noise.fresh(params, values)
        x = noise.key_switch(params, noise.multiply(x, y), level)
        q = params.q_moduli[level]
        x = noise.rescale(params, x, q)
        scale = scale * params.scale / q  # times a fresh value at the scale, rescaled
        level -= 1
        Q = params.ring(level).Q
        if 2 * scale >= Q:  # the scale outgrew the modulus: the values are lost
            out.append(-math.inf)
            break
        if every or step == depth - 1:
            out.append(noise.precision_bits(x, scale, params.slots, False, Q))
    return out


def measured_chain(params: Any, depth: int, seed: int = 12) -> float:
    """The chain of ``depth`` products run on ``params`` and measured: the check of a choice.

    Fresh encryptions of complex values in the unit disk (NumPy ``seed``), each product
    relinearized and rescaled, decrypted against NumPy (``ckks.precision_bits``). Keys are made.
    """
    import numpy as np

    from ren.schemes.ckks.context import Context
    from ren.schemes.ckks.encoding import precision_bits

    ctx = Context(params, seed=11, device="cpu")
    ctx.keygen()
    rng = np.random.default_rng(seed)

    def draw() -> np.ndarray:
        r = np.sqrt(rng.uniform(0, 1, params.slots))
        out: np.ndarray = r * np.exp(2j * np.pi * rng.uniform(0, 1, params.slots))
        return out

    exact = draw()
    x = ctx.encrypt(exact)
    for _ in range(depth):
        v = draw()
        x = x * ctx.encrypt(v, level=x.level)
        exact = exact * v
    return precision_bits(ctx.decrypt(x), exact)


def _p_bits(digit: int) -> tuple[int, ...]:
    """Special moduli of about ``P_BITS`` each with at least ``digit`` bits in all."""
    k = max(1, math.ceil((digit + 1) / P_BITS))
    size = math.ceil((digit + 1) / k)
    return (max(size, 20),) * k


def _candidate(cls: Any, n: int, depth: int, scale_bits: int, dnum: int) -> Any:
    q0 = scale_bits + HEADROOM
    q_bits = (q0,) + (scale_bits,) * depth
    L = len(q_bits)
    size = -(-L // dnum)
    digit = max(sum(q_bits[i : i + size]) for i in range(0, L, size))
    params = cls(
        n=n,
        q_bits=q_bits,
        p_bits=_p_bits(digit),
        scale_bits=scale_bits,
        dnum=dnum,
        insecure=True,
    )
    if any(q.bit_length() != b for q, b in zip(params.q_moduli, q_bits, strict=True)):
        raise ValueError(f"too few {scale_bits}-bit primes 1 mod 2n at n={n}")
    return params


def choose(cls: Any, depth: int, precision_bits: float, slots: int | None, secure: bool) -> Any:
    """``Params.choose``: see there. Returns the parameters, their reasoning noted."""
    depth, precision_bits, slots = _check(depth, precision_bits, slots, secure)
    lines = [
        f"asked: depth {depth}, {precision_bits:g} bits (absolute, predicted after a chain of "
        f"{depth} products of values of magnitude at most 1, {MARGIN:g} bit to spare), "
        f"{slots or 'any number of'} slots, {'128-bit secure' if secure else 'security not asked'}"
    ]
    n = max(1024 if secure else 4, 2 * (slots or 1))
    n = 1 << (n - 1).bit_length()
    fits: dict[int, float] = {}  # n: the most bits a chain within the bound predicts there
    larger: int | None = None  # the least ring past the table whose doubled bound would hold it
    while n <= 2**17:
        found, most = _at(cls, n, depth, precision_bits, secure, lines)
        fits[n] = most
        if found is not None:
            if n in SECURITY_BOUNDS or not secure:
                if secure:
                    found = dataclasses.replace(found, insecure=False)
                lines.append(f"chosen: {_describe(found)}")
                _REASONS[found] = "\n".join(lines)
                return found
            larger = n
            break
        n *= 2
    top = max(k for k in fits if k in SECURITY_BOUNDS) if fits else None
    could = (
        f"the smallest ring that could hold it is n={larger}, past the HE standard's table "
        f"(its bound doubled: {_bound(larger):.0f} bits)"
        if larger is not None
        else "no ring up to n=131072 both reaches it and fits its bound (each ring below says "
        f"which it lacks; the scale is at most 2^{MAX_MODULUS_BITS - HEADROOM})"
    )
    kept = f"{fits[top]:.1f} bits" if top is not None and fits[top] > -math.inf else "none"
    raise ValueError(
        f"no chain holds depth={depth} at precision_bits={precision_bits:g} within the 128-bit "
        f"bound for any n up to 65536: {could}; at n={top} the most a secure chain of depth "
        f"{depth} is predicted to keep is {kept} (ask for at most that, lower the depth, "
        "bootstrap to renew levels, or pass secure=False). Rings tried: " + "; ".join(lines[1:])
    )


def _at(
    cls: Any, n: int, depth: int, want: float, secure: bool, lines: list[str]
) -> tuple[Any, float]:
    """``(parameters or None, the most bits within the bound)`` at ``n``."""
    bound = _bound(n)
    best, most = (0, -math.inf), -math.inf
    for scale_bits in range(10, MAX_MODULUS_BITS - HEADROOM + 1):
        try:
            params = _candidate(cls, n, depth, scale_bits, depth + 1)
        except ValueError:
            continue  # too few primes of this size at n: try the next size
        if scale_bits + 2 < want:  # the noise takes bits of its own: this scale cannot do
            continue
        bits = chain_precision(params, depth, every=False)[-1]
        if bits > best[1]:
            best = (scale_bits, bits)
        if params.log2_qp <= bound:
            most = max(most, bits)
        if bits < want + MARGIN:
            continue
        for dnum in range(1, depth + 2):  # the fewest digits (fastest switches) that fit
            try:
                fit = _candidate(cls, n, depth, scale_bits, dnum)
            except ValueError:
                continue
            if not secure or fit.log2_qp <= bound:
                lines.append(
                    f"n={n}: scale 2^{scale_bits} predicts {bits:.1f} bits; dnum={dnum} gives "
                    f"log2(QP)={fit.log2_qp:.0f}" + (f" <= {bound:.0f}" if secure else "")
                )
                return fit, most
        lines.append(
            f"n={n}: scale 2^{scale_bits} predicts {bits:.1f} bits, but even with dnum="
            f"{depth + 1} log2(QP)={params.log2_qp:.0f} is above the bound {bound:.0f}"
        )
        return None, most
    lines.append(
        f"n={n}: no scale up to 2^{MAX_MODULUS_BITS - HEADROOM} reaches {want:g} bits"
        + (f" (the best, scale 2^{best[0]}, predicts {best[1]:.1f})" if best[0] else "")
    )
    return None, most


#: The levels the first run of a program gets to find its depth (and, failing that, the most).
PROBE_LEVELS = (8, 24, 60)


def _run(params: Any, fn: Any, inputs: list[Any]) -> tuple[int, float]:
    """``fn`` on encryptions of ``inputs`` at ``params``, built and never run: levels, bits.

    The keys are made (rotation keys as ``fn`` asks for them); the program's graph is built
    and dropped unrealized. Returns the levels it took and the lowest predicted precision of
    the ciphertexts it returns.
    """
    from ren.schemes.ckks.api import predicted_precision
    from ren.schemes.ckks.ciphertext import Ciphertext
    from ren.schemes.ckks.context import Context

    with Context(params, seed=0) as ctx:
        cts = [ctx.encrypt(v) for v in inputs]
        out = fn(*cts)
    outs = out if isinstance(out, tuple | list) else (out,)
    cts_out = [c for c in outs if isinstance(c, Ciphertext)]
    if not cts_out:
        raise TypeError(
            f"for_program needs fn to return a ckks.Ciphertext (or a tuple of them), got "
            f"{type(out).__name__}"
        )
    levels = params.max_level - min(c.level for c in cts_out)
    return levels, min(predicted_precision(c) for c in cts_out)


def for_program(
    cls: Any, fn: Any, inputs: tuple[Any, ...], precision_bits: float, secure: bool
) -> Any:
    """``Params.for_program``: see there."""
    import numpy as np

    from ren.schemes.ckks.encoding import slot_values

    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    if not inputs:
        raise ValueError("for_program needs at least one example input (slot values) for fn")
    arrays = [np.atleast_1d(np.asarray(v)) for v in inputs]
    slots = max(a.size for a in arrays)
    n = max(8, 1 << (2 * slots - 1).bit_length())
    for i, a in enumerate(arrays):
        slot_values(a, n // 2)  # the encoder's checks, naming nothing yet: refuse early
        if not np.all(np.isfinite(a)):
            raise ValueError(f"example input {i} holds NaN or infinity")
    depth = None
    for levels in PROBE_LEVELS:
        probe = cls(n=n, q_bits=(60,) + (40,) * levels, p_bits=(61,) * 3, dnum=levels // 2 + 1,
                    insecure=True)  # fmt: skip
        try:
            depth, _ = _run(probe, fn, arrays)
            break
        except ValueError as e:
            if "level 0" not in str(e) and "levels" not in str(e):
                raise
    if depth is None:
        raise ValueError(
            f"fn takes more than {PROBE_LEVELS[-1]} levels: bootstrap inside it, or split it"
        )
    want = float(precision_bits)
    for _ in range(4):  # the chain of products is a guide; the program's own figure decides
        params = choose(cls, max(depth, 0), want, slots, secure)
        _, bits = _run(params, fn, arrays)
        if bits >= precision_bits:
            reasons = _REASONS.get(params, "")
            _REASONS[params] = (
                f"the program takes {depth} levels (found by a first run at n={n} with "
                f"{PROBE_LEVELS[0]} levels, nothing computed); on these parameters it is "
                f"predicted to keep {bits:.1f} bits\n" + reasons
            )
            return params
        want += precision_bits - bits + 0.5
    raise ValueError(
        f"no parameters found for fn at precision_bits={precision_bits:g}: the last try "
        f"predicted {bits:.1f} bits at depth {depth} (ask for less, or restructure fn)"
    )


def _check(depth: object, precision_bits: object, slots: object, secure: object) -> Any:
    from ren.poly import is_int

    if not is_int(depth) or isinstance(depth, bool):
        raise TypeError(f"depth must be an int, got {type(depth).__name__}")
    if not 0 <= int(depth) <= 60:
        raise ValueError(f"depth must be from 0 to 60, got {depth}")
    if isinstance(precision_bits, bool) or not isinstance(precision_bits, int | float):
        raise TypeError(f"precision_bits must be a number, got {type(precision_bits).__name__}")
    if not 1 <= precision_bits <= MAX_MODULUS_BITS - HEADROOM:
        raise ValueError(
            f"precision_bits must be from 1 to {MAX_MODULUS_BITS - HEADROOM} (the scale's largest "
            f"size, moduli being at most {MAX_MODULUS_BITS} bits), got {precision_bits}"
        )
    if slots is not None:
        if not is_int(slots) or isinstance(slots, bool):
            raise TypeError(f"slots must be None or an int, got {type(slots).__name__}")
        if slots < 1 or slots > 2**16:
            raise ValueError(f"slots must be from 1 to 65536 (n = 2^17), got {slots}")
    if not isinstance(secure, bool):
        raise TypeError(f"secure must be True or False, got {secure!r}")
    return int(depth), float(precision_bits), None if slots is None else int(slots)


def _describe(params: Any) -> str:
    return (
        f"n={params.n}, q_bits={params.q_bits}, p_bits={params.p_bits}, "
        f"scale_bits={params.scale_bits}, dnum={params.dnum}"
    )


def explain(params: Any) -> str:
    """What ``params`` hold: the chain, its security, the predicted precision at each depth."""
    bound = SECURITY_BOUNDS.get(params.n)
    secure = "not checked (insecure=True)" if params.insecure else "128-bit (checked)"
    lines = [
        f"ckks.Params({_describe(params)}): {params.slots} slots, {params.L} ciphertext moduli "
        f"({params.max_level} levels above q_0), {len(params.digits)} key-switching digits",
        f"log2(QP) = {params.log2_qp:.1f}; the HE-standard bound at n={params.n} is "
        f"{bound if bound is not None else 'not in the table'}; security: {secure}",
        "predicted precision (bits, absolute) after k products of fresh values of magnitude at "
        "most 1, each relinearized and rescaled:",
    ]
    for k, bits in enumerate(chain_precision(params)):
        lines.append(f"  depth {k}: {bits:.1f}")
    reasons = _REASONS.get(params)
    if reasons is not None:
        lines += ["how it was chosen:", *("  " + line for line in reasons.splitlines())]
    return "\n".join(lines)
