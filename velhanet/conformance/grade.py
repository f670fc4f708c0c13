"""``velhanet-grade FAMILY DIR``: check a whole class's programs, one after the other, and tabulate.

Every subdirectory of DIR is one student's submission. Its file ``velhanet-run``
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

For each submission the program is started in its sandbox (``velhanet.sandbox``:
it sees its own folder as a private copy and nothing of its classmates', reaches
only the checker, and is held to the ``--limit-*`` limits), the family's checks
run against it from inside its network, the program is stopped, and its report
is written to ``--out`` as an HTML page, JSON and JUnit XML, with everything the
program printed (``STUDENT.log``, up to the output limit); at the end a table
with one line per student, and ``index.html``: the class, students × rules
(``classpage``). A program that breaks a limit fails, with the cause
(``killed: more than 64 processes``). A program that ends before it could be
tested (a command not found, a crash at start) is "cannot test" with its exit
status and the last line it printed. The exit status is 0 when every program
could be tested and passed, 1 otherwise.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from velhanet.conformance import velha
from velhanet.conformance.base import FAIL, NOT_RUN, PASS, SKIP, WARN, Target
from velhanet.conformance.classpage import classPage
from velhanet.conformance.htmlreport import htmlReport
from velhanet.conformance.report import jsonReport, junitXml, parseArguments, reproduceCommand, targetFrom
from velhanet.conformance.runner import FAMILIES, Report, checksOf, ruleOf, runChecks
from velhanet.listening import freePort
from velhanet.sandbox import Sandbox, SandboxUnavailable, addSandboxArguments, settingsFrom
from velhanet.sandbox.bench import enterBench
from velhanet.sandbox.blocking import BlockingProgram, SandboxStartFailed
from velhanet.startup import ArgumentParser

RUN_FILE = "velhanet-run"
PAGE_OUTPUT = 64 * 1024
"""Bytes of what a program printed that its page shows (the end; the whole is ``STUDENT.log`` beside it)."""
START_WAIT = 10.0


@dataclass
class Graded:
    student: str
    report: Report

    def row(self) -> list[str]:
        report = self.report
        counts = [str(report.count(status)) for status in (PASS, FAIL, WARN, SKIP, NOT_RUN)]
        verdict = "fail" if report.count(FAIL) else "pass"
        program = report.program
        if program is not None and program.brokeALimit:
            verdict = f"fail: {program.cause}"
        if report.cannotTest:
            verdict = f"cannot test: {report.cannotTest}"
            if program is not None and program.brokeALimit:
                verdict = f"fail: {program.cause}"
        notes = program.notes() if program is not None else []
        if notes:
            verdict += f" ({'; '.join(notes)})"
        return [self.student, *counts, verdict]


def _waitForTcp(port: int, program: BlockingProgram) -> None:
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline and program.poll() is None and not program.brokeALimit:
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        time.sleep(0.1)


def _waitForFifo(directory: Path, program: BlockingProgram) -> int:
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline and program.poll() is None and not program.brokeALimit:
        for path in directory.iterdir():
            if path.name.startswith("gbs") and path.name[4:].isdigit():
                return int(path.name[4:])
        time.sleep(0.1)
    return 0


def _waitForPeer(chosen: Target, program: BlockingProgram) -> None:
    """Until something listens on the peer's UDP port (or the wait is over: canTest then says so)."""
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline and program.poll() is None and velha.canTest(chosen) is not None:
        time.sleep(0.2)


def _exitedEarly(family: str, submission: Path, program: BlockingProgram, log: Path | None) -> Report | None:
    """A program that ended (or was stopped) before it could be tested: the report says so."""
    status = program.poll()
    if status is None and not program.brokeALimit:
        return None
    report = Report(family, str(submission))
    if program.brokeALimit:
        report.cannotTest = "the program was stopped before it could be tested"
        return report
    said = ""
    if log is not None:
        with contextlib.suppress(OSError):
            lines = log.read_bytes()[-4096:].decode("utf-8", "replace").strip().splitlines()
            said = lines[-1].strip() if lines else ""
    report.cannotTest = f"the program exited with status {status} before it could be tested" + (
        f": {said}" if said else ""
    )
    return report


def gradeOne(
    family: str,
    submission: Path,
    index: int,
    options: list[str],
    log: Path | None = None,
    sandbox: Sandbox | None = None,
    only: str = "",
) -> Report:
    """Start one submission (in its sandbox), check it from inside its network, stop it; its output goes to ``log``."""
    sandbox = sandbox or Sandbox.forCommand(settingsFrom(parseArguments(["gambit"])), say=lambda line: None)
    runFile = submission / RUN_FILE
    if not runFile.exists():
        report = Report(family, str(submission))
        report.cannotTest = f"no {RUN_FILE} file in {submission}"
        return report
    template = runFile.read_text(encoding="utf-8").strip()
    values = {"port": "", "fifo_dir": "", "address": "", "announce": ""}
    arguments: list[str] = []
    shared: list[Path] = []
    if family in ("gambit", "socha"):
        values["port"] = str(freePort())
        arguments = ["--target", f"127.0.0.1:{values['port']}"]
    elif family == "gobang":
        values["fifo_dir"] = tempfile.mkdtemp(prefix="velhanet-grade-")
        shared.append(Path(values["fifo_dir"]))
    elif family == "velha":
        net = f"127.0.{100 + index % 100}"
        values.update(address=f"{net}.2", announce=f"{net}.1", port=str(freePort(socket.SOCK_DGRAM)))
        arguments = ["--target", values["address"], "--local", values["announce"], "--local2", f"{net}.3"]
        arguments += ["--local3", f"{net}.4", "--port", values["port"], "--expect-invite"]
    if family == "socha-player":
        chosen = targetFrom(parseArguments([family, "--command", template, *options]))
        chosen.extra.update(cwd=str(submission), folder=submission, sandbox=sandbox, log=log)
        report = runChecks(family, chosen, only)
        report.program = chosen.extra.get("verdict")
        return report
    command = template
    for name, value in values.items():
        command = command.replace("{" + name + "}", value)
    try:
        program = BlockingProgram(sandbox, ["/bin/sh", "-c", command], folder=submission, shared=shared, output=log)
    except SandboxStartFailed as error:
        report = Report(family, str(submission))
        report.cannotTest = str(error)
        return report
    checked: Report | None = None
    try:
        with program.network():
            if family == "gobang":
                pid = _waitForFifo(Path(values["fifo_dir"]), program)
                arguments = ["--target", str(pid), "--fifo-dir", values["fifo_dir"], "--destructive"]
            elif family != "velha":
                _waitForTcp(int(values["port"]), program)
            chosen = targetFrom(parseArguments([family, *arguments, *options]))
            if family == "gobang":
                chosen.extra.update(hostPid=program.hostPid(chosen.pid), agentPrefix=program.inPidNamespace())
            if family == "velha":
                _waitForPeer(chosen, program)
            checked = _exitedEarly(family, submission, program, log)
            if checked is None:
                checked = runChecks(family, chosen, only)
                checked.target = f"{submission.name}: {checked.target}"
    finally:
        verdict = program.stop()
    checked.program = verdict
    return checked


def formatTable(graded: list[Graded]) -> str:
    header = ["student", "pass", "fail", "warn", "skip", "not run", "verdict"]
    rows = [header, *(g.row() for g in graded)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header) - 1)]
    lines = []
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=True)]
        lines.append("  ".join([*cells, row[-1]]))
    return "\n".join(lines)


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> None:
    parser = ArgumentParser(
        prog="velhanet-grade",
        description="Check every submission in a folder with velhanet-check and print one line per student.",
        epilog=f"Each subdirectory of DIR needs a file {RUN_FILE} with the command that starts the program; "
        "see docs/conformance.md for its placeholders.",
    )
    parser.add_argument(
        "family", choices=sorted(FAMILIES), help="the protocol the programs speak, as for velhanet-check"
    )
    parser.add_argument("folder", metavar="DIR", help="one subdirectory per student")
    parser.add_argument("--out", default="velhanet-grades", help="where the reports go (default: ./%(default)s)")
    parser.add_argument("--strict", action="store_true", help="known deviations of the original programs FAIL")
    parser.add_argument(
        "--student", default="", metavar="NAME[,NAME…]", help="grade only these students' folders (default: all)"
    )
    parser.add_argument(
        "--only",
        default="",
        metavar="RULE[,RULE…]",
        help="run only these rules, by their ids as the reports print them (default: all)",
    )
    addSandboxArguments(parser)
    given = sys.argv[1:] if argv is None else argv
    arguments = parser.parse_args(given)
    if not Path(arguments.folder).is_dir():
        parser.error(f"{arguments.folder} is not a directory")
    if arguments.only:
        anchors = [ruleOf(test)[1] for test in checksOf(arguments.family)]
        unknown = [wanted.strip() for wanted in arguments.only.split(",") if wanted.strip() not in anchors]
        if unknown:
            parser.error(f"--only {', '.join(unknown)}: no such rule of {arguments.family}")
    options = ["--strict"] if arguments.strict else []
    if arguments.sandbox != "off":
        enterBench(privateNetwork=True)  # before any thread; the checks run inside each program's network
    try:
        sandbox = Sandbox.forCommand(settingsFrom(arguments), say=lambda line: print(f"velhanet-grade: {line}"))
    except SandboxUnavailable as error:
        print(f"velhanet-grade: {error}", file=sys.stderr)
        sys.exit(1)
    print(f"velhanet-grade: {sandbox.describe()}", file=out, flush=True)
    outDir = Path(arguments.out).resolve()  # trial's runner changes directory while the checks run
    outDir.mkdir(parents=True, exist_ok=True)
    graded = []
    wanted = {name.strip() for name in arguments.student.split(",") if name.strip()}
    submissions = sorted(
        path
        for path in Path(arguments.folder).resolve().iterdir()
        if path.is_dir() and (not wanted or path.name in wanted)
    )
    if wanted - {path.name for path in submissions}:
        parser.error(f"--student {', '.join(sorted(wanted - {p.name for p in submissions}))}: no such folder")
    for index, submission in enumerate(submissions):
        print(f"checking {submission.name} ...", file=out, flush=True)
        log = outDir / f"{submission.name}.log"
        report = gradeOne(arguments.family, submission, index, options, log, sandbox, arguments.only)
        for outcome in report.outcomes:
            outcome.reproduce = reproduceCommand(
                given, outcome.anchor, "velhanet-grade", ("--student", submission.name, "--out", f"{outDir}-again")
            )
        graded.append(Graded(submission.name, report))
        (outDir / f"{submission.name}.json").write_text(jsonReport(report) + "\n", encoding="utf-8")
        (outDir / f"{submission.name}.xml").write_bytes(junitXml(report))
        printed = log.read_bytes()[-PAGE_OUTPUT:].decode("utf-8", "replace") if log.exists() else ""
        if log.exists() and log.stat().st_size > PAGE_OUTPUT:
            printed = f"… the last {PAGE_OUTPUT // 1024} KiB of {log.name} ({log.stat().st_size} bytes) …\n{printed}"
        (outDir / f"{submission.name}.html").write_text(htmlReport(report, printed), encoding="utf-8")
    (outDir / "index.html").write_text(
        classPage(arguments.family, [(g.student, g.report) for g in graded]), encoding="utf-8"
    )
    print(formatTable(graded), file=out)
    print(
        f"reports in {outDir}/: index.html (the class, students × rules); per student an HTML page, a JSON and a"
        " JUnit XML report, and the program's output",
        file=out,
    )
    ok = all(not g.report.cannotTest and not g.report.count(FAIL) and not g.report.brokeALimit for g in graded)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
