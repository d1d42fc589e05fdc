"""The reference evaluator: the exact value of any front-end graph, with Python integers.

This module is the living definition of each op. It shares no arithmetic with the kernels: every
value is a list of ``n`` Python ints in ``[0, Q)`` (the coefficients of the ring element, whatever
domain it is represented in), and every op is one obvious function of its sources' values.
Stored words are read by their definition too (Montgomery: ``w * R**-1 mod q``; NTT slot ``k`` is
``a(psi**(2*brv(k)+1))``). Passes and backends are tested against it.

It also evaluates the graphs the scheduler makes on the way to kernels, up to ``indexify``: a
``STORE``d value is the value of what is stored, ``AFTER`` and ``BUFFERIZE`` are that value, a
``BUFFER_VIEW`` keeps the viewed limbs, ``IMM`` is the constant polynomial ``c`` (whatever its
layout), and a ``LOAD`` is the (viewed, maybe permuted) value it reads. So every pass can be
checked by evaluating its input and its output.

It is slow on purpose (products are schoolbook, ``O(n**2)``; NTT-form inputs are read by solving
the evaluation at every root). Use small rings.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from ren.ir.facts import facts, need_ring
from ren.ir.node import Node
from ren.ir.op import Op
from ren.ring import Domain, RingSpec, bit_reverse, primitive_root_2n

__all__ = [
    "centered",
    "crt",
    "evaluate",
    "evaluate_graph",
    "expected_limbs",
    "negacyclic_mul",
    "read_words",
]

Value = list[int]


class Stored(tuple[Value, RingSpec | None]):
    """What a ``STORE``/``AFTER`` holds: ``(value, ring)``, read through views and loads."""


#: What the evaluator holds for a node: a value, a SINK's tuple of them, what a STORE holds, or
#: None for storage.
NodeValue = Value | tuple[Value, ...] | Stored | None


def centered(x: int, Q: int) -> int:
    """The representative of ``x`` modulo ``Q`` in ``(-Q/2, Q/2]``."""
    x %= Q
    return x - Q if x > Q // 2 else x


def crt(residues: list[list[int]], moduli: tuple[int, ...]) -> Value:
    """Coefficients in ``[0, Q)`` from per-modulus residues (Chinese remaindering)."""
    Q = 1
    for q in moduli:
        Q *= q
    out = [0] * len(residues[0])
    for res, q in zip(residues, moduli, strict=True):
        Qi = Q // q
        f = Qi * pow(Qi, -1, q)
        for j, r in enumerate(res):
            out[j] += r * f
    return [x % Q for x in out]


def negacyclic_mul(a: Value, b: Value, Q: int) -> Value:
    """Schoolbook product in ``Z_Q[X]/(X^n + 1)``: ``X^n = -1``."""
    n = len(a)
    acc = np.zeros(2 * n, dtype=object)
    bb = np.array(b, dtype=object)
    for i, ai in enumerate(a):
        if ai:
            acc[i : i + n] += ai * bb
    return [int(x) % Q for x in acc[:n] - acc[n:]]


def automorphism(a: Value, g: int, Q: int) -> Value:
    """``a(X^g)`` in ``Z_Q[X]/(X^n + 1)``."""
    n = len(a)
    out = [0] * n
    for i, c in enumerate(a):
        j = i * g % (2 * n)
        if j < n:
            out[j] = (out[j] + c) % Q
        else:
            out[j - n] = (out[j - n] - c) % Q
    return out


def _slot_roots(q: int, n: int) -> list[int]:
    psi = primitive_root_2n(q, n)
    bits = n.bit_length() - 1
    return [pow(psi, 2 * bit_reverse(k, bits) + 1, q) for k in range(n)]


def _ntt_by_definition(coeffs: list[int], q: int) -> list[int]:
    """Slot ``k`` = ``a(psi**(2*brv(k)+1)) mod q`` (Horner)."""
    out = []
    for w in _slot_roots(q, len(coeffs)):
        acc = 0
        for c in reversed(coeffs):
            acc = (acc * w + c) % q
        out.append(acc)
    return out


def _intt_by_definition(slots: list[int], q: int) -> list[int]:
    """Coefficients from slots: ``a_i = n**-1 * sum_k slot_k * w_k**-i``."""
    n = len(slots)
    n_inv = pow(n, -1, q)
    inv_roots = [pow(w, -1, q) for w in _slot_roots(q, n)]
    out = []
    for i in range(n):
        acc = sum(s * pow(w, i, q) for s, w in zip(slots, inv_roots, strict=True))
        out.append(acc * n_inv % q)
    return out


def read_words(words: np.ndarray, ring: RingSpec, domain: Domain) -> Value:
    """The value held by stored words (``L * n`` Montgomery words, limb-major, in ``domain``).

    Raises:
        ValueError: when ``words`` does not hold exactly ``L * n`` words.
    """
    words = np.asarray(words)
    if words.size != ring.size:
        raise ValueError(f"words for {ring!r} are {ring.size} words, got {words.size}")
    words = words.reshape(len(ring.moduli), ring.n)
    R = 1 << ring.word_bits
    residues = []
    for row, q in zip(words, ring.moduli, strict=True):
        r_inv = pow(R, -1, q)
        plain = [int(w) * r_inv % q for w in row]
        residues.append(_intt_by_definition(plain, q) if domain is Domain.NTT else plain)
    return crt(residues, ring.moduli)


def expected_limbs(value: Value, ring: RingSpec, domain: Domain) -> np.ndarray:
    """The ``(L, n)`` plain residues (not Montgomery) a correct buffer holds for ``value``."""
    rows = []
    for q in ring.moduli:
        res = [c % q for c in value]
        rows.append(_ntt_by_definition(res, q) if domain is Domain.NTT else res)
    return np.array(rows, dtype=ring.np_dtype)


def _read_storage(
    store: Node, src_value: object, ring: RingSpec, domain: Domain, offset: int = 0
) -> Value:
    """The value of ``ring`` held ``offset`` limbs into ``store`` (a buffer, or a stored value)."""
    if store.op is Op.BUFFER:
        data = store.arg.buffer.array
        if data is None:
            raise ValueError(f"{store!r} holds no data")
        start = offset * ring.n
        return read_words(data[start : start + ring.size], ring, domain)
    if isinstance(src_value, Stored):  # AFTER: the stored value, restricted to the viewed limbs
        value, base_ring = src_value
        assert base_ring is not None  # a stored value is a ring value
        return [centered(x, base_ring.Q) % ring.Q for x in value]
    raise ValueError(f"{store.op.name} holds no readable value")


def _eval_node(node: Node, src: list[Any]) -> NodeValue:
    # each op knows what its sources hold (values; a Stored under AFTER; None for storage): Any
    op, arg = node.op, node.arg
    if op is Op.SINK:
        return tuple(src)
    if op in (Op.BUFFER, Op.CONST, Op.GIDX, Op.SLOT, Op.KERNEL):
        return None  # storage and index nodes: the ops above them give them a value
    if op is Op.STORE:
        return Stored((src[1], facts(node.src[1]).ring))
    if op is Op.AFTER:
        return src[1] if isinstance(src[1], Stored) else None
    if op in (Op.BUFFER_VIEW, Op.INDEX):
        return cast(NodeValue, src[0])  # read by the AS_RING/LOAD above (ring and offset)
    ring = need_ring(node)  # every op from here on makes a ring value
    if op is Op.AS_RING:
        inner = node.src[0]
        if inner.op is Op.CONST:
            return [inner.arg.value % ring.Q] + [0] * (ring.n - 1)
        if inner.op is Op.BUFFER_VIEW:
            offset = inner.arg.offset // ring.n
            return _read_storage(inner.src[0], src[0], arg.ring, arg.domain, offset)
        return _read_storage(inner, src[0], arg.ring, arg.domain)
    if op is Op.LOAD:
        index = node.src[0]
        value = _read_storage(index.src[0], src[0], arg.ring, arg.domain, arg.limb_offset)
        return value if arg.galois is None else automorphism(value, arg.galois, ring.Q)
    if op is Op.IMM:
        return [arg.value % ring.Q] + [0] * (ring.n - 1)  # the constant polynomial, any layout
    if op is Op.BUFFERIZE:
        return cast(NodeValue, src[0])
    Q = ring.Q
    if op is Op.ADD:
        return [(x + y) % Q for x, y in zip(src[0], src[1], strict=True)]
    if op is Op.SUB:
        return [(x - y) % Q for x, y in zip(src[0], src[1], strict=True)]
    if op is Op.NEG:
        return [-x % Q for x in src[0]]
    if op is Op.MUL:
        return negacyclic_mul(src[0], src[1], Q)
    if op in (Op.NTT, Op.INTT, Op.COPY, Op.CONTIGUOUS):
        return cast(Value, src[0])
    if op is Op.TO_RING:
        Q_src = need_ring(node.src[0]).Q
        return [centered(x, Q_src) % Q for x in src[0]]
    if op is Op.RESCALE:
        Q_src = need_ring(node.src[0]).Q
        P = 1
        for p in arg.moduli:
            P *= p
        # floor(a_c / P + 1/2) = floor((2 a_c + P) / (2 P))
        return [(2 * centered(x, Q_src) + P) // (2 * P) % Q for x in src[0]]
    if op in (Op.ROTATE, Op.AUTOMORPHISM):
        return automorphism(src[0], arg.galois, Q)
    raise ValueError(f"the reference evaluator has no rule for {op.name}")


def evaluate_graph(root: Node) -> dict[Node, NodeValue]:
    """The value of every node below ``root`` (iterative, each node once; ``None`` for storage).

    Raises:
        TypeError: when ``root`` is not a ``Node`` (for a ``Poly`` ``p``, pass ``p.node``).
    """
    if not isinstance(root, Node):
        raise TypeError(
            f"the reference evaluates a graph Node (a Poly's .node), got {type(root).__name__}"
        )
    values: dict[Node, NodeValue] = {}
    for node in root.toposort():
        values[node] = _eval_node(node, [values[s] for s in node.src])
    return values


def evaluate(root: Node) -> Value | tuple[Value, ...] | Stored:
    """The value of ``root``: ``n`` ints in ``[0, Q)``, or a tuple of values for a ``SINK``.

    A ``STORE`` of a scheduled graph gives what it holds, a ``Stored`` ``(value, ring)``.

    Raises:
        TypeError: when ``root`` is not a ``Node`` (for a ``Poly`` ``p``, pass ``p.node``).
        ValueError: when ``root`` is storage (a ``BUFFER``, a ``CONST``, a kernel's ``SLOT``), not
            a value: evaluate the value over it (the ``AS_RING`` above a buffer or constant).
    """
    value = evaluate_graph(root)[root]
    if value is None:
        raise ValueError(
            f"a {root.op.name} node is storage, not a value; evaluate a value (a Poly's .node, "
            "the AS_RING above a buffer or constant)"
        )
    return value
