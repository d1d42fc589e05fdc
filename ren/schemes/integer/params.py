"""BFV and BGV parameters: the modulus chain of every RLWE scheme and the plaintext modulus."""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import ClassVar

from ren.ring import RingSpec, is_prime, ntt_primes
from ren.schemes.rlwe.params import Chain, _need_int

__all__ = ["IntParams"]

#: The bit size of the extra moduli of BFV's tensor product (``IntParams.tensor_moduli``).
TENSOR_BITS = 60


@dataclasses.dataclass(frozen=True)
class IntParams(Chain):
    """Parameters of an integer scheme (``bfv.Params``, ``bgv.Params``).

    The moduli are the largest NTT-friendly primes of each bit size, the special moduli taking
    the largest. Unless ``insecure=True``, the key distribution is checked against the HE
    standard for 128-bit security, as for CKKS: ``log2(QP)`` at most ``SECURITY_BOUNDS[n]``
    (218 bits at ``n = 8192``), a uniform ternary secret, ``sigma`` at least 3.19.

    Args:
        n: ring degree, a power of two >= 4: ``n`` slots (two rows of ``n/2``) when batching.
        q_bits: bit sizes (ints, 10 to 62) of the ciphertext moduli ``q_0, ..., q_{L-1}``.
        p_bits: bit sizes of the special moduli used by key switching.
        t: the plaintext modulus, an int from 2 to below every ciphertext modulus, coprime to
            them. A prime ``t = 1 (mod 2n)`` (such as 65537 up to ``n = 32768``) allows
            batching: ``n`` integers mod ``t`` in slots; any other ``t`` encodes a polynomial.
        dnum: number of key-switching digits, 1 to ``L`` (default ``L``).
        insecure: allow parameters beyond the HE-standard bound (tests and teaching).
        hamming_weight: ``None`` (uniform ternary secret) or the nonzeros of a sparse one
            (needs ``insecure=True``).
        sigma: the error's standard deviation (at least 3.19 unless ``insecure=True``).

    Raises:
        TypeError: an argument of the wrong type, named.
        ValueError: a value out of range, named with the rule it breaks.
    """

    __ren_jit_leaf__: ClassVar[bool] = True
    scheme: ClassVar[str] = "integer"

    n: int
    q_bits: tuple[int, ...]
    p_bits: tuple[int, ...] = (60,)
    t: int = 65537
    dnum: int | None = None
    insecure: bool = False
    hamming_weight: int | None = None
    sigma: float = 3.2
    q_moduli: tuple[int, ...] = dataclasses.field(init=False, repr=False, compare=False)
    p_moduli: tuple[int, ...] = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        t = _need_int("t", self.t)
        self._check_chain(avoid=(t,))
        object.__setattr__(self, "t", t)
        smallest = min(self.q_moduli)
        if not 2 <= t < smallest:
            raise ValueError(
                f"t={t} must be at least 2 and below every ciphertext modulus (the smallest, "
                f"q = {smallest}, has {smallest.bit_length()} bits)"
            )
        for q in self.q_moduli + self.p_moduli:
            if math.gcd(t, q) != 1:
                raise ValueError(
                    f"t={t} shares a factor with the modulus {q}: they must be coprime"
                )

    def __reduce__(self) -> tuple:
        args = (self.n, self.q_bits, self.p_bits, self.t, self.dnum, self.insecure)
        return (type(self), (*args, self.hamming_weight, self.sigma))

    def __copy__(self) -> IntParams:
        return self

    def __deepcopy__(self, memo: dict) -> IntParams:
        return self

    # --- derived ------------------------------------------------------------------------------
    @property
    def batching(self) -> bool:
        """Whether ``t`` is a prime ``1 (mod 2n)``: ``n`` slots of integers mod ``t``."""
        return self.t % (2 * self.n) == 1 and is_prime(self.t)

    @property
    def slots(self) -> int:
        """The number of integers a plaintext holds: ``n`` (two rows of ``n/2`` when batching)."""
        return self.n

    @functools.cached_property
    def plain_ring(self) -> RingSpec:
        """``Z_t[X]/(X^n + 1)``, whose NTT gives the slots (only when :attr:`batching`)."""
        if not self.batching:
            raise ValueError(
                f"t={self.t} does not allow batching (it must be a prime 1 mod 2n = {2 * self.n}"
                ", such as 65537): encode the message as a polynomial (encode_coefficients)"
            )
        return RingSpec(self.n, (self.t,))

    @functools.cached_property
    def tensor_moduli(self) -> tuple[int, ...]:
        """Extra moduli ``B`` for BFV's product: ``Q B`` holds ``t`` times any tensor exactly.

        A part of the tensor is below ``n Q^2 / 2`` in size and is multiplied by ``t`` before
        the division by ``Q``, so ``B`` has at least ``log2(Q) + log2(t) + log2(n) + 4`` bits.
        """
        Q = math.prod(self.q_moduli)
        need = Q.bit_length() + self.t.bit_length() + self.n.bit_length() + 4
        count = -(-need // (TENSOR_BITS - 1))
        taken = set(self.q_moduli + self.p_moduli)
        pool = [q for q in ntt_primes(self.n, TENSOR_BITS, count + len(taken)) if q not in taken]
        return tuple(pool[:count])

    @functools.cached_property
    def tensor_extra_ring(self) -> RingSpec:
        """The ring of :attr:`tensor_moduli` alone, where BFV's product is divided by ``Q``."""
        return RingSpec(self.n, self.tensor_moduli)

    @functools.cached_property
    def q_inverse_mod_extra(self) -> int:
        """``Q^-1`` modulo the product of :attr:`tensor_moduli`."""
        return pow(math.prod(self.q_moduli), -1, self.tensor_extra_ring.Q)
