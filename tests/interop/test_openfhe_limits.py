"""OpenFHE files as a hostile user edits them: metadata OpenFHE itself would refuse is refused.

Oracles, none of them Ren's reader: OpenFHE's rules, restated here from its source
(``GetDefaultSlotSize`` in ``ckkspackedencoding.h``: slots a power of two up to ``n/2``;
``ModReduceInternalInPlace`` and ``LevelReduceInternalInPlace``: the level counts the towers
dropped; ``GetModReduceFactor``: in the FIXED modes the scaling factor is ``2^(m d)``;
``PrecomputeCRTTables``: ``dnum`` digits of ``ceil(L / dnum)`` towers; the CKKS parameter
generation: a batch size of 0 or a power of two up to ``n/2``; ``ValidateParameters``: a BV digit
size of at most 30; BV's ``KeySwitchGen``: a pair per tower, or ``ceil(bits(q_i) / B)`` per tower
with digit size ``B``, over ``Q``'s towers alone), and the facts of OpenFHE's own files in
``tests/vectors/openfhe`` and ``tests/vectors/openfhe-bv`` (their manifests). OpenFHE's JSON
carries no hash or checksum, so an edit needs nothing recomputed to reach the deeper checks.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ren.interop import openfhe as of

VECTORS = Path(__file__).resolve().parents[1] / "vectors" / "openfhe"
BV = VECTORS.parent / "openfhe-bv"  # digit size 0; BV / "digit-size-30" digit size 30
MANIFEST = json.loads((VECTORS / "manifest.json").read_text())
P = MANIFEST["parameters"]  # n = 64, 3 towers, FIXEDMANUAL, scaling mod size 30, dnum 2
DOCS = {name: json.loads((VECTORS / name).read_text()) for name in ("a.json", "context.json")}
DOCS["eval_mult_key.json"] = json.loads((VECTORS / "eval_mult_key.json").read_text())
DOCS["public_key.json"] = json.loads((VECTORS / "public_key.json").read_text())
DOCS["bv/context.json"] = json.loads((BV / "context.json").read_text())
DOCS["bv/eval_mult_key.json"] = json.loads((BV / "eval_mult_key.json").read_text())
DOCS["bv30/eval_mult_key.json"] = json.loads((BV / "digit-size-30/eval_mult_key.json").read_text())
BV_MODULI = tuple(json.loads((BV / "manifest.json").read_text())["parameters"]["moduli"])


def data(doc: dict) -> dict:
    return doc["value0"]["ptr_wrapper"]["data"]


def crypto_params(doc: dict) -> dict:
    """The crypto parameters of a context file (their base classes nest as ``value0``)."""
    return data(doc)["cc"]["ptr_wrapper"]["data"]["value0"]


def ct_params(doc: dict) -> dict:
    return data(doc)["value0"]["cc"]["ptr_wrapper"]["data"]["cc"]["ptr_wrapper"]["data"]["value0"]


def key_data(doc: dict) -> dict:
    """The first eval key of an eval mult key file (``ak``, ``bk`` and its context)."""
    return doc["value0"][0]["value"][0]["ptr_wrapper"]["data"]


def key_params(doc: dict) -> dict:
    """The crypto parameters of an eval key's own crypto context."""
    context = key_data(doc)["value0"]["value0"]["value0"]["cc"]["ptr_wrapper"]["data"]
    return context["cc"]["ptr_wrapper"]["data"]["value0"]


def layer(node: dict, key: str) -> dict:
    """The nested base class (``value0`` chain) of ``node`` that holds ``key``."""
    while key not in node:
        node = node["value0"]
    return node


def edited(name: str, edit: Any) -> str:
    doc = copy.deepcopy(DOCS[name])
    edit(doc)
    return json.dumps(doc)


def set_ct(**fields: Any) -> Any:
    return lambda doc: data(doc).update(fields)


def set_param(key: str, value: Any, where: Any = crypto_params) -> Any:
    return lambda doc: layer(where(doc), key).update({key: value})


def enp(doc: dict) -> dict:
    return layer(crypto_params(doc), "enp")["enp"]["ptr_wrapper"]["data"]


def tower_params(doc: dict) -> dict:
    elp = layer(crypto_params(doc), "elp")["elp"]["ptr_wrapper"]["data"]
    return elp["p"][1]["ptr_wrapper"]["data"]["value0"]


#: name -> (file, its edit, what the refusal names)
BAD: dict[str, tuple[str, Any, str]] = {
    "slots -1": ("a.json", set_ct(sl=-1), "the slots (sl) are -1"),
    "slots 0": ("a.json", set_ct(sl=0), "the slots (sl) are 0"),
    "slots 24": ("a.json", set_ct(sl=24), "the slots (sl) are 24: a power of two"),
    "slots 64": ("a.json", set_ct(sl=64), "up to n/2 = 32"),
    "degree 0": ("a.json", set_ct(d=0), "the noise scale degree (d) is 0"),
    "degree 2": ("a.json", set_ct(d=2), "noise scale degree (d) 2 disagrees with the scaling"),
    "degree 4 and scale": ("a.json", set_ct(d=4, s=2.0**120), "reaches the modulus"),
    "level 1 of 3 towers": ("a.json", set_ct(l=1), "the level (l) is 1 with 3 towers"),
    "level -1": ("a.json", set_ct(l=-1), "the level (l) is -1"),
    "scale nan": ("a.json", set_ct(s=math.nan), "scaling factor (s) is nan"),
    "scale inf": ("a.json", set_ct(s=math.inf), "scaling factor (s) is inf"),
    "scale 0.5": ("a.json", set_ct(s=0.5), "scaling factor (s) is 0.5"),
    "scale text": ("a.json", set_ct(s="2^30"), "scaling factor (s) is '2^30', not a number"),
    "scale 10^400": ("a.json", set_ct(s=10**400), "not a number"),
    "scale -10^400": ("a.json", set_ct(s=-(10**400)), "not a number"),
    "sigma -10^400": ("context.json", set_param("dp", -(10**400)), "sigma (dp) is -1000"),
    "one part": ("a.json", lambda d: data(d)["v"].pop(), "has 1 polynomial: 2 or more"),
    "key tag": ("a.json", lambda d: data(d)["value0"].update(kt=7), "key tag (kt) is 7"),
    "batch size 3": ("context.json", lambda d: enp(d).update(bs=3), "the batch size (bs) is 3"),
    "batch size 64": ("context.json", lambda d: enp(d).update(bs=64), "up to n/2 = 32"),
    "dnum 0": ("context.json", set_param("dnum", 0), "dnum is 0"),
    "dnum 4": ("context.json", set_param("dnum", 4), "dnum is 4"),
    "dnum text": ("context.json", set_param("dnum", "2"), "digits (dnum) is '2'"),
    "sigma text": ("context.json", set_param("dp", "nan"), "sigma (dp) is 'nan'"),
    "sigma 0": ("context.json", set_param("dp", 0.0), "sigma (dp) is 0.0"),
    "depth -1": ("context.json", set_param("muld", -1), "depth (muld) is -1"),
    "scaling bits 0": ("context.json", lambda d: enp(d).update(m=0), "modulus size (m) is 0"),
    "root": (
        "context.json",
        lambda d: tower_params(d)["ru"].update(v=3),
        "tower 1's root of unity (ru) 3 is not a primitive 128-th root",
    ),
    "modulus": (
        "context.json",
        lambda d: tower_params(d)["cm"].update(v=1073741825),
        "are no RNS basis for n=64: modulus 1073741825 is not prime",
    ),
    "ciphertext's context": ("a.json", set_param("dnum", 0, ct_params), "dnum is 0"),
    "BV digit size 31": ("bv/context.json", set_param("rw", 31), "the digit size (rw) is 31"),
    "digit size -1": ("context.json", set_param("rw", -1), "the digit size (rw) is -1"),
    "digit size 2^32": (
        "context.json",
        set_param("rw", 2**32),
        "is 4294967296: an unsigned 32-bit number",
    ),
    "digit size text": ("bv/context.json", set_param("rw", "30"), "digit size (rw) is '30'"),
    "digit size float": ("bv/context.json", set_param("rw", 30.0), "digit size (rw) is 30.0"),
    "BV key's digit size": (
        "bv/eval_mult_key.json",
        set_param("rw", 30, key_params),
        "holds 3 digits (ak, bk); BV key switching with digit size 30 makes ceil(bits(q_i) / "
        "30) per tower of Q (5)",
    ),
    "BV key as HYBRID's": (
        "bv/eval_mult_key.json",
        set_param("ks", 2, key_params),
        "holds 3 digits (ak, bk); its dnum is 2",
    ),
    "BV key without a tower": (
        "bv/eval_mult_key.json",
        lambda d: [poly["v"].pop() for k in ("ak", "bk") for poly in key_data(d)[k]],
        "is over the towers [35184372088321, 1073741441] (roots",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_metadata_openfhe_refuses_is_refused(case: str) -> None:
    name, edit, words = BAD[case]
    with pytest.raises(ValueError, match="accepted") as info:
        of.read(edited(name, edit))
    assert words in str(info.value)


def test_towers_must_be_the_crypto_contexts() -> None:
    def drop_last(doc: dict) -> None:
        for poly in data(doc)["h"]:
            poly["v"].pop()

    with pytest.raises(
        ValueError, match=r"public key \(h\) is over the towers \[35184372088321, 1073741441\]"
    ):
        of.read(edited("public_key.json", drop_last))
    assert of.read_ciphertext(VECTORS / "ab_rescaled.json").level == 1  # two towers: level 1


def test_an_eval_key_holds_dnum_digits() -> None:
    def one_digit(doc: dict) -> None:
        key = doc["value0"][0]["value"][0]["ptr_wrapper"]["data"]
        key["ak"].pop()
        key["bk"].pop()

    with pytest.raises(ValueError, match=r"holds 1 digits \(ak, bk\); its dnum is 2"):
        of.read(edited("eval_mult_key.json", one_digit))


def test_json_nested_too_deeply_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot be read"):
        of.read(b'{"value0": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")


# --- a fuzz: the ciphertext's fields, OpenFHE's rules as the oracle -----------------------------


def openfhe_refuses(f: dict[str, Any]) -> bool:
    """Whether OpenFHE would not make or decode ``a.json`` (3 towers) with these fields."""
    n, m, towers = P["ring_dim"], P["scaling_mod_size"], len(P["moduli"])
    sl, lv, d, s = f["sl"], f["l"], f["d"], f["s"]
    if not isinstance(s, int | float) or isinstance(s, bool) or not math.isfinite(s) or s < 1:
        return True
    if sl < 1 or sl & (sl - 1) or sl > n // 2 or lv != 0 or d < 1:
        return True
    bits = math.prod(P["moduli"][:towers]).bit_length()
    return s != 2.0 ** (m * d) or math.log2(s) >= bits - 1


@given(
    fields=st.fixed_dictionaries(
        {},
        optional={
            "sl": st.sampled_from([-1, 0, 1, 3, 8, 16, 32, 33, 64, 2**40]),
            "l": st.sampled_from([-1, 0, 1, 2, 3]),
            "d": st.sampled_from([-1, 0, 1, 2, 3, 4]),
            "s": st.sampled_from([math.nan, -1.0, 0.0, 0.5, 1.0, 2.0**30, 2.0**60, 2.0**90, 1e308]),
        },
    )
)
def test_every_ciphertext_field_is_held_to_openfhes_rules(fields: dict[str, Any]) -> None:
    values = {k: data(DOCS["a.json"])[k] for k in ("sl", "l", "d", "s")} | fields
    text = edited("a.json", set_ct(**fields))
    if openfhe_refuses(values):
        with pytest.raises(ValueError, match="accepted"):
            of.read(text)
    else:
        ct = of.read_ciphertext(text)
        assert (ct.slots, ct.level, ct.noise_scale_degree, ct.scale) == (
            values["sl"],
            values["l"],
            values["d"],
            values["s"],
        )


# --- a fuzz: a BV key's digits, OpenFHE's rules as the oracle ------------------------------------


def bv_pairs(size: int) -> int:
    """The pairs OpenFHE's BV ``KeySwitchGen`` makes over the BV files' towers."""
    return len(BV_MODULI) if size == 0 else sum(-(-q.bit_length() // size) for q in BV_MODULI)


def openfhe_refuses_key(technique: int, size: Any, pairs: int) -> bool:
    """Whether OpenFHE would not make (or use) a key of ``pairs`` pairs over ``Q``'s 3 towers
    alone in a context with key switching ``technique`` (1 BV, 2 HYBRID) and digit size
    ``size``."""
    if type(size) is not int or not 0 <= size < 2**32:
        return True
    if technique == 2:  # HYBRID keys hold the towers of P too
        return True
    return size > 30 or pairs != bv_pairs(size)


@given(
    base=st.sampled_from(["bv/eval_mult_key.json", "bv30/eval_mult_key.json"]),
    technique=st.sampled_from([1, 2]),
    size=st.sampled_from([-1, 0, 1, 15, 16, 23, 30, 31, 2**32, "30", 30.0, None]),
    change=st.sampled_from([-2, -1, 0, 1, 2]),
)
def test_every_bv_key_is_held_to_openfhes_rules(
    base: str, technique: int, size: Any, change: int
) -> None:
    def edit(doc: dict) -> None:
        params = layer(key_params(doc), "ks")
        params["ks"] = technique
        layer(key_params(doc), "rw")["rw"] = size
        key = key_data(doc)
        for name in ("ak", "bk"):
            if change < 0:
                del key[name][change:]
            else:
                key[name].extend(copy.deepcopy(key[name][:change]))

    pairs = len(key_data(DOCS[base])["ak"]) + change
    text = edited(base, edit)
    if openfhe_refuses_key(technique, size, pairs):
        with pytest.raises(ValueError, match="accepted"):
            of.read(text)
    else:
        (key,) = of.read_eval_mult_keys(text)
        assert key.params.key_switching == "BV" and key.params.digit_size == size
        assert key.words.shape == (2 * pairs, len(BV_MODULI), key.params.n)
        assert key.p_moduli == () and len(of.digit_towers(key)) == pairs == len(of.gadget(key))
