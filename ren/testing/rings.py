"""The conformance kit's rings and inputs, and what a case is.

Rings of several sizes and both word types; inputs made on ``"python"`` in the domain a case
needs and copied to the device; a ``Case`` is one small program built twice from the same seeded
inputs (see ``ren.testing``).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ren.poly import Poly
from ren.ring import RingSpec, ntt_primes
from ren.ring import arith as rk

#: Ring degrees of the full suite.
SIZES = (2, 8, 64, 1024, 4096)
#: Bits of the moduli per word type (the largest ``u32`` allows, and SEAL-like ``u64`` ones).
BITS = {"u32": 30, "u64": 60}
#: ``(n, dtype, L)`` of the quick suite.
QUICK_RINGS = ((8, "u32", 3), (64, "u64", 3))


# --------------------------------------------------------------------------------------------
# rings


def ring_label(ring: RingSpec) -> str:
    """A short label naming the ring's size, word type and modulus size: ``n=8 L=3 u32 30-bit``."""
    return f"{ring.short()} {max(ring.moduli).bit_length()}-bit"


def make_ring(n: int, dtype: str, limbs: int, bits: int | None = None) -> RingSpec:
    """The ring of ``limbs`` NTT primes of ``bits`` (default: the word type's size) for ``n``."""
    return RingSpec(n, ntt_primes(n, bits or BITS[dtype], limbs), dtype)


def conformance_rings(quick: bool = False) -> list[RingSpec]:
    """The rings the suite runs on.

    Full: every ``n`` in ``SIZES`` with both word types, each with two numbers of moduli so that
    every ``L`` in 1..4 meets both word types. Quick: ``QUICK_RINGS``.
    """
    if quick:
        return [make_ring(n, dtype, limbs) for n, dtype, limbs in QUICK_RINGS]
    out = []
    for i, n in enumerate(SIZES):
        for dtype, limbs in (
            ("u32", (1, 3) if i % 2 else (2, 4)),
            ("u64", (2, 4) if i % 2 else (1, 3)),
        ):
            out += [make_ring(n, dtype, L) for L in limbs]
    return out


# --------------------------------------------------------------------------------------------
# inputs: made on python, copied to the device


def _crt_ints(ring: RingSpec, residues: np.ndarray) -> list[int]:
    """The integers in ``[0, Q)`` whose residues modulo each ``q_i`` are row ``i``."""
    words = rk.to_mont(ring, np.asarray(residues, dtype=np.uint64).astype(ring.np_dtype))
    return rk.crt(ring, words)


class Inputs:
    """Seeded inputs for one case, made on python and copied to ``device``.

    ``coeff(k)`` and ``ntt(k)`` are uniform; ``from_residues`` and ``from_slots`` give an exact
    pattern of residues (``(L, n)``) in coefficient or NTT form. The same seed gives the same
    values on every device.
    """

    def __init__(self, ring: RingSpec, seed: int, device: str) -> None:
        self.ring, self.seed, self.device = ring, seed, device

    def _put(self, p: Poly) -> Poly:
        return p.realize().to(self.device)

    def coeff(self, k: int) -> Poly:
        """Uniform input ``k`` in coefficient form, on the device under test."""
        return self._put(Poly.uniform(self.ring, rng=self.seed + k, device="python"))

    def ntt(self, k: int) -> Poly:
        """Uniform input ``k`` in NTT form, on the device under test."""
        return self._put(Poly.uniform(self.ring, rng=self.seed + k, device="python").ntt())

    def python(self, k: int) -> Poly:
        """A uniform input left on python (for the copy cases)."""
        return Poly.uniform(self.ring, rng=self.seed + k, device="python").realize()

    def from_residues(self, residues: np.ndarray) -> Poly:
        """The input whose coefficients modulo ``q_i`` are row ``i`` of ``residues``."""
        return self._put(Poly(_crt_ints(self.ring, residues), self.ring, "python"))

    def from_slots(self, residues: np.ndarray) -> Poly:
        """The NTT-form input whose slots modulo ``q_i`` are row ``i`` of ``residues``."""
        words = rk.to_mont(
            self.ring, np.asarray(residues, dtype=np.uint64).astype(self.ring.np_dtype)
        )
        coeffs = rk.crt(self.ring, rk.intt(self.ring, words))
        return self._put(Poly(coeffs, self.ring, "python").ntt())


# --------------------------------------------------------------------------------------------
# cases

#: A case's program: the device -> labelled outputs (``Poly`` values on that device or python).
Build = Callable[[str], list[tuple[str, Poly]]]


@dataclass(frozen=True)
class Case:
    """One program of the suite: ``build(device)`` returns its labelled outputs.

    Attributes:
        family: the family it belongs to (a key of ``FAMILIES``).
        name: a short name, unique within the family and ring.
        ring: the ring of its inputs.
        build: builds the program on a device from seeded inputs (the same values every call).
        detail: a longer description (the text of a random program), shown with a failure.
    """

    family: str
    name: str
    ring: RingSpec
    build: Build
    detail: str = ""


def sub_seed(seed: int, *parts: object) -> int:
    """A seed for one part of a run, derived from ``seed`` and the part's names (stable)."""
    return zlib.crc32("/".join(map(str, (seed, *parts))).encode())


def case(
    family: str,
    name: str,
    ring: RingSpec,
    seed: int,
    program: Callable[[Inputs], list[tuple[str, Poly]]],
    detail: str = "",
) -> Case:
    """A case whose ``program(inputs)`` builds the outputs from an ``Inputs``."""
    s = sub_seed(seed, family, name, ring)

    def build(device: str) -> list[tuple[str, Poly]]:
        return program(Inputs(ring, s, device))

    return Case(family, name, ring, build, detail)
