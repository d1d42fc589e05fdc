"""BFV and BGV values in bytes: their kinds, the scheme a blob is for, and reading a value.

The framing, the checksum and the header checks are Ren's format (``ren.schemes.rlwe.bytes``,
the one CKKS writes). Each kind names its scheme (``bfv-params``, ``bgv-plaintext``,
``bfv-ciphertext``, ``bgv-evaluation-keys``, ``bfv-secret-key``) and the parameters in every header
name it again, so a BFV reader refuses a BGV blob and a CKKS one, and the other way round.

A plaintext's header holds its parameters; its one payload is the ``n`` coefficients mod ``t``
(little-endian ``u64``). A ciphertext's header holds its parameters, level, ``correction`` (BGV's
factor ``f``; 1 for BFV) and key fingerprint, and the domain and limb count of each part; its
payloads are the parts' residues, as CKKS writes them.
"""

from __future__ import annotations

import math

import numpy as np

from ren.poly import Poly
from ren.schemes.integer.params import SCHEMES, IntParams, scheme_module
from ren.schemes.rlwe import bytes as _fmt
from ren.schemes.rlwe.params import params_of

__all__ = [
    "kind",
    "params_of",
    "read_ciphertext",
    "read_plaintext",
    "scheme_of",
    "write_ciphertext",
    "write_plaintext",
]


def kind(scheme: str, what: str) -> str:
    """The kind of a ``what`` blob of ``scheme``: ``bfv-ciphertext``."""
    return f"{scheme}-{what}"


def scheme_of(blob: object, what: str) -> str:
    """The integer scheme whose ``what`` blob this says it is (``"bfv"`` for ``bfv-ciphertext``).

    Only the kind is read here; ``unpack`` checks the rest.

    Raises:
        TypeError: when ``blob`` is not bytes.
        ValueError: a blob that is not framed as Ren's, or holds another kind (CKKS's included).
    """
    found = _fmt.kind_of(blob)
    if found is not None:
        scheme, _, rest = found.partition("-")
        if rest == what and scheme in SCHEMES:
            return scheme
    names = " or ".join(s.upper() for s in SCHEMES)
    if found is None:
        raise ValueError(
            f"not a Ren {names} {what} blob: it does not start with Ren's header (RENCKKS)"
        )
    raise ValueError(f"expected a Ren {names} {what} blob, got one holding a {found!r}")


def write_plaintext(coeffs: np.ndarray, params: IntParams) -> bytes:
    """The blob of a plaintext: its parameters, and its coefficients as ``u64`` words.

    Raises:
        ValueError: for parameters of no scheme (``IntParams`` itself).
    """
    if params.scheme not in SCHEMES:
        raise ValueError("a plaintext's bytes name its scheme: encode it with bfv or bgv")
    words = np.asarray(coeffs).astype("<u8").tobytes()
    return _fmt.pack(kind(params.scheme, "plaintext"), {"params": params._header()}, [words])


def write_ciphertext(
    parts: tuple[Poly, ...], level: int, correction: int, params: IntParams | None, fp: str | None
) -> bytes:
    """The blob of a ciphertext: parameters, level, correction, key fingerprint, parts.

    Raises:
        ValueError: with no key fingerprint (a ciphertext built outside a context holding keys)
            or no parameters of a scheme: a reader could not tell what it is.
    """
    if fp is None:
        raise ValueError(
            "this ciphertext has no key fingerprint (it was built outside a context holding "
            "keys), so its bytes could not say which keys it is under; make it in a context "
            "with keys"
        )
    if params is None or params.scheme not in SCHEMES:
        raise ValueError("this ciphertext has no bfv or bgv parameters to write")
    heads, datas = zip(*(_fmt.poly_record(p) for p in parts), strict=True)
    header = {
        "params": params._header(),
        "level": level,
        "correction": correction,
        "key_fingerprint": fp,
        "polys": list(heads),
    }
    return _fmt.pack(kind(params.scheme, "ciphertext"), header, list(datas))


def _open(
    blob: bytes, what: str, params: IntParams | None, fields: list[str]
) -> tuple[IntParams, _fmt.Header, list[bytes]]:
    """The parameters, checked header and payloads of a ``what`` blob.

    With ``params`` (a context's) the blob must be of their scheme and hold equal ones; without
    (unpickling) its kind names the scheme and its parameters are read with the insecure opt-in:
    a pickle is trusted data, as it must be.
    """
    scheme = params.scheme if params is not None else scheme_of(blob, what)
    header, datas = _fmt.unpack(blob, kind(scheme, what), scheme.upper())
    h = _fmt.Header(header, f"the {what} blob's header", fields)
    if params is None:
        params = scheme_module(scheme).Params._from_header(
            h.raw("params"), insecure=True, reader=""
        )
        assert params is not None
    else:
        params = params_of(h, params, what)
    return params, h, datas


def read_plaintext(blob: bytes, params: IntParams | None) -> tuple[IntParams, np.ndarray]:
    """The parameters and the coefficients (int64 in ``[0, t)``) of a plaintext blob.

    Raises:
        TypeError: when ``blob`` is not bytes.
        ValueError: a truncated, altered, malformed or foreign blob, other parameters, or a
            coefficient outside ``[0, t)``.
    """
    params, _, datas = _open(blob, "plaintext", params, ["params"])
    n, t = params.n, params.t
    if len(datas) != 1 or len(datas[0]) != 8 * n:
        sizes = [len(d) for d in datas]
        raise ValueError(
            f"a plaintext blob holds one payload of n={n} coefficients ({8 * n} bytes); this one "
            f"holds payloads of {sizes} bytes"
        )
    words = np.frombuffer(datas[0], dtype="<u8")
    bad = np.flatnonzero(words >= t)
    if bad.size:
        raise ValueError(
            f"the plaintext blob's coefficient {int(bad[0])} is {int(words[bad[0]])}, outside "
            f"[0, t={t})"
        )
    return params, words.astype(np.int64)


def read_ciphertext(
    blob: bytes, params: IntParams | None, device: str | None
) -> tuple[IntParams, int, int, str, list[Poly]]:
    """The parameters, level, correction, key fingerprint and parts of a ciphertext blob.

    Raises:
        TypeError: when ``blob`` is not bytes.
        ValueError: a truncated, altered, malformed or foreign blob, other parameters, a level or
            correction out of range (a BFV ciphertext's correction is 1; a BGV one's is a unit
            mod ``t``), or parts that are not polynomials of the level's ring.
    """
    fields = ["correction", "key_fingerprint", "level", "params", "polys"]
    params, h, datas = _open(blob, "ciphertext", params, fields)
    level = h.integer("level", 0, params.max_level)
    t = params.t
    correction = h.integer("correction", 1, t - 1)
    if math.gcd(correction, t) != 1:
        raise ValueError(
            f"the ciphertext blob's correction {correction} has no inverse mod t={t}: "
            "decryption divides by it"
        )
    if params.scheme == "bfv" and correction != 1:
        raise ValueError(f"a BFV ciphertext's correction is 1; the blob says {correction}")
    fp = h.fingerprint("key_fingerprint")
    if len(datas) not in (2, 3):
        raise ValueError(f"a ciphertext blob holds 2 or 3 polynomials, this one {len(datas)}")
    polys = _fmt.read_polys(h, datas, [params.ring(level)] * len(datas), device)
    return params, level, correction, fp, polys
