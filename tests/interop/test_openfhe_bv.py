"""OpenFHE's BV key switching, restated and checked word for word against OpenFHE's own files.

OpenFHE's ``KeySwitchTechnique.BV`` (``src/pke/lib/keyswitch/keyswitch-bv.cpp``; Brakerski and
Vaikuntanathan's switch in RNS form) works over the towers ``q_0 .. q_{L-1}`` of ``Q`` alone:
no special modulus, nothing divided at the end. With digit size ``B`` (``SetDigitSize``, saved
as ``rw``; 0 is OpenFHE's default):

**The key** (``KeySwitchGenInternal(oldKey, newKey)``), switching ``s'`` (``s^2`` for the
relinearization key) to ``s``, one pair ``(b_j, a_j)`` per digit ``j``, all in EVALUATION form::

    b_j = g_j s' - a_j s - e_j  (mod Q),    a_j uniform modulo every tower

* ``B = 0``: one digit per tower ``i`` (``L`` pairs); ``g_i = T_i``, the CRT idempotent (1
  modulo ``q_i``, 0 modulo the others): ``b_i``'s tower ``i`` holds ``s'_i - a_i s - e_i``, its
  other towers ``-a_i s - e_i``. ``s'`` lives in tower ``i`` of digit ``i`` only.
* ``B > 0``: tower ``i`` has ``w_i = ceil(bits(q_i) / B)`` windows (``arrWindows``); digit ``(i,
  k)`` has ``g = 2^(k B) T_i`` (``PowersOfBase``: ``s'_i 2^(k B) mod q_i`` in tower ``i``).
  Digits run tower by tower, window by window: ``sum_i w_i`` pairs.
* ``e_j`` is one integer polynomial (OpenFHE's discrete Gaussian, read in every tower; CKKS's
  noise scale is 1). In the 1.6.1 wheel's keys its deviation is near 1, not the ``sigma = 3.19``
  of the parameters (``ren.interop.openfhe``, *Key errors*: the same ``private(dug, dgg)``).

**The switch** of a part ``c`` over ``l + 1`` towers (``KeySwitchCore`` = ``EvalFastKeySwitchCore
(EvalKeySwitchPrecomputeCore(c))``; a product's ``c_2`` in ``EvalMult``): ``CRTDecompose(B)``
reads ``c``'s coefficient form and makes integer polynomials ``D_j``:

* ``B = 0``: ``D_i = [c]_{q_i}`` centred: the residue ``r`` in ``[0, q_i)`` is kept as it is in
  tower ``i`` and read as ``r - q_i`` (where ``r > (q_i - 1) / 2``) modulo every other tower
  (``SwitchModulus``), i.e. the representative in ``[-(q_i - 1)/2, (q_i - 1)/2]``, modulo every
  tower. Ren's ``Poly.to_ring`` from ``q_i`` alone is that lift.
* ``B > 0`` (the 1.6.1 wheel; see below): ``v`` = the centred ``[c]_{q_i}``; for ``k < w_i - 1``:
  ``d = v mod 2^B``, ``d -= 2^B`` when ``d >= 2^(B-1)``, ``D_{i,k} = d``, ``v = (v - d) / 2^B``;
  the last window keeps what remains, ``D_{i,w_i-1} = v``. So ``sum_k D_{i,k} 2^(k B)`` is the
  centred residue exactly, each digit but the last in ``[-2^(B-1), 2^(B-1))``.

Each ``D_j`` is NTT'd in every tower, the key's pairs cut to the ``l + 1`` towers
(``DropLastElements``), and ``(d_0, d_1) = (sum_j D_j b_j, sum_j D_j a_j)``; ``EvalMult``
returns ``(c_0 + d_0, c_1 + d_1)``. As ``sum_j D_j g_j = c (mod Q)``, ``d_0 + d_1 s = c s' -
sum_j D_j e_j``: the noise is the digits times the key's errors, ``q_i / 2`` times them with
``B = 0`` (no ``P`` to divide by), ``2^(B-1)`` times with windows.

**OpenFHE's source and its wheel differ at B > 0.** The newest source the project could read
(1.5.1) has ``CRTDecompose`` take *unsigned* windows of the residue in ``[0, q_i)``
(``GetDigitAtIndexForBase``: ``(r >> k B) mod 2^B``), each lifted centred as a residue modulo
``q_i``. The 1.6.1 wheel's words are not those (:func:`check_source_windows_differ`: every word
of ``ab`` differs); probing the wheel (a ``c_2`` of chosen constants, relinearized by OpenFHE,
the digits solved from its key) gave the balanced windows of the centred residue above, which
reproduce every word of ``ab`` at each digit size tried (0, 1, 7, 10, 17, 20, 29, 30). With
``B = 0`` source and wheel agree.

Oracles: the digits are computed here with Python integers from the rule above; products and
sums are Ren's ring primitives (``Poly``, ``ntt``, ``intt``, ``*``, ``+``) on OpenFHE's own
words (its roots are Ren's, checked, so its EVALUATION words are Ren's NTT limbs); those checks
use no Ren key-switching class. Then :func:`check_ren_bv` runs Ren's own technique
(``ren.schemes.rlwe.keyswitch.BV``) on OpenFHE's key and product: the same words. The files
are ``tests/vectors/openfhe-bv`` (digit size 0) and its ``digit-size-30`` folder (their
``README.md``); ``test_vectors_made_now`` reruns every check on vectors OpenFHE makes during
the test, at more digit sizes.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ren import Poly
from ren.interop import openfhe as of
from ren.ring import Domain, RingSpec, primitive_root_2n
from ren.schemes.rlwe.keys import KeySwitchKey
from ren.schemes.rlwe.keyswitch import BV
from tests.interop.test_openfhe import check_decrypt, check_files_parse, check_ntt, manifest
from tests.oracles import centered

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "tests" / "vectors" / "openfhe-bv"
FOLDERS = {"digit_size=0": VECTORS, "digit_size=30": VECTORS / "digit-size-30"}
SCRIPT = ROOT / "scripts" / "peers" / "openfhe_vectors.py"


# --- the oracle: OpenFHE's BV steps with Python integers and Ren's ring primitives --------------


def windows(moduli: tuple[int, ...], size: int) -> list[tuple[int, int]]:
    """``(tower i, window k)`` of each digit, in OpenFHE's order."""
    if size == 0:
        return [(i, 0) for i in range(len(moduli))]
    return [(i, k) for i, q in enumerate(moduli) for k in range(-(-q.bit_length() // size))]


def digits(residues: list[list[int]], moduli: tuple[int, ...], size: int) -> list[list[int]]:
    """The integer digits ``D_j`` of a polynomial given by its residues (coefficient form).

    The wheel's ``CRTDecompose(size)``: each tower's centred residue, whole (``size`` 0) or in
    balanced windows of ``size`` bits, the last window keeping what remains.
    """
    out = []
    for i, q in enumerate(moduli):
        v = [centered(r, q) for r in residues[i]]
        count = 1 if size == 0 else -(-q.bit_length() // size)
        for _ in range(count - 1):
            d = [x % (1 << size) for x in v]
            d = [x - (1 << size) if x >= 1 << (size - 1) else x for x in d]
            v = [(x - y) >> size for x, y in zip(v, d, strict=True)]
            out.append(d)
        out.append(v)
    return out


def source_windows(residues: list[list[int]], moduli: tuple[int, ...], size: int) -> list:
    """The digits as OpenFHE 1.5.1's source writes them: unsigned windows of the residue in
    ``[0, q_i)``, each read centred modulo ``q_i``."""
    mask = (1 << size) - 1
    return [
        [centered((r >> (k * size)) & mask, moduli[i]) for r in residues[i]]
        for i, k in windows(moduli, size)
    ]


def as_poly(words: np.ndarray, ring: RingSpec) -> Poly:
    """OpenFHE's EVALUATION words as a Ren poly in NTT form (its roots are Ren's: checked)."""
    return Poly.from_limbs(words, ring, Domain.NTT)


def key_pairs(d: Path) -> tuple[RingSpec, list[tuple[Poly, Poly]]]:
    (key,) = of.read_eval_mult_keys(d / "eval_mult_key.json")
    ring = RingSpec(key.params.n, key.moduli)
    pairs = [
        (as_poly(key.words[2 * j], ring), as_poly(key.words[2 * j + 1], ring))
        for j in range(len(key.words) // 2)
    ]
    return ring, pairs


def digit_size(d: Path) -> int:
    return manifest(d)["parameters"]["digit_size"]


def relinearize(d: Path, decompose=digits) -> tuple[Poly, Poly]:
    """``(c_0 + sum_j D_j b_j, c_1 + sum_j D_j a_j)`` of ``ab_tensor.json`` and the BV key."""
    ct = of.read_ciphertext(d / "ab_tensor.json")
    _, pairs = key_pairs(d)
    c0, c1, c2 = (as_poly(w, RingSpec(ct.params.n, ct.moduli)) for w in ct.words)
    residues = [[int(x) for x in row] for row in c2.intt().limbs()]
    d0, d1 = c0, c1
    for digit, (b, a) in zip(decompose(residues, ct.moduli, digit_size(d)), pairs, strict=True):
        dn = Poly(digit, c2.ring).ntt()
        d0, d1 = d0 + dn * b.to_ring(c2.ring), d1 + dn * a.to_ring(c2.ring)
    return d0, d1


def gadget(ring: RingSpec, i: int, weight: int) -> Poly:
    """``weight T_i``: ``weight`` in tower ``i``, 0 in the others (a constant, NTT form)."""
    rows = [[weight % q if t == i else 0] * ring.n for t, q in enumerate(ring.moduli)]
    return Poly.from_limbs(np.array(rows, dtype=np.uint64), ring, Domain.NTT)


def key_errors(d: Path) -> list[list[int]]:
    """``b_j + a_j s - 2^(k B) T_i s^2`` for each digit ``(i, k)``, centred coefficients."""
    ring, pairs = key_pairs(d)
    sk = of.read_secret_key(d / "secret_key.json")
    s = as_poly(sk.words[0], ring)
    s2 = s * s
    size = digit_size(d)
    return [
        (b + a * s - s2 * gadget(ring, i, 2 ** (k * size))).tolist(centered=True)
        for (b, a), (i, k) in zip(pairs, windows(ring.moduli, size), strict=True)
    ]


# --- the checks, each on a folder of vectors ---------------------------------------------------


def check_reader(d: Path) -> None:
    """The BV key reads: no P, one pair per digit, the words the file holds, Ren's roots."""
    params = of.read_context(d / "context.json")
    (key,) = of.read_eval_mult_keys(d / "eval_mult_key.json")
    assert params.key_switching == key.params.key_switching == "BV"
    assert params.digit_size == key.params.digit_size == digit_size(d)
    assert key.moduli == params.moduli and key.p_moduli == () and key.power == 2
    assert len(key.words) == 2 * len(windows(params.moduli, params.digit_size))
    doc = json.loads((d / "eval_mult_key.json").read_text())
    raw = doc["value0"][0]["value"][0]["ptr_wrapper"]["data"]
    for j, (b, a) in enumerate(zip(raw["bk"], raw["ak"], strict=True)):
        for k, poly in enumerate((b, a)):
            towers = [t["v"]["ptr_wrapper"]["data"]["v"] for t in poly["v"]]
            assert np.array_equal(key.words[2 * j + k], np.array(towers, dtype=np.uint64))
    for q, root in zip(key.moduli, key.roots, strict=True):
        assert root == primitive_root_2n(q, params.n)  # EVALUATION words are Ren's NTT limbs


def check_key_errors(d: Path) -> None:
    """(a) Each pair's ``b_j + a_j s - 2^(k B) T_i s^2`` is small: the key is as stated."""
    sigma = of.read_context(d / "context.json").sigma
    errors = key_errors(d)
    for j, e in enumerate(errors):
        assert 0 < max(map(abs, e)) <= 10 * sigma, f"digit {j}"
    sk = of.read_secret_key(d / "secret_key.json")
    (key,) = of.read_eval_mult_keys(d / "eval_mult_key.json")
    ours = [err.tolist(centered=True) for err in of.eval_key_errors(key, sk)]
    assert ours == errors  # ren.interop.openfhe's gadget is the one stated here


def check_wrong_gadget_is_not_small(d: Path) -> None:
    """``s^2`` in another tower (or another window's power) leaves an error of about ``Q``."""
    ring, pairs = key_pairs(d)
    s = as_poly(of.read_secret_key(d / "secret_key.json").words[0], ring)
    (b, a), (i, k) = pairs[-1], windows(ring.moduli, digit_size(d))[-1]
    wrong = b + a * s - s * s * gadget(ring, (i + 1) % ring.L, 2 ** (k * digit_size(d)))
    assert max(map(abs, wrong.tolist(centered=True))) > 2**40


def check_relinearization(d: Path) -> None:
    """(b) Relinearizing ``ab_tensor`` with the key, as stated, gives OpenFHE's ``ab`` word for
    word."""
    ab = of.read_ciphertext(d / "ab.json")
    for k, ours in enumerate(relinearize(d)):
        assert np.array_equal(ours.limbs(), ab.words[k]), f"part {k}"


@dataclasses.dataclass(frozen=True)
class Chain:
    """What ``ren.schemes.rlwe.keyswitch.BV`` reads of its parameters, with OpenFHE's moduli.

    Ren's ``Params`` choose their own primes; BV needs only the ciphertext moduli, the ring of a
    level and the digit primes (none: digit size 0).
    """

    n: int
    q_moduli: tuple[int, ...]
    digit_bits: None = None

    def ring(self, level: int) -> RingSpec:
        return RingSpec(self.n, self.q_moduli[: level + 1])

    @property
    def bv_digits(self) -> tuple[tuple[int, ...], ...]:
        return tuple(() for _ in self.q_moduli)


def check_ren_bv(d: Path) -> None:
    """Ren's own BV technique, given OpenFHE's key, relinearizes ``ab_tensor`` to OpenFHE's
    ``ab`` word for word (digit size 0: Ren's RNS digits are OpenFHE's). With a digit size,
    OpenFHE's digits are balanced base-``2^B`` windows and Ren's ``digit_bits`` are residues
    modulo primes ``1 mod 2n``: other digits, other words, checked by the oracles above."""
    if digit_size(d) != 0:
        return
    tensor = of.read_ciphertext(d / "ab_tensor.json")
    ring = RingSpec(tensor.params.n, tensor.moduli)
    c0, c1, c2 = (as_poly(w, ring) for w in tensor.words)
    _, pairs = key_pairs(d)
    technique = BV(Chain(ring.n, ring.moduli))
    d0, d1 = technique.switch(c2, KeySwitchKey(None, tuple(pairs)), ring.L - 1)
    ab = of.read_ciphertext(d / "ab.json")
    for k, ours in enumerate((c0 + d0, c1 + d1)):
        assert np.array_equal(ours.limbs(), ab.words[k]), f"part {k}"


def check_source_windows_differ(d: Path) -> None:
    """With windows, the 1.5.1 source's unsigned digits do not give the wheel's words (and do
    decrypt: both are sound decompositions)."""
    if digit_size(d) == 0:
        return
    ab = of.read_ciphertext(d / "ab.json")
    ours = relinearize(d, source_windows)
    assert all(not np.any(p.limbs() == w) for p, w in zip(ours, ab.words, strict=True))
    sk = of.read_secret_key(d / "secret_key.json")
    s = as_poly(sk.words[0], ours[0].ring)
    m = (ours[0] + ours[1] * s).tolist(centered=True)
    want = manifest(d)["ciphertexts"]["ab.json"]["plain"]
    assert max(abs(x - y) for x, y in zip(m, want, strict=True)) < 2**40  # both near a b 2^60


def check_noise(d: Path) -> None:
    """OpenFHE's ``ab`` decrypts to ``ab_tensor``'s ``m`` minus ``sum_j D_j e_j`` exactly, and
    decodes to ``a b`` within what that noise decodes to (``q_i / 2`` times the key's errors
    with digit size 0: about 2^-9 at ``n = 64``, scale ``2^60``)."""
    sk = of.read_secret_key(d / "secret_key.json")
    tensor = of.read_ciphertext(d / "ab_tensor.json")
    ab = of.read_ciphertext(d / "ab.json")
    ring = RingSpec(tensor.params.n, tensor.moduli)
    c2 = as_poly(tensor.words[2], ring)
    residues = [[int(x) for x in row] for row in c2.intt().limbs()]
    noise = [0] * ring.n  # - sum_j D_j e_j: key_errors are b_j + a_j s - g_j s^2 = -e_j
    for digit, e in zip(digits(residues, ring.moduli, digit_size(d)), key_errors(d), strict=True):
        product = (Poly(digit, ring) * Poly(e, ring)).tolist(centered=True)  # below Q/2: exact
        noise = [x + y for x, y in zip(noise, product, strict=True)]
    plain_ab = of.decrypt(ab, sk).tolist(centered=True)
    plain_tensor = of.decrypt(tensor, sk).tolist(centered=True)
    assert plain_ab == [x + y for x, y in zip(plain_tensor, noise, strict=True)]
    values = {k: np.array([complex(*p) for p in v]) for k, v in manifest(d)["values"].items()}
    got, exact = of.decode(of.decrypt(ab, sk), ab), values["a"] * values["b"]
    noise_slots = of.decode(Poly(noise, ring), ab)
    assert np.max(np.abs(got - exact)) <= np.max(np.abs(noise_slots)) + 2.0**-12


CHECKS = [
    check_files_parse,
    check_decrypt,
    check_ntt,
    check_reader,
    check_key_errors,
    check_wrong_gadget_is_not_small,
    check_relinearization,
    check_ren_bv,
    check_source_windows_differ,
    check_noise,
]


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__.removeprefix("check_"))
@pytest.mark.parametrize("folder", sorted(FOLDERS))
def test_committed_vectors(folder: str, check) -> None:
    check(FOLDERS[folder])


def test_digits_sum_to_the_centred_residue() -> None:
    """Balanced windows: every digit but the last in ``[-2^(B-1), 2^(B-1))``; they sum back."""
    moduli = (35184372088321, 1073741441, 1073741953)
    rng = np.random.default_rng(7)
    residues = [[int(rng.integers(0, q)) for _ in range(64)] + [0, q - 1, q // 2] for q in moduli]
    for size in (0, 1, 7, 17, 30):
        ds, spots = digits(residues, moduli, size), windows(moduli, size)
        for i, q in enumerate(moduli):
            mine = [(k, ds[j]) for j, (t, k) in enumerate(spots) if t == i]
            total = [sum(dk[c] << (k * size) for k, dk in mine) for c in range(67)]
            assert total == [centered(r, q) for r in residues[i]]
            for _, dk in mine[:-1]:
                assert all(-(1 << (size - 1)) <= x < 1 << (size - 1) for x in dk)


def test_the_readme_names_every_file() -> None:
    readme = (VECTORS / "README.md").read_text()
    files = sorted(p for p in VECTORS.rglob("*") if p.is_file() and p.name != "README.md")
    for path in files:
        assert f"`{path.relative_to(VECTORS).as_posix()}`" in readme, path
    assert sum(p.stat().st_size for p in files) < 1_000_000


def test_hybrid_vectors_keep_no_digit_size() -> None:
    """The HYBRID context's digit size is 0 (OpenFHE's default); its key still has P."""
    (key,) = of.read_eval_mult_keys(ROOT / "tests" / "vectors" / "openfhe" / "eval_mult_key.json")
    assert key.params.digit_size == 0 and len(key.p_moduli) == 2
    assert math.prod(key.p_moduli) > 2**100


# --- vectors made now, where OpenFHE's Python is installed --------------------------------------


def _peer():
    spec = importlib.util.spec_from_file_location(
        "openfhe_peer", ROOT / "benchmarks" / "openfhe_peer.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("size", [0, 1, 7, 30], ids=lambda b: f"digit_size={b}")
def test_vectors_made_now(tmp_path: Path, size: int) -> None:
    peer = _peer()
    python = peer.find_python()
    if python is None:
        pytest.skip(peer.skip_reason())
    out = tmp_path / f"openfhe-bv-{size}"
    cmd = [python, str(SCRIPT), str(out), "--key-switching", "BV", "--digit-size", str(size)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=600)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        p.name for p in FOLDERS["digit_size=0"].iterdir() if p.is_file() and p.name != "README.md"
    )
    for check in CHECKS:
        check(out)
