"""Hostile items: crafted blobs (framing and checksum valid, a field wrong) and random changes
with the checksum recomputed. Each comes back as an ItemError of kind "input" or "value", or,
where the change left a valid ciphertext, as the result an in-process replay gives it."""

from __future__ import annotations

import hashlib
import random

import pytest

from ren import dist
from tests.dist import plans
from tests.schemes.ckks_blobs import crafted

pytestmark = pytest.mark.cc


def _resealed(blob: bytes, rng: random.Random) -> bytes:
    body = bytearray(blob[:-32])
    for _ in range(rng.randint(1, 4)):
        body[rng.randrange(len(body))] = rng.randrange(256)
    return bytes(body) + hashlib.sha256(bytes(body)).digest()


def test_hostile_items_are_refused_one_by_one(cpu: plans.Setup) -> None:
    good = cpu.item(0)
    rng = random.Random(7)
    craft = [blob for _, blob in crafted(good)]
    rng.shuffle(craft)
    items = craft[:120] + [_resealed(good, rng) for _ in range(60)] + [good]
    got = dist.map(
        cpu.plan, items, stored={"keys": cpu.keys}, engine="local", workers=2, progress=False
    )
    assert got[-1] == cpu.expected(good)  # the batch went on
    for result in got[:120]:
        assert isinstance(result, dist.ItemError) and result.kind in ("input", "value"), result
    for item, result in zip(items[120:-1], got[120:-1], strict=True):
        if isinstance(result, dist.ItemError):
            assert result.kind in ("input", "value"), result
        else:
            assert result == cpu.expected(item)  # a change that left a valid ciphertext
