"""The keys a context hands out and takes back: evaluation keys, and the exported secret key.

Every RLWE scheme shares them. ``EvaluationKeys`` is the public part a server evaluates with (the
public key, the relinearization key, the Galois keys made so far); a scheme's subclass
(``ckks.EvaluationKeys``, ``ren.schemes.integer.keys.EvaluationKeys``) says which parameters it
holds and under which kind its blobs are written. ``export_secret`` and ``load_secret`` write and
read the secret key of a context's key chain (``ren.schemes.rlwe.keygen.KeyChain``) with its public
key, every field checked: a loaded secret must be ternary (and of the parameters' weight), and the
public key must be its own.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar, Self, TypeVar

import numpy as np

from ren.engine.realize import uncaptured
from ren.poly import Poly, is_int, realize
from ren.schemes.rlwe import bytes as _fmt
from ren.schemes.rlwe.keygen import KeyChain
from ren.schemes.rlwe.keys import KeySwitchKey

__all__ = ["EvaluationKeys", "export_secret", "load_secret"]


class EvaluationKeys:
    """The public keys a server needs: public key, relinearization key, Galois keys made so far.

    A scheme's context evaluates with them (``Context(params, keys=...)``: no secret key, so it
    cannot decrypt or make new rotation keys). They pickle as their bytes (``to_bytes``).

    Args:
        params: the scheme's ``Params``.
        public: the public key ``(b, a)``.
        relin: the relinearization key.
        galois: the rotation (and conjugation) keys by Galois element.
    """

    __slots__ = ("_fingerprint", "galois", "params", "public", "relin")

    #: The parameters' type (a scheme's ``Params``) and how messages name it.
    _params_type: ClassVar[Any] = object
    _params_name: ClassVar[str] = "Params"

    def __init__(
        self,
        params: object,
        public: tuple[Poly, Poly],
        relin: KeySwitchKey,
        galois: dict[int, KeySwitchKey],
    ):
        if not isinstance(params, self._params_type):
            raise TypeError(f"params must be a {self._params_name}, got {_fmt.describe(params)}")
        pair = tuple(public)
        if len(pair) != 2 or not all(isinstance(p, Poly) for p in pair):
            raise TypeError("public must be the pair (b, a) of Poly values")
        if not isinstance(relin, KeySwitchKey):
            raise TypeError(f"relin must be a KeySwitchKey, got {_fmt.describe(relin)}")
        if not isinstance(galois, dict) or not all(
            is_int(g) and isinstance(k, KeySwitchKey) for g, k in galois.items()
        ):
            raise TypeError("galois must be a dict from Galois elements (ints) to KeySwitchKeys")
        self.params: Any = params
        self.public: tuple[Poly, Poly] = (pair[0], pair[1])
        self.relin = relin
        self.galois = dict(galois)
        self._fingerprint: str | None = None

    def __repr__(self) -> str:
        return f"<EvaluationKeys n={self.params.n}, galois={sorted(self.galois)}>"

    # --- what a scheme says -----------------------------------------------------------------
    @classmethod
    def _kind(cls, params: object) -> str:
        """The kind of the blob ``to_bytes`` writes for keys of ``params``."""
        return "evaluation-keys"

    @classmethod
    def _reading(cls, blob: bytes) -> tuple[str, str, Any]:
        """What ``from_bytes`` reads ``blob`` as: its kind, the scheme's name, the params class.

        The kind is the one the blob must hold, the name is for messages (``"CKKS"``), and the
        class's ``_from_header`` reads the blob's parameters.
        """
        return "evaluation-keys", "CKKS", cls._params_type

    # --- the keys ---------------------------------------------------------------------------
    @property
    def fingerprint(self) -> str:
        """The key fingerprint: 16 hexadecimal digits of the SHA-256 of the public key's words.

        Every ciphertext made under these keys carries it; it is computed once.
        """
        if self._fingerprint is None:
            self._fingerprint = _fmt.fingerprint(self.public)
        return self._fingerprint

    def __ren_stored__(self) -> dict[str, Poly]:
        """The keys' polys by name, for a saved plan that reads them (``stored={"keys": ...}``)."""
        out = {"public[0]": self.public[0], "public[1]": self.public[1]}
        named = [("relin", self.relin)] + [(f"galois[{g}]", self.galois[g]) for g in self.galois]
        for name, key in named:
            for j, (b, a) in enumerate(key.parts):
                out[f"{name}[{j}].b"], out[f"{name}[{j}].a"] = b, a
        return out

    def __ren_key_fingerprint__(self) -> str:
        """The keys' fingerprint, which a saved plan's inputs under them must carry."""
        return self.fingerprint

    def to_bytes(self) -> bytes:
        """The keys in Ren's versioned, checksummed format (never the secret key)."""
        keys = [self.relin, *(self.galois[g] for g in sorted(self.galois))]
        polys = [*self.public] + [p for k in keys for pair in k.parts for p in pair]
        heads, datas = zip(*(_fmt.poly_record(p) for p in polys), strict=True)
        header = {
            "params": self.params._header(),
            "galois": [k.galois for k in keys],
            "key_fingerprint": self.fingerprint,
            "polys": list(heads),
        }
        return _fmt.pack(self._kind(self.params), header, list(datas))

    @classmethod
    def from_bytes(cls, blob: bytes, device: str | None = None, *, insecure: bool = False) -> Self:
        """Read keys written by ``to_bytes`` (onto ``device``).

        Args:
            blob: the bytes.
            device: where the keys live (default ``$REN_DEVICE``).
            insecure: accept keys for parameters marked ``insecure=True`` (the reader's opt-in,
                as for ``Params.from_bytes``).

        Raises:
            TypeError: when ``blob`` is not bytes or ``insecure`` not a bool.
            ValueError: a truncated, altered, malformed or foreign blob, insecure parameters
                without the opt-in, or a public key whose fingerprint is not the header's.
        """
        if not isinstance(insecure, bool):
            raise TypeError(f"insecure must be True or False, got {_fmt.describe(insecure)}")
        kind, scheme, params_type = cls._reading(blob)
        header, datas = _fmt.unpack(blob, kind, scheme)
        fields = ("galois", "key_fingerprint", "params", "polys")
        h = _fmt.Header(header, "the evaluation-key blob's header", fields)
        reader = "EvaluationKeys.from_bytes"
        params = params_type._from_header(h.raw("params"), insecure=insecure, reader=reader)
        fp = h.fingerprint("key_fingerprint")
        galois = h.entries("galois", 1, 1 + params.n)
        if galois[0] is not None:
            raise ValueError("the evaluation-key blob's first key is not the relinearization key")
        two_n = 2 * params.n
        for g in galois[1:]:
            if not is_int(g) or not 1 <= g < two_n or g % 2 == 0:
                raise ValueError(
                    f"the evaluation-key blob names the Galois element {_fmt.describe(g)}; "
                    f"Galois elements are odd ints in [1, 2n={two_n})"
                )
        if len(set(galois[1:])) != len(galois) - 1:
            raise ValueError("the evaluation-key blob names a Galois element twice")
        digits = params.key_parts
        count = 2 + 2 * digits * len(galois)
        polys = _fmt.read_polys(h, datas, [params.key_ring] * count, device)
        keys = []
        for i, g in enumerate(galois):
            base = 2 + 2 * digits * i
            pairs = tuple((polys[base + 2 * j], polys[base + 2 * j + 1]) for j in range(digits))
            keys.append(KeySwitchKey(g, pairs))
        rotations = {int(g): k for g, k in zip(galois[1:], keys[1:], strict=True)}
        out = cls(params, (polys[0], polys[1]), keys[0], rotations)
        if out.fingerprint != fp:
            raise ValueError(
                f"the evaluation-key blob's public key has the fingerprint {out.fingerprint}, "
                f"and its header says {fp}: the blob was altered"
            )
        return out


# ---------------------------------------------------------------------------------------------
# the secret key

K = TypeVar("K", bound=EvaluationKeys)


def evaluation_keys(chain: KeyChain, kind: type[K]) -> K:
    """``chain``'s public key, relinearization key and rotation keys made so far, as ``kind``."""
    with chain.lock:
        public, relin = chain.require_public()
        keys = kind(chain.params, public, relin, chain.galois)
        keys._fingerprint = chain.fingerprint
    return keys


def export_secret(chain: KeyChain, kind: str) -> bytes:
    """The secret key of ``chain`` (a context's keys) and its public key, as a blob of ``kind``.

    The header holds the parameters (``chain.params._header()``) and the key fingerprint.
    """
    with chain.lock:
        s = chain.require_secret("export a secret key")
        public, _ = chain.require_public()
        records = [_fmt.poly_record(p) for p in (s, *public)]
        header = {
            "params": chain.params._header(),
            "key_fingerprint": chain.fingerprint,
            "polys": [head for head, _ in records],
        }
    return _fmt.pack(kind, header, [data for _, data in records])


def load_secret(
    chain: KeyChain,
    blob: bytes,
    kind: str,
    params_of: Callable[[_fmt.Header], Any],
    scheme: str = "CKKS",
) -> None:
    """Give ``chain`` the secret and public key of ``blob``, each checked; nothing changes on error.

    Args:
        chain: the context's keys.
        blob: bytes written by ``export_secret`` (a context's ``export_secret_key``).
        kind: the kind the blob must hold.
        params_of: the blob's parameters from its checked header (they must be the context's).
        scheme: how messages name the scheme.

    Raises:
        TypeError: when ``blob`` is not bytes.
        ValueError: a malformed or foreign blob, other parameters, a secret that is not ternary
            (or not of the parameters' hamming weight), or a public key not of this secret.
    """
    header, datas = _fmt.unpack(blob, kind, scheme)
    fields = ("key_fingerprint", "params", "polys")
    h = _fmt.Header(header, "the secret-key blob's header", fields)
    params = params_of(h)
    fp = h.fingerprint("key_fingerprint")
    K = params.key_ring
    s, b, a = _fmt.read_polys(h, datas, [K] * 3, chain.device)
    coeffs = _fmt.centered_limbs(s)
    if not (coeffs == coeffs[0]).all() or np.abs(coeffs[0]).max() > 1:
        raise ValueError("the blob's secret key is not ternary: its coefficients must be -1, 0, 1")
    weight = int(np.count_nonzero(coeffs[0]))
    if weight == 0:
        raise ValueError("the blob's secret key is zero")
    if params.hamming_weight is not None and weight != params.hamming_weight:
        raise ValueError(
            f"the blob's secret key has {weight} nonzero coefficients; these parameters ask "
            f"for hamming_weight={params.hamming_weight}"
        )
    s, b, a = s.ntt(), b.ntt(), a.ntt()
    e = _fmt.centered_limbs(b + a * s)
    if not (e == e[0]).all() or np.abs(e[0]).max() > math.floor(6 * params.sigma):
        raise ValueError(
            "the blob's public key does not belong to its secret key: b + a s is not a small error"
        )
    with uncaptured():
        realize(s, b, a)
    found = _fmt.fingerprint((b, a))
    if found != fp:
        raise ValueError(
            f"the blob's public key has the fingerprint {found}, and its header says {fp}: "
            "the blob was altered"
        )
    with chain.lock:
        chain.install(s, (b, a), fp)
