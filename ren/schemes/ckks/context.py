"""The CKKS context: parameters, device, keys, encoding and encryption; the current one.

A context is what every RLWE scheme's is (``ren.schemes.rlwe.context.RlweContext``: it holds its
keys as ``keychain``, is the current context inside ``with``, pickles only without a secret key)
and CKKS's evaluator (``ren.schemes.ckks.evaluator``); it adds the encoding and encryption.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from ren.ir.region import in_region, noted, region
from ren.poly import Poly, realize
from ren.ring import RingSpec
from ren.schemes.ckks import noise
from ren.schemes.ckks.ciphertext import Ciphertext
from ren.schemes.ckks.encoding import check_scale, embed, embed_inverse, slot_values
from ren.schemes.ckks.evaluator import Evaluator
from ren.schemes.ckks.keys import EvaluationKeys
from ren.schemes.ckks.params import Params
from ren.schemes.ckks.registry import circuit
from ren.schemes.ckks.shadow import plain_shadow, shadowing
from ren.schemes.ckks.types import Plaintext
from ren.schemes.rlwe import bytes as _fmt
from ren.schemes.rlwe import keyset
from ren.schemes.rlwe.active import enter, leave
from ren.schemes.rlwe.context import RlweContext
from ren.schemes.rlwe.encrypt import decrypt_parts, encrypt_zero
from ren.schemes.rlwe.params import bits, params_of


class Context(RlweContext[Ciphertext, Params], Evaluator):
    """Keys and the evaluator for one parameter set.

    Keys (secret, public, relinearization) are made on entering the ``with`` block, or at the
    first operation of this context's own that needs them; rotation and conjugation keys are made
    on first use and kept. A context never makes keys for a ciphertext made elsewhere: a
    ciphertext under other keys (another key fingerprint) is a ``ValueError``.

    Threads: ``with ctx:`` makes it the current context of this thread only. One context may be
    shared by threads: key generation and the keys made on first use are behind a lock, so two
    threads asking for the same rotation key get the same key.

    Copies: a context holding a secret key refuses ``pickle``, ``copy`` and ``deepcopy``
    (``TypeError``): the secret key leaves it only through ``export_secret_key()``. A context
    holding evaluation keys (or none) pickles as its parameters, device and evaluation keys.

    Args:
        params: the ``Params``.
        seed: an int makes every random draw reproducible (NumPy's PCG64: for tests and teaching,
            not for real secrets); ``None`` draws from the operating system.
        device: where every value lives (``"python"``, ``"cpu"``, ``"cuda"``; default
            ``$REN_DEVICE``).
        keys: ``EvaluationKeys`` to evaluate with instead of making keys (no secret key).
        secret_key: a secret key written by ``export_secret_key``, with its public key; the
            relinearization key is made from it (the rotation keys on first use).
    """

    scheme: ClassVar[str] = "ckks"
    _keys_type = EvaluationKeys

    def __init__(
        self,
        params: Params,
        seed: int | None = None,
        device: str | None = None,
        *,
        keys: EvaluationKeys | None = None,
        secret_key: bytes | None = None,
    ):
        if not isinstance(params, Params):
            raise TypeError(f"params must be a ckks.Params, got {type(params).__name__}")
        self._start(params, seed, device)
        self._take_keys(keys, secret_key)

    def _context(self) -> Context:
        """This context (typed as one, for the evaluator's mixin)."""
        return self

    def __repr__(self) -> str:
        have, prm = self._keys_held, self.params
        return f"<ckks.Context n={prm.n} L={prm.L} {self.device}, {have} keys>"

    def __enter__(self) -> Context:
        self._require_public()
        enter(self._active, self)
        return self

    def __exit__(self, *exc: object) -> None:
        leave(self._active, self)

    # --- keys and copies --------------------------------------------------------------------------
    @classmethod
    def _unpickler(cls) -> Callable[[Params, str, bytes | None], Context]:
        from ren.schemes.ckks.api import _context_from_pickle  # it imports this module

        return _context_from_pickle

    def _params_of(self, h: _fmt.Header, what: str) -> Params:
        return params_of(h, self.params, what)

    def bootstrap_keys(self, config: object = None, *, progress: bool | None = None) -> Any:
        """``ckks.bootstrap_keys(self, config)``: every key a bootstrap needs, made now."""
        return circuit("bootstrap_keys")(self, config, progress=progress)  # ren.circuits.ckks's

    def evaluation_keys(self) -> EvaluationKeys:
        """The public key, relinearization key and the rotation keys made so far."""
        return keyset.evaluation_keys(self.keychain, EvaluationKeys)

    def encode(
        self, values: object, level: int | None = None, scale: float | None = None
    ) -> Plaintext:
        """Encode up to ``n/2`` complex or real numbers (a scalar fills every slot).

        Args:
            values: numbers, a sequence or a 1-D array; missing slots are zero.
            level: the level of the plaintext (default: the top, ``L - 1``).
            scale: the scale (default: ``2**scale_bits``).

        Raises:
            TypeError: for values that are not numbers, or a level that is not an int.
            ValueError: for too many values, NaN or infinity, or values too large for the modulus
                at ``level`` at this scale.
        """
        prm = self.params
        level = prm.max_level if level is None else level
        ring = prm.ring(level)
        scale = prm.scale if scale is None else check_scale(scale)
        slots, real = slot_values(values, prm.slots)
        with np.errstate(over="ignore", invalid="ignore"):  # too large: refused just below
            wanted = embed_inverse(slots, prm.n) * scale
            coeffs = np.rint(wanted)
            rounding = float(np.mean(np.square(coeffs - wanted)))  # for the predicted error
            mass = float(np.sum(np.abs(slots)))
            peak = float(np.max(np.abs(wanted), initial=0.0)) / scale
            power = float(np.sum(np.square(np.abs(slots))))
            support = int(np.count_nonzero(slots))
        finite = bool(np.all(np.isfinite(coeffs)))
        biggest = float(np.max(np.abs(coeffs))) if finite and coeffs.size else 0.0
        if not finite or 2 * biggest >= ring.Q:  # exact: an int and a float compare exactly
            size = bits(biggest) if finite else "more than 2^1024"
            raise ValueError(
                f"the values are too large for scale {bits(scale)} at level {level}: a "
                f"coefficient of {size} does not fit the modulus Q={bits(ring.Q)}"
            )
        if biggest < 2.0**62:
            ints = coeffs.astype(np.int64)
        else:
            ints = np.array([int(c) for c in coeffs], dtype=object)
        poly = Poly(ints, ring, self.device).ntt()
        magnitude = float(np.max(np.abs(slots), initial=0.0))
        exact = slots if shadowing(self) else None  # a shadow's leaf: the values, not rounded
        return Plaintext(
            poly, float(scale), level, real, self, magnitude=magnitude, rounding=rounding,
            mass=mass, peak=peak, power=power, support=support, exact=exact,
        )  # fmt: skip

    def decode(self, pt: Plaintext) -> np.ndarray:
        """The ``n/2`` slots of a plaintext (``numpy.complex128``).

        Raises:
            TypeError: for anything but a ``Plaintext``.
            ValueError: for a plaintext of other parameters.
        """
        pt = self._plain(pt, "decode")
        return self._decode_poly(pt.poly, pt.scale, pt.real)

    def _decode_poly(self, poly: Poly, scale: float, real: bool) -> np.ndarray:
        return self._decode_coefficients(poly.intt(), scale, real)

    def _decode_coefficients(self, poly: Poly, scale: float, real: bool) -> np.ndarray:
        """The slots of the encoded ``poly`` (coefficient form) at ``scale``, as complex128.

        ``real``: the imaginary parts are exactly 0. No part is ``-0.0`` (``+ 0.0`` turns a
        negative zero into 0), so a slot never prints as ``-0j``.
        """
        coeffs = np.array(poly.tolist(centered=True), dtype=object).astype(np.float64)
        z = embed(coeffs / scale, self.params.n)
        if real:
            z = z.real.astype(np.complex128)
        return z + 0.0

    # --- encryption -------------------------------------------------------------------------------
    @in_region("encrypt")
    def encrypt(
        self, values: object, level: int | None = None, scale: float | None = None
    ) -> Ciphertext:
        """Encrypt a ``Plaintext``, or encode ``values`` (at ``level`` and ``scale``) and encrypt.

        The zero encryption is made over the key ring and divided by ``P``, so its noise is
        mostly the rounding of that division.

        Raises:
            RuntimeError: inside a ``ren.jit`` capture (a replay would reuse the randomness).
        """
        self._refuse_in_capture("encrypt")
        public, _ = self._require_public()
        if isinstance(values, Plaintext):
            if level is not None or scale is not None:
                raise ValueError("level and scale are the plaintext's own; pass neither")
            pt = self._plain(values, "encrypt")
        else:
            pt = self.encode(values, level, scale)
        z0, z1 = encrypt_zero(self.params, public, pt.level, self.keychain.rng, self.device)
        c0 = z0 + pt.poly
        ct = Ciphertext((c0.ntt(), z1.ntt()), pt.scale, pt.level, pt.real, self)
        ct = ct._evolve(noise=noise.fresh(self.params, pt))
        if shadowing(self):  # for the report's precision (ren.schemes.ckks.shadow)
            ct = ct._evolve(shadow=plain_shadow(self, pt))
        return ct

    def decrypt(self, ct: Ciphertext, *, real: bool = False) -> np.ndarray:
        """Decrypt and decode: the ``n/2`` slots, as ``numpy.complex128``.

        For a real message the imaginary parts are exactly 0. No slot has a ``-0.0`` part.

        The ciphertext's parts are computed in the same realization as the decryption and keep
        their buffers (``Poly.realized``), as ``Ciphertext.realize`` would leave them: a later
        operation on ``ct`` reads them instead of computing its history again. The values inside
        that history (fused into the kernels that computed the parts) and the decrypted
        polynomial are not kept.

        Args:
            ct: the ciphertext (its parts lazy or realized).
            real: return the real parts only, as ``numpy.float64`` (the imaginary parts, exactly
                0 for a real message and small noise otherwise, are dropped).

        Raises:
            TypeError: for anything but a ``Ciphertext``, or a ``real`` that is not a bool.
            ValueError: when this context holds no secret key, or the ciphertext is under other
                keys.
        """
        if not isinstance(real, bool):
            raise TypeError(f"real must be True or False, got {_fmt.describe(real)}")
        with region("decrypt"):
            noted("in", ct)
            ct = self._own(ct)
            m = self._decrypt_poly(ct).intt()
            realize(*ct.parts, m)  # one realization; the parts keep their buffers
            z = self._decode_coefficients(m, ct.scale, ct.real)
        return np.ascontiguousarray(z.real) if real else z

    def _slots_as_they_stand(self, ct: Ciphertext) -> np.ndarray:
        """The slots of ``ct``, realizing only the decryption (the parts stay as they are).

        For the debugger's view, which decrypts parts as the buffers of a stepped realization
        stand and must not give them buffers of their own.
        """
        with region("decrypt"):
            noted("in", ct)
            return self._decode_poly(self._decrypt_poly(ct), ct.scale, ct.real)

    @in_region("decrypt")
    def decrypt_poly(self, ct: Ciphertext) -> Poly:
        """The decrypted (still encoded) polynomial ``c_0 + c_1 s (+ c_2 s^2)``, lazily."""
        return self._decrypt_poly(ct)

    def _decrypt_poly(self, ct: Ciphertext) -> Poly:
        ct = self._own(ct)
        s = self._require_secret("decrypt").to_ring(self.params.ring(ct.level))
        return decrypt_parts(ct.parts, s)

    def _key_switched(self, ct: Ciphertext) -> Ciphertext:
        """``ct`` just relinearized at its level: its predicted error takes the switch's noise."""
        if ct.noise is None:
            return ct
        return ct._evolve(noise=noise.key_switch(self.params, ct.noise, ct.level))

    # --- what may be used here -------------------------------------------------------------------
    def _check_params_of(
        self, params: Params | None, ring: RingSpec, level: int, what: str
    ) -> None:
        if params is not None:
            if params != self.params:
                raise ValueError(
                    f"the {what} is for {params}, and this context for {self.params}: values of "
                    "other parameters cannot be combined"
                )
        elif ring != self.params.ring(level):
            raise ValueError(
                f"the {what} at level {level} is over {ring!r}; this context's ring at level "
                f"{level} is {self.params.ring(level)!r}"
            )

    def _own(self, ct: object) -> Ciphertext:
        """``ct``, checked to be under this context's parameters and keys, and bound to it."""
        if not isinstance(ct, Ciphertext):
            raise TypeError(f"expected a ckks.Ciphertext, got {type(ct).__name__}")
        if self._is_bound(ct):
            return ct  # the common case: made here, under the keys held now
        self._check_params_of(ct.params, ct.ring, ct.level, "ciphertext")
        return self._bind(ct)

    def _plain(self, pt: object, what: str) -> Plaintext:
        if not isinstance(pt, Plaintext):
            raise TypeError(f"{what} takes a ckks.Plaintext, got {type(pt).__name__}")
        self._check_params_of(pt.params, pt.poly.ring, pt.level, "plaintext")
        return pt
