"""CKKS parameters: the ring, the modulus chain, the scale, the digits, and their checks."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import ClassVar

from ren.errors import describe
from ren.poly import Poly
from ren.schemes.rlwe import bytes as _fmt
from ren.schemes.rlwe.params import Chain, need_int, params_of


def scale_text(x: float) -> str:
    """A scale, exactly: ``2^k`` and the float itself (two scales may agree to many digits)."""
    return f"2^{math.log2(x):.6f} ({x!r})" if x > 0 else repr(x)


_PARAM_FIELDS = (
    "dnum",
    "hamming_weight",
    "insecure",
    "moduli",
    "n",
    "p_bits",
    "q_bits",
    "scale_bits",
    "sigma",
)


@dataclasses.dataclass(frozen=True, repr=False)
class Params(Chain):
    """CKKS parameters: the moduli are found at construction, then the parameters are checked.

    The moduli are the largest NTT-friendly primes of each bit size, the special moduli taking the
    largest. Unless ``insecure=True``, the whole key distribution is checked against the HE
    standard for 128-bit security: ``log2(QP)`` at most ``SECURITY_BOUNDS[n]``, a uniform ternary
    secret (no ``hamming_weight``), and ``sigma`` at least ``MIN_SIGMA`` (3.19).

    A ``Params`` is a value: equal arguments give equal parameters; it pickles as its arguments
    (unpickling checks them again) and copies as itself.

    Args:
        n: ring degree, a power of two >= 4; ``n/2`` slots.
        q_bits: bit sizes (ints, 10 to 62) of the ciphertext moduli ``q_0, ..., q_{L-1}``
            (``None``: those of ``q_moduli``).
            ``q_0`` holds the result at the last level, the others are divided out one per
            rescale (size them like the scale).
        p_bits: bit sizes of the special moduli used by hybrid key switching (default
            ``(60,)``); BV key switching has none (leave it out, or ``()``).
        scale_bits: the default scale is ``2**scale_bits``; an int from 1 to ``q_bits[0] - 1``.
        dnum: number of key-switching digits, an int from 1 to ``L`` (default: one per ciphertext
            modulus, the least noise). The product of the special moduli must have at least as
            many bits as the largest digit.
        insecure: ``True`` or ``False``: allow parameters beyond the HE-standard bound for 128-bit
            security (tests and teaching on tiny rings).
        hamming_weight: ``None`` for a uniform ternary secret, or the exact number of nonzero
            coefficients of a sparse one, an int in ``[1, n]`` (needs ``insecure=True``: the
            security table does not cover sparse secrets).
        sigma: standard deviation of the error distribution, a finite real number in
            ``(0, 10^6)``; at least ``MIN_SIGMA`` (3.19) unless ``insecure=True``.
        key_switching: ``"hybrid"`` (the default: digits of ``dnum`` moduli, special moduli to
            divide the noise by) or ``"bv"`` (one digit per ciphertext modulus, no special
            modulus, so more of the security bound for ``Q``; its key-switching noise is not
            divided: the key-switching guide has its precision).
        digit_bits: BV only: ``None`` (one digit per ciphertext modulus, as OpenFHE's digit size
            0) or a digit size in bits: a residue of a larger modulus is cut into digits modulo
            primes below ``2^digit_bits`` (more key pairs, less noise).
        q_moduli: keyword only, the ciphertext moduli themselves (``None``: found for the bit
            sizes): primes ``1 (mod 2n)`` of 10 to 62 bits, all distinct, kept in the order
            given; the bit sizes then follow from them (``q_bits`` may be left out; given, it
            must agree). Moduli the bit sizes alone would give make the same parameters.
        p_moduli: keyword only, the special moduli themselves, likewise (``p_bits`` follows).

    Raises:
        TypeError: for an argument of the wrong type (a bool where a number is expected
            included), naming the argument.
        ValueError: for a value out of range, naming the argument and the rule it breaks; a
            security error gives ``log2(QP)`` and the bound, or ``sigma`` and 3.19.
    """

    #: ``ren.jit`` takes it as one part of a plan's key (a hashable value, holding no Poly).
    __ren_jit_leaf__: ClassVar[bool] = True
    own_argument: ClassVar[str] = "scale_bits"
    own_range: ClassVar[tuple[int, int]] = (1, 61)
    scheme: ClassVar[str] = "ckks"
    header_fields: ClassVar[tuple[str, ...]] = _PARAM_FIELDS

    n: int
    # None: the bit sizes of q_moduli, which must then be given
    q_bits: tuple[int, ...] = None  # type: ignore[assignment]
    # None: the technique's default, (60,) for hybrid and () for BV, set by __post_init__
    p_bits: tuple[int, ...] = None  # type: ignore[assignment]
    scale_bits: int = 40
    dnum: int | None = None
    insecure: bool = False
    hamming_weight: int | None = None
    sigma: float = 3.2
    key_switching: str = "hybrid"
    digit_bits: int | None = None
    # None: found for the bit sizes (Chain._check_chain); given: checked and kept as they are
    q_moduli: tuple[int, ...] = dataclasses.field(default=None, repr=False, kw_only=True)  # type: ignore[arg-type]
    p_moduli: tuple[int, ...] = dataclasses.field(default=None, repr=False, kw_only=True)  # type: ignore[arg-type]

    def __post_init__(self) -> None:
        self._check_chain()
        scale_bits = need_int("scale_bits", self.scale_bits)
        object.__setattr__(self, "scale_bits", scale_bits)
        if not 1 <= scale_bits < self.q_bits[0]:
            raise ValueError(
                f"scale_bits={scale_bits} must be at least 1 and below q_bits[0]="
                f"{self.q_bits[0]}: the first modulus holds the values at the scale at level 0"
            )

    @classmethod
    def preset(cls, name: str) -> Params:
        """Parameters made for bootstrapping (``ckks.bootstrap``; ``ckks.BootstrapConfig``).

        * ``"boot-toy"``: ``n=64`` (32 slots), 17 moduli (q_0 48 bits; 2 user levels, 2 for
          SlotToCoeff, 10 for EvalMod, 2 for CoeffToSlot), dense secret, ``K=12``; insecure
          (tests, tutorials and the debugger: seconds on the python backend). Output level 2.
        * ``"boot-n12"``: ``n=4096`` (2048 slots), 20 moduli (3 user, level budget (3, 3), 10 for
          EvalMod), sparse-secret encapsulation (``h=32``, ``K=16``); insecure (QP 1686 bits).
          Output level 3.
        * ``"boot-n16"``: ``n=65536`` (32768 slots), 24 moduli (7 user, (3, 3), 10 for EvalMod),
          encapsulation; ``log2(QP)`` 1724 <= 1747, 128-bit secure. Output level 7.
        * ``"boot-n12-precise"``: for iterated bootstrapping (``ckks.bootstrap(ct,
          iterations=2)``: 40 bits and more): ``n=4096``, scale ``2^53``, q_0 61 bits, 3 user
          levels of 53 bits, the rest as boot-n12; a sparse secret of ``h=192`` and
          encapsulation (``h=32``); insecure (QP 1751 bits). Output level 3, 2 after two
          iterations.
        * ``"boot-n16-precise"``: the same at ``n=65536``, 5 user levels, dense secret and
          encapsulation; ``log2(QP)`` 1735 <= 1747, 128-bit secure. Output level 5, 4 after two
          iterations.

        Encrypt at the output level (``BootstrapConfig.levels_left``): the levels above are the
        bootstrap's, with moduli of 60 bits (the lowest, 48; 61 in the precise presets), not the
        scale's 40 (53).

        Raises:
            TypeError, ValueError: for a name that is not one of these.
        """
        from ren.schemes.ckks.registry import circuit  # bootstrapping registers its presets

        preset: Params = circuit("preset")(name)
        return preset

    @classmethod
    def choose(
        cls,
        *,
        depth: int,
        precision_bits: float,
        slots: int | None = None,
        secure: bool = True,
    ) -> Params:
        """The smallest parameters that hold ``depth`` products at ``precision_bits``.

        The least ring degree (holding ``slots``), then the smallest scale whose predicted
        precision after a chain of ``depth`` products of values of magnitude at most 1 clears
        ``precision_bits`` by a bit (``ckks.predicted_precision``'s model: nothing is run), then
        the fewest key-switching digits whose ``log2(QP)`` fits the HE standard's bound for
        128-bit security; ``q_0`` holds 10 bits above the scale. ``explain()`` on the result
        says how each smaller ring was refused (``ren.schemes.ckks.choose``).

        Args:
            depth: the products (rescales) the values go through, 0 to 60.
            precision_bits: the absolute bits wanted after them, 1 to 51.
            slots: the slots needed (default: any); ``n`` is at least twice it.
            secure: hold the 128-bit bound (``False``: the smallest ring, opted out).

        Raises:
            TypeError: for an argument of the wrong type, naming it.
            ValueError: for an argument out of range, or a request no ring up to 65536 holds
                within the bound: it names what each ring lacked, and what would fit.
        """
        from ren.schemes.ckks.choose import choose  # it imports this module

        chosen: Params = choose(cls, depth, precision_bits, slots, secure)
        return chosen

    @classmethod
    def for_program(
        cls,
        fn: Callable[..., object],
        *example_inputs: object,
        precision_bits: float,
        secure: bool = True,
    ) -> Params:
        """The smallest parameters on which ``fn`` is predicted to keep ``precision_bits``.

        ``fn`` takes one ciphertext per example input (slot values, as ``encrypt`` takes them)
        and returns a ciphertext (or a tuple of them). A first run on a long insecure chain finds
        how many levels it takes (its graph is built, never computed: keys are made, nothing
        else runs); ``choose`` gives parameters for that depth, and ``fn`` is built again on them
        and its result's ``predicted_precision`` read, asking for more until it holds. The
        example inputs' sizes count: the prediction takes the values at their largest.

        Raises:
            TypeError: ``fn`` not callable, or returning no ciphertext.
            ValueError: no example input, one ``encode`` refuses, a program deeper than 60
                levels, or no parameters that hold it (see ``choose``).
        """
        from ren.schemes.ckks.choose import for_program  # it imports this module

        chosen: Params = for_program(cls, fn, example_inputs, precision_bits, secure)
        return chosen

    def explain(self) -> str:
        """The chain, its security and the predicted precision at each depth, in words.

        For parameters from ``choose``, also how they were chosen.
        """
        from ren.schemes.ckks.choose import explain  # it imports this module

        return explain(self)

    # --- derived ------------------------------------------------------------------------------
    @property
    def slots(self) -> int:
        """The number of complex slots: ``n / 2``."""
        return self.n // 2

    @property
    def scale(self) -> float:
        """The default scale, ``2**scale_bits``."""
        return float(2**self.scale_bits)

    def _display_rows(self) -> list[tuple[str, object]]:
        """The display's CKKS rows (``rlwe.display``): the default scale and the slots."""
        return [("scale", f"2^{self.scale_bits}"), ("slots", f"{self.slots} complex")]

    # --- serialization ------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The parameters in Ren's versioned, checksummed CKKS format."""
        return _fmt.pack("params", {"params": self._header()}, [])

    @classmethod
    def from_bytes(cls, blob: bytes, *, insecure: bool = False) -> Params:
        """Read parameters written by ``to_bytes``, checked as the constructor checks them.

        Args:
            blob: the bytes.
            insecure: accept parameters marked ``insecure=True`` (tiny rings for tests and
                teaching). Without it such a blob is refused: the reader opts in, not the blob.

        Raises:
            TypeError: when ``blob`` is not bytes or ``insecure`` not a bool.
            ValueError: a truncated, altered or foreign blob, a version this Ren cannot read,
                parameters the constructor refuses, or insecure parameters without the opt-in.
        """
        if not isinstance(insecure, bool):
            raise TypeError(f"insecure must be True or False, got {describe(insecure)}")
        header, payloads = _fmt.unpack(blob, "params")
        h = _fmt.Header(header, "the params blob's header", ("params",))
        if payloads:
            raise ValueError(f"a params blob holds no payloads, this one {len(payloads)}")
        return cls._from_header(h.raw("params"), insecure=insecure, reader="Params.from_bytes")


# ---------------------------------------------------------------------------------------------
# reading values (the format itself is ren.schemes.rlwe.bytes)


def read_value(
    blob: bytes, kind: str, params: Params | None, device: str | None
) -> tuple[Params, _fmt.Header, list[Poly]]:
    """The parameters, the checked header and the polys of a plaintext or ciphertext blob.

    With ``params`` (a context's), the blob's must be equal; without (unpickling), they are read
    with the insecure opt-in: a pickle is trusted data, as it must be.
    """
    header, datas = _fmt.unpack(blob, kind)
    fields = ["level", "params", "polys", "real", "scale"]
    if kind == "ciphertext":
        fields.append("key_fingerprint")
    h = _fmt.Header(header, f"the {kind} blob's header", fields)
    if params is None:
        params = Params._from_header(h.raw("params"), insecure=True, reader="")
    else:
        params = params_of(h, params, kind)
    level = h.integer("level", 0, params.max_level)
    h.hex_float("scale")
    h.flag("real")
    counts = (2, 3) if kind == "ciphertext" else (1,)
    if len(datas) not in counts:
        raise ValueError(
            f"a {kind} blob holds {' or '.join(map(str, counts))} polynomials, this one "
            f"{len(datas)}"
        )
    polys = _fmt.read_polys(h, datas, [params.ring(level)] * len(datas), device)
    return params, h, polys
