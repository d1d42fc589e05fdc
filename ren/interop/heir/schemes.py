"""A HEIR program's scheme on Ren: its parameters, and its ops on Ren's ciphertexts.

HEIR writes the chain in a module attribute (``ckks.schemeParam``, or ``bgv.schemeParam`` for
BGV and BFV, with ``scheme.bfv`` marking BFV): the ring's ``logN``, the primes ``Q`` and ``P`` in
order, and the scale (CKKS) or the plaintext modulus (BGV, BFV). ``params`` makes Ren's
``Params`` of exactly those moduli (``q_moduli=``, ``p_moduli=``), with the security check as for
any chain. An engine (``CkksEngine``, ``IntEngine``) gives every scheme op HEIR emits its meaning
on Ren's lazy values, so a whole program is one graph the compiler fuses, plans and can jit; the
cleartext engines of ``ren.interop.heir.clear`` give the same ops on plain slot vectors.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np

from ren.interop.heir.ir import MlirError, Module
from ren.schemes import bfv, bgv, ckks

__all__ = ["CkksEngine", "Decrypted", "IntEngine", "Plain", "engine_for", "params", "scheme_of"]


@dataclasses.dataclass(frozen=True)
class Plain:
    """``lwe.rlwe_encode``'s result: the values, encoded when used (at the level and scale needed).

    ``scale_bits`` is the encoding's scale (CKKS; ``None`` for BGV and BFV).
    """

    values: np.ndarray
    level: int
    scale_bits: int | None = None


@dataclasses.dataclass(frozen=True)
class Decrypted:
    """``lwe.rlwe_decrypt``'s result: every slot, decoded by ``lwe.rlwe_decode``."""

    slots: np.ndarray


def scheme_of(module: Module) -> str:
    """``"ckks"``, ``"bgv"`` or ``"bfv"``: the module's ``scheme.*`` attribute (or its chain's)."""
    for name in ("bfv", "bgv", "ckks"):
        if module.op.attr(f"scheme.{name}") is not None:
            return name
    if module.op.attr("ckks.schemeParam") is not None:
        return "ckks"
    if module.op.attr("bgv.schemeParam") is not None:
        return "bgv"
    raise MlirError(
        "the module names no scheme (scheme.ckks, scheme.bgv or scheme.bfv): lower it with "
        "heir-opt --mlir-to-ckks, --mlir-to-bgv or --mlir-to-bfv"
    )


def _fields(module: Module, key: str) -> dict[str, str]:
    attr = module.op.attr(key)
    if attr is None:
        raise MlirError(f"the module has no {key}: lower it with heir-opt's --mlir-to-* pipeline")
    text = getattr(attr, "text", str(attr))
    return {k: v for k, v in re.findall(r"(\w+) = (\[[^\]]*\]|-?\d+)", text)}


def params(module: Module, *, insecure: bool = False) -> ckks.Params | bgv.Params | bfv.Params:
    """Ren's parameters of the module's chain: its ring, its moduli as given, its scale or ``t``.

    Raises:
        MlirError: no scheme, or a chain attribute that lacks or garbles a field.
        ValueError: a chain Ren's ``Params`` refuses (its message: not prime, not ``1 mod 2n``,
            beyond the HE standard's bound without ``insecure``).
    """
    scheme = scheme_of(module)
    key = "ckks.schemeParam" if scheme == "ckks" else "bgv.schemeParam"
    fields = _fields(module, key)
    try:
        log_n = int(fields["logN"])
        q = tuple(int(x) for x in fields["Q"].strip("[]").split(","))
        p = tuple(int(x) for x in fields["P"].strip("[]").split(","))
        own = int(fields["logDefaultScale" if scheme == "ckks" else "plaintextModulus"])
    except (KeyError, ValueError) as e:
        raise MlirError(f"{key} lacks or garbles a field ({e}): {fields}") from None
    if not 2 <= log_n <= 17:
        raise MlirError(f"{key}: logN={log_n} outside 2 to 17")
    n = 2**log_n
    if scheme == "ckks":
        return ckks.Params(n=n, q_moduli=q, p_moduli=p, scale_bits=own, insecure=insecure)
    kind = bfv if scheme == "bfv" else bgv
    return kind.Params(n=n, q_moduli=q, p_moduli=p, t=own, insecure=insecure)


def tiled(values: Any, width: int, what: str = "packed values") -> np.ndarray:
    """``values`` (a packed tensor) repeated to ``width``: a rotation stays within each copy."""
    flat = np.asarray(values).ravel()
    if flat.size == 0 or flat.size > width or width % flat.size:
        raise MlirError(f"{flat.size} {what} do not tile {width} slots")
    return np.tile(flat, width // flat.size)


def _level_of(type_text: str) -> int | None:
    """The level a type alias names (``!ct_L1``, ``#ring_rns_L0_1_x8192``), if it names one."""
    found = re.search(r"_L(\d+)(?:_|$)", type_text)
    return int(found.group(1)) if found else None


class CkksEngine:
    """HEIR's CKKS ops on Ren's ciphertexts, in ``context``."""

    t: int | None = None

    def __init__(self, context: ckks.Context) -> None:
        self.context = context
        self.slots = context.params.slots

    def encode(self, pt: Plain, level: int, scale: float) -> ckks.Plaintext:
        """``pt``'s values, tiled over the slots, encoded at ``level`` and ``scale``."""
        return self.context.encode(tiled(pt.values, self.slots).astype(np.float64), level, scale)

    def encrypt(self, pt: Plain) -> ckks.Ciphertext:
        """``lwe.rlwe_encrypt``: ``pt``'s values, tiled over the slots, encrypted at its level."""
        assert pt.scale_bits is not None
        values = tiled(pt.values, self.slots).astype(np.float64)
        return self.context.encrypt(values, pt.level, 2.0**pt.scale_bits)

    def decrypt(self, ct: ckks.Ciphertext) -> Decrypted:
        """``lwe.rlwe_decrypt``: every slot of ``ct``."""
        return Decrypted(np.real(self.context.decrypt(ct)))

    def _plain(self, ct: ckks.Ciphertext, pt: Any, add: bool) -> ckks.Plaintext:
        """A plaintext operand at ``ct``'s level: at ``ct``'s exact scale for a sum."""
        if isinstance(pt, ckks.Plaintext):
            return pt
        return self.encode(pt, ct.level, ct.scale if add else 2.0**pt.scale_bits)

    @staticmethod
    def _same(a: ckks.Ciphertext, b: ckks.Ciphertext) -> ckks.Ciphertext:
        """``b`` read at ``a``'s scale when they differ by the primes' rounding (HEIR's 2^k)."""
        if a.scale != b.scale and abs(a.scale / b.scale - 1) < 2**-20:
            return dataclasses.replace(b, scale=a.scale)
        return b

    def add(self, a: Any, b: Any) -> Any:
        """``a + b`` (``*.add``)."""
        return a + self._same(a, b)

    def sub(self, a: Any, b: Any) -> Any:
        """``a - b`` (``*.sub``)."""
        return a - self._same(a, b)

    def negate(self, a: Any) -> Any:
        """``-a`` (``*.negate``)."""
        return -a

    def mul(self, a: Any, b: Any) -> Any:
        """``a * b``, left in three parts (``*.mul``: HEIR relinearizes with its own op)."""
        a, b = (x.relinearize() if len(x.parts) > 2 else x for x in (a, b))  # see IntEngine.mul
        return ckks.multiply(a, self._same(a, b), relinearize=False, rescale=False)

    def relinearize(self, a: Any) -> Any:
        """``a`` in two parts (``*.relinearize``)."""
        return a.relinearize()

    def rescale(self, a: Any) -> Any:
        """``ckks.rescale``: ``a`` divided by its last prime, a level down."""
        return a.rescale()

    def level_reduce(self, a: Any, drop: int) -> Any:
        """``*.level_reduce``: ``a`` with its last ``drop`` moduli dropped."""
        return a.at_level(a.level - drop)

    def rotate(self, a: Any, steps: int) -> Any:
        """``ckks.rotate`` / ``bgv.rotate_cols``: the slots moved ``steps`` to the left."""
        return a.rotate(steps)

    def add_plain(self, ct: Any, pt: Any) -> Any:
        """``ct + pt`` (``*.add_plain``, ``lwe.radd_plain``)."""
        return ct + self._plain(ct, pt, True)

    def sub_plain(self, ct: Any, pt: Any, reverse: bool) -> Any:
        """``ct - pt``, or ``pt - ct`` when ``reverse`` (``*.sub_plain``)."""
        plain = self._plain(ct, pt, True)
        return plain - ct if reverse else ct - plain

    def mul_plain(self, ct: Any, pt: Any) -> Any:
        """``ct * pt`` (``*.mul_plain``), not rescaled."""
        return ckks.multiply(ct, self._plain(ct, pt, False), rescale=False)

    def switch(self, a: Any, to: str) -> Any:
        """``bgv.modulus_switch``: ``a`` at the level ``to`` (the target ring's text) names."""
        raise MlirError("a modulus switch in a CKKS program: CKKS rescales (ckks.rescale)")

    def swap_rows(self, a: Any) -> Any:
        """``bgv.rotate_rows``: the two rows of slots swapped."""
        raise MlirError("rotate_rows in a CKKS program: CKKS rotates its slots (ckks.rotate)")


class IntEngine:
    """HEIR's BGV and BFV ops on Ren's ciphertexts, in ``context`` (a ``bgv`` or ``bfv`` one).

    A packed tensor is repeated along both rows of ``n/2`` slots, so HEIR's rotation by ``k``
    (``bgv.rotate_cols``: each row moved left, SEAL's ``rotate_rows``) stays within every copy.
    """

    def __init__(self, context: bgv.Context | bfv.Context) -> None:
        self.context = context
        self.width = context.params.n // 2
        self.t: int | None = context.params.t

    def _values(self, pt: Plain) -> np.ndarray:
        row = tiled(np.asarray(pt.values, dtype=np.int64), self.width)
        return np.concatenate([row, row])

    def encrypt(self, pt: Plain) -> Any:
        """``lwe.rlwe_encrypt``: ``pt``'s values, tiled over the slots, encrypted at its level."""
        ct = self.context.encrypt(self._values(pt))
        return self.switch_to(ct, pt.level)

    def decrypt(self, ct: Any) -> Decrypted:
        """``lwe.rlwe_decrypt``: every slot of ``ct``."""
        return Decrypted(self.context.decrypt(ct, signed=True))

    def _plain(self, pt: Any) -> Any:
        return pt if not isinstance(pt, Plain) else self.context.encode(self._values(pt))

    def switch_to(self, ct: Any, level: int) -> Any:
        """``ct`` at ``level`` (as is at or below it; ``-1``: as is)."""
        if level < 0 or level >= ct.level:
            return ct
        if isinstance(self.context, bgv.Context):
            return self.context.mod_switch_to(ct, level)
        raise MlirError(f"a BFV ciphertext asked for at level {level}: BFV keeps every modulus")

    def add(self, a: Any, b: Any) -> Any:
        """``a + b`` (``*.add``)."""
        return self.context.add(a, b)

    def sub(self, a: Any, b: Any) -> Any:
        """``a - b`` (``*.sub``)."""
        return self.context.sub(a, b)

    def negate(self, a: Any) -> Any:
        """``-a`` (``*.negate``)."""
        return self.context.negate(a)

    def mul(self, a: Any, b: Any) -> Any:
        """``a * b``, left in three parts (``*.mul``: HEIR relinearizes with its own op)."""
        # HEIR may multiply products it has not relinearized (degree 4, relinearized from five
        # parts later); Ren multiplies two-part ciphertexts: the same value, relinearized first
        a, b = (self.context.relinearize(x) if x.size > 2 else x for x in (a, b))
        return self.context.multiply(a, b, relinearize=False)

    def relinearize(self, a: Any) -> Any:
        """``a`` in two parts (``*.relinearize``)."""
        return self.context.relinearize(a)

    def rescale(self, a: Any) -> Any:
        """``ckks.rescale``: ``a`` divided by its last prime, a level down."""
        raise MlirError("ckks.rescale in a BGV or BFV program")

    def level_reduce(self, a: Any, drop: int) -> Any:
        """``*.level_reduce``: ``a`` with its last ``drop`` moduli dropped."""
        return self.switch_to(a, a.level - drop)

    def switch(self, a: Any, to: str) -> Any:
        """``bgv.modulus_switch`` to the level its ``to_ring`` names (one down if it names none)."""
        level = _level_of(to)
        return self.switch_to(a, a.level - 1 if level is None else level)

    def rotate(self, a: Any, steps: int) -> Any:
        """``ckks.rotate`` / ``bgv.rotate_cols``: the slots moved ``steps`` to the left."""
        return self.context.rotate_rows(a, steps)

    def swap_rows(self, a: Any) -> Any:
        """``bgv.rotate_rows``: the two rows of slots swapped."""
        return self.context.rotate_columns(a)

    def add_plain(self, ct: Any, pt: Any) -> Any:
        """``ct + pt`` (``*.add_plain``, ``lwe.radd_plain``)."""
        return self.context.add(ct, self._plain(pt))

    def sub_plain(self, ct: Any, pt: Any, reverse: bool) -> Any:
        """``ct - pt``, or ``pt - ct`` when ``reverse`` (``*.sub_plain``)."""
        out = self.context.sub(ct, self._plain(pt))
        return self.context.negate(out) if reverse else out

    def mul_plain(self, ct: Any, pt: Any) -> Any:
        """``ct * pt`` (``*.mul_plain``), not rescaled."""
        return self.context.multiply(ct, self._plain(pt))


def engine_for(context: Any) -> CkksEngine | IntEngine:
    """The engine of ``context``'s scheme."""
    if isinstance(context, ckks.Context):
        return CkksEngine(context)
    return IntEngine(context)


def decoded(slots: np.ndarray, shape: tuple[int, ...], element: str, t: int | None) -> np.ndarray:
    """``lwe.rlwe_decode``: the first slots as a tensor of ``shape`` and ``element``'s type.

    An integer type wraps as the type does (``i16``: two's complement of 16 bits), from the value
    centred mod ``t``; a float type takes the real part.
    """
    count = int(np.prod(shape))
    if slots.size < count:
        raise MlirError(f"lwe.rlwe_decode of {count} values from {slots.size} slots")
    head = slots[:count]
    bits = re.fullmatch(r"i(\d+)", element)
    if bits is None:
        return np.real(head).astype(np.float64).reshape(shape)
    width = int(bits.group(1))
    if t is None:  # CKKS: the nearest integer (a truncation would take 69.99999 to 69)
        head = np.rint(np.real(head))
    values = np.asarray(head, dtype=np.int64)
    if t is not None:
        values = np.where(values > t // 2, values - t, values)
    if width < 64:
        half = 1 << (width - 1)
        values = (values + half) % (1 << width) - half
    return values.reshape(shape)
