"""BFV and BGV values: a plaintext (integers mod ``t``) and a ciphertext (polys in NTT form).

Both have a byte form (``to_bytes``, ``from_bytes``; ``ren.schemes.integer.bytes``) and pickle
through it; a ciphertext is also a saved plan's result (``__ren_plan_fields__``) and watched by
the debugger (``__ren_watch__``, ``ren.schemes.integer.watch``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ren.capture.function import capturing
from ren.poly import Poly, is_int, realize
from ren.schemes.integer import batching
from ren.schemes.integer import bytes as _bytes
from ren.schemes.integer.params import IntParams, scheme_module
from ren.schemes.rlwe import bytes as _fmt
from ren.schemes.rlwe.values import RlweCiphertext, check_key_fingerprint

if TYPE_CHECKING:
    from ren.schemes.integer.context import IntContext
    from ren.schemes.integer.noise import NoiseEstimate
    from ren.schemes.integer.watch import CiphertextView

__all__ = ["Ciphertext", "Plaintext"]


def _context_arg(context: object, blob: object, what: str) -> IntContext:
    """``context``, checked; ``None``: the current context of the scheme the blob names."""
    from ren.schemes.integer.context import IntContext  # it imports this module

    if context is None:
        found: IntContext = scheme_module(_bytes.scheme_of(blob, what)).current()
        return found
    if not isinstance(context, IntContext):
        raise TypeError(
            f"context must be a bfv.Context or bgv.Context, got {_fmt.describe(context)}"
        )
    return context


@dataclasses.dataclass(frozen=True, eq=False)
class Plaintext:
    """A message: the ``n`` coefficients of a polynomial mod ``t`` (int64 in ``[0, t)``).

    Batched values (``ctx.encode``) are the slots of this polynomial; ``ctx.decode`` reads them
    back. It holds no key and no ``Poly``: the schemes place it in a ciphertext's ring when it
    is added or multiplied. It pickles through its bytes (``to_bytes``) and copies as itself.

    Attributes:
        coeffs: the coefficients, a read-only int64 array of ``n``.
        params: the parameters it was encoded for.
    """

    coeffs: np.ndarray
    params: IntParams

    def __post_init__(self) -> None:
        if not isinstance(self.params, IntParams):
            raise TypeError(
                f"params must be bfv.Params or bgv.Params, got {_fmt.describe(self.params)}"
            )
        c = np.asarray(self.coeffs)
        if c.shape != (self.params.n,) or c.dtype.kind not in "iu":
            raise ValueError(
                f"a plaintext holds n={self.params.n} integer coefficients, got "
                f"{c.dtype} of shape {c.shape}"
            )
        if c.size and (int(c.min()) < 0 or int(c.max()) >= self.params.t):
            raise ValueError(f"a plaintext's coefficients are in [0, t={self.params.t})")
        c = c.astype(np.int64)
        c.setflags(write=False)
        object.__setattr__(self, "coeffs", c)

    @classmethod
    def of(cls, value: object, params: IntParams, *, ints: bool = False) -> Plaintext:
        """``value`` as a plaintext for ``params``: slot values, or a plaintext, checked.

        With ``ints=True`` an int is the constant polynomial (every slot holds it).

        Raises:
            TypeError: values that are not integers.
            ValueError: a plaintext for other parameters, more than ``n`` values, or a ``t``
                that does not allow batching.
        """
        if isinstance(value, Plaintext):
            if value.params != params:
                raise ValueError(f"the plaintext is for {value.params}, not {params}")
            return value
        if ints and is_int(value) and not isinstance(value, bool | np.bool_):
            coeffs = np.zeros(params.n, dtype=np.int64)
            coeffs[0] = int(value) % params.t
            return cls(coeffs, params)
        return cls(batching.encode(batching.message(value, params), params), params)

    def centered(self) -> np.ndarray:
        """The coefficients in ``(-t/2, t/2]``: the smallest, for products."""
        t = self.params.t
        return np.where(self.coeffs > t // 2, self.coeffs - t, self.coeffs)

    def __reduce__(self) -> tuple[Callable[[bytes], Plaintext], tuple[bytes]]:
        return (_plaintext_from_pickle, (self.to_bytes(),))

    def __copy__(self) -> Plaintext:
        return self  # a value: its coefficients are read-only

    def __deepcopy__(self, memo: dict[int, object]) -> Plaintext:
        return self

    def to_bytes(self) -> bytes:
        """This plaintext in Ren's versioned, checksummed format (kind ``bfv-plaintext``, ...)."""
        return _bytes.write_plaintext(self.coeffs, self.params)

    @classmethod
    def from_bytes(cls, blob: bytes, context: IntContext | None = None) -> Plaintext:
        """Read a plaintext for ``context`` (default: the current context of the blob's scheme).

        The blob must have been written with the context's parameters (and scheme).

        Raises:
            TypeError: when ``blob`` is not bytes or ``context`` not a context.
            ValueError: a truncated, altered, malformed or foreign blob (another scheme's
                included), other parameters, or a coefficient outside ``[0, t)``.
            RuntimeError: without ``context``, when no context of the blob's scheme is active.
        """
        ctx = _context_arg(context, blob, "plaintext")
        params, coeffs = _bytes.read_plaintext(blob, ctx.params)
        return cls(coeffs, params)


def _plaintext_from_pickle(blob: bytes) -> Plaintext:
    params, coeffs = _bytes.read_plaintext(blob, None)
    return Plaintext(coeffs, params)


@dataclasses.dataclass(frozen=True, eq=False)
class Ciphertext(RlweCiphertext):
    """An encryption of integers mod ``t``: polys ``c_0, c_1`` (and ``c_2``) in NTT form.

    BFV: ``c_0 + c_1 s = round(Q m / t) + e``. BGV: ``c_0 + c_1 s = f m + t e`` with ``f`` the
    :attr:`correction` that modulus switching multiplies in (1 when fresh).

    Operators: ``+``, ``-`` and unary ``-`` with ciphertexts, ints and sequences of ints (taken
    as slot values); ``*`` with those too (two ciphertexts: multiply and relinearize).
    ``rotate_rows(k)``, ``rotate_columns()``. ``==`` is identity: decrypt to compare values.

    A ciphertext made in a context takes the context's ``params`` and ``key_fingerprint``.
    ``pickle`` sends its bytes (``to_bytes``, never a key); the unpickled ciphertext has no
    ``context`` and keeps its ``params`` and ``key_fingerprint``, which the context that computes
    on it (the current one of its scheme, or ``ctx``'s methods) checks. ``copy.copy`` and
    ``copy.deepcopy`` keep the same ``context`` (``deepcopy`` copies the parts' values).

    Attributes:
        parts: the polys, two, or three before relinearization.
        level: ``0 .. L-1`` (BFV's stay at ``L - 1``).
        correction: BGV's factor ``f`` mod ``t`` (always 1 for BFV).
        context: the context whose keys it is under (``None`` once unpickled).
        params: the parameters.
        key_fingerprint: the fingerprint of the public key it was made under (16 hexadecimal
            digits), or ``None`` for one built by hand outside a context holding keys.
        noise: the predicted variance of its noise (``ren.schemes.integer.noise``), which each
            operation computes from its operands' with no kernel run; ``None`` once read from
            bytes, unpickled, made inside a ``ren.jit`` function or built by hand. Never in its
            bytes, pickle, ``repr`` or a ``ren.jit`` key.
    """

    parts: tuple[Poly, ...]
    level: int
    correction: int = 1
    context: IntContext | None = dataclasses.field(
        default=None, repr=False, metadata={"ren_leaf": "local"}
    )
    params: IntParams | None = dataclasses.field(default=None, repr=False, kw_only=True)
    key_fingerprint: str | None = dataclasses.field(
        default=None, repr=False, kw_only=True, metadata={"ren_leaf": "key"}
    )
    noise: NoiseEstimate | None = dataclasses.field(
        default=None, repr=False, compare=False, kw_only=True, metadata={"ren_transient": True}
    )

    def __post_init__(self) -> None:
        parts = tuple(self.parts) if isinstance(self.parts, list | tuple) else None
        if parts is None or len(parts) not in (2, 3):
            raise ValueError("a ciphertext has 2 or 3 Poly parts")
        for p in parts:
            if not isinstance(p, Poly):
                raise TypeError(f"a ciphertext's parts are Polys, got {_fmt.describe(p)}")
        if len({p.ring for p in parts}) != 1:
            raise ValueError("a ciphertext's parts must share one ring")
        if len({p.device for p in parts}) != 1:
            raise ValueError("a ciphertext's parts must live on one device")
        if not is_int(self.level) or not is_int(self.correction):
            raise TypeError("a ciphertext's level and correction are ints")
        if self.params is not None and not isinstance(self.params, IntParams):
            raise TypeError(
                f"params must be a bfv.Params or bgv.Params, got {_fmt.describe(self.params)}"
            )
        object.__setattr__(self, "parts", parts)
        if self.context is not None and self.params is None:
            object.__setattr__(self, "params", self.context.params)
        check_key_fingerprint(self)
        if self.params is not None and parts[0].ring != self.params.ring(self.level):
            raise ValueError(
                f"level {self.level}'s ring is {self.params.ring(self.level)}, "
                f"the parts' {parts[0].ring}"
            )

    @property
    def size(self) -> int:
        """The number of parts."""
        return len(self.parts)

    def _evolve(self, **fields: Any) -> Ciphertext:
        """A new ciphertext of these fields changed; its ``noise`` is the one given, or none.

        Every operation states its result's noise estimate, so none is ever carried stale; inside
        a ``ren.jit`` capture none is kept (every replay returns the captured result, whatever
        its inputs' noise).
        """
        fields.setdefault("noise", None)
        if capturing() is not None:
            fields["noise"] = None
        return dataclasses.replace(self, **fields)

    def _ctx(self) -> IntContext:
        """Its context; once unpickled, the current context of its scheme (which checks it)."""
        if self.context is not None:
            return self.context
        if self.params is None or self.params.scheme not in ("bfv", "bgv"):
            raise ValueError("this ciphertext has no context: compute on it with ctx's methods")
        ctx: IntContext = scheme_module(self.params.scheme).current()
        return ctx

    def realize(self) -> Ciphertext:
        """Compute the parts now (they are lazy until then); returns ``self``."""
        realize(*self.parts)
        return self

    def __repr__(self) -> str:
        name = self.params.scheme if self.params is not None else "integer"
        return f"<{name}.Ciphertext n={self.parts[0].ring.n} level={self.level} parts={self.size}>"

    def _display_rows(self) -> list[tuple[str, object]]:
        """The display's rows: ``t``, and the noise budget the estimate predicts (no key read)."""
        rows: list[tuple[str, object]] = []
        if self.params is not None:
            rows.append(("t", self.params.t))
        if self.noise is not None and self.params is not None:
            from ren.schemes.integer.noise import predicted_budget

            budget = f"{predicted_budget(self):.1f} bits (the noise model, nothing run)"
            rows.append(("predicted noise budget", budget))
        return rows

    def __ren_region_notes__(self, side: str) -> dict[str, Any]:
        """What a region notes of it as input (``side="in"``) or output: its level."""
        return {f"level_{side}": self.level}

    def __ren_observe__(self) -> tuple[tuple[Poly, ...], Any] | None:
        """For the report's observing pass: the parts, then the noise budget after them.

        The notes are ``noise_budget`` (measured with the secret key) and, when the ciphertext
        carries an estimate, ``noise_budget_predicted`` (``IntContext.predicted_noise_budget``).
        ``None`` unless its context holds the secret key.
        """
        ctx = self.context
        if ctx is None or not ctx.has_secret_key:
            return None

        def notes() -> dict[str, object]:
            found: dict[str, object] = {"noise_budget": ctx.noise_budget(self)}
            if self.noise is not None:
                found["noise_budget_predicted"] = ctx.predicted_noise_budget(self)
            return found

        return self.parts, notes

    # --- copies, bytes, saved plans, the debugger --------------------------------------------
    def __reduce__(self) -> tuple[Callable[[bytes, str], Ciphertext], tuple[bytes, str]]:
        return (_ciphertext_from_pickle, (self.to_bytes(), self.parts[0].device))

    def to_bytes(self) -> bytes:
        """This ciphertext in Ren's versioned, checksummed format, with its key fingerprint.

        The kind names the scheme (``bfv-ciphertext``, ``bgv-ciphertext``); the header holds the
        parameters, the level, the ``correction`` and the key fingerprint.

        Raises:
            ValueError: for a ciphertext with no key fingerprint (built by hand, outside a context
                holding keys), or no parameters: a reader could not tell what it is.
        """
        fp = self.key_fingerprint
        if fp is None and self.context is not None:
            fp = self.context.key_fingerprint
        return _bytes.write_ciphertext(self.parts, self.level, self.correction, self.params, fp)

    @classmethod
    def from_bytes(cls, blob: bytes, context: IntContext | None = None) -> Ciphertext:
        """Read a ciphertext into ``context`` (default: the current context of its scheme).

        The blob must have been written with the context's scheme and parameters and under its
        keys: the blob's key fingerprint must be the context's (a context made with ``keys=``
        the client's evaluation keys, or ``secret_key=`` the client's exported secret key, has
        it).

        Raises:
            TypeError: when ``blob`` is not bytes or ``context`` not a context.
            ValueError: a truncated, altered, malformed or foreign blob (another scheme's
                included), other parameters, a context holding no keys, or a context holding
                other keys (naming both fingerprints).
            RuntimeError: without ``context``, when no context of the blob's scheme is active.
        """
        ctx = _context_arg(context, blob, "ciphertext")
        _, level, correction, fp, polys = _bytes.read_ciphertext(blob, ctx.params, ctx.device)
        ctx._check_fingerprint(fp, "ciphertext")
        return cls(tuple(polys), level, correction, ctx)

    def __ren_plan_fields__(self) -> dict[str, Any]:
        """What a saved plan (``ren.jit``'s ``save``) keeps of a result ciphertext: no key."""
        scheme = self.params.scheme if self.params is not None else None
        return {
            "parts": self.parts,
            "level": self.level,
            "correction": self.correction,
            "scheme": scheme,
        }

    @classmethod
    def __ren_plan_rebuild__(cls, fields: dict[str, Any]) -> Ciphertext:
        """The result ciphertext of a loaded plan, in its scheme's context active at load."""
        scheme, context = fields.get("scheme"), None
        if scheme in ("bfv", "bgv"):
            stack = scheme_module(scheme).Context._active.get()
            context = stack[-1] if stack else None
        level, correction = int(fields["level"]), int(fields["correction"])
        return cls(tuple(fields["parts"]), level, correction, context)

    def __ren_watch__(self, context: IntContext | None = None) -> CiphertextView:
        """How ``ren.viz``'s debugger shows this ciphertext: its level, noise budget and slots.

        Args:
            context: the context holding the secret key (default: the ciphertext's own, else the
                current one of its scheme when the slots are shown).

        Raises:
            TypeError: for a ``context`` that is not a ``bfv.Context`` or ``bgv.Context``.
        """
        from ren.schemes.integer.context import IntContext  # it imports this module
        from ren.schemes.integer.watch import CiphertextView

        if context is not None and not isinstance(context, IntContext):
            raise TypeError(
                f"context must be a bfv.Context or bgv.Context, got {type(context).__name__}"
            )
        return CiphertextView(self, context)

    # --- operators ----------------------------------------------------------------------------
    def __add__(self, other: object) -> Ciphertext:
        return self._ctx().add(self, other)

    def __radd__(self, other: object) -> Ciphertext:
        return self._ctx().add(self, other)

    def __sub__(self, other: object) -> Ciphertext:
        return self._ctx().sub(self, other)

    def __rsub__(self, other: object) -> Ciphertext:
        return self._ctx().negate(self._ctx().sub(self, other))

    def __neg__(self) -> Ciphertext:
        return self._ctx().negate(self)

    def rotate_rows(self, steps: int) -> Ciphertext:
        """Both rows of slots moved left by ``steps`` (SEAL's ``rotate_rows``)."""
        return self._ctx().rotate_rows(self, steps)

    def rotate_columns(self) -> Ciphertext:
        """The two rows swapped (SEAL's ``rotate_columns``)."""
        return self._ctx().rotate_columns(self)

    def relinearize(self) -> Ciphertext:
        """Two parts from three (``c_2`` key switched from ``s^2`` to ``s``)."""
        return self._ctx().relinearize(self)


def _ciphertext_from_pickle(blob: bytes, device: str) -> Ciphertext:
    params, level, correction, fp, polys = _bytes.read_ciphertext(blob, None, device)
    return Ciphertext(tuple(polys), level, correction, params=params, key_fingerprint=fp)
