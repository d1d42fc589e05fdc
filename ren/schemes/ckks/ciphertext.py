"""CKKS ciphertexts, and how the debugger sees one."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ren.capture.function import capturing
from ren.poly import Poly, realize
from ren.ring import RingSpec
from ren.schemes.ckks.active import context_arg, current, plan_fields
from ren.schemes.ckks.encoding import precision_bits
from ren.schemes.ckks.noise import Noise
from ren.schemes.ckks.params import Params, read_value, scale_text
from ren.schemes.ckks.ranges import expectations, out_of_range
from ren.schemes.ckks.registry import circuit
from ren.schemes.ckks.shadow import Shadow, observe
from ren.schemes.ckks.types import check_down, check_fields
from ren.schemes.rlwe import bytes as _fmt
from ren.schemes.rlwe.values import RlweCiphertext, check_key_fingerprint

if TYPE_CHECKING:
    from ren.schemes.ckks.context import Context


@dataclasses.dataclass(frozen=True, eq=False)
class Ciphertext(RlweCiphertext):
    """An encryption: polys ``c_0, c_1`` (and ``c_2`` before relinearization) in NTT form.

    The polys are at ``level``, with ``c_0 + c_1 s (+ c_2 s^2) = m + e`` for the encoded message
    ``m`` at ``scale``.

    Operators: ``+``, ``-`` and unary ``-`` with ciphertexts, plaintexts, numbers and arrays;
    ``*`` relinearizes and rescales (see ``multiply`` for control). Operands at different levels
    are brought to the lower one. A NumPy array on the left (``np.ones(k) * ct``) is encoded as
    slot values, as on the right. ``==`` is identity: decrypt to compare values.

    The constructor checks the fields: 2 or 3 ``Poly`` parts over one ring and device
    (``TypeError``/``ValueError``), a level whose ring is theirs, a finite positive scale below
    ``Q/2``. A ciphertext made in a context takes the context's ``params`` and ``key_fingerprint``.
    ``pickle`` sends its bytes (never a key); the unpickled ciphertext has no ``context`` and keeps
    its ``params`` and ``key_fingerprint``, which the context that computes on it checks.
    ``copy.copy`` and ``copy.deepcopy`` keep the same ``context`` (``deepcopy`` copies the parts'
    values).

    Attributes:
        parts: the polys ``(c_0, c_1)`` or ``(c_0, c_1, c_2)``.
        scale: the exact scale of the message.
        level: ``0 .. L-1``.
        real: whether the message is real.
        context: the ``Context`` whose keys it is under (``None`` once unpickled: the current
            one, checked against ``params`` and ``key_fingerprint``).
        params: the ``Params`` it was made for.
        key_fingerprint: the fingerprint of the public key it was made under (16 hexadecimal
            digits), or ``None`` for one built by hand outside a context holding keys.
        shadow: its plaintext shadow (``ren.schemes.ckks.shadow``), made only while
            ``ren.viz.record()`` records in a context holding the secret key; never pickled,
            saved or part of a ``ren.jit`` key.
        noise: the predicted error (``ren.schemes.ckks.noise``), which every operation of the
            evaluator computes from its operands' without running anything
            (``ckks.predicted_precision`` reads it); ``None`` for a ciphertext built by hand,
            read from bytes, unpickled or made inside a ``ren.jit`` function (whose replays
            return it whatever their inputs). Never pickled, saved or part of a ``ren.jit`` key.
    """

    parts: tuple[Poly, ...]
    scale: float
    level: int
    real: bool = False
    context: Context | None = dataclasses.field(
        default=None, repr=False, metadata={"ren_leaf": "local"}
    )
    params: Params | None = dataclasses.field(default=None, repr=False, kw_only=True)
    key_fingerprint: str | None = dataclasses.field(
        default=None, repr=False, kw_only=True, metadata={"ren_leaf": "key"}
    )
    shadow: Shadow | None = dataclasses.field(
        default=None, repr=False, compare=False, kw_only=True, metadata={"ren_transient": True}
    )
    noise: Noise | None = dataclasses.field(
        default=None, repr=False, compare=False, kw_only=True, metadata={"ren_transient": True}
    )

    def __post_init__(self) -> None:
        parts = self.parts
        if isinstance(parts, Poly) or not isinstance(parts, tuple | list):
            raise TypeError(
                f"parts must be a tuple of 2 or 3 Poly values, got {_fmt.describe(parts)}"
            )
        parts = tuple(parts)
        for i, p in enumerate(parts):
            if not isinstance(p, Poly):
                raise TypeError(f"parts[{i}] is a {type(p).__name__}; the parts are Poly values")
        if len(parts) not in (2, 3):
            raise ValueError(
                f"a ciphertext has 2 parts (c_0, c_1), or 3 (c_0, c_1, c_2) before "
                f"relinearization; got {len(parts)}"
            )
        ring, device = parts[0].ring, parts[0].device
        for i, p in enumerate(parts[1:], 1):
            if p.ring != ring:
                raise ValueError(
                    f"parts[{i}] is over {p.ring!r} and parts[0] over {ring!r}: the parts of a "
                    "ciphertext share one ring"
                )
            if p.device != device:
                raise ValueError(
                    f"parts[{i}] is on {p.device!r} and parts[0] on {device!r}: the parts of a "
                    "ciphertext live on one device"
                )
        object.__setattr__(self, "parts", parts)
        check_fields(self, ring, "ciphertext")
        if capturing() is not None:  # made inside a ren.jit function: see _evolve
            object.__setattr__(self, "noise", None)
        check_key_fingerprint(self)

    # --- facts ----------------------------------------------------------------------------------
    def _ctx(self) -> Context:
        return self.context if self.context is not None else current()

    def _params(self) -> Params:
        return self.params if self.params is not None else self._ctx().params

    @property
    def size(self) -> int:
        """The number of parts: 2, or 3 before relinearization."""
        return len(self.parts)

    @property
    def ring(self) -> RingSpec:
        """The ring of the parts."""
        return self.parts[0].ring

    def realize(self) -> Ciphertext:
        """Compute every part now (together); returns ``self``."""
        realize(*self.parts)
        return self

    def _evolve(self, **changes: object) -> Ciphertext:
        """A copy with ``changes``, not checked again: for the evaluator's results only.

        The evaluator makes them from checked operands of its own context (parts over the ring
        of their level, a scale it computed that cannot outgrow the modulus: sums, rescales and
        key switches); every value a user builds goes through the constructor's checks.
        """
        new = object.__new__(Ciphertext)
        new.__dict__.update(self.__dict__, **changes)
        if capturing() is not None:  # a replay returns this object: an estimate would be stale
            new.__dict__["noise"] = None
        return new

    # --- copies (``copy`` keeps the context, ``deepcopy`` copies the parts' values) --------------
    def __reduce__(self) -> tuple[Callable[[bytes, str], Ciphertext], tuple[bytes, str]]:
        from ren.schemes.ckks.api import _ciphertext_from_pickle  # it imports this module

        return (_ciphertext_from_pickle, (self.to_bytes(), self.parts[0].device))

    def __ren_observe__(self) -> tuple[tuple[Poly, ...], Any] | None:
        """For the report's observing pass: the polys to realize, then the notes of a measure.

        The notes are the precision against the plaintext shadow (absolute, as
        ``ckks.precision_bits``; relative too where the values pass 1) and any range the value
        breaks; ``None`` without a shadow (``ren.schemes.ckks.shadow.observe``).
        """
        return observe(self)

    def _display_rows(self) -> list[tuple[str, object]]:
        """The display's CKKS rows: the scale, the slots, the precision the noise model predicts."""
        rows: list[tuple[str, object]] = [
            ("scale", scale_text(self.scale)),
            ("slots", f"{self._params().slots}, {'real' if self.real else 'complex'}"),
        ]
        if self.noise is not None:
            from ren.schemes.ckks.api import predicted_precision  # it imports this module

            bits = predicted_precision(self)
            rows.append(("predicted precision", f"{bits:.1f} bits (the noise model, nothing run)"))
        return rows

    def __ren_region_notes__(self, side: str) -> dict[str, Any]:
        """What a region notes of it as input (``side="in"``) or output: level and scale."""
        return {f"level_{side}": self.level, f"scale_{side}": self.scale}

    def __ren_plan_fields__(self) -> dict[str, Any]:
        """What a saved plan (``ren.jit``'s ``save``) keeps of a result ciphertext: no key."""
        return {"parts": self.parts, "scale": self.scale, "level": self.level, "real": self.real}

    @classmethod
    def __ren_plan_rebuild__(cls, fields: dict[str, Any]) -> Ciphertext:
        """The result ciphertext of a loaded plan, in the context active at load (if any)."""
        return cls(tuple(fields["parts"]), **plan_fields(fields))

    # --- operators ------------------------------------------------------------------------------
    def __add__(self, other: object) -> Ciphertext:
        return self._ctx()._add(self, other, sub=False)

    def __radd__(self, other: object) -> Ciphertext:
        return self._ctx()._add(self, other, sub=False)

    def __sub__(self, other: object) -> Ciphertext:
        return self._ctx()._add(self, other, sub=True)

    def __rsub__(self, other: object) -> Ciphertext:
        return self._ctx()._add(-self, other, sub=False)

    def __neg__(self) -> Ciphertext:
        shadow = None if self.shadow is None else Shadow(np.negative, self.shadow)
        return dataclasses.replace(self, parts=tuple(-p for p in self.parts), shadow=shadow)

    # --- methods ----------------------------------------------------------------------------------
    def rotate(self, steps: int) -> Ciphertext:
        """Slots moved left by ``steps``: slot ``j + steps`` lands in slot ``j`` (key switched)."""
        return self._ctx().rotate(self, steps)

    def conjugate(self) -> Ciphertext:
        """Every slot complex-conjugated (key switched)."""
        return self._ctx().conjugate(self)

    def bootstrap(
        self, config: object = None, *, iterations: int = 1, precision: int | None = None
    ) -> Ciphertext:
        """``ckks.bootstrap(self, config, iterations=..., precision=...)``: back at a high level.

        With ``iterations=2``, to about twice the bits, one level lower.
        """
        bootstrap = circuit("bootstrap")  # registered by ren.circuits.ckks
        out: Ciphertext = bootstrap(self, config, iterations=iterations, precision=precision)
        return out

    def rescale(self) -> Ciphertext:
        """Divide by the last modulus ``q_level``: one level down, scale divided by it."""
        return self._ctx().rescale(self)

    def relinearize(self) -> Ciphertext:
        """A three-part ciphertext as two parts under ``s`` (key switching ``c_2`` from ``s^2``)."""
        return self._ctx().relinearize(self)

    def at_level(self, level: int) -> Ciphertext:
        """The same ciphertext at a lower ``level``: a limb view, scale unchanged."""
        if level == self.level:
            return self
        check_down(self.level, level, "ciphertext")
        ring = self._params().ring(level)
        return dataclasses.replace(
            self, parts=tuple(p.to_ring(ring) for p in self.parts), level=level
        )

    def decrypt(self, *, real: bool = False) -> np.ndarray:
        """Decrypt and decode (needs the secret key): ``n/2`` complex slots.

        ``real=True``: the real parts, as float64. The parts keep the buffers the decryption
        computed (``Context.decrypt``).
        """
        return self._ctx().decrypt(self, real=real)

    # --- the debugger's watch protocol -----------------------------------------------------------
    def __ren_watch__(self, context: Context | None = None) -> CiphertextView:
        """How ``ren.viz``'s debugger shows this ciphertext: its slots and their precision.

        Args:
            context: the context holding the secret key (default: the ciphertext's own, else the
                current one when the slots are shown).

        Raises:
            TypeError: for a ``context`` that is not a ``ckks.Context``.
        """
        from ren.schemes.ckks.context import Context  # it imports this module

        if context is not None and not isinstance(context, Context):
            raise TypeError(f"context must be a ckks.Context, got {type(context).__name__}")
        return CiphertextView(self, context)

    # --- bytes ------------------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """This ciphertext in Ren's versioned, checksummed CKKS format, with its key fingerprint.

        Raises:
            ValueError: for a ciphertext with no key fingerprint (built by hand, outside a context
                holding keys): a reader could not tell which keys it is under.
        """
        fp = self.key_fingerprint
        if fp is None:
            fp = self._ctx().key_fingerprint
        if fp is None:
            raise ValueError(
                "this ciphertext has no key fingerprint (it was built outside a context holding "
                "keys), so its bytes could not say which keys it is under; make it in a context "
                "with keys"
            )
        heads, datas = zip(*(_fmt.poly_record(p) for p in self.parts), strict=True)
        header = {
            "params": self._params()._header(),
            "scale": self.scale.hex(),
            "level": self.level,
            "real": self.real,
            "key_fingerprint": fp,
            "polys": list(heads),
        }
        return _fmt.pack("ciphertext", header, list(datas))

    @classmethod
    def from_bytes(cls, blob: bytes, context: Context | None = None) -> Ciphertext:
        """Read a ciphertext into ``context`` (default: the current one).

        The blob must have been written with the context's parameters and under its keys: the
        blob's key fingerprint must be the context's (a context made with ``keys=`` the client's
        evaluation keys, or ``secret_key=`` the client's exported secret key, has it).

        Raises:
            TypeError: when ``blob`` is not bytes or ``context`` not a ``Context``.
            ValueError: a truncated, altered, malformed or foreign blob, other parameters, a
                context holding no keys, or a context holding other keys (naming both
                fingerprints).
        """
        ctx = context_arg(context)
        _, h, polys = read_value(blob, "ciphertext", ctx.params, ctx.device)
        fp = h.fingerprint("key_fingerprint")
        ctx._check_fingerprint(fp, "ciphertext")
        return cls(tuple(polys), h.hex_float("scale"), h.raw("level"), h.raw("real"), ctx)


@dataclasses.dataclass(frozen=True)
class CiphertextView:
    """A ciphertext as the debugger shows it (``Ciphertext.__ren_watch__``).

    The debugger knows no scheme: it asks the view for a one-line ``summary``, for the slots of
    the ciphertext with the parts as its buffers stand (``decrypt``), for their precision
    against the plaintext shadow (``precision_bits``: absolute, ``ckks.precision_bits``), and
    for the ranges the value breaks (``notes``).
    """

    ciphertext: Ciphertext
    context: Context | None = None

    @property
    def summary(self) -> str:
        """``level L, scale 2^S``."""
        return f"level {self.ciphertext.level}, scale 2^{np.log2(self.ciphertext.scale):.2f}"

    def decrypt(self, parts: tuple[Poly, ...]) -> np.ndarray:
        """The slots of the ciphertext with ``parts`` in place of its own.

        Raises:
            ValueError: when the context holds no secret key.
        """
        ct = self.ciphertext
        context = self.context
        if context is None:
            context = ct.context if ct.context is not None else current()
        if not context.has_secret_key:
            raise ValueError("this CKKS context holds no secret key, so it cannot decrypt")
        return context._slots_as_they_stand(dataclasses.replace(ct, parts=tuple(parts)))

    #: What ``precision_bits`` measures, for the debugger's label.
    precision_label = "absolute"

    @staticmethod
    def precision_bits(got: object, expected: object) -> float:
        """``ckks.precision_bits``: ``-log2`` of the largest slot error (absolute)."""
        return precision_bits(got, expected)

    def predicted(self) -> str | None:
        """``ckks.predicted_precision`` of the ciphertext, labelled (``None``: no estimate)."""
        if self.ciphertext.noise is None:
            return None
        from ren.schemes.ckks.api import predicted_precision  # it imports this module

        return (
            f"{predicted_precision(self.ciphertext):.2f} bits (absolute, vs exact values; "
            "the noise model, nothing run)"
        )

    def notes(self, parts: tuple[Poly, ...]) -> list[str]:
        """The ranges noted of the ciphertext (``ranges.expect``) its decryption breaks, in words.

        A bootstrap notes one of its ModRaise output (``stages["mod_raise"]``: ``|t / q_0|`` and
        ``|I|``), a function one of its input (the interval of its fit). Decrypted in full (the
        imaginary parts too): what is checked is the value as the next circuit reads it.
        """
        ct = self.ciphertext
        if not expectations(ct):
            return []
        whole = CiphertextView(dataclasses.replace(ct, real=False), self.context)
        slots = whole.decrypt(parts)
        return [problem for problem, _ in out_of_range(ct, slots, ct._params().n)]
