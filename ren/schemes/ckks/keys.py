"""The evaluation keys a CKKS server needs: public, relinearization and rotation keys."""

from __future__ import annotations

from collections.abc import Callable

from ren.schemes.ckks.params import Params
from ren.schemes.rlwe import keyset


class EvaluationKeys(keyset.EvaluationKeys):
    """The public keys a server needs.

    They are the public key, the relinearization key, and the rotation and conjugation keys made
    so far. ``Context(params, keys=...)`` evaluates with them (no secret key: it cannot decrypt or
    make new rotation keys). They pickle as their bytes (``to_bytes``). ``fingerprint``,
    ``to_bytes`` and ``from_bytes`` are those every scheme's keys share
    (``ren.schemes.rlwe.keyset.EvaluationKeys``), in Ren's CKKS format.

    Args:
        params: the ``Params``.
        public: the public key ``(b, a)``.
        relin: the relinearization key.
        galois: the rotation and conjugation keys by Galois element.
    """

    __slots__ = ()

    _params_type = Params
    _params_name = "ckks.Params"

    params: Params

    def __reduce__(self) -> tuple[Callable[[bytes, str], EvaluationKeys], tuple[bytes, str]]:
        from ren.schemes.ckks.api import _evaluation_keys_from_pickle  # it imports this module

        return (_evaluation_keys_from_pickle, (self.to_bytes(), self.public[0].device))
