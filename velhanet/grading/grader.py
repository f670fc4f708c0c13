"""Grading as a library: a submission in, its report out, as a Deferred on a running reactor.

    grader = Grader(GradeSettings("gambit"), LocalEngine(reactor, 4))
    graded = await grader.grade(Submission("ana", folder, folderVersion(folder)))
    graded.report       # the same report velhanet-check writes: rules, verdicts, evidence

A L{Grader} is what every front end shares: ``velhanet-grade`` (a class at
once, ``classrun``) and the class server (one hand-in at a time, as they
come). It never prints, exits or blocks: each grading runs in a process of
its own (the engine's: ``engines``), at most so many at once, and a
grading whose process failed (not the student's program: that is a
verdict) is tried once more before its report says it could not be graded.
Cancelling the Deferred of a grading stops it (its process killed, its
task cancelled), or takes it out of the queue if it had not begun.
"""

from __future__ import annotations

import base64
import dataclasses
from dataclasses import dataclass
from typing import Any

from twisted.internet.defer import CancelledError, Deferred, DeferredSemaphore
from twisted.logger import Logger

from velhanet.checks.data import reportFromData
from velhanet.checks.outcome import Report
from velhanet.cluster.pool import NoWorkers
from velhanet.cluster.workers import RunRefused, WrongVersion
from velhanet.grading.engines import Engine
from velhanet.grading.settings import GradeSettings
from velhanet.grading.submissions import Submission
from velhanet.i18n import _, current

MAX_ATTEMPTS = 2
"""Tries of a submission whose grading process failed (not the student's program: that is a verdict)."""


@dataclass(frozen=True)
class Graded:
    """What came back for one submission: its report, what its program printed, where and when it was graded."""

    report: Report
    printed: bytes | None
    """What its program printed; None when no program was started."""
    worker: str
    began: float = 0.0
    ended: float = 0.0
    """When the grading process ran (seconds since the epoch, the worker's clock)."""


class Grader:
    """Grades submissions with ``settings`` on ``engine``, at most ``atOnce`` at a time (0: the engine's slots)."""

    log = Logger()

    def __init__(self, settings: GradeSettings, engine: Engine, atOnce: int = 0) -> None:
        self.settings = settings if settings.language else dataclasses.replace(settings, language=current().code)
        self.engine = engine
        self.atOnce = atOnce
        self._version = ""
        self._slots: DeferredSemaphore | None = None
        self._ready: Deferred[None] | None = None

    def start(self) -> Deferred[None]:
        """Ask the engine once which velhanet its gradings run (a worker of another one refuses the run,
        ``RunRefused``) and how many it runs at once. Every grading waits for this."""
        if self._ready is None:
            self._ready = Deferred.fromCoroutine(self._start())
        return self._ready

    async def _start(self) -> None:
        self._version = await self.engine.check(_("this grading"))
        slots = self.atOnce or await self.engine.slots()
        self._slots = DeferredSemaphore(max(1, slots))

    @property
    def waiting(self) -> int:
        """Gradings asked for that wait for a free slot."""
        return len(self._slots.waiting) if self._slots is not None else 0

    @property
    def running(self) -> int:
        """Gradings that run now."""
        if self._slots is None:
            return 0
        return self._slots.limit - self._slots.tokens

    @property
    def slotCount(self) -> int:
        """Gradings it runs at once (0 before L{start} has asked the engine)."""
        return self._slots.limit if self._slots is not None else 0

    def specOf(self, submission: Submission, index: int, language: str = "") -> dict[str, Any]:
        """What a grading process is told of one submission (as ``one`` reads it, without its folder); its report
        in ``language`` (default: the settings')."""
        settings = dataclasses.replace(self.settings, language=language) if language else self.settings
        return {
            "settings": settings.toData(),
            "student": submission.student,
            "version": submission.version,
            "index": index,
        }

    def grade(self, submission: Submission, index: int = 0, language: str = "") -> Deferred[Graded]:
        """Grade ``submission`` (``index`` tells submissions graded at the same time apart), its report in
        ``language`` (default: the settings'); cancel to stop it."""
        return Deferred.fromCoroutine(self._grade(submission, index, language))

    async def _grade(self, submission: Submission, index: int, language: str) -> Graded:
        await self.start()
        assert self._slots is not None and submission.folder is not None
        spec = self.specOf(submission, index, language)
        attempt = 0
        while True:
            attempt += 1
            await self._slots.acquire()
            try:
                result = await self.engine.grade(spec, submission.folder, self._version)
            except (CancelledError, NoWorkers, RunRefused):
                raise
            except WrongVersion as error:
                raise RunRefused(_("{error}: install the same velhanet on every worker").format(error=error)) from None
            except Exception as error:  # the grading process failed, or the cluster gave up on its task
                self.log.warn(
                    "the grading of {student} failed (attempt {attempt}): {error}",
                    student=submission.student,
                    attempt=attempt,
                    error=str(error),
                )
                if attempt < MAX_ATTEMPTS:
                    continue
                failed = _("the grading itself failed: {error}").format(error=error)
                return Graded(Report(self.settings.family, submission.student, cannotTest=failed), None, "")
            finally:
                self._slots.release()
            printed = None if result["log"] is None else base64.b64decode(result["log"])
            report = reportFromData(result["report"])
            return Graded(report, printed, str(result["worker"]), result["began"], result["ended"])
