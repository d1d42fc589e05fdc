"""The ``local`` engine: ``concurrent.futures`` processes of this machine, Ray's protocol.

Each process is started (``spawn``: a fresh interpreter, nothing inherited but the job) with the
job once (``initializer``): it reads the plan and the keys from files the engine writes once for
all its processes (a temporary folder, removed at ``close``), loads them once, as a Ray actor
does, and then runs batches. A process that dies breaks a ``ProcessPoolExecutor`` as a whole, so
every batch in flight at that moment is told it died, and a fresh pool takes over. Retried items
run in a pool of one process of their own, one item at a time, so a death there is that item's
alone.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import queue
import shutil
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from ren.dist.worker import Job, Worker
from ren.errors import RenError

__all__ = ["LocalEngine"]

_worker: Worker | None = None


def _init(job: Job, started: Any) -> None:
    """A process's start: the job's plan and keys read from the files its paths name."""
    global _worker
    keys = {name: Path(path).read_bytes() for name, path in job.keys.items()}
    _worker = Worker(dataclasses.replace(job, plan=Path(job.plan).read_bytes(), keys=keys))
    started.put(dict(_worker.info, error=_worker.error))


def _run(batch: list[tuple[int, Any, bool]]) -> tuple[str, Any]:
    assert _worker is not None, "the process was started without its job"
    return _worker.run(batch)


class LocalEngine:
    """``workers`` processes of this machine (default: one a core), each a ``Worker``."""

    name = "local"

    def __init__(self, job: Job, workers: int | None) -> None:
        self.workers = workers or os.cpu_count() or 1
        # The plan and the keys go to the processes as files, once for all of them: a process
        # reads them as it starts. (As arguments they would be written down each process's start
        # pipe, which blocks for good when a process dies before reading it all.)
        self._folder = Path(tempfile.mkdtemp(prefix="ren-dist-"))
        (self._folder / "plan.renplan").write_bytes(bytes(job.plan))
        keys = {}
        for i, (name, blob) in enumerate(job.keys.items()):
            keys[name] = str(self._folder / f"keys-{i}.bin")
            Path(keys[name]).write_bytes(bytes(blob))
        self.job = dataclasses.replace(job, plan=str(self._folder / "plan.renplan"), keys=keys)
        self._context = multiprocessing.get_context("spawn")
        self._pools: dict[str, ProcessPoolExecutor] = {}
        self._owner: dict[Future[Any], tuple[str, ProcessPoolExecutor]] = {}
        self._started = self._context.Queue()
        self.deaths = 0
        self._pool("main")

    def _pool(self, which: str) -> ProcessPoolExecutor:
        pool = self._pools.get(which)
        if pool is None:
            count = self.workers if which == "main" else 1
            pool = ProcessPoolExecutor(
                count,
                mp_context=self._context,
                initializer=_init,
                initargs=(self.job, self._started),
            )
            self._pools[which] = pool
        return pool

    def start(self, timeout: float) -> list[dict[str, Any]]:
        """Wait until every process has loaded the plan and the keys; what each says of itself.

        Raises:
            RenError: a process that died as it started (a script without the ``__main__``
                guard), or processes not all started within ``timeout`` seconds.
        """
        pool = self._pool("main")
        futures = [pool.submit(int) for _ in range(self.workers)]  # a process a task, at first
        infos: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while len(infos) < self.workers:
            try:
                infos.append(self._started.get(timeout=0.5))
                continue
            except queue.Empty:
                pass
            # a process that dies before it takes a task can leave the pool waiting for it
            processes = getattr(pool, "_processes", None) or {}
            died = any(p.exitcode not in (None, 0) for p in list(processes.values()))
            if died or any(f.done() and f.exception() for f in futures):
                raise RenError(
                    "the local engine's processes died as they started. They are started with "
                    "spawn, which imports your script's main module again in each: a script "
                    'must run its work under if __name__ == "__main__": (see the messages above)'
                )
            if time.monotonic() > deadline:
                raise RenError(
                    f"the local engine's {self.workers} processes did not start within {timeout} s"
                )
        return infos

    def submit(self, batch: list[tuple[int, Any, bool]], retry: bool = False) -> Future[Any]:
        """Send a batch to the pool (a retried item to the retry pool); its handle."""
        which = "retry" if retry else "main"
        pool = self._pool(which)
        future = pool.submit(_run, batch)
        self._owner[future] = (which, pool)
        return future

    def wait(self, handles: list[Any], timeout: float) -> list[tuple[Any, str, Any]]:
        """The handles done within ``timeout``, each ``"ok"`` with the reply or ``"died"``."""
        done, _ = wait_futures(handles, timeout=timeout, return_when=FIRST_COMPLETED)
        out = []
        for future in done:
            which, pool = self._owner.pop(future)
            error = future.exception()
            if isinstance(error, BrokenProcessPool):
                self._replace(which, pool)
                out.append((future, "died", "its worker process died"))
            elif error is not None:
                raise error
            else:
                out.append((future, "ok", future.result()))
        return out

    def _replace(self, which: str, pool: ProcessPoolExecutor) -> None:
        if self._pools.get(which) is pool:  # the first of its futures to say so replaces it
            self.deaths += 1
            pool.shutdown(wait=False, cancel_futures=True)
            del self._pools[which]

    def close(self) -> None:
        """Stop every process."""
        for pool in self._pools.values():
            pool.shutdown(wait=True, cancel_futures=True)
        self._pools.clear()
        self._started.close()
        shutil.rmtree(self._folder, ignore_errors=True)
