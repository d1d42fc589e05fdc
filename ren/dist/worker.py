"""One worker of ``ren.dist``: the plan and the keys loaded once, then items replayed in batches.

An engine (Ray's actors, or local processes) makes one ``Worker`` a process, from one ``Job``,
and hands it batches. The worker:

1. runs with ``REN_THREADS=1`` (``ONE_CORE``: the process is one of many, a core each), runs
   the job's ``setup`` (e.g. to register a device of the user's), reads the evaluation keys on
   the plan's device, makes a context holding them (it cannot decrypt), and loads the plan under
   them, checking that its fingerprint is the one the driver read;
2. for each item of a batch: reads it (``ren.dist.values.read_item``), replays the plan, writes the
   result's bytes; an item that fails becomes an outcome naming why, and the batch goes on;
3. for an item the driver marked for audit, replays it also on the ``python`` device (the same
   plan's kernels on NumPy, Ren's reference backend: ``ren.load(..., device="python")``, loaded
   at the first such item) and compares the two results word for word.

A failure of step 1 is kept and returned with every batch (``("setup", reason)``), so the driver
can stop with the reason instead of retrying a worker that can never start.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from ren import settings
from ren.capture.loaded import LoadedPlan
from ren.capture.loaded import load as load_plan
from ren.dist import values

__all__ = ["Job", "Outcome", "Worker"]

#: A worker is one of many, a core each: ``REN_THREADS=1`` while it loads and runs (its first
#: load fixes the cpu kernels' flags for the process: built without OpenMP).
ONE_CORE = {"THREADS": 1}

#: One item's outcome: its index, its result's bytes (``None`` when it failed), and for a failure
#: its kind (``"input"``, ``"value"``, ``"run"``, ``"audit"``) and reason.
Outcome = tuple[int, Any, str | None, str | None]


@dataclasses.dataclass(frozen=True)
class Job:
    """What every worker of one run is given once.

    Attributes:
        plan: the saved plan's bytes (read-only: on Ray, a view of the object store).
        fingerprint: the plan's fingerprint, as the driver read it.
        keys: the evaluation keys' bytes, by the name the plan's stored inputs have.
        insecure: whether keys for ``insecure=True`` parameters are accepted.
        device: the plan's device, where the keys and the items are read.
        setup: a function each worker calls once before anything else, or ``None``.
    """

    plan: Any
    fingerprint: str
    keys: dict[str, Any]
    insecure: bool
    device: str
    setup: Callable[[], object] | None = None


class Worker:
    """A process's worker: ``Worker(job)`` loads (keeping any failure), ``run(batch)`` replays."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.info: dict[str, Any] = {"pid": os.getpid()}
        self.error: str | None = None
        self._reference: tuple[Any, Any, LoadedPlan] | None = None
        try:
            with settings.override(**ONE_CORE):
                self._start()
        except Exception as e:  # kept: every batch returns it, and the driver stops with it
            self.error = f"{type(e).__name__}: {e}"

    def _start(self) -> None:
        start = time.perf_counter()
        if self.job.setup is not None:
            self.job.setup()
        self.scheme, self.keys, self.context = self._keys(self.job.device)
        with self.context:
            self.plan = load_plan(bytes(self.job.plan), stored=self.keys)
        if self.plan.data["fingerprint"] != self.job.fingerprint:
            raise ValueError(
                f"the plan this worker got has the fingerprint {self.plan.data['fingerprint']}, "
                f"the driver read {self.job.fingerprint}"
            )
        self.info.update(
            device=self.job.device,
            seconds=time.perf_counter() - start,
            keys_fingerprint=self.context.key_fingerprint,
            keys_read_only=all(not _writeable(k) for k in self.job.keys.values()),
        )

    def _keys(self, device: str) -> tuple[values.Scheme, dict[str, Any], Any]:
        read = {
            name: values.read_keys(bytes(blob), device, self.job.insecure)
            for name, blob in self.job.keys.items()
        }
        schemes = {scheme.keys for scheme, _ in read.values()}
        if not schemes:
            raise ValueError("no evaluation keys were given: a worker reads items under them")
        if len(schemes) != 1:
            raise ValueError(f"the keys given are of several schemes ({sorted(schemes)})")
        scheme, first = next(iter(read.values()))
        context = scheme.module.Context(first.params, device=device, keys=first)
        return scheme, {name: keys for name, (_, keys) in read.items()}, context

    def run(self, batch: Sequence[tuple[int, Any, bool]]) -> tuple[str, Any]:
        """Replay the plan on each ``(index, item, audit)``: ``("done", outcomes)``.

        ``("setup", reason)`` when the worker could not start.
        """
        if self.error is not None:
            return "setup", self.error
        with settings.override(**ONE_CORE):
            return "done", [self._one(index, item, audit) for index, item, audit in batch]

    def _one(self, index: int, item: Any, audit: bool) -> Outcome:
        try:
            with self.context:
                args = values.read_item(self.scheme, item, self.context)
        except (TypeError, ValueError) as e:
            return index, None, "input", str(e)
        try:
            with self.context:
                result = values.result_bytes(self.plan(*args))
        except (TypeError, ValueError) as e:
            return index, None, "value", str(e)
        except Exception as e:  # a kernel's failure is this item's; the batch goes on
            return index, None, "run", f"{type(e).__name__}: {e}"
        if audit:
            try:
                found = values.difference(result, self._replay_reference(item))
            except Exception as e:
                return index, None, "audit", f"the reference replay failed: {type(e).__name__}: {e}"
            if found is not None:
                return index, None, "audit", f"differs from the python reference: {found}"
        return index, result, None, None

    def _replay_reference(self, item: Any) -> Any:
        """The item's result with the plan's kernels run on NumPy (the ``python`` device)."""
        if self._reference is None:
            scheme, keys, context = self._keys("python")
            with context:
                plan = load_plan(bytes(self.job.plan), stored=keys, device="python")
            self._reference = (scheme, context, plan)
        scheme, context, plan = self._reference
        with context:
            return values.result_bytes(plan(*values.read_item(scheme, item, context)))


def _writeable(blob: Any) -> bool:
    """Whether a buffer can be written: Ray's zero-copy arrays from the object store cannot."""
    flags = getattr(blob, "flags", None)
    return True if flags is None else bool(flags.writeable)
