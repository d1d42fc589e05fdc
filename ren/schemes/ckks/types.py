"""CKKS plaintexts, and the checks every value's fields go through."""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ren.poly import Poly, is_int
from ren.ring import RingSpec
from ren.schemes.ckks.active import context_arg, current
from ren.schemes.ckks.params import Params, read_value
from ren.schemes.rlwe import bytes as _fmt
from ren.schemes.rlwe.params import bits, need_int
from ren.schemes.rlwe.values import copy_poly

if TYPE_CHECKING:
    from ren.schemes.ckks.ciphertext import Ciphertext
    from ren.schemes.ckks.context import Context

# ---------------------------------------------------------------------------------------------
# values


def check_fields(value: Plaintext | Ciphertext, ring: RingSpec, what: str) -> None:
    """Check and normalize the fields a plaintext and a ciphertext share.

    ``context`` and ``params`` (filled from the context when not given), ``level`` (its ring must
    be the polynomials' ring), ``scale`` (finite, positive, below ``Q/2``) and ``real``.
    """
    set_ = functools.partial(object.__setattr__, value)
    ctx = value.context
    from ren.schemes.ckks.context import Context  # it imports this module

    if ctx is not None and not isinstance(ctx, Context):
        raise TypeError(f"context must be a ckks.Context or None, got {_fmt.describe(ctx)}")
    params = value.params
    if params is not None and not isinstance(params, Params):
        raise TypeError(f"params must be a ckks.Params or None, got {_fmt.describe(params)}")
    if ctx is not None:
        if params is None:
            params = ctx.params
            set_("params", params)
        elif params != ctx.params:
            raise ValueError(f"the {what}'s params {params} are not its context's {ctx.params}")
    level = need_int("level", value.level)
    if level < 0:
        raise ValueError(f"level={level} is negative: levels are 0 .. L-1")
    set_("level", level)
    if params is not None:
        params._check_level(level)
        if ring != params.ring(level):
            raise ValueError(
                f"a {what} at level {level} lives in {params.ring(level)!r}, but its polynomials "
                f"are over {ring!r}"
            )
    elif level + 1 != ring.L:
        raise ValueError(
            f"a {what} at level {level} needs {level + 1} limbs (q_0 .. q_{level}), but its "
            f"polynomials are over {ring!r}"
        )
    scale = value.scale
    if isinstance(scale, bool | np.bool_) or not isinstance(scale, numbers.Real):
        raise TypeError(f"scale must be a number, got {_fmt.describe(scale)}")
    try:
        scale = float(scale)
    except OverflowError:
        scale = math.inf
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale={scale!r} must be a finite positive number")
    Q = ring.Q
    if 2 * scale >= Q:
        raise ValueError(
            f"the scale {bits(scale)} outgrows the modulus Q={bits(Q)} at level {level} (a "
            "scale must stay below Q/2): rescale before multiplying again"
        )
    set_("scale", scale)
    if not isinstance(value.real, bool | np.bool_):
        raise TypeError(f"real must be True or False, got {_fmt.describe(value.real)}")
    set_("real", bool(value.real))


@dataclasses.dataclass(frozen=True, eq=False)
class Plaintext:
    """An encoded vector: one ``Poly`` (NTT form) at ``level`` whose slots hold ``values * scale``.

    The constructor checks the fields (``TypeError`` for a wrong type, ``ValueError`` for a level
    whose ring is not the poly's, or a scale that is not finite, positive and below ``Q/2``).
    ``==`` is identity, as for every CKKS value: compare the decoded slots. ``pickle`` and
    ``copy.deepcopy`` copy the value (pickle through ``to_bytes``); ``copy.copy`` and
    ``copy.deepcopy`` keep the same ``context``.

    Attributes:
        poly: the polynomial, in the ring of ``level``.
        scale: the exact scale the values were multiplied by.
        level: ``0 .. L-1``.
        real: whether the values are real (decoding then returns imaginary parts of exactly 0).
        context: the ``Context`` it was made in (``None`` once unpickled: the current one).
        params: the ``Params`` it was made for (the context's; kept through pickle).
        magnitude: the largest ``|value|`` encoded (``Context.encode`` notes it, for the
            predicted precision of what it multiplies); ``None`` (taken as 1) for a plaintext
            built by hand, read from bytes or unpickled.
        rounding: the variance of the encoding's rounding over the coefficients (0 for values
            the scale holds exactly, such as ``+-1`` and ``+-i`` at scale 1); ``None`` (taken as
            ``1/12``) where not known.
        mass: the sum of the encoded values' sizes (``None``: ``slots * magnitude``).
        peak: the largest ``|coefficient|`` over the scale (``None``: not known, at most
            ``magnitude``): a bootstrap's approximation error grows with it.
        power: the sum of the encoded values' squared sizes (``None``: not known).
        support: how many slots are not zero (``None``: not known): an error times the
            plaintext is zero on the others.
        exact: the values as given, before the encoding's rounding (``Context.encode`` keeps
            them while values get plaintext shadows, ``ren.schemes.ckks.shadow``; a
            ``LinearTransform`` keeps its diagonals'): the shadow of a product by the plaintext
            is then of the exact values.
    """

    poly: Poly
    scale: float
    level: int
    real: bool = False
    context: Context | None = dataclasses.field(
        default=None, repr=False, metadata={"ren_leaf": "local"}
    )
    params: Params | None = dataclasses.field(default=None, repr=False, kw_only=True)
    magnitude: float | None = dataclasses.field(
        default=None, repr=False, compare=False, kw_only=True, metadata={"ren_transient": True}
    )
    rounding: float | None = dataclasses.field(
        default=None, repr=False, compare=False, kw_only=True, metadata={"ren_transient": True}
    )
    mass: float | None = dataclasses.field(
        default=None, repr=False, compare=False, kw_only=True, metadata={"ren_transient": True}
    )
    peak: float | None = dataclasses.field(
        default=None, repr=False, compare=False, kw_only=True, metadata={"ren_transient": True}
    )
    power: float | None = dataclasses.field(
        default=None, repr=False, compare=False, kw_only=True, metadata={"ren_transient": True}
    )
    support: int | None = dataclasses.field(
        default=None, repr=False, compare=False, kw_only=True, metadata={"ren_transient": True}
    )
    exact: np.ndarray | None = dataclasses.field(
        default=None, repr=False, compare=False, kw_only=True, metadata={"ren_transient": True}
    )

    __array_ufunc__ = None  # NumPy defers to the operators instead of broadcasting over them

    def __post_init__(self) -> None:
        if not isinstance(self.poly, Poly):
            raise TypeError(f"poly must be a Poly, got {_fmt.describe(self.poly)}")
        check_fields(self, self.poly.ring, "plaintext")

    def _ctx(self) -> Context:
        return self.context if self.context is not None else current()

    def _params(self) -> Params:
        return self.params if self.params is not None else self._ctx().params

    def __copy__(self) -> Plaintext:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new

    def __deepcopy__(self, memo: dict[int, object]) -> Plaintext:
        new = dataclasses.replace(self, poly=copy_poly(self.poly))
        memo[id(self)] = new
        return new

    def __reduce__(self) -> tuple[Callable[[bytes, str], Plaintext], tuple[bytes, str]]:
        from ren.schemes.ckks.api import _plaintext_from_pickle  # it imports this module

        return (_plaintext_from_pickle, (self.to_bytes(), self.poly.device))

    def __ren_plan_fields__(self) -> dict[str, Any]:
        """What a saved plan (``ren.jit``'s ``save``) keeps of a result plaintext."""
        return {"poly": self.poly, "scale": self.scale, "level": self.level, "real": self.real}

    @classmethod
    def __ren_plan_rebuild__(cls, fields: dict[str, Any]) -> Plaintext:
        """The result plaintext of a loaded plan, in the context active at load (if any)."""
        from ren.schemes.ckks.active import plan_fields  # it imports this module

        return cls(fields["poly"], **plan_fields(fields))

    def at_level(self, level: int) -> Plaintext:
        """The same plaintext at a lower ``level`` (a limb view)."""
        if level == self.level:
            return self
        check_down(self.level, level, "plaintext")
        ring = self._params().ring(level)
        return dataclasses.replace(self, poly=self.poly.to_ring(ring), level=level)

    def decode(self) -> np.ndarray:
        """The slots (``numpy.complex128``, ``n/2`` of them)."""
        return self._ctx().decode(self)

    def to_bytes(self) -> bytes:
        """This plaintext in Ren's versioned, checksummed CKKS format."""
        head, data = _fmt.poly_record(self.poly)
        header = {
            "params": self._params()._header(),
            "scale": self.scale.hex(),
            "level": self.level,
            "real": self.real,
            "polys": [head],
        }
        return _fmt.pack("plaintext", header, [data])

    @classmethod
    def from_bytes(cls, blob: bytes, context: Context | None = None) -> Plaintext:
        """Read a plaintext into ``context`` (default: the current one).

        The blob must have been written with the context's parameters.

        Raises:
            TypeError: when ``blob`` is not bytes or ``context`` not a ``Context``.
            ValueError: a truncated, altered, malformed or foreign blob, or other parameters.
        """
        ctx = context_arg(context)
        _, h, polys = read_value(blob, "plaintext", ctx.params, ctx.device)
        return cls(polys[0], h.hex_float("scale"), h.raw("level"), h.raw("real"), ctx)


def check_down(level: int, target: int, what: str) -> None:
    """Refuse bringing a ``what`` at ``level`` to ``target`` unless it is an int in ``[0, level]``.

    Raises:
        TypeError, ValueError: naming the level asked for.
    """
    if not is_int(target):
        raise TypeError(f"level must be an int, got {_fmt.describe(target)}")
    if not 0 <= target <= level:
        raise ValueError(
            f"cannot bring a {what} at level {level} to level {target!r}: levels only go down, "
            "to 0 at the least"
        )
