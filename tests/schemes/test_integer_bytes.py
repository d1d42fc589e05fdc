"""BFV and BGV values in bytes, pickles and copies; evaluation keys and the exported secret key.

Oracles: the stored words (``Poly.limbs()``) compared word for word after every round trip; NumPy
on int64 arrays mod ``t`` for every decryption; SHA-256 of the public key's residues computed
here; the secret key's bytes searched for in every pickle; and the byte format as
``tests/schemes/ckks_blobs.py`` frames it (not Ren's writer), so each crafted blob reaches the
header checks and must be refused with a ``ValueError``.
"""

from __future__ import annotations

import concurrent.futures
import copy
import hashlib
import multiprocessing
import pickle

import numpy as np
import pytest

import ren
from ren.schemes import bfv, bgv, ckks
from tests.schemes import ckks_blobs
from tests.schemes.integer_cases import N, T, rows, small, values


def other_scheme(scheme):
    return bgv if scheme is bfv else bfv


def same_words(a, b) -> bool:
    """Two ciphertexts' parts hold the same words, limb for limb, over the same rings."""
    return len(a.parts) == len(b.parts) and all(
        p.ring == q.ring and p.domain == q.domain and np.array_equal(p.limbs(), q.limbs())
        for p, q in zip(a.parts, b.parts, strict=True)
    )


def product(scheme, ctx, a, b):
    """``a * b`` (BGV: switched down one level, so level and correction are not the fresh ones)."""
    out = ctx.encrypt(a) * ctx.encrypt(b)
    return bgv.mod_switch(out) if scheme is bgv else out


# ---------------------------------------------------------------------------------------------
# parameters


def test_params_round_trip_and_the_reader_s_opt_in(scheme):
    p = small(scheme)
    blob = p.to_bytes()
    assert blob.startswith(b"RENCKKS\0")
    back = scheme.Params.from_bytes(blob, insecure=True)
    assert back == p and back.q_moduli == p.q_moduli and back.p_moduli == p.p_moduli
    assert type(back) is scheme.Params
    with pytest.raises(ValueError, match=r"marked insecure=True .* pass insecure=True to Params"):
        scheme.Params.from_bytes(blob)
    with pytest.raises(TypeError, match="insecure must be True or False"):
        scheme.Params.from_bytes(blob, insecure=1)
    secure = scheme.Params(n=8192, q_bits=(43, 43, 44, 44), p_bits=(44,), t=65537)
    assert scheme.Params.from_bytes(secure.to_bytes()) == secure
    # a forged blob marked secure that breaks the rule is refused by the constructor's check
    version, kind, header, _ = ckks_blobs.split(secure.to_bytes())
    forged = {"params": {**header["params"], "sigma": 1e-9}}
    with pytest.raises(ValueError, match=r"sigma=1e-09 is below 3\.19"):
        scheme.Params.from_bytes(ckks_blobs.frame(version, kind, ckks_blobs._text(forged), []))


def test_each_scheme_refuses_the_others_params(scheme):
    blob = small(scheme).to_bytes()
    name, other = scheme.__name__.rsplit(".", 1)[-1], other_scheme(scheme)
    with pytest.raises(ValueError, match=f"got one holding a '{name}-params'"):
        other.Params.from_bytes(blob, insecure=True)
    with pytest.raises(ValueError, match=f"expected a Ren CKKS params blob, got one .*'{name}-"):
        ckks.Params.from_bytes(blob, insecure=True)
    ckks_blob = ckks.Params(n=N, q_bits=(60, 40), p_bits=(60,), insecure=True).to_bytes()
    with pytest.raises(ValueError, match=f"expected a Ren {name.upper()} params blob, got one "):
        scheme.Params.from_bytes(ckks_blob, insecure=True)
    # the kind of the other scheme with this scheme's header: the header names the scheme too
    version, _, header, payloads = ckks_blobs.split(blob)
    other_kind = f"{other.__name__.rsplit('.', 1)[-1]}-params"
    crafted = ckks_blobs.frame(version, other_kind, ckks_blobs._text(header), payloads)
    with pytest.raises(ValueError, match=f"name the scheme '{name}'"):
        other.Params.from_bytes(crafted, insecure=True)


# ---------------------------------------------------------------------------------------------
# values


def test_ciphertexts_round_trip_word_for_word(scheme):
    a, b = values(1), values(2)
    with scheme.Context(small(scheme), seed=1) as ctx:
        ct = product(scheme, ctx, a, b)
        back = scheme.Ciphertext.from_bytes(ct.to_bytes())  # the current context of its scheme
        assert back.context is ctx and same_words(back, ct)
        assert (back.level, back.correction) == (ct.level, ct.correction)
        assert back.key_fingerprint == ctx.key_fingerprint
        if scheme is bgv:
            assert back.correction == pow(ctx.params.q_moduli[2], -1, T) != 1
        assert np.array_equal(ctx.decrypt(back), a * b % T)
        three = ctx._tensor(ctx.encrypt(a), ctx.encrypt(b))  # three parts: not relinearized
        back3 = scheme.Ciphertext.from_bytes(three.to_bytes(), ctx)
        assert back3.size == 3 and same_words(back3, three)
        assert np.array_equal(ctx.decrypt(back3), a * b % T)
        assert np.array_equal(ctx.decrypt(back3.relinearize() + a), (a * b + a) % T)


def test_plaintexts_round_trip(scheme):
    with scheme.Context(small(scheme), seed=2) as ctx:
        v = values(3)
        pt = ctx.encode(v)
        back = scheme.Plaintext.from_bytes(pt.to_bytes())
        assert back.params == ctx.params and np.array_equal(back.coeffs, pt.coeffs)
        assert np.array_equal(ctx.decode(back), v)
        x = ctx.encrypt(values(4))
        assert np.array_equal(ctx.decrypt(x * back + back), (values(4) * v + v) % T)
        poly = ctx.encode_coefficients(list(range(N)))
        assert np.array_equal(
            scheme.Plaintext.from_bytes(poly.to_bytes(), ctx).coeffs, np.arange(N)
        )


def test_bad_blobs_are_clear_errors(scheme):
    name = scheme.__name__.rsplit(".", 1)[-1]
    other = other_scheme(scheme)
    with scheme.Context(small(scheme), seed=3) as ctx:
        blob = ctx.encrypt(values(5)).to_bytes()
        with pytest.raises(ValueError, match="truncated or altered"):
            scheme.Ciphertext.from_bytes(blob[:-1])
        with pytest.raises(ValueError, match="truncated or altered"):
            scheme.Ciphertext.from_bytes(blob[:100] + bytes([blob[100] ^ 1]) + blob[101:])
        with pytest.raises(ValueError, match="does not start with Ren's header"):
            scheme.Ciphertext.from_bytes(b"hello", ctx)
        with pytest.raises(ValueError, match="not a Ren BFV or BGV ciphertext blob"):
            scheme.Ciphertext.from_bytes(b"hello")
        with pytest.raises(
            ValueError, match=f"expected a Ren {name.upper()} plaintext blob, got one holding "
        ):
            scheme.Plaintext.from_bytes(blob, ctx)
        future = bytearray(blob)
        future[8] = 3
        with pytest.raises(ValueError, match="format version 3; this Ren reads version 2"):
            scheme.Ciphertext.from_bytes(bytes(future), ctx)
        with pytest.raises(TypeError, match="expected bytes"):
            scheme.Ciphertext.from_bytes("text", ctx)
        with pytest.raises(TypeError, match=r"context must be a bfv\.Context or bgv\.Context"):
            scheme.Ciphertext.from_bytes(blob, "ctx")
        with pytest.raises(ValueError, match="expected a Ren CKKS ciphertext blob"):
            ckks.Ciphertext.from_bytes(
                blob, ckks.Context(ckks.Params(n=N, q_bits=(60, 40), insecure=True))
            )
        with scheme.Context(small(scheme, t=97), seed=1) as c2:
            with pytest.raises(ValueError, match="was written for"):
                scheme.Ciphertext.from_bytes(blob)
            with pytest.raises(ValueError, match="was written for"):
                scheme.Ciphertext.from_bytes(blob, c2)
    # another scheme's context refuses it, by kind
    with other.Context(small(other), seed=3) as octx:
        with pytest.raises(ValueError, match=f"got one holding a '{name}-ciphertext'"):
            scheme.Ciphertext.from_bytes(blob, octx)
        with pytest.raises(RuntimeError, match=f"no {name.upper()} context is active"):
            scheme.Ciphertext.from_bytes(blob)  # its own scheme's current: none


def test_the_constructor_checks_what_the_bytes_carry(scheme):
    with scheme.Context(small(scheme), seed=13) as ctx:
        ct = ctx.encrypt(values(20))
        bare = scheme.Ciphertext(ct.parts, ct.level, params=ct.params)
        assert bare.key_fingerprint is None
        with pytest.raises(ValueError, match="has no key fingerprint"):
            bare.to_bytes()
        assert np.array_equal(ctx.decrypt(bare), values(20))  # built by hand: taken as is
        with pytest.raises(ValueError, match="16 hexadecimal digits"):
            scheme.Ciphertext(ct.parts, ct.level, params=ct.params, key_fingerprint="xyz")
        with pytest.raises(ValueError, match="is not its context's"):
            scheme.Ciphertext(ct.parts, ct.level, context=ctx, key_fingerprint="0123456789abcdef")
        with pytest.raises(TypeError, match=r"params must be a bfv\.Params or bgv\.Params"):
            scheme.Ciphertext(ct.parts, ct.level, params="p")


def _reframed(blob: bytes, change) -> bytes:
    """``blob`` with its header and payloads changed, framed and checksummed again."""
    version, kind, header, payloads = ckks_blobs.split(blob)
    header, payloads = change(header, payloads)
    return ckks_blobs.frame(version, kind, ckks_blobs._text(header), payloads)


def test_forged_words_and_fields_are_refused(scheme):
    with scheme.Context(small(scheme), seed=4) as ctx:
        ct, pt = ctx.encrypt(values(6)), ctx.encode(values(7))
        big = (2**64 - 1).to_bytes(8, "little")
        forged = _reframed(ct.to_bytes(), lambda h, p: (h, [*p[:-1], p[-1][:-8] + big]))
        with pytest.raises(ValueError, match="has a residue outside"):
            scheme.Ciphertext.from_bytes(forged, ctx)
        forged = _reframed(
            pt.to_bytes(), lambda h, p: (h, [p[0][:8] + T.to_bytes(8, "little") + p[0][16:]])
        )
        with pytest.raises(ValueError, match=r"coefficient 1 is 257, outside \[0, t=257\)"):
            scheme.Plaintext.from_bytes(forged, ctx)
        forged = _reframed(ct.to_bytes(), lambda h, p: ({**h, "correction": 2}, p))
        if scheme is bfv:
            with pytest.raises(ValueError, match="a BFV ciphertext's correction is 1"):
                scheme.Ciphertext.from_bytes(forged, ctx)
        else:  # a BGV correction may be any unit mod t: 2 multiplies the message by 2^-1
            got = ctx.decrypt(scheme.Ciphertext.from_bytes(forged, ctx))
            assert np.array_equal(got * 2 % T, values(6))
        forged = _reframed(ct.to_bytes(), lambda h, p: ({**h, "correction": T}, p))
        with pytest.raises(ValueError, match="correction must be an int in"):
            scheme.Ciphertext.from_bytes(forged, ctx)


def _blobs(scheme) -> dict[str, tuple[bytes, object]]:
    """A valid blob of every kind, and the reader that must refuse its crafted variants."""
    params = small(scheme)
    c = scheme.Context(params, seed=12)
    c.rotation_key(1)
    ct = c.encrypt(values(8))
    keys = scheme.EvaluationKeys
    return {
        "params": (params.to_bytes(), lambda b: scheme.Params.from_bytes(b, insecure=True)),
        "plaintext": (c.encode([1, 2]).to_bytes(), lambda b: scheme.Plaintext.from_bytes(b, c)),
        "ciphertext": (ct.to_bytes(), lambda b: scheme.Ciphertext.from_bytes(b, c)),
        "evaluation keys": (
            c.evaluation_keys().to_bytes(),
            lambda b: keys.from_bytes(b, insecure=True),
        ),
        "secret key": (c.export_secret_key(), lambda b: scheme.Context(params, secret_key=b)),
    }


@pytest.mark.parametrize(
    "kind", ["params", "plaintext", "ciphertext", "evaluation keys", "secret key"]
)
def test_crafted_blobs_are_value_errors(scheme, kind):
    blob, read = _blobs(scheme)[kind]
    count, escaped = ckks_blobs.escapes(blob, read)
    assert count > 40
    assert not escaped, "\n".join(escaped)


# ---------------------------------------------------------------------------------------------
# keys


def test_a_server_computes_with_the_evaluation_keys(scheme):
    a, b = values(9), values(10)
    params = small(scheme)
    with scheme.Context(params, seed=30) as client:
        client.rotation_key(1)
        keys = scheme.EvaluationKeys.from_bytes(client.evaluation_keys().to_bytes(), insecure=True)
        assert keys.fingerprint == client.key_fingerprint and sorted(keys.galois) == sorted(
            client.evaluation_keys().galois
        )
        blob_a, blob_b = client.encrypt(a).to_bytes(), client.encrypt(b).to_bytes()
        secret = client.export_secret_key()
    with scheme.Context(params, keys=keys, device="cpu") as server:
        assert not server.has_secret_key and "evaluation keys" in repr(server)
        ca, cb = scheme.Ciphertext.from_bytes(blob_a), scheme.Ciphertext.from_bytes(blob_b)
        out = ((ca * cb).rotate_rows(1) + 5).to_bytes()
        with pytest.raises(ValueError, match="holds no secret key, so it cannot decrypt"):
            scheme.decrypt(ca)
        with pytest.raises(ValueError, match="cannot measure a noise budget"):
            server.noise_budget(ca)
        with pytest.raises(ValueError, match="no key for the Galois element"):
            ca.rotate_rows(2)
        scheme.encrypt(b)  # the public key encrypts
    want = (np.roll(rows(a * b), -1, axis=1).reshape(-1) + 5) % T
    assert np.array_equal(client.decrypt(scheme.Ciphertext.from_bytes(out, client)), want)
    with scheme.Context(params, secret_key=secret, seed=1) as again:
        assert again.has_secret_key and again.key_fingerprint == client.key_fingerprint
        assert np.array_equal(scheme.decrypt(scheme.Ciphertext.from_bytes(out)), want)
        for p, q in zip(again._public, client._public, strict=True):
            assert np.array_equal(p.limbs(), q.limbs())
        assert np.array_equal(again._secret.limbs(), client._secret.limbs())
        x = again.encrypt(a)  # a new relinearization key and a new rotation key
        assert np.array_equal(
            client.decrypt((x * x).rotate_columns()), rows(a * a)[::-1].reshape(-1) % T
        )
    with pytest.raises(ValueError, match="pass keys= or secret_key=, not both"):
        scheme.Context(params, keys=keys, secret_key=secret)
    with pytest.raises(ValueError, match="the keys are for"):
        scheme.Context(small(scheme, t=97), keys=keys)
    with pytest.raises(TypeError, match="keys must be"):
        scheme.Context(params, keys=client.evaluation_keys().to_bytes())
    other = other_scheme(scheme)
    with pytest.raises(ValueError, match="got one holding a '"):
        other.Context(small(other), secret_key=secret)
    with pytest.raises(ValueError, match=r"the keys are [A-Z]{3} keys, and this a [A-Z]{3} cont"):
        other.Context(small(other), keys=keys)
    with (
        other.Context(small(other), seed=1) as octx,
        pytest.raises(ValueError, match=r"is a [A-Z]{3} ciphertext, and this a [A-Z]{3} context"),
    ):
        octx.decrypt(client.encrypt(a))


def test_the_fingerprint_is_checked_wherever_a_ciphertext_goes(scheme):
    params = small(scheme)
    client = scheme.Context(params, seed=1)
    ct = client.encrypt(values(11))
    b, a = client._public
    words = b"".join(p.ntt().limbs().astype("<u8").tobytes() for p in (b, a))
    assert client.key_fingerprint == hashlib.sha256(words).hexdigest()[:16] == ct.key_fingerprint
    blob = ct.to_bytes()
    forgetful = scheme.Context(params)
    with pytest.raises(ValueError, match="this context holds no keys: make it with the keys"):
        scheme.Ciphertext.from_bytes(blob, forgetful)
    assert forgetful.key_fingerprint is None  # no keys were made
    stranger = scheme.Context(params, seed=2)
    with pytest.raises(ValueError, match=f"fingerprint {client.key_fingerprint}, and this context"):
        scheme.Ciphertext.from_bytes(blob, stranger)
    with pytest.raises(ValueError, match=f"fingerprint {client.key_fingerprint}, and this context"):
        stranger.multiply(ct, ct)
    server = scheme.Context(params, keys=client.evaluation_keys())
    out = server.multiply(ct, ct)
    assert out.context is server
    assert np.array_equal(client.decrypt(out), values(11) ** 2 % T)
    old = client.key_fingerprint
    client.keygen()  # new keys: the old ciphertexts are refused
    with pytest.raises(ValueError, match=f"fingerprint {old}, and this context holds the keys"):
        client.decrypt(ct)


def test_a_loaded_secret_key_must_be_ternary(scheme):
    params = small(scheme)
    c = scheme.Context(params, seed=5)
    blob = c.export_secret_key()

    def with_secret(coeffs) -> bytes:
        s = ren.Poly(coeffs, params.key_ring)
        return _reframed(blob, lambda h, p: (h, [s.limbs().astype("<u8").tobytes(), *p[1:]]))

    header = ckks_blobs.split(blob)[2]
    assert header["polys"][0]["domain"] == "ntt"
    for coeffs, match in (([2] * N, "not ternary"), ([0] * N, "is zero")):
        forged = with_secret(coeffs)
        forged = _reframed(
            forged,
            lambda h, p: (
                {**h, "polys": [{"domain": "coeff", "L": params.key_ring.L}, *h["polys"][1:]]},
                p,
            ),
        )
        with pytest.raises(ValueError, match=match):
            scheme.Context(params, secret_key=forged)
    other = scheme.Context(params, seed=6)
    other.keygen()
    pub = [q.limbs().astype("<u8").tobytes() for q in other._public]
    with pytest.raises(ValueError, match="public key does not belong to its secret key"):
        scheme.Context(params, secret_key=_reframed(blob, lambda h, p: (h, [p[0], *pub])))


# ---------------------------------------------------------------------------------------------
# pickle and copies


def test_ciphertexts_pickle_as_their_bytes(scheme):
    params = small(scheme)
    a, b = values(12), values(13)
    with scheme.Context(params, seed=7) as ctx:
        ctx.rotation_key(1)
        ct, pt = product(scheme, ctx, a, b), ctx.encode(b)
        evk = ctx.evaluation_keys()
        ct2, pt2, evk2, params2 = pickle.loads(pickle.dumps((ct, pt, evk, params)))
    assert ct2.context is None and ct2.params == params and params2 == params
    assert ct2.key_fingerprint == ctx.key_fingerprint
    assert (ct2.level, ct2.correction) == (ct.level, ct.correction) and same_words(ct2, ct)
    assert np.array_equal(pt2.coeffs, pt.coeffs) and pt2.params == params
    assert evk2.fingerprint == evk.fingerprint and sorted(evk2.galois) == sorted(evk.galois)
    for (b2, a2), (b1, a1) in zip(evk2.relin.parts, evk.relin.parts, strict=True):
        assert np.array_equal(b2.limbs(), b1.limbs()) and np.array_equal(a2.limbs(), a1.limbs())
    with scheme.Context(params, keys=evk2) as worker:  # the current context takes it, checked
        out = (ct2 + pt2).rotate_rows(1)
        assert out.context is worker
    want = np.roll(rows(a * b + b), -1, axis=1).reshape(-1) % T
    assert np.array_equal(ctx.decrypt(out), want)
    assert np.array_equal(ctx.decrypt(ctx.multiply(ct2, ct2)), (a * b) ** 2 % T)
    with scheme.Context(params, seed=3), pytest.raises(ValueError, match="fingerprint"):
        ct2 * ct2
    with scheme.Context(small(scheme, t=97), seed=3), pytest.raises(ValueError, match="is for"):
        ct2 * ct2
    with pytest.raises(RuntimeError, match="context is active"):
        ct2 + 1  # no context of its scheme


def test_pickles_never_hold_the_secret_key(scheme):
    params = small(scheme)
    ctx = scheme.Context(params, seed=8)
    ctx.rotation_key(1)
    ct = ctx.encrypt(values(14))
    evk = ctx.evaluation_keys()
    objects = {
        "ciphertext": ct,
        "product": ct * ct,
        "plaintext": ctx.encode(values(14)),
        "evaluation keys": evk,
        "params": params,
        "a container": [ct, {"keys": evk}],
        "a server": scheme.Context(params, keys=evk),
        "a context with no keys": scheme.Context(params),
    }
    s = ctx._secret
    words = [
        row.astype(e).tobytes() for q in (s, s.intt()) for row in q.limbs() for e in ("<u8", ">u8")
    ]
    words.append(ckks_blobs.split(ctx.export_secret_key())[3][0])
    for name, obj in objects.items():
        data = pickle.dumps(obj)
        assert not any(w in data for w in words), name
    assert any(w in ctx.export_secret_key() for w in words)  # the oracle finds the key there


@pytest.mark.parametrize(
    "how", [pickle.dumps, copy.copy, copy.deepcopy], ids=["pickle", "copy", "deepcopy"]
)
def test_a_context_with_the_secret_key_refuses_to_be_copied(scheme, how):
    ctx = scheme.Context(small(scheme), seed=9)
    ctx.keygen()
    with pytest.raises(
        TypeError,
        match=r"holding a secret key .* export_secret_key\(\) .* ctx\.evaluation_keys\(\)",
    ):
        how(ctx)


def test_a_context_without_the_secret_copies(scheme):
    params = small(scheme)
    client = scheme.Context(params, seed=10)
    server = scheme.Context(params, keys=client.evaluation_keys(), device="cpu")
    x = client.encrypt(values(15))
    for twin in (pickle.loads(pickle.dumps(server)), copy.copy(server), copy.deepcopy(server)):
        assert twin is not server and twin.key_fingerprint == client.key_fingerprint
        assert not twin.has_secret_key and twin.device == "cpu" and type(twin) is scheme.Context
        assert np.array_equal(client.decrypt(twin.multiply(x, 3)), values(15) * 3 % T)
    empty = pickle.loads(pickle.dumps(scheme.Context(params, device="cpu")))
    assert empty.key_fingerprint is None and empty.device == "cpu"


def test_copies_of_a_ciphertext_keep_the_context(scheme):
    with scheme.Context(small(scheme), seed=11) as ctx:
        ct = ctx.encrypt(values(16))
        for c in (copy.copy(ct), copy.deepcopy(ct), copy.deepcopy([ct])[0]):
            assert c is not ct and c.context is ctx and same_words(c, ct)
            assert np.array_equal(scheme.decrypt(c), values(16))
        deep = copy.deepcopy(ct)
        assert all(p is not q for p, q in zip(deep.parts, ct.parts, strict=True))


def test_encrypt_is_refused_inside_jit(scheme):
    with scheme.Context(small(scheme), seed=12) as ctx:
        f = ren.jit(lambda a: a + ctx.encrypt(1))
        with pytest.raises(RuntimeError, match="replay would reuse the same randomness"):
            f(ctx.encrypt(values(17)))


def _worker(keys_blob: bytes, a, b):
    """In a worker process: evaluation keys from bytes, pickled ciphertexts in and out."""
    from ren.schemes.integer.keys import EvaluationKeys
    from ren.schemes.integer.params import scheme_module

    keys = EvaluationKeys.from_bytes(keys_blob, insecure=True)
    with scheme_module(keys.params.scheme).Context(keys.params, keys=keys):
        return (a * b).rotate_rows(1), a.context is None


def test_a_process_pool_computes_on_pickled_ciphertexts():
    jobs = []
    for scheme in (bfv, bgv):
        client = scheme.Context(small(scheme), seed=4)
        client.rotation_key(1)
        jobs.append((client, client.evaluation_keys().to_bytes(), values(18), values(19)))
    spawn = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=spawn) as pool:
        futures = [pool.submit(_worker, blob, c.encrypt(a), c.encrypt(b)) for c, blob, a, b in jobs]
        results = [f.result(timeout=300) for f in futures]
    for (client, _, a, b), (out, unbound) in zip(jobs, results, strict=True):
        assert unbound and out.context is None and out.key_fingerprint == client.key_fingerprint
        want = np.roll(rows(a * b), -1, axis=1).reshape(-1) % T
        assert np.array_equal(client.decrypt(out), want)
