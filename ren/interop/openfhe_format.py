"""OpenFHE's CKKS objects as its JSON serialization writes them, read with Python and NumPy.

OpenFHE 1.x saves with cereal: ``SerializeToFile(path, obj, SERJSON)`` or ``Serialize(obj,
SERJSON)`` for a ciphertext, a key or a crypto context, ``SerializeEvalMultKey(path, SERJSON)``
for the relinearization keys. This module reads those JSON files into plain data: the words as
NumPy ``uint64`` arrays shaped ``(parts, limbs, n)``, the moduli, each tower's root of unity,
the form, the CKKS facts (scale, level, noise scale degree); ``ren.interop.openfhe`` turns them
into Ren values. The layout, from OpenFHE's ``serialize`` methods (``ciphertext.h``,
``dcrtpoly.h``, ``elemparams.h``, the keys' and crypto parameters' headers) and the wheel's files:

* **Pointers** (``ren.interop.openfhe_cereal``): each object carries its crypto context, so the
  context comes first and the towers' parameters are referred to by number afterwards.
* **Ciphertext**: ``{value0: {cc, kt}, v: [DCRTPoly, ...], sl, l, t, d, s, si, e, m}``: the
  context and key tag, the parts, slots, level, hops, noise scale degree, scaling factor (a
  double), its integer form (BGV), encoding (4: CKKS packed), metadata.
* **DCRTPoly**: ``{v: [tower, ...], f, p}``: towers, format (``0`` EVALUATION, the NTT form;
  ``1`` COEFFICIENT), ``ILDCRTParams``. A tower (``NativePoly``): ``{v: {ptr_wrapper: {valid:
  1, data: {v: [words], m: {v: q}}}}, f, p}`` with ``p`` its ``ILNativeParams``: ``co``
  (cyclotomic order ``2n``), ``rd`` (``n``), ``cm`` (``q``), ``ru`` (the primitive ``2n``-th
  root of unity its NTT uses), ``bm``, ``br`` (unused here).
* **PublicKey**: ``{value0: {cc, kt}, h: [b, a]}``; **PrivateKey**: ``{value0: {cc, kt}, s}``.
* **Eval mult keys**: ``{value0: [{key: tag, value: [EvalKeyRelin, ...]}]}``, one key per power
  ``s^2, s^3, ...``; an ``EvalKeyRelin`` is ``{value0: ..{cc, kt}, ak: [a_j], bk: [b_j]}``, one
  pair per digit: with HYBRID key switching ``dnum`` pairs over the towers of ``Q`` then those of
  the special modulus ``P``, with BV one pair per tower of ``Q`` (or per window of each tower,
  with a digit size) over ``Q``'s towers alone.
* **Crypto context**: ``{cc: CryptoParametersCKKSRNS, kt: SchemeCKKSRNS, si}``. The parameters
  nest their base classes as ``value0``: ``ks`` (key switching), ``rs`` (scaling technique),
  ``dnum`` (digits), ``cdt`` (data type); ``dp`` (sigma), ``rw`` (BV's digit size), ``muld``
  (depth), ``mo`` (secret distribution), ``slv`` (security level); ``elp`` (the towers of ``Q``)
  and ``enp`` (``m``: the scaling modulus size, ``bs``: the batch size).
"""

from __future__ import annotations

import dataclasses
from typing import TypeVar, cast

import numpy as np
from numpy.typing import NDArray

from ren.interop.openfhe_cereal import Archive, Json, Source, layers, load
from ren.interop.openfhe_values import (
    CKKS_PACKED,
    FORMATS,
    KEY_SWITCHING,
    SCALING,
    SECRET_DIST,
    SECURITY,
    OpenFHECiphertext,
    OpenFHEEvalKey,
    OpenFHEParams,
    OpenFHEPublicKey,
    OpenFHESecretKey,
    OpenFHEValue,
    Read,
    bv_windows,
    ciphertext_fault,
    key_digits,
    params_fault,
)

__all__ = [
    "FORMATS",
    "OpenFHECiphertext",
    "OpenFHEEvalKey",
    "OpenFHEParams",
    "OpenFHEPublicKey",
    "OpenFHESecretKey",
    "OpenFHEValue",
    "read",
    "read_ciphertext",
    "read_context",
    "read_eval_mult_keys",
    "read_public_key",
    "read_secret_key",
]

ACCEPTED = (
    "OpenFHE CKKS objects saved as JSON (SERJSON): a ciphertext, public key or private key "
    "(SerializeToFile / Serialize), eval mult keys (SerializeEvalMultKey), a crypto context"
)


def _tower_params(r: Archive, pointer: Json, where: str) -> tuple[int, int, int]:
    """``(n, q, root)`` of an ``ILNativeParams``."""
    p = r.get(r.deref(pointer, where), "value0", where)
    n, order = r.int_(p, "rd", where), r.int_(p, "co", where)
    q, root = r.int_(r.get(p, "cm", where), "v", where), r.int_(r.get(p, "ru", where), "v", where)
    if order != 2 * n:
        raise r.fail(f"{where}: cyclotomic order {order} for ring dimension {n}, not 2n")
    if not 2 <= q < 1 << 64 or not 0 < root < q:
        raise r.fail(f"{where}: modulus {q} and root {root}: 2 <= q < 2^64 and 0 < root < q")
    return n, q, root


def _params(r: Archive, context: Json, where: str) -> OpenFHEParams:
    """The parameters of a crypto context object (``{cc, kt, si}``)."""
    pointer = r.get(context, "cc", where)
    kind = pointer.get("polymorphic_name", "") if isinstance(pointer, dict) else ""
    if kind and "CKKS" not in cast(str, kind):  # a class name; another value fails at ``in``
        raise r.fail(f"{where} holds {kind}: only CKKS (lbcrypto::CryptoParametersCKKSRNS)")
    cp = r.deref(pointer, f"{where}.cc")
    elp = r.deref(r.field(cp, "elp", "the crypto parameters"), "the element parameters")
    listed = r.get(elp, "p", "the element parameters")
    if not isinstance(listed, list) or not listed:
        raise r.fail("the crypto parameters hold no towers")
    towers = [_tower_params(r, t, f"tower {i} parameters") for i, t in enumerate(listed)]
    enp = r.deref(r.field(cp, "enp", "the crypto parameters"), "the encoding parameters")

    def f(key: str) -> Json:
        return r.field(cp, key, "the crypto parameters")

    sigma = r.number(f("dp"), "sigma (dp)", most=1e300)
    params = OpenFHEParams(
        n=towers[0][0],
        moduli=tuple(t[1] for t in towers),
        roots=tuple(t[2] for t in towers),
        scaling_technique=r.enum(SCALING, f("rs"), "the scaling technique (rs)"),
        scaling_mod_size=r.int_(enp, "m", "the encoding parameters"),
        batch_size=r.int_(enp, "bs", "the encoding parameters"),
        key_switching=r.enum(KEY_SWITCHING, f("ks"), "the key switching technique (ks)"),
        dnum=r.integer(f("dnum"), "the number of digits (dnum)"),
        digit_size=r.integer(f("rw"), "the digit size (rw)"),
        secret_key_dist=r.enum(SECRET_DIST, f("mo"), "the secret key distribution (mo)"),
        data_type=r.enum(("REAL", "COMPLEX"), f("cdt"), "the CKKS data type (cdt)"),
        security_level=r.enum(SECURITY, f("slv"), "the security level (slv)"),
        sigma=float(sigma),
        multiplicative_depth=r.integer(f("muld"), "the multiplicative depth (muld)"),
    )
    wrong = params_fault(params)
    if wrong:
        raise r.fail(f"the crypto context: {wrong}")
    return params


def _words(r: Archive, values: Json, q: int, n: int, where: str) -> NDArray[np.uint64]:
    if not isinstance(values, list) or len(values) != n:
        size = len(values) if isinstance(values, list) else type(values).__name__
        raise r.fail(f"{where} holds {size} words; the ring dimension is {n}")
    bad = next((i for i, x in enumerate(values) if type(x) is not int or not 0 <= x < q), None)
    if bad is not None:
        raise r.fail(f"{where}, index {bad}: word {values[bad]!r} is not an integer in [0, {q})")
    return np.array(values, dtype=np.uint64)


def _dcrt(
    r: Archive, poly: Json, where: str, ring_dim: int
) -> tuple[NDArray[np.uint64], list[int], list[int], str]:
    """A DCRTPoly's ``(words (limbs, n), moduli, roots, form)``."""
    f = r.get(poly, "f", where)
    if f not in (0, 1) or isinstance(f, bool):
        raise r.fail(f"{where}: format {f!r}, not 0 (EVALUATION) or 1 (COEFFICIENT)")
    limbs: list[NDArray[np.uint64]] = []
    moduli: list[int] = []
    roots: list[int] = []
    towers = r.get(poly, "v", where)
    if not isinstance(towers, list) or not towers:
        raise r.fail(f"{where} holds no towers")
    for i, tower in enumerate(towers):
        at = f"{where}, tower {i}"
        n, q, root = _tower_params(r, r.get(tower, "p", at), f"{at} parameters")
        if n != ring_dim:
            raise r.fail(f"{at}: ring dimension {n}, the crypto context's is {ring_dim}")
        vec = r.get(r.get(tower, "v", at), "ptr_wrapper", at)
        if not isinstance(vec, dict) or not vec.get("valid", 1):
            raise r.fail(f"{at} holds no values")
        data = r.get(vec, "data", at)
        modulus = r.int_(r.get(data, "m", at), "v", at)
        if modulus != q:
            raise r.fail(f"{at}: its words are modulo {modulus}, its parameters say {q}")
        limbs.append(_words(r, r.get(data, "v", at), q, n, at))
        moduli.append(q)
        roots.append(root)
    return np.stack(limbs), moduli, roots, FORMATS[cast(int, f)]  # 0 or 1, checked above


def _parts(
    r: Archive, polys: Json, where: str, params: OpenFHEParams, towers: str = "Q"
) -> tuple[NDArray[np.uint64], tuple[int, ...], tuple[int, ...], str]:
    """The polys' ``(words, moduli, roots, form)``, over ``towers`` of the crypto context.

    ``towers``: ``"Q"`` every tower of ``Q`` (keys), ``"prefix"`` the first ones (a ciphertext
    after rescales), ``"QP"`` those of ``Q`` then the special ones (eval keys).
    """
    if not isinstance(polys, list) or not polys:
        raise r.fail(f"{where} holds no polynomials")
    read = [_dcrt(r, p, f"{where}[{k}]", params.n) for k, p in enumerate(polys)]
    for k, (_, moduli, roots, form) in enumerate(read[1:], 1):
        if (moduli, roots, form) != tuple(read[0][1:]):
            raise r.fail(f"{where}[{k}] has other towers or another format than {where}[0]")
    words, moduli, roots, form = np.stack([x[0] for x in read]), *read[0][1:]
    q = len(params.moduli) if towers != "prefix" else min(len(moduli), len(params.moduli))
    size_ok = {"Q": len(moduli) == q, "prefix": len(moduli) <= q, "QP": len(moduli) > q}
    if not size_ok[towers] or (tuple(moduli[:q]), tuple(roots[:q])) != (
        params.moduli[:q],
        params.roots[:q],
    ):
        want = {"Q": "those", "prefix": "the first ones", "QP": "those, then P's"}[towers]
        raise r.fail(
            f"{where} is over the towers {moduli} (roots {roots}): {want} of its crypto "
            f"context's {list(params.moduli)} (roots {list(params.roots)})"
        )
    if towers == "QP":  # P's towers are not in the context: checked here
        special = dataclasses.replace(params, moduli=tuple(moduli), roots=tuple(roots))
        wrong = params_fault(special)
        if wrong:
            raise r.fail(f"{where}: {wrong.replace('of Q', 'of Q and P')}")
    return words, tuple(moduli), tuple(roots), form


def _crypto_object(r: Archive, data: Json, what: str) -> tuple[OpenFHEParams, str]:
    """The parameters and key tag of a ciphertext's or key's ``CryptoObject`` base."""
    base = next((x for x in layers(data) if "cc" in x and "kt" in x), None)
    if base is None:
        raise r.fail(f"the {what} names no crypto context")
    if not isinstance(base["kt"], str):
        raise r.fail(f"the {what}'s key tag (kt) is {base['kt']!r}, not a string")
    return _params(r, r.deref(base["cc"], "the crypto context"), "the crypto context"), base["kt"]


def _eval_keys(r: Archive, entries: list[Json]) -> tuple[OpenFHEEvalKey, ...]:
    keys = []
    for entry in entries:
        powers = r.get(entry, "value", "an eval key entry")
        if not isinstance(powers, list):
            raise r.fail(f"an eval key entry's value is {type(powers).__name__}, not a list")
        for power, pointer in enumerate(powers, 2):
            if not isinstance(pointer, dict) or "ptr_wrapper" not in pointer:
                raise r.fail("an eval key map of maps (rotation keys) is not read yet")
            data = r.deref(pointer, "an eval key")
            params, tag = _crypto_object(r, data, "eval key")
            a = r.get(data, "ak", "an eval key")
            b = r.get(data, "bk", "an eval key")
            if not isinstance(a, list) or not isinstance(b, list) or len(a) != len(b):
                raise r.fail("an eval key's ak and bk are not lists of one length")
            if len(a) != key_digits(params):
                raise r.fail(f"the eval key holds {len(a)} digits (ak, bk); {_digits_rule(params)}")
            pairs = [x for pair in zip(b, a, strict=True) for x in pair]
            towers = "QP" if params.key_switching == "HYBRID" else "Q"
            words, moduli, roots, form = _parts(r, pairs, "the eval key (bk, ak)", params, towers)
            keys.append(OpenFHEEvalKey(words, moduli, roots, form, params, tag, r.name, power))
    if not keys:
        raise r.fail("the eval key map is empty")
    return tuple(keys)


def _digits_rule(p: OpenFHEParams) -> str:
    """Why a key switching key of ``p`` holds :func:`key_digits` pairs, in words."""
    if p.key_switching != "BV":
        return f"its dnum is {p.dnum}"
    if p.digit_size == 0:
        return f"BV key switching with digit size 0 makes one per tower of Q ({len(p.moduli)})"
    return (
        f"BV key switching with digit size {p.digit_size} makes ceil(bits(q_i) / "
        f"{p.digit_size}) per tower of Q ({len(bv_windows(p))})"
    )


def read(source: Source) -> Read:
    """The object of an OpenFHE JSON file: a path, or the JSON itself (text or bytes).

    Returns an :class:`OpenFHECiphertext`, :class:`OpenFHEPublicKey`, :class:`OpenFHESecretKey`,
    a tuple of :class:`OpenFHEEvalKey` (eval mult keys) or :class:`OpenFHEParams` (a context).

    Raises:
        FileNotFoundError: no such file.
        TypeError: a source of another type.
        ValueError: not JSON, not an OpenFHE CKKS object of these kinds, or an object whose
            words break a rule (the message names the file, where, and what is accepted).
    """
    return _read(source)[0]


def _read(source: Source) -> tuple[Read, str]:
    r = load(source, ACCEPTED)
    name = r.name
    top = r.get(r.doc, "value0", "the top level")
    if isinstance(top, list):
        return _eval_keys(r, top), name
    data = r.deref(top, "the top level")
    if isinstance(data, dict) and isinstance(data.get("kt"), dict) and "cc" in data:
        return _params(r, data, "the crypto context"), name
    if not isinstance(data, dict):
        raise r.fail("the top level holds no object")
    if "h" in data:
        params, tag = _crypto_object(r, data, "public key")
        w, moduli, roots, form = _parts(r, data["h"], "the public key (h)", params)
        if len(w) != 2:
            raise r.fail(f"the public key has {len(w)} polynomials, not 2 (b, a)")
        return OpenFHEPublicKey(w, moduli, roots, form, params, tag, name), name
    if isinstance(data.get("s"), dict):
        params, tag = _crypto_object(r, data, "private key")
        w, moduli, roots, form = _parts(r, [data["s"]], "the private key (s)", params)
        return OpenFHESecretKey(w, moduli, roots, form, params, tag, name), name
    if "v" in data and any(k in data for k in ("sl", "l", "d", "e")):
        return _ciphertext(r, data), name
    raise r.fail(f"the object has the fields {sorted(data)}, none of the kinds read here")


def _ciphertext(r: Archive, data: dict[str, Json]) -> OpenFHECiphertext:
    params, tag = _crypto_object(r, data, "ciphertext")
    encoding = r.int_(data, "e", "the ciphertext")
    if encoding != CKKS_PACKED:
        raise r.fail(f"the ciphertext's encoding is {encoding}, not CKKS packed ({CKKS_PACKED})")
    w, moduli, roots, form = _parts(r, data["v"], "the ciphertext (v)", params, "prefix")
    if len(w) < 2:
        raise r.fail(f"the ciphertext has {len(w)} polynomial: 2 or more (c_0, c_1, ...)")
    scale = r.number(r.get(data, "s", "the ciphertext"), "the ciphertext's scaling factor (s)")
    degree, level = r.int_(data, "d", "the ciphertext"), r.int_(data, "l", "the ciphertext")
    slots = r.int_(data, "sl", "the ciphertext")
    wrong = ciphertext_fault(
        params, towers=len(moduli), scale=float(scale), degree=degree, level=level, slots=slots
    )
    if wrong:
        raise r.fail(f"the ciphertext: {wrong}")
    return OpenFHECiphertext(
        w, moduli, roots, form, params, tag, r.name, float(scale), degree, level, slots
    )


T = TypeVar("T")

_KINDS: dict[type, str] = {
    OpenFHECiphertext: "a ciphertext",
    OpenFHEPublicKey: "a public key",
    OpenFHESecretKey: "a private key",
    OpenFHEParams: "a crypto context",
    tuple: "eval mult keys",
}


def _typed(source: Source, kind: type[T]) -> T:
    value, name = _read(source)
    if not isinstance(value, kind):
        raise ValueError(f"{name} holds {_KINDS[type(value)]}, not {_KINDS[kind]}")
    return value


def read_ciphertext(source: Source) -> OpenFHECiphertext:
    """:func:`read`, for a ciphertext; ``ValueError`` for any other object."""
    return _typed(source, OpenFHECiphertext)


def read_public_key(source: Source) -> OpenFHEPublicKey:
    """:func:`read`, for a public key; ``ValueError`` for any other object."""
    return _typed(source, OpenFHEPublicKey)


def read_secret_key(source: Source) -> OpenFHESecretKey:
    """:func:`read`, for a private key; ``ValueError`` for any other object."""
    return _typed(source, OpenFHESecretKey)


def read_eval_mult_keys(source: Source) -> tuple[OpenFHEEvalKey, ...]:
    """:func:`read`, for eval mult keys (``s^2``'s first); ``ValueError`` otherwise."""
    return _typed(source, tuple)


def read_context(source: Source) -> OpenFHEParams:
    """:func:`read`, for a crypto context's parameters; ``ValueError`` otherwise."""
    return _typed(source, OpenFHEParams)
