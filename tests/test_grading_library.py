"""Grading as a library, driven as a service drives it: on a running reactor, which keeps answering.

No command, no ``print``, no ``sys.exit``: plain values in (``GradeSettings``,
``Submission``), Deferreds and ``twisted.logger`` events out. Real grading
processes of real programs (velhanet's Gambit server and the faulty
stand-ins), on this machine's engine.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.logger import ILogObserver, globalLogPublisher
from twisted.trial.unittest import TestCase
from zope.interface import provider

from tests.processes import PYTHON, ROOT
from tests.reactorwatch import ReactorWatch
from velhanet.cluster.archive import folderVersion
from velhanet.grading.classrun import ClassRun
from velhanet.grading.engines import LocalEngine
from velhanet.grading.grader import Grader
from velhanet.grading.history import History
from velhanet.grading.records import ClassRecord
from velhanet.grading.settings import GradeSettings
from velhanet.grading.submissions import Submission, fromFolder
from velhanet.sandbox.limits import SandboxSettings

BROKEN = ROOT / "standins" / "faulty" / "gambit_server.py"
OWN = f"{PYTHON} -c 'from twisted.scripts.twistd import run; run()' -n --pidfile= -l /dev/null"
OWN += " gambit-server --listen tcp:{port}:interface=127.0.0.1"
MISSED_PER_RESULT = 3
"""Ticks of 10 ms the reactor's own thread may miss for each result it records: the history's commit (a write
to disk) and the student's reports rendered and written, a few milliseconds each, more on a loaded disk.
Measured for the four results: 1 to 3 on an idle machine, 4 to 5 beside three other trial runs and a class
grading, 9 once on CI's machine; a reactor that waited for a grading would miss hundreds."""
LONGEST_STALL = 0.25
"""Seconds: the longest a result's own work was seen to hold the reactor is 44 ms on a loaded machine; a
join or a blocking wait for a grading process holds it for a whole grading (seconds). Once, in a clean
clone's suite run, one stall of 124 ms came (the worker had run many tests before; not reproduced alone,
not the collector: a heap of three million objects did not bring it back): the longest stall is held to
this bound and left out of the count of L{MISSED_PER_RESULT}, which the reactor's own work per result
makes."""


def classOf(root: Path, commands: dict[str, str]) -> list[Submission]:
    for student, command in commands.items():
        (root / student).mkdir(parents=True)
        (root / student / "velhanet-run").write_text(command)
        shutil.copy(BROKEN, root / student)
    return fromFolder(root, set())


class LibraryTests(TestCase):
    timeout = 600

    def test_aClassGradedWhileTheReactorKeepsAnswering(self) -> Deferred[None]:
        """Four submissions graded four at once by the library, a LoopingCall ticking every 10 ms beside it:
        the reports are the programs' own, the progress comes as events, and the reactor's thread misses no
        more than a few ticks a result (what the kernel did not give it, a busy machine, left out), and never
        stalls as a wait for a grading would."""
        root = Path(self.mktemp()).resolve()
        submissions = classOf(
            root / "class",
            {
                "ana": OWN,
                "bo": f"{PYTHON} gambit_server.py {{port}} gambit-join-unknown",
                "cy": f"{PYTHON} gambit_server.py {{port}} gambit-end",
                "dan": f"{PYTHON} gambit_server.py {{port}} gambit-back-to-back",
            },
        )
        (root / "out").mkdir()
        history = History(root / "out" / "grades.db")
        self.addCleanup(history.close)
        settings = GradeSettings("gambit", SandboxSettings("auto"))
        grader = Grader(settings, LocalEngine(reactor, 4))
        record = ClassRecord("gambit", root / "out", history, settings.key())
        events: list[dict[str, Any]] = []

        @provider(ILogObserver)
        def observe(event: dict[str, Any]) -> None:
            if event.get("log_namespace") == ClassRun.log.namespace:
                events.append(event)

        globalLogPublisher.addObserver(observe)
        self.addCleanup(globalLogPublisher.removeObserver, observe)
        watch = ReactorWatch(reactor)
        watch.start()
        self.addCleanup(watch.stop)

        async def grade() -> None:
            outcome = await ClassRun(grader, record, reactor).grade(submissions)
            watch.stop()
            failed = {
                line.student: [o.anchor for o in line.report.outcomes if o.status == "FAIL"] for line in outcome.lines
            }
            self.assertEqual(
                failed,
                {"ana": [], "bo": ["gambit-join-unknown"], "cy": ["gambit-end"], "dan": ["gambit-back-to-back"]},
            )
            self.assertFalse(outcome.interrupted)
            self.assertEqual([e["done"] for e in events if "done" in e], [0, 1, 2, 3, 4])
            self.assertEqual([e["starting"] for e in events if "starting" in e], [4])
            self.assertTrue((root / "out" / "index.html").exists())
            self.assertEqual(len(history.versionsOf("cy")), 1)
            self.assertGreater(len(watch.ticks), 100, "it ticked all along")
            print(f"\n  reactor: {watch.missed()} ticks of 10 ms missed, longest stall {watch.longest() * 1000:.0f} ms")
            mostMissed = MISSED_PER_RESULT * len(submissions)
            beyondTheLongest = watch.missed() - int(watch.longest() / watch.interval)
            said = f"{watch.missed()} missed; longest {watch.longest():.3f} s"
            self.assertLessEqual(beyondTheLongest, mostMissed, said)
            self.assertLessEqual(watch.longest(), LONGEST_STALL, f"{watch.missed()} ticks missed")

        return Deferred.fromCoroutine(grade())

    def test_oneSubmissionGradedAndAWaitingOneCancelled(self) -> Deferred[None]:
        """A service grades hand-ins one by one: with one slot, a second grading waits; cancelled while it
        waits, it never runs, and the first one's report is the program's."""
        root = Path(self.mktemp()).resolve()
        ana, bo = classOf(root / "class", {"ana": f"{PYTHON} gambit_server.py {{port}} gambit-end", "bo": OWN})
        grader = Grader(GradeSettings("gambit", SandboxSettings("off"), only="gambit-end"), LocalEngine(reactor, 1))

        async def grade() -> None:
            first = grader.grade(ana)
            second = grader.grade(bo)
            await grader.start()
            self.assertEqual((grader.running, grader.waiting), (1, 1))
            second.cancel()
            graded = await first
            self.assertEqual([(o.anchor, o.status) for o in graded.report.outcomes], [("gambit-end", "FAIL")])
            self.assertEqual(graded.worker, "local:1")
            self.assertEqual(folderVersion(ana.folder), ana.version)  # type: ignore[arg-type]
            self.assertEqual((grader.running, grader.waiting), (0, 0))
            self.failureResultOf(second)

        return Deferred.fromCoroutine(grade())
