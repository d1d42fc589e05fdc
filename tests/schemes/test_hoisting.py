"""Rotations of one ciphertext share its ModUp (hoisting).

Key switching extends ``c_1``'s digits to the key ring (ModUp: one inverse NTT, then per digit a
basis extension and an NTT) and only then applies each rotation's automorphism, a permutation of
NTT slots. The ModUp nodes depend on ``c_1`` and the level only, so rotations realized together
compute it once. The oracle for the counts is that algorithm: per rotation, ModDown of the two
accumulators (each an inverse NTT of the special limbs, a basis extension and an NTT); shared, the
ModUp. The oracle for the values is ``np.roll`` of the plaintext.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import ren
from ren.engine.observe import observing
from ren.schemes import ckks
from tests.devices import COMPILED

PARAMS = ckks.Params(n=64, q_bits=(60, 40, 40), p_bits=(60,), scale_bits=40, insecure=True)


class Units:
    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()

    def on_unit(self, unit, seconds) -> None:
        self.kinds[unit.kernel.info.kind] += 1


def run_rotations(ct: ckks.Ciphertext, steps: tuple[int, ...]) -> tuple[Counter[str], list]:
    rotated = [ct.rotate(k) for k in steps]
    units = Units()
    with observing(units):
        ren.realize(*[p for r in rotated for p in r.parts])
    return units.kinds, rotated


@pytest.mark.parametrize("device", [pytest.param("python", id="python"), *COMPILED], indirect=True)
def test_three_rotations_run_one_modup(device):
    xs = np.linspace(-1, 1, PARAMS.slots) + 0.25j
    with ckks.Context(PARAMS, seed=3, device=device):
        ct = ckks.encrypt(xs).realize()
        digits = sum(1 for d in PARAMS.digits if any(i <= ct.level for i in d))
        counts = {}
        for steps in ((1,), (1, 2, 3)):
            kinds, rotated = run_rotations(ct, steps)
            r = len(steps)
            assert kinds["intt"] == 1 + 2 * r  # c1 once; ModDown's special limbs twice a rotation
            assert kinds["base_convert"] == digits + 2 * r
            assert kinds["ntt"] == digits + 2 * r
            counts[r] = sum(kinds.values())
            for k, out in zip(steps, rotated, strict=True):
                assert ckks.precision_bits(ckks.decrypt(out), np.roll(xs, -k)) > 20
    assert counts[3] < 3 * counts[1]


def test_a_conjugate_and_a_rotation_share_the_modup_too():
    xs = np.linspace(-1, 1, PARAMS.slots) * (1 + 1j)
    with ckks.Context(PARAMS, seed=4):
        ct = ckks.encrypt(xs).realize()
        both = [ct.rotate(2), ct.conjugate()]
        units = Units()
        with observing(units):
            ren.realize(*[p for r in both for p in r.parts])
        assert units.kinds["intt"] == 1 + 2 * 2
        assert ckks.precision_bits(ckks.decrypt(both[0]), np.roll(xs, -2)) > 20
        assert ckks.precision_bits(ckks.decrypt(both[1]), np.conj(xs)) > 20


@pytest.mark.parametrize("scheme", ["bfv", "bgv"])
def test_bv_rotations_share_their_digits_and_have_no_moddown(scheme):
    """BV: the digits of ``c_1`` (an inverse NTT, a basis extension and an NTT per modulus) are
    built once for every rotation of one ciphertext, and a rotation adds no transform of its own
    (no special moduli, no ModDown). Values against ``np.roll`` of the rows, mod ``t``."""
    from ren.schemes import bfv, bgv
    from tests.schemes.integer_cases import rows, small, values

    module = {"bfv": bfv, "bgv": bgv}[scheme]
    params = small(module, key_switching="bv", p_bits=())
    a = values(61)
    with module.Context(params, seed=61) as ctx:
        ct = ctx.encrypt(a).realize()
        for k in (1, 2, 3):
            ctx.galois_key(pow(3, k, 2 * params.n))  # the keys made beforehand, not counted
        seen = {}
        for steps in ((1,), (1, 2, 3)):
            outs = [ct.rotate_rows(k) for k in steps]
            units = Units()
            with observing(units):
                ren.realize(*[p for o in outs for p in o.parts])
            seen[len(steps)] = {kind: units.kinds[kind] for kind in ("intt", "ntt", "base_convert")}
            for k, out in zip(steps, outs, strict=True):
                assert np.array_equal(ctx.decrypt(out), np.roll(rows(a), -k, axis=1).reshape(-1))
        assert seen[1] == seen[3]  # the transforms are the digits', built once
        assert seen[1]["base_convert"] == params.L  # one digit per modulus
