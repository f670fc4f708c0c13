"""``velhanet-grade`` for a class: many at once, the history of each student's versions, git, the gradebook.

Everything runs as a teacher runs it: the command in a process of its own, on
class folders, class files and git repositories made here.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

from twisted.internet import reactor
from twisted.internet.defer import Deferred, gatherResults
from twisted.trial.unittest import SynchronousTestCase, TestCase

from tests.processes import ENVIRONMENT, PYTHON, ROOT
from velhanet.checks.data import reportFromData, reportToData
from velhanet.checks.runner import Outcome, Report
from velhanet.cluster.archive import folderVersion
from velhanet.cluster.workers import RunRefused, codeVersion, localCluster
from velhanet.grading import one
from velhanet.grading.engines import ClusterEngine
from velhanet.grading.grader import Grader
from velhanet.grading.history import History, changes
from velhanet.grading.settings import GradeSettings
from velhanet.grading.submissions import Submission
from velhanet.league.config import discoverPlayers, loadLeague
from velhanet.sandbox import Sandbox
from velhanet.sandbox.availability import probeBubblewrap
from velhanet.sandbox.blocking import BlockingProgram
from velhanet.sandbox.limits import SandboxSettings

BROKEN_GAMBIT = ROOT / "standins" / "faulty" / "gambit_server.py"
DRAWN = re.compile(r"'(game-)?[0-9a-f]{4}'|\b\d{4,5}\b")
TWISTD = f"{PYTHON} -c 'from twisted.scripts.twistd import run; run()' -n --pidfile="


def broken(fault: str) -> str:
    return f"{PYTHON} gambit_server.py {{port}} {fault}"


def makeClass(root: Path, commands: dict[str, str]) -> Path:
    """A class folder: one folder per student with its ``velhanet-run`` (and the broken server beside it)."""
    for student, command in commands.items():
        (root / student).mkdir(parents=True)
        (root / student / "velhanet-run").write_text(command)
        shutil.copy(BROKEN_GAMBIT, root / student)
    return root


def grade(*arguments: str, cwd: Path = ROOT, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PYTHON, "-m", "velhanet.grading.command", *arguments],
        cwd=cwd,
        env=ENVIRONMENT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def verdicts(out: Path) -> dict[str, list[tuple[str, str, str]]]:
    """Every student's rules as (id, status, reason), from the JSON reports; in a reason, what each run draws
    anew (a game's random id, a port) is masked."""
    found = {}
    for path in sorted(out.glob("*.json")):
        report = json.loads(path.read_text())
        rules = [(r["id"], r["status"], DRAWN.sub("#", r["reason"])) for r in report["rules"]]
        found[path.stem] = [*rules, ("cannot test", "", report["cannotTest"] or "")]
    return found


def git(folder: Path, *arguments: str, when: str = "") -> str:
    environment = {**os.environ, "GIT_AUTHOR_NAME": "Ana", "GIT_AUTHOR_EMAIL": "ana@example.edu"}
    environment.update(GIT_COMMITTER_NAME="Ana", GIT_COMMITTER_EMAIL="ana@example.edu")
    if when:
        environment.update(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    done = subprocess.run(["git", "-C", str(folder), *arguments], env=environment, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


class ExitedEarlyTests(SynchronousTestCase):
    def test_itsLastLineIsQuotedThoughTheReaderWasBehind(self) -> None:
        """A program that printed its last line and exited before the thread reading its output kept the line:
        the reason still quotes it (a whole suite run once graded "status 127 before it could be tested",
        the shell's "not found" left in the pipe)."""
        program = BlockingProgram(
            Sandbox(SandboxSettings(mode="off"), probeBubblewrap()),
            ["sh", "-c", "read go; echo 'sh: 1: ./no-such-server: not found' >&2; exit 127"],
            stdin=True,
        )
        keepNow = threading.Event()
        self.addCleanup(keepNow.set)
        keep = program.output.keep

        def keepWhenAsked(data: bytes, toSink: bool = True) -> None:
            keepNow.wait(30)  # the reader thread holds the words until someone waits for them
            keep(data, toSink)

        program.output.keep = keepWhenAsked  # type: ignore[method-assign]
        reader = program._reader
        join = reader.join

        def joinAndLetItKeep(timeout: float | None = None) -> None:
            keepNow.set()
            join(timeout)

        reader.join = joinAndLetItKeep  # type: ignore[method-assign]
        program.write(b"go\n")  # only now does it print and exit
        self.assertEqual(program.process.wait(30), 127)
        report = one._exitedEarly("gambit", "cy", program)
        assert report is not None
        self.assertEqual(
            report.cannotTest,
            "the program exited with status 127 before it could be tested: sh: 1: ./no-such-server: not found",
        )


class ParallelTests(SynchronousTestCase):
    def test_fourAtOnceGiveTheSequentialVerdicts(self) -> None:
        """The same deterministic stand-ins graded one at a time and four at a time: the same JSON verdicts,
        every rule's status and reason (a dying server's, a missing command's and an empty folder's too)."""
        root = Path(self.mktemp()).resolve()
        folder = makeClass(
            root / "class",
            {
                "ana": f"{TWISTD} -l /dev/null gambit-server --listen tcp:{{port}}:interface=127.0.0.1",
                "bo": broken("gambit-join-unknown"),
                "cy": broken("gambit-back-to-back"),
                "dan": broken("gambit-end"),
                "eve": "./no-such-server --port {port}",
                "gil": broken("gambit-create"),
                "hal": broken("gambit-disconnect"),
                "ivy": broken("gambit-move-outside"),  # it dies: every later check NOT RUN
                "jo": broken("dies-on-unknown-join"),
            },
        )
        (folder / "fay").mkdir()  # no velhanet-run
        one = grade("gambit", str(folder), "--out", str(root / "one"), "--workers", "1")
        four = grade("gambit", str(folder), "--out", str(root / "four"), "--workers", "4")
        self.assertEqual(one.returncode, 1, one.stdout + one.stderr)
        self.assertEqual(four.returncode, 1, four.stdout + four.stderr)
        self.assertIn("on this machine, 4 at a time", four.stdout)
        sequential, parallel = verdicts(root / "one"), verdicts(root / "four")
        self.assertEqual(sorted(sequential), ["ana", "bo", "cy", "dan", "eve", "fay", "gil", "hal", "ivy", "jo"])
        self.maxDiff = None
        self.assertEqual(parallel, sequential)
        failed = {s: [r for r, status, _ in rules if status == "FAIL"] for s, rules in parallel.items()}
        self.assertEqual(failed["bo"], ["gambit-join-unknown"])
        self.assertEqual(failed["cy"], ["gambit-back-to-back"])
        self.assertEqual(failed["ana"], [])
        table = [line.split()[:2] for line in four.stdout.splitlines()]
        self.assertIn(["cy", "dir"], table)
        workers = {json.loads((root / "four" / f"{s}.json").read_text())["grading"]["worker"] for s in sequential}
        self.assertGreater(len(workers), 1, "four workers, more than one of them graded")
        self.assertIn("graded 10/10", four.stderr, "the progress line")

    def test_twoVelhaPeersAtOnceNeverSeeEachOther(self) -> None:
        """Two JogoVelha peers on the protocol's port, each also sending to the other's address: graded at the
        same time, each hears its own checker only."""
        root = Path(self.mktemp()).resolve()
        peers = {"ana": "127.0.101.2", "bo": "127.0.100.2"}  # the other's address: index 1 and 0
        commands = {
            student: f"{TWISTD} -l - velha --nick Peer{student} --bot --move-delay 0 --interface {{address}}"
            f" --port {{port}} --announce {{announce}},{other} --invite vinvite --trace --log-file -"
            for student, other in peers.items()
        }
        folder = makeClass(root / "class", commands)
        only = "velha-hello,velha-invite,velha-answer-nick"
        result = grade("velha", str(folder), "--out", str(root / "out"), "--workers", "2", "--only", only)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        timings = []
        for student, other in (("ana", "bo"), ("bo", "ana")):
            log = (root / "out" / f"{student}.log").read_text()
            self.assertIn(f"-> udp {peers[student]}", log, "it did send to the other's address")
            self.assertIn(f"Hello(nick='Peer{student}')", log)
            self.assertNotIn(f"Peer{other}", log)
            heard = {line.split("<- udp ")[1].split()[0] for line in log.splitlines() if "<- udp " in line}
            self.assertEqual(heard, {"127.0.100.1" if student == "ana" else "127.0.101.1"}, "its checker only")
            grading = json.loads((root / "out" / f"{student}.json").read_text())["grading"]
            timings.append((grading["began"], grading["ended"]))
        (firstBegan, firstEnded), (secondBegan, secondEnded) = timings
        self.assertLess(max(firstBegan, secondBegan), min(firstEnded, secondEnded), "they ran at the same time")


def fakeGrading(spec: dict[str, Any], archive: bytes, expected: str) -> dict[str, Any]:
    """A grading for the pool's tests: the first attempt of ``cy``'s kills its worker (once: a marker file)."""
    marker = Path(os.environ["VELHANET_TEST_DIE_ONCE"]) / spec["student"]
    if spec["student"] == "cy" and not marker.exists():
        marker.touch()
        os.kill(os.getpid(), signal.SIGKILL)
    report = Report(spec["family"], spec["student"])
    report.outcomes.append(Outcome("PASS", "a rule", "", "test", anchor="rule-one"))
    return {"report": reportToData(report), "log": "", "worker": str(os.getpid()), "began": 0.0, "ended": 0.0}


class ClusterTests(TestCase):
    """The library's cluster engine on a running reactor, with a made-up grading task."""

    timeout = 300

    def test_aKilledWorkersSubmissionIsGradedAgainAndRecordedOnce(self) -> Deferred[None]:
        markers = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, markers, True)
        os.environ["VELHANET_TEST_DIE_ONCE"] = markers  # the workers' processes inherit it
        self.addCleanup(os.environ.pop, "VELHANET_TEST_DIE_ONCE")
        client, local = localCluster(3)
        self.addCleanup(local.close)
        self.addCleanup(client.close)
        folder = Path(self.mktemp())
        folder.mkdir()
        submissions = [Submission(name, folder, f"v{n}") for n, name in enumerate(["ana", "bo", "cy", "dan"])]
        engine = ClusterEngine(reactor, client, task=fakeGrading)
        grader = Grader(GradeSettings("gambit", SandboxSettings("off")), engine)
        finished: list[str] = []

        async def gradeAll() -> None:
            for graded in await gatherResults([grader.grade(s, n) for n, s in enumerate(submissions)]):
                finished.append(graded.report.target)
            self.assertTrue((Path(markers) / "cy").exists(), "cy's first grading did kill its worker")
            self.assertEqual(sorted(finished), ["ana", "bo", "cy", "dan"])

        return Deferred.fromCoroutine(gradeAll())

    def test_aWorkerOfAnotherVelhanetIsRefused(self) -> Deferred[None]:
        """The league's check, shared: a worker running other code would grade by other rules."""

        class OtherVersion:
            def run(self, function: Any) -> dict[str, str]:
                return {"tcp://127.0.0.1:40001": codeVersion(), "tcp://127.0.0.1:40002": "0.0.9+0123456789"}

        grader = Grader(GradeSettings("gambit", SandboxSettings("off")), ClusterEngine(reactor, OtherVersion()))
        async def refused() -> None:
            with self.assertRaises(RunRefused) as said:
                await grader.grade(Submission("ana", Path("."), "v1"))
            self.assertIn("the worker at tcp://127.0.0.1:40002 runs velhanet 0.0.9+0123456789", str(said.exception))

        return Deferred.fromCoroutine(refused())


class HistoryTests(SynchronousTestCase):
    def test_changes(self) -> None:
        before = {"a": "FAIL", "b": "PASS", "c": "WARN", "d": "NOT RUN", "e": "FAIL"}
        after = {"a": "PASS", "b": "FAIL", "c": "FAIL", "d": "FAIL", "e": "NOT RUN"}
        self.assertEqual(changes(before, after), (["a"], ["b", "c"]))

    def test_aReportComesBackWhole(self) -> None:
        report = Report("gambit", "ana: 127.0.0.1:1", cannotTest="")
        outcome = Outcome("FAIL", "rule", "X must Y; got Z", "t.id", anchor="gambit-x", doc="docs/gambit.md")
        outcome.exchange.sent("tcp#1", b'{"Cmd":1}\n', "CREATE")
        report.outcomes.append(outcome)
        again = reportFromData(json.loads(json.dumps(reportToData(report))))
        self.assertEqual(reportToData(again), reportToData(report))
        self.assertEqual(again.outcomes[0].exchange.lines[0].raw, '{"Cmd":1}\\n')

    def test_aFixAndABreakAreToldAndAVersionIsGradedOnce(self) -> None:
        root = Path(self.mktemp()).resolve()
        folder = makeClass(root / "class", {"bo": broken("gambit-join-unknown")})
        out = root / "out"
        first = grade("gambit", str(folder), "--out", str(out), "--workers", "1")
        self.assertIn("grading 1 of 1", first.stdout, first.stderr)
        again = grade("gambit", str(folder), "--out", str(out), "--workers", "1")
        self.assertIn("unchanged since", again.stdout)
        self.assertNotIn("grading", again.stdout.replace("velhanet-grade: bubblewrap", ""), "not graded again")
        (folder / "bo" / "velhanet-run").write_text(broken("gambit-back-to-back"))
        second = grade("gambit", str(folder), "--out", str(out), "--workers", "1", "--csv", str(root / "class.csv"))
        self.assertRegex(
            second.stdout,
            r"since version \w{12} \(graded \d{4}-\d\d-\d\d\): fixed: gambit-join-unknown; broke: gambit-back-to-back",
        )
        third = grade("gambit", str(folder), "--out", str(out), "--workers", "1")
        # A version graded before says so, and still what it changed, and its page keeps the commands.
        remembered = r"unchanged since \d{4}-\d\d-\d\d \(same version\); when it was graded: since version"
        self.assertRegex(third.stdout, remembered)
        self.assertIn("broke: gambit-back-to-back", third.stdout)
        kept = json.loads((out / "bo.json").read_text())
        commands = [rule["reproduce"] for rule in kept["rules"] if rule["id"] == "gambit-back-to-back"]
        command = f"velhanet-grade gambit {folder} --student bo --again --out {out}-again --only gambit-back-to-back"
        self.assertEqual(commands, [command])
        report = json.loads((out / "bo.json").read_text())
        self.assertIn("fixed: gambit-join-unknown; broke: gambit-back-to-back", report["change"])
        self.assertIn("broke: gambit-back-to-back", (out / "bo.html").read_text())
        forced = grade("gambit", str(folder), "--out", str(out), "--workers", "1", "--again")
        self.assertIn("grading 1 of 1", forced.stdout)
        self.assertNotIn("--csv", json.dumps(report), "a rule's command does not overwrite the class's CSV")
        history = subprocess.run(
            [PYTHON, "-m", "velhanet.grading.command", "history", str(out), "bo"],
            env=ENVIRONMENT, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        versions = [line for line in history.splitlines() if not line.startswith(" ")]
        self.assertEqual(len(versions), 3, history)  # two versions, the second graded twice (not by the third run)
        self.assertIn("first graded version", history)
        self.assertIn("fixed: gambit-join-unknown; broke: gambit-back-to-back", history)
        self.assertIn("same version, graded again", history)
        db = History(out / "grades.db")
        self.addCleanup(db.close)
        self.assertEqual(len(db.versionsOf("bo")), 3)
        with (root / "class.csv").open(newline="") as stream:
            rows = list(csv.DictReader(stream))
        self.assertEqual([row["student"] for row in rows], ["bo"])
        self.assertEqual(
            (rows[0]["passed"], rows[0]["failed"], rows[0]["failed_rules"]), ("12", "1", "gambit-back-to-back")
        )
        self.assertEqual(rows[0]["score"], "92.3")
        self.assertEqual(rows[0]["verdict"], "fail")


    def test_aVersionThatCouldNotBeTestedIsTriedAgain(self) -> None:
        """"Cannot test" may be the machine's (a start too slow on a busy machine): the next run tries again."""
        root = Path(self.mktemp()).resolve()
        folder = makeClass(root / "class", {"cy": "./no-such-server --port {port}"})
        for run in range(2):
            result = grade("gambit", str(folder), "--out", str(root / "out"), "--workers", "1")
            self.assertIn("grading 1 of 1", result.stdout, f"run {run + 1}")
            self.assertIn("cannot test: the program exited with status 127", result.stdout)


class GitTests(SynchronousTestCase):
    def test_theLastCommitBeforeTheDeadlineAndLinesForWhatCannotBeHad(self) -> None:
        root = Path(self.mktemp()).resolve()
        source = root / "work" / "ana"
        source.mkdir(parents=True)
        git(source, "init", "-q", "-b", "main")
        shutil.copy(BROKEN_GAMBIT, source)
        (source / "velhanet-run").write_text(broken("gambit-join-unknown"))
        git(source, "add", ".")
        git(source, "commit", "-qm", "before", when="2026-11-30T10:00:00+01:00")
        before = git(source, "rev-parse", "HEAD")
        (source / "velhanet-run").write_text(broken("gambit-back-to-back"))
        git(source, "commit", "-qam", "after", when="2026-12-02T09:00:00+01:00")
        late = root / "work" / "late"
        late.mkdir()
        git(late, "init", "-q", "-b", "main")
        (late / "velhanet-run").write_text("true")
        git(late, "add", ".")
        git(late, "commit", "-qm", "late", when="2026-12-05T09:00:00+01:00")
        makeClass(root / "class", {"bo": broken("gambit-end")})
        (root / "class.toml").write_text(
            '[students.ana]\ngit = "work/ana"\nid = "ana@example.edu"\n'
            '[students.bo]\nfolder = "class/bo"\n'
            '[students.cy]\ngit = "https://127.0.0.1:9/nobody.git"\n'
            '[students.dan]\ngit = "work/late"\n'
        )
        result = grade(
            "gambit", "class.toml", "--out", "out", "--deadline", "2026-12-01 23:59+01:00", "--csv", "g.csv", cwd=root
        )
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        ana = json.loads((root / "out" / "ana.json").read_text())
        self.assertEqual(ana["submission"]["version"], before)
        self.assertEqual(ana["submission"]["committed"], "2026-11-30T10:00:00+01:00")
        self.assertEqual(ana["submission"]["laterCommits"], 1)
        self.assertEqual([r["id"] for r in ana["rules"] if r["status"] == "FAIL"], ["gambit-join-unknown"])
        self.assertIn(f"commit {before[:12]} (2026-11-30T10:00:00+01:00); 1 later commit", result.stdout)
        lines = {line.split()[0]: line for line in result.stdout.splitlines() if line[:3] in ("cy ", "dan")}
        self.assertIn("cannot test: cannot clone https://127.0.0.1:9/nobody.git", lines["cy"])
        self.assertIn("cannot test: no commit before the deadline 2026-12-01 23:59+01:00", lines["dan"])
        with (root / "g.csv").open(newline="") as stream:
            rows = {row["student"]: row for row in csv.DictReader(stream)}
        self.assertEqual(rows["ana"]["id"], "ana@example.edu")
        self.assertEqual(rows["ana"]["version"], before)
        self.assertEqual(rows["bo"]["failed_rules"], "gambit-end")
        self.assertEqual(rows["cy"]["score"], "0.0")
        # Again, with no deadline at all: each repository (fetched again, not cloned) at its last commit.
        latest = grade("gambit", "class.toml", "--out", "out", "--deadline", "none", "--student", "ana", cwd=root)
        ana = json.loads((root / "out" / "ana.json").read_text())
        self.assertEqual(ana["submission"]["version"], git(source, "rev-parse", "HEAD"), latest.stdout + latest.stderr)
        self.assertEqual(ana["submission"]["laterCommits"], 0)
        self.assertIn("fixed: gambit-join-unknown; broke: gambit-back-to-back", ana["change"])


class LeagueFromAClassFileTests(SynchronousTestCase):
    def test_theLeaguesPlayersAreTheClassFilesCommits(self) -> None:
        root = Path(self.mktemp()).resolve()
        source = root / "work" / "ana"
        source.mkdir(parents=True)
        git(source, "init", "-q", "-b", "main")
        (source / "velhanet-run").write_text("./player --port {port} --reservation {reservation}")
        git(source, "add", ".")
        git(source, "commit", "-qm", "before", when="2026-11-30T10:00:00+01:00")
        graded = git(source, "rev-parse", "HEAD")
        (source / "velhanet-run").write_text("./later")
        git(source, "commit", "-qam", "after", when="2026-12-02T09:00:00+01:00")
        for name in ("bo", "cy"):
            (root / "class" / name).mkdir(parents=True)
            (root / "class" / name / "velhanet-run").write_text(f"./{name}")
        (root / "class.toml").write_text(
            '[students.ana]\ngit = "work/ana"\n[students.bo]\nfolder = "class/bo"\n'
            '[students.cy]\nfolder = "class/cy"\n[students.dan]\ngit = "work/nothing"\n'
        )
        (root / "league.toml").write_text(
            'name = "class A"\nclass = "class.toml"\ndeadline = "2026-12-01 23:59+01:00"\n'
        )
        league = loadLeague(root / "league.toml")
        said: list[str] = []
        players = {p.name: p for p in discoverPlayers(league, said.append)}
        self.assertEqual(sorted(players), ["ana", "bo", "cy"])
        self.assertEqual(players["ana"].version, f"git-{graded[:12]}")
        self.assertEqual(players["ana"].command, "./player --port {port} --reservation {reservation}")
        self.assertEqual(players["bo"].version, folderVersion(root / "class" / "bo"))
        self.assertTrue(any(line.startswith("dan left out: cannot clone work/nothing") for line in said), said)
        self.assertEqual(players["ana"].folder.parent, root / "league-submissions" / ".submissions")
