"""What a BFV or BGV context hands out and takes back: evaluation keys and the secret key.

``EvaluationKeys`` are CKKS's (``ren.schemes.rlwe.keyset``) for the integer schemes' parameters,
written under the kinds ``bfv-evaluation-keys`` and ``bgv-evaluation-keys``. ``KeyExchange`` is
the part of ``IntContext`` that gives and takes keys: ``keys=`` and ``secret_key=`` at
construction, ``evaluation_keys()``, ``export_secret_key()``, the key-fingerprint check every
value goes through, and the rule that a context holding the secret key is never pickled or
copied (one holding evaluation keys, or none, pickles as its parameters, device and keys).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ren.poly import is_int
from ren.ring import galois_for_rotation
from ren.schemes.integer import bytes as _bytes
from ren.schemes.integer.params import IntParams, scheme_module
from ren.schemes.rlwe import bytes as _fmt
from ren.schemes.rlwe import keyset
from ren.schemes.rlwe.keygen import KeyOwner
from ren.schemes.rlwe.keys import KeySwitchKey

__all__ = ["EvaluationKeys", "KeyExchange"]


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

    def __reduce__(self) -> tuple:
        return (_evaluation_keys_from_pickle, (self.to_bytes(), self.public[0].device))


def _evaluation_keys_from_pickle(blob: bytes, device: str) -> EvaluationKeys:
    return EvaluationKeys.from_bytes(blob, device, insecure=True)


def _context_from_pickle(params: IntParams, device: str, keys: bytes | None) -> Any:
    evk = None if keys is None else EvaluationKeys.from_bytes(keys, device, insecure=True)
    return scheme_module(params.scheme).Context(params, device=device, keys=evk)


class KeyExchange(keyset.Copies, KeyOwner):
    """Keys given to a context and taken from it (a mixin of ``IntContext``)."""

    params: IntParams
    scheme: ClassVar[str]

    def _take_keys(self, keys: EvaluationKeys | None, secret_key: bytes | None) -> None:
        """The constructor's ``keys=`` or ``secret_key=``: the context's keys, checked."""
        if keys is not None and secret_key is not None:
            raise ValueError("pass keys= or secret_key=, not both")
        if keys is not None:
            if not isinstance(keys, EvaluationKeys):
                raise TypeError(
                    f"keys must be {self.scheme}.EvaluationKeys, got {type(keys).__name__}"
                )
            if keys.params.scheme != self.scheme:
                raise ValueError(
                    f"the keys are {keys.params.scheme.upper()} keys, and this a "
                    f"{self.scheme.upper()} context"
                )
            if keys.params != self.params:
                raise ValueError(f"the keys are for {keys.params}, not {self.params}")
            self._adopt(keys)
        if secret_key is not None:
            params = self.params
            keyset.load_secret(
                self,
                secret_key,
                _bytes.kind(self.scheme, "secret-key"),
                lambda h: _bytes.params_of(h, params, "secret key"),
                self.scheme.upper(),
            )

    # --- copies -----------------------------------------------------------------------------
    @classmethod
    def _unpickler(cls) -> Callable[..., Any]:
        return _context_from_pickle

    # --- keys -------------------------------------------------------------------------------
    def evaluation_keys(self) -> EvaluationKeys:
        """The public key, relinearization key and the rotation keys made so far."""
        return keyset.evaluation_keys(self, EvaluationKeys)

    def export_secret_key(self) -> bytes:
        """The secret key and its public key, in Ren's format (``bfv-secret-key``). Keep it secret.

        ``Context(params, secret_key=blob)`` reads it back: the same secret key, public key and
        key fingerprint, so that context takes this one's ciphertexts.
        """
        return keyset.export_secret(self, _bytes.kind(self.scheme, "secret-key"))

    def rotation_key(self, steps: int) -> KeySwitchKey:
        """The key of ``rotate_rows(steps)`` (made on first use; ``X -> X^(3^steps)``).

        The column swap (``rotate_columns``) uses ``galois_key(2 * n - 1)``. Make them before
        ``evaluation_keys()``: a context without the secret key cannot.

        Raises:
            TypeError: when ``steps`` is not an int.
        """
        if not is_int(steps):
            raise TypeError(f"rotation steps must be an int, got {_fmt.describe(steps)}")
        n = self.params.n
        return self.galois_key(galois_for_rotation(n, int(steps) % (n // 2), generator=3))
