"""Key-switching keys: one pair of polynomials per digit, public, pickled as words."""

from __future__ import annotations

from collections.abc import Callable

from ren.poly import Poly, is_int
from ren.ring import RingSpec
from ren.schemes.rlwe import bytes as _fmt

# ---------------------------------------------------------------------------------------------
# keys


class KeySwitchKey:
    """A key-switching key from ``s'`` to ``s``: one pair of polys for each digit.

    For digit ``j`` the pair is ``(b_j, a_j) = (-a_j s + e_j + P T_j s', a_j)`` over the key ring,
    in NTT form, where ``T_j`` is ``1`` modulo the digit's moduli and ``0`` modulo the other
    ciphertext moduli. It is public: it pickles as its words.

    Attributes:
        galois: the Galois element ``g`` of a rotation or conjugation key (``s' = s(X^g)``), or
            ``None`` for the relinearization key (``s' = s^2``).
        parts: the ``(b_j, a_j)`` pairs.
    """

    __slots__ = ("galois", "parts")

    def __init__(self, galois: int | None, parts: tuple[tuple[Poly, Poly], ...]):
        if galois is not None and not is_int(galois):
            raise TypeError(f"galois must be an int or None, got {_fmt.describe(galois)}")
        pairs = tuple(tuple(pair) for pair in parts)
        if not pairs or any(len(pair) != 2 for pair in pairs):
            raise ValueError("a key-switching key has one (b, a) pair per digit")
        for pair in pairs:
            for p in pair:
                if not isinstance(p, Poly):
                    raise TypeError(f"the key's parts are Poly values, got {_fmt.describe(p)}")
        self.galois = None if galois is None else int(galois)
        self.parts: tuple[tuple[Poly, Poly], ...] = tuple((b, a) for b, a in pairs)

    def __repr__(self) -> str:
        what = "relinearization" if self.galois is None else f"galois g={self.galois}"
        return f"<KeySwitchKey {what}, {len(self.parts)} digits>"

    def _to_bytes(self) -> bytes:
        ring = self.parts[0][0].ring
        heads, datas = zip(*(_fmt.poly_record(p) for pair in self.parts for p in pair), strict=True)
        header = {
            "n": ring.n,
            "moduli": [str(q) for q in ring.moduli],
            "galois": self.galois,
            "polys": list(heads),
        }
        return _fmt.pack("switch-key", header, list(datas))

    @classmethod
    def _from_bytes(cls, blob: bytes, device: str | None) -> KeySwitchKey:
        header, datas = _fmt.unpack(blob, "switch-key")
        h = _fmt.Header(header, "the switch-key blob's header", ("galois", "moduli", "n", "polys"))
        n = h.integer("n", 4, 2**30)
        try:
            ring = RingSpec(n, h.moduli("moduli"))
        except (TypeError, ValueError) as e:
            raise ValueError(f"the switch-key blob's ring is not valid: {e}") from None
        galois = h.optional_int("galois", 1, 2 * n - 1)
        if galois is not None and galois % 2 == 0:
            raise ValueError(f"the switch-key blob's Galois element {galois} is even")
        if not datas or len(datas) % 2:
            raise ValueError("the switch-key blob holds no pairs of polynomials")
        polys = _fmt.read_polys(h, datas, [ring] * len(datas), device)
        return cls(galois, tuple(zip(polys[::2], polys[1::2], strict=True)))

    def __reduce__(self) -> tuple[Callable[[bytes, str | None], KeySwitchKey], tuple[bytes, str]]:
        return (KeySwitchKey._from_bytes, (self._to_bytes(), self.parts[0][0].device))

    def __copy__(self) -> KeySwitchKey:
        return KeySwitchKey(self.galois, self.parts)

    def __deepcopy__(self, memo: dict[int, object]) -> KeySwitchKey:
        return KeySwitchKey._from_bytes(self._to_bytes(), self.parts[0][0].device)
