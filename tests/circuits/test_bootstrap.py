"""Bootstrapping (``ren.circuits.ckks.bootstrap``, ``ren.circuits.ckks.dft``) on ``boot-toy``.

Oracles: the dense slots matrix ``U[j][k] = omega^(5^j k)`` and the bit-reversal permutation in
NumPy for the DFT's factors; Python integers for ModRaise's output (its coefficients, read
centered, divided by ``q_0``); ``ckks.embed`` (the encoding's own FFT, not the factorization) for
SlotToCoeff; NumPy's sine for EvalMod; the plaintext values, and NumPy's arithmetic on them, end
to end; the ``python`` backend's words for the ``cpu`` backend's.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import importlib
import math

import numpy as np
import pytest

from ren.circuits.ckks import dft
from ren.engine import realize as realize_module
from ren.ir.region import region_name, region_of
from ren.schemes import ckks
from ren.schemes.ckks.bootconfig import PRESETS, BootstrapConfig

boot = importlib.import_module("ren.circuits.ckks.bootstrap")  # the package names the function

TOY = ckks.Params.preset("boot-toy")
CONFIG = BootstrapConfig.for_params(TOY)

#: The precision every toy bootstrap keeps (about 30 bits measured: the stages' errors are the
#: series' and the noise at the scale 2^60, times q_0 / scale = 2^10, times up to sqrt(n) = 8 from
#: the coefficients to the slots).
FLOOR = 25


def bit_reversal(s: int) -> np.ndarray:
    b = s.bit_length() - 1
    return np.array([int(format(i, f"0{b}b")[::-1], 2) if b else 0 for i in range(s)])


def product(groups: list[dft.Diagonals], N: int) -> np.ndarray:
    out = np.eye(N, dtype=np.complex128)
    for g in groups:
        out = dft.dense(g, N) @ out
    return out


# ---------------------------------------------------------------------------------------------
# the factorization, against dense NumPy matrices


def test_the_slots_matrix_is_the_embedding():
    # U (t_low + i t_high) = the slots of t, by the encoding's own FFT
    rng = np.random.default_rng(0)
    n = 64
    t = rng.normal(size=n)
    U = dft.slots_matrix(n // 2)
    assert np.allclose(U @ (t[: n // 2] + 1j * t[n // 2 :]), ckks.embed(t, n))


@pytest.mark.parametrize("s", [2, 4, 8, 32])
def test_the_stages_factor_the_dft(s):
    U, R = dft.slots_matrix(s), np.eye(s)[bit_reversal(s)]
    for budget in range(1, s.bit_length()):
        cts = dft.coeff_to_slot_groups(s, budget, packed=False, constant=0.5)
        stc = dft.slot_to_coeff_groups(s, budget, packed=False, constant=3.0)
        assert len(cts) == len(stc) == budget
        assert np.allclose(product(cts, s), 0.5 * R @ np.linalg.inv(U), atol=1e-12)
        assert np.allclose(product(stc, s), 3.0 * U @ R, atol=1e-12)
        # a group of g stages has at most 2^(g+1) - 1 diagonals
        stages = s.bit_length() - 1
        most = -(-stages // budget)
        assert max(len(g) for g in cts + stc) <= 2 ** (most + 1) - 1


@pytest.mark.parametrize("s, budget", [(2, 1), (8, 2), (16, 3)])
def test_the_packed_stages(s, budget):
    rng = np.random.default_rng(s)
    U, R = dft.slots_matrix(s), np.eye(s)[bit_reversal(s)]
    x = rng.normal(size=s) + 1j * rng.normal(size=s)
    y = product(dft.coeff_to_slot_groups(s, budget, True, 1.0), 2 * s) @ np.tile(x, 2)
    assert np.allclose(y[:s], R @ np.linalg.solve(U, x)) and np.allclose(y[s:], 0)
    re, im = rng.normal(size=s), rng.normal(size=s)
    out = product(dft.slot_to_coeff_groups(s, budget, True, 1.0), 2 * s) @ np.concatenate([re, im])
    assert np.allclose(out, np.tile(U @ R @ (re + 1j * im), 2))


def test_tiled_diagonals_act_on_every_period():
    rng = np.random.default_rng(3)
    groups = dft.coeff_to_slot_groups(4, 1, False, 1.0)
    x = rng.normal(size=4) + 1j * rng.normal(size=4)
    tiled = dft.tile(groups[0], 4, 16)
    assert np.allclose(
        dft.dense(tiled, 16) @ np.tile(x, 4), np.tile(dft.dense(groups[0], 4) @ x, 4)
    )


# ---------------------------------------------------------------------------------------------
# configuration and presets


def test_the_presets():
    assert (TOY.n, TOY.L, TOY.insecure) == (64, 17, True)
    n12 = ckks.Params.preset("boot-n12")
    assert (n12.n, n12.slots) == (4096, 2048)
    n16 = ckks.Params.preset("boot-n16")
    assert (n16.n, n16.slots, n16.insecure) == (65536, 32768, False)  # checked: 128-bit secure
    assert n16.log2_qp <= ckks.SECURITY_BOUNDS[65536] == 1747
    for name in PRESETS:
        p = ckks.Params.preset(name)
        config = BootstrapConfig.for_params(p)
        assert config.check(p) is config
        assert (
            config.depth
            == sum(config.level_budget)
            + math.ceil(math.log2(config.degree + 1))
            + config.double_angle
            + 2 * config.arcsine
        )
        assert config.levels_left(p) == p.max_level - config.depth >= 2
    with pytest.raises(ValueError, match="no preset named 'boot-n13'"):
        ckks.Params.preset("boot-n13")
    with pytest.raises(TypeError, match="must be a str"):
        ckks.Params.preset(12)
    with pytest.raises(ValueError, match="not a bootstrapping preset"):
        BootstrapConfig.for_params(ckks.Params(n=64, q_bits=(60, 40), insecure=True))


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"level_budget": 3}, TypeError, "level_budget must be a pair"),
        ({"level_budget": (0, 2)}, ValueError, r"level_budget\[0\] must be at least 1"),
        ({"K": 1.5}, TypeError, "K must be an int"),
        ({"degree": 1}, ValueError, "degree must be at least 2"),
        ({"double_angle": -1}, ValueError, "double_angle must be at least 0"),
        ({"slots": 12}, ValueError, "slots must be a power of two"),
        ({"slots": "8"}, TypeError, "slots must be None or an int"),
        ({"sparse_secret": 0}, ValueError, "sparse_secret must be None or from 1 to"),
        ({"bsgs_ratio": 0}, ValueError, "bsgs_ratio must be a finite number above 0"),
    ],
)
def test_bad_configurations(kwargs, error, match):
    with pytest.raises(error, match=match):
        BootstrapConfig(**kwargs)


def test_configurations_that_do_not_fit_the_chain():
    with pytest.raises(ValueError, match=r"not enough levels: this bootstrap uses 17 .* has 16"):
        BootstrapConfig(level_budget=(4, 4), K=12, degree=47).check(TOY)
    with pytest.raises(ValueError, match="more than its 5 stages"):
        BootstrapConfig(level_budget=(6, 1)).check(TOY)
    with pytest.raises(ValueError, match="more than the 32 slots"):
        BootstrapConfig(slots=64, level_budget=(1, 1)).check(TOY)
    with pytest.raises(ValueError, match="not enough levels"):
        boot.plan(TOY, BootstrapConfig(level_budget=(5, 5)))


# ---------------------------------------------------------------------------------------------
# the stages, against NumPy


def _raised(
    ctx: ckks.Context, z: np.ndarray, made: boot.Plan
) -> tuple[ckks.Ciphertext, np.ndarray]:
    """ModRaise of an encryption of ``z`` read as the bootstrap reads it (``t / 2^60``, the words
    lifted by ``2^LIFT``), and ``t / q_0`` from its decryption (Python ints)."""
    ct = ctx.encrypt(z).at_level(0)
    raised = boot.raise_modulus(ct, made)
    q0, Q = TOY.q_moduli[0], TOY.ring(raised.level).Q
    t = np.array(ctx.decrypt_poly(raised).tolist(centered=True), dtype=object)
    assert 2 * max(abs(int(w)) for w in t) < Q
    # t = m + e + q_0 I: the message plus small multiples of q_0
    m = [(int(w) + q0 // 2) % q0 - q0 // 2 for w in t]
    assert ckks.precision_bits(np.array(m, float) / ct.scale, ckks.embed_inverse(z, TOY.n)) > 25
    lifted = ckks.multiply(raised, 2**boot.LIFT)  # the words times 2^LIFT, exactly
    return dataclasses.replace(lifted, scale=boot.EVAL_SCALE * 2**boot.LIFT), (t / q0).astype(float)


def test_coeff_to_slot_gives_the_coefficients_in_bit_reversed_slots():
    rng = np.random.default_rng(5)
    made = boot.plan(TOY)
    with ckks.Context(TOY, seed=5) as ctx:
        x, y = _raised(ctx, rng.uniform(-1, 1, TOY.slots), made)
        assert np.max(np.abs(y)) <= CONFIG.K  # the integer part stays within K
        for lt in made.coeff_to_slot:
            x = lt(x)
        got = ckks.decrypt(x)
    M = TOY.slots
    want = (y[:M] + 1j * y[M:])[bit_reversal(M)] / (2 * (CONFIG.K + 1))
    assert ckks.precision_bits(got, want) > 30


@pytest.mark.parametrize("arcsine", [False, True])
def test_eval_mod_is_the_sine_and_reduces_mod_1(arcsine):
    rng = np.random.default_rng(6)
    config = dataclasses.replace(CONFIG, arcsine=arcsine)
    made = boot.plan(TOY, config)
    K1 = config.K + 1
    eps = rng.uniform(-(2.0**-10), 2.0**-10, TOY.slots)
    t = rng.integers(-config.K, config.K + 1, TOY.slots) + eps
    with ckks.Context(TOY, seed=6):
        level = TOY.max_level - config.level_budget[0]  # where the bootstrap runs it
        ct = ckks.encrypt(t / K1, level=level, scale=boot.EVAL_SCALE)
        out = boot.eval_sine(ct, made)
        got = ckks.decrypt(out).real
    assert ct.level - out.level == config.eval_mod_depth
    if not arcsine:
        assert ckks.precision_bits(got, np.sin(2 * np.pi * t)) > 28
        # sin(2 pi t) / (2 pi) is t mod 1 up to (2 pi)^2 |t mod 1|^3 / 6
        sine_error = (2 * np.pi) ** 2 * np.abs(eps) ** 3 / 6
        assert np.all(np.abs(got / (2 * np.pi) - eps) <= sine_error + 2.0**-28)
    else:  # arcsin(sin(2 pi eps)) = 2 pi eps, the next term 3 u^5 / 40 (u = 2 pi eps) left out
        arcsine_error = 3 * (2 * np.pi * np.abs(eps)) ** 5 / 40
        assert np.all(np.abs(got - 2 * np.pi * eps) <= arcsine_error + 2.0**-28)
        assert ckks.precision_bits(got, 2 * np.pi * eps) > 28
        # the arcsine's 1/6 lands the output at q_0 2^8, the scale SlotToCoeff runs at
        assert math.isclose(out.scale, TOY.q_moduli[0] * 2**8, rel_tol=1e-12)


def test_slot_to_coeff_runs_above_the_scale_by_what_its_last_modulus_has_above_40_bits():
    """The presets' lowest SlotToCoeff modulus has 48 bits: SlotToCoeff runs at 2^8 times the
    scale and its last transform takes 2^8 back. A chain of 40-bit moduli there gets k = 0."""
    made = boot.plan(TOY)
    assert TOY.q_bits[: 3 + CONFIG.level_budget[1]] == (48, 40, 40, 48, 40)
    first, last = (lt.scale_factor for lt in made.slot_to_coeff)
    assert math.isclose(first, 1.0, rel_tol=1e-12) and last == 2.0**-8
    flat = ckks.Params(
        n=64, q_bits=(48, 40, 40, 40, 40) + (60,) * 12, p_bits=(61,) * 9, dnum=2, insecure=True
    )
    made = boot.plan(flat, CONFIG)
    assert all(math.isclose(lt.scale_factor, 1.0, rel_tol=1e-12) for lt in made.slot_to_coeff)
    z = np.random.default_rng(12).uniform(-1, 1, flat.slots)
    with ckks.Context(flat, seed=12) as ctx:
        ctx.bootstrap_keys(CONFIG, progress=False)
        ct = ckks.encrypt(z, level=0)
        fresh = ckks.bootstrap(ct, CONFIG)
        assert fresh.scale == pytest.approx(ct.scale, rel=1e-12)
        assert ckks.precision_bits(ckks.decrypt(fresh).real, z) > 25


def test_slot_to_coeff_is_the_embedding_and_inverts_coeff_to_slot():
    rng = np.random.default_rng(7)
    made = boot.plan(TOY)
    M, n = TOY.slots, TOY.n
    v = rng.uniform(-1, 1, M) + 1j * rng.uniform(-1, 1, M)
    with ckks.Context(TOY, seed=7):
        ct = ckks.encrypt(v, level=made.slot_to_coeff[0].level, scale=TOY.scale * 2**8)
        out = ct
        for lt in made.slot_to_coeff:
            out = lt(out)
        got = ckks.decrypt(out)
        assert math.isclose(out.scale, TOY.scale, rel_tol=1e-12)  # the last takes 2^8 back
        w = rng.uniform(-1, 1, M) + 1j * rng.uniform(-1, 1, M)
        both = ckks.encrypt(w, scale=boot.EVAL_SCALE * 2**boot.LIFT)  # the bootstrap's scales
        for lt in made.coeff_to_slot + made.slot_to_coeff:
            both = lt(both.at_level(lt.level))
        round_trip = ckks.decrypt(both)
    natural = np.empty(M, complex)
    natural[bit_reversal(M)] = v  # the slots hold the coefficients in bit-reversed order
    coeffs = np.concatenate([natural.real, natural.imag])
    assert ckks.precision_bits(got, ckks.embed(coeffs, n) / (2 * np.pi)) > 30
    factor = boot.EVAL_SCALE / TOY.q_moduli[0] / (2 * (CONFIG.K + 1)) / (2 * np.pi)
    assert ckks.precision_bits(round_trip, factor * w) > 25


# ---------------------------------------------------------------------------------------------
# end to end


@pytest.mark.parametrize(
    "kind, slots, sparse_secret",
    [("real", None, None), ("complex", None, None), ("complex", 8, None), ("real", 16, 8)],
)
def test_bootstrap_keeps_the_values(kind, slots, sparse_secret):
    rng = np.random.default_rng(8)
    config = dataclasses.replace(CONFIG, slots=slots, sparse_secret=sparse_secret)
    s = config.slots_for(TOY)
    z = rng.uniform(-1, 1, s) + (1j * rng.uniform(-1, 1, s) if kind == "complex" else 0)
    z = np.tile(z, TOY.slots // s)  # a sparse message is repeated
    with ckks.Context(TOY, seed=8) as ctx:
        boot.bootstrap_keys(ctx, config, progress=False)
        ct = ckks.encrypt(z, level=1)
        out = ckks.bootstrap(ct, config)
        got = ckks.decrypt(out)
    assert out.level == config.levels_left(TOY) == TOY.max_level - config.depth
    assert math.isclose(out.scale, ct.scale, rel_tol=2.0**-10)
    assert kind == "complex" or np.all(got.imag == 0)  # a real input gives real slots
    assert ckks.precision_bits(got, z) > FLOOR


def test_three_rounds_of_multiplying_down_and_bootstrapping():
    rng = np.random.default_rng(9)
    z = rng.uniform(-1, 1, TOY.slots)
    want = z.copy()
    with ckks.Context(TOY, seed=9) as ctx:
        ctx.bootstrap_keys(progress=False)
        ct = ckks.encrypt(z, level=CONFIG.levels_left(TOY))  # the levels above are the bootstrap's
        for _ in range(3):
            while ct.level >= 2:  # a product and a product by a number: two levels
                ct = ct * ct * 0.9 + 0.1  # stays in [0.1, 1]
                want = want * want * 0.9 + 0.1
            ct = ct.bootstrap()
            assert ct.level == CONFIG.levels_left(TOY)
            assert ckks.precision_bits(ckks.decrypt(ct), want) > FLOOR - 2


@pytest.mark.cc
def test_python_and_cpu_give_the_same_words_and_validate(monkeypatch):
    # the cpu run under REN_VALIDATE=1: every compiled kernel run again on NumPy and compared
    checked = []
    real = realize_module.validate_unit
    monkeypatch.setattr(realize_module, "validate_unit", lambda u: (checked.append(u), real(u)))
    rng = np.random.default_rng(10)
    z = rng.uniform(-1, 1, TOY.slots)
    blobs = []
    for device in ("python", "cpu"):
        with ckks.Context(TOY, seed=10, device=device) as ctx:
            ctx.bootstrap_keys(progress=False)
            ct = ckks.encrypt(z, level=0)
            if device == "cpu":
                monkeypatch.setenv("REN_VALIDATE", "1")
            out = ckks.bootstrap(ct)
            blobs.append(out.to_bytes())
    assert len(checked) > 100  # every unit of the bootstrap's realization
    assert blobs[0] == blobs[1]
    assert ckks.precision_bits(ckks.Ciphertext.from_bytes(blobs[1], ctx).decrypt(), z) > FLOOR


def test_the_graph_has_a_region_per_stage():
    rng = np.random.default_rng(11)
    with ckks.Context(TOY, seed=11):
        out = ckks.bootstrap(ckks.encrypt(rng.uniform(-1, 1, TOY.slots)).at_level(0))
        names = {region_name(region_of(n)) for p in out.parts for n in p.node.toposort()}
    for stage in ("mod_raise", "coeff_to_slot", "eval_mod", "slot_to_coeff"):
        assert any(name and name.split("/")[:2] == ["bootstrap", stage] for name in names), stage


def test_bad_input():
    with ckks.Context(TOY, seed=12) as ctx:
        ct = ckks.encrypt([0.5])
        with pytest.raises(TypeError, match=r"expected a ckks\.Ciphertext, got list"):
            ckks.bootstrap([0.5])
        with pytest.raises(TypeError, match=r"config must be a ckks\.BootstrapConfig"):
            ckks.bootstrap(ct, {"K": 3})
        three = ckks.multiply(ct, ct, relinearize=False, rescale=False)
        with pytest.raises(ValueError, match="two-part ciphertext"):
            ckks.bootstrap(three)
        keys = ctx.evaluation_keys()
    with ckks.Context(TOY, keys=keys) as server:
        with pytest.raises(ValueError, match=r"bootstrap needs rotation keys .* steps 1, 2"):
            server.bootstrap_keys()
        theirs = ckks.Ciphertext.from_bytes(ct.to_bytes(), server)
        with pytest.raises(ValueError, match=r"bootstrap needs rotation keys .* steps 1, 2"):
            ckks.bootstrap(theirs)


def test_threads_share_one_plan_and_bootstrap_alike():
    config = dataclasses.replace(CONFIG, bsgs_ratio=3.0)  # a plan no other test made
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        plans = list(pool.map(lambda _: boot.plan(TOY, config), range(8)))
    assert all(p is plans[0] for p in plans)
    rng = np.random.default_rng(13)
    z = rng.uniform(-1, 1, TOY.slots)
    with ckks.Context(TOY, seed=13) as ctx:
        ctx.bootstrap_keys(config, progress=False)
        ct = ckks.encrypt(z, level=0)
        alone = ckks.bootstrap(ct, config).to_bytes()

        def run(_: int) -> bytes:
            with ctx:  # the current context is per thread
                return ckks.bootstrap(ct, config).to_bytes()

        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            blobs = list(pool.map(run, range(2)))
    assert blobs == [alone, alone]  # the same words: bootstrapping draws no randomness
