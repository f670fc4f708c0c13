"""``makeService`` for the class server: the class, its records, the grader, the desk and the site.

It refuses to start, saying why in one line (``StartupReport``), when the class file is wrong, when the
database was written by a newer velhanet, when students' programs would run without the sandbox and the
teacher did not say ``--sandbox off``, and when a Dask cluster is asked for and Dask is not installed.
Started, it first grades what was received and not recorded when it last stopped (``Desk.resume``), then
listens; every ``--poll`` it looks at the git students' repositories for new commits.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from twisted.application.service import MultiService
from twisted.internet.defer import Deferred
from twisted.internet.task import LoopingCall
from twisted.logger import Logger
from twisted.web.server import Site

from velhanet.checks.runner import unknownRules
from velhanet.classroom.answers import UPLOAD_SLACK, ClassSite, accessLine, limitedRequests
from velhanet.classroom.archives import UploadLimits
from velhanet.classroom.auth import Sessions, SignInLimiter, classPortal
from velhanet.classroom.classfile import loadClassroom
from velhanet.classroom.desk import Desk
from velhanet.classroom.events import Live
from velhanet.classroom.league import ClassLeague
from velhanet.classroom.resources import ClassRoot
from velhanet.classroom.store import Store
from velhanet.cluster.workers import DaskMissing, requireDask
from velhanet.grading.command import defaultWorkers
from velhanet.grading.engines import ClusterEngine, Engine, LocalEngine
from velhanet.grading.grader import Grader
from velhanet.grading.history import History, HistoryError
from velhanet.grading.settings import GradeSettings
from velhanet.grading.submissions import ClassFileError
from velhanet.i18n import _, current
from velhanet.sandbox.cgroups import RUN_VARIABLE
from velhanet.sandbox.sandbox import Sandbox, SandboxUnavailable
from velhanet.startup import ListeningService, StartupReport
from velhanet.tracing import orGlobalReactor

TIDY_EVERY = 3600.0
SESSION_DAYS = 120
"""A session cookie's life, as its Max-Age says: then the person opens their link again."""


class ClassService(MultiService):
    log = Logger()

    def __init__(self, site: ClassSite, grader: Grader, engine: Engine, pollEvery: float, listening: Any) -> None:
        super().__init__()
        self.site, self.grader, self.engine, self.pollEvery = site, grader, engine, pollEvery
        self.leftOver = site.store.unfinished()
        """What the server had received and not recorded when it last stopped: read before it listens."""
        self.listening = listening
        listening.setServiceParent(self)
        self.poller = LoopingCall(self.poll)
        self.poller.clock = site.reactor
        self.tidying = LoopingCall(self.tidy)
        self.tidying.clock = site.reactor
        self.ready: Deferred[None] | None = None

    def startService(self) -> None:
        super().startService()
        self.site.live.start()
        self.tidying.start(TIDY_EVERY, now=True)
        self.ready = self.grader.start().addCallback(lambda _: self.site.desk.resume(self.leftOver))
        self.ready.addErrback(lambda failure: self.log.failure("the grading could not start", failure))
        gitStudents = [person for person in self.site.classroom.students if person.git]
        if self.pollEvery and gitStudents:
            self.poller.start(self.pollEvery, now=True)

    def stopService(self) -> Deferred[None] | None:
        for loop in (self.poller, self.tidying):
            if loop.running:
                loop.stop()
        self.site.desk.stop()
        self.site.live.stop()
        stopped = super().stopService()
        closing = self.engine.close()
        closing.addBoth(lambda _: self.site.history.close())
        return stopped

    def tidy(self) -> None:
        """Now and then: the limiter forgets quiet addresses, sessions older than L{SESSION_DAYS} end."""
        self.site.limiter.forget()
        self.site.store.forgetSessions(self.site.now() - timedelta(days=SESSION_DAYS))

    def poll(self) -> Deferred[None]:
        """Every git student's repository, one after the other: a new last commit is a hand-in."""
        return Deferred.fromCoroutine(self._poll())

    async def _poll(self) -> None:
        for person in self.site.classroom.students:
            if person.git:
                try:
                    await self.site.desk.receiveCommit(person.name, current().code, onlyNew=True)
                except Exception:
                    self.log.failure("looking at {student}'s repository", student=person.name)


def makeService(options: Any, reactor: Any = None) -> ClassService:
    reactor = orGlobalReactor(reactor)
    report = StartupReport(options, reactor)
    try:
        classroom = loadClassroom(Path(options["class"]))
    except ClassFileError as error:
        report.cannotStart(str(error))
    outDir = Path(options["out"]).resolve()
    outDir.mkdir(parents=True, exist_ok=True)
    try:
        history = History(outDir / "grades.db")
    except HistoryError as error:
        report.cannotStart(str(error))
    store = Store(history)
    store.syncPeople({person.name: person.role for person in classroom.people.values()})
    settings = options["sandboxSettings"]
    try:
        sandbox = Sandbox.forCommand(settings, say=lambda line: None)
    except SandboxUnavailable as error:
        report.cannotStart(str(error))
    if settings.mode != "off" and not sandbox.active:
        report.cannotStart(
            _(
                "students' programs would run without a sandbox ({problem}); install bubblewrap, or pass"
                " --sandbox off to grade them as yourself"
            ).format(problem=sandbox.availability.problem)
        )
    os.environ[RUN_VARIABLE] = str(os.getpid())  # the gradings' control groups are named after this server
    if options["only"]:
        unknown, _anchors = unknownRules(classroom.family, options["only"])
        if unknown:
            said = _("--only {rules}: no such rule of {family}")
            report.cannotStart(said.format(rules=", ".join(unknown), family=classroom.family))
    only = options["only"]
    grading = GradeSettings(classroom.family, settings, options["strict"], only, options["repeat"], current().code)
    workers = options["workers"] or defaultWorkers(settings.limits)
    engine: Engine
    if options["scheduler"]:
        try:
            requireDask("--scheduler")
        except DaskMissing as missing:
            report.cannotStart(str(missing))
        engine = ClusterEngine(reactor, _client(options["scheduler"]), where=options["scheduler"])
    else:
        engine = LocalEngine(reactor, workers)
    grader = Grader(grading, engine, atOnce=0 if options["scheduler"] else workers)
    limits = UploadLimits(options["uploadSize"], options["limit-files"], options["expandedSize"])
    desk = Desk(classroom, store, history, grader, outDir, reactor, limits, now=_now)
    live = Live(reactor, desk.waiting)
    desk.listeners.append(live.changed)
    league = ClassLeague(classroom, store, desk, reactor, outDir / "league", settings)
    sessions = Sessions(store)
    site = ClassSite(
        classroom,
        store,
        history,
        desk,
        classPortal(store),
        sessions,
        SignInLimiter(reactor),
        live,
        league,
        reactor,
        limits,
        options.get("language"),
        options["trace"],
        _now,
    )
    web = Site(ClassRoot(site), logFormatter=accessLine)
    web.requestFactory = limitedRequests(limits.size + UPLOAD_SLACK)
    web.displayTracebacks = False
    if not options["trace"]:
        web.noisy = False
    return ClassService(
        site, grader, engine, options["pollSeconds"], ListeningService(options["listen"], web, reactor, report)
    )


def _now() -> datetime:
    return datetime.now().astimezone()


def _client(scheduler: str) -> Any:
    """A Dask client of the cluster at ``scheduler`` (its connection is made in Dask's own thread)."""
    from distributed import Client

    return Client(scheduler, timeout="30s")
