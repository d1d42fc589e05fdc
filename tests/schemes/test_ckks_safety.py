"""CKKS is safe to share: the security check, key fingerprints, pickle and copies, crafted
blobs, bad input, and threads.

The oracles: the secret key itself (recovered from a public key made with no error, compared limb
for limb), SHA-256 of the public key's residues computed here, the bytes of the secret key
searched for in every pickle, the byte format as ``docs/ckks.md`` describes it (the crafted blobs
are framed by ``tests/schemes/ckks_blobs.py``, not by Ren), and plaintext NumPy for every value
computed (precision in bits, as in ``test_ckks.py``).
"""

from __future__ import annotations

import concurrent.futures
import copy
import hashlib
import math
import multiprocessing
import pickle
import threading

import numpy as np
import pytest

from ren import Poly
from ren.schemes import ckks
from tests.schemes import ckks_blobs
from tests.threads import in_threads

N = 64
SMALL = ckks.Params(n=N, q_bits=(60, 40, 40), p_bits=(60,), scale_bits=40, insecure=True)
OTHER_N = ckks.Params(n=2 * N, q_bits=(60, 40, 40), p_bits=(60,), scale_bits=40, insecure=True)
OTHER_Q = ckks.Params(n=N, q_bits=(60, 50, 50), p_bits=(60,), scale_bits=40, insecure=True)
SET_A = {"n": 8192, "q_bits": (60, 40, 40), "p_bits": (60,)}


def unit_disk(rng: np.random.Generator, count: int) -> np.ndarray:
    return np.sqrt(rng.uniform(0, 1, count)) * np.exp(2j * np.pi * rng.uniform(0, 1, count))


@pytest.fixture
def xy():
    rng = np.random.default_rng(11)
    return unit_disk(rng, N // 2), unit_disk(rng, N // 2)


@pytest.fixture
def ctx():
    with ckks.Context(SMALL, seed=7) as c:
        yield c


def bits(got, expected) -> float:
    return ckks.precision_bits(got, expected)


def residues(p: Poly) -> np.ndarray:
    """The plain residues of ``p`` in NTT form, as Python ints (``(L, n)`` object array)."""
    return np.array(p.ntt().limbs(), dtype=object)


# ---------------------------------------------------------------------------------------------
# security: the whole key distribution


def test_sigma_below_the_standard_is_refused():
    with pytest.raises(ValueError, match=r"sigma=1e-09 is below 3\.19 \(8/sqrt\(2\*pi\)"):
        ckks.Params(**SET_A, sigma=1e-9)
    assert 8 / math.sqrt(2 * math.pi) == ckks.MIN_SIGMA
    assert ckks.Params(**SET_A, sigma=ckks.MIN_SIGMA).sigma == ckks.MIN_SIGMA
    with pytest.raises(ValueError, match=r"sigma=3\.19 is below 3\.19"):
        ckks.Params(**SET_A, sigma=3.19)  # 3.19 < 3.1915...
    assert ckks.Params(**SET_A).sigma == 3.2  # the default passes


def test_a_tiny_sigma_gives_the_secret_key_away():
    """Why the check exists: with no error, ``b = -a s`` and ``s = -b/a`` slot by slot."""
    weak = ckks.Params(**SET_A, sigma=1e-9, insecure=True)
    ctx = ckks.Context(weak, seed=3)
    ctx.keygen()
    b, a = (residues(p) for p in ctx._public)
    secret = residues(ctx._secret)
    for i, q in enumerate(weak.key_ring.moduli):
        recovered = [
            (-int(bi) * pow(int(ai), -1, q)) % q for bi, ai in zip(b[i], a[i], strict=True)
        ]
        assert recovered == list(secret[i]), f"limb {i}"
    # with the standard's error the same division gives nothing: about 1 slot in q agrees
    fair = ckks.Context(ckks.Params(**SET_A), seed=3)
    fair.keygen()
    b, a = (residues(p) for p in fair._public)
    q = weak.key_ring.moduli[0]
    recovered = [(-int(bi) * pow(int(ai), -1, q)) % q for bi, ai in zip(b[0], a[0], strict=True)]
    assert sum(r == s for r, s in zip(recovered, residues(fair._secret)[0], strict=True)) < 5


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"n": True}, TypeError, "n must be an int, got bool True"),
        ({"n": 64.0}, TypeError, "n must be an int, got float"),
        ({"n": "64"}, TypeError, "n must be an int, got str"),
        ({"q_bits": (True, 40)}, TypeError, "q_bits holds True; bit sizes must be ints"),
        ({"q_bits": "60"}, TypeError, "q_bits must be a sequence of ints, got str"),
        ({"p_bits": (False,)}, TypeError, "p_bits holds False"),
        ({"scale_bits": True}, TypeError, "scale_bits must be an int, got bool"),
        ({"dnum": True}, TypeError, "dnum must be an int, got bool"),
        ({"dnum": 2.0}, TypeError, "dnum must be an int, got float"),
        ({"hamming_weight": True}, TypeError, "hamming_weight must be an int, got bool"),
        ({"hamming_weight": 5.0}, TypeError, "hamming_weight must be an int, got float"),
        (
            {"hamming_weight": N + 1},
            ValueError,
            "hamming_weight=65 must be None or in \\[1, n=64\\]",
        ),
        ({"sigma": True}, TypeError, "sigma must be a real number, got bool"),
        ({"sigma": "3.2"}, TypeError, "sigma must be a real number, got str"),
        ({"sigma": 3.2j}, TypeError, "sigma must be a real number, got complex"),
        ({"sigma": float("nan")}, ValueError, "sigma=nan must be a finite number"),
        ({"sigma": float("inf")}, ValueError, "sigma=inf must be a finite number"),
        ({"sigma": -float("inf")}, ValueError, "sigma=-inf must be a finite number"),
        ({"sigma": 0}, ValueError, "sigma=0.0 must be a positive number"),
        ({"insecure": 1}, TypeError, "insecure must be True or False, got int"),
        ({"insecure": "yes"}, TypeError, "insecure must be True or False, got str"),
        ({"insecure": None}, TypeError, "insecure must be True or False, got NoneType"),
        ({"n": 96}, ValueError, "n=96 must be a power of two"),
    ],
)
def test_params_types_and_values(kwargs, error, match):
    args = {"n": N, "q_bits": (60, 40, 40), "p_bits": (60,), "scale_bits": 40, "insecure": True}
    with pytest.raises(error, match=match):
        ckks.Params(**{**args, **kwargs})


def test_numpy_numbers_are_numbers():
    p = ckks.Params(n=np.int64(N), q_bits=(np.int32(60), 40), sigma=np.float64(3.5), insecure=True)
    assert type(p.n) is int and type(p.sigma) is float and p.q_bits == (60, 40)


def test_the_security_rule_still_covers_the_table_and_sparse_secrets():
    with pytest.raises(ValueError, match=r"log2\(QP\)=280\.0 exceeds 218"):
        ckks.Params(n=8192, q_bits=(60, 40, 40, 40, 40), p_bits=(60,))
    with pytest.raises(ValueError, match="hamming_weight=64: the HE-standard table covers"):
        ckks.Params(**SET_A, hamming_weight=64)
    with pytest.raises(ValueError, match="n=64 has no entry in the HE-standard table"):
        ckks.Params(n=N, q_bits=(30,), p_bits=(30,), scale_bits=20)


def test_params_from_bytes_needs_the_reader_s_opt_in():
    secure = ckks.Params(**SET_A)
    assert ckks.Params.from_bytes(secure.to_bytes()) == secure
    blob = SMALL.to_bytes()
    with pytest.raises(ValueError, match=r"marked insecure=True .* pass insecure=True to Params"):
        ckks.Params.from_bytes(blob)
    assert ckks.Params.from_bytes(blob, insecure=True) == SMALL
    with pytest.raises(TypeError, match="insecure must be True or False"):
        ckks.Params.from_bytes(blob, insecure=1)
    # a blob that says insecure=False but breaks the rule is refused by the same check
    version, kind, header, payloads = ckks_blobs.split(secure.to_bytes())
    for field, value, match in (
        ("sigma", 1e-9, "sigma=1e-09 is below 3.19"),
        ("n", 1024, "exceeds 27"),
        ("hamming_weight", 64, "hamming_weight=64: the HE-standard table"),
    ):
        forged = {"params": {**header["params"], field: value}}
        crafted = ckks_blobs.frame(version, kind, ckks_blobs._text(forged), payloads)
        with pytest.raises(ValueError, match=match):
            ckks.Params.from_bytes(crafted)
        with pytest.raises(ValueError, match=match):
            ckks.Params.from_bytes(crafted, insecure=True)  # insecure=False in the blob


def test_evaluation_keys_from_bytes_needs_the_reader_s_opt_in(ctx):
    blob = ctx.evaluation_keys().to_bytes()
    reader = "EvaluationKeys.from_bytes"
    with pytest.raises(ValueError, match=f"marked insecure=True .* pass insecure=True to {reader}"):
        ckks.EvaluationKeys.from_bytes(blob)
    keys = ckks.EvaluationKeys.from_bytes(blob, insecure=True)
    assert keys.params == SMALL and keys.fingerprint == ctx.key_fingerprint


def test_unpickling_params_runs_the_check():
    class Forged:
        def __reduce__(self):  # what a pickle of insecure parameters marked secure would hold
            return (ckks.Params, (8192, (60, 40, 40), (60,), 40, 3, False, None, 1e-9))

    with pytest.raises(ValueError, match=r"sigma=1e-09 is below 3\.19"):
        pickle.loads(pickle.dumps(Forged()))
    assert pickle.loads(pickle.dumps(SMALL)) == SMALL
    assert copy.copy(SMALL) is SMALL and copy.deepcopy(SMALL) is SMALL


# ---------------------------------------------------------------------------------------------
# key fingerprints


def test_a_server_that_forgets_its_keys_is_refused(xy):
    x, y = xy
    params = SMALL
    client = ckks.Context(params, seed=1)
    blob = client.encrypt(x).to_bytes()
    blob_y = client.encrypt(y).to_bytes()
    server = ckks.Context(params)  # keys= forgotten
    with pytest.raises(ValueError, match="this context holds no keys: make it with the keys"):
        ckks.Ciphertext.from_bytes(blob, server)
    assert server.key_fingerprint is None and not server.has_secret_key  # no keys were made
    with ckks.Context(params) as server2:  # fresh keys of its own
        fp = client.key_fingerprint
        with pytest.raises(
            ValueError,
            match=f"fingerprint {fp}, and this context holds the keys with fingerprint "
            f"{server2.key_fingerprint}",
        ):
            ckks.Ciphertext.from_bytes(blob, server2)
    with ckks.Context(params, keys=client.evaluation_keys()):
        a, b = ckks.Ciphertext.from_bytes(blob), ckks.Ciphertext.from_bytes(blob_y)
        result = (a * b).to_bytes()
    product = ckks.Ciphertext.from_bytes(result, client)
    assert bits(client.decrypt(product), x * y) > 28


def test_the_fingerprint_is_the_digest_of_the_public_key(ctx):
    b, a = ctx._public
    words = b"".join(p.ntt().limbs().astype("<u8").tobytes() for p in (b, a))
    assert ctx.key_fingerprint == hashlib.sha256(words).hexdigest()[:16]
    assert ctx.evaluation_keys().fingerprint == ctx.key_fingerprint
    assert ckks.encrypt([1.0]).key_fingerprint == ctx.key_fingerprint
    assert ckks.Context(SMALL).key_fingerprint is None
    assert ckks.Context(SMALL, seed=8).evaluation_keys().fingerprint != ctx.key_fingerprint


def test_the_exported_secret_key_restores_the_public_key(ctx, xy):
    x, _ = xy
    ct = ckks.encrypt(x)
    blob = ctx.export_secret_key()
    again = ckks.Context(SMALL, secret_key=blob, seed=99)
    assert again.key_fingerprint == ctx.key_fingerprint
    for p, q in zip(again._public, ctx._public, strict=True):
        assert np.array_equal(p.limbs(), q.limbs())
    assert np.array_equal(again._secret.limbs(), ctx._secret.limbs())
    assert bits(again.decrypt(again.rotate(ct, 1)), np.roll(x, -1)) > 27  # a new rotation key
    assert bits(ctx.decrypt(again.multiply(ct, ct)), x * x) > 28  # and a new relinearization key
    assert b"".join(p.tobytes() for p in ctx._public) not in blob  # stored plain, not Montgomery


def test_new_keys_refuse_the_old_ciphertexts(xy):
    x, _ = xy
    c = ckks.Context(SMALL, seed=2)
    ct = c.encrypt(x)
    old = c.key_fingerprint
    c.keygen()
    with pytest.raises(ValueError, match=f"fingerprint {old}, and this context holds the keys"):
        c.decrypt(ct)


def test_in_memory_values_are_checked_too(xy):
    x, _ = xy
    client = ckks.Context(SMALL, seed=1)
    ct = client.encrypt(x)
    stranger = ckks.Context(SMALL, seed=2)
    with pytest.raises(ValueError, match=f"fingerprint {client.key_fingerprint}, and this"):
        stranger.multiply(ct, ct)
    with pytest.raises(ValueError, match="this context holds no keys"):
        ckks.Context(SMALL).rotate(ct, 1)
    # a context with the client's keys takes it, and its results are bound to that context
    server = ckks.Context(SMALL, keys=client.evaluation_keys())
    out = server.multiply(ct, ct)
    assert out.context is server and bits(client.decrypt(out), x * x) > 28


def test_a_version_1_blob_is_refused_with_both_versions(ctx):
    blob = bytearray(ckks.encrypt([1.0]).to_bytes())
    blob[8:10] = (1).to_bytes(2, "little")
    with pytest.raises(ValueError, match="format version 1; this Ren reads version 2 only"):
        ckks.Ciphertext.from_bytes(bytes(blob))


def test_an_altered_fingerprint_is_refused(ctx):
    other = "0123456789abcdef"
    version, kind, header, payloads = ckks_blobs.split(ckks.encrypt([1.0]).to_bytes())
    forged = ckks_blobs.frame(
        version, kind, ckks_blobs._text({**header, "key_fingerprint": other}), payloads
    )
    with pytest.raises(ValueError, match=f"fingerprint {other}, and this context holds"):
        ckks.Ciphertext.from_bytes(forged)
    version, kind, header, payloads = ckks_blobs.split(ctx.evaluation_keys().to_bytes())
    forged = ckks_blobs.frame(
        version, kind, ckks_blobs._text({**header, "key_fingerprint": other}), payloads
    )
    with pytest.raises(ValueError, match="and its header says 0123456789abcdef: the blob was"):
        ckks.EvaluationKeys.from_bytes(forged, insecure=True)


# ---------------------------------------------------------------------------------------------
# pickle and copies


def test_values_pickle_as_values(ctx, xy):
    x, y = xy
    ctx.rotation_key(1)
    ct, pt = ckks.encrypt(x), ckks.encode(y)
    evk = ctx.evaluation_keys()
    ct2, pt2, evk2, params2, relin2 = pickle.loads(pickle.dumps((ct, pt, evk, SMALL, evk.relin)))
    assert ct2.context is None and pt2.context is None
    assert ct2.params == SMALL and ct2.key_fingerprint == ctx.key_fingerprint
    assert (ct2.level, ct2.scale, ct2.real) == (ct.level, ct.scale, ct.real)
    for p, q in zip(ct2.parts, ct.parts, strict=True):
        assert np.array_equal(p.limbs(), q.limbs()) and p.ring == q.ring
    assert np.array_equal(pt2.poly.limbs(), pt.poly.limbs()) and pt2.params == SMALL
    assert evk2.fingerprint == evk.fingerprint and sorted(evk2.galois) == sorted(evk.galois)
    assert params2 == SMALL
    assert relin2.galois is None
    for (b2, a2), (b, a) in zip(relin2.parts, evk.relin.parts, strict=True):
        assert np.array_equal(b2.limbs(), b.limbs()) and np.array_equal(a2.limbs(), a.limbs())
    # an unpickled ciphertext computes under a context with the keys, checked first
    with ckks.Context(SMALL, keys=evk2) as worker:
        out = (ct2 + pt2).rotate(1)
        assert out.context is worker
    assert bits(ctx.decrypt(out), np.roll(x + y, -1)) > 27
    assert bits(ctx.decrypt(ctx.multiply(ct2, ct2)), x * x) > 28
    assert bits(ckks.decode(pt2), y) > 33  # in the current context
    with ckks.Context(SMALL, seed=3), pytest.raises(ValueError, match="fingerprint"):
        ct2 * ct2
    with ckks.Context(OTHER_Q, seed=3), pytest.raises(ValueError, match="is for Params"):
        ct2 * ct2


def secret_words(ctx: ckks.Context) -> list[bytes]:
    """Byte strings that only a copy of the secret key would hold."""
    s = ctx._secret
    found = []
    for p in (s, s.intt()):
        for limbs in (p.limbs(), p.words()):
            for row in limbs:
                found.append(row.astype("<u8").tobytes())
                found.append(row.astype(">u8").tobytes())
    *_, payloads = ckks_blobs.split(ctx.export_secret_key())
    found.append(payloads[0])
    return found


def test_pickles_never_hold_the_secret_key(ctx, xy):
    x, _ = xy
    ctx.rotation_key(1)
    ct, pt = ckks.encrypt(x), ckks.encode(x)
    evk = ctx.evaluation_keys()
    server = ckks.Context(SMALL, keys=evk)
    objects = {
        "ciphertext": ct,
        "product": ct * ct,
        "plaintext": pt,
        "evaluation keys": evk,
        "relinearization key": evk.relin,
        "params": SMALL,
        "a list": [ct, pt, evk],
        "a dict": {"ct": ct, "keys": evk, "nested": (pt, [ct])},
        "a context with evaluation keys": server,
        "a context with no keys": ckks.Context(SMALL),
    }
    words = secret_words(ctx)
    assert all(len(w) >= 8 * N for w in words)
    for name, obj in objects.items():
        for protocol in (2, pickle.HIGHEST_PROTOCOL):
            data = pickle.dumps(obj, protocol=protocol)
            assert not any(w in data for w in words), name
    assert ctx._secret is not None and any(w in ctx.export_secret_key() for w in words)


@pytest.mark.parametrize(
    "how",
    [pickle.dumps, copy.copy, copy.deepcopy, lambda c: pickle.dumps([1, {"ctx": c}])],
    ids=["pickle", "copy", "deepcopy", "pickle in a container"],
)
def test_a_context_with_a_secret_key_refuses_to_be_copied(ctx, how):
    with pytest.raises(TypeError, match=r"export_secret_key\(\) .* ctx\.evaluation_keys\(\)"):
        how(ctx)


def test_a_context_without_the_secret_copies(ctx, xy):
    x, _ = xy
    server = ckks.Context(SMALL, keys=ctx.evaluation_keys())
    for twin in (pickle.loads(pickle.dumps(server)), copy.copy(server), copy.deepcopy(server)):
        assert twin is not server and twin.key_fingerprint == ctx.key_fingerprint
        assert not twin.has_secret_key
        assert bits(ctx.decrypt(twin.multiply(ctx.encrypt(x), 0.5)), 0.5 * x) > 28
    empty = pickle.loads(pickle.dumps(ckks.Context(SMALL, device="cpu")))
    assert empty.key_fingerprint is None and empty.device == "cpu"


def test_copies_keep_the_context(ctx, xy):
    x, _ = xy
    ct, pt = ckks.encrypt(x), ckks.encode(x)
    for c in (copy.copy(ct), copy.deepcopy(ct), copy.deepcopy([ct])[0]):
        assert c is not ct and c.context is ctx and c.key_fingerprint == ct.key_fingerprint
        assert bits(ckks.decrypt(c), x) > 28
    deep = copy.deepcopy(ct)
    assert all(p is not q for p, q in zip(deep.parts, ct.parts, strict=True))
    assert all(
        np.array_equal(p.limbs(), q.limbs()) for p, q in zip(deep.parts, ct.parts, strict=True)
    )
    for c in (copy.copy(pt), copy.deepcopy(pt)):
        assert c.context is ctx and np.array_equal(c.poly.limbs(), pt.poly.limbs())


def _worker_multiply(keys_blob: bytes, a: ckks.Ciphertext, b: ckks.Ciphertext):
    """In a worker process: evaluation keys from bytes, pickled ciphertexts in and out."""
    keys = ckks.EvaluationKeys.from_bytes(keys_blob, insecure=True)
    with ckks.Context(keys.params, keys=keys):
        return (a * b).rotate(1), a.context is None


def test_a_process_pool_computes_on_pickled_ciphertexts():
    client = ckks.Context(SMALL, seed=4)
    client.rotation_key(1)
    keys_blob = client.evaluation_keys().to_bytes()
    rng = np.random.default_rng(5)
    pairs = [(unit_disk(rng, N // 2), unit_disk(rng, N // 2)) for _ in range(4)]
    spawn = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=spawn) as pool:
        futures = [
            pool.submit(_worker_multiply, keys_blob, client.encrypt(a), client.encrypt(b))
            for a, b in pairs
        ]
        results = [f.result(timeout=300) for f in futures]
    for (a, b), (out, unbound) in zip(pairs, results, strict=True):
        assert unbound and out.context is None
        assert out.key_fingerprint == client.key_fingerprint
        assert bits(client.decrypt(out), np.roll(a * b, -1)) > 27


# ---------------------------------------------------------------------------------------------
# crafted blobs: a valid checksum, a malformed header


def _blobs() -> dict[str, tuple[bytes, object]]:
    """A valid blob of every kind, and the reader that must refuse its crafted variants."""
    c = ckks.Context(SMALL, seed=12)
    c.rotation_key(1)
    ct = c.encrypt([0.5, -0.25j])
    keys = ckks.EvaluationKeys
    return {
        "params": (SMALL.to_bytes(), lambda b: ckks.Params.from_bytes(b, insecure=True)),
        "plaintext": (c.encode([1.0]).to_bytes(), lambda b: ckks.Plaintext.from_bytes(b, c)),
        "ciphertext": (ct.to_bytes(), lambda b: ckks.Ciphertext.from_bytes(b, c)),
        "evaluation keys": (
            c.evaluation_keys().to_bytes(),
            lambda b: keys.from_bytes(b, insecure=True),
        ),
        "secret key": (c.export_secret_key(), lambda b: ckks.Context(SMALL, secret_key=b)),
        "switch key": (
            c.evaluation_keys().relin._to_bytes(),
            lambda b: ckks.KeySwitchKey._from_bytes(b, None),
        ),
    }


@pytest.mark.parametrize("kind", list(_blobs()))
def test_crafted_blobs_are_value_errors(kind):
    blob, read = _blobs()[kind]
    count, escaped = ckks_blobs.escapes(blob, read)
    assert count > 60
    assert not escaped, "\n".join(escaped)


def test_the_crafted_blobs_number_several_hundred():
    assert sum(len(list(ckks_blobs.crafted(b))) for b, _ in _blobs().values()) > 1000


def _secret_blob_with(ctx: ckks.Context, s: Poly | None = None, public=None) -> bytes:
    """The secret-key blob of ``ctx`` with its secret (or public key) replaced, re-checksummed."""
    version, kind, header, payloads = ckks_blobs.split(ctx.export_secret_key())
    polys = [s if s is not None else ctx._secret, *(public or ctx._public)]
    payloads = [p.limbs().astype("<u8").tobytes() for p in polys]
    header = {**header, "polys": [{"domain": p.domain.value, "L": p.ring.L} for p in polys]}
    return ckks_blobs.frame(version, kind, ckks_blobs._text(header), payloads)


def test_a_loaded_secret_key_must_be_ternary_and_nonzero(ctx):
    K = SMALL.key_ring
    assert ckks.Context(SMALL, secret_key=_secret_blob_with(ctx)).has_secret_key  # control
    coeffs = ctx._secret.intt().tolist(centered=True)
    for s, match in (
        (Poly([2 * c for c in coeffs], K), "not ternary"),
        (Poly([0] * N, K), "is zero"),
        (Poly([c + (i == 3) * 5 for i, c in enumerate(coeffs)], K), "not ternary"),
        (Poly.uniform(K, 1), "not ternary"),
    ):
        with pytest.raises(ValueError, match=match):
            ckks.Context(SMALL, secret_key=_secret_blob_with(ctx, s))
    other = ckks.Context(SMALL, seed=31)
    other.keygen()
    with pytest.raises(ValueError, match="public key does not belong to its secret key"):
        ckks.Context(SMALL, secret_key=_secret_blob_with(ctx, public=other._public))


def test_a_sparse_secret_key_keeps_its_weight():
    sparse = ckks.Params(n=N, q_bits=(60, 40), p_bits=(60,), hamming_weight=5, insecure=True)
    c = ckks.Context(sparse, seed=2)
    c.keygen()
    assert ckks.Context(sparse, secret_key=c.export_secret_key()).has_secret_key
    dense = ckks.Context(dataclasses_replace(sparse, hamming_weight=None), seed=2)
    dense.keygen()
    blob = _secret_blob_with(dense)
    version, kind, header, payloads = ckks_blobs.split(blob)
    header["params"] = sparse._header()
    with pytest.raises(ValueError, match="nonzero coefficients; these parameters ask for hamm"):
        ckks.Context(
            sparse, secret_key=ckks_blobs.frame(version, kind, ckks_blobs._text(header), payloads)
        )


def dataclasses_replace(params: ckks.Params, **kw) -> ckks.Params:
    import dataclasses

    return dataclasses.replace(params, **kw)


# ---------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize(
    ("op", "error", "match"),
    [
        (
            lambda ct: ct + float("nan"),
            ValueError,
            "cannot add nan to a ciphertext: nan is not a finite",
        ),
        (
            lambda ct: ct * float("inf"),
            ValueError,
            "cannot multiply a ciphertext by inf: inf is not",
        ),
        (lambda ct: ct - float("inf"), ValueError, "cannot subtract inf from a ciphertext: inf is"),
        (lambda ct: ct * complex(1, float("nan")), ValueError, "is not a finite number"),
        (lambda ct: ct * np.float64("nan"), ValueError, "is not a finite number"),
        (
            lambda ct: ct * 1e300,
            ValueError,
            "1e\\+300: it is too large for the modulus at this scale",
        ),
        (
            lambda ct: ct + 1e300,
            ValueError,
            "add 1e\\+300 to a ciphertext: it is too large for the mod",
        ),
        (lambda ct: ct + 10**400, ValueError, "too large for the modulus at this scale"),
        (lambda ct: ct * 10**400, ValueError, "by the int .* it is not below Q/2 at level 2"),
        (lambda ct: float("nan") - ct, ValueError, "is not a finite number"),
        (lambda ct: ct.rotate("1"), TypeError, "rotation steps must be an int, got str"),
        (lambda ct: ct.rotate(1.0), TypeError, "rotation steps must be an int, got float"),
        (lambda ct: ct.rotate(True), TypeError, "rotation steps must be an int, got bool"),
        (
            lambda ct: ct._ctx().rotation_key(1.7),
            TypeError,
            "rotation steps must be an int, got float",
        ),
        (
            lambda ct: ct._ctx().galois_key(5.0),
            TypeError,
            "Galois element must be an int, got float",
        ),
        (
            lambda ct: ct._ctx().galois_key(4),
            ValueError,
            "Galois element 4 .* is even; it must be odd",
        ),
        (lambda ct: ct.at_level(1.0), TypeError, "level must be an int"),
        (lambda ct: ckks.decode(3), TypeError, "decode takes a Plaintext, got int"),
        (lambda ct: ckks.decrypt("x"), TypeError, "decrypt takes a Ciphertext, got str"),
        (
            lambda ct: ct._ctx().decode(ct),
            TypeError,
            "decode takes a ckks.Plaintext, got Ciphertext",
        ),
        (lambda ct: ckks.encode([1.0], level=1.0), TypeError, "level must be an int, got float"),
        (lambda ct: ckks.encode([1e300] * 4), ValueError, "values are too large for scale"),
    ],
)
def test_bad_operands_are_clear_errors(ctx, op, error, match):
    ct = ckks.encrypt([0.5, 0.25])
    with pytest.raises(error, match=match):
        op(ct)


def test_numpy_arrays_on_the_left_are_slot_values(ctx, xy):
    x, _ = xy
    ct = ckks.encrypt(x)
    k = N // 2
    for got, want in (
        (np.ones(k) * ct, x),
        (np.arange(k) + ct, np.arange(k) + x),
        (np.arange(k) - ct, np.arange(k) - x),
        (np.full(k, 0.5) * ct, 0.5 * x),
        (ct * np.arange(k), np.arange(k) * x),
    ):
        assert isinstance(got, ckks.Ciphertext)  # not an array of ciphertexts
        assert bits(ckks.decrypt(got), want) > 22
    pt = ckks.encode(x)
    with pytest.raises(TypeError):
        np.ones(k) * pt


def test_the_constructor_checks_its_fields(ctx):
    ct = ckks.encrypt([1.0])
    c0, c1 = ct.parts
    other = OTHER_Q.ring(2)
    cases = [
        (((c0,), ct.scale, 2), ValueError, "a ciphertext has 2 parts .* got 1"),
        (((c0, c1, c0, c1), ct.scale, 2), ValueError, "got 4"),
        ((c0, ct.scale, 2), TypeError, "parts must be a tuple of 2 or 3 Poly values, got Poly"),
        (((c0, "x"), ct.scale, 2), TypeError, r"parts\[1\] is a str"),
        (((c0, Poly.uniform(other, 1)), ct.scale, 2), ValueError, r"parts\[1\] is over Ring"),
        (((c0, c1), ct.scale, 3), ValueError, r"at level 3 needs 4 limbs \(q_0 .. q_3\), but its"),
        (((c0, c1), ct.scale, 3, False, ctx), ValueError, r"level=3 is outside \[0, 2\]"),
        (((c0, c1), ct.scale, -1), ValueError, "level=-1 is negative"),
        (((c0, c1), ct.scale, 1.0), TypeError, "level must be an int, got float"),
        (((c0, c1), ct.scale, 1), ValueError, "at level 1 needs 2 limbs"),
        (((c0, c1), ct.scale, 1, False, ctx), ValueError, "at level 1 lives in .* but its polyno"),
        (((c0, c1), float("nan"), 2), ValueError, "scale=nan must be a finite positive number"),
        (((c0, c1), float("inf"), 2), ValueError, "scale=inf"),
        (((c0, c1), 0.0, 2), ValueError, "scale=0.0"),
        (((c0, c1), -1.0, 2), ValueError, "scale=-1.0"),
        (((c0, c1), "big", 2), TypeError, "scale must be a number, got str"),
        (((c0, c1), 2.0**200, 2), ValueError, "outgrows the modulus"),
        (((c0, c1), ct.scale, 2, "no"), TypeError, "real must be True or False"),
        (((c0, c1), ct.scale, 2, False, "ctx"), TypeError, "context must be a ckks.Context"),
    ]
    for args, error, match in cases:
        with pytest.raises(error, match=match):
            ckks.Ciphertext(*args)
    with pytest.raises(ValueError, match="key_fingerprint must be 16 hexadecimal digits"):
        ckks.Ciphertext((c0, c1), ct.scale, 2, key_fingerprint="xyz")
    with pytest.raises(ValueError, match="key fingerprint 0123456789abcdef is not its context's"):
        ckks.Ciphertext((c0, c1), ct.scale, 2, context=ctx, key_fingerprint="0123456789abcdef")
    with pytest.raises(ValueError, match=r"the ciphertext's params .* are not its context's"):
        ckks.Ciphertext((c0, c1), ct.scale, 2, context=ctx, params=OTHER_Q)
    # the public constructor still works, positionally, and binds to the context's facts
    made = ckks.Ciphertext((c0, c1), ct.scale, 2, False, ctx)
    assert made.params == SMALL and made.key_fingerprint == ctx.key_fingerprint
    assert bits(ckks.decrypt(made)[:1], [1.0]) > 28
    loose = ckks.Ciphertext([c0, c1], ct.scale, 2)  # no context: the current one's, when used
    assert loose.parts == (c0, c1) and loose.key_fingerprint is None
    assert bits(ckks.decrypt(loose)[:1], [1.0]) > 28
    pt = ckks.encode([1.0])
    for args, error, match in [
        (("x", pt.scale, 2), TypeError, "poly must be a Poly, got str"),
        ((pt.poly, pt.scale, 0), ValueError, "at level 0 needs 1 limbs"),
        ((pt.poly, pt.scale, 0, True, ctx), ValueError, "at level 0 lives in"),
        ((pt.poly, float("nan"), 2), ValueError, "scale=nan"),
    ]:
        with pytest.raises(error, match=match):
            ckks.Plaintext(*args)


def test_values_of_other_parameters_are_refused(ctx):
    ct = ckks.encrypt([1.0, 2.0])
    for params in (OTHER_N, OTHER_Q):
        with ckks.Context(params, seed=2):
            pt = ckks.encode([1.0])
        for op in (ct.__add__, ct.__mul__, ct.__sub__, ckks.encrypt):
            with pytest.raises(
                ValueError, match=f"is for Params\\(n={params.n}.*this context for Params\\(n={N}"
            ):
                op(pt)
        with pytest.raises(ValueError, match="is for Params"):
            ctx.decode(pt)


@pytest.mark.parametrize(
    ("got", "expected", "error", "match"),
    [
        (np.zeros(4), np.zeros(5), ValueError, r"got has shape \(4,\) and expected \(5,\)"),
        (np.zeros((2, 2)), np.zeros(4), ValueError, r"\(2, 2\) and expected \(4,\)"),
        ([], [], ValueError, "at least one number"),
        ("abc", [1.0], TypeError, "got must hold numbers, got str"),
        ([1.0], [object()], TypeError, "expected must hold numbers"),
    ],
)
def test_precision_bits_bad_shapes(got, expected, error, match):
    with pytest.raises(error, match=match):
        ckks.precision_bits(got, expected)


def test_precision_bits_compares_with_one_number():
    assert ckks.precision_bits(np.full(4, 1.0 + 2**-10), 1.0) == 10.0
    assert ckks.precision_bits(1.0, 1.0) == math.inf


def test_a_modulus_beyond_a_float():
    """At a level whose ``Q`` exceeds ``2^1024`` encoding compares with integers, exactly."""
    deep = ckks.Params(n=16, q_bits=(60,) * 20, p_bits=(61,), scale_bits=50, insecure=True)
    assert deep.ring(deep.max_level).Q > 2**1024
    rng = np.random.default_rng(2)
    v = unit_disk(rng, 8)
    with ckks.Context(deep, seed=1) as c:
        pt = ckks.encode(v)
        assert pt.poly.tolist(centered=True) == [
            int(x) for x in np.rint(ckks.embed_inverse(v, 16) * deep.scale)
        ]
        big = ckks.encode(v, scale=2.0**900)  # coefficients of 900 bits: Python ints, exact
        assert big.poly.tolist(centered=True) == [
            int(x) for x in np.rint(ckks.embed_inverse(v, 16) * 2.0**900)
        ]
        ct = ckks.encrypt(v)
        assert bits(ckks.decrypt(ct * ct), v * v) > 35
        with pytest.raises(ValueError, match="values are too large for scale 2\\^999"):
            ckks.encode([1e300], scale=2.0**999)
        with pytest.raises(ValueError, match="values are too large for scale"):
            ckks.encode([2.0**200], scale=2.0**999)
        assert c.params.ring(0).Q < 2**61


# ---------------------------------------------------------------------------------------------
# threads


def test_each_thread_has_its_own_current_context():
    rounds = 12

    def work(i: int) -> None:
        seed = i + 1
        rng = np.random.default_rng(seed)
        with ckks.Context(SMALL, seed=seed) as mine:
            for _ in range(rounds):
                assert ckks.current() is mine
                v = unit_disk(rng, N // 2)
                ct = ckks.encrypt(v)
                assert ct.context is mine and ct.key_fingerprint == mine.key_fingerprint
                assert bits(ckks.decrypt(ct), v) > 28
        assert not _has_current()

    in_threads(work, 2)
    assert not _has_current()


def _has_current() -> bool:
    try:
        ckks.current()
    except RuntimeError:
        return False
    return True


def test_a_new_thread_starts_with_no_current_context(ctx):
    seen = []
    t = threading.Thread(target=lambda: seen.append(_has_current()))
    t.start()
    t.join()
    assert seen == [False] and ckks.current() is ctx


def test_a_shared_context_makes_each_key_once():
    shared = ckks.Context(SMALL, seed=9)

    def work(i: int) -> tuple:
        ct = shared.encrypt([float(i)])  # the first one makes the keys, once
        return ct.key_fingerprint, shared.rotation_key(3)

    found = in_threads(work, 8)
    assert all(f is not None for f in found)
    assert {fp for fp, _ in found} == {shared.key_fingerprint}
    assert all(key is shared.rotation_key(3) for _, key in found)


@pytest.mark.parametrize("flag", ["relinearize", "rescale"])
@pytest.mark.parametrize("value", ["no", "False", 0, 1, None, 2.0])
def test_multiply_flags_are_bools(flag, value):
    params = ckks.Params(n=16, q_bits=(30, 20), p_bits=(30,), scale_bits=18, insecure=True)
    with ckks.Context(params, seed=3) as ctx:
        ct = ckks.encrypt([0.5, 0.25])
        with pytest.raises(TypeError, match=rf"{flag} must be True or False, got {value!r}"):
            ckks.multiply(ct, ct, **{flag: value})
        with pytest.raises(TypeError, match=flag):
            ctx.multiply(ct, ct, **{flag: value})
