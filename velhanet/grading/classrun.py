"""A whole class graded at once, on a running reactor: what ``velhanet-grade`` does, as a library.

    run = ClassRun(grader, record, reactor)
    lines = await run.grade(submissions)      # every student's ClassLine, in the class's order

Each submission is settled once: with nothing to grade (``record.nothingToGrade``), graded
before with the same settings (``record.already``, unless ``again``), or graded now by the
L{Grader}, as many at once as it runs, its result recorded the moment it comes (so that what
is graded is kept if the run stops). Progress goes out as ``twisted.logger`` events of this
module's namespace: first ``starting`` (how many are to be graded) and ``total`` (the class),
then after each grading ``done``, ``total``, ``running``, ``left`` (seconds, None before the
first) and ``workers``: the command draws its lines from them, a service shows them as it
likes. L{ClassRun.stop} (Ctrl-C) cancels what runs; what was graded is kept,
and the outcome says it was interrupted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from twisted.internet.defer import CancelledError, Deferred, DeferredList
from twisted.logger import Logger
from twisted.python.failure import Failure

from velhanet.grading.gradebook import ClassLine
from velhanet.grading.grader import Graded, Grader
from velhanet.grading.records import ClassRecord
from velhanet.grading.submissions import Submission

PROGRESS = "graded {done}/{total}, running {running}, workers {workers}"
"""The progress event's format (the fields are what a reader uses)."""


@dataclass(frozen=True)
class ClassOutcome:
    lines: list[ClassLine]
    """Every student settled, in the class's order."""
    interrupted: bool
    """Stopped before every submission was settled (what was settled is kept)."""

    def passed(self, submissions: Sequence[Submission]) -> bool:
        """Every student settled, tested and passing."""
        return not self.interrupted and len(self.lines) == len(submissions) and all(line.passed for line in self.lines)


class ClassRun:
    log = Logger()

    def __init__(self, grader: Grader, record: ClassRecord, reactor: Any, again: bool = False) -> None:
        self.grader, self.record, self.reactor, self.again = grader, record, reactor, again
        self.total = self.done = 0
        self.began = 0.0
        self._gradings: list[Deferred[Graded]] = []
        self.interrupted = False
        self.refusal: Failure | None = None
        """Why the run stopped before its end, when the engine refused it."""

    def grade(self, submissions: Sequence[Submission]) -> Deferred[ClassOutcome]:
        return Deferred.fromCoroutine(self._grade(list(submissions)))

    async def _grade(self, submissions: list[Submission]) -> ClassOutcome:
        toGrade = []
        for index, submission in enumerate(submissions):
            if submission.problem:
                self.record.nothingToGrade(submission)
            elif self.again or not self.record.already(submission):
                toGrade.append((index, submission))
        self.total, self.done, self.began = len(toGrade), 0, self.reactor.seconds()
        if toGrade:
            self.log.info("grading {starting} of {total}", starting=len(toGrade), total=len(submissions))
            await self.grader.start()
            self.progress()
            for index, submission in toGrade:
                grading = self.grader.grade(submission, index)
                grading.addCallbacks(self._graded, self._refused, callbackArgs=(submission,))
                self._gradings.append(grading)
            await DeferredList(self._gradings, consumeErrors=True)
        lines = self.record.classPage(submissions)
        if self.refusal is not None:
            self.refusal.raiseException()  # the engine refused the run (a worker of another velhanet, none left)
        return ClassOutcome(lines, self.interrupted)

    def _graded(self, graded: Graded, submission: Submission) -> Graded:
        self.record.finished(submission, graded)
        self.done += 1
        self.progress()
        return graded

    def _refused(self, failure: Failure) -> None:
        """A grading that could not be done at all (not a verdict): the run stops, what was graded is kept."""
        if not failure.check(CancelledError) and self.refusal is None:
            self.refusal = failure
            for grading in self._gradings:
                grading.cancel()

    def stop(self) -> None:
        """What runs is cancelled, what was graded is kept."""
        self.interrupted = True
        for grading in self._gradings:
            grading.cancel()

    def progress(self) -> None:
        elapsed = self.reactor.seconds() - self.began
        left = (self.total - self.done) * elapsed / self.done if self.done else None
        self.log.info(
            PROGRESS,
            done=self.done,
            total=self.total,
            running=self.grader.running,
            left=left,
            workers=self.grader.slotCount,
        )
