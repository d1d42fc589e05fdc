"""The CKKS evaluator: add, multiply, rescale, relinearize, rotate, conjugate.

Each operation but add builds in a region of its name (``ren.region``; a relinearization or a
rotation holds a ``key_switch`` region, a multiply its ``relinearize`` and ``rescale``), whose
instance notes the level and scale of its input and output: the report and the debugger show
them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import numpy as np

from ren.ir.region import in_region
from ren.poly import Poly, is_int
from ren.ring import galois_for_rotation
from ren.schemes.ckks import noise
from ren.schemes.ckks.ciphertext import Ciphertext
from ren.schemes.ckks.encoding import (
    constant_poly,
    finite,
    is_number,
    is_values,
    level0,
    same_scale,
)
from ren.schemes.ckks.params import scale_text
from ren.schemes.ckks.shadow import Shadow, apply, plain_shadow
from ren.schemes.ckks.types import Plaintext
from ren.schemes.rlwe import bytes as _fmt
from ren.schemes.rlwe.params import bits

if TYPE_CHECKING:
    from ren.schemes.ckks.context import Context
    from ren.schemes.ckks.params import Params


class Evaluator:
    """The homomorphic operations of a CKKS context (a mixin of ``ckks.Context``).

    The key-switched steps, ``relinearize`` and the Galois automorphism of a rotation or a
    conjugation, are every RLWE context's (``ren.schemes.rlwe.context.RlweContext``).
    """

    if TYPE_CHECKING:  # what the context provides
        params: Params
        device: str

        def _own(self, ct: object) -> Ciphertext: ...
        def _plain(self, pt: object, what: str) -> Plaintext: ...
        def _context(self) -> Context: ...
        def encode(  # noqa: D102
            self, values: object, level: int | None = None, scale: float | None = None
        ) -> Plaintext: ...
        def relinearize(self, ct: Ciphertext) -> Ciphertext: ...  # noqa: D102
        def _automorphism(
            self, parts: tuple[Poly, ...], g: int, level: int
        ) -> tuple[Poly, Poly]: ...

    # --- evaluation -------------------------------------------------------------------------------
    def _match(self, a: Ciphertext, level: int, scale: float, what: str) -> Ciphertext:
        """``a`` (above ``level``) at ``level`` with ``scale``.

        A view when the scales agree, else a scalar multiply by
        ``round(scale * q_(level+1) / a.scale)`` and a rescale from ``level + 1``.
        """
        if same_scale(a.scale, scale):
            return a.at_level(level)
        a = a.at_level(level + 1)
        q = self.params.q_moduli[level + 1]
        k = round(scale * q / a.scale)
        if k < 2**20:
            raise ValueError(
                f"cannot {what} values at scales {scale_text(a.scale)} and {scale_text(scale)}: "
                "adjusting "
                f"the first needs a factor of {k}, too small to keep the precision"
            )
        shadow = apply(lambda v: v * k, a.shadow)
        est = None if a.noise is None else a.noise.times(k)
        out = dataclasses.replace(a, parts=tuple(p * k for p in a.parts), shadow=shadow, noise=est)
        out = out.rescale()
        return dataclasses.replace(out, scale=float(scale))

    def _add(self, a: Ciphertext, b: object, sub: bool) -> Ciphertext:
        a = self._own(a)
        what = "subtract" if sub else "add"
        if isinstance(b, Ciphertext):
            b = self._own(b)
            same = a is b
            if a.level > b.level:
                a = self._match(a, b.level, b.scale, what)
            elif b.level > a.level:
                b = self._match(b, a.level, a.scale, what)
            elif not same_scale(a.scale, b.scale):
                raise ValueError(
                    f"cannot {what} ciphertexts at scales {scale_text(a.scale)} and "
                    f"{scale_text(b.scale)} "
                    f"(both at level {a.level}): encode or encrypt with scale= the other's scale"
                )
            n = max(a.size, b.size)
            pa = a.parts + (None,) * (n - a.size)
            pb = b.parts + (None,) * (n - b.size)
            parts = tuple(
                x if y is None else (-y if sub else y) if x is None else (x - y if sub else x + y)
                for x, y in zip(pa, pb, strict=True)
            )
            shadow = apply(np.subtract if sub else np.add, a.shadow, b.shadow)
            est = _both(a, b, lambda x, y: noise.add(x, y, same, sub))
            return a._evolve(parts=parts, real=a.real and b.real, shadow=shadow, noise=est)
        if isinstance(b, Plaintext):
            b = self._plain(b, what)
            if b.level < a.level:
                a = a.at_level(b.level)
            b = b.at_level(a.level)
            if not same_scale(a.scale, b.scale):
                raise ValueError(
                    f"cannot {what} a ciphertext at scale {scale_text(a.scale)} and a plaintext at "
                    f"scale {scale_text(b.scale)}: encode with scale=ct.scale"
                )
            c0 = a.parts[0] - b.poly if sub else a.parts[0] + b.poly
            shadow = apply(np.subtract if sub else np.add, a.shadow, self._pt_shadow(a, b))
            pn = self._pt_noise(b)
            est = _one(a, lambda x: noise.add(x, pn))
            return a._evolve(
                parts=(c0, *a.parts[1:]), real=a.real and b.real, shadow=shadow, noise=est
            )
        if is_number(b):
            phrase = f"subtract {b!r} from a ciphertext" if sub else f"add {b!r} to a ciphertext"
            c = finite(b, phrase)
            ring = self.params.ring(a.level)
            const = constant_poly(-c if sub else c, a.scale, ring, self.device, phrase, a.level)
            c0 = a.parts[0] + const
            shadow = apply(lambda v, d=(-c if sub else c) * a.scale: v + d, a.shadow)
            est = _one(a, lambda x: dataclasses.replace(x, bound=x.bound + abs(c) * a.scale))
            return a._evolve(
                parts=(c0, *a.parts[1:]), real=a.real and c.imag == 0, shadow=shadow, noise=est
            )
        if is_values(b):
            pt = self.encode(b, a.level, a.scale)
            return self._add(a, pt, sub)
        return cast(Ciphertext, NotImplemented)  # the operator's caller tries the other operand

    @in_region("multiply")
    def multiply(
        self, a: Ciphertext, b: object, relinearize: bool = True, rescale: bool = True
    ) -> Ciphertext:
        """``a * b`` for a ciphertext ``a`` and a ciphertext, plaintext, number or array ``b``.

        Args:
            a: the ciphertext.
            b: a ciphertext, plaintext, finite number, or array of slot values.
            relinearize: key switch a three-part product back to two parts.
            rescale: divide by the last modulus afterwards (one level down). A number or array
                ``b`` is then encoded at the scale ``q_level``, so the result keeps ``a``'s scale
                exactly; an ``int`` is multiplied exactly with no scale and no rescale.

        Raises:
            TypeError: when ``relinearize`` or ``rescale`` is not a bool.
            ValueError: at level 0 when rescaling, for a scale that outgrows the modulus, a
                ciphertext of three parts, a value of other parameters or keys, or a number that
                is not finite or too large for the modulus at this scale.
        """
        for flag, value in (("relinearize", relinearize), ("rescale", rescale)):
            if not isinstance(value, bool | np.bool_):
                raise TypeError(f"{flag} must be True or False, got {value!r}")
        a = self._own(a)
        if isinstance(b, Ciphertext):
            b = self._own(b)
        elif isinstance(b, Plaintext):
            b = self._plain(b, "multiply")
        if rescale and isinstance(b, Ciphertext | Plaintext) and min(a.level, b.level) == 0:
            raise ValueError(level0("multiply and rescale"))
        if isinstance(b, Ciphertext):
            if a.size != 2 or b.size != 2:
                raise ValueError("multiply needs two-part ciphertexts: relinearize first")
            level = min(a.level, b.level)
            a, b = a.at_level(level), b.at_level(level)
            (a0, a1), (b0, b1) = a.parts, b.parts
            parts: tuple[Poly, ...] = (a0 * b0, a0 * b1 + a1 * b0, a1 * b1)
            out = Ciphertext(parts, a.scale * b.scale, level, a.real and b.real, self._context())
            same = a is b
            out = out._evolve(
                shadow=apply(np.multiply, a.shadow, b.shadow),
                noise=_both(a, b, lambda x, y: noise.multiply(x, y, same)),
            )
            if relinearize:
                out = self.relinearize(out)
        elif is_int(b):
            Q = self.params.ring(a.level).Q
            if 2 * abs(int(b)) >= Q:
                raise ValueError(
                    f"cannot multiply a ciphertext by the int {_fmt.describe(b)}: it is not below "
                    f"Q/2 at level {a.level} (Q={bits(Q)}), so it would wrap around the modulus"
                )
            shadow = apply(lambda v, m=int(b): v * m, a.shadow)
            k = int(b)
            est = _one(a, lambda x: x.times(k))
            return dataclasses.replace(
                a, parts=tuple(p * int(b) for p in a.parts), shadow=shadow, noise=est
            )
        elif isinstance(b, Plaintext):
            level = min(a.level, b.level)
            a, b = a.at_level(level), b.at_level(level)
            parts = tuple(p * b.poly for p in a.parts)
            out = Ciphertext(parts, a.scale * b.scale, level, a.real and b.real, self._context())
            out = out._evolve(
                shadow=apply(np.multiply, a.shadow, self._pt_shadow(a, b)),
                noise=_one(a, lambda x: noise.multiply(x, self._pt_noise(b))),
            )
        elif is_number(b) or is_values(b):
            if rescale and a.level == 0:
                raise ValueError(level0("multiply by a number"))
            factor = float(self.params.q_moduli[a.level]) if rescale else self.params.scale
            if is_number(b):
                phrase = f"multiply a ciphertext by {b!r}"
                c = finite(b, phrase)
                ring = self.params.ring(a.level)
                pc = constant_poly(c, factor, ring, self.device, phrase, a.level)
                parts = tuple(p * pc for p in a.parts)
                real = a.real and c.imag == 0
                out = Ciphertext(parts, a.scale * factor, a.level, real, self._context())
                out = out._evolve(
                    shadow=apply(lambda v, d=c * factor: v * d, a.shadow),
                    noise=_one(a, lambda x: noise.times(x, abs(c) * factor, True)),
                )
            else:
                return self.multiply(a, self.encode(b, a.level, factor), relinearize, rescale)
        else:
            return cast(Ciphertext, NotImplemented)  # the caller tries the other operand
        if rescale:
            out = self.rescale(out)
        return out

    @in_region("rescale")
    def rescale(self, ct: Ciphertext) -> Ciphertext:
        """Divide by ``q_level`` (rounding): one level down, the scale divided by the modulus.

        Raises:
            ValueError: at level 0.
        """
        ct = self._own(ct)
        if ct.level == 0:
            raise ValueError(level0("rescale"))
        q = self.params.q_moduli[ct.level]
        parts = tuple(p.rescale(q).ntt() for p in ct.parts)
        shadow = apply(lambda v: v / q, ct.shadow)
        est = _one(ct, lambda x: noise.rescale(self.params, x, q))
        return ct._evolve(
            parts=parts, level=ct.level - 1, scale=ct.scale / q, shadow=shadow, noise=est
        )

    @in_region("rotate")
    def rotate(self, ct: Ciphertext, steps: int) -> Ciphertext:
        """Slots moved left by ``steps`` (slot ``j + steps`` to slot ``j``).

        Raises:
            TypeError: when ``steps`` is not an int.
        """
        ct = self._own(ct)
        if not is_int(steps):
            raise TypeError(f"rotation steps must be an int, got {_fmt.describe(steps)}")
        steps = int(steps) % self.params.slots
        if steps == 0:
            return ct
        g = galois_for_rotation(self.params.n, steps)
        return self._galois_apply(ct, g, f"rotate({steps})", lambda v: np.roll(v, -steps), steps)

    @in_region("conjugate")
    def conjugate(self, ct: Ciphertext) -> Ciphertext:
        """Every slot complex-conjugated."""
        ct = self._own(ct)
        return self._galois_apply(ct, 2 * self.params.n - 1, "conjugate", np.conj)

    def _galois_apply(
        self,
        ct: Ciphertext,
        g: int,
        what: str,
        on_slots: Callable[[np.ndarray], np.ndarray],
        steps: int = 0,
    ) -> Ciphertext:
        if ct.size != 2:
            raise ValueError(f"{what} needs a two-part ciphertext: relinearize first")
        parts = self._automorphism(ct.parts, g, ct.level)
        slots = self.params.slots
        est = _one(
            ct,
            lambda x: noise.key_switch(self.params, x.rotated(steps, slots), ct.level),
        )
        return ct._evolve(parts=parts, shadow=apply(on_slots, ct.shadow), noise=est)

    def _pt_noise(self, pt: Plaintext) -> noise.Noise:
        """A plaintext operand's predicted error (its rounding) and bound."""
        return noise.plain(self.params, pt)

    def _pt_shadow(self, ct: Ciphertext, pt: Plaintext) -> Shadow | None:
        """A plaintext operand's shadow (``plain_shadow``), when ``ct`` has one."""
        if ct.shadow is None:
            return None
        return plain_shadow(self._context(), pt)


def _one(a: Ciphertext, step: Callable[[noise.Noise], noise.Noise]) -> noise.Noise | None:
    """``step`` of ``a``'s predicted error, or ``None`` when ``a`` has none."""
    return None if a.noise is None else step(a.noise)


def _both(
    a: Ciphertext, b: Ciphertext, step: Callable[[noise.Noise, noise.Noise], noise.Noise]
) -> noise.Noise | None:
    """``step`` of both operands' predicted errors, or ``None`` when either has none."""
    return None if a.noise is None or b.noise is None else step(a.noise, b.noise)
