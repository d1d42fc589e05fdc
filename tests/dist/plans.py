"""Saved plans, keys and items for the ren.dist tests, with their in-process results.

A small insecure CKKS ring (n = 1024) keeps every replay to milliseconds. ``Setup.expected(item)``
is the oracle every engine is held to: the same plan file loaded with ``ren.load`` in this process
and replayed on the item, its result's bytes.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

import ren
from ren.schemes import ckks

PARAMS = ckks.Params(n=1024, q_bits=(40, 30, 30), p_bits=(40,), scale_bits=30, insecure=True)


def square_rotated(a: Any) -> Any:
    """A CKKS multiply and three rotations: the benchmark's plan, on a small ring."""
    return (a * a).rotate(1).rotate(2).rotate(3)


def product(a: Any, b: Any) -> Any:
    """A plan of two inputs."""
    return a * b


@dataclasses.dataclass
class Setup:
    """A saved plan, the client's context, and the evaluation keys its workers get."""

    plan: Path
    client: ckks.Context
    fn: Any
    device: str

    @property
    def keys(self) -> ckks.EvaluationKeys:
        return self.client.evaluation_keys()

    def slots(self, i: int) -> np.ndarray:
        rng = np.random.default_rng(i)
        return rng.uniform(-1, 1, PARAMS.slots)

    def item(self, i: int) -> bytes:
        with self.client:
            return ckks.encrypt(self.slots(i)).to_bytes()

    def expected(self, item: Any) -> Any:
        """The result bytes of ``item`` replayed by ``ren.load`` in this process."""
        keys = ckks.EvaluationKeys.from_bytes(self.keys.to_bytes(), self.device, insecure=True)
        server = ckks.Context(PARAMS, keys=keys, device=self.device)
        with server:
            plan = ren.load(self.plan, stored={"keys": keys})
            blobs = item if isinstance(item, tuple) else (item,)
            args = [ckks.Ciphertext.from_bytes(b, server) for b in blobs]
            return plan(*args).to_bytes()

    def decrypt(self, blob: bytes) -> np.ndarray:
        return ckks.decrypt(ckks.Ciphertext.from_bytes(blob, self.client))


def make(folder: Path, device: str, fn: Any = square_rotated, seed: int = 1) -> Setup:
    """Capture ``fn`` on ``device`` in a fresh context and save its plan in ``folder``."""
    folder.mkdir(exist_ok=True)
    client = ckks.Context(PARAMS, seed=seed, device=device)
    with client:
        args = [
            ckks.encrypt(np.linspace(-1, 1, PARAMS.slots)) for _ in range(fn.__code__.co_argcount)
        ]
        f = ren.jit(fn)
        f(*args)
        path = folder / f"{fn.__name__}-{device}.renplan"
        f.save(path, stored={"keys": client.evaluation_keys()})
    return Setup(path, client, fn, device)


def poison(setup: Setup, i: int) -> bytes:
    """An item whose first part is zero: the ``dying`` device's kernels die on it."""
    with setup.client:
        ct = ckks.encrypt(setup.slots(i))
        zero = ct.parts[0] * 0
        return ckks.Ciphertext(
            (zero, ct.parts[1]), ct.scale, ct.level, ct.real, setup.client
        ).to_bytes()
