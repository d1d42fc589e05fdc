"""What every RLWE scheme's context is: a holder of its keys, copied only as far as they allow.

A scheme's context (``ckks.Context``, ``bfv.Context``, ``bgv.Context``) subclasses
:class:`RlweContext`. It *holds* its keys: ``keychain``, a ``ren.schemes.rlwe.keygen.KeyChain``
that makes and keeps them with the key-switching technique its parameters choose
(``key_switcher``, :mod:`ren.schemes.rlwe.keyswitch`). The context names what users ask of them
(``has_secret_key``, ``key_fingerprint``, ``keygen``, ``galois_key``, ``encapsulation_keys``) and
hands each to the key chain. What the schemes share besides:

* the keys a context is given (``keys=`` evaluation keys, ``secret_key=`` an exported secret
  key), each checked before the context takes them;
* the current contexts: one variable per scheme (:mod:`ren.schemes.rlwe.active`), which
  ``with ctx:`` (the scheme's own ``__enter__``) pushes the context on;
* the values it takes: a ciphertext made under other keys is refused, and one made by another
  context of these keys is bound to this one (its parts moved to this device);
* the key-switched steps every evaluator has: relinearization (``relinearize``: ``c_2``
  switched from ``s^2`` to ``s``) and a Galois automorphism (``c_1(X^g)`` switched from
  ``s(X^g)`` to ``s``);
* encryption's refusal inside a ``ren.jit`` capture, whose replays would reuse the randomness;
* copies: a context holding a secret key refuses ``pickle``, ``copy`` and ``deepcopy``
  (``TypeError``): the secret key leaves it only through ``export_secret_key()``. One holding
  evaluation keys (or none) pickles as its parameters, device and evaluation keys, and copies as
  a new context of those.
"""

from __future__ import annotations

import abc
import contextvars
import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Self, TypeVar

from ren.capture.function import capturing
from ren.engine.realize import uncaptured
from ren.ir.region import in_region
from ren.poly import Poly, is_int
from ren.ring import galois_for_rotation
from ren.schemes.rlwe import bytes as _fmt
from ren.schemes.rlwe.active import active_contexts
from ren.schemes.rlwe.keygen import KeyChain
from ren.schemes.rlwe.keys import KeySwitchKey
from ren.schemes.rlwe.keyset import EvaluationKeys, export_secret, load_secret
from ren.schemes.rlwe.keyswitch import KeySwitchMethod
from ren.schemes.rlwe.params import Chain
from ren.schemes.rlwe.values import RlweCiphertext

__all__ = ["RlweContext"]

CT = TypeVar("CT", bound=RlweCiphertext)  # the scheme's Ciphertext
P = TypeVar("P", bound=Chain)  # the scheme's Params


class RlweContext(abc.ABC, Generic[CT, P]):
    """The part of a scheme's context every RLWE scheme shares: it holds its keys (``keychain``).

    A scheme's context sets ``scheme`` (its name: ``"ckks"``, ``"bfv"``, ...), ``_keys_type`` (its
    ``EvaluationKeys``), ``_unpickler()`` (the function that rebuilds it) and ``_params_of`` (a
    blob's parameters, checked to be its own), and calls ``_start`` and ``_take_keys`` from its
    constructor.
    """

    scheme: ClassVar[str]
    #: The scheme's evaluation keys (``ckks.EvaluationKeys``, ...), which ``keys=`` must be.
    _keys_type: ClassVar[type[EvaluationKeys]]
    #: This thread's active contexts of the scheme, innermost last (one variable per scheme).
    _active: ClassVar[contextvars.ContextVar[tuple[Any, ...]]]
    #: The generator whose powers rotate the slots: 5 (CKKS), 3 (BFV and BGV rows, as SEAL's).
    _rotation_generator: ClassVar[int] = 5

    params: P
    device: str
    keychain: KeyChain

    if TYPE_CHECKING:  # each scheme's own, with its own Params and EvaluationKeys

        def __init__(
            self,
            params: P,
            seed: int | None = None,
            device: str | None = None,
            *,
            keys: EvaluationKeys | None = None,
            secret_key: bytes | None = None,
        ) -> None: ...

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "scheme" in cls.__dict__:  # a scheme's context: its own current contexts
            cls._active = active_contexts(cls.scheme)

    def _start(self, params: P, seed: int | None, device: str | None) -> None:
        """The parameters and the key chain (the device, the random source, no keys yet)."""
        self.keychain = KeyChain(params, seed, device)
        self.params = params
        self.device = self.keychain.device

    # --- what a scheme says -----------------------------------------------------------------
    @classmethod
    @abc.abstractmethod
    def _unpickler(cls) -> Callable[[P, str, bytes | None], RlweContext[CT, P]]:
        """The function that rebuilds a context from its parameters, device and keys' bytes."""

    @abc.abstractmethod
    def _params_of(self, h: _fmt.Header, what: str) -> P:
        """The parameters of a blob's checked header: they must be this context's."""

    def _kind(self, what: str) -> str:
        """The kind of this scheme's blobs of ``what`` (``"secret-key"``, ...)."""
        return what

    def _check_keys(self, keys: EvaluationKeys) -> None:
        """What the scheme checks of ``keys=`` before their parameters (nothing, by default)."""

    @abc.abstractmethod
    def _own(self, ct: object) -> CT:
        """``ct``, checked to be a ciphertext of this scheme, parameters and keys, bound here."""

    @abc.abstractmethod
    def evaluation_keys(self) -> EvaluationKeys:
        """The public key, relinearization key and the rotation keys made so far."""

    # --- the keys, held by the key chain ----------------------------------------------------
    @property
    def key_switcher(self) -> KeySwitchMethod:
        """The key-switching technique (``ren.schemes.rlwe.keyswitch``): makes keys, switches."""
        return self.keychain.switcher

    @key_switcher.setter
    def key_switcher(self, method: KeySwitchMethod) -> None:
        self.keychain.switcher = method

    @property
    def has_secret_key(self) -> bool:
        """Whether this context can decrypt (and make new rotation keys)."""
        return self.keychain.secret is not None

    @property
    def key_fingerprint(self) -> str | None:
        """The fingerprint of this context's public key (16 hexadecimal digits), or ``None``.

        ``None`` while the context holds no keys. Computed once per key set; every ciphertext
        made under the keys carries it, and loading or using one here checks it.
        """
        return self.keychain.fingerprint

    def keygen(self) -> None:
        """Make a new secret key, public key and relinearization key (dropping rotation keys).

        Ciphertexts made under the old keys are refused afterwards (their fingerprint differs).
        """
        self.keychain.keygen()

    def galois_key(self, g: int) -> KeySwitchKey:
        """The key switching ``s(X^g)`` to ``s``, made on first use (outside any jit capture).

        Args:
            g: the Galois element, an odd int (taken modulo ``2n``).

        Raises:
            TypeError: when ``g`` is not an int.
            ValueError: for an even ``g``; without a secret key, when the key was not given with
                the context.
        """
        return self.keychain.galois_key(g)

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
        return self.keychain.encapsulation_keys(hamming_weight)

    def rotation_key(self, steps: int) -> KeySwitchKey:
        """The key of a rotation by ``steps`` slots (made on first use).

        It is ``galois_key(g^steps mod 2n)``: ``g = 5`` for CKKS's ``rotate``, ``3`` for BFV's
        and BGV's ``rotate_rows`` (``X -> X^(3^steps)``); conjugation and the column swap use
        ``galois_key(2 * n - 1)``. Make them before ``evaluation_keys()``: a context without the
        secret key cannot.

        Raises:
            TypeError: when ``steps`` is not an int.
        """
        if not is_int(steps):
            raise TypeError(f"rotation steps must be an int, got {_fmt.describe(steps)}")
        n, g = self.params.n, self._rotation_generator
        return self.galois_key(galois_for_rotation(n, int(steps) % (n // 2), generator=g))

    def export_secret_key(self) -> bytes:
        """The secret key and its public key, in Ren's format. Keep it secret.

        The blob's kind names the scheme (``secret-key`` for CKKS, ``bfv-secret-key``,
        ``bgv-secret-key``). ``Context(params, secret_key=blob)`` reads it back: the same secret
        key, public key and key fingerprint, so that context takes this one's ciphertexts.
        """
        return export_secret(self.keychain, self._kind("secret-key"))

    @property
    def _keys_held(self) -> str:
        """Which keys it holds, for its ``repr``: ``"secret"``, ``"evaluation"`` or ``"no"``."""
        keys = self.keychain
        return "secret" if keys.secret is not None else "evaluation" if keys.public else "no"

    def _repr_html_(self) -> str:
        """The notebook's display (``rlwe.display``): its keys by name, never their words."""
        from ren.schemes.rlwe.display import context_html

        return context_html(self)

    @property
    def _secret(self) -> Poly | None:
        return self.keychain.secret

    @property
    def _public(self) -> tuple[Poly, Poly] | None:
        return self.keychain.public

    @property
    def _galois(self) -> dict[int, KeySwitchKey]:
        return self.keychain.galois

    def _require_secret(self, what: str) -> Poly:
        """The secret key (made now if the context holds no keys); ``what`` names the need."""
        return self.keychain.require_secret(what)

    def _require_public(self) -> tuple[tuple[Poly, Poly], KeySwitchKey]:
        """The public key and the relinearization key (made now if the context has none)."""
        return self.keychain.require_public()

    def _take_keys(self, keys: EvaluationKeys | None, secret_key: bytes | None) -> None:
        """The constructor's ``keys=`` or ``secret_key=``: the context's keys, checked."""
        if keys is not None and secret_key is not None:
            raise ValueError("pass keys= or secret_key=, not both")
        if keys is not None:
            if not isinstance(keys, self._keys_type):
                raise TypeError(
                    f"keys must be {self.scheme}.EvaluationKeys, got {type(keys).__name__}"
                )
            self._check_keys(keys)
            if keys.params != self.params:
                raise ValueError(f"the keys are for {keys.params}, not {self.params}")
            self.keychain.adopt(keys)
        if secret_key is not None:
            load_secret(
                self.keychain,
                secret_key,
                self._kind("secret-key"),
                lambda h: self._params_of(h, "secret key"),
                self.scheme.upper(),
            )

    # --- key switching, as every evaluator does it ------------------------------------------
    def _switch(
        self, c: Poly, key: KeySwitchKey, level: int, galois: int | None = None
    ) -> tuple[Poly, Poly]:
        """``c`` key switched with ``key`` at ``level`` (after ``X -> X^galois``, if given)."""
        return self.key_switcher.switch(c, key, level, galois)

    @in_region("relinearize")
    def relinearize(self, ct: CT) -> CT:
        """Two parts from three: ``c_2`` key switched from ``s^2`` to ``s`` (two parts: as is)."""
        own = self._own(ct)
        if own.size == 2:
            return own
        return self._key_switched(own._evolve(parts=self._relinearized(own.parts, own.level)))

    def _key_switched(self, ct: CT) -> CT:
        """``ct`` just key switched at its level: a scheme's noise estimate grows here (as is)."""
        return ct

    def _relinearized(self, parts: tuple[Poly, ...], level: int) -> tuple[Poly, Poly]:
        """``(c_0 + k_0, c_1 + k_1)``: ``c_2`` key switched from ``s^2`` to ``s``, added."""
        _, relin = self._require_public()
        k0, k1 = self._switch(parts[2], relin, level)
        return parts[0] + k0, parts[1] + k1

    def _automorphism(self, parts: tuple[Poly, ...], g: int, level: int) -> tuple[Poly, Poly]:
        """``(c_0(X^g) + k_0, k_1)``: the parts under ``X -> X^g``, key switched back to ``s``.

        The automorphism acts on ``c_1``'s extended digits, after the ModUp: every rotation of
        one ciphertext builds the same ModUp nodes, so rotations realized together share it.
        The key is made outside any jit capture.
        """
        with uncaptured():
            key = self.galois_key(g)
        c0, c1 = parts
        k0, k1 = self._switch(c1, key, level, galois=g)
        return c0.automorphism(g) + k0, k1

    def _refuse_in_capture(self, what: str) -> None:
        """``what`` (``"encrypt"``) draws randomness: refused inside a ``ren.jit`` capture.

        Raises:
            RuntimeError: inside a capture, whose replays would reuse the same randomness.
        """
        jitted = capturing()
        if jitted is not None:
            raise RuntimeError(
                f"{self.scheme}.{what} was called inside the jitted function {jitted.name}: a "
                f"replay would reuse the same randomness; {what} outside the jitted function and "
                "pass the ciphertext in"
            )

    # --- the values it takes ----------------------------------------------------------------
    def _is_bound(self, ct: RlweCiphertext) -> bool:
        """Whether ``ct`` was made here, under the keys held now (the common case: no checks)."""
        fp = ct.key_fingerprint
        return ct.context is self and fp is not None and fp == self.keychain.fingerprint

    def _bind(self, ct: CT) -> CT:
        """``ct`` (of these parameters) checked to be under these keys, bound to this context."""
        value = ct
        self._check_fingerprint(value.key_fingerprint, "ciphertext")
        if value.context is not self:
            parts = value.parts
            if parts[0].device != self.device:
                parts = tuple(p.to(self.device) for p in parts)
            value = dataclasses.replace(value, parts=parts, context=self, params=self.params)
        return value

    # --- copies -----------------------------------------------------------------------------
    def _check_fingerprint(self, fp: str | None, what: str) -> None:
        """``fp`` (a value's key fingerprint) is this context's, or ``None`` (built by hand)."""
        if fp is None:
            return
        mine = self.key_fingerprint
        if mine is None:
            raise ValueError(
                f"the {what} was made under the keys with fingerprint {fp}, and this context "
                "holds no keys: make it with the keys the value was made under (keys= the "
                "evaluation keys, or secret_key= the exported secret key); a context never makes "
                "keys for a value made elsewhere"
            )
        if fp != mine:
            raise ValueError(
                f"the {what} was made under the keys with fingerprint {fp}, and this context "
                f"holds the keys with fingerprint {mine}: decrypt it where it was made, or use a "
                "context made with its keys (keys= or secret_key=)"
            )

    def _refuse_copy(self, what: str) -> None:
        if self.keychain.secret is not None:
            raise TypeError(
                f"a {self.scheme}.Context holding a secret key cannot be {what}: the secret key "
                "leaves a context only through export_secret_key() (keep those bytes secret); to "
                "share what a server needs, send ctx.evaluation_keys() (or its to_bytes()) and "
                "the ciphertexts"
            )

    def __reduce__(
        self,
    ) -> tuple[Callable[[P, str, bytes | None], RlweContext[CT, P]], tuple[P, str, bytes | None]]:
        self._refuse_copy("pickled")
        keys = None if self.keychain.public is None else self.evaluation_keys().to_bytes()
        return (self._unpickler(), (self.params, self.device, keys))

    def __copy__(self) -> Self:
        self._refuse_copy("copied")
        keys = None if self.keychain.public is None else self.evaluation_keys()
        return type(self)(self.params, device=self.device, keys=keys)

    def __deepcopy__(self, memo: dict[int, object]) -> RlweContext[CT, P]:
        self._refuse_copy("copied")
        rebuild, args = self.__reduce__()
        return rebuild(*args)
