"""The driver's loop: items in batches to an engine's workers, results back in order, streaming.

``stream`` takes items from an iterable only as the window allows (at most ``2 * workers`` batches
out, and no more items held than those batches and the results waiting for an earlier one), so
its memory does not grow with the number of items. A batch whose worker dies is retried once, one
item at a time on the engine's retry worker; an item whose retry dies too is reported as an
``ItemError`` of kind ``"worker"``. A worker that cannot start stops the run with its reason.
"""

from __future__ import annotations

import collections
import dataclasses
import random
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

from ren.errors import RenError, describe
from ren.progress import Progress

__all__ = ["Engine", "ItemError", "Run", "stream"]


class ItemError(RenError):
    """An item that did not go through, in its place among the results.

    Attributes:
        index: the item's position among the items.
        kind: what failed: ``"input"`` (its bytes were refused: corrupt, another key fingerprint,
            other parameters), ``"value"`` (the plan refused the value: another level, scale or
            spec), ``"run"`` (the replay raised), ``"worker"`` (its worker died on it twice) or
            ``"audit"`` (it differs from the reference replay on the ``python`` device).
        reason: why, as the reader, the plan or the audit said it.
    """

    def __init__(self, index: int, kind: str, reason: str) -> None:
        super().__init__(f"item {index} ({kind}): {reason}")
        self.index, self.kind, self.reason = index, kind, reason

    def __reduce__(self) -> tuple[type[ItemError], tuple[int, str, str]]:
        return ItemError, (self.index, self.kind, self.reason)

    def __repr__(self) -> str:
        return f"ItemError(index={self.index}, kind={self.kind!r}, reason={self.reason!r})"


class Engine(Protocol):
    """What the driver asks of an engine (``LocalEngine``, ``RayEngine``)."""

    workers: int
    deaths: int

    def submit(self, batch: list[tuple[int, Any, bool]], retry: bool = False) -> Any:
        """A handle of the batch sent; ``None`` when a retried item must wait for a worker."""

    def wait(self, handles: list[Any], timeout: float) -> list[tuple[Any, str, Any]]:
        """The handles done within ``timeout``, each ``"ok"`` with the reply or ``"died"``."""


@dataclasses.dataclass
class Run:
    """One stream's options and, as it goes, its counts (``Pool.stats`` shows the last)."""

    batch_size: int
    audit: int
    progress: bool
    check: Callable[[Any], str | None]
    total: int | None = None
    items: int = 0
    errors: int = 0
    retried: int = 0
    audited: int = 0
    seconds: float = 0.0

    def audited_indices(self) -> set[int]:
        """``audit`` random indices among the items (the first ``audit`` of an iterator)."""
        if self.total is None:
            return set(range(self.audit))
        return set(random.sample(range(self.total), min(self.audit, self.total)))


@dataclasses.dataclass
class _Batch:
    indices: list[int]
    items: list[Any]
    audits: list[bool]
    attempt: int = 1

    def message(self) -> list[tuple[int, Any, bool]]:
        return list(zip(self.indices, self.items, self.audits, strict=True))


def stream(engine: Engine, items: Iterable[Any], run: Run) -> Iterator[bytes | Any]:
    """Each item's result bytes (or its ``ItemError``), in the items' order.

    Raises:
        RenError: a worker that could not start (its reason), or workers that die before any
            batch completes.
    """
    source = enumerate(items)
    audits = run.audited_indices()
    out: dict[int, Any] = {}
    flying: dict[Any, _Batch] = {}
    retries: collections.deque[_Batch] = collections.deque()
    retry_flying = 0
    taken = given = completed = 0
    exhausted = False
    window = 2 * engine.workers
    bar = Progress("ren.dist", run.total, show=run.progress or False)
    start = last_said = time.perf_counter()
    while True:
        while (
            not exhausted
            and len(flying) - retry_flying < window
            and taken - given < 4 * window * run.batch_size  # results waiting on an earlier one
        ):
            batch = _Batch([], [], [])
            for index, item in source:
                wrong = run.check(item)
                if wrong is not None:
                    out[index] = ItemError(index, "input", wrong)
                else:
                    batch.indices.append(index)
                    batch.items.append(item)
                    batch.audits.append(index in audits)
                taken = index + 1
                if len(batch.indices) == run.batch_size:
                    break
            else:
                exhausted = True
            if batch.indices:
                flying[engine.submit(batch.message())] = batch
        if retries and not retry_flying:
            handle = engine.submit(retries[0].message(), retry=True)
            if handle is not None:  # else the engine keeps a worker free for it first
                flying[handle] = retries.popleft()
                retry_flying = 1
        while given in out:
            result = out.pop(given)
            run.errors += isinstance(result, ItemError)
            given += 1
            run.items = given
            yield result
        if exhausted and not flying and not retries and given == taken:
            break
        for handle, status, reply in engine.wait(list(flying), timeout=1.0) if flying else ():
            batch = flying.pop(handle)
            retry_flying -= batch.attempt > 1
            if status == "ok" and reply[0] == "setup":
                raise RenError(f"a ren.dist worker could not start: {reply[1]}")
            if status == "ok":
                completed += 1
                for index, result, kind, reason in reply[1]:
                    out[index] = result if kind is None else ItemError(index, kind, reason)
                    run.audited += kind in (None, "audit") and index in audits
            elif batch.attempt == 1:
                run.retried += len(batch.indices)
                retries.extend(
                    _Batch([i], [x], [a], attempt=2)
                    for i, x, a in zip(batch.indices, batch.items, batch.audits, strict=True)
                )
            else:
                (index,) = batch.indices
                out[index] = ItemError(
                    index, "worker", f"{reply} running it, and again when retried"
                )
            if not completed and engine.deaths > engine.workers + 2:
                raise RenError(
                    f"{engine.deaths} ren.dist workers died before any batch completed: the plan "
                    "or its kernels crash the workers (run one item with ren.load to see why)"
                )
        now = time.perf_counter()
        rate = given / max(now - start, 1e-9)
        bar.step(given, f"{rate:.1f} items/s, {run.errors} errors")
        if not bar.tty and now - last_said > 30:
            bar.say(f"{given} items, {rate:.1f} items/s, {run.errors} errors")
            last_said = now
    run.seconds = time.perf_counter() - start
    rate = given / max(run.seconds, 1e-9)
    bar.finish(f"{given} items, {rate:.1f} items/s, {run.errors} errors")


def item_check(limit: int) -> Callable[[Any], str | None]:
    """The check of an item before it is sent: what is wrong with it, or ``None``.

    Not bytes, or past ``limit`` bytes; the workers' readers check the rest.
    """

    def check(item: Any) -> str | None:
        blobs = item if isinstance(item, tuple | list) else (item,)
        for blob in blobs:
            if not isinstance(blob, bytes | bytearray):
                return (
                    f"is {describe(blob)}; an item is a value's bytes (ct.to_bytes()) or a tuple "
                    "of them"
                )
        size = sum(len(b) for b in blobs)
        if size > limit:
            return f"holds {size} bytes; this plan's inputs take at most {limit}"
        return None

    return check
