"""The ``ray`` engine: one Ray actor a worker, the plan and the keys put once in Ray's object store.

``ray.init`` is called only when Ray is not initialized yet: with ``address`` (or ``RAY_ADDRESS``)
it joins that cluster (``ray start --head`` made it), otherwise Ray starts a local one (or joins
the one ``ray start`` runs on this machine). A Ray that Ren started stays up for the process's
next run; ``ray.shutdown()`` ends it.

The plan's and the keys' bytes are put in the object store once a run, as read-only NumPy arrays:
each node holds one copy, fetched once, and every actor on the node reads it without a copy (it
then reads the keys into Ren's own buffers, once). An actor asks for one CPU (``num_gpus=1`` as
well when the plan runs on ``cuda``). Batches go to the actor with the fewest in flight. An actor
that dies is replaced. A retried item goes to an actor with nothing else in flight (one is kept
from new batches until its own are done), one item at a time, so a death there is that item's.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ren.dist.worker import Job, Worker
from ren.errors import RenError

__all__ = ["RayEngine", "actor_options"]


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RenError(
            "engine='ray' needs Ray: pip install 'ray>=2.40' (or use engine='local')"
        ) from None
    return ray


def actor_options(device: str) -> dict[str, int]:
    """What an actor asks Ray for: one CPU, and one GPU for a plan on ``cuda``.

    Ray never restarts it: the driver replaces a dead one, and retries its items itself.
    """
    return {"num_cpus": 1, "num_gpus": 1 if device == "cuda" else 0, "max_restarts": 0}


class _Actor:
    """The Ray actor around a ``Worker``.

    It is made with the job's other fields and, as arguments of their own, the plan's and the
    keys' refs: Ray resolves a ref given as an argument to the array in the node's store.
    """

    def __init__(self, job: Job, plan: np.ndarray, *keys: np.ndarray) -> None:
        blobs = dict(zip(job.keys, keys, strict=True))
        self.worker = Worker(dataclasses.replace(job, plan=plan, keys=blobs))

    def info(self) -> dict[str, Any]:
        return dict(self.worker.info, error=self.worker.error)

    def run(self, batch: list[tuple[int, Any, bool]]) -> tuple[str, Any]:
        return self.worker.run(batch)


class RayEngine:
    """``workers`` Ray actors (default: the cluster's CPUs, or its GPUs for a ``cuda`` plan)."""

    name = "ray"

    def __init__(
        self,
        job: Job,
        workers: int | None,
        address: str | None = None,
        more: dict[str, Any] | None = None,
    ) -> None:
        ray = self.ray = _ray()
        if not ray.is_initialized():
            ray.init(address=address, log_to_driver=False, include_dashboard=False)
        options = {**actor_options(job.device), **(more or {})}
        resources = ray.cluster_resources()
        default = resources.get("GPU", 0) if options["num_gpus"] else resources.get("CPU", 1)
        self.workers = workers or max(1, int(default))
        # put once: the plan, and the keys as read-only arrays every actor of a node shares
        self.puts: list[tuple[str, int]] = []
        plan = self._put("plan", job.plan)
        keys = {name: self._put(f"keys {name}", blob) for name, blob in job.keys.items()}
        self._refs = (plan, *keys.values())
        self.job = dataclasses.replace(job, plan=None, keys=dict.fromkeys(keys))
        self._remote = ray.remote(**options)(_Actor)
        self.actors = [self._new() for _ in range(self.workers)]
        self._reserved: Any = None
        self._owner: dict[Any, Any] = {}
        self._load: dict[Any, int] = {id(a): 0 for a in self.actors}
        self.deaths = 0

    def _put(self, what: str, blob: Any) -> Any:
        array = np.frombuffer(bytes(blob), dtype=np.uint8)
        self.puts.append((what, array.nbytes))
        return self.ray.put(array)

    def _new(self) -> Any:
        return self._remote.remote(self.job, *self._refs)

    def start(self, timeout: float) -> list[dict[str, Any]]:
        """Wait until every actor has loaded the plan and the keys; what each says of itself."""
        refs = [a.info.remote() for a in self.actors]
        ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=timeout)
        if len(ready) < len(refs):
            raise RenError(
                f"{len(refs) - len(ready)} of Ray's {len(refs)} actors did not start within "
                f"{timeout} s: is the cluster short of CPUs (or GPUs)? ray status shows it"
            )
        return list(self.ray.get(refs))

    def submit(self, batch: list[tuple[int, Any, bool]], retry: bool = False) -> Any:
        """Send a batch to the least busy actor; its handle.

        A retried item goes to an actor with nothing else in flight: one is reserved (given no
        new batch) until its batches are done, and ``None`` is returned until then.
        """
        if retry:
            if self._reserved is None:
                self._reserved = min(self.actors, key=lambda a: self._load[id(a)])
            actor = self._reserved
            if self._load[id(actor)]:
                return None
        else:
            free = [a for a in self.actors if a is not self._reserved]
            actor = min(free or self.actors, key=lambda a: self._load[id(a)])
        ref = actor.run.remote(batch)
        self._owner[ref] = (actor, retry)
        self._load[id(actor)] += 1
        return ref

    def wait(self, handles: list[Any], timeout: float) -> list[tuple[Any, str, Any]]:
        """The handles done within ``timeout``, each ``"ok"`` with the reply or ``"died"``."""
        ray = self.ray
        ready, _ = ray.wait(handles, num_returns=1, timeout=timeout)
        out = []
        for ref in ready:
            actor, retry = self._owner.pop(ref)
            self._load[id(actor)] -= 1
            if retry:
                self._reserved = None
            try:
                out.append((ref, "ok", ray.get(ref)))
            except ray.exceptions.RayActorError as e:
                self._replace(actor)
                out.append((ref, "died", f"its Ray actor died ({type(e).__name__})"))
        return out

    def _replace(self, actor: Any) -> None:
        if self._reserved is actor:
            self._reserved = None
        if any(a is actor for a in self.actors):
            self.deaths += 1
            self.actors = [a for a in self.actors if a is not actor]
            fresh = self._new()
            self._load[id(fresh)] = 0
            self.actors.append(fresh)

    def close(self) -> None:
        """Kill the actors (Ray itself stays up)."""
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors, self._reserved = [], None
