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

Submissions are graded ``--workers`` at a time on this machine, or on a Dask
cluster (``--scheduler``, the league's: ``graderun``), each in a process of
its own (``gradeone``). For each submission the program is started in its sandbox (``velhanet.sandbox``:
it sees its own folder as a private copy and nothing of its classmates', reaches
only the checker, and is held to the ``--limit-*`` limits), the family's checks
run against it from inside its network, the program is stopped, and its report
is written to ``--out`` as an HTML page, JSON and JUnit XML, with everything the
program printed (``STUDENT.log``, up to the output limit); at the end a table
with one line per student, and ``index.html``: the class, students × rules
(``classpage``). A program that breaks a limit fails, with the cause
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

import argparse
import json
import os
import signal
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from velhanet.cluster.local import LocalEngine
from velhanet.cluster.pool import DaskEngine
from velhanet.cluster.workers import DaskMissing, RunRefused, connect, requireDask
from velhanet.conformance.classpage import classPage
from velhanet.conformance.gradebook import ClassLine, formatTable, writeCsv
from velhanet.conformance.gradeone import RUN_FILE
from velhanet.conformance.graderun import Graded, GradeRun
from velhanet.conformance.history import History, HistoryError, changeLine, statusesOf
from velhanet.conformance.historycommand import historyCommand
from velhanet.conformance.htmlreport import htmlReport
from velhanet.conformance.reportformats import jsonReport, junitXml, reproduceCommand
from velhanet.conformance.runner import FAMILIES, Report, checksOf, ruleOf
from velhanet.i18n import _, ngettext
from velhanet.sandbox import Sandbox, SandboxUnavailable, addSandboxArguments, settingsFrom
from velhanet.sandbox.cgroups import RUN_VARIABLE
from velhanet.sandbox.limits import MIB, ProgramLimits, SandboxSettings
from velhanet.startup import ArgumentParser
from velhanet.submissions import ClassFileError, Submission, fromClassFile, fromFolder, parseDeadline

PAGE_OUTPUT = 64 * 1024
"""Bytes of what a program printed that its page shows (the end; the whole is ``STUDENT.log`` beside it)."""
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


def settingsKey(family: str, strict: bool, only: str, settings: object, repeat: int = 1) -> str:
    """What a verdict depends on besides the program: a version graded with other settings is graded again
    (``repeat`` only when it is not 1, so that a history kept before ``--repeat`` existed still holds)."""
    key: dict[str, object] = {"family": family, "strict": strict, "only": only, "sandbox": repr(settings)}
    if repeat != 1:
        key["repeat"] = repeat
    return json.dumps(key, sort_keys=True)


class ClassGrading:
    """One run of the command: the submissions, the history, and the files it writes for each student."""

    def __init__(self, family: str, given: list[str], outDir: Path, history: History, settings: str) -> None:
        self.family, self.given, self.outDir, self.history, self.settings = family, given, outDir, history, settings
        self.lines: dict[str, ClassLine] = {}

    def already(self, submission: Submission) -> bool:
        """A version graded before with the same settings: its line from the history, nothing run."""
        earlier = self.history.sameVersion(submission.student, self.family, self.settings, submission.version)
        if earlier is None:
            return False
        graded, report = earlier
        change = _("unchanged since {day} (same version)").format(day=graded.day)
        if graded.change:
            change += _("; when it was graded: {change}").format(change=graded.change)
        self.reproducible(submission, report)
        self.lines[submission.student] = ClassLine(submission, report, change)
        self.write(self.lines[submission.student], None, fresh=False)
        return True

    def reproducible(self, submission: Submission, report: Report) -> None:
        """Each rule's command that runs it again against this student's program."""
        again = ("--student", submission.student, "--again", "--out", f"{self.outDir}-again")
        for outcome in report.outcomes:
            outcome.reproduce = reproduceCommand(self.given, outcome.againRules(), "velhanet-grade", again)

    def nothingToGrade(self, submission: Submission) -> None:
        report = Report(self.family, submission.student, cannotTest=submission.problem)
        self.lines[submission.student] = ClassLine(submission, report)
        self.write(self.lines[submission.student], None)

    def finished(self, submission: Submission, graded: Graded) -> None:
        """A result came back: recorded in the history, told against the previous version, written."""
        report = graded.report
        self.reproducible(submission, report)
        line = ClassLine(submission, report, graded=graded)
        previous = self.history.previous(submission.student, self.family, self.settings, submission.version)
        line.change = changeLine(previous, statusesOf(report), line.verdict())
        now = datetime.now().astimezone()
        self.history.record(submission, self.family, self.settings, report, line.verdict(), line.change, now)
        self.lines[submission.student] = line
        self.write(line, graded.printed)

    def write(self, line: ClassLine, printed: bytes | None, fresh: bool = True) -> None:
        """The student's JSON, JUnit and HTML reports, and what the program printed (None: it never started;
        a version graded before keeps its log, ``fresh`` False)."""
        student, report, submission = line.student, line.report, line.submission
        log = self.outDir / f"{student}.log"
        if printed is not None:
            log.write_bytes(printed)
        elif fresh:  # no log of an older version beside this one's report
            log.unlink(missing_ok=True)
        data = json.loads(jsonReport(report))
        data["submission"] = {
            "version": submission.version or None,
            "source": submission.source,
            "committed": submission.committed or None,
            "laterCommits": submission.laterCommits,
            "described": submission.describe() if submission.version else None,
        }
        data["change"] = line.change or None
        if line.graded is not None:
            data["grading"] = {"worker": line.graded.worker, "began": line.graded.began, "ended": line.graded.ended}
        (self.outDir / f"{student}.json").write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
        (self.outDir / f"{student}.xml").write_bytes(junitXml(report))
        shown = log.read_bytes()[-PAGE_OUTPUT:].decode("utf-8", "replace") if log.exists() else ""
        if log.exists() and log.stat().st_size > PAGE_OUTPUT:
            size = log.stat().st_size
            cut = ngettext(
                "… the last {kib} KiB of {file} ({n} byte) …", "… the last {kib} KiB of {file} ({n} bytes) …", size
            ).format(kib=PAGE_OUTPUT // 1024, file=log.name, n=size)
            shown = f"{cut}\n{shown}"
        facts = [(_("version"), submission.describe())] if submission.version else []
        facts += [(_("since the last version"), line.change)] if line.change else []
        (self.outDir / f"{student}.html").write_text(htmlReport(report, shown, facts), encoding="utf-8")


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
        anchors = [ruleOf(test)[1] for test in checksOf(arguments.family)]
        unknown = [wanted.strip() for wanted in arguments.only.split(",") if wanted.strip() not in anchors]
        if unknown:
            said = _("--only {rules}: no such rule of {family}")
            made.error(said.format(rules=", ".join(unknown), family=arguments.family))
    try:
        deadline = parseDeadline(arguments.deadline) if arguments.deadline not in (None, "none") else None
    except ValueError as error:
        made.error(f"--deadline: {error}")
    if arguments.deadline is not None and source.is_dir():
        made.error(_("--deadline needs a class file (a folder has no commits)"))
    settings = settingsFrom(arguments)
    try:
        sandbox = Sandbox.forCommand(settings, say=lambda line: print(f"velhanet-grade: {line}", file=out))
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
        records = History(outDir / "grades.db")
    except HistoryError as error:
        made.error(str(error))
    if arguments.repeat < 1:
        made.error(_("--repeat must be 1 or more, not {n}").format(n=arguments.repeat))
    options = ["--strict"] if arguments.strict else []
    options += ["--repeat", str(arguments.repeat)] if arguments.repeat != 1 else []
    key = settingsKey(arguments.family, arguments.strict, arguments.only, settings, arguments.repeat)
    grading = ClassGrading(arguments.family, given, outDir, records, key)
    toGrade = []
    for index, submission in enumerate(submissions):
        if submission.problem:
            grading.nothingToGrade(submission)
        elif arguments.again or not grading.already(submission):
            toGrade.append((index, submission))
    workers = arguments.workers or defaultWorkers(settings.limits)
    oneAtATime = arguments.family == "velha" and not sandbox.active
    if oneAtATime:  # on a cluster too: its workers would run the peers side by side
        alone = _("velha without a sandbox: one at a time (the peers and their checkers would share a network)")
        print(f"velhanet-grade: {alone}", file=out)
        workers = 1
    interrupted = False
    if toGrade:
        os.environ[RUN_VARIABLE] = str(os.getpid())  # the graders' control groups are named after this command
        counts = {"n": len(toGrade), "total": len(submissions), "atOnce": min(workers, len(toGrade))}
        if arguments.scheduler:
            said = _("grading {n} of {total} on {scheduler}").format(scheduler=arguments.scheduler, **counts)
            said += _(", one at a time") if oneAtATime else ""
        else:
            said = _("grading {n} of {total} on this machine, {atOnce} at a time").format(**counts)
        print(f"velhanet-grade: {said}", file=out, flush=True)
        atOnce = min(workers, len(toGrade))
        interrupted = gradeOnCluster(arguments, atOnce, settings, options, toGrade, grading, oneAtATime)
    lines = [grading.lines[s.student] for s in submissions if s.student in grading.lines]
    records.close()
    (outDir / "index.html").write_text(
        classPage(arguments.family, [(line.student, line.report) for line in lines]), encoding="utf-8"
    )
    print(formatTable(lines), file=out)
    if arguments.csv:
        writeCsv(Path(arguments.csv), lines)
    said = _(
        "reports in {folder}/: index.html (the class, students × rules); per student an HTML page, a JSON and a"
        " JUnit XML report, and the program's output; grades.db: every version graded"
    )
    print(said.format(folder=outDir), file=out)
    if interrupted:
        left = len(submissions) - len(lines)
        said = ngettext(
            "interrupted: {n} submission not graded; the same command goes on (what is graded is kept)",
            "interrupted: {n} submissions not graded; the same command goes on (what is graded is kept)",
            left,
        )
        print(said.format(n=left))
        sys.exit(130)
    sys.exit(0 if all(line.passed for line in lines) and len(lines) == len(submissions) else 1)


def gradeOnCluster(
    arguments: argparse.Namespace,
    workers: int,
    settings: SandboxSettings,
    options: list[str],
    toGrade: list[tuple[int, Submission]],
    grading: ClassGrading,
    oneAtATime: bool = False,
) -> bool:
    """Grade ``toGrade`` on a cluster (``--scheduler``) or on this machine, ``workers`` at once; True if interrupted."""
    engine: Any = LocalEngine(workers)
    if arguments.scheduler:
        try:
            engine = DaskEngine(*connect(arguments.scheduler, workers))
        except OSError as error:
            print("velhanet-grade: " + _("the cluster cannot be reached: {error}").format(error=error), file=sys.stderr)
            sys.exit(1)
    run = GradeRun(arguments.family, engine, settings, options, arguments.only, atOnce=1 if oneAtATime else 0)
    previous = signal.signal(signal.SIGINT, lambda *_: run.stop())
    try:
        run.grade(toGrade, grading.finished)
    except RunRefused as error:
        print(f"velhanet-grade: {error}", file=sys.stderr)
        sys.exit(1)
    finally:
        signal.signal(signal.SIGINT, previous)
        engine.close()
    return run.interrupted


if __name__ == "__main__":
    main()
