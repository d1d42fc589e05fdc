"""The evaluation keys a CKKS server needs: public, relinearization and rotation keys."""

from __future__ import annotations

from ren.poly import Poly, is_int
from ren.schemes.ckks.params import Params
from ren.schemes.rlwe import bytes as _fmt
from ren.schemes.rlwe.keys import KeySwitchKey


class EvaluationKeys:
    """The public keys a server needs.

    They are the public key, the relinearization key, and the rotation and conjugation keys made
    so far. ``Context(params, keys=...)`` evaluates with them (no secret key: it cannot decrypt or
    make new rotation keys). They pickle as their bytes (``to_bytes``).

    Args:
        params: the ``Params``.
        public: the public key ``(b, a)``.
        relin: the relinearization key.
        galois: the rotation and conjugation keys by Galois element.
    """

    __slots__ = ("_fingerprint", "galois", "params", "public", "relin")

    def __init__(
        self,
        params: Params,
        public: tuple[Poly, Poly],
        relin: KeySwitchKey,
        galois: dict[int, KeySwitchKey],
    ):
        if not isinstance(params, Params):
            raise TypeError(f"params must be a ckks.Params, got {_fmt.describe(params)}")
        pair = tuple(public)
        if len(pair) != 2 or not all(isinstance(p, Poly) for p in pair):
            raise TypeError("public must be the pair (b, a) of Poly values")
        if not isinstance(relin, KeySwitchKey):
            raise TypeError(f"relin must be a KeySwitchKey, got {_fmt.describe(relin)}")
        if not isinstance(galois, dict) or not all(
            is_int(g) and isinstance(k, KeySwitchKey) for g, k in galois.items()
        ):
            raise TypeError("galois must be a dict from Galois elements (ints) to KeySwitchKeys")
        self.params = params
        self.public: tuple[Poly, Poly] = (pair[0], pair[1])
        self.relin = relin
        self.galois = dict(galois)
        self._fingerprint: str | None = None

    def __repr__(self) -> str:
        return f"<EvaluationKeys n={self.params.n}, galois={sorted(self.galois)}>"

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

    def __reduce__(self) -> tuple:
        from ren.schemes.ckks.api import _evaluation_keys_from_pickle  # it imports this module

        return (_evaluation_keys_from_pickle, (self.to_bytes(), self.public[0].device))

    def to_bytes(self) -> bytes:
        """The keys in Ren's versioned, checksummed CKKS format (never the secret key)."""
        keys = [self.relin, *(self.galois[g] for g in sorted(self.galois))]
        polys = [*self.public] + [p for k in keys for pair in k.parts for p in pair]
        heads, datas = zip(*(_fmt.poly_record(p) for p in polys), strict=True)
        header = {
            "params": self.params._header(),
            "galois": [k.galois for k in keys],
            "key_fingerprint": self.fingerprint,
            "polys": list(heads),
        }
        return _fmt.pack("evaluation-keys", header, list(datas))

    @classmethod
    def from_bytes(
        cls, blob: bytes, device: str | None = None, *, insecure: bool = False
    ) -> EvaluationKeys:
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
        header, datas = _fmt.unpack(blob, "evaluation-keys")
        fields = ("galois", "key_fingerprint", "params", "polys")
        h = _fmt.Header(header, "the evaluation-key blob's header", fields)
        reader = "EvaluationKeys.from_bytes"
        params = Params._from_header(h.raw("params"), insecure=insecure, reader=reader)
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
        digits = len(params.digits)
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
