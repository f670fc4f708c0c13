"""What a class's grading keeps: each student's reports in the output folder, and every grading in the history.

A L{ClassRecord} is told of each submission as it is settled: graded now
(``finished``: recorded in ``grades.db`` with what changed since the
student's previous version, and written), graded before with the same
settings (``already``: its line from the history, nothing run), or with
nothing to grade (``nothingToGrade``: a class file's student without a
commit, a folder without ``velhanet-run``). For each student it writes the
JSON, JUnit XML and HTML reports and what the program printed; at the end
``index.html``, the class at a glance (``classpage``). It prints nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from velhanet.checks.formats import jsonReport, junitXml
from velhanet.checks.outcome import Report
from velhanet.checks.page import htmlReport
from velhanet.grading.classpage import classPage
from velhanet.grading.gradebook import ClassLine
from velhanet.grading.grader import Graded
from velhanet.grading.history import History, changeLine, statusesOf
from velhanet.grading.submissions import Submission
from velhanet.i18n import _, ngettext

PAGE_OUTPUT = 64 * 1024
"""Bytes of what a program printed that its page shows (the end; the whole is ``STUDENT.log`` beside it)."""

AgainCommand = Callable[[Submission, str], str]
"""The command that runs the rules ``RULES`` (comma-separated) again against a submission's program."""


class ClassRecord:
    """One grading of a class: its history, its output folder, and each student's line so far."""

    def __init__(
        self,
        family: str,
        outDir: Path,
        history: History,
        settings: str,
        again: AgainCommand | None = None,
        now: Callable[[], datetime] = lambda: datetime.now().astimezone(),
    ) -> None:
        """``settings``: what verdicts depend on (``GradeSettings.key``); ``again``: the command printed under
        each rule (None: none)."""
        self.family, self.outDir, self.history, self.settings = family, outDir, history, settings
        self.again, self.now = again, now
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
        if self.again is None:
            return
        for outcome in report.outcomes:
            outcome.reproduce = self.again(submission, outcome.againRules())

    def nothingToGrade(self, submission: Submission) -> None:
        report = Report(self.family, submission.student, cannotTest=submission.problem)
        self.lines[submission.student] = ClassLine(submission, report)
        self.write(self.lines[submission.student], None)

    def finished(self, submission: Submission, graded: Graded) -> ClassLine:
        """A result came back: recorded in the history, told against the previous version, written."""
        report = graded.report
        self.reproducible(submission, report)
        line = ClassLine(submission, report, graded=graded)
        previous = self.history.previous(submission.student, self.family, self.settings, submission.version)
        line.change = changeLine(previous, statusesOf(report), line.verdict())
        self.history.record(submission, self.family, self.settings, report, line.verdict(), line.change, self.now())
        self.lines[submission.student] = line
        self.write(line, graded.printed)
        return line

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

    def classPage(self, submissions: list[Submission]) -> list[ClassLine]:
        """``index.html``: every student settled so far, in the class's order; their lines."""
        lines = [self.lines[s.student] for s in submissions if s.student in self.lines]
        page = classPage(self.family, [(line.student, line.report) for line in lines])
        (self.outDir / "index.html").write_text(page, encoding="utf-8")
        return lines
