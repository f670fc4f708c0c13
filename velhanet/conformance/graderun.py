"""Grading many submissions at once, on this machine or on the league's Dask cluster (``velhanet.cluster``).

The engine is this machine's (``cluster.local.LocalEngine``: a thread per
task in flight, no Dask) or a Dask cluster's (``cluster.pool.DaskEngine``,
``--scheduler``); the run is the same on both.

Each submission is one task (``gradetask.gradeSubmission``): packed as a
content-addressed archive that travels with its task (a worker unpacks a version
once), checked in a process of its own on a worker, its
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

from velhanet.cluster.archive import pack
from velhanet.cluster.pool import NoWorkers
from velhanet.cluster.workers import RunRefused, WrongVersion
from velhanet.conformance.gradeone import settingsToData
from velhanet.conformance.gradetask import gradeSubmission
from velhanet.conformance.reportdata import reportFromData
from velhanet.conformance.runner import Report
from velhanet.i18n import _, current, ngettext
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
        engine: Any,
        settings: SandboxSettings,
        options: list[str],
        only: str,
        progress: TextIO = sys.stderr,
        task: Callable[..., dict[str, Any]] = gradeSubmission,
        atOnce: int = 0,
        language: str = "",
    ) -> None:
        """``engine``: where the tasks run (``LocalEngine`` or ``DaskEngine``); ``task`` grades one submission
        on a worker (``gradetask.gradeSubmission``; a test gives another);
        ``atOnce``: at most so many at the same time (0: as many as the cluster runs); ``language``: the one
        every grading process speaks, wherever it runs (default: this process's)."""
        self.atOnce = atOnce
        self.language = language or current().code
        self.task = task
        self.family, self.engine, self.settings = family, engine, settings
        self.options, self.only, self.progressTo = options, only, progress
        self.pool: Any = None
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
            "language": self.language,
        }

    def grade(self, submissions: list[tuple[int, Submission]], finished: Callable[[Submission, Graded], None]) -> None:
        """Grade each ``(index, submission)``; ``finished`` is called with each result, in this thread."""
        expected = self.engine.check(_("this velhanet-grade"))
        pool = self.engine.pool(self.progress)
        pool.stopping = self.stopping
        self.pool = pool
        queue = list(submissions)
        self.total, self.done = len(queue), 0
        ahead = self.atOnce or max(2, pool.workers() * 2)

        def submit(index: int, submission: Submission, attempt: int) -> None:
            assert submission.folder is not None
            # The archive goes with its task, not as a task of its own (the league's pool.hold): the scheduler
            # runs a task where its inputs are, and two archives held by one worker kept a second one idle.
            archive = pack(submission.folder)
            spec = self.specOf(index, submission)
            job = (index, submission, attempt)
            pool.submit(job, f"grade-{submission.student}-{attempt}", self.task, spec, archive, expected)

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
                    raise RunRefused(
                        _("{error}: install the same velhanet on every worker").format(error=error)
                    ) from None
                except Exception as error:  # the grading process failed, or Dask gave up on the task
                    if attempt + 1 < MAX_ATTEMPTS:
                        submit(index, submission, attempt + 1)
                        continue
                    failed = _("the grading itself failed: {error}").format(error=error)
                    report = Report(self.family, submission.student, cannotTest=failed)
                    finished(submission, Graded(report, None, ""))
                else:
                    report = reportFromData(result["report"])
                    printed = None if result["log"] is None else base64.b64decode(result["log"])
                    graded = Graded(report, printed, str(result["worker"]), result["began"], result["ended"])
                    finished(submission, graded)
                self.done += 1
                self.progress()
        except NoWorkers as gone:
            left = self.total - self.done
            raise RunRefused(
                ngettext(
                    "no worker for {seconds:.0f} s, {n} submission not graded: the cluster lost its workers"
                    " (see its log); start workers and run again: what is graded is kept",
                    "no worker for {seconds:.0f} s, {n} submissions not graded: the cluster lost its workers"
                    " (see its log); start workers and run again: what is graded is kept",
                    left,
                ).format(seconds=gone.seconds, n=left)
            ) from None
        finally:
            if self.progressTo.isatty():
                print("", file=self.progressTo, flush=True)  # the line redrawn ends

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
        if not self.done:
            estimate = _("left: after the first")
        elif left < 120:  # a small class: "~0 min" would say nothing
            estimate = _("left ~{seconds:.0f} s").format(seconds=left)
        else:
            estimate = _("left ~{minutes:.0f} min").format(minutes=left / 60)
        said = _("graded {done}/{total}  running {running}  {estimate}  workers {workers}").format(
            done=self.done, total=self.total, running=running, estimate=estimate, workers=workers
        )
        if self.progressTo.isatty():  # one line, redrawn
            print(f"\r{said}   ", end="", file=self.progressTo, flush=True)
        else:  # a log file: a line each
            print(said, file=self.progressTo, flush=True)
