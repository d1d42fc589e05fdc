"""OpenFHE's CKKS as a peer for Ren's circuits: rotations, linear transforms, Chebyshev
evaluation and slot sums, timed on one thread, each result checked against NumPy.

Runs under the Python 3.10 environment where OpenFHE's wheel imports (set-up in
``benchmarks/peers/README.md``); it imports only ``openfhe``, NumPy and the standard library, so
Ren need not be importable there. Ren runs it through ``benchmarks/openfhe_peer.py``::

    .venv-openfhe/bin/python benchmarks/peers/openfhe_circuits.py CONFIG.json OUT.json [--quick]

``OMP_NUM_THREADS`` is set to 1 before ``openfhe`` is imported (whatever the caller had), and the
output says so. Each figure is the median of ``repeats`` calls, each call timed alone with
``time.perf_counter`` after one untimed warm-up call; keys are made and plaintexts encoded
beforehand, outside the timing.

**CONFIG.** A Ren parameter set at the top level, the groups to run under ``groups``; a group's
block may override any top-level key (``n``, ``q_bits``, ``scale_bits``, ``dnum``, ``repeats``,
``seed``, ``min_bits``)::

    {"n": 8192, "q_bits": [60, 40, 40], "p_bits": [60], "scale_bits": 40,
     "dnum": 3,            # digits of hybrid key switching (default: len(q_bits), one modulus each)
     "repeats": 5, "seed": 1, "min_bits": 10,
     "groups": {
       "rotations": {"counts": [1, 4, 16, 64]},
       "linear": {"diagonals": [0, 1, 2, 3, 4, 5, 6, 7], "dense_size": 4096},
       "sum": {},
       "chebyshev": {"n": 16384, "scale_bits": 40, "first_mod_bits": 60, "depth": 9,
                     "degrees": [59, 119], "points": 4096,
                     "functions": ["sigmoid", "exp", "inverse", "sqrt"],
                     "scaling": ["FIXEDMANUAL", "FLEXIBLEAUTO"]}}}

The context follows the Ren set as closely as OpenFHE allows: ``CCParamsCKKSRNS`` with ring
dimension ``n``, multiplicative depth ``len(q_bits) - 1``, first modulus ``q_bits[0]`` bits,
scaling moduli ``scale_bits`` bits (OpenFHE makes every middle modulus that size),
``FIXEDMANUAL`` rescaling, ``HYBRID`` key switching with ``dnum`` large digits, batch ``n / 2``,
and the 128-bit classical security level where OpenFHE accepts the ring, ``HEStd_NotSet``
otherwise. OpenFHE picks its special modulus P itself (60-bit primes, as many as its noise rule
asks), so ``p_bits`` is recorded, not applied. Every row has ``ring``, what OpenFHE chose: its
ring dimension, the bits of each Q and P modulus (P read off a serialized relinearization key),
``log2_q``, ``log2_p``, digits, security level and scaling technique.

**Groups.**

* ``rotations``: for each ``k`` of ``counts``, ``k`` rotations of one ciphertext by 1..k:
  ``hoisted`` (``EvalFastRotationPrecompute`` once and ``EvalFastRotation`` k times, timed
  together) and ``separate`` (``EvalRotate`` k times).
* ``linear``: a plaintext matrix times an encrypted vector by the diagonal method with
  baby-step giant-step (OpenFHE's Python API does not expose ``EvalLinearTransform``; ``route``
  says which was used): baby steps hoisted (``EvalFastRotation``), the diagonals pre-rotated by
  their giant step and multiplied in (``EvalMult``), giant steps by ``EvalRotate``, one rescale.
  ``sparse``: a ``size`` x ``size`` matrix (default ``n / 2``) nonzero on ``diagonals`` only;
  ``dense``: a random ``dense_size`` x ``dense_size`` matrix (default ``n / 2``; ``0`` leaves it
  out). A size below ``n / 2`` must divide it: the vector and the diagonals are repeated to fill
  the slots. Entries of the matrix and the vector are uniform in [-1, 1]. The baby-step count is
  the power of two that needs the fewest rotation keys.
* ``sum``: ``EvalSum`` of all ``n / 2`` slots and ``EvalInnerProduct`` with a plaintext vector.
* ``chebyshev``: ``EvalChebyshevFunction(f, ct, a, b, degree)`` for ``sigmoid`` on [-8, 8],
  ``exp`` on [-1, 1], ``inverse`` (1/x) on [1, 16] and ``sqrt`` on [0.01, 1], in its own deeper
  context: ``n``, ``scale_bits``, ``first_mod_bits`` (default ``q_bits[0]``), ``depth`` (default:
  what OpenFHE's table asks for the largest degree) and one context per ``scaling`` technique. The
  input holds ``points`` evenly spaced points of the interval, repeated to fill the slots. A
  degree whose table depth exceeds the context's is skipped.

``--quick``: two repeats, the first two rotation counts, a 64 x 64 dense matrix, the smallest
Chebyshev degree.

**Output.** ``{"openfhe": {"version", "distribution"}, "machine", "threads", "quick", "config",
"rows": [...], "skipped": [{"bench", "reason"}]}``; each row has ``bench``, ``params`` (the Ren
set in a few words), ``median_ms``, ``min_ms``, ``repeats``, ``times_ms``, ``ring``, ``bits`` (the
decrypted result against NumPy, ``-log2`` of the largest absolute error), ``check`` (``ok`` when
``bits >= min_bits``, else ``FAIL``) and its group's extras.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

_CALLER_OMP = os.environ.get("OMP_NUM_THREADS")
os.environ["OMP_NUM_THREADS"] = "1"  # before NumPy and OpenFHE start their thread pools

import numpy as np  # noqa: E402
import openfhe as fhe  # noqa: E402

Row = dict[str, Any]
GROUPS = ("rotations", "linear", "sum", "chebyshev")
DEFAULTS: dict[str, Any] = {
    "n": 8192,
    "q_bits": [60, 40, 40],
    "p_bits": [60],
    "scale_bits": 40,
    "repeats": 5,
    "seed": 1,
    "min_bits": 10,
}

#: OpenFHE's FUNCTION_EVALUATION.md: the multiplicative depth ``EvalChebyshevFunction`` needs for a
#: degree up to the first figure; one less on the interval [-1, 1].
DEPTH_TABLE = (
    (5, 4),
    (13, 5),
    (27, 6),
    (59, 7),
    (119, 8),
    (247, 9),
    (495, 10),
    (1007, 11),
    (2031, 12),
)

Scalar = Callable[[float], float]
Vectorized = Callable[[np.ndarray], np.ndarray]

#: name -> (f for OpenFHE, f for NumPy, a, b)
FUNCTIONS: dict[str, tuple[Scalar, Vectorized, float, float]] = {
    "sigmoid": (lambda x: 1 / (1 + math.exp(-x)), lambda x: 1 / (1 + np.exp(-x)), -8.0, 8.0),
    "exp": (math.exp, np.exp, -1.0, 1.0),
    "inverse": (lambda x: 1 / x, lambda x: 1 / x, 1.0, 16.0),
    "sqrt": (math.sqrt, np.sqrt, 0.01, 1.0),
}


def table_depth(degree: int, a: float, b: float) -> int:
    """The depth OpenFHE's table gives ``EvalChebyshevFunction`` at ``degree`` on ``[a, b]``."""
    for top, depth in DEPTH_TABLE:
        if degree <= top:
            return depth - 1 if (a, b) == (-1.0, 1.0) else depth
    raise ValueError(f"degree {degree} is past OpenFHE's depth table (at most 2031)")


def bits(got: np.ndarray, want: np.ndarray) -> float:
    """``-log2`` of the largest absolute error (64 for an exact result)."""
    err = float(np.max(np.abs(np.asarray(got) - np.asarray(want))))
    return round(-math.log2(max(err, 2.0**-64)), 2)


def timed(call: Callable[[], object], repeats: int) -> tuple[dict[str, Any], object]:
    """Median and minimum of ``repeats`` calls of ``call()``, each timed alone after one warm-up
    call; returns the figures and the last call's result."""
    result = call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = call()
        times.append((time.perf_counter() - start) * 1e3)
    figures = {
        "median_ms": round(statistics.median(times), 4),
        "min_ms": round(min(times), 4),
        "repeats": repeats,
        "times_ms": [round(t, 4) for t in times],
    }
    return figures, result


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    model = platform.processor()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            names = [ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")]
        model = names[0] if names else model
    except OSError:
        pass
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "cpu": model,
        "cpu_count": os.cpu_count(),
    }


# --- contexts --------------------------------------------------------------------------------


@dataclass
class Context:
    """An OpenFHE context, its keys and what OpenFHE chose for the ring."""

    cc: Any
    keys: Any
    slots: int
    ring: dict[str, Any]
    params: str

    def encrypt(self, values: np.ndarray) -> Any:
        """A fresh ciphertext of ``values`` (real, at most ``slots`` of them)."""
        return self.cc.Encrypt(self.keys.publicKey, self.cc.MakeCKKSPackedPlaintext(values))

    def decrypt(self, ct: Any) -> np.ndarray:
        """The real parts of all ``slots`` slots of ``ct``."""
        pt = self.cc.Decrypt(self.keys.secretKey, ct)
        pt.SetLength(self.slots)
        return np.array(pt.GetRealPackedValue())


_MODULUS = re.compile(r'"cm": \{\s*(?:"cereal_class_version": \d+,\s*)?"v": (\d+)\s*\}')


def _moduli(serialized: str) -> list[int]:
    """The distinct single moduli in a JSON-serialized OpenFHE object, in order of appearance."""
    seen: dict[int, None] = {}
    for m in _MODULUS.finditer(serialized):
        seen.setdefault(int(m.group(1)), None)
    return list(seen)


def make_context(
    n: int, depth: int, scale_bits: int, first_bits: int, dnum: int, scaling: str, params: str
) -> Context:
    """A CKKS context as close to a Ren set as OpenFHE allows, with a relinearization key."""
    p = fhe.CCParamsCKKSRNS()
    p.SetRingDim(n)
    p.SetMultiplicativeDepth(depth)
    p.SetScalingModSize(scale_bits)
    p.SetFirstModSize(first_bits)
    p.SetScalingTechnique(getattr(fhe, scaling))
    p.SetKeySwitchTechnique(fhe.HYBRID)
    p.SetNumLargeDigits(dnum)
    p.SetBatchSize(n // 2)
    security, note = "HEStd_128_classic", None
    p.SetSecurityLevel(fhe.HEStd_128_classic)
    try:
        cc = fhe.GenCryptoContext(p)
    except RuntimeError as e:  # the ring is smaller than the standard asks for this Q*P
        security, note = "HEStd_NotSet", str(e).rsplit(":", 1)[-1].strip()
        p.SetSecurityLevel(fhe.HEStd_NotSet)
        cc = fhe.GenCryptoContext(p)
    for feature in (fhe.PKE, fhe.KEYSWITCH, fhe.LEVELEDSHE, fhe.ADVANCEDSHE):
        cc.Enable(feature)
    keys = cc.KeyGen()
    cc.EvalMultKeyGen(keys.secretKey)

    q = _moduli(fhe.Serialize(cc, fhe.JSON))
    relin = cc.GetEvalMultKeyVector(keys.secretKey.GetKeyTag())[0]
    p_moduli = [m for m in _moduli(fhe.Serialize(relin, fhe.JSON)) if m not in q]
    ring = {
        "ring_dim": cc.GetRingDimension(),
        "q_towers": len(q),
        "q_moduli_bits": [m.bit_length() for m in q],
        "log2_q": round(sum(math.log2(m) for m in q), 2),
        "p_towers": len(p_moduli),
        "p_moduli_bits": [m.bit_length() for m in p_moduli],
        "log2_p": round(sum(math.log2(m) for m in p_moduli), 2),
        "dnum": dnum,
        "depth": depth,
        "scaling": scaling,
        "security": security,
        "security_note": note,
        "batch_size": n // 2,
    }
    return Context(cc, keys, n // 2, ring, params)


def ren_context(cfg: dict[str, Any]) -> Context:
    """The context for a Ren set ``{"n", "q_bits", "p_bits", "scale_bits", "dnum"}``."""
    q_bits, p_bits = cfg["q_bits"], cfg.get("p_bits", [])
    dnum = cfg.get("dnum") or len(q_bits)
    params = f"n={cfg['n']} q={','.join(map(str, q_bits))} p={','.join(map(str, p_bits))}"
    params += f" scale={cfg['scale_bits']} dnum={dnum}"
    depth = len(q_bits) - 1
    return make_context(cfg["n"], depth, cfg["scale_bits"], q_bits[0], dnum, "FIXEDMANUAL", params)


def row(bench: str, ctx: Context, figures: dict[str, Any], got_bits: float, cfg: dict, **extra):
    """One result: name, Ren set, figures, OpenFHE's ring, precision and the extras."""
    check = "ok" if got_bits >= cfg["min_bits"] else "FAIL"
    return {"bench": bench, "params": ctx.params, **figures, "ring": ctx.ring, "bits": got_bits,
            "check": check, **extra}  # fmt: skip


# --- rotations -------------------------------------------------------------------------------


def bench_rotations(cfg: dict[str, Any], quick: bool) -> list[Row]:
    """``k`` rotations by 1..k of one ciphertext, hoisted and one by one."""
    ctx = ren_context(cfg)
    cc = ctx.cc
    counts = cfg.get("counts", [1, 4, 16, 64])[: 2 if quick else None]
    cc.EvalRotateKeyGen(ctx.keys.secretKey, list(range(1, max(counts) + 1)))
    v = np.random.default_rng(cfg["seed"]).uniform(-1, 1, ctx.slots)
    ct = ctx.encrypt(v)
    m = cc.GetCyclotomicOrder()

    def hoisted(k: int) -> list[Any]:
        digits = cc.EvalFastRotationPrecompute(ct)
        return [cc.EvalFastRotation(ct, i, m, digits) for i in range(1, k + 1)]

    def separate(k: int) -> list[Any]:
        return [cc.EvalRotate(ct, i) for i in range(1, k + 1)]

    rows = []
    for k in counts:
        for name, run in (("hoisted", hoisted), ("separate", separate)):
            figures, outs = timed(lambda run=run, k=k: run(k), cfg["repeats"])
            got = min(bits(ctx.decrypt(c), np.roll(v, -i)) for i, c in enumerate(outs, 1))
            extra = {"count": k, "per_rotation_ms": round(figures["median_ms"] / k, 4)}
            rows.append(row(f"rotations.{name}", ctx, figures, got, cfg, **extra))
    return rows


# --- linear transforms -----------------------------------------------------------------------


@dataclass
class Plan:
    """Baby-step giant-step for the diagonals ``i = g + b`` (``g`` a multiple of ``n1``)."""

    n1: int
    babies: list[int]
    giants: dict[int, list[tuple[int, int]]]  # g -> [(b, diagonal index)]

    @property
    def keys(self) -> list[int]:
        """The rotation indices the plan needs keys for."""
        return sorted(({*self.babies} | {*self.giants}) - {0})


def plan(diagonals: list[int], size: int) -> Plan:
    """The power-of-two baby step with the fewest rotation keys (then the fewest giant steps)."""
    best = None
    n1 = 1
    while n1 <= size:
        babies = sorted({i % n1 for i in diagonals})
        giants: dict[int, list[tuple[int, int]]] = {}
        for i in sorted(diagonals):
            giants.setdefault(i - i % n1, []).append((i % n1, i))
        candidate = Plan(n1, babies, giants)
        cost = (len(candidate.keys), len(giants))
        if best is None or cost < best[0]:
            best = (cost, candidate)
        n1 *= 2
    return best[1]


def diagonal(matrix: np.ndarray, i: int, slots: int) -> np.ndarray:
    """``diag_i[j] = M[j mod d, (j + i) mod d]`` over ``slots`` slots (``d`` divides ``slots``)."""
    d = matrix.shape[0]
    rows = np.arange(slots) % d
    return matrix[rows, (rows + i) % d]


def encode_plan(ctx: Context, matrix: np.ndarray, p: Plan) -> dict[tuple[int, int], Any]:
    """The plaintext of each diagonal pre-rotated right by its giant step ``g``:
    ``rot(diag_{g+b}, -g)``, so that ``M v = sum_g rot(sum_b p_{g,b} * rot(v, b), g)``."""
    return {
        (g, b): ctx.cc.MakeCKKSPackedPlaintext(np.roll(diagonal(matrix, i, ctx.slots), g))
        for g, terms in p.giants.items()
        for b, i in terms
    }


def bsgs(ctx: Context, ct: Any, p: Plan, pts: dict[tuple[int, int], Any]) -> Any:
    """``M v`` by the diagonal method: hoisted baby steps, plaintext products, giant steps."""
    cc = ctx.cc
    digits = cc.EvalFastRotationPrecompute(ct)
    m = cc.GetCyclotomicOrder()
    baby = {b: ct if b == 0 else cc.EvalFastRotation(ct, b, m, digits) for b in p.babies}
    total = None
    for g, terms in p.giants.items():
        inner = None
        for b, _ in terms:
            product = cc.EvalMult(baby[b], pts[g, b])
            inner = product if inner is None else cc.EvalAdd(inner, product)
        if g:
            inner = cc.EvalRotate(inner, g)
        total = inner if total is None else cc.EvalAdd(total, inner)
    return cc.Rescale(total)


def bench_linear(cfg: dict[str, Any], quick: bool) -> tuple[list[Row], list[Row]]:
    """A sparse and a dense plaintext matrix times an encrypted vector."""
    ctx = ren_context(cfg)
    slots = ctx.slots
    rng = np.random.default_rng(cfg["seed"])
    route = "bsgs-diagonal (EvalFastRotation baby steps, EvalMult, EvalRotate giant steps)"
    exposed = hasattr(ctx.cc, "EvalLinearTransform")
    cases = []
    size = cfg.get("size", slots)
    diagonals = sorted({int(i) % size for i in cfg.get("diagonals", range(8))})
    sparse = np.zeros((size, size))
    for i in diagonals:
        sparse[np.arange(size), (np.arange(size) + i) % size] = rng.uniform(-1, 1, size)
    cases.append(("sparse", sparse, diagonals))
    dense_size = 64 if quick else cfg.get("dense_size", slots)
    if dense_size:
        dense = rng.uniform(-1, 1, (dense_size, dense_size))
        cases.append(("dense", dense, list(range(dense_size))))

    rows, skipped = [], []
    for name, matrix, diags in cases:
        d = matrix.shape[0]
        if slots % d:
            reason = f"size {d} does not divide the {slots} slots"
            skipped.append({"bench": f"linear.{name}", "reason": reason})
            continue
        p = plan(diags, d)
        start = time.perf_counter()
        ctx.cc.EvalRotateKeyGen(ctx.keys.secretKey, p.keys)
        keygen_s = time.perf_counter() - start
        start = time.perf_counter()
        pts = encode_plan(ctx, matrix, p)
        encode_s = time.perf_counter() - start
        v = rng.uniform(-1, 1, d)
        ct = ctx.encrypt(np.resize(v, slots))
        figures, out = timed(lambda ct=ct, p=p, pts=pts: bsgs(ctx, ct, p, pts), cfg["repeats"])
        want = matrix @ v
        got = bits(ctx.decrypt(out)[:d], want)
        extra = {
            "size": d, "nonzero_diagonals": len(diags), "route": route,
            "evallineartransform_exposed": exposed, "baby_steps": len(p.babies),
            "giant_steps": len(p.giants), "n1": p.n1, "rotation_keys": len(p.keys),
            "plaintext_products": len(pts), "keygen_s": round(keygen_s, 3),
            "encode_s": round(encode_s, 3), "encode_timed": False,
            "levels_consumed": out.GetLevel() - ct.GetLevel(),
            "max_abs_result": round(float(np.max(np.abs(want))), 3),
        }  # fmt: skip
        rows.append(row(f"linear.{name}", ctx, figures, got, cfg, **extra))
        del pts
        ctx.cc.ClearEvalAutomorphismKeys()
    return rows, skipped


# --- sums ------------------------------------------------------------------------------------


def bench_sum(cfg: dict[str, Any], quick: bool) -> list[Row]:
    """``EvalSum`` of all slots and ``EvalInnerProduct`` with a plaintext vector."""
    ctx = ren_context(cfg)
    cc, slots = ctx.cc, ctx.slots
    tag = ctx.keys.secretKey.GetKeyTag()
    before = len(cc.GetExistingEvalAutomorphismKeyIndices(tag))
    cc.EvalSumKeyGen(ctx.keys.secretKey)
    sum_keys = len(cc.GetExistingEvalAutomorphismKeyIndices(tag)) - before
    rng = np.random.default_rng(cfg["seed"])
    v, w = rng.uniform(-1, 1, slots), rng.uniform(-1, 1, slots)
    ct, pt = ctx.encrypt(v), cc.MakeCKKSPackedPlaintext(w)
    rows = []
    cases = (
        ("eval_sum", lambda: cc.EvalSum(ct, slots), float(v.sum())),
        ("inner_product", lambda: cc.EvalInnerProduct(ct, pt, slots), float(v @ w)),
    )
    for name, call, want in cases:
        figures, out = timed(call, cfg["repeats"])
        got = bits(ctx.decrypt(out)[0], want)
        extra = {"automorphism_keys": sum_keys, "want": want}
        rows.append(row(f"sum.{name}", ctx, figures, got, cfg, **extra))
    return rows


# --- Chebyshev -------------------------------------------------------------------------------


def bench_chebyshev(cfg: dict[str, Any], quick: bool) -> tuple[list[Row], list[Row]]:
    """``EvalChebyshevFunction`` on four functions at each degree, one context per scaling."""
    degrees = sorted(cfg.get("degrees", [59, 119]))[: 1 if quick else None]
    names = cfg.get("functions", list(FUNCTIONS))
    n, scale = cfg["n"], cfg["scale_bits"]
    first = cfg.get("first_mod_bits", cfg["q_bits"][0])
    depth = cfg.get("depth") or max(table_depth(d, -8.0, 8.0) for d in degrees)
    dnum = cfg.get("dnum") or depth + 1
    rows, skipped = [], []
    for scaling in cfg.get("scaling", ["FIXEDMANUAL"]):
        params = f"n={n} first={first} scale={scale} depth={depth} dnum={dnum}"
        ctx = make_context(n, depth, scale, first, dnum, scaling, params)
        for name in names:
            f, f_np, a, b = FUNCTIONS[name]
            x = np.resize(np.linspace(a, b, cfg.get("points", 4096)), ctx.slots)
            want = f_np(x)
            ct = ctx.encrypt(x)
            for degree in degrees:
                need = table_depth(degree, a, b)
                if need > depth:
                    reason = f"degree {degree} on [{a}, {b}] needs depth {need} > {depth}"
                    skipped.append({"bench": f"chebyshev.{name}", "reason": reason})
                    continue
                start = time.perf_counter()
                coefficients = fhe.EvalChebyshevCoefficients(f, a, b, degree)
                coeff_ms = (time.perf_counter() - start) * 1e3
                args = (f, ct, a, b, degree)
                figures, out = timed(lambda cc=ctx.cc, args=args: cc.EvalChebyshevFunction(*args),
                                     cfg["repeats"])  # fmt: skip
                got = ctx.decrypt(out)
                extra = {
                    "function": name, "interval": [a, b], "degree": degree,
                    "points": cfg.get("points", 4096),
                    "level_before": ct.GetLevel(), "level_after": out.GetLevel(),
                    "levels_consumed": out.GetLevel() - ct.GetLevel(),
                    "noise_scale_deg": out.GetNoiseScaleDeg(), "context_depth": depth,
                    "table_depth": need,
                    "openfhe_depth": fhe.GetMultiplicativeDepthByCoeffVector(coefficients, False),
                    "coefficients_ms": round(coeff_ms, 4),
                }  # fmt: skip
                if name == "inverse":
                    extra["relative_bits"] = bits(got / want, np.ones_like(want))
                rows.append(row(f"chebyshev.{name}", ctx, figures, bits(got, want), cfg, **extra))
    return rows, skipped


# --- driver ----------------------------------------------------------------------------------


def group_config(config: dict[str, Any], group: str) -> dict[str, Any]:
    """The top-level keys (over the defaults), then the group's own block over them."""
    top = {k: v for k, v in config.items() if k != "groups"}
    return {**DEFAULTS, **top, **(config.get("groups", {}).get(group) or {})}


def run(config: dict[str, Any], quick: bool = False) -> dict[str, Any]:
    """Every group ``config["groups"]`` names; a group that fails is listed under ``skipped``."""
    rows: list[Row] = []
    skipped: list[Row] = []
    load_before = os.getloadavg()
    for group in config.get("groups", {}):
        if group not in GROUPS:
            reason = f"unknown group (known: {', '.join(GROUPS)})"
            skipped.append({"bench": group, "reason": reason})
            continue
        cfg = group_config(config, group)
        if quick:
            cfg["repeats"] = min(cfg["repeats"], 2)
        start = time.perf_counter()
        try:
            result = globals()[f"bench_{group}"](cfg, quick)
        except Exception as e:  # an OpenFHE refusal names its reason; the other groups still run
            skipped.append({"bench": group, "reason": f"{type(e).__name__}: {e}"})
            continue
        got, lost = result if isinstance(result, tuple) else (result, [])
        rows += got
        skipped += lost
        print(f"{group}: {len(got)} rows in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    try:
        distribution = version("openfhe")
    except PackageNotFoundError:
        distribution = None
    return {
        "openfhe": {"version": getattr(fhe, "__version__", None), "distribution": distribution},
        "machine": {**machine(), "loadavg_before": load_before, "loadavg_after": os.getloadavg()},
        "threads": {
            "OMP_NUM_THREADS": os.environ["OMP_NUM_THREADS"],
            "caller_OMP_NUM_THREADS": _CALLER_OMP,
            "note": "OMP_NUM_THREADS set to 1 before openfhe was imported: one thread",
        },
        "quick": quick,
        "config": config,
        "rows": rows,
        "skipped": skipped,
    }


def main(argv: list[str] | None = None) -> int:
    """Read CONFIG, run its groups, write OUT and print one line per row."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", help="the CONFIG JSON file")
    parser.add_argument("out", help="where the results go (JSON)")
    parser.add_argument("--quick", action="store_true", help="few repeats, small cases")
    args = parser.parse_args(argv)
    with open(args.config, encoding="utf-8") as f:
        config = json.load(f)
    result = run(config, args.quick)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    for r in result["rows"]:
        what = r.get("count") or r.get("size") or r.get("degree") or ""
        print(f"{r['bench']:<24} {what!s:>5} {r['median_ms']:>10.3f} ms {r['bits']:>6.1f} bits")
    for s in result["skipped"]:
        print(f"skipped {s['bench']}: {s['reason']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
