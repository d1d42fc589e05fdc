"""A HEIR program on Ren: the module's functions interpreted, its scheme ops on Ren's CKKS.

Work in progress (CKKS only): ``Program(module)`` reads the chain from ``ckks.schemeParam``,
makes a ``ckks.Context`` with those moduli (``ckks.Params(q_moduli=..., p_moduli=...)``), and
``program(*args)`` runs the client's encryption functions, the entry function and the client's
decryption functions, each op in the region of its name and location.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

import numpy as np

from ren.interop.heir.cleartext import Interpreter
from ren.interop.heir.ir import MlirError, Module, Op, Typed, tensor_type
from ren.schemes import ckks

__all__ = ["Program"]


@dataclasses.dataclass(frozen=True)
class Plain:
    """``lwe.rlwe_encode``'s result: the values, encoded when used (at the scale it needs)."""

    values: np.ndarray
    level: int
    scale_bits: int


@dataclasses.dataclass(frozen=True)
class Decrypted:
    """``lwe.rlwe_decrypt``'s result: the slots, decoded by ``lwe.rlwe_decode``."""

    slots: np.ndarray


def scheme_params(module: Module, *, insecure: bool = False) -> ckks.Params:
    """The CKKS parameters of ``ckks.schemeParam``: its ring, moduli and scale."""
    attr = module.op.attr("ckks.schemeParam")
    if attr is None:
        raise MlirError("the module has no ckks.schemeParam: lower it with --mlir-to-ckks")
    text = getattr(attr, "text", str(attr))
    fields = {k: v for k, v in re.findall(r"(\w+) = (\[[^\]]*\]|-?\d+)", text)}
    try:
        log_n = int(fields["logN"])
        q = [int(x) for x in fields["Q"].strip("[]").split(",")]
        p = [int(x) for x in fields["P"].strip("[]").split(",")]
        scale = int(fields["logDefaultScale"])
    except (KeyError, ValueError) as e:
        raise MlirError(f"ckks.schemeParam lacks or garbles a field ({e}): {text[:120]}") from None
    if not 2 <= log_n <= 17:
        raise MlirError(f"ckks.schemeParam: logN={log_n} outside 2 to 17")
    return ckks.Params(
        n=2**log_n, q_moduli=tuple(q), p_moduli=tuple(p), scale_bits=scale, insecure=insecure
    )


class Program(Interpreter):
    """A lowered HEIR CKKS module, run on Ren: ``program(*args)`` gives the function's result.

    Args:
        module: the module (``reader.parse`` of ``heir-opt --mlir-to-ckks``'s output).
        insecure: accept a chain beyond the HE standard's bound (as ``ckks.Params``).
        seed: the context's seed (keys and encryption randomness); ``None``: fresh.
        device: Ren's device for the ciphertexts.

    Raises:
        MlirError: a module without ``ckks.schemeParam`` or an entry function.
        ValueError: a chain ``ckks.Params`` refuses (its message).
    """

    def __init__(self, module: Module, *, insecure: bool = False, seed: int | None = None,
                 device: str = "cpu") -> None:  # fmt: skip
        self.module = module
        self.params = scheme_params(module, insecure=insecure)
        self.context = ckks.Context(self.params, seed=seed, device=device)
        self.context.keygen()
        super().__init__(module, _SCHEME)
        self.entry, self.encrypts, self.decrypts = self._roles()

    def _roles(self) -> tuple[str, dict[int, str], dict[int, str]]:
        entry: str | None = None
        enc: dict[int, str] = {}
        dec: dict[int, str] = {}
        self.zeros: dict[int, str] = {}  # client.encrypt_zero: ciphertexts of 0 the entry takes
        for name, f in self.functions.items():
            info = f.attr("heir.interface") or {}
            roles = info.get("roles", [])
            given = info.get("index", 0)
            index = int(given.value if isinstance(given, Typed) else given)
            if "entry" in roles:
                entry = name
                self.arity = len(info.get("input_types", []))
            for role, table in (("client.encrypt", enc), ("client.decrypt", dec),
                                ("client.encrypt_zero", self.zeros)):  # fmt: skip
                if role in roles:
                    table[index] = name
        if entry is None:
            raise MlirError("the module has no function of role 'entry' (heir.interface)")
        return entry, enc, dec

    def __call__(self, *args: Any) -> Any:
        """The function on ``args`` (arrays shaped like its arguments), encrypted and decrypted.

        The client's encryption functions pack and encrypt each secret argument (the others
        go as they are), the entry function runs (with the encryptions of zero it asks for),
        and the decryption functions give each secret result, shaped like the function's.

        Raises:
            TypeError: a count of arguments other than the function's.
        """
        if len(args) != self.arity:
            raise TypeError(f"the program takes {self.arity} arguments, got {len(args)}")
        inputs = [
            self.call(self.encrypts[i], [np.asarray(a), "pk"])[0] if i in self.encrypts else a
            for i, a in enumerate(args)
        ]
        inputs += [self.call(self.zeros[j], ["pk"])[0] for j in sorted(self.zeros)]
        outs = self.call(self.entry, inputs)
        results = [
            self.call(self.decrypts[i], [o, "sk"])[0] if i in self.decrypts else o
            for i, o in enumerate(outs)
        ]
        return results[0] if len(results) == 1 else tuple(results)

    # -- the scheme's values

    def slots_of(self, values: np.ndarray) -> np.ndarray:
        """``values`` (a packed tensor) tiled over every slot: rotations stay within a tile."""
        flat = np.asarray(values, dtype=np.float64).ravel()
        slots = self.params.slots
        if flat.size > slots or slots % max(flat.size, 1):
            raise MlirError(f"{flat.size} packed values do not tile {slots} slots")
        return np.tile(flat, slots // flat.size)

    def encode(self, pt: Plain, level: int, scale: float) -> ckks.Plaintext:
        """``pt``'s values, tiled over the slots, encoded at ``level`` and ``scale``."""
        return self.context.encode(self.slots_of(pt.values), level, scale)


def _int(op: Op, key: str) -> int:
    v = op.attr(key)
    return int(v.value if isinstance(v, Typed) else v)


def _encode(p: Program, op: Op, v: list[Any]) -> list[Any]:
    """``lwe.rlwe_encode``: its ``scale``, else its encoding's ``scaling_factor`` (log2)."""
    if op.attr("scale") is not None:
        scale = _int(op, "scale")
    else:
        found = re.search(r"scaling_factor = (\d+)", str(getattr(op.attr("encoding"), "text", "")))
        if found is None:
            raise MlirError(f"lwe.rlwe_encode at {op.loc}: neither a scale nor a scaling_factor")
        scale = int(found.group(1))
    return [Plain(np.asarray(v[0]), _int(op, "level"), scale)]


def _with_plain(p: Program, v: list[Any], add: bool, sign: float = 1.0) -> tuple[Any, Any, float]:
    """``(ciphertext, plaintext, sign)`` of a plaintext op, whichever operand is the plaintext."""
    if isinstance(v[0], Plain | ckks.Plaintext):
        ct = v[1]
        return ct, _plain_for(p, ct, v[0], add), sign
    return v[0], _plain_for(p, v[0], v[1], add), 1.0


def _add_plain(p: Program, op: Op, v: list[Any]) -> list[Any]:
    ct, pt, _ = _with_plain(p, v, True)
    return [ct + pt]


def _sub_plain(p: Program, op: Op, v: list[Any]) -> list[Any]:
    ct, pt, sign = _with_plain(p, v, True, -1.0)
    return [ct - pt if sign > 0 else pt - ct]


def _mul_plain(p: Program, op: Op, v: list[Any]) -> list[Any]:
    ct, pt, _ = _with_plain(p, v, False)
    return [ckks.multiply(ct, pt, rescale=False)]


def _encrypt(p: Program, op: Op, v: list[Any]) -> list[Any]:
    pt: Plain = v[0]
    return [p.context.encrypt(p.slots_of(pt.values), pt.level, 2.0**pt.scale_bits)]


def _decrypt(p: Program, op: Op, v: list[Any]) -> list[Any]:
    return [Decrypted(p.context.decrypt(v[0]))]


def _decode(p: Program, op: Op, v: list[Any]) -> list[Any]:
    t = tensor_type(op.result_types[0])
    if t is None:
        raise MlirError(f"lwe.rlwe_decode to a type that is not a tensor: {op.result_types[0]}")
    count = math.prod(t.shape)
    return [np.real(v[0].slots[:count]).reshape(t.shape)]


def _plain_for(p: Program, ct: ckks.Ciphertext, pt: Any, add: bool) -> ckks.Plaintext:
    """A plaintext operand at ``ct``'s level: at ``ct``'s exact scale for a sum."""
    if isinstance(pt, ckks.Plaintext):
        return pt
    return p.encode(pt, ct.level, ct.scale if add else 2.0**pt.scale_bits)


def _same_scale(a: ckks.Ciphertext, b: ckks.Ciphertext) -> ckks.Ciphertext:
    """``b`` read at ``a``'s scale when they differ by the primes' rounding (HEIR's nominal 2^k)."""
    if a.scale != b.scale and abs(a.scale / b.scale - 1) < 2**-20:
        return dataclasses.replace(b, scale=a.scale)
    return b


def _storage_site(op: Op) -> int:
    return _int(op, "site_id")


def _store(p: Program, op: Op, v: list[Any]) -> list[Any]:
    v[1][_storage_site(op)] = v[0]
    return []


_SCHEME = {
    "lwe.rlwe_encode": _encode,
    "lwe.rlwe_encrypt": _encrypt,
    "lwe.rlwe_decrypt": _decrypt,
    "lwe.rlwe_decode": _decode,
    "preprocessing.empty": lambda p, op, v: [{}],
    "preprocessing.store": _store,
    "preprocessing.load": lambda p, op, v: [v[0][_storage_site(op)]],
    "ckks.add": lambda p, op, v: [v[0] + _same_scale(v[0], v[1])],
    "ckks.sub": lambda p, op, v: [v[0] - _same_scale(v[0], v[1])],
    "ckks.negate": lambda p, op, v: [-v[0]],
    "ckks.add_plain": _add_plain,
    "lwe.radd_plain": _add_plain,
    "ckks.sub_plain": _sub_plain,
    "ckks.mul_plain": _mul_plain,
    "ckks.mul": lambda p, op, v: [
        ckks.multiply(v[0], _same_scale(v[0], v[1]), relinearize=False, rescale=False)
    ],
    "ckks.relinearize": lambda p, op, v: [v[0].relinearize()],
    "ckks.rescale": lambda p, op, v: [v[0].rescale()],
    "ckks.rotate": lambda p, op, v: [v[0].rotate(int(v[1]))],
    "ckks.level_reduce": lambda p, op, v: [v[0].at_level(v[0].level - _int(op, "levelToDrop"))],
}
