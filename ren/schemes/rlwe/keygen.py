"""Key generation for an RLWE context: the secret, public and key-switching keys."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ren.device import canonical_device
from ren.engine.realize import uncaptured
from ren.poly import Poly, is_int, realize
from ren.ring import Domain, RingSpec, sampling
from ren.schemes.rlwe import bytes as _fmt
from ren.schemes.rlwe.keys import KeySwitchKey
from ren.schemes.rlwe.keyswitch import KeySwitchMethod, key_switcher


class KeyOwner:
    """The keys of an RLWE context: made on first need, kept, behind the context's lock.

    A mixin: the context sets what is declared here (its parameters, with a key ring, digits,
    moduli, ``sigma`` and ``hamming_weight``; its device, random source and lock; the keys).
    ``key_switcher`` is the key-switching technique its parameters choose
    (:mod:`ren.schemes.rlwe.keyswitch`): it makes the key-switching keys and builds the switches.
    """

    params: Any
    device: str
    _rng: Any
    _lock: Any
    _secret: Poly | None
    _public: tuple[Poly, Poly] | None
    _fingerprint: str | None
    _relin: KeySwitchKey | None
    _galois: dict[int, KeySwitchKey]
    _encapsulation: dict[int, tuple[KeySwitchKey, KeySwitchKey]]  # by weight: to s' and back
    key_switcher: KeySwitchMethod

    def _start(self, params: Any, seed: int | None, device: str | None) -> None:
        """The context's parameters, device, random source and lock, and no keys yet."""
        self.params = params
        self.key_switcher = key_switcher(params)
        self.device = canonical_device(device)
        self._rng = sampling.as_rng(seed)
        self._lock = threading.RLock()
        self._secret = None
        self._public = None
        self._fingerprint = None
        self._relin = None
        self._galois = {}
        self._encapsulation = {}

    # --- keys -------------------------------------------------------------------------------------
    @property
    def has_secret_key(self) -> bool:
        """Whether this context can decrypt (and make new rotation keys)."""
        return self._secret is not None

    @property
    def key_fingerprint(self) -> str | None:
        """The fingerprint of this context's public key (16 hexadecimal digits), or ``None``.

        ``None`` while the context holds no keys. Computed once per key set; every ciphertext
        made under the keys carries it, and loading or using one here checks it.
        """
        fp = self._fingerprint
        if fp is None and self._public is not None:
            with self._lock:
                if self._fingerprint is None and self._public is not None:
                    self._fingerprint = _fmt.fingerprint(self._public)
                fp = self._fingerprint
        return fp

    def keygen(self) -> None:
        """Make a new secret key, public key and relinearization key (dropping rotation keys).

        Ciphertexts made under the old keys are refused afterwards (their fingerprint differs).
        """
        with self._lock:
            prm, K = self.params, self.params.key_ring
            if prm.hamming_weight is None:
                s = Poly.ternary(K, self._rng, self.device)
            else:
                s = Poly.sparse_ternary(K, prm.hamming_weight, self._rng, self.device)
            with uncaptured():
                secret = s.ntt().realize()
            a = self._uniform_ntt(K)
            e = Poly.gaussian(K, prm.sigma, self._rng, self.device)
            b = -(a * secret) + e
            with uncaptured():
                public = (b.ntt(), a)
                realize(*public)
            self._install(secret, public)

    def _install(self, secret: Poly, public: tuple[Poly, Poly]) -> None:
        """Take ``secret`` and ``public`` as this context's keys; a new relinearization key."""
        relin = self._make_switch_key(secret, secret * secret, None)
        self._secret, self._public, self._fingerprint = secret, public, None
        self._galois = {}
        self._encapsulation = {}  # keys to a sparse secret: made again on first use
        self._relin = relin

    def _uniform_ntt(self, ring: RingSpec) -> Poly:
        """A uniform poly drawn directly in NTT form (uniform in either form)."""
        limbs = np.stack([sampling.uniform_below(self._rng, q, ring.n) for q in ring.moduli])
        return Poly.from_limbs(limbs, ring, Domain.NTT, self.device)

    def _make_switch_key(self, secret: Poly, s_new: Poly, galois: int | None) -> KeySwitchKey:
        """The context's technique's key switching ``s_new`` to ``secret``, realized."""
        prm = self.params
        key = self.key_switcher.make_key(
            secret,
            s_new,
            galois,
            self._uniform_ntt,
            lambda ring: Poly.gaussian(ring, prm.sigma, self._rng, self.device),
        )
        with uncaptured():
            realize(*(p for pair in key.parts for p in pair))
        return key

    def _require_secret(self, what: str) -> Poly:
        with self._lock:
            if self._secret is None:
                if self._public is None:
                    self.keygen()
                else:
                    raise ValueError(f"this context holds no secret key, so it cannot {what}")
            secret = self._secret
            assert secret is not None  # keygen made one
            return secret

    def _require_public(self) -> tuple[tuple[Poly, Poly], KeySwitchKey]:
        """The public key and the relinearization key (made now if the context has none)."""
        public, relin = self._public, self._relin
        if public is None or relin is None:
            with self._lock:  # a keygen in another thread holds it until both are set
                if self._public is None:
                    self.keygen()
                public, relin = self._public, self._relin
        assert public is not None and relin is not None  # keys=, secret_key= and keygen set both
        return public, relin

    def galois_key(self, g: int) -> KeySwitchKey:
        """The key switching ``s(X^g)`` to ``s``, made on first use (outside any jit capture).

        Args:
            g: the Galois element, an odd int (taken modulo ``2n``).

        Raises:
            TypeError: when ``g`` is not an int.
            ValueError: for an even ``g``; without a secret key, when the key was not given with
                the context.
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
        key = self._galois.get(g)
        if key is None:
            with self._lock:
                key = self._galois.get(g)
                if key is None:
                    self._require_public()
                    secret = self._secret
                    if secret is None:
                        raise ValueError(
                            f"no key for the Galois element {g} (rotation or conjugation) was "
                            "given to this context, and it holds no secret key to make one"
                        )
                    key = self._make_switch_key(secret, secret.automorphism(g), g)
                    self._galois = {**self._galois, g: key}  # readers never see a half-made dict
        return key

    def encapsulation_keys(self, hamming_weight: int) -> tuple[KeySwitchKey, KeySwitchKey]:
        """Keys to a fresh sparse secret ``s'`` of ``hamming_weight`` nonzeros, and back.

        ``(down, up)``: ``down`` switches from the secret ``s`` to ``s'``, ``up`` from ``s'`` back
        to ``s``; ``s'`` itself is dropped once both are made. Bootstrapping raises a ciphertext
        under ``s'`` so the multiple of ``q_0`` it picks up stays small (sparse-secret
        encapsulation). Made on first use and kept, per weight, behind the context's lock.

        Raises:
            TypeError, ValueError: a weight that is not an int in ``[1, n]``.
            ValueError: without a secret key (evaluation keys do not hold these yet).
        """
        if not is_int(hamming_weight):
            raise TypeError(f"hamming_weight must be an int, got {_fmt.describe(hamming_weight)}")
        h = int(hamming_weight)
        if not 1 <= h <= self.params.n:
            raise ValueError(f"hamming_weight={h} must be in [1, n={self.params.n}]")
        made = self._encapsulation
        if h not in made:
            with self._lock:
                made = self._encapsulation  # a keygen may have replaced it
                if h not in made:
                    secret = self._require_secret("make sparse-secret encapsulation keys")
                    K = self.params.key_ring
                    sparse = Poly.sparse_ternary(K, h, self._rng, self.device)
                    with uncaptured():
                        sparse = sparse.ntt().realize()
                    down = self._make_switch_key(sparse, secret, None)
                    up = self._make_switch_key(secret, sparse, None)
                    made[h] = (down, up)
        return made[h]

    def _adopt(self, keys: Any) -> None:
        """Take the public, relinearization and rotation keys of ``keys``, on this device.

        ``keys`` is an evaluation key set its context checked (a server's ``keys=``).
        """
        b, a = keys.public
        self._public = (b.to(self.device), a.to(self.device))
        self._fingerprint = keys.fingerprint
        self._relin = self._key_to_device(keys.relin)
        self._galois = {g: self._key_to_device(k) for g, k in keys.galois.items()}

    def _key_to_device(self, key: KeySwitchKey) -> KeySwitchKey:
        return KeySwitchKey(
            key.galois, tuple((b.to(self.device), a.to(self.device)) for b, a in key.parts)
        )
