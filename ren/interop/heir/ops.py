"""The scheme ops of a HEIR program, and the client's ``lwe`` ops: each as an engine's method.

``SCHEME_OPS`` maps an op's name to a function ``(run, op, operand values) -> result values``;
``run.engine`` (``ren.interop.heir.schemes``' for Ren's ciphertexts, ``ren.interop.heir.clear``'s
for slot vectors) gives the op its meaning, so one table serves the encrypted run and the
cleartext one. CKKS and BGV name their ops alike (``ckks.add``, ``bgv.add``); BFV uses BGV's.
``SHOWN`` are the ops the report shows as regions of their own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ren.interop.heir.ir import MlirError, Op, Typed, tensor_type
from ren.interop.heir.schemes import Decrypted, Plain, decoded
from ren.schemes import bfv, bgv, ckks

__all__ = ["SCHEME_OPS", "SHOWN"]


def _int(op: Op, key: str) -> int:
    v = op.attr(key)
    return int(v.value if isinstance(v, Typed) else v)


def _with_plain(v: list[Any]) -> tuple[Any, Any, bool]:
    """``(ciphertext, plaintext, swapped)`` of a plaintext op, whichever operand is the plain."""
    if isinstance(v[0], Plain | ckks.Plaintext | bgv.Plaintext | bfv.Plaintext):
        return v[1], v[0], True
    return v[0], v[1], False


def _encode(run: Any, op: Op, v: list[Any]) -> list[Any]:
    """``lwe.rlwe_encode``: its ``scale``, else its encoding's ``scaling_factor`` (CKKS, log2)."""
    if run.scheme != "ckks":  # BFV's encodings name no level: its ciphertexts keep every modulus
        level = _int(op, "level") if op.attr("level") is not None else -1
        return [Plain(np.asarray(v[0]), level)]
    if op.attr("scale") is not None:
        scale = _int(op, "scale")
    else:
        found = re.search(r"scaling_factor = (\d+)", str(getattr(op.attr("encoding"), "text", "")))
        if found is None:
            raise MlirError(f"lwe.rlwe_encode at {op.loc}: neither a scale nor a scaling_factor")
        scale = int(found.group(1))
    return [Plain(np.asarray(v[0]), _int(op, "level"), scale)]


def _decode(run: Any, op: Op, v: list[Any]) -> list[Any]:
    t = tensor_type(op.result_types[0])
    if t is None:
        raise MlirError(f"lwe.rlwe_decode to a type that is not a tensor: {op.result_types[0]}")
    dec: Decrypted = v[0]
    return [decoded(np.asarray(dec.slots), t.shape, t.element, run.engine.t)]


def _site(op: Op, indices: list[Any]) -> tuple[int, ...]:
    """A stored plaintext's key: its ``site_id`` and the loop indices it was stored at."""
    return (_int(op, "site_id"), *(int(i) for i in indices))


def _store(run: Any, op: Op, v: list[Any]) -> list[Any]:
    v[1][_site(op, v[2:])] = v[0]
    return []


def _load(run: Any, op: Op, v: list[Any]) -> list[Any]:
    key = _site(op, v[1:])
    if key not in v[0]:
        raise MlirError(f"preprocessing.load of {key} at {op.loc}, which nothing stored")
    return [v[0][key]]


def _sub_plain(run: Any, op: Op, v: list[Any]) -> list[Any]:
    ct, pt, swapped = _with_plain(v)
    return [run.engine.sub_plain(ct, pt, swapped)]


def _op(method: str, *, attr: str | None = None) -> Callable[[Any, Op, list[Any]], list[Any]]:
    """An op that is the engine's ``method`` on its operands (and the attribute ``attr``)."""

    def run_op(run: Any, op: Op, v: list[Any]) -> list[Any]:
        extra = [] if attr is None else [_int(op, attr)]
        return [getattr(run.engine, method)(*v, *extra)]

    return run_op


def _plain_op(method: str) -> Callable[[Any, Op, list[Any]], list[Any]]:
    def run_op(run: Any, op: Op, v: list[Any]) -> list[Any]:
        ct, pt, _ = _with_plain(v)
        return [getattr(run.engine, method)(ct, pt)]

    return run_op


def _rotate(run: Any, op: Op, v: list[Any]) -> list[Any]:
    steps = v[1] if len(v) > 1 else _int(op, "offset")
    return [run.engine.rotate(v[0], int(steps))]


def _switch(run: Any, op: Op, v: list[Any]) -> list[Any]:
    to = op.attr("to_ring")
    return [run.engine.switch(v[0], str(getattr(to, "text", to)))]


#: The scheme ops HEIR emits for CKKS, BGV and BFV, and the client's ``lwe`` ops, by name.
SCHEME_OPS: dict[str, Callable[[Any, Op, list[Any]], list[Any]]] = {
    "lwe.rlwe_encode": _encode,
    "lwe.rlwe_encrypt": lambda run, op, v: [run.engine.encrypt(v[0])],
    "lwe.rlwe_decrypt": lambda run, op, v: [run.engine.decrypt(v[0])],
    "lwe.rlwe_decode": _decode,
    "lwe.radd_plain": _plain_op("add_plain"),
    "preprocessing.empty": lambda run, op, v: [{}],
    "preprocessing.store": _store,
    "preprocessing.load": _load,
    **{
        f"{s}.{name}": fn
        for s in ("ckks", "bgv")
        for name, fn in {
            "add": _op("add"),
            "sub": _op("sub"),
            "negate": _op("negate"),
            "mul": _op("mul"),
            "relinearize": _op("relinearize"),
            "add_plain": _plain_op("add_plain"),
            "sub_plain": _sub_plain,
            "mul_plain": _plain_op("mul_plain"),
            "level_reduce": _op("level_reduce", attr="levelToDrop"),
        }.items()
    },
    "ckks.rescale": _op("rescale"),
    "ckks.rotate": _rotate,
    "bgv.rotate_cols": _rotate,
    "bgv.rotate_rows": _op("swap_rows"),
    "bgv.modulus_switch": _switch,
}

#: The ops that run in a region of their own (the scheme's, not the client's bookkeeping).
SHOWN = {name for name in SCHEME_OPS if name.startswith(("ckks.", "bgv."))} | {
    "lwe.rlwe_encrypt",
    "lwe.radd_plain",
}
