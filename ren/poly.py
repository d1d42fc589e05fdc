"""``Poly``: a lazy element of ``Z_Q[X]/(X^n + 1)`` in RNS form.

A ``Poly`` wraps one graph ``Node``. Creating one from coefficients stores them (reduced modulo
every ``q_i``, in Montgomery form) in a buffer; every operation after that only builds nodes::

    coefficients -> BUFFER -> AS_RING(ring, COEFF) -> Poly
    a + b        -> ADD(a.node, b.node)
    a.ntt()      -> NTT(a.node)

A ``Poly``'s *value* is a ring element; its *domain* is only how that value is represented
(``a.ntt()`` has the same value as ``a``). Operations that compute in one domain report it:
a product of two non-constant polys and a rotation are in NTT form, a rescale and a basis
extension in coefficient form, a sum in NTT form when any non-constant operand is.

A ``Poly`` is a value: ``a == b`` compares the ring elements (computing both), whatever their
domain or device; a ``Poly`` is unhashable, as a NumPy array is. ``pickle`` stores the value (the
ring, domain, device and words); ``copy.copy`` and ``copy.deepcopy`` share the node, since a value
never changes. NumPy arrays are not operands: ``a + np.arange(n)`` is a ``TypeError``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeGuard, cast

import numpy as np
import numpy.typing as npt

from ren.device import Buffer, canonical_device
from ren.engine.observe import notify
from ren.engine.realize import Realization, prepare
from ren.errors import RenError
from ren.ir.facts import Facts, facts
from ren.ir.node import (
    BufferArg,
    ConstArg,
    CopyArg,
    GaloisArg,
    Node,
    RescaleArg,
    RingArg,
    ToRingArg,
)
from ren.ir.op import DType, Op
from ren.repoint import LIVE, repoint, storage
from ren.ring import Domain, RingSpec, galois_for_rotation, sampling
from ren.ring import arith as rk
from ren.ring.sampling import RngLike

__all__ = ["Poly", "prepare_realize", "realize"]


def _check_ring(ring: object) -> RingSpec:
    if not isinstance(ring, RingSpec):
        raise TypeError(f"ring must be a RingSpec, got {type(ring).__name__}")
    return ring


def is_int(x: object) -> TypeGuard[int | np.integer]:
    """Whether ``x`` is a Python or NumPy integer (not a bool)."""
    return isinstance(x, int | np.integer) and not isinstance(x, bool | np.bool_)


class Poly:
    """A lazy polynomial. See the module docstring; ``docs/rings.md`` has the conventions.

    Args:
        coeffs: ``n`` coefficients, Python or NumPy ints of any sign and size; each is reduced
            modulo every modulus of ``ring``.
        ring: the ``RingSpec``.
        device: ``"python"``, ``"cpu"`` or ``"cuda"``; default ``$REN_DEVICE`` or ``"python"``.
    """

    # ``_facts``: the ring, domain and device of the value, read once (a value keeps them when it
    # is repointed at its buffer: the realized node holds the same ring and domain)
    __slots__ = ("__weakref__", "_facts", "node")

    def __init__(
        self, coeffs: Sequence[int] | np.ndarray, ring: RingSpec, device: str | None = None
    ) -> None:
        ring = _check_ring(ring)
        words = rk.encode_coeffs(ring, coeffs)
        self.node = buffer_node(words, ring, Domain.COEFF, canonical_device(device))
        self._facts: Facts | None = None
        LIVE.add(self)

    # --- constructors ------------------------------------------------------------------------
    @classmethod
    def _wrap(cls, node: Node) -> Poly:
        p = object.__new__(cls)
        p.node, p._facts = node, None
        LIVE.add(p)
        return p

    @classmethod
    def const(cls, value: int | np.integer, ring: RingSpec, device: str | None = None) -> Poly:
        """The constant polynomial ``value``: a ``CONST`` node, no buffer.

        The value is kept as its centered representative modulo ``Q`` (in ``(-Q/2, Q/2]``), so
        equal ring constants are the same node.
        """
        ring = _check_ring(ring)
        if not is_int(value):
            raise TypeError(
                f"a constant value must be an int (Python or NumPy, not a bool), got "
                f"{type(value).__name__} {value!r}"
            )
        Q = ring.Q
        v = int(value) % Q
        v = v - Q if v > Q // 2 else v
        dtype = DType.of_ring(ring.dtype)
        const = Node(Op.CONST, dtype, (), ConstArg(v, canonical_device(device)))
        return cls._wrap(Node(Op.AS_RING, dtype, (const,), RingArg(ring, Domain.COEFF)))

    @classmethod
    def from_limbs(
        cls,
        limbs: np.ndarray,
        ring: RingSpec,
        domain: Domain = Domain.COEFF,
        device: str | None = None,
    ) -> Poly:
        """A stored value from its plain residues: the inverse of ``limbs()``.

        Args:
            limbs: an ``(L, n)`` integer array, row ``i`` the residues modulo ``q_i``, each in
                ``[0, q_i)``.
            ring: the ``RingSpec``.
            domain: what the rows are: coefficients (``Domain.COEFF``) or NTT slots in
                ``ren.ring``'s order (``Domain.NTT``).
            device: where the value lives.

        Raises:
            TypeError: for a non-integer array, or a domain that is not a ``Domain``.
            ValueError: for a wrong shape or a residue outside ``[0, q_i)``, naming the limb.
        """
        ring = _check_ring(ring)
        arr = _checked_rows(limbs, ring, domain, "limbs", "residue")
        words = rk.to_mont(ring, arr.astype(ring.np_dtype))
        return cls._wrap(buffer_node(words, ring, domain, canonical_device(device)))

    @classmethod
    def from_words(
        cls,
        words: np.ndarray,
        ring: RingSpec,
        domain: Domain = Domain.COEFF,
        device: str | None = None,
    ) -> Poly:
        """A stored value from its Montgomery words as memory holds them: inverse of ``words()``.

        For checking another library or device whose buffers hold ``x * R mod q_i`` with Ren's
        ``R`` (``2**32`` for a ``u32`` ring, ``2**64`` for ``u64``); the words are copied.

        Args:
            words: an ``(L, n)`` integer array, row ``i`` the words modulo ``q_i``, each in
                ``[0, q_i)`` (fully reduced: reduce lazily reduced words first).
            ring: the ``RingSpec``.
            domain: what the rows are: coefficients or NTT slots in ``ren.ring``'s order.
            device: where the value lives.

        Raises:
            TypeError: for a non-integer array, or a domain that is not a ``Domain``.
            ValueError: for a wrong shape or a word outside ``[0, q_i)``, naming the limb.
        """
        ring = _check_ring(ring)
        arr = _checked_rows(words, ring, domain, "words", "word")
        stored = np.array(arr, dtype=ring.np_dtype, copy=True)
        return cls._wrap(buffer_node(stored, ring, domain, canonical_device(device)))

    @classmethod
    def uniform(cls, ring: RingSpec, rng: RngLike = None, device: str | None = None) -> Poly:
        """Coefficients uniform modulo ``Q``.

        Each limb is uniform modulo its ``q_i``, which by the CRT is the same.
        """
        ring = _check_ring(ring)
        gen = sampling.as_rng(rng)
        residues = np.stack([sampling.uniform_below(gen, q, ring.n) for q in ring.moduli])
        words = rk.to_mont(ring, residues.astype(ring.np_dtype))
        return cls._wrap(buffer_node(words, ring, Domain.COEFF, canonical_device(device)))

    @classmethod
    def uniform_on_interval(
        cls, ring: RingSpec, low: int, high: int, rng: RngLike = None, device: str | None = None
    ) -> Poly:
        """Integer coefficients uniform in ``[low, high]`` (both included)."""
        ring = _check_ring(ring)
        if not (is_int(low) and is_int(high)):
            raise TypeError(f"low and high must be ints, got {low!r} and {high!r}")
        return cls(sampling.integers(rng, low, high, ring.n), ring, device)

    @classmethod
    def ternary(cls, ring: RingSpec, rng: RngLike = None, device: str | None = None) -> Poly:
        """Coefficients uniform in ``{-1, 0, 1}``."""
        ring = _check_ring(ring)
        return cls(sampling.ternary(rng, ring.n), ring, device)

    @classmethod
    def sparse_ternary(
        cls, ring: RingSpec, hamming_weight: int, rng: RngLike = None, device: str | None = None
    ) -> Poly:
        """Exactly ``hamming_weight`` coefficients ``+-1``, the rest zero.

        Raises:
            TypeError: if ``hamming_weight`` is not an int (``2.0`` and ``True`` are not).
            ValueError: if it is outside ``[0, n]``.
        """
        ring = _check_ring(ring)
        return cls(sampling.sparse_ternary(rng, ring.n, hamming_weight), ring, device)

    @classmethod
    def gaussian(
        cls, ring: RingSpec, sigma: float = 3.2, rng: RngLike = None, device: str | None = None
    ) -> Poly:
        """Coefficients from the rounded normal of deviation ``sigma``, clipped at ``6 * sigma``.

        Raises:
            TypeError: if ``sigma`` is not a real number (a bool or a string is not).
            ValueError: unless ``sigma`` is positive and finite with ``6 * sigma`` below both
                ``2**53`` (the samples are exact integers) and ``Q / 2`` (each sample is its own
                centered representative modulo ``Q``, so none wraps around).
        """
        ring = _check_ring(ring)
        sigma = sampling.check_sigma(sigma)
        if 12 * sigma >= ring.Q:  # exact: Q / 2 overflows a float beyond 2^1024
            raise ValueError(
                f"sigma={sigma} is too large for {ring!r}: samples reach 6 * sigma = "
                f"{6 * sigma:.6g}, which must stay below Q/2 = {ring.Q / 2:.6g} (a larger sample "
                "wraps around modulo Q)"
            )
        return cls(sampling.gaussian(rng, ring.n, sigma), ring, device)

    # --- what the value is -------------------------------------------------------------------
    def _known(self) -> Facts:
        f = self._facts
        if f is None:
            f = self._facts = facts(self.node)
        return f

    @property
    def ring(self) -> RingSpec:
        """The ring of the value."""
        return self._known().need_ring()

    @property
    def domain(self) -> Domain:
        """The representation the value is (or will be) computed in."""
        return self._known().need_domain()

    @property
    def device(self) -> str:
        """The device the value lives on."""
        return self._known().need_device()

    def __repr__(self) -> str:
        return f"<Poly {self.ring.short()} {self.domain.value} {self.device} {self.node.op.name}>"

    def _repr_html_(self) -> str:
        """The notebook's display (``ren.display.poly_html``): computes nothing."""
        from ren.display import poly_html

        return poly_html(self)

    # --- a value: comparison, hashing, NumPy, pickling, copies --------------------------------
    #: NumPy defers every operator with an array to ``Poly``, whose operators refuse arrays, so
    #: ``a + np.arange(n)`` and ``np.ones(n) * a`` are Python's ``TypeError`` (not an array of
    #: polys). A NumPy integer scalar is an int: ``np.int64(3) * a`` works.
    __array_ufunc__ = None

    #: Unhashable, as a NumPy array is: a lazy value cannot be hashed without computing it.
    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        """Whether ``other`` is a ``Poly`` holding the same ring element; realizes both.

        The rings must have the same ``n`` and the same moduli in the same order. Domain, device
        and word type are representation only: ``a == a.ntt()`` and ``a == a.to("cpu")`` are
        ``True``. A value that is not a ``Poly`` is never equal (``a == 3`` is ``False``; compare
        with ``Poly.const(3, a.ring)`` for the constant polynomial), and ``!=`` is the negation.
        """
        if not isinstance(other, Poly):
            return NotImplemented
        if self is other or self.node is other.node:
            return True
        mine, theirs = self.ring, other.ring
        if mine.n != theirs.n or mine.moduli != theirs.moduli:
            return False
        realize(self, other)
        return bool(np.array_equal(self._coeff_limbs(), other._coeff_limbs()))

    def _coeff_limbs(self) -> np.ndarray:
        """The plain residues of the value in coefficient form, ``(L, n)``; realizes first."""
        return rk.from_mont(self.ring, self._coeff_words())

    def _coeff_words(self) -> np.ndarray:
        """The Montgomery words of the value in coefficient form, ``(L, n)``; realizes first."""
        words = self._words()
        return rk.intt(self.ring, words) if self.domain is Domain.NTT else words

    def __reduce__(self) -> tuple[Callable[..., Poly], tuple[object, ...]]:
        """Pickle the value: ring, domain, device and the stored words (realizing first).

        A constant polynomial (``Poly.const``) pickles as the constant. ``pickle.loads`` gives a
        stored ``Poly`` with the same value, ring, domain and device; see ``_unpickle``.
        """
        node = self.node
        if node.op is Op.AS_RING and node.src[0].op is Op.CONST:
            payload: tuple[str, object] = ("const", node.src[0].arg.value)
        else:
            payload = ("words", self.tobytes())  # realizes; the node is then the stored value
        ring = self.ring
        state = (ring.n, ring.moduli, ring.dtype, self.domain.value, self.device, payload)
        return (_unpickle, (PICKLE_VERSION, *state))

    def __copy__(self) -> Poly:
        """A ``Poly`` on the same node: values never change, so sharing the node is a copy."""
        return Poly._wrap(self.node)

    def __deepcopy__(self, memo: dict[int, object]) -> Poly:
        """An equal value on the same node (values never change; nothing below it is copied)."""
        return Poly._wrap(self.node)

    # --- arithmetic --------------------------------------------------------------------------
    def _operand(self, other: object) -> Node | None:
        """``other`` as a node in this poly's ring and device, or ``None`` when not an operand."""
        if isinstance(other, Poly):
            if other.ring != self.ring:
                raise ValueError(f"ring mismatch: {self.ring} and {other.ring}")
            if other.device != self.device:
                raise ValueError(f"device mismatch: {self.device} and {other.device}")
            return other.node
        if is_int(other):
            return Poly.const(other, self.ring, self.device).node
        return None

    def _binary(self, op: Op, other: object, reverse: bool = False) -> Poly:
        rhs = self._operand(other)
        if rhs is None:
            if isinstance(other, np.ndarray):  # NumPy deferred to Poly (__array_ufunc__ = None)
                symbol = {Op.ADD: "+", Op.SUB: "-", Op.MUL: "*"}[op]
                pair = ("numpy.ndarray", "Poly") if reverse else ("Poly", "numpy.ndarray")
                raise TypeError(
                    f"unsupported operand type(s) for {symbol}: '{pair[0]}' and '{pair[1]}': an "
                    "array is not a Poly operand (operands are Polys and ints); make it a Poly "
                    "first with Poly(array, ring)"
                )
            return cast(Poly, NotImplemented)  # the operator's caller tries the other operand
        src = (rhs, self.node) if reverse else (self.node, rhs)
        return Poly._wrap(Node(op, self.node.dtype, src))

    def __add__(self, other: Poly | int | np.integer) -> Poly:
        return self._binary(Op.ADD, other)

    def __radd__(self, other: int | np.integer) -> Poly:
        return self._binary(Op.ADD, other, reverse=True)

    def __sub__(self, other: Poly | int | np.integer) -> Poly:
        return self._binary(Op.SUB, other)

    def __rsub__(self, other: int | np.integer) -> Poly:
        return self._binary(Op.SUB, other, reverse=True)

    def __mul__(self, other: Poly | int | np.integer) -> Poly:
        return self._binary(Op.MUL, other)

    def __rmul__(self, other: int | np.integer) -> Poly:
        return self._binary(Op.MUL, other, reverse=True)

    def __neg__(self) -> Poly:
        return Poly._wrap(Node(Op.NEG, self.node.dtype, (self.node,)))

    # --- representation, ring and device changes ----------------------------------------------
    def ntt(self) -> Poly:
        """The same value in NTT form (``self`` when it already is)."""
        if self.domain is Domain.NTT:
            return self
        return Poly._wrap(Node(Op.NTT, self.node.dtype, (self.node,)))

    def intt(self) -> Poly:
        """The same value in coefficient form (``self`` when it already is)."""
        if self.domain is Domain.COEFF:
            return self
        return Poly._wrap(Node(Op.INTT, self.node.dtype, (self.node,)))

    def to_ring(self, ring: RingSpec) -> Poly:
        """``a_c mod Q'`` in ``ring`` (same ``n``), ``a_c`` the centered representative.

        A contiguous run of this ring's moduli is a view; other targets are a basis extension.
        """
        ring = _check_ring(ring)
        if ring.n != self.ring.n:
            raise ValueError(f"to_ring changes the degree: {self.ring} to {ring} (n must match)")
        if ring == self.ring:
            return self
        return Poly._wrap(
            Node(Op.TO_RING, DType.of_ring(ring.dtype), (self.node,), ToRingArg(ring))
        )

    def rescale(self, moduli: int | Sequence[int] | None = None) -> Poly:
        """``round(a_c / P)`` (ties up) in the ring of the remaining moduli.

        ``P`` is the product of ``moduli`` (default: the last modulus of the ring).

        Args:
            moduli: ``None``, one modulus (an int), or a sequence (tuple, list) of them; each a
                Python or NumPy int, never a float (``97.0``), a bool or a string.

        Raises:
            TypeError: for moduli that are not ints or a sequence of ints.
            ValueError: a modulus not in the ring, a repeated one, or no modulus left.
        """
        ring = self.ring
        if moduli is None:
            moduli = (ring.moduli[-1],)
        elif is_int(moduli):
            moduli = (int(moduli),)
        elif isinstance(moduli, Sequence | np.ndarray) and not isinstance(
            moduli, str | bytes | bytearray
        ):
            for q in moduli:
                if not is_int(q):
                    raise TypeError(
                        f"rescale moduli must be ints; got {type(q).__name__} {q!r} in {moduli!r}"
                    )
            moduli = tuple(int(q) for q in moduli)
        else:
            raise TypeError(
                "rescale moduli must be None, an int or a sequence (tuple, list) of ints, got "
                f"{type(moduli).__name__} {moduli!r}"
            )
        if not moduli:
            raise ValueError("rescale needs at least one modulus to divide by")
        if len(set(moduli)) != len(moduli):
            raise ValueError(f"rescale moduli {moduli} repeat a modulus")
        for q in moduli:
            if q not in ring.moduli:
                raise ValueError(f"cannot rescale by {q}: it is not a modulus of {ring}")
        if len(moduli) >= len(ring.moduli):
            raise ValueError(f"cannot rescale by {moduli}: no modulus of {ring} would remain")
        keep = tuple(q for q in ring.moduli if q not in moduli)
        dtype = DType.of_ring(ring.with_moduli(keep).dtype)
        return Poly._wrap(Node(Op.RESCALE, dtype, (self.node,), RescaleArg(moduli)))

    def rotate(self, steps: int) -> Poly:
        """``a(X^g)`` with ``g = 5**steps mod 2n``: rotates CKKS slots left by ``steps``."""
        if not is_int(steps):
            raise TypeError(f"rotation steps must be an int, got {type(steps).__name__}")
        n = self.ring.n
        steps = int(steps) % max(n // 2, 1)  # 5 has order n/2 modulo 2n
        g = galois_for_rotation(n, steps)
        if g == 1:
            return self
        return Poly._wrap(Node(Op.ROTATE, self.node.dtype, (self.node,), GaloisArg(g, steps)))

    def automorphism(self, g: int) -> Poly:
        """``a(X^g)`` for odd ``g`` (taken mod ``2n``); ``g = 2n - 1`` is conjugation."""
        if not is_int(g):
            raise TypeError(f"Galois element must be an int, got {type(g).__name__}")
        two_n = 2 * self.ring.n
        g = int(g) % two_n
        if g % 2 == 0:
            raise ValueError(f"Galois element {g} (mod 2n={two_n}) is even; it must be odd")
        if g == 1:
            return self
        return Poly._wrap(Node(Op.ROTATE, self.node.dtype, (self.node,), GaloisArg(g)))

    def conjugate(self) -> Poly:
        """``a(X^(2n-1))``: complex conjugation of CKKS slots."""
        return self.automorphism(2 * self.ring.n - 1)

    def to(self, device: str) -> Poly:
        """The same value on ``device`` (``self`` when it is there already).

        Raises:
            TypeError: if ``device`` is not a string (``None`` is not: name the device).
            ValueError: for an unknown device name.
        """
        if device is None:
            raise TypeError('to() needs a device name: "python", "cpu" or "cuda", got None')
        device = canonical_device(device)
        if device == self.device:
            return self
        return Poly._wrap(Node(Op.COPY, self.node.dtype, (self.node,), CopyArg(device)))

    def contiguous(self) -> Poly:
        """The same value, materialized in its own buffer when realized."""
        return Poly._wrap(Node(Op.CONTIGUOUS, self.node.dtype, (self.node,)))

    # --- realization -------------------------------------------------------------------------
    @property
    def realized(self) -> bool:
        """Whether the value is in a buffer that holds data (nothing left to compute)."""
        return storage(self.node) is not None

    def realize(self, *others: Poly) -> Poly:
        """Compute this poly (and ``others``, together: shared work runs once); returns ``self``.

        Afterwards every ``Poly`` whose graph used one of these values reads its buffer. Safe to
        call from several threads, on the same values or others (see ``realize``).
        """
        realize(self, *others)
        return self

    def _words(self) -> np.ndarray:
        if not self.realized:
            self.realize()
        words = storage(self.node)
        if words is None:  # a stored value whose buffer was freed since
            raise RenError(
                f"{self!r} holds no data: it was freed (Buffer.deallocate) after it was computed"
            )
        return words.reshape(len(self.ring.moduli), self.ring.n)

    def tolist(self, centered: bool = False) -> list[int]:
        """The coefficients as Python ints in ``[0, Q)``, or ``(-Q/2, Q/2]`` when ``centered``.

        This holds whatever the domain (an NTT-form value is converted). Realizes first when
        needed.

        Raises:
            TypeError: if ``centered`` is not a bool.
        """
        if not isinstance(centered, bool | np.bool_):
            raise TypeError(f"centered must be a bool, got {type(centered).__name__} {centered!r}")
        return rk.crt(self.ring, self._coeff_words(), centered=centered)

    def limbs(self) -> np.ndarray:
        """The stored residues, plain (not Montgomery), as an ``(L, n)`` array.

        Row ``i`` is modulo ``q_i``. The residues are in the poly's domain (NTT slots in
        ``ren.ring``'s order for an NTT-form poly).
        """
        return rk.from_mont(self.ring, self._words())

    def words(self) -> np.ndarray:
        """The stored words as memory holds them (Montgomery form), as an ``(L, n)`` array copy.

        Row ``i`` holds ``x * R mod q_i`` in ``[0, q_i)`` for the residues ``x`` that ``limbs()``
        returns, ``R`` being ``2**32`` for a ``u32`` ring and ``2**64`` for ``u64``. Realizes
        first when needed.
        """
        return self._words().copy()

    def tobytes(self) -> bytes:
        """The stored buffer as it is: Montgomery words, little-endian, limb-major."""
        words = self._words()
        return words.astype(words.dtype.newbyteorder("<"), copy=False).tobytes()


def realize(*polys: Poly) -> tuple[Poly, ...]:
    """Compute ``polys`` together under one ``SINK``; returns them.

    Every live ``Poly`` whose graph overlapped the realized work is repointed through the
    ``becomes_map`` to the realized buffers, so nothing is computed twice.

    Threads: safe to call from several threads at once; each realization's words are its own.
    It repoints the polys it was given (made in any thread) and the live polys the calling
    thread made; other threads' polys keep their graphs, which compute the same words.
    """
    for p in polys:
        if not isinstance(p, Poly):
            raise TypeError(f"realize takes Poly values, got {type(p).__name__}")
    prepared = prepare_realize(*polys)
    if prepared is not None:
        notify("on_run", prepared)  # an observer may run units itself first (the debugger)
        prepared.run()
    return polys


def prepare_realize(*polys: Poly) -> Realization | None:
    """The realization of ``polys``, scheduled and planned but not run.

    It is ``None`` when every one is realized already. Its ``run()`` computes them and repoints
    every live ``Poly``, exactly as ``realize`` does; ``run(1)`` runs one exec unit at a time (the
    step-through debugger).

    Raises:
        TypeError: if an argument is not a ``Poly``.
    """
    for p in polys:
        if not isinstance(p, Poly):
            raise TypeError(f"realize takes Poly values, got {type(p).__name__}")
    asked = [(p, p.node) for p in polys if not p.realized]
    if not asked:
        return None
    return prepare(tuple(node for _, node in asked), lambda becomes: repoint(becomes, asked))


def _checked_rows(
    rows: npt.ArrayLike, ring: RingSpec, domain: object, name: str, what: str
) -> np.ndarray:
    """``rows`` as an ``(L, n)`` integer array with row ``i`` in ``[0, q_i)``, else a clear error.

    ``name`` is the argument's name and ``what`` an entry's (``"residue"``, ``"word"``) in the
    messages.
    """
    if not isinstance(domain, Domain):
        raise TypeError(f"domain must be a ren.ring.Domain, got {domain!r}")
    arr = np.asarray(rows)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer array, got dtype {arr.dtype}")
    if arr.shape != (ring.L, ring.n):
        raise ValueError(f"{name} for {ring!r} must have shape {(ring.L, ring.n)}, got {arr.shape}")
    for i, q in enumerate(ring.moduli):
        row = arr[i]
        if row.size and (int(row.min()) < 0 or int(row.max()) >= q):
            raise ValueError(f"limb {i} of {ring!r} has a {what} outside [0, q={q})")
    return arr


def buffer_node(words: np.ndarray, ring: RingSpec, domain: Domain, device: str) -> Node:
    """``AS_RING(BUFFER)`` over a new buffer holding ``words`` (``(L, n)`` Montgomery words)."""
    dtype = DType.of_ring(ring.dtype)
    buf = Buffer(device, ring.dtype, ring.size, words)
    return Node(
        Op.AS_RING, dtype, (Node(Op.BUFFER, dtype, (), BufferArg(buf)),), RingArg(ring, domain)
    )


# --------------------------------------------------------------------------------------------
# pickling: a Poly is stored as its value

#: The layout of a pickled ``Poly``: ``(version, n, moduli, dtype, domain, device, payload)``, the
#: payload ``("words", little-endian Montgomery words, limb-major)`` or ``("const", value)``.
PICKLE_VERSION = 1


def _unpickle(version: object, *state: Any) -> Poly:  # Any: a pickle's fields, checked here
    """The ``Poly`` a pickle holds (``Poly.__reduce__`` wrote it); every field is checked.

    Raises:
        ValueError: for another format version, malformed fields, a word outside ``[0, q_i)``,
            or a device this process cannot use (named, with how to move the value first).
    """
    if version != PICKLE_VERSION:
        raise ValueError(
            f"a Poly pickled in format version {version!r}; this Ren reads version {PICKLE_VERSION}"
        )
    if len(state) != 6:
        raise ValueError(f"a pickled Poly has 6 fields after its version, got {len(state)}")
    n, moduli, dtype, domain, device, payload = state
    try:
        ring = RingSpec(n, moduli, dtype)
        domain = Domain(domain)
    except (TypeError, ValueError) as e:
        raise ValueError(f"a pickled Poly's ring or domain is not valid: {e}") from None
    device = _device_here(device)
    if not (isinstance(payload, tuple) and len(payload) == 2):
        raise ValueError(f"a pickled Poly's payload is a (kind, data) pair, got {payload!r}")
    kind, data = payload
    if kind == "const":
        if not is_int(data):
            raise ValueError(f"a pickled constant Poly holds an int, got {type(data).__name__}")
        return Poly.const(data, ring, device)
    if kind != "words" or not isinstance(data, bytes):
        raise ValueError(f"a pickled Poly holds words (bytes) or a constant, got kind {kind!r}")
    little = np.dtype(ring.np_dtype).newbyteorder("<")
    if len(data) != ring.size * little.itemsize:
        raise ValueError(
            f"a pickled Poly of {ring!r} holds {ring.size} words ({ring.size * little.itemsize} "
            f"bytes), got {len(data)} bytes"
        )
    words = np.frombuffer(data, dtype=little).reshape(ring.L, ring.n)
    try:
        return Poly.from_words(words, ring, domain, device)
    except ValueError as e:
        raise ValueError(f"a pickled Poly's words are not valid: {e}") from None


def _device_here(device: Any) -> str:  # Any: a pickle's field, which canonical_device checks
    """``device`` when this process can use it, else a ``ValueError`` naming it.

    ``cuda`` needs PyCUDA and a GPU (or ``REN_CUDA_EMULATE=1``); a registered device must be
    registered here too. ``cpu`` is always there (its compiler is needed only to run kernels).
    """
    hint = (
        f"move the value to a device every process has before pickling (p.to('python')), or "
        f"unpickle where {device!r} is available"
    )
    try:
        name = canonical_device(device)
    except (TypeError, ValueError) as e:
        raise ValueError(f"cannot unpickle a Poly on device {device!r}: {e}; {hint}") from None
    if name == "cuda":
        from ren.backends import cuda  # imported only here: PyCUDA is an optional part

        try:
            cuda.runtime()
        except Exception as e:  # RenError without PyCUDA or a GPU; a broken driver raises others
            raise ValueError(f"cannot unpickle a Poly on device 'cuda' here: {e}; {hint}") from None
    return name
