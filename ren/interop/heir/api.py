"""``heir.compile`` and ``heir.load``: from an MLIR source or a lowered module to a ``Program``.

``compile`` runs HEIR's pipeline (heir-opt from the ``heir-py`` package) on a function with
``{secret.secret}`` arguments; ``load`` takes a module HEIR already lowered, in either of MLIR's
syntaxes (the custom one is converted to the generic one by heir-opt, which the reader reads). A
source is text or a path; a path is read only up to the reader's size limit.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ren.interop.heir.ir import LIMITS, MlirError, Module
from ren.interop.heir.locations import source_locations
from ren.interop.heir.program import Program
from ren.interop.heir.reader import parse
from ren.interop.heir.tools import run_heir_opt

__all__ = ["SCHEMES", "compile", "load", "lower", "text_of"]

#: The schemes ``compile`` lowers to, and the heir-opt flags of each.
SCHEMES: dict[str, tuple[str, ...]] = {
    "ckks": ("--mlir-to-ckks",),
    "bgv": ("--annotate-module=backend=lattigo scheme=bgv", "--mlir-to-bgv"),
    "bfv": ("--annotate-module=backend=lattigo scheme=bfv", "--mlir-to-bfv"),
}


def _is_text(source: object) -> bool:
    """Whether ``source`` is MLIR text rather than a path: a ``str`` with a newline or a ``{``."""
    return isinstance(source, str) and ("\n" in source or "{" in source)


def _name(source: object) -> str | None:
    """The file name heir-opt's locations give ``source`` (``None``: text, read as ``<stdin>``)."""
    if _is_text(source):
        return None
    if isinstance(source, str | os.PathLike):
        name = Path(source).name
        return name if name and not name.startswith(".") else None
    return None


def text_of(source: str | os.PathLike[str]) -> str:
    """``source`` as MLIR text: a path's contents (bounded), or the text itself.

    A ``str`` holding a newline or a ``{`` is taken as text; any other ``str`` or path as a file.

    Raises:
        TypeError: neither text nor a path.
        FileNotFoundError: a path that does not name a file.
        MlirError: a file past the reader's size limit.
    """
    if _is_text(source):
        return str(source)
    if not isinstance(source, str | os.PathLike):
        raise TypeError(f"source must be MLIR text or a path, got {type(source).__name__}")
    path = Path(source)
    if not path.is_file():
        raise FileNotFoundError(f"no MLIR file at {str(path)!r}")
    with path.open("rb") as f:
        data = f.read(LIMITS["chars"] + 1)
    if len(data) > LIMITS["chars"]:
        raise MlirError(f"{path} is past the reader's limit of {LIMITS['chars']} characters")
    return data.decode("utf-8", errors="strict")


def _options(scheme: str, options: Any) -> list[str]:
    """heir-opt's flags for ``scheme``, with ``options`` given to its ``--mlir-to-*`` pipeline."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {sorted(SCHEMES)}, got {scheme!r}")
    flags = list(SCHEMES[scheme])
    if options is None:
        return flags
    if isinstance(options, dict):
        parts = [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in options.items()]
    elif isinstance(options, list | tuple) and all(isinstance(o, str) for o in options):
        parts = list(options)
    else:
        raise TypeError(
            "options must be a dict of the pipeline's options ({'plaintext-modulus': 65537}) "
            f"or a list of 'key=value' strings, got {type(options).__name__}"
        )
    if any(" " in p for p in parts):
        raise ValueError(f"a pipeline option holds a space: {parts}")
    if parts:
        flags[-1] = f"{flags[-1]}={' '.join(parts)}"
    return flags


def lower(source: str | os.PathLike[str], scheme: str = "ckks", options: Any = None) -> str:
    """HEIR's pipeline on ``source``: the lowered module's text (generic form, with locations).

    Raises:
        ValueError: an unknown scheme.
        HeirMissing: no heir-opt (``pip install -e .[heir]``).
        MlirError: heir-opt refused the source (its message).
    """
    return run_heir_opt(text_of(source), *_options(scheme, options), name=_name(source))


def compile(
    source: str | os.PathLike[str],
    scheme: str = "ckks",
    options: Any = None,
    **program: Any,
) -> Program:
    """An MLIR function lowered by HEIR's pipeline to ``scheme``, as a ``Program`` on Ren.

    Args:
        source: MLIR text or a path: a ``func.func`` whose secret arguments carry
            ``{secret.secret}``.
        scheme: ``"ckks"``, ``"bgv"`` or ``"bfv"`` (BGV and BFV lowered for a backend that
            switches moduli explicitly, so each switch is an op Ren shows).
        options: the pipeline's options, e.g. ``{"plaintext-modulus": 786433}`` or
            ``{"ciphertext-degree": 1024}`` (``heir-opt --help`` lists them).
        program: ``Program``'s keywords (``seed``, ``device``, ``insecure``, ``arg_names``).
    """
    text = text_of(source)
    module = parse(lower(text if _name(source) is None else source, scheme, options))
    made = Program(module, **program)
    made.locations = _locations(text, _name(source), scheme, options, module, made.entry)
    if "arg_names" not in program:  # the source's own names, where its signature gives them
        names = source_names(text, made.entry)
        if names is not None and len(names) == made.arity:
            made.arg_names = names
    return made


def _locations(
    text: str, name: str | None, scheme: str, options: Any, module: Module, entry: str
) -> dict[int, str]:
    """Each scheme op's source location, from the secret-arithmetic stage (``{}``: not found)."""
    flags = _options(scheme, options)
    flags[-1] = flags[-1].replace(f"--mlir-to-{scheme}", "--mlir-to-secret-arithmetic", 1)
    try:
        secret = parse(run_heir_opt(text, *flags, name=name))
    except MlirError:  # a stage that refuses what the whole pipeline took: no locations
        return {}
    return source_locations(module, entry, secret)


def source_names(text: str, function: str) -> list[str] | None:
    """The argument names of ``func.func @function`` in MLIR source ``text`` (``None``: not found).

    Read from the signature's ``%name:`` entries, for ``encrypt_<name>`` to use the source's names.
    """
    found = re.search(rf"func\.func\s+@{re.escape(function)}\s*\(", text)
    if found is None:
        return None
    depth, end = 1, found.end()
    while end < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        end += 1
    names = re.findall(r"%([A-Za-z_][\w$.]*)\s*:", text[found.end() : end - 1])
    return [n for n in names if n.isidentifier()] or None


def load(lowered: str | os.PathLike[str] | Module, **program: Any) -> Program:
    """A module HEIR already lowered (text, a path, or a parsed ``Module``), as a ``Program``.

    Text in MLIR's custom syntax is converted to the generic form by heir-opt first (so it needs
    the ``heir`` extra); the generic form is read without it.

    Args:
        lowered: the module.
        program: ``Program``'s keywords (``seed``, ``device``, ``insecure``, ``arg_names``).
    """
    if isinstance(lowered, Module):
        return Program(lowered, **program)
    text = text_of(lowered)
    if not _generic(text):
        text = run_heir_opt(text, name=_name(lowered))
    return Program(parse(text), **program)


def _generic(text: str) -> bool:
    """Whether ``text`` is in the generic form: its first op is a quoted ``"builtin.module"``."""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("//", "#", "!")):
            continue
        return stripped.startswith('"builtin.module"')
    return False
