"""``grades.db``: every graded version of every student, and what changed from one to the next.

``velhanet-grade`` records each grading in a SQLite database in its output
folder: the student, the submission's version (the folder's hash or the
commit) and where it came from, when it was graded, with which settings (the
family, ``--strict``, ``--only``, the sandbox's limits: a verdict depends on
them), every rule's verdict with its reason, and the whole report (so that a
version already graded is shown again without running it). From two graded
versions of a student, ``changes`` says which rules the new one fixed and
which it broke. The database's ``user_version`` is its schema's: an older
file is brought up to date when opened, a newer one refused. The reasons kept
are in the language of the run that graded; what changed is told from the
rules' ids, in the language of the run that tells it.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from velhanet.checks.base import FAIL, NOT_RUN, PASS, SKIP, WARN
from velhanet.checks.data import reportFromData, reportToData
from velhanet.checks.runner import Report
from velhanet.grading.submissions import Submission
from velhanet.i18n import _

SCHEMA_VERSION = 2
"""1: the gradings and their verdicts; 2: the class server's people, sessions and hand-ins (an older file gets
the new tables, empty, when it is opened)."""
SCHEMA = """
CREATE TABLE IF NOT EXISTS gradings (
    id INTEGER PRIMARY KEY,
    student TEXT NOT NULL,
    family TEXT NOT NULL,
    settings TEXT NOT NULL,
    version TEXT NOT NULL,
    source TEXT NOT NULL,
    committed TEXT NOT NULL,
    graded TEXT NOT NULL,
    verdict TEXT NOT NULL,
    change TEXT NOT NULL,
    cannotTest INTEGER NOT NULL,
    passed INTEGER NOT NULL,
    failed INTEGER NOT NULL,
    warned INTEGER NOT NULL,
    skipped INTEGER NOT NULL,
    notRun INTEGER NOT NULL,
    report BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS byStudent ON gradings (student, family, settings, id);
CREATE TABLE IF NOT EXISTS verdicts (
    grading INTEGER NOT NULL REFERENCES gradings (id),
    rule TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS byGrading ON verdicts (grading);
CREATE TABLE IF NOT EXISTS people (
    name TEXT PRIMARY KEY,
    role TEXT NOT NULL,
    secret TEXT,
    made TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS bySecret ON people (secret);
CREATE TABLE IF NOT EXISTS sessions (
    token TEXT PRIMARY KEY,
    person TEXT NOT NULL REFERENCES people (name),
    csrf TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS handins (
    id INTEGER PRIMARY KEY,
    student TEXT NOT NULL,
    received TEXT NOT NULL,
    kind TEXT NOT NULL,
    archive TEXT NOT NULL,
    version TEXT NOT NULL,
    committed TEXT NOT NULL,
    late INTEGER NOT NULL,
    status TEXT NOT NULL,
    reason TEXT NOT NULL,
    grading INTEGER REFERENCES gradings (id),
    language TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS handinsByStudent ON handins (student, id);
CREATE INDEX IF NOT EXISTS handinsByStatus ON handins (status, id);
"""


KEPT_GRADINGS = 512
"""Gradings kept read (a class server's pages read each student's last ones again and again)."""


class HistoryError(Exception):
    """The database cannot be used (written by a newer velhanet): the line says so."""


@dataclass(frozen=True)
class Graded:
    """One grading of one version, as recorded."""

    id: int
    student: str
    version: str
    source: str
    committed: str
    graded: str
    verdict: str
    change: str
    """What changed from the version graded before it, as said when it was graded."""
    statuses: dict[str, str]
    """Each rule's id and its verdict."""

    @property
    def day(self) -> str:
        return self.graded[:10]


def changes(before: dict[str, str], after: dict[str, str]) -> tuple[list[str], list[str]]:
    """(fixed, broke): rules that FAILed before and pass now, and rules that passed before and FAIL now.

    A rule not run in one of the two (NOT RUN, SKIP, or absent) is neither: nothing was seen to change."""
    passing = (PASS, WARN)
    fixed = sorted(rule for rule, status in after.items() if status in passing and before.get(rule) == FAIL)
    broke = sorted(rule for rule, status in after.items() if status == FAIL and before.get(rule) in passing)
    return fixed, broke


def changeLine(previous: Graded | None, now: dict[str, str], verdict: str) -> str:
    """What a student's table line and page say about the version graded against the one before (empty for
    a first version)."""
    if previous is None:
        return ""
    fixed, broke = changes(previous.statuses, now)
    parts = [_("fixed: {rules}").format(rules=", ".join(fixed))] if fixed else []
    parts += [_("broke: {rules}").format(rules=", ".join(broke))] if broke else []
    if not parts:
        same = (
            _("same verdicts") if verdict == previous.verdict else _("was: {verdict}").format(verdict=previous.verdict)
        )
        parts.append(same)
    return _("since version {version} (graded {day}): {changes}").format(
        version=previous.version[:12], day=previous.day, changes="; ".join(parts)
    )


def statusesOf(report: Report) -> dict[str, str]:
    return {outcome.anchor or outcome.testId: outcome.status for outcome in report.outcomes}


class History:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.connection = sqlite3.connect(path)
        self.connection.row_factory = sqlite3.Row
        self._read: OrderedDict[int, tuple[Graded, Report]] = OrderedDict()
        version = self.connection.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise HistoryError(
                _("{path} was written by a newer velhanet (schema {version}, this one {ours})").format(
                    path=path, version=version, ours=SCHEMA_VERSION
                )
            )
        with self.connection:
            self.connection.executescript(SCHEMA)
            self.connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def close(self) -> None:
        self.connection.close()

    def _graded(self, row: sqlite3.Row) -> Graded:
        statuses = {
            rule: status
            for rule, status in self.connection.execute(
                "SELECT rule, status FROM verdicts WHERE grading = ?", (row["id"],)
            )
        }
        return Graded(
            row["id"],
            row["student"],
            row["version"],
            row["source"],
            row["committed"],
            row["graded"],
            row["verdict"],
            row["change"],
            statuses,
        )

    def sameVersion(self, student: str, family: str, settings: str, version: str) -> tuple[Graded, Report] | None:
        """The last grading of this very version with these settings, and its report; None if never graded,
        or if it could not be tested then (a program too slow to start on a busy machine, a worker without
        the sandbox: worth another try, and it costs little)."""
        row = self.connection.execute(
            "SELECT * FROM gradings WHERE student = ? AND family = ? AND settings = ? AND version = ?"
            " AND cannotTest = 0 ORDER BY id DESC LIMIT 1",
            (student, family, settings, version),
        ).fetchone()
        if row is None:
            return None
        return self._graded(row), reportFromData(json.loads(zlib.decompress(row["report"])))

    def previous(self, student: str, family: str, settings: str, version: str) -> Graded | None:
        """The last grading of another version of the student's (the one a change is told against)."""
        row = self.connection.execute(
            "SELECT * FROM gradings WHERE student = ? AND family = ? AND settings = ? AND version != ?"
            " ORDER BY id DESC LIMIT 1",
            (student, family, settings, version),
        ).fetchone()
        return None if row is None else self._graded(row)

    def record(
        self,
        submission: Submission,
        family: str,
        settings: str,
        report: Report,
        verdict: str,
        change: str,
        when: datetime,
        alsoDo: Callable[[sqlite3.Connection, int], None] | None = None,
    ) -> int:
        """Record one grading; its id. ``alsoDo(connection, id)`` runs in the same transaction (the class server
        marks its hand-in graded there: a grading is recorded once, with its hand-in, or not at all)."""
        counts = [report.count(status) for status in (PASS, FAIL, WARN, SKIP, NOT_RUN)]
        blob = zlib.compress(json.dumps(reportToData(report)).encode("utf-8"))
        with self.connection:
            cursor = self.connection.execute(
                "INSERT INTO gradings (student, family, settings, version, source, committed, graded, verdict, change,"
                " cannotTest, passed, failed, warned, skipped, notRun, report)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    submission.student,
                    family,
                    settings,
                    submission.version,
                    submission.source,
                    submission.committed,
                    when.isoformat(timespec="seconds"),
                    verdict,
                    change,
                    int(bool(report.cannotTest)),
                    *counts,
                    blob,
                ),
            )
            grading = int(cursor.lastrowid or 0)
            self.connection.executemany(
                "INSERT INTO verdicts (grading, rule, status, reason) VALUES (?, ?, ?, ?)",
                [(grading, o.anchor or o.testId, o.status, o.reason) for o in report.outcomes],
            )
            if alsoDo is not None:
                alsoDo(self.connection, grading)
        return grading

    def grading(self, grading: int) -> tuple[Graded, Report] | None:
        """One grading by its id, and its report (a recorded grading never changes: the last
        L{KEPT_GRADINGS} asked for are kept read; a caller that changes one makes its own copy)."""
        kept = self._read.get(grading)
        if kept is not None:
            self._read.move_to_end(grading)
            return kept
        row = self.connection.execute("SELECT * FROM gradings WHERE id = ?", (grading,)).fetchone()
        if row is None:
            return None
        found = self._graded(row), reportFromData(json.loads(zlib.decompress(row["report"])))
        self._read[grading] = found
        if len(self._read) > KEPT_GRADINGS:
            self._read.popitem(last=False)
        return found

    def versionsOf(self, student: str) -> list[dict[str, Any]]:
        """Every grading of the student's, oldest first, with what changed from the one before (same family)."""
        rows = self.connection.execute("SELECT * FROM gradings WHERE student = ? ORDER BY id", (student,)).fetchall()
        seen: dict[tuple[str, str], Graded] = {}
        listed = []
        for row in rows:
            graded = self._graded(row)
            key = (row["family"], row["settings"])
            before = seen.get(key)
            if before is not None and before.version == graded.version:
                change = _("same version, graded again")
            else:
                change = changeLine(before, graded.statuses, graded.verdict) or _("first graded version")
            seen[key] = graded
            listed.append({"graded": graded, "family": row["family"], "change": change, "row": dict(row)})
        return listed
