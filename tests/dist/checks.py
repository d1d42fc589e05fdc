"""What every engine is held to, one function a behaviour; test_local and test_ray call them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ren import dist
from ren.schemes import ckks
from tests.dist import devices, plans


def results_equal_in_process_replay(setup: plans.Setup, engine: str, **pool: Any) -> None:
    items = [setup.item(i) for i in range(12)]
    got = dist.map(
        setup.plan,
        items,
        stored={"keys": setup.keys},
        engine=engine,
        workers=2,
        progress=False,
        batch_size=3,
        **pool,
    )
    for i, (item, result) in enumerate(zip(items, got, strict=True)):
        assert result == setup.expected(item), i  # word for word
    # and the plaintext oracle: the slots squared, rotated by 6
    want = np.roll(setup.slots(4) ** 2, -6)
    assert ckks.precision_bits(setup.decrypt(got[4]), want) > 12


def bad_items_are_reported_and_the_batch_goes_on(setup: plans.Setup, engine: str) -> None:
    items = [setup.item(i) for i in range(8)]
    good = list(items)
    items[1] = items[1][:300] + bytes([items[1][300] ^ 1]) + items[1][301:]  # a flipped bit
    stranger = plans.make(
        setup.plan.parent / "stranger", setup.device, seed=99
    )  # other keys, same params
    items[3] = stranger.item(3)
    with setup.client:
        items[5] = ckks.Ciphertext.from_bytes(good[5], setup.client).rescale().to_bytes()
    items[6] = "not bytes"
    got = dist.map(
        setup.plan,
        items,
        stored={"keys": setup.keys},
        engine=engine,
        workers=2,
        progress=False,
        batch_size=4,
    )
    errors = {r.index: r for r in got if isinstance(r, dist.ItemError)}
    assert sorted(errors) == [1, 3, 5, 6]
    assert errors[1].kind == "input" and "checksum" in errors[1].reason
    assert errors[3].kind == "input" and "fingerprint" in errors[3].reason
    assert errors[5].kind == "value" and "the plan was saved for" in errors[5].reason
    assert errors[6].kind == "input" and "bytes" in errors[6].reason
    for i in (0, 2, 4, 7):
        assert got[i] == setup.expected(good[i])


def a_killed_worker_s_items_are_retried_once_then_reported(
    setup: plans.Setup, engine: str
) -> dist.Pool:
    items = [setup.item(i) for i in range(10)]
    items[5] = plans.poison(setup, 5)
    with dist.Pool(
        setup.plan, stored={"keys": setup.keys}, engine=engine, workers=2, setup=devices.register
    ) as pool:
        got = pool.map(items, batch_size=4, progress=False)
        stats = pool.stats
    assert isinstance(got[5], dist.ItemError) and got[5].kind == "worker", got[5]
    assert "died" in got[5].reason and "again" in got[5].reason
    for i, result in enumerate(got):
        if i != 5:
            assert result == setup.expected(items[i]), i  # its batch-mates went through on retry
    assert stats["retried"] >= 4 and stats["deaths"] >= 2 and stats["errors"] == 1
    return pool


def audit_catches_a_wrong_result(faulty: plans.Setup, engine: str) -> None:
    items = [faulty.item(i) for i in range(9)]
    with dist.Pool(
        faulty.plan,
        stored={"keys": faulty.keys},
        engine=engine,
        workers=2,
        setup=devices.register,
    ) as pool:
        got = pool.map(items, audit=3, progress=False)
        assert pool.stats["audited"] == 3
    audited = [r for r in got if isinstance(r, dist.ItemError)]
    assert len(audited) == 3
    for error in audited:
        assert error.kind == "audit"
        assert "differs from the python reference" in error.reason
        assert "coefficient 0 (word 0)" in error.reason  # the first word, where the fault is
    # the others came back, wrong as the faulty device computes them: unaudited, unflagged
    assert sum(isinstance(r, bytes) for r in got) == 6


def audit_passes_a_right_result(setup: plans.Setup, engine: str) -> None:
    items = [setup.item(i) for i in range(4)]
    with dist.Pool(setup.plan, stored={"keys": setup.keys}, engine=engine, workers=2) as pool:
        got = pool.map(items, audit=4, progress=False)
        assert pool.stats["audited"] == 4
    assert got == [setup.expected(x) for x in items]


def check_raises(kind: type[BaseException], match: str, fn: Any, *args: Any, **kw: Any) -> None:
    with pytest.raises(kind, match=match):
        fn(*args, **kw)
