"""Plaintext shadows: what a ciphertext should decrypt to, by the same operations in NumPy.

While regions keep their outputs (``ren.ir.region.keeping``, which ``ren.viz.record()`` turns
on) and the context holds the secret key, each ciphertext the evaluator makes carries a
:class:`Shadow`: its slots times its scale, as the operations that made it give them on exact
plaintext values (sums, products, divisions by the rescaled modulus, rotations, conjugations).
A shadow is lazy: nothing is computed while the program builds its graph. The report's observing
pass (``ren.viz.precision``) evaluates the shadows of the regions' outputs after the program,
decrypts the outputs in a realization of its own, and notes each region's precision (absolute,
against the shadow) and the ranges it breaks (``observe``).

Its leaves are the plaintexts the program encoded (their own decoding) and ModRaise's output,
whose plaintext ``t + q_0 I`` only the secret key tells: its decryption, exact. A shadow is
never pickled, saved or printed: ``Ciphertext`` leaves it out of its bytes and its repr.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ren.ir.region import is_keeping

if TYPE_CHECKING:
    from ren.schemes.ckks.ciphertext import Ciphertext
    from ren.schemes.ckks.context import Context
    from ren.schemes.ckks.types import Plaintext

__all__ = ["Shadow", "apply", "decryption", "observe", "plain_shadow", "shadowing"]


class Shadow:
    """The slots times the scale of a ciphertext, as plaintext operations give them (lazily).

    ``Shadow(fn, *args)`` is ``fn`` of the values of ``args`` (shadows or plain values);
    ``Shadow(fn)`` with no argument is a leaf, ``fn()``. ``value()`` computes it once.
    """

    __slots__ = ("_value", "args", "fn")

    def __init__(self, fn: Callable[..., np.ndarray], *args: object) -> None:
        self.fn, self.args = fn, args
        self._value: np.ndarray | None = None

    def value(self) -> np.ndarray:
        """The shadow's slots times scale (``complex128``), computed once, without recursion."""
        stack: list[Shadow] = [self]
        while stack:
            top = stack[-1]
            if top._value is not None:
                stack.pop()
                continue
            todo = [a for a in top.args if isinstance(a, Shadow) and a._value is None]
            if todo:
                stack.extend(todo)
                continue
            values = [a._value if isinstance(a, Shadow) else a for a in top.args]
            top._value = np.asarray(top.fn(*values), dtype=np.complex128)
            top.args = ()  # computed: what it was made of can go
            stack.pop()
        assert self._value is not None
        return self._value

    def __repr__(self) -> str:
        return "<Shadow>"


def apply(fn: Callable[..., np.ndarray], *args: object) -> Shadow | None:
    """``Shadow(fn, *args)``, or ``None`` when an argument is a missing shadow (``None``)."""
    if any(a is None for a in args):
        return None
    return Shadow(fn, *args)


def plain_shadow(context: Context, pt: Plaintext) -> Shadow:
    """A plaintext's shadow: the values it was encoded from (``pt.exact``), else its decoding.

    The exact values where they were kept (``Context.encode`` while values get shadows, a
    ``LinearTransform`` for its diagonals), so a measure against the shadow counts the
    encoding's rounding as an error, as a comparison with the values the program meant does; a
    plaintext encoded before the recording, or built otherwise, is its own decoding.
    """
    if pt.exact is not None:
        exact = pt.exact
        return Shadow(lambda: exact * pt.scale)
    return Shadow(lambda: context.decode(pt) * pt.scale)


def shadowing(context: Context | None) -> bool:
    """Whether values made now in ``context`` get shadows (regions keep outputs; it decrypts)."""
    return is_keeping() and context is not None and bool(context.has_secret_key)


def decryption(context: Context, ct: Ciphertext) -> Shadow | None:
    """A leaf for a value whose plaintext only the secret key tells: ``ct``'s own decryption.

    ModRaise's output ``t + q_0 I`` (inside an encapsulated bootstrap, once back under the
    secret), exact: its words, the slots times the scale at scale 1. ``None`` when values made now
    in ``context`` get no shadow (``shadowing``).
    """
    if not shadowing(context):
        return None
    return Shadow(lambda: context._decode_poly(context.decrypt_poly(ct), 1.0, False))


def observe(ct: Ciphertext) -> tuple[tuple[Any, ...], Callable[[], dict[str, Any]]] | None:
    """How to measure ``ct`` against its shadow: ``(polys, notes)``, or ``None``.

    Realize ``polys`` (with those of other ciphertexts: one realization), then ``notes()`` gives
    what the report shows of ``ct``:

    * ``bits``: ``ckks.precision_bits(got, shadow)``, the *absolute* precision of its decryption
      against the shadow's slots (``-log2`` of the largest slot error), the figure a user gets
      from ``ckks.precision_bits`` against the same plaintext values;
    * ``magnitude`` and ``bits_relative``, when the shadow's largest slot passes 1:
      ``max |v|`` and ``ckks.precision_bits(got, shadow, relative=True)`` (the error over
      ``max |v|``): an intermediate read at a small scale holds large values, and its error is as
      large in proportion;
    * ``bits_predicted``: ``ckks.predicted_precision(ct)``, what the noise model predicted for
      ``bits`` without running (when ``ct`` carries an estimate);
    * ``warning``: the ranges noted of ``ct`` (``ren.schemes.ckks.ranges.expect``) its shadow
      breaks, each also a ``RangeWarning``. The shadow shares a polynomial's approximation error,
      so a function (or a bootstrap's stage) fed values outside its range shows a high precision
      against its shadow and is wrong against the plaintext: this note is what says so.

    ``None`` for a ciphertext without a shadow or outside a context holding the secret key.
    """
    from ren.schemes.ckks.api import predicted_precision
    from ren.schemes.ckks.encoding import embed, precision_bits
    from ren.schemes.ckks.ranges import RangeWarning, out_of_range

    ctx = ct.context
    if ct.shadow is None or ctx is None or not ctx.has_secret_key:
        return None
    shadow = ct.shadow
    poly = ctx.decrypt_poly(ct).intt()

    def notes() -> dict[str, Any]:
        n = ctx.params.n
        coeffs = np.array(poly.tolist(centered=True), dtype=object).astype(np.float64)
        got = embed(coeffs / ct.scale, n)
        slots = shadow.value() / ct.scale
        expected = slots
        if ct.real:
            got, expected = got.real, expected.real
        out: dict[str, Any] = {"bits": precision_bits(got, expected)}
        size = float(np.max(np.abs(expected), initial=0.0))
        if size > 1:
            out["magnitude"] = size
            out["bits_relative"] = precision_bits(got, expected, relative=True)
        if ct.noise is not None and not ct.noise.relative:  # the model's figure, beside it
            out["bits_predicted"] = predicted_precision(ct)
        found = out_of_range(ct, slots, n)
        if found:
            out["warning"] = "; ".join(problem for problem, _ in found)
            for problem, advice in found:
                warnings.warn(f"{problem}: {advice}", RangeWarning, stacklevel=2)
        return out

    return (poly,), notes
