"""The boot-toy input the debugger's bootstrap tests step through."""

from __future__ import annotations

from typing import Any

import numpy as np

from ren.schemes import ckks


def boot_toy_input(seed: int = 3) -> tuple[ckks.Params, Any, np.ndarray, Any]:
    """``(params, ctx, z, ct)``: a boot-toy context on the python device with its bootstrap keys,
    ``slots`` uniform values in ``[-1, 1)`` and their ciphertext at level 0, realized."""
    params = ckks.Params.preset("boot-toy")
    ctx = ckks.Context(params, seed=seed, device="python")
    ctx.keygen()
    ctx.bootstrap_keys(progress=False)
    z = np.random.default_rng(seed).uniform(-1, 1, params.slots)
    return params, ctx, z, ctx.encrypt(z, level=0).realize()
