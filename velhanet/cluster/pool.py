"""A pool of tasks on a Dask client: a bounded number in flight, each result handed back once, never stuck.

Every command that runs programs on the cluster drives it the same way:

- ``hold`` packs a program's folder once and keeps it as the result of a
  task (not scattered data): if the worker that keeps it dies, the scheduler
  computes it again elsewhere, and the tasks that need it go on;
- ``submit`` adds one task, named by the caller's job; ``results`` hands back
  ``(job, future)`` as each ends, asking the caller to ``refill`` after each,
  until nothing is in flight. A task whose worker died is given to another
  worker by the scheduler: its future ends once, so its result is handed back
  (and recorded) once;
- a thread beside the loop looks at the workers: with none at all for
  ``noWorkersGrace`` seconds (a cluster that lost them all), the tasks are
  cancelled and ``results`` raises L{NoWorkers};
- ``stopping`` (Ctrl-C, a decision) ends the loop; ``cancelAll`` cancels what runs.

The pool owns its futures: the loop, the watcher thread and a signal handler
change them only under its lock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Generic, TypeVar

from velhanet.cluster.archive import pack
from velhanet.cluster.workers import checkWorkers, holding, workerCount
from velhanet.i18n import _

Job = TypeVar("Job")

NO_WORKERS_GRACE = 120.0
"""Seconds a run waits with no worker at all before it stops, what is not done still to do.

A LocalCluster whose nannies could not start their workers again (a machine too loaded for them to
start in time), a cluster whose workers all left: the scheduler would hold the tasks for ever."""


class NoWorkers(Exception):
    """The cluster had no worker for ``seconds``: the run stops, what it did not do is still to do."""

    def __init__(self, seconds: float) -> None:
        super().__init__(_("no worker for {seconds:.0f} s").format(seconds=seconds))
        self.seconds = seconds


class TaskPool(Generic[Job]):
    def __init__(
        self,
        client: Any,
        progress: Callable[[], None] = lambda: None,
        noWorkersGrace: float = NO_WORKERS_GRACE,
        watchEvery: float = 1.0,
    ) -> None:
        """``progress`` is called while the run waits without workers (the caller's progress line)."""
        from distributed import as_completed

        self.client = client
        self.progress = progress
        self.noWorkersGrace = noWorkersGrace
        self.watchEvery = watchEvery
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._futures: dict[Any, Job] = {}
        self._completed = as_completed()
        self.noWorkersFor: float | None = None

    def hold(self, version: str, folder: Path) -> Any:
        """The future of ``folder``'s archive, the program version ``version``, held by a task of the cluster."""
        return self.client.submit(holding, pack(folder), key=f"velhanet-archive-{version}", pure=False)

    def submit(self, job: Job, name: str, task: Callable[..., Any], *arguments: Any) -> None:
        """Run ``task(*arguments)`` on a worker for ``job``; ``name`` begins its key (a retry is a new task)."""
        future = self.client.submit(task, *arguments, pure=False, key=f"{name}-{time.time_ns()}")
        with self._lock:
            self._futures[future] = job
        self._completed.add(future)

    @property
    def inFlight(self) -> int:
        with self._lock:
            return len(self._futures)

    def workers(self) -> int:
        return workerCount(self.client)

    def results(self, refill: Callable[[], None]) -> Iterator[tuple[Job, Any]]:
        """``(job, future)`` as each task ends (its future done, with a result or an error), until none is left."""
        refill()
        watching = threading.Event()
        watching.set()
        watcher = threading.Thread(target=self._watchWorkers, args=(watching,), daemon=True)
        watcher.start()
        try:
            for future in self._completed:
                with self._lock:
                    job = self._futures.pop(future, None)
                if self.stopping.is_set():
                    break
                if job is None:  # cancelled
                    continue
                yield job, future
                refill()
                if not self.inFlight:
                    break
        finally:
            watching.clear()
        if self.noWorkersFor is not None:
            self.cancelAll()
            raise NoWorkers(self.noWorkersFor)

    def cancelAll(self) -> None:
        with self._lock:
            futures = list(self._futures)
            self._futures.clear()
        if futures:
            self.client.cancel(futures)

    def _watchWorkers(self, watching: threading.Event) -> None:
        """A thread beside the loop: a run with no worker at all stops after L{noWorkersGrace} seconds."""
        alone: float | None = None
        while not self.stopping.wait(self.watchEvery) and watching.is_set():
            if self.workers() > 0:
                alone = None
                continue
            alone = alone if alone is not None else time.monotonic()
            self.progress()
            if time.monotonic() - alone >= self.noWorkersGrace:
                self.noWorkersFor = time.monotonic() - alone
                self.stopping.set()
                with self._lock:
                    futures = list(self._futures)
                self.client.cancel(futures)  # wakes the loop of results(), which then stops
                return


class DaskEngine:
    """Tasks on a Dask cluster (or a LocalCluster): the client, and the LocalCluster to close with it if any."""

    def __init__(self, client: Any, local: Any = None, where: str = "") -> None:
        self.client, self.local, self.where = client, local, where

    def check(self, what: str) -> str:
        return checkWorkers(self.client, what)

    def pool(self, progress: Callable[[], None]) -> TaskPool[Any]:
        return TaskPool(self.client, progress)

    def close(self) -> None:
        self.client.close()
        if self.local is not None:
            self.local.close()
