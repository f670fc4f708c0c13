"""Grading many submissions at once, on this machine or on the league's Dask cluster (``velhanet.cluster``).

Each submission is one task (``gradetask.gradeSubmission``): packed once as a
content-addressed archive, checked in a process of its own on a worker, its
program in its own sandbox and network. ``GradeRun.grade`` keeps a bounded
number in flight, hands each result to the caller as it comes (so that what
is graded is recorded even if the run stops), grades a submission again when
its task failed (a worker killed mid-check is the scheduler's to give to
another; a grading process that failed is tried once more), and shows a
progress line: submissions done/total, running now, the time left.
"""

from __future__ import annotations

import base64
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from velhanet.cluster.pool import NoWorkers, TaskPool
from velhanet.cluster.workers import RunRefused, WrongVersion, checkWorkers
from velhanet.conformance.gradeone import settingsToData
from velhanet.conformance.gradetask import gradeSubmission
from velhanet.conformance.reportdata import reportFromData
from velhanet.conformance.runner import Report
from velhanet.sandbox.limits import SandboxSettings
from velhanet.submissions import Submission

MAX_ATTEMPTS = 2
"""Tries of a submission whose grading process failed (not the student's program: that is a verdict)."""


@dataclass(frozen=True)
class Graded:
    """What came back for one submission: its report, what its program printed, the worker that graded it."""

    report: Report
    printed: bytes | None
    """What its program printed; None when no program was started."""
    worker: str
    began: float = 0.0
    ended: float = 0.0
    """When the grading process ran (seconds since the epoch, the worker's clock)."""


Job = tuple[int, Submission, int]


class GradeRun:
    def __init__(
        self,
        family: str,
        client: Any,
        settings: SandboxSettings,
        options: list[str],
        only: str,
        progress: TextIO = sys.stderr,
        task: Callable[..., dict[str, Any]] = gradeSubmission,
        atOnce: int = 0,
    ) -> None:
        """``task`` grades one submission on a worker (``gradetask.gradeSubmission``; a test gives another);
        ``atOnce``: at most so many at the same time (0: as many as the cluster runs)."""
        self.atOnce = atOnce
        self.task = task
        self.family, self.client, self.settings = family, client, settings
        self.options, self.only, self.progressTo = options, only, progress
        self.pool: TaskPool[Job] | None = None
        self.stopping = threading.Event()
        self.began = time.monotonic()
        self.total = self.done = 0

    def specOf(self, index: int, submission: Submission) -> dict[str, Any]:
        return {
            "family": self.family,
            "student": submission.student,
            "version": submission.version,
            "index": index,
            "options": self.options,
            "only": self.only,
            "sandbox": settingsToData(self.settings),
        }

    def grade(self, submissions: list[tuple[int, Submission]], finished: Callable[[Submission, Graded], None]) -> None:
        """Grade each ``(index, submission)``; ``finished`` is called with each result, in this thread."""
        expected = checkWorkers(self.client, "this velhanet-grade")
        pool: TaskPool[Job] = TaskPool(self.client, self.progress)
        pool.stopping = self.stopping
        self.pool = pool
        archives: dict[str, Any] = {}
        queue = list(submissions)
        self.total, self.done = len(queue), 0
        ahead = self.atOnce or max(2, pool.workers() * 2)

        def submit(index: int, submission: Submission, attempt: int) -> None:
            assert submission.folder is not None
            if submission.version not in archives:
                archives[submission.version] = pool.hold(submission.version, submission.folder)
            spec = self.specOf(index, submission)
            job = (index, submission, attempt)
            pool.submit(
                job, f"grade-{submission.student}-{attempt}", self.task, spec, archives[spec["version"]], expected
            )

        def refill() -> None:
            while queue and pool.inFlight < ahead and not pool.stopping.is_set():
                submit(*queue.pop(0), 0)

        self.progress()
        try:
            for (index, submission, attempt), future in pool.results(refill):
                try:
                    result = future.result()
                except WrongVersion as error:
                    pool.stopping.set()
                    pool.cancelAll()
                    raise RunRefused(f"{error}: install the same velhanet on every worker") from None
                except Exception as error:  # the grading process failed, or Dask gave up on the task
                    if attempt + 1 < MAX_ATTEMPTS:
                        submit(index, submission, attempt + 1)
                        continue
                    report = Report(self.family, submission.student, cannotTest=f"the grading itself failed: {error}")
                    finished(submission, Graded(report, None, ""))
                else:
                    report = reportFromData(result["report"])
                    printed = None if result["log"] is None else base64.b64decode(result["log"])
                    graded = Graded(report, printed, str(result["worker"]), result["began"], result["ended"])
                    finished(submission, graded)
                self.done += 1
                self.progress()
        except NoWorkers as gone:
            raise RunRefused(
                f"no worker for {gone.seconds:.0f} s, {self.total - self.done} submission(s) not graded: the cluster"
                " lost its workers (see its log); start workers and run again: what is graded is kept"
            ) from None
        finally:
            print("", file=self.progressTo, flush=True)

    def stop(self) -> None:
        """Ctrl-C: what runs is cancelled, what was graded is kept."""
        self.stopping.set()
        if self.pool is not None:
            self.pool.cancelAll()

    @property
    def interrupted(self) -> bool:
        return self.stopping.is_set()

    def progress(self) -> None:
        elapsed = time.monotonic() - self.began
        if self.pool is None:
            return
        workers = self.pool.workers()
        running = min(self.pool.inFlight, workers)
        left = (self.total - self.done) * elapsed / self.done if self.done else 0.0
        estimate = f"left ~{left / 60:.0f} min" if self.done else "left: after the first"
        line = f"\rgraded {self.done}/{self.total}  running {running}  {estimate}  workers {workers}   "
        print(line, end="", file=self.progressTo, flush=True)
