"""The hand-in desk: a hand-in from the moment it is received to the moment its grading is recorded.

1. **Received**: an upload's archive is written under its content's hash (``archives/``, synced to
   disk) and the hand-in recorded in ``grades.db`` — both before anyone is told it was received; a
   git student's commit is exported from their repository (a thread: git waits).
2. **Checked**: the archive is unpacked within its limits (``archives``, in a thread); refused, the
   hand-in says which limit and its value.
3. **Queued** in the fair queue (``queue``): one per student, a newer hand-in replacing the waiting
   one, one grading per student at a time.
4. **Graded** by the grading library (``velhanet.grading.Grader``: the same code as ``velhanet-grade``,
   in the sandbox, on this machine or a Dask cluster), in the language of the student who handed it in.
5. **Recorded**: the grading goes into the history with what changed since the student's previous
   version, and the hand-in is marked graded in the same transaction: a server killed at any point
   grades what it had not recorded when it starts again (L{Desk.resume}), and records each once.

Every change is told to the listeners (the live pages). Nothing here blocks the reactor: disk and
git work runs in threads, a grading in a process of its own.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from twisted.internet.defer import CancelledError, Deferred
from twisted.internet.threads import deferToThread
from twisted.logger import Logger
from twisted.python.failure import Failure

from velhanet.classroom.archives import Refused, UploadLimits, runFolder, unpack
from velhanet.classroom.classfile import Classroom
from velhanet.classroom.queue import FairQueue, estimatedWait
from velhanet.classroom.store import GIT, GRADING, QUEUED, RECEIVED, REFUSED, REPLACED, UPLOAD, HandIn, Store
from velhanet.cluster.archive import folderVersion
from velhanet.grading.gradebook import ClassLine
from velhanet.grading.grader import Graded, Grader
from velhanet.grading.history import History, changeLine, statusesOf
from velhanet.grading.submissions import Submission, fromGit
from velhanet.i18n import _

FIRST_GUESS = 60.0
"""Seconds a grading is guessed to take before the first one has been timed."""
RETRY = 30.0
"""Seconds before a hand-in whose grading could not be done (no worker, a refused run) is tried again."""

Listener = Callable[[HandIn], None]


@dataclass(frozen=True)
class Received:
    """A hand-in as it was when the desk took it: queued with its ``position`` then (1: next), or refused."""

    handIn: HandIn
    position: int


def storeArchive(root: Path, data: bytes) -> str:
    """``data`` under ``root`` by its SHA-256, written whole and synced to disk once; its name."""
    name = hashlib.sha256(data).hexdigest()
    path = root / name[:2] / name
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        with open(partial, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        partial.replace(path)
    return name


class Desk:
    log = Logger()

    def __init__(
        self,
        classroom: Classroom,
        store: Store,
        history: History,
        grader: Grader,
        outDir: Path,
        reactor: Any,
        limits: UploadLimits,
        now: Callable[[], datetime] = lambda: datetime.now().astimezone(),
    ) -> None:
        self.classroom, self.store, self.history, self.grader = classroom, store, history, grader
        self.outDir, self.reactor, self.limits, self.now = outDir, reactor, limits, now
        self.settingsKey = grader.settings.key()
        self.queue = FairQueue()
        self.running: dict[int, Deferred[Graded]] = {}
        self.listeners: list[Listener] = []
        self.durations: deque[float] = deque(maxlen=20)
        self._indexes: list[int] = []
        self._retries: list[Any] = []
        self.stopping = False

    # -- paths ---------------------------------------------------------------------------

    @property
    def archives(self) -> Path:
        return self.outDir / "archives"

    def filesOf(self, handIn: int) -> Path:
        """Where a hand-in's files are kept: its unpacked folder, its program's output."""
        return self.outDir / "hand-ins" / str(handIn)

    @property
    def workspace(self) -> Path:
        """The git students' clones and exported commits."""
        return self.outDir / "git"

    def folderOf(self, handIn: HandIn) -> Path:
        if handIn.kind == GIT:
            return self.workspace / ".submissions" / f"{handIn.student}-{handIn.version[:12]}"
        return runFolder(self.filesOf(handIn.id) / "folder")

    def folderIfAny(self, handIn: HandIn) -> Path | None:
        """A hand-in's folder, if its files are still there."""
        try:
            return self.folderOf(handIn)
        except Refused:
            return None

    # -- receiving -------------------------------------------------------------------------

    async def receiveUpload(self, student: str, data: bytes, language: str) -> Received:
        """An upload, stored and recorded, then checked: queued (with its position then), or refused with the
        reason."""
        name = await deferToThread(storeArchive, self.archives, data)
        received = self.now()
        handIn = self.store.addHandIn(student, received, UPLOAD, name, "", self.classroom.late(received), language)
        self._told(handIn)
        return await self._check(handIn, data)

    async def _check(self, handIn: HandIn, data: bytes) -> Received:
        into = self.filesOf(handIn.id) / "folder"
        shutil.rmtree(into, ignore_errors=True)
        try:
            folder = await deferToThread(unpack, data, into, self.limits)
        except Refused as refusal:
            return Received(self._told(self.store.setStatus(handIn.id, REFUSED, str(refusal))), 0)
        version = await deferToThread(folderVersion, folder)
        return self.enqueue(self.store.setStatus(handIn.id, QUEUED, version=version))

    async def receiveCommit(self, student: str, language: str, onlyNew: bool = False) -> Received | None:
        """A git student's last commit, exported and queued (``onlyNew``: None when it was handed in already,
        as the poller asks); a repository that cannot be read is a refused hand-in saying why."""
        person = self.classroom.people[student]
        url = self.classroom.repository(person)
        submission = await deferToThread(
            fromGit, student, url, self.classroom.path.parent, self.workspace, None, person.identifier
        )
        if onlyNew:
            last = self.store.lastOfKind(student, GIT)
            if submission.problem or (last is not None and last.version == submission.version):
                if submission.problem:
                    self.log.warn("{student}'s repository: {problem}", student=student, problem=submission.problem)
                return None
        received = self.now()
        if submission.problem:
            refused = self.store.addHandIn(student, received, GIT, "", "", False, language, status=REFUSED)
            return Received(self._told(self.store.setStatus(refused.id, REFUSED, submission.problem)), 0)
        late = self.classroom.late(datetime.fromisoformat(submission.committed))
        handIn = self.store.addHandIn(
            student, received, GIT, submission.version, submission.version, late, language, submission.committed, QUEUED
        )
        return self.enqueue(handIn)

    # -- the queue -------------------------------------------------------------------------

    def enqueue(self, handIn: HandIn) -> Received:
        """``handIn`` waits for its turn (queued, as it is when this returns, with its position then)."""
        replaced = self.queue.add(handIn.student, handIn.id)
        if replaced is not None and replaced != handIn.id:
            reason = _("a newer hand-in (#{id}) replaced it before it was graded").format(id=handIn.id)
            self._told(self.store.setStatus(replaced, REPLACED, reason))
        position = self.queue.positions()[handIn.student][1]
        self._told(handIn)
        self.pump()
        return Received(handIn, position)

    def pump(self) -> None:
        """Start gradings while the grader has free slots and a student waits whose turn it is."""
        if self.stopping:
            return
        slots = self.grader.slotCount or self.grader.atOnce or 1
        started = False
        while len(self.running) < slots:
            taken = self.queue.take()
            if taken is None:
                break
            self._start(self.store.setStatus(taken[1], GRADING))
            started = True
        if started:
            for waitingId, _place in self.queue.positions().values():
                self._told(self.store.handIn(waitingId))

    def _start(self, handIn: HandIn) -> None:
        index = self._indexes.pop() if self._indexes else len(self.running)
        try:
            folder = self.folderOf(handIn)
        except Refused as refusal:  # the files went missing (a server moved without its hand-ins)
            self.queue.done(handIn.student)
            self._told(self.store.setStatus(handIn.id, REFUSED, str(refusal)))
            return
        source = "git" if handIn.kind == GIT else "upload"
        submission = Submission(handIn.student, folder, handIn.version, source, handIn.committed)
        began = self.reactor.seconds()
        grading = self.grader.grade(submission, index, handIn.language)
        self.running[handIn.id] = grading
        self._told(handIn)

        def finished(result: Graded | Failure) -> None:
            self.running.pop(handIn.id, None)
            self._indexes.append(index)
            self.queue.done(handIn.student)
            if isinstance(result, Failure):
                self._failed(handIn, result)
            else:
                self.durations.append(self.reactor.seconds() - began)
                self._record(handIn, submission, result)
            self.pump()

        grading.addBoth(finished)

    def _record(self, handIn: HandIn, submission: Submission, graded: Graded) -> None:
        files = self.filesOf(handIn.id)
        files.mkdir(parents=True, exist_ok=True)
        if graded.printed is not None:
            (files / "program.log").write_bytes(graded.printed)
        report = graded.report
        verdict = ClassLine(submission, report).verdict()
        previous = self.history.previous(handIn.student, self.classroom.family, self.settingsKey, handIn.version)
        change = changeLine(previous, statusesOf(report), verdict)
        self.history.record(
            submission,
            self.classroom.family,
            self.settingsKey,
            report,
            verdict,
            change,
            self.now(),
            alsoDo=lambda connection, grading: Store.markGraded(connection, handIn.id, grading),
        )
        self._told(self.store.handIn(handIn.id))

    def _failed(self, handIn: HandIn, failure: Failure) -> None:
        if failure.check(CancelledError) or self.stopping:
            return  # the server stops: graded when it starts again
        self.log.failure("the grading of hand-in {id} could not be done: tried again", failure, id=handIn.id)
        self._told(self.store.setStatus(handIn.id, QUEUED))
        self._retries = [call for call in self._retries if call.active()]
        self._retries.append(self.reactor.callLater(RETRY, self.enqueue, self.store.handIn(handIn.id)))

    def regradeAll(self) -> int:
        """Every student's last graded hand-in, graded again (the teacher's button); how many."""
        count = 0
        for person in self.classroom.students:
            last = self.store.lastGraded(person.name)
            if last is not None and not self.queue.busy(person.name):
                self.enqueue(self.store.setStatus(last.id, QUEUED))
                count += 1
        return count

    def resume(self, leftOver: list[HandIn]) -> Deferred[None]:
        """``leftOver``: what was received but not recorded when the server last stopped, read before it
        listened again (a hand-in received since is the queue's already): checked again if it had not
        been, then queued, oldest first."""
        return Deferred.fromCoroutine(self._resume(leftOver))

    async def _resume(self, leftOver: list[HandIn]) -> None:
        for handIn in leftOver:
            if handIn.status == RECEIVED and handIn.kind == UPLOAD:
                path = self.archives / handIn.archive[:2] / handIn.archive
                data = await deferToThread(path.read_bytes)
                await self._check(handIn, data)
            else:
                self.enqueue(self.store.setStatus(handIn.id, QUEUED))

    def stop(self) -> None:
        """The server stops: what runs is stopped and stays unfinished, to be graded at the next start."""
        self.stopping = True
        for call in self._retries:
            if call.active():
                call.cancel()
        for grading in list(self.running.values()):
            grading.cancel()

    # -- what the pages show -----------------------------------------------------------------

    def active(self) -> list[HandIn]:
        """The hand-ins waiting or being graded, oldest first."""
        return [handIn for handIn in self.store.unfinished() if handIn.status in (QUEUED, GRADING)]

    def meanSeconds(self) -> float:
        return sum(self.durations) / len(self.durations) if self.durations else FIRST_GUESS

    def waiting(self, handIn: HandIn) -> tuple[int, float] | None:
        """A queued hand-in's position (1: next) and the estimated seconds until it is graded."""
        if handIn.status != QUEUED:
            return None
        found = self.queue.positions().get(handIn.student)
        if found is None or found[0] != handIn.id:
            return None
        position = found[1]
        slots = self.grader.slotCount or 1
        return position, estimatedWait(position, slots, len(self.running), self.meanSeconds())

    def _told(self, handIn: HandIn) -> HandIn:
        for listener in list(self.listeners):
            listener(handIn)
        return handIn
