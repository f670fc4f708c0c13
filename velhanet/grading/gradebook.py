"""The class's results as a teacher reads them: the table on the console, and a CSV for a gradebook.

One L{ClassLine} per student: the submission graded (or why none could be),
its report, and what changed since the student's previous graded version. The
CSV has a header row and one row per student, the columns a learning
platform's grade import maps (docs/conformance.md says how for Moodle and
Canvas): the student's name and the class file's ``id``, the version, the
counts, a ``score`` (the percentage of the rules that ran and did not fail),
the verdict and the failed rules' ids.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from velhanet.checks.base import FAIL, NOT_RUN, PASS, SKIP, WARN
from velhanet.checks.runner import Report
from velhanet.grading.grader import Graded
from velhanet.grading.submissions import Submission
from velhanet.i18n import _

# The CSV's header row is what a learning platform's import maps (Moodle, Canvas): its column names stay as
# they are, in English, whatever language velhanet speaks; the values that are sentences (the verdict's reason,
# the change) are in the run's language.
CSV_COLUMNS = [
    "student",
    "id",
    "version",
    "source",
    "committed",
    "passed",
    "failed",
    "warned",
    "skipped",
    "not_run",
    "score",
    "verdict",
    "failed_rules",
    "change",
    "counts",
]


@dataclass
class ClassLine:
    submission: Submission
    report: Report
    change: str = ""
    """What changed since the student's previous graded version (``fixed: …; broke: …``), or why nothing."""
    graded: Graded | None = None
    """Where and when it was graded, when it was in this run."""

    @property
    def student(self) -> str:
        return self.submission.student

    def verdict(self) -> str:
        report = self.report
        verdict = "fail" if report.count(FAIL) else "pass"
        program = report.program
        if report.cannotTest:
            verdict = _("cannot test: {reason}").format(reason=report.cannotTest)
        if program is not None and program.brokeALimit:
            verdict = f"fail: {program.cause}"
        notes = program.notes() if program is not None else []
        if notes:
            verdict += f" ({'; '.join(notes)})"
        return verdict

    def version(self) -> str:
        submission = self.submission
        if not submission.version:
            return "-"
        if submission.source == "git":
            return f"git {submission.version[:8]}"
        return _("dir {version}").format(version=submission.version[:8])

    def score(self) -> float:
        """Percent of the rules that ran and did not FAIL (0 when nothing could be tested)."""
        report = self.report
        ran = report.count(PASS) + report.count(WARN) + report.count(FAIL)
        if report.cannotTest or not ran:
            return 0.0
        return round(100 * (ran - report.count(FAIL)) / ran, 1)

    def row(self) -> list[str]:
        counts = [str(self.report.count(status)) for status in (PASS, FAIL, WARN, SKIP, NOT_RUN)]
        return [self.student, self.version(), *counts, self.verdict()]

    def told(self) -> str:
        """The line under the student's row: the commit graded (and later ones), what changed."""
        submission = self.submission
        parts = [submission.describe()] if submission.source == "git" and submission.version else []
        return "; ".join([*parts, self.change] if self.change else parts)

    def failedRules(self) -> list[str]:
        return [o.anchor or o.testId for o in self.report.outcomes if o.status == FAIL]

    def counts(self) -> str:
        """The failed rules seen more than once, with how often they were kept: ``gambit-join: kept 12 of 13``
        (a racy program: the count is what to defend a grade with)."""
        return "; ".join(
            f"{o.anchor}: {o.countsText()}" for o in self.report.outcomes if o.status == FAIL and o.countsText()
        )

    @property
    def passed(self) -> bool:
        return not self.report.cannotTest and not self.report.count(FAIL) and not self.report.brokeALimit


def formatTable(lines: list[ClassLine]) -> str:
    """One row per student, and under it what changed since the student's previous version (the verdicts'
    columns are named by the verdict tokens, not translated, as PASS and FAIL are not)."""
    header = [_("student"), _("version"), "pass", "fail", "warn", "skip", "not run", _("verdict")]
    rows = [header, *(line.row() for line in lines)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header) - 1)]
    text = []
    for number, row in enumerate(rows):
        cells = [cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=True)]
        text.append("  ".join([*cells, row[-1]]))
        told = lines[number - 1].told() if number else ""
        if told:
            text.append(" " * (widths[0] + 2) + told)
    return "\n".join(text)


def writeCsv(path: Path, lines: list[ClassLine]) -> None:
    path.write_text(csvText(lines), encoding="utf-8", newline="")


def csvText(lines: list[ClassLine]) -> str:
    """The class for a gradebook: the header row, then a row per student."""
    stream = io.StringIO(newline="")
    writer = csv.writer(stream)
    writer.writerow(CSV_COLUMNS)
    for line in lines:
        report, submission = line.report, line.submission
        writer.writerow(
            [
                line.student,
                submission.identifier,
                submission.version,
                submission.source,
                submission.committed,
                report.count(PASS),
                report.count(FAIL),
                report.count(WARN),
                report.count(SKIP),
                report.count(NOT_RUN),
                line.score(),
                line.verdict(),
                " ".join(line.failedRules()),
                line.change,
                line.counts(),
            ]
        )
    return stream.getvalue()
