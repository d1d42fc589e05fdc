"""What a BFV and a BGV context share: keys, encoding, encryption, additions, rotations, noise.

A scheme's context (``bfv.Context``, ``bgv.Context``) subclasses :class:`IntContext`, which is
what every RLWE scheme's context is (``ren.schemes.rlwe.context.RlweContext``: it holds its keys
as ``keychain``), and says where the message sits (``_plain_term``, ``_fresh``), how two
ciphertexts multiply (``_tensor``), how a decryption gives the message (``_message``) and what
the noise is (``_noise``).
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import ClassVar

import numpy as np

from ren.engine.realize import uncaptured
from ren.errors import RenError
from ren.ir.region import in_region
from ren.poly import Poly, is_int, realize
from ren.ring import RingSpec, galois_for_rotation
from ren.schemes.integer import batching, noise
from ren.schemes.integer import bytes as _bytes
from ren.schemes.integer.keys import EvaluationKeys, _context_from_pickle
from ren.schemes.integer.params import IntParams
from ren.schemes.integer.types import Ciphertext, Plaintext
from ren.schemes.rlwe import bytes as _fmt
from ren.schemes.rlwe import keyset
from ren.schemes.rlwe.active import enter, leave
from ren.schemes.rlwe.context import RlweContext
from ren.schemes.rlwe.encrypt import decrypt_parts, encrypt_zero

__all__ = ["IntContext", "NoiseBudgetExhausted"]


class NoiseBudgetExhausted(RenError, ValueError):
    """A ciphertext's noise has grown past what decryption can remove: its values are lost."""


class IntContext(RlweContext[Ciphertext, IntParams]):
    """Keys, encoding, encryption and evaluation for one BFV or BGV parameter set.

    Keys are made on entering the ``with`` block (or at the first operation that needs them);
    rotation keys on first use. ``with ctx:`` makes it this thread's current context of its
    scheme. A context never computes on a ciphertext made under other keys (another key
    fingerprint): that is a ``ValueError``.

    Copies: a context holding a secret key refuses ``pickle``, ``copy`` and ``deepcopy``
    (``TypeError``): the secret key leaves it only through ``export_secret_key()``. A context
    holding evaluation keys (or none) pickles as its parameters, device and evaluation keys.

    Args:
        params: the scheme's ``Params``.
        seed: an int makes every random draw reproducible (tests and teaching); ``None`` draws
            from the operating system.
        device: ``"python"``, ``"cpu"`` or ``"cuda"`` (default ``$REN_DEVICE``).
        keys: ``EvaluationKeys`` (``ctx.evaluation_keys()``) to evaluate with instead of making
            keys: a server's context, which computes but cannot decrypt or measure a noise budget.
        secret_key: a secret key written by ``export_secret_key``, with its public key; the
            relinearization key is made from it (the rotation keys on first use).
    """

    scheme: ClassVar[str] = "integer"
    params_type: ClassVar[type[IntParams]] = IntParams
    _keys_type = EvaluationKeys
    _rotation_generator = 3
    params: IntParams

    def __init__(
        self,
        params: IntParams,
        seed: int | None = None,
        device: str | None = None,
        *,
        keys: EvaluationKeys | None = None,
        secret_key: bytes | None = None,
    ):
        if not isinstance(params, self.params_type):
            raise TypeError(f"params must be a {self.scheme}.Params, got {_fmt.describe(params)}")
        self._start(params, seed, device)
        self._take_keys(keys, secret_key)

    def __repr__(self) -> str:
        have, p = self._keys_held, self.params
        return f"<{self.scheme}.Context n={p.n} L={p.L} t={p.t} {self.device}, {have} keys>"

    def __enter__(self) -> IntContext:
        self._require_public()
        enter(self._active, self)
        return self

    def __exit__(self, *exc: object) -> None:
        leave(self._active, self)

    # --- keys and copies ------------------------------------------------------------------------
    @classmethod
    def _unpickler(cls) -> Callable[[IntParams, str, bytes | None], IntContext]:
        return _context_from_pickle

    def _kind(self, what: str) -> str:
        return _bytes.kind(self.scheme, what)

    def _params_of(self, h: _fmt.Header, what: str) -> IntParams:
        return _bytes.params_of(h, self.params, what)

    def _check_keys(self, keys: keyset.EvaluationKeys) -> None:
        if keys.params.scheme != self.scheme:
            raise ValueError(
                f"the keys are {keys.params.scheme.upper()} keys, and this a "
                f"{self.scheme.upper()} context"
            )

    def evaluation_keys(self) -> EvaluationKeys:
        """The public key, relinearization key and the rotation keys made so far."""
        return keyset.evaluation_keys(self.keychain, EvaluationKeys)

    # --- encoding -------------------------------------------------------------------------------
    def encode(self, values: object) -> Plaintext:
        """``n`` integers (taken mod ``t``) in the slots, as a plaintext.

        Row ``r``, column ``j`` is index ``r n/2 + j``. A scalar fills every slot; missing values
        are 0.

        Raises:
            TypeError: values that are not integers.
            ValueError: more than ``n`` values, or a ``t`` that does not allow batching.
        """
        m = batching.message(values, self.params)
        return Plaintext(batching.encode(m, self.params), self.params)

    def encode_coefficients(self, coeffs: object) -> Plaintext:
        """The polynomial with these coefficients (taken mod ``t``; missing ones are 0)."""
        return Plaintext(batching.message(coeffs, self.params, "coefficients"), self.params)

    def decode(self, pt: Plaintext) -> np.ndarray:
        """The slot values of a plaintext (int64 in ``[0, t)``)."""
        return batching.decode(self._plaintext(pt).coeffs, self.params)

    def _plaintext(self, value: object) -> Plaintext:
        """A plaintext, an int (the constant polynomial) or slot values (``Plaintext.of``)."""
        return Plaintext.of(value, self.params, ints=True)

    def _plain_poly(self, pt: Plaintext, ring: RingSpec) -> Poly:
        """The plaintext's centered coefficients as a poly over ``ring`` (coefficient form)."""
        c = pt.centered()
        limbs = np.stack([np.mod(c, q) for q in ring.moduli]).astype(np.uint64)
        return Poly.from_limbs(limbs, ring, device=self.device)

    # --- encryption -----------------------------------------------------------------------------
    @in_region("encrypt")
    def encrypt(self, values: object) -> Ciphertext:
        """An encryption of ``values`` (slot values, an int, a ``Plaintext``) at the top level.

        Raises:
            RuntimeError: inside a ``ren.jit`` capture (a replay would reuse the randomness).
        """
        self._refuse_in_capture("encrypt")
        pt = self._plaintext(values)
        public, _ = self._require_public()
        level = self.params.max_level
        z0, z1 = encrypt_zero(self.params, public, level, self.keychain.rng, self.device)
        c0, c1 = self._fresh(z0, z1, pt, level)
        est = noise.encrypted(self.params, pt)
        return Ciphertext((c0.ntt(), c1.ntt()), level, context=self, noise=est)

    def decrypt_poly(self, ct: Ciphertext) -> Poly:
        """``c_0 + c_1 s (+ c_2 s^2)``, lazily, in NTT form: the message and the noise.

        BFV: ``round(Q m / t) + e``; BGV: ``f m + t e`` (``ct.correction`` is ``f``).

        Raises:
            ValueError: without a secret key, or for a ciphertext under other keys.
        """
        ct = self._own(ct)
        secret = self._require_secret("decrypt")
        return decrypt_parts(ct.parts, secret.to_ring(ct.parts[0].ring))

    def _decrypted(self, ct: Ciphertext, what: str = "decrypt") -> list[int]:
        """``c_0 + c_1 s (+ c_2 s^2)`` as centered Python ints (needs the secret key).

        The ciphertext's own parts are realized first, so a later operation on it reuses them
        rather than computing its history again.
        """
        ct = self._own(ct)
        secret = self._require_secret(what)
        with uncaptured():
            realize(*ct.parts)
            x = decrypt_parts(ct.parts, secret.to_ring(ct.parts[0].ring)).intt()
            return x.tolist(centered=True)

    def decrypt(
        self, ct: Ciphertext, *, coefficients: bool = False, signed: bool = False
    ) -> np.ndarray:
        """The values (int64 in ``[0, t)``): the ``n`` slots, or the coefficients.

        The ciphertext's parts are realized first and keep their buffers, so a later operation on
        it reads them rather than computing its history again.

        Args:
            ct: the ciphertext.
            coefficients: return the message polynomial's coefficients instead of the slots
                (always so when ``t`` does not allow batching).
            signed: return each value ``v`` centred instead, in ``[-((t - 1) // 2), t // 2]``
                (``v - t`` when ``v > t // 2``: ``(-t/2, t/2]``, as SEAL's ``BatchEncoder``
                decodes to ``int64``).

        Raises:
            TypeError: for a ``coefficients`` or ``signed`` that is not a bool.
            NoiseBudgetExhausted: the noise budget is 0 bits: the values may be wrong.
            ValueError: without a secret key, or for a ciphertext under other keys.
        """
        for name, flag in (("coefficients", coefficients), ("signed", signed)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be True or False, got {_fmt.describe(flag)}")
        ct = self._own(ct)
        x = self._decrypted(ct)
        budget = self._budget(x, ct.level)
        if budget <= 0:
            raise NoiseBudgetExhausted(
                f"noise budget exhausted: this {self.scheme.upper()} ciphertext has 0 bits left "
                f"at level {ct.level}, so its decryption would be wrong; use larger q_bits (or "
                "fewer multiplications, or BGV's mod_switch to keep the noise small)"
            )
        m = np.array(self._message(x, ct), dtype=np.int64)
        if self.params.batching and not coefficients:
            m = batching.decode(m, self.params)
        if signed:
            t = self.params.t
            m = np.where(m > t // 2, m - t, m).astype(np.int64)
        return m

    def noise_budget(self, ct: Ciphertext) -> int:
        """Bits of noise budget left (as SEAL's ``invariant_noise_budget``); 0: exhausted.

        ``log2(Q) - log2(|v|) - 1`` (bit sizes, at the ciphertext's level), with ``v`` the
        noise: BFV's ``[t (c_0 + c_1 s)]_Q``, BGV's ``[c_0 + c_1 s]_Q``. Needs the secret key.
        """
        ct = self._own(ct)
        return max(0, self._budget(self._decrypted(ct, "measure a noise budget"), ct.level))

    def predicted_noise_budget(self, ct: Ciphertext) -> float:
        """Bits of budget ``ct`` is predicted to have, no key, no run (``integer.noise``).

        Raises:
            ValueError: for a ciphertext with no estimate (read from bytes, unpickled, returned
                by a ``ren.jit`` function, built by hand), or one under other keys.
        """
        return noise.predicted_budget(self._own(ct))

    def _budget(self, x: list[int], level: int) -> int:
        Q = self.params.ring(level).Q
        worst = max((abs(v) for v in self._noise(x, Q)), default=0)
        return Q.bit_length() - worst.bit_length() - 1

    # --- the scheme's part ----------------------------------------------------------------------
    @abc.abstractmethod
    def _plain_term(self, pt: Plaintext, ring: RingSpec, correction: int) -> Poly:
        """The message of ``pt`` as it sits in ``c_0`` over ``ring`` (coefficient form).

        BFV: ``round(Q m / t)``; BGV: ``correction * m mod t``, centred.
        """

    @abc.abstractmethod
    def _fresh(self, z0: Poly, z1: Poly, pt: Plaintext, level: int) -> tuple[Poly, Poly]:
        """A fresh encryption of ``pt`` from the encryption of zero ``(z0, z1)``."""

    @abc.abstractmethod
    def _tensor(self, a: Ciphertext, b: Ciphertext) -> Ciphertext:
        """The three-part product of two two-part ciphertexts (before relinearization)."""

    @abc.abstractmethod
    def _message(self, x: list[int], ct: Ciphertext) -> list[int]:
        """The message coefficients in ``[0, t)`` of ``x = c_0 + c_1 s``, centred."""

    @abc.abstractmethod
    def _noise(self, x: list[int], Q: int) -> list[int]:
        """The noise whose size the budget measures, from ``x = c_0 + c_1 s``, centred."""

    def _match(self, a: Ciphertext, b: Ciphertext) -> tuple[Ciphertext, Ciphertext]:
        """Two ciphertexts brought to one level and correction (BGV; BFV's always match)."""
        return a, b

    # --- evaluation -----------------------------------------------------------------------------
    def _own(self, ct: object) -> Ciphertext:
        """``ct``, checked to be under this context's parameters and keys, and bound to it."""
        if not isinstance(ct, Ciphertext):
            raise TypeError(f"expected a {self.scheme}.Ciphertext, got {_fmt.describe(ct)}")
        if self._is_bound(ct):
            return ct  # the common case: made here, under the keys held now
        if ct.params is not None and ct.params != self.params:
            if ct.params.scheme != self.scheme:
                raise ValueError(
                    f"the ciphertext is a {ct.params.scheme.upper()} ciphertext, and this a "
                    f"{self.scheme.upper()} context"
                )
            raise ValueError(f"the ciphertext is for {ct.params}, not this context's {self.params}")
        if ct.params is None and ct.parts[0].ring != self.params.ring(ct.level):
            raise ValueError(
                f"the ciphertext at level {ct.level} is over {ct.parts[0].ring!r}; this "
                f"context's ring at level {ct.level} is {self.params.ring(ct.level)!r}"
            )
        return self._bind(ct)

    def add(self, a: Ciphertext, b: object) -> Ciphertext:
        """``a + b``: ``b`` a ciphertext, a plaintext, an int or slot values."""
        return self._combine(a, b, sub=False)

    def sub(self, a: Ciphertext, b: object) -> Ciphertext:
        """``a - b``: ``b`` a ciphertext, a plaintext, an int or slot values."""
        return self._combine(a, b, sub=True)

    def _combine(self, a: Ciphertext, b: object, sub: bool) -> Ciphertext:
        a = self._own(a)
        if isinstance(b, Ciphertext):
            a, b = self._match(a, self._own(b))
            est = noise.summed(a.noise, b.noise, sub=sub)
            size = max(a.size, b.size)
            parts = []
            for i in range(size):
                x = a.parts[i] if i < a.size else None
                y = b.parts[i] if i < b.size else None
                if y is None:
                    parts.append(x)
                elif x is None:
                    parts.append(-y if sub else y)
                else:
                    parts.append(x - y if sub else x + y)
            return a._evolve(parts=tuple(parts), noise=est)
        pt = self._plaintext(b)
        ring = a.parts[0].ring
        term = self._plain_term(pt, ring, a.correction).ntt()
        c0 = a.parts[0] - term if sub else a.parts[0] + term
        est = noise.plain_added(self.params, a.noise, pt, a.correction)
        return a._evolve(parts=(c0, *a.parts[1:]), noise=est)

    def negate(self, a: Ciphertext) -> Ciphertext:
        """``-a``."""
        a = self._own(a)
        return a._evolve(parts=tuple(-p for p in a.parts), noise=a.noise)

    @in_region("multiply")
    def multiply(self, a: Ciphertext, b: object, *, relinearize: bool = True) -> Ciphertext:
        """``a * b``, relinearized.

        Two ciphertexts are multiplied and relinearized (``relinearize=False``: left in three
        parts, for a later ``relinearize``, as a compiler that relinearizes lazily asks); a
        plaintext, an int or slot values multiply every part.
        """
        a = self._own(a)
        if isinstance(b, Ciphertext):
            a, b = self._match(a, self._own(b))
            for x in (a, b):
                if x.size != 2:
                    raise ValueError("multiply two-part ciphertexts: relinearize first")
            product = self._tensor(a, b)
            return self.relinearize(product) if relinearize else product
        t = self.params.t
        if is_int(b) and not isinstance(b, bool | np.bool_):
            k = int(b) % t
            k = k - t if k > t // 2 else k
            return a._evolve(parts=tuple(p * k for p in a.parts), noise=noise.scaled(a.noise, k))
        pt = self._plaintext(b)
        m = self._plain_poly(pt, a.parts[0].ring).ntt()
        est = noise.plain_multiplied(a.noise, pt)
        return a._evolve(parts=tuple(p * m for p in a.parts), noise=est)

    @in_region("relinearize")
    def relinearize(self, ct: Ciphertext) -> Ciphertext:
        """Two parts from three: ``c_2`` key switched from ``s^2`` to ``s`` (two parts: as is)."""
        own = self._own(ct)
        if own.size == 2:
            return own
        est = noise.key_switched(self.params, own.noise, own.level)
        return own._evolve(parts=self._relinearized(own.parts, own.level), noise=est)

    @in_region("rotate")
    def rotate_rows(self, ct: Ciphertext, steps: int) -> Ciphertext:
        """Both rows of slots moved left by ``steps`` (``X -> X^(3^steps)``, as SEAL's)."""
        if not is_int(steps) or isinstance(steps, bool | np.bool_):
            raise TypeError(f"rotation steps must be an int, got {_fmt.describe(steps)}")
        steps = int(steps) % (self.params.n // 2)
        ct = self._own(ct)
        if steps == 0:
            return ct
        return self._apply_galois(ct, galois_for_rotation(self.params.n, steps, generator=3))

    @in_region("rotate")
    def rotate_columns(self, ct: Ciphertext) -> Ciphertext:
        """The two rows swapped (``X -> X^(2n - 1)``, as SEAL's ``rotate_columns``)."""
        return self._apply_galois(self._own(ct), 2 * self.params.n - 1)

    def _apply_galois(self, ct: Ciphertext, g: int) -> Ciphertext:
        if ct.size != 2:
            raise ValueError("rotate a two-part ciphertext: relinearize first")
        est = noise.rotated(self.params, ct.noise, ct.level, g)
        return ct._evolve(parts=self._automorphism(ct.parts, g, ct.level), noise=est)
