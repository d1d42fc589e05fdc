"""``ren.dist``'s entry points: ``map``, ``imap`` and the ``Pool`` they start.

A ``Pool`` reads the saved plan once on the driver (its checks, its fingerprint, its stored
inputs), reads the keys given to bytes, starts the engine's workers (each loads the plan and the
keys once) and then maps any number of item streams through them.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sized
from pathlib import Path
from types import TracebackType
from typing import Any

from ren.capture.loaded import LoadedPlan
from ren.capture.planfile import BYTES, MAX_FILE_BYTES, PlanFileError, read_bytes
from ren.dist import values
from ren.dist.driver import ItemError, Run, item_check, stream
from ren.dist.worker import Job
from ren.errors import describe

__all__ = ["ENGINES", "Pool", "imap", "map", "stored_root"]

#: The engines ``ren.dist`` runs on.
ENGINES = ("ray", "local")

#: The most bytes an item may hold beyond its plan's input words (its headers and checksums).
ITEM_SLACK = 1 << 20


def _count(name: str, value: object, low: int, none: bool = True) -> None:
    if value is None and none:
        return
    if type(value) is not int or value < low:
        raise ValueError(
            f"{name} must be an int >= {low}{' or None' if none else ''}, got {value!r}"
        )


class Pool:
    """Workers that replay one saved plan on items: ``pool.map(items)``, ``pool.imap(items)``.

    A pool runs one stream at a time: its runs follow each other (a thread of its own each needs
    a pool of its own). ``workers_info`` is what each worker said as it started (its process id,
    device, seconds to load, key fingerprint); ``stats`` what the last run did.

    Args:
        plan: the saved plan: its path (``f.save(path)``), its bytes, or a ``ren.load`` result.
        stored: the evaluation keys by the names the plan was saved with
            (``{"keys": ctx.evaluation_keys()}``, or their ``to_bytes()``).
        engine: ``"ray"`` (across machines) or ``"local"`` (processes of this one).
        workers: how many workers (default: one a CPU of the cluster, or of this machine; one a
            GPU of the cluster for a ``cuda`` plan on Ray).
        setup: a function each worker calls once before it loads anything (to register a device
            of your own); it must be importable by name in the workers.
        address: the Ray cluster to join when Ray is not initialized yet (``"auto"``, or
            ``host:port`` of ``ray start --head``); default ``RAY_ADDRESS``, else a local Ray.
        insecure: accept keys given as bytes for parameters marked ``insecure=True`` (keys given
            as objects carry their own opt-in).
        start_timeout: seconds the workers have to load the plan and the keys.
        ray_options: more of Ray's actor options (``{"num_gpus": 1}`` for a GPU device of your
            own: a ``cuda`` plan asks for one already).

    Raises:
        TypeError, ValueError: a bad argument (named), keys that are not evaluation keys, or keys
            not named as the plan's stored inputs.
        PlanFileError: a plan that is not a plan file Ren writes (its checks, as ``ren.load``'s).
        RenError: Ray missing for ``engine="ray"``, or a worker that cannot start (its reason).
    """

    def __init__(
        self,
        plan: str | os.PathLike[str] | bytes | LoadedPlan,
        *,
        stored: Mapping[str, object] | None = None,
        engine: str = "ray",
        workers: int | None = None,
        setup: Callable[[], object] | None = None,
        address: str | None = None,
        insecure: bool = False,
        start_timeout: float = 600.0,
        ray_options: Mapping[str, Any] | None = None,
    ) -> None:
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
        _count("workers", workers, 1)
        if setup is not None and not callable(setup):
            raise TypeError(f"setup must be a function or None, got {describe(setup)}")
        if not isinstance(insecure, bool):
            raise TypeError(f"insecure must be True or False, got {describe(insecure)}")
        raw, name = _plan_bytes(plan)
        data = read_bytes(raw, name)
        devices = {k["info"]["device"] for k in data["kernels"]}
        if len(devices) != 1:
            raise ValueError(f"the plan {name} runs on {sorted(devices)}; ren.dist runs one device")
        keys, opted_in = values.keys_blobs(stored)
        for key_name, blob in keys.items():
            values.check_insecure(blob, key_name, insecure or opted_in)
        roots = {stored_root(n) for n in data["manifest"]["stored"]}
        if missing := sorted(roots - set(keys)):
            raise ValueError(
                f"the plan {name} reads the stored inputs {missing}; give them as stored={{...}} "
                f"under those names (got {sorted(keys)})"
            )
        self.plan_name = name
        self.fingerprint = data["fingerprint"]
        words = sum(int(entry["spec"][2]) for entry in data["manifest"]["inputs"])
        self.item_limit = 8 * words + ITEM_SLACK * max(1, len(data["manifest"]["inputs"]))
        job = Job(raw, self.fingerprint, keys, insecure or opted_in, devices.pop(), setup)
        started = time.perf_counter()
        if engine == "ray":
            from ren.dist.on_ray import RayEngine

            self.engine: Any = RayEngine(job, workers, address, dict(ray_options or {}))
        else:
            from ren.dist.local import LocalEngine

            self.engine = LocalEngine(job, workers)
        try:
            self.workers_info = self.engine.start(start_timeout)
        except BaseException:
            self.engine.close()
            raise
        self.start_seconds = time.perf_counter() - started
        failed = [w["error"] for w in self.workers_info if w.get("error")]
        if failed:
            self.engine.close()
            from ren.errors import RenError

            raise RenError(f"a ren.dist worker could not start: {failed[0]}")
        self.last: Run | None = None

    @property
    def workers(self) -> int:
        """How many workers run items."""
        return int(self.engine.workers)

    def imap(
        self,
        items: Iterable[Any],
        *,
        batch_size: int | None = None,
        audit: int = 0,
        progress: bool = True,
    ) -> Iterator[bytes | tuple[bytes, ...] | ItemError]:
        """Each item's result, in order, as it comes: bytes, or an ``ItemError`` in its place.

        Items are taken from ``items`` only as workers are free, so an iterator of any length
        streams through in bounded memory. ``audit=k`` replays ``k`` random items also on the
        ``python`` device (the first ``k`` when ``items`` has no length); an item
        whose two results differ is an ``ItemError`` of kind ``"audit"`` naming the first
        differing word.

        Raises:
            ValueError: a bad ``batch_size`` or ``audit``.
            RenError: a worker that could not start, or workers dying before any batch is done.
        """
        _count("batch_size", batch_size, 1)
        _count("audit", audit, 0, none=False)
        if not isinstance(progress, bool):
            raise TypeError(f"progress must be True or False, got {describe(progress)}")
        total = len(items) if isinstance(items, Sized) else None
        if batch_size is None:
            spread = 4 * self.workers
            batch_size = 4 if total is None else max(1, min(8, math.ceil(total / spread)))
        run = Run(batch_size, audit, progress, item_check(self.item_limit), total)
        self.last = run
        return stream(self.engine, items, run)

    def map(
        self,
        items: Iterable[Any],
        *,
        batch_size: int | None = None,
        audit: int = 0,
        progress: bool = True,
    ) -> list[bytes | tuple[bytes, ...] | ItemError]:
        """``list(pool.imap(items, ...))``: every item's result (or ``ItemError``), in order."""
        return list(self.imap(items, batch_size=batch_size, audit=audit, progress=progress))

    @property
    def stats(self) -> dict[str, Any]:
        """What the pool and its last run did: start-up, items, errors, retries, deaths, puts."""
        run = self.last
        out: dict[str, Any] = {
            "engine": self.engine.name,
            "workers": self.workers,
            "start_seconds": self.start_seconds,
            "deaths": self.engine.deaths,
            "puts": list(getattr(self.engine, "puts", [])),
        }
        if run is not None:
            out.update(
                items=run.items,
                errors=run.errors,
                retried=run.retried,
                audited=run.audited,
                seconds=run.seconds,
                items_per_s=run.items / run.seconds if run.seconds else None,
            )
        return out

    def close(self) -> None:
        """Stop the workers."""
        self.engine.close()

    def __enter__(self) -> Pool:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def map(  # ren.dist.map, as Ray's and multiprocessing's
    plan: str | os.PathLike[str] | bytes | LoadedPlan,
    items: Iterable[Any],
    *,
    stored: Mapping[str, object] | None = None,
    engine: str = "ray",
    workers: int | None = None,
    batch_size: int | None = None,
    audit: int = 0,
    progress: bool = True,
    **pool: Any,
) -> list[bytes | tuple[bytes, ...] | ItemError]:
    """Replay the saved ``plan`` on every item, on ``workers`` workers: the results, in order.

    Each item is a value's bytes (``ct.to_bytes()``), or a tuple of them for a plan of several
    inputs; each result is the bytes of the plan's result (a tuple of them for a tuple result),
    or an ``ItemError`` naming the item's index and why it failed (corrupt bytes, another key
    fingerprint, another level, a worker that died on it twice, an audit mismatch): the batch goes
    on. ``pool`` takes ``Pool``'s other arguments (``setup``, ``address``, ``insecure``).

    Raises:
        TypeError, ValueError, PlanFileError, RenError: as ``Pool`` and ``Pool.imap``.
    """
    with Pool(plan, stored=stored, engine=engine, workers=workers, **pool) as p:
        return p.map(items, batch_size=batch_size, audit=audit, progress=progress)


def imap(
    plan: str | os.PathLike[str] | bytes | LoadedPlan,
    items: Iterable[Any],
    *,
    stored: Mapping[str, object] | None = None,
    engine: str = "ray",
    workers: int | None = None,
    batch_size: int | None = None,
    audit: int = 0,
    progress: bool = True,
    **pool: Any,
) -> Iterator[bytes | tuple[bytes, ...] | ItemError]:
    """``map`` as a stream: each result as soon as it and those before it are done.

    The workers start before this returns (a bad plan, keys or argument raises here), and stop
    when the stream ends or is closed (``close()``, or the stream going away).
    """
    started = Pool(plan, stored=stored, engine=engine, workers=workers, **pool)
    try:
        results = started.imap(items, batch_size=batch_size, audit=audit, progress=progress)
    except BaseException:
        started.close()
        raise
    return _Stream(started, results)


class _Stream(Iterator[Any]):
    """``imap``'s results, closing its pool when they end, are closed, or go away."""

    def __init__(self, pool: Pool, results: Iterator[Any]) -> None:
        self._pool, self._results = pool, results

    def __next__(self) -> Any:
        try:
            return next(self._results)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Stop the stream and its workers."""
        getattr(self._results, "close", lambda: None)()
        self._pool.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at interpreter exit, Ray may be gone first
            self.close()


def _plan_bytes(plan: object) -> tuple[bytes, str]:
    if isinstance(plan, LoadedPlan):
        if plan.path == BYTES or plan.moved_from is not None:
            raise TypeError(
                "plan is a ren.load result read from bytes or moved to another device; give "
                "the saved plan's path or bytes (the workers load it on its own device)"
            )
        plan = plan.path
    if isinstance(plan, bytes | bytearray | memoryview):
        return bytes(plan), "(the plan bytes)"
    if not isinstance(plan, str | os.PathLike):
        raise TypeError(
            "plan must be a saved plan's path, its bytes or a ren.load result, got "
            f"{describe(plan)}"
        )
    path = Path(plan)
    if path.stat().st_size > MAX_FILE_BYTES:
        raise PlanFileError(f"{path} holds more than {MAX_FILE_BYTES} bytes: not a Ren plan file")
    return path.read_bytes(), str(path)


def stored_root(name: str) -> str:
    """The name given in ``stored=`` of a stored input (``keys`` of ``keys.relin[0].b``)."""
    return name.split(".", 1)[0].split("[", 1)[0]
