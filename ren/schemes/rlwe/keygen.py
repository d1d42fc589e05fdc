"""Key generation for an RLWE context: the secret, public and key-switching keys, kept.

A context holds one :class:`KeyChain` (``ctx.keychain``; :mod:`ren.schemes.rlwe.context`): it
makes the keys on first need, with the key-switching technique the parameters choose
(:mod:`ren.schemes.rlwe.keyswitch`), and keeps them behind one lock, so two threads asking for the
same rotation key get the same key. The context's own random source is the key chain's: keys and
encryptions draw from one stream, as a seed makes them reproducible.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np

from ren.device import canonical_device
from ren.engine.realize import uncaptured
from ren.poly import Poly, is_int, realize
from ren.ring import Domain, RingSpec, sampling
from ren.schemes.rlwe import bytes as _fmt
from ren.schemes.rlwe.keys import KeySwitchKey
from ren.schemes.rlwe.keyswitch import KeySwitchMethod, key_switcher

if TYPE_CHECKING:
    from ren.schemes.rlwe.keyset import EvaluationKeys
    from ren.schemes.rlwe.params import Chain


class KeyChain:
    """The keys of one RLWE context: made on first need, kept, behind one lock.

    Args:
        params: the scheme's parameters (a key ring, digits, moduli, ``sigma``,
            ``hamming_weight``).
        seed: an int makes every random draw reproducible; ``None`` draws from the system.
        device: where the keys live (default ``$REN_DEVICE``).

    Attributes:
        params: the parameters.
        switcher: the key-switching technique (``key_switcher(params)``): it makes the
            key-switching keys and builds the switches.
        device: the canonical device name.
        rng: the random source (the context's encryptions draw from it too).
        lock: held while keys are made or replaced.
        secret: the secret key (NTT form), or ``None``.
        public: the public key ``(b, a)``, or ``None``.
        relin: the relinearization key, or ``None``.
        galois: the Galois keys made or given so far, by Galois element.
        encapsulation: the keys to a sparse secret and back, by its weight.
    """

    def __init__(self, params: Chain, seed: int | None, device: str | None) -> None:
        self.params = params
        self.switcher: KeySwitchMethod = key_switcher(params)
        self.device = canonical_device(device)
        self.rng = sampling.as_rng(seed)
        self.lock = threading.RLock()
        self.secret: Poly | None = None
        self.public: tuple[Poly, Poly] | None = None
        self.relin: KeySwitchKey | None = None
        self.galois: dict[int, KeySwitchKey] = {}
        self.encapsulation: dict[int, tuple[KeySwitchKey, KeySwitchKey]] = {}  # to s' and back
        self._fingerprint: str | None = None

    @property
    def fingerprint(self) -> str | None:
        """The public key's fingerprint (16 hexadecimal digits), once per key set; or ``None``."""
        fp = self._fingerprint
        if fp is None and self.public is not None:
            with self.lock:
                if self._fingerprint is None and self.public is not None:
                    self._fingerprint = _fmt.fingerprint(self.public)
                fp = self._fingerprint
        return fp

    def keygen(self) -> None:
        """A new secret key, public key and relinearization key (the Galois keys dropped)."""
        with self.lock:
            prm, K = self.params, self.params.key_ring
            if prm.hamming_weight is None:
                s = Poly.ternary(K, self.rng, self.device)
            else:
                s = Poly.sparse_ternary(K, prm.hamming_weight, self.rng, self.device)
            with uncaptured():
                secret = s.ntt().realize()
            a = self.uniform_ntt(K)
            e = Poly.gaussian(K, prm.sigma, self.rng, self.device)
            b = -(a * secret) + e
            with uncaptured():
                public = (b.ntt(), a)
                realize(*public)
            self.install(secret, public)

    def install(
        self, secret: Poly, public: tuple[Poly, Poly], fingerprint: str | None = None
    ) -> None:
        """Take ``secret`` and ``public`` (of ``fingerprint``, if known) and a new relin key."""
        relin = self.make_switch_key(secret, secret * secret, None)
        self.secret, self.public, self._fingerprint = secret, public, fingerprint
        self.galois = {}
        self.encapsulation = {}  # keys to a sparse secret: made again on first use
        self.relin = relin

    def uniform_ntt(self, ring: RingSpec) -> Poly:
        """A uniform poly drawn directly in NTT form (uniform in either form)."""
        limbs = np.stack([sampling.uniform_below(self.rng, q, ring.n) for q in ring.moduli])
        return Poly.from_limbs(limbs, ring, Domain.NTT, self.device)

    def make_switch_key(self, secret: Poly, s_new: Poly, galois: int | None) -> KeySwitchKey:
        """The technique's key switching ``s_new`` to ``secret``, realized."""
        prm = self.params
        key = self.switcher.make_key(
            secret,
            s_new,
            galois,
            self.uniform_ntt,
            lambda ring: Poly.gaussian(ring, prm.sigma, self.rng, self.device),
        )
        with uncaptured():
            realize(*(p for pair in key.parts for p in pair))
        return key

    def require_secret(self, what: str) -> Poly:
        """The secret key, made now if there are no keys; ``what`` says why, in the error.

        Raises:
            ValueError: with a public key but no secret key (a server's evaluation keys).
        """
        with self.lock:
            if self.secret is None:
                if self.public is None:
                    self.keygen()
                else:
                    raise ValueError(f"this context holds no secret key, so it cannot {what}")
            secret = self.secret
            assert secret is not None  # keygen made one
            return secret

    def require_public(self) -> tuple[tuple[Poly, Poly], KeySwitchKey]:
        """The public key and the relinearization key (made now if there are none)."""
        public, relin = self.public, self.relin
        if public is None or relin is None:
            with self.lock:  # a keygen in another thread holds it until both are set
                if self.public is None:
                    self.keygen()
                public, relin = self.public, self.relin
        assert public is not None and relin is not None  # keys=, secret_key= and keygen set both
        return public, relin

    def galois_key(self, g: int) -> KeySwitchKey:
        """The key switching ``s(X^g)`` to ``s``, made on first use (the errors: a context's).

        Raises:
            TypeError: when ``g`` is not an int.
            ValueError: for an even ``g``; without a secret key, when the key was not given.
        """
        if not is_int(g):
            raise TypeError(f"the Galois element must be an int, got {_fmt.describe(g)}")
        two_n = 2 * self.params.n
        if int(g) % 2 == 0:
            raise ValueError(
                f"Galois element {g} (mod 2n={two_n}) is even; it must be odd (5^r mod 2n for a "
                "rotation by r, 2n - 1 for conjugation)"
            )
        g = int(g) % two_n
        key = self.galois.get(g)
        if key is None:
            with self.lock:
                key = self.galois.get(g)
                if key is None:
                    self.require_public()
                    secret = self.secret
                    if secret is None:
                        raise ValueError(
                            f"no key for the Galois element {g} (rotation or conjugation) was "
                            "given to this context, and it holds no secret key to make one"
                        )
                    key = self.make_switch_key(secret, secret.automorphism(g), g)
                    self.galois = {**self.galois, g: key}  # readers never see a half-made dict
        return key

    def encapsulation_keys(self, hamming_weight: int) -> tuple[KeySwitchKey, KeySwitchKey]:
        """``(down, up)``: keys to a fresh sparse secret of ``hamming_weight`` nonzeros and back.

        Made on first use and kept, per weight (a context's ``encapsulation_keys`` says more).

        Raises:
            TypeError, ValueError: a weight that is not an int in ``[1, n]``.
            ValueError: without a secret key.
        """
        if not is_int(hamming_weight):
            raise TypeError(f"hamming_weight must be an int, got {_fmt.describe(hamming_weight)}")
        h = int(hamming_weight)
        if not 1 <= h <= self.params.n:
            raise ValueError(f"hamming_weight={h} must be in [1, n={self.params.n}]")
        made = self.encapsulation
        if h not in made:
            with self.lock:
                made = self.encapsulation  # a keygen may have replaced it
                if h not in made:
                    secret = self.require_secret("make sparse-secret encapsulation keys")
                    K = self.params.key_ring
                    sparse = Poly.sparse_ternary(K, h, self.rng, self.device)
                    with uncaptured():
                        sparse = sparse.ntt().realize()
                    down = self.make_switch_key(sparse, secret, None)
                    up = self.make_switch_key(secret, sparse, None)
                    made[h] = (down, up)
        return made[h]

    def adopt(self, keys: EvaluationKeys) -> None:
        """Take the public, relinearization and rotation keys of ``keys``, on this device.

        ``keys`` is an evaluation key set its context checked (a server's ``keys=``).
        """
        b, a = keys.public
        self.public = (b.to(self.device), a.to(self.device))
        self._fingerprint = keys.fingerprint
        self.relin = self._to_device(keys.relin)
        self.galois = {g: self._to_device(k) for g, k in keys.galois.items()}

    def _to_device(self, key: KeySwitchKey) -> KeySwitchKey:
        return KeySwitchKey(
            key.galois, tuple((b.to(self.device), a.to(self.device)) for b, a in key.parts)
        )
