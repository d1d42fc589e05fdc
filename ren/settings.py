"""Every environment variable Ren reads, declared once: name, meaning, type, default, values.

Each variable is one ``Setting`` (``settings.DEBUG`` for ``REN_DEBUG``). ``Setting.get()`` reads
the environment at each call (``os.environ[...] = ...`` takes effect at the next use) and caches
the parse by the raw string. A bad value raises ``ValueError`` naming the variable, its value and
what is accepted; empty or unset means the default.

``override(REN_VALIDATE=True, ...)`` is a ``with`` block that sets values for the current thread
(or asyncio task) only, without touching ``os.environ``: a thread started inside the block does not
see it. Blocks nest; the innermost wins.

    with settings.override(REN_VALIDATE=True, REN_DEBUG=2):
        y.realize()

No other module of Ren reads ``os.environ``; ``all_settings()`` lists every declaration (the
environment page of the docs has one row for each).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from types import MappingProxyType
from typing import Generic, TypeVar, cast

__all__ = [
    "CACHE_DIR",
    "CACHE_MAX_MB",
    "CC",
    "CCACHE",
    "CHECK",
    "CUDA_DEVICE",
    "CUDA_EMULATE",
    "DEBUG",
    "DEVICE",
    "DUMP",
    "JIT_GRAPH",
    "NO_PLAN",
    "POISON",
    "SCHEDULE_CACHE",
    "THREADS",
    "VALIDATE",
    "XDG_CACHE_HOME",
    "Setting",
    "all_settings",
    "override",
]

#: A setting's value type: a ``Setting[bool]`` is a ``Setting[object]`` (only read, never written).
T = TypeVar("T", covariant=True)
D = TypeVar("D", int, str, None)  # an int or str setting's default: of its type, or None

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})
_DIGITS = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")

#: the values set by the ``override`` blocks active in this thread or task, by variable name.
_OVERRIDES: ContextVar[Mapping[str, object]] = ContextVar(
    "ren_settings_overrides", default=MappingProxyType({})
)

_DECLARED: dict[str, Setting[object]] = {}


def _environ(name: str) -> str | None:
    """``os.environ.get(name)`` from the table it wraps (a dict of bytes on POSIX): 5x faster."""
    data = getattr(os.environ, "_data", None)
    if os.name != "posix" or type(data) is not dict:
        return os.environ.get(name)
    return None if (raw := data.get(name.encode())) is None else os.fsdecode(raw)


class Setting(Generic[T]):
    """One environment variable: its name, meaning, type, default and accepted values.

    Attributes:
        name: the variable, e.g. ``"REN_DEBUG"``.
        help: what it does, in a sentence (the docs table says the same).
        type: the Python type ``get()`` returns, as a word (``bool``, ``int``, ``str``, ...).
        default: the value when the variable is unset or empty.
        accepted: the accepted values, in words (error messages and the docs quote it).
    """

    def __init__(
        self,
        name: str,
        help: str,
        type: str,
        default: T,
        accepted: str,
        parse: Callable[[str], T],
        check: Callable[[object], T],
    ) -> None:
        self.name, self.help, self.type = name, help, type
        self.default, self.accepted = default, accepted
        self._parse, self._check = parse, check
        self._parsed: dict[str, T] = {}  # raw string -> value (only good values are kept)
        _DECLARED[name] = self

    def __repr__(self) -> str:
        return f"<Setting {self.name} ({self.type}, default {self.default!r})>"

    def get(self) -> T:
        """The value: an ``override`` block's, else the parsed environment variable, else default.

        Raises:
            ValueError: the variable holds a value that is not accepted (named, with ``accepted``).
        """
        overrides = _OVERRIDES.get()
        if overrides and self.name in overrides:
            return cast(T, overrides[self.name])  # coerce() made it of this setting's type
        raw = _environ(self.name)
        if raw is None:
            return self.default
        value = self._parsed.get(raw, _MISSING)
        if value is _MISSING:
            value = self.parse(raw)
            if len(self._parsed) > 64:  # a program that keeps changing the variable
                self._parsed.clear()
            self._parsed[raw] = value
        return cast(T, value)  # the cached or the new parse, never _MISSING

    def parse(self, raw: str) -> T:
        """The value the environment string ``raw`` means (empty or blank: the default).

        Raises:
            ValueError: ``raw`` is not accepted; the message names the variable and the value.
        """
        if not raw.strip():
            return self.default
        try:
            return self._parse(raw)
        except ValueError:
            pass
        default = "" if self.default is None else f" ({_show(self.default)})"
        raise ValueError(
            f"{self.name}={raw!r} is not accepted: {self.name} takes {self.accepted}; "
            f"leave it unset or empty for the default{default}"
        )

    def coerce(self, value: object) -> T:
        """The value ``override`` stores for ``value``: a string is parsed, ``None`` is the default.

        Raises:
            TypeError: ``value`` is of another type than the setting's (or a string).
            ValueError: ``value`` is of the right type but not accepted.
        """
        if value is None:
            return self.default
        if isinstance(value, str):
            return self.parse(value)
        return self._check(value)

    def _refuse(self, value: object) -> ValueError:
        name = self.name
        return ValueError(f"{name}={value!r} is not accepted: {name} takes {self.accepted}")


_MISSING = object()  # not in the parse cache


def _show(value: object) -> str:
    """``value`` as it would be spelled in the environment."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


# -- parsers: each raises ValueError for a value it does not accept -----------------------------


def _parse_bool(raw: str) -> bool:
    word = raw.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ValueError(raw)


def _parse_int(low: int, high: int | None) -> Callable[[str], int]:
    def parse(raw: str) -> int:
        word = raw.strip()
        if not _DIGITS.fullmatch(word):
            raise ValueError(raw)
        value = int(word)
        if value < low or (high is not None and value > high):
            raise ValueError(raw)
        return value

    return parse


def _parse_positive(raw: str) -> float:
    word = raw.strip()
    if not _DECIMAL.fullmatch(word):  # float() would also take "inf", "nan" and "1_0"
        raise ValueError(raw)
    value = float(word)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(raw)
    return value


# -- checks of override values of another type than str -----------------------------------------


def _wrong_type(name: str, value: object, want: str) -> TypeError:
    return TypeError(
        f"{name} must be {want} (or a string as in the environment), got {type(value).__name__}"
    )


def _check_bool(name: str) -> Callable[[object], bool]:
    def check(value: object) -> bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, int):
            raise _DECLARED[name]._refuse(value)
        raise _wrong_type(name, value, "a bool")

    return check


def _check_int(name: str, low: int, high: int | None) -> Callable[[object], int]:
    def check(value: object) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _wrong_type(name, value, "an int")
        if value < low or (high is not None and value > high):
            raise _DECLARED[name]._refuse(value)
        return value

    return check


def _check_positive(name: str) -> Callable[[object], float]:
    def check(value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _wrong_type(name, value, "a number")
        if not math.isfinite(value) or value <= 0:
            raise _DECLARED[name]._refuse(value)
        return float(value)

    return check


def _check_path(name: str) -> Callable[[object], Path]:
    def check(value: object) -> Path:
        if isinstance(value, os.PathLike):
            return Path(value)
        raise _wrong_type(name, value, "a path")

    return check


def _check_str(name: str) -> Callable[[object], str]:
    def check(value: object) -> str:
        raise _wrong_type(name, value, "a string")

    return check


# -- the declarations ---------------------------------------------------------------------------

_BOOL = "a boolean: 1, true, yes, on or 0, false, no, off (any case)"


def _bool(name: str, default: bool, help: str) -> Setting[bool]:
    return Setting(name, help, "bool", default, _BOOL, _parse_bool, _check_bool(name))


def _int(
    name: str, default: D, low: int, high: int | None, accepted: str, help: str
) -> Setting[int | D]:
    return Setting(
        name, help, "int", default, accepted, _parse_int(low, high), _check_int(name, low, high)
    )


def _path(name: str, help: str) -> Setting[Path | None]:
    return Setting(name, help, "path", None, "a path", Path, _check_path(name))


def _str(name: str, default: D, accepted: str, help: str) -> Setting[str | D]:
    return Setting(name, help, "str", default, accepted, str.strip, _check_str(name))


DEVICE: Setting[str] = _str(
    "REN_DEVICE",
    "python",
    "a device name (python, cpu, cuda or a registered one; checked when a Poly is made)",
    "The default device of a Poly made without device=.",
)
DEBUG: Setting[int] = _int(
    "REN_DEBUG", 0, 0, 4, "an integer from 0 to 4",
    "How much Ren prints on stderr (the REN_DEBUG ladder).",
)  # fmt: skip
CHECK: Setting[bool] = _bool("REN_CHECK", False, "Verify the graph, and again after each pass.")
DUMP: Setting[Path | None] = _path(
    "REN_DUMP", "A directory that receives the graph after every pass as Graphviz files."
)
NO_PLAN: Setting[bool] = _bool("REN_NO_PLAN", False, "No arena: each temporary its own buffer.")
VALIDATE: Setting[bool] = _bool(
    "REN_VALIDATE", False, "Run every exec unit of a compiled device again on NumPy and compare."
)
POISON: Setting[bool] = _bool("REN_POISON", False, "Fill arena views with 0xFF after last use.")
JIT_GRAPH: Setting[bool] = _bool(
    "REN_JIT_GRAPH", True, "Give a jit plan a graph runner (off: it replays unit by unit)."
)
CCACHE: Setting[bool] = _bool(
    "REN_CCACHE", True, "Keep compiled kernels on disk between runs (off: a scratch directory)."
)
CACHE_DIR: Setting[Path | None] = _path(
    "REN_CACHE_DIR", "Where compiled kernels are kept (unset: $XDG_CACHE_HOME/ren or ~/.cache/ren)."
)
CACHE_MAX_MB: Setting[float] = Setting(
    "REN_CACHE_MAX_MB",
    "The size bound of the compile cache on disk, in MB of 2^20 bytes (least recently used go).",
    "float",
    1024.0,
    "a positive number of MB (1 MB = 2^20 bytes)",
    _parse_positive,
    _check_positive("REN_CACHE_MAX_MB"),
)
SCHEDULE_CACHE: Setting[int] = _int(
    "REN_SCHEDULE_CACHE", 256, 0, None,
    "a non-negative integer: how many schedules to keep (0 turns the cache off)",
    "The schedule cache: how many scheduled graphs a process keeps (0: schedule every time).",
)  # fmt: skip
PROGRESS: Setting[bool] = _bool("REN_PROGRESS", True, "Say on stderr what a long build compiles.")
TIERED: Setting[bool] = _bool("REN_TIERED", True, "Run unbuilt cpu kernels while they build.")
COMPILE_JOBS: Setting[int | None] = _int(
    "REN_COMPILE_JOBS", None, 1, None, "a positive integer",
    "Compiler processes that build kernels at once (unset: the cores).",
)  # fmt: skip
THREADS: Setting[int | None] = _int(
    "REN_THREADS", None, 1, None, "a positive integer (the number of threads)",
    "The cpu backend's most threads, never past the free cores (unset: every free core; 1: no "
    "OpenMP).",
)  # fmt: skip
CUDA_EMULATE: Setting[bool] = _bool(
    "REN_CUDA_EMULATE", False, "Run the rendered CUDA C on the host emulator (no GPU)."
)
CUDA_DEVICE: Setting[int] = _int(
    "REN_CUDA_DEVICE", 0, 0, None, "a GPU index: an integer >= 0",
    "The index of the GPU the cuda device uses.",
)  # fmt: skip
HEIR_OPT: Setting[Path | None] = _path("REN_HEIR_OPT", "The heir-opt ren.interop.heir runs.")
CC: Setting[str | None] = _str(
    "CC", None, "a C compiler's name or path", "The C compiler (unset: cc, gcc, clang on PATH)."
)
XDG_CACHE_HOME: Setting[Path | None] = _path("XDG_CACHE_HOME", "The user's cache directory.")


def all_settings() -> tuple[Setting[object], ...]:
    """Every declared setting, in declaration order."""
    return tuple(_DECLARED.values())


def _lookup(key: str) -> Setting[object]:
    setting = _DECLARED.get(key) or _DECLARED.get(f"REN_{key}")
    if setting is None:
        raise TypeError(
            f"override() got an unknown setting {key!r}; the settings are {', '.join(_DECLARED)}"
        )
    return setting


@contextlib.contextmanager
def override(**values: object) -> Iterator[None]:
    """Set settings for the current thread or task inside a ``with`` block.

    Keywords are variable names (``REN_VALIDATE=True``; ``VALIDATE=True`` also works). A value is
    of the setting's type (``bool``, ``int``, a path, ...), a string spelled as in the
    environment, or ``None`` for the default. ``os.environ`` is not touched; other threads and a
    thread started inside the block do not see the values. Blocks nest, the innermost wins. Also a
    decorator: ``@settings.override(DEBUG=2)`` runs each call of the function inside the block.

    Raises:
        TypeError: an unknown setting name, or a value of the wrong type.
        ValueError: a value the setting does not accept (nothing is changed).
    """
    changes: dict[str, object] = {}
    for key, value in values.items():
        setting = _lookup(key)
        changes[setting.name] = setting.coerce(value)
    token = _OVERRIDES.set(MappingProxyType({**_OVERRIDES.get(), **changes}))
    try:
        yield
    finally:
        _OVERRIDES.reset(token)
