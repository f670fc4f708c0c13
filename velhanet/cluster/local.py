"""Tasks on this machine without Dask: the pool that a plain ``pip install .`` grades a class with.

Grading a class on one machine is the main job of ``velhanet-grade``, and it
needs nothing of a cluster: each task already runs in a process of its own
(``workers.taskProcess``) and only waits for it, so a thread per task in
flight is all the machinery it takes. L{LocalPool} has the face of
``pool.TaskPool`` (``submit``, ``results``, ``inFlight``, ``workers``,
``cancelAll``, ``stopping``), so that a run is written once for both; Dask
(``pip install 'velhanet[cluster]'``) is needed only when other machines
grade too (``--scheduler``).

A local task's process is started by the thread that runs the task and dies
with it (``PR_SET_PDEATHSIG``), as on a Dask worker; a run stopped with
Ctrl-C ends its grading processes with the same signal the terminal sends
them, and the tasks not yet started are cancelled.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Generic, TypeVar

from velhanet.cluster.workers import codeVersion

Job = TypeVar("Job")


class LocalPool(Generic[Job]):
    """At most ``size`` tasks at once, each in a thread of this process; each result handed back once."""

    def __init__(self, size: int) -> None:
        self.size = max(1, size)
        self.stopping = threading.Event()
        self._executor = ThreadPoolExecutor(max_workers=self.size, thread_name_prefix="velhanet-task")
        self._lock = threading.Lock()
        self._futures: dict[Future[Any], Job] = {}
        self._done: queue.Queue[Future[Any] | None] = queue.Queue()

    def submit(self, job: Job, name: str, task: Callable[..., Any], *arguments: Any) -> None:
        """Run ``task(*arguments)`` for ``job`` when a thread is free (``name``: as the cluster's pool takes it)."""
        future = self._executor.submit(task, *arguments)
        with self._lock:
            self._futures[future] = job
        future.add_done_callback(self._done.put)

    @property
    def inFlight(self) -> int:
        with self._lock:
            return len(self._futures)

    def workers(self) -> int:
        return self.size

    def results(self, refill: Callable[[], None]) -> Iterator[tuple[Job, Future[Any]]]:
        """``(job, future)`` as each task ends, until none is left or the run stops."""
        refill()
        try:
            while self.inFlight and not self.stopping.is_set():
                future = self._done.get()
                if future is None:  # cancelAll's wake-up
                    continue
                with self._lock:
                    job = self._futures.pop(future, None)
                if job is None or future.cancelled():
                    continue
                yield job, future
                refill()
        finally:
            self._executor.shutdown(wait=not self.stopping.is_set(), cancel_futures=True)

    def cancelAll(self) -> None:
        """Tasks not started are cancelled; the loop of L{results} stops once it sees ``stopping``."""
        with self._lock:
            futures = list(self._futures)
            self._futures.clear()
        for future in futures:
            future.cancel()
        self._done.put(None)


class LocalEngine:
    """Grading on this machine: ``size`` tasks at once, every one of them running this very velhanet."""

    where = "local"

    def __init__(self, size: int) -> None:
        self.size = max(1, size)

    def check(self, what: str) -> str:
        """The version every task runs: this process's own (``what`` names the run, as for a cluster)."""
        return codeVersion()

    def pool(self, progress: Callable[[], None]) -> LocalPool[Any]:
        return LocalPool(self.size)

    def close(self) -> None:
        pass
