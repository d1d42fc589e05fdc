"""What an example of ``python -m ren.viz --example`` returns, and how it names its realizations."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ren.ir.node import Node

__all__ = ["Outcome"]


@dataclasses.dataclass
class Outcome:
    """What an example did.

    Attributes:
        summary: a few lines for the report: the program, its result against the oracle.
        labels: a name for realization ``i`` of the example (counted from the example's first).
        focus: the realizations the report opens (the others are collapsed).
        ok: whether the result matched its oracle.
    """

    summary: str
    labels: dict[int, str] = dataclasses.field(default_factory=dict)
    focus: tuple[int, ...] = ()
    ok: bool = True

    def __str__(self) -> str:
        return self.summary

    def shifted(self, base: int) -> Outcome:
        """The same outcome with realization indices counted from ``base``."""
        return dataclasses.replace(
            self,
            labels={i + base: s for i, s in self.labels.items()},
            focus=tuple(i + base for i in self.focus),
        )


class Phases:
    """An observer that names each realization after the phase of the program it ran in.

    ``with phases("encrypt x"):`` labels every realization started in the block; with ``names``
    the first ones get those names instead, and ``focus=True`` marks them for the report.
    """

    def __init__(self) -> None:
        self.count = 0
        self.labels: dict[int, str] = {}
        self.focus: list[int] = []
        self._phase: tuple[str, tuple[str, ...], bool] | None = None
        self._seen = 0

    def on_input(self, sink: Node) -> None:
        del sink
        if self._phase is not None:
            phase, names, focus = self._phase
            k = self._seen
            self.labels[self.count] = names[k] if k < len(names) else _nth(phase, k, names)
            if focus:
                self.focus.append(self.count)
            self._seen += 1
        self.count += 1

    @contextlib.contextmanager
    def __call__(
        self, phase: str, names: tuple[str, ...] = (), focus: bool = False
    ) -> Iterator[None]:
        saved = (self._phase, self._seen)
        self._phase, self._seen = (phase, names, focus), 0
        try:
            yield
        finally:
            self._phase, self._seen = saved

    def outcome(self, summary: str, ok: bool) -> Outcome:
        return Outcome(summary, dict(self.labels), tuple(self.focus), ok)


def _nth(phase: str, k: int, names: tuple[str, ...]) -> str:
    return phase if k == 0 and not names else f"{phase} ({k + 1})"
