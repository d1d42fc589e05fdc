"""The C text every kernel shares: filling templates, the comment header, the modular helpers.

The modular helpers (``HELPERS``: ``add_mod``, ``sub_mod``, ``neg_mod``, the Montgomery and Shoup
products, for one word size) are written once here. The C renderer and the C templates include
them as ``static inline`` functions (:func:`c_helpers`), the CUDA renderer and the CUDA templates
as ``__device__`` functions (``ren.codegen.cuda.device_helpers``); the renderers use the plain
names ``add_mod``, ... (:data:`HELPER_NAMES`).
"""

from __future__ import annotations

import functools
import hashlib
import re
import textwrap
from collections.abc import Iterable, Sequence
from typing import TypeAlias, cast

from ren.ring import RingSpec

__all__ = [
    "C_INCLUDES",
    "DWORD",
    "HEADER",
    "HELPERS",
    "HELPER_NAMES",
    "MONT_MUL_HI",
    "MUL_HI_U32",
    "MUL_HI_U64",
    "OMP_MIN_WORDS",
    "WORD",
    "CConstant",
    "CValues",
    "c_array",
    "c_helpers",
    "c_int",
    "c_name",
    "family_header",
    "family_tag",
    "fill",
    "header",
    "helpers",
    "limbs",
    "omp_for",
    "omp_for_limbs",
    "omp_for_words",
    "tag",
]


# --------------------------------------------------------------------------------------------
# what a source may hold of a kernel's IR: integers and names, nothing else

#: A C identifier of Ren's kernels and parameters.
_C_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


def c_int(value: object) -> str:
    """``value`` as a C decimal literal, when it is an ``int`` (never a bool or text).

    Every number a renderer takes from a kernel's IR goes through here, so even an IR object
    made without its checks cannot put text into a source.

    Raises:
        TypeError: for anything but an ``int``.
    """
    if type(value) is not int:
        raise TypeError(f"a kernel source holds ints only here, got {type(value).__name__}")
    return str(value)


def c_name(value: object) -> str:
    """``value`` when it is a C identifier (letters, digits, ``_``; at most 128 characters).

    Raises:
        ValueError: for anything else.
    """
    if type(value) is not str or not _C_NAME.fullmatch(value):
        raise ValueError(f"a kernel source names identifiers only, got {str(value)[:40]!r}")
    return value


# --------------------------------------------------------------------------------------------
# filling templates


PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")

#: The values of a C constant array: ints or floats, or rows of them.
CValues: TypeAlias = Sequence[float] | Sequence[Sequence[float]]
#: A template's constant array: ``(name, C type, values)``, or with the values per line last.
CConstant: TypeAlias = tuple[str, str, CValues] | tuple[str, str, CValues, int]


def fill(template: str, **values: object) -> str:
    """Replace each ``{name}`` (an identifier) by ``values[name]``; other braces stay.

    C braces need no doubling this way. A placeholder without a value, or a value without a
    placeholder, raises ``KeyError``: templates and their callers cannot drift apart silently.
    """
    used = set(PLACEHOLDER.findall(template))
    if used != set(values):
        raise KeyError(f"template placeholders {sorted(used)} != values {sorted(values)}")
    return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), template)


def c_array(name: str, ctype: str, values: CValues, per_line: int = 4) -> str:
    """``static const <ctype> NAME[len] = {...};`` (a 1-D or 2-D list of ints or floats).

    Floats are written as C99 hexadecimal literals, which are exact. An empty list becomes one
    unused ``0`` (C has no zero-length arrays); the loops that read it run zero times.
    """
    is_2d = bool(values) and isinstance(values[0], list | tuple)
    rows = cast("Sequence[Sequence[float]]", values) if is_2d else None

    def lit(v: float) -> str:
        if isinstance(v, float):
            return float.hex(v)
        return c_int(int(v)) if ctype == "int" else f"{c_int(int(v))}u"

    def flat(vals: Iterable[float]) -> str:
        vals = list(vals) or [0]
        lines = [
            ", ".join(lit(v) for v in vals[i : i + per_line]) for i in range(0, len(vals), per_line)
        ]
        return ",\n    ".join(lines)

    if rows is None:
        words = flat(cast("Sequence[float]", values))
        return f"static const {ctype} {name}[{max(len(values), 1)}] = {{\n    {words}\n}};"
    inner = ",\n    ".join("{" + flat(r).replace("\n    ", " ") + "}" for r in rows)
    return (
        f"static const {ctype} {name}[{len(rows)}][{max(len(rows[0]), 1)}] = {{\n    {inner}\n}};"
    )


#: Below this many words (``L * n``) a kernel runs on one thread: starting an OpenMP parallel
#: region costs microseconds, about what a whole limb of n = 4096 takes.
OMP_MIN_WORDS = 1 << 14


def omp_for(ring: RingSpec, over_limbs: bool = True) -> str:
    """The line before a loop worth spreading over threads: ``#pragma omp parallel for``.

    When the loop is not worth it (one limb, or too little work), the line is a comment saying
    why not.
    """
    if over_limbs and ring.L < 2:
        return "/* one limb: one thread */"
    if ring.L * ring.n < OMP_MIN_WORDS:
        return f"/* one thread: L * n = {ring.L * ring.n} words is too little work for OpenMP */"
    return "#pragma omp parallel for"


def omp_for_limbs(n: int) -> str:
    """``omp_for`` for a loop over ``L`` limbs where ``L`` is known only when the kernel runs.

    The same rule, as an ``if`` clause: threads when there are two limbs or more and at least
    ``OMP_MIN_WORDS`` words.
    """
    return f"#pragma omp parallel for if (L >= 2 && (long long)L * {int(n)} >= {OMP_MIN_WORDS})"


def omp_for_words(n: int) -> str:
    """``omp_for(ring, over_limbs=False)`` where ``L`` is known only when the kernel runs."""
    return f"#pragma omp parallel for if ((long long)L * {int(n)} >= {OMP_MIN_WORDS})"


WORD = {"u32": "uint32_t", "u64": "uint64_t"}
DWORD = {"u32": "uint64_t", "u64": "unsigned __int128"}


def tag(ring: RingSpec) -> str:
    """``n4096_L2_u64_1a2b3c4d``: the shape, and 8 hex digits of a hash of the moduli."""
    digest = hashlib.sha256(repr(ring.moduli).encode()).hexdigest()[:8]
    return f"n{ring.n}_L{ring.L}_{ring.dtype}_{digest}"


def family_tag(ring: RingSpec) -> str:
    """``n4096_u64``: what a kernel that reads its limbs and moduli from a table depends on."""
    return f"n{ring.n}_{ring.dtype}"


def limbs(ring: RingSpec) -> str:
    """The moduli of ``ring``, comma-separated, as a header and a name hash show them."""
    return ", ".join(str(q) for q in ring.moduli)


# --------------------------------------------------------------------------------------------
# shared C: the header and the word helpers


HEADER = """\
/*
{body}
 */
{includes}
"""

#: The headers the C templates use.
C_INCLUDES = ("stddef.h", "stdint.h", "string.h")

#: Modular helpers for one word size ``{w}`` (``u32`` or ``u64``). ``R = 2**{bits}``. ``{inline}``
#: is how a helper is declared (C: ``static inline``; CUDA: ``__device__ __forceinline__``),
#: ``{mont_mul}`` the Montgomery product of the target, ``{mul_hi}`` any definition the high
#: word ``{hi}(a, b)`` needs.
HELPERS = """
/* ---- {w} helpers: {word} words, R = 2^{bits}, moduli q < 2^{limit} so 4q < R ---- */

/* a + b mod q in [0, q) for a, b in [0, q). */
{inline} {word} add_mod_{w}({word} a, {word} b, {word} q)
{
    {word} s = a + b;                       /* < 2q < R: no wrap */
    return s >= q ? s - q : s;
}

/* a - b mod q in [0, q) for a, b in [0, q). */
{inline} {word} sub_mod_{w}({word} a, {word} b, {word} q)
{
    return a >= b ? a - b : a - b + q;      /* the wrap of a - b is undone by + q */
}

/* -a mod q in [0, q) for a in [0, q) (0 stays 0). */
{inline} {word} neg_mod_{w}({word} a, {word} q)
{
    return a ? q - a : 0;
}

{mul_hi}
{mont_mul}
/*
 * Shoup product w * y mod q, lazily: in [0, 2q) for ANY word y, given w < q and
 * w_shoup = floor(w * R / q) (Harvey 2014, Lemma 2). quot = hi(w_shoup * y) is floor(w*y/q) or
 * one less, so w*y - quot*q, computed mod R, is the true value in [0, 2q) < R.
 */
{inline} {word} mul_shoup_{w}({word} y, {word} w, {word} w_shoup, {word} q)
{
    {word} quot = {hi}(y, w_shoup);
    return ({word})(y * w - quot * q);
}
"""

#: ``hi(a * b)`` for u32 words: one 32 x 32 -> 64-bit product, which compilers vectorize.
MUL_HI_U32 = """\
/* hi(a * b), the high word of the 64-bit product (a vectorizable 32 x 32 -> 64 multiply). */
static inline uint32_t mul_hi_u32(uint32_t a, uint32_t b)
{
    return (uint32_t)(((uint64_t)a * b) >> 32);
}
"""

#: ``hi(a * b)`` for u64 words. With AVX-512 (eight 64-bit lanes): four 32 x 32 -> 64-bit products,
#: which the compiler vectorizes: three times faster NTTs there than one ``unsigned __int128``
#: multiply (mulx), which keeps the loops scalar. With AVX2 (four lanes) the vectorized form is the
#: slower one: the scalar mulx gives 1.3 to 1.5 times faster NTTs on an AMD EPYC
#: (benchmarks/README.md). The preprocessor chooses, so the source is the same on every machine
#: and ``-march=native`` picks the form.
MUL_HI_U64 = """\
/*
 * hi(a * b), the high word of the 128-bit product.
 *
 * With AVX-512, from four 32 x 32 -> 64-bit products (the schoolbook of ren.ring.arith.mul_hi_lo):
 * a = a1 2^32 + a0, b = b1 2^32 + b0, and a b = a1 b1 2^64 + (a0 b1 + a1 b0) 2^32 + a0 b0. Plain
 * 64-bit integer operations, so a compiler vectorizes the loops that use it over 8 lanes.
 * Without it, one 64 x 64 -> 128-bit multiply: scalar, and faster than 4-lane vectors.
 */
static inline uint64_t mul_hi_u64(uint64_t a, uint64_t b)
{
#if defined(__AVX512F__)
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;   /* < 3 * 2^32: no wrap */
    return a1 * b1 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
#else
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
#endif
}
"""


def header(
    title: str,
    ring: RingSpec,
    doc: str,
    module: str = "ren.codegen.templates",
    includes: tuple[str, ...] = C_INCLUDES,
) -> str:
    """The comment block that opens a source, and the ``#include`` lines.

    The block holds the title, the ring, then ``doc``, with lines wrapped at 100; ``module`` is
    the one named as the generator.
    """
    made = f"Generated by {module} for RingSpec(n={ring.n}, moduli=({limbs(ring)}), "
    made += f"dtype={ring.dtype!r})."
    lines = []
    for line in [title, "", made, *doc.strip("\n").splitlines()]:
        lines += _comment_lines(line)
    include_lines = "\n".join(f"#include <{h}>" for h in includes)
    return fill(HEADER, body="\n".join(lines), includes=include_lines)


def family_header(
    title: str, ring: RingSpec, doc: str, module: str = "ren.codegen.templates"
) -> str:
    """``header`` for a kernel that serves every ring of ``ring``'s ``n`` and word size.

    The source names no modulus and no limb count, so the same text (and the same compiled
    library) serves every level and every chain of that shape.
    """
    made = f"Generated by {module} for every ring of n = {ring.n} and {ring.dtype} words (the"
    made += " limbs and moduli are read from the ring table)."
    lines = []
    for line in [title, "", made, *doc.strip("\n").splitlines()]:
        lines += _comment_lines(line)
    include_lines = "\n".join(f"#include <{h}>" for h in C_INCLUDES)
    return fill(HEADER, body="\n".join(lines), includes=include_lines)


@functools.lru_cache(maxsize=1024)
def _comment_lines(line: str) -> list[str]:
    """``line`` wrapped at 100 as lines of a C comment block (kernels share most doc lines)."""
    indent = " " * (len(line) - len(line.lstrip()))
    wrapped = textwrap.wrap(line, 97, subsequent_indent=indent + "  ", break_on_hyphens=False)
    return [f" * {w}" for w in wrapped] or [" *"]


def helpers(dtype: str, inline: str, mont_mul: str, hi: str, mul_hi: str) -> str:
    """``HELPERS`` for ``dtype``, declared with ``inline``.

    ``mont_mul`` is a template of the Montgomery product (with ``{w}``, ``{word}``, ``{bits}``
    and, if it wants, ``{dword}`` or ``{hi}``, the high-word function).
    """
    bits = 32 if dtype == "u32" else 64
    words = {
        "w": dtype,
        "word": WORD[dtype],
        "dword": DWORD[dtype],
        "bits": bits,
        "hi": hi,
        "inline": inline,
    }
    used = set(PLACEHOLDER.findall(mont_mul))
    return fill(
        HELPERS,
        inline=inline,
        mont_mul=fill(mont_mul, **{k: v for k, v in words.items() if k in used}),
        hi=hi,
        mul_hi=mul_hi,
        w=dtype,
        word=WORD[dtype],
        bits=bits,
        limit=bits - 2,
    )


#: The Montgomery product from high words (``{hi}``): plain word operations, so the loops that use
#: it vectorize; an ``unsigned __int128`` product would keep ``u64`` loops scalar.
MONT_MUL_HI = """/*
 * Montgomery product a * b * R^-1 mod q in [0, q), for a * b < q * R (Montgomery 1985), with
 * plain word operations: m = lo(a b) q^-1 mod R makes lo(m q) = lo(a b), so
 * (a b - m q) / R = hi(a b) - hi(m q) lies in (-q, q) because both high words are below q.
 */
{inline} {word} mont_mul_{w}({word} a, {word} b, {word} q, {word} q_inv)
{
    {word} m = a * b * q_inv;               /* wraps mod R, as wanted */
    {word} t_hi = {hi}(a, b), mq_hi = {hi}(m, q);
    return t_hi >= mq_hi ? t_hi - mq_hi : t_hi - mq_hi + q;
}
"""


def c_helpers(dtype: str) -> str:
    """The modular helpers as C (``static inline``), high words from ``mul_hi_{w}``.

    The one text the C renderer and the C templates include.
    """
    mul_hi = MUL_HI_U32 if dtype == "u32" else MUL_HI_U64
    return helpers(dtype, "static inline", MONT_MUL_HI, f"mul_hi_{dtype}", mul_hi)


#: Plain names for one word size's helpers, as the renderers' ``code_for_op`` writes them.
HELPER_NAMES = """#define add_mod add_mod_{w}
#define sub_mod sub_mod_{w}
#define neg_mod neg_mod_{w}
#define mont_mul mont_mul_{w}
"""
