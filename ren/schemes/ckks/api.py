"""The module-level CKKS API on the current context, and reading values back from bytes."""

from __future__ import annotations

import numpy as np

from ren.schemes.ckks import noise
from ren.schemes.ckks.active import current
from ren.schemes.ckks.ciphertext import Ciphertext
from ren.schemes.ckks.context import Context
from ren.schemes.ckks.keys import EvaluationKeys
from ren.schemes.ckks.params import Params, read_value
from ren.schemes.ckks.types import Plaintext

# ---------------------------------------------------------------------------------------------
# the module-level API (the current context)


def encode(values: object, level: int | None = None, scale: float | None = None) -> Plaintext:
    """``current().encode(values, level, scale)``."""
    return current().encode(values, level, scale)


def decode(pt: Plaintext) -> np.ndarray:
    """The slots of ``pt`` (in its own context).

    Raises:
        TypeError: for anything but a ``Plaintext``.
    """
    if not isinstance(pt, Plaintext):
        raise TypeError(f"decode takes a Plaintext, got {type(pt).__name__}")
    return pt._ctx().decode(pt)


def encrypt(values: object, level: int | None = None, scale: float | None = None) -> Ciphertext:
    """``current().encrypt(values, level, scale)``: encrypt a plaintext or values."""
    return current().encrypt(values, level, scale)


def decrypt(ct: Ciphertext, *, real: bool = False) -> np.ndarray:
    """Decrypt and decode ``ct`` (in its own context): ``Context.decrypt``.

    The ``n/2`` slots as complex128, or with ``real=True`` their real parts as float64. The
    ciphertext's parts keep the buffers the decryption computed them in.

    Raises:
        TypeError: for anything but a ``Ciphertext``, or a ``real`` that is not a bool.
    """
    if not isinstance(ct, Ciphertext):
        raise TypeError(f"decrypt takes a Ciphertext, got {type(ct).__name__}")
    return ct._ctx().decrypt(ct, real=real)


def multiply(
    a: Ciphertext, b: object, relinearize: bool = True, rescale: bool = True
) -> Ciphertext:
    """``a * b`` with explicit control; see ``Context.multiply``."""
    if not isinstance(a, Ciphertext):
        raise TypeError(f"multiply takes a Ciphertext first, got {type(a).__name__}")
    out = a._ctx().multiply(a, b, relinearize, rescale)
    if out is NotImplemented:
        raise TypeError(f"cannot multiply a ciphertext by a {type(b).__name__}")
    return out


def predicted_precision(ct: Ciphertext) -> float:
    """The bits of precision ``ct``'s decrypted slots are predicted to have, without running.

    Absolute, as ``precision_bits(decrypted, exact)`` measures it: ``-log2`` of the largest
    slot error against the exact values (the plaintext arithmetic of the values encoded), over
    all ``n/2`` slots (their real parts for a real message). Every operation that made ``ct``
    carried the estimate beside the lazy graph (``ren.schemes.ckks.noise``): nothing is
    computed and no key is read, so a context without the secret key predicts as well.

    What it assumes: the errors are average-case (independent, of the variances the CKKS noise
    analyses give for each step, the guide on precision writes them out), and the figure is
    the median of the largest slot error; the messages' sizes are bounded by the values
    encoded (their largest ``|value|``; 1 for a plaintext or ciphertext whose values are not
    known), so for inputs of magnitude at most 1 it is the figure at magnitude 1, and
    products of smaller values do better than predicted. A circuit's approximation error (a
    polynomial's distance to its function) is not noise and is not included.

    Raises:
        TypeError: for anything but a ``Ciphertext``.
        ValueError: for a ciphertext that carries no estimate: built by hand, read from bytes,
            unpickled, or returned by a ``ren.jit`` function or a saved plan (a replay computes
            no estimate, and returns the same object whatever its inputs); or for a value inside
            a circuit whose estimate leaves out the circuit's input error (see the message).
    """
    if not isinstance(ct, Ciphertext):
        raise TypeError(f"predicted_precision takes a Ciphertext, got {type(ct).__name__}")
    if ct.noise is None:
        raise ValueError(
            "this ciphertext carries no predicted error: only the evaluator's operations "
            "compute one (a ciphertext built by hand, read from bytes, unpickled or returned by "
            "a ren.jit function or a saved plan has none); predict on the values as the program "
            "makes them, outside the jitted function"
        )
    if ct.noise.relative:
        raise ValueError(
            "this ciphertext is a value inside a circuit (a polynomial's or EvalMod's) whose "
            "error the noise model follows apart from the circuit's input, adding the input's "
            "error back at the circuit's output: predict on the circuit's output"
        )
    params = ct._params()
    return noise.precision_bits(ct.noise, ct.scale, params.slots, ct.real, ct.ring.Q)


# ---------------------------------------------------------------------------------------------
# reading values back (the format itself is ren.schemes.rlwe.bytes)


def _plaintext_from_pickle(blob: bytes, device: str) -> Plaintext:
    params, h, polys = read_value(blob, "plaintext", None, device)
    level, real = h.raw("level"), h.raw("real")
    return Plaintext(polys[0], h.hex_float("scale"), level, real, params=params)


def _ciphertext_from_pickle(blob: bytes, device: str) -> Ciphertext:
    params, h, polys = read_value(blob, "ciphertext", None, device)
    fp = h.fingerprint("key_fingerprint")
    level, real = h.raw("level"), h.raw("real")
    return Ciphertext(
        tuple(polys), h.hex_float("scale"), level, real, params=params, key_fingerprint=fp
    )


def _evaluation_keys_from_pickle(blob: bytes, device: str) -> EvaluationKeys:
    return EvaluationKeys.from_bytes(blob, device, insecure=True)


def _context_from_pickle(params: Params, device: str, keys: bytes | None) -> Context:
    evk = None if keys is None else EvaluationKeys.from_bytes(keys, device, insecure=True)
    return Context(params, device=device, keys=evk)
