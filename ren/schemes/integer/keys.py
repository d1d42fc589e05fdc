"""What a BFV or BGV context hands out and takes back: evaluation keys and the secret key.

``EvaluationKeys`` are CKKS's (``ren.schemes.rlwe.keyset``) for the integer schemes' parameters,
written under the kinds ``bfv-evaluation-keys`` and ``bgv-evaluation-keys``; their pickles and a
context's (one holding evaluation keys, or none, pickles as its parameters, device and keys) are
read back by the functions here. A context gives and takes keys as every RLWE scheme's does
(``ren.schemes.rlwe.context.RlweContext``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ren.schemes.integer import bytes as _bytes
from ren.schemes.integer.params import IntParams, scheme_module
from ren.schemes.rlwe import keyset

if TYPE_CHECKING:
    from ren.schemes.integer.context import IntContext

__all__ = ["EvaluationKeys"]


class EvaluationKeys(keyset.EvaluationKeys):
    """The public keys a BFV or BGV server needs (``bfv.EvaluationKeys``, ``bgv.EvaluationKeys``).

    The public key, the relinearization key and the Galois keys (row rotations, the column swap)
    made so far. ``Context(params, keys=...)`` evaluates with them (no secret key: it cannot
    decrypt, measure a noise budget or make new rotation keys). They pickle as their bytes.
    ``fingerprint``, ``to_bytes`` and ``from_bytes(blob, device=None, *, insecure=False)`` are
    those every scheme's keys share (``ren.schemes.rlwe.keyset.EvaluationKeys``); the blob's kind
    names the scheme, which its parameters are read as.

    Args:
        params: the ``bfv.Params`` or ``bgv.Params``.
        public: the public key ``(b, a)``.
        relin: the relinearization key.
        galois: the rotation keys by Galois element.
    """

    __slots__ = ()

    _params_type = IntParams
    _params_name = "bfv.Params or bgv.Params"

    params: IntParams

    @classmethod
    def _kind(cls, params: Any) -> str:
        return _bytes.kind(params.scheme, "evaluation-keys")

    @classmethod
    def _reading(cls, blob: bytes) -> tuple[str, str, Any]:
        scheme = _bytes.scheme_of(blob, "evaluation-keys")
        return _bytes.kind(scheme, "evaluation-keys"), scheme.upper(), scheme_module(scheme).Params

    def __reduce__(self) -> tuple[Callable[[bytes, str], EvaluationKeys], tuple[bytes, str]]:
        return (_evaluation_keys_from_pickle, (self.to_bytes(), self.public[0].device))


def _evaluation_keys_from_pickle(blob: bytes, device: str) -> EvaluationKeys:
    return EvaluationKeys.from_bytes(blob, device, insecure=True)


def _context_from_pickle(params: IntParams, device: str, keys: bytes | None) -> IntContext:
    evk = None if keys is None else EvaluationKeys.from_bytes(keys, device, insecure=True)
    context: IntContext = scheme_module(params.scheme).Context(params, device=device, keys=evk)
    return context
