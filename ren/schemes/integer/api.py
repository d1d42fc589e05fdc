"""The module functions of ``bfv`` and ``bgv``: the same six, on each scheme's current context."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ren.schemes.integer.context import IntContext
from ren.schemes.integer.types import Ciphertext, Plaintext

__all__ = ["functions"]


def functions(cls: type[IntContext]) -> tuple[Callable[..., Any], ...]:
    """The module functions for ``cls``: ``current`` to ``predicted_noise_budget``."""
    name = cls.scheme
    module = f"ren.schemes.{name}"

    def current() -> IntContext:
        stack = cls._active.get()
        if not stack:
            raise RuntimeError(
                f"no {name.upper()} context is active in this thread: use `with "
                f"{name}.Context(params) as ctx:` or the context's methods (ctx.encrypt, "
                "ctx.decrypt, ...)"
            )
        found: IntContext = stack[-1]
        return found

    def of(ct: object) -> IntContext:
        return ct.context if isinstance(ct, Ciphertext) and ct.context is not None else current()

    def encode(values: object) -> Plaintext:
        return current().encode(values)

    def encrypt(values: object) -> Ciphertext:
        return current().encrypt(values)

    def decrypt(ct: Ciphertext, *, coefficients: bool = False, signed: bool = False) -> np.ndarray:
        return of(ct).decrypt(ct, coefficients=coefficients, signed=signed)

    def noise_budget(ct: Ciphertext) -> int:
        return of(ct).noise_budget(ct)

    def predicted_noise_budget(ct: Ciphertext) -> float:
        return of(ct).predicted_noise_budget(ct)

    docs = {
        current: f"""The innermost ``{name}.Context`` of this thread's ``with`` blocks.

        Raises:
            RuntimeError: outside every ``with {name}.Context(...)`` block of this thread.
        """,
        encode: "``current().encode(values)``: ``n`` integers mod ``t`` in the slots.",
        encrypt: "``current().encrypt(values)``: slot values, an int or a ``Plaintext``.",
        decrypt: (
            "The values of ``ct`` (int64 in ``[0, t)``; ``signed=True``: in ``(-t/2, t/2]``), "
            "with its context's secret key; ``coefficients=True``: the message's coefficients."
        ),
        noise_budget: "The bits of noise budget ``ct`` has left (its context's secret key).",
        predicted_noise_budget: (
            "The bits of noise budget ``ct`` is predicted to have, from the noise estimate it "
            "carries: no secret key, no kernel run (``ren.schemes.integer.noise``)."
        ),
    }
    for fn, doc in docs.items():
        fn.__doc__, fn.__module__, fn.__qualname__ = doc, module, fn.__name__
    return current, encode, encrypt, decrypt, noise_budget, predicted_noise_budget
