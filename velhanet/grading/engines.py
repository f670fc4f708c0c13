"""Where gradings run, seen from a reactor: this machine's processes, or a Dask cluster's workers.

Every grading is a process of its own (``one``: the checks block and wait
as a protocol's client does), so all a reactor needs of an engine is to
start one and hear when it ends, never to wait for it:

- L{LocalEngine} spawns ``python -m velhanet.grading.one`` through the
  launch core's reactor front end (``sandbox.program.spawn``, the sandbox off:
  it is velhanet's own process, with the same output tail and cause), on this
  machine; a plain ``pip install .`` has all it needs;
- L{ClusterEngine} submits the same grading as a task of a Dask cluster
  (``task.gradeSubmission``; ``pip install 'velhanet[cluster]'``) and hands
  each task's end back to the reactor with ``callFromThread``; what blocks
  (connecting, asking the workers' versions, packing a folder) runs in a
  thread. A cluster with no worker for L{NO_WORKERS_GRACE} seconds fails what
  it runs with L{NoWorkers}.

Both give ``grade(spec, folder, expected)``: a Deferred of the grading's
result (``{"report", "log", "worker", "began", "ended"}``) that a
cancellation stops (the process killed, the task cancelled), or fails with
L{GradingFailed} when the grading process itself failed (not the student's
program: that is a verdict).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
import typing
from pathlib import Path
from typing import Any

from twisted.internet.defer import CancelledError, Deferred, succeed
from twisted.internet.task import LoopingCall
from twisted.internet.threads import deferToThread
from twisted.python.failure import Failure

from velhanet.cluster.archive import pack, unpacked
from velhanet.cluster.pool import NO_WORKERS_GRACE, NoWorkers
from velhanet.cluster.workers import checkWorkers, codeVersion, taskEnvironment, workerCount
from velhanet.grading.task import NO_RESULT, gradeSubmission
from velhanet.i18n import _
from velhanet.sandbox.program import SandboxedProgram, spawn
from velhanet.sandbox.sandbox import Sandbox
from velhanet.sandbox.verdict import Verdict

GRADING_MODULE = "velhanet.grading.one"


class GradingFailed(Exception):
    """The grading process ended without a result (it, not the student's program, failed)."""


class Engine(typing.Protocol):
    where: str
    """Empty for this machine, else the cluster's scheduler."""

    def slots(self) -> Deferred[int]:
        """How many gradings it runs at once."""

    def check(self, what: str) -> Deferred[str]:
        """The velhanet every grading runs (``RunRefused`` when a worker runs another); ``what`` names the run."""

    def grade(self, spec: dict[str, Any], folder: Path, expected: str) -> Deferred[dict[str, Any]]:
        """One grading of ``spec`` (as ``one`` reads it, without its folder) of the program in ``folder``."""

    def close(self) -> Deferred[None]: ...


def readResult(path: Path) -> dict[str, Any]:
    """A grading process's result (a report with its exchanges: read and parsed beside the reactor)."""
    result: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return result


def localCopy(version: str, folder: Path) -> Path:
    """The folder as every grading sees it, wherever it runs: its content-addressed archive unpacked once
    (no links, no devices), in the same cache a cluster's worker uses."""
    return unpacked(version, pack(folder))


class LocalEngine:
    """Gradings on this machine, each a process of this velhanet's, ``size`` at once."""

    where = ""

    def __init__(self, reactor: Any, size: int) -> None:
        self.reactor = reactor
        self.size = max(1, size)
        self._free = list(range(1, self.size + 1))

    def slots(self) -> Deferred[int]:
        return succeed(self.size)

    def check(self, what: str) -> Deferred[str]:
        return deferToThread(codeVersion)  # a hash of every file of velhanet's: beside the reactor

    def grade(self, spec: dict[str, Any], folder: Path, expected: str) -> Deferred[dict[str, Any]]:
        return Deferred.fromCoroutine(self._grade(spec, folder))

    async def _grade(self, spec: dict[str, Any], folder: Path) -> dict[str, Any]:
        copy = await deferToThread(localCopy, spec["version"], folder)
        scratch = Path(tempfile.mkdtemp(prefix="velhanet-grading-"))
        slot = self._free.pop(0) if self._free else 0
        try:
            specPath, resultPath = scratch / "spec.json", scratch / "result.json"
            specPath.write_text(json.dumps({**spec, "folder": str(copy)}), encoding="utf-8")
            began = time.time()
            command = [sys.executable, "-m", GRADING_MODULE, str(specPath), str(resultPath)]
            program = spawn(Sandbox.off(), self.reactor, command, cwd=scratch, environment=taskEnvironment())
            verdict = await _ended(program, self.reactor)
            if not resultPath.exists():
                said = program.output.lastLine()
                raise GradingFailed(_(NO_RESULT).format(status=verdict.status, said=said))
            result: dict[str, Any] = await deferToThread(readResult, resultPath)
            result.update(worker=f"local:{slot}", began=began, ended=time.time())
            return result
        finally:
            if slot:
                self._free.append(slot)
                self._free.sort()
            await deferToThread(shutil.rmtree, scratch, True)

    def close(self) -> Deferred[None]:
        return succeed(None)


STOP_GRACE = 5.0
"""Seconds a grading process stopped with SIGINT has to stop its program and remove its sandbox, before KILL."""


def _ended(program: SandboxedProgram, reactor: Any) -> Deferred[Verdict]:
    """The program's end. Cancelled, it is asked to stop as Ctrl-C asks (it then stops the student's program
    and removes its sandbox), and killed if it has not after L{STOP_GRACE} seconds."""

    def stop(_: object) -> None:
        program.stop("INT")
        kill = reactor.callLater(STOP_GRACE, program.stop)
        program.ended.addBoth(lambda result: kill.cancel() if kill.active() else None)

    ended: Deferred[Verdict] = Deferred(stop)

    def passOn(verdict: Verdict) -> None:
        if not ended.called:
            ended.callback(verdict)

    program.ended.addCallback(passOn)
    return ended


class ClusterEngine:
    """Gradings as tasks of a Dask cluster: ``client`` (and the LocalCluster it runs on, closed with it)."""

    def __init__(
        self,
        reactor: Any,
        client: Any,
        local: Any = None,
        where: str = "",
        noWorkersGrace: float = NO_WORKERS_GRACE,
        watchEvery: float = 1.0,
        task: Any = gradeSubmission,
    ) -> None:
        """``task``: what a worker runs for one grading (``task.gradeSubmission``; a test gives another)."""
        self.reactor, self.client, self.local, self.where = reactor, client, local, where
        self.task = task
        self.noWorkersGrace = noWorkersGrace
        self._running: dict[Any, Deferred[dict[str, Any]]] = {}
        self._alone: float | None = None
        self._watch = LoopingCall(self._lookAtWorkers)
        self._watch.clock = reactor
        self._watchEvery = watchEvery

    def slots(self) -> Deferred[int]:
        return deferToThread(workerCount, self.client)

    def check(self, what: str) -> Deferred[str]:
        return deferToThread(checkWorkers, self.client, what)

    def grade(self, spec: dict[str, Any], folder: Path, expected: str) -> Deferred[dict[str, Any]]:
        return Deferred.fromCoroutine(self._grade(spec, folder, expected))

    async def _grade(self, spec: dict[str, Any], folder: Path, expected: str) -> dict[str, Any]:
        # The archive goes with its task, not as a task of its own: the scheduler runs a task where its inputs
        # are, and two archives held by one worker kept a second one idle.
        archive = await deferToThread(pack, folder)
        key = f"grade-{spec['student']}-{time.time_ns()}"
        future = self.client.submit(self.task, spec, archive, expected, pure=False, key=key)
        done: Deferred[dict[str, Any]] = Deferred(lambda _: self._cancel(future))
        self._running[future] = done
        if not self._watch.running:
            self._watch.start(self._watchEvery, now=False)

        def ended(finished: Any) -> None:  # a thread of Dask's; the future is done, so result() does not wait
            try:
                outcome: Any = finished.result()
            except BaseException as error:  # the task's failure, handed to the reactor
                outcome = Failure(error)
            self.reactor.callFromThread(self._finish, finished, outcome)

        future.add_done_callback(ended)
        return await done

    def _finish(self, future: Any, outcome: Any) -> None:
        done = self._running.pop(future, None)
        if not self._running and self._watch.running:
            self._watch.stop()
        if done is None or done.called:
            return
        if isinstance(outcome, Failure) and outcome.check(CancelledError):
            return  # cancelled by us: the Deferred was cancelled already
        if isinstance(outcome, Failure):
            done.errback(outcome)
        else:
            done.callback(outcome)

    def _cancel(self, future: Any) -> None:
        self._running.pop(future, None)
        deferToThread(self.client.cancel, [future]).addErrback(lambda failure: None)

    def _lookAtWorkers(self) -> Deferred[None]:
        """With no worker at all for ``noWorkersGrace`` seconds, what runs fails with L{NoWorkers}."""

        def seen(workers: int) -> None:
            if workers:
                self._alone = None
                return
            now = self.reactor.seconds()
            self._alone = self._alone if self._alone is not None else now
            if now - self._alone >= self.noWorkersGrace:
                gone, self._running = self._running, {}
                for future, done in gone.items():
                    deferToThread(self.client.cancel, [future]).addErrback(lambda failure: None)
                    if not done.called:
                        done.errback(NoWorkers(now - self._alone))

        return deferToThread(workerCount, self.client).addCallback(seen)

    def close(self) -> Deferred[None]:
        if self._watch.running:
            self._watch.stop()

        def closing() -> None:
            self.client.close()
            if self.local is not None:
                self.local.close()

        return deferToThread(closing)
