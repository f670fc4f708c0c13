"""``velhanet-grade FAMILY DIR|CLASS.toml``: check a whole class's programs, many at once, and tabulate.

Every subdirectory of DIR is one student's submission; a class file names each
student's git repository or folder instead (``submissions``: with
``--deadline``, the last commit before it). Its file ``velhanet-run``
holds the command that starts the student's program (run by the shell, in that
directory), with placeholders that velhanet fills in:

====================  =====================================================
family                placeholders in ``velhanet-run``
====================  =====================================================
gambit, socha         ``{port}``: the TCP port to listen on (127.0.0.1)
gobang                ``{fifo_dir}``: the FIFO directory to use
velha                 ``{address}`` (bind here), ``{announce}`` (the checker's
                      address), ``{port}`` (the UDP port); the peer must accept
                      invitations by itself and invite ``vinvite``
socha-player          ``{port}``: the server to join (the command is started
                      once for the game the checks play)
====================  =====================================================

This command is a thin front end over the grading library: it reads the
class and the options into plain values (``GradeSettings``), and runs a
``classrun.ClassRun`` on a reactor, printing what its events say.
Submissions are graded ``--workers`` at a time on this machine, or on a Dask
cluster (``--scheduler``, the league's: ``engines``), each in a process of
its own (``one``). For each submission the program is started in its sandbox (``velhanet.sandbox``:
it sees its own folder as a private copy and nothing of its classmates', reaches
only the checker, and is held to the ``--limit-*`` limits), the family's checks
run against it from inside its network, the program is stopped, and its report
is written to ``--out`` as an HTML page, JSON and JUnit XML, with everything the
program printed (``STUDENT.log``, up to the output limit); at the end a table
with one line per student, and ``index.html``: the class, students × rules
(``classpage``; the files are written by ``records``). A program that breaks a limit fails, with the cause
(``killed: more than 64 processes``). A program that ends before it could be
tested (a command not found, a crash at start) is "cannot test" with its exit
status and the last line it printed. Every grading is recorded in
``grades.db`` in the output folder (``history``): a version already graded is
shown again, not run (``--again`` runs it), and each student's line says what
changed since their previous version (``fixed: …; broke: …``);
``velhanet-grade history OUT STUDENT`` lists a student's versions. ``--csv``
writes the class for a gradebook (``gradebook``). The exit status is 0 when
every program could be tested and passed, 1 otherwise (130: interrupted).
Everything is in the language of ``--language`` (or the environment's), the
reports of every grading process too, wherever it runs.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any, TextIO, cast

from twisted.internet import task
from twisted.internet.defer import Deferred
from twisted.internet.threads import deferToThread
from twisted.logger import ILogObserver, LogLevel, formatEvent, globalLogBeginner

from velhanet.checks.formats import reproduceCommand
from velhanet.checks.runner import FAMILIES, unknownRules
from velhanet.cluster.pool import NoWorkers
from velhanet.cluster.workers import DaskMissing, RunRefused, requireDask
from velhanet.grading.classrun import ClassOutcome, ClassRun
from velhanet.grading.engines import ClusterEngine, Engine, LocalEngine
from velhanet.grading.gradebook import formatTable, writeCsv
from velhanet.grading.grader import Grader
from velhanet.grading.history import History, HistoryError
from velhanet.grading.historycommand import historyCommand
from velhanet.grading.one import RUN_FILE
from velhanet.grading.records import ClassRecord
from velhanet.grading.settings import GradeSettings
from velhanet.grading.submissions import ClassFileError, Submission, fromClassFile, fromFolder, parseDeadline
from velhanet.i18n import _, current, ngettext
from velhanet.sandbox import Sandbox, SandboxUnavailable, addSandboxArguments, settingsFrom
from velhanet.sandbox.cgroups import RUN_VARIABLE
from velhanet.sandbox.limits import MIB, ProgramLimits
from velhanet.startup import ArgumentParser

CHECKER_MEMORY = 256 * MIB
"""What one grading takes beside its program: the checking process and its share of the cluster's worker."""


def defaultWorkers(limits: ProgramLimits) -> int:
    """Checks mostly wait (for the protocol's timeouts): four per processor, as many as the memory holds."""
    available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return max(1, min(4 * (os.cpu_count() or 1), available // (limits.memory + CHECKER_MEMORY)))


def parser() -> ArgumentParser:
    made = ArgumentParser(
        prog="velhanet-grade",
        description="Check every submission of a class with velhanet-check and print one line per student "
        "(velhanet-grade history OUT STUDENT: a student's graded versions).",
        epilog=f"Each submission needs a file {RUN_FILE} with the command that starts the program; "
        "see docs/conformance.md for its placeholders and the class file.",
    )
    made.add_argument("family", choices=sorted(FAMILIES), help="the protocol the programs speak, as for velhanet-check")
    made.add_argument(
        "folder",
        metavar="DIR|CLASS.toml",
        help="one subdirectory per student, or a class file naming each student's git repository or folder",
    )
    made.add_argument("--out", default="velhanet-grades", help="where the reports go (default: ./%(default)s)")
    made.add_argument("--strict", action="store_true", help="known deviations of the original programs FAIL")
    made.add_argument("--student", default="", metavar="NAME[,NAME…]", help="grade only these students (default: all)")
    made.add_argument(
        "--only",
        default="",
        metavar="RULE[,RULE…]",
        help="run only these rules, by their ids as the reports print them (default: all)",
    )
    made.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="submissions checked at once on this machine (default: four per processor, since checks mostly wait,"
        " and no more than the memory holds at --limit-memory + 256 MiB each)",
    )
    made.add_argument(
        "--scheduler",
        default=None,
        metavar="tcp://HOST:8786",
        help="grade on a running Dask cluster, the one velhanet-league uses (default: this machine)",
    )
    made.add_argument(
        "--deadline",
        default=None,
        metavar="TIME",
        help="with a class file: grade each repository's last commit before TIME (2026-12-01 23:59 in this machine's"
        " time zone, or with an offset; none: the last commit, whatever the class file says) (default: the class"
        " file's deadline, else the last commit)",
    )
    made.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run every rule N times against each program and count its verdicts (PASS 9 of 10); runs that"
        " disagree are a FAIL that says so (default: %(default)s)",
    )
    made.add_argument("--again", action="store_true", help="grade versions already graded again")
    made.add_argument(
        "--csv", default=None, metavar="FILE", help="also write the class as CSV, for a gradebook (default: none)"
    )
    addSandboxArguments(made)
    return made


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> None:
    given = sys.argv[1:] if argv is None else argv
    if given[:1] == ["history"]:
        sys.exit(historyCommand(given[1:], out))
    made = parser()
    arguments = made.parse_args(given)
    if arguments.scheduler:
        try:
            requireDask("--scheduler")
        except DaskMissing as missing:
            print(f"velhanet-grade: {missing}", file=sys.stderr)
            sys.exit(2)
    source = Path(arguments.folder)
    if not source.exists():
        made.error(_("{path}: no such folder or class file").format(path=source))
    if arguments.only:
        unknown, _anchors = unknownRules(arguments.family, arguments.only)
        if unknown:
            said = _("--only {rules}: no such rule of {family}")
            made.error(said.format(rules=", ".join(unknown), family=arguments.family))
    try:
        deadline = parseDeadline(arguments.deadline) if arguments.deadline not in (None, "none") else None
    except ValueError as error:
        made.error(f"--deadline: {error}")
    if arguments.deadline is not None and source.is_dir():
        made.error(_("--deadline needs a class file (a folder has no commits)"))
    if arguments.repeat < 1:
        made.error(_("--repeat must be 1 or more, not {n}").format(n=arguments.repeat))
    settings = GradeSettings(
        arguments.family,
        sandbox=settingsFrom(arguments),
        strict=arguments.strict,
        only=arguments.only,
        repeat=arguments.repeat,
        language=current().code,
    )
    try:
        sandbox = Sandbox.forCommand(settings.sandbox, say=lambda line: print(f"velhanet-grade: {line}", file=out))
    except SandboxUnavailable as error:
        print(f"velhanet-grade: {error}", file=sys.stderr)
        sys.exit(1)
    print(f"velhanet-grade: {sandbox.describe()}", file=out, flush=True)
    outDir = Path(arguments.out).resolve()  # trial's runner changes directory while the checks run
    outDir.mkdir(parents=True, exist_ok=True)
    wanted = {name.strip() for name in arguments.student.split(",") if name.strip()}
    try:
        if source.is_dir():
            submissions = fromFolder(source.resolve(), wanted)
        else:
            say = lambda line: print(f"velhanet-grade: {line}", file=out, flush=True)  # noqa: E731
            fileDeadline = arguments.deadline is None
            submissions = fromClassFile(source.resolve(), outDir, wanted, deadline, say, fileDeadline)
    except ClassFileError as error:
        made.error(str(error))
    if wanted - {s.student for s in submissions}:
        names = ", ".join(sorted(wanted - {s.student for s in submissions}))
        made.error(_("--student {names}: no such student").format(names=names))
    try:
        history = History(outDir / "grades.db")
    except HistoryError as error:
        made.error(str(error))

    def again(submission: Submission, rules: str) -> str:
        more = ("--student", submission.student, "--again", "--out", f"{outDir}-again")
        return reproduceCommand(given, rules, "velhanet-grade", more)

    record = ClassRecord(arguments.family, outDir, history, settings.key(), again)
    workers = arguments.workers or defaultWorkers(settings.sandbox.limits)
    oneAtATime = arguments.family == "velha" and not sandbox.active
    if oneAtATime:  # on a cluster too: its workers would run the peers side by side
        alone = _("velha without a sandbox: one at a time (the peers and their checkers would share a network)")
        print(f"velhanet-grade: {alone}", file=out)
    os.environ[RUN_VARIABLE] = str(os.getpid())  # the graders' control groups are named after this command
    front = FrontEnd(out, arguments.scheduler or "", workers, oneAtATime)
    status = front.run(settings, record, submissions, arguments.again)
    history.close()
    if front.outcome is not None:
        print(formatTable(front.outcome.lines), file=out)
        if arguments.csv:
            writeCsv(Path(arguments.csv), front.outcome.lines)
        said = _(
            "reports in {folder}/: index.html (the class, students × rules); per student an HTML page, a JSON and a"
            " JUnit XML report, and the program's output; grades.db: every version graded"
        )
        print(said.format(folder=outDir), file=out)
    if front.outcome is not None and front.outcome.interrupted:
        left = len(submissions) - len(front.outcome.lines)
        said = ngettext(
            "interrupted: {n} submission not graded; the same command goes on (what is graded is kept)",
            "interrupted: {n} submissions not graded; the same command goes on (what is graded is kept)",
            left,
        )
        print(said.format(n=left), file=out)
    sys.exit(status)


class FrontEnd:
    """The command's side of a class run: the reactor, the engine, Ctrl-C, and the lines its events say."""

    def __init__(self, out: TextIO, scheduler: str, workers: int, oneAtATime: bool) -> None:
        self.out, self.scheduler, self.workers, self.oneAtATime = out, scheduler, workers, oneAtATime
        self.progressTo: TextIO = sys.stderr
        self.outcome: ClassOutcome | None = None
        self.status = 1

    def run(self, settings: GradeSettings, record: ClassRecord, submissions: list[Submission], again: bool) -> int:
        """Grade the class on a reactor of its own; the exit status (0 every student passed, 1 otherwise, 130
        interrupted)."""
        globalLogBeginner.beginLoggingTo([cast(ILogObserver, self.observe)], redirectStandardIO=False)

        async def grading(reactor: Any) -> None:
            self.status = await self._grade(reactor, settings, record, submissions, again)

        try:
            task.react(lambda reactor: Deferred.fromCoroutine(grading(reactor)))
        except SystemExit as ended:
            if ended.code not in (0, None):
                return int(ended.code) if isinstance(ended.code, int) else 1
        return self.status

    async def _grade(
        self, reactor: Any, settings: GradeSettings, record: ClassRecord, submissions: list[Submission], again: bool
    ) -> int:
        engine: Engine = LocalEngine(reactor, self.workers)
        if self.scheduler:
            try:
                client = await deferToThread(_client, self.scheduler)
            except OSError as error:
                said = _("the cluster cannot be reached: {error}").format(error=error)
                print(f"velhanet-grade: {said}", file=sys.stderr)
                return 1
            engine = ClusterEngine(reactor, client, where=self.scheduler)
        grader = Grader(settings, engine, atOnce=1 if self.oneAtATime else (0 if self.scheduler else self.workers))
        run = ClassRun(grader, record, reactor, again)
        reactor.callWhenRunning(signal.signal, signal.SIGINT, lambda *_: reactor.callFromThread(run.stop))
        try:
            self.outcome = await run.grade(submissions)
        except RunRefused as error:
            print(f"velhanet-grade: {error}", file=sys.stderr)
            return 1
        except NoWorkers as gone:
            left = run.total - run.done
            said = ngettext(
                "no worker for {seconds:.0f} s, {n} submission not graded: the cluster lost its workers"
                " (see its log); start workers and run again: what is graded is kept",
                "no worker for {seconds:.0f} s, {n} submissions not graded: the cluster lost its workers"
                " (see its log); start workers and run again: what is graded is kept",
                left,
            ).format(seconds=gone.seconds, n=left)
            print(f"velhanet-grade: {said}", file=sys.stderr)
            return 1
        finally:
            if self.progressTo.isatty():
                print("", file=self.progressTo, flush=True)  # the line redrawn ends
            await engine.close()
        if self.outcome.interrupted:
            return 130
        return 0 if self.outcome.passed(submissions) else 1

    def observe(self, event: dict[str, Any]) -> None:
        """The class run's events as the lines a teacher reads; a failure logged anywhere on stderr."""
        if event.get("log_namespace") == ClassRun.log.namespace:
            if "starting" in event:
                self.started(event["starting"], event["total"])
            elif "done" in event:
                self.progress(event)
            return
        if event.get("log_level") in (LogLevel.error, LogLevel.critical):
            print(f"velhanet-grade: {formatEvent(event)}", file=sys.stderr, flush=True)

    def started(self, count: int, total: int) -> None:
        counts = {"n": count, "total": total, "atOnce": 1 if self.oneAtATime else min(self.workers, count)}
        if self.scheduler:
            said = _("grading {n} of {total} on {scheduler}").format(scheduler=self.scheduler, **counts)
            said += _(", one at a time") if self.oneAtATime else ""
        else:
            said = _("grading {n} of {total} on this machine, {atOnce} at a time").format(**counts)
        print(f"velhanet-grade: {said}", file=self.out, flush=True)

    def progress(self, event: dict[str, Any]) -> None:
        left = event["left"]
        if left is None:
            estimate = _("left: after the first")
        elif left < 120:  # a small class: "~0 min" would say nothing
            estimate = _("left ~{seconds:.0f} s").format(seconds=left)
        else:
            estimate = _("left ~{minutes:.0f} min").format(minutes=left / 60)
        said = _("graded {done}/{total}  running {running}  {estimate}  workers {workers}").format(
            done=event["done"],
            total=event["total"],
            running=event["running"],
            estimate=estimate,
            workers=event["workers"],
        )
        if self.progressTo.isatty():  # one line, redrawn
            print(f"\r{said}   ", end="", file=self.progressTo, flush=True)
        else:  # a log file: a line each
            print(said, file=self.progressTo, flush=True)


def _client(scheduler: str) -> Any:
    """A Dask client of the running cluster at ``scheduler`` (blocking: from a thread)."""
    from distributed import Client

    return Client(scheduler, timeout="30s")


if __name__ == "__main__":
    main()
