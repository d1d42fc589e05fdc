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
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from ren import sampling
from ren.backends import ring_kernels as rk
from ren.device import Buffer, canonical_device
from ren.engine.observe import notify
from ren.engine.realize import Realization, prepare
from ren.ir.facts import facts, is_const
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
from ren.ir.rewrite import Pat, graph_rewrite
from ren.ring import Domain, RingSpec, galois_for_rotation
from ren.sampling import RngLike

__all__ = ["Poly", "prepare_realize", "realize"]

#: Every live ``Poly``: after a realization, the ones whose graph overlapped are repointed.
_LIVE: weakref.WeakSet[Poly] = weakref.WeakSet()


def _check_ring(ring: Any) -> RingSpec:
    if not isinstance(ring, RingSpec):
        raise TypeError(f"ring must be a RingSpec, got {type(ring).__name__}")
    return ring


def is_int(x: Any) -> bool:
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

    __slots__ = ("__weakref__", "node")

    def __init__(
        self, coeffs: Sequence[int] | np.ndarray, ring: RingSpec, device: str | None = None
    ):
        ring = _check_ring(ring)
        words = rk.encode_coeffs(ring, coeffs)
        self.node = _buffer_node(words, ring, Domain.COEFF, canonical_device(device))
        _LIVE.add(self)

    # --- constructors ------------------------------------------------------------------------
    @classmethod
    def _wrap(cls, node: Node) -> Poly:
        p = object.__new__(cls)
        p.node = node
        _LIVE.add(p)
        return p

    @classmethod
    def const(cls, value: int, ring: RingSpec, device: str | None = None) -> Poly:
        """The constant polynomial ``value``: a ``CONST`` node, no buffer.

        The value is kept as its centered representative modulo ``Q`` (in ``(-Q/2, Q/2]``), so
        equal ring constants are the same node.
        """
        ring = _check_ring(ring)
        if not is_int(value):
            raise TypeError(f"a constant must be an int, got {type(value).__name__}")
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
        return cls._wrap(_buffer_node(words, ring, domain, canonical_device(device)))

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
        return cls._wrap(_buffer_node(stored, ring, domain, canonical_device(device)))

    @classmethod
    def uniform(cls, ring: RingSpec, rng: RngLike = None, device: str | None = None) -> Poly:
        """Coefficients uniform modulo ``Q``.

        Each limb is uniform modulo its ``q_i``, which by the CRT is the same.
        """
        ring = _check_ring(ring)
        gen = sampling.as_rng(rng)
        residues = np.stack([sampling.uniform_below(gen, q, ring.n) for q in ring.moduli])
        words = rk.to_mont(ring, residues.astype(ring.np_dtype))
        return cls._wrap(_buffer_node(words, ring, Domain.COEFF, canonical_device(device)))

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
        """Exactly ``hamming_weight`` coefficients ``+-1``, the rest zero."""
        ring = _check_ring(ring)
        return cls(sampling.sparse_ternary(rng, ring.n, hamming_weight), ring, device)

    @classmethod
    def gaussian(
        cls, ring: RingSpec, sigma: float = 3.2, rng: RngLike = None, device: str | None = None
    ) -> Poly:
        """Coefficients from the rounded normal of deviation ``sigma``, clipped at ``6 * sigma``."""
        ring = _check_ring(ring)
        return cls(sampling.gaussian(rng, ring.n, sigma), ring, device)

    # --- what the value is -------------------------------------------------------------------
    @property
    def ring(self) -> RingSpec:
        """The ring of the value."""
        return facts(self.node).ring

    @property
    def domain(self) -> Domain:
        """The representation the value is (or will be) computed in."""
        return facts(self.node).domain

    @property
    def device(self) -> str:
        """The device the value lives on."""
        return facts(self.node).device

    def __repr__(self) -> str:
        return f"<Poly {self.ring.short()} {self.domain.value} {self.device} {self.node.op.name}>"

    # --- arithmetic --------------------------------------------------------------------------
    def _operand(self, other: Any) -> Node | None:
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

    def _binary(self, op: Op, other: Any, reverse: bool = False) -> Poly:
        rhs = self._operand(other)
        if rhs is None:
            return NotImplemented
        src = (rhs, self.node) if reverse else (self.node, rhs)
        return Poly._wrap(Node(op, self.node.dtype, src))

    def __add__(self, other: Poly | int) -> Poly:
        return self._binary(Op.ADD, other)

    def __radd__(self, other: int) -> Poly:
        return self._binary(Op.ADD, other, reverse=True)

    def __sub__(self, other: Poly | int) -> Poly:
        return self._binary(Op.SUB, other)

    def __rsub__(self, other: int) -> Poly:
        return self._binary(Op.SUB, other, reverse=True)

    def __mul__(self, other: Poly | int) -> Poly:
        return self._binary(Op.MUL, other)

    def __rmul__(self, other: int) -> Poly:
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

        Raises:
            ValueError: a modulus not in the ring, a repeated one, or no modulus left.
        """
        ring = self.ring
        if moduli is None:
            moduli = (ring.moduli[-1],)
        elif is_int(moduli):
            moduli = (int(moduli),)
        else:
            moduli = tuple(int(q) for q in moduli)
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
        """The same value on ``device`` (``self`` when it is there already)."""
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
        return _storage(self.node) is not None

    def realize(self, *others: Poly) -> Poly:
        """Compute this poly (and ``others``, together: shared work runs once); returns ``self``.

        Afterwards every ``Poly`` whose graph used one of these values reads its buffer.
        """
        realize(self, *others)
        return self

    def _words(self) -> np.ndarray:
        if not self.realized:
            self.realize()
        return _storage(self.node).reshape(len(self.ring.moduli), self.ring.n)

    def tolist(self, centered: bool = False) -> list[int]:
        """The coefficients as Python ints in ``[0, Q)``, or ``(-Q/2, Q/2]`` when ``centered``.

        This holds whatever the domain (an NTT-form value is converted). Realizes first when
        needed.
        """
        words = self._words()
        if self.domain is Domain.NTT:
            words = rk.intt(self.ring, words)
        return rk.crt(self.ring, words, centered=centered)

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
    todo = tuple(p.node for p in polys if not p.realized)
    if not todo:
        return None
    return prepare(todo, _repoint)


def _repoint(becomes: dict[Node, Node]) -> None:
    """Point every live poly at realized buffers instead of the graphs they replace.

    A poly that *is* a realized output takes its buffer. A poly whose graph *uses* one reads the
    buffer instead (one shared walk over all live graphs, one rewrite). Constants are the
    exception: a graph using a constant keeps it inline (cheaper than reading a buffer).
    """
    becomes = {old: new for old, new in becomes.items() if old is not new}
    if not becomes:
        return
    polys = list(_LIVE)
    for p in polys:
        if p.node in becomes:
            p.node = becomes[p.node]
    # a constant (even one in NTT form) stays inline in the graphs that use it: a buffer would be
    # slower to read, and would turn a constant operand into a varying one (changing domains)
    inner = {
        old: new for old, new in becomes.items() if not (is_const(old) or _storage_or_const(old))
    }
    if not inner:
        return
    uses = _uses_any(inner, [p.node for p in polys])
    affected = [p for p in polys if uses[p.node]]
    if not affected:
        return
    rule = [(Pat(name="node", where=lambda n: n in inner), lambda node: inner[node])]
    sink = graph_rewrite(Node(Op.SINK, DType.VOID, tuple(p.node for p in affected)), rule)
    for p, node in zip(affected, sink.src, strict=True):
        p.node = node


def _uses_any(keys: dict[Node, Node], roots: list[Node]) -> dict[Node, bool]:
    """For every node below ``roots``: does its graph contain one of ``keys``?

    The walk is memoized and iterative; it stops at stored values, which contain nothing to
    replace.
    """
    memo: dict[Node, bool] = {}
    for root in roots:
        stack: list[tuple[Node, bool]] = [(root, False)]
        while stack:
            node, ready = stack.pop()
            if node in memo:
                continue
            if node in keys:
                memo[node] = True
            elif _storage_or_const(node):
                memo[node] = False
            elif ready:
                memo[node] = any(memo[s] for s in node.src)
            else:
                stack.append((node, True))
                stack.extend((s, False) for s in node.src if s not in memo)
    return memo


def stored(node: Node) -> tuple[Buffer, tuple[int, int] | None] | None:
    """Where a stored value lives: its buffer, and ``(offset, size)`` in words for a view.

    ``None`` for a value that is not an ``AS_RING`` over a buffer or a view of one.
    """
    if node.op is not Op.AS_RING:
        return None
    store = node.src[0]
    if store.op is Op.BUFFER:
        return store.arg.buffer, None
    if store.op is Op.BUFFER_VIEW and store.src[0].op is Op.BUFFER:
        return store.src[0].arg.buffer, (store.arg.offset, store.arg.size)
    return None


def _storage(node: Node) -> np.ndarray | None:
    """The words of a stored value (an ``AS_RING`` over a filled buffer or a view of one)."""
    where = stored(node)
    if where is None:
        return None
    buf, view = where
    array = buf.array
    if array is None or view is None:
        return array
    return array[view[0] : view[0] + view[1]]


def _storage_or_const(node: Node) -> bool:
    return node.op is Op.AS_RING and node.src[0].op in (Op.BUFFER, Op.BUFFER_VIEW, Op.CONST)


def _checked_rows(rows: Any, ring: RingSpec, domain: Any, name: str, what: str) -> np.ndarray:
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


def _buffer_node(words: np.ndarray, ring: RingSpec, domain: Domain, device: str) -> Node:
    """``AS_RING(BUFFER)`` over a new buffer holding ``words`` (``(L, n)`` Montgomery words)."""
    dtype = DType.of_ring(ring.dtype)
    buf = Buffer(device, ring.dtype, ring.size, words)
    return Node(
        Op.AS_RING, dtype, (Node(Op.BUFFER, dtype, (), BufferArg(buf)),), RingArg(ring, domain)
    )
